"""The Murtagh-Vadhan approximation algorithm for heterogeneous composition (MV Thm 1.7).

Murtagh and Vadhan (TCC 2016; Theory of Computing 14(8) 2018, arXiv:1507.03113, Thm 1.7), as in
Murtagh's PSI-Library ``approxComp`` and docs/mathematics.md §2: with
``beta = eta / (k + sum eps_i + 1)`` and ``eps_0 = log(1 + beta)``, round every eps_i up to
``eps_i' = a_i eps_0``, ``a_i = ceil(eps_i (1 + 1/beta))``; decide exactly, on the rounded
instance, whether ``eps_g = a eps_0`` is feasible, and binary-search the least such a.  The answer
``eps* = a* eps_0 = log((1+beta)^{a*})`` satisfies

    OptComp(delta_g) <= eps* <= OptComp(e^{-eta/2} delta_g) + eta.

Here the rounded instance lives on the grid of ``e^{eps_0} = 1 + beta`` (rational), so the
feasibility test is the exact Murtagh-Vadhan condition over Q (subset-sum counts from
``exactdp.engines.mv``), or its certified fixed-point evaluation when the rationals get too big.
When some eps_i is a logarithm, sum eps_i is replaced by a rational upper bound: beta only gets
smaller, which refines the grid and keeps both inequalities.
"""

from __future__ import annotations

import math
from fractions import Fraction

from flint import ctx

from exactdp.core import progress
from exactdp.core.enclosure import Enclosure
from exactdp.core.errors import InvalidParameterError
from exactdp.core.linlog import LinLog
from exactdp.core.numbers import DEFAULT_DIGITS, ExactReal, fraction_of_arb_endpoints
from exactdp.engines.mv import decide_on_profile, prod_one_minus_delta
from exactdp.engines.mv_atoms import GridProfile
from exactdp.model.composition import Composition

__all__ = ["mv_approx_epsilon", "mv_approx_grid"]


def _upper(e: ExactReal) -> Fraction:
    """A rational upper bound of e (e itself when rational)."""
    if e.kind == "rational":
        return e.value
    with ctx.workprec(64):
        hi = fraction_of_arb_endpoints(e.arb())[1]
    return Fraction(math.ceil(hi * 1024), 1024)  # a short rational keeps 1 + beta short


def _ceil_mul(e: ExactReal, m: Fraction) -> int:
    """ceil(e * m) exactly (m > 0 rational); for e = log q the product is irrational unless q = 1."""
    if e.kind == "rational":
        return math.ceil(e.value * m)
    prec = 64
    while True:
        with ctx.workprec(prec):
            x = (e.arb() * m.numerator) / m.denominator
            c = x.ceil()
        if c.is_exact() and (u := c.unique_fmpz()) is not None:
            return int(u)
        prec *= 2


def mv_approx_grid(comp: Composition, eta: Fraction) -> tuple[Fraction, list[tuple[int, int]]]:
    """(1 + beta, [(a_i, count_i)]): the rounded instance of MV Thm 1.7 (exact)."""
    comp.require_generic("method 'mv-approx'")
    k = comp.k
    total = sum(c * _upper(m.eps) for m, c in comp.groups)
    beta = Fraction(eta) / (k + total + 1)
    mult = 1 + 1 / beta
    return 1 + beta, [(_ceil_mul(m.eps, mult), c) for m, c in comp.groups]


def mv_approx_epsilon(comp: Composition, delta_g: Fraction, *, digits: int = DEFAULT_DIGITS,
                      eta: Fraction | None = None) -> Enclosure:
    """eps* of the Murtagh-Vadhan approximation algorithm (MV Thm 1.7), as an exact log(q).

    Guarantee: OptComp(delta_g) <= eps* <= OptComp(e^{-eta/2} delta_g) + eta.

    >>> from exactdp import Composition
    >>> c = Composition.heterogeneous([("0.1", 0), ("0.2", 0)])
    >>> e = mv_approx_epsilon(c, Fraction(1, 100), eta=Fraction(1, 10))
    >>> e.exact_log == Fraction(34, 33) ** 10, e.algorithm
    (True, 'mv-approx')
    """
    if eta is None:
        raise InvalidParameterError("eta=None: method 'mv-approx' needs eta (for example 0.01)")
    eta = Fraction(eta)
    if eta <= 0:
        raise InvalidParameterError(f"{eta=} must satisfy eta > 0")
    delta_g = Fraction(delta_g)
    pd = prod_one_minus_delta(comp)
    if delta_g < 1 - pd:
        return Enclosure.infinite(digits, "mv-approx")
    base, groups = mv_approx_grid(comp, eta)
    prof = GridProfile(LinLog(Fraction(0), base), groups) if any(a for a, _ in groups) else None
    A = prof.A if prof is not None else 0

    def feasible(a: int) -> bool:
        x = ExactReal.log(base**a) if a else ExactReal.rational(0)
        return decide_on_profile(prof, pd, x, delta_g)

    # least a* in [0, A] with eps_g = a* eps_0 feasible (a = A always is: delta_pure(A eps_0) = 0)
    lo, hi = 0, A
    while lo < hi:
        progress.tick(f"binary search over {hi - lo + 1} grid points")
        mid = (lo + hi) // 2
        if feasible(mid):
            hi = mid
        else:
            lo = mid + 1
    return Enclosure.log_of(base**lo, digits, "mv-approx")
