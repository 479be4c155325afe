"""The pairs of the replace-one relation (docs/mathematics.md §9): Poisson subsampling diluted, and
the symmetrised pair of a fixed-size batch drawn without replacement.

Each is a :class:`~exactdp.engines.pld.models.LossModel` built on a mechanism's own model, so the
certified PLD engine composes it like any other (docs/pld.md).
"""

from __future__ import annotations

from fractions import Fraction

from flint import arb

from exactdp.core.errors import PrecisionError
from exactdp.core.numbers import arb_of_fraction
from exactdp.engines.pld.models import Atom, LossModel, Position, Quad, per_precision

__all__ = ["Diluted", "Symmetrized"]


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
