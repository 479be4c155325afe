"""Trade-off curves (f-DP) and the Gaussian-DP mu, read from the engine's composed laws (docs/tradeoff.md).

beta(alpha) is the type II error at type I error alpha of the optimal test between the two
neighbouring output laws, for the tightest trade-off function f the composition satisfies (the
symmetric one: both orders of the neighbouring pair, docs/tradeoff.md §2).  It is bracketed from the
same builds a delta query makes (:mod:`exactdp.engines.pld.build`), refined by the same loop
(:func:`exactdp.engines.pld.refine.refine`):

- **from below** (docs/tradeoff.md §3): f = sup over eps >= 0 of
  ``max(0, 1 - delta(eps) - e^eps alpha, e^-eps (1 - delta(eps) - alpha))`` and every dominating
  (upper) law bounds delta from above, so every grid eps gives a certified lower bound of beta;
- **from above** (§4): every cut of a dominated (binned or lattice) law is a test of the true pair
  with errors at most (a, b), so f(a) <= b, and f(b) <= a by symmetry; f is convex, so it lies
  below the lower convex hull of such points.

The GDP mu (§5): each of those points also gives mu >= Phi^-1(1 - a) - Phi^-1(b); an upper bound
would need the whole tail of the law, which a truncated law never has, so it is +inf here (the
closed forms of :mod:`exactdp.engines.gaussian` answer the Gaussian compositions exactly, and
:mod:`exactdp.engines.gdp` gives the upper end, or the exact mu, from each step's Gaussian shift).  Floats
only choose which cuts and grid points are evaluated; every value returned comes from balls.
"""

from __future__ import annotations

import bisect
import itertools
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from flint import arb, ctx

from exactdp.core import progress
from exactdp.core.enclosure import Enclosure
from exactdp.core.errors import InvalidParameterError, TimeBudgetError
from exactdp.core.numbers import DEFAULT_DIGITS, INF, arb_of_fraction, fraction_of_arb_endpoints
from exactdp.engines.pld.build import Built, build_cached
from exactdp.engines.pld.laws import Law
from exactdp.engines.pld.plan import grid_for, on_lattice, op_count, plan, plan_lattice_points, prec_for
from exactdp.engines.pld.refine import LATTICE_POINTS, refine
from exactdp.model.composition import Composition

__all__ = ["ALGORITHM", "Point", "beta_bracket", "hull_at", "mu_bracket", "phi_inverse", "phi_inverse_of",
           "pld_tradeoff"]

ALGORITHM = "pld-tradeoff"

#: a point (a, b) of the plane, exact
Point = tuple[Fraction, Fraction]


def phi_inverse(p: arb) -> arb:
    """The standard normal quantile Phi^-1(p) = -sqrt(2) erfcinv(2p) of a ball inside (0, 1).

    >>> from flint import ctx
    >>> with ctx.workprec(80):
    ...     phi_inverse(arb("0.975")).str(12, radius=False)
    '1.95996398454'
    """
    return -(arb(2).sqrt()) * (2 * p).erfcinv()


def phi_inverse_of(q: Fraction) -> arb:
    """Phi^-1(q) of an exact q in (0, 1), keeping the relative accuracy of a q within 2^-prec of 0 or
    of 1 (the tail is taken from the exact 1 - q there: Phi^-1(q) = -Phi^-1(1 - q)).

    >>> from flint import ctx
    >>> with ctx.workprec(64):
    ...     (phi_inverse_of(1 - Fraction(1, 10**60)) + phi_inverse_of(Fraction(1, 10**60))).contains(0)
    True
    """
    return -phi_inverse(arb_of_fraction(1 - q)) if q > Fraction(1, 2) else phi_inverse(arb_of_fraction(q))


@dataclass(frozen=True)
class _Sums:
    """The suffix sums of one law: ``sp[i] = p_inf + sum_{k >= i} P_k`` and ``sq[i] = sum_{k >= i} Q_k``
    (Q untilted) for i = 0..n, coefficient k sitting at grid index ``offset + stride k``; ``fa``, ``fb``:
    float midpoints of ``1 - sp`` and ``sq`` (they only locate)."""

    h: Fraction
    offset: int
    stride: int
    sp: list[arb]
    sq: list[arb]
    fa: list[float] = field(repr=False)  # float ok: locating only
    fb: list[float] = field(repr=False)  # float ok: locating only

    @property
    def n(self) -> int:
        return len(self.sp) - 1

    def grid(self, i: int) -> int:
        """The grid index of coefficient i."""
        return self.offset + self.stride * i

    def above(self, g: int) -> int:
        """The first coefficient index whose grid index is > g (clamped to 0..n)."""
        return min(max((g - self.offset) // self.stride + 1, 0), self.n)


def _sums(law: Law, *, lower: bool) -> _Sums:
    """The suffix sums of a law (docs/tradeoff.md §3-§4).

    An upper law (a dominating grid pair) and an exact lattice law have Q_k = P_k e^{-jh}; a binned
    lower law stores its Q tilted (``Qt_k = Q_k e^{jh + qshift}``).  For a lattice law used from below
    (``lower``), its P is a sub-measure of the true law whose missing mass ``moved`` may sit anywhere:
    at a cut i it adds at most ``moved e^{-g_i h}`` to the true Q above the cut, which is added to
    ``sq[i]`` so that every ``(1 - sp[i], sq[i])`` is a certified test point (§4).
    """
    P = law.P.coeffs()
    Qc = law.Q.coeffs() if law.Q is not None else None
    n = max(len(P), len(Qc) if Qc is not None else 0)
    P = P + [arb(0)] * (n - len(P))
    hb = arb_of_fraction(law.h)
    step = (hb * law.stride).exp()
    top = law.offset + law.stride * (n - 1)
    w = (-(hb * top) - (arb_of_fraction(law.qshift) if Qc is not None else 0)).exp()
    if Qc is not None:
        Qc = Qc + [arb(0)] * (n - len(Qc))
    sp = [arb(0)] * (n + 1)
    sq = [arb(0)] * (n + 1)
    a, b = law.p_inf, arb(0)
    sp[n] = a
    for i in range(n - 1, -1, -1):
        a = a + P[i]
        b = b + (Qc[i] if Qc is not None else P[i]) * w
        sp[i], sq[i] = a, b
        w = w * step
    if lower and Qc is None and not law.moved.is_zero():
        # the missing mass of a lattice sub-measure, at most e^{-g h} per unit above grid index g
        m = arb(law.moved.upper())
        w = (-(hb * top)).exp()
        for i in range(n - 1, -1, -1):
            sq[i] = sq[i] + m * w
            w = w * step
        sq[n] = sq[n] + m * (-(hb * (top + law.stride))).exp()
    fa = [1.0 - float(x.mid()) for x in sp]  # float ok: locating only
    fb = [float(x.mid()) for x in sq]  # float ok: locating only
    return _Sums(law.h, law.offset, law.stride, sp, sq, fa, fb)


def _first_index_above(xs: list[float], x: float) -> int:  # float ok: locating only
    """The first i with xs[i] > x, xs non-decreasing."""
    return bisect.bisect_right(xs, x)


def _beta_lower(ups: Sequence[_Sums], alpha: Fraction) -> Fraction:
    """A certified lower bound of beta(alpha) from the dominating laws (docs/tradeoff.md §3).

    For every eps >= 0, beta >= max(1 - d - e^eps alpha, e^-eps (1 - d - alpha)) with d any upper
    bound of delta(eps), the larger over the orders.  On a grid law the supremum over eps sits at a
    grid point where the P-mass above eps crosses 1 - alpha (second branch) or the Q-mass above it
    crosses alpha (first branch): those grid points, their neighbours and eps = 0 are evaluated.
    """
    af = float(alpha)  # float ok: locating only
    cands = {0}
    for s in ups:
        i2 = _first_index_above(s.fa, af) - 1  # the P-mass above crosses 1 - alpha here
        i1 = _bisect_down(s.fb, af) - 1  # the Q-mass above crosses alpha here
        for i in (i2, i1):
            for j in (i - 1, i, i + 1):
                if 0 <= j <= s.n:
                    cands.add(max(s.grid(j), 0))
    a = arb_of_fraction(alpha)
    best = Fraction(0)
    for g in sorted(cands):
        eps = arb_of_fraction(g * ups[0].h)
        ee = eps.exp()
        d_up: arb | None = None
        for s in ups:
            i0 = s.above(g)
            d = s.sp[i0] - ee * s.sq[i0]
            u = arb(d.upper())
            if d_up is None or u > d_up:
                d_up = u
        assert d_up is not None
        v = (1 - d_up - ee * a).max((1 - a - d_up) / ee)
        best = max(best, fraction_of_arb_endpoints(v)[0])
    return best


def _bisect_down(xs: list[float], x: float) -> int:  # float ok: locating only
    """The first i with xs[i] < x, xs non-increasing (a binary search)."""
    lo, hi = 0, len(xs)
    while lo < hi:
        mid = (lo + hi) // 2
        if xs[mid] < x:
            hi = mid
        else:
            lo = mid + 1
    return lo


def _point(s: _Sums, i: int) -> Point:
    """The certified test point (upper end of 1 - sp[i], upper end of sq[i]) of a lower law (§4)."""
    a = fraction_of_arb_endpoints(1 - s.sp[i])[1]
    b = fraction_of_arb_endpoints(s.sq[i])[1]
    return min(max(a, Fraction(0)), Fraction(1)), min(max(b, Fraction(0)), Fraction(1))


def _bridge(s: _Sums) -> int:
    """The cut whose point is nearest the anti-diagonal a + b = min (the test at loss 0)."""
    best, arg = math.inf, 0
    for i, (x, y) in enumerate(zip(s.fa, s.fb)):
        if x + y < best:
            best, arg = x + y, i
    return arg


def hull_at(points: Sequence[Point], x: Fraction) -> Fraction:
    """The value at x of the lower convex hull of exact points (x within their range): a certified
    upper bound of a convex trade-off function that lies on or below every point (docs/tradeoff.md §4).

    >>> hull_at([(Fraction(0), Fraction(1)), (Fraction(1, 2), Fraction(1, 4)), (Fraction(1), Fraction(0))], Fraction(1, 4))
    Fraction(5, 8)
    """
    return _hull_at(_lower_hull(list(points)), x)


def _lower_hull(points: list[Point]) -> list[Point]:
    """The lower convex hull of exact points, sorted by x (monotone chain)."""
    pts = sorted(set(points))
    hull: list[Point] = []
    for p in pts:
        while len(hull) >= 2:
            (x1, y1), (x2, y2) = hull[-2], hull[-1]
            if (x2 - x1) * (p[1] - y1) - (y2 - y1) * (p[0] - x1) <= 0:
                hull.pop()
            else:
                break
        hull.append(p)
    return hull


def _hull_at(hull: list[Point], x: Fraction) -> Fraction:
    """The lower hull's value at x (inside its range), by exact interpolation."""
    for (x1, y1), (x2, y2) in itertools.pairwise(hull):
        if x1 <= x <= x2:
            return y1 if x2 == x1 else y1 + (y2 - y1) * (x - x1) / (x2 - x1)
    raise AssertionError("x outside the hull")


def _beta_upper(lows: Sequence[_Sums], bridges: Sequence[int], alpha: Fraction) -> Fraction:
    """A certified upper bound of beta(alpha) from the dominated laws (docs/tradeoff.md §4): the lower
    convex hull, at alpha, of the test points near alpha, their reflections and (0, 1), (1, 0)."""
    af = float(alpha)  # float ok: locating only
    pts: list[Point] = [(Fraction(0), Fraction(1)), (Fraction(1), Fraction(0))]
    for s, k in zip(lows, bridges):
        direct = _first_index_above(s.fa, af) - 1   # a_i <= alpha < a_{i+1}
        refl = _bisect_down(s.fb, af) - 1           # b_{i+1} < alpha <= b_i
        idx: set[int] = set()
        for i in (direct, refl, k):
            idx.update(j for j in range(i - 2, i + 3) if 0 <= j <= s.n)
        for j in idx:
            a, b = _point(s, j)
            pts += [(a, b), (b, a)]
    return min(_hull_at(_lower_hull(pts), alpha), 1 - alpha)


def _mu_lower(lows: Sequence[_Sums]) -> Fraction:
    """A certified lower bound of the GDP mu: max over test points (a, b) of Phi^-1(1 - a) - Phi^-1(b)
    (docs/tradeoff.md §5); a float scan picks the best few points, evaluated in balls."""
    nd = statistics.NormalDist()
    best = Fraction(0)
    for s in lows:
        scored: list[tuple[float, int]] = []  # float ok: choosing points only
        for i, (x, y) in enumerate(zip(s.fa, s.fb)):
            if 1e-300 < x < 1 - 1e-16 and 1e-300 < y < 1 - 1e-16:
                scored.append((nd.inv_cdf(1 - x) - nd.inv_cdf(y), i))
        scored.sort(reverse=True)
        for _, i in scored[:4]:
            a, b = _point(s, i)
            if not (0 < a < 1 and 0 < b < 1):
                continue
            v = phi_inverse_of(1 - a) - phi_inverse_of(b)
            if v.is_finite():
                lo = fraction_of_arb_endpoints(v)[0]
                best = max(best, lo)
    return best


def beta_bracket(b: Built, alphas: Sequence[Fraction]) -> list[tuple[Fraction, Fraction]]:
    """From one build: a certified [lower, upper] of beta at each alpha (docs/tradeoff.md §3-§4)."""
    with ctx.workprec(b.prec):
        ups = [_sums(u, lower=False) for u, _ in b.laws]
        lows = [_sums(low, lower=True) for _, low in b.laws]
        bridges = [_bridge(s) for s in lows]
        out = []
        for i, a in enumerate(alphas):
            if i % 16 == 0:
                progress.tick(f"trade-off point {i + 1}/{len(alphas)}")
            out.append((_beta_lower(ups, a), _beta_upper(lows, bridges, a)))
    return out


def mu_bracket(b: Built) -> tuple[Fraction, bool]:
    """From one build: a certified lower bound of the GDP mu, and whether the true +inf mass is
    certainly positive (then mu = +inf exactly, docs/tradeoff.md §5)."""
    with ctx.workprec(b.prec):
        mu = _mu_lower([_sums(low, lower=True) for _, low in b.laws])
        inf_mass = any(low.p_inf.lower() > 0 for _, low in b.laws)
    return mu, inf_mass


@dataclass
class _State:
    """The best certified brackets so far (successive grids are intersected: each is certified)."""

    alphas: list[Fraction]
    lo: list[Fraction]
    hi: list[Fraction]
    exact: bool = False
    mu: Fraction = Fraction(0)
    inf_mass: bool = False

    def update(self, b: Built) -> None:
        for i, (lo, hi) in enumerate(beta_bracket(b, self.alphas)):
            self.lo[i], self.hi[i] = max(self.lo[i], lo), min(self.hi[i], hi)
            if self.lo[i] > self.hi[i]:
                raise AssertionError(f"empty trade-off bracket at alpha={self.alphas[i]}: a bug, please report it")
        self.exact = self.exact or b.exact
        # every build's mu is a certified lower end: the best is kept (the tails that decide it are
        # not always best seen on the finest grid, whose truncation is set for beta's digits)
        mu, inf_mass = mu_bracket(b)
        self.mu, self.inf_mass = max(self.mu, mu), self.inf_mass or inf_mass

    def width(self, floor: Fraction) -> float:  # float ok: grid planning only
        """The largest relative width over the points whose upper end is above ``floor`` (1 where a
        lower end is still 0)."""
        w = 0.0
        for lo, hi in zip(self.lo, self.hi):
            if hi <= floor or hi == lo:
                continue
            w = max(w, 1.0 if lo <= 0 else float((hi - lo) / lo))  # float ok: planning only
        return w

    def scale(self) -> Fraction:
        """The size of the smallest beta asked (sets the precision and the truncation)."""
        pos = [lo for lo in self.lo if lo > 0]
        s = min(pos) if pos else min(self.hi) / 1000
        return max(s, Fraction(1, 10**300))


def _digits(lo: Fraction, hi: Fraction, wanted: int) -> int:
    if lo == hi:
        return wanted
    if lo <= 0:
        return 1
    w, d = (hi - lo) / lo, 0
    while d < wanted and w * 10 ** (d + 1) <= 1:
        d += 1
    return max(d, 1)


def pld_tradeoff(comp: Composition, alphas: Sequence[Fraction], *, digits: int = DEFAULT_DIGITS,
                 max_seconds: float | None = None) -> tuple[list[Enclosure], Enclosure]:
    """Certified beta(alpha) at every alpha in (0, 1), and the GDP mu, of any composition (docs/tradeoff.md).

    One build answers every point; the grid is refined until every point is certified to ``digits``
    (relative width, points at the truncation's level aside) or the budget ends, and each enclosure
    says the digits it certifies.  mu is ``[lower, +inf]``, or +inf exactly when the true +inf mass
    is certainly positive (then f(0) < 1 and no G_mu lies below f).
    """
    if not isinstance(comp, Composition):
        raise InvalidParameterError("comp must be a Composition")
    alist = [Fraction(a) for a in alphas]
    if not alist or not all(0 < a < 1 for a in alist):
        raise InvalidParameterError("alphas must be a non-empty list of numbers in (0, 1)")
    pl = plan(comp)
    if len(pl.orders) > 2:  # the symmetry of docs/tradeoff.md §2: one self-reversed order, or a pair and its reverse
        raise InvalidParameterError(f"the trade-off curve takes one or two orders of the neighbouring pair, not "
                                    f"{len(pl.orders)}")
    st = _State(alist, [Fraction(0)] * len(alist), [1 - a for a in alist])
    floor = [Fraction(0)]
    n_ops = op_count(pl)

    def bracket(b: Built) -> tuple[Fraction, Fraction]:
        st.update(b)
        floor[0] = 1000 * b.tau * n_ops  # a point at the truncation's own level: no grid helps
        return Fraction(1), 1 + Fraction(st.width(floor[0])).limit_denominator(10**12)

    def done(_lo: Fraction | float, _hi: Fraction | float) -> bool:
        return st.width(floor[0]) <= 10.0 ** (-digits) * 0.99

    # a coarse pass measures the smallest beta, which sets the precision and truncation (as refine's own)
    lattice = pl.lattice is not None and plan_lattice_points(pl) <= LATTICE_POINTS
    h0 = pl.lattice if lattice and pl.lattice is not None else on_lattice(pl, grid_for(pl, 256.0))
    tau0 = Fraction(1, 10**40)
    bracket(build_cached(pl, h0, tau0, prec_for(4, tau0), None if lattice else Fraction(0)))
    if not done(0, 0):
        try:
            refine(comp, digits, max_seconds, st.scale(), bracket, done, lambda _: Fraction(0), predict=True)
        except TimeBudgetError:
            pass  # the brackets certified so far are the answer (their digits say how far they got)
    alg = ALGORITHM + ("-lattice" if st.exact else "")
    points = [Enclosure.exact_value(lo, digits, alg) if lo == hi else Enclosure(lo, hi, _digits(lo, hi, digits),
                                                                                   algorithm=alg)
              for lo, hi in zip(st.lo, st.hi)]
    mu = Enclosure.infinite(digits, alg) if st.inf_mass else Enclosure(st.mu, INF, digits, algorithm=alg)
    return points, mu
