"""Issue 28 §1: certified Rényi divergences of Poisson-subsampled mechanisms at every order and in
each direction, checked against mpmath quadrature at 40 digits of the densities themselves (split at
the mixture's centres, infinite limits), direct sums over the outputs, the exact binomial sums, and
the properties (monotone in the order and in q)."""

from __future__ import annotations

import json
from fractions import Fraction

import mpmath
import pytest
from flint import arb, ctx

from exactdp.api.rdp import rdp_curve
from exactdp.cli import main
from exactdp.core.numbers import arb_of_fraction, fraction_of_arb_endpoints
from exactdp.engines.rdp_subsampled import gaussian_moment, gaussian_tail_bound, subsampled_gaussian_binomial

from mpref import inside, mp, renyi  # tests/unit/mpref.py


@pytest.fixture(autouse=True)
def _forty_digits() -> object:
    """mpmath at 40 digits inside each test of this module only (the global precision is left alone)."""
    with mpmath.workdps(40):
        yield


def _gaussian_truth(sigma: str, q: str, alpha: str, direction: str) -> mpmath.mpf:
    s, qq, a = mp(sigma), mp(q), mp(alpha)
    base = lambda x: mpmath.npdf(x, 0, s)  # noqa: E731
    mix = lambda x: (1 - qq) * mpmath.npdf(x, 0, s) + qq * mpmath.npdf(x, 1, s)  # noqa: E731
    centres = [mpmath.mpf(0), mpmath.mpf(1), a]  # a = alpha D: where the remove integrand peaks
    points = [c + k * s for c in centres for k in (-8, -4, -2, 0, 2, 4, 8)]
    return renyi(mix, base, a, points) if direction == "remove" else renyi(base, mix, a, points)


GAUSSIAN_CASES = [
    ("1", "0.01", "1.25"), ("1", "0.01", "2.5"), ("0.5", "0.01", "1.5"), ("0.5", "0.05", "10.5"),
    ("2", "0.001", "1.5"), ("4", "0.001", "64"), ("1", "0.1", "64"), ("3", "0.001", "10.5"),
    ("0.5", "0.001", "2"), ("0.7", "0.3", "3"),
]


@pytest.mark.parametrize("direction", ["remove", "add"])
@pytest.mark.parametrize(("sigma", "q", "alpha"), GAUSSIAN_CASES)
def test_subsampled_gaussian_against_quadrature(sigma: str, q: str, alpha: str, direction: str) -> None:
    truth = _gaussian_truth(sigma, q, alpha, direction)
    (e,) = rdp_curve(f"gaussian:sigma={sigma},q={q}", [alpha], digits=20, direction=direction)
    assert inside(e, truth)


@pytest.mark.parametrize(("sigma", "q", "alpha"), [("1", "0.01", "2.5"), ("0.5", "0.05", "10.5"), ("4", "0.001", "1.25")])
def test_max_is_the_larger_direction(sigma: str, q: str, alpha: str) -> None:
    truth = max(_gaussian_truth(sigma, q, alpha, "remove"), _gaussian_truth(sigma, q, alpha, "add"))
    (e,) = rdp_curve(f"gaussian:sigma={sigma},q={q}", [alpha], digits=20)  # the default: max
    assert inside(e, truth)


def test_max_of_a_composition_is_the_max_of_the_two_sums() -> None:
    """Remove and add are the composition's two neighbouring pairs: the max is over the sums, not
    a sum of each mechanism's max.  Each term against quadrature; the sums in mpmath."""
    comp = ["gaussian:sigma=1,q=0.01,count=3", "laplace:scale=1,q=0.1,count=2"]
    a = mpmath.mpf("2.5")
    b = mpmath.mpf(1)
    lap = lambda x, mu: mpmath.exp(-abs(x - mu) / b) / (2 * b)  # noqa: E731
    mix = lambda x: mpmath.mpf("0.9") * lap(x, 0) + mpmath.mpf("0.1") * lap(x, 1)  # noqa: E731
    sums = []
    for d in ("remove", "add"):
        lap_d = (renyi(mix, lambda x: lap(x, 0), a, [0, 1]) if d == "remove"
                 else renyi(lambda x: lap(x, 0), mix, a, [0, 1]))
        sums.append(3 * _gaussian_truth("1", "0.01", "2.5", d) + 2 * lap_d)
    (e,) = rdp_curve(comp, ["2.5"], digits=20)
    assert inside(e, max(sums))


@pytest.mark.parametrize(("mu", "q", "n"), [(Fraction(1), Fraction(1, 100), 2), (Fraction(2), Fraction(1, 100), 7),
                                            (Fraction(1, 4), Fraction(1, 1000), 64), (Fraction(1, 2), Fraction(1, 2), 5)])
def test_integral_meets_the_exact_binomial_sum_at_integer_orders(mu: Fraction, q: Fraction, n: int) -> None:
    """Two certified computations of E_Q[r^n] - 1: the integral and the binomial sum overlap, and the
    binomial sum matches the sum evaluated in mpmath."""
    with ctx.workprec(200):
        integral = gaussian_moment(mu, q, Fraction(n))
        binomial = subsampled_gaussian_binomial(mu, q, n)
    assert integral.is_finite() and integral.overlaps(binomial)
    assert integral.rad() < abs(integral.mid()) * arb(2) ** -100
    m, qq = mp(mu), mp(q)
    ref = mpmath.fsum(mpmath.binomial(n, k) * (1 - qq) ** (n - k) * qq ** k * mpmath.exp((k * k - k) * m * m / 2)
                      for k in range(n + 1)) - 1
    lo, hi = fraction_of_arb_endpoints(binomial)
    assert mp(lo) <= ref * (1 + mpmath.mpf(10) ** -35) and ref <= mp(hi) * (1 + mpmath.mpf(10) ** -35)


@pytest.mark.parametrize(("mu", "q", "beta", "left", "right"), [
    ("1", "0.01", "2.5", 3, 6), ("2", "0.1", "10.5", 2, 25), ("1", "0.01", "-3", 2, 3), ("0.5", "0.3", "-1.5", 1, 1)])
def test_the_tail_bound_holds(mu: str, q: str, beta: str, left: int, right: int) -> None:
    """docs/rdp.md §5.3: the integral of g_beta phi over t <= -left and t >= right, by mpmath, is
    below the bound (at cuts small enough for the tails to be large)."""
    m, qq, b = mp(mu), mp(q), mp(beta)

    def g(t: mpmath.mpf) -> mpmath.mpf:
        w = qq * mpmath.expm1(m * t - m * m / 2)
        return ((1 + w) ** b - 1 - b * w) * mpmath.npdf(t)

    truth = mpmath.quad(g, [-mpmath.inf, -left]) + mpmath.quad(g, [right, right + 10, mpmath.inf])
    bound = gaussian_tail_bound(arb_of_fraction(Fraction(mu)), arb_of_fraction(Fraction(q)),
                                arb_of_fraction(Fraction(beta)), arb(left), arb(right))
    assert 0 < truth <= mp(fraction_of_arb_endpoints(bound)[1])


@pytest.mark.parametrize("direction", ["remove", "add"])
@pytest.mark.parametrize(("scale", "q", "alpha"), [("1", "0.1", "2"), ("0.5", "0.01", "1.25"), ("4", "0.001", "10.5"),
                                                   ("1", "0.5", "64"), ("2", "0.2", "3.5")])
def test_subsampled_laplace_against_quadrature(scale: str, q: str, alpha: str, direction: str) -> None:
    b, qq, a = mp(scale), mp(q), mp(alpha)
    lap = lambda x, mu: mpmath.exp(-abs(x - mu) / b) / (2 * b)  # noqa: E731
    mix = lambda x: (1 - qq) * lap(x, 0) + qq * lap(x, 1)  # noqa: E731
    base = lambda x: lap(x, 0)  # noqa: E731
    truth = renyi(mix, base, a, [0, 1]) if direction == "remove" else renyi(base, mix, a, [0, 1])
    (e,) = rdp_curve(f"laplace:scale={scale},q={q}", [alpha], digits=20, direction=direction)
    assert inside(e, truth)


@pytest.mark.parametrize("direction", ["remove", "add"])
@pytest.mark.parametrize(("spec", "eps", "k"), [("rr:eps=1,categories=3", "1", 3), ("rr:eps=log(3),categories=10", "log3", 10),
                                               ("approx:eps=0.5", "0.5", 2)])
@pytest.mark.parametrize(("q", "alpha"), [("0.1", "2"), ("0.001", "1.5"), ("0.5", "64")])
def test_subsampled_randomized_response_against_the_sum_over_outputs(spec: str, eps: str, k: int, q: str, alpha: str,
                                                                    direction: str) -> None:
    x = mpmath.mpf(3) if eps == "log3" else mpmath.exp(mp(eps))
    z = x + k - 1
    on_x = [x / z] + [1 / z] * (k - 1)           # A: the record's value x first
    on_y = [1 / z, x / z] + [1 / z] * (k - 2)    # B: the neighbour's value x' second
    qq, a = mp(q), mp(alpha)
    p = [(1 - qq) * bb + qq * aa for aa, bb in zip(on_x, on_y)]
    pairs = zip(p, on_y) if direction == "remove" else zip(on_y, p)
    truth = mpmath.log(mpmath.fsum(u ** a * v ** (1 - a) for u, v in pairs)) / (a - 1)
    (e,) = rdp_curve(f"{spec},q={q}", [alpha], digits=20, direction=direction)
    assert inside(e, truth)


@pytest.mark.parametrize("direction", ["remove", "add"])
@pytest.mark.parametrize("spec", ["gaussian:sigma=1", "laplace:scale=2", "rr:eps=1,categories=3"])
def test_monotone_in_the_order_and_in_q(spec: str, direction: str) -> None:
    """Rényi divergences grow with the order; a subsample's grow with q (E_Q[(1 + q w)^beta] is convex in
    q with its minimum 1 at q = 0): consecutive enclosures are ordered, disjoint."""
    orders = ["1.25", "1.5", "2", "2.5", "3", "10.5", "64"]
    curve = rdp_curve(f"{spec},q=0.01", orders, digits=20, direction=direction)
    assert all(u.upper < v.lower for u, v in zip(curve, curve[1:]))
    by_q = [rdp_curve(f"{spec},q={q}", ["2.5"], digits=20, direction=direction)[0] for q in ("0.001", "0.01", "0.1", "0.5")]
    assert all(u.upper < v.lower for u, v in zip(by_q, by_q[1:]))


def test_rate_one_is_the_mechanism_itself() -> None:
    for a in ("2", "3.5"):
        assert rdp_curve("gaussian:sigma=2,q=1", [a], direction="add") == rdp_curve("gaussian:sigma=2", [a])
        (lap,) = rdp_curve("laplace:scale=1,q=1", [a], digits=20, direction="add")
        (base,) = rdp_curve("laplace:scale=1", [a], digits=20)
        assert lap.lower <= base.upper and base.lower <= lap.upper


def test_the_command_answers_every_direction(capsys: pytest.CaptureFixture[str]) -> None:
    outs = {}
    for d in ("max", "remove", "add"):
        args = ["rdp", "--mechanism", "gaussian:sigma=1,q=0.01,count=1000", "--orders", "2,3.5,64", "--json"]
        assert main(args + ([] if d == "max" else ["--direction", d])) == 0
        outs[d] = json.loads(capsys.readouterr().out)["orders"]
    for i in range(3):
        lo = {d: Fraction(outs[d][i]["lower"]) for d in outs}
        hi = {d: Fraction(outs[d][i]["upper"]) for d in outs}
        assert max(lo["remove"], lo["add"]) <= hi["max"] and lo["max"] <= max(hi["remove"], hi["add"])
    assert Fraction(outs["add"][0]["upper"]) < Fraction(outs["remove"][0]["lower"])


@pytest.mark.parametrize(("eps", "delta", "q", "alpha"), [("1", "0.001", "0.1", "2"), ("0.5", "0.1", "0.5", "10.5"),
                                                          ("2", "1e-6", "0.01", "1.25")])
def test_subsampled_generic_pair_with_delta_is_finite_in_the_add_direction_only(eps: str, delta: str, q: str,
                                                                                alpha: str) -> None:
    """The (eps, delta) pair: A = (delta, (1-delta) e^eps/Z, (1-delta)/Z, 0), B the reverse (Z = 1 + e^eps).
    Removing the record, P = (1-q) B + q A has A's atom where B has none: +inf; adding it,
    D(B || P) is finite, against the direct sum over B's outputs."""
    x, d, qq, a = mpmath.exp(mp(eps)), mp(delta), mp(q), mp(alpha)
    z = 1 + x
    on_a = [d, (1 - d) * x / z, (1 - d) / z, mpmath.mpf(0)]
    on_b = [mpmath.mpf(0), (1 - d) / z, (1 - d) * x / z, d]
    p = [(1 - qq) * bb + qq * aa for aa, bb in zip(on_a, on_b)]
    truth = mpmath.log(mpmath.fsum(bb ** a * pp ** (1 - a) for bb, pp in zip(on_b, p) if bb > 0)) / (a - 1)
    spec = f"approx:eps={eps},delta={delta},q={q}"
    (e,) = rdp_curve(spec, [alpha], digits=20, direction="add")
    assert not e.is_infinite and inside(e, truth)
    assert rdp_curve(spec, [alpha], direction="remove")[0].is_infinite and rdp_curve(spec, [alpha])[0].is_infinite


@pytest.mark.parametrize(("sigma", "q", "alpha"), [("4", "0.001", "256"), ("1", "0.01", "2.5"), ("1", "0.01", "30"),
                                                   ("0.5", "0.01", "3"), ("2", "0.2", "10.5")])
def test_the_add_direction_bound_holds(sigma: str, q: str, alpha: str) -> None:
    """docs/rdp.md §5.1: -log(1-q) and the Taylor bound are above the add direction (by quadrature);
    where the bound is below the remove value, max is the remove value."""
    from exactdp.engines.rdp import add_upper_arb
    from exactdp.model.mechanisms import Gaussian, PoissonSampled

    m = PoissonSampled(Gaussian(sigma), q)
    with ctx.workprec(128):
        bound = add_upper_arb(m, Fraction(alpha))
    hi = mp(fraction_of_arb_endpoints(bound)[1])
    truth = _gaussian_truth(sigma, q, alpha, "add")
    assert truth <= hi <= -mpmath.log(1 - mp(q)) * (1 + mpmath.mpf(10) ** -30)
    if hi < _gaussian_truth(sigma, q, alpha, "remove"):
        (mx,) = rdp_curve(f"gaussian:sigma={sigma},q={q}", [alpha], digits=20)
        assert mx == rdp_curve(f"gaussian:sigma={sigma},q={q}", [alpha], digits=20, direction="remove")[0]
