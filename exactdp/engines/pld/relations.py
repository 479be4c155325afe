"""The pairs of the replace-one relation (docs/mathematics.md §9): Poisson subsampling diluted, and
the symmetrised pair of a fixed-size batch drawn without replacement; the labelled mixture of pairs
(the truncated subsampled Gaussian, Theorem 9.4) and the randomized response of dp_accounting's
replace-special relation (Theorem 9.5).

Each is a :class:`~exactdp.engines.pld.models.LossModel` built on a mechanism's own model, so the
certified PLD engine composes it like any other (docs/pld.md).
"""

from __future__ import annotations

from fractions import Fraction

from flint import arb, ctx, fmpq

from exactdp.core.errors import PrecisionError
from exactdp.core.linlog import LinLog
from exactdp.core.numbers import ExactReal, arb_of_fraction
from exactdp.engines.pld.models import Atom, LossModel, Position, Quad, per_precision

__all__ = ["Diluted", "Labelled", "SpecialRR", "Symmetrized"]


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


class Labelled(LossModel):
    """The labelled mixture of pairs: with probability w_i the pair (P_i, Q_i), the label i seen by the
    observer, P = sum_i w_i (i, P_i) and Q = sum_i w_i (i, Q_i) on disjoint copies.  Its loss law is the
    w-mixture of the parts' laws (under P and under Q), so its profile is sum_i w_i delta_i(eps)
    (docs/mathematics.md §9, Theorem 9.4).  The weights are exact rationals given as reduced integer
    pairs ``(numerator, denominator)`` summing to 1 (a huge one costs no Fraction)."""

    name = "labelled"

    def __init__(self, parts: tuple[tuple[tuple[int, int], LossModel], ...]) -> None:
        if not parts:
            raise ValueError("a labelled mixture needs parts")
        self.parts = tuple((w, m) for w, m in parts if w[0] != 0)
        self._w: dict[int, list[arb]] = {}

    def _weights(self) -> list[arb]:
        return per_precision(self._w, lambda: [arb(fmpq(n, d)) for (n, d), _ in self.parts])

    def key(self) -> tuple:
        return ("labelled", tuple((w, m.key()) for w, m in self.parts))

    def atoms(self) -> list[Atom]:
        out: list[Atom] = []
        for w, (_, m) in zip(self._weights(), self.parts):
            out.extend((pos, w * pm, w * qm) for pos, pm, qm in m.atoms())
        return out

    def has_continuous(self) -> bool:
        return any(m.has_continuous() for _, m in self.parts)

    def cdf(self, e: arb) -> Quad:
        acc = [arb(0), arb(0), arb(0), arb(0)]
        for w, (_, m) in zip(self._weights(), self.parts):
            if m.has_continuous():
                acc = [a + w * v for a, v in zip(acc, m.cdf(e))]
        return acc[0], acc[1], acc[2], acc[3]

    def cont_totals(self) -> tuple[arb, arb]:
        tp, tq = arb(0), arb(0)
        for w, (_, m) in zip(self._weights(), self.parts):
            a, b = m.cont_totals()
            tp, tq = tp + w * a, tq + w * b
        return tp, tq

    def p_inf(self) -> arb:
        return sum((w * m.p_inf() for w, (_, m) in zip(self._weights(), self.parts)), arb(0))

    def q_minus_inf(self) -> arb:
        return sum((w * m.q_minus_inf() for w, (_, m) in zip(self._weights(), self.parts)), arb(0))

    def p_inf_exact(self) -> Fraction:
        return sum((Fraction(*w) * m.p_inf_exact() for w, m in self.parts if m.p_inf_exact()), Fraction(0))

    def q_minus_inf_exact(self) -> Fraction:
        return sum((Fraction(*w) * m.q_minus_inf_exact() for w, m in self.parts if m.q_minus_inf_exact()),
                   Fraction(0))

    def support(self) -> tuple[float, float]:
        ends = [m.support() for _, m in self.parts]
        return min(lo for lo, _ in ends), max(hi for _, hi in ends)


class SpecialRR(LossModel):
    """k-ary randomized response against the uniform output of dp_accounting's special record, "remove"
    order: P = R(x) (x w.p. e^eps/Z, each other value 1/Z, Z = e^eps + k - 1) against Q uniform 1/k.
    Two atoms: log(k e^eps/Z) (P-mass e^eps/Z, Q-mass 1/k) and log(k/Z) (P-mass (k-1)/Z, Q-mass
    (k-1)/k), exact logarithms of rationals when e^eps is rational (docs/mathematics.md §9, Theorem 9.5)."""

    name = "rr-special"

    def __init__(self, eps: ExactReal, k: int) -> None:
        self.eps, self.k = eps, k

    def key(self) -> tuple:
        return ("rr-special", str(self.eps), self.k)

    def _positions(self) -> tuple[Position, Position]:
        r, k = self.eps.exp_exact(), self.k
        if r is not None:
            z = r + k - 1
            return Position(linlog=LinLog(Fraction(0), k * r / z)), Position(linlog=LinLog(Fraction(0), Fraction(k) / z))
        return (Position(fn=lambda: (k * self.eps.exp_arb() / (self.eps.exp_arb() + k - 1)).log()),
                Position(fn=lambda: (arb(k) / (self.eps.exp_arb() + k - 1)).log()))

    def atoms(self) -> list[Atom]:
        x: arb = self.eps.exp_arb()
        z = x + (self.k - 1)
        top, rest = self._positions()
        return [(top, x / z, arb(1) / self.k), (rest, (self.k - 1) / z, arb(self.k - 1) / self.k)]

    def support(self) -> tuple[float, float]:
        import math

        with ctx.workprec(53):
            e = float(self.eps.arb().mid())  # float ok: grid range only
        z = math.exp(min(e, 700)) + self.k - 1  # float ok: grid range only
        return math.log(self.k / z), math.log(self.k) + e - math.log(z)  # float ok: grid range only
