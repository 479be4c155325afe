"""Optimal heterogeneous composition (MV Thm 1.5) against independent oracles.

Oracles here share no code with exactdp.engines.mv: brute force over all 2^k subsets with exact
Fractions (eps_i = log of rationals), and enumeration of how many of each value are in S with
mpmath interval arithmetic (rational eps_i; the threshold test is exact over Q).
"""

from __future__ import annotations

import itertools
import math
import random
from fractions import Fraction

import pytest
from mpmath import iv, libmp

from exactdp import Composition, ExactReal
from exactdp.core.errors import PrecisionError
from exactdp.engines import mv, mv_atoms
from exactdp.api.optimal import is_private, optimal_delta, optimal_epsilon

iv.dps = 60


# -- oracles ------------------------------------------------------------------------------------

def brute_delta_exact(ys: list[Fraction], deltas: list[Fraction], E: Fraction) -> Fraction:
    """delta_opt at eps_g = log E, eps_i = log y_i: the MV sum over all 2^k subsets, exact."""
    k = len(ys)
    total = Fraction(0)
    for S in itertools.product((0, 1), repeat=k):
        a = b = Fraction(1)
        for y, s in zip(ys, S):
            if s:
                a *= y
            else:
                b *= y
        total += max(Fraction(0), a - E * b)
    den = math.prod(1 + y for y in ys)
    pd = math.prod(1 - d for d in deltas)
    return 1 - pd * (1 - total / den)


def groups_delta_iv(groups: list[tuple[Fraction, int]], deltas: list[tuple[Fraction, int]], eps_g: Fraction):
    """delta_opt for rational eps (value, count): enumerate (j_1..j_G), interval arithmetic."""
    total = iv.mpf(0)
    ranges = [range(c + 1) for _, c in groups]
    for js in itertools.product(*ranges):
        L = sum((2 * j - c) * e for (e, c), j in zip(groups, js))
        if L <= eps_g:  # exact comparison over Q
            continue
        s = sum(j * e for (e, _), j in zip(groups, js))
        sc = sum((c - j) * e for (e, c), j in zip(groups, js))
        N = math.prod(math.comb(c, j) for (_, c), j in zip(groups, js))
        total += N * (iv.exp(_iv(s)) - iv.exp(_iv(eps_g)) * iv.exp(_iv(sc)))
    den = iv.mpf(1)
    for e, c in groups:
        den *= (1 + iv.exp(_iv(e))) ** c
    pd = math.prod((1 - d) ** c for d, c in deltas)
    return 1 - _iv(pd) * (1 - total / den)


def _iv(q: Fraction):
    return iv.mpf(q.numerator) / q.denominator


def ends(x) -> tuple[Fraction, Fraction]:
    """The exact rational endpoints of an mpmath interval."""
    a, b = x._mpi_
    return Fraction(*libmp.to_rational(a)), Fraction(*libmp.to_rational(b))


def iv_contains(x, lo: Fraction, hi: Fraction) -> bool:
    """Whether the interval x and [lo, hi] intersect (the true value is in both)."""
    a, b = ends(x)
    return not (b < lo or a > hi)


def comp_of(groups, deltas=None) -> Composition:
    deltas = deltas or [0] * len(groups)
    return Composition.heterogeneous([(e, d, c) for (e, c), d in zip(groups, deltas)])


def rel_width(enc) -> Fraction:
    return (enc.upper - enc.lower) / enc.lower


# -- reference values (docs/mathematics.md §6) -------------------------------------------------------

def test_reference_heterogeneous_pure():
    c = Composition.heterogeneous([(x, 0) for x in ["0.1", "0.2", "0.3", "0.5", "0.7"]])
    d = optimal_delta(c, ExactReal.parse("0.6"), digits=25)
    assert d.contains("0.1952405344097087430920803") or d.lower_str()[:26] == "0.1952405344097087430920803"[:26]
    assert abs(d.lower - Fraction("0.1952405344097087430920803")) < Fraction(1, 10**25)
    e = optimal_epsilon(c, Fraction(1, 100), digits=25)
    assert abs(e.lower - Fraction("1.643345315277604654141905")) < Fraction(1, 10**24)


def test_reference_dp_accounting_028():
    c = Composition.heterogeneous([("1", "0.1"), ("2", "0.2")])
    d = optimal_delta(c, ExactReal.parse("3"))
    assert d.exact == Fraction(28, 100)


# -- brute force over all subsets, exact (log-rational eps) -------------------------------------------

YS = [Fraction(3, 2), Fraction(2), Fraction(5, 4), Fraction(9, 4), Fraction(4), Fraction(6, 5), Fraction(8)]
DS = [Fraction(0), Fraction(1, 10**6), Fraction(1, 1000)]


@pytest.mark.parametrize("seed", range(12))
def test_bruteforce_exact_both_directions(seed):
    rng = random.Random(seed)
    k = rng.randint(2, 7)
    ys = [rng.choice(YS) for _ in range(k)]
    deltas = [rng.choice(DS) for _ in range(k)]
    comp = Composition.heterogeneous([(f"log({y})", d) for y, d in zip(ys, deltas)])
    for E in [Fraction(1), Fraction(3, 2), Fraction(5), Fraction(7, 3), math.prod(ys)]:
        d = optimal_delta(comp, ExactReal.log(E))
        assert d.exact == brute_delta_exact(ys, deltas, E)
    # epsilon: the answer log(q) is exact; delta at log(q) must be exactly delta_g
    for dg in [Fraction(1, 100), Fraction(1, 10), Fraction(1, 3)]:
        e = optimal_epsilon(comp, dg)
        floor_delta = 1 - math.prod(1 - x for x in deltas)
        if dg < floor_delta:
            assert e.is_infinite
            continue
        if e.exact == 0:
            assert brute_delta_exact(ys, deltas, Fraction(1)) <= dg
            continue
        assert e.exact_log is not None
        assert brute_delta_exact(ys, deltas, e.exact_log) == dg


def test_bruteforce_exact_decide_boundary():
    ys = [Fraction(3, 2), Fraction(2), Fraction(2), Fraction(5, 4)]
    comp = Composition.heterogeneous([(f"log({y})", "1e-3") for y in ys])
    for E in [Fraction(1), Fraction(2), Fraction(11, 5)]:
        d = brute_delta_exact(ys, [Fraction(1, 1000)] * 4, E)
        assert is_private(comp, ExactReal.log(E), d)
        assert not is_private(comp, ExactReal.log(E), d - Fraction(1, 10**40))


# -- hidden-style: 2 to 4 distinct rational eps, delta_i in {0, 1e-6, 1e-3} -------------------------

EPS = ["0.05", "0.1", "0.15", "0.25", "0.3", "0.5", "0.7", "1"]


@pytest.mark.parametrize("seed", range(10))
def test_hidden_style_rational(seed):
    rng = random.Random(100 + seed)
    g = rng.randint(2, 4)
    values = rng.sample(EPS, g)
    groups = [(Fraction(v), rng.randint(1, 6)) for v in values]
    deltas = [rng.choice(DS) for _ in range(g)]
    comp = comp_of(groups, deltas)
    total = sum(e * c for e, c in groups)
    for eps_g in [Fraction(0), total / 5, total / 2, Fraction(1, 3)]:
        d = optimal_delta(comp, ExactReal.rational(eps_g), digits=30)
        o = groups_delta_iv(groups, list(zip(deltas, [c for _, c in groups])), eps_g)
        assert iv_contains(o, d.lower, d.upper)
        assert d.exact is not None or rel_width(d) <= Fraction(1, 10**28)
    floor_delta = 1 - math.prod((1 - dl) ** c for dl, (_, c) in zip(deltas, groups))
    for dg in [Fraction(1, 1000), Fraction(1, 100), Fraction(1, 10)]:
        e = optimal_epsilon(comp, dg, digits=30)
        if dg < floor_delta:
            assert e.is_infinite
            continue
        if e.exact == 0:
            continue
        assert rel_width(e) <= Fraction(1, 10**28)
        # delta is decreasing in eps_g: delta(lower) >= delta_g >= delta(upper)
        olo = groups_delta_iv(groups, list(zip(deltas, [c for _, c in groups])), e.lower)
        ohi = groups_delta_iv(groups, list(zip(deltas, [c for _, c in groups])), e.upper)
        assert ends(olo)[1] >= dg >= ends(ohi)[0]


def test_infinite_and_boundary_delta():
    comp = Composition.heterogeneous([("0.1", "1e-3", 3), ("0.2", "1e-6", 2)])
    floor_delta = 1 - Fraction(999, 1000) ** 3 * (1 - Fraction(1, 10**6)) ** 2
    assert optimal_epsilon(comp, floor_delta - Fraction(1, 10**30)).is_infinite
    assert optimal_epsilon(comp, floor_delta).exact == Fraction(7, 10)  # sum eps_i, exactly
    assert optimal_delta(comp, ExactReal.parse("0.7")).exact == floor_delta
    assert optimal_delta(comp, ExactReal.parse("5")).exact == floor_delta
    assert is_private(comp, ExactReal.parse("0.7"), floor_delta)
    assert not is_private(comp, ExactReal.parse("0.7"), floor_delta - Fraction(1, 10**50))


# -- off-grid: two values with seven significant digits, 200 mechanisms ------------------------------

def test_off_grid_two_values_200():
    groups = [(Fraction("0.1234567"), 120), (Fraction("0.0456789"), 80)]
    comp = comp_of(groups, ["1e-6", 0])
    d = optimal_delta(comp, ExactReal.parse("2"), digits=6)
    assert d.algorithm == "enumeration"
    assert rel_width(d) <= Fraction(1, 10**6)
    o = groups_delta_iv(groups, [(Fraction(1, 10**6), 120), (Fraction(0), 80)], Fraction(2))
    assert iv_contains(o, d.lower, d.upper)
    e = optimal_epsilon(comp, Fraction(1, 1000), digits=6)
    assert rel_width(e) <= Fraction(1, 10**6)
    olo = groups_delta_iv(groups, [(Fraction(1, 10**6), 120), (Fraction(0), 80)], e.lower)
    ohi = groups_delta_iv(groups, [(Fraction(1, 10**6), 120), (Fraction(0), 80)], e.upper)
    assert ends(olo)[1] >= Fraction(1, 1000) >= ends(ohi)[0]


# -- agreement with an independent homogeneous sum (docs/mathematics.md §3) ---------------------------

def homogeneous_exact(y: Fraction, delta: Fraction, k: int, E: Fraction) -> Fraction:
    # MV Thm 1.4: (1+e^eps)^-k sum_{l: (2l-k) eps > eps_g} C(k,l)(e^{l eps} - e^{eps_g} e^{(k-l) eps})
    s = sum(math.comb(k, l) * (y**l - E * y ** (k - l)) for l in range(k + 1) if y ** (2 * l - k) > E)
    return 1 - (1 - delta) ** k * (1 - s / (1 + y) ** k)


@pytest.mark.parametrize("y,delta,k", [(Fraction(3, 2), Fraction(0), 10), (Fraction(2), Fraction(1, 1000), 17),
                                       (Fraction(11, 10), Fraction(1, 10**6), 40)])
def test_homogeneous_agreement_exact(y, delta, k):
    comp = Composition.heterogeneous([(f"log({y})", delta, k)])
    for E in [Fraction(1), Fraction(3), y**3, Fraction(7, 2)]:
        assert optimal_delta(comp, ExactReal.log(E)).exact == homogeneous_exact(y, delta, k, E)
    # the enumeration engine (one atom per count of the value) agrees exactly too
    prof = mv_atoms.build_profile([(ExactReal.log(y), k)], force="enum")
    pd = (1 - delta) ** k
    assert mv.delta_on_profile(prof, pd, ExactReal.log(Fraction(3)), 30).exact == homogeneous_exact(y, delta, k, Fraction(3))


def test_homogeneous_agreement_rational():
    # eps = 0.1, delta = 0.001, k = 30: docs/mathematics.md §6 values
    comp = Composition.heterogeneous([("0.1", "0.001", 30)])
    d = optimal_delta(comp, ExactReal.parse("1"), digits=25)
    assert abs(d.lower - Fraction("0.03981841052213057502284336")) < Fraction(1, 10**25)
    e = optimal_epsilon(comp, Fraction(5, 100), digits=25)
    assert abs(e.lower - Fraction("0.8463026344747974060804514")) < Fraction(1, 10**24)


# -- the three engines agree ---------------------------------------------------------------------

def test_grid_and_enumeration_agree():
    groups = [(ExactReal.parse("0.1"), 4), (ExactReal.parse("0.25"), 3), (ExactReal.parse("0.7"), 2)]
    pg = mv_atoms.build_profile(groups, force="grid")
    pe = mv_atoms.build_profile(groups, force="enum")
    assert isinstance(pg, mv_atoms.GridProfile) and isinstance(pe, mv_atoms.EnumProfile)
    pd = Fraction(1)
    for x in ["0", "0.3", "1.1"]:
        a = mv.delta_on_profile(pg, pd, ExactReal.parse(x), 30)
        b = mv.delta_on_profile(pe, pd, ExactReal.parse(x), 30)
        assert a.lower <= b.upper and b.lower <= a.upper
    a = mv.epsilon_on_profile(pg, pd, Fraction(1, 50), 30)
    b = mv.epsilon_on_profile(pe, pd, Fraction(1, 50), 30)
    assert a.lower <= b.upper and b.lower <= a.upper


def test_mixed_log_and_rational_decide():
    comp = Composition.heterogeneous([("log(3/2)", 0, 3), ("0.3", "1e-3", 2)])
    d = optimal_delta(comp, ExactReal.parse("0.5"))
    assert d.algorithm == "enumeration"
    assert is_private(comp, ExactReal.parse("0.5"), d.upper)
    assert not is_private(comp, ExactReal.parse("0.5"), d.lower)
    e = optimal_epsilon(comp, Fraction(1, 20))
    assert is_private(comp, ExactReal.rational(e.upper), Fraction(1, 20))
    assert not is_private(comp, ExactReal.rational(e.lower), Fraction(1, 20))


def test_many_off_grid_values_get_a_certified_bracket(monkeypatch):
    # caps lowered so that 12 distinct off-grid values take the PLD path quickly
    monkeypatch.setattr(mv_atoms, "ENUM_CAP", 1000)
    monkeypatch.setattr(mv_atoms, "GRID_CAP", 200_000)
    rng = random.Random(7)
    vals = [Fraction(rng.randint(10**6, 3 * 10**6), 10**7) for _ in range(12)]
    groups = [(ExactReal.rational(v), 1) for v in vals]
    comp = Composition.heterogeneous([(v, 0) for v in vals])
    d = optimal_delta(comp, ExactReal.parse("1"), digits=3)
    assert d.algorithm == "pld"
    exact = mv.delta_on_profile(mv_atoms.build_profile(groups, force="enum"), Fraction(1), ExactReal.parse("1"), 20)
    assert d.lower <= exact.upper and exact.lower <= d.upper
    assert rel_width(d) <= Fraction(1, 1000)
    # more digits than a bracket can reach: the best certified bracket, never nothing
    from exactdp.core import progress

    with progress.task("t", max_seconds=8, stream=None):
        d25 = optimal_delta(comp, ExactReal.parse("1"), digits=25)
    assert d25.lower <= exact.upper and exact.lower <= d25.upper and 3 <= d25.digits <= 25


# -- a peer in the same run: dp_accounting's PLD (pessimistic discretization) ----------------------

def test_dp_accounting_pld_is_an_upper_bound_close_to_the_optimum():
    pld_mod = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")
    common = pytest.importorskip("dp_accounting.pld.common")
    rng = random.Random(3)
    eps = [Fraction(rng.randint(1, 100), 1000) for _ in range(60)]
    comp = Composition.heterogeneous([(e, 0) for e in eps])
    plds = [pld_mod.from_privacy_parameters(common.DifferentialPrivacyParameters(float(e), 0.0))  # float ok: peer API
            for e in eps]
    acc = plds[0]
    for p in plds[1:]:
        acc = acc.compose(p)
    ours = optimal_delta(comp, ExactReal.parse("0.5"), digits=20)
    theirs = Fraction(acc.get_delta_for_epsilon(0.5))
    assert theirs >= ours.lower * (1 - Fraction(1, 10**9))  # an upper bound, up to float rounding
    assert theirs <= ours.upper * Fraction(105, 100)  # and within 5%
