"""The RDP of a fixed batch without replacement (issue 28 §1, docs/rdp.md §6): a certified bracket.

References, each independent of the engine:
- the divergence of the pair one batch run attains, ((1-g) N(0,1) + g N(mu,1), N(0,1)) and the Laplace one,
  by mpmath quadrature at integer orders, in both orders (the truth: it must lie in the bracket, and the
  bound must lie above it, so a bound below the truth fails here);
- the Wang-Balle-Kasiviswanathan 2019 Thm 9 formula evaluated by hand in mpmath from the base mechanisms'
  closed-form divergences (Gaussian alpha mu^2/2, Laplace Mironov 2017 Table II);
- autodp's float of the same bound where autodp is installed.
"""

from __future__ import annotations

import json
from fractions import Fraction

import mpmath as mp
import pytest
from flint import ctx

from exactdp.api.rdp import rdp_curve
from exactdp.cli import main
from exactdp.core.errors import InvalidParameterError
from exactdp.engines.rdp import divergence_arb
from exactdp.engines.rdp_wor import WBK_BOUND, is_wbk_bound
from exactdp.model.composition import Composition
from exactdp.testing import UndecidedClaimError, UnsoundClaimError
from exactdp.testing.rdp import assert_rdp_curve_sound, assert_rdp_sound, judge_rdp


@pytest.fixture(autouse=True)
def _mpmath_precision():
    """40 digits inside each test, restored after (no global precision left changed)."""
    with mp.workdps(40):
        yield


def wor(base: str, m: int, n: int, count: int = 1) -> str:
    return f"{base},sample={m},of={n},relation=replace-one" + (f",count={count}" if count > 1 else "")


# -- the truth: the divergence of the attained pair, by quadrature ----------------------------------

def gauss_pair_divergence(mu: mp.mpf, g: mp.mpf, alpha: int, order: str) -> mp.mpf:
    """D_alpha of ((1-g) N(0,1) + g N(mu,1)) against N(0,1) (order "remove") or the reverse ("add")."""
    beta = alpha if order == "remove" else 1 - alpha

    def f(x: mp.mpf) -> mp.mpf:
        r = (1 - g) + g * mp.exp(mu * x - mu * mu / 2)
        return mp.npdf(x) * r ** beta

    return mp.log(mp.quad(f, [-mp.inf, -10, 0, mu, 10 + alpha * mu, mp.inf])) / (alpha - 1)


def laplace_pair_divergence(eps: mp.mpf, g: mp.mpf, alpha: int, order: str) -> mp.mpf:
    """The same for Lap(0, 1) against Lap(eps, 1) (the Laplace pair with D/b = eps)."""
    beta = alpha if order == "remove" else 1 - alpha

    def f(x: mp.mpf) -> mp.mpf:
        r = (1 - g) + g * mp.exp(abs(x) - abs(x - eps))
        return mp.exp(-abs(x)) / 2 * r ** beta

    return mp.log(mp.quad(f, [-mp.inf, 0, eps, mp.inf])) / (alpha - 1)


CASES = [  # (spec of the base, m, n, truth(alpha, order))
    ("gaussian:sigma=1", 600, 60000, lambda a, o: gauss_pair_divergence(mp.mpf(1), mp.mpf("0.01"), a, o)),
    ("gaussian:sigma=0.8", 1, 8, lambda a, o: gauss_pair_divergence(mp.mpf("1.25"), mp.mpf("0.125"), a, o)),
    ("gaussian:sigma=2", 1, 2, lambda a, o: gauss_pair_divergence(mp.mpf("0.5"), mp.mpf("0.5"), a, o)),
    ("laplace:scale=2", 1, 10, lambda a, o: laplace_pair_divergence(mp.mpf("0.5"), mp.mpf("0.1"), a, o)),
    ("laplace:scale=1/3", 3, 10, lambda a, o: laplace_pair_divergence(mp.mpf(3), mp.mpf("0.3"), a, o)),
]


@pytest.mark.parametrize("base,m,n,truth", CASES)
@pytest.mark.parametrize("alpha", [2, 3, 8])
def test_the_bracket_contains_the_attained_divergence_and_the_bound_lies_above_it(base, m, n, truth, alpha):
    count = 3
    enc = rdp_curve(wor(base, m, n, count), [alpha], digits=12)[0]
    assert is_wbk_bound(enc.algorithm) and enc.exact is None
    rem, add = truth(alpha, "remove"), truth(alpha, "add")
    # the k-fold divergence of one dataset pair (the same pair every run) is k times one run's
    attained = count * max(rem, add)
    assert mp.mpf(enc.lower.numerator) / enc.lower.denominator <= attained * (1 + mp.mpf(10) ** -11)
    assert attained * (1 - mp.mpf(10) ** -11) <= mp.mpf(enc.upper.numerator) / enc.upper.denominator
    # the remove order is the larger for these pairs at these orders, and the bracket's lower end is it
    assert abs(mp.mpf(enc.lower.numerator) / enc.lower.denominator - attained) <= attained * mp.mpf(10) ** -10


def test_every_direction_answers_the_bound_and_the_max_is_the_largest_lower_end():
    c = wor("gaussian:sigma=1", 1, 8)
    by = {d: rdp_curve(c, [4], digits=12, direction=d)[0] for d in ("max", "remove", "add")}
    ups = [by[d].upper for d in ("max", "remove", "add")]  # the same bound (balls of slightly different radii)
    assert max(ups) - min(ups) <= min(ups) * Fraction(1, 10**12)
    assert by["add"].lower < by["remove"].lower == by["max"].lower
    truth_add = gauss_pair_divergence(mp.mpf(1), mp.mpf("0.125"), 4, "add")
    assert by["add"].lower <= Fraction(str(mp.nstr(truth_add * (1 + mp.mpf(10) ** -11), 30)))


# -- the bound: the formula by hand in mpmath ----------------------------------------------------

def wbk_by_hand(gamma: mp.mpf, alpha: int, eps, eps_inf) -> mp.mpf:
    """(alpha-1) eps'(alpha) of Wang-Balle-Kasiviswanathan 2019, Thm 9, in mpmath (eps_inf None: +inf)."""
    def cap(j: int) -> mp.mpf:
        return mp.mpf(2) if eps_inf is None else min(mp.mpf(2), mp.expm1(eps_inf) ** j)

    s = gamma ** 2 * mp.binomial(alpha, 2) * min(4 * mp.expm1(eps(2)), mp.exp(eps(2)) * cap(2))
    for j in range(3, alpha + 1):
        s += gamma ** j * mp.binomial(alpha, j) * mp.exp((j - 1) * eps(j)) * cap(j)
    return mp.log1p(s)


def gauss_eps(mu2):
    return lambda j: j * mp.mpf(mu2) / 2


def laplace_eps(e):
    def eps(j):
        a, b = mp.mpf(j), mp.mpf(e)
        return mp.log(a / (2 * a - 1) * mp.exp((a - 1) * b) + (a - 1) / (2 * a - 1) * mp.exp(-a * b)) / (a - 1)

    return eps


def pure_eps(e):
    def eps(j):
        a, b = mp.mpf(j), mp.mpf(e)
        return mp.log(mp.exp(a * b) / (1 + mp.exp(b)) + mp.exp((1 - a) * b) / (1 + mp.exp(b))) / (a - 1)

    return eps


HAND = [  # (spec, gamma, base divergence, eps_inf), numbers as strings: read at the test's precision
    ("gaussian:sigma=1,sample=600,of=60000,relation=replace-one", "0.01", gauss_eps(1), None),
    ("gaussian:sigma=0.8,sample=1,of=8,relation=replace-one", "0.125", gauss_eps("1.5625"), None),
    ("laplace:scale=2,sample=1,of=10,relation=replace-one", "0.1", laplace_eps("0.5"), "0.5"),
    ("laplace:scale=1/3,sample=3,of=10,relation=replace-one", "0.3", laplace_eps(3), "3"),
    ("approx:eps=0.2,sample=5,of=10,relation=replace-one", "0.5", pure_eps("0.2"), "0.2"),
]


@pytest.mark.parametrize("spec,gamma,eps,eps_inf", HAND)
@pytest.mark.parametrize("alpha", [Fraction(2), Fraction(3), Fraction(7), Fraction(40), Fraction(5, 2),
                                   Fraction(3, 2), Fraction(71, 10)])
def test_the_bound_is_the_published_formula(spec, gamma, eps, eps_inf, alpha):
    (m, _), = Composition.of(spec).groups
    gamma, eps_inf = mp.mpf(gamma), None if eps_inf is None else mp.mpf(eps_inf)
    if alpha.denominator == 1:
        want = wbk_by_hand(gamma, int(alpha), eps, eps_inf) / (int(alpha) - 1)
    else:  # the chord of the cumulant bound between the neighbouring integers, K(1) = 0
        lo = int(alpha)
        k_lo = mp.mpf(0) if lo == 1 else wbk_by_hand(gamma, lo, eps, eps_inf)
        t = mp.mpf(alpha.numerator) / alpha.denominator - lo
        want = ((1 - t) * k_lo + t * wbk_by_hand(gamma, lo + 1, eps, eps_inf)) / (mp.mpf(alpha.numerator) / alpha.denominator - 1)
    with ctx.workprec(200):
        got = divergence_arb(m, alpha, "max")
    assert abs(mp.mpf(got.mid().str(45, radius=False)) - want) <= want * mp.mpf(10) ** -35
    assert mp.mpf(got.rad().str(5, radius=False)) < want * mp.mpf(10) ** -40


def test_the_bound_at_fractional_orders_lies_above_the_attained_divergence():
    g, mu = mp.mpf("0.125"), mp.mpf("1.25")
    for a in (Fraction(3, 2), Fraction(5, 2), Fraction(77, 10)):
        enc = rdp_curve(wor("gaussian:sigma=0.8", 1, 8), [a], digits=12)[0]
        beta = mp.mpf(a.numerator) / a.denominator
        q = mp.quad(lambda x, beta=beta: mp.npdf(x) * ((1 - g) + g * mp.exp(mu * x - mu * mu / 2)) ** beta,
                    [-mp.inf, -10, 0, 10 + beta * mu, mp.inf])
        truth = mp.log(q) / (beta - 1)
        assert truth <= mp.mpf(enc.upper.numerator) / enc.upper.denominator
        assert mp.mpf(enc.lower.numerator) / enc.lower.denominator <= truth * (1 + mp.mpf(10) ** -11)


def test_a_batch_of_the_whole_dataset_is_the_mechanism_itself():
    enc = rdp_curve("laplace:scale=1,sample=10,of=10,relation=replace-one", [2], digits=12)[0]
    assert enc.algorithm != WBK_BOUND
    assert enc.lower <= Fraction(str(mp.nstr(laplace_eps(1)(mp.mpf(2)), 30))) * (1 + Fraction(1, 10**11))


def test_a_mixture_or_a_discrete_mechanism_without_a_pair_is_refused_or_bracketed_from_zero():
    with pytest.raises(InvalidParameterError, match="fixed batch without replacement"):
        rdp_curve("mog:sigma=1,sensitivities=0/1/2,probs=0.2/0.5/0.3,sample=1,of=10,relation=replace-one", [2])
    enc = rdp_curve("dgaussian:sigma=1,sample=1,of=10,relation=replace-one", [2], digits=10)[0]
    assert enc.lower == 0 and enc.algorithm == WBK_BOUND  # its Poisson pair is not computed: the lower end is 0
    want = wbk_by_hand(mp.mpf("0.1"), 2, gauss_eps(1), None)
    assert want <= mp.mpf(enc.upper.numerator) / enc.upper.denominator <= want * (1 + mp.mpf(10) ** -9)


def test_beside_a_poisson_subsample_under_add_remove_the_lower_end_is_zero():
    """No one pair of datasets is neighbouring under add/remove and replace-one: the sum of the attained
    divergences is attained by none, so nothing below the bound can be called unsound."""
    batch = "gaussian:sigma=1,sample=600,of=60000,relation=replace-one,count=10"
    alone = rdp_curve(batch, [2], digits=10)[0]
    assert alone.lower > 0  # one relation: a pair of datasets attains it
    for other, zero in (("gaussian:sigma=1,q=0.01,count=10", True), ("gaussian:sigma=2,count=10", False)):
        mixed = rdp_curve([batch, other], [2], digits=10)[0]  # a Gaussian's own pair: both relations
        assert mixed.algorithm == WBK_BOUND and mixed.upper > alone.upper
        assert (mixed.lower == 0) == zero, (other, mixed)


def test_a_batch_of_a_pair_with_delta_is_infinite():
    assert rdp_curve("approx:eps=1,delta=0.01,sample=1,of=10,relation=replace-one", [2])[0].is_infinite


# -- autodp's float of the same bound -------------------------------------------------------------

def test_autodp_computes_the_same_bound():
    """autodp's ``improved_bound_flag=True`` is Thm 27 for a Gaussian (Thm 9 where that is smaller)."""
    rdp_acct = pytest.importorskip("autodp.rdp_acct")
    rdp_bank = pytest.importorskip("autodp.rdp_bank")
    for sigma, m, n in ((1.0, 600, 60000), (2.0, 1, 10), (0.8, 1, 8), (4.0, 1, 10)):
        acct = rdp_acct.anaRDPacct(m_max=200)
        acct.compose_subsampled_mechanism(lambda x, s=sigma: rdp_bank.RDP_gaussian({"sigma": s}, x), m / n,
                                          improved_bound_flag=True)
        orders = [2, 3, 8, 32, Fraction(5, 2)]
        theirs = acct.get_rdp([float(a) for a in orders])  # float ok: the peer's floats
        ours = rdp_curve(wor(f"gaussian:sigma={sigma}", m, n), orders, digits=15)
        for a, t, e in zip(orders, theirs, ours):
            up = e.upper
            assert abs(Fraction(float(t)) - up) <= up * Fraction(1, 10**9), (sigma, a, float(t), e)


# -- the answers: JSON, CLI, conversions, the kit -------------------------------------------------

def test_cli_json_names_the_bound(capsys):
    rc = main(["rdp", "--mechanism", wor("gaussian:sigma=1", 600, 60000, 10), "--orders", "2,8,2.5", "--json"])
    assert rc == 0
    out = json.loads(capsys.readouterr().out)
    for row in out["orders"]:
        assert row["bound"] == WBK_BOUND and row["exact"] is None
        assert Fraction(row["lower"]) < Fraction(row["upper"])
    rc = main(["rdp", "--mechanism", wor("gaussian:sigma=1", 600, 60000), "--orders", "2"])
    assert rc == 0 and "wbk19-thm9 bound" in capsys.readouterr().out
    rc = main(["rdp", "--mechanism", "gaussian:sigma=1,count=2", "--orders", "2", "--json"])
    assert "bound" not in json.loads(capsys.readouterr().out)["orders"][0]


def test_cli_refuses_a_mixture_in_a_batch_with_exit_2(capsys):
    rc = main(["rdp", "--mechanism", "mog:sigma=1,sensitivities=1/2,probs=0.5/0.5,sample=1,of=10,relation=replace-one",
               "--orders", "2"])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and "fixed batch without replacement" in err


def test_a_conversion_of_the_bound_is_the_formula_of_the_bound():
    import exactdp

    spec = wor("gaussian:sigma=1", 600, 60000, 1000)
    e = exactdp.epsilon(spec, "1e-5", method="rdp-mironov", orders=[8], digits=12)
    want = 1000 * wbk_by_hand(mp.mpf("0.01"), 8, gauss_eps(1), None) / 7 + mp.log(mp.mpf(10) ** 5) / 7
    assert mp.mpf(e.lower.numerator) / e.lower.denominator <= want <= mp.mpf(e.upper.numerator) / e.upper.denominator
    assert e.algorithm == f"rdp-mironov (order 8, {WBK_BOUND})"
    assert exactdp.epsilon(spec, "1e-5", method="rdp-bbghs", digits=6).algorithm.endswith(f", {WBK_BOUND})")


def test_the_kit_is_undecided_between_the_ends_and_unsound_only_below_the_lower_end():
    c = wor("gaussian:sigma=1", 600, 60000)
    enc = rdp_curve(c, [2], digits=20)[0]
    mid = (enc.lower + enc.upper) / 2
    assert judge_rdp(str(enc.upper), order=2, composition=c).verdict == "sound"
    v = judge_rdp(format(float(mid), ".17g"), order=2, composition=c)  # float ok: a reported float
    assert v.verdict == "undecided" and WBK_BOUND in v.note
    with pytest.raises(UndecidedClaimError):
        assert_rdp_sound(mid, order=2, composition=c)
    with pytest.raises(UnsoundClaimError):
        assert_rdp_sound(enc.lower * Fraction(99, 100), order=2, composition=c)
    with pytest.raises(UndecidedClaimError):  # undecided, never unsound, for a curve inside the bracket
        assert_rdp_curve_sound({2: mid, 3: "1"}, composition=c)
