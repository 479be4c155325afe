"""A seeded family of heterogeneous lists, and an independent mpmath oracle for the small ones.

Issue 29: lists of the benchmark rows' kind with other values must pass, so the tests and
``benchmarks/bench_list_family.py`` draw lists from one seeded generator instead of fixing rows.
:func:`family_list` ``(seed)`` is one list of generic ``(eps_i, delta_i)`` mechanisms with counts:

- 1 to 10 distinct eps_i (1 to 5 on 1/10), all on one grid (1/10, 1/100 or 1/1000, at most 1/2) or off every
  small grid (seven significant digits in [0.001, 0.5]);
- each count drawn log-uniformly from 10^2 to 10^7 (one or two significant digits);
- delta_i all zero, or per group zero or a power of ten small enough that the answer is finite
  (and, now and then, large enough that eps_g is +inf: an exact answer too);
- delta_g = m 10^-e with m in {1, 2, 5} and e from 3 to 12.

:func:`mv_delta` is the Murtagh-Vadhan optimum (docs/mathematics.md §2.1, grouped as in §2.2) at
one eps_g, summed in mpmath over the joint binomial counts: with ``p_i = e^{eps_i}/(1 + e^{eps_i})``
and ``j_i`` the number of truthful answers among the ``n_i`` copies of eps_i,

    delta_pure(eps_g) = sum_{j : L(j) > eps_g} prod_i C(n_i, j_i) p_i^{j_i} (1 - p_i)^{n_i - j_i}
                        * (1 - e^{eps_g - L(j)}),   L(j) = sum_i (2 j_i - n_i) eps_i,
    delta_opt(eps_g) = 1 - prod_i (1 - delta_i)^{n_i} (1 - delta_pure(eps_g)).

(The outcome ``S`` of §2.2 has P-probability ``e^{eps(S)}/prod(1 + e^{eps_i})`` and loss
``L_S = 2 eps(S) - E``; its term ``p_S - e^{eps_g} q_S = p_S (1 - e^{eps_g - L_S})``.)  The
largest group is summed last through suffix sums of its P- and Q-binomials, so the cost is
``prod_{other i} (n_i + 1) + n_largest`` terms; :func:`oracle_cost` says it before it runs.  It
shares no code with the engines (no Arb, no profile, no lattice): a check, not a copy.

>>> fl = family_list(0)
>>> fl == family_list(0) and 1 <= len(fl.groups) <= 10
True
>>> mpmath.nstr(mv_delta([(Fraction(1, 2), Fraction(0), 1)], Fraction(0)), 12)  # (e^.5-1)/(e^.5+1)
'0.244918662404'
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

import mpmath

__all__ = ["GRIDS", "FamilyList", "brute_force_delta", "family", "family_list", "mv_delta", "oracle_cost"]

#: the grids a list's values are drawn on: the denominator, or 0 for off-grid seven-digit values
GRIDS = (10, 100, 1000, 0)

Group = tuple[Fraction, Fraction, int]


@dataclass(frozen=True)
class FamilyList:
    """One member of the family: its seed, grid (0: off-grid), groups ``(eps, delta, count)`` and delta_g."""

    seed: int
    grid: int
    groups: tuple[Group, ...]
    delta_g: Fraction

    def csv(self) -> str:
        """The list as an ``exactdp --mechanisms`` CSV file (``eps,delta,count`` per line)."""
        return "".join(f"{_dec(e)},{_dec(d)},{c}\n" for e, d, c in self.groups)

    @property
    def name(self) -> str:
        """A short description: ``#seed k values on 1/grid, counts .., delta_g ..``."""
        grid = "off-grid" if self.grid == 0 else f"1/{self.grid}"
        counts = ",".join(_count(c) for _, _, c in self.groups)
        dl = "" if all(d == 0 for _, d, _ in self.groups) else " with delta_i"
        return f"#{self.seed}: {len(self.groups)} values {grid} x ({counts}){dl} at delta_g {_dec(self.delta_g)}"

    @property
    def total(self) -> int:
        """The number of mechanisms."""
        return sum(c for _, _, c in self.groups)


def _dec(x: Fraction) -> str:
    """An exact decimal string of a Fraction whose denominator is 2^a 5^b."""
    if x == 0:
        return "0"
    e = 0
    while (x * 10**e).denominator != 1:
        e += 1
    n = x.numerator * 10**e // x.denominator
    return str(n) if e == 0 else f"{n}e-{e}"


def _count(c: int) -> str:
    e = len(str(c)) - 1
    m = str(c).rstrip("0")
    return f"10^{e}" if m == "1" else f"{m[0]}{'.' if len(m) > 1 else ''}{m[1:]}e{e}"


def family_list(seed: int) -> FamilyList:
    """The family's member number ``seed`` (deterministic: the same seed, the same list)."""
    rng = random.Random(f"exactdp-list-family-{seed}")
    grid = rng.choice(GRIDS)
    k = rng.randint(1, 10 if grid != 10 else 5)  # the 1/10 grid has five values up to 1/2
    values: set[Fraction] = set()
    while len(values) < k:
        if grid == 0:
            values.add(Fraction(rng.randint(10**4, 5 * 10**6), 10**7))
        else:
            values.add(Fraction(rng.randint(1, grid // 2), grid))
    e = rng.randint(3, 12)
    delta_g = Fraction(rng.choice((1, 2, 5)), 10**e)
    with_delta = rng.random() < 0.5
    groups = []
    for v in sorted(values):
        ce = rng.uniform(2, 7)  # log10 of the count
        c = int(10**ce)
        c = round(c, 1 - len(str(c))) if rng.random() < 0.5 else round(c, -len(str(c)) + 2)
        c = max(100, min(10**7, c))
        d = Fraction(0)
        if with_delta and rng.random() < 0.6:
            # small enough that the deltas take at most a tenth of delta_g (a finite answer), or now
            # and then a thousand times more (+inf is a possible, exact answer)
            room = delta_g / (10 * k * c) * (1000 if rng.random() < 0.1 else 1)
            m = 0
            while Fraction(1, 10**m) > room:
                m += 1
            d = Fraction(1, 10**m)
        groups.append((v, d, c))
    return FamilyList(seed, grid, tuple(groups), delta_g)


def family(n: int, start: int = 0) -> list[FamilyList]:
    """Members ``start .. start + n - 1``."""
    return [family_list(s) for s in range(start, start + n)]


def _merged(groups: Sequence[Group]) -> list[tuple[Fraction, int]]:
    by: dict[Fraction, int] = {}
    for e, _, c in groups:
        by[Fraction(e)] = by.get(Fraction(e), 0) + int(c)
    return sorted(((e, c) for e, c in by.items() if e != 0), key=lambda g: g[1])


def oracle_cost(groups: Sequence[Group]) -> int:
    """How many terms :func:`mv_delta` sums: ``prod_{other i} (n_i + 1)`` plus the largest count."""
    m = _merged(groups)
    if not m:
        return 1
    out = 1
    for _, c in m[:-1]:
        out *= c + 1
    return out + m[-1][1]


def _mp(x: Fraction) -> mpmath.mpf:
    return mpmath.mpf(x.numerator) / x.denominator


def _pmfs(eps: Fraction, n: int) -> tuple[list[mpmath.mpf], list[mpmath.mpf]]:
    """The P-binomial ``C(n, j) p^j (1-p)^{n-j}`` and the Q-binomial (p and 1-p swapped), j = 0..n."""
    x = mpmath.exp(_mp(eps))
    p0 = (1 + x) ** (-n)  # j = 0 under P: (1 - p)^n
    P, Q = [p0], [p0 * x**n]
    for j in range(n):
        P.append(P[-1] * (n - j) / (j + 1) * x)
        Q.append(Q[-1] * (n - j) / (j + 1) / x)
    return P, Q


def mv_delta(groups: Sequence[Group], eps_g: Fraction, dps: int = 60) -> mpmath.mpf:
    """delta_opt(eps_g) of the groups ``(eps_i, delta_i, n_i)`` (docs/mathematics.md §2.1), in mpmath."""
    with mpmath.workdps(dps):
        m = _merged(groups)
        pd = mpmath.fprod((1 - _mp(Fraction(d))) ** int(c) for _, d, c in groups)
        eg = Fraction(eps_g)
        if not m:
            return 1 - pd
        (e_in, n_in), outer = m[-1], m[:-1]
        P, Q = _pmfs(e_in, n_in)
        SP, SQ = [mpmath.mpf(0)] * (n_in + 2), [mpmath.mpf(0)] * (n_in + 2)
        for j in range(n_in, -1, -1):
            SP[j], SQ[j] = SP[j + 1] + P[j], SQ[j + 1] + Q[j]
        outer_pmfs = [_pmfs(e, n) for e, n in outer]
        xg = mpmath.exp(_mp(eg))
        total = mpmath.mpf(0)
        for js in itertools.product(*(range(n + 1) for _, n in outer)):
            L = sum(((2 * j - n) * e for (e, n), j in zip(outer, js)), Fraction(0))
            # the inner j with L + (2 j - n_in) e_in > eps_g: j > (eps_g - L + n_in e_in) / (2 e_in)
            t = (eg - L + n_in * e_in) / (2 * e_in)
            jstar = min(max(t.numerator // t.denominator + 1, 0), n_in + 1)
            if jstar > n_in:
                continue
            po = mpmath.fprod(pm[0][j] for pm, j in zip(outer_pmfs, js))
            qo = mpmath.fprod(pm[1][j] for pm, j in zip(outer_pmfs, js))
            total += po * SP[jstar] - xg * qo * SQ[jstar]
        return 1 - pd * (1 - total)


def brute_force_delta(mechs: Sequence[tuple[Fraction, Fraction]], eps_g: Fraction, dps: int = 60) -> mpmath.mpf:
    """delta_opt(eps_g) of single mechanisms by the sum over all subsets S (docs/mathematics.md §2.1)."""
    with mpmath.workdps(dps):
        es = [Fraction(e) for e, _ in mechs]
        E = sum(es, Fraction(0))
        Z = mpmath.fprod(1 + mpmath.exp(_mp(e)) for e in es)
        xg = mpmath.exp(_mp(Fraction(eps_g)))
        s = mpmath.mpf(0)
        for S in itertools.product((0, 1), repeat=len(es)):
            eS = sum((e for e, b in zip(es, S) if b), Fraction(0))
            s += max(mpmath.mpf(0), mpmath.exp(_mp(eS)) - xg * mpmath.exp(_mp(E - eS)))
        pd = mpmath.fprod(1 - _mp(Fraction(d)) for _, d in mechs)
        return 1 - pd * (1 - s / Z)
