"""Exact lattice laws in fixed point: integer sub-measures composed by ``fmpz_poly`` products.

On a lattice (docs/pld.md §7) every loss is a grid point, so the composed law is exact and only
its masses have to be computed.  Ball arithmetic (:mod:`exactdp.engines.pld.laws`) carries a radius
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
:func:`to_law` hands the result back as an exact :class:`~exactdp.engines.pld.laws.Law` whose ``moved``
is the missing mass; the queries of :mod:`exactdp.engines.pld.queries` then apply unchanged.

Off the lattice (docs/pld.md §7.2) the two discretised laws are composed the same way:

* an **upper** (connect-the-dots) law is the P-law of a dominating grid pair whose masses sum to 1
  with its +inf mass; its floors are a sub-measure of that pair, so with *all* the missing mass
  ``1 - total`` at +inf (:func:`to_upper_law`) it still bounds delta from above;
* a **lower** (binned) law keeps its P-masses *floored* and its tilted Q-masses *ceiled*
  (``pair=True``): for every set S of kept outputs, ``P'(S) - e^eps Q'(S) <= P(S) - e^eps Q(S)``,
  and a dropped output is simply never in S (a restriction, not a change of mass).
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass
from fractions import Fraction

from flint import arb, arb_poly, ctx, fmpz, fmpz_poly

from exactdp.core import progress
from exactdp.engines.pld.laws import Law, binary_power
from exactdp.engines.pld.queries import remember_mids

__all__ = ["FixedLaw", "Floors", "Reach", "bits_for", "compose", "from_law", "power", "product", "q_bits", "tilt_centre", "to_law", "to_upper_law"]


@dataclass(frozen=True)
class FixedLaw:
    """Integer masses on a lattice: coefficient i of ``N`` is the mass at grid index
    ``offset + stride * i`` in units of ``2^-bits``, never above the true mass; ``p_inf`` is a ball
    containing the true mass at +inf.

    ``Q``: for a lower (binned) law off the lattice, the tilted Q-masses ``Q_j e^{jh}`` of the same
    outputs in the same units, each *at least* the true one (docs/pld.md §7.2); None for a grid pair
    (exact or connect-the-dots), whose Q-masses are ``P_j e^{-jh}``.
    """

    h: Fraction
    offset: int
    N: fmpz_poly
    bits: int
    p_inf: arb
    stride: int = 1
    Q: fmpz_poly | None = None
    #: a dominating grid pair (off the lattice): mass below a floor is moved *up* to it, not dropped
    upper: bool = False
    #: extra fraction bits of ``Q``: its unit is 2^-(bits + qbits).  Each binned factor tilts its
    #: Q-masses down by up to e^{-h}, so a product of n of them can sit near e^{-nh}; the extra bits
    #: keep those masses many units large (docs/pld.md §7.2)
    qbits: int = 0
    #: the tilt's centre: coefficient i of ``Q`` stands for ``Q_j e^{jh + qshift}``.  A binned factor
    #: whose Q_j e^{jh} sits near P_j e^{-s} is entered with qshift = s, so a product keeps its Q near
    #: its P and needs few extra bits (docs/pld.md §7.2); it changes no bound
    qshift: Fraction = Fraction(0)

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


def _floor_units(c: arb, bits: int) -> int:
    """floor(x 2^bits) for the lower end x of the ball c (0 when it is not positive); call at a
    working precision of at least bits + 16 (the lower end is then rounded down, so below c)."""
    if c.is_zero():
        return 0
    lo = c.lower()
    if not lo.is_finite() or not lo > 0:
        return 0
    man, exp = (int(x) for x in lo.man_exp())  # lo = man 2^exp exactly
    e = exp + bits
    return man << e if e >= 0 else man >> -e


def _ceil_units(c: arb, bits: int) -> int:
    """ceil(x 2^bits) for the upper end x of the ball c (0 when it is 0 or below)."""
    if c.is_zero():
        return 0
    hi = c.upper()
    if not hi.is_finite():
        raise ArithmeticError("a mass ball has no finite upper end")
    if not hi > 0:
        return 0
    man, exp = (int(x) for x in hi.man_exp())
    e = exp + bits
    return man << e if e >= 0 else -((-man) >> -e)


def from_law(law: Law, bits: int, *, pair: bool = False, qbits: int = 0,
             qshift: Fraction = Fraction(0)) -> FixedLaw:
    """The floors of a grid pair's P-masses (lower ends of its balls) at ``bits`` fraction bits.

    A grid pair is an exact law or an upper (connect-the-dots) law: its Q-masses are P e^{-jh}.
    ``pair=True`` (the lower side off the lattice, docs/pld.md §7.2) also keeps the *ceilings* of
    the tilted Q-masses: the law's own ``Q``, or ``P`` itself for an exact law (Q e^{jh} = P), at
    ``bits + qbits`` fraction bits, each multiplied by ``e^{qshift}`` first (a ball, ceiled at its
    upper end).
    """
    if law.Q is not None and not pair:
        raise ValueError("a binned law keeps its Q-masses: use pair=True")
    if pair and law.upper:
        raise ValueError("an upper law is a grid pair: its fixed-point form has no Q")
    with ctx.workprec(bits + qbits + 16):  # the ends below are rounded outwards at this precision
        N, first = _strip_low(fmpz_poly([_floor_units(c, bits) for c in law.P.coeffs()]))
        Q = None
        if pair:
            src = law.Q if law.Q is not None else law.P
            if qshift:
                src = src * _exp_fraction(qshift)
            Q = _window(fmpz_poly([_ceil_units(c, bits + qbits) for c in src.coeffs()]), first, N.length())
    return FixedLaw(law.h, law.offset + law.stride * first, N, bits, law.p_inf, law.stride, Q, law.upper,
                    qbits if pair else 0, qshift if pair else Fraction(0))


def q_bits(h: Fraction, n_binned: int, bits: int) -> int:  # float ok: a bit count only
    """Extra fraction bits for the tilted Q of a product of ``n_binned`` centred binned factors
    (docs/pld.md §7.2).  Each factor's log-ratio ln(P_j / Q_j e^{jh + s}) lies in an interval of
    width h around 0, so by Hoeffding's inequality the sum over n factors leaves
    ``t = h sqrt(n bits ln 2 / 2)`` only on P-mass below 2^-bits; Q is then at least about e^{-t}
    times P where it matters.  Never more than the uncentred need ``n h`` (in nats).  A choice of
    tightness only: Q is rounded up at any number of bits."""
    if n_binned <= 0:
        return 0
    hf = float(h)  # float ok: as above
    t = min(hf * n_binned, hf * math.sqrt(n_binned * bits * math.log(2) / 2))  # float ok: a bit count
    return math.ceil(1.4427 * t) + 8


def _exp_fraction(x: Fraction) -> arb:
    """e^x as a ball (x rational, so exactly representable as a ball quotient)."""
    return (arb(x.numerator) / x.denominator).exp()


def tilt_centre(law: Law) -> Fraction:  # float ok: chooses a tilt only, never a bound
    """The P-mean of ln(P_j / Q_j e^{jh}) over a binned law's outputs, as a short rational: the
    tilt that keeps its tilted Q near its P (0 for an exact law).  Only a choice (docs/pld.md §7.2)."""
    if law.Q is None:
        return Fraction(0)
    num = den = 0.0
    for p, q in zip(law.P.coeffs(), law.Q.coeffs()):
        pf, qf = float(p.mid()), float(q.mid())  # float ok: as above
        if pf > 0 and qf > 0:
            num += pf * math.log(pf / qf)  # float ok: chooses a tilt only
            den += pf
    if not den > 0 or not math.isfinite(num):
        return Fraction(0)
    return Fraction(round(num / den * 2**20), 2**20)


def _window(Q: fmpz_poly, first: int, length: int) -> fmpz_poly:
    """Coefficients first .. first + length - 1 of Q: the outputs a P-polynomial kept (outputs
    outside are dropped, a restriction of the pair)."""
    return (Q.right_shift(first) if first else Q).truncate(length)


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


def compose(a: FixedLaw, b: FixedLaw, cut: int = 0, low: int | None = None) -> FixedLaw:
    """The composition (product of pairs): integer product, floor-divided by 2^bits, tails cut.

    Tilted Q-masses (lower laws off the lattice) are multiplied alike and rounded *up* (floor + 1);
    the outputs dropped from P (zeros at the low end, cut tails) are dropped from Q too.

    ``low``: a grid index below which no query will look (docs/pld.md §7.3): the mass below it is
    moved up to it in an upper law, and dropped (with its Q-mass) in any other.
    """
    if a.bits != b.bits or a.h != b.h:
        raise ValueError("compose fixed laws of the same grid and bits")
    if (a.Q is None) != (b.Q is None) or a.upper != b.upper or a.qbits != b.qbits:
        raise ValueError("compose two laws of the same side (and Q units)")
    g = math.gcd(a.stride, b.stride)

    def spread(x: FixedLaw, p: fmpz_poly) -> fmpz_poly:
        return p.inflate(x.stride // g) if x.stride != g else p

    unit = fmpz(1) << a.bits
    C = (spread(a, a.N) * spread(b, b.N)) // unit  # floor of every coefficient
    C, first = _strip_low(C)
    C, more = _cut(C, cut)
    offset = a.offset + b.offset + g * (first + more)
    shift = first + more
    if low is not None and offset < low and C.length() > 1:
        k = min(-((offset - low) // g), C.length() - 1)  # coefficients wholly below the floor
        below = C.truncate(k)(1) if a.upper else 0
        C = C.right_shift(k)
        if a.upper:
            C[0] = C[0] + below  # moved up to the first grid point kept (a post-processing, §7.3)
        offset += g * k
        shift += k
    Q = None
    if a.Q is not None and b.Q is not None:
        # floor + 1 >= the ceiling, at every output kept (the products are >= 0; ``//`` floors only
        # nonnegative integers); the +1 covers outputs whose product floors to zero too
        X = spread(a, a.Q) * spread(b, b.Q) // (fmpz(1) << (a.bits + a.qbits))
        Q = _window(X, shift, C.length()) + fmpz_poly([1] * C.length())
    p_inf = a.p_inf + b.p_inf - a.p_inf * b.p_inf  # non-decreasing in both (docs/pld.md §4)
    return FixedLaw(a.h, offset, C, a.bits, p_inf, g, Q, a.upper, a.qbits, a.qshift + b.qshift)


@dataclass(frozen=True)
class Reach:
    """How high the loss of a set of factors reaches, in grid indices (it only chooses floors).

    ``top``: the sum of the factors' highest indices; ``mean``: the sum of their P-means;
    ``sq``: the sum of their squared index ranges.  By Hoeffding's inequality the P-probability
    that the sum exceeds ``mean + sqrt(sq ln(1/tau) / 2)`` is at most tau.
    """

    top: int
    mean: float  # float ok: a floor choice only
    sq: float  # float ok: a floor choice only

    def __add__(self, o: Reach) -> Reach:
        return Reach(self.top + o.top, self.mean + o.mean, self.sq + o.sq)

    def __sub__(self, o: Reach) -> Reach:
        return Reach(self.top - o.top, self.mean - o.mean, self.sq - o.sq)

    def times(self, n: int) -> Reach:
        return Reach(self.top * n, self.mean * n, self.sq * n)

    def bound(self, log_tau: float) -> int:  # float ok: a floor choice only
        """An index the sum of the factors exceeds with P-probability at most e^-log_tau."""
        hoeffding = self.mean + math.sqrt(max(self.sq, 0.0) * log_tau / 2) + 1  # float ok: §7.3 floor
        return min(self.top, math.ceil(hoeffding)) if math.isfinite(hoeffding) else self.top

    @staticmethod
    def of(f: FixedLaw) -> Reach:
        n = f.N.length()
        if n == 0:
            return Reach(f.offset, float(f.offset), 0.0)  # float ok: a floor choice only
        tot = int(f.N(1))
        mean = f.offset + f.stride * (int(f.N.derivative()(1)) / tot if tot else 0.0)  # float ok: as above
        return Reach(f.offset + f.stride * (n - 1), mean, float(f.stride * (n - 1)) ** 2)  # float ok: as above


class Floors:
    """The floor of each partial product when queries look only at losses >= ``index`` h.

    A partial product X composed with the rest R can only reach ``index`` where X + R >= index; R
    stays below ``total - reach(X)`` but for P-probability e^-log_tau, so everything of X below
    ``index - bound(total - X)`` may go (moved up or dropped, docs/pld.md §7.3).  The choice
    affects only the tightness, never the soundness.
    """

    def __init__(self, index: int, total: Reach, log_tau: float) -> None:  # float ok: as above
        self.index, self.total, self.log_tau = index, total, log_tau

    def low(self, part: Reach) -> int:
        return self.index - (self.total - part).bound(self.log_tau) - 1


def power(law: FixedLaw, n: int, cut: int = 0, floors: Floors | None = None) -> FixedLaw:
    """The n-fold composition of ``law`` with itself (binary powering), floored by ``floors``."""
    if floors is None:
        return binary_power(law, n, lambda a, b: compose(a, b, cut), lambda l: l.N.length())
    one = Reach.of(law)

    def mul(x: tuple[FixedLaw, int], y: tuple[FixedLaw, int]) -> tuple[FixedLaw, int]:
        m = x[1] + y[1]
        return compose(x[0], y[0], cut, floors.low(one.times(m))), m

    return binary_power((law, 1), n, mul, lambda t: t[0].N.length())[0]


def product(laws: list[FixedLaw], cut: int = 0, floors: Floors | None = None,
            reaches: list[Reach] | None = None) -> FixedLaw:
    """The composition of several laws, the two smallest first (a balanced product).

    ``floors`` with ``reaches`` (the reach of each law as composed, before any floor) drop or lift
    what no query will look at.
    """
    rs = reaches if reaches is not None else [Reach(0, 0.0, 0.0)] * len(laws)  # float ok: as above
    heap = [(l.span, i, l, r) for i, (l, r) in enumerate(zip(laws, rs))]
    heapq.heapify(heap)
    n = len(heap)
    while len(heap) > 1:
        progress.tick(f"composing {len(heap)} laws (fixed point)")
        _, _, a, ra = heapq.heappop(heap)
        _, _, b, rb = heapq.heappop(heap)
        r = ra + rb
        c = compose(a, b, cut, floors.low(r) if floors is not None else None)
        heapq.heappush(heap, (c.span, n, c, r))
        n += 1
    return heap[0][2]


def _mids(N: fmpz_poly, bits: int) -> list[float]:  # float ok: midpoints only choose cuts
    """The coefficients ``N 2^-bits`` as floats (correctly rounded even when the integers pass
    2^1024, as tilted Q-masses of many binned factors do; capped at 1e301)."""
    if N.length() == 0:
        return []
    if N.height_bits() < 1000 and bits < 1000:
        unit = 2.0 ** (-bits)  # float ok: as above
        return [float(c) * unit for c in N.coeffs()]  # float ok: as above
    d = 1 << bits
    big = d * (1 << 1000)  # beyond ~1e301 a midpoint is capped (it only ranks cuts)
    return [int(c) / d if c < big else 1e301 for c in N.coeffs()]  # float ok: exact int division, rounded once


def _exact_poly(N: fmpz_poly, bits: int) -> arb_poly:
    """N 2^-bits as exact balls (call at a working precision above the integers' bit size)."""
    return arb_poly(N) * (arb(2) ** (-bits))


def to_law(f: FixedLaw) -> Law:
    """The lower law of the sub-measure: masses ``N 2^-bits`` (exact balls), the true +inf
    mass, and ``moved`` = the missing mass ``1 - p_inf - total``, which an upper bound puts at +inf.

    With ``Q`` (a binned law off the lattice) the result is a lower law with those tilted Q-masses.
    """
    N = f.N.inflate(f.stride) if f.stride > 1 else f.N
    Qn = (f.Q.inflate(f.stride) if f.stride > 1 else f.Q) if f.Q is not None else None
    total = f.total()
    top = max([N.height_bits() if N.length() else 1]
              + ([Qn.height_bits()] if Qn is not None and Qn.length() else []))
    with ctx.workprec(max(f.bits + f.qbits, top) + 16):  # the integers fit: the balls are exact
        P = _exact_poly(N, f.bits)
        Q = _exact_poly(Qn, f.bits + f.qbits) if Qn is not None else None
        missing = 1 - f.p_inf - arb(total) * arb(2) ** (-f.bits)
    lo = missing.lower()
    if lo < 0:  # the exact missing mass is >= 0
        missing = arb(0).union(missing.upper())
    remember_mids(P, _mids(N, f.bits))
    if Q is None:
        return Law(f.h, f.offset, P, None, f.p_inf, upper=False, exact=True, moved=missing)
    assert Qn is not None
    remember_mids(Q, _mids(Qn, f.bits + f.qbits))
    return Law(f.h, f.offset, P, Q, f.p_inf, upper=False, exact=False, moved=missing, qshift=f.qshift)


def to_upper_law(f: FixedLaw) -> Law:
    """The upper law of a fixed-point sub-measure of a grid pair whose masses sum to 1 (with +inf):
    the masses ``N 2^-bits`` and *all* the rest, ``1 - total``, at +inf (docs/pld.md §7.2).

    If s_j <= p_j and p_inf + sum p_j = 1, then 1 - sum s_j = p_inf + sum (p_j - s_j): the mass
    taken from each grid point is put at +inf, where it adds 1 >= (1 - e^{eps - jh})_+ to delta.
    """
    if f.Q is not None:
        raise ValueError("a binned law has no upper form")
    N = f.N.inflate(f.stride) if f.stride > 1 else f.N
    total = f.total()
    with ctx.workprec(max(f.bits, N.height_bits() if N.length() else 1) + 16):
        P = _exact_poly(N, f.bits)
        p_inf = 1 - arb(total) * arb(2) ** (-f.bits)  # exact: a dyadic number of bits + 1 bits
    remember_mids(P, _mids(N, f.bits))
    return Law(f.h, f.offset, P, None, p_inf, upper=True, exact=False, moved=arb(0))
