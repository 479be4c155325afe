"""Neighbouring relations and sampling schemes (issue 27 §2-§3, docs/mathematics.md §8).

The references are independent of the engine: brute force over explicit datasets (every subsample,
every pair of replace-one neighbours, exact hockey-stick divergences in Fractions), the stated pairs
written out by hand in Fractions, and mpmath closed forms / quadrature for the Gaussian.
"""

from __future__ import annotations

import importlib.util
import itertools
import subprocess
import sys
from fractions import Fraction
from pathlib import Path
from typing import Any

import mpmath
import pytest
from exactpmf import hockey, power  # tests/unit/exactpmf.py

from exactdp.api.accountant import Accountant
from exactdp.api.optimal import optimal_delta, optimal_epsilon
from exactdp.core.errors import InvalidParameterError
from exactdp.model.dp_event import from_dp_event
from exactdp.model.generic import PureDP
from exactdp.model.mechanisms import Gaussian, PoissonSampled, SampledWithoutReplacement
from exactdp.model.spec import parse_mechanism_spec

EXE = str(Path(sys.executable).parent / "exactdp")
F = Fraction

# binary randomized response with e^eps = 3 (keeps the bit w.p. 3/4): the mechanism run on a sample
# S answers the bit "some record of S is 1"; one record replaced changes that bit at most
RR_KEEP = F(3, 4)
RR = PureDP("log(3)")


def _rr(bit: int) -> dict[Any, Fraction]:
    return {bit: RR_KEEP, 1 - bit: 1 - RR_KEEP}


def _mix(parts: list[tuple[Fraction, dict[Any, Fraction]]]) -> dict[Any, Fraction]:
    out: dict[Any, Fraction] = {}
    for w, d in parts:
        for y, p in d.items():
            out[y] = out.get(y, F(0)) + w * p
    return out


def _wor_output(data: tuple[int, ...], m: int) -> dict[Any, Fraction]:
    subs = list(itertools.combinations(range(len(data)), m))
    return _mix([(F(1, len(subs)), _rr(int(any(data[i] for i in s)))) for s in subs])


def _poisson_output(data: tuple[int, ...], q: Fraction) -> dict[Any, Fraction]:
    parts = []
    for keep in itertools.product((0, 1), repeat=len(data)):
        w = F(1)
        for k in keep:
            w *= q if k else 1 - q
        parts.append((w, _rr(int(any(d for d, k in zip(data, keep) if k)))))
    return _mix(parts)


def _worst_replace_one(n: int, out: Any, k: int, a: Fraction) -> Fraction:
    """max over datasets in {0,1}^n and their replace-one neighbours of the k-fold hockey-stick."""
    best = F(0)
    for d in itertools.product((0, 1), repeat=n):
        for i in range(n):
            d2 = d[:i] + (1 - d[i],) + d[i + 1:]
            best = max(best, hockey(power(out(d), k), power(out(d2), k), a))
    return best


def _symmetrised_wor_pair(gamma: Fraction) -> tuple[dict[Any, Fraction], dict[Any, Fraction]]:
    """The pair of docs/mathematics.md §8 (Theorem 8.3) for binary RR, written out by hand: the
    remove pair's positive-loss output, its mirror image, and the rest at loss 0."""
    a, b = _rr(1), _rr(0)
    p1, q1 = gamma * a[1] + (1 - gamma) * b[1], b[1]  # output 1: loss log(p1/q1) > 0
    z = 1 - p1 - q1
    return {"+": p1, "-": q1, "0": z}, {"+": q1, "-": p1, "0": z}


@pytest.mark.parametrize(("n", "m"), [(4, 2), (5, 2), (6, 3)])
@pytest.mark.parametrize("eps", ["0", "log(3/2)", "log(2)"])
def test_fixed_batch_one_run_is_the_worst_case_of_brute_force(n: int, m: int, eps: str) -> None:
    a = {"0": F(1), "log(5/4)": F(5, 4), "log(3/2)": F(3, 2), "log(2)": F(2)}[eps]
    brute = _worst_replace_one(n, lambda d: _wor_output(d, m), 1, a)
    got = optimal_delta([SampledWithoutReplacement(RR, m, n)], eps, digits=12)
    assert got.lower <= brute <= got.upper  # tight: the pair is attained (one record 1, the rest 0)


@pytest.mark.parametrize(("n", "m", "eps"), [(4, 2, "log(3/2)"), (5, 2, "log(2)"), (5, 3, "log(5/4)")])
def test_fixed_batch_two_runs_are_the_symmetrised_pair_and_dominate_brute_force(n: int, m: int, eps: str) -> None:
    a = {"0": F(1), "log(5/4)": F(5, 4), "log(3/2)": F(3, 2), "log(2)": F(2)}[eps]
    got = optimal_delta([(SampledWithoutReplacement(RR, m, n), 2)], eps, digits=8)
    p, q = _symmetrised_wor_pair(F(m, n))
    ref = hockey(power(p, 2), power(q, 2), a)
    assert got.lower <= ref <= got.upper
    brute = _worst_replace_one(n, lambda d: _wor_output(d, m), 2, a)
    assert brute <= got.upper


@pytest.mark.parametrize(("n", "q", "eps", "k"), [(4, F(1, 3), "log(3/2)", 1), (4, F(1, 2), "log(5/4)", 2),
                                                   (3, F(1, 4), "log(2)", 2)])
def test_poisson_replace_one_dominates_brute_force_and_is_the_diluted_pair(n: int, q: Fraction, eps: str,
                                                                          k: int) -> None:
    a = {"0": F(1), "log(5/4)": F(5, 4), "log(3/2)": F(3, 2), "log(2)": F(2)}[eps]
    got = optimal_delta([(PoissonSampled(RR, q, relation="replace-one"), k)], eps, digits=8)
    brute = _worst_replace_one(n, lambda d: _poisson_output(d, q), k, a)
    assert brute <= got.upper
    # the diluted pair by hand: loss 0 w.p. 1 - q, the mechanism's pair w.p. q
    p = {"none": 1 - q, 1: q * RR_KEEP, 0: q * (1 - RR_KEEP)}
    qq = {"none": 1 - q, 1: q * (1 - RR_KEEP), 0: q * RR_KEEP}
    assert got.lower <= hockey(power(p, k), power(qq, k), a) <= got.upper


def _mp(x: Fraction) -> mpmath.mpf:
    return mpmath.mpf(x.numerator) / x.denominator


def _wor_gaussian_one_step(gamma: Fraction, eps: Fraction) -> mpmath.mpf:
    """H_{e^eps}((1-g) N(0,1) + g N(1,1) || N(0,1)), eps >= 0: the ratio 1 - g + g e^{x - 1/2} is
    increasing, so the optimal set is x > t with 1 - g + g e^{t - 1/2} = e^eps (closed form)."""
    g, a = _mp(gamma), mpmath.e ** _mp(eps)
    t = mpmath.mpf(1) / 2 + mpmath.log((a - 1 + g) / g)
    return (1 - g) * mpmath.ncdf(-t) + g * mpmath.ncdf(1 - t) - a * mpmath.ncdf(-t)


@pytest.mark.parametrize(("m", "n", "eps"), [(1, 10, F(1, 2)), (3, 5, F(0)), (1, 100, F(1, 10))])
def test_fixed_batch_gaussian_one_step_against_its_closed_form(m: int, n: int, eps: Fraction) -> None:
    got = optimal_delta([SampledWithoutReplacement(Gaussian(1), m, n)], str(eps), digits=8)
    with mpmath.workdps(40):
        ref = _wor_gaussian_one_step(F(m, n), eps)
        assert _mp(got.lower) <= ref <= _mp(got.upper)


def _wor_gaussian_profile(gamma: Fraction, t: Any) -> Any:
    """The one-run profile of the symmetrised pair (§9) at any real t: the closed form for t >= 0,
    1 - e^t + e^t delta(-t) below (the pair is symmetric)."""
    g, a = _mp(gamma), mpmath.e ** t
    if t < 0:
        return 1 - a + a * _wor_gaussian_profile(gamma, -t)
    s = mpmath.mpf(1) / 2 + mpmath.log((a - 1 + g) / g)
    return (1 - g) * mpmath.ncdf(-s) + g * mpmath.ncdf(1 - s) - a * mpmath.ncdf(-s)


@pytest.mark.parametrize(("m", "n", "eps"), [(1, 2, F(1, 2)), (1, 10, F(1, 5))])
def test_fixed_batch_gaussian_two_steps_against_quadrature_of_the_stated_pair(m: int, n: int, eps: Fraction) -> None:
    """Two runs of the symmetrised pair (sigma = 1): delta = E[delta1(eps - L)] over one run's loss L,
    delta1 the closed-form profile, by mpmath quadrature over the output x (L(x) = log(1 - g + g e^{x - 1/2})
    > 0 for x > 1/2, charged by the mixture at +L and by N(0, 1) at -L; the rest at 0)."""
    g = F(m, n)
    got = optimal_delta([(SampledWithoutReplacement(Gaussian(1), m, n), 2)], str(eps), digits=6)
    with mpmath.workdps(30):
        gm, e, half = _mp(g), _mp(eps), mpmath.mpf(1) / 2

        def loss(x: Any) -> Any:
            return mpmath.log(1 - gm + gm * mpmath.exp(x - half))

        def integrand(x: Any) -> Any:
            pmix = (1 - gm) * mpmath.npdf(x) + gm * mpmath.npdf(x, 1)
            return pmix * _wor_gaussian_profile(g, e - loss(x)) + mpmath.npdf(x) * _wor_gaussian_profile(g, e + loss(x))

        zero = 1 - (1 - gm) * mpmath.ncdf(-half) - gm * mpmath.ncdf(half) - mpmath.ncdf(-half)
        kink = half + mpmath.log((mpmath.e ** e - 1 + gm) / gm)  # where L(x) = eps
        ref = zero * _wor_gaussian_profile(g, e) + mpmath.quad(integrand, [half, kink, kink + 2, kink + 8, 60])
        assert _mp(got.lower) <= ref <= _mp(got.upper)


# -- properties -----------------------------------------------------------------------------------

def _eps(m: Any, k: int = 20, at: str = "1e-5") -> Fraction:
    return optimal_epsilon([(m, k)], at, digits=4).upper


def test_replace_one_is_never_below_add_remove() -> None:
    g = Gaussian("1.5")
    poisson = optimal_delta([(PoissonSampled(g, "0.1"), 5)], "0.5", digits=4)
    assert optimal_delta([(PoissonSampled(g, "0.1", relation="replace-one"), 5)], "0.5", digits=4).lower >= \
        poisson.upper
    # the fixed batch at gamma = q is at least the Poisson add/remove answer (both its orders)
    assert optimal_delta([(SampledWithoutReplacement(g, 1, 10), 5)], "0.5", digits=4).upper >= poisson.lower


def test_monotone_in_sigma_batch_rate_and_count() -> None:
    wor = [_eps(SampledWithoutReplacement(Gaussian(s), 10, 100)) for s in ("0.8", "1", "1.5")]
    assert wor[0] > wor[1] > wor[2]
    batch = [_eps(SampledWithoutReplacement(Gaussian(1), b, 100)) for b in (5, 10, 20)]
    assert batch[0] < batch[1] < batch[2]
    rate = [_eps(PoissonSampled(Gaussian(1), q, relation="replace-one")) for q in ("0.05", "0.1", "0.2")]
    assert rate[0] < rate[1] < rate[2]
    count = [_eps(SampledWithoutReplacement(Gaussian(1), 10, 100), k) for k in (5, 20, 80)]
    assert count[0] < count[1] < count[2]


def test_no_sampling_is_the_same_pair_under_both_relations() -> None:
    a = optimal_epsilon("gaussian:sigma=2,count=3,relation=replace-one", "1e-5", digits=8)
    b = optimal_epsilon("gaussian:sigma=2,count=3", "1e-5", digits=8)
    assert (a.lower, a.upper) == (b.lower, b.upper)
    assert parse_mechanism_spec("laplace:scale=3,sample=4,of=4,relation=replace-one")[0] == \
        parse_mechanism_spec("laplace:scale=3")[0]


# -- specs, events, the accountant ------------------------------------------------------------------

@pytest.mark.parametrize("spec", ["gaussian:sigma=1,sample=600,of=60000", "gaussian:sigma=1,q=0.01,relation=replace-one",
                                  "rr:eps=1,categories=3,sample=2,of=5", "approx:eps=1,delta=0.01,sample=1,of=3",
                                  "laplace:scale=2,sensitivity=3,q=0.5,relation=replace-one"])
def test_spec_round_trip(spec: str) -> None:
    m, _ = parse_mechanism_spec(spec)
    assert str(m) == spec and parse_mechanism_spec(str(m))[0] == m


@pytest.mark.parametrize(("spec", "needle"), [
    ("gaussian:sigma=1,sample=6,of=5", "must be at most of"),
    ("gaussian:sigma=1,sample=2", "needs both sample=M and of=N"),
    ("gaussian:sigma=1,sample=2,of=5,relation=add-remove", "replace-one only"),
    ("gaussian:sigma=1,q=0.5,with-replacement=true", "with-replacement=true is modelled for a Gaussian, Laplace"),
    ("gaussian:sigma=1,relation=replace-some", "must be one of add-remove, replace-one"),
    ("gaussian:sigma=1,q=0.1,sample=1,of=3", "one sampling scheme"),
])
def test_bad_specs_are_refused_by_name(spec: str, needle: str) -> None:
    with pytest.raises(InvalidParameterError, match=needle):
        parse_mechanism_spec(spec)


@pytest.mark.parametrize(("args", "needle"), [
    (["epsilon", "--mechanism", "gaussian:sigma=1,sample=601,of=600", "--at-delta", "1e-5"], "must be at most of"),
    (["delta", "--mechanism", "gaussian:sigma=1,sample=6,of=60,relation=add-remove", "--at-eps", "1"],
     "replace-one only"),
    (["delta", "--mechanism", "gaussian:sigma=1,with-replacement=true", "--at-eps", "1"], "with-replacement"),
    (["rdp", "--mechanism", "gaussian:sigma=1,q=0.01,relation=replace-one", "--orders", "2", "--direction", "remove"],
     "replace-one"),
])
def test_cli_bad_relation_input_is_one_line_exit_2(args: list[str], needle: str) -> None:
    r = subprocess.run([EXE, *args], check=False, capture_output=True, text=True, timeout=120)
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert r.stderr.count("\n") == 1 and needle in r.stderr and r.stdout == "", r.stderr


class GaussianDpEvent:
    def __init__(self, noise_multiplier: float) -> None:
        self.noise_multiplier = noise_multiplier


class PoissonSampledDpEvent:
    def __init__(self, sampling_probability: float, event: Any) -> None:
        self.sampling_probability, self.event = sampling_probability, event


class SampledWithoutReplacementDpEvent:
    def __init__(self, source_dataset_size: int, sample_size: int, event: Any) -> None:
        self.source_dataset_size, self.sample_size, self.event = source_dataset_size, sample_size, event


class SelfComposedDpEvent:
    def __init__(self, event: Any, count: int) -> None:
        self.event, self.count = event, count


def test_fixed_batch_event_reads_under_replace_one_only() -> None:
    ev = SelfComposedDpEvent(SampledWithoutReplacementDpEvent(60000, 600, GaussianDpEvent(2.0)), 10)
    # dp_accounting's PLD reading: the noise multiplier is relative to one record's bound, the
    # replace-one sensitivity is twice it
    assert str(from_dp_event(ev, "REPLACE_ONE")) == "10 x gaussian:sigma=2,sensitivity=2,sample=600,of=60000"
    with pytest.raises(InvalidParameterError, match="replace-one relation only"):
        from_dp_event(ev)
    with pytest.raises(InvalidParameterError, match="one mechanism event inside a fixed-size batch"):
        from_dp_event(SampledWithoutReplacementDpEvent(10, 2, SelfComposedDpEvent(GaussianDpEvent(1.0), 2)),
                      "replace-one")
    assert str(from_dp_event(PoissonSampledDpEvent(0.5, GaussianDpEvent(1.0)), "replace-one")) == \
        "gaussian:sigma=1,sensitivity=2,q=0.5,relation=replace-one"


def test_the_accountant_takes_the_relation() -> None:
    acc = Accountant(relation="replace-one").compose("gaussian:sigma=1,q=0.25", 3)
    assert str(acc.composition) == "3 x gaussian:sigma=1,q=0.25,relation=replace-one"
    want = optimal_epsilon([(PoissonSampled(Gaussian(1), "0.25", relation="replace-one"), 3)], "1e-5", digits=4)
    got = acc.get_epsilon("1e-5", digits=4)
    assert got.lower <= want.upper and want.lower <= got.upper  # both contain the optimum
    with pytest.raises(InvalidParameterError, match="replace-one relation only"):
        Accountant().compose("gaussian:sigma=1,sample=1,of=4")


# -- direction (issue 27 §4) ------------------------------------------------------------------------

def _poisson_add_one_step(q: Fraction, eps: Fraction) -> mpmath.mpf:
    """H_{e^eps}(N(0,1) || (1-q) N(0,1) + q N(1,1)): the ratio 1/(1 - q + q e^{x - 1/2}) decreases, so the
    optimal set is x < t with 1 - q + q e^{t - 1/2} = e^-eps (closed form; 0 when e^-eps <= 1 - q)."""
    qm, a = _mp(q), mpmath.e ** _mp(eps)
    if 1 / a <= 1 - qm:
        return mpmath.mpf(0)
    t = mpmath.mpf(1) / 2 + mpmath.log((1 / a - 1 + qm) / qm)
    return mpmath.ncdf(t) - a * ((1 - qm) * mpmath.ncdf(t) + qm * mpmath.ncdf(t - 1))


@pytest.mark.parametrize(("q", "eps"), [(F(1, 10), F(0)), (F(1, 2), F(1, 10)), (F(1, 2), F(1, 2))])
def test_each_direction_of_a_poisson_subsample_against_its_closed_form(q: Fraction, eps: Fraction) -> None:
    m = PoissonSampled(Gaussian(1), q)
    rem = optimal_delta([m], str(eps), digits=8, direction="remove")
    add = optimal_delta([m], str(eps), digits=8, direction="add")
    both = optimal_delta([m], str(eps), digits=8)
    with mpmath.workdps(40):
        r, a = _wor_gaussian_one_step(q, eps), _poisson_add_one_step(q, eps)
        assert _mp(rem.lower) <= r <= _mp(rem.upper)
        assert _mp(add.lower) <= a <= _mp(add.upper) or (a == 0 and add.upper == 0)
        assert _mp(both.lower) <= max(r, a) <= _mp(both.upper)


def test_max_is_the_larger_direction_and_symmetric_mechanisms_answer_the_same() -> None:
    comp = [(PoissonSampled(Gaussian(1), "0.2"), 4)]
    for eps in ("0.1", "1"):
        rem, add, both = (optimal_delta(comp, eps, digits=6, direction=d) for d in ("remove", "add", "max"))
        top = rem if rem.lower >= add.upper else add
        assert both.lower <= top.upper and top.lower <= both.upper  # max is the larger order
    for spec in ("gaussian:sigma=2,count=3", "laplace:scale=3,count=2", "gaussian:sigma=1,sample=1,of=5,count=2"):
        got = {d: optimal_epsilon(spec, "1e-5", digits=6, direction=d) for d in ("max", "remove", "add")}
        assert got["max"] == got["remove"] == got["add"]


def test_direction_in_specs_batch_lines_and_the_cli() -> None:
    from exactdp.query import run_query

    m, _ = parse_mechanism_spec("gaussian:sigma=1,q=0.1,direction=add")
    assert str(m) == "gaussian:sigma=1,q=0.1,direction=add" and m != PoissonSampled(Gaussian(1), "0.1")
    r = run_query({"query": "delta", "mechanisms": ["gaussian:sigma=1,q=0.1"], "at_eps": "0.5", "digits": 4,
                   "direction": "add"})
    assert r["direction"] == "add" and r["inputs"]["mechanisms"] == ["gaussian:sigma=1,q=0.1,direction=add"]
    with mpmath.workdps(30):
        assert mpmath.mpf(r["lower"]) <= _poisson_add_one_step(F(1, 10), F(1, 2)) <= mpmath.mpf(r["upper"])
    out = subprocess.run([EXE, "epsilon", "--mechanism", "gaussian:sigma=1,q=0.1,count=5", "--at-delta", "1e-5",
                          "--digits", "3", "--direction", "remove", "--json"], check=False, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0 and '"direction": "remove"' in out.stdout, out.stderr
    bad = subprocess.run([EXE, "delta", "--mechanism", "gaussian:sigma=1,q=0.1", "--at-eps", "1", "--direction",
                          "sideways"], check=False, capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "must be one of max, remove, add" in bad.stderr


# -- eps_g < 0 (issue 27 §4): the hockey-stick divergence below 0 ------------------------------------

def test_below_zero_gaussian_and_each_poisson_order_against_closed_forms() -> None:
    got = optimal_delta("gaussian:sigma=1", "-0.5", digits=10)
    m = PoissonSampled(Gaussian(1), "1/2")
    rem = optimal_delta([m], "-1/2", digits=8, direction="remove")
    add = optimal_delta([m], "-1/2", digits=8, direction="add")
    both = optimal_delta([m], "-1/2", digits=8)
    with mpmath.workdps(40):
        e = mpmath.mpf(-1) / 2
        ref = mpmath.ncdf(-e + mpmath.mpf(1) / 2) - mpmath.e ** e * mpmath.ncdf(-e - mpmath.mpf(1) / 2)
        assert _mp(got.lower) <= ref <= _mp(got.upper)
        r, a = _wor_gaussian_one_step(F(1, 2), F(-1, 2)), _poisson_add_one_step(F(1, 2), F(-1, 2))
        assert _mp(rem.lower) <= r <= _mp(rem.upper) and _mp(add.lower) <= a <= _mp(add.upper)
        assert _mp(both.lower) <= max(r, a) <= _mp(both.upper)
        assert _mp(got.lower) >= 1 - mpmath.e ** e  # at least 1 - e^eps


def test_below_zero_generic_composition_by_brute_force() -> None:
    # 3 x (1, 0)-DP: the KOV15 pair, outcomes by the number i of +1 losses; at e^eps = 1/2
    got = optimal_delta(("1", "0", 3), "-log(2)", digits=20)
    with mpmath.workdps(40):
        p = mpmath.e / (1 + mpmath.e)
        ref = sum(max(0, mpmath.binomial(3, i) * (p**i * (1 - p) ** (3 - i) - (1 - p) ** i * p ** (3 - i) / 2))
                  for i in range(4))
        assert _mp(got.lower) <= ref <= _mp(got.upper)


def test_below_zero_fixed_batch_is_the_worst_case_of_brute_force() -> None:
    brute = _worst_replace_one(5, lambda d: _wor_output(d, 2), 1, F(1, 2))
    got = optimal_delta([SampledWithoutReplacement(RR, 2, 5)], "-log(2)", digits=12)
    assert got.lower <= brute <= got.upper


def test_below_zero_is_refused_where_not_answered() -> None:
    r = subprocess.run([EXE, "delta", "--eps", "1", "--k", "3", "--at-eps=-1", "--method", "basic"], check=False,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "optimal method only" in r.stderr
    with pytest.raises(InvalidParameterError, match="must be an eps such as"):
        optimal_delta("gaussian:sigma=1", "--1")


@pytest.mark.skipif(importlib.util.find_spec("dp_accounting") is None, reason="needs dp_accounting (peers extra)")
def test_fixed_batch_round_trip_through_dp_accounting() -> None:
    from exactdp.model.composition import Composition
    from exactdp.model.dp_event import to_dp_event

    comp = Composition.of(["gaussian:sigma=2,sensitivity=2,sample=600,of=60000,count=10",
                           "gaussian:sigma=1,sensitivity=2,q=0.25,relation=replace-one,count=3"])
    ev = to_dp_event(comp, "replace-one")
    assert from_dp_event(ev, "replace-one") == comp
    import dp_accounting

    assert isinstance(ev.events[0].event, dp_accounting.SampledWithoutReplacementDpEvent)


def test_one_subsample_shared_by_several_mechanisms_is_refused_not_understated() -> None:
    """PoissonSampled(SelfComposed(Gaussian(1), 2), 1/2) is ((1-q) N(0) + q N(sqrt 2), N(0)) in the remove
    order (one subsample for both runs): its delta at eps = 1 is above what two independent subsamples
    give, so reading it as those would be unsound; it is refused by name."""
    ev = PoissonSampledDpEvent(0.5, SelfComposedDpEvent(GaussianDpEvent(1.0), 2))
    with mpmath.workdps(30):
        q, mu, a = mpmath.mpf(1) / 2, mpmath.sqrt(2), mpmath.e
        t = (mu**2 / 2 + mpmath.log((a - 1 + q) / q)) / mu
        joint = (1 - q) * mpmath.ncdf(-t) + q * mpmath.ncdf(mu - t) - a * mpmath.ncdf(-t)
        independent = optimal_delta([(PoissonSampled(Gaussian(1), "1/2"), 2)], "1", digits=6)
        assert joint > _mp(independent.upper)  # the independent reading is below the truth
    with pytest.raises(InvalidParameterError, match="one subsample shared by all of them"):
        from_dp_event(ev)
    # one mechanism inside, or sampled events composed outside, still read
    assert str(from_dp_event(SelfComposedDpEvent(PoissonSampledDpEvent(0.5, GaussianDpEvent(1.0)), 2))) == \
        "2 x gaussian:sigma=1,q=0.5"
    assert str(from_dp_event(PoissonSampledDpEvent(0.5, SelfComposedDpEvent(GaussianDpEvent(1.0), 1)))) == \
        "gaussian:sigma=1,q=0.5"
