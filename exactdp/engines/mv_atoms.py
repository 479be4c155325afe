"""The two ways to build Murtagh-Vadhan atoms exactly, and the choice between them.

* ``exact-counting`` (:class:`GridProfile`): every eps_i is an integer multiple a_i of one eps_0
  (rational eps_i, or eps_i = log q_i with q_i = q_0^{a_i}) with a moderate A = sum a_i.  The atom
  weights are the coefficients of prod_i (1 + y^{a_i} x^{a_i}) / (1 + y^{a_i}), y = e^{eps_0}: exact
  integers (fmpz_poly) when y is rational, else certified fixed-point lower/upper integer
  polynomials (all coefficients are >= 0, so floor/ceil after every product keep rigorous bounds).
* ``enumeration`` (:class:`EnumProfile`; ``brute-force`` when all mechanisms differ): few distinct
  eps values with moderate counts, any eps (seven significant digits, mixed rationals and logs):
  one atom per vector of how many of each value are in S.

:func:`build_profile` picks the cheaper one under :data:`GRID_CAP` and :data:`ENUM_CAP` (read at
call time), or raises :class:`~exactdp.engines.mv_profile.NoExactProfile` (docs/mathematics.md §2).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from fractions import Fraction
from functools import cmp_to_key

import gmpy2
from flint import arb, ctx, fmpz, fmpz_poly

from exactdp.core import memory, progress
from exactdp.core.errors import PrecisionError
from exactdp.core.linlog import LinLog
from exactdp.core.numbers import ExactReal, fraction_of_arb_endpoints
from exactdp.engines.mv_profile import NoExactProfile, Profile, compare_losses

__all__ = ["ENUM_CAP", "GRID_CAP", "PRODUCT_BYTES_FACTOR", "EnumProfile", "GridProfile", "build_profile"]

#: Largest A = sum a_i for exact counting on a common grid.
GRID_CAP = 2_000_000
#: Largest number of enumerated atoms (before merging equal losses).
ENUM_CAP = 1_000_000
#: Peak bytes of the product tree per byte of one weight vector (measured: 660,001 atoms at 1,350
#: bits peaked near 2.3 GB; at 2,700 bits FLINT asked for 4.3 GB in one block)
PRODUCT_BYTES_FACTOR = 20


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
        while m > 0 and compare_losses(self.loss(m - 1), x) > 0:
            m -= 1
        while m < self.n and compare_losses(self.loss(m), x) <= 0:
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
        need = self.n * (F + 64) // 8 * PRODUCT_BYTES_FACTOR
        memory.require(need, f"the exact lattice profile of {self.n:,} atoms at {F:,} bits")
        wprec = F + 32
        los: list[tuple[fmpz_poly, int]] = []
        with ctx.workprec(wprec):
            w = self.eps0.exp_arb()
            for a, c in self.groups:
                ya = w**a
                # the binomial law C(c,j) y^j / (1+y)^c, term by term
                term = (1 + ya) ** (-c)
                lo = [0] * (a * c + 1)
                err = 0
                for j in range(c + 1):
                    if j:
                        term = term * ya * (c - j + 1) / j
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
            return compare_losses(a, b)

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
                ball = arb(0)
                for vec in vs:
                    pb = arb(1)
                    for tab, j in zip(tabs, vec):
                        pb = pb * tab[j]
                    ball += pb
                a, b = _to_fixed(ball, F)
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


_PROFILES: dict[tuple[tuple[tuple[ExactReal, int], ...], str | None], Profile | None] = {}


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
