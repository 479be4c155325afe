"""The replace-one pairs of a Poisson-subsampled Gaussian or Laplace mechanism with bounded records
(dp_accounting's reading; the Laplace pair is :class:`BoundedLaplacePair`, Theorem 9.9).

When every record's contribution lies within half the replace-one sensitivity ``D`` of the origin
(DP-SGD's clipped gradients, ``D = 2C``), dp_accounting's PLD accountant composes a
``PoissonSampledDpEvent(q, GaussianDpEvent(S))`` under ``REPLACE_ONE`` as the pair

    P = (1-q) N(0, S^2) + q N(-D/2, S^2),    Q = (1-q) N(0, S^2) + q N(D/2, S^2)

(docs/mathematics.md §9, Theorem 9.8: attained by one record pair, so a lower bound of the
replace-one profile under bounded records; its dominance over every bounded record pair is
dp_accounting's assumption).  In units of ``S`` (``z = x/S``, ``h = D/(2S) = mu/2``) and with
``u = e^{h z}``, ``r = 1 - q``, ``t = q e^{-h^2/2}``:

    L(z) = log((r + t/u) / (r + t u)),

strictly decreasing in ``z`` from +inf to -inf, with ``L(-z) = -L(z)`` (the pair is symmetric: its
Q-law is its P-law mirrored).  ``L = e`` is the quadratic ``E t u^2 + r (E - 1) u - t = 0``
(``E = e^e``), whose roots have product ``-1/E < 0``: one positive root,

    u* = 2t / (r (E-1) + sqrt(r^2 (E-1)^2 + 4 E t^2))        (no cancellation for e >= 0),

and ``u*(-e) = 1/u*(e)`` for e < 0.  With ``z* = log(u*)/h``, ``L <= e`` is ``z >= z*``, so the four
tails are sums of normal tails, each small side directly from erfc:

    P(L <= e) = r Phibar(z*) + q Phibar(z* + h),   Q(L <= e) = r Phibar(z*) + q Phibar(z* - h),

and ``P(L > e)``, ``Q(L > e)`` the same with Phi.

>>> from flint import ctx
>>> pair = BoundedPoissonPair(Fraction(1, 2), Fraction(1))
>>> with ctx.workprec(80):
...     pf, ps, qf, qs = pair.cdf(arb(0))
>>> (pf + ps).overlaps(arb(1)) and pf.overlaps(qs) and ps.overlaps(qf)  # symmetric: L <= 0 under P is L >= 0 under Q
True
"""

from __future__ import annotations

from fractions import Fraction

from flint import arb, arb_series

from exactdp.core.numbers import arb_of_fraction
from exactdp.engines.pld.mixture import normal_series_sides, normal_sides
from exactdp.engines.pld.models import Atom, LossModel, Position, Quad, per_precision

__all__ = ["BoundedLaplacePair", "BoundedPoissonPair"]


class BoundedPoissonPair(LossModel):
    """``((1-q)N(0) + qN(-mu/2), (1-q)N(0) + qN(mu/2))`` in units of the noise's sigma (module docstring;
    docs/mathematics.md §9, Theorem 9.8): no atoms, the loss inverted in closed form.

    Given by ``mu = D/S`` (rational) or by ``mu2 = mu^2``; ``0 < q < 1``.
    """

    name = "poisson-bounded"

    def __init__(self, q: Fraction, mu: Fraction | None = None, *, mu2: Fraction | None = None) -> None:
        if not 0 < q < 1:
            raise ValueError("0 < q < 1")
        if (mu is None) == (mu2 is None):
            raise ValueError("give exactly one of mu, mu2")
        self.q = Fraction(q)
        self.mu = None if mu is None else Fraction(mu)
        self.mu2 = self.mu ** 2 if self.mu is not None else Fraction(mu2)  # type: ignore[arg-type]
        if self.mu2 <= 0:
            raise ValueError("mu > 0")
        self._balls: dict[int, tuple[arb, arb, arb, arb, arb]] = {}

    def key(self) -> tuple:
        return ("poisson-bounded", self.q, self.mu if self.mu is not None else ("mu2", self.mu2))

    def _consts(self) -> tuple[arb, arb, arb, arb, arb]:
        """(h, r, t, q, sqrt 2) at the working precision."""
        def make() -> tuple[arb, arb, arb, arb, arb]:
            h2 = arb_of_fraction(self.mu2) / 4
            h = arb_of_fraction(self.mu) / 2 if self.mu is not None else h2.sqrt()
            qa = arb_of_fraction(self.q)
            return h, 1 - qa, qa * (-h2 / 2).exp(), qa, arb(2).sqrt()

        return per_precision(self._balls, make)

    def root(self, e: arb) -> arb:
        """The ball of ``z*`` with ``L(z*) = e`` (in units of sigma).

        >>> from flint import ctx
        >>> pair = BoundedPoissonPair(Fraction(1, 3), Fraction(2))
        >>> with ctx.workprec(80):
        ...     z = pair.root(arb("0.25"))
        ...     h, r, t = arb(1), arb(2) / 3, (arb(-1) / 2).exp() / 3
        ...     u = (h * z).exp()
        ...     back = ((r + t / u) / (r + t * u)).log()
        >>> back.overlaps(arb("0.25"))
        True
        """
        if e < 0:
            return -self.root(-e)
        h, r, t, _, _ = self._consts()
        em1 = e.expm1()
        big = e.exp()
        s = (r * r * em1 * em1 + 4 * big * t * t).sqrt()
        return ((2 * t).log() - (r * em1 + s).log()) / h

    def has_continuous(self) -> bool:
        return True

    def cont_totals(self) -> tuple[arb, arb]:
        return arb(1), arb(1)

    def cdf(self, e: arb) -> Quad:
        h, r, _, qa, r2 = self._consts()
        z = self.root(e)
        lo0, hi0 = normal_sides(z, r2)  # (Phi(z*), Phibar(z*))
        lop, hip = normal_sides(z + h, r2)
        loq, hiq = normal_sides(z - h, r2)
        return r * hi0 + qa * hip, r * lo0 + qa * lop, r * hi0 + qa * hiq, r * lo0 + qa * loq

    def cdf_series(self, x: arb_series) -> tuple[arb_series, ...] | None:
        """The four functions of :meth:`cdf` at a loss power series ``x``: the same closed form in
        series arithmetic, the quadratic's root written by the sign of the constant term (both forms
        are the same function, so either holds)."""
        h, r, t, qa, r2 = self._consts()
        c0 = x.coeffs()[0]
        big = x.exp()
        em1 = big - 1
        s = (r * r * em1 * em1 + 4 * big * t * t).sqrt()
        if c0 >= 0:
            logu = (2 * t).log() - (r * em1 + s).log()
        elif c0 < 0:
            logu = (s - r * em1).log() - (2 * t * big).log()
        else:
            return None
        z = logu / h
        lo0, hi0 = normal_series_sides(z, r2)
        lop, hip = normal_series_sides(z + h, r2)
        loq, hiq = normal_series_sides(z - h, r2)
        return r * hi0 + qa * hip, r * lo0 + qa * lop, r * hi0 + qa * hiq, r * lo0 + qa * loq

    def support(self) -> tuple[float, float]:
        return float("-inf"), float("inf")  # float ok: grid range only



class BoundedLaplacePair(LossModel):
    """``((1-q)Lap(0) + qLap(-c), (1-q)Lap(0) + qLap(c))`` in units of the noise's scale b, ``c = D/(2b)``
    with D the replace-one sensitivity: the Poisson-subsampled Laplace mechanism with every record within
    D/2 of the origin (docs/mathematics.md §9, Theorem 9.9; the reading dp_accounting's additive-noise
    base class documents for REPLACE).

    With ``r = 1-q``, ``A = r + q e^{-c}`` and ``E0 = log((r + q e^c)/A)`` the loss ``L(x) = log(p(x)/q(x))``
    is ``E0`` on ``x <= -c`` and ``-E0`` on ``x >= c`` (two atoms), ``log(r + q e^{-c-2x}) - log A`` on
    ``[-c, 0]`` and ``log A - log(r + q e^{2x-c})`` on ``[0, c]``: strictly decreasing between them, odd
    (``L(-x) = -L(x)``; the Q-law is the P-law mirrored), inverted in closed form,

        x*(e) = -(log(r expm1(e) + q e^{e-c}) + c - log q) / 2    (0 <= e < E0),   x*(-e) = -x*(e),

    and ``L <= e`` is ``X >= x*``: the tails are sums of Laplace tails.  No series (``cdf_series`` is
    None): the exact lattice path, not the float FFT path's Taylor models.

    >>> from flint import ctx
    >>> pair = BoundedLaplacePair(Fraction(1, 10), Fraction(1, 2))
    >>> with ctx.workprec(80):
    ...     (pa, qa_), (pb, qb) = [(a[1], a[2]) for a in pair.atoms()]
    ...     pc, qc = pair.cont_totals()
    ...     pf, ps, qf, qs = pair.cdf(arb("0.01"))
    >>> (pa + pb + pc).overlaps(arb(1)) and (pf + ps).overlaps(pc) and (qf + qs).overlaps(qc)
    True
    """

    name = "laplace-bounded"

    def __init__(self, q: Fraction, c: Fraction) -> None:
        if not 0 < q < 1:
            raise ValueError("0 < q < 1")
        if c <= 0:
            raise ValueError("c > 0")
        self.q, self.c = Fraction(q), Fraction(c)
        self._balls: dict[int, tuple[arb, ...]] = {}

    def key(self) -> tuple:
        return ("laplace-bounded", self.q, self.c)

    def _consts(self) -> tuple[arb, ...]:
        """(c, r, q, A, E0, e^{-c}) at the working precision."""
        def make() -> tuple[arb, ...]:
            c, qa = arb_of_fraction(self.c), arb_of_fraction(self.q)
            r = 1 - qa
            a = r + qa * (-c).exp()
            return c, r, qa, a, ((r + qa * c.exp()) / a).log(), (-c).exp()

        return per_precision(self._balls, make)

    def edge(self) -> arb:
        """The ball of ``E0``, the atoms' position (the largest loss)."""
        return self._consts()[4]

    def root(self, e: arb) -> arb:
        """The ball of ``x*`` with ``L(x*) = e`` for ``-E0 < e < E0`` (in units of b).

        >>> from flint import ctx
        >>> pair = BoundedLaplacePair(Fraction(1, 5), Fraction(1))
        >>> with ctx.workprec(80):
        ...     x = pair.root(arb("0.1"))
        ...     r, q, c = arb("0.8"), arb("0.2"), arb(1)
        ...     back = (r + q * (-c - 2 * x).exp()).log() - (r + q * (-c).exp()).log()
        >>> back.overlaps(arb("0.1")) and x < 0
        True
        """
        if e < 0:
            return -self.root(-e)
        c, r, qa, _, _, _ = self._consts()
        return -((r * e.expm1() + qa * (e - c).exp()).log() + c - qa.log()) / 2

    def atoms(self) -> list[Atom]:
        """``+E0`` with masses ``((r e^{-c} + q)/2, (r e^{-c} + q e^{-2c})/2)`` and its mirror at ``-E0``."""
        def make_pos() -> arb:
            return self._consts()[4]

        _, r, qa, _, _, emc = self._consts()
        big, small = (r * emc + qa) / 2, (r * emc + qa * emc * emc) / 2
        pos = Position(fn=make_pos)
        return [(pos, big, small), (pos.neg(), small, big)]

    def has_continuous(self) -> bool:
        return True

    def cont_totals(self) -> tuple[arb, arb]:
        _, r, qa, _, _, emc = self._consts()
        t = 1 - r * emc - qa * (1 + emc * emc) / 2
        return t, t

    def _p_le(self, e: arb) -> tuple[arb, arb]:
        """(P_c(L <= e), P_c(L > e)) of the continuous part (the atoms excluded)."""
        c, r, qa, _, e0, emc = self._consts()
        total = self.cont_totals()[0]
        if e >= e0:
            return total, arb(0)
        if e <= -e0:
            return arb(0), total
        lo_e = e if e > -e0 and e < e0 else None
        x = self.root(lo_e if lo_e is not None else e.max(-e0 * (1 - arb(2) ** -40)).min(e0 * (1 - arb(2) ** -40)))
        # P = r Lap(0) + q Lap(-c) on [x, c) and on (-c, x): Laplace tails, each difference by expm1
        lap_tail = qa * (-2 * c).exp() * (c - x).expm1() / 2  # q (e^{-(x+c)} - e^{-2c}) / 2
        lap_head = -qa * (-(x + c)).expm1() / 2  # q (1 - e^{-(x+c)}) / 2

        def zero_part(neg: bool) -> tuple[arb, arb]:
            if neg:  # x < 0: S_0(x) = 1 - e^x/2, F_0(x) = e^x/2
                return r * (1 - (x.exp() + emc) / 2), r * emc * (x + c).expm1() / 2
            return r * emc * (c - x).expm1() / 2, r * (1 - ((-x).exp() + emc) / 2)

        if x < 0:
            le0, gt0 = zero_part(True)
        elif x >= 0:
            le0, gt0 = zero_part(False)
        else:  # the ball holds 0: both forms agree there, their union holds the value
            a, b = zero_part(True), zero_part(False)
            le0, gt0 = a[0].union(b[0]), a[1].union(b[1])
        le, gt = le0 + lap_tail, gt0 + lap_head
        if lo_e is None:  # e's ball reaches an atom: the value lies between the formula and the end
            le, gt = le.union(total).union(arb(0)), gt.union(total).union(arb(0))
        return le, gt

    def cdf(self, e: arb) -> Quad:
        pf, ps = self._p_le(e)
        qf_m, qs_m = self._p_le(-e)  # Q(L <= e) = P(L >= -e) on the continuous part
        return pf, ps, qs_m, qf_m

    def support(self) -> tuple[float, float]:
        from flint import ctx

        with ctx.workprec(64):
            e = float(self.edge().upper())  # float ok: grid range only
        return -e, e
