"""The golden table ``discrete`` (issue 27 §7) against an independent evaluation: the loss law of one run
summed here from the noise's pmf output by output (mpmath, 50 digits), composed by exact convolution
(k <= 10, and k = 100 for the discrete Laplace, whose law has D + 1 atoms), and the hockey-stick sum
delta(eps) = sum_l P(l) (1 - e^(eps - l))_+.  The discrete Gaussian at k = 100 is checked for the
consistency of its own bracket (monotone in k and in delta_g)."""

from __future__ import annotations

from functools import cache
from itertools import pairwise

import mpmath
import pytest
from golden_checks import TABLES_DIR, M, check_epsilon, check_value, corrupted, needs_tables, spec_params

from exactdp.golden import load_table

DPS = 50
REL = mpmath.mpf(10) ** -35


@cache
def one_run(kind: str, param: str, sens: int) -> tuple[mpmath.mpf, tuple[tuple[int, mpmath.mpf], ...]]:
    """(c, ((t, P-mass), ...)): the loss is c t at integer t; P = X + D against Q = X, summed over
    outputs y (X the noise; |x| up to where the pmf is below 10^-70)."""
    with mpmath.workdps(DPS):
        if kind == "dlaplace":
            a = M(param)
            w = lambda x: mpmath.exp(-a * abs(x))
            n = int(170 / a) + 2 * sens
            c = a

            def t_of(y: int) -> int:
                return abs(y) - abs(y - sens)
        else:
            s = M(param)
            w = lambda x: mpmath.exp(-mpmath.mpf(x) ** 2 / (2 * s * s))
            n = int(19 * s) + 2 * sens
            c = mpmath.mpf(sens) / (2 * s * s)

            def t_of(y: int) -> int:
                return 2 * y - sens
        xs = range(-n, n + 1)
        z = mpmath.fsum(w(x) for x in xs)
        law: dict[int, mpmath.mpf] = {}
        for y in range(-n + sens, n + 1):  # P(y) = w(y - D)/Z
            t = t_of(y)
            law[t] = law.get(t, mpmath.mpf(0)) + w(y - sens) / z
        return c, tuple(sorted(law.items()))


@cache
def k_runs(kind: str, param: str, sens: int, k: int) -> tuple[tuple[int, mpmath.mpf], ...]:
    """The P-law of the sum of k independent losses (in units of c), by convolution."""
    _, base = one_run(kind, param, sens)
    if k == 1:
        return base
    half = k_runs(kind, param, sens, k // 2)
    rest = k_runs(kind, param, sens, k - k // 2)
    out: dict[int, mpmath.mpf] = {}
    with mpmath.workdps(DPS):
        for t1, p1 in half:
            for t2, p2 in rest:
                out[t1 + t2] = out.get(t1 + t2, mpmath.mpf(0)) + p1 * p2
    return tuple(sorted(out.items()))


def delta_of(kind: str, param: str, sens: int, k: int, eps: mpmath.mpf) -> mpmath.mpf:
    c, _ = one_run(kind, param, sens)
    with mpmath.workdps(DPS):
        return mpmath.fsum(p * (1 - mpmath.exp(eps - c * t)) for t, p in k_runs(kind, param, sens, k) if c * t > eps)


def params(row: dict[str, str]) -> tuple[str, str, int, int]:
    kind, p = spec_params(row)
    return kind, p.get("noise", p.get("sigma", "")), int(p.get("sensitivity", "1")), int(p.get("count", "1"))


def check_row(row: dict[str, str]) -> None:
    kind, param, sens, k = params(row)
    with mpmath.workdps(DPS):
        if row["query"] == "delta":
            check_value(row, delta_of(kind, param, sens, k, M(row["at"])), REL)
        else:
            check_epsilon(row, lambda e: delta_of(kind, param, sens, k, e), REL)


def referenced(row: dict[str, str]) -> bool:
    kind, _, _, k = params(row)
    return k <= 10 or kind == "dlaplace"


@needs_tables
def test_the_grid() -> None:
    rows = load_table("discrete", directory=TABLES_DIR)
    assert len(rows) == 8 * 4 * 5
    assert {params(r)[:3] for r in rows} == {("dlaplace", a, d) for a in ("0.1", "0.5", "1") for d in (1, 2)} | \
        {("dgaussian", s, 1) for s in ("1", "3")}
    assert min(M(r["at"]) for r in rows if r["query"] == "epsilon") == M("1e-30")


@needs_tables
@pytest.mark.parametrize("kind", ["dlaplace", "dgaussian"])
def test_every_row_against_the_convolved_loss_law(kind: str) -> None:
    rows = [r for r in load_table("discrete", directory=TABLES_DIR) if params(r)[0] == kind and referenced(r)]
    assert rows
    for r in rows:
        check_row(r)


@needs_tables
def test_the_k100_brackets_of_the_discrete_gaussian_are_consistent() -> None:
    """Composition only adds loss: eps at delta_g and delta at eps_g grow with k; eps falls as delta_g grows."""
    rows = load_table("discrete", directory=TABLES_DIR)
    by = {(params(r), r["query"], r["at"]): r for r in rows}
    big = [r for r in rows if not referenced(r)]
    assert len(big) == 10
    for r in big:
        kind, param, sens, _ = params(r)
        small = by[((kind, param, sens, 10), r["query"], r["at"])]
        assert M(small["upper"]) <= M(r["lower"]), (r, small)
        assert M(r["lower"]) <= M(r["upper"]) and int(r["digits"]) >= 8
    for m in {params(r)[:3] for r in big}:
        e_rows = sorted((r for r in big if params(r)[:3] == m and r["query"] == "epsilon"), key=lambda r: -M(r["at"]))
        assert len(e_rows) == 3
        for a, b in pairwise(e_rows):  # delta_g falls, eps grows
            assert M(a["upper"]) < M(b["lower"])


@needs_tables
def test_the_check_fails_on_a_wrong_row() -> None:
    rows = [r for r in load_table("discrete", directory=TABLES_DIR) if referenced(r) and M(r["lower"]) > 0]
    picks = [next(r for r in rows if params(r)[0] == kind and r["query"] == q)
             for kind in ("dlaplace", "dgaussian") for q in ("delta", "epsilon")]
    picks.append(next(r for r in rows if r["at"] == "0.000000000000000000000000000001" and params(r)[3] == 10))
    for r in picks:
        check_row(r)
        with pytest.raises(AssertionError):
            check_row(corrupted(r))
