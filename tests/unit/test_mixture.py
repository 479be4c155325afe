"""Issue 27 §1 and §4: mixtures of Gaussians, a Gaussian by mu^2 or rho, degenerate parameters.

Every value is checked against an independent reference: mpmath quadrature (30-50 digits) of the
hockey-stick divergence of the mixture pair in both orders, the closed form of the Gaussian profile
in mpmath, Fraction arithmetic, and the exact answers of the degenerate pairs.
"""

from __future__ import annotations

import json
from fractions import Fraction

import mpmath
import pytest

import exactdp
from exactdp.api.rdp import rdp_curve
from exactdp.cli import main
from exactdp.core.errors import InvalidParameterError
from exactdp.engines.pld.models import GaussianPair, MixturePair, Subsampled
from exactdp.model.composition import Composition
from exactdp.model.mechanisms import Gaussian, MixtureOfGaussians, NonPrivate, PoissonSampled, normalise_mechanism
from exactdp.model.spec import parse_mechanism_spec


@pytest.fixture(autouse=True)
def _forty_digits() -> object:
    with mpmath.workdps(40):
        yield


def _mp(x: Fraction | str | int) -> mpmath.mpf:
    f = Fraction(x)
    return mpmath.mpf(f.numerator) / f.denominator


def _inside(e: object, truth: mpmath.mpf, rel: int = 20) -> bool:
    lo, hi = _mp(e.lower), _mp(e.upper)  # type: ignore[attr-defined]
    tol = abs(truth) * mpmath.mpf(10) ** -rel  # the reference's own error, far below the bracket's width
    return lo - tol <= truth <= hi + tol


# -- the reference: the mixture pair by mpmath ----------------------------------------------------
class Ref:
    """P = sum p_i N(s_i, S^2) against Q = N(0, S^2), everything in mpmath (no exactdp code)."""

    def __init__(self, sigma: object, sens: list, probs: list) -> None:  # type: ignore[type-arg]
        self.S = mpmath.mpf(sigma) if not isinstance(sigma, (str, Fraction)) else _mp(sigma)
        self.s = [x if isinstance(x, mpmath.mpf) else _mp(x) for x in sens]
        self.p = [_mp(x) for x in probs]
        self.p0 = sum((p for s, p in zip(self.s, self.p) if s == 0), mpmath.mpf(0))

    def P(self, x: mpmath.mpf) -> mpmath.mpf:
        return sum(p * mpmath.npdf(x, s, self.S) for s, p in zip(self.s, self.p))

    def Q(self, x: mpmath.mpf) -> mpmath.mpf:
        return mpmath.npdf(x, 0, self.S)

    def L(self, x: mpmath.mpf) -> mpmath.mpf:
        return mpmath.log(sum(p * mpmath.exp((2 * s * x - s * s) / (2 * self.S ** 2)) for s, p in zip(self.s, self.p)))

    def root(self, e: mpmath.mpf) -> mpmath.mpf | None:
        """x with L(x) = e (None when e <= log p0): the root of the well-sloped
        G(x) = log sum_{s_i > 0} p_i e^{(2 s_i x - s_i^2)/(2 S^2)} - log(e^e - p0), bracketed, by mpmath."""
        if self.p0 and e <= mpmath.log(self.p0):
            return None
        logr = mpmath.log(mpmath.e ** e - self.p0)
        pos = [(s, p) for s, p in zip(self.s, self.p) if s > 0]
        g = lambda x: mpmath.log(sum(p * mpmath.exp((2 * s * x - s * s) / (2 * self.S ** 2)) for s, p in pos)) - logr
        lo, hi = mpmath.mpf(-1), mpmath.mpf(1)
        while g(lo) > 0:
            lo *= 2
        while g(hi) < 0:
            hi *= 2
        return mpmath.findroot(g, (lo, hi), solver="anderson")

    def pbar(self, y: mpmath.mpf | None) -> mpmath.mpf:  # P(X > y)
        return mpmath.mpf(1) if y is None else sum(p * mpmath.ncdf(s - y, 0, self.S) for s, p in zip(self.s, self.p))

    def qbar(self, y: mpmath.mpf | None) -> mpmath.mpf:
        return mpmath.mpf(1) if y is None else mpmath.ncdf(-y, 0, self.S)

    def pcdf(self, y: mpmath.mpf | None) -> mpmath.mpf:  # P(X <= y), directly (no 1 - tail)
        return mpmath.mpf(0) if y is None else sum(p * mpmath.ncdf(y - s, 0, self.S) for s, p in zip(self.s, self.p))

    def qcdf(self, y: mpmath.mpf | None) -> mpmath.mpf:
        return mpmath.mpf(0) if y is None else mpmath.ncdf(y, 0, self.S)

    def delta1(self, eps: mpmath.mpf) -> mpmath.mpf:
        """max over the two orders of the hockey-stick divergence of one run, by quadrature."""
        x = self.root(eps)
        inf = mpmath.inf
        rem = mpmath.quad(lambda t: self.P(t) - mpmath.e ** eps * self.Q(t), [-inf if x is None else x, inf])
        y = self.root(-eps)
        add = mpmath.mpf(0) if y is None else mpmath.quad(lambda t: self.Q(t) - mpmath.e ** eps * self.P(t), [-inf, y])
        return max(rem, add)

    def delta2(self, eps: mpmath.mpf) -> mpmath.mpf:
        """The same for two runs: the outer integral by quadrature, the inner one over the region
        L(y) > eps - L(x) (L increasing) by the normal tails."""
        ee = mpmath.e ** eps
        inf = mpmath.inf

        def rem(x: mpmath.mpf) -> mpmath.mpf:
            y = self.root(eps - self.L(x))
            return self.P(x) * self.pbar(y) - ee * self.Q(x) * self.qbar(y)

        def add(x: mpmath.mpf) -> mpmath.mpf:  # (Q, P): the loss is -L; region L(x) + L(y) < -eps
            y = self.root(-eps - self.L(x))
            if y is None:
                return mpmath.mpf(0)
            return self.Q(x) * self.qcdf(y) - ee * self.P(x) * self.pcdf(y)

        kink = self.root(eps - mpmath.log(self.p0)) if self.p0 else None  # where the inner region becomes all y
        a = mpmath.quad(rem, [-inf] + sorted({mpmath.mpf(0)} | ({kink} if kink is not None else set())) + [inf])
        # the add integrand vanishes where -eps - L(x) <= log p0, i.e. for x above the root of that
        top = self.root(-eps - mpmath.log(self.p0)) if self.p0 else None
        b = mpmath.quad(add, [-inf, 0, top] if top is not None and top > 0 else [-inf, inf if top is None else top])
        return max(a, b)


MIX2 = ("1", ["1/2", "1"], ["1/3", "2/3"])  # no sensitivity 0: unbounded below
MIX3 = ("1", ["0", "1", "2"], ["0.81", "0.18", "0.01"])  # DP-FTRL style: a record seen twice


def _spec(m: tuple, count: int = 1) -> str:  # type: ignore[type-arg]
    sigma, sens, probs = m
    w = lambda xs: "/".join(f"({x})" if "/" in x else x for x in xs)
    return f"mog:sigma={sigma},sensitivities={w(sens)},probs={w(probs)},count={count}"


@pytest.mark.parametrize("mix", [MIX2, MIX3], ids=["two", "three"])
@pytest.mark.parametrize("eps", ["0.5", "2"])
def test_delta_one_run_against_quadrature(mix: tuple, eps: str) -> None:  # type: ignore[type-arg]
    truth = Ref(*mix).delta1(_mp(eps))
    e = exactdp.delta(_spec(mix), eps, digits=12)
    assert _inside(e, truth)
    assert e.upper - e.lower <= Fraction(1, 10**10) * e.upper


@pytest.mark.parametrize("mix", [MIX2, MIX3], ids=["two", "three"])
def test_delta_two_runs_against_quadrature(mix: tuple) -> None:  # type: ignore[type-arg]
    with mpmath.workdps(25):
        truth = Ref(*mix).delta2(mpmath.mpf(1))
    e = exactdp.delta(_spec(mix, 2), "1", digits=6)
    assert _inside(e, truth, rel=18)


@pytest.mark.parametrize("mix", [MIX2, MIX3], ids=["two", "three"])
def test_epsilon_one_run_against_quadrature(mix: tuple) -> None:  # type: ignore[type-arg]
    ref = Ref(*mix)
    e = exactdp.epsilon(_spec(mix), "1e-3", digits=10)
    guess = _mp(e.lower)
    truth = mpmath.findroot(lambda t: ref.delta1(t) - mpmath.mpf("1e-3"), guess)
    assert _inside(e, truth)


@pytest.mark.parametrize("mix", [MIX2, MIX3], ids=["two", "three"])
def test_tails_of_both_orders_against_mpmath(mix: tuple) -> None:  # type: ignore[type-arg]
    """The four tails at an edge e, remove order (the mixture model) and add order (its reverse),
    against mpmath's normal tails at mpmath's own root of L(x) = e."""
    from flint import arb, ctx

    from exactdp.engines.pld.orders import model_of

    ref = Ref(*mix)
    orders = model_of(parse_mechanism_spec(_spec(mix))[0])
    assert orders.add is not None  # not symmetric: both orders are composed
    for e in ["-3", "-0.05", "0.02", "1.5", "7"]:
        x = ref.root(_mp(e))
        want = (ref.pcdf(x), ref.pbar(x), ref.qcdf(x), ref.qbar(x))
        xr = ref.root(-_mp(e))  # add order: P' = Q, Q' = P, loss -L: P'(L' <= e) = Q(L >= -e)
        want_add = (ref.qbar(xr), ref.qcdf(xr), ref.pbar(xr), ref.pcdf(xr))
        with ctx.workprec(130):
            got, got_add = orders.remove.cdf(arb(e)), orders.add.cdf(arb(e))
        for g, w in zip(got + got_add, want + want_add):
            tol = mpmath.nstr(abs(w) * mpmath.mpf(10) ** -30 + mpmath.mpf(10) ** -60, 5)
            with ctx.workprec(130):
                assert g.overlaps(arb(mpmath.nstr(w, 38)) + arb(0, tol)), (e, g, w)
                assert g.rad() <= abs(g.mid()) * arb(2) ** -100 + arb(2) ** -400  # the tails keep their relative accuracy


def test_mixture_model_agrees_with_subsampled_gaussian_model() -> None:
    """The mixture (1-q) N(0) + q N(D) against N(0) is the subsampled Gaussian: the mixture model's
    tails (found by the certified root) overlap Subsampled's (a closed-form inverse) at every edge."""
    from flint import arb, ctx

    q, d = Fraction(1, 10), Fraction(3, 2)
    mix = MixturePair(Fraction(1), (Fraction(0), d), (1 - q, q))
    sub = Subsampled(GaussianPair(d), q)
    with ctx.workprec(120):
        for e in ["-0.1", "-0.0001", "0.001", "0.5", "3", "12"]:
            a, b = mix.cdf(arb(e)), sub.cdf(arb(e))
            for x, y in zip(a, b):
                assert x.overlaps(y), (e, x, y)
                assert x.rad() < abs(x.mid()) * arb(2) ** -90 + arb(2) ** -200


def test_mixture_below_log_p0_has_every_loss_above() -> None:
    from flint import arb, ctx

    mix = MixturePair(Fraction(1), (Fraction(0), Fraction(1)), (Fraction(9, 10), Fraction(1, 10)))
    with ctx.workprec(80):
        pf, ps, qf, qs = mix.cdf(arb("-0.2"))  # log 0.9 = -0.105...
    assert pf.is_zero() and qf.is_zero() and ps == 1 and qs == 1


# -- properties -----------------------------------------------------------------------------------
def test_monotone_in_sigma_in_weight_and_in_count() -> None:
    d = lambda s: exactdp.delta(s, "1", digits=3)
    base = d("mog:sigma=1,sensitivities=0/1/2,probs=0.8/0.1/0.1,count=3")
    more_noise = d("mog:sigma=1.2,sensitivities=0/1/2,probs=0.8/0.1/0.1,count=3")
    heavier = d("mog:sigma=1,sensitivities=0/1/2,probs=0.8/0.05/0.15,count=3")
    longer = d("mog:sigma=1,sensitivities=0/1/2,probs=0.8/0.1/0.1,count=4")
    assert more_noise.upper < base.lower < base.upper < heavier.lower
    assert base.upper < longer.lower


# -- the value: normal form, spec, validation ---------------------------------------------------------
def test_normal_form_sorts_merges_and_reads_back() -> None:
    m = MixtureOfGaussians("2", ["3", "1", "3", "0"], ["0.1", "0.2", "0.3", "0.4"])
    assert m.sensitivities == (0, 1, 3) and m.probs == (Fraction(2, 5), Fraction(1, 5), Fraction(2, 5))
    assert parse_mechanism_spec(m.spec())[0] == m
    assert normalise_mechanism(MixtureOfGaussians("2", ["0", "3"], ["0.9", "0.1"])) == PoissonSampled(Gaussian(2, 3), "0.1")
    assert normalise_mechanism(MixtureOfGaussians("2", ["3"], ["1"])) == Gaussian(2, 3)
    sub = normalise_mechanism(PoissonSampled(MixtureOfGaussians("1", ["1", "2"], ["0.5", "0.5"]), "0.2"))
    assert sub == MixtureOfGaussians("1", ["0", "1", "2"], ["0.8", "0.1", "0.1"])


@pytest.mark.parametrize("spec", [
    "mog:sigma=1,sensitivities=1/2,probs=0.5/0.6",  # sum != 1
    "mog:sigma=1,sensitivities=-1/2,probs=0.5/0.5",  # negative sensitivity (dp_accounting refuses it too)
    "mog:sigma=1,sensitivities=1/2,probs=1",  # lengths differ
    "mog:sigma=1,sensitivities=1/2",  # no probs
    "mog:sigma=-1,sensitivities=1,probs=1",
    "gaussian:sigma=1,mu2=2",  # two of sigma, mu2, rho
    "gaussian:mu2=2,sensitivity=2",
    "gaussian:rho=-1",
    "gaussian:sigma=1,q=1.5",
])
def test_bad_parameters_are_one_line_exit_2(spec: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(InvalidParameterError):
        parse_mechanism_spec(spec)
    code = main(["delta", "--mechanism", spec, "--at-eps", "1"])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1


# -- a Gaussian by mu^2 or rho ------------------------------------------------------------------------
def _gauss_delta(mu2: mpmath.mpf, eps: mpmath.mpf) -> mpmath.mpf:
    mu = mpmath.sqrt(mu2)
    return mpmath.ncdf(-eps / mu + mu / 2) - mpmath.e ** eps * mpmath.ncdf(-eps / mu - mu / 2)


@pytest.mark.parametrize(("spec", "mu2"), [("gaussian:mu2=2,count=3", "6"), ("gaussian:rho=1/3", "2/3"),
                                          ("gaussian:rho=0.05,count=10", "1")])
def test_mu2_and_rho_against_the_closed_form(spec: str, mu2: str) -> None:
    truth = _gauss_delta(_mp(mu2), mpmath.mpf(1))
    e = exactdp.delta(spec, "1", digits=25)
    assert e.algorithm == "gaussian-closed-form" and _inside(e, truth, rel=30)


def test_mu2_value_and_consumers() -> None:
    g = Gaussian(mu2=2)
    assert g.sigma is None and g.mu2 == 2 and g.spec() == "gaussian:mu2=2" and repr(g) == "Gaussian(mu2=Fraction(2, 1))"
    assert Gaussian(rho="1/8") == Gaussian(2) and Gaussian(mu2=0) == Gaussian(1, 0)
    assert parse_mechanism_spec("gaussian:rho=1")[0] == g
    (r,) = rdp_curve("gaussian:mu2=2,count=3", [3])
    assert r.exact == Fraction(9)  # alpha mu^2/2 per run, exactly
    with pytest.raises(InvalidParameterError):
        _ = g.mu  # irrational: refused, never rounded


def test_subsampled_mu2_gaussian_against_quadrature() -> None:
    """gaussian:mu2=2,q=1/2 is the mixture of N(0) and N(sqrt 2): mpmath's quadrature of that pair."""
    truth = Ref(mpmath.mpf(1), [mpmath.mpf(0), mpmath.sqrt(2)], ["1/2", "1/2"]).delta1(mpmath.mpf("0.5"))
    e = exactdp.delta("gaussian:mu2=2,q=1/2", "0.5", digits=12)
    assert _inside(e, truth)


# -- RDP of a mixture ---------------------------------------------------------------------------------
@pytest.mark.parametrize("alpha", [2, 3, 5])
def test_mixture_rdp_against_quadrature(alpha: int) -> None:
    ref = Ref(*MIX3)
    a = mpmath.mpf(alpha)
    truth = mpmath.log(mpmath.quad(lambda x: ref.P(x) ** a * ref.Q(x) ** (1 - a), [-mpmath.inf, 0, mpmath.inf])) / (a - 1)
    (e,) = rdp_curve(_spec(MIX3), [alpha], direction="remove", digits=12)
    assert _inside(e, truth)
    # the add direction and fractional orders: tests/unit/test_mixture_orders.py


# -- degenerate parameters, through the CLI -----------------------------------------------------------
@pytest.mark.parametrize(("spec", "delta", "eps"), [
    ("gaussian:sigma=0,count=3", "1", "inf"),
    ("laplace:scale=0", "1", "inf"),
    ("mog:sigma=0,sensitivities=1/2,probs=0.5/0.5", "1", "inf"),
    ("approx:eps=0,delta=1", "1", "inf"),
    ("gaussian:sigma=1,q=0,count=5", "0", "0"),
    ("gaussian:sigma=1,sensitivity=0", "0", "0"),
    ("laplace:scale=1,sensitivity=0", "0", "0"),
    ("mog:sigma=1,sensitivities=0/0,probs=0.5/0.5", "0", "0"),
    ("gaussian:rho=0", "0", "0"),
])
def test_degenerate_parameters_answer_exactly(spec: str, delta: str, eps: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["delta", "--mechanism", spec, "--at-eps", "0.5", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["exact"] == delta and out["lower"] == delta == out["upper"]
    assert main(["epsilon", "--mechanism", spec, "--at-delta", "0.001", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["upper"] == eps and out["lower"] == eps
    code = main(["check", "--mechanism", spec, "--eps-g", "1", "--delta-g", "0.5"])
    capsys.readouterr()
    assert code == (1 if delta == "1" else 0)


def test_degenerate_mixed_with_others_and_subsampled() -> None:
    c = Composition.of(["gaussian:sigma=0", "laplace:scale=1,count=5"])
    assert exactdp.delta(c, "100").exact == 1 and exactdp.epsilon(c, "0.99").is_infinite
    assert normalise_mechanism(Gaussian(0)) == NonPrivate()
    # q-subsampled, no noise: remove order P = (1-q) Q + q (a point Q lacks); delta(eps >= 0) = 1 - (1-q)^k
    e = exactdp.delta("gaussian:sigma=0,q=0.5,count=2", "1", digits=6)
    assert e.lower <= Fraction(3, 4) <= e.upper
    assert exactdp.epsilon("gaussian:sigma=0,q=0.5,count=2", "0.5").is_infinite  # below the +inf mass 3/4


# -- dp_accounting's events, by class name (no import of dp_accounting needed) -----------------------
class MixtureOfGaussiansDpEvent:
    def __init__(self, standard_deviation: float, sensitivities: list, sampling_probs: list) -> None:  # type: ignore[type-arg]
        self.standard_deviation, self.sensitivities, self.sampling_probs = standard_deviation, sensitivities, sampling_probs


class PoissonSampledDpEvent:
    def __init__(self, sampling_probability: float, event: object) -> None:
        self.sampling_probability, self.event = sampling_probability, event


class ZCDpEvent:
    def __init__(self, rho: float, xi: float = 0.0) -> None:
        self.rho, self.xi = rho, xi


def test_from_dp_event_reads_a_mixture() -> None:
    from exactdp.model.dp_event import from_dp_event

    c = from_dp_event(MixtureOfGaussiansDpEvent(2.0, [0.0, 1.0, 2.0], [0.81, 0.18, 0.01]))
    # 0.81 + 0.18 + 0.01 as binary floats is not 1: the decimals they print as are read
    assert c.groups == ((MixtureOfGaussians(2, [0, 1, 2], ["0.81", "0.18", "0.01"]), 1),)
    c = from_dp_event(MixtureOfGaussiansDpEvent(1.0, [1.0, 2.0], [0.5, 0.5]))  # binary values sum to 1
    assert c.groups == ((MixtureOfGaussians(1, [1, 2], ["0.5", "0.5"]), 1),)
    c = from_dp_event(PoissonSampledDpEvent(0.5, MixtureOfGaussiansDpEvent(1.0, [1.0, 2.0], [0.5, 0.5])))
    assert c.groups == ((MixtureOfGaussians(1, [0, 1, 2], ["0.5", "0.25", "0.25"]), 1),)
    with pytest.raises(InvalidParameterError, match="sum to 1"):
        from_dp_event(MixtureOfGaussiansDpEvent(1.0, [1.0, 2.0], [0.5, 0.6]))
    with pytest.raises(InvalidParameterError, match="not the Gaussian"):
        from_dp_event(ZCDpEvent(0.5))
    acc = exactdp.Accountant().compose(MixtureOfGaussiansDpEvent(2.0, [0.0, 1.0, 2.0], [0.81, 0.18, 0.01]))
    with mpmath.workdps(30):
        truth = Ref("2", ["0", "1", "2"], ["0.81", "0.18", "0.01"]).delta1(mpmath.mpf("0.5"))
    assert _inside(acc.get_delta("0.5", digits=12), truth)


def test_to_dp_event_writes_a_mixture_and_a_mu2_gaussian() -> None:
    pytest.importorskip("dp_accounting")
    from exactdp.model.dp_event import to_dp_event

    ev = to_dp_event(_spec(MIX3, 3))
    assert type(ev).__name__ == "SelfComposedDpEvent" and ev.count == 3
    assert (ev.event.standard_deviation, list(ev.event.sensitivities), list(ev.event.sampling_probs)) == (
        1.0, [0.0, 1.0, 2.0], [0.81, 0.18, 0.01])
    g = to_dp_event("gaussian:mu2=2")
    assert g.noise_multiplier == float(mpmath.mpf(1) / mpmath.sqrt(2))  # the float nearest 1/sqrt(2)
    assert type(to_dp_event("gaussian:sigma=0")).__name__ == "NonPrivateDpEvent"


def test_json_object_form_takes_lists() -> None:
    from exactdp.model.inputs import mechanisms_from_json

    c = mechanisms_from_json([{"mechanism": "mog", "sigma": "1", "sensitivities": [1, 2], "probs": ["1/3", "2/3"]}],
                             "mechanisms")
    assert c.groups == ((MixtureOfGaussians(1, [1, 2], ["1/3", "2/3"]), 1),)


def test_rdp_of_the_mechanism_without_noise() -> None:
    assert rdp_curve("gaussian:sigma=0", [2])[0].is_infinite
    assert rdp_curve("gaussian:sigma=0,q=0.5", [2], direction="remove")[0].is_infinite
    with pytest.raises(InvalidParameterError, match="add"):
        rdp_curve("gaussian:sigma=0,q=0.5", [2], direction="add")


@pytest.mark.slow
def test_large_count_bracket_below_the_rdp_bound() -> None:
    """1000 runs of a 3-component mixture: the certified eps bracket is narrow (relative width <= 1e-4)
    and lies below Mironov's conversion of the mixture's RDP (itself checked against quadrature
    above), eps <= min_a RDP(a) + log(1/delta)/(a - 1), computed here in mpmath from mpmath's
    quadrature of E_Q[(P/Q)^a] (no exactdp code)."""
    mix = ("2", ["0", "1", "2"], ["0.81", "0.18", "0.01"])
    ref = Ref(*mix)
    e = exactdp.epsilon(_spec(mix, 1000), "1e-5", digits=5)
    assert e.upper - e.lower <= e.lower / 10**4
    with mpmath.workdps(20):
        best = mpmath.inf
        for a in range(2, 41):
            am = mpmath.mpf(a)
            rdp = mpmath.log(mpmath.quad(lambda x, am=am: ref.P(x) ** am * ref.Q(x) ** (1 - am), [-mpmath.inf, 0, mpmath.inf])) / (am - 1)
            best = min(best, 1000 * rdp + mpmath.log(mpmath.mpf(10) ** 5) / (am - 1))
    assert _mp(e.upper) < best


@pytest.mark.parametrize("spec", ["mog:sigma=1e-200,sensitivities=0/1/2,probs=0.5/0.25/0.25",
                                  "mog:sigma=1,sensitivities=1e-300/1e300/2,probs=0.5/0.25/0.25"])
def test_parameters_out_of_the_float_range_are_no_internal_error(spec: str, capsys: pytest.CaptureFixture[str]) -> None:
    """The root's float guess overflows here: it is made in Arb instead (an answer), or the precision
    runs out (exit 3), never an internal error (exit 5)."""
    code = main(["delta", "--mechanism", spec, "--at-eps", "1", "--digits", "5", "--max-seconds", "20"])
    capsys.readouterr()
    assert code in (0, 3)
