"""Verdicts on a library's claim, judged exactly against the certified bracket (docs/kit.md §3).

A DP accountant's number is a *claim*.  An upper claim ("eps at delta_g is at most this", "delta
at eps_g is at most this", "the composition is (eps, delta)-DP") is judged against the certified
enclosure of the optimum, which for a generic composition or Gaussian noise is 20+ digits and for
other mechanisms is the certified bracket of the PLD engine (docs/pld.md), refined within a time
budget.  The verdicts, each decided exactly:

- ``sound``: the claim is >= the optimum, and not more than :data:`LOOSE_REL` (1 %) above it;
- ``loose``: sound, and certified more than :data:`LOOSE_REL` above the optimum (``relative_gap``
  says by how much: its certified range);
- ``unsound-fp``: below the optimum by at most :data:`FP_ULPS` (4) units in the last place of the
  claimed float64 (a floating-point slip: the optimum is <= claim + 4 ulp(claim));
- ``unsound``: below the optimum by more than that (``relative_gap`` is the certified range of the
  relative shortfall (optimum - claim)/optimum);
- ``undecided``: the claim lies inside the certified bracket and the decision did not settle it
  within the budget.  It is never counted as sound: the report counts it apart, and the kit's
  assertions fail on it with :class:`UndecidedClaimError` (a claim nobody could check passes
  nothing).

A *lower* claim (an accountant's optimistic estimate, documented as an under-estimate) is
labelled ``lower-estimate`` and never judged as an upper bound; its note says where it lies.

A claim inside the bracket is settled by the exact decision (docs/contracts.md §1.5): eps is
sound iff the composition is (eps, delta_g)-DP; delta is sound iff it is (eps_g, delta)-DP.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Literal

from exactdp.core.enclosure import Enclosure
from exactdp.core.errors import PrecisionError
from exactdp.core.numbers import ExactReal, format_fraction, parse_delta, parse_eps
from exactdp.model.attained import attained, is_tight
from exactdp.model.composition import Composition
from exactdp.testing.oracle import (
    MECHANISM_REFINE,
    InvalidClaimError,
    Oracle,
    exact_of_reported,
    needs_pld,
    oracle_or_default,
    short_repr,
)

__all__ = [
    "FP_ULPS",
    "LOOSE_REL",
    "VERDICTS",
    "Judgement",
    "judge",
    "ulp_of_claim",
]

#: A shortfall of at most this many units in the last place of the claimed float is ``unsound-fp``.
FP_ULPS = 4
#: A sound claim certified more than this relative amount above the optimum is ``loose``.
LOOSE_REL = Fraction(1, 100)
#: Every verdict a judgement (or a cross-check finding) can carry.
VERDICTS = ("sound", "loose", "unsound-fp", "unsound", "undecided", "lower-estimate", "error", "skipped")


def ulp_of_claim(claim: Fraction) -> Fraction:
    """One unit in the last place of the float64 nearest the claim, exactly.

    A claim read from a float is that float, so this is its own ulp (``math.ulp``).

    >>> ulp_of_claim(Fraction(1))
    Fraction(1, 4503599627370496)
    """
    f = float(claim)  # float ok: only to find the claim's binary exponent
    if not math.isfinite(f):
        return Fraction(0)
    return Fraction(math.ulp(f))


def _gap_str(lo: Fraction | None, hi: Fraction | None) -> str | None:
    if lo is None and hi is None:
        return None
    show = lambda x: "?" if x is None else f"{float(x):.3g}"  # float ok: display
    if lo is not None and hi is not None and f"{float(lo):.3g}" == f"{float(hi):.3g}":  # float ok: display
        return show(lo)
    return f"[{show(lo)}, {show(hi)}]"


@dataclass(frozen=True)
class Judgement:
    """The exact verdict on one claim (see the module docstring for the verdicts).

    ``query`` is ``"epsilon"`` (a claimed eps at total ``at`` = delta_g) or ``"delta"`` (a
    claimed delta at ``at`` = eps_g).  ``optimum`` is the certified enclosure used;
    ``gap_lower`` / ``gap_upper`` bound the relative gap exactly: the shortfall
    (optimum - claim)/optimum for an unsound claim, the excess (claim - optimum)/optimum for a
    sound one (None where it is not defined: an infinite optimum or claim, an optimum of 0).
    ``ulps`` is the shortfall in units of the claim's last place when it is ``unsound-fp``.
    """

    verdict: str
    query: Literal["epsilon", "delta"]
    composition: Composition
    at: Fraction | ExactReal
    claim: Fraction | float
    optimum: Enclosure
    gap_lower: Fraction | None = None
    gap_upper: Fraction | None = None
    side: Literal["upper", "lower"] = "upper"
    note: str = ""

    @property
    def sound(self) -> bool:
        """True for ``sound`` and ``loose`` (a claim that holds)."""
        return self.verdict in ("sound", "loose")

    @property
    def relative_shortfall(self) -> Fraction | None:
        """For an unsound claim, a certified lower bound of (optimum - claim)/optimum (else None)."""
        return self.gap_lower if self.verdict in ("unsound", "unsound-fp") else None

    @property
    def fp_level(self) -> bool:
        """Whether the claim is ``unsound-fp`` (below by at most :data:`FP_ULPS` ulps)."""
        return self.verdict == "unsound-fp"

    @property
    def label(self) -> str:
        return self.verdict

    @property
    def relative_gap(self) -> str | None:
        """The relative gap for display: one number, or a certified range ``[lo, hi]``."""
        return _gap_str(self.gap_lower, self.gap_upper)

    def describe(self) -> str:
        at_name = "delta_g" if self.query == "epsilon" else "eps_g"
        at = format_fraction(self.at) if isinstance(self.at, Fraction) else str(self.at)
        what = "eps" if self.query == "epsilon" else "delta"
        claim = "inf" if isinstance(self.claim, float) else _show_claim(self.claim)
        s = f"composition {self.composition}, {at_name}={at}: reported {what} = {claim}, certified optimum in {self.optimum}"
        gap = self.relative_gap
        if self.verdict == "unsound":
            s += " -> UNSOUND" + (f", {gap} relative below the optimum" if gap else
                                  " (the optimum is +inf)" if self.optimum.is_infinite else "")
        elif self.verdict == "unsound-fp":
            s += f" -> UNSOUND at floating-point level (within {FP_ULPS} ulps of the claim)"
        elif self.verdict == "loose":
            s += f" -> sound but LOOSE, {gap} relative above the optimum"
        elif self.verdict == "undecided":
            if "Theorem" in self.note:  # a two-sided answer: the gap is not the budget's (judge's note)
                return s + f" -> UNDECIDED: {self.note}"
            return s + " -> UNDECIDED: the claim lies inside the certified bracket and the time budget ran out " \
                "before the decision (raise max_seconds, or compare with a claim outside the bracket)"
        elif self.verdict == "lower-estimate":
            s += " -> a lower estimate (not judged as a bound)"
        else:
            s += " -> sound"
        return s + (f" [{self.note}]" if self.note else "")


def _show_claim(x: Fraction) -> str:
    t = format_fraction(x)
    return t if len(t) <= 30 else f"~{float(x)!r}"  # float ok: display only


def _shortfall(opt: Enclosure, c: Fraction) -> tuple[Fraction | None, Fraction | None]:
    """Certified range of (opt - c)/opt, which is increasing in opt (for c >= 0).

    The lower end is a Fraction except for an infinite optimum (lower = +inf, reached only when a
    refined PLD bracket proves the optimum infinite), where it is the float 1 - c/inf = 1.0."""
    lo = None if opt.lower <= 0 else max(Fraction(0), 1 - c / opt.lower)
    hi = None if isinstance(opt.upper, float) or opt.upper <= 0 else 1 - c / opt.upper
    return lo, hi  # type: ignore[return-value]  # lo is the float 1.0 only for an infinite optimum (above)


def _excess(opt: Enclosure, c: Fraction) -> tuple[Fraction | None, Fraction | None]:
    """Certified range of (c - opt)/opt, which is decreasing in opt.

    Only asked of a finite optimum (the claim is >= one of its ends), so both ends are Fractions or -inf."""
    lo = None if isinstance(opt.upper, float) or opt.upper <= 0 else max(Fraction(0), c / opt.upper - 1)
    hi = None if isinstance(opt.lower, float) or opt.lower <= 0 else c / opt.lower - 1
    return lo, hi


def _decide(oracle: Oracle, comp: Composition, eps: Any, delta: Any, seconds: float | None = None) -> bool | None:  # float ok: seconds
    """The exact decision, or None when it is out of reach within the oracle's budget (``seconds``
    when given)."""
    try:
        if seconds is None:
            return oracle.is_private(comp, eps, delta)
        return oracle.is_private(comp, eps, delta, max_seconds=seconds)
    except PrecisionError:  # TimeBudgetError included: undecided, never a guess
        return None


#: a claim inside the bracket of k copies of one Gaussian step or mixture (the float-FFT decision, docs/pld.md
#: §12.7) is decided at the claim with this many budgets: the two of the refinement it skips, and its own
DIRECT_BUDGETS = 3


def _decides_at_claim(comp: Composition) -> bool:
    """Whether the PLD engine decides a claim on ``comp`` by evaluating delta at the claim itself on
    grids aimed at its distance (the float-FFT path, docs/pld.md §12.7): then refining the eps bracket
    first only spends the budget."""
    from exactdp.engines.pld.fftdecide import decision_groups

    return decision_groups(comp) is not None


def _refined(oracle: Oracle, comp: Composition, query: str, at: Any, claim: Fraction, opt: Enclosure) -> Enclosure:
    """Refine a PLD bracket (docs/pld.md) until the claim is outside it or twice the budget is spent.

    Each bracket is certified, so their intersection is too."""
    start = time.monotonic()
    lo, hi, digits = opt.lower, opt.upper, opt.digits
    for d in MECHANISM_REFINE:
        if time.monotonic() - start > 2 * oracle.budget:
            break
        try:
            e = oracle.epsilon(comp, at, digits=d) if query == "epsilon" else oracle.delta(comp, at, digits=d)
        except PrecisionError:
            break
        if e.is_infinite:
            return e
        lo, hi, digits = max(lo, e.lower), min(hi, e.upper), max(digits, e.digits)
        if claim < lo or claim >= hi:
            break
    if (lo, hi) == (opt.lower, opt.upper):
        return opt
    return Enclosure(lo, hi, digits=digits, algorithm=opt.algorithm)


def _negative_claim(comp: Any, claim: Fraction, delta_g: Fraction, out: Any) -> Judgement:
    """The verdict on an eps claim below 0 at ``delta_g`` when the optimum is 0: sound exactly when the
    certified delta at that eps (below 0, docs/mathematics.md §9) is at most delta_g."""
    from exactdp.api.optimal import optimal_delta

    d = optimal_delta(comp, f"-{format_fraction(-claim)}", digits=12)
    if d.upper <= delta_g:
        return out("sound", note=f"a negative eps: the certified delta there is at most {d.upper_str()} <= delta_g")
    if d.lower > delta_g:
        return out("unsound", note=f"a negative eps: the certified delta there is at least {d.lower_str()} > delta_g")
    return out("undecided", note=f"a negative eps: the certified delta there, {d}, straddles delta_g")


def judge(
    reported: Any,
    composition: Any,
    *,
    delta_g: Any = None,
    eps_g: Any = None,
    oracle: Oracle | None = None,
    side: Literal["upper", "lower"] = "upper",
) -> Judgement:
    """Judge one reported eps (pass ``delta_g``) or delta (pass ``eps_g``) exactly.

    ``composition`` is anything :meth:`exactdp.Composition.of` accepts, mechanisms included
    (``[(PoissonSampled(Gaussian("1"), "0.01"), 1000)]``).  ``reported`` is the library's number
    (a float at its exact binary value, +inf claims nothing).  ``side="lower"`` marks a
    documented under-estimate, which is labelled ``lower-estimate`` and not judged.

    >>> judge(1.49, ("0.1", 0, 30), delta_g="1e-3").verdict
    'sound'
    >>> judge(1.4811439805399070, ("0.1", 0, 30), delta_g="1e-3").verdict
    'unsound-fp'
    >>> judge(3, ("0.1", 0, 30), delta_g="1e-3").verdict
    'loose'
    """
    oracle = oracle_or_default(oracle)
    if (delta_g is None) == (eps_g is None):
        from exactdp.core.errors import InvalidParameterError

        raise InvalidParameterError("pass exactly one of delta_g= (an eps claim) or eps_g= (a delta claim)")
    if not isinstance(side, str) or side not in ("upper", "lower"):
        from exactdp.core.errors import InvalidParameterError

        raise InvalidParameterError(f"side={short_repr(side)} must be 'upper' or 'lower'")
    comp = oracle.composition(composition)
    query: Literal["epsilon", "delta"] = "epsilon" if delta_g is not None else "delta"
    with oracle.floats():
        at: Fraction | ExactReal = parse_delta(delta_g, "delta_g") if query == "epsilon" else parse_eps(eps_g, "eps_g")
    what = "eps" if query == "epsilon" else "delta"
    try:
        claim = exact_of_reported(reported, f"reported {what}")
    except InvalidClaimError as e:
        raise InvalidClaimError(f"{e} (composition {comp}, {'delta_g' if query == 'epsilon' else 'eps_g'}={at})",
                                reported) from None
    opt = oracle.epsilon(comp, at) if query == "epsilon" else oracle.delta(comp, at)

    def out(verdict: str, lo: Fraction | None = None, hi: Fraction | None = None, note: str = "") -> Judgement:
        return Judgement(verdict, query, comp, at, claim, opt, lo, hi, side, note)

    if side == "lower":
        if isinstance(claim, float) or (not isinstance(opt.upper, float) and claim > opt.upper):
            return out("lower-estimate", note="above the certified optimum: not a lower bound here")
        if claim <= opt.lower or opt.is_infinite:
            return out("lower-estimate", note="at or below the certified optimum, as a lower estimate should be")
        return out("lower-estimate", note="inside the certified bracket")

    direct = needs_pld(comp) and _decides_at_claim(comp)
    seconds = DIRECT_BUDGETS * oracle.budget if direct else None  # float ok: seconds

    def private(c: Fraction) -> bool | None:
        return _decide(oracle, comp, c, at, seconds) if query == "epsilon" else _decide(oracle, comp, at, c, seconds)

    if isinstance(claim, float):  # +inf claims nothing
        return out("sound", note="+inf claims nothing")
    if query == "delta" and claim >= 1:
        return out("sound", note="a delta >= 1 claims nothing")
    if opt.is_infinite:
        return out("unsound", note="no finite eps is private at this delta_g (the optimum is +inf)")
    if claim >= opt.upper:
        lo, hi = _excess(opt, claim)
        return out("loose" if lo is not None and lo > LOOSE_REL else "sound", lo, hi)
    if claim < 0 and query == "epsilon" and opt.lower <= 0 and not isinstance(at, ExactReal):
        # a negative eps at delta_g claims delta(claim) <= delta_g, the hockey-stick divergence below 0
        # (docs/mathematics.md §9): decided from the certified delta at that eps, not called unsound
        return _negative_claim(comp, claim, at, out)
    if claim < 0 or claim < opt.lower:
        ok: bool | None = False
    else:
        if needs_pld(comp) and not direct:  # a PLD bracket: refine it (more digits, each within the budget) first
            opt = _refined(oracle, comp, query, at, claim, opt)  # ``out`` reports the refined bracket
        if claim >= opt.upper:
            lo, hi = _excess(opt, claim)
            return out("loose" if lo is not None and lo > LOOSE_REL else "sound", lo, hi)
        ok = False if claim < opt.lower else private(claim)
        if ok is None:
            if not is_tight(comp):  # between the pair one dataset pair attains and the dominating pair
                return out("undecided", note="the claim lies between the optimum of the pair one dataset pair attains "
                           "and that of the dominating pair (docs/mathematics.md §9, Theorem 9.7): that gap is "
                           "real, more time does not close it" if attained(comp) is not None else
                           "the claim lies below the certified upper bound, with no attained pair modelled "
                           "(docs/mathematics.md §9, Theorems 9.4 and 9.6)")
            return out("undecided", note=f"the claim lies inside the certified bracket (digits {opt.certified_digits()})")
    if ok:
        lo, hi = _excess(opt, claim)
        return out("sound", Fraction(0), hi)
    lo, hi = _shortfall(opt, claim)
    if claim < 0:
        return out("unsound", lo, hi, note="a negative claim")
    c4 = claim + FP_ULPS * ulp_of_claim(claim)
    if opt.upper <= c4:
        fp = True
    elif opt.lower > c4:
        fp = False
    else:
        fp = bool(private(c4))  # undecided counts as beyond a few ulps: never excused as fp
    if fp:
        ulps = math.ceil((opt.lower - claim) / ulp_of_claim(claim)) if opt.lower > claim else 0
        return out("unsound-fp", lo, hi, note=f"within {FP_ULPS} ulps of the claim ({max(ulps, 1)} or more)")
    return out("unsound", lo, hi)
