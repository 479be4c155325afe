"""Issue 27 §5 (a first slice): dp_accounting's DpEvents read into compositions, an accountant object,
and Opacus's get_noise_multiplier, certified.

The events are stand-ins with dp_accounting's class names and fields (dp_accounting is an optional
extra); where it is installed, its own classes are used too.  Every number is checked against an
independent computation: the randomized-response ratio from its definition, the Gaussian optimum
from the closed form in mpmath.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import mpmath
import pytest

from exactdp import Accountant, Composition, from_dp_event, get_noise_multiplier, optimal_epsilon, to_dp_event
from exactdp.core.errors import InvalidParameterError


# stand-ins: dp_accounting's dp_event classes, by name and fields
@dataclass
class GaussianDpEvent:
    noise_multiplier: float


@dataclass
class LaplaceDpEvent:
    noise_multiplier: float


@dataclass
class RandomizedResponseDpEvent:
    noise_parameter: float
    num_buckets: int


@dataclass
class EpsilonDeltaDpEvent:
    epsilon: float
    delta: float


@dataclass
class PoissonSampledDpEvent:
    sampling_probability: float
    event: Any


@dataclass
class SelfComposedDpEvent:
    event: Any
    count: int


@dataclass
class ComposedDpEvent:
    events: list[Any]


@dataclass
class NoOpDpEvent:
    pass


@dataclass
class NonPrivateDpEvent:
    pass


@dataclass
class UnsupportedDpEvent:
    pass


@dataclass
class SampledWithoutReplacementDpEvent:
    source_dataset_size: int
    sample_size: int
    event: Any


def test_events_read_as_the_compositions_they_stand_for() -> None:
    ev = ComposedDpEvent([
        SelfComposedDpEvent(PoissonSampledDpEvent(0.25, GaussianDpEvent(1.5)), 10),
        SelfComposedDpEvent(SelfComposedDpEvent(LaplaceDpEvent(2.0), 3), 2),
        NoOpDpEvent(),
        EpsilonDeltaDpEvent(0.5, 0.125),
        PoissonSampledDpEvent(0.5, PoissonSampledDpEvent(0.5, GaussianDpEvent(4.0))),
    ])
    want = Composition.of(["gaussian:sigma=1.5,q=0.25,count=10", "laplace:scale=2,count=6", ("0.5", "0.125"),
                           "gaussian:sigma=4,q=0.25"])
    assert from_dp_event(ev) == want


def test_floats_are_read_at_their_exact_binary_value() -> None:
    comp = from_dp_event(GaussianDpEvent(1.1))
    (m, _), = comp.groups
    assert m.sigma == Fraction(1.1) != Fraction(11, 10)


@pytest.mark.parametrize(("p", "k"), [(0.5, 2), (0.25, 3), (0.75, 10)])
def test_randomized_response_eps_is_its_likelihood_ratio(p: float, k: int) -> None:
    comp = from_dp_event(RandomizedResponseDpEvent(p, k))
    (m, _), = comp.groups
    pq = Fraction(p)
    ratio = (1 - pq + pq / k) / (pq / k)  # the true bucket's probability over another's
    assert m.eps.exp_exact() == ratio


def test_noop_and_non_private_events() -> None:
    assert optimal_epsilon(from_dp_event(NoOpDpEvent()), "1e-5").exact == 0
    for ev in (NonPrivateDpEvent(), GaussianDpEvent(0.0), ComposedDpEvent([GaussianDpEvent(1.0), NonPrivateDpEvent()])):
        with pytest.raises(InvalidParameterError, match="not private at any"):
            from_dp_event(ev)
        acc = Accountant().compose(GaussianDpEvent(1.0)).compose(ev)
        assert acc.get_epsilon("0.5").is_infinite and acc.get_delta(100).exact == 1


@pytest.mark.parametrize("event", [UnsupportedDpEvent(), ComposedDpEvent([GaussianDpEvent(1.0), UnsupportedDpEvent()])])
def test_events_not_modelled_are_refused_by_name(event: Any) -> None:
    with pytest.raises(InvalidParameterError, match="DpEvent is not an event exactdp reads"):
        from_dp_event(event)
    with pytest.raises(InvalidParameterError, match="not a DpEvent"):
        from_dp_event(ComposedDpEvent([object()]))


def _gaussian_delta(mu: mpmath.mpf, eps: mpmath.mpf) -> mpmath.mpf:
    return mpmath.ncdf(-eps / mu + mu / 2) - mpmath.e**eps * mpmath.ncdf(-eps / mu - mu / 2)


def test_the_accountant_answers_the_gaussian_optimum() -> None:
    acc = Accountant()
    acc.compose(GaussianDpEvent(2.0), 5).compose("gaussian:sigma=2", count=3).compose(SelfComposedDpEvent(
        GaussianDpEvent(2.0), 8))
    e = acc.get_epsilon("1e-5", digits=12)
    with mpmath.workdps(40):
        mu = mpmath.sqrt(16) / 2  # 16 Gaussian steps of sigma 2: mu^2 = 16/4
        lo, hi = (mpmath.mpf(Fraction(x).numerator) / Fraction(x).denominator for x in (e.lower, e.upper))
        assert _gaussian_delta(mu, hi) <= mpmath.mpf("1e-5") <= _gaussian_delta(mu, lo)
    d = acc.get_delta(Fraction(e.lower), digits=12)
    assert d.upper >= Fraction(1, 10**5)  # delta at an eps below the optimum is at least the target
    with pytest.raises(InvalidParameterError, match="relation='replace-some' must be one of add-remove, replace-one"):
        Accountant(relation="replace-some")
    assert Accountant(relation="REPLACE_SPECIAL").relation == "replace-special"  # randomized response only


def test_get_noise_multiplier_is_certified_and_counts_epochs_as_opacus_does() -> None:
    r = get_noise_multiplier(target_epsilon=1, target_delta="1e-5", sample_rate=1, steps=50)
    with mpmath.workdps(40):
        def delta_at(sigma: Fraction) -> mpmath.mpf:
            return _gaussian_delta(mpmath.sqrt(50) / (mpmath.mpf(sigma.numerator) / sigma.denominator), mpmath.mpf(1))
        assert delta_at(Fraction(r.value)) <= mpmath.mpf("1e-5") < delta_at(Fraction(r.fails_at))
    assert float(r) >= r.value and Fraction(float(r)) - r.value < Fraction(1, 10**12)  # rounded up: still safe
    by_epochs = get_noise_multiplier(target_epsilon=1, target_delta="1e-5", sample_rate="1/4", epochs="12.6",
                                     max_seconds=120)
    assert by_epochs.inputs["k"] == 50  # floor(12.6 / (1/4)) steps
    with pytest.raises(InvalidParameterError, match="either steps or epochs"):
        get_noise_multiplier(target_epsilon=1, target_delta="1e-5", sample_rate="0.1")


@pytest.mark.skipif(importlib.util.find_spec("dp_accounting") is None, reason="needs dp_accounting (peers extra)")
def test_round_trip_through_dp_accounting() -> None:
    # parameters that are floats (the noise parameter of rr:eps=log(5),categories=4 is 4/8), so exact
    comp = Composition.of(["gaussian:sigma=1.5,q=0.25,count=10", "laplace:scale=2,count=6", "rr:eps=log(5),categories=4"])
    assert from_dp_event(to_dp_event(comp)) == comp
    import dp_accounting

    real = dp_accounting.SelfComposedDpEvent(dp_accounting.PoissonSampledDpEvent(0.5, dp_accounting.GaussianDpEvent(2.0)), 7)
    assert from_dp_event(real) == Composition.of("gaussian:sigma=2,q=0.5,count=7")


def test_the_docs_page_examples_run() -> None:
    import re
    from pathlib import Path

    page = (Path(__file__).resolve().parents[2] / "docs" / "interop.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", page, flags=re.S)
    assert len(blocks) == 7
    import importlib.util

    have_peer = importlib.util.find_spec("dp_accounting") is not None
    for code in blocks:
        if "to_dp_event" in code and not have_peer:
            continue  # writing a DpEvent needs dp_accounting (the peers extra)
        exec(compile(code, "docs/interop.md", "exec"), {})  # noqa: S102 - the page's own examples


@pytest.mark.parametrize(("theirs", "ours"), [
    ("gaussian:noise_multiplier=1.1,sample_rate=0.01,steps=1000", "gaussian:sigma=1.1,q=0.01,count=1000"),
    ("laplace:noise_multiplier=2,sampling_probability=1/8", "laplace:scale=2,q=1/8"),
    ("rr:eps=1,sample_rate=0.5,steps=3", "rr:eps=1,q=0.5,count=3")])
def test_opacus_and_dp_accounting_names_are_synonyms_in_specs(theirs: str, ours: str) -> None:
    assert Composition.of(theirs) == Composition.of(ours)
    with pytest.raises(InvalidParameterError, match="given twice"):
        Composition.of(ours.split(",")[0] + "," + theirs.split(":")[1])
