"""The golden tables ``mixture`` and ``relations`` (issue 27 §7) against independent evaluations written
here from the pairs of docs/mathematics.md §7.12 and §9 (mpmath, 30 digits):

* one run: the hockey-stick divergence delta(e) = P(L > e) - e^e Q(L > e) in closed form (normal and
  Laplace tails) at the root of the monotone likelihood ratio (Newton on a convex log-sum-exp);
* two runs: delta_2(e) = E_P[delta_1(e - L(X))], one mpmath quadrature over the first output;
* replace-one Poisson: the diluted pair's sum over how many runs see the record (Theorem 9.2);
* a fixed batch: its symmetrised pair (Theorem 9.3), the loss mirrored below 0;
* max: the larger of the two orders, each composed by itself (§7.5).
The k = 100 mixture rows are checked for consistency (above k = 2).
"""

from __future__ import annotations

from collections.abc import Callable
from math import comb

import mpmath
import pytest
from golden_checks import TABLES_DIR, M, check_epsilon, check_value, corrupted, needs_tables, spec_params

from exactdp.golden import load_table

DPS = 30
REL = mpmath.mpf(10) ** -14  # the quadrature's error is far below this; the tables' widths far above
inf = mpmath.inf
Fn = Callable[[mpmath.mpf], mpmath.mpf]


# -- a mixture of Gaussians: remove P = sum p_i N(s_i, S^2), Q = N(0, S^2); add the reverse -----------

class Mixture:
    def __init__(self, sigma: str, sens: str, probs: str) -> None:
        self.S = M(sigma)
        self.s = [M(x) for x in sens.split("/")]
        self.p = [M(x) for x in probs.split("/")]
        self.p0 = sum((p for p, s in zip(self.p, self.s, strict=True) if s == 0), mpmath.mpf(0))

    def ratio(self, x: mpmath.mpf) -> mpmath.mpf:
        """P/Q of the remove order at x."""
        return mpmath.fsum(p * mpmath.exp((2 * s * x - s * s) / (2 * self.S ** 2)) for p, s in zip(self.p, self.s))

    def root(self, t: mpmath.mpf) -> mpmath.mpf:
        """x with ratio(x) = t > p0: Newton on G(x) = log sum_{s_i > 0} p_i e^((2 s_i x - s_i^2)/(2 S^2)) - log(t - p0),
        convex with slope in [min s_i, max s_i]/S^2, from the right of the root (docs/mathematics.md §7.12)."""
        comps = [(p, s) for p, s in zip(self.p, self.s) if s > 0]
        p, s = max(comps)
        x = self.S ** 2 * (mpmath.log(t - self.p0) - mpmath.log(p)) / s + s / 2  # that component alone reaches it
        for _ in range(200):
            vs = [(u, q * mpmath.exp((2 * u * x - u * u) / (2 * self.S ** 2))) for q, u in comps]
            m = mpmath.fsum(v for _, v in vs)
            step = (mpmath.log(m) - mpmath.log(t - self.p0)) * m / mpmath.fsum(v * u / self.S ** 2 for u, v in vs)
            x -= step
            if abs(step) < mpmath.mpf(10) ** (-DPS + 4) * (1 + abs(x)):
                return x
        raise AssertionError("Newton did not converge")

    def delta_remove(self, e: mpmath.mpf) -> mpmath.mpf:
        if mpmath.exp(e) <= self.p0:
            return 1 - mpmath.exp(e)
        x = self.root(mpmath.exp(e))
        return mpmath.fsum(p * mpmath.ncdf((s - x) / self.S) for p, s in zip(self.p, self.s)) - \
            mpmath.exp(e) * mpmath.ncdf(-x / self.S)

    def delta_add(self, e: mpmath.mpf) -> mpmath.mpf:
        if mpmath.exp(-e) <= self.p0:
            return mpmath.mpf(0)
        x = self.root(mpmath.exp(-e))
        return mpmath.ncdf(x / self.S) - mpmath.exp(e) * mpmath.fsum(p * mpmath.ncdf((x - s) / self.S)
                                                                   for p, s in zip(self.p, self.s))

    def delta(self, k: int, direction: str = "max") -> Fn:
        if direction != "max":  # one order alone (the table's rows of it are one run)
            assert k == 1
            return self.delta_remove if direction == "remove" else self.delta_add
        if k == 1:
            return lambda e: max(self.delta_remove(e), self.delta_add(e))
        def d2(e: mpmath.mpf) -> mpmath.mpf:
            # split at the kinks of the integrands (the inner delta changes branch where the ratio is
            # e^(+-e)/p0) and on a coarse grid, so that tanh-sinh meets only smooth pieces
            ys = [mpmath.exp(u * e) / self.p0 for u in (1, -1)] if self.p0 > 0 else []
            pts = sorted({mpmath.mpf(x) for x in range(-8, 13, 2)} | {self.root(y) for y in ys if y > self.p0})
            pts = [-inf, *pts, inf]
            rem = mpmath.quad(lambda x: mpmath.fsum(p * mpmath.npdf(x, s, self.S) for p, s in zip(self.p, self.s))
                              * self.delta_remove(e - mpmath.log(self.ratio(x))), pts)
            add = mpmath.quad(lambda x: mpmath.npdf(x, 0, self.S) * self.delta_add(e + mpmath.log(self.ratio(x))), pts)
            return max(rem, add)
        return d2


# -- a Gaussian (sigma 1) or Laplace (scale 1) base pair A = noise + 1, B = noise, sensitivity 1 -------

class Base:
    def __init__(self, kind: str) -> None:
        self.gauss = kind == "gaussian"

    def la(self, x: mpmath.mpf) -> mpmath.mpf:
        """log A/B at x."""
        return x - mpmath.mpf(1) / 2 if self.gauss else abs(x) - abs(x - 1)

    def b_pdf(self, x: mpmath.mpf) -> mpmath.mpf:
        return mpmath.npdf(x) if self.gauss else mpmath.exp(-abs(x)) / 2

    def a_pdf(self, x: mpmath.mpf) -> mpmath.mpf:
        return self.b_pdf(x - 1)

    def b_above(self, c: mpmath.mpf) -> mpmath.mpf:
        """B(X > c)."""
        if self.gauss:
            return mpmath.ncdf(-c)
        return mpmath.exp(-c) / 2 if c >= 0 else 1 - mpmath.exp(c) / 2

    def cut_above(self, t: mpmath.mpf) -> mpmath.mpf:
        """c with {log A/B > t} = {x > c} (+-inf for none / all)."""
        if self.gauss:
            return t + mpmath.mpf(1) / 2
        return inf if t >= 1 else (-inf if t < -1 else (t + 1) / 2)

    def mass_above(self, c: mpmath.mpf) -> tuple[mpmath.mpf, mpmath.mpf]:
        """(A(X > c), B(X > c))."""
        if c == inf:
            return mpmath.mpf(0), mpmath.mpf(0)
        if c == -inf:
            return mpmath.mpf(1), mpmath.mpf(1)
        return self.b_above(c - 1), self.b_above(c)

    def delta_remove(self, q: mpmath.mpf, e: mpmath.mpf) -> mpmath.mpf:
        """H_{e^e}((1-q) B + q A || B)."""
        a = mpmath.exp(e)
        c = -inf if a <= 1 - q else self.cut_above(mpmath.log((a - (1 - q)) / q))
        am, bm = self.mass_above(c)
        return (1 - q) * bm + q * am - a * bm

    def delta_add(self, q: mpmath.mpf, e: mpmath.mpf) -> mpmath.mpf:
        """H_{e^e}(B || (1-q) B + q A): the region log A/B < t, the complement of {> t} (no atom at t)."""
        a = mpmath.exp(e)
        if 1 / a <= 1 - q:
            return mpmath.mpf(0)
        am, bm = self.mass_above(self.cut_above(mpmath.log((1 / a - (1 - q)) / q)))
        return (1 - bm) - a * ((1 - q) * (1 - bm) + q * (1 - am))

    def ratio(self, q: mpmath.mpf, x: mpmath.mpf) -> mpmath.mpf:
        return 1 - q + q * mpmath.exp(self.la(x))

    def points(self, q: mpmath.mpf, e: mpmath.mpf) -> list[mpmath.mpf]:
        """Break points of the quadrature: a coarse grid and every x where the ratio is e^(+-e) times one
        of the constants at which an inner delta changes branch (a superset of the integrands' kinks)."""
        pts = {mpmath.mpf(x) for x in range(-8, 13, 2)} | {mpmath.mpf(0), mpmath.mpf(1)}
        cs = [mpmath.mpf(1), 1 - q, 1 - q + q / mpmath.e, 1 - q + q * mpmath.e]
        for u in (1, -1):
            for c in cs:
                for v in (1, -1):
                    if c <= 0:
                        continue
                    y = mpmath.exp(u * e) * c ** v
                    if y <= 1 - q:
                        continue
                    t = mpmath.log((y - (1 - q)) / q)  # log A/B = t
                    if self.gauss:
                        pts.add(t + mpmath.mpf(1) / 2)
                    elif -1 < t < 1:
                        pts.add((t + 1) / 2)
        return [-inf, *sorted(pts), inf]

    def poisson(self, q: mpmath.mpf, direction: str, k: int) -> Fn:
        """The add/remove Poisson subsample in one order (max: the larger), k in {1, 2}."""
        if direction == "max":
            r, a = self.poisson(q, "remove", k), self.poisson(q, "add", k)
            return lambda e: max(r(e), a(e))
        if k == 1:
            return (lambda e: self.delta_remove(q, e)) if direction == "remove" else (lambda e: self.delta_add(q, e))
        if direction == "remove":
            return lambda e: mpmath.quad(lambda x: ((1 - q) * self.b_pdf(x) + q * self.a_pdf(x))
                                         * self.delta_remove(q, e - mpmath.log(self.ratio(q, x))), self.points(q, e))
        return lambda e: mpmath.quad(lambda x: self.b_pdf(x) * self.delta_add(q, e + mpmath.log(self.ratio(q, x))),
                                     self.points(q, e))

    def replace_one(self, q: mpmath.mpf, k: int) -> Fn:
        """Theorem 9.2: sum_j C(k, j) (1-q)^(k-j) q^j H(A^j || B^j), H of no run (1 - a)_+."""
        def h(j: int, e: mpmath.mpf) -> mpmath.mpf:
            if j == 0:
                return max(mpmath.mpf(0), 1 - mpmath.exp(e))
            if j == 1:
                return self.delta_remove(mpmath.mpf(1), e)
            return mpmath.quad(lambda x: self.a_pdf(x) * self.delta_remove(mpmath.mpf(1), e - self.la(x)),
                               self.points(mpmath.mpf(1), e))
        return lambda e: mpmath.fsum(comb(k, j) * (1 - q) ** (k - j) * q ** j * h(j, e) for j in range(k + 1))

    def batch(self, g: mpmath.mpf, k: int) -> Fn:
        """Theorem 9.3: the symmetrised pair of ((1-g) B + g A, B); its loss is > 0 exactly where x > 1/2."""
        def one(e: mpmath.mpf) -> mpmath.mpf:
            if e >= 0:
                return self.delta_remove(g, e)
            return 1 - mpmath.exp(e) + mpmath.exp(e) * self.delta_remove(g, -e)
        if k == 1:
            return one
        half = mpmath.mpf(1) / 2
        am, bm = self.mass_above(half)
        m0 = 1 - ((1 - g) * bm + g * am) - bm
        def d2(e: mpmath.mpf) -> mpmath.mpf:
            pts = [half] + [p for p in self.points(g, e) if p > half]

            def f(x: mpmath.mpf) -> mpmath.mpf:
                loss = mpmath.log(self.ratio(g, x))
                return ((1 - g) * self.b_pdf(x) + g * self.a_pdf(x)) * one(e - loss) + self.b_pdf(x) * one(e + loss)
            return mpmath.quad(f, pts) + m0 * one(e)
        return d2


def reference(row: dict[str, str]) -> Fn:
    kind, p = spec_params(row)
    k = int(p.get("count", "1"))
    if kind == "mog":
        return Mixture(p["sigma"], p["sensitivities"], p["probs"]).delta(k, p.get("direction", "max"))
    base = Base(kind)
    if "sample" in p:
        return base.batch(M(p["sample"]) / M(p["of"]), k)
    if p.get("relation") == "replace-one":
        return base.replace_one(M(p["q"]), k)
    return base.poisson(M(p["q"]), p.get("direction", "max"), k)


def check_row(row: dict[str, str]) -> None:
    with mpmath.workdps(DPS):
        delta_of = reference(row)
        if row["query"] == "delta":
            check_value(row, delta_of(M(row["at"])), REL)
        else:
            check_epsilon(row, delta_of, REL)


def k_of(row: dict[str, str]) -> int:
    return int(spec_params(row)[1].get("count", "1"))


NEWEST = ("relation=replace-special", "truncate=", "with-replacement=", "bounded=")  # Theorems 9.4-9.6: test_golden_sampling.py; 9.8: test_bounded_poisson.py


def original(rows: list[dict[str, str]]) -> list[dict[str, str]]:
    """The rows of the first relations (Theorems 9.2, 9.3, §7.5) and the mixtures, without the newest."""
    return [r for r in rows if not any(n in r["mechanisms"] for n in NEWEST)]


@needs_tables
@pytest.mark.parametrize("k", [1, pytest.param(2, marks=pytest.mark.slow)])
def test_every_mixture_row(k: int) -> None:
    rows = [r for r in load_table("mixture", directory=TABLES_DIR) if k_of(r) == k]
    assert len(rows) == (8 if k == 1 else 6)  # k = 1: also the first mixture's remove and add orders alone
    for r in rows:
        check_row(r)


@needs_tables
def test_a_fixed_sample_of_the_two_run_rows() -> None:
    """The default run checks every one-run row and these two-run rows; the slow run checks all."""
    rows = [r for r in original(load_table("mixture", directory=TABLES_DIR) + load_table("relations", directory=TABLES_DIR))
            if k_of(r) == 2]
    sample = [rows[0], rows[5], rows[6], rows[13], rows[22], rows[25]]
    assert {r["query"] for r in sample} == {"delta", "epsilon"}
    for r in sample:
        check_row(r)


@needs_tables
def test_the_k100_mixture_brackets_are_above_k2() -> None:
    rows = load_table("mixture", directory=TABLES_DIR)
    for r in (r for r in rows if k_of(r) == 100):
        two = next(t for t in rows if k_of(t) == 2 and t["query"] == "epsilon"
                   and t["mechanisms"].replace(",count=2", "") == r["mechanisms"].replace(",count=100", ""))
        assert M(two["upper"]) < M(r["lower"]) <= M(r["upper"]) and int(r["digits"]) >= 3


@needs_tables
@pytest.mark.parametrize("k", [1, pytest.param(2, marks=pytest.mark.slow)])
def test_every_relations_row(k: int) -> None:
    rows = [r for r in original(load_table("relations", directory=TABLES_DIR)) if k_of(r) == k]
    assert len(rows) == 20
    for r in rows:
        check_row(r)


@needs_tables
def test_the_check_fails_on_a_wrong_row() -> None:
    rows = [r for r in original(load_table("mixture", directory=TABLES_DIR) + load_table("relations", directory=TABLES_DIR))
            if k_of(r) <= 2 and M(r["lower"]) > 0]
    picks = [rows[0], rows[1], next(r for r in rows if "sample" in r["mechanisms"] and k_of(r) == 2),
             next(r for r in rows if "replace-one" in r["mechanisms"] and "laplace" in r["mechanisms"])]
    for r in picks:
        check_row(r)
        with pytest.raises(AssertionError):
            check_row(corrupted(r))
