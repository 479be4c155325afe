"""The command-line interface (docs/contracts.md §2).

    exactdp delta   COMPOSITION --at-eps EPS_G     [--method M] [--digits N] [--json]
    exactdp epsilon COMPOSITION --at-delta DELTA_G [--method M] [--digits N] [--json]
    exactdp check   COMPOSITION --eps-g EPS_G --delta-g DELTA_G [--json]   # exit 0 private, 1 not
    exactdp batch   < queries.jsonl > results.jsonl

Exit status (docs/contracts.md §3): 0 success (``check``: private), 1 ``check``: not private,
2 bad input or usage (one line on stderr, nothing written), 3 the requested digits could not be
certified within the precision or time cap, 4 ``check`` could not decide within its budget (the
message gives the time spent), 5 an internal error (a bug: please report it), 130 interrupted.
``batch`` exits with the largest status of its lines (a "not private" answer counts as 0).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import sys
import time
from collections.abc import Iterable, Iterator, Sequence
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any, TextIO

from exactdp.api.methods import METHODS, get_method
from exactdp.core import progress
from exactdp.core.enclosure import Enclosure
from exactdp.core.errors import ExactDPError, InvalidParameterError, PrecisionError, TimeBudgetError
from exactdp.core.files import decode_text, read_text
from exactdp.core.numbers import (
    DEFAULT_DIGITS,
    decimal_string,
    format_fraction,
    parse_delta,
    parse_digits,
    parse_eps,
    parse_rational,
)
from exactdp.core.version import __version__
from exactdp.model.composition import Composition

__all__ = ["build_parser", "main", "run_query"]

EXIT_OK, EXIT_NOT_PRIVATE, EXIT_USAGE, EXIT_PRECISION, EXIT_UNDECIDED, EXIT_INTERNAL = 0, 1, 2, 3, 4, 5
EXIT_INTERRUPTED = 130
#: commands that own their options: name -> (module with ``main(argv) -> int``, one-line help)
_FORWARDED_COMMANDS: dict[str, tuple[str, str]] = {
    "curve": ("exactdp.api.curve", "the certified delta(eps) or eps(delta) curve of a composition at many points"),
    "calibrate": ("exactdp.calibrate", "the noise, count or per-step eps that provably meets a target"),
    "budget": ("exactdp.calibrate.budget", "what a planned list of mechanisms spends of a target, and what remains"),
    "region": ("exactdp.api.region", "the privacy region (tradeoff curve) of k equal mechanisms"),
    "tables": ("exactdp.cli.tables", "build, verify and export the golden tables"),
    "crosscheck": ("exactdp.cli.crosscheck", "run other DP libraries against the exact oracle"),
    "proofs": ("exactdp.cli.proofs", "check the derivations behind exactdp with sympy"),
}
_FORWARDED = tuple(_FORWARDED_COMMANDS)

_EXIT_HELP = """\
exit status: 0 success (check: private), 1 check: not private, 2 bad input (one line on stderr,
nothing written), 3 the requested digits could not be certified within the precision or time cap,
4 check could not decide within its budget, 5 internal error (a bug: please report), 130 interrupted."""

_EPILOG_NUMBERS = """\
numbers are exact: '0.1' is exactly 1/10, '1e-6', '1/3', and for an eps 'log(3/2)' means
eps = log(3/2) exactly (then e^eps is rational and many answers are exact fractions).
Results are certified enclosures: lower <= true value <= upper, rounded outward."""

_METHODS_HELP = "\n".join(f"  {name:<15} {spec.summary}" for name, spec in METHODS.items())

_EXAMPLES = {
    "delta": """\
examples:
  exactdp delta --eps 0.1 --delta 0.001 --k 30 --at-eps 1
  exactdp delta --eps 'log(3/2)' --k 10 --at-eps 'log(9/4)'          # an exact fraction
  exactdp delta --mechanism 1,0.1 --mechanism 2,0.2 --at-eps 3 --json
  exactdp delta --eps 0.1 --delta 0.001 --k 30 --at-eps 1 --method drv10
  exactdp delta --mechanism gaussian:sigma=2,count=100 --at-eps 1       # Gaussian closed form
  exactdp delta --mechanism laplace:scale=2,count=2 --at-eps 0.2 --digits 8""",
    "epsilon": """\
examples:
  exactdp epsilon --eps 0.1 --delta 0.001 --k 30 --at-delta 0.05
  exactdp epsilon --eps 0.1 --k 30 --at-delta 1e-3 --method kov15-3.4
  printf '0.1,0,20\n0.5,1e-6,3\n' | exactdp epsilon --mechanisms - --at-delta 1e-3 --digits 10 --json
  exactdp epsilon --mechanism gaussian:sigma=1,q=0.01,count=1000 --at-delta 1e-5 --digits 4   # DP-SGD
  exactdp epsilon --mechanism laplace:scale=10,count=100 --at-delta 1e-6 --digits 6

mechanisms other than generic (E, D) ones (Gaussian, Laplace, k-ary randomized response,
Poisson subsampling with q=Q) are answered by the Gaussian closed form or by the certified PLD
engine: a bracket [lower, upper] refined until --digits are certified or --max-seconds (default
30 s for these) runs out; the JSON "digits" says how many digits the bracket certifies.""",
    "check": """\
examples:
  exactdp check --eps 0.1 --delta 0.001 --k 30 --eps-g 1 --delta-g 0.05; echo $?   # 0: private
  exactdp check --eps 1 --k 10 --eps-g 10 --delta-g 0                              # exactly at the boundary
  exactdp check --mechanism gaussian:sigma=1,q=0.01,count=1000 --eps-g 2 --delta-g 1e-5""",
    "batch": """\
each input line is a JSON object: the keys of "inputs" plus "query", "method", "digits", e.g.
  {"query": "delta", "eps": "0.1", "delta": "0.001", "k": 30, "at_eps": "1"}
  {"query": "epsilon", "mechanisms": [["0.1", "0"], ["0.2", "1e-6"]], "at_delta": "1e-3"}
  {"query": "check", "eps": "1", "k": 10, "eps_g": "8", "delta_g": "0.01"}
JSON numbers are read as the decimal text they are written as (0.1 is exactly 1/10).
Each line gets one result line, in order; a bad line gets {"error": "..."} and the batch goes on.
Blank lines are skipped.

example:
  printf '%s\\n' '{"query":"epsilon","eps":"0.1","delta":"0.001","k":30,"at_delta":"0.05"}' | exactdp batch""",
}


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors as one line and exit status 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_USAGE, f"exactdp: error: {message} (see '{self.prog} --help')\n")


_COMP_USAGE = "(--eps E [--delta D] --k K | --mechanism SPEC ... | --mechanisms FILE)"


def _add_composition(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group(
        "composition (required: one of the three forms)",
        "k equal mechanisms (--eps E [--delta D] --k K), or a list (--mechanism E[,D] repeated, "
        "or --mechanisms FILE)",
    )
    g.add_argument("--eps", metavar="E", help="eps of each of the k mechanisms, e.g. 0.1 or 'log(3/2)'")
    g.add_argument("--delta", metavar="D", help="delta of each of the k mechanisms (default 0)")
    g.add_argument("--k", metavar="K", help="number of mechanisms")
    g.add_argument("--mechanism", metavar="SPEC", action="append",
                   help="one mechanism, repeatable: 'E[,D]' (a generic (E, D)-DP one), "
                        "'gaussian:sigma=S[,sensitivity=D][,q=Q][,count=N]', "
                        "'laplace:scale=B[,sensitivity=D][,q=Q][,count=N]', 'rr:eps=E[,categories=K][,q=Q][,count=N]'")
    g.add_argument("--mechanisms", metavar="FILE",
                   help="UTF-8 file, one mechanism per line: CSV 'eps,delta[,count]' or a SPEC; or JSON "
                        "[[eps, delta, count?] or \"SPEC\", ...]; '-' reads stdin")


def _add_budget(p: argparse.ArgumentParser) -> None:
    p.add_argument("--max-seconds", metavar="S", default=None,
                   help="time budget; past it the command stops with exit status 3 (check: 4) and says "
                        "how far it got (default: no limit)")


def _add_common(p: argparse.ArgumentParser, *, method: bool = True) -> None:
    if method:
        p.add_argument("--method", default="optimal", metavar="M",
                       help=f"the composition theorem to evaluate (default optimal); one of: {', '.join(METHODS)}")
        p.add_argument("--eta", metavar="ETA", help="accuracy parameter of --method mv-approx (e.g. 0.01)")
    p.add_argument("--digits", default=str(DEFAULT_DIGITS), metavar="N",
                   help=f"significant digits certified (default {DEFAULT_DIGITS})")
    _add_budget(p)
    p.add_argument("--json", action="store_true", help="print one JSON object (the batch result format)")


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser of the ``exactdp`` command."""
    fmt = argparse.RawDescriptionHelpFormatter
    parser = _Parser(
        prog="exactdp",
        formatter_class=fmt,
        description=(
            "Exact and certified composition of differential-privacy guarantees.\n\n"
            "If you run mechanisms that are each (eps_i, delta_i)-DP on the same data, how private\n"
            "is the whole?  exactdp answers with no floating-point error: exact fractions where the\n"
            "answer is rational, otherwise an interval that provably contains the true value."
        ),
        epilog=(
            "examples:\n"
            "  exactdp epsilon --eps 0.1 --delta 0.001 --k 30 --at-delta 0.05\n"
            "  exactdp delta --eps 0.1 --delta 0.001 --k 30 --at-eps 1 --method kov15-3.4\n"
            "  exactdp check --mechanism 1,0.1 --mechanism 2,0.2 --eps-g 3 --delta-g 0.28\n\n"
            "methods (--method):\n" + _METHODS_HELP + "\n\n" + _EPILOG_NUMBERS + "\n\n" + _EXIT_HELP
        ),
    )
    parser.add_argument("--version", action="version", version=f"exactdp {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    p = sub.add_parser("delta", help="the total delta at a given eps_g", formatter_class=fmt,
                       usage=f"exactdp delta {_COMP_USAGE} --at-eps EPS_G [options]",
                       description="The smallest total delta such that the composition is (eps_g, delta)-DP.",
                       epilog=_EXAMPLES["delta"] + "\n\n" + _EPILOG_NUMBERS + "\n\n" + _EXIT_HELP)
    _add_composition(p)
    p.add_argument("--at-eps", metavar="EPS_G", required=True, help="the global eps_g")
    _add_common(p)

    p = sub.add_parser("epsilon", help="the eps_g at a given total delta_g", formatter_class=fmt,
                       usage=f"exactdp epsilon {_COMP_USAGE} --at-delta DELTA_G [options]",
                       description="The least eps_g such that the composition is (eps_g, delta_g)-DP "
                                   "(inf when no eps_g works).",
                       epilog=_EXAMPLES["epsilon"] + "\n\n" + _EPILOG_NUMBERS + "\n\n" + _EXIT_HELP)
    _add_composition(p)
    p.add_argument("--at-delta", metavar="DELTA_G", required=True, help="the total delta_g")
    _add_common(p)

    p = sub.add_parser("check", help="is the composition (eps_g, delta_g)-DP? exit 0 yes, 1 no",
                       formatter_class=fmt,
                       usage=f"exactdp check {_COMP_USAGE} --eps-g EPS_G --delta-g DELTA_G [options]",
                       description="An exact yes/no, never wrong, even exactly at the boundary: exit 0 private,\n"
                                   "1 not private.  When it cannot decide within its budget (--max-seconds, or the\n"
                                   "precision cap) it says so with exit status 4 and the time spent; never a guess.",
                       epilog=_EXAMPLES["check"] + "\n\n" + _EPILOG_NUMBERS + "\n\n" + _EXIT_HELP)
    _add_composition(p)
    p.add_argument("--eps-g", metavar="EPS_G", required=True, help="the global eps_g")
    p.add_argument("--delta-g", metavar="DELTA_G", required=True, help="the global delta_g")
    _add_budget(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")

    p = sub.add_parser("batch", help="JSON lines in (stdin), JSON lines out (stdout)", formatter_class=fmt,
                       description="Answer one query per input line.", epilog=_EXAMPLES["batch"])
    p.add_argument("--digits", default=None, metavar="N",
                   help=f"default significant digits for lines without 'digits' (default {DEFAULT_DIGITS})")
    p.add_argument("--jobs", default="1", metavar="N",
                   help="answer the queries in N parallel processes (the output keeps the input order)")

    for name, (_, help_) in _FORWARDED_COMMANDS.items():
        p = sub.add_parser(name, help=help_, add_help=False)
        p.add_argument("rest", nargs=argparse.REMAINDER)
    return parser


# -- building a query from CLI arguments or a batch object -------------------------------------

def _read_mechanisms_file(path: str) -> Composition:
    text = read_text(path, "mechanisms")
    where = "standard input" if path == "-" else repr(path)
    stripped = text.strip()
    if not stripped:
        raise InvalidParameterError(f"mechanisms file {where} is empty")
    if stripped[0] in "[{":
        try:
            data = json.loads(stripped, parse_float=Decimal, parse_int=int, parse_constant=_reject_json_constant)
        except json.JSONDecodeError as e:
            raise InvalidParameterError(f"mechanisms file {where} is not valid JSON: {e}") from None
        if isinstance(data, dict):
            data = data.get("mechanisms")
        return _mechanisms_from_json(data, f"mechanisms file {where}")
    rows = []
    lines = text.splitlines()
    for lineno, line in enumerate(lines, 1):
        try:
            row = next(csv.reader([line], strict=True), [])
        except csv.Error as e:
            raise InvalidParameterError(f"mechanisms file {where} line {lineno}: not CSV ({e})") from None
        cells = [c.strip() for c in row]
        if not cells or not any(cells) or cells[0].startswith("#"):
            continue
        if ":" in cells[0]:  # a mechanism spec: the whole line, commas included
            try:
                rows.append(Composition.heterogeneous([line.strip()]).groups[0])
            except ExactDPError as e:
                raise InvalidParameterError(f"mechanisms file {where} line {lineno}: {_err_line(e)}") from None
            continue
        if not rows and cells[0].lower() in ("eps", "epsilon"):
            continue  # header
        if not 1 <= len(cells) <= 3:
            raise InvalidParameterError(
                f"mechanisms file {where} line {lineno}: {line.strip()!r} must be 'eps,delta[,count]'")
        try:
            rows.append(Composition.heterogeneous([cells]).groups[0])
        except ExactDPError as e:
            raise InvalidParameterError(f"mechanisms file {where} line {lineno}: {_err_line(e)}") from None
    if not rows:
        raise InvalidParameterError(f"mechanisms file {where} has no mechanism lines")
    return Composition(tuple(rows))


def _mechanisms_from_json(data: Any, what: str) -> Composition:
    if not isinstance(data, list):
        raise InvalidParameterError(f"{what} must be a list of [eps, delta(, count)] entries")
    rows: list[Any] = []
    for i, m in enumerate(data):
        if isinstance(m, dict) and "mechanism" in m:
            m = _spec_of_dict(m, f"{what}[{i}]")
        elif isinstance(m, dict):
            unknown = sorted(set(m) - {"eps", "delta", "count"})
            if unknown:
                raise InvalidParameterError(f"{what}[{i}] has unknown keys {unknown}; known: eps, delta, count "
                                            "(or 'mechanism' with its parameters)")
            m = [m.get("eps"), m.get("delta", 0)] + ([m["count"]] if "count" in m else [])
        if isinstance(m, list):
            m = [str(v) if isinstance(v, Decimal) else v for v in m]
        elif not isinstance(m, (str, int)) or isinstance(m, bool):
            raise InvalidParameterError(f"{what}[{i}]={m!r} must be [eps, delta(, count)] or a mechanism spec")
        rows.append(m)
    return Composition.heterogeneous(rows)


def _spec_of_dict(m: dict[str, Any], what: str) -> str:
    """{"mechanism": "gaussian", "sigma": "1.1", "count": 10} -> "gaussian:sigma=1.1,count=10"."""
    kind = m["mechanism"]
    if not isinstance(kind, str) or ":" in kind:
        raise InvalidParameterError(f"{what}.mechanism={kind!r} must be a kind such as 'gaussian'")
    items = []
    for key, v in m.items():
        if key == "mechanism":
            continue
        if isinstance(v, bool) or not isinstance(v, (str, int, Decimal)):
            raise InvalidParameterError(f"{what}.{key}={v!r} must be a number (a string or a JSON number)")
        items.append(f"{key}={v}")
    return f"{kind}:" + ",".join(items)


def _parse_mechanism_arg(s: str) -> list[str] | str:
    if ":" in s:
        return s.strip()  # a mechanism spec, parsed by Composition
    parts = [p.strip() for p in s.split(",")]
    if not 1 <= len(parts) <= 2 or not all(parts):
        raise InvalidParameterError(f"mechanism={s!r} must be 'E' or 'E,D' (for example '0.1,1e-6')")
    return parts


def composition_from_args(eps: Any, delta: Any, k: Any, mechanism: list[str] | None,
                          mechanisms_file: str | None) -> Composition:
    """The composition from the --eps/--delta/--k or --mechanism/--mechanisms arguments."""
    hetero = bool(mechanism) or mechanisms_file is not None
    if hetero and (eps is not None or k is not None or delta is not None):
        raise InvalidParameterError("give either --eps/--delta/--k or --mechanism/--mechanisms, not both")
    if mechanism and mechanisms_file is not None:
        raise InvalidParameterError("give either --mechanism (repeated) or --mechanisms FILE, not both")
    if mechanisms_file is not None:
        return _read_mechanisms_file(mechanisms_file)
    if mechanism:
        return Composition.heterogeneous([_parse_mechanism_arg(s) for s in mechanism])
    if eps is None:
        raise InvalidParameterError("eps=None: a composition needs --eps E --k K, or --mechanism E[,D]")
    if k is None:
        raise InvalidParameterError("k=None: --eps needs --k K, the number of mechanisms")
    return Composition.homogeneous(eps, "0" if delta is None else delta, k)


def _reject_json_constant(name: str) -> Any:
    raise InvalidParameterError(f"value={name} must be a finite number (JSON {name} is not one)")


def _json_value(v: Any) -> Any:
    return str(v) if isinstance(v, Decimal) else v


def parse_seconds(x: Any, name: str = "max_seconds") -> float | None:
    """A time budget in seconds (a positive exact number), or None."""
    if x is None:
        return None
    s = parse_rational(_json_value(x), name)
    if s <= 0:
        raise InvalidParameterError(f"{name}={x!r} must be a positive number of seconds")
    return s.numerator / s.denominator  # float ok: a clock budget, never a result


_QUERY_KEYS = {"query", "method", "digits", "eps", "delta", "k", "mechanisms", "at_eps", "at_delta",
               "eps_g", "delta_g", "eta", "max_seconds", "id"}


def run_query(obj: dict[str, Any], *, default_digits: int = DEFAULT_DIGITS) -> dict[str, Any]:
    """Answer one query object (the batch format) and return the result object.

    A ``max_seconds`` key bounds the time spent (:class:`~exactdp.core.errors.TimeBudgetError` past it).
    """
    if not isinstance(obj, dict):
        raise InvalidParameterError(f"query={obj!r} must be a JSON object")
    if obj.get("query") == "calibrate":  # calibration lines are answered by exactdp.calibrate (issue 12)
        from exactdp.calibrate import run_calibrate_query

        return run_calibrate_query(obj)
    query = obj.get("query")
    if query not in ("delta", "epsilon", "check"):
        raise InvalidParameterError(f"query={query!r} must be 'delta', 'epsilon' or 'check'")
    unknown = sorted(set(obj) - _QUERY_KEYS)
    if unknown:
        raise InvalidParameterError(f"keys={unknown} are not query keys; known: {sorted(_QUERY_KEYS)}")
    o = {key: _json_value(v) for key, v in obj.items()}
    if "mechanisms" in obj:
        if any(key in obj for key in ("eps", "delta", "k")):
            raise InvalidParameterError("give either eps/delta/k or mechanisms, not both")
        comp = _mechanisms_from_json(obj["mechanisms"], "mechanisms")
    else:
        comp = composition_from_args(o.get("eps"), o.get("delta"), o.get("k"), None, None)
    digits = parse_digits(o.get("digits", default_digits))
    method = o.get("method", "optimal")
    options = _method_options(method, o.get("eta"))
    budget = parse_seconds(o.get("max_seconds"))
    inputs = comp.to_inputs()
    result: dict[str, Any] = {"query": query, "method": method, "inputs": inputs}
    with progress.task(query, max_seconds=budget):
        if query == "delta":
            eps_g = parse_eps(_require(o, "at_eps"), "at_eps")
            inputs["at_eps"] = str(eps_g)
            enc = get_method(method).delta(comp, eps_g, digits=digits, **options)
            result.update(_enclosure_fields(enc, digits))
        elif query == "epsilon":
            delta_g = parse_delta(_require(o, "at_delta"), "at_delta")
            inputs["at_delta"] = format_fraction(delta_g)
            enc = get_method(method).epsilon(comp, delta_g, digits=digits, **options)
            result.update(_enclosure_fields(enc, digits))
        else:
            if method != "optimal":
                raise InvalidParameterError(f"method={method!r}: check answers only for the optimal method")
            eps_g = parse_eps(_require(o, "eps_g"), "eps_g")
            delta_g = parse_delta(_require(o, "delta_g"), "delta_g")
            inputs["eps_g"], inputs["delta_g"] = str(eps_g), format_fraction(delta_g)
            from exactdp.api.optimal import is_private

            start = time.monotonic()
            private = is_private(comp, eps_g, delta_g)
            result.update({"lower": None, "upper": None, "exact": None, "private": private, "digits": None,
                           "seconds": round(time.monotonic() - start, 3)})
            return _with_id(result, obj)
    if "eta" in options:
        inputs["eta"] = format_fraction(options["eta"])
    result["private"] = None
    return _with_id(result, obj)


def _with_id(result: dict[str, Any], obj: dict[str, Any]) -> dict[str, Any]:
    if "id" in obj:
        result["id"] = obj["id"]
    return result


def _require(o: dict[str, Any], key: str) -> Any:
    if o.get(key) is None:
        raise InvalidParameterError(f"{key}=None: the query needs '{key}'")
    return o[key]


def _method_options(method: str, eta: Any) -> dict[str, Any]:
    spec = get_method(method)
    if "eta" in spec.options:
        if eta is None:
            raise InvalidParameterError(f"eta=None: method={method!r} needs --eta (for example 0.01)")
        e = parse_rational(eta, "eta")
        if e <= 0:
            raise InvalidParameterError(f"eta={eta!r} must satisfy eta > 0")
        return {"eta": e}
    if eta is not None:
        raise InvalidParameterError(f"eta={eta!r} is only for method 'mv-approx', not {method!r}")
    return {}


def _enclosure_fields(enc: Enclosure, digits: int) -> dict[str, Any]:
    out = enc.to_json()
    out["digits"] = min(digits, enc.digits)
    if out["digits"] < digits and not enc.is_infinite:
        out["digits_requested"] = digits  # a bracketing engine stopped early: say so
    return out


# -- output ------------------------------------------------------------------------------------

_SHOW_MAX = 120


def _shown(s: str) -> str:
    """A long exact string shortened for a terminal (the JSON output keeps it whole)."""
    if len(s) <= _SHOW_MAX:
        return s
    return f"{s[:40]}...{s[-20:]} ({len(s)} characters; --json prints it whole)"


def _human(result: dict[str, Any], comp_text: str) -> str:
    q, inputs = result["query"], result["inputs"]
    comp_text = _shown(comp_text)
    if q == "check":
        verdict = "private" if result["private"] else "NOT private"
        return f"{comp_text} is {verdict} at (eps_g, delta_g) = ({inputs['eps_g']}, {inputs['delta_g']})"
    name = "delta" if q == "delta" else "eps"
    where = f"at eps_g = {inputs['at_eps']}" if q == "delta" else f"at delta_g = {inputs['at_delta']}"
    head = f"{result['method']} {name} for {comp_text} {where}"
    if result.get("exact") is not None:
        body = f"{name} = {_shown(result['exact'])} (exact)"
        if "/" in result["exact"] or len(result["exact"]) > _SHOW_MAX:
            body += f"\n  {result['lower']} <= {name} <= {result['upper']}"
    elif result["lower"] == "inf":
        body = f"{name} = inf (no finite eps_g is certified at this delta_g)"
    else:
        body = f"{result['lower']} <= {name} <= {result['upper']}"
        if result.get("exact_log"):
            body += f"\n  {name} = {_shown(result['exact_log'])} exactly"
    if result.get("algorithm"):
        body += f"\n  (algorithm: {result['algorithm']})"
    if result.get("digits_requested") is not None:
        body += (f"\n  ({result['digits']} significant digits certified of the {result['digits_requested']} "
                 "requested, within the time budget; --max-seconds gives it more)")
    return head + "\n  " + body


def _err_line(e: BaseException) -> str:
    return " ".join(str(e).split())


def status_of(exc: BaseException, query: str | None = None) -> int:
    """The exit status a query failing with ``exc`` gets (docs/contracts.md §3)."""
    if isinstance(exc, (PrecisionError, MemoryError)):
        return EXIT_UNDECIDED if query == "check" else EXIT_PRECISION
    if isinstance(exc, (ExactDPError, NotImplementedError, json.JSONDecodeError, UnicodeDecodeError)):
        return EXIT_USAGE
    if isinstance(exc, KeyboardInterrupt):
        return EXIT_INTERRUPTED
    return EXIT_INTERNAL


def error_message(exc: BaseException, query: str | None = None, seconds: float | None = None) -> str:
    """The one-line message (without the program name) for a query failing with ``exc``."""
    if isinstance(exc, TimeBudgetError) and getattr(exc, "elapsed", 0):
        seconds = exc.elapsed
    spent = f" after {seconds:.1f} s" if seconds is not None else ""
    if isinstance(exc, MemoryError):
        return f"out of memory{spent}: this input needs more memory than is available"
    if isinstance(exc, PrecisionError):
        kind = "undecided" if query == "check" else "precision"
        msg = _err_line(exc)
        best = getattr(exc, "best", None)
        extra = ""
        if best is not None and "certified in" not in msg:
            lo, hi = best if isinstance(best, tuple) else (best.lower, best.upper)
            extra = (f"; the best certified bracket is [{decimal_string(Fraction(lo), 10, 'down')}, "
                     f"{decimal_string(Fraction(hi), 10, 'up')}]")
        hint = "" if "memory bound" in msg else "; --max-seconds gives it more time"
        return f"{kind}{spent}: {msg}{extra}{hint}"
    if status_of(exc, query) == EXIT_INTERNAL:
        return f"internal error (a bug in exactdp, please report it): {type(exc).__name__}: {_err_line(exc)}"
    return f"error: {_err_line(exc)}"


def _cmd_query(args: argparse.Namespace, query: str) -> int:
    comp = composition_from_args(args.eps, args.delta, args.k, args.mechanism, args.mechanisms)
    obj: dict[str, Any] = {"query": query}
    if query == "check":
        obj.update(eps_g=args.eps_g, delta_g=args.delta_g)
    else:
        obj.update(method=args.method, digits=args.digits)
        if args.eta is not None:
            obj["eta"] = args.eta
        if query == "delta":
            obj["at_eps"] = args.at_eps
        else:
            obj["at_delta"] = args.at_delta
    if args.max_seconds is not None:
        obj["max_seconds"] = args.max_seconds
    obj.update(comp.to_inputs())
    result = run_query(obj)
    if args.json:
        print(json.dumps(result))
    else:
        print(_human(result, str(comp)))
    if query == "check":
        return EXIT_OK if result["private"] else EXIT_NOT_PRIVATE
    return EXIT_OK


# -- batch ---------------------------------------------------------------------------------------

def _input_lines(stdin: Any) -> Iterator[tuple[int, str | None, str | None]]:
    """(physical line number, text or None, decoding error or None) for every line of stdin."""
    buf = getattr(stdin, "buffer", None)
    if buf is not None:
        for n, raw in enumerate(buf, 1):
            try:
                yield n, decode_text(raw if n > 1 else raw, f"line {n}"), None
            except ExactDPError as e:
                yield n, None, _err_line(e)
    else:
        for n, line in enumerate(stdin, 1):
            yield n, line.lstrip("\ufeff") if n == 1 else line, None


def _answer_line(item: tuple[int, str | None, str | None, int]) -> tuple[dict[str, Any], int]:
    """The result object of one batch line and the exit status it stands for."""
    n, line, decode_error, default_digits = item
    if decode_error is not None:
        return {"error": decode_error}, EXIT_USAGE
    assert line is not None
    obj: Any = None
    start = time.monotonic()
    try:
        obj = json.loads(line, parse_float=Decimal, parse_constant=_reject_json_constant)
        return run_query(obj, default_digits=default_digits), EXIT_OK
    except json.JSONDecodeError as e:
        out: dict[str, Any] = {"error": f"line {n}: not valid JSON: {e}"}
        status = EXIT_USAGE
    except (Exception, MemoryError) as e:  # one bad line never stops the batch
        query = obj.get("query") if isinstance(obj, dict) else None
        msg = error_message(e, query if isinstance(query, str) else None, time.monotonic() - start
                            if isinstance(e, PrecisionError) else None)
        out = {"error": f"line {n}: {msg.removeprefix('error: ')}"}
        status = status_of(e, query if isinstance(query, str) else None)
    if isinstance(obj, dict) and "id" in obj:
        out["id"] = obj["id"]
    return out, status


def _cmd_batch(args: argparse.Namespace, stdin: Any, stdout: TextIO) -> int:
    default_digits = parse_digits(args.digits) if args.digits is not None else DEFAULT_DIGITS
    jobs = parse_digits(args.jobs, "jobs")
    items: Iterable[tuple[int, str | None, str | None, int]] = (
        (n, line, err, default_digits) for n, line, err in _input_lines(stdin)
        if err is not None or (line is not None and line.strip()))
    worst = EXIT_OK
    count = bad = 0

    def emit(results: Iterable[tuple[dict[str, Any], int]]) -> None:
        nonlocal worst, count, bad
        for out, status in results:
            count += 1
            bad += status != EXIT_OK
            worst = max(worst, status)
            stdout.write(json.dumps(out) + "\n")
            stdout.flush()
            progress.tick(f"{count} lines answered")

    with progress.task("batch"):
        if jobs > 1:
            import multiprocessing

            ctx = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods()
                                              else "spawn")
            with ctx.Pool(jobs) as pool:
                emit(pool.imap(_answer_line, items, chunksize=1))  # imap keeps the input order
        else:
            emit(map(_answer_line, items))
    if sys.stderr.isatty() or count > 100 or bad:
        print(f"exactdp batch: {count} queries, {bad} failed", file=sys.stderr)
    return worst


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (docs/contracts.md §3)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    if not argv:
        parser.print_help()
        return EXIT_USAGE
    if argv[0] in _FORWARDED:
        # these commands own their options: hand them the rest of the line untouched
        args = argparse.Namespace(command=argv[0], rest=argv[1:])
    else:
        args = parser.parse_args(argv)
    start = time.monotonic()
    query = args.command if args.command in ("delta", "epsilon", "check") else None
    try:
        if query is not None:
            return _cmd_query(args, query)
        if args.command == "batch":
            return _cmd_batch(args, sys.stdin, sys.stdout)
        if args.command in _FORWARDED_COMMANDS:
            import importlib

            module = importlib.import_module(_FORWARDED_COMMANDS[args.command][0])
            return int(module.main(args.rest))
        parser.print_help()
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("exactdp: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # e.g. `exactdp batch ... | head`
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except (Exception, MemoryError) as e:
        if os.environ.get("EXACTDP_DEBUG"):
            raise
        seconds = time.monotonic() - start if isinstance(e, (PrecisionError, MemoryError)) else None
        print(f"exactdp: {error_message(e, query, seconds)}", file=sys.stderr)
        return status_of(e, query)
