"""Exact lattice laws in fixed point: integer sub-measures composed by ``fmpz_poly`` products.

On a lattice (docs/pld.md §7) every loss is a grid point, so the composed law is exact and only
its masses have to be computed.  Ball arithmetic (:mod:`exactdp.pld.discrete`) carries a radius
with every coefficient; here a mass is an integer ``N`` standing for ``N 2^-bits``, and every such
integer is *at most* the true mass of its grid point (docs/pld.md §7.1):

* a law enters by flooring the lower ends of its mass balls (``floor(x) <= x``);
* a product is the integer product polynomial floor-divided by ``2^bits``: products and sums of
  nonnegative lower bounds are lower bounds, and a floor only lowers;
* after every product the tails of total mass at most ``cut`` units are dropped at both ends.

The result is therefore a *sub-measure* of the exact composed law, coefficient by coefficient,
and its exact integer total tells how much mass is missing.  delta of a sub-measure is a lower
bound of the true delta (every grid point adds ``P_j (1 - e^{eps - jh})_+``, non-decreasing in
``P_j``), and the missing mass adds at most 1 per unit, so putting it at +inf gives an upper bound.
:func:`to_law` hands the result back as an exact :class:`~exactdp.pld.discrete.Law` whose ``moved``
is the missing mass; the queries of :mod:`exactdp.pld.discrete` then apply unchanged.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from flint import arb, arb_poly, ctx, fmpz, fmpz_poly

from .. import progress
from .discrete import Law, binary_power, remember_mids

__all__ = ["FixedLaw", "from_law", "compose", "power", "product", "to_law", "bits_for"]


@dataclass(frozen=True)
class FixedLaw:
    """Integer masses on a lattice: coefficient i of ``N`` is the mass at grid index
    ``offset + stride * i`` in units of ``2^-bits``, never above the true mass; ``p_inf`` is a ball
    containing the true mass at +inf."""

    h: Fraction
    offset: int
    N: fmpz_poly
    bits: int
    p_inf: arb
    stride: int = 1

    @property
    def span(self) -> int:
        """The number of grid points the law covers."""
        n = self.N.length()
        return self.stride * (n - 1) + 1 if n else 0

    def total(self) -> int:
        """The exact total of the integer masses (units of ``2^-bits``)."""
        return int(self.N(1)) if self.N.length() else 0


def bits_for(budget: Fraction, points: int, stages: int) -> int:
    """Fraction bits such that flooring at most ``points`` coefficients in each of ``stages``
    products loses at most ``budget`` of mass (each floor loses less than one unit)."""
    need = Fraction(max(points, 1) * max(stages, 1)) / budget
    return max(32, math.ceil(math.log2(need)) + 1)  # float ok: the log of an integer size picks a bit count only


def from_law(law: Law, bits: int) -> FixedLaw:
    """The floors of an exact law's masses (lower ends of its balls) at ``bits`` fraction bits."""
    if not law.exact:
        raise ValueError("only an exact lattice law has a fixed-point form")
    out = []
    with ctx.workprec(bits + 16):  # the lower ends below are rounded down to this precision
        for c in law.P.coeffs():
            lo = c.lower()  # a point at or below the ball (rounded down), so at or below the mass
            if not lo.is_finite() or not lo > 0:
                out.append(0)
                continue
            man, exp = (int(x) for x in lo.man_exp())  # lo = man 2^exp exactly
            e = exp + bits
            out.append(man << e if e >= 0 else man >> -e)  # floor(lo 2^bits), in integers
    N, first = _strip_low(fmpz_poly(out))
    return FixedLaw(law.h, law.offset + law.stride * first, N, bits, law.p_inf, law.stride)


def _strip_low(N: fmpz_poly) -> tuple[fmpz_poly, int]:
    """N without its leading run of zero coefficients, and the run's length."""
    n = N.length()
    if n == 0 or N[0] != 0:
        return N, 0
    lo = 1  # invariant: the first lo coefficients are zero; find the largest such lo
    while 2 * lo < n and N.truncate(2 * lo).is_zero():
        lo *= 2
    hi = min(2 * lo, n)
    while hi - lo > 1:
        m = (lo + hi) // 2
        if N.truncate(m).is_zero():
            lo = m
        else:
            hi = m
    return N.right_shift(lo), lo


def _cut(N: fmpz_poly, cut: int) -> tuple[fmpz_poly, int]:
    """Drop the longest low and high tails of total at most ``cut`` each; (kept, first index kept).

    Nonnegative coefficients make both prefix and suffix sums monotone, so an exponential probe and
    a bisection find each tail; a dropped coefficient only makes the law a smaller sub-measure.
    """
    n = N.length()
    if n <= 2 or cut <= 0:
        return N, 0

    def low_ok(m: int) -> bool:  # the first m coefficients sum to at most cut
        return int(N.truncate(m)(1)) <= cut

    def high_ok(m: int) -> bool:  # the last m coefficients sum to at most cut
        return int(N.right_shift(n - m)(1)) <= cut

    def longest(ok: object) -> int:
        f = ok  # type: ignore[assignment]
        if not f(1):  # type: ignore[operator]
            return 0
        lo = 1
        while 2 * lo < n - 1 and f(2 * lo):  # type: ignore[operator]
            lo *= 2
        hi = min(2 * lo, n - 1)
        if f(hi):  # type: ignore[operator]
            return hi
        while hi - lo > 1:
            m = (lo + hi) // 2
            if f(m):  # type: ignore[operator]
                lo = m
            else:
                hi = m
        return lo

    a = longest(low_ok)
    b = longest(high_ok)
    if a + b >= n:  # keep at least one coefficient
        b = max(0, n - a - 1)
    if a == 0 and b == 0:
        return N, 0
    return N.truncate(n - b).right_shift(a), a


def compose(a: FixedLaw, b: FixedLaw, cut: int = 0) -> FixedLaw:
    """The composition (product of pairs): integer product, floor-divided by 2^bits, tails cut."""
    if a.bits != b.bits or a.h != b.h:
        raise ValueError("compose fixed laws of the same grid and bits")
    g = math.gcd(a.stride, b.stride)
    A = a.N.inflate(a.stride // g) if a.stride != g else a.N
    B = b.N.inflate(b.stride // g) if b.stride != g else b.N
    C = (A * B) // (fmpz(1) << a.bits)  # floor of every coefficient
    C, first = _strip_low(C)
    C, more = _cut(C, cut)
    p_inf = a.p_inf + b.p_inf - a.p_inf * b.p_inf  # non-decreasing in both (docs/pld.md §4)
    return FixedLaw(a.h, a.offset + b.offset + g * (first + more), C, a.bits, p_inf, g)


def power(law: FixedLaw, n: int, cut: int = 0) -> FixedLaw:
    """The n-fold composition of ``law`` with itself (binary powering)."""
    return binary_power(law, n, lambda a, b: compose(a, b, cut), lambda l: l.N.length())


def product(laws: list[FixedLaw], cut: int = 0) -> FixedLaw:
    """The composition of several laws, the two smallest first (a balanced product)."""
    items = sorted(laws, key=lambda l: l.span)
    while len(items) > 1:
        progress.tick(f"composing {len(items)} laws (fixed point)")
        a, b = items[0], items[1]
        items = sorted(items[2:] + [compose(a, b, cut)], key=lambda l: l.span)
    return items[0]


def to_law(f: FixedLaw) -> Law:
    """The exact lower law of the sub-measure: masses ``N 2^-bits`` (exact balls), the true +inf
    mass, and ``moved`` = the missing mass ``1 - p_inf - total``, which an upper bound puts at +inf."""
    N = f.N.inflate(f.stride) if f.stride > 1 else f.N
    total = f.total()
    with ctx.workprec(f.bits + 16):  # every integer has at most bits + 1 bits: the balls are exact
        P = arb_poly(N) * (arb(2) ** (-f.bits))
        missing = 1 - f.p_inf - arb(total) * arb(2) ** (-f.bits)
    lo = missing.lower()
    if lo < 0:  # the exact missing mass is >= 0
        missing = arb(0).union(missing.upper())
    unit = 2.0 ** (-f.bits)  # float ok: midpoints only choose where the queries look
    remember_mids(P, [float(c) * unit for c in N.coeffs()])  # float ok: as above
    return Law(f.h, f.offset, P, None, f.p_inf, upper=False, exact=True, moved=missing)
