"""Issue 25 §3: the engines' exact shortcuts and gaps (docs/pld.md §11).

References share no code with the engines: mpmath closed forms, exact Fraction arithmetic and
brute-force enumeration of small product distributions.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import mpmath
import pytest

from exactdp import optimal_epsilon

F = Fraction


def M(x: object) -> mpmath.mpf:
    x = Fraction(x)  # type: ignore[arg-type]
    return mpmath.mpf(x.numerator) / x.denominator


def gaussian_profile(mu2: mpmath.mpf, eps: mpmath.mpf) -> mpmath.mpf:
    """delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) (Balle-Wang 2018 Thm 8)."""
    mu = mpmath.sqrt(mu2)
    return mpmath.ncdf(mu / 2 - eps / mu) - mpmath.exp(eps) * mpmath.ncdf(-mu / 2 - eps / mu)


# -- 5. the Gaussian closed form at low digits ------------------------------------------------------

@pytest.mark.parametrize("sigma,count", [("0.5", 10), ("0.5", 1), ("1", 100), ("3", 7), ("0.1", 2)])
def test_gaussian_epsilon_at_low_digits_brackets_mpmath(sigma: str, count: int) -> None:
    """`gaussian:sigma=0.5,count=10 --at-delta 1e-15 --digits 1` said `x=nan is not a finite ball`."""
    mu2 = F(count) / F(sigma) ** 2
    with mpmath.workdps(60):
        for delta, digits in itertools.product(("1e-15", "1e-6", "0.3", "1e-40"), (1, 2, 3, 6)):
            enc = optimal_epsilon([f"gaussian:sigma={sigma},count={count}"], delta, digits=digits)
            lo, hi = F(enc.lower), F(enc.upper)
            d = M(F(delta))
            # delta(eps) decreases: the root lies in [lo, hi] iff delta(lo) >= delta_g >= delta(hi)
            assert lo == 0 or gaussian_profile(M(mu2), M(lo)) >= d, (sigma, count, delta, digits)
            assert gaussian_profile(M(mu2), M(hi)) <= d, (sigma, count, delta, digits)
            assert lo == hi or (hi - lo) <= F(1, 10**digits) * lo


# -- brute force over the outputs of small products ------------------------------------------------

Pair = tuple[list[Fraction], list[Fraction]]


def brute_force_delta(pairs: list[Pair], x: Fraction) -> Fraction:
    """delta at e^eps = x of the product of finite pairs (exact rationals), by summing over outputs
    (an output with Q = 0 < P counts its whole P-mass: the +inf atom)."""
    total = Fraction(0)
    for outs in itertools.product(*[range(len(p)) for p, _ in pairs]):
        P = Q = Fraction(1)
        for (p, q), o in zip(pairs, outs):
            P *= p[o]
            Q *= q[o]
        total += max(P - x * Q, Fraction(0))
    return total


def subsampled(pair: Pair, q: Fraction) -> list[Pair]:
    """The remove and add pairs of Poisson subsampling at rate q (docs/mathematics.md §7.5)."""
    a, b = pair
    mix = [(1 - q) * bi + q * ai for ai, bi in zip(a, b)]
    return [(mix, b), (b, mix)]


def kary_rr(r: Fraction, k: int) -> Pair:
    """k-ary randomized response with e^eps = r: true value w.p. r/(r + k - 1) (outputs v1, v2, others)."""
    z = r + k - 1
    return [r / z, 1 / z] + [1 / z] * (k - 2), [1 / z, r / z] + [1 / z] * (k - 2)


def generic(r: Fraction, delta: Fraction) -> Pair:
    """The (log r, delta) pair of docs/mathematics.md §1.2 (outputs: +inf, +eps, -eps, -inf)."""
    one = 1 - delta
    return [delta, one * r / (1 + r), one / (1 + r), F(0)], [F(0), one / (1 + r), one * r / (1 + r), delta]


def composed_delta(pair_orders: list[Pair], count: int, x: Fraction) -> Fraction:
    """max over the orders of delta of `count` runs, every run in the same order (docs/pld.md §9)."""
    return max(brute_force_delta([p] * count, x) for p in pair_orders)


# -- 4. subsampled k-ary randomized response composed -----------------------------------------------

@pytest.mark.parametrize("k,q,count,eps_g", [(3, "1/2", 2, "log(2)"), (4, "1/10", 3, "log(11/10)"),
                                             (3, "1/3", 2, "0"), (5, "1/2", 2, "log(5/4)")])
def test_subsampled_kary_rr_composes(k: int, q: str, count: int, eps_g: str) -> None:
    """`rr:eps=1,categories=3,q=0.5,count=2` said "an atom sits at 0 to 2^14 bits" (exit 3)."""
    from exactdp import optimal_delta
    x = F(2) if eps_g == "log(2)" else F(11, 10) if eps_g == "log(11/10)" else F(1) if eps_g == "0" else F(5, 4)
    truth = composed_delta(subsampled(kary_rr(F(3), k), F(q)), count, x)
    enc = optimal_delta([f"rr:eps=log(3),categories={k},q={q},count={count}"], eps_g, digits=20)
    assert F(enc.lower) <= truth <= F(enc.upper)
    assert enc.digits >= 3 and F(enc.upper) - F(enc.lower) <= F(1, 10**enc.digits) * F(enc.lower)


def test_subsampled_kary_rr_rational_eps_against_mpmath() -> None:
    """eps = 1 (the issue's example): the brute force in mpmath at 50 digits."""
    from exactdp import optimal_delta
    with mpmath.workdps(50):
        r = mpmath.e
        z = r + 2
        a = [r / z, 1 / z, 1 / z]
        b = [1 / z, r / z, 1 / z]
        mix = [(ai + bi) / 2 for ai, bi in zip(a, b)]
        x = mpmath.exp(mpmath.mpf(1) / 2)
        best = mpmath.mpf(0)
        for p, qq in ((mix, b), (b, mix)):
            best = max(best, sum(max(p[i] * p[j] - x * qq[i] * qq[j], 0) for i in range(3) for j in range(3)))
        enc = optimal_delta(["rr:eps=1,categories=3,q=0.5,count=2"], "0.5", digits=20)
        assert M(enc.lower) <= best <= M(enc.upper)
        assert M(enc.upper) - M(enc.lower) <= best * mpmath.mpf(10) ** -19


# -- 1. exact 0 and the exact +inf mass above every finite loss --------------------------------------

def _delta(specs: list[str], eps: str, digits: int = 30):  # type: ignore[no-untyped-def]
    from exactdp import optimal_delta
    return optimal_delta(specs, eps, digits=digits)


@pytest.mark.parametrize("eps", ["1", "0.2", "5"])
def test_laplace_delta_is_exactly_zero_above_the_largest_loss(eps: str) -> None:
    """`laplace:scale=10,count=2 --at-eps 1` gave [0, 5.1e-57]: the largest loss is 2/10, so delta is 0."""
    enc = _delta(["laplace:scale=10,count=2"], eps)
    assert enc.exact == 0 and enc.lower == enc.upper == 0


def test_laplace_delta_just_below_the_largest_loss_is_positive() -> None:
    enc = _delta(["laplace:scale=10,count=2"], "0.19", digits=5)
    assert enc.exact is None and F(enc.lower) > 0  # the engine still answers below the largest loss


def test_huge_count_above_the_largest_loss_is_exactly_zero() -> None:
    enc = _delta(["laplace:scale=10,count=1000000000000000", "rr:eps=1,categories=5,count=7"],
                 "100000000000008")
    assert enc.exact == 0


@pytest.mark.parametrize("specs,pairs,x", [
    # generic with delta, subsampled generic (both orders), k-ary rr, mixed: e^eps = x above every loss
    (["approx:eps=log(2),delta=1/10,count=2"], [([generic(F(2), F(1, 10))], 2)], F(4)),
    (["approx:eps=log(2),delta=1/10,q=1/2,count=2"], [(subsampled(generic(F(2), F(1, 10)), F(1, 2)), 2)], F(4)),
    (["approx:eps=log(2),delta=1/10,q=1/2,count=2", "rr:eps=log(3),categories=3"],
     [(subsampled(generic(F(2), F(1, 10)), F(1, 2)), 2), ([kary_rr(F(3), 3)] * 2, 1)], F(12)),
    (["approx:eps=0.01,delta=0.1,q=0.01,count=2"], None, None),
])
def test_delta_above_every_loss_is_the_inf_mass_exactly(specs: list[str], pairs, x) -> None:  # type: ignore[no-untyped-def]
    """`approx:eps=0.01,delta=0.1,q=0.01,count=2` at eps 1 gave [0, 0.001999]: it is exactly 0.001999."""
    if pairs is None:  # the issue's example: 1 - (1 - q delta)^2 in the remove order, 0 in the add order
        enc = _delta(specs, "1")
        assert enc.exact == 1 - (1 - F(1, 1000)) ** 2 == F("0.001999")
        return
    # brute force: every order of the composition (each group's pair list is [remove, add] or [same, same])
    orders = []
    for o in range(2):
        run: list[Pair] = []
        for plist, count in pairs:
            run += [plist[o] if len(plist) > 1 else plist[0]] * count
        orders.append(brute_force_delta(run, x))
    truth = max(orders)
    enc = _delta(specs, f"log({x})")
    assert enc.exact == truth and truth > 0


def test_check_decides_at_the_inf_mass() -> None:
    from exactdp import is_private
    comp = ["approx:eps=0.01,delta=0.1,q=0.01,count=2"]
    assert is_private(comp, "1", "0.001999")
    assert not is_private(comp, "1", "0.001998999999999999999999999")


def test_inf_mass_of_a_huge_count_is_a_certified_bracket() -> None:
    enc = _delta(["approx:eps=0.01,delta=0.1,q=0.01,count=1000000"], "100000", digits=20)
    with mpmath.workdps(60):
        truth = 1 - (1 - mpmath.mpf(1) / 1000) ** 1000000
        assert M(enc.lower) <= truth <= M(enc.upper)
        assert M(enc.upper) - M(enc.lower) <= truth * mpmath.mpf(10) ** -20


# -- 2. pure DP at delta_g = 0, and eps at delta_g equal to the +inf mass ------------------------------

def _eps(specs: list[str], delta: str, digits: int = 30):  # type: ignore[no-untyped-def]
    return optimal_epsilon(specs, delta, digits=digits)


@pytest.mark.parametrize("specs,truth", [
    (["laplace:scale=1,count=2"], F(2)),  # the issue: [0, inf]
    (["laplace:scale=10"], F(1, 10)),     # one run: it said +inf
    (["laplace:scale=4,sensitivity=3,count=3", "approx:eps=0.5", "rr:eps=0.25,categories=7,count=2"],
     F(9, 4) + F(1, 2) + F(1, 2)),
])
def test_pure_composition_at_delta_zero_is_the_sum(specs: list[str], truth: Fraction) -> None:
    enc = _eps(specs, "0")
    assert enc.exact == truth


def test_pure_logs_at_delta_zero_are_exact_logs_by_brute_force() -> None:
    """rr (k = 3, subsampled, both orders) and a generic pure pair: eps(0) = log max P/Q over outputs."""
    specs = ["rr:eps=log(3),categories=3,q=1/2,count=2", "approx:eps=log(2)"]
    best = Fraction(0)
    for pair in subsampled(kary_rr(F(3), 3), F(1, 2)):
        run = [pair, pair, generic(F(2), F(0))]
        for outs in itertools.product(*[range(len(p)) for p, _ in run]):
            P = Q = F(1)
            for (p, q), o in zip(run, outs):
                P, Q = P * p[o], Q * q[o]
            if P > 0:
                best = max(best, P / Q)
    enc = _eps(specs, "0")
    assert enc.exact_log == best
    assert brute_force_delta([subsampled(kary_rr(F(3), 3), F(1, 2))[0]] * 2 + [generic(F(2), F(0))], best) == 0


def test_subsampled_laplace_at_delta_zero_against_mpmath() -> None:
    """eps(0) = max(log(1 - q + q e^eps), -log(1 - q + q e^-eps)) per step (remove, add orders)."""
    enc = _eps(["laplace:scale=10,q=1/2,count=3"], "0", digits=25)
    with mpmath.workdps(60):
        e, q = mpmath.mpf(1) / 10, mpmath.mpf(1) / 2
        truth = 3 * max(mpmath.log(1 - q + q * mpmath.exp(e)), -mpmath.log(1 - q + q * mpmath.exp(-e)))
        assert M(enc.lower) <= truth <= M(enc.upper)
        assert M(enc.upper) - M(enc.lower) <= truth * mpmath.mpf(10) ** -25


@pytest.mark.parametrize("specs", [["laplace:scale=1", "gaussian:sigma=10"], ["approx:eps=1,delta=1e-9,count=2"],
                                   ["gaussian:sigma=1,q=0.5,count=2"]])
def test_delta_zero_with_an_unbounded_or_inf_loss_is_infinite(specs: list[str]) -> None:
    enc = _eps(specs, "0")
    assert enc.is_infinite


def test_eps_at_the_inf_mass_is_the_largest_finite_loss() -> None:
    """delta_g equal to the +inf mass: eps is the largest finite loss, checked by brute force."""
    pair = generic(F(2), F(1, 10))
    dg = 1 - (1 - F(1, 10)) ** 2
    enc = _eps(["approx:eps=log(2),delta=1/10,count=2"], str(dg))
    assert enc.exact_log == 4
    assert brute_force_delta([pair, pair], F(4)) == dg
    assert brute_force_delta([pair, pair], F(4) * (1 - F(1, 10**12))) > dg


def test_check_decides_pure_dp_at_delta_zero() -> None:
    from exactdp import is_private
    comp = ["laplace:scale=1,count=2", "rr:eps=log(3),categories=3"]
    assert not is_private(comp, "2", "0")
    with mpmath.workdps(40):
        assert mpmath.mpf("1.09861228866810969") < mpmath.log(3) < mpmath.mpf("1.09861228866810970")
    assert is_private(comp, "3.09861228866810970", "0")  # eps(0) = 2 + log 3, just below
    assert not is_private(comp, "3.09861228866810969", "0")  # just above


# -- 3. the binned lower end keeps the +inf mass -----------------------------------------------------

@pytest.mark.parametrize("eps", ["1", "0.3", "5"])
def test_binned_lower_end_counts_the_inf_mass_alone(eps: str) -> None:
    """A lower law with finite losses 0 and 0.1 and +inf mass 1/4: above every finite loss every finite
    cut loses, and the lower end must still be the +inf mass (it was 0 below that: the subsampled
    `approx` example at eps 1 gave [0, 0.001999])."""
    from flint import arb, arb_poly, ctx

    from exactdp.core.numbers import ExactReal, fraction_of_arb_endpoints
    from exactdp.engines.pld.laws import Law
    from exactdp.engines.pld.queries import delta_lower

    h = F(1, 10)
    with ctx.workprec(128):
        # P-masses 1/2 at loss 0, 1/4 at 0.1; tilted Q-masses Q_j e^{jh}: Q = (1/2, 1/4 e^{-0.1}) + 1/4 at -inf
        law = Law(h, 0, arb_poly([arb(1) / 2, arb(1) / 4]), arb_poly([arb(1) / 2, arb(1) / 4]), arb(1) / 4,
                  upper=False, exact=False, moved=arb(0))
        lo, _ = fraction_of_arb_endpoints(delta_lower(law, ExactReal.parse(eps).arb()))
    assert lo == F(1, 4)


# -- the issue's command lines ------------------------------------------------------------------------

def _cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    from exactdp.cli import main
    try:
        code = main(argv)
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 2
    out, err = capsys.readouterr()
    return code, out + err


@pytest.mark.parametrize("argv,want", [
    (["delta", "--mechanism", "laplace:scale=10,count=2", "--at-eps", "1", "--json"], '"exact": "0"'),
    (["epsilon", "--mechanism", "laplace:scale=1,count=2", "--at-delta", "0", "--json"], '"exact": "2"'),
    (["delta", "--mechanism", "approx:eps=0.01,delta=0.1,q=0.01,count=2", "--at-eps", "1", "--json"],
     '"exact": "0.001999"'),
    (["check", "--mechanism", "approx:eps=0.01,delta=0.1,q=0.01,count=2", "--eps-g", "1", "--delta-g", "0.001999"],
     "is private"),
    (["check", "--mechanism", "laplace:scale=1,count=2", "--eps-g", "2", "--delta-g", "0"], "is private"),
])
def test_issue_command_lines(argv: list[str], want: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, text = _cli(argv, capsys)
    assert code == 0 and want in text, text


@pytest.mark.parametrize(("spec", "truth"), [("laplace:scale=10", Fraction(1, 10)), ("laplace:scale=3,sensitivity=2",
                                                                                    Fraction(2, 3)),
                                             ("approx:eps=0.5,delta=0.1", Fraction(1, 2))])
def test_single_step_eps_at_the_inf_mass_is_the_largest_finite_loss(spec: str, truth: Fraction) -> None:
    """delta(eps) = p_inf + E[(1 - e^(eps - L))_+] reaches p_inf at the largest finite loss: a Laplace
    at delta_g 0 is 1/scale (the single-step engine said +inf when the law has a continuous part)."""
    from exactdp.engines.pld.single_step import single_epsilon, single_step_models
    from exactdp.model.composition import Composition

    models = single_step_models(Composition.of(spec))
    assert models is not None
    for m in models:
        e = single_epsilon([m], m.p_inf_exact(), 10)
        assert e.exact == truth, (spec, e)


def test_the_largest_loss_of_many_subsampled_steps_is_exact_without_its_huge_power() -> None:
    """k log(1/(1-q)), the add order's largest loss of k Poisson-subsampled Gaussian steps, used to be
    written out as the rational (1000/999)^k (a million bits at k = 10^5, 0.1 s on every query and every
    check before the engine started); it is now a term of the end, and still exact: the eps at delta 0
    is k log(1000/999) (mpmath at 60 digits) and the shortcut costs nothing."""
    import time

    from exactdp import Composition
    from exactdp.engines.pld.extremes import order_ends

    comp = Composition.of(["gaussian:sigma=2,q=0.001,count=100000,direction=add"])
    t = time.perf_counter()
    ends = order_ends(Composition.of(["gaussian:sigma=2,q=0.001,count=100000"]))
    assert ends is not None and time.perf_counter() - t < 0.05
    e = optimal_epsilon(comp, 0, digits=25)
    with mpmath.workdps(60):
        ref = 100000 * mpmath.log(M(F(1000, 999)))
        assert M(e.lower) <= ref <= M(e.upper)
        assert M(e.upper) - M(e.lower) <= mpmath.mpf(10) ** -20
