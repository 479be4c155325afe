"""A reported trade-off function (f-DP) judged against the certified beta(alpha) (docs/kit.md §8).

An accountant that reports a trade-off function f claims the mechanism is f-DP: for every pair of
neighbours, in both orders, the optimal test's type II error T(alpha) is at least f(alpha).  The
tightest such f is beta(alpha) of :func:`exactdp.api.tradeoff.tradeoff` (docs/tradeoff.md §1-§2),
so a reported f(alpha) is **sound iff f(alpha) <= beta(alpha)**: a reported value *above* the
certified beta claims that no test can do as well as the optimal test does, which is false.  (A
reported true positive rate tpr = 1 - f(alpha) is the claim ``1 - tpr``: sound iff tpr >= 1 - beta.)

The verdicts, decided exactly against the certified enclosure of beta(alpha):

- ``sound``: f(alpha) <= beta(alpha), and not certified more than :data:`~exactdp.testing.judge.LOOSE_REL`
  (1 %) below it; ``loose``: sound and certified more than 1 % below (``relative_gap`` says how far);
- ``unsound-fp``: above beta by at most :data:`~exactdp.testing.judge.FP_ULPS` (4) units in the last
  place of the reported float (beta >= f - 4 ulp(f), certified);
- ``unsound``: above beta by more than that (or not certified to be within 4 ulps);
- ``undecided``: the reported value lies inside the certified enclosure after refining within the
  budget; never counted as sound.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from exactdp.core.enclosure import Enclosure
from exactdp.core.errors import InvalidParameterError, PrecisionError
from exactdp.core.numbers import format_fraction
from exactdp.model.composition import Composition
from exactdp.testing.assertions import UndecidedClaimError, UnsoundClaimError, raise_failures
from exactdp.testing.judge import FP_ULPS, LOOSE_REL, ulp_of_claim
from exactdp.testing.oracle import (
    InvalidClaimError,
    curve_points,
    exact_of_reported,
    kit_composition,
    kit_seconds,
    parse_rel_tol,
    short_repr,
)

__all__ = [
    "TRADEOFF_VERDICTS",
    "TradeoffJudgement",
    "assert_tradeoff_curve_sound",
    "assert_tradeoff_sound",
    "judge_tradeoff",
]

#: every verdict a trade-off judgement carries
TRADEOFF_VERDICTS = ("sound", "loose", "unsound-fp", "unsound", "undecided")
#: the most digits a claim inside the enclosure is refined to
_MAX_DIGITS = 80


@dataclass(frozen=True)
class TradeoffJudgement:
    """The exact verdict on one reported f(alpha) (module docstring).  ``beta`` is the certified
    enclosure of the tightest beta(alpha); ``gap_lower`` / ``gap_upper`` bound the relative gap
    exactly: (f - beta)/beta above beta (unsound), (beta - f)/beta below it (sound)."""

    verdict: str
    composition: Composition
    alpha: Fraction
    claim: Fraction
    beta: Enclosure
    gap_lower: Fraction | None = None
    gap_upper: Fraction | None = None
    note: str = ""

    @property
    def sound(self) -> bool:
        """True for ``sound`` and ``loose``."""
        return self.verdict in ("sound", "loose")

    @property
    def relative_gap(self) -> str | None:
        """The relative gap for display: one number or a certified range."""
        lo, hi = self.gap_lower, self.gap_upper
        if lo is None and hi is None:
            return None
        show = lambda x: "?" if x is None else f"{float(x):.3g}"  # float ok: display
        return show(lo) if show(lo) == show(hi) else f"[{show(lo)}, {show(hi)}]"

    def describe(self) -> str:
        """One line: the composition, alpha, the reported f(alpha), the certified beta, the verdict."""
        c = format_fraction(self.claim)
        c = c if len(c) <= 30 else f"~{float(self.claim)!r}"  # float ok: display only
        s = (f"composition {self.composition}, alpha={format_fraction(self.alpha)}: reported f(alpha) = {c}, "
             f"certified beta(alpha) in {self.beta}")
        gap = self.relative_gap
        if self.verdict == "unsound":
            s += (" -> UNSOUND: above the certified beta" + (f", {gap} relative" if gap else "")
                  + " (it claims no test does as well as the optimal test does)")
        elif self.verdict == "unsound-fp":
            s += f" -> UNSOUND at floating-point level (within {FP_ULPS} ulps of the reported value)"
        elif self.verdict == "loose":
            s += f" -> sound but LOOSE, {gap} relative below the certified beta"
        elif self.verdict == "undecided":
            s += (" -> UNDECIDED: the reported value lies inside the certified enclosure and the time budget ran "
                  "out (raise max_seconds)")
        else:
            s += " -> sound"
        return s + (f" [{self.note}]" if self.note else "")


def _alpha(x: Any) -> Fraction:
    """A type I error as the library computed at (a float at its exact binary value), in (0, 1)."""
    a = exact_of_reported(x, "alpha")
    if isinstance(a, float) or not 0 < a < 1:
        raise InvalidParameterError(f"alpha={short_repr(x)} must be in (0, 1) (a type I error)")
    return a


def _first_digits(comp: Composition) -> int:
    """20 digits where beta has a closed form or exact vertices; 4 for the PLD engine (then refined)."""
    from exactdp.engines.gaussian import gaussian_mu2

    return 20 if gaussian_mu2(comp) is not None or comp.is_generic else 4


def _betas(comp: Composition, alphas: list[Fraction], digits: int, budget: float) -> list[Enclosure]:
    from exactdp.api.tradeoff import tradeoff

    return list(tradeoff(comp, alphas, digits=digits, max_seconds=budget).betas)


def _verdict(claim: Fraction, enc: Enclosure, fp: bool) -> tuple[str, Fraction | None, Fraction | None] | None:
    """The verdict of ``claim`` against ``enc``, or None when it lies inside (refine)."""
    lo, hi = enc.lower, enc.upper
    assert isinstance(lo, Fraction) and isinstance(hi, Fraction)  # beta is in [0, 1]
    if claim <= lo:  # sound: certified gap (beta - f)/beta, increasing in beta
        g_lo = None if hi <= 0 else max(Fraction(0), 1 - claim / hi)
        g_hi = None if lo <= 0 else 1 - claim / lo
        return ("loose" if g_lo is not None and g_lo > LOOSE_REL else "sound"), g_lo, g_hi
    if claim > hi:  # unsound: certified gap (f - beta)/beta, decreasing in beta
        g_lo = None if hi <= 0 else claim / hi - 1
        g_hi = None if lo <= 0 else claim / lo - 1
        within = fp and lo >= claim - FP_ULPS * ulp_of_claim(claim)
        return ("unsound-fp" if within else "unsound"), g_lo, g_hi
    return None


def _judge_one(comp: Composition, a: Fraction, claim: Fraction, fp: bool, enc: Enclosure, budget: float,
               start: float) -> TradeoffJudgement:
    while True:
        v = _verdict(claim, enc, fp)
        if v is not None:
            return TradeoffJudgement(v[0], comp, a, claim, enc, v[1], v[2])
        if enc.exact is not None or enc.digits * 2 > _MAX_DIGITS or time.monotonic() - start > 2 * budget:
            return TradeoffJudgement("undecided", comp, a, claim, enc,
                                     note=f"inside the certified enclosure at {enc.certified_digits()} digits")
        try:
            e = _betas(comp, [a], enc.digits * 2, budget)[0]
        except PrecisionError:  # TimeBudgetError included: undecided, never a guess
            return TradeoffJudgement("undecided", comp, a, claim, enc, note="the refinement ran out of budget")
        lo, hi = max(enc.lower, e.lower), min(enc.upper, e.upper)  # both certified: so is their intersection
        assert isinstance(lo, Fraction) and isinstance(hi, Fraction)  # beta is in [0, 1]
        if (lo, hi) == (enc.lower, enc.upper):
            return TradeoffJudgement("undecided", comp, a, claim, enc,
                                     note=f"inside the certified enclosure at {enc.certified_digits()} digits")
        enc = Enclosure.exact_value(lo, e.digits, e.algorithm) if lo == hi else Enclosure(
            lo, hi, max(enc.digits, e.digits), algorithm=e.algorithm)


def _claim(reported: Any, alpha: Fraction) -> Fraction:
    try:
        c = exact_of_reported(reported, "reported f(alpha)")
    except InvalidClaimError as e:
        raise InvalidClaimError(f"{e} (alpha={format_fraction(alpha)})", reported) from None
    if isinstance(c, float):  # +inf: a type II error above 1 is claimed, which no test has
        raise InvalidClaimError(f"reported f(alpha)={short_repr(reported)} at alpha={format_fraction(alpha)} is not "
                                "a type II error: a trade-off value is a finite number", reported)
    return c


def _is_float(x: Any) -> bool:
    return isinstance(x, float) or (hasattr(x, "as_integer_ratio") and not isinstance(x, (int, Fraction)))


def judge_tradeoff(reported_beta: Any, *, alpha: Any, composition: Any, max_seconds: Any = None,
                   exact_floats: bool | None = None, relation: Any = None) -> TradeoffJudgement:
    """The exact verdict on a reported f(``alpha``) as a trade-off function ``composition`` satisfies.

    ``reported_beta`` and ``alpha`` are the library's numbers (floats at their exact binary values);
    ``composition`` is anything the kit reads (docs/kit.md §1: a composition, a DpEvent, an
    accountant).  The certified beta(alpha) of :func:`exactdp.tradeoff` decides; a value inside its
    enclosure is refined (digits doubled within ``max_seconds``, default 10 s), then ``undecided``.

    >>> judge_tradeoff(0.36, alpha=0.05, composition="gaussian:sigma=1,count=4").verdict
    'sound'
    >>> judge_tradeoff("0.3613", alpha="0.05", composition="gaussian:sigma=1,count=4").verdict
    'unsound'
    """
    a = _alpha(alpha)
    claim = _claim(reported_beta, a)
    comp = kit_composition(composition, exact_floats, relation)
    budget = kit_seconds(max_seconds)
    start = time.monotonic()
    enc = _betas(comp, [a], _first_digits(comp), budget)[0]
    return _judge_one(comp, a, claim, _is_float(reported_beta), enc, budget, start)


def _check(v: TradeoffJudgement, tol: Fraction) -> TradeoffJudgement:
    if v.sound:
        return v
    if v.verdict == "undecided":
        raise UndecidedClaimError(v)
    if tol > 0 and v.gap_upper is not None and v.gap_upper <= tol:
        return v  # certified to be at most rel_tol above
    raise UnsoundClaimError(v)


def assert_tradeoff_sound(reported_beta: Any, *, alpha: Any, composition: Any, rel_tol: Any = 0,
                          max_seconds: Any = None, exact_floats: bool | None = None,
                          relation: Any = None) -> TradeoffJudgement:
    """Assert that a reported f(``alpha``) <= the certified beta(``alpha``) of ``composition`` (docs/kit.md §8).

    Fails with :class:`~exactdp.testing.assertions.UnsoundClaimError` above beta (``rel_tol`` forgives
    an excess certified to be at most that relative amount), with
    :class:`~exactdp.testing.assertions.UndecidedClaimError` when the budget cannot decide; returns the
    :class:`TradeoffJudgement`.

    >>> assert_tradeoff_sound(0.3612, alpha="0.05", composition="gaussian:sigma=1,count=4").verdict
    'sound'
    >>> assert_tradeoff_sound(0.5, alpha="0.05", composition="gaussian:sigma=1,count=4")
    Traceback (most recent call last):
    ...
    exactdp.testing.assertions.UnsoundClaimError: composition 4 x gaussian:sigma=1, alpha=0.05: reported f(alpha) = 0.5, certified beta(alpha) in [0.36123996868766493568, 0.361239968687664935681] -> UNSOUND: above the certified beta, 0.384 relative (it claims no test does as well as the optimal test does)
    """
    tol = parse_rel_tol(rel_tol)
    return _check(judge_tradeoff(reported_beta, alpha=alpha, composition=composition, max_seconds=max_seconds,
                                 exact_floats=exact_floats, relation=relation), tol)


def assert_tradeoff_curve_sound(reported: Any, values: Any = None, *, composition: Any, rel_tol: Any = 0,
                                max_seconds: Any = None, exact_floats: bool | None = None,
                                relation: Any = None) -> list[TradeoffJudgement]:
    """Assert a whole reported trade-off curve: ``{alpha: f(alpha)}``, a list of pairs, or the alphas
    with their values in ``values`` (e.g. an accountant's false positive rates and ``1 - tpr``).

    Every alpha is judged (one certified curve for all, refined where a value lies inside); the failure
    lists every unsound and undecided point.

    >>> [v.verdict for v in assert_tradeoff_curve_sound({"0.05": 0.36, "0.5": 0.0227},
    ...                                                 composition="gaussian:sigma=1,count=4")]
    ['sound', 'sound']
    """
    tol = parse_rel_tol(rel_tol)
    comp = kit_composition(composition, exact_floats, relation)
    budget = kit_seconds(max_seconds)
    pts = [(_alpha(a), r) for a, r in curve_points(reported, values, "alpha")]
    claims = [(_claim(r, a), _is_float(r)) for a, r in pts]
    encs = _betas(comp, sorted({a for a, _ in pts}), _first_digits(comp), budget)
    by_alpha = dict(zip(sorted({a for a, _ in pts}), encs))
    out, bad = [], []
    for (a, _), (c, fp) in zip(pts, claims):
        v = _judge_one(comp, a, c, fp, by_alpha[a], budget, time.monotonic())  # each point its own budget
        out.append(v)
        try:
            _check(v, tol)
        except (UnsoundClaimError, UndecidedClaimError):
            bad.append(v)
    raise_failures(bad, len(out), "points of the trade-off curve")
    return out
