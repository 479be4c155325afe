"""The discrete Laplace and discrete Gaussian mechanisms (issue 27 §1), checked against independent
references: mpmath sums over the integers at 50 digits (the hockey-stick divergence over the outputs,
or over the loss values by direct convolution), the exact KOV15 answer (a sensitivity-1 discrete
Laplace *is* the generic (a, 0) pair), and a float64 convolution at a large count (a numerical
bracket of tolerance 1e-9)."""

from __future__ import annotations

import io
from contextlib import redirect_stderr, redirect_stdout
from fractions import Fraction as F

import mpmath as mp
import numpy as np
import pytest

from exactdp import Composition, PureDP, optimal_delta, optimal_epsilon
from exactdp.api.rdp import rdp_curve
from exactdp.cli import main as cli_main
from exactdp.core.errors import InvalidParameterError
from exactdp.model.dp_event import from_dp_event
from exactdp.model.mechanisms import DiscreteGaussian, DiscreteLaplace, PoissonSampled
from exactdp.model.spec import parse_mechanism_spec

DPS = 50


@pytest.fixture(autouse=True)
def _mp_precision():
    """Every test here at 50 digits, and mpmath's global precision given back afterwards."""
    with mp.workdps(DPS):
        yield


# -- independent references (mpmath, nothing from exactdp) -------------------------------------------

def _mpf(x: F) -> mp.mpf:
    return mp.mpf(x.numerator) / x.denominator


@mp.workdps(DPS)  # at 50 digits also when called at import (the parameters), mpmath's precision restored
def dg_pmf(sigma: F, n: int) -> dict[int, mp.mpf]:
    """pmf of the discrete Gaussian on [-n, n] (the mass beyond is below 1e-300 for the n used)."""
    s2 = _mpf(sigma) ** 2
    w = {x: mp.exp(-mp.mpf(x) ** 2 / (2 * s2)) for x in range(-n, n + 1)}
    z = mp.fsum(w.values())
    return {x: v / z for x, v in w.items()}


@mp.workdps(DPS)
def dl_pmf(a: F, n: int) -> dict[int, mp.mpf]:
    r = mp.exp(-_mpf(a))
    return {x: (1 - r) / (1 + r) * r ** abs(x) for x in range(-n, n + 1)}


def pair(pmf: dict[int, mp.mpf], d: int, q: F | None = None) -> dict[int, tuple[mp.mpf, mp.mpf]]:
    """{output y: (P(y), Q(y))} for P = X + d (mixed with X at rate q when subsampled), Q = X."""
    out = {}
    for y in range(min(pmf) + d, max(pmf) + 1):
        p, qq = pmf.get(y - d, mp.mpf(0)), pmf.get(y, mp.mpf(0))
        if q is not None:
            p = (1 - _mpf(q)) * qq + _mpf(q) * p
        out[y] = (p, qq)
    return out


def loss_law(pq: dict[int, tuple[mp.mpf, mp.mpf]]) -> dict[str, tuple[mp.mpf, mp.mpf]]:
    """{loss: (loss, P-mass)} over the outputs with P, Q > 0 (the P-mass where Q = 0 is none here)."""
    law: dict[str, tuple[mp.mpf, mp.mpf]] = {}
    for p, q in pq.values():
        if p > 0 and q > 0:
            x = mp.log(p / q)
            k = mp.nstr(x, 35)
            law[k] = (x, law.get(k, (x, mp.mpf(0)))[1] + p)
    return law


def compose(law: dict, k: int) -> dict:
    out = law
    for _ in range(k - 1):
        nxt: dict = {}
        for x1, p1 in out.values():
            for x2, p2 in law.values():
                x = x1 + x2
                key = mp.nstr(x, 35)
                nxt[key] = (x, nxt.get(key, (x, mp.mpf(0)))[1] + p1 * p2)
        out = nxt
    return out


def delta_of(law: dict, eps: mp.mpf) -> mp.mpf:
    return mp.fsum(p * (1 - mp.exp(eps - x)) for x, p in law.values() if x > eps)


def hockey_stick(pq: dict[int, tuple[mp.mpf, mp.mpf]], eps: mp.mpf, k: int) -> mp.mpf:
    """sum over output vectors of (P - e^eps Q)_+, k = 1 or 2, directly over the integers."""
    e = mp.exp(eps)
    if k == 1:
        return mp.fsum(max(p - e * q, 0) for p, q in pq.values())
    vals = list(pq.values())
    return mp.fsum(max(p1 * p2 - e * q1 * q2, 0) for p1, q1 in vals for p2, q2 in vals)


def inside(enc, x: mp.mpf) -> bool:
    v = F(mp.nstr(x, 45))
    slack = abs(v) * F(1, 10**40)  # the reference's own rounding at 50 digits
    return enc.lower - slack <= v <= enc.upper + slack


# -- specs, values, errors ------------------------------------------------------------------------

def test_specs_read_back_and_synonyms() -> None:
    for spec in ("dlaplace:noise=0.1", "dlaplace:noise=1/3,sensitivity=3,q=0.5", "dgaussian:sigma=2",
                 "dgaussian:sigma=1.5,sensitivity=2,q=0.01"):
        m, c = parse_mechanism_spec(spec + ",count=7")
        assert c == 7 and str(m) == spec and parse_mechanism_spec(str(m))[0] == m
    m, _ = parse_mechanism_spec("dlaplace:noise_parameter=0.25,sensitivity=2")
    assert m == DiscreteLaplace("1/4", 2) and m.eps == F(1, 2)
    assert PoissonSampled(DiscreteGaussian("3"), "0.5").mechanism == DiscreteGaussian(3)


@pytest.mark.parametrize("bad", [("1", "1.5"), ("-1", 1), ("1", -1)])
def test_bad_parameters_are_refused(bad) -> None:
    for cls in (DiscreteLaplace, DiscreteGaussian):
        with pytest.raises(InvalidParameterError):
            cls(*bad)
    with pytest.raises(InvalidParameterError):  # e^{-0|x|} is no distribution; a discrete Gaussian's sigma = 0
        DiscreteLaplace("0", 1)                  # and sensitivity 0 are degenerate values, answered (§7.13)


@pytest.mark.parametrize("spec", ["dlaplace:noise=1,sensitivity=1.5", "dlaplace:noise=0", "dgaussian:sigma=1,foo=2",
                                  "dgaussian:sigma=-1,sensitivity=2"])
def test_cli_bad_parameters_one_line_exit_2(spec: str) -> None:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = cli_main(["delta", "--mechanism", spec, "--at-eps", "1"])
    assert code == 2 and out.getvalue() == ""
    lines = err.getvalue().strip().splitlines()
    assert len(lines) == 1 and "error" in lines[0]


def test_dp_events_read() -> None:
    class DiscreteLaplaceDpEvent:
        def __init__(self, a, d):
            self.noise_parameter, self.sensitivity = a, d

    class DiscreteGaussianDpEvent:
        def __init__(self, s, d):
            self.sigma, self.sensitivity = s, d

    class PoissonSampledDpEvent:
        def __init__(self, q, e):
            self.sampling_probability, self.event = q, e

    c = from_dp_event(PoissonSampledDpEvent(0.5, DiscreteLaplaceDpEvent(0.25, 2)))
    assert c.groups == ((PoissonSampled(DiscreteLaplace("1/4", 2), "1/2"), 1),)
    assert from_dp_event(DiscreteGaussianDpEvent(1.5, 3)).groups == ((DiscreteGaussian("3/2", 3), 1),)
    with pytest.raises(InvalidParameterError):
        from_dp_event(DiscreteGaussianDpEvent(1.0, 1.5))


def test_dp_event_round_trip_with_dp_accounting() -> None:
    pytest.importorskip("dp_accounting")
    from exactdp import to_dp_event

    c = Composition.of(["dlaplace:noise=0.25,sensitivity=2,q=0.5,count=3"])
    assert from_dp_event(to_dp_event(c)) == c
    with pytest.raises(InvalidParameterError, match="DiscreteGaussianDpEvent"):
        to_dp_event(["dgaussian:sigma=2"])


# -- delta and eps against mpmath ------------------------------------------------------------------

CASES = [  # (spec, pmf, d, eps)
    ("dlaplace:noise=1/2", dl_pmf(F(1, 2), 220), 1, "0.3"),
    ("dlaplace:noise=1/2,sensitivity=2", dl_pmf(F(1, 2), 220), 2, "0.5"),
    ("dlaplace:noise=0.3,sensitivity=3", dl_pmf(F(3, 10), 360), 3, "1"),
    ("dgaussian:sigma=1", dg_pmf(F(1), 60), 1, "0.5"),
    ("dgaussian:sigma=2,sensitivity=3", dg_pmf(F(2), 120), 3, "0.5"),
    ("dgaussian:sigma=3/2,sensitivity=2", dg_pmf(F(3, 2), 90), 2, "1.25"),
]


@pytest.mark.parametrize("spec,pmf,d,eps", CASES, ids=[c[0] for c in CASES])
def test_delta_counts_1_to_3_against_mpmath(spec, pmf, d, eps) -> None:
    law = loss_law(pair(pmf, d))
    for k in (1, 2, 3):
        ref = delta_of(compose(law, k), mp.mpf(eps))
        if k == 1 or (k == 2 and len(pmf) < 300):  # and once more straight over the outputs, no loss law
            assert mp.almosteq(ref, hockey_stick(pair(pmf, d), mp.mpf(eps), k), rel_eps=mp.mpf(10) ** -40)
        enc = optimal_delta(Composition.of([f"{spec},count={k}"]), eps, digits=20)
        assert inside(enc, ref), (k, enc, ref)
        assert enc.upper - enc.lower <= F(mp.nstr(ref, 30)) * F(1, 10**18)


@pytest.mark.parametrize("spec,pmf,d", [("dlaplace:noise=1/2,sensitivity=2,q=1/4", dl_pmf(F(1, 2), 220), 2),
                                        ("dgaussian:sigma=1,q=1/2", dg_pmf(F(1), 60), 1)])
def test_subsampled_both_orders_against_mpmath(spec, pmf, d) -> None:
    q = F(spec.rpartition("q=")[2])
    rem = pair(pmf, d, q)
    add = {y: (qq, p) for y, (p, qq) in rem.items()}  # the add order: the pair reversed
    for k, eps in ((1, "0.1"), (1, "0.6"), (2, "0.6")):
        ref = max(hockey_stick(rem, mp.mpf(eps), k), hockey_stick(add, mp.mpf(eps), k))
        enc = optimal_delta(Composition.of([f"{spec},count={k}"]), eps, digits=8)
        assert inside(enc, ref), (k, eps, enc, ref)
        assert enc.upper - enc.lower <= F(mp.nstr(ref, 30)) * F(1, 10**6)


@pytest.mark.parametrize("spec,pmf,d", [(c[0], c[1], c[2]) for c in CASES[1::2]], ids=[c[0] for c in CASES[1::2]])
def test_epsilon_at_delta_brackets_the_mpmath_root(spec, pmf, d) -> None:
    law = compose(loss_law(pair(pmf, d)), 2)
    dg = F(1, 1000)
    enc = optimal_epsilon(Composition.of([f"{spec},count=2"]), dg, digits=12)
    # delta is decreasing in eps: the true eps lies in [lower, upper] iff delta(lower) >= dg >= delta(upper)
    assert delta_of(law, _mpf(enc.lower)) >= _mpf(dg) >= delta_of(law, _mpf(enc.upper))
    assert enc.upper - enc.lower <= enc.upper * F(1, 10**11)


def test_sensitivity_one_dlaplace_is_the_generic_pure_pair() -> None:
    """DLap(a) with D = 1 has losses +-a with P-masses 1/(1 + e^-a), e^-a/(1 + e^-a): exactly the
    (a, 0)-DP pair, which KOV15 answers exactly (another engine, another algorithm)."""
    for k, eps in ((1, "0.2"), (40, "3"), (300, "10")):
        a = optimal_delta(Composition.of([f"dlaplace:noise=0.4,count={k}"]), eps, digits=15)
        b = optimal_delta(Composition.homogeneous("0.4", "0", k), eps, digits=15)
        assert a.lower <= b.upper and b.lower <= a.upper and a.algorithm.startswith("pld")
    assert PureDP("0.4").eps.value == DiscreteLaplace("0.4").eps


def test_large_count_against_a_float_convolution() -> None:
    """60 steps of dgaussian sigma=2 and 100 of dlaplace a=0.2, D=2: a float64 convolution of the
    loss laws on their lattices (error far below 1e-9) must meet the certified bracket."""
    for sigma, d, k, eps in ((F(2), 1, 60, 2.0), (None, 2, 100, 6.0)):
        if sigma is not None:  # lattice unit 1/(2 sigma^2) * d: loss index 2y - d, y the output
            n = 60
            xs = np.arange(-n, n + 1)
            w = np.exp(-xs.astype(float) ** 2 / (2 * float(sigma) ** 2))
            p = w / w.sum()
            unit = d / (2 * float(sigma) ** 2)
            lo = -2 * n + d  # loss index of output y = d - n ... d + n is 2y - d (step 2)
            spec = f"dgaussian:sigma={sigma},count={k}"
        else:
            a = 0.2
            ys = np.arange(0, d + 1)
            r = np.exp(-a)
            p = np.where(ys == d, 1 / (1 + r), np.where(ys == 0, r ** d / (1 + r), (1 - r) / (1 + r) * r ** (d - ys)))
            unit, lo = a, -d
            spec = f"dlaplace:noise=0.2,sensitivity={d},count={k}"
        law = np.array([1.0])
        for _ in range(k):
            law = np.convolve(law, p)
        idx = lo * k + 2 * np.arange(len(law))
        losses = idx * unit
        up = losses > eps
        ref = float(np.sum(law[up] * (1 - np.exp(eps - losses[up]))))
        enc = optimal_delta(Composition.of([spec]), str(eps), digits=12)
        assert float(enc.lower) - 1e-9 <= ref <= float(enc.upper) + 1e-9, (spec, enc, ref)


# -- RDP -----------------------------------------------------------------------------------------

def _rdp_ref(pmf: dict[int, mp.mpf], d: int, alpha: mp.mpf) -> mp.mpf:
    s = mp.fsum(pmf[y - d] ** alpha * pmf[y] ** (1 - alpha) for y in pmf if y - d in pmf)
    return mp.log(s) / (alpha - 1)


@pytest.mark.parametrize("spec,pmf,d", [("dlaplace:noise=1/2,sensitivity=2", dl_pmf(F(1, 2), 900), 2),
                                        ("dgaussian:sigma=2,sensitivity=3", dg_pmf(F(2), 400), 3),
                                        ("dgaussian:sigma=1/2", dg_pmf(F(1, 2), 200), 1)])
def test_rdp_against_mpmath_sums(spec, pmf, d) -> None:
    orders = ["2", "2.5", "7/3", "16"]
    for direction in ("remove", "add", "max"):
        encs = rdp_curve(Composition.of([spec + ",count=3"]), orders, digits=20, direction=direction)
        for o, enc in zip(orders, encs):
            ref = 3 * _rdp_ref(pmf, d, _mpf(F(o)))
            assert inside(enc, ref), (o, enc, ref)


def test_rdp_of_subsampled_discrete_is_refused_by_name() -> None:
    with pytest.raises(InvalidParameterError, match="not computed yet"):
        rdp_curve(Composition.of(["dgaussian:sigma=2,q=0.5"]), ["2"], direction="remove")


# -- the discrete Gaussian's window: its outside mass is a ball [0, b] at +-inf ----------------------

def test_window_masses_and_outside_balls() -> None:
    from flint import arb, ctx

    from exactdp.engines.discrete_noise import dgauss_window

    with ctx.workprec(128):
        for sigma, d in ((F(1, 2), 1), (F(3), 2), (F(7, 3), 5)):
            atoms, bp, bq = dgauss_window(sigma, d)
            tp = sum((pm for _, pm, _ in atoms), arb(0))
            tq = sum((qm for _, _, qm in atoms), arb(0))
            assert (tp + bp).contains(1) and (tq + bq).contains(1) and bp.contains(0) and bq.contains(0)
            assert bp.upper() < arb(2) ** -550
            # each atom against mpmath: position D(2y - D)/(2 s^2), masses w(y - D)/Z and w(y)/Z
            pmf = dg_pmf(sigma, 40 * int(sigma + 1) + 4 * d)
            for x, pm, qm in atoms[:: max(1, len(atoms) // 7)]:
                y = (x * 2 * sigma ** 2 / d + d) / 2
                assert y.denominator == 1
                y = int(y)
                for ball, ref in ((pm, pmf[y - d]), (qm, pmf[y])):
                    assert abs(F(mp.nstr(ref, 40)) - F(str(ball.mid().str(45, radius=False)))) <= \
                        F(mp.nstr(ref, 10)) * F(1, 10**30)


def test_a_small_window_still_brackets_the_truth(monkeypatch: pytest.MonkeyPatch) -> None:
    """With a window of 4 bits the mass outside (about 1e-9) is large enough to see: the brackets
    widen but still hold the mpmath values (the lattice path and the subsampled grid path)."""
    import exactdp.engines.discrete_noise as dn

    monkeypatch.setattr(dn, "DGAUSS_WINDOW_BITS", 4)
    sigma = F(5, 3)
    pmf = dg_pmf(sigma, 90)
    ref3 = delta_of(compose(loss_law(pair(pmf, 1)), 3), mp.mpf("0.3"))
    enc = optimal_delta(Composition.of(["dgaussian:sigma=5/3,count=3"]), "0.3", digits=4)
    assert inside(enc, ref3) and enc.upper - enc.lower > F(1, 10**12)  # the outside mass shows
    rem = pair(pmf, 1, F(1, 2))
    add = {y: (qq, p) for y, (p, qq) in rem.items()}
    ref = max(hockey_stick(rem, mp.mpf("0.3"), 2), hockey_stick(add, mp.mpf("0.3"), 2))
    assert inside(optimal_delta(Composition.of(["dgaussian:sigma=5/3,q=1/2,count=2"]), "0.3", digits=4), ref)


# -- every command takes them ------------------------------------------------------------------------

def _cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = cli_main(argv)
    return code, out.getvalue(), err.getvalue()


def test_the_commands_answer_them() -> None:
    import json

    code, out, _ = _cli(["epsilon", "--mechanism", "dlaplace:noise=0.1,count=100", "--at-delta", "1e-6",
                         "--digits", "10", "--json"])
    r = json.loads(out)
    assert code == 0 and r["algorithm"] == "pld-lattice" and r["digits"] >= 10
    # the same value as the generic (0.1, 0)-DP composition, which KOV15 answers exactly
    g = optimal_epsilon(Composition.homogeneous("0.1", "0", 100), "1e-6", digits=12)
    assert F(r["lower"]) <= g.upper and g.lower <= F(r["upper"])
    code, out, _ = _cli(["epsilon", "--mechanism", "dgaussian:sigma=10,count=100", "--at-delta", "1e-6",
                         "--digits", "10", "--json"])
    r = json.loads(out)
    assert code == 0 and r["algorithm"] == "pld-lattice" and r["digits"] >= 10
    lo, hi = F(r["lower"]), F(r["upper"])
    # close to the continuous Gaussian of the same sigma (not equal: 4.88657 against 4.88655)
    cont = optimal_epsilon(Composition.of(["gaussian:sigma=10,count=100"]), "1e-6", digits=12)
    assert abs(cont.lower - lo) < F(1, 10000) and not (lo <= cont.lower <= hi)
    code, out, _ = _cli(["check", "--mechanism", "dgaussian:sigma=10,count=100", "--eps-g", str(hi + F(1, 10**6)),
                         "--delta-g", "1e-6"])
    assert code == 0
    code, out, _ = _cli(["check", "--mechanism", "dgaussian:sigma=10,count=100", "--eps-g", str(lo - F(1, 10**6)),
                         "--delta-g", "1e-6"])
    assert code == 1
    code, out, _ = _cli(["rdp", "--mechanism", "dgaussian:sigma=2,count=4", "--orders", "3", "--json"])
    assert code == 0 and '"1.5"' in out
    code, out, _ = _cli(["curve", "--mechanism", "dlaplace:noise=0.2,sensitivity=2,count=5", "--eps-from", "0",
                         "--eps-to", "2", "--points", "3", "--json"])
    assert code == 0
    code, _, err = _cli(["rdp", "--mechanism", "dlaplace:noise=1,q=0.5", "--orders", "2"])
    assert code == 2 and len(err.strip().splitlines()) == 1


def test_theta_both_ways_and_huge_sigma() -> None:
    """theta by the direct sums and by its Poisson dual agree with mpmath; a window past the cap is
    refused by name (exit 2), while the Rényi divergence of any sigma is answered."""
    from flint import arb, ctx

    from exactdp.engines.discrete_noise import half_theta, theta

    for c, s in ((F(1, 3), F(3, 2)), (F(0), F(7)), (F(5, 7), F(1)), (F(2, 5), F(1, 2))):
        ref = mp.nsum(lambda x: mp.exp(-(x - _mpf(c)) ** 2 / (2 * _mpf(s) ** 2)), [-mp.inf, mp.inf])
        with ctx.workprec(120):
            f = c - int(c)
            for v in (theta(c, s), half_theta(f, s) + half_theta(1 - f, s)):
                assert abs(F(mp.nstr(ref, 38)) - F(v.mid().str(40, radius=False))) <= F(1, 10**30)
                assert v.rad() < arb(10) ** -30
    code, out, err = _cli(["delta", "--mechanism", "dgaussian:sigma=100000", "--at-eps", "0.1"])
    assert code == 2 and out == "" and "400,001" in err and len(err.strip().splitlines()) == 1
    enc = rdp_curve(Composition.of(["dgaussian:sigma=100000,count=1000"]), ["2.5"], digits=15)[0]
    assert enc.lower <= F(1000 * 5, 2 * 2 * 10**10) <= enc.upper  # 1000 alpha/(2 sigma^2), up to e^{-2 pi^2 sigma^2}
