"""The shared driver of every calibration: the time budget, the result built from a search, and the
helpers that choose first probes (floats there only choose where to look; docs/calibration.md §2).

:func:`start_run` fixes the clock (default :data:`DEFAULT_SECONDS` with the PLD engine, never more
than an enclosing :func:`exactdp.core.progress.task` allows); :func:`finish` turns a
:class:`~exactdp.calibrate.certsearch.SearchResult` into a
:class:`~exactdp.calibrate.result.Calibration` (rounding the value in the safe direction when
asked, and certifying it again).

>>> from exactdp.core.numbers import decimal_string
>>> lo, hi = gaussian_mu2_root(ExactReal.parse("1"), Fraction(1, 10**5), digits=6)
>>> lo <= hi, decimal_string(lo, 6, "down")
(True, '0.0718514')
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from flint import arb, ctx

from exactdp.calibrate.certsearch import Outcome, Proof, SearchResult, shortest_decimal_in
from exactdp.calibrate.probes import gaussian_delta_arb
from exactdp.calibrate.result import Calibration, value_text
from exactdp.core import progress
from exactdp.core.errors import TimeBudgetError
from exactdp.core.numbers import ExactReal, arb_of_fraction, format_fraction

__all__ = [
    "DEFAULT_GAP_EXACT",
    "DEFAULT_GAP_PLD",
    "DEFAULT_SECONDS",
    "Run",
    "approx_rational",
    "closed_form_pair",
    "finish",
    "gaussian_mu2_root",
    "start_run",
]

#: default relative gap between value and fails_at for exact decisions and closed forms
DEFAULT_GAP_EXACT = Fraction(1, 10**6)
#: default relative gap for the PLD engine: wide enough that an independent ``is_private`` re-check
#: of both ends decides within its own default budget (docs/calibration.md §3)
DEFAULT_GAP_PLD = Fraction(1, 10**3)
#: default time budget (seconds) of a calibration that uses the PLD engine
DEFAULT_SECONDS = 300.0


@dataclass
class Run:
    """The clock of one calibration: its deadline (None: no limit) and its start."""

    deadline: float | None  # float ok: a clock time, never a result
    start: float  # float ok: a clock time, never a result

    def left(self) -> float | None:  # float ok: seconds
        """The seconds left before the deadline (None: no limit)."""
        return None if self.deadline is None else self.deadline - time.monotonic()


def start_run(max_seconds: float | None, engine: str) -> Run:  # float ok: a clock time, never a result
    """Start the clock: ``max_seconds`` (default :data:`DEFAULT_SECONDS` for the PLD engine), within
    what an enclosing progress task has left."""
    now = time.monotonic()
    if max_seconds is None and engine == "pld":
        max_seconds = DEFAULT_SECONDS
    left = progress.remaining()
    if left is not None:
        max_seconds = left if max_seconds is None else min(max_seconds, left)
    return Run(None if max_seconds is None else now + max_seconds, now)


def finish(parameter: str, worse_up: bool, res: SearchResult, *, inputs: dict[str, Any], engine: str,
           gap: Fraction | None, run: Run, probe: Any = None, round_to: Fraction | None = None,
           comparison: tuple[tuple[str, str], ...] = (), integer: bool = False) -> Calibration:
    """The :class:`Calibration` of a search result: ``value`` rounded to a multiple of ``round_to``
    in the safe direction (and certified again by ``probe``), the gap reached, and a note saying
    why the requested gap was not reached, if it was not."""
    if res.safe is None or res.safe_proof is None:
        best = f"; the nearest point proved to miss is {value_text(res.fail)}" if res.fail is not None else ""
        raise TimeBudgetError(f"no value could be certified safe within the budget ({res.probes} probes, "
                              f"{res.seconds:.1f} s{best})", elapsed=res.seconds,
                              best=(None, res.fail))
    value, proof = res.safe, res.safe_proof
    note = ""
    n = res.probes
    if round_to is not None and not integer:
        m = Fraction(value) / round_to
        v2 = (math.floor(m) if worse_up else math.ceil(m)) * round_to
        if v2 != value:
            out: Outcome = probe(v2)
            n += 1
            proof = out.proof if out.verdict == "meets" else Proof(
                "meets", f"monotonicity: {format_fraction(Fraction(value))} meets the target "
                f"({res.safe_proof.describe('the target')}) and {format_fraction(v2)} is on its safe side")
            value = v2
    fails = res.fail
    gap_val: Fraction | None = None
    if fails is not None and value != 0:
        gap_val = abs(Fraction(fails) - Fraction(value)) / abs(Fraction(value))
    exact = (integer and fails is not None and abs(fails - value) == 1) or (fails is None and res.at_limit)
    if res.stopped == "time":
        note = f"the time budget ran out after {res.seconds:.1f} s before the requested gap was certified"
    elif res.stopped == "probes":
        note = "the probe limit was reached before the requested gap was certified"
    elif res.stopped == "undecided":
        note = "the engine could not separate the points between value and fails_at within its limits"
    elif res.stopped == "limit" or (fails is None and res.at_limit):
        note = "every value searched up to the end of the range meets the target"
    if res.undecided and not note:
        note = f"{len(res.undecided)} probe(s) near the boundary were undecided within their budget"
    return Calibration(parameter, "largest" if worse_up else "smallest", value, fails, proof,
                       res.fail_proof, gap_val, exact, inputs, engine, n, time.monotonic() - run.start,
                       None if integer else gap, note, comparison)


def gaussian_mu2_root(eps_g: ExactReal, delta_g: Fraction, digits: int = 30) -> tuple[Fraction, Fraction] | None:
    """An enclosure [lo, hi] of the mu^2 at which a Gaussian composition's delta(eps_g) equals delta_g
    (delta is increasing in mu^2, docs/mathematics.md §7.2), or None when delta_g = 0."""
    from exactdp.core.roots import decreasing_root, sign_at

    if delta_g <= 0:
        return None

    def f(m: arb) -> arb:
        return arb_of_fraction(delta_g) - gaussian_delta_arb(m, eps_g.arb())

    lo, hi = Fraction(1, 1 << 20), Fraction(1)
    while sign_at(f, lo) <= 0:
        lo /= 1 << 20
        if lo < Fraction(1, 1 << 400):
            return None
    while sign_at(f, hi) >= 0:
        hi *= 4
        if hi > 1 << 200:
            return None
    enc = decreasing_root(f, lo, hi, digits)
    return enc.lower, enc.upper  # type: ignore[return-value]


def closed_form_pair(probe: Any, lo: Fraction, hi: Fraction, worse_up: bool, gap: Fraction) -> SearchResult:
    """The final pair around a boundary known to lie in [lo, hi]: the safe end about gap/3 inside,
    the failing end about gap/3 beyond, both short decimals, both proved by probes."""
    t0 = time.monotonic()
    a, b = (lo, hi) if worse_up else (hi, lo)  # a: the safe side's end of the enclosure
    sgn = -1 if worse_up else 1
    safe = shortest_decimal_in(a * (1 + sgn * gap / 6), a * (1 + sgn * gap / 3))
    fail = shortest_decimal_in(b * (1 - sgn * gap / 6), b * (1 - sgn * gap / 3))
    o1, o2 = probe(safe), probe(fail)
    res = SearchResult(safe if o1.verdict == "meets" else None, fail if o2.verdict == "fails" else None,
                       o1.proof if o1.verdict == "meets" else None, o2.proof if o2.verdict == "fails" else None,
                       2, seconds=time.monotonic() - t0)
    return res


def approx_rational(e: ExactReal) -> Fraction:
    """A rational near e (chooses a first probe only)."""
    with ctx.workprec(64):
        return Fraction(float(e.arb().mid())).limit_denominator(10**12)  # float ok: a first probe

