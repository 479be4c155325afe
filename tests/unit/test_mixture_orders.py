"""Issues 27/28: a mixture of Gaussians in one order (``direction=remove|add``) and its Rényi divergence
in the add direction and at fractional orders.

The pair (docs/mathematics.md §7.12): remove is P = sum_i p_i N(s_i, S^2) against Q = N(0, S^2), add
its reverse (dp_accounting's REMOVE / ADD). Every value is checked against mpmath, with no exactdp
code: quadrature of the hockey-stick integral of that order (one run), Gauss-Hermite sums over the
first two runs with the third run's tails in closed form (three runs), and quadrature of
E[(P/Q)^alpha] for the divergences.
"""

from __future__ import annotations

import json
from fractions import Fraction

import mpmath
import pytest

import exactdp
from exactdp.api.curve import delta_curve
from exactdp.api.rdp import rdp_curve
from exactdp.cli import main
from exactdp.core.errors import InvalidParameterError
from exactdp.model.mechanisms import Gaussian, MixtureOfGaussians, PoissonSampled, normalise_mechanism, with_direction
from exactdp.model.spec import parse_mechanism_spec
from exactdp.query import run_query


@pytest.fixture(autouse=True)
def _forty_digits() -> object:
    with mpmath.workdps(40):
        yield


def _mp(x: Fraction | str | int) -> mpmath.mpf:
    f = Fraction(x)
    return mpmath.mpf(f.numerator) / f.denominator


def _inside(e: object, truth: mpmath.mpf, rel: int = 20, absolute: mpmath.mpf | None = None) -> bool:
    lo, hi = _mp(e.lower), _mp(e.upper)  # type: ignore[attr-defined]
    tol = abs(truth) * mpmath.mpf(10) ** -rel + (absolute or 0)  # the reference's own error
    return lo - tol <= truth <= hi + tol


class Pair:
    """The mixture pair in mpmath: P = sum p_i N(s_i, S^2), Q = N(0, S^2) (no exactdp code)."""

    def __init__(self, sigma: str, sens: list[str], probs: list[str]) -> None:
        self.S = _mp(sigma)
        self.s = [_mp(x) for x in sens]
        self.p = [_mp(x) for x in probs]

    def P(self, x: mpmath.mpf) -> mpmath.mpf:
        return sum(p * mpmath.npdf(x, s, self.S) for s, p in zip(self.s, self.p))

    def Q(self, x: mpmath.mpf) -> mpmath.mpf:
        return mpmath.npdf(x, 0, self.S)

    def L(self, x: mpmath.mpf) -> mpmath.mpf:
        """log P(x)/Q(x), increasing in x."""
        return mpmath.log(sum(p * mpmath.exp((2 * s * x - s * s) / (2 * self.S ** 2)) for s, p in zip(self.s, self.p)))

    def root(self, e: mpmath.mpf) -> mpmath.mpf | None:
        """x with L(x) = e by bisection-bracketed secant; None when every loss is above e."""
        p0 = sum((p for s, p in zip(self.s, self.p) if s == 0), mpmath.mpf(0))
        if p0 and e <= mpmath.log(p0):
            return None
        lo, hi = mpmath.mpf(-1), mpmath.mpf(1)
        while self.L(lo) > e:
            lo *= 2
        while self.L(hi) < e:
            hi *= 2
        return mpmath.findroot(lambda x: self.L(x) - e, (lo, hi), solver="anderson")

    def delta_remove(self, eps: mpmath.mpf) -> mpmath.mpf:
        """integral of (P - e^eps Q)_+ : over x > x*(eps)."""
        x = self.root(eps)
        lo = -mpmath.inf if x is None else x
        return mpmath.quad(lambda t: self.P(t) - mpmath.e ** eps * self.Q(t), [lo, lo + 1 if x is not None else 0, mpmath.inf])

    def delta_add(self, eps: mpmath.mpf) -> mpmath.mpf:
        """integral of (Q - e^eps P)_+ : over x < x*(-eps)."""
        y = self.root(-eps)
        if y is None:
            return mpmath.mpf(0)
        return mpmath.quad(lambda t: self.Q(t) - mpmath.e ** eps * self.P(t), [-mpmath.inf, y - 1, y])

    # -- three runs: E over two runs of the third run's hockey-stick at the shifted eps --------------
    def _inner(self, c: mpmath.mpf, add: bool) -> mpmath.mpf:
        """One run's (P(L > r) - e^c Q(L > r)) (remove) or (Q(L < -c...) - e^c P(...)) (add) at c."""
        if not add:
            x = self.root(c)
            if x is None:
                return 1 - mpmath.e ** c
            pbar = sum(p * mpmath.ncdf((s - x) / self.S) for s, p in zip(self.s, self.p))
            return pbar - mpmath.e ** c * mpmath.ncdf(-x / self.S)
        y = self.root(-c)
        if y is None:
            return mpmath.mpf(0)
        pcdf = sum(p * mpmath.ncdf((y - s) / self.S) for s, p in zip(self.s, self.p))
        return mpmath.ncdf(y / self.S) - mpmath.e ** c * pcdf

    def delta3(self, eps: mpmath.mpf, add: bool, n: int) -> mpmath.mpf:
        """Three runs: E_{x,y}[inner(eps -/+ L(x) -/+ L(y))] with x, y from P (remove) or Q (add), by an
        n-point Gauss-Hermite rule for each Gaussian component."""
        nodes = mpmath.mp.gauss_quadrature(n, "hermite") if hasattr(mpmath.mp, "gauss_quadrature") else None
        if nodes is None:
            xs, ws = _hermite(n)
        else:  # pragma: no cover - newer mpmath
            xs, ws = nodes
        comps = [(mpmath.mpf(0), mpmath.mpf(1))] if add else list(zip(self.s, self.p))
        pts = [(s + self.S * mpmath.sqrt(2) * z, p * w / mpmath.sqrt(mpmath.pi)) for s, p in comps for z, w in zip(xs, ws)]
        ls = [(self.L(x), w) for x, w in pts]
        sign = 1 if add else -1
        return mpmath.fsum(w1 * w2 * self._inner(eps + sign * (l1 + l2), add) for l1, w1 in ls for l2, w2 in ls)


def _hermite(n: int) -> tuple[list[mpmath.mpf], list[mpmath.mpf]]:
    """The n-point Gauss-Hermite rule (weight e^{-x^2}): roots of H_n by Newton from the Golub-Welsch
    guesses, weights 2^{n-1} n! sqrt(pi) / (n^2 H_{n-1}(x)^2)."""
    xs, ws = [], []
    for i in range(1, n + 1):
        x = mpmath.findroot(lambda t: mpmath.hermite(n, t), mpmath.sqrt(2 * n + 1) * mpmath.cos(mpmath.pi * (4 * i - 1) / (4 * n + 2)))
        xs.append(x)
        ws.append(2 ** (n - 1) * mpmath.factorial(n) * mpmath.sqrt(mpmath.pi) / (n ** 2 * mpmath.hermite(n - 1, x) ** 2))
    return xs, ws


MIX2 = ("1", ["1/2", "1"], ["1/3", "2/3"])  # no sensitivity 0: losses unbounded below
MIX3 = ("1", ["0", "1", "2"], ["0.81", "0.18", "0.01"])  # DP-FTRL style: a record seen twice
MIX4 = ("2", ["0", "1", "3/2", "3"], ["0.5", "0.25", "0.125", "0.125"])


def _spec(m: tuple, count: int = 1, direction: str | None = None) -> str:  # type: ignore[type-arg]
    sigma, sens, probs = m
    w = lambda xs: "/".join(f"({x})" if "/" in x else x for x in xs)
    d = f",direction={direction}" if direction else ""
    return f"mog:sigma={sigma},sensitivities={w(sens)},probs={w(probs)},count={count}{d}"


# -- the PLD engine: one order ------------------------------------------------------------------------
@pytest.mark.parametrize("mix", [MIX2, MIX3, MIX4], ids=["two", "three", "four"])
@pytest.mark.parametrize("eps", ["0.05", "0.5", "1.5"])
def test_one_run_each_order_against_quadrature(mix: tuple, eps: str) -> None:  # type: ignore[type-arg]
    with mpmath.workdps(30):
        ref = Pair(*mix)
        want = {"remove": ref.delta_remove(_mp(eps)), "add": ref.delta_add(_mp(eps))}
    got = {}
    for d in ("remove", "add"):
        got[d] = e = exactdp.delta(_spec(mix, direction=d), eps, digits=12)
        assert _inside(e, want[d], absolute=mpmath.mpf(10) ** -25), (d, e, want[d])
        if want[d] > mpmath.mpf(10) ** -20:
            assert e.upper - e.lower <= Fraction(1, 10**10) * e.upper
        # the same answer by the direction option on the plain spec
        assert exactdp.optimal_delta(_spec(mix), eps, digits=12, direction=d) == e
    mx = exactdp.delta(_spec(mix), eps, digits=12)  # max: both orders
    assert _inside(mx, max(want.values()), absolute=mpmath.mpf(10) ** -25)
    assert mx.lower <= max(got["remove"].upper, got["add"].upper)


@pytest.mark.parametrize(("mix", "eps"), [(MIX2, "1")], ids=["two-1"])
def test_three_runs_each_order_against_gauss_hermite(mix: tuple, eps: str) -> None:  # type: ignore[type-arg]
    """Without a sensitivity 0 the third run's hockey-stick is smooth in the first two losses, so the
    Gauss-Hermite sums converge fast (checked: two rule sizes agree)."""
    with mpmath.workdps(20):
        ref = Pair(*mix)
        for d, add in (("remove", False), ("add", True)):
            coarse, fine = ref.delta3(_mp(eps), add, 14), ref.delta3(_mp(eps), add, 20)
            err = abs(coarse - fine)
            assert err <= abs(fine) * mpmath.mpf(10) ** -6  # the rule converged
            e = exactdp.delta(_spec(mix, 3, d), eps, digits=6)
            assert _inside(e, fine, rel=40, absolute=10 * err), (d, e, fine, err)
            assert e.upper - e.lower <= Fraction(1, 10**5) * e.upper + Fraction(1, 10**15)


@pytest.mark.parametrize("direction", ["remove", "add"])
def test_mixture_of_0_and_1_is_the_subsampled_gaussian_in_each_order(direction: str) -> None:
    """mog with sensitivities 0/1 and probs 1-q/q is gaussian:q=: the same brackets in each order, and
    the mixture's own loss model (its certified root) agrees with the subsampled Gaussian's."""
    from flint import arb, ctx

    from exactdp.engines.pld.models import GaussianPair, MixturePair, Reversed, Subsampled
    from exactdp.engines.pld.orders import model_of

    mog = f"mog:sigma=1,sensitivities=0/1,probs=0.9/0.1,count=5,direction={direction}"
    gauss = f"gaussian:sigma=1,q=0.1,count=5,direction={direction}"
    assert parse_mechanism_spec(mog) == parse_mechanism_spec(gauss)
    a, b = exactdp.delta(mog, "0.1", digits=6), exactdp.delta(gauss, "0.1", digits=6)
    assert a.algorithm == b.algorithm == "pld" and a.lower <= b.upper and b.lower <= a.upper
    # the models themselves, before normalisation
    mix = model_of(MixtureOfGaussians(1, [0, 1, 3], ["0.9", "0.1", "0"], direction=direction)).remove
    sub = model_of(PoissonSampled(Gaussian(1), "0.1", direction=direction)).remove
    assert isinstance(mix, Reversed) == (direction == "add") == isinstance(sub, Reversed)
    if direction == "remove":
        assert isinstance(mix, MixturePair) and isinstance(sub, Subsampled) and isinstance(sub.base, GaussianPair)
    with ctx.workprec(120):
        for e in ["-2", "-0.1", "0.001", "0.5", "3"]:
            for x, y in zip(mix.cdf(arb(e)), sub.cdf(arb(e))):
                assert x.overlaps(y), (e, x, y)


def test_direction_in_the_spec_the_value_and_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    m = parse_mechanism_spec(_spec(MIX3, direction="add"))[0]
    assert isinstance(m, MixtureOfGaussians) and m.direction == "add" and m.is_symmetric
    assert parse_mechanism_spec(m.spec())[0] == m and "direction=add" in m.spec()
    assert with_direction(MixtureOfGaussians(*MIX3), "remove") == MixtureOfGaussians(*MIX3, direction="remove")
    assert repr(MixtureOfGaussians(1, [1, 2], ["1/2", "1/2"])).endswith("))")  # the default direction not shown
    # a subsampled mixture keeps its one order
    sub = normalise_mechanism(PoissonSampled(MixtureOfGaussians("1", ["1", "2"], ["0.5", "0.5"], "add"), "0.2"))
    assert sub == MixtureOfGaussians("1", ["0", "1", "2"], ["0.8", "0.1", "0.1"], "add")
    assert parse_mechanism_spec("mog:sigma=1,sensitivities=1/2,probs=0.5/0.5,q=0.2,direction=add")[0] == sub
    with pytest.raises(InvalidParameterError, match="directions"):
        normalise_mechanism(PoissonSampled(MixtureOfGaussians("1", ["1", "2"], ["0.5", "0.5"], "add"), "0.2",
                                           direction="remove"))
    # the mixture of 0 and one sensitivity is the subsampled Gaussian in that order
    assert normalise_mechanism(MixtureOfGaussians("2", ["0", "3"], ["0.9", "0.1"], "add")) == PoissonSampled(
        Gaussian(2, 3), "0.1", direction="add")
    with mpmath.workdps(30):
        ref = Pair(*MIX3)
        want = {"remove": ref.delta_remove(mpmath.mpf("0.1")), "add": ref.delta_add(mpmath.mpf("0.1"))}
    for d in ("remove", "add"):
        assert main(["delta", "--mechanism", _spec(MIX3), "--at-eps", "0.1", "--direction", d, "--digits", "10",
                     "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert _inside(type("E", (), {"lower": Fraction(out["lower"]), "upper": Fraction(out["upper"])}), want[d])
        res = run_query({"query": "delta", "mechanisms": [_spec(MIX3)], "at_eps": "0.1", "direction": d,
                                 "digits": 10})
        assert _inside(type("E", (), {"lower": Fraction(res["lower"]), "upper": Fraction(res["upper"])}), want[d])
    # eps and a curve in one order
    e = exactdp.epsilon(_spec(MIX3, direction="add"), "1e-3", digits=8)
    with mpmath.workdps(30):
        truth = mpmath.findroot(lambda t: ref.delta_add(t) - mpmath.mpf("1e-3"), _mp(e.lower))
    assert _inside(e, truth, rel=15)
    (c,) = delta_curve(_spec(MIX3), ["0.1"], digits=10, direction="add")
    assert _inside(c, want["add"])
    # a negative eps takes the reversed order: delta(-e) = 1 - a + a delta_rev(e), a = e^-e
    neg = exactdp.optimal_delta(_spec(MIX3, direction="add"), "-0.1", digits=10)
    a = mpmath.e ** mpmath.mpf("-0.1")
    assert _inside(neg, 1 - a + a * want["remove"], rel=18)
    with pytest.raises(InvalidParameterError, match="both orders"):
        exactdp.tradeoff(_spec(MIX3, direction="add"), ["0.1"])


# -- Rényi divergences ----------------------------------------------------------------------------------
def _rdp_ref(mix: tuple, alpha: mpmath.mpf, add: bool) -> mpmath.mpf:  # type: ignore[type-arg]
    """D_alpha(P || Q) (remove) or D_alpha(Q || P) (add) by mpmath quadrature of E_Q[(P/Q)^beta]."""
    ref = Pair(*mix)
    beta = 1 - alpha if add else alpha
    pts = [-mpmath.inf, -8, -2, 0, 2, 8, mpmath.inf]
    m = mpmath.quad(lambda x: ref.Q(x) * mpmath.e ** (beta * ref.L(x)), pts)
    return mpmath.log(m) / (alpha - 1)


@pytest.mark.parametrize("mix", [MIX2, MIX3, MIX4], ids=["two", "three", "four"])
@pytest.mark.parametrize("alpha", ["1.5", "2", "3.25", "8"])
@pytest.mark.parametrize("direction", ["remove", "add"])
def test_rdp_each_direction_every_order_against_quadrature(mix: tuple, alpha: str, direction: str) -> None:  # type: ignore[type-arg]
    with mpmath.workdps(40):
        truth = _rdp_ref(mix, _mp(alpha), direction == "add")
    (e,) = rdp_curve(_spec(mix), [alpha], direction=direction, digits=15)
    assert _inside(e, truth, rel=30), (e, truth)
    assert e.upper - e.lower <= Fraction(1, 10**14) * e.upper
    (one,) = rdp_curve(_spec(mix, direction=direction), [alpha], direction=direction, digits=15)
    assert one == e  # the spec's own direction


@pytest.mark.parametrize("alpha", ["2.5", "4"])
def test_rdp_max_is_the_larger_direction(alpha: str) -> None:
    with mpmath.workdps(40):
        truth = max(_rdp_ref(MIX2, _mp(alpha), False), _rdp_ref(MIX2, _mp(alpha), True))
    (e,) = rdp_curve(_spec(MIX2, 3), [alpha], digits=12)
    assert _inside(e, 3 * truth, rel=25)
    with pytest.raises(InvalidParameterError, match="add direction only"):
        rdp_curve(_spec(MIX2, direction="add"), [alpha], direction="remove")


def test_rdp_integer_order_past_the_polynomial_by_the_integral(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past MAX_MIXTURE_TERMS exponents the remove direction at an integer order is the integral."""
    from exactdp.engines import rdp

    monkeypatch.setattr(rdp, "MAX_MIXTURE_TERMS", 2)
    with mpmath.workdps(40):
        truth = _rdp_ref(MIX4, mpmath.mpf(5), False)
    (e,) = rdp_curve(_spec(MIX4), [5], direction="remove", digits=15)
    assert _inside(e, truth, rel=30)


def test_mixture_moment_of_0_and_d_is_the_subsampled_gaussians() -> None:
    from flint import ctx

    from exactdp.engines.rdp_subsampled import gaussian_moment, mixture_moment

    with ctx.workprec(100):
        for beta in (Fraction(5, 2), Fraction(-3, 2), Fraction(-7)):
            a = mixture_moment(Fraction(2), (Fraction(0), Fraction(3)), (Fraction(9, 10), Fraction(1, 10)), beta)
            b = gaussian_moment(Fraction(3, 2), Fraction(1, 10), beta)
            assert a.overlaps(b) and a.rad() < abs(a.mid()) * 2.0 ** -60


@pytest.mark.parametrize("mix", [MIX2, MIX4], ids=["two", "four"])
@pytest.mark.parametrize("beta", ["3", "-2.5"])
def test_mixture_tail_bound_against_mpmath(mix: tuple, beta: str) -> None:  # type: ignore[type-arg]
    """The tails' bound of docs/rdp.md §5.6 at small cuts is at least mpmath's integral of g phi there."""
    from flint import arb, ctx

    from exactdp.core.numbers import arb_of_fraction
    from exactdp.engines.rdp_subsampled import mixture_tail_bound

    sigma, sens, probs = mix
    mus = [_mp(s) / _mp(sigma) for s in sens]
    ps = [_mp(p) for p in probs]
    b = _mp(beta)
    top = max(mus)
    with mpmath.workdps(30):
        def g(t: mpmath.mpf) -> mpmath.mpf:
            r = sum(p * mpmath.e ** (mu * t - mu * mu / 2) for mu, p in zip(mus, ps))
            return (r ** b - 1 - b * (r - 1)) * mpmath.npdf(t)

        for left in ("1", "2", "4"):
            right = _mp(left) + max(b * top, top)
            tails = mpmath.quad(g, [-mpmath.inf, -_mp(left)]) + mpmath.quad(g, [right, mpmath.inf])
            with ctx.workprec(100):
                comps = [(arb_of_fraction(Fraction(s) / Fraction(sigma)), arb_of_fraction(Fraction(p)))
                         for s, p in zip(sens, probs)]
                bound = mixture_tail_bound(comps, arb_of_fraction(Fraction(beta)), arb(left),
                                           arb(mpmath.nstr(right, 40)))
            assert _mp(Fraction(bound.upper().mid().str(40, radius=False))) >= tails * (1 - mpmath.mpf(10) ** -20)


# -- DpEvents: the direction kept beside the event ---------------------------------------------------------
def test_dp_events_keep_a_one_order_mechanism_by_the_direction_argument() -> None:
    pytest.importorskip("dp_accounting")
    from exactdp import Composition, from_dp_event, to_dp_event

    for spec, d in [(_spec(("1", ["0", "1", "2"], ["0.5", "0.25", "0.25"]), 3, "add"), "add"),
                    ("gaussian:sigma=1,q=0.5,count=2,direction=remove", "remove")]:
        c = Composition.of(spec)
        with pytest.raises(InvalidParameterError, match=f"direction='{d}'"):
            to_dp_event(c)  # a DpEvent has no direction: never dropped silently
        ev = to_dp_event(c, direction=d)
        assert from_dp_event(ev, direction=d) == c
        assert from_dp_event(ev) == Composition.of(spec.replace(f",direction={d}", ""))  # the pair: both orders
    with pytest.raises(InvalidParameterError, match="direction"):
        from_dp_event(to_dp_event(Composition.of("gaussian:sigma=1")), direction="sideways")


def test_rdp_add_at_a_high_order_without_a_sensitivity_0() -> None:
    """No sensitivity 0: r^(1-alpha) phi peaks near -(alpha-1) mu_min = -255, spanning e^(+-30000) over
    the line; Arb's integrator then needs the line in pieces (engines/rdp_subsampled.py: at once it
    gives no finite ball), and the answer is still mpmath's quadrature of E_Q[(P/Q)^(1-alpha)] split
    around that peak."""
    mix = ("1", ["1", "2"], ["0.5", "0.5"])
    ref = Pair(*mix)
    a = mpmath.mpf(256)
    f = lambda x: ref.Q(x) * mpmath.e ** ((1 - a) * ref.L(x))
    with mpmath.workdps(30):
        one, err = mpmath.quad(f, [-mpmath.inf, -350, -300, -270, -255, -240, -200, -120, 0, mpmath.inf], error=True)
        assert err <= one * mpmath.mpf(10) ** -20
        truth = mpmath.log(one) / (a - 1)
    (e,) = rdp_curve(_spec(mix), [256], direction="add", digits=8)
    assert _inside(e, truth, rel=20)
