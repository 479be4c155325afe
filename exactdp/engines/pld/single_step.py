"""One mechanism run once: delta and eps read off its privacy-loss profile itself (docs/pld.md §8).

No grid and no composition: delta(eps) of one pair is p_inf plus the sum over its atoms and its
continuous part above eps, evaluated in balls and certified to the requested digits; eps at a
delta_g is the root of that decreasing profile, the larger over the orders of the pair.
"""

from __future__ import annotations

from fractions import Fraction

from flint import arb, ctx

from exactdp.core.enclosure import Enclosure, certify
from exactdp.core.errors import PrecisionError
from exactdp.core.numbers import ExactReal, arb_of_fraction, fraction_of_arb_endpoints
from exactdp.core.roots import decreasing_root, sign_at
from exactdp.engines.pld import extremes
from exactdp.engines.pld.models import LossModel, Position
from exactdp.engines.pld.orders import model_of
from exactdp.model.composition import Composition

__all__ = ["single_delta", "single_epsilon", "single_step_models"]


def single_step_models(comp: Composition) -> list[LossModel] | None:
    """The loss models (one per order) when the composition is one mechanism run once."""
    if len(comp.groups) != 1 or comp.groups[0][1] != 1:
        return None
    o = model_of(comp.groups[0][0])
    return [o.remove] + ([o.add] if o.add is not None else [])


def _profile_at(model: LossModel, x: ExactReal) -> arb:
    """delta(x) of one pair, in Arb at the working precision:
    p_inf + sum over atoms above x of (p - e^x q) + P_c(L > x) - e^x Q_c(L > x)."""
    ex = x.exp_arb()
    v = model.p_inf()
    for pos, pm, qm in model.atoms():
        if pos.cmp_real(x) > 0:
            v += pm - ex * qm
    if model.has_continuous():
        _, ps, _, qs = model.cdf(x.arb())
        v += ps - ex * qs
    return v


def single_delta(models: list[LossModel], eps_g: ExactReal, digits: int) -> Enclosure:
    """delta at eps_g of one step, certified to ``digits``: the larger of the orders' profiles there."""
    def compute() -> arb:
        vals = [_profile_at(m, eps_g) for m in models]
        out = vals[0]
        for v in vals[1:]:
            out = out.max(v)
        return out

    if all(_profile_at_is_zero(m, eps_g) for m in models):
        return Enclosure.exact_value(Fraction(0), digits, "pld-single-step")
    return certify(compute, digits, algorithm="pld-single-step").clamped(Fraction(0), Fraction(1))


def _profile_at_is_zero(model: LossModel, x: ExactReal) -> bool:
    """Whether delta(x) = 0 exactly: no +inf mass, no atom above x, no continuous mass above x."""
    with ctx.workprec(64):
        if not model.p_inf().is_zero():
            return False
        if any(pos.cmp_real(x) > 0 for pos, _, _ in model.atoms()):
            return False
        if model.has_continuous():
            _, ps, _, _ = model.cdf(x.arb())
            return ps.is_zero()
    return True


def single_epsilon(models: list[LossModel], delta_g: Fraction, digits: int) -> Enclosure:
    """The least eps with delta(eps) <= delta_g for one step: the larger of the orders' roots."""
    encs = [_single_epsilon_one(m, delta_g, digits) for m in models]
    if any(e.is_infinite for e in encs):
        return Enclosure.infinite(digits, "pld-single-step")
    lo = max(e.lower for e in encs)  # type: ignore[type-var]
    hi = max(e.upper for e in encs)  # type: ignore[type-var]
    best = max(encs, key=lambda e: e.upper)  # type: ignore[arg-type, return-value]
    if lo == hi and best.exact is not None:
        return best
    return Enclosure(lo, hi, digits, algorithm="pld-single-step")


def _single_epsilon_one(model: LossModel, delta_g: Fraction, digits: int) -> Enclosure:
    """The least eps with delta(eps) <= delta_g for one pair: the root of its decreasing profile."""
    alg = "pld-single-step"
    p_inf = model.p_inf_exact()
    if p_inf > delta_g:  # delta(eps) >= p_inf > delta_g for every eps
        return Enclosure.infinite(digits, alg)

    def f(e: arb) -> arb:  # at a rational point e is exact, so the atoms are compared exactly
        x = ExactReal.rational(fraction_of_arb_endpoints(e)[0])
        return _profile_at(model, x) - arb_of_fraction(delta_g)

    if sign_at(f, Fraction(0)) <= 0:
        return Enclosure.exact_value(Fraction(0), digits, alg)
    if p_inf == delta_g:
        # delta(eps) = p_inf + E_P[(1 - e^(eps - L))_+] over the finite losses reaches p_inf exactly
        # from the essential supremum of the finite losses on (docs/pld.md §11): below it P[L > eps] > 0
        sup = extremes.finite_sup(model)
        if sup is not None:
            return sup.enclosure(digits)
        if model.has_continuous():
            raise PrecisionError("the largest finite loss of this mechanism is not known exactly, and eps "
                                 "at delta_g = its +inf mass is that loss")
        # atoms alone reach it at the largest atom, which is then the answer
        with ctx.workprec(64):
            tops = [pos for pos, pm, qm in model.atoms()]
        top = tops[0]
        for pos in tops[1:]:
            if pos.cmp_real(_real_of(top)) > 0 if top.linlog is not None else _bigger(pos, top):
                top = pos
        return certify(top.arb, digits, algorithm=alg)
    hi = Fraction(1)
    while sign_at(f, hi) > 0:
        hi *= 2
        if hi > 2**20:
            raise PrecisionError("the eps of this mechanism is beyond 2^20")
    return decreasing_root(f, Fraction(0), hi, digits, algorithm=alg)


def _real_of(pos: Position) -> ExactReal:
    """The exact real of an atom position R or log Q."""
    ll = pos.linlog
    assert ll is not None
    if ll.Q == 1:
        return ExactReal.rational(ll.R)
    if ll.R == 0:
        return ExactReal.log(ll.Q)
    raise PrecisionError("an atom position R + log Q with both parts nonzero")


def _bigger(a: Position, b: Position) -> bool:
    """Whether a > b, decided by refining up to 2^14 bits (False when still tied there)."""
    prec = 64
    while prec <= 1 << 14:
        with ctx.workprec(prec):
            d = a.arb() - b.arb()
        if d > 0:
            return True
        if d < 0:
            return False
        prec *= 2
    return False

