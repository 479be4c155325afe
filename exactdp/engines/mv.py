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

Three ways to build the atoms:

* ``exact-counting``: every eps_i is an integer multiple a_i of one eps_0 (rational eps_i, or
  eps_i = log q_i with q_i = q_0^{a_i}) with a moderate A = sum a_i.  The atom weights are the
  coefficients of prod_i (1 + y^{a_i} x^{a_i}) / (1 + y^{a_i}), y = e^{eps_0}: exact integers
  (fmpz_poly) when y is rational, else certified fixed-point lower/upper integer polynomials
  (all coefficients are >= 0, so floor/ceil after every product keep rigorous bounds).
* ``enumeration`` (``brute-force`` when all mechanisms differ): few distinct eps values with
  moderate counts, any eps (seven significant digits, mixed rationals and logs): one atom per
  vector of how many of each value are in S.
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

import itertools
import math
from collections.abc import Sequence
from fractions import Fraction
from functools import cmp_to_key
from typing import Any

import gmpy2
from flint import arb, ctx, fmpz, fmpz_poly

from exactdp.core import progress
from exactdp.core.enclosure import Enclosure, certify
from exactdp.core.errors import PrecisionError
from exactdp.core.linlog import LinLog
from exactdp.core.numbers import DEFAULT_DIGITS, MAX_PREC, ExactReal, arb_of_fraction, fraction_of_arb_endpoints
from exactdp.model.composition import Composition

__all__ = [
    "EXACT_PD_BITS",
    "EnumProfile",
    "GridProfile",
    "NoExactProfile",
    "Profile",
    "build_profile",
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

#: Largest A = sum a_i for exact counting on a common grid.
GRID_CAP = 2_000_000
#: Largest number of enumerated atoms (before merging equal losses).
ENUM_CAP = 1_000_000
#: First precision (bits) of sign tests: that of ``certify`` at 30 digits, so one set of weights serves both.
_START_PREC = int(DEFAULT_DIGITS * 3.33) + 64
#: Precision (bits) after which an undecided sign triggers the exact identity test.
_IDENTITY_PREC = 1024


def _cmp(a: LinLog, b: LinLog) -> int:
    return (a - b).sign()


# -- the atom profile ---------------------------------------------------------------------------

def _ball(lo: int, hi: int, D: int) -> arb:
    """An Arb ball containing [lo/D, hi/D]."""
    d = arb(fmpz(D))
    a = arb(fmpz(lo)) / d
    return a if lo == hi else a.union(arb(fmpz(hi)) / d)


class Profile:
    """Atoms of the privacy-loss distribution of a product of randomized-response pairs.

    Subclasses give ``n``, ``loss(i)`` (ascending, complement-symmetric), ``exact`` (weights are
    exact rationals), ``_weights(prec)`` -> (lo, err, D): integers lo_i with lo_i/D <= p_i and
    sum_i (p_i - lo_i/D) <= err/D (err = 0 when exact),
    and ``exact_terms(i)`` -> [(N, LinLog x)] with p_i * Z = sum N e^x, Z = sum of all terms.
    """

    n: int
    exact: bool
    algorithm: str

    def __init__(self) -> None:
        self._cache: dict[int, tuple[list[int], list[int], int]] = {}

    def loss(self, i: int) -> LinLog:
        raise NotImplementedError

    def _weights(self, prec: int) -> tuple[list[int], int, int]:
        raise NotImplementedError

    def exact_terms(self, i: int) -> list[tuple[int, LinLog]]:
        raise NotImplementedError

    # suffix sums, cached by precision (a higher precision serves a lower one)
    def sums(self, prec: int) -> tuple[list[int], int, int]:
        key = 0 if self.exact else prec
        for kk in sorted(self._cache):
            if kk >= key:
                return self._cache[kk]
        lo, err, D = self._weights(key)
        slo = [0] * (self.n + 1)
        a = 0
        for i in range(self.n - 1, -1, -1):
            a += lo[i]
            slo[i] = a
        self._cache[key] = (slo, err, D)
        return self._cache[key]

    def sp_sq_exact(self, m: int) -> tuple[Fraction, Fraction]:
        slo, _, D = self.sums(0)
        sp = Fraction(slo[m], D)
        sq = Fraction(slo[0] - slo[self.n - m], D)
        return sp, sq

    def sp_sq_arb(self, m: int) -> tuple[arb, arb]:
        """Balls of SP[m] = sum_{i>=m} p_i and SQ[m] = sum_{i<n-m} p_i at the current precision."""
        slo, err, D = self.sums(ctx.prec)
        j = self.n - m
        sq = slo[0] - slo[j]
        return _ball(slo[m], slo[m] + err, D), _ball(sq, sq + err, D)

    def index_above(self, x: LinLog) -> int:
        """The first atom whose loss is > x (n if none), by exact comparisons."""
        lo, hi = 0, self.n
        while lo < hi:
            mid = (lo + hi) // 2
            if _cmp(self.loss(mid), x) > 0:
                hi = mid
            else:
                lo = mid + 1
        return lo

    # delta_pure(x) - t on the segment of atoms >= m: exact sign
    def sign_dp_minus_t(self, x: LinLog, m: int, t: Fraction) -> int:
        if m >= self.n:
            return (0 > t) - (0 < t)
        if t <= 0:
            # delta_pure > 0 here: the top atom (S = everything, weight prod y/(1+y) > 0) has
            # loss > x, and every other term is >= 0
            return 1
        ex = x.exp_exact()
        if self.exact and ex is not None:
            sp, sq = self.sp_sq_exact(m)
            v = sp - ex * sq - t
            return (v > 0) - (v < 0)
        prec = _START_PREC
        tried_identity = False
        while prec <= MAX_PREC:
            progress.tick(f"deciding a sign at {prec} bits")
            with ctx.workprec(prec):
                sp, sq = self.sp_sq_arb(m)
                v = sp - x.exp_arb() * sq - arb_of_fraction(t)
            if v > 0:
                return 1
            if v < 0:
                return -1
            if prec >= _IDENTITY_PREC and not tried_identity:
                tried_identity = True
                if self._identically_equal(x, m, t):
                    return 0
            prec *= 2
        raise PrecisionError(f"could not decide the sign of delta_pure - t within {MAX_PREC} bits")

    def _identically_equal(self, x: LinLog, m: int, t: Fraction) -> bool:
        # Z (delta_pure(x) - t) = sum_{i>=m} [T_i - e^x T_{n-1-i}] - t sum_i T_i with
        # T_i = sum N e^{r + log q}: collect the coefficient of every distinct e^r exactly;
        # by Lindemann-Weierstrass it vanishes iff every collected coefficient is 0.
        coef: dict[Fraction, Fraction] = {}

        def add(c: Fraction, y: LinLog) -> None:
            coef[y.R] = coef.get(y.R, Fraction(0)) + c * y.Q

        for i in range(self.n):
            for N, y in self.exact_terms(i):
                add(-t * N, y)
                if i >= m:
                    add(Fraction(N), y)
                if self.n - 1 - i >= m:
                    add(Fraction(-N), y + x)
        return all(v == 0 for v in coef.values())


def _to_fixed(x: arb, F: int) -> tuple[int, int]:
    """floor / ceil of the endpoints of x * 2^F (x a finite ball), in integer arithmetic."""
    if not x.is_finite():
        raise PrecisionError(f"{x=} is not a finite ball")
    m, e = (int(v) for v in x.mid().man_exp())
    r, re = (int(v) for v in x.rad().man_exp())
    c = min(e, re)
    mid, rad = m << (e - c), r << (re - c)  # endpoints are (mid -/+ rad) * 2^c
    k = c + F
    lo, hi = mid - rad, mid + rad
    if k >= 0:
        return max(lo << k, 0), hi << k
    return max(lo >> -k, 0), -((-hi) >> -k)


class GridProfile(Profile):
    """eps_i = a_i eps_0 exactly: atoms s = 0..A with loss (2s - A) eps_0 (exact counting)."""

    #: Largest A^2 * bits(e^{eps_0}) (the size of the exact weights) for exact rational weights;
    #: past it, certified fixed point.
    EXACT_BITS = 1 << 28

    def __init__(self, eps0: LinLog, groups: Sequence[tuple[int, int]]) -> None:
        super().__init__()
        self.eps0 = eps0
        self.groups = [(a, c) for a, c in groups if a > 0]
        self.A = sum(a * c for a, c in self.groups)
        self.n = self.A + 1
        bits = max(eps0.Q.numerator.bit_length(), eps0.Q.denominator.bit_length())
        self.exact = eps0.R == 0 and self.A * self.A * bits <= self.EXACT_BITS
        self.algorithm = "exact-counting"
        self._counts: list[int] | None = None

    def loss(self, i: int) -> LinLog:
        return self.eps0.scale(2 * i - self.A)

    def index_above(self, x: LinLog) -> int:
        """First s with (2s - A) eps_0 > x: a candidate from x / eps_0 in Arb, checked exactly."""
        if x.Q == 1 and self.eps0.Q == 1:
            r = x.R / self.eps0.R  # (2s - A) > r  <=>  s > (A + r)/2
            return min(max(math.floor((self.A + r) / 2) + 1, 0), self.n)
        with ctx.workprec(128):
            r = fraction_of_arb_endpoints((x.arb() / self.eps0.arb()).mid())[0]
        m = math.floor((self.A + r) / 2) + 1
        m = min(max(m, 0), self.n)
        while m > 0 and _cmp(self.loss(m - 1), x) > 0:
            m -= 1
        while m < self.n and _cmp(self.loss(m), x) <= 0:
            m += 1
        return m

    def _weights(self, prec: int) -> tuple[list[int], int, int]:
        if self.exact:
            assert self.eps0.R == 0
            # e^{eps_0} = u/v: coefficient s of prod (v^a + u^a x^a)^c is N[s] u^s v^{A-s}
            y = self.eps0.Q
            u, v = y.numerator, y.denominator
            poly = fmpz_poly([1])
            D = 1
            for a, c in self.groups:
                base = [0] * (a + 1)
                base[0], base[a] = v**a, u**a
                poly = poly * fmpz_poly(base) ** c
                D *= (u**a + v**a) ** c
            co = [int(x) for x in poly.coeffs()]
            co += [0] * (self.n - len(co))
            return co, 0, D
        F = prec + self.n.bit_length() + 2 * len(self.groups).bit_length() + 16
        wprec = F + 32
        los: list[tuple[fmpz_poly, int]] = []
        with ctx.workprec(wprec):
            w = self.eps0.exp_arb()
            for a, c in self.groups:
                y = w**a
                # the binomial law C(c,j) y^j / (1+y)^c, term by term
                term = (1 + y) ** (-c)
                lo = [0] * (a * c + 1)
                err = 0
                for j in range(c + 1):
                    if j:
                        term = term * y * (c - j + 1) / j
                    lo[j * a], h = _to_fixed(term, F)
                    err += h - lo[j * a]
                los.append((fmpz_poly(lo), err))
        lo_p, err = _tree(los, F)
        lo_c = [int(x) for x in lo_p.coeffs()] + [0] * self.n
        return lo_c[: self.n], err, 1 << F

    def counts(self) -> list[int]:
        if self._counts is None:
            poly = fmpz_poly([1])
            for a, c in self.groups:
                base = [0] * (a + 1)
                base[0] = base[a] = 1
                poly = poly * fmpz_poly(base) ** c
            co = [int(x) for x in poly.coeffs()]
            self._counts = co + [0] * (self.n - len(co))
        return self._counts

    def exact_terms(self, i: int) -> list[tuple[int, LinLog]]:
        N = self.counts()[i]
        return [(N, self.eps0.scale(i))] if N else []


def _tree(polys: list[tuple[fmpz_poly, int]], F: int) -> tuple[fmpz_poly, int]:
    """Product of fixed-point lower bounds of probability laws (scale 2^F), with an L1 error.

    If lo_a <= p_a coefficient-wise with ||p_a - lo_a||_1 <= e_a (and likewise for b), then
    lo_a lo_b <= p_a p_b and, by ||f*g||_1 <= ||f||_1 ||g||_1 with ||p||_1 = 1, ||lo||_1 <= 1:
    ||p_a p_b - lo_a lo_b||_1 <= e_a + e_b; flooring the rescaled product adds < 1 unit per
    coefficient.  Errors are counted in units of 2^-F.
    """
    polys = list(polys)
    if not polys:
        return fmpz_poly([1 << F]), 0
    scale = fmpz(1 << F)
    while len(polys) > 1:
        progress.tick(f"multiplying {len(polys)} weight polynomials")
        polys.sort(key=lambda pe: pe[0].degree())
        (a, ea), (b, eb) = polys.pop(0), polys.pop(0)
        prod = (a * b) // scale
        polys.append((prod, ea + eb + prod.degree() + 1))
    return polys[0]


class EnumProfile(Profile):
    """Few distinct eps values: one atom per vector (j_g) of how many of each value are in S."""

    def __init__(self, groups: Sequence[tuple[LinLog, int]]) -> None:
        super().__init__()
        self.groups = list(groups)
        self.exact = all(e.R == 0 for e, _ in self.groups)
        self.algorithm = "brute-force" if all(c == 1 for _, c in self.groups) else "enumeration"
        vecs = itertools.product(*[range(c + 1) for _, c in self.groups])
        if all(e.Q == 1 for e, _ in self.groups):
            # rational losses: integers over a common denominator, an exact key sort
            den = 1
            for e, _ in self.groups:
                den = den * e.R.denominator // math.gcd(den, e.R.denominator)
            nums = [int(e.R * den) for e, _ in self.groups]
            cs = [c for _, c in self.groups]
            ilosses: dict[int, list[tuple[int, ...]]] = {}
            for v in vecs:
                ilosses.setdefault(sum((2 * j - c) * n for j, c, n in zip(v, cs, nums)), []).append(v)
            ikeys = sorted(ilosses)
            self._losses = [LinLog(Fraction(x, den)) for x in ikeys]
            self._vecs = [ilosses[x] for x in ikeys]
            self.n = len(ikeys)
            return
        losses: dict[LinLog, list[tuple[int, ...]]] = {}
        for v in vecs:
            L = LinLog(Fraction(0))
            for (e, c), j in zip(self.groups, v):
                if 2 * j - c:
                    L = L + e.scale(2 * j - c)
            losses.setdefault(L, []).append(v)
        keys = list(losses)
        with ctx.workprec(128):
            approx = {L: L.arb() for L in keys}

        def cmp(a: LinLog, b: LinLog) -> int:
            x, y = approx[a], approx[b]
            if x < y:
                return -1
            if x > y:
                return 1
            return _cmp(a, b)

        keys.sort(key=cmp_to_key(cmp))
        self._finish(keys, losses)

    def _finish(self, keys: list[LinLog], losses: dict[LinLog, list[tuple[int, ...]]]) -> None:
        self._losses = keys
        self._vecs = [losses[L] for L in keys]
        self.n = len(keys)

    def loss(self, i: int) -> LinLog:
        return self._losses[i]

    def _weights(self, prec: int) -> tuple[list[int], int, int]:
        if self.exact:
            D = 1
            tabs = []
            for e, c in self.groups:
                u, v = e.Q.numerator, e.Q.denominator
                D *= (u + v) ** c
                tabs.append([math.comb(c, j) * u**j * v ** (c - j) for j in range(c + 1)])
            co = []
            for vs in self._vecs:
                s = 0
                for vec in vs:
                    p = 1
                    for tab, j in zip(tabs, vec):
                        p *= tab[j]
                    s += p
                co.append(s)
            return co, 0, D
        F = prec + self.n.bit_length() + 16
        with ctx.workprec(F + 32):
            tabs = []
            for e, c in self.groups:
                y = e.exp_arb()
                term = (1 + y) ** (-c)
                tab = [term]
                for j in range(1, c + 1):
                    term = term * y * (c - j + 1) / j
                    tab.append(term)
                tabs.append(tab)
            lo, err = [], 0
            for vs in self._vecs:
                s = arb(0)
                for vec in vs:
                    p = arb(1)
                    for tab, j in zip(tabs, vec):
                        p = p * tab[j]
                    s += p
                a, b = _to_fixed(s, F)
                lo.append(a)
                err += b - a
        return lo, err, 1 << F

    def exact_terms(self, i: int) -> list[tuple[int, LinLog]]:
        out = []
        for vec in self._vecs[i]:
            N = 1
            x = LinLog(Fraction(0))
            for (e, c), j in zip(self.groups, vec):
                N *= math.comb(c, j)
                if j:
                    x = x + e.scale(j)
            out.append((N, x))
        return out


# -- choosing the atoms -------------------------------------------------------------------------

def _perfect_power(q: Fraction) -> tuple[Fraction, int]:
    """(r, m) with q = r^m and m maximal (q > 1 rational)."""
    u, v = q.numerator, q.denominator
    m_tot = 1
    changed = True
    while changed:
        changed = False
        for m in range(2, max(u.bit_length(), 2) + 1):
            ru, eu = gmpy2.iroot(u, m)
            if not eu:
                continue
            rv, ev = gmpy2.iroot(v, m)
            if ev:
                u, v = int(ru), int(rv)
                m_tot *= m
                changed = True
                break
    return Fraction(u, v), m_tot


def _grid(eps: Sequence[ExactReal]) -> tuple[LinLog, list[int]] | None:
    """A common eps_0 with eps_i = a_i eps_0 exactly (eps_i > 0), or None."""
    if all(e.kind == "rational" for e in eps):
        L = 1
        for e in eps:
            L = L * e.value.denominator // math.gcd(L, e.value.denominator)
        ns = [int(e.value * L) for e in eps]
        g = 0
        for x in ns:
            g = math.gcd(g, x)
        return LinLog(Fraction(g, L)), [x // g for x in ns]
    if all(e.kind == "log" for e in eps):
        roots = [_perfect_power(e.value) for e in eps]
        r0 = roots[0][0]
        if any(r != r0 for r, _ in roots):
            return None
        g = 0
        for _, m in roots:
            g = math.gcd(g, m)
        return LinLog(Fraction(0), r0**g), [m // g for _, m in roots]
    return None


_PROFILES: dict[tuple, Profile | None] = {}


def build_profile(groups: Sequence[tuple[ExactReal, int]], *, force: str | None = None) -> Profile | None:
    """The cheapest exact atom profile of the pure part, or None when every eps_i is 0.

    Raises NoExactProfile when no exact profile is affordable.  The last few profiles are kept, so the
    two directions (and a batch) on one composition share the subset-sum weights.
    """
    key = (tuple(groups), force)
    if key in _PROFILES:
        return _PROFILES[key]
    prof = _build_profile(groups, force)
    if len(_PROFILES) >= 4:
        _PROFILES.pop(next(iter(_PROFILES)))
    _PROFILES[key] = prof
    return prof


def _build_profile(groups: Sequence[tuple[ExactReal, int]], force: str | None) -> Profile | None:
    groups = [(e, c) for e, c in groups if not e.is_zero()]
    if not groups:
        return None
    # merge equal eps (different delta_i)
    merged: dict[ExactReal, int] = {}
    for e, c in groups:
        merged[e] = merged.get(e, 0) + c
    eps = list(merged)
    counts = [merged[e] for e in eps]
    combos = 1
    for c in counts:
        combos *= c + 1
        if combos > ENUM_CAP:
            break
    grid = _grid(eps)
    A = sum(a * c for a, c in zip(grid[1], counts)) if grid else None
    use_grid = grid is not None and A is not None and A <= GRID_CAP and (combos > ENUM_CAP or A <= 4 * combos)
    if force == "grid":
        use_grid = grid is not None
    elif force == "enum":
        use_grid = False
    if use_grid:
        assert grid is not None
        return GridProfile(grid[0], list(zip(grid[1], counts)))
    if combos <= ENUM_CAP or force == "enum":
        return EnumProfile([(LinLog.of(e), c) for e, c in zip(eps, counts)])
    raise NoExactProfile()


class NoExactProfile(Exception):
    """No exact profile of this composition is affordable (the router then takes another engine)."""


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
