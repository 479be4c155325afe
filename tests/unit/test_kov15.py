"""KOV15 Thm 3.3 / MV Thm 1.4 for k equal mechanisms, against independent oracles.

Oracles: (1) brute force over all outcomes of the k-fold product of the dominating pair of
docs/mathematics.md §1 (exact Fractions, e^eps rational); (2) an independent direct sum in mpmath
at 80 digits; (3) the published values of docs/mathematics.md §6.
"""

from __future__ import annotations

import itertools
import math
import random
from fractions import Fraction

import mpmath
import pytest

from exactdp.model.composition import Composition
from exactdp.core.numbers import ExactReal
from exactdp.core.enclosure import Enclosure
from exactdp.engines import kov15
from exactdp.engines.kov15 import kov15_delta, kov15_epsilon, kov15_grid


# -- oracle 1: brute force over the product of the dominating pairs -------------------------------

def dominating_pair(x: Fraction, delta: Fraction) -> tuple[list[Fraction], list[Fraction]]:
    """docs/mathematics.md §1: P, Q on {0,1,2,3} with e^eps = x."""
    P = [delta, (1 - delta) * x / (1 + x), (1 - delta) / (1 + x), Fraction(0)]
    Q = [Fraction(0), (1 - delta) / (1 + x), (1 - delta) * x / (1 + x), delta]
    return P, Q


def brute_delta(x: Fraction, delta: Fraction, k: int, r: Fraction) -> Fraction:
    """sum over all 4^k outcomes y of (P^k(y) - r Q^k(y))_+ (hockey-stick divergence)."""
    P, Q = dominating_pair(x, delta)
    total = Fraction(0)
    for y in itertools.product(range(4), repeat=k):
        p = math.prod((P[i] for i in y), start=Fraction(1))
        q = math.prod((Q[i] for i in y), start=Fraction(1))
        if p > r * q:
            total += p - r * q
    return total


CASES = [(Fraction(3, 2), Fraction(0)), (Fraction(2), Fraction(1, 10)), (Fraction(5, 4), Fraction(1, 1000)),
         (Fraction(7, 3), Fraction(1, 20))]


@pytest.mark.parametrize("x,delta", CASES)
@pytest.mark.parametrize("k", [1, 2, 3, 5])
def test_delta_brute_force_exact(x: Fraction, delta: Fraction, k: int) -> None:
    comp = Composition.homogeneous(f"log({x})", delta, k)
    rs = {Fraction(1), x, x ** 2, Fraction(17, 10), x ** k, x ** k * Fraction(11, 10), x ** (k - 1) * Fraction(3, 2)}
    for r in sorted(rs):
        got = kov15_delta(comp, ExactReal.log(r))
        assert got.exact == brute_delta(x, delta, k, r), (x, delta, k, r)


@pytest.mark.parametrize("x,delta", CASES)
@pytest.mark.parametrize("k", [2, 4])
def test_epsilon_brute_force_exact(x: Fraction, delta: Fraction, k: int) -> None:
    """The eps answer is exactly log(q): the brute-force delta at e^{eps_g} = q is delta_g."""
    comp = Composition.homogeneous(f"log({x})", delta, k)
    floor = 1 - (1 - delta) ** k
    for dg in [Fraction(1, 100), Fraction(1, 20), Fraction(1, 5), Fraction(1, 2), floor]:
        if dg >= 1:
            continue
        got = kov15_epsilon(comp, dg)
        if dg < floor:
            assert got.is_infinite
            continue
        if got.exact == 0:
            assert brute_delta(x, delta, k, Fraction(1)) <= dg
            continue
        q = got.exact_log
        assert q is not None and q > 1
        assert brute_delta(x, delta, k, q) == dg
        assert got.lower <= Fraction(math.log(q)) * (1 + Fraction(1, 10**12))  # float ok: coarse sanity


def test_reference_exact_fractions() -> None:
    """docs/mathematics.md §3: e^eps = 3/2, k = 10, delta_1..delta_5."""
    grid = kov15_grid(Composition.homogeneous("log(3/2)", 0, 10))
    assert [d.exact for _, _, d in grid] == [
        0, Fraction(6561, 1953125), Fraction(53217, 1953125), Fraction(205173, 1953125),
        Fraction(505989, 1953125), Fraction(182369, 390625)]
    assert [e for _, e, _ in grid][:2] == [ExactReal.log(Fraction(3, 2) ** 10), ExactReal.log(Fraction(3, 2) ** 8)]


# -- oracle 2: an independent direct sum in mpmath at 80 digits ------------------------------------

def mp_delta(eps: Fraction, delta: Fraction, k: int, eps_g: Fraction) -> mpmath.mpf:
    # (1-delta)^k can be tiny: carry enough digits that 1 - c (1 - s) keeps 80 of them
    lost = int(k * -math.log10(1 - float(delta))) + 10 if delta else 0  # float ok: a digit count
    with mpmath.workdps(80 + lost):
        e, eg = mpmath.mpf(eps.numerator) / eps.denominator, mpmath.mpf(eps_g.numerator) / eps_g.denominator
        s = mpmath.mpf(0)
        for l in range(k + 1):
            if (2 * l - k) * eps > eps_g:
                # log C(k,l) + l e - k log(1+e^e), and the second term
                lc = mpmath.loggamma(k + 1) - mpmath.loggamma(l + 1) - mpmath.loggamma(k - l + 1)
                base = lc - k * mpmath.log1p(mpmath.exp(e))
                s += mpmath.exp(base + l * e) - mpmath.exp(base + eg + (k - l) * e)
        c = (1 - mpmath.mpf(delta.numerator) / delta.denominator) ** k
        return 1 - c * (1 - s)


def _rand_case(rng: random.Random, kmax: int) -> tuple[Fraction, Fraction, int]:
    eps = Fraction(rng.randint(1, 3000), 1000)
    delta = Fraction(rng.randint(0, 50), 1000) if rng.random() < 0.7 else Fraction(0)
    k = rng.randint(1, kmax)
    return eps, delta, k


def _check_enclosure(enc: Enclosure, truth: mpmath.mpf) -> None:
    with mpmath.workdps(80):
        lo = mpmath.mpf(enc.lower.numerator) / enc.lower.denominator
        hi = mpmath.mpf(enc.upper.numerator) / enc.upper.denominator
        assert lo - mpmath.mpf(10) ** -75 <= truth <= hi + mpmath.mpf(10) ** -75
    assert enc.relative_width() <= Fraction(1, 10**28)


@pytest.mark.parametrize("seed", range(6))
def test_delta_against_mpmath(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(4):
        eps, delta, k = _rand_case(rng, 1500 if seed < 4 else 3000)
        mean_loss = k * eps * Fraction(1, 3)
        eps_g = Fraction(rng.randint(0, 1000), 1000) * max(mean_loss, Fraction(1))
        truth = mp_delta(eps, delta, k, eps_g)
        comp = Composition.homogeneous(eps, delta, k)
        got = kov15_delta(comp, ExactReal.rational(eps_g), digits=30)
        if got.exact is not None:
            assert abs(mpmath.mpf(got.exact.numerator) / got.exact.denominator - truth) < mpmath.mpf(10) ** -70
        else:
            _check_enclosure(got, truth)


@pytest.mark.parametrize("seed", range(5))
def test_epsilon_against_mpmath(seed: int) -> None:
    """delta_opt is decreasing: delta(lower) >= delta_g >= delta(upper), at 80 digits."""
    rng = random.Random(100 + seed)
    for _ in range(3):
        eps, delta, k = _rand_case(rng, 1500 if seed < 3 else 3000)
        floor = 1 - (1 - delta) ** k
        dg = floor + (1 - floor) * Fraction(rng.choice([1, 10, 100, 1000, 5000]), 10000)
        comp = Composition.homogeneous(eps, delta, k)
        got = kov15_epsilon(comp, dg, digits=30)
        if got.exact == 0:
            assert mp_delta(eps, delta, k, Fraction(0)) <= mpmath.mpf(dg.numerator) / dg.denominator
            continue
        assert got.relative_width() <= Fraction(1, 10**28)
        with mpmath.workdps(200):
            target = mpmath.mpf(dg.numerator) / dg.denominator
            assert mp_delta(eps, delta, k, got.lower) >= target
            assert mp_delta(eps, delta, k, got.upper) <= target


def test_beta_route_agrees_with_mpmath(monkeypatch: pytest.MonkeyPatch) -> None:
    """The incomplete-beta route (forced for small k) against the direct mpmath sum."""
    monkeypatch.setattr(kov15, "DIRECT_K_MAX", 0)
    for eps, delta, k, eps_g in [(Fraction(1, 10), Fraction(1, 1000), 30, Fraction(1)),
                                 (Fraction(2), Fraction(0), 7, Fraction(3, 2)),
                                 (Fraction(1, 1000), Fraction(1, 100), 800, Fraction(1, 10)),
                                 (Fraction(3), Fraction(1, 20), 300, Fraction(100))]:
        got = kov15_delta(Composition.homogeneous(eps, delta, k), ExactReal.rational(eps_g))
        _check_enclosure(got, mp_delta(eps, delta, k, eps_g))
    comp = Composition.homogeneous("0.1", "0.001", 30)
    assert _near(kov15_epsilon(comp, Fraction(1, 20)), "0.8463026344747974060804514")


# -- oracle 3: docs/mathematics.md §6 --------------------------------------------------------------

def _near(enc: Enclosure, ref: str, tol: str = "1e-24") -> bool:
    r, t = Fraction(ref), Fraction(tol)
    return enc.lower - t <= r <= enc.upper + t


def test_reference_values() -> None:
    c = Composition.homogeneous("0.1", "0.001", 30)
    assert kov15_delta(c, ExactReal.parse("3")).exact == 1 - Fraction(999, 1000) ** 30
    assert _near(Enclosure.exact_value(1 - Fraction(999, 1000) ** 30), "0.02956903273691425496135216")
    assert _near(kov15_delta(c, ExactReal.parse("1.0")), "0.03981841052213057502284336")
    assert _near(kov15_delta(c, ExactReal.parse("2.0")), "0.0295865807017377067330572")
    assert _near(kov15_epsilon(c, Fraction("0.05")), "0.8463026344747974060804514")
    assert _near(kov15_epsilon(c, Fraction("0.03")), "1.590523063955746067761817")
    assert _near(kov15_epsilon(c, Fraction("0.1")), "0.478463988894736164939395")
    c = Composition.homogeneous("0.4", "0.1", 10)
    assert _near(kov15_delta(c, ExactReal.parse("0.8")), "0.7402118011984184315643465")
    assert _near(kov15_epsilon(c, Fraction("0.7")), "1.457314644726963875465198")
    c = Composition.homogeneous("1", "1e-3", 30)
    assert kov15_epsilon(c, Fraction("0.06")).lower_str().startswith("21.7096126245")
    c = Composition.homogeneous("0.1", "0", 30)
    assert _near(kov15_epsilon(c, Fraction("1e-3")), "1.4811439805399072046", "1e-18")


# -- edge cases -------------------------------------------------------------------------------------

def test_edges() -> None:
    zero = ExactReal.parse("0")
    c = Composition.homogeneous("0", "0.01", 5)  # eps = 0: delta_pure = 0
    assert kov15_delta(c, zero).exact == 1 - Fraction(99, 100) ** 5
    assert kov15_epsilon(c, 1 - Fraction(99, 100) ** 5).exact == 0
    assert kov15_epsilon(c, Fraction(1, 100)).is_infinite
    c = Composition.homogeneous("0.5", 0, 1)  # k = 1: delta(eps_g) = (e^.5 - e^eps_g)/(1+e^.5)
    got = kov15_delta(c, ExactReal.parse("0.25"))
    with mpmath.workdps(60):
        _check_enclosure(got, (mpmath.exp(0.5) - mpmath.exp(mpmath.mpf(1) / 4)) / (1 + mpmath.exp(0.5)))  # float ok: 0.5 exact
    assert kov15_delta(c, ExactReal.parse("0.5")).exact == 0
    assert kov15_epsilon(c, Fraction(0)).exact == Fraction(1, 2)
    c = Composition.homogeneous("log(2)", 0, 3)
    assert kov15_epsilon(c, Fraction(0)).exact_log == 8
    c = Composition.homogeneous("0.1", "0.001", 30)
    assert kov15_epsilon(c, 1 - Fraction(999, 1000) ** 30).exact == 3
    assert kov15_epsilon(c, 1 - Fraction(999, 1000) ** 30 - Fraction(1, 10**60)).is_infinite


# -- huge k: a valid enclosure and a Gaussian (CLT) sanity range ---------------------------------

@pytest.mark.parametrize("k", [10**9, 10**15])
def test_huge_k(k: int) -> None:
    eps = Fraction(1, 1000)
    comp = Composition.homogeneous(eps, 0, k)
    got = kov15_epsilon(comp, Fraction(1, 10**6), digits=30)
    assert not got.is_infinite and got.relative_width() <= Fraction(1, 10**30)
    # privacy loss per mechanism: mean eps tanh(eps/2), sd <= eps; delta 1e-6 sits 4-6 sd out
    mean = k * float(eps) * math.tanh(float(eps) / 2)  # float ok: a coarse sanity range only
    sd = float(eps) * math.sqrt(k)  # float ok
    assert mean + 3 * sd < float(got.lower) < mean + 6 * sd  # float ok
    d = kov15_delta(comp, ExactReal.rational(Fraction(round(mean + 4 * sd))), digits=30)
    assert 0 < d.lower <= d.upper < Fraction(1, 10**3)
    assert d.relative_width() <= Fraction(1, 10**30)


def test_grid_arb_against_mpmath() -> None:
    """The one-pass grid (e^eps transcendental) against the mpmath direct sum at every grid point."""
    for eps, delta, k in [(Fraction(1, 10), Fraction(1, 1000), 30), (Fraction(7, 4), Fraction(0), 41),
                          (Fraction(1, 1000), Fraction(1, 50), 400)]:
        grid = kov15_grid(Composition.homogeneous(eps, delta, k))
        assert len(grid) == k // 2 + 1
        for i, eps_i, d in grid[:: max(1, k // 40)]:
            assert eps_i == ExactReal.rational((k - 2 * i) * eps)
            if d.exact is not None:
                assert i == 0 and d.exact == 1 - (1 - delta) ** k
            else:
                _check_enclosure(d, mp_delta(eps, delta, k, (k - 2 * i) * eps))


def test_exact_results_stay_printable() -> None:
    """Exact answers are only given while they stay printable; beyond, a certified enclosure."""
    big = kov15_delta(Composition.homogeneous("log(3/2)", "0.001", 5000), ExactReal.log(5))
    assert big.exact is None and big.relative_width() <= Fraction(1, 10**30)
    small = kov15_delta(Composition.homogeneous("log(3/2)", "0.001", 800), ExactReal.log(5))
    assert small.exact is not None and "/" in str(small.exact)
