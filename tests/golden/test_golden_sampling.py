"""The newest rows of the golden table ``relations`` (issue 27 §7: docs/mathematics.md §9, Theorems 9.4-9.6)
against independent evaluations written here from the stated pairs' definitions (mpmath, 40 digits), never
from exactdp's models:

* replace-special randomized response (Theorem 9.5): R(x) (the true bucket w.p. e^eps/Z, each other 1/Z,
  Z = e^eps + k - 1) against the uniform U, both orders, k runs summed exactly over the number of runs
  that output the true bucket (binomial in both laws), the larger order;
* the truncated subsampled Gaussian (Theorem 9.4): t = P(K >= B) and g = E[qB/(K+1) | K >= B] summed from
  their definitions over K ~ Bin(N-1, q); add/remove: the labelled pair's profile (1-t) delta_{q,1/s} +
  t delta_{g,2/s} in each order (normal tails at the cut of the monotone likelihood ratio), the larger;
  replace-one: the diluted pair (Theorem 9.2) of (N(2/s), N(0)) at rate (1-t) q + t g;
* a Gaussian batch drawn with replacement (Theorem 9.6): sum_j b_j delta_{jD/S} + b_0 (1 - e^eps)_+,
  and k runs exactly as the sum over the label vectors (a multinomial over how many runs drew j), since
  labelled Gaussians compose to the Gaussian of mu^2 = sum mu_j^2; the Laplace, discrete Laplace and discrete
  Gaussian sums the same with each label's pair at sensitivity jD (the Laplace's closed form, the discrete
  laws summed over the integers);
* ten runs of the truncated Gaussian: between one run's eps at delta_g and basic composition of ten runs
  at delta_g/10 (Dwork-Roth Thm 3.16), both from the one-run reference.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import combinations_with_replacement
from math import comb, factorial

import mpmath
import pytest
from golden_checks import TABLES_DIR, M, check_epsilon, check_value, corrupted, needs_tables, spec_params

from exactdp.golden import load_table

DPS = 40
REL = mpmath.mpf(10) ** -20
Fn = Callable[[mpmath.mpf], mpmath.mpf]
NEWEST = ("relation=replace-special", "truncate=", "with-replacement=")


def newest(rows: list[dict[str, str]]) -> list[dict[str, str]]:
    return [r for r in rows if any(n in r["mechanisms"] for n in NEWEST)]


# -- Theorem 9.5: replace-special randomized response ------------------------------------------------

def special_rr(eps: mpmath.mpf, cats: int, k: int) -> Fn:
    x = mpmath.exp(eps)
    z = x + cats - 1
    pt, qt = x / z, mpmath.mpf(1) / cats  # the true bucket's mass under R(x) and U
    P = [comb(k, j) * pt ** j * (1 - pt) ** (k - j) for j in range(k + 1)]  # j runs output the true bucket
    Q = [comb(k, j) * qt ** j * (1 - qt) ** (k - j) for j in range(k + 1)]

    def delta(e: mpmath.mpf) -> mpmath.mpf:
        a = mpmath.exp(e)
        rem = mpmath.fsum(max(p - a * q, 0) for p, q in zip(P, Q, strict=True))
        add = mpmath.fsum(max(q - a * p, 0) for p, q in zip(P, Q, strict=True))
        return max(rem, add)
    return delta


# -- subsampled Gaussian pairs in units of the noise: ((1-r) N(0) + r N(m), N(0)) and its reverse ---------

def sub_remove(r: mpmath.mpf, m: mpmath.mpf, e: mpmath.mpf) -> mpmath.mpf:
    a = mpmath.exp(e)
    if a <= 1 - r:
        return 1 - a
    c = (mpmath.log((a - (1 - r)) / r) + m * m / 2) / m  # ratio 1 - r + r e^(m x - m^2/2) > a iff x > c
    return (1 - r) * mpmath.ncdf(-c) + r * mpmath.ncdf(m - c) - a * mpmath.ncdf(-c)


def sub_add(r: mpmath.mpf, m: mpmath.mpf, e: mpmath.mpf) -> mpmath.mpf:
    a = mpmath.exp(e)
    if 1 / a <= 1 - r:
        return mpmath.mpf(0)
    c = (mpmath.log((1 / a - (1 - r)) / r) + m * m / 2) / m  # the region where N(0) > a * mixture: x < c
    return mpmath.ncdf(c) - a * ((1 - r) * mpmath.ncdf(c) + r * mpmath.ncdf(c - m))


def gauss(mu: mpmath.mpf, e: mpmath.mpf) -> mpmath.mpf:
    """H_{e^e}(N(mu) || N(0)) (mu = 0: (1 - e^e)_+)."""
    if mu == 0:
        return max(mpmath.mpf(0), 1 - mpmath.exp(e))
    return mpmath.ncdf(mu / 2 - e / mu) - mpmath.exp(e) * mpmath.ncdf(-mu / 2 - e / mu)


# -- Theorem 9.4: the truncated subsampled Gaussian -----------------------------------------------------

def truncation(q: mpmath.mpf, b: int, n: int) -> tuple[mpmath.mpf, mpmath.mpf]:
    """t = P(K >= B), g = E[q B/(K+1) | K >= B], K ~ Bin(N-1, q), summed from the definition."""
    pk = [comb(n - 1, k) * q ** k * (1 - q) ** (n - 1 - k) for k in range(n)]
    t = mpmath.fsum(pk[b:])
    return t, mpmath.fsum(p * q * b / (k + 1) for k, p in enumerate(pk) if k >= b) / t


def truncated(s: mpmath.mpf, q: mpmath.mpf, b: int, n: int, relation: str) -> Fn:
    t, g = truncation(q, b, n)
    if relation == "replace-one":
        r = (1 - t) * q + t * g
        return lambda e: (1 - r) * max(mpmath.mpf(0), 1 - mpmath.exp(e)) + r * gauss(2 / s, e)
    return lambda e: max((1 - t) * sub_remove(q, 1 / s, e) + t * sub_remove(g, 2 / s, e),
                         (1 - t) * sub_add(q, 1 / s, e) + t * sub_add(g, 2 / s, e))


# -- Theorem 9.6: a Gaussian batch drawn with replacement -----------------------------------------------

def with_replacement(s: mpmath.mpf, d: mpmath.mpf, m: int, n: int, k: int) -> Fn:
    p = mpmath.mpf(1) / n
    b = [comb(m, j) * p ** j * (1 - p) ** (m - j) for j in range(m + 1)]
    terms = []  # (weight, mu) over the multisets of the k runs' labels
    for js in combinations_with_replacement(range(m + 1), k):
        mult = factorial(k)
        for j in set(js):
            mult //= factorial(js.count(j))
        w = mult * mpmath.fprod(b[j] for j in js)
        terms.append((w, mpmath.sqrt(sum(j * j for j in js)) * d / s))
    return lambda e: mpmath.fsum(w * gauss(mu, e) for w, mu in terms)


# -- Theorem 9.6 beyond the Gaussian: the Laplace, discrete Laplace and discrete Gaussian sums (one run) -------

def shifted_delta(kind: str, p: dict[str, str], shift: int) -> Fn:
    """H_{e^e} of the pair at ``shift`` times the sensitivity: the Laplace's closed form
    1 - e^{(e - eps_j)/2} on [0, eps_j]; the discrete laws summed over the integers (the rest < 1e-45)."""
    if kind == "laplace":
        eps_j = shift * M(p.get("sensitivity", "1")) / M(p["scale"])
        return lambda e: max(mpmath.mpf(0), 1 - mpmath.exp((e - eps_j) / 2))
    s = shift * int(p.get("sensitivity", "1"))
    if kind == "dlaplace":
        a = M(p["noise"])
        reach = int(110 / a) + 10
        c = (1 - mpmath.exp(-a)) / (1 + mpmath.exp(-a))
        pmf = [c * mpmath.exp(-a * abs(x)) for x in range(-reach - s, reach + s + 1)]
    else:
        sg = M(p["sigma"])
        reach = int(16 * sg) + 10
        w = [mpmath.exp(-mpmath.mpf(x) ** 2 / (2 * sg * sg)) for x in range(-reach - s, reach + s + 1)]
        z = mpmath.fsum(w)
        pmf = [x / z for x in w]
    off = reach + s  # pmf[x + off] is the mass at x

    def delta(e: mpmath.mpf) -> mpmath.mpf:
        a_ = mpmath.exp(e)
        return mpmath.fsum(max(mpmath.mpf(0), pmf[x - s + off] - a_ * pmf[x + off]) for x in range(-reach, reach + 1))
    return delta


def with_replacement_sum(kind: str, p: dict[str, str]) -> Fn:
    m, n = int(p["sample"]), int(p["of"])
    q = mpmath.mpf(1) / n
    b = [comb(m, j) * q ** j * (1 - q) ** (m - j) for j in range(m + 1)]
    parts = [(b[j], shifted_delta(kind, p, j)) for j in range(1, m + 1)]
    return lambda e: b[0] * max(mpmath.mpf(0), 1 - mpmath.exp(e)) + mpmath.fsum(w * d(e) for w, d in parts)


def reference(row: dict[str, str], k: int | None = None) -> Fn:
    kind, p = spec_params(row)
    k = int(p.get("count", "1")) if k is None else k
    if kind in ("laplace", "dlaplace", "dgaussian"):
        assert k == 1
        return with_replacement_sum(kind, p)
    if kind == "rr":
        return special_rr(M(p["eps"]), int(p.get("categories", "2")), k)
    s = M(p["sigma"])
    if "truncate" in p:
        assert k == 1
        return truncated(s, M(p["q"]), int(p["truncate"]), int(p["of"]), p.get("relation", "add-remove"))
    return with_replacement(s, M(p.get("sensitivity", "1")), int(p["sample"]), int(p["of"]), k)


def check_row(row: dict[str, str]) -> None:
    with mpmath.workdps(DPS):
        delta_of = reference(row)
        if row["query"] == "delta":
            check_value(row, delta_of(M(row["at"])), REL)
        else:
            check_epsilon(row, delta_of, REL)


def k_of(row: dict[str, str]) -> int:
    return int(spec_params(row)[1].get("count", "1"))


def rows_of() -> list[dict[str, str]]:
    return newest(load_table("relations", directory=TABLES_DIR))


@needs_tables
def test_the_newest_rows_are_there() -> None:
    rows = rows_of()
    assert len(rows) == 44
    kinds = {n: [r for r in rows if n in r["mechanisms"]] for n in NEWEST}
    assert {spec_params(r)[0] for r in kinds["with-replacement="]} == {"gaussian", "laplace", "dlaplace", "dgaussian"}
    assert {k_of(r) for r in kinds["relation=replace-special"]} == {1, 2}
    assert {k_of(r) for r in kinds["truncate="]} == {1, 10} == {k_of(r) for r in kinds["with-replacement="]}
    assert min(M(r["at"]) for r in kinds["relation=replace-special"] if r["query"] == "epsilon") == M("1e-30")
    for r in kinds["truncate="] + kinds["with-replacement="]:
        assert "upper bound" in r["note"], r


@needs_tables
def test_every_newest_row_but_ten_truncated_runs() -> None:
    rows = [r for r in rows_of() if not ("truncate=" in r["mechanisms"] and k_of(r) > 1)]
    assert len(rows) == 43
    for r in rows:
        check_row(r)


def eps_at(delta_of: Fn, dg: mpmath.mpf) -> mpmath.mpf:
    """The eps with delta_of(eps) = dg by bisection on [0, 64] (delta_of decreasing)."""
    lo, hi = mpmath.mpf(0), mpmath.mpf(64)
    assert delta_of(lo) > dg > delta_of(hi)
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if delta_of(mid) > dg else (lo, mid)
    return (lo + hi) / 2


@needs_tables
def test_ten_truncated_runs_lie_between_one_run_and_basic_composition() -> None:
    (row,) = [r for r in rows_of() if "truncate=" in r["mechanisms"] and k_of(r) == 10]
    dg = M(row["at"])
    with mpmath.workdps(DPS):
        one = reference(row, k=1)
        lower, upper = eps_at(one, dg), 10 * eps_at(one, dg / 10)
    assert lower < M(row["lower"]) <= M(row["upper"]) < upper, (lower, row["lower"], row["upper"], upper)


@needs_tables
def test_the_check_fails_on_a_wrong_newest_row() -> None:
    rows = [r for r in rows_of() if M(r["lower"]) > 0]
    picks = [next(r for r in rows if n in r["mechanisms"] and k_of(r) == k) for n, k in
             (("relation=replace-special", 1), ("relation=replace-special", 2), ("truncate=", 1),
              ("relation=replace-one", 1), ("with-replacement=", 1), ("with-replacement=", 10),
              ("laplace:", 1), ("dlaplace:", 1), ("dgaussian:", 1))]
    assert {r["query"] for r in picks} >= {"epsilon"}
    picks.append(next(r for r in rows if r["query"] == "delta" and "truncate=" in r["mechanisms"]))
    for r in picks:
        check_row(r)
        with pytest.raises(AssertionError):
            check_row(corrupted(r))
