"""The exact oracle as the testing kit hands it out, and the one-sided comparison of a claim.

A DP accountant *claims an upper bound*: "the composition is (eps, delta_g)-DP with this eps"
(or "with this delta at eps_g").  The claim is sound iff the claimed value is >= the optimum
(KOV15 Thm 3.3 / Murtagh-Vadhan Thm 1.5).  :func:`judge_epsilon` / :func:`judge_delta` decide
that exactly: first by the certified enclosure of the optimum, and when the claim falls inside
the enclosure, by the exact decision ``is_private`` (docs/contracts.md §1.5), which is never wrong.

Nothing here imports hypothesis, pytest or a peer library.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Any, Literal

from ..composition import Composition
from ..numbers import INF, Enclosure, ExactReal, format_fraction, parse_delta, parse_eps, parse_rational

__all__ = [
    "FP_LEVEL",
    "Oracle",
    "Verdict",
    "as_composition",
    "exact_of_reported",
    "judge_delta",
    "judge_epsilon",
]

#: A shortfall below this relative size is a floating-point-level slip, not a material error.
FP_LEVEL = Fraction(1, 10**9)


def as_composition(composition: Any) -> Composition:
    """A :class:`Composition` from a Composition, an ``(eps, delta, k)`` triple, or a mechanism list.

    >>> str(as_composition(("0.1", "0.001", 30)))
    '30 x (0.1, 0.001)-DP'
    >>> str(as_composition([("1", "0.1"), ("2", "0.2")]))
    '(1, 0.1) + (2, 0.2)'
    """
    if isinstance(composition, Composition):
        return composition
    if isinstance(composition, dict):
        if "mechanisms" in composition:
            return Composition.heterogeneous(composition["mechanisms"])
        return Composition.homogeneous(composition["eps"], composition.get("delta", 0), composition["k"])
    if isinstance(composition, tuple) and len(composition) == 3 and isinstance(composition[2], int) \
            and not isinstance(composition[0], (tuple, list)):
        return Composition.homogeneous(*composition)
    if isinstance(composition, Iterable) and not isinstance(composition, (str, bytes)):
        return Composition.heterogeneous(list(composition))
    raise TypeError(
        f"composition={composition!r} must be a Composition, an (eps, delta, k) triple or a list of (eps, delta) pairs"
    )


def exact_of_reported(x: Any) -> Fraction | float:
    """The exact value of a number some library reported: a Fraction, or ``INF``.

    A float is taken at its exact binary value (that *is* what the library claimed); ``None``
    and +inf mean "no finite claim" (``INF``).  NaN and -inf are refused with a ValueError.

    >>> exact_of_reported(0.5), exact_of_reported(None), exact_of_reported("1/3")
    (Fraction(1, 2), inf, Fraction(1, 3))
    """
    if x is None:
        return INF
    if isinstance(x, Enclosure):
        return x.upper
    if isinstance(x, (Fraction, int)) and not isinstance(x, bool):
        return Fraction(x)
    if isinstance(x, (str, Decimal)):
        if isinstance(x, str) and x.strip().lower() in ("inf", "+inf", "infinity"):
            return INF
        return parse_rational(x, "reported")
    if hasattr(x, "_mpf_"):  # mpmath mpf: exact mantissa and exponent
        import mpmath

        if mpmath.isinf(x) and x > 0:
            return INF
        if not mpmath.isfinite(x):
            raise ValueError(f"reported={x!r} must be a number, not NaN or -inf")
        man, exp = mpmath.mpf(x).man_exp
        return Fraction(int(man) * 2**int(exp)) if exp >= 0 else Fraction(int(man), 2 ** int(-exp))
    if hasattr(x, "as_integer_ratio") or isinstance(x, float):  # float, numpy floats
        f = float(x)  # float ok: a binary float (or numpy scalar) converts to float64 without change
        if math.isnan(f) or f == -math.inf:
            raise ValueError(f"reported={x!r} must be a number, not NaN or -inf")
        if f == math.inf:
            return INF
        return Fraction(f)
    try:
        return parse_rational(x, "reported")
    except Exception:
        return Fraction(str(x))


def _show(x: Fraction | float) -> str:
    if isinstance(x, float):
        return "inf"
    if x.denominator == 1 or len(format_fraction(x)) <= 30:
        return format_fraction(x)
    return f"{x.numerator}/{x.denominator} (~{float(x)!r})"  # float ok: display only


@dataclass(frozen=True)
class Verdict:
    """The exact verdict on one claimed upper bound.

    ``sound`` is True iff the claim is >= the optimum (decided exactly).  ``relative_shortfall``
    is (optimum - claim)/optimum for an unsound claim (a certified lower bound of it when the
    claim lies below the enclosure; ``None`` when the optimum is +inf or 0), and
    ``fp_level`` says whether it is below :data:`FP_LEVEL` (a floating-point-level slip).
    """

    query: Literal["epsilon", "delta"]
    composition: Composition
    at: Fraction | ExactReal
    reported: Fraction | float
    optimum: Enclosure
    sound: bool
    relative_shortfall: Fraction | None = None

    @property
    def fp_level(self) -> bool:
        return (not self.sound) and self.relative_shortfall is not None and self.relative_shortfall < FP_LEVEL

    @property
    def label(self) -> str:
        """``sound`` or ``unsound``."""
        return "sound" if self.sound else "unsound"

    def describe(self) -> str:
        at_name = "delta_g" if self.query == "epsilon" else "eps_g"
        at = format_fraction(self.at) if isinstance(self.at, Fraction) else str(self.at)
        what = "eps" if self.query == "epsilon" else "delta"
        s = (
            f"composition {self.composition}, {at_name}={at}: reported {what} = {_show(self.reported)}, "
            f"certified optimum in {self.optimum}"
        )
        if not self.sound:
            if self.relative_shortfall is None:
                s += " -> UNSOUND (the optimum is +inf: no finite eps is private here)" \
                    if self.optimum.is_infinite else " -> UNSOUND"
            else:
                rel = float(self.relative_shortfall)  # float ok: display only
                s += f" -> UNSOUND, {rel:.3g} relative below the optimum" + (
                    " (floating-point level)" if self.fp_level else "")
        return s


@dataclass
class Oracle:
    """The exact oracle: optimal eps / delta enclosures and the exact privacy decision.

    ``digits`` is the certified precision of the enclosures.  The three functions default to
    :func:`exactdp.optimal_epsilon`, :func:`exactdp.optimal_delta`, :func:`exactdp.is_private`
    (looked up at call time) and may be replaced, e.g. to test a candidate oracle.
    """

    digits: int = 20
    epsilon_fn: Callable[..., Enclosure] | None = None
    delta_fn: Callable[..., Enclosure] | None = None
    decide_fn: Callable[..., bool] | None = None

    def epsilon(self, composition: Any, delta_g: Any, *, digits: int | None = None) -> Enclosure:
        """The optimal eps of ``composition`` at total ``delta_g`` (KOV15 Thm 3.3 / MV Thm 1.5)."""
        comp = as_composition(composition)
        dg = parse_delta(delta_g, "delta_g")
        if self.epsilon_fn is not None:
            return self.epsilon_fn(comp, dg, digits=digits or self.digits)
        from ..optimal import optimal_epsilon

        return optimal_epsilon(comp, dg, digits=digits or self.digits)

    def delta(self, composition: Any, eps_g: Any, *, digits: int | None = None) -> Enclosure:
        """The optimal total delta of ``composition`` at ``eps_g`` (KOV15 Thm 3.3 / MV Thm 1.5)."""
        comp = as_composition(composition)
        eg = parse_eps(eps_g, "eps_g")
        if self.delta_fn is not None:
            return self.delta_fn(comp, eg, digits=digits or self.digits)
        from ..optimal import optimal_delta

        return optimal_delta(comp, eg, digits=digits or self.digits)

    def is_private(self, composition: Any, eps_g: Any, delta_g: Any) -> bool:
        """Exactly whether ``composition`` is (eps_g, delta_g)-DP (docs/contracts.md §1.5)."""
        comp = as_composition(composition)
        eg = parse_eps(eps_g, "eps_g")
        dg = parse_delta(delta_g, "delta_g")
        if self.decide_fn is not None:
            return self.decide_fn(comp, eg, dg)
        from ..optimal import is_private

        return is_private(comp, eg, dg)

    # -- one-sided verdicts -----------------------------------------------------------------
    def judge_epsilon(self, reported: Any, composition: Any, delta_g: Any) -> Verdict:
        return judge_epsilon(reported, composition, delta_g, oracle=self)

    def judge_delta(self, reported: Any, composition: Any, eps_g: Any) -> Verdict:
        return judge_delta(reported, composition, eps_g, oracle=self)


def _relative(opt_end: Fraction | float, reported: Fraction) -> Fraction | None:
    if isinstance(opt_end, float) or opt_end <= 0:
        return None
    return (opt_end - reported) / opt_end


def judge_epsilon(reported: Any, composition: Any, delta_g: Any, *, oracle: Oracle | None = None) -> Verdict:
    """Whether a reported eps at total ``delta_g`` is >= the optimum, decided exactly.

    The optimum is OptComp(delta_g) (KOV15 Thm 3.3 / MV Thm 1.5).  A claim that lands inside
    the certified enclosure is settled by the exact decision: eps is sound iff the composition
    is (eps, delta_g)-DP, since privacy is monotone in eps_g and the optimum is attained.
    """
    oracle = oracle or Oracle()
    comp = as_composition(composition)
    dg = parse_delta(delta_g, "delta_g")
    rep = exact_of_reported(reported)
    opt = oracle.epsilon(comp, dg)
    if isinstance(rep, float):  # +inf claims nothing
        return Verdict("epsilon", comp, dg, rep, opt, True)
    if opt.is_infinite:
        return Verdict("epsilon", comp, dg, rep, opt, False, None)
    if rep >= opt.upper:
        return Verdict("epsilon", comp, dg, rep, opt, True)
    if rep < opt.lower or rep < 0:
        return Verdict("epsilon", comp, dg, rep, opt, False, _relative(opt.lower, rep))
    ok = oracle.is_private(comp, rep, dg)
    return Verdict("epsilon", comp, dg, rep, opt, ok, None if ok else _relative(opt.upper, rep))


def judge_delta(reported: Any, composition: Any, eps_g: Any, *, oracle: Oracle | None = None) -> Verdict:
    """Whether a reported total delta at ``eps_g`` is >= the optimal delta, decided exactly.

    The optimum is delta_opt(eps_g) = 1 - prod(1-delta_i)(1 - delta_pure(eps_g)) (MV Thm 1.5);
    a claim inside the enclosure is settled by ``is_private(comp, eps_g, claim)``.
    """
    oracle = oracle or Oracle()
    comp = as_composition(composition)
    eg = parse_eps(eps_g, "eps_g")
    rep = exact_of_reported(reported)
    opt = oracle.delta(comp, eg)
    if isinstance(rep, float) or rep >= 1 or rep >= opt.upper:
        return Verdict("delta", comp, eg, rep, opt, True)
    if rep < opt.lower or rep < 0:
        return Verdict("delta", comp, eg, rep, opt, False, _relative(opt.lower, rep))
    ok = oracle.is_private(comp, eg, rep)
    return Verdict("delta", comp, eg, rep, opt, ok, None if ok else _relative(opt.upper, rep))
