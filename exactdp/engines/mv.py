"""Optimal heterogeneous composition: Murtagh-Vadhan Thm 1.5, exact or certified for any eps_i.

Murtagh and Vadhan (TCC 2016; Theory of Computing 14(8) 2018, arXiv:1507.03113, Thm 1.5), as
corrected in docs/mathematics.md §2: the composition of (eps_i, delta_i)-DP mechanisms is
(eps_g, delta_g)-DP iff ``delta_pure(eps_g) <= t`` with ``t = 1 - (1-delta_g)/prod(1-delta_i)`` and

    delta_pure(eps_g) = 1/prod(1+e^{eps_i}) * sum_S ( e^{eps(S)} - e^{eps_g} e^{eps(S^c)} )_+ .

Write ``p_S = e^{eps(S)}/prod(1+e^{eps_i})`` (the P-probability of the outcome S of the product of
randomized-response pairs) and ``L_S = eps(S) - eps(S^c)`` (its privacy loss).  Then
``q_S = p_{S^c}`` and ``delta_pure(x) = sum_{L_S > x} p_S - e^x q_S``.  Everything below groups the
outcomes into *atoms* of equal loss, sorted by loss; the atom list is symmetric (atom n-1-i is the
complement of atom i), so with suffix sums ``SP[m] = sum_{i>=m} p_i`` and
``SQ[m] = sum_{i<=n-1-m} p_i`` we get ``delta_pure(x) = SP[m] - e^x SQ[m]``, m the first atom with
loss > x (affine in e^x between breakpoints: the closed form of the inverse, docs/mathematics.md §2).

Ways to build the atoms (the atom profile is :mod:`exactdp.engines.mv_profile`):

* ``exact-counting`` and ``enumeration`` (``brute-force`` when all mechanisms differ), exact
  (:mod:`exactdp.engines.mv_atoms`), answered here;
* ``binomial-tails`` (:mod:`exactdp.engines.tails`): one group with a huge count and few joint
  outcomes of the others: incomplete beta functions, cost independent of the count.
* ``pld`` / ``pld-lattice`` (:mod:`exactdp.engines.pld`): anything else (many distinct off-grid values,
  huge counts of several values): a certified bracket from a dominating and a dominated pair on a
  grid, second order in the grid step (docs/pld.md), exact up to truncation on a lattice.

Decisions (``mv_decide``) are exact: rational arithmetic when everything is rational; otherwise
the enclosure is refined until the sign is certain, after an exact test of the identical case by
collecting exponents (Lindemann-Weierstrass: sum_j c_j e^{r_j} with distinct rationals r_j and
rational c_j vanishes only if every c_j does; exponents here are ``r + log(q)`` with r, q rational,
i.e. ``q e^r``).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from flint import arb

from exactdp.core import progress
from exactdp.core.enclosure import Enclosure, certify
from exactdp.core.linlog import LinLog
from exactdp.core.numbers import DEFAULT_DIGITS, ExactReal, arb_of_fraction
from exactdp.engines.mv_atoms import build_profile
from exactdp.engines.mv_profile import NoExactProfile, Profile
from exactdp.model.composition import Composition

__all__ = [
    "EXACT_PD_BITS",
    "decide_on_profile",
    "delta_on_profile",
    "eps_groups",
    "epsilon_on_profile",
    "exact_profile",
    "mv_decide",
    "mv_delta",
    "mv_epsilon",
    "prod_one_minus_delta",
]


def prod_one_minus_delta(comp: Composition) -> Fraction:
    """prod (1 - delta_i)^{n_i}, exactly (docs/mathematics.md §2)."""
    comp.require_generic("the Murtagh-Vadhan engine")
    pd = Fraction(1)
    for m, c in comp.groups:
        pd *= (1 - m.delta) ** c
    return pd


def eps_groups(comp: Composition) -> list[tuple[ExactReal, int]]:
    """The (eps_i, n_i) pairs of a generic composition (what its pure part depends on)."""
    return [(m.eps, c) for m, c in comp.groups]


# -- delta, epsilon, decide on a profile ----------------------------------------------------------

def delta_on_profile(prof: Profile | None, pd: Fraction, eps_g: ExactReal, digits: int) -> Enclosure:
    """delta_opt(eps_g) on a profile with pd = prod (1 - delta_i)^{n_i} (MV Thm 1.5)."""
    alg = prof.algorithm if prof else "exact-counting"
    x = LinLog.of(eps_g)
    m = prof.index_above(x) if prof else 0
    if prof is None or m >= prof.n:
        return Enclosure.exact_value(1 - pd, digits, alg)
    ex = x.exp_exact()
    if prof.exact and ex is not None:
        sp, sq = prof.sp_sq_exact(m)
        return Enclosure.exact_value(1 - pd * (1 - (sp - ex * sq)), digits, alg)

    one_minus_pd = arb_of_fraction(1 - pd) if pd != 1 else None

    def compute() -> arb:
        # delta_opt = (1 - pd) + pd * delta_pure: two nonnegative terms, delta_pure > 0 here
        sp, sq = prof.sp_sq_arb(m)
        dp = sp - x.exp_arb() * sq
        v = arb_of_fraction(pd) * dp
        return v if one_minus_pd is None else v + arb_of_fraction(1 - pd)

    enc = certify(compute, digits)
    return Enclosure(enc.lower, enc.upper, digits, algorithm=alg)


def epsilon_on_profile(prof: Profile | None, pd: Fraction, delta_g: Fraction, digits: int) -> Enclosure:
    """The optimal eps at delta_g on a profile with pd = prod (1 - delta_i)^{n_i} (MV Thm 1.5)."""
    alg = prof.algorithm if prof else "exact-counting"
    # t = 1 - (1 - delta_g)/prod(1 - delta_i); no eps works iff t < 0 (docs/mathematics.md §1)
    t = 1 - (1 - delta_g) / pd
    if t < 0:
        return Enclosure.infinite(digits, alg)
    zero = LinLog(Fraction(0))
    if prof is None:
        return Enclosure.exact_value(Fraction(0), digits, alg)
    if t == 0:
        # delta_pure(x) > 0 exactly when x < sum eps_i (the largest loss), and 0 from there on
        return prof.loss(prof.n - 1).enclosure(digits, alg)
    m0 = prof.index_above(zero)
    if m0 >= prof.n or prof.sign_dp_minus_t(zero, m0, t) <= 0:
        return Enclosure.exact_value(Fraction(0), digits, alg)
    # smallest m >= m0 with delta_pure(L_m) <= t (true at m = n-1, where delta_pure = 0)
    lo, hi = m0, prof.n - 1
    while lo < hi:
        progress.tick(f"locating the optimal segment among {hi - lo + 1} atoms")
        mid = (lo + hi) // 2
        if prof.sign_dp_minus_t(prof.loss(mid), mid + 1, t) <= 0:
            hi = mid
        else:
            lo = mid + 1
    m = lo
    Lm = prof.loss(m)
    if prof.sign_dp_minus_t(Lm, m + 1, t) == 0:
        return Lm.enclosure(digits, alg)
    # on (L_{m-1}, L_m) delta_pure(x) = SP[m] - e^x SQ[m], so eps* = log((SP[m] - t)/SQ[m])
    if prof.exact:
        sp, sq = prof.sp_sq_exact(m)
        return Enclosure.log_of((sp - t) / sq, digits, alg)
    def compute() -> arb:
        sp, sq = prof.sp_sq_arb(m)
        return ((sp - arb_of_fraction(t)) / sq).log()

    enc = certify(compute, digits)
    return Enclosure(enc.lower, enc.upper, digits, algorithm=alg)


def decide_on_profile(prof: Profile | None, pd: Fraction, eps_g: ExactReal, delta_g: Fraction) -> bool:
    """Exactly whether delta_opt(eps_g) <= delta_g, on a profile with pd = prod (1 - delta_i)^{n_i}."""
    t = 1 - (1 - delta_g) / pd
    if t < 0:
        return False
    if prof is None:
        return True
    x = LinLog.of(eps_g)
    m = prof.index_above(x)
    return prof.sign_dp_minus_t(x, m, t) <= 0


# -- public API ----------------------------------------------------------------------------------

#: the largest size (bits) of the exact prod (1 - delta_i)^{n_i} the exact engine forms
EXACT_PD_BITS = 4_000_000


def exact_profile(comp: Composition) -> Profile | None:
    """The affordable exact profile of a generic composition (None when every eps_i is 0).

    Raises :class:`NoExactProfile` when none is affordable: too many distinct off-grid values, or
    counts whose exact product prod (1 - delta_i)^{n_i} would pass :data:`EXACT_PD_BITS` bits.
    """
    prof = build_profile(eps_groups(comp))
    bits = sum(c * max((1 - m.delta).numerator.bit_length(), (1 - m.delta).denominator.bit_length())
               for m, c in comp.groups if m.delta)
    if bits > EXACT_PD_BITS:
        raise NoExactProfile(f"prod (1 - delta_i)^n_i would take {bits} bits")
    return prof


_BUILD: Any = object()  # the default of ``profile``: build it here


def mv_delta(comp: Composition, eps_g: ExactReal, *, digits: int = DEFAULT_DIGITS,
             profile: Profile | None = _BUILD) -> Enclosure:
    """The optimal total delta at eps_g of any list of mechanisms (Murtagh-Vadhan Thm 1.5).

    delta_opt(eps_g) = 1 - prod(1-delta_i) (1 - delta_pure(eps_g)), docs/mathematics.md §2.  Exact or
    certified to ``digits`` on the exact ``profile`` (built here when not given; a composition with
    no affordable one raises :class:`NoExactProfile`, and :mod:`exactdp.route` sends it elsewhere).

    >>> from exactdp import Composition, ExactReal
    >>> c = Composition.heterogeneous([("1", "0.1"), ("2", "0.2")])
    >>> mv_delta(c, ExactReal.parse("3")).exact
    Fraction(7, 25)
    """
    eps_g = ExactReal.parse(eps_g, "eps_g")
    prof = exact_profile(comp) if profile is _BUILD else profile
    return delta_on_profile(prof, prod_one_minus_delta(comp), eps_g, digits)


def mv_epsilon(comp: Composition, delta_g: Fraction, *, digits: int = DEFAULT_DIGITS,
               profile: Profile | None = _BUILD) -> Enclosure:
    """The optimal eps at total delta_g (Murtagh-Vadhan Thm 1.5); +inf iff delta_g < 1 - prod(1-delta_i).

    Closed form on the right segment: eps* = max(0, log((A_m - t)/B_m)), docs/mathematics.md §2.

    >>> from exactdp import Composition
    >>> c = Composition.heterogeneous([("log(2)", 0), ("log(4)", 0)])
    >>> mv_epsilon(c, Fraction(1, 10)).exact_log
    Fraction(13, 2)
    """
    delta_g = Fraction(delta_g)
    prof = exact_profile(comp) if profile is _BUILD else profile
    return epsilon_on_profile(prof, prod_one_minus_delta(comp), delta_g, digits)


def mv_decide(comp: Composition, eps_g: ExactReal, delta_g: Fraction, *,
              profile: Profile | None = _BUILD) -> bool:
    """Exactly whether the composition is (eps_g, delta_g)-DP (Murtagh-Vadhan Thm 1.5), never a guess.

    On an exact profile the decision is exact (signs of exact sums, Lindemann-Weierstrass for the
    identical case; docs/contracts.md §1.5).

    >>> from exactdp import Composition, ExactReal
    >>> c = Composition.heterogeneous([("1", "0.1"), ("2", "0.2")])
    >>> mv_decide(c, ExactReal.parse("3"), Fraction(28, 100)), mv_decide(c, ExactReal.parse("3"), Fraction(27, 100))
    (True, False)
    """
    eps_g = ExactReal.parse(eps_g, "eps_g")
    delta_g = Fraction(delta_g)
    prof = exact_profile(comp) if profile is _BUILD else profile
    return decide_on_profile(prof, prod_one_minus_delta(comp), eps_g, delta_g)
