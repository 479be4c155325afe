"""The certified trade-off curve (f-DP) of a composition and its Gaussian-DP mu (docs/tradeoff.md).

beta(alpha) is the type II error at type I error alpha of the optimal test between the outputs on
two neighbouring datasets, for the tightest trade-off function f the composition satisfies (both
orders of the pair, docs/tradeoff.md §1-§2); ``gdp_mu`` is the smallest mu with f >= G_mu, +inf
when there is none.  A composition of Gaussian mechanisms is answered by the closed form
(mu^2 adds, beta = Phi(Phi^-1(1 - alpha) - mu), docs/tradeoff.md §6), k equal generic (eps, delta)
mechanisms by the exact KOV15 vertices (:mod:`exactdp.api.region`, §6); any other by the certified
PLD engine (:mod:`exactdp.engines.pld.tradeoff`), whose mu bracket ``[lower, +inf]`` (+inf exactly when
the +inf mass is certainly positive) is completed by each step's Gaussian shift
(:mod:`exactdp.engines.gdp`, §5): exact for Gaussian-shift compositions (DP-SGD: sqrt(k)/sigma), a
certified finite upper end with pure-DP or fixed-batch steps.

>>> t = tradeoff("gaussian:sigma=1,count=4", ["0.05"], digits=8)
>>> str(t.gdp_mu), str(t.betas[0])
('2', '[0.361239968, 0.361239969]')
>>> [str(x) for x in true_positive_rates("gaussian:sigma=1,count=4", ["0.05"], digits=8)]
['[0.638760031, 0.638760032]']
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from flint import arb, ctx

from exactdp.api.region import Vertex, privacy_region
from exactdp.core import progress
from exactdp.core.enclosure import Enclosure
from exactdp.core.errors import InvalidParameterError, PrecisionError
from exactdp.core.numbers import (
    DEFAULT_DIGITS,
    CountInput,
    ExactInput,
    arb_of_fraction,
    format_fraction,
    fraction_of_arb_endpoints,
    parse_digits,
    parse_rational,
)
from exactdp.engines.gaussian import gaussian_mu, gaussian_mu2, gaussian_tradeoff
from exactdp.engines.gdp import gdp_mu, shifts
from exactdp.engines.pld.tradeoff import Point, hull_at, phi_inverse_of, pld_tradeoff
from exactdp.model.composition import Composition, CompositionInput
from exactdp.model.mechanisms import MixtureOfGaussians, PoissonSampled

__all__ = ["MAX_ALPHAS", "Tradeoff", "parse_alpha", "tradeoff", "true_positive_rates"]

#: the most alpha values one curve takes
MAX_ALPHAS = 10_000


def parse_alpha(x: ExactInput, name: str = "alpha") -> Fraction:
    """A type I error: an exact number strictly between 0 and 1.

    >>> parse_alpha("1e-3")
    Fraction(1, 1000)
    >>> parse_alpha("1")
    Traceback (most recent call last):
    ...
    exactdp.core.errors.InvalidParameterError: alpha='1' must be in (0, 1) (a type I error; beta is 1 - alpha at 0 and 0 at 1 for every mechanism)
    """
    a = parse_rational(x, name)
    if not 0 < a < 1:
        raise InvalidParameterError(f"{name}={x!r} must be in (0, 1) (a type I error; beta is 1 - alpha at 0 "
                                    "and 0 at 1 for every mechanism)")
    return a


@dataclass(frozen=True)
class Tradeoff:
    """A certified trade-off curve: ``betas[i]`` encloses beta(``alphas[i]``); ``gdp_mu`` the smallest
    mu for which the composition is mu-GDP (its upper end +inf when none is certified)."""

    alphas: tuple[Fraction, ...]
    betas: tuple[Enclosure, ...]
    gdp_mu: Enclosure

    def __post_init__(self) -> None:
        if not isinstance(self.alphas, tuple) or not isinstance(self.betas, tuple):
            raise InvalidParameterError("alphas and betas must be tuples (of Fractions in (0, 1), of Enclosures)")
        if len(self.alphas) != len(self.betas) or not self.alphas:
            raise InvalidParameterError("a Tradeoff needs one beta per alpha, at least one")
        if not all(isinstance(a, Fraction) and 0 < a < 1 for a in self.alphas):
            raise InvalidParameterError("alphas must be Fractions in (0, 1)")
        if not all(isinstance(b, Enclosure) for b in (*self.betas, self.gdp_mu)):
            raise InvalidParameterError("betas and gdp_mu must be Enclosures")

    def to_json(self, digits: CountInput | None = None) -> dict[str, Any]:
        """``{"query": "tradeoff", "points": [{"alpha", "lower", "upper", ...}], "gdp_mu": {...}}``."""
        points = []
        for a, b in zip(self.alphas, self.betas):
            j = b.to_json(digits)
            points.append({"alpha": format_fraction(a), **{k: j[k] for k in _KEYS if k in j}})
        m = self.gdp_mu.to_json(digits)
        return {"query": "tradeoff", "points": points, "gdp_mu": {k: m[k] for k in _KEYS if k in m}}


_KEYS = ("lower", "upper", "exact", "float_lower", "float_upper", "digits", "digits_requested", "algorithm")


def tradeoff(composition: CompositionInput, alphas: Sequence[ExactInput], *, digits: CountInput = DEFAULT_DIGITS,
             max_seconds: ExactInput | float | None = None) -> Tradeoff:
    """The certified trade-off curve beta(alpha) at each alpha in (0, 1), and the GDP mu (docs/tradeoff.md).

    ``max_seconds`` bounds the whole curve as ``--max-seconds`` does: the PLD engine returns the
    brackets it certified by then (each says its digits).
    """
    comp = Composition.of(composition)
    d = parse_digits(digits)
    one_way = [m for m, _ in comp.groups if isinstance(m, (PoissonSampled, MixtureOfGaussians)) and m.direction != "max"
               or getattr(m, "direction", "max") != "max"]  # also the two-order classes of exactdp.model.truncation, .special
    if one_way:
        # the curve is of the mechanism, both orders of the pair (docs/tradeoff.md §2); one order alone is not
        # closed under reversal, and the symmetric formula (*) would read the other order's profile from it
        raise InvalidParameterError(f"mechanism {one_way[0]}: the trade-off curve takes both orders of the "
                                    "neighbouring pair (direction=max); one direction alone is not computed")
    if isinstance(alphas, (str, bytes)) or not isinstance(alphas, Sequence):
        raise InvalidParameterError(f"alphas={alphas!r} must be a list of numbers in (0, 1)")
    al = [parse_alpha(a) for a in alphas]
    if not al:
        raise InvalidParameterError("alphas=[] must name at least one alpha in (0, 1)")
    if len(al) > MAX_ALPHAS:
        raise InvalidParameterError(f"{len(al)} alphas: at most {MAX_ALPHAS}")
    budget = progress.parse_seconds(max_seconds)
    with progress.budgeted("tradeoff", budget):
        mu2 = gaussian_mu2(comp)
        if mu2 is not None and mu2 > 0:
            betas = [gaussian_tradeoff(mu2, a, digits=d) for a in al]
            return Tradeoff(tuple(al), tuple(betas), gaussian_mu(mu2, digits=d))
        if mu2 == 0:  # no information: beta = 1 - alpha, mu = 0
            return Tradeoff(tuple(al), tuple(Enclosure.exact_value(1 - a, d, "gaussian-closed-form") for a in al),
                            Enclosure.exact_value(Fraction(0), d, "gaussian-closed-form"))
        if comp.is_homogeneous and comp.k <= REGION_TRADEOFF_K:
            try:
                return _region_tradeoff(comp, al, d)
            except PrecisionError:
                pass  # the region could not be certified at its precision cap: the PLD engine answers
        betas, mu = pld_tradeoff(comp, al, digits=d, max_seconds=budget)
        if not mu.is_infinite:  # +inf exactly stays (a certainly positive +inf mass, docs/tradeoff.md §5)
            assert isinstance(mu.lower, Fraction)
            mu = gdp_mu(shifts(comp), mu.lower, d, mu.algorithm)
        return Tradeoff(tuple(al), tuple(betas), mu)


_ALG_REGION = "kov15-region"
#: the largest k answered from the KOV15 vertices (larger ones by the PLD lattice, whose mu is [lower, inf])
REGION_TRADEOFF_K = 2000
#: the most digits the KOV15 vertices are computed to (vertices nearer 1 leave mu's bracket wider)
REGION_MAX_DIGITS = 400


def _ball(e: Enclosure) -> arb:
    lo, hi = e.lower, e.upper
    assert isinstance(lo, Fraction) and isinstance(hi, Fraction)  # a vertex is finite
    return arb_of_fraction(lo) if lo == hi else arb_of_fraction(lo).union(arb_of_fraction(hi))


def _region_tradeoff(comp: Composition, al: list[Fraction], d: int) -> Tradeoff:
    """k equal generic (eps, delta) mechanisms: the trade-off curve is the piecewise-linear curve through
    the exact KOV15 vertices (:func:`exactdp.api.region.privacy_region`, docs/tradeoff.md §6).

    Between two vertices beta is their chord: exact when the vertices are.  From enclosed vertices,
    the line of any segment (through the true vertices) lies below the convex curve, evaluated in
    balls, and the hull of the vertices' upper corners lies above it (docs/tradeoff.md §4).  The GDP
    mu is a maximum over the interior vertices (§5): +inf exactly when delta > 0 (f(0) = (1-delta)^k < 1).
    """
    verts = privacy_region(comp, digits=d + 4)
    # a vertex coordinate near 1 is certified relative to 1: mu needs its distance to 1 to d digits too
    gaps = [1 - _end(e, "upper") for v in verts for e in v if 0 < _end(e, "lower") and _end(e, "upper") < 1]
    if gaps and min(gaps) > 0:
        g = min(gaps)  # about 10^-(bits * log10(2)) from below
        need = d + 6 + max(0, (g.denominator.bit_length() - g.numerator.bit_length() + 1) * 30103 // 100000 + 1)
        if d + 4 < need <= REGION_MAX_DIGITS:
            verts = privacy_region(comp, digits=need)
    xs = [_end(v[0], "lower") for v in verts]
    betas = [_region_beta(verts, bisect.bisect_right(xs, a), a, d) for a in al]
    _, delta, _ = comp.homogeneous_params()
    mu = Enclosure.infinite(d, _ALG_REGION) if delta > 0 else _region_mu(verts, d)
    return Tradeoff(tuple(al), tuple(betas), mu)


def _end(e: Enclosure, which: str) -> Fraction:
    x = e.lower if which == "lower" else e.upper
    assert isinstance(x, Fraction)  # a vertex is finite
    return x


def _region_beta(verts: list[Vertex], i: int, a: Fraction, d: int) -> Enclosure:
    """beta(a) from the vertices around index i (the first whose P_FA lower end is above a)."""
    j0, j1 = max(i - 3, 0), min(i + 2, len(verts) - 1)
    near = verts[j0:j1 + 1]
    if all(x.exact is not None and y.exact is not None for x, y in near):
        pts = [(_end(x, "lower"), _end(y, "lower")) for x, y in near]
        for (x1, y1), (x2, y2) in itertools.pairwise(pts):
            if x1 <= a <= x2 and x1 < x2:
                return Enclosure.exact_value(y1 + (y2 - y1) * (a - x1) / (x2 - x1), d, _ALG_REGION)
    lo = Fraction(0)
    with ctx.workprec(int((d + 8) * 3.33) + 64):
        ab = arb_of_fraction(a)
        for (xa, ya), (xb, yb) in itertools.pairwise(near):
            u1, v1, u2, v2 = _ball(xa), _ball(ya), _ball(xb), _ball(yb)
            du = u2 - u1
            if du > 0:  # the segment's line, below the convex curve everywhere
                lo = max(lo, fraction_of_arb_endpoints(v1 + (v2 - v1) * (ab - u1) / du)[0])
    corners: list[Point] = [(Fraction(0), Fraction(1)), (Fraction(1), Fraction(0))]
    corners += [(min(_end(x, "upper"), Fraction(1)), min(_end(y, "upper"), Fraction(1))) for x, y in near]
    hi = min(hull_at(corners, a), 1 - a)
    return Enclosure(lo, hi, d, algorithm=_ALG_REGION) if lo < hi else Enclosure.exact_value(hi, d, _ALG_REGION)


def _region_mu(verts: list[Vertex], d: int) -> Enclosure:
    """max over the interior vertices (a, b) of Phi^-1(1 - a) - Phi^-1(b),
    certified: mu decreases in a and in b, so the vertices' upper corners give its lower end and the
    lower corners its upper end (ends near 0 or 1 keep their relative accuracy: ``phi_inverse_of``)."""
    inner = [(_end(a, "lower"), _end(a, "upper"), _end(b, "lower"), _end(b, "upper")) for a, b in verts
             if 0 < _end(a, "lower") and _end(a, "upper") < 1 and 0 < _end(b, "lower") and _end(b, "upper") < 1]
    if not inner:
        return Enclosure.exact_value(Fraction(0), d, _ALG_REGION)

    def mu_at(x: Fraction, y: Fraction) -> arb:
        return phi_inverse_of(1 - x) - phi_inverse_of(y)

    with ctx.workprec(64):  # a coarse pass picks the candidates for the lower end
        rough = sorted(range(len(inner)), key=lambda i: -mu_at(inner[i][0], inner[i][2]).mid())[:3]
    with ctx.workprec(int((d + 8) * 3.33) + 64):
        los = [fraction_of_arb_endpoints(mu_at(inner[i][1], inner[i][3]))[0] for i in rough]
        his = [fraction_of_arb_endpoints(mu_at(alo, blo))[1] for alo, _, blo, _ in inner]
    lo, hi = max(max(los), Fraction(0)), max(his)
    return Enclosure(lo, hi, d, algorithm=_ALG_REGION) if lo < hi else Enclosure.exact_value(lo, d, _ALG_REGION)


def true_positive_rates(composition: CompositionInput, fprs: Sequence[ExactInput], *,
                        digits: CountInput = DEFAULT_DIGITS, max_seconds: ExactInput | float | None = None,
                        ) -> list[Enclosure]:
    """The largest true positive rate 1 - beta(alpha) of a test at each false positive rate alpha
    (dp_accounting's ``get_true_positive_rates``), certified: the enclosures of :func:`tradeoff`
    reflected."""
    t = tradeoff(composition, fprs, digits=digits, max_seconds=max_seconds)
    out: list[Enclosure] = []
    for b in t.betas:
        lo, hi = 1 - b.upper, 1 - b.lower
        assert isinstance(lo, Fraction) and isinstance(hi, Fraction)  # beta is finite
        out.append(Enclosure.exact_value(lo, b.digits, b.algorithm) if lo == hi
                   else Enclosure(lo, hi, b.digits, algorithm=b.algorithm))
    return out
