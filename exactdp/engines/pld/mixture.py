"""The privacy loss of a mixture of Gaussians against one Gaussian, inverted rigorously in Arb.

For P = sum_i p_i N(s_i, S^2) against Q = N(0, S^2) (dp_accounting's mixture of Gaussians,
docs/mathematics.md §7.12) the privacy loss at an output x is

    L(x) = log sum_i p_i exp(a_i x - b_i),    a_i = s_i / S^2,  b_i = s_i^2 / (2 S^2),

strictly increasing when some s_i > 0.  With p_0 the weight of a sensitivity 0 (0 when there is
none), L(x) = e  <=>  G(x) = 0 for

    G(x) = log sum_{s_i > 0} p_i exp(a_i x - b_i) - log(e^e - p_0),

a log-sum-exp of lines of positive slopes: convex, with a_min <= G' <= a_max.  So the root x* of
G is found by a float Newton iteration started above it (a guess only), refined in Arb, and
*certified* by the mean value theorem: x* = x - G(x) / G'(xi) with G'(xi) in [a_min, a_max], one
ball evaluation of G.  For e <= log p_0 there is no root: every output has a loss above e.  The
four tails at an edge e are then Q(L <= e) = Phi(x*/S), P(L <= e) = sum_i p_i Phi((x* - s_i)/S)
and their complements, each small side computed directly from erfc (docs/pld.md §1).

>>> from flint import ctx
>>> mix = MixtureLoss(Fraction(1), (Fraction(0), Fraction(1)), (Fraction(1, 2), Fraction(1, 2)))
>>> with ctx.workprec(80):
...     x = mix.root(arb(0))
>>> x is not None and x.overlaps(arb("0.5"))   # p e^{x - 1/2} = 1 - p at p = 1/2: x = 1/2
True
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import TypeVar

from flint import arb, arb_series, ctx

from exactdp.core.errors import PrecisionError
from exactdp.core.numbers import arb_of_fraction

__all__ = ["MixtureLoss", "normal_series_sides", "normal_sides"]

T = TypeVar("T")

Quad = tuple[arb, arb, arb, arb]


def _memo(memo: dict[int, T], make: Callable[[], T]) -> T:
    v = memo.get(ctx.prec)
    if v is None:
        v = memo[ctx.prec] = make()
    return v


class MixtureLoss:
    """The loss L(x) of ``sum_i probs[i] N(sens[i], sigma^2)`` against ``N(0, sigma^2)`` (module
    docstring): its root at a loss value and the four tails there."""

    def __init__(self, sigma: Fraction, sens: tuple[Fraction, ...], probs: tuple[Fraction, ...]) -> None:
        if not sens or max(sens) <= 0 or sigma <= 0 or min(sens) < 0:
            raise ValueError("a mixture needs sigma > 0, sensitivities >= 0 and one > 0")
        self.sigma, self.sens, self.probs = sigma, sens, probs
        self.p0 = sum((p for s, p in zip(sens, probs) if s == 0), Fraction(0))
        self.pos = [(s, p) for s, p in zip(sens, probs) if s > 0]
        s2 = sigma * sigma
        self.slopes = [s / s2 for s, _ in self.pos]
        self.amin, self.amax = min(self.slopes), max(self.slopes)
        # the lines log p_i + a_i x - b_i, as floats, for the Newton guess only (None: out of the float
        # range, the guess is then made in Arb at 64 bits)
        try:
            self._fl: list[tuple[float, float, float]] | None = [  # float ok: a guess
                (math.log(p.numerator) - math.log(p.denominator), float(s / s2), float(s * s / (2 * s2)))  # float ok
                for s, p in self.pos]
            if not all(math.isfinite(v) and v != 0 for line in self._fl for v in line[1:]):  # float ok: a guess
                self._fl = None
        except (OverflowError, ValueError, ZeroDivisionError):
            self._fl = None
        self._balls: dict[int, tuple] = {}
        self._last: list[tuple[float, float]] = []  # float ok: the last two (log R, root): a guess starts there

    def _consts(self) -> tuple:
        def make() -> tuple:
            s2 = arb_of_fraction(self.sigma) ** 2
            lines = [(arb_of_fraction(p).log(), arb_of_fraction(s) / s2, arb_of_fraction(s) ** 2 / (2 * s2))
                     for s, p in self.pos]
            inv = (1 / arb_of_fraction(self.amax)).union(1 / arb_of_fraction(self.amin))  # 1/G' lies here
            sig = arb_of_fraction(self.sigma)
            comps = [(arb_of_fraction(s), arb_of_fraction(p)) for s, p in zip(self.sens, self.probs)]
            return lines, inv, sig, arb(2).sqrt(), arb_of_fraction(self.p0), comps

        return _memo(self._balls, make)

    # -- the root ---------------------------------------------------------------------------
    def _guess_arb(self, logr: arb) -> arb:
        """The guess of :meth:`_guess` in Arb at 64 bits (its exponents never overflow)."""
        with ctx.workprec(64):
            lines = self._consts()[0]
            x = min(((logr - lp + b) / a).mid() for lp, a, b in lines)
            for _ in range(200):
                ts = [(lp + a * x - b).exp() for lp, a, b in lines]
                tot = sum(ts[1:], ts[0])
                step = ((tot.log() - logr) * tot / sum((t * a for t, (_, a, _) in zip(ts, lines)), arb(0))).mid()
                x = (x - step).mid()
                if not abs(step) > abs(x) * arb(2) ** -60 + arb(2) ** -1000:
                    break
            return x

    def _guess(self, logr: float) -> float:  # float ok: a Newton guess, certified afterwards
        """A float root of G (a guess): Newton on the convex increasing G, started at the root of the
        nearest of the last two edges (the edges of each order come in order); from any start its
        iterates are above the root after one step and then decrease to it."""
        fl = self._fl
        assert fl is not None  # the caller checked
        near = min(self._last, key=lambda r: abs(r[0] - logr), default=None)  # the two orders ask in turn
        x = near[1] if near is not None else math.nan
        if not math.isfinite(x):  # float ok: a guess
            x = min((logr - lp + b) / a for lp, a, b in fl)  # G >= 0 there (one line alone reaches log R)
        for _ in range(200):
            m = max(lp + a * x - b for lp, a, b in fl)
            ws = [math.exp(lp + a * x - b - m) for lp, a, b in fl]  # float ok: a guess
            tot = sum(ws)
            g = m + math.log(tot) - logr  # float ok: a guess
            d = sum(w * a for w, (_, a, _) in zip(ws, fl)) / tot
            step = g / d
            x -= step
            if abs(step) <= 1e-15 * max(1.0, abs(x)):
                break
        self._last = [r for r in self._last if abs(r[0] - logr) > 1e-300][-1:] + [(logr, x)]
        return x

    def _g(self, x: arb, logr: arb) -> tuple[arb, arb]:
        """(G(x), G'(x)) in Arb at the working precision."""
        lines = self._consts()[0]
        ts = [(lp + a * x - b).exp() for lp, a, b in lines]
        tot = sum(ts[1:], ts[0])
        return tot.log() - logr, sum((t * a for t, (_, a, _) in zip(ts[1:], lines[1:])), ts[0] * lines[0][1]) / tot

    def root(self, e: arb) -> arb | None:
        """The ball of x* with L(x*) = e, or None when e <= log p_0 (every loss lies above e)."""
        p0 = self._consts()[4]
        if self.p0:
            r = e.exp() - p0
            if not r > 0:
                if r < 0 or r.is_zero():
                    return None
                raise PrecisionError("a grid edge of a mixture's loss is too close to log p_0")
            logr = r.log()
        else:
            logr = e
        with ctx.workprec(53):
            lf = float(logr.mid())  # float ok: a guess
        x = None
        if self._fl is not None and math.isfinite(lf):
            try:
                g0 = self._guess(lf)
                x = arb(g0) if math.isfinite(g0) else None  # float ok: a guess
            except (OverflowError, ValueError, ZeroDivisionError):
                x = None
        if x is None:
            x = self._guess_arb(logr)
        bits = 45  # the float guess holds about this many bits; each Newton step in Arb doubles them
        while bits < ctx.prec + 8:
            g, d = self._g(x, logr)
            x = arb(x.mid() - (g / d).mid())
            bits *= 2
        g, _ = self._g(x, logr)
        inv = self._consts()[1]
        return x - g * inv  # the mean value theorem: x* = x - G(x)/G'(xi), 1/G'(xi) in [1/a_max, 1/a_min]

    # -- the tails --------------------------------------------------------------------------
    def cdf_series(self, e: arb_series) -> tuple[arb_series, ...] | None:
        """The four tails of :meth:`cdf` as power series in the variable of the loss series ``e``
        (to the context's ``cap``), for the Taylor blocks of the FFT path (docs/pld.md §12.8); None
        when a loss of ``e``'s constant ball is at or near log p_0 (no root there, or too close).

        With ``e0`` the constant ball, X the ball of every root ``x*(e)``, ``e`` in ``e0`` (:meth:`root`
        is interval arithmetic, so it encloses them all), the series of ``L(X + y)`` in y has
        coefficients that enclose ``L_i(x*(e))`` for every such e; its reversion (constant term set to
        0, linear term ``L' > 0``) then encloses the coefficients of the inverse ``x*(e + t) - x*(e)``,
        and ``X + Rev(e - e0)`` those of the root as a function of the series' variable.  The tails are
        Phi of it (``Phi((x* - s_i)/S)`` weighted for P, ``Phi(x*/S)`` for Q), each pair's small side by
        one erfc series chosen by the constant term (either formula is the same function).

        >>> from flint import ctx
        >>> mix = MixtureLoss(Fraction(2), (Fraction(0), Fraction(1), Fraction(2)), (Fraction(1, 2), Fraction(1, 4), Fraction(1, 4)))
        >>> with ctx.workprec(80):
        ...     old, ctx.cap = ctx.cap, 4
        ...     ser = mix.cdf_series(arb_series([arb(1), arb(1)]))
        ...     ctx.cap = old
        ...     quad = mix.cdf(arb(1))
        >>> all(s.coeffs()[0].overlaps(v) for s, v in zip(ser, quad))
        True
        """
        cs = e.coeffs()
        try:
            x0 = self.root(cs[0])
        except PrecisionError:  # the ball reaches log p_0: no series there
            return None
        if x0 is None or not x0.is_finite():
            return None
        lines, _, sig, r2, p0, comps = self._consts()
        y = arb_series([x0, arb(1)])
        tot = sum(((lp + a * y - b).exp() for lp, a, b in lines[1:]), (lines[0][0] + lines[0][1] * y - lines[0][2]).exp())
        if self.p0:
            tot = tot + p0
        lc = tot.log().coeffs()
        if len(lc) < 2 or not lc[1] > 0:
            return None
        rev = arb_series([arb(0)] + lc[1:]).reversion()
        x = rev(arb_series([arb(0)] + cs[1:])) + x0
        qf, qs = normal_series_sides(x / sig, r2)
        pf = ps = arb_series([arb(0)])
        for sa, pa in comps:
            f, g = normal_series_sides((x - sa) / sig, r2)
            pf, ps = pf + pa * f, ps + pa * g
        return pf, ps, qf, qs

    def cdf(self, e: arb) -> Quad:
        """(P(L <= e), P(L > e), Q(L <= e), Q(L > e)), each small side directly."""
        x = self.root(e)
        if x is None:
            z = arb(0)
            return z, arb(1), z, arb(1)
        _, _, sig, r2, _, comps = self._consts()
        qf, qs = normal_sides(x / sig, r2)
        pf, ps = arb(0), arb(0)
        for sa, pa in comps:
            f, g = normal_sides((x - sa) / sig, r2)
            pf += pa * f
            ps += pa * g
        return pf, ps, qf, qs


def normal_series_sides(z: arb_series, r2: arb) -> tuple[arb_series, arb_series]:
    """:func:`normal_sides` of a power series z: the small side by one erfc series, chosen by the constant
    term (either formula is the same function, so any choice holds)."""
    if z.coeffs()[0] < 0:
        small = (-z / r2).erfc() / 2
        return small, 1 - small
    small = (z / r2).erfc() / 2
    return 1 - small, small


def normal_sides(z: arb, r2: arb) -> tuple[arb, arb]:
    """(Phi(z), 1 - Phi(z)): the small side by erfc, the large one as 1 minus it (at least 1/2)."""
    if z < 0:
        small = (-z / r2).erfc() / 2
        return small, 1 - small
    if z > 0:
        small = (z / r2).erfc() / 2
        return 1 - small, small
    return (-z / r2).erfc() / 2, (z / r2).erfc() / 2
