"""Issue 27's interfaces tried as a new user would (the audit of h-aud38): what broke, fixed.

Each test failed before its fix.  The references are independent of the engines: Fraction
arithmetic on the floats an event holds, and dp_accounting's own classes where installed.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from fractions import Fraction

import mpmath
import pytest

from exactdp import (
    Accountant,
    Composition,
    Gaussian,
    MixtureOfGaussians,
    from_dp_event,
    get_noise_multiplier,
    to_dp_event,
)
from exactdp.core.errors import InvalidParameterError
from exactdp.model.mechanisms import PoissonSampled

needs_dp_accounting = pytest.mark.skipif(importlib.util.find_spec("dp_accounting") is None,
                                         reason="needs dp_accounting (peers extra)")


@needs_dp_accounting
@pytest.mark.parametrize("probs", [[0.9, 0.1], [0.81, 0.18, 0.01], [0.5, 0.5]])
def test_a_subsampled_mixture_is_written_back_as_it_was_read(probs: list[float]) -> None:
    from dp_accounting import dp_event

    sens = [1.0, 2.0, 3.0][:len(probs)]
    event = dp_event.PoissonSampledDpEvent(0.1, dp_event.MixtureOfGaussiansDpEvent(2.0, sens, probs))
    comp = from_dp_event(event)
    # the mixture read: the rate at its binary value, the probabilities at their binary values when those sum
    # to 1, else at the decimals they print as (docs/interop.md), by Fraction arithmetic
    q = Fraction(0.1)
    ps = [Fraction(p) for p in probs] if sum(Fraction(p) for p in probs) == 1 else [Fraction(repr(p)) for p in probs]
    want = MixtureOfGaussians(2, [0, *[Fraction(s) for s in sens]], [1 - q, *[q * p for p in ps]])
    assert comp == Composition.of([(want, 1)])
    back = to_dp_event(comp)
    assert type(back).__name__ == "PoissonSampledDpEvent" and back.sampling_probability == 0.1
    assert list(back.event.sampling_probs) == probs and list(back.event.sensitivities) == sens
    assert from_dp_event(back) == comp


@needs_dp_accounting
@pytest.mark.parametrize("spec", ["gaussian:sigma=1,q=0", "approx:eps=0,delta=0", "rr:eps=0"])
def test_a_mechanism_without_loss_is_written_as_a_noop_event(spec: str) -> None:
    from dp_accounting import dp_event

    assert from_dp_event(dp_event.NoOpDpEvent()) == Composition.homogeneous(0, 0, 1)
    back = to_dp_event(Composition.of(spec))
    assert type(back).__name__ == "NoOpDpEvent"
    assert type(to_dp_event(Composition.of(spec + ",count=3")).event).__name__ == "NoOpDpEvent"
    assert from_dp_event(back) == Composition.of(spec)
    sampled = dp_event.PoissonSampledDpEvent(0.0, dp_event.GaussianDpEvent(1.0))
    assert from_dp_event(to_dp_event(from_dp_event(sampled))) == from_dp_event(sampled)


class RDPAccountant:
    """Opacus's accountant, duck-typed: its history of (noise_multiplier, sample_rate, num_steps)."""

    def __init__(self) -> None:
        self.history = [(1.1, 0.01, 5), (2.0, 0.25, 3)]


def test_an_accountant_composes_another_accountants_ledger() -> None:
    acc = Accountant().compose(RDPAccountant(), count=2)
    want = [(PoissonSampled(Gaussian(Fraction(1.1)), Fraction(0.01)), 10),
            (PoissonSampled(Gaussian(2), Fraction(1, 4)), 6)]
    assert acc.composition == Composition.of(want)
    mine = Accountant().compose("gaussian:sigma=2,q=1/4", 3)
    assert Accountant().compose(mine).composition == mine.composition
    with pytest.raises(InvalidParameterError, match="disagrees"):
        Accountant(relation="replace-one").compose(RDPAccountant())


@needs_dp_accounting
def test_an_accountant_composes_a_dp_accounting_accountant() -> None:
    from dp_accounting import dp_event
    from dp_accounting.pld import pld_privacy_accountant

    theirs = pld_privacy_accountant.PLDAccountant()
    theirs.compose(dp_event.PoissonSampledDpEvent(0.25, dp_event.GaussianDpEvent(2.0)), 3)
    assert Accountant().compose(theirs).composition == Composition.of("gaussian:sigma=2,q=1/4,count=3")


def _gaussian_delta(sigma: Fraction, k: int, eps: int) -> mpmath.mpf:
    """delta(eps) of k Gaussians of sensitivity 1, the closed form (docs/mathematics.md §7), in mpmath."""
    with mpmath.workdps(40):
        mu = mpmath.sqrt(k) / mpmath.mpf(sigma.numerator) * sigma.denominator
        return mpmath.ncdf(-eps / mu + mu / 2) - mpmath.e ** eps * mpmath.ncdf(-eps / mu - mu / 2)


def test_get_noise_multiplier_takes_opacus_keywords() -> None:
    plain = get_noise_multiplier(target_epsilon=2, target_delta="1e-5", sample_rate=1, steps=3)
    assert _gaussian_delta(plain.value, 3, 2) <= mpmath.mpf("1e-5") < _gaussian_delta(plain.fails_at, 3, 2)
    for name in ("rdp", "prv", "gdp"):
        r = get_noise_multiplier(target_epsilon=2, target_delta="1e-5", sample_rate=1, steps=3, accountant=name,
                                 epsilon_tolerance=0.01)
        assert r.value == plain.value
    with pytest.raises(InvalidParameterError, match="accountant="):
        get_noise_multiplier(target_epsilon=2, target_delta="1e-5", sample_rate=1, steps=3, accountant="moments")


@pytest.mark.parametrize(("spec", "delta_at_1", "eps_at"), [
    ("dgaussian:sigma=0", 1, None),                      # no noise: delta = 1 at every eps, eps = inf
    ("dgaussian:sigma=0,sensitivity=3,count=2", 1, None),
    ("dgaussian:sigma=2,sensitivity=0", 0, 0),           # the record never moves the query: the (0, 0) pair
    ("dlaplace:noise=1/2,sensitivity=0,count=4", 0, 0),
    ("gaussian:sigma=1,sample=0,of=100", 0, 0),          # a fixed batch of no records never sees it
    ("laplace:scale=1,sample=0,of=10,relation=replace-one", 0, 0),
])
def test_degenerate_discrete_and_fixed_batch_parameters_are_answered_exactly(spec: str, delta_at_1: int,
                                                                             eps_at: int | None) -> None:
    # docs/mathematics.md §7.13: the pair without noise (P, Q) = ((1, 0), (0, 1)) has delta = 1 at every eps
    # and eps = inf at every delta < 1; P = Q has delta = 0 and eps = 0 (the definitions, no engine)
    from exactdp import optimal_delta, optimal_epsilon

    d = optimal_delta(spec, 1, digits=6)
    assert d.lower == d.upper == delta_at_1
    e = optimal_epsilon(spec, "1e-6", digits=6)
    if eps_at is None:
        assert e.is_infinite and e.upper == e.lower
    else:
        assert e.lower == e.upper == eps_at


@pytest.mark.parametrize("spec", ["gaussian:sigma=0", "laplace:scale=0,count=3", "dgaussian:sigma=0",
                                  "mog:sigma=0,sensitivities=1/2,probs=0.5/0.5"])
@pytest.mark.parametrize("eps_g", ["-0.5", "-log(3)", "-1/3"])
def test_no_noise_has_delta_exactly_one_below_zero_too(spec: str, eps_g: str) -> None:
    # the pair of two point masses apart: with S the support of P, P(S) - e^eps Q(S) = 1 at every eps, and
    # nothing exceeds 1 (docs/mathematics.md §7.13): exact, whether or not e^eps_g is rational
    from exactdp import optimal_delta

    d = optimal_delta(spec, eps_g, digits=8)
    assert d.lower == d.upper == 1 and d.is_exact


def test_an_upper_bound_that_misses_is_undecided_without_asking_for_more_time() -> None:
    # a sum sampled with replacement is answered by a dominating pair only (Theorem 9.6): when that pair is
    # certified to miss the target more time cannot decide it, so the one line must not suggest --max-seconds
    import io
    from contextlib import redirect_stderr, redirect_stdout

    from exactdp.cli import main as cli_main

    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = cli_main(["check", "--mechanism", "gaussian:sigma=2,sample=10,of=100,with-replacement=true",
                         "--eps-g", "1", "--delta-g", "1e-3"])
    lines = err.getvalue().strip().splitlines()
    assert code == 4 and out.getvalue() == "" and len(lines) == 1
    assert "undecided" in lines[0] and "dominating pair" in lines[0] and "--max-seconds" not in lines[0]


def _inside(enc, want: mpmath.mpf) -> bool:
    """Whether the mpmath value ``want`` (40 digits) lies in the enclosure, up to 1e-30."""
    with mpmath.workdps(40):
        lo = mpmath.mpf(enc.lower.numerator) / enc.lower.denominator
        hi = mpmath.mpf(enc.upper.numerator) / enc.upper.denominator
        return bool(lo - mpmath.mpf("1e-30") <= want <= hi + mpmath.mpf("1e-30"))


def test_a_delta_curve_reaches_below_zero_as_delta_does() -> None:
    # delta(eps) of a Gaussian of mu = sqrt(k)/sigma is Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) at every
    # real eps; a Laplace of scale b = 1, sensitivity 1 has delta(eps) = 1 - e^{(eps - 1)/2} on [-1, 1]
    from exactdp.api.curve import delta_curve, eps_points

    xs = eps_points("-1", "1/2", 4)
    assert [str(x) for x in xs] == ["-1", "-0.5", "0", "0.5"]
    for enc, x in zip(delta_curve(Composition.of("gaussian:sigma=2,count=2"), xs, digits=8), xs):
        with mpmath.workdps(40):
            v = mpmath.mpf(x.value.numerator) / x.value.denominator
            mu = mpmath.sqrt(2) / 2
            want = mpmath.ncdf(-v / mu + mu / 2) - mpmath.e ** v * mpmath.ncdf(-v / mu - mu / 2)
        assert _inside(enc, want) and enc.upper - enc.lower < Fraction(1, 10**7)
    for enc, x in zip(delta_curve(Composition.of("laplace:scale=1"), xs, digits=6, max_seconds=20), xs):
        with mpmath.workdps(40):
            want = 1 - mpmath.e ** ((mpmath.mpf(x.value.numerator) / x.value.denominator - 1) / 2)
        assert _inside(enc, want) and enc.upper - enc.lower < Fraction(1, 10**5)


def _hockey_stick(p: list[Fraction], q: list[Fraction], a: Fraction) -> Fraction:
    """sup_S P(S) - a Q(S) over the subsets S of a finite space: the positive parts summed (brute force)."""
    return sum((max(x - a * y, Fraction(0)) for x, y in zip(p, q)), Fraction(0))


def test_check_answers_eps_g_below_zero_exactly_at_the_boundary() -> None:
    from exactdp import is_private

    # (log 2)-DP generic: the pair P = (2/3, 1/3), Q = (1/3, 2/3) and its reverse; at eps_g = -log 2, a = 1/2
    p, q = [Fraction(2, 3), Fraction(1, 3)], [Fraction(1, 3), Fraction(2, 3)]
    d = max(_hockey_stick(p, q, Fraction(1, 2)), _hockey_stick(q, p, Fraction(1, 2)))
    assert d == Fraction(1, 2)
    assert is_private(("log(2)", 0, 1), "-log(2)", d)
    assert not is_private(("log(2)", 0, 1), "-log(2)", d - Fraction(1, 10**9))
    # a Gaussian of sigma 2 at eps_g = -1/2 (e^eps_g irrational): the closed form in mpmath
    with mpmath.workdps(40):
        mu, v = mpmath.mpf(1) / 2, mpmath.mpf(-1) / 2
        want = mpmath.ncdf(-v / mu + mu / 2) - mpmath.e ** v * mpmath.ncdf(-v / mu - mu / 2)
        above, below = (Fraction(mpmath.nstr(want + s * mpmath.mpf("1e-12"), 30)) for s in (1, -1))
    assert is_private("gaussian:sigma=2", "-0.5", above) and not is_private("gaussian:sigma=2", "-0.5", below)


def test_check_takes_direction_as_delta_and_epsilon_do() -> None:
    # one order of a Poisson-subsampled Gaussian (q = 1/10, sigma = 2): remove P = 0.9 N(0,4) + 0.1 N(1,4) against
    # Q = N(0,4), add the reverse; delta(eps) = the integral of (P - e^eps Q)^+, by mpmath quadrature
    import io
    from contextlib import redirect_stderr, redirect_stdout

    from exactdp.cli import main as cli_main

    with mpmath.workdps(30):
        def pdf(x, m):
            return mpmath.npdf(x, m, 2)

        def mix(x):
            return mpmath.mpf("0.9") * pdf(x, 0) + mpmath.mpf("0.1") * pdf(x, 1)

        e = mpmath.e ** mpmath.mpf("0.1")
        remove = mpmath.quad(lambda x: max(mix(x) - e * pdf(x, 0), 0), [-mpmath.inf, 0, 20, mpmath.inf])
        add = mpmath.quad(lambda x: max(pdf(x, 0) - e * mix(x), 0), [-mpmath.inf, -20, 0, mpmath.inf])
    assert add < mpmath.mpf("1e-6") < remove
    codes = {}
    for direction in ("add", "remove", "max"):
        with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
            codes[direction] = cli_main(["check", "--mechanism", "gaussian:sigma=2,q=0.1", "--direction", direction,
                                         "--eps-g", "0.1", "--delta-g", "1e-6"])
    assert codes == {"add": 0, "remove": 1, "max": 1}


def test_the_accountant_takes_dp_accountings_keyword_names() -> None:
    # dp_accounting's accountants are asked get_epsilon(target_delta=...) and get_delta(target_epsilon=...)
    acc = Accountant().compose("gaussian:sigma=2", count=2)
    d = acc.get_delta(target_epsilon=1, digits=10)
    with mpmath.workdps(40):
        mu = mpmath.sqrt(2) / 2
        want = mpmath.ncdf(-1 / mu + mu / 2) - mpmath.e * mpmath.ncdf(-1 / mu - mu / 2)
    assert _inside(d, want) and d == acc.get_delta(1, digits=10)
    assert acc.get_epsilon(target_delta="1e-5", digits=8) == acc.get_epsilon("1e-5", digits=8)
    for bad in ({}, {"delta": "1e-5", "target_delta": "1e-5"}):
        with pytest.raises(InvalidParameterError, match="target_delta"):
            acc.get_epsilon(**bad)


def test_a_mixture_in_a_sampling_scheme_it_has_no_model_for_is_refused_in_its_spec_form() -> None:
    from exactdp import optimal_delta

    with pytest.raises(InvalidParameterError) as err:
        optimal_delta("mog:sigma=2,sensitivities=1/2,probs=0.9/0.1,sample=10,of=100", 1, digits=4)
    assert "mog:sigma=2,sensitivities=1/2,probs=0.9/0.1" in str(err.value) and "Fraction(" not in str(err.value)


class GaussianDpEvent:
    """dp_accounting's event, duck-typed by its class name."""

    noise_multiplier = 2.0


def test_an_event_or_accountant_where_a_composition_belongs_is_pointed_to_its_reader() -> None:
    from exactdp import optimal_delta

    for obj, reader in ((GaussianDpEvent(), "from_dp_event"), ([GaussianDpEvent()], "from_dp_event"),
                        (RDPAccountant(), "from_accountant"), (Accountant(), "from_accountant")):
        with pytest.raises(InvalidParameterError, match=reader):
            optimal_delta(obj, 1)

    class Foo:
        pass

    with pytest.raises(InvalidParameterError) as err:
        Accountant().compose(Foo())
    assert "Foo" in str(err.value) and "flat list of numbers" not in str(err.value)


@pytest.mark.skipif(importlib.util.find_spec("matplotlib") is None, reason="needs matplotlib (plot extra)")
def test_a_curve_below_zero_is_plotted() -> None:
    import matplotlib

    matplotlib.use("Agg")
    from exactdp.api.curve import delta_curve, eps_points
    from exactdp.plots import plot_curve

    xs = eps_points("-1", "0", 2)
    encs = delta_curve(Composition.of(("log(2)", 0, 1)), xs, digits=6)
    ax = plot_curve(xs, encs, direction="delta")
    xdata = sorted({float(x) for line in ax.get_lines() for x in line.get_xdata()})  # float ok: plotted points
    assert xdata[0] == -1.0


def test_a_replace_special_accountant_is_read_by_from_accountant() -> None:
    from exactdp import from_accountant

    mine = Accountant(relation="replace-special").compose("rr:eps=1,relation=replace-special", 2)
    assert from_accountant(mine) == mine.composition == Composition.of("rr:eps=1,relation=replace-special,count=2")
    assert Accountant(relation="replace-special").compose(mine).composition == mine.composition
    with pytest.raises(InvalidParameterError, match="disagrees"):
        from_accountant(mine, relation="add-remove")


@pytest.mark.parametrize(("theirs", "ours"), [
    ("gaussian:sigma=2,sample=10,of=100,with_replacement=true", "gaussian:sigma=2,sample=10,of=100,with-replacement=true"),
    ("dgaussian:noise_multiplier=2,sample_rate=0.1", "dgaussian:sigma=2,q=0.1"),
])
def test_spelling_variants_of_keys_read_as_ours(theirs: str, ours: str) -> None:
    # relation=replace_one is read as replace-one; the key with-replacement is read with an underscore alike, and
    # Opacus's noise_multiplier is a discrete Gaussian's sigma as it is a Gaussian's
    assert Composition.of(theirs) == Composition.of(ours)


def test_an_astronomically_large_noise_parameter_is_answered_not_an_internal_error() -> None:
    # dlaplace:noise=A, A = 10^400: the loss is +-A, P(L = A) = 1/(1 + e^-A), so delta(1) = (1 - e^(1-A))/(1 + e^-A),
    # within 10^-100 of 1 (its arb radius, near 2^-(10^400), is widened outward rather than written out)
    import io
    from contextlib import redirect_stderr, redirect_stdout

    from exactdp import optimal_delta
    from exactdp.cli import main as cli_main

    d = optimal_delta("dlaplace:noise=1e400", 1, digits=4)
    # 1 - delta(1) <= 2 e^(1-A) < 2^-(2^22): the enclosure must reach below 1 - 2^-(2^22), and it is tight
    assert 1 - d.lower >= Fraction(1, 1 << (1 << 22)) and 1 - d.lower < Fraction(1, 10**100) and d.upper == 1
    with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
        assert cli_main(["delta", "--mechanism", "dlaplace:noise=1e400", "--at-eps", "1", "--digits", "4"]) == 0


def test_with_replacement_takes_true_or_false_only() -> None:
    with pytest.raises(InvalidParameterError, match="must be true or false"):
        Composition.of("gaussian:sigma=2,sample=10,of=100,with-replacement=maybe")
    assert Composition.of("gaussian:sigma=2,sample=10,of=100,with-replacement=no") == \
        Composition.of("gaussian:sigma=2,sample=10,of=100")


@dataclass
class DiscreteLaplaceDpEvent:
    noise_parameter: float
    sensitivity: int


def test_event_noise_parameters_below_zero_are_refused_and_sensitivity_0_is_the_0_0_pair() -> None:
    from exactdp.model.dp_event import NonPrivateEvent

    for ev in (GaussianDpEvent_(-1.0), DiscreteLaplaceDpEvent(-0.5, 1)):
        with pytest.raises(InvalidParameterError, match="must be >= 0") as err:
            from_dp_event(ev)
        assert not isinstance(err.value, NonPrivateEvent)  # not "noise 0": a value below 0 is no parameter
    # noise_parameter a = 0: e^{-0|x|} is no distribution (its noise is unbounded, not absent): refused, not NonPrivate
    with pytest.raises(InvalidParameterError, match="no distribution") as err:
        from_dp_event(DiscreteLaplaceDpEvent(0.0, 1))
    assert not isinstance(err.value, NonPrivateEvent)
    # sensitivity 0: the query never moves, P = Q, as the spec dlaplace:noise=A,sensitivity=0 reads (§7.13)
    assert from_dp_event(DiscreteLaplaceDpEvent(0.5, 0)) == Composition.homogeneous(0, 0, 1) \
        == Composition.of("dlaplace:noise=0.5,sensitivity=0")


@dataclass
class GaussianDpEvent_:  # renamed below: dp_accounting's class name is what is read
    noise_multiplier: float


GaussianDpEvent_.__name__ = "GaussianDpEvent"
