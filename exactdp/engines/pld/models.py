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
response, Laplace, Gaussian (docs/mathematics.md §7), Poisson subsampling of any of them in the
"remove" order, and the reversed order of any model (the "add" order of subsampling); under the
replace-one relation (docs/mathematics.md §9) the diluted pair of Poisson subsampling and the
symmetrised pair of a fixed-size batch drawn without replacement.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import TypeVar

from flint import arb, ctx

from exactdp.core.errors import PrecisionError
from exactdp.core.linlog import LinLog
from exactdp.core.numbers import ExactReal, arb_of_fraction

T = TypeVar("T")

__all__ = [
    "Diluted",
    "GaussianPair",
    "GenericPair",
    "KaryRR",
    "LaplacePair",
    "LossModel",
    "Position",
    "Reversed",
    "Subsampled",
    "Symmetrized",
    "model_of",
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
    """N(D, s^2) vs N(0, s^2): L ~ N(mu^2/2, mu^2) under P and N(-mu^2/2, mu^2) under Q, mu = D/s."""

    name = "gaussian"

    def __init__(self, mu: Fraction) -> None:
        self.mu = Fraction(mu)
        self._balls: dict[int, tuple[arb, arb]] = {}

    def key(self) -> tuple:
        return ("gaussian", self.mu)

    def has_continuous(self) -> bool:
        return True

    def cont_totals(self) -> tuple[arb, arb]:
        return arb(1), arb(1)

    def cdf(self, e: arb) -> Quad:
        mu, m = per_precision(self._balls, lambda: _mu_balls(self.mu))
        zp = (e - m) / mu  # P: (L - mu^2/2)/mu standard normal
        zq = (e + m) / mu
        return _normal_sides(zp) + _normal_sides(zq)

    def support(self) -> tuple[float, float]:
        return float("-inf"), float("inf")  # float ok: grid range only


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


_SQRT2: dict[int, arb] = {}


def _normal_sides(z: arb) -> tuple[arb, arb]:
    """(Phi(z), 1 - Phi(z)) with one erfc: the small side directly, the large side as 1 minus it
    (no cancellation: the large side is at least 1/2)."""
    r2 = per_precision(_SQRT2, lambda: arb(2).sqrt())
    if z < 0:
        small = (-z / r2).erfc() / 2
        return small, 1 - small
    if z > 0:
        small = (z / r2).erfc() / 2
        return 1 - small, small
    return (-z / r2).erfc() / 2, (z / r2).erfc() / 2


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
        qa, keep = per_precision(self._balls, lambda: _q_balls(self.q))
        y = e.exp() - keep
        if not y > 0:
            if y < 0 or y.is_zero():
                zero = arb(0)
                tp, tq = self.cont_totals()
                return zero, tp, zero, tq
            raise PrecisionError("a grid edge of a subsampled loss is too close to log(1-q)")
        u = (y / qa).log()
        pf, ps, qf, qs = self.base.cdf(u)
        return keep * qf + qa * pf, keep * qs + qa * ps, qf, qs

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


class Diluted(LossModel):
    """Poisson subsampling at rate q under the replace-one relation: loss 0 w.p. 1 - q (the record
    is not sampled: both neighbours run the same), the base loss w.p. q (docs/mathematics.md §9,
    Theorem 9.2).  Symmetric when the base is."""

    name = "diluted"

    def __init__(self, base: LossModel, q: Fraction) -> None:
        if not 0 < q < 1:
            raise ValueError("0 < q < 1")
        self.base, self.q = base, Fraction(q)

    def key(self) -> tuple:
        return ("diluted", self.q, self.base.key())

    def atoms(self) -> list[Atom]:
        qa = arb_of_fraction(self.q)
        keep = 1 - qa
        out: list[Atom] = []
        merged = False
        for pos, pm, qm in self.base.atoms():
            if pos.rational() == 0:
                out.append((pos, keep + qa * pm, keep + qa * qm))
                merged = True
            else:
                out.append((pos, qa * pm, qa * qm))
        if not merged:
            out.append((Position.of(Fraction(0)), keep, keep))
        return out

    def has_continuous(self) -> bool:
        return self.base.has_continuous()

    def cdf(self, e: arb) -> Quad:
        qa = arb_of_fraction(self.q)
        pf, ps, qf, qs = self.base.cdf(e)
        return qa * pf, qa * ps, qa * qf, qa * qs

    def cont_totals(self) -> tuple[arb, arb]:
        tp, tq = self.base.cont_totals()
        qa = arb_of_fraction(self.q)
        return qa * tp, qa * tq

    def p_inf(self) -> arb:
        return arb_of_fraction(self.q) * self.base.p_inf()

    def q_minus_inf(self) -> arb:
        return arb_of_fraction(self.q) * self.base.q_minus_inf()

    def p_inf_exact(self) -> Fraction:
        return self.q * self.base.p_inf_exact()

    def q_minus_inf_exact(self) -> Fraction:
        return self.q * self.base.q_minus_inf_exact()

    def support(self) -> tuple[float, float]:
        lo, hi = self.base.support()
        return min(lo, 0.0), max(hi, 0.0)  # float ok: grid range only


class Symmetrized(LossModel):
    """The symmetric pair that keeps the losses above 0 of ``half`` and mirrors them below 0.

    For x > 0 it has P-mass P_half(L = x) at x and P-mass Q_half(L = x) at -x (Q the mirror image),
    and the rest, 1 - P_half(L > 0) - Q_half(L > 0), at 0.  Its profile is half's for eps >= 0 and
    1 - e^eps + e^eps delta_half(-eps) below 0; with ``half`` the remove order of a fixed-size batch
    it is the pair of sampling without replacement (docs/mathematics.md §9, Theorem 9.3).  The
    mass at 0 is nonnegative when half is the subsampled pair of a symmetric base (ibid.).
    """

    name = "symmetrized"

    def __init__(self, half: LossModel) -> None:
        self.half = half
        self._at0: dict[int, tuple[arb, arb]] = {}

    def key(self) -> tuple:
        return ("symmetrized", self.half.key())

    def _pos_atoms(self) -> list[Atom]:
        return [(pos, pm, qm) for pos, pm, qm in self.half.atoms() if pos.cmp(Fraction(0)) > 0]

    def _cont_above0(self) -> tuple[arb, arb]:
        """(P_half, Q_half) of the continuous part above 0."""
        def make() -> tuple[arb, arb]:
            if not self.half.has_continuous():
                return arb(0), arb(0)
            _, ps, _, qs = self.half.cdf(arb(0))
            return ps, qs
        return per_precision(self._at0, make)

    def atoms(self) -> list[Atom]:
        pos_atoms = self._pos_atoms()
        ps, qs = self._cont_above0()
        above = ps + qs + self.half.p_inf()
        out: list[Atom] = []
        for pos, pm, qm in pos_atoms:
            out.append((pos, pm, qm))
            out.append((pos.neg(), qm, pm))
            above += pm + qm
        zero = (1 - above).max(arb(0))  # >= 0 in exact arithmetic (class docstring)
        out.append((Position.of(Fraction(0)), zero, zero))
        return out

    def has_continuous(self) -> bool:
        return self.half.has_continuous()

    def cdf(self, e: arb) -> Quad:
        ps0, qs0 = self._cont_above0()
        if e >= 0:
            _, ps, _, qs = self.half.cdf(e)
            return qs0 + ps0 - ps, ps, ps0 + qs0 - qs, qs
        if e < 0:
            _, ps, _, qs = self.half.cdf(-e)
            return qs, ps0 + qs0 - qs, ps, qs0 + ps0 - ps
        raise PrecisionError("a grid edge of a symmetrised loss is too close to 0")

    def cont_totals(self) -> tuple[arb, arb]:
        ps0, qs0 = self._cont_above0()
        return ps0 + qs0, ps0 + qs0

    def p_inf(self) -> arb:
        return self.half.p_inf()

    def q_minus_inf(self) -> arb:
        return self.half.p_inf()

    def p_inf_exact(self) -> Fraction:
        return self.half.p_inf_exact()

    def q_minus_inf_exact(self) -> Fraction:
        return self.half.p_inf_exact()

    def support(self) -> tuple[float, float]:
        _, hi = self.half.support()
        return -hi, hi


@dataclass(frozen=True)
class _Orders:
    remove: LossModel
    add: LossModel | None  # None: the same law as ``remove`` (symmetric pair)


def model_of(mech: object) -> _Orders:
    """The loss models of a mechanism value in both orders of a neighbouring pair.

    Symmetric mechanisms (Gaussian, Laplace, randomized response, generic) have one law; a Poisson
    subsampled mechanism has its "remove" model and the reversed one (docs/mathematics.md §7); under
    the replace-one relation a Poisson subsample is diluted and a fixed-size batch is symmetrised,
    one law each (docs/mathematics.md §9).
    """
    from exactdp.model.generic import Mechanism
    from exactdp.model.mechanisms import (
        Gaussian,
        Laplace,
        PoissonSampled,
        RandomizedResponse,
        SampledWithoutReplacement,
    )

    def base(m: object) -> LossModel:
        if isinstance(m, Mechanism):
            return GenericPair(m.eps, m.delta)
        if isinstance(m, Gaussian):
            return GaussianPair(m.mu)
        if isinstance(m, Laplace):
            return LaplacePair(m.eps)
        if isinstance(m, RandomizedResponse):
            if m.categories == 2:
                return GenericPair(m.eps, Fraction(0))
            return KaryRR(m.eps, m.categories)
        raise TypeError(f"no loss model for {m!r}")

    if isinstance(mech, PoissonSampled):
        b = base(mech.mechanism)
        if mech.q == 1:
            return _Orders(b, None)
        if mech.relation == "replace-one":
            return _Orders(Diluted(b, mech.q), None)
        rem = Subsampled(b, mech.q)
        if mech.direction != "max":  # one order only (docs/mathematics.md §9)
            return _Orders(rem if mech.direction == "remove" else Reversed(rem), None)
        return _Orders(rem, Reversed(rem))
    if isinstance(mech, SampledWithoutReplacement):
        b = base(mech.mechanism)
        return _Orders(b if mech.gamma == 1 else Symmetrized(Subsampled(b, mech.gamma)), None)
    return _Orders(base(mech), None)
