"""The sums a closed-form bound is made of: exact signs, and Arb balls over a composition's groups.

A composition enters the bounds as its groups, ``(eps, delta, count)`` triples (never expanded, so
``k = 10**15`` costs nothing).  Comparisons that decide a branch are exact: a number
``r + sum c_j log q_j`` is zero only if ``r == 0`` and ``prod q_j^c_j == 1`` (Lindemann), which is
checked in integers; everything else is an Arb ball at the current precision.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

from flint import arb, ctx, fmpz

from exactdp.core.errors import InvalidParameterError, PrecisionError
from exactdp.core.numbers import MAX_PREC, ExactReal, arb_of_fraction
from exactdp.model.composition import Composition
from exactdp.model.generic import Mechanism
from exactdp.model.mechanisms import Gaussian

__all__ = [
    "Groups",
    "all_zero",
    "ball",
    "cmp_eps",
    "cmp_retention",
    "delta_sum",
    "eps_sum_parts",
    "expm1",
    "group_sum",
    "groups_of",
    "retention_arb",
    "retention_exact",
    "s1",
    "s2",
    "sign_loglinear",
    "sum_eps_minus",
    "tanh_half",
    "zcdp_parts",
    "zcdp_rho",
]

#: (eps, delta, count) triples: a composition's groups, never expanded
Groups = list[tuple[ExactReal, Fraction, int]]

_EXACT_PRODUCT_BITS = 4_000_000  # above this, exact products of powers are not formed


# -- exact helpers ------------------------------------------------------------------------------

def groups_of(comp: Composition) -> Groups:
    """The (eps, delta, count) groups of a generic composition (refused for specific mechanisms)."""
    comp.require_generic("a closed-form bound")
    return [(m.eps, m.delta, c) for m, c in comp.groups]


def zcdp_parts(comp: Composition, what: str) -> tuple[Groups, Fraction]:
    """The generic (eps, delta, count) groups and the exact zCDP rho of the Gaussians of a composition.

    A Gaussian (sigma, sensitivity D) is rho-zCDP with rho = mu^2/2, mu = D/sigma (Bun-Steinke 2016,
    Prop. 1.6), and rho adds (their Lemma 2.3), so the Gaussians' rho is the exact rational
    sum count mu^2/2; every other specific mechanism (subsampled, Laplace, randomized response) is
    refused by name.

    >>> zcdp_parts(Composition.of(["gaussian:sigma=2,count=3", (1, 0, 2)]), "zcdp")[1]
    Fraction(3, 8)
    """
    groups: Groups = []
    rho = Fraction(0)
    for m, c in comp.groups:
        if isinstance(m, Gaussian):
            rho += c * m.mu2 / 2
        elif isinstance(m, Mechanism):
            groups.append((m.eps, m.delta, c))
        else:
            raise InvalidParameterError(
                f"method={what!r} needs (eps, delta)-DP pairs and Gaussians (no subsampling); this composition has "
                f"a {m.kind} mechanism ({m.spec()}), which the optimal method answers, and the RDP conversions "
                "(--method rdp-cks) bound")
    return groups, rho


def sign_loglinear(r: Fraction, logs: list[tuple[int, Fraction]]) -> int:
    """The exact sign of ``r + sum_j c_j log(q_j)`` (integers c_j, rationals q_j > 0).

    Zero iff ``r == 0`` and ``prod q_j^c_j == 1``: if ``r != 0`` and the sum were 0 then
    ``e^{-r} = prod q_j^c_j`` would be algebraic, contradicting Lindemann's theorem.  So Arb at
    rising precision always terminates unless the value is 0, which is checked in integers.
    """
    logs = [(c, q) for c, q in logs if c != 0 and q != 1]
    if not logs:
        return (r > 0) - (r < 0)
    checked = False
    prec = 128
    while prec <= MAX_PREC:
        with ctx.workprec(prec):
            x = arb_of_fraction(r)
            for c, q in logs:
                x += arb(fmpz(c)) * arb_of_fraction(q).log()
        if x > 0:
            return 1
        if x < 0:
            return -1
        if r == 0 and not checked:
            checked = True
            bits = sum(abs(c) * (q.numerator.bit_length() + q.denominator.bit_length()) for c, q in logs)
            if bits <= _EXACT_PRODUCT_BITS:
                num = den = 1
                for c, q in logs:
                    a, b = (q.numerator, q.denominator) if c > 0 else (q.denominator, q.numerator)
                    num *= a ** abs(c)
                    den *= b ** abs(c)
                if num == den:
                    return 0
        prec *= 2
    raise PrecisionError(f"could not decide the sign of {r} + sum c log q within {MAX_PREC} bits")


def _loglinear(x: ExactReal, c: int = 1) -> tuple[Fraction, list[tuple[int, Fraction]]]:
    if x.kind == "log":
        return Fraction(0), [(c, x.value)]
    return c * x.value, []


def cmp_eps(a: ExactReal, b: ExactReal) -> int:
    """Exact sign of a - b."""
    ra, la = _loglinear(a)
    rb, lb = _loglinear(b, -1)
    return sign_loglinear(ra + rb, la + lb)


def eps_sum_parts(groups: Groups) -> tuple[Fraction, list[tuple[int, Fraction]]]:
    """sum eps_i = r + sum c log q, exactly."""
    r = Fraction(0)
    logs: list[tuple[int, Fraction]] = []
    for e, _, c in groups:
        er, el = _loglinear(e, c)
        r += er
        logs += el
    return r, logs


def sum_eps_minus(groups: Groups, eps_g: ExactReal) -> int:
    """Exact sign of sum eps_i - eps_g."""
    r, logs = eps_sum_parts(groups)
    rg, lg = _loglinear(eps_g, -1)
    return sign_loglinear(r + rg, logs + lg)


def all_zero(groups: Groups) -> bool:
    """Whether every eps_i is 0."""
    return all(e.is_zero() for e, _, _ in groups)


def delta_sum(groups: Groups) -> Fraction:
    """sum delta_i, exactly."""
    return sum((c * d for _, d, c in groups), Fraction(0))


def retention_exact(groups: Groups) -> Fraction | None:
    """prod (1 - delta_i) exactly, when its size is reasonable."""
    bits = sum(c * (d.numerator.bit_length() + d.denominator.bit_length()) for _, d, c in groups if d)
    if bits > _EXACT_PRODUCT_BITS // 8:
        return None
    p = Fraction(1)
    for _, d, c in groups:
        if d:
            p *= (1 - d) ** c
    return p


def cmp_retention(groups: Groups, x: Fraction) -> int:
    """Exact sign of prod (1 - delta_i) - x, for 0 < x <= 1."""
    p = retention_exact(groups)
    if p is not None:
        return (p > x) - (p < x)
    return sign_loglinear(Fraction(0), [(c, 1 - d) for _, d, c in groups if d] + [(-1, x)])


# -- Arb pieces ---------------------------------------------------------------------------------

def ball(q: Fraction | int) -> arb:
    """An Arb ball of the rational q at the current precision."""
    return arb_of_fraction(Fraction(q))


def tanh_half(e: ExactReal) -> arb:
    """tanh(eps/2) = (e^eps - 1)/(e^eps + 1), exact for eps = log(q)."""
    q = e.exp_exact()
    if q is not None:
        return ball((q - 1) / (q + 1))
    return (e.arb() / 2).tanh()


def expm1(e: ExactReal) -> arb:
    """e^eps - 1 as a ball, exact for eps = log(q)."""
    q = e.exp_exact()
    if q is not None:
        return ball(q - 1)
    return e.arb().expm1()


def group_sum(groups: Groups, term: Callable[[ExactReal], arb]) -> arb:
    """sum_i term(eps_i) over the mechanisms, each group counted once with its count."""
    s = arb(0)
    for e, _, c in groups:
        s += arb(fmpz(c)) * term(e)
    return s


def s1(groups: Groups) -> arb:
    """sum eps_i as a ball."""
    return group_sum(groups, lambda e: e.arb())


def s2(groups: Groups) -> arb:
    """sum eps_i^2 as a ball."""
    return group_sum(groups, lambda e: e.arb() ** 2)


def zcdp_rho(groups: Groups) -> arb:
    """sum eps_i tanh(eps_i/2): the zCDP parameter of the composition (Bun-Steinke 2016 Prop. 1.4)."""
    return group_sum(groups, lambda e: e.arb() * tanh_half(e))


def retention_arb(groups: Groups) -> arb:
    """prod (1 - delta_i) as a ball (exp of a sum of log1p, fine for huge counts)."""
    p = retention_exact(groups)
    if p is not None:
        return ball(p)
    s = arb(0)
    for _, d, c in groups:
        if d:
            s += arb(fmpz(c)) * ball(-d).log1p()
    return s.exp()
