"""Wrong formulas from transcribed talk slides and posters and from public code, evaluated exactly as they are written.

Each ``claim_*`` function evaluates one published (mis)statement as a certified enclosure, so the
errata table can set it beside the certified optimum: an exact counterexample.  The formulas
are deliberately the wrong ones; the correct statements are in docs/mathematics.md §2-§4.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from itertools import product
from math import comb

from flint import arb

from exactdp.core.enclosure import Enclosure, certify
from exactdp.core.errors import InvalidParameterError, PrecisionError
from exactdp.core.numbers import ExactReal, arb_of_fraction, parse_delta, parse_eps
from exactdp.model.composition import Composition

__all__ = [
    "CLAIMS",
    "claim_dp_accounting_grid",
    "claim_poster_mv_condition",
    "claim_slides_advanced",
    "claim_slides_theorem_i",
]


def _rational_eps(comp: Composition) -> list[tuple[Fraction, Fraction, int]]:
    out = []
    for m, c in comp.groups:
        q = m.eps.rational_value()
        if q is None:
            raise InvalidParameterError(f"eps={m.eps} must be rational for this erratum")
        out.append((q, m.delta, c))
    return out


def claim_poster_mv_condition(comp: Composition, at: str, *, digits: int) -> Enclosure:
    """The total delta at eps_g by the MV condition as the Murtagh-Vadhan TCC 2016 poster writes it.

    Poster (Murtagh-Vadhan, TCC 2016): ``1/prod(1+e^{eps_i}) * sum_S max(e^{eps(S)} - e^{eps_g |S|}, 0)
    <= 1 - (1-delta_g)/prod(1-delta_i)``; solved for delta_g this is
    ``1 - prod(1-delta_i) (1 - D)`` with D the left side.  The correct subtracted term is
    ``e^{eps_g} e^{eps(S^c)}`` (Murtagh-Vadhan Thm 1.5, docs/mathematics.md §2).
    """
    eps_g = parse_eps(at, "eps_g").rational_value()
    if eps_g is None:
        raise InvalidParameterError("eps_g must be rational for this erratum")
    groups = _rational_eps(comp)
    keep = Fraction(1)
    for _, d, c in groups:
        keep *= (1 - d) ** c
    # Subsets grouped by how many members j_g of each group of equal mechanisms they take:
    # multiplicity prod C(c_g, j_g), eps(S) = sum j_g eps_g, |S| = sum j_g.  A term is positive
    # iff eps(S) > eps_g |S|, an exact rational comparison.
    terms: list[tuple[int, Fraction, int]] = []
    for js in product(*(range(c + 1) for _, _, c in groups)):
        es = sum((j * e for j, (e, _, _) in zip(js, groups)), Fraction(0))
        size = sum(js)
        if es > eps_g * size:
            mult = 1
            for j, (_, _, c) in zip(js, groups):
                mult *= comb(c, j)
            terms.append((mult, es, size))
    if not terms:
        return Enclosure.exact_value(1 - keep, digits, algorithm="poster formula")

    def compute() -> arb:
        s = arb(0)
        for mult, es, size in terms:
            s += mult * (arb_of_fraction(es).exp() - (arb_of_fraction(eps_g) * size).exp())
        den = arb(1)
        for e, _, c in groups:
            den *= (1 + arb_of_fraction(e).exp()) ** c
        return 1 - arb_of_fraction(keep) * (1 - s / den)

    return certify(compute, digits, algorithm="poster formula")


def _homogeneous_slack(comp: Composition, at: str) -> tuple[Fraction, int, Fraction] | None:
    eps, delta, k = comp.homogeneous_params()
    e = eps.rational_value()
    if e is None:
        raise InvalidParameterError(f"eps={eps} must be rational for this erratum")
    slack = parse_delta(at, "delta_g") - k * delta  # delta~ = delta_g - k delta
    if slack <= 0:
        return None
    return e, k, slack


def claim_slides_advanced(comp: Composition, at: str, *, digits: int) -> Enclosure:
    """eps at total delta_g by the KOV15 talk slide: ``(k eps^2 + eps sqrt(k log(1/delta~)), k delta + delta~)``.

    The published advanced composition (DRV10 Thm III.3) has ``sqrt(2 k log(1/delta~))`` and
    ``k eps (e^eps - 1)``; the slide drops the factor 2.
    """
    hs = _homogeneous_slack(comp, at)
    if hs is None:
        return Enclosure.infinite(digits, algorithm="slides formula")
    e, k, slack = hs
    return certify(lambda: k * arb_of_fraction(e) ** 2
                   + arb_of_fraction(e) * (k * (1 / arb_of_fraction(slack)).log()).sqrt(),
                   digits, algorithm="slides formula")


def claim_slides_theorem_i(comp: Composition, at: str, *, digits: int) -> Enclosure:
    """eps at total delta_g by "Composition Theorem I" as the KOV15 talk slides write it.

    Slides: ``min{k eps, k eps^2 + sqrt(k eps^2 log(e + 1/delta~))}`` at ``k delta + delta~``; KOV15 Thm 3.4
    has ``k eps tanh(eps/2) + eps sqrt(2k log(e + sqrt(k eps^2)/delta~))`` (docs/mathematics.md §4; docs/errata.md §3).
    """
    hs = _homogeneous_slack(comp, at)
    if hs is None:
        return Enclosure.infinite(digits, algorithm="slides theorem I")
    e, k, slack = hs

    def compute() -> arb:
        a = arb_of_fraction(e)
        second = k * a ** 2 + (k * a ** 2 * (arb(1).exp() + 1 / arb_of_fraction(slack)).log()).sqrt()
        return second

    second = certify(compute, digits + 4)
    basic = k * e
    # min{k eps, second}: decided from the enclosure, exact when the basic term wins.
    if basic <= second.lower:
        return Enclosure.exact_value(basic, digits, algorithm="slides theorem I")
    if second.upper < basic:
        return certify(compute, digits, algorithm="slides theorem I")
    raise PrecisionError("cannot decide min{k eps, ...} for this erratum at the precision used")


def claim_dp_accounting_grid(comp: Composition, at: str, *, digits: int) -> Enclosure:
    """eps at total delta_g restricted to the KOV15 grid ``(k-2i) eps``, as dp_accounting's
    ``advanced_composition`` answers: the least grid point whose optimal delta is <= delta_g.

    The optimum between grid points is smaller (MV Thm 1.4; docs/mathematics.md §3).
    """
    from exactdp.api.optimal import optimal_delta

    eps, _, k = comp.homogeneous_params()
    e = eps.rational_value()
    if e is None:
        raise InvalidParameterError(f"eps={eps} must be rational for this erratum")
    delta_g = parse_delta(at, "delta_g")
    best: Fraction | None = None
    for i in range(k // 2, -1, -1):  # from the smallest grid eps up
        point = (k - 2 * i) * e
        enc = optimal_delta(comp, ExactReal.rational(point), digits=digits)
        if enc.upper <= delta_g:
            best = point
            break
        if enc.lower <= delta_g:
            raise PrecisionError(f"grid point {point} is too close to delta_g={delta_g} to decide")
    if best is None:
        return Enclosure.infinite(digits, algorithm="grid only")
    return Enclosure.exact_value(best, digits, algorithm="grid only")


#: claim name (the ``method`` column of the errata table) -> (query, evaluator).
CLAIMS: dict[str, tuple[str, Callable[..., Enclosure]]] = {
    "poster-mv-condition": ("delta", claim_poster_mv_condition),
    "slides-advanced": ("epsilon", claim_slides_advanced),
    "slides-theorem-i": ("epsilon", claim_slides_theorem_i),
    "dp_accounting-advanced_composition": ("epsilon", claim_dp_accounting_grid),
}
