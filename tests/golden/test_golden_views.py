"""The golden tables ``tradeoff`` and ``conversions`` (issue 28 §5) against independent evaluations:

* tradeoff: the Gaussian closed form beta = Phi(Phi^-1(1 - alpha) - mu) in mpmath; pure (eps, 0)
  compositions by the Neyman-Pearson test over the binomial law of the k-fold generic pair (exact
  Fractions when e^eps is rational); the subsampled Gaussian's bracket between the closed form of the
  Gaussian without sampling (which it dominates) and 1 - alpha;
* conversions: the published formulas of docs/rdp.md §3 over the same orders, with the divergences
  written here (Gaussian alpha/(2 s^2); Laplace, Mironov 2017 Prop. 6; the subsampled Gaussian by the
  binomial sum for the remove order and mpmath quadrature for the add order), and the Gaussian optimum by
  root finding on its closed-form delta.
"""

from __future__ import annotations

from fractions import Fraction
from itertools import pairwise
from math import comb

import mpmath
import pytest
from golden_checks import TABLES_DIR, M, check_value, corrupted, needs_tables, spec_params

from exactdp.golden import load_table

DPS = 40
REL = mpmath.mpf(10) ** -30


def gaussian_beta(mu: mpmath.mpf, alpha: mpmath.mpf) -> mpmath.mpf:
    """beta(alpha) of mu-GDP: Phi(Phi^-1(1 - alpha) - mu)."""
    return mpmath.ncdf(inv_ncdf(1 - alpha) - mu)


def inv_ncdf(p: mpmath.mpf) -> mpmath.mpf:
    """Phi^-1(p) = sqrt(2) erfinv(2p - 1)."""
    return mpmath.sqrt(2) * mpmath.erfinv(2 * p - 1)


def pure_beta(e: mpmath.mpf | Fraction, k: int, alpha: mpmath.mpf | Fraction) -> mpmath.mpf | Fraction:
    """beta(alpha) of k runs of the generic pure pair P = (p, 1 - p), Q = (1 - p, p), p = x/(1 + x), x = e^eps:
    the most powerful level-alpha test rejects the outcomes of largest Q/P first, randomising on the last."""
    x = e
    p = x / (1 + x)
    spent, power = 0 * alpha, 0 * alpha
    for j in range(k, -1, -1):  # j coordinates on Q's side: Q/P = x^(2j - k), largest first
        pm = comb(k, j) * (1 - p) ** j * p ** (k - j)
        qm = comb(k, j) * p ** j * (1 - p) ** (k - j)
        if spent + pm >= alpha:
            return 1 - (power + qm * (alpha - spent) / pm)
        spent, power = spent + pm, power + qm
    return 1 - power


def tradeoff_reference(row: dict[str, str]) -> mpmath.mpf | Fraction | None:
    if not row["mechanisms"]:  # k equal pure (eps, 0) mechanisms
        eps, k = row["eps"], row["k"]
        assert row["delta"] == "0"
        if eps.startswith("log("):
            return pure_beta(Fraction(eps[4:-1]), int(k), Fraction(row["at"]))
        return pure_beta(mpmath.exp(M(eps)), int(k), M(row["at"]))
    _, p = spec_params(row)
    if "q" in p:
        return None
    return gaussian_beta(mpmath.sqrt(int(p["count"])) / M(p["sigma"]), M(row["at"]))


def check_tradeoff_row(row: dict[str, str]) -> None:
    with mpmath.workdps(DPS):
        ref = tradeoff_reference(row)
        if isinstance(ref, Fraction):
            assert row["exact"] and Fraction(row["exact"]) == ref, row
            check_value(row, mpmath.mpf(ref.numerator) / ref.denominator, REL)
        elif ref is not None:
            check_value(row, ref, REL)
        else:  # the subsampled Gaussian: dominated by the Gaussian without sampling, below 1 - alpha
            _, p = spec_params(row)
            g = gaussian_beta(mpmath.sqrt(int(p["count"])) / M(p["sigma"]), M(row["at"]))
            assert g <= M(row["lower"]) and M(row["upper"]) <= 1 - M(row["at"]), row
            assert int(row["digits"]) >= 4


@needs_tables
def test_every_tradeoff_row() -> None:
    rows = load_table("tradeoff", directory=TABLES_DIR)
    assert len(rows) == 25 and min(M(r["at"]) for r in rows) == M("0.000001") and max(M(r["at"]) for r in rows) == 0.5
    for r in rows:
        check_tradeoff_row(r)
    sub = [r for r in rows if "q=" in r["mechanisms"]]
    assert len(sub) == 5  # beta falls as alpha grows
    for a, b in pairwise(sub):
        assert M(b["upper"]) < M(a["lower"])


@needs_tables
def test_the_tradeoff_check_fails_on_a_wrong_row() -> None:
    rows = load_table("tradeoff", directory=TABLES_DIR)
    for i in (2, 8, 12):  # Gaussian, Gaussian, pure
        check_tradeoff_row(rows[i])
        bad = corrupted(rows[i])
        bad["exact"] = ""
        with pytest.raises(AssertionError):
            check_tradeoff_row(bad)


# -- conversions ----------------------------------------------------------------------------

def laplace_rdp(b: mpmath.mpf, a: mpmath.mpf) -> mpmath.mpf:
    """D_a(Lap(1, b) || Lap(0, b)) (Mironov 2017, Prop. 6)."""
    return mpmath.log(a / (2 * a - 1) * mpmath.exp((a - 1) / b) + (a - 1) / (2 * a - 1) * mpmath.exp(-a / b)) / (a - 1)


def subsampled_rdp(s: mpmath.mpf, q: mpmath.mpf, a: int) -> mpmath.mpf:
    """The larger order of one Poisson-subsampled Gaussian step: remove by the binomial sum, add by quadrature."""
    rem = mpmath.log(mpmath.fsum(comb(a, j) * (1 - q) ** (a - j) * q ** j * mpmath.exp((j * j - j) / (2 * s * s))
                                 for j in range(a + 1))) / (a - 1)

    def integrand(x: mpmath.mpf) -> mpmath.mpf:
        b0 = mpmath.npdf(x, 0, s)
        mix = (1 - q) * b0 + q * mpmath.npdf(x, 1, s)
        return b0 ** a * mix ** (1 - a)  # E_mix[(B/mix)^a], the add order

    add = mpmath.log(mpmath.quad(integrand, [-mpmath.inf, -10, 0, 1, 10, mpmath.inf])) / (a - 1)
    return max(rem, add)


def divergence(row: dict[str, str], a: int) -> mpmath.mpf:
    kind, p = spec_params(row)
    k = int(p["count"])
    if kind == "laplace":
        return k * laplace_rdp(M(p["scale"]), mpmath.mpf(a))
    if "q" in p:
        return k * subsampled_rdp(M(p["sigma"]), M(p["q"]), a)
    return k * mpmath.mpf(a) / (2 * M(p["sigma"]) ** 2)


def conversion(method: str, tau: mpmath.mpf, a: mpmath.mpf, delta: mpmath.mpf) -> mpmath.mpf:
    """eps at delta of one order, docs/rdp.md §3 as published."""
    L = mpmath.log(1 / delta)
    if method == "rdp-mironov":
        return tau + L / (a - 1)
    if method == "rdp-cks":
        return tau + (L + (a - 1) * mpmath.log(a - 1) - a * mpmath.log(a)) / (a - 1)
    return tau + mpmath.log((a - 1) / a) - (mpmath.log(delta) + mpmath.log(a)) / (a - 1)


def gaussian_eps(mu: mpmath.mpf, delta: mpmath.mpf) -> mpmath.mpf:
    """The optimal eps of mu-GDP at delta: the root of Phi(mu/2 - e/mu) - e^e Phi(-mu/2 - e/mu) = delta."""
    lo, hi = mpmath.mpf(0), 10 * mu + 10  # delta(e) falls: bisection to 2^-200
    for _ in range(200):
        mid = (lo + hi) / 2
        if mpmath.ncdf(mu / 2 - mid / mu) - mpmath.exp(mid) * mpmath.ncdf(-mu / 2 - mid / mu) > delta:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def conversion_reference(row: dict[str, str], cache: dict[tuple[str, int], mpmath.mpf]) -> mpmath.mpf | None:
    delta = M(row["at"])
    if row["method"] == "optimal":
        kind, p = spec_params(row)
        if kind == "gaussian" and "q" not in p:
            return gaussian_eps(mpmath.sqrt(int(p["count"])) / M(p["sigma"]), delta)
        return None
    orders = [int(a) for a in dict(o.split("=") for o in row["options"].split(";"))["orders"].split(",")]
    vals = []
    for a in orders:
        key = (row["mechanisms"], a)
        if key not in cache:
            cache[key] = divergence(row, a)
        vals.append(conversion(row["method"], cache[key], mpmath.mpf(a), delta))
    return max(min(vals), mpmath.mpf(0))


@needs_tables
def test_every_conversion_row() -> None:
    rows = load_table("conversions", directory=TABLES_DIR)
    assert len(rows) == 12 and {r["method"] for r in rows} == {"optimal", "rdp-mironov", "rdp-cks", "rdp-bbghs"}
    cache: dict[tuple[str, int], mpmath.mpf] = {}
    with mpmath.workdps(DPS):
        for r in rows:
            ref = conversion_reference(r, cache)
            if ref is not None:
                check_value(r, ref, REL)
        for i in range(0, 12, 4):  # the optimum is below every conversion; cks = bbghs; both below mironov
            opt, mir, cks, bb = rows[i:i + 4]
            assert opt["method"] == "optimal" and M(opt["upper"]) < M(cks["lower"]) < M(mir["lower"])
            assert (cks["lower"], cks["upper"]) == (bb["lower"], bb["upper"])


@needs_tables
def test_the_conversion_check_fails_on_a_wrong_row() -> None:
    rows = load_table("conversions", directory=TABLES_DIR)
    cache: dict[tuple[str, int], mpmath.mpf] = {}
    with mpmath.workdps(DPS):
        for i in (0, 1, 6, 11):
            ref = conversion_reference(rows[i], cache)
            assert ref is not None
            check_value(rows[i], ref, REL)
            with pytest.raises(AssertionError):
                check_value(corrupted(rows[i]), ref, REL)
