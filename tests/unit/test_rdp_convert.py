"""Issue 28 §2: the RDP -> (eps, delta) conversions, each checked against its published statement
evaluated independently in mpmath at 50 digits (the Gaussian's RDP is the closed form k alpha/(2 sigma^2);
the direction a paper does not state is solved numerically from the one it does, never from the
engine's algebra), the minimum over orders, "conversion >= optimum", the refusals and the interfaces."""

from __future__ import annotations

import json
from decimal import Decimal
from fractions import Fraction

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import exactdp
from exactdp.cli import main
from exactdp.core.enclosure import Enclosure
from exactdp.core.errors import InvalidParameterError
from exactdp.core.numbers import format_fraction
from exactdp.engines.rdp_convert import DEFAULT_ORDERS
from exactdp.query import run_query


@pytest.fixture(autouse=True)
def _fifty_digits() -> object:
    """mpmath at 50 digits inside each test of this module only (the global precision is left alone)."""
    with mpmath.workdps(50):
        yield


def _mp(x: Fraction | str | int) -> mpmath.mpf:
    f = Fraction(x)
    return mpmath.mpf(f.numerator) / f.denominator


def _inside(e: Enclosure, truth: mpmath.mpf) -> bool:
    tol = abs(truth) * mpmath.mpf(10) ** -40
    return _mp(e.lower) - tol <= truth <= _mp(e.upper) + tol  # type: ignore[arg-type]


# -- the published statements, in mpmath (alpha > 1, tau the divergence at alpha) --------------------

def mironov_eps(a: mpmath.mpf, tau: mpmath.mpf, delta: mpmath.mpf) -> mpmath.mpf:
    """Mironov 2017 Prop. 3: (alpha, tau)-RDP => (tau + log(1/delta)/(alpha-1), delta)-DP."""
    return tau + mpmath.log(1 / delta) / (a - 1)


def cks_delta(a: mpmath.mpf, tau: mpmath.mpf, eps: mpmath.mpf) -> mpmath.mpf:
    """Canonne-Kamath-Steinke 2020 Prop. 12: delta = e^{(alpha-1)(tau-eps)}/(alpha-1) (1-1/alpha)^alpha."""
    return mpmath.exp((a - 1) * (tau - eps)) / (a - 1) * (1 - 1 / a) ** a


def bbghs_eps(a: mpmath.mpf, tau: mpmath.mpf, delta: mpmath.mpf) -> mpmath.mpf:
    """Balle-Barthe-Gaboardi-Hsu-Sato 2020 Thm 21: eps = tau + log((alpha-1)/alpha) - (log delta + log alpha)/(alpha-1)."""
    return tau + mpmath.log((a - 1) / a) - (mpmath.log(delta) + mpmath.log(a)) / (a - 1)


def _eps_of(name: str, a: mpmath.mpf, tau: mpmath.mpf, delta: mpmath.mpf) -> mpmath.mpf:
    if name == "rdp-mironov":
        return mironov_eps(a, tau, delta)
    if name == "rdp-bbghs":
        return bbghs_eps(a, tau, delta)
    # CKS states delta at eps: solve cks_delta(eps) = delta (decreasing in eps) by a root finder
    return mpmath.findroot(lambda e: mpmath.log(cks_delta(a, tau, e)) - mpmath.log(delta), tau)


def _delta_of(name: str, a: mpmath.mpf, tau: mpmath.mpf, eps: mpmath.mpf) -> mpmath.mpf:
    if name == "rdp-cks":
        return cks_delta(a, tau, eps)
    f = mironov_eps if name == "rdp-mironov" else bbghs_eps
    # the papers state eps at delta: solve f(delta) = eps in log delta
    return mpmath.exp(mpmath.findroot(lambda ld: f(a, tau, mpmath.exp(ld)) - eps, -10))


NAMES = ("rdp-mironov", "rdp-cks", "rdp-bbghs")


def _gauss_tau(sigma: str, k: int, a: mpmath.mpf) -> mpmath.mpf:
    return k * a / (2 * _mp(sigma) ** 2)  # Mironov 2017 Prop. 7, composed k times


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize(("sigma", "k", "order", "delta"), [("2", 10, "4", "1e-5"), ("1", 3, "1.5", "0.01"),
                                                             ("0.5", 1, "33", "1e-9")])
def test_each_epsilon_at_one_order_is_the_published_formula(name: str, sigma: str, k: int, order: str,
                                                            delta: str) -> None:
    a = _mp(order)
    truth = max(mpmath.mpf(0), _eps_of(name, a, _gauss_tau(sigma, k, a), _mp(delta)))
    e = exactdp.epsilon(f"gaussian:sigma={sigma},count={k}", delta, method=name, orders=[order], digits=20)
    assert _inside(e, truth) and e.algorithm == f"{name} (order {order})"
    assert e.relative_width() <= Fraction(1, 10**20)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize(("sigma", "k", "order", "eps"), [("2", 10, "2.7", "5"), ("1", 3, "3", "6"),
                                                           ("3", 10, "12", "10")])
def test_each_delta_at_one_order_is_the_published_formula(name: str, sigma: str, k: int, order: str,
                                                          eps: str) -> None:
    a = _mp(order)
    truth = min(mpmath.mpf(1), _delta_of(name, a, _gauss_tau(sigma, k, a), _mp(eps)))
    d = exactdp.delta(f"gaussian:sigma={sigma},count={k}", eps, method=name, orders=[order], digits=20)
    assert truth < 1 and _inside(d, truth) and d.algorithm == f"{name} (order {order})"


@pytest.mark.parametrize("name", NAMES)
def test_the_minimum_over_orders_names_the_winner(name: str) -> None:
    orders = ["1.5", "2", "3", "3.9", "4", "6", "10", "64"]
    vals = [_eps_of(name, _mp(o), _gauss_tau("2", 10, _mp(o)), _mp("1e-5")) for o in orders]
    best = min(range(len(orders)), key=lambda i: vals[i])
    e = exactdp.epsilon("gaussian:sigma=2,count=10", "1e-5", method=name, orders=orders, digits=15)
    assert _inside(e, vals[best]) and e.algorithm == f"{name} (order {orders[best]})"
    dvals = [_delta_of(name, _mp(o), _gauss_tau("2", 10, _mp(o)), _mp(5)) for o in orders]
    best = min(range(len(orders)), key=lambda i: dvals[i])
    d = exactdp.delta("gaussian:sigma=2,count=10", "5", method=name, orders=orders, digits=15)
    assert _inside(d, dvals[best]) and d.algorithm == f"{name} (order {orders[best]})"


def test_cks_and_bbghs_are_one_function_and_mironov_is_looser() -> None:
    for order in ("1.1", "2", "7.5", "100"):
        a = _mp(order)
        tau = _gauss_tau("1", 7, a)
        assert mpmath.almosteq(_eps_of("rdp-cks", a, tau, _mp("1e-6")), bbghs_eps(a, tau, _mp("1e-6")), 1e-40)
        assert mironov_eps(a, tau, _mp("1e-6")) > bbghs_eps(a, tau, _mp("1e-6"))


def test_default_orders_include_the_fractional_orders_of_a_subsample() -> None:
    assert DEFAULT_ORDERS[0] == Fraction(11, 10) and DEFAULT_ORDERS[-1] == 1024 and len(DEFAULT_ORDERS) == 156
    # a subsampled Gaussian is answered at every order (docs/rdp.md §5): the best of the defaults is the
    # fractional order dp_accounting's own search finds
    e = exactdp.epsilon("gaussian:sigma=1,q=0.01,count=1000", "1e-5", method="rdp-bbghs", digits=10)
    assert e.algorithm == "rdp-bbghs (order 7.8)"
    assert exactdp.epsilon("gaussian:sigma=1,q=0.01,count=1000", "1e-5", method="rdp-bbghs",
                           orders=["3.5"]).algorithm == "rdp-bbghs (order 3.5)"


def _sgm_tau_remove(sigma: str, q: str, k: int, a: int) -> mpmath.mpf:
    """k x the subsampled Gaussian's remove divergence at integer order a, by mpmath quadrature."""
    s, qq = _mp(sigma), _mp(q)
    mix = lambda x: (1 - qq) * mpmath.npdf(x, 0, s) + qq * mpmath.npdf(x, 1, s)
    f = lambda x: mix(x) ** a * mpmath.npdf(x, 0, s) ** (1 - a)
    return k * mpmath.log(mpmath.quad(f, [-mpmath.inf, 0, 1, mpmath.inf])) / (a - 1)


@pytest.mark.parametrize(("sigma", "q", "a"), [("1", "0.01", 2), ("0.8", "0.125", 5), ("2", "0.5", 8)])
def test_subsampled_gaussian_remove_bounds_add(sigma: str, q: str, a: int) -> None:
    """The direction rule of the conversions (Mironov-Talwar-Zhang 2019, Thm 5) at sample points, by
    quadrature: the add divergence D_a(N(0) || mixture) is at most the remove one."""
    s, qq = _mp(sigma), _mp(q)
    mix = lambda x: (1 - qq) * mpmath.npdf(x, 0, s) + qq * mpmath.npdf(x, 1, s)
    g = lambda x: mpmath.npdf(x, 0, s) ** a * mix(x) ** (1 - a)
    add = mpmath.log(mpmath.quad(g, [-mpmath.inf, 0, 1, mpmath.inf])) / (a - 1)
    assert add <= _sgm_tau_remove(sigma, q, 1, a)


def test_subsampled_gaussian_conversion_against_quadrature() -> None:
    orders = [2, 4, 8, 16]
    vals = [bbghs_eps(_mp(a), _sgm_tau_remove("1", "0.1", 20, a), _mp("1e-5")) for a in orders]
    e = exactdp.epsilon("gaussian:sigma=1,q=0.1,count=20", "1e-5", method="rdp-bbghs", orders=orders, digits=20)
    best = min(range(4), key=lambda i: vals[i])
    assert abs(_mp(e.upper) - vals[best]) <= vals[best] * mpmath.mpf(10) ** -18
    assert e.algorithm == f"rdp-bbghs (order {orders[best]})"


@pytest.mark.parametrize("spec", ["gaussian:sigma=2,count=10", "gaussian:sigma=0.7,count=3",
                                  "laplace:scale=2,count=5", "gaussian:sigma=1,q=0.1,count=20",
                                  "rr:eps=1,categories=3,count=4"])
def test_every_conversion_is_at_least_the_optimum(spec: str) -> None:
    opt_e = exactdp.epsilon(spec, "1e-5", digits=4)
    opt_d = exactdp.delta(spec, "2", digits=4)
    for name in NAMES:
        e = exactdp.epsilon(spec, "1e-5", method=name, digits=6)
        assert e.lower >= opt_e.upper, (name, spec, e, opt_e)
        d = exactdp.delta(spec, "2", method=name, digits=6)
        assert d.lower >= opt_d.upper, (name, spec, d, opt_d)


def test_edges_delta_zero_and_infinite_divergence() -> None:
    assert exactdp.epsilon("gaussian:sigma=2", "0", method="rdp-cks").is_infinite
    # a generic (eps, delta) pair with delta > 0 has infinite divergence: nothing certified
    assert exactdp.epsilon(("1", "1e-6", 3), "1e-3", method="rdp-mironov").is_infinite
    assert exactdp.delta(("1", "1e-6", 3), "5", method="rdp-mironov").exact == 1
    # a huge eps_g: delta tiny; a tiny eps_g: delta capped at 1
    assert exactdp.delta("gaussian:sigma=2", "0", method="rdp-mironov", orders=[2]).exact == 1
    with pytest.raises(InvalidParameterError, match="orders=\\[\\] must"):
        exactdp.epsilon("gaussian:sigma=2", "1e-5", method="rdp-cks", orders=[])
    with pytest.raises(InvalidParameterError, match="method='drv10' takes no options"):
        exactdp.epsilon(("1", 0, 3), "1e-5", method="drv10", orders=[2])
    with pytest.raises(InvalidParameterError, match="no order of the default set.*not computed yet"):
        exactdp.epsilon("dlaplace:noise=1,q=0.5", "1e-5", method="rdp-cks")


def test_cli_json_names_the_order_and_bad_orders_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["epsilon", "--mechanism", "gaussian:sigma=1,q=0.01,count=1000", "--at-delta", "1e-5",
                 "--method", "rdp-bbghs", "--digits", "10", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["algorithm"] == "rdp-bbghs (order 7.8)" and out["digits"] == 10
    assert main(["delta", "--mechanism", "gaussian:sigma=2,count=10", "--at-eps", "5", "--method", "rdp-cks",
                 "--orders", "2,2.7,3", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["algorithm"] == "rdp-cks (order 2.7)" and out["inputs"]["orders"] == ["2", "2.7", "3"]
    for bad in (["--orders", "2,,3"], ["--orders", "1"], ["--orders", "x"],
                ["--method", "drv10", "--orders", "2"]):
        argv = ["epsilon", "--mechanism", "gaussian:sigma=1,q=0.01,count=10", "--at-delta", "1e-5"]
        argv += bad if "--method" in bad else ["--method", "rdp-mironov", *bad]
        assert main(argv) == 2, bad
        cap = capsys.readouterr()
        assert cap.out == "" and len(cap.err.strip().splitlines()) == 1 and "order" in cap.err, (bad, cap.err)


def test_batch_line_takes_orders() -> None:
    r = run_query({"query": "epsilon", "mechanisms": ["gaussian:sigma=2,count=10"], "at_delta": "1e-5",
                   "method": "rdp-cks", "orders": [2, Decimal("3.9"), "8"], "digits": 10})
    assert r["algorithm"] == "rdp-cks (order 3.9)" and r["inputs"]["orders"] == ["2", "3.9", "8"]
    with pytest.raises(InvalidParameterError, match="orders"):
        run_query({"query": "epsilon", "eps": "1", "k": 3, "at_delta": "1e-5", "method": "basic", "orders": [2]})




@pytest.mark.parametrize(("spec", "events", "integer_orders"), [
    ("gaussian:sigma=2,count=10", [("gauss", 2.0, 10)], False),
    ("gaussian:sigma=1,q=0.01,count=1000", [("sgm", 1.0, 0.01, 1000)], True),
    ("gaussian:sigma=1,q=0.01,count=1000", [("sgm", 1.0, 0.01, 1000)], False),
])
def test_dp_accounting_compute_epsilon_agrees_with_rdp_bbghs(spec: str, events: list, integer_orders: bool) -> None:
    dpa = pytest.importorskip("dp_accounting")
    from dp_accounting.rdp import rdp_privacy_accountant as rdp

    orders = [float(a) for a in DEFAULT_ORDERS if not integer_orders or a.denominator == 1]
    acc = rdp.RdpAccountant(orders=orders)
    for ev in events:
        if ev[0] == "gauss":
            acc.compose(dpa.GaussianDpEvent(ev[1]), ev[2])
        else:
            acc.compose(dpa.PoissonSampledDpEvent(ev[2], dpa.GaussianDpEvent(ev[1])), ev[3])
    peer_eps, peer_order = acc.get_epsilon_and_optimal_order(1e-5)
    e = exactdp.epsilon(spec, "1e-5", method="rdp-bbghs", digits=12,
                        orders=[Fraction(o).limit_denominator(10) for o in orders] if integer_orders else None)
    assert e.algorithm == f"rdp-bbghs (order {format_fraction(Fraction(peer_order).limit_denominator(10))})"
    if integer_orders or "q=" not in spec:
        assert abs(float(e.lower) - peer_eps) <= 1e-9 * peer_eps
    else:  # dp_accounting bounds a subsample's fractional orders from above (measured 6e-7 relative at 7.8)
        assert float(e.lower) <= peer_eps <= float(e.upper) * (1 + 1e-5)
    peer_delta, peer_order = acc.get_delta_and_optimal_order(3.0)
    d = exactdp.delta(spec, "3", method="rdp-bbghs", digits=12,
                      orders=[Fraction(o).limit_denominator(10) for o in orders] if integer_orders else None)
    assert abs(float(d.lower) - peer_delta) <= (1e-8 if integer_orders or "q=" not in spec else 1e-4) * peer_delta


# -- zCDP for Gaussians (issue 28 §2: the zcdp and zcdp-tight methods generalised) ------------------

def _rho(gauss: list[tuple[str, int]], pure: list[tuple[str, int]]) -> mpmath.mpf:
    """mu^2/2 per Gaussian run (Bun-Steinke 2016 Prop. 1.6) plus eps tanh(eps/2) per eps-DP pair."""
    return (sum(k / (2 * _mp(s) ** 2) for s, k in gauss)
            + sum(k * _mp(e) * mpmath.tanh(_mp(e) / 2) for e, k in pure))


@pytest.mark.parametrize(("gauss", "pure"), [([("2", 8)], []), ([("0.9", 3), ("4", 50)], [("0.1", 10)])])
def test_zcdp_of_gaussians_and_pure_pairs_against_mpmath(gauss: list, pure: list) -> None:
    comp = [f"gaussian:sigma={s},count={k}" for s, k in gauss] + [(e, 0, k) for e, k in pure]
    rho, big_l, eps = _rho(gauss, pure), mpmath.log(10**5), _mp(9)
    simple = rho + 2 * mpmath.sqrt(rho * big_l)  # Bun-Steinke 2016 Prop. 1.3
    assert _inside(exactdp.epsilon(comp, "1e-5", method="zcdp", digits=20), simple)
    assert _inside(exactdp.delta(comp, "9", method="zcdp", digits=20), mpmath.exp(-((eps - rho) / (2 * mpmath.sqrt(rho))) ** 2))
    # the tight conversion (Canonne-Kamath-Steinke 2020): its stationary points by mpmath's root finder
    a = mpmath.findroot(lambda a: (2 * a - 1) * rho - eps + mpmath.log(1 - 1 / a), 1 + (eps + 1) / (2 * rho))
    tight_delta = mpmath.exp((a - 1) * (a * rho - eps)) / (a - 1) * (1 - 1 / a) ** a
    assert _inside(exactdp.delta(comp, "9", method="zcdp-tight", digits=15), tight_delta)
    a = mpmath.findroot(lambda a: rho + (mpmath.log(a) - big_l) / (a - 1) ** 2, 1 + mpmath.sqrt(big_l / rho))
    tight_eps = a * rho + (big_l + (a - 1) * mpmath.log(a - 1) - a * mpmath.log(a)) / (a - 1)
    assert _inside(exactdp.epsilon(comp, "1e-5", method="zcdp-tight", digits=15), tight_eps)


def test_zcdp_refuses_other_mechanisms_by_name() -> None:
    for spec in ("laplace:scale=1", "gaussian:sigma=1,q=0.1", "rr:eps=1,categories=3"):
        for method in ("zcdp", "zcdp-tight"):
            with pytest.raises(InvalidParameterError, match=f"method='{method}' needs .* pairs and Gaussians"):
                exactdp.epsilon(spec, "1e-5", method=method)


@settings(max_examples=25, deadline=None)
@given(sigma=st.fractions(Fraction(1, 2), 8).map(lambda f: f.limit_denominator(100)),
       k=st.integers(1, 2000), exp10=st.integers(2, 12))
def test_property_conversions_of_gaussians_never_beat_the_optimum(sigma: Fraction, k: int, exp10: int) -> None:
    spec, delta = f"gaussian:sigma={sigma},count={k}", Fraction(1, 10**exp10)
    opt = exactdp.epsilon(spec, delta, digits=8)
    got = {name: exactdp.epsilon(spec, delta, method=name, digits=8) for name in NAMES}
    for e in got.values():
        assert e.lower >= opt.upper
    assert got["rdp-cks"].upper >= got["rdp-bbghs"].lower and got["rdp-bbghs"].upper >= got["rdp-cks"].lower
    assert got["rdp-mironov"].lower >= got["rdp-cks"].upper
