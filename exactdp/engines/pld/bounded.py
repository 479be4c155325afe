"""The replace-one pair of a Poisson-subsampled Gaussian with bounded records (dp_accounting's reading).

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
from exactdp.engines.pld.models import LossModel, Quad, per_precision

__all__ = ["BoundedPoissonPair"]


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

