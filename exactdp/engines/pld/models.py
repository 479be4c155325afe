"""Single-step privacy-loss models: what each mechanism tells the certified PLD engine.

For a pair (P, Q) the privacy loss is L = log(dP/dQ); its law under P (and under Q) is what
composition convolves (docs/pld.md §1).  A :class:`LossModel` describes both laws rigorously, in
Arb balls at the current precision:

* ``atoms()``: the atoms ``(position, P-mass, Q-mass)`` of finite loss, with exact positions
  (:class:`Position`, compared exactly with grid points);
* ``cdf(e)``: for the *continuous* part, ``(P(L <= e), P(L > e), Q(L <= e), Q(L > e))``, each
  computed directly (a tail is never 1 minus a probability), so bin masses keep their relative
  accuracy far in the tails;
* ``p_inf()``: the P-mass at L = +inf (outputs that Q never produces).  The Q-mass at L = -inf
  never matters and is not tracked.

The models: the generic (eps, delta) pair of KOV15 (docs/mathematics.md §1), k-ary randomized
response, Laplace, Gaussian, discrete Laplace and discrete Gaussian, a mixture of Gaussians, the pair
without noise (docs/mathematics.md §7), Poisson subsampling of any of them in the "remove" order, and
the reversed order of any model (the "add" order of subsampling and of a mixture).  The pairs of the
replace-one relation are in :mod:`exactdp.engines.pld.relations`; which models a mechanism has, in
both orders, is :func:`exactdp.engines.pld.orders.model_of`.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import TypeVar

from flint import arb, arb_series, ctx

from exactdp.core.errors import PrecisionError
from exactdp.core.linlog import LinLog
from exactdp.core.numbers import ExactReal, arb_of_fraction
from exactdp.engines.discrete_noise import dgauss_window, dgauss_window_half, dlaplace_atoms
from exactdp.engines.pld.mixture import MixtureLoss

T = TypeVar("T")

__all__ = [
    "DiscreteGaussianPair",
    "DiscreteLaplacePair",
    "GaussianPair",
    "GenericPair",
    "KaryRR",
    "LaplacePair",
    "LossModel",
    "MixturePair",
    "NonPrivatePair",
    "Position",
    "Reversed",
    "Subsampled",
    "per_precision",
]


class Position:
    """The exact position of an atom of the loss: ``R + log(Q)`` exactly, or a real given by Arb.

    :meth:`cmp` compares it with a rational exactly.  An ``R + log Q`` is compared by its exact sign
    (Lindemann-Weierstrass guarantees the refinement ends); a transformed position (the loss of a
    subsampled atom, log(1 - q + q e^x)) is refined up to 2^14 bits, and an exact tie there (only
    possible in degenerate cases) raises :class:`PrecisionError` so that the caller moves the grid.
    """

    def __init__(self, linlog: LinLog | None = None, fn: Callable[[], arb] | None = None) -> None:
        if (linlog is None) == (fn is None):
            raise ValueError("give exactly one of linlog, fn")
        self.linlog, self.fn = linlog, fn

    @classmethod
    def of(cls, x: ExactReal | Fraction | LinLog) -> Position:
        if isinstance(x, LinLog):
            return cls(linlog=x)
        if isinstance(x, Fraction):
            return cls(linlog=LinLog(x))
        return cls(linlog=LinLog.of(x))

    def arb(self) -> arb:
        return self.linlog.arb() if self.linlog is not None else self.fn()  # type: ignore[misc]

    def neg(self) -> Position:
        if self.linlog is not None:
            return Position(linlog=-self.linlog)
        f = self.fn
        return Position(fn=lambda: -f())  # type: ignore[misc]

    def rational(self) -> Fraction | None:
        """The position when it is rational, else None."""
        if self.linlog is not None and self.linlog.Q == 1:
            return self.linlog.R
        return None

    def cmp_real(self, x: ExactReal) -> int:
        """The exact sign of ``self - x`` for an exact real x (rational or log(q))."""
        if x.kind == "rational":
            return self.cmp(x.value)
        if self.linlog is not None:
            return (self.linlog - LinLog.of(x)).sign()
        prec = 64
        while prec <= 1 << 14:
            with ctx.workprec(prec):
                d = self.arb() - x.arb()
            if d > 0:
                return 1
            if d < 0:
                return -1
            prec *= 2
        raise PrecisionError(f"an atom of the privacy loss sits at {x} to 2^14 bits")

    def cmp(self, r: Fraction) -> int:
        """The exact sign of ``self - r``."""
        if self.linlog is not None:
            return (self.linlog - LinLog(Fraction(r))).sign()
        prec = 64
        while prec <= 1 << 14:
            with ctx.workprec(prec):
                d = self.arb() - arb_of_fraction(Fraction(r))
            if d > 0:
                return 1
            if d < 0:
                return -1
            prec *= 2
        raise PrecisionError(f"an atom of the privacy loss sits at {r} to 2^14 bits: no exact grid placement")

    def __repr__(self) -> str:
        return f"Position({self.linlog!r})" if self.linlog is not None else "Position(<arb>)"


Atom = tuple[Position, arb, arb]
Quad = tuple[arb, arb, arb, arb]


class LossModel:
    """The laws of the privacy loss of one pair (P, Q); see the module docstring."""

    #: a short name for messages and cache keys
    name: str = "model"

    def atoms(self) -> list[Atom]:
        return []

    def has_continuous(self) -> bool:
        return False

    def cdf(self, e: arb) -> Quad:
        """(P(L <= e), P(L > e), Q(L <= e), Q(L > e)) of the continuous part, at edge e."""
        z = arb(0)
        return z, z, z, z

    def cdf_series(self, x: arb_series) -> tuple[arb_series, ...] | None:
        """The four functions of :meth:`cdf` at the loss ``x``, a power series (a Taylor model's
        coefficients, :mod:`exactdp.engines.pld.taylor`), or None where the model has no series."""
        return None

    def p_inf(self) -> arb:
        return arb(0)

    def q_minus_inf(self) -> arb:
        """The Q-mass at L = -inf (outputs that P never produces)."""
        return arb(0)

    def p_inf_exact(self) -> Fraction:
        """The P-mass at +inf as an exact rational (every model here has a rational one)."""
        return Fraction(0)

    def q_minus_inf_exact(self) -> Fraction:
        return Fraction(0)

    def cont_totals(self) -> tuple[arb, arb]:
        """(P-mass, Q-mass) of the continuous part."""
        z = arb(0)
        return z, z

    def support(self) -> tuple[float, float]:  # float ok: only to choose a grid range
        """Rough bounds of the finite losses (may be +-inf for unbounded continuous parts)."""
        raise NotImplementedError

    def key(self) -> tuple:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}{self.key()}"


class GenericPair(LossModel):
    """The KOV15 pair of the class of (eps, delta)-DP mechanisms (docs/mathematics.md §1).

    P = (delta, (1-delta) e^eps/(1+e^eps), (1-delta)/(1+e^eps), 0), Q the mirror image: an atom
    at +inf of P-mass delta and atoms at +eps and -eps.
    """

    name = "approx"

    def __init__(self, eps: ExactReal, delta: Fraction) -> None:
        self.eps, self.delta = eps, Fraction(delta)

    def key(self) -> tuple:
        return ("approx", str(self.eps), self.delta)

    def atoms(self) -> list[Atom]:
        one = 1 - arb_of_fraction(self.delta)
        if self.eps.is_zero():
            return [(Position.of(Fraction(0)), one, one)]
        x = self.eps.exp_arb()
        hi, lo = one * x / (1 + x), one / (1 + x)
        pos = Position.of(self.eps)
        return [(pos, hi, lo), (pos.neg(), lo, hi)]

    def p_inf(self) -> arb:
        return arb_of_fraction(self.delta)

    def q_minus_inf(self) -> arb:
        return arb_of_fraction(self.delta)

    def p_inf_exact(self) -> Fraction:
        return self.delta

    def q_minus_inf_exact(self) -> Fraction:
        return self.delta

    def support(self) -> tuple[float, float]:
        with ctx.workprec(53):
            e = float(self.eps.arb().mid())  # float ok: grid range only
        return -e, e


class KaryRR(LossModel):
    """k-ary randomized response: losses +eps (P e^eps/Z), -eps (P 1/Z) and 0 (P (k-2)/Z), Z = e^eps + k - 1."""

    name = "rr"

    def __init__(self, eps: ExactReal, k: int) -> None:
        self.eps, self.k = eps, k

    def key(self) -> tuple:
        return ("rr", str(self.eps), self.k)

    def atoms(self) -> list[Atom]:
        x: arb = self.eps.exp_arb()
        z = x + (self.k - 1)
        pos = Position.of(self.eps)
        out: list[Atom] = [(pos, x / z, 1 / z), (pos.neg(), 1 / z, x / z)]
        if self.k > 2:
            m = arb(self.k - 2) / z
            out.append((Position.of(Fraction(0)), m, m))
        return out

    def support(self) -> tuple[float, float]:
        with ctx.workprec(53):
            e = float(self.eps.arb().mid())  # float ok: grid range only
        return -e, e


class LaplacePair(LossModel):
    """Laplace(b) noise, sensitivity D, eps = D/b (docs/mathematics.md §7).

    Under P the loss has atoms 1/2 at +eps and e^{-eps}/2 at -eps and density e^{(z-eps)/2}/4 on
    (-eps, eps); under Q its law is that of -L under P (the pair is symmetric).
    """

    name = "laplace"

    def __init__(self, eps: Fraction) -> None:
        self.eps = Fraction(eps)

    def key(self) -> tuple:
        return ("laplace", self.eps)

    def atoms(self) -> list[Atom]:
        e = arb_of_fraction(self.eps)
        half = arb(1) / 2
        small = (-e).exp() / 2
        pos = Position.of(self.eps)
        return [(pos, half, small), (pos.neg(), small, half)]

    def has_continuous(self) -> bool:
        return True

    def _p_le(self, e: arb) -> tuple[arb, arb]:
        """(P_c(L <= e), P_c(L > e)) of the continuous part, e clipped to [-eps, eps]."""
        eps = arb_of_fraction(self.eps)
        total = -(-eps).expm1() / 2
        if e <= -eps:  # below the support: exactly nothing below, everything above
            return arb(0), total
        if e >= eps:
            return total, arb(0)
        t = e.min(eps).max(-eps)
        # P_c(L <= t) = (e^{(t-eps)/2} - e^{-eps})/2 = e^{-eps} expm1((t+eps)/2) / 2
        le = (-eps).exp() * ((t + eps) / 2).expm1() / 2
        # P_c(L > t) = (1 - e^{(t-eps)/2})/2 = -expm1((t-eps)/2)/2
        gt = -((t - eps) / 2).expm1() / 2
        return le, gt

    def cont_totals(self) -> tuple[arb, arb]:
        c = -(-arb_of_fraction(self.eps)).expm1() / 2  # (1 - e^{-eps})/2 under P and under Q
        return c, c

    def cdf(self, e: arb) -> Quad:
        pf, ps = self._p_le(e)
        qf_m, qs_m = self._p_le(-e)  # Q(L <= e) = P(L >= -e) on the continuous part
        return pf, ps, qs_m, qf_m

    def support(self) -> tuple[float, float]:
        e = float(self.eps)  # float ok: grid range only
        return -e, e


class GaussianPair(LossModel):
    """N(D, s^2) vs N(0, s^2): L ~ N(mu^2/2, mu^2) under P and N(-mu^2/2, mu^2) under Q, mu = D/s.

    Given by mu (rational) or by ``mu2`` = mu^2 (mu may then be irrational: its ball is sqrt(mu2)).
    """

    name = "gaussian"

    def __init__(self, mu: Fraction | None = None, *, mu2: Fraction | None = None) -> None:
        self.mu = None if mu is None else Fraction(mu)
        self.mu2 = Fraction(mu) ** 2 if mu is not None else Fraction(mu2)  # type: ignore[arg-type]
        self._balls: dict[int, tuple[arb, arb]] = {}

    def key(self) -> tuple:
        return ("gaussian", self.mu) if self.mu is not None else ("gaussian-mu2", self.mu2)

    def has_continuous(self) -> bool:
        return True

    def cont_totals(self) -> tuple[arb, arb]:
        return arb(1), arb(1)

    def cdf(self, e: arb) -> Quad:
        got = self._balls.get(ctx.prec)  # the constants' balls, as per_precision gives them (one lookup)
        mu, m = got if got is not None else per_precision(
            self._balls, lambda: _mu_balls(self.mu) if self.mu is not None else _mu2_balls(self.mu2))
        zp = (e - m) / mu  # P: (L - mu^2/2)/mu standard normal
        zq = (e + m) / mu
        return _normal_sides(zp) + _normal_sides(zq)

    def cdf_series(self, x: arb_series) -> tuple[arb_series, ...] | None:
        mu, m = per_precision(self._balls, lambda: _mu_balls(self.mu) if self.mu is not None else _mu2_balls(self.mu2))
        return _normal_series((x - m) / mu) + _normal_series((x + m) / mu)

    def support(self) -> tuple[float, float]:
        return float("-inf"), float("inf")  # float ok: grid range only


class DiscreteLaplacePair(LossModel):
    """Discrete Laplace noise DLap(a) on an integer query of sensitivity D: the D + 1 atoms a(2y - D),
    y = 0..D, at exact rational positions, Q-mass e^{-loss} times P-mass (docs/mathematics.md §7.10)."""

    name = "dlaplace"

    def __init__(self, a: Fraction, d: int) -> None:
        self.a, self.d = Fraction(a), int(d)
        self._atoms: dict[int, list[Atom]] = {}

    def key(self) -> tuple:
        return ("dlaplace", self.a, self.d)

    def atoms(self) -> list[Atom]:
        return per_precision(self._atoms, lambda: [(Position.of(x), m, m * (-arb_of_fraction(x)).exp())
                                                   for x, m in dlaplace_atoms(self.a, self.d)])

    def support(self) -> tuple[float, float]:
        e = float(self.a * self.d)  # float ok: grid range only
        return -e, e


class DiscreteGaussianPair(LossModel):
    """Discrete Gaussian noise (parameter sigma) on an integer query of sensitivity D: atoms at the
    rational losses D(2y - D)/(2 sigma^2) of the outputs y within the window of
    :func:`~exactdp.engines.discrete_noise.dgauss_window`; the P-mass beyond it (below 2^-600) is
    the ball [0, b_P] at +inf and the Q-mass beyond it [0, b_Q] at -inf: the ends of the ball are the
    window alone (a sub-measure, dominated) and the window with the rest at +-inf (dominating), so
    every bracket computed from it holds (docs/mathematics.md §7.11).  The true +inf mass is 0.
    """

    name = "dgaussian"

    def __init__(self, sigma: Fraction, d: int) -> None:
        self.sigma, self.d = Fraction(sigma), int(d)
        self._win: dict[int, tuple[list[Atom], arb, arb]] = {}

    def key(self) -> tuple:
        return ("dgaussian", self.sigma, self.d)

    def _window(self) -> tuple[list[Atom], arb, arb]:
        def make() -> tuple[list[Atom], arb, arb]:
            atoms, bp, bq = dgauss_window(self.sigma, self.d)
            return [(Position.of(x), pm, qm) for x, pm, qm in atoms], bp, bq

        return per_precision(self._win, make)

    def atoms(self) -> list[Atom]:
        return self._window()[0]

    def p_inf(self) -> arb:
        return self._window()[1]

    def q_minus_inf(self) -> arb:
        return self._window()[2]

    def support(self) -> tuple[float, float]:
        n = dgauss_window_half(self.sigma, self.d)
        e = float(Fraction(self.d * (2 * n + self.d), 2 * self.sigma ** 2))  # float ok: grid range only
        return -e, e


def per_precision(memo: dict[int, T], make: Callable[[], T]) -> T:
    """``make()`` at the working precision, computed once per precision: the same balls every time
    (a model's constants, evaluated at each of its tens of thousands of grid edges).

    >>> memo: dict = {}
    >>> with ctx.workprec(64):
    ...     a = per_precision(memo, lambda: arb(2).sqrt())
    ...     b = per_precision(memo, lambda: arb(3))
    >>> (a is b, list(memo))
    (True, [64])
    """
    v = memo.get(ctx.prec)
    if v is None:
        v = memo[ctx.prec] = make()
    return v


def _mu_balls(mu: Fraction) -> tuple[arb, arb]:
    m = arb_of_fraction(mu)
    return m, m * m / 2


def _mu2_balls(mu2: Fraction) -> tuple[arb, arb]:
    m2 = arb_of_fraction(mu2)
    return m2.sqrt(), m2 / 2


_SQRT2: dict[int, arb] = {}


def _normal_sides(z: arb) -> tuple[arb, arb]:
    """(Phi(z), 1 - Phi(z)) with one erfc: the small side directly, the large side as 1 minus it
    (no cancellation: the large side is at least 1/2)."""
    r2 = _SQRT2.get(ctx.prec)  # per_precision's ball, looked up without a closure (the edges' hot path)
    if r2 is None:
        r2 = per_precision(_SQRT2, lambda: arb(2).sqrt())
    if z < 0:
        small = (-z / r2).erfc() / 2
        return small, 1 - small
    if z > 0:
        small = (z / r2).erfc() / 2
        return 1 - small, small
    return (-z / r2).erfc() / 2, (z / r2).erfc() / 2


def _normal_series(z: arb_series) -> tuple[arb_series, arb_series]:
    """(Phi(z), 1 - Phi(z)) of a power series z: the small side by one erfc, chosen by the constant
    term (either formula is the same function, so any choice holds)."""
    r2 = per_precision(_SQRT2, lambda: arb(2).sqrt())
    if z.coeffs()[0] < 0:
        small = (-z / r2).erfc() / 2
        return small, 1 - small
    small = (z / r2).erfc() / 2
    return 1 - small, small


class Subsampled(LossModel):
    """Poisson subsampling at rate q, "remove" order: (P, Q) = ((1-q)B + qA, B) for the base pair (A, B).

    The likelihood ratio is (1-q) + q e^{L_base}, so L = g(L_base) with g(x) = log(1 - q + q e^x),
    increasing (docs/mathematics.md §7): every base atom moves to g(position) with P-mass
    (1-q) Q_base + q P_base and Q-mass Q_base; the base's -inf atom (Q-mass only) becomes the atom
    log(1-q); the +inf atom keeps q times its P-mass; the continuous part is pulled back through g.
    """

    name = "poisson"

    def __init__(self, base: LossModel, q: Fraction) -> None:
        if not 0 < q < 1:
            raise ValueError("0 < q < 1")
        self.base, self.q = base, Fraction(q)
        self._balls: dict[int, tuple[arb, arb]] = {}

    def key(self) -> tuple:
        return ("poisson", self.q, self.base.key())

    def _g_pos(self, p: Position) -> Position:
        """g(position), exact (``log(1 - q + q r)``) when the base position is ``log r``, r rational:
        in particular g(0) = 0 exactly, which no ball can place on a grid (docs/pld.md §11.4)."""
        q = self.q
        r = p.linlog.exp_exact() if p.linlog is not None else None
        if r is not None:
            return Position(linlog=LinLog(Fraction(0), 1 - q + q * r))

        def fn() -> arb:
            qa = arb_of_fraction(q)
            return (1 - qa + qa * p.arb().exp()).log()

        return Position(fn=fn)

    def atoms(self) -> list[Atom]:
        qa = arb_of_fraction(self.q)
        out: list[Atom] = []
        for pos, pm, qm in self.base.atoms():
            out.append((self._g_pos(pos), (1 - qa) * qm + qa * pm, qm))
        qi = self.base.q_minus_inf()  # the base's -inf atom (Q-mass only) lands at log(1-q)
        if not qi.is_zero():
            out.append((Position(linlog=LinLog(Fraction(0), 1 - self.q)), (1 - qa) * qi, qi))
        return out

    def has_continuous(self) -> bool:
        return self.base.has_continuous()

    def cdf(self, e: arb) -> Quad:
        # L <= e  <=>  L_base <= g^{-1}(e) = log((e^e - (1-q))/q), for e > log(1-q); none below
        u = self.base_loss(e)
        if u is None:
            zero = arb(0)
            tp, tq = self.cont_totals()
            return zero, tp, zero, tq
        return self.from_base(self.base.cdf(u))

    def base_loss(self, e: arb) -> arb | None:
        """The base loss ``u = g^{-1}(e) = log((e^e - (1-q))/q)`` with ``L <= e`` iff ``L_base <= u``
        (a ball), None where ``e <= log(1-q)`` (no base loss: the continuous part lies above);
        :class:`PrecisionError` where the ball cannot tell."""
        got = self._balls.get(ctx.prec)  # as per_precision, one lookup
        qa, keep = got if got is not None else per_precision(self._balls, lambda: _q_balls(self.q))
        y = e.exp() - keep
        if not y > 0:
            if y < 0 or y.is_zero():
                return None
            raise PrecisionError("a grid edge of a subsampled loss is too close to log(1-q)")
        return (y / qa).log()

    def from_base(self, quad: tuple) -> tuple:
        """The four edge functions from the base's at the base loss (balls, or power series in any
        variable: the map is linear), ``P = (1 - q) Q_base + q P_base``, ``Q = Q_base``."""
        got = self._balls.get(ctx.prec)  # as per_precision, one lookup
        qa, keep = got if got is not None else per_precision(self._balls, lambda: _q_balls(self.q))
        pf, ps, qf, qs = quad
        return keep * qf + qa * pf, keep * qs + qa * ps, qf, qs

    def cdf_series(self, x: arb_series) -> tuple[arb_series, ...] | None:
        qa, keep = per_precision(self._balls, lambda: _q_balls(self.q))
        y = x.exp() - keep
        if not y.coeffs()[0] > 0:  # an edge at or below log(1 - q) is in the block: no series
            return None
        base = self.base.cdf_series((y / qa).log())
        return None if base is None else self.from_base(base)

    def cont_totals(self) -> tuple[arb, arb]:
        tp, tq = self.base.cont_totals()
        qa = arb_of_fraction(self.q)
        return (1 - qa) * tq + qa * tp, tq

    def p_inf(self) -> arb:
        return arb_of_fraction(self.q) * self.base.p_inf()

    def p_inf_exact(self) -> Fraction:
        return self.q * self.base.p_inf_exact()

    def support(self) -> tuple[float, float]:
        import math

        lo, hi = self.base.support()
        qf = float(self.q)  # float ok: grid range only
        g = (lambda x: math.log1p(-qf + qf * math.exp(min(x, 700))) if x > -700 else math.log1p(-qf))  # float ok
        base_has_minf = not self.base.q_minus_inf().is_zero()
        return (math.log1p(-qf) if base_has_minf or lo == float("-inf") else g(lo)), (  # float ok
            hi if hi == float("inf") else g(hi))  # float ok: grid range only


def _q_balls(q: Fraction) -> tuple[arb, arb]:
    qa = arb_of_fraction(q)
    return qa, 1 - qa


class Reversed(LossModel):
    """The same pair in the other order, (Q, P): loss -L, atoms mirrored with P and Q swapped.

    Used for the "add" order of Poisson subsampling, which is the reverse of the "remove" order.
    """

    name = "reversed"

    def __init__(self, base: LossModel) -> None:
        self.base = base

    def key(self) -> tuple:
        return ("reversed", self.base.key())

    def atoms(self) -> list[Atom]:
        return [(pos.neg(), qm, pm) for pos, pm, qm in self.base.atoms()]

    def has_continuous(self) -> bool:
        return self.base.has_continuous()

    def cdf(self, e: arb) -> Quad:
        # P_rev(L_rev <= e) = Q(L >= -e) = Q(L > -e) on the continuous part, and so on
        pf, ps, qf, qs = self.base.cdf(-e)
        return qs, qf, ps, pf

    def cdf_series(self, x: arb_series) -> tuple[arb_series, ...] | None:
        base = self.base.cdf_series(-x)  # the same four functions at -x, permuted as in cdf
        if base is None:
            return None
        pf, ps, qf, qs = base
        return qs, qf, ps, pf

    def p_inf(self) -> arb:
        # P_rev-mass where Q_rev = P vanishes: the base's Q-mass at L = -inf
        return self.base.q_minus_inf()

    def q_minus_inf(self) -> arb:
        return self.base.p_inf()

    def p_inf_exact(self) -> Fraction:
        return self.base.q_minus_inf_exact()

    def q_minus_inf_exact(self) -> Fraction:
        return self.base.p_inf_exact()

    def cont_totals(self) -> tuple[arb, arb]:
        tp, tq = self.base.cont_totals()
        return tq, tp

    def support(self) -> tuple[float, float]:
        lo, hi = self.base.support()
        return -hi, -lo


class MixturePair(LossModel):
    """A mixture of Gaussians, "remove" order: P = sum_i p_i N(s_i, S^2) against Q = N(0, S^2)
    (docs/mathematics.md §7.12); no atoms, the loss inverted rigorously by
    :class:`exactdp.engines.pld.mixture.MixtureLoss`.  Its losses lie above log p_0 (p_0 the weight
    of a sensitivity 0), unbounded above."""

    name = "mog"

    def __init__(self, sigma: Fraction, sens: tuple[Fraction, ...], probs: tuple[Fraction, ...]) -> None:
        self.loss = MixtureLoss(Fraction(sigma), tuple(sens), tuple(probs))

    def key(self) -> tuple:
        return ("mog", self.loss.sigma, self.loss.sens, self.loss.probs)

    def has_continuous(self) -> bool:
        return True

    def cont_totals(self) -> tuple[arb, arb]:
        return arb(1), arb(1)

    def cdf(self, e: arb) -> Quad:
        return self.loss.cdf(e)

    def cdf_series(self, x: arb_series) -> tuple[arb_series, ...] | None:
        """The four edge functions as power series (:meth:`exactdp.engines.pld.mixture.MixtureLoss.cdf_series`),
        so the FFT path serves the edges by certified Taylor blocks (docs/pld.md §12.8)."""
        return self.loss.cdf_series(x)

    def support(self) -> tuple[float, float]:
        import math

        low = math.log(self.loss.p0) if self.loss.p0 else float("-inf")  # float ok: grid range only
        return low, float("inf")  # float ok: grid range only


class NonPrivatePair(LossModel):
    """The pair without noise (two point masses apart): P-mass 1 at L = +inf, Q-mass 1 at -inf."""

    name = "nonprivate"

    def key(self) -> tuple:
        return ("nonprivate",)

    def p_inf(self) -> arb:
        return arb(1)

    def q_minus_inf(self) -> arb:
        return arb(1)

    def p_inf_exact(self) -> Fraction:
        return Fraction(1)

    def q_minus_inf_exact(self) -> Fraction:
        return Fraction(1)

    def support(self) -> tuple[float, float]:
        return 0.0, 0.0  # float ok: grid range only (no finite loss)
