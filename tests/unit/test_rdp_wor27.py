"""The Gaussian's bound for a fixed batch without replacement, Wang-Balle-Kasiviswanathan 2019, Thm 27
(issue 28, docs/rdp.md §6): the upper end of the bracket where it is smaller than Thm 9's.

References, each independent of the engine:
- the theorem's formula written here from the paper, in mpmath at 50 digits: each term j >= 3 is
  gamma^j C(n,j) min{4 sqrt(chi(2 floor(j/2)) chi(2 ceil(j/2))), 2 e^{(j-1) eps(j)}}, with chi(k) =
  E_Q[(P/Q - 1)^k] the Pearson-Vajda moment of N(mu,1) against N(0,1), here the binomial expansion of
  the definition in mpmath at a precision above the cancellation, itself checked against quadrature
  of the definition;
- the truth: the divergence of pairs of datasets a fixed batch attains, by mpmath quadrature (every
  one must lie below the bound);
- dp_accounting's float of the same theorem (``_compute_rdp_sample_wor_gaussian``), where installed.
"""

from __future__ import annotations

import json
from fractions import Fraction

import mpmath as mp
import pytest
from flint import ctx

from exactdp.api.rdp import rdp_curve
from exactdp.cli import main
from exactdp.engines.rdp import divergence_arb
from exactdp.engines.rdp_wor import WBK27_BOUND, WBK_BOUND, WBK_MIXED_BOUND, is_wbk_bound
from exactdp.model.composition import Composition
from exactdp.testing.rdp import judge_rdp


@pytest.fixture(autouse=True)
def _mpmath_precision():
    """50 digits inside each test, restored after (no global precision left changed)."""
    with mp.workdps(50):
        yield


def wor(sigma: str, m: int, n: int, count: int = 1) -> str:
    return f"gaussian:sigma={sigma},sample={m},of={n},relation=replace-one" + (f",count={count}" if count > 1 else "")


def mpf(q: Fraction) -> mp.mpf:
    return mp.mpf(q.numerator) / q.denominator


# -- the theorem by hand ---------------------------------------------------------------------------

def pearson_by_sum(mu2: mp.mpf, k: int) -> mp.mpf:
    """E_Q[(P/Q - 1)^k] = sum_i C(k,i) (-1)^{k-i} E_Q[(P/Q)^i], E_Q[(P/Q)^i] = e^{i (i-1) mu^2 / 2},
    at enough digits to survive the cancellation (the terms reach 2^k e^{k^2 mu^2 / 2})."""
    extra = int(k * 0.31 + k * k * float(mu2) / 4.6 + 40)  # float ok: a number of guard digits
    with mp.workdps(mp.mp.dps + extra):
        s = mp.fsum(mp.binomial(k, i) * (-1) ** (k - i) * mp.exp(i * (i - 1) * mu2 / 2) for i in range(k + 1))
    return +s


def pearson_by_quadrature(mu2: mp.mpf, k: int) -> mp.mpf:
    """The definition: int phi(x) (e^{mu x - mu^2/2} - 1)^k dx."""
    mu = mp.sqrt(mu2)
    return mp.quad(lambda x: mp.npdf(x) * mp.expm1(mu * x - mu2 / 2) ** k,
                   [-mp.inf, -10, 0, k * mu / 2, k * mu, k * mu + 10, mp.inf])


def thm27_by_hand(gamma: mp.mpf, n: int, mu2: mp.mpf, *, four: int = 4, cs: bool = True) -> mp.mpf:
    """(n-1) eps'(n) <= log(1 + gamma^2 C(n,2) min{4 (e^{eps(2)} - 1), 2 e^{eps(2)}}
    + sum_{j=3}^n gamma^j C(n,j) min{4 sqrt(chi(2 floor(j/2)) chi(2 ceil(j/2))), 2 e^{(j-1) eps(j)}}),
    eps(j) = j mu^2 / 2 (WBK19 Thm 27; ``four`` and ``cs`` only to show a wrong term is caught)."""
    def eps(j: int) -> mp.mpf:
        return j * mu2 / 2

    s = gamma ** 2 * mp.binomial(n, 2) * min(4 * mp.expm1(eps(2)), 2 * mp.exp(eps(2)))
    for j in range(3, n + 1):
        lo, hi = 2 * (j // 2), 2 * ((j + 1) // 2)
        pv = four * (mp.sqrt(pearson_by_sum(mu2, lo) * pearson_by_sum(mu2, hi)) if cs else pearson_by_sum(mu2, lo))
        s += gamma ** j * mp.binomial(n, j) * min(pv, 2 * mp.exp((j - 1) * eps(j)))
    return mp.log1p(s)


def thm27_divergence(gamma: mp.mpf, alpha: Fraction, mu2: mp.mpf, **wrong) -> mp.mpf:
    """The bound on D_alpha: K(n)/(n-1) at an integer, the chord of K between floor and ceil (K(1) = 0)."""
    lo = alpha.numerator // alpha.denominator
    a = mpf(alpha)
    if alpha.denominator == 1:
        return thm27_by_hand(gamma, lo, mu2, **wrong) / (a - 1)
    t = a - lo
    k_lo = mp.mpf(0) if lo == 1 else thm27_by_hand(gamma, lo, mu2, **wrong)
    return ((1 - t) * k_lo + t * thm27_by_hand(gamma, lo + 1, mu2, **wrong)) / (a - 1)


def engine_upper(spec: str, alpha: Fraction) -> mp.mpf:
    (m, _), = Composition.of(spec).groups
    with ctx.workprec(260):
        got = divergence_arb(m, alpha, "max")
    assert mp.mpf(got.rad().str(5, radius=False)) < abs(mp.mpf(got.mid().str(60, radius=False))) * mp.mpf(10) ** -48
    return mp.mpf(got.mid().str(60, radius=False))


def agrees(got: mp.mpf, want: mp.mpf) -> bool:
    return abs(got - want) <= abs(want) * mp.mpf(10) ** -45


@pytest.mark.parametrize("mu2,k", [("1", 2), ("1", 4), ("0.25", 6), ("0.0625", 10), ("4", 8)])
def test_the_pearson_vajda_sum_is_the_definition(mu2, k):
    got = pearson_by_sum(mp.mpf(mu2), k)
    want = pearson_by_quadrature(mp.mpf(mu2), k)
    assert abs(got - want) <= want * mp.mpf(10) ** -30


HAND = [  # (sigma, m, n, gamma, mu^2)
    ("2", 1, 10, "0.1", "0.25"),
    ("4", 600, 6000, "0.1", "0.0625"),
    ("2", 60, 6000, "0.01", "0.25"),
    ("3/2", 1, 2, "0.5", "4/9"),
]


@pytest.mark.parametrize("sigma,m,n,gamma,mu2", HAND)
@pytest.mark.parametrize("alpha", [Fraction(2), Fraction(3), Fraction(4), Fraction(7), Fraction(12), Fraction(40),
                                   Fraction(5, 2), Fraction(71, 10)])
def test_the_upper_end_is_the_published_formula_of_thm27(sigma, m, n, gamma, mu2, alpha):
    g = mp.mpf(gamma)
    m2 = mp.mpf(Fraction(mu2).numerator) / Fraction(mu2).denominator
    assert agrees(engine_upper(wor(sigma, m, n), alpha), thm27_divergence(g, alpha, m2))


@pytest.mark.parametrize("wrong", [{"four": 2}, {"cs": False}])
def test_a_wrong_term_fails_the_comparison(wrong):
    """The comparison is sharp: a dropped factor 2 in the 4, or chi(2 floor(j/2)) alone in place of the
    Cauchy-Schwarz mean, moves the formula far beyond the tolerance where Thm 27 gives the bound."""
    g, m2 = mp.mpf("0.1"), mp.mpf("0.25")
    got = engine_upper(wor("2", 1, 10), Fraction(7))
    assert agrees(got, thm27_divergence(g, Fraction(7), m2))
    assert not agrees(got, thm27_divergence(g, Fraction(7), m2, **wrong))


def test_where_thm9_is_smaller_the_bound_and_its_name_are_thm9s():
    """At sigma 1 every term j >= 3 of Thm 9 (2 e^{(j-1) eps(j)}) is below the Pearson-Vajda side: the
    bound is Thm 9's and the answer names it."""
    e = rdp_curve(wor("1", 60, 6000), [8], digits=15)[0]
    assert e.algorithm == WBK_BOUND
    e = rdp_curve(wor("2", 60, 6000), [2, 8], digits=15)
    assert [x.algorithm for x in e] == [WBK_BOUND, WBK27_BOUND]  # order 2 has no term j >= 3


# -- containment: no pair of datasets lies above the bound -----------------------------------------

@pytest.mark.parametrize("sigma", ["1/2", "1", "2", "4", "8"])
@pytest.mark.parametrize("m,n", [(1, 1000), (1, 100), (1, 10), (1, 2)])
def test_the_attained_divergence_lies_below_the_new_upper_end(sigma, m, n):
    """The lower end (the Poisson pair of rate gamma, certified) never exceeds the upper end: a wrong bound
    would cross it (rdp_curve also refuses a bracket upside down)."""
    for e in rdp_curve(wor(sigma, m, n, 3), [2, 3, 5, 16, 64, Fraction(7, 2)], digits=12):
        assert is_wbk_bound(e.algorithm)
        assert 0 < e.lower <= e.upper


def fixed_batch_pair(values_x: list[mp.mpf], values_y: list[mp.mpf], mu: mp.mpf, alpha: int) -> mp.mpf:
    """D_alpha of a one-record batch (m = 1) of a sum query with Gaussian noise N(0, 1) scaled so the
    sensitivity is mu: the output is x_I + noise, I uniform over the n records; X and Y differ in one record."""
    n = len(values_x)

    def dens(vals: list[mp.mpf], x: mp.mpf) -> mp.mpf:
        return mp.fsum(mp.npdf(x - v * mu) for v in vals) / n

    f = lambda x: dens(values_x, x) ** alpha * dens(values_y, x) ** (1 - alpha)
    return mp.log(mp.quad(f, [-mp.inf, -10, 0, mu, 10 + alpha * mu, mp.inf])) / (alpha - 1)


@pytest.mark.parametrize("alpha", [3, 8])
def test_pairs_of_datasets_lie_below_the_bound(alpha):
    """Datasets of two or three records in [0, 1], the changed one 0 -> 1, the others anywhere: each pair's
    divergence (both orders) lies below the Thm 27 upper end."""
    for sigma, others in (("2", [[0], [mp.mpf("0.5")], [1]]), ("4", [[0, 0], [0, 1], [mp.mpf("0.3"), 1]])):
        n = len(others[0]) + 1
        up = mpf(rdp_curve(wor(sigma, 1, n), [alpha], digits=15)[0].upper)
        mu = 1 / mpf(Fraction(sigma))
        for rest in others:
            x, y = [mp.mpf(1)] + rest, [mp.mpf(0)] + rest
            assert fixed_batch_pair(x, y, mu, alpha) <= up
            assert fixed_batch_pair(y, x, mu, alpha) <= up


# -- the answers name the bound --------------------------------------------------------------------

def test_json_kit_and_conversion_name_thm27(capsys):
    rc = main(["rdp", "--mechanism", wor("2", 60, 6000, 10), "--orders", "2,8,5/2", "--json"])
    assert rc == 0
    rows = json.loads(capsys.readouterr().out)["orders"]
    assert [r["bound"] for r in rows] == [WBK_BOUND, WBK27_BOUND, WBK27_BOUND]
    c = wor("2", 60, 6000)
    enc = rdp_curve(c, [8], digits=20)[0]
    v = judge_rdp(str((enc.lower + enc.upper) / 2), order=8, composition=c)
    assert v.verdict == "undecided" and WBK27_BOUND in v.note
    assert judge_rdp(str(enc.upper), order=8, composition=c).verdict == "sound"
    import exactdp

    e = exactdp.epsilon(wor("2", 60, 6000, 1000), "1e-5", method="rdp-mironov", orders=[8], digits=8)
    assert e.algorithm == f"rdp-mironov (order 8, {WBK27_BOUND})"


def test_a_gaussian_batch_beside_another_names_both():
    spec = [wor("2", 60, 6000), "laplace:scale=2,sample=1,of=10,relation=replace-one"]
    assert rdp_curve(spec, [8], digits=10)[0].algorithm == WBK_MIXED_BOUND
    # the discrete Gaussian keeps Thm 9 (Thm 27 is not applied to it: docs/rdp.md §6)
    assert rdp_curve("dgaussian:sigma=2,sample=1,of=10,relation=replace-one", [8], digits=10)[0].algorithm == WBK_BOUND


# -- dp_accounting computes the same theorem ------------------------------------------------------

@pytest.mark.parametrize("sigma,m,n,count,decided", [(2.0, 60, 6000, 100, 120), (4.0, 600, 6000, 10, 35)])
def test_dp_accountings_fixed_batch_curve_is_the_same_theorem_and_now_decided(sigma, m, n, count, decided):
    """dp_accounting's RdpAccountant curve for a fixed batch (its default 156 orders) is Thm 27 in floats
    up to order 256 (Thm 9 past it): within float rounding of the certified upper end, never below the
    lower end; and where its float lands at or above the upper end, the kit decides it sound (before the
    Thm 27 upper end: 31 and 12 of 156)."""
    rdp = pytest.importorskip("dp_accounting.rdp.rdp_privacy_accountant")
    orders = list(rdp.DEFAULT_RDP_ORDERS)
    theirs = rdp._compute_rdp_sample_wor_gaussian(m / n, sigma, orders) * count
    spec = wor(repr(sigma), m, n, count)
    ours = rdp_curve(spec, [Fraction(a) for a in orders], digits=20)
    sound, want = 0, {}
    for a, t, e in zip(orders, theirs, ours):
        t = Fraction(float(t))  # float ok: the peer's float, exactly
        if a <= 256:
            assert abs(t - e.upper) <= e.upper * Fraction(1, 10**12), (a, float(t), e)
        else:  # Thm 9 alone: at or above the Thm 27 upper end (up to its rounding)
            assert t >= e.upper * (1 - Fraction(1, 10**13)), (a, float(t), e)
        assert t >= e.lower
        sound += t >= e.upper
        if a in (3, 8, 32, 1024):
            want[a] = (t, "sound" if t >= e.upper else "undecided")
    assert sound >= decided
    cache: dict = {}
    for a, (t, verdict) in want.items():  # the kit says the same
        assert judge_rdp(t, order=a, composition=spec, cache=cache).verdict == verdict
