"""What the command line prints: the exit statuses, the text of a query result for people, and the
one-line error message and exit status of a failure (docs/contracts.md §3).

Exit status: 0 success (``check``: private), 1 ``check``: not private, 2 bad input or usage (one
line on stderr, nothing written), 3 the requested digits could not be certified within the
precision or time cap, 4 ``check`` could not decide within its budget (the message gives the time
spent), 5 an internal error (a bug: please report it), 130 interrupted.

>>> status_of(ValueError("x")), error_message(ValueError("x"))
(5, 'internal error (a bug in exactdp, please report it): ValueError: x')
>>> status_of(OSError(28, "No space left on device")), error_message(OSError(28, "No space left on device"))
(2, 'error: reading or writing failed: No space left on device')
"""

from __future__ import annotations

import json
from decimal import Decimal
from fractions import Fraction
from typing import Any

from exactdp.core.errors import ExactDPError, PrecisionError, TimeBudgetError
from exactdp.core.numbers import decimal_string

__all__ = [
    "EXIT_INTERNAL",
    "EXIT_INTERRUPTED",
    "EXIT_NOT_PRIVATE",
    "EXIT_OK",
    "EXIT_PRECISION",
    "EXIT_UNDECIDED",
    "EXIT_USAGE",
    "err_line",
    "error_message",
    "human",
    "shown",
    "status_of",
]

EXIT_OK, EXIT_NOT_PRIVATE, EXIT_USAGE, EXIT_PRECISION, EXIT_UNDECIDED, EXIT_INTERNAL = 0, 1, 2, 3, 4, 5
EXIT_INTERRUPTED = 130
_SHOW_MAX = 120


def shown(s: str) -> str:
    """A long exact string shortened for a terminal (the JSON output keeps it whole)."""
    if len(s) <= _SHOW_MAX:
        return s
    return f"{s[:40]}...{s[-20:]} ({len(s)} characters; --json prints it whole)"


def human(result: dict[str, Any], comp_text: str) -> str:
    """The result object of a delta, epsilon or check query as text for people."""
    q, inputs = result["query"], result["inputs"]
    comp_text = shown(comp_text)
    if q == "check":
        verdict = "private" if result["private"] else "NOT private"
        return f"{comp_text} is {verdict} at (eps_g, delta_g) = ({inputs['eps_g']}, {inputs['delta_g']})"
    name = "delta" if q == "delta" else "eps"
    where = f"at eps_g = {inputs['at_eps']}" if q == "delta" else f"at delta_g = {inputs['at_delta']}"
    head = f"{result['method']} {name} for {comp_text} {where}"
    if result.get("exact") is not None:
        body = f"{name} = {shown(result['exact'])} (exact)"
        if "/" in result["exact"]:
            body += f"\n  {result['lower']} <= {name} <= {result['upper']}"
        elif len(result["exact"]) > _SHOW_MAX:  # lower == upper == exact: a short bracket to read
            q = Fraction(Decimal(result["exact"]))  # Decimal: no int-digits limit
            body += f"\n  {decimal_string(q, 20, 'down')} <= {name} <= {decimal_string(q, 20, 'up')}"
    elif result["lower"] == "inf":
        body = f"{name} = inf (no finite eps_g is certified at this delta_g)"
    else:
        body = f"{result['lower']} <= {name} <= {result['upper']}"
        if result.get("exact_log"):
            body += f"\n  {name} = {shown(result['exact_log'])} exactly"
    if result.get("algorithm"):
        body += f"\n  (algorithm: {result['algorithm']})"
    if result.get("digits_requested") is not None:
        why = ("the bracket reaches 0, so it bounds the value without certifying a digit of it"
               if result["digits"] == 0 and _reaches_zero(result) else
               "within the memory bound; --max-memory gives it more" if result.get("stopped_by") == "memory" else
               "the optimum lies between the pair one dataset pair attains and the dominating pair, docs/"
               "mathematics.md §9, Theorem 9.7: that gap is real, more time does not close it"
               if result.get("stopped_by") == "gap" else
               "within the time budget; --max-seconds gives it more")
        body += (f"\n  ({result['digits']} significant digits certified of the {result['digits_requested']} "
                 f"requested, {why})")
    return head + "\n  " + body


def _reaches_zero(result: dict[str, Any]) -> bool:
    """Whether the printed bracket of a result contains or touches 0."""
    lo, hi = result.get("lower"), result.get("upper")
    if not isinstance(lo, str) or not isinstance(hi, str) or "inf" in lo or "inf" in hi:
        return False
    return Decimal(lo) <= 0 <= Decimal(hi)


def err_line(e: BaseException) -> str:
    """An exception's message on one line (its whitespace runs made single spaces)."""
    return " ".join(str(e).split())


def status_of(exc: BaseException, query: str | None = None) -> int:
    """The exit status a query failing with ``exc`` gets (docs/contracts.md §3)."""
    if isinstance(exc, (PrecisionError, MemoryError)):
        return EXIT_UNDECIDED if query == "check" else EXIT_PRECISION
    if isinstance(exc, (ExactDPError, NotImplementedError, json.JSONDecodeError, UnicodeDecodeError, OSError)):
        return EXIT_USAGE  # an OSError is the machine's answer to a read or write (a full disk, a closed stream)
    if isinstance(exc, KeyboardInterrupt):
        return EXIT_INTERRUPTED
    return EXIT_INTERNAL


def error_message(exc: BaseException, query: str | None = None, seconds: float | None = None) -> str:
    """The one-line message (without the program name) for a query failing with ``exc``."""
    if isinstance(exc, TimeBudgetError):
        elapsed: float = getattr(exc, "elapsed", 0.0)  # float ok: seconds
        if elapsed:
            seconds = elapsed
    spent = f" after {seconds:.1f} s" if seconds is not None else ""
    if isinstance(exc, MemoryError):
        return f"out of memory{spent}: this input needs more memory than is available"
    if isinstance(exc, PrecisionError):
        kind = "undecided" if query == "check" else "precision"
        msg = err_line(exc)
        best = getattr(exc, "best", None)
        extra = ""
        if best is not None and "certified in" not in msg:
            lo, hi = best if isinstance(best, tuple) else (best.lower, best.upper)
            extra = (f"; the best certified bracket is [{decimal_string(Fraction(lo), 10, 'down')}, "
                     f"{decimal_string(Fraction(hi), 10, 'up')}]")
        final = ("memory bound", "Theorem 9.7", "dominating pair is")  # more time would not decide these
        hint = "" if any(f in msg for f in final) else "; --max-seconds gives it more time"
        return f"{kind}{spent}: {msg}{extra}{hint}"
    if isinstance(exc, OSError) and not isinstance(exc, ExactDPError):
        what = f"{exc.filename}: " if exc.filename else ""
        return f"error: {what}reading or writing failed: {exc.strerror or err_line(exc)}"
    if status_of(exc, query) == EXIT_INTERNAL:
        return f"internal error (a bug in exactdp, please report it): {type(exc).__name__}: {err_line(exc)}"
    return f"error: {err_line(exc)}"
