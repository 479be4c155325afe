"""The exact ends of a composition's privacy loss: its largest finite value and its mass at +inf.

In each order of the neighbouring pair (docs/pld.md §9) the composed loss under P has an essential
supremum ``L_max`` over its finite values (the sum of the mechanisms' own, every step in that order)
and a mass at +inf, ``1 - prod_i (1 - pi_i)^{n_i}``.  They answer three queries exactly, before any
grid is built (docs/pld.md §11):

* delta(eps_g) for eps_g >= L_max in every order is exactly the largest +inf mass (0 when there is
  none): no finite loss lies above eps_g;
* eps(delta_g) when delta_g equals the +inf mass of an order is that order's L_max (+inf when the
  loss is unbounded, a Gaussian), and in particular a composition of pure mechanisms at delta_g = 0
  has eps = L_max, the sum of the per-mechanism maxima (the larger order's);
* a decision at such a point compares exact numbers.

``L_max`` is kept exactly as ``R + log Q`` plus integer multiples of ``log(1 - q + q e^x)`` (a
subsampled step whose base maximum x is not a log of a rational); comparisons refine Arb balls up to
2^14 bits and give up (None: the engine answers) on a tie there.

>>> from exactdp.model.composition import Composition
>>> delta_shortcut(Composition.of(["laplace:scale=10,count=2"]), ExactReal.parse("1"), 30).exact
Fraction(0, 1)
>>> epsilon_shortcut(Composition.of(["rr:eps=log(3),categories=4,count=2", "approx:eps=log(2)"]), Fraction(0), 5).exact_log
Fraction(18, 1)
>>> str(epsilon_shortcut(Composition.of(["laplace:scale=1,count=2", "approx:eps=0.5"]), Fraction(0), 30))
'2.5'
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from flint import arb, ctx

from exactdp.core.enclosure import Enclosure, certify
from exactdp.core.errors import PrecisionError
from exactdp.core.linlog import LinLog
from exactdp.core.numbers import ExactReal, arb_of_fraction
from exactdp.engines.pld.bounded import BoundedLaplacePair
from exactdp.engines.pld.models import (
    DiscreteGaussianPair,
    DiscreteLaplacePair,
    GaussianPair,
    GenericPair,
    KaryRR,
    LaplacePair,
    LossModel,
    MixturePair,
    Reversed,
    Subsampled,
)
from exactdp.engines.pld.orders import model_of
from exactdp.engines.pld.relations import Diluted
from exactdp.model.composition import Composition

__all__ = ["ALGORITHM", "LossEnd", "OrderEnds", "decision_shortcut", "delta_shortcut", "epsilon_shortcut", "finite_inf", "finite_sup",
           "order_ends"]

ALGORITHM = "pld-extremes"

#: the largest exact product (in bits of its numerator and denominator) computed for a +inf mass;
#: beyond it the mass is a certified Arb bracket
MAX_EXACT_BITS = 1 << 16

#: comparisons refine Arb up to this precision; a tie there is left to the engine
MAX_CMP_PREC = 1 << 14


#: the loss 0 exactly
ZERO = LinLog(Fraction(0))


@dataclass(frozen=True)
class LossEnd:
    """An exact end of a finite loss: ``linlog + sum c * log(1 - q + q e^x)`` over ``terms`` (c, q, x),
    or an unbounded one (``infinite``: +inf for a supremum, -inf for an infimum).  A term with q = 1 is
    ``c x`` (a large multiple of a log, :meth:`scale`)."""

    linlog: LinLog = ZERO
    terms: tuple[tuple[int, Fraction, LinLog], ...] = ()
    infinite: bool = False

    def __add__(self, o: LossEnd) -> LossEnd:
        if self.infinite or o.infinite:
            return LossEnd(infinite=True)
        acc: dict[tuple[Fraction, LinLog], int] = {}
        for c, q, x in self.terms + o.terms:
            acc[(q, x)] = acc.get((q, x), 0) + c
        return LossEnd(self.linlog + o.linlog, tuple((c, q, x) for (q, x), c in acc.items() if c))

    def __neg__(self) -> LossEnd:
        return LossEnd(-self.linlog, tuple((-c, q, x) for c, q, x in self.terms), self.infinite)

    def scale(self, n: int) -> LossEnd:
        """n times the end.  ``n log Q`` whose power ``Q^n`` would pass ``MAX_EXACT_BITS`` is kept as the
        term ``(n, 1, log Q)`` (``log(1 - 1 + e^{log Q}) = log Q``): exact, without writing ``Q^n`` out
        (10^5 steps of a Poisson rate 0.001: a million-bit rational, 0.1 s, before any query).

        >>> e = LossEnd(LinLog(Fraction(0), Fraction(1000, 999))).scale(100000)
        >>> e.linlog, [(c, q) for c, q, _ in e.terms]
        (LinLog(R=Fraction(0, 1), Q=Fraction(1, 1)), [(100000, Fraction(1, 1))])
        """
        if self.infinite:
            return self
        terms = tuple((c * n, q, x) for c, q, x in self.terms)
        ll = self.linlog
        if ll.Q != 1 and abs(n) * (ll.Q.numerator.bit_length() + ll.Q.denominator.bit_length()) > MAX_EXACT_BITS:
            return LossEnd(LinLog(ll.R * n), terms) + LossEnd(terms=((n, Fraction(1), LinLog(Fraction(0), ll.Q)),))
        return LossEnd(ll.scale(n), terms)

    def arb(self) -> arb:
        """The value as a ball at the current precision (finite ends only)."""
        v = self.linlog.arb()
        for c, q, x in self.terms:
            v += c * (arb_of_fraction(q) * (x.exp_arb() - 1)).log1p()
        return v

    def sign(self) -> int | None:
        """The exact sign of a finite end, or None when Arb cannot decide it within 2^14 bits."""
        if not self.terms:
            return self.linlog.sign()
        prec = 64
        while prec <= MAX_CMP_PREC:
            with ctx.workprec(prec):
                v = self.arb()
            if v > 0:
                return 1
            if v < 0:
                return -1
            prec *= 2
        return None

    def cmp(self, o: LossEnd) -> int | None:
        """The sign of ``self - o`` for two suprema (+inf above everything; None: undecided)."""
        if self.infinite or o.infinite:
            return (self.infinite > o.infinite) - (self.infinite < o.infinite)
        return (self + (-o)).sign()

    def enclosure(self, digits: int) -> Enclosure:
        """The value: exact when rational, ``exact_log`` when a log of a rational, else certified."""
        if self.infinite:
            return Enclosure.infinite(digits, ALGORITHM)
        if not self.terms:
            ll = self.linlog
            if ll.Q == 1:
                return Enclosure.exact_value(ll.R, digits, ALGORITHM)
            if ll.R == 0:
                return Enclosure.log_of(ll.Q, digits, ALGORITHM)
        enc = certify(self.arb, digits)
        return Enclosure(enc.lower, enc.upper, digits, algorithm=ALGORITHM)


def _const(x: ExactReal | Fraction) -> LossEnd:
    return LossEnd(LinLog.of(x) if isinstance(x, ExactReal) else LinLog(Fraction(x)))


def _g(q: Fraction, x: LossEnd | None) -> LossEnd | None:
    """g(x) = log(1 - q + q e^x), the subsampled image of a base loss x (x None: -inf, g = log(1-q))."""
    if x is None:
        return LossEnd(LinLog(Fraction(0), 1 - q))
    if x.infinite or x.terms:
        return None if x.terms else LossEnd(infinite=True)
    r = x.linlog.exp_exact()
    if r is not None:
        return LossEnd(LinLog(Fraction(0), 1 - q + q * r))
    return LossEnd(terms=((1, q, x.linlog),))


def finite_sup(model: LossModel) -> LossEnd | None:
    """The essential supremum of the finite losses under P (docs/pld.md §11.1), None when unknown."""
    if isinstance(model, GenericPair):
        return None if model.delta == 1 else _const(model.eps)
    if isinstance(model, (KaryRR, LaplacePair)):
        return _const(model.eps)
    if isinstance(model, DiscreteLaplacePair):
        return _const(model.a * model.d)
    if isinstance(model, (GaussianPair, DiscreteGaussianPair, MixturePair)):
        return LossEnd(infinite=True)
    if isinstance(model, Subsampled):
        base = finite_sup(model.base)
        return None if base is None else _g(model.q, base)
    if isinstance(model, Reversed):
        low = finite_inf(model.base)
        return None if low is None else -low
    if isinstance(model, Diluted):  # loss 0 w.p. 1 - q, the base's w.p. q (docs/mathematics.md §9, Theorem 9.2)
        return _with_zero(finite_sup(model.base), 1)
    if isinstance(model, BoundedLaplacePair):
        # the atoms' position E0 = log(1 - q + q e^c) - log(1 - q + q e^{-c}), the largest loss (Theorem 9.9);
        # at q = 1/2 it is c itself: (1 + e^c) / (1 + e^{-c}) = e^c
        if model.q == Fraction(1, 2):
            return _const(model.c)
        up, down = _g(model.q, _const(model.c)), _g(model.q, _const(-model.c))
        return None if up is None or down is None else up + (-down)
    return None


def _with_zero(end: LossEnd | None, side: int) -> LossEnd | None:
    """max(end, 0) (``side`` 1, a supremum) or min(end, 0) (``side`` -1, an infimum): the end of a
    diluted pair, whose loss is 0 with probability 1 - q > 0; None when unknown or undecided."""
    if end is None or end.infinite:
        return end
    sign = end.sign()
    if sign is None:
        return None
    return end if sign * side >= 0 else LossEnd()


def finite_inf(model: LossModel) -> LossEnd | None:
    """The essential infimum of the finite losses (``infinite``: -inf), None when unknown."""
    if isinstance(model, Subsampled):
        if model.base.q_minus_inf_exact() > 0:  # the base's -inf atom lands at log(1-q)
            return _g(model.q, None)
        base = finite_inf(model.base)
        if base is None:
            return None
        return _g(model.q, None if base.infinite else base)  # g(-inf) = log(1-q), an infimum
    if isinstance(model, Reversed):
        top = finite_sup(model.base)
        return None if top is None else -top
    if isinstance(model, Diluted):
        return _with_zero(finite_inf(model.base), -1)
    if isinstance(model, MixturePair):  # the infimum log p_0 (a sensitivity 0 of weight p_0), else -inf
        p0 = model.loss.p0
        return LossEnd(LinLog(Fraction(0), p0)) if p0 else LossEnd(infinite=True)
    sup = finite_sup(model)  # the base pairs are symmetric: the losses are -L of themselves
    return None if sup is None else -sup


@dataclass(frozen=True)
class OrderEnds:
    """One order's ends: the composed ``sup`` of the finite losses, and the +inf masses (pi, n)."""

    sup: LossEnd
    masses: tuple[tuple[Fraction, int], ...]

    def inf_mass_exact(self) -> Fraction | None:
        """1 - prod (1 - pi)^n exactly, or None when the product is too large to write out."""
        bits = sum(n * ((1 - p).numerator.bit_length() + (1 - p).denominator.bit_length()) for p, n in self.masses)
        if bits > MAX_EXACT_BITS:
            return None
        prod = Fraction(1)
        for p, n in self.masses:
            prod *= (1 - p) ** n
        return 1 - prod

    def inf_mass_arb(self) -> arb:
        """1 - prod (1 - pi)^n as a ball at the current precision (no huge powers)."""
        s = arb(0)
        for p, n in self.masses:
            s += n * (-arb_of_fraction(p)).log1p() if p < 1 else arb("-inf")
        return -s.expm1() if s.is_finite() else arb(1)

    def mass_cmp(self, x: Fraction) -> int | None:
        """The sign of (the +inf mass - x), None when undecided within 2^14 bits."""
        m = self.inf_mass_exact()
        if m is not None:
            return (m > x) - (m < x)
        prec = 64
        while prec <= MAX_CMP_PREC:
            with ctx.workprec(prec):
                d = self.inf_mass_arb() - arb_of_fraction(x)
            if d > 0:
                return 1
            if d < 0:
                return -1
            prec *= 2
        return None


def order_ends(comp: Composition) -> list[OrderEnds] | None:
    """Both orders' ends of a composition (one order when every mechanism is symmetric), or None when
    some mechanism's largest finite loss is not known exactly."""
    orders: list[list[tuple[LossModel, int]]] = [[], []]
    asym = False
    for mech, count in comp.groups:
        o = model_of(mech)
        orders[0].append((o.remove, count))
        orders[1].append((o.add if o.add is not None else o.remove, count))
        asym = asym or o.add is not None
    out = []
    for groups in orders[: 2 if asym else 1]:
        total = LossEnd()
        masses = []
        for model, count in groups:
            sup = finite_sup(model)
            if sup is None:
                return None
            total = total + sup.scale(count)
            p = model.p_inf_exact()
            if p > 0:
                masses.append((p, count))
        out.append(OrderEnds(total, tuple(masses)))
    return out


def delta_shortcut(comp: Composition, eps_g: ExactReal, digits: int) -> Enclosure | None:
    """delta(eps_g) exactly when eps_g is at or above every order's largest finite loss: the largest
    +inf mass (docs/pld.md §11.2); None when it is not (or a comparison ties within 2^14 bits)."""
    ends = order_ends(comp)
    if ends is None:
        return None
    at = _const(eps_g)
    for o in ends:
        c = o.sup.cmp(at)
        if c is None or c > 0:
            return None
    exact = [o.inf_mass_exact() for o in ends]
    if all(m is not None for m in exact):
        return Enclosure.exact_value(max(m for m in exact if m is not None), digits, ALGORITHM)
    lows, highs = [], []
    for o in ends:
        if not o.masses:
            lows.append(Fraction(0))
            highs.append(Fraction(0))
            continue
        e = certify(o.inf_mass_arb, digits)
        lows.append(Fraction(e.lower))  # type: ignore[arg-type]
        highs.append(Fraction(e.upper))  # type: ignore[arg-type]
    return Enclosure(max(lows), max(highs), digits, algorithm=ALGORITHM).clamped(Fraction(0), Fraction(1))


def epsilon_shortcut(comp: Composition, delta_g: Fraction, digits: int) -> Enclosure | None:
    """eps(delta_g) exactly when delta_g equals an order's +inf mass (docs/pld.md §11.3): that order's
    largest finite loss (+inf when unbounded) if it is the largest of the orders that can matter;
    +inf when some order's +inf mass exceeds delta_g; None otherwise (the engine answers)."""
    ends = order_ends(comp)
    if ends is None:
        return None
    ties: list[OrderEnds] = []
    rest: list[OrderEnds] = []
    for o in ends:
        c = o.mass_cmp(delta_g)
        if c is None:
            return None
        if c > 0:  # delta(eps) >= the +inf mass > delta_g at every eps
            return Enclosure.infinite(digits, ALGORITHM)
        (ties if c == 0 else rest).append(o)
    if not ties:
        return None
    top = ties[0].sup
    for o in ties[1:]:
        c = o.sup.cmp(top)
        if c is None:
            return None
        if c > 0:
            top = o.sup
    for o in rest:  # eps of such an order is at most its sup (delta there is its mass < delta_g)
        c = o.sup.cmp(top)
        if c is None or c > 0:
            return None
    try:
        return top.enclosure(digits)
    except PrecisionError:
        return None


def decision_shortcut(comp: Composition, eps_g: ExactReal,
                      delta_g: Fraction) -> tuple[str, Fraction, Fraction] | None:
    """("meets" | "fails", lower, upper) from the exact ends alone (docs/pld.md §11.4), else None.

    In an order with +inf mass m and largest finite loss L: delta(eps_g) = m when eps_g >= L, and
    delta(eps_g) > m when eps_g < L.  So some m > delta_g fails, some m = delta_g with eps_g < L
    fails (delta is above delta_g, however little), and eps_g >= L with m <= delta_g in every order
    meets; [lower, upper] is a certified bracket of delta(eps_g).
    """
    ends = order_ends(comp)
    if ends is None:
        return None
    at = _const(eps_g)
    meets = True
    lows, highs = [Fraction(0)], [Fraction(0)]
    for o in ends:
        m, c = o.mass_cmp(delta_g), o.sup.cmp(at)
        if m is None:
            return None
        exact = o.inf_mass_exact()
        if m > 0:
            return "fails", exact if exact is not None else delta_g, Fraction(1)
        if c is not None and c > 0 and m == 0:
            return "fails", delta_g, Fraction(1)
        if c is None or c > 0:
            meets = False
        else:
            lows.append(exact if exact is not None else Fraction(0))
            highs.append(exact if exact is not None else delta_g)
    return ("meets", max(lows), max(highs)) if meets else None
