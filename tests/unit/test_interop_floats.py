"""Issue 27 §5: the entry points named after dp_accounting's and Opacus's take their callers' floats
(each at its exact binary value, docs/contracts.md §1.1), Opacus's ``accountant.step``, and
``to_dp_event`` of an accountant.

The values are checked against independent mpmath computations (the Gaussian's closed form,
docs/mathematics.md §7.2), never against exactdp itself.
"""

from __future__ import annotations

from fractions import Fraction

import mpmath
import pytest

from exactdp import Accountant, Composition, from_dp_event, get_noise_multiplier, to_dp_event
from exactdp.core.errors import InexactInputError, InvalidParameterError
from exactdp.core.numbers import float_as_exact, format_fraction, parse_rational


def _gaussian_eps(mu: mpmath.mpf, delta: mpmath.mpf) -> mpmath.mpf:
    """The eps at which a Gaussian of privacy parameter mu has hockey-stick divergence ``delta``,
    by mpmath at 50 digits (Balle-Wang 2018: delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2))."""
    with mpmath.workdps(50):
        def d(e: mpmath.mpf) -> mpmath.mpf:
            return mpmath.ncdf(-e / mu + mu / 2) - mpmath.exp(e) * mpmath.ncdf(-e / mu - mu / 2) - delta
        return mpmath.findroot(d, (mpmath.mpf(0), mpmath.mpf(50)), solver="bisect")


def _gaussian_sigma(k: int, eps: mpmath.mpf, delta: mpmath.mpf) -> mpmath.mpf:
    """The sigma at which k Gaussian steps of sensitivity 1 meet (eps, delta) exactly (mu = sqrt(k)/sigma)."""
    with mpmath.workdps(50):
        def d(mu: mpmath.mpf) -> mpmath.mpf:
            return mpmath.ncdf(-eps / mu + mu / 2) - mpmath.exp(eps) * mpmath.ncdf(-eps / mu - mu / 2) - delta
        mu = mpmath.findroot(d, (mpmath.mpf("0.01"), mpmath.mpf(20)), solver="bisect")
        return mpmath.sqrt(k) / mu


def test_float_as_exact_is_the_binary_value_and_leaves_the_rest() -> None:
    assert float_as_exact(1e-5) == Fraction(1e-5) != Fraction(1, 10**5)
    assert float_as_exact("1e-5") == "1e-5" and float_as_exact(3) == 3
    with pytest.raises(InvalidParameterError):
        float_as_exact(float("nan"))
    with pytest.raises(InexactInputError):  # everywhere else a float is still refused with the fix
        parse_rational(1e-5)


def test_accountant_get_epsilon_takes_a_float_delta_at_its_exact_value() -> None:
    acc = Accountant().compose("gaussian:sigma=2", count=3)  # mu = sqrt(3)/2
    enc = acc.get_epsilon(1e-5, digits=12)
    assert enc == acc.get_epsilon(Fraction(1e-5), digits=12)
    with mpmath.workdps(50):
        ref = _gaussian_eps(mpmath.sqrt(3) / 2, mpmath.mpf(Fraction(1e-5).numerator) / Fraction(1e-5).denominator)
        assert mpmath.mpf(enc.lower.numerator) / enc.lower.denominator <= ref
        assert ref <= mpmath.mpf(enc.upper.numerator) / enc.upper.denominator
    d = acc.get_delta(target_epsilon=1.5, digits=8)
    assert d == acc.get_delta(Fraction(3, 2), digits=8)


def test_step_is_opacus_dp_sgd_step_with_floats_read_exactly() -> None:
    acc = Accountant()
    for _ in range(4):
        acc.step(noise_multiplier=1.1, sample_rate=0.01)
    assert acc.composition == Composition.of([
        f"gaussian:sigma={format_fraction(Fraction(1.1))},q={format_fraction(Fraction(0.01))},count=4"])
    # without subsampling the steps are Gaussians: 5 steps of sigma 2 against the closed form
    plain = Accountant()
    for _ in range(5):
        plain.step(noise_multiplier=2.0, sample_rate=1.0)
    enc = plain.get_epsilon("1e-5", digits=10)
    ref = _gaussian_eps(mpmath.sqrt(5) / 2, mpmath.mpf("1e-5"))
    assert mpmath.mpf(enc.lower.numerator) / enc.lower.denominator <= ref
    assert ref <= mpmath.mpf(enc.upper.numerator) / enc.upper.denominator


def test_step_degenerate_values_and_relation() -> None:
    acc = Accountant()
    acc.step(noise_multiplier=1.0, sample_rate=0.0)  # nothing is ever sampled: nothing composed
    assert acc.get_epsilon(0, digits=5).upper == 0
    acc.step(noise_multiplier=0.0, sample_rate=1.0)  # no noise, every record used: eps = +inf
    assert acc.get_epsilon("0.5", digits=5).is_infinite
    rep = Accountant(relation="replace-one")
    rep.step(noise_multiplier=1, sample_rate="1/100")
    assert rep.composition == Composition.of("gaussian:sigma=1,q=1/100,relation=replace-one")
    for bad in ({"noise_multiplier": -1.0, "sample_rate": 0.5}, {"noise_multiplier": 1.0, "sample_rate": 1.5}):
        with pytest.raises(InvalidParameterError):
            Accountant().step(**bad)


def test_get_noise_multiplier_runs_an_opacus_call_unchanged() -> None:
    r = get_noise_multiplier(target_epsilon=1.0, target_delta=1e-5, sample_rate=1.0, steps=100)
    assert r.inputs["target_delta"] == format_fraction(Fraction(1e-5))  # the float's value, recorded
    delta = mpmath.mpf(Fraction(1e-5).numerator) / Fraction(1e-5).denominator
    star = _gaussian_sigma(100, mpmath.mpf(1), delta)
    assert r.fails_at is not None
    assert mpmath.mpf(r.fails_at.numerator) / r.fails_at.denominator < star  # type: ignore[union-attr]
    assert star <= mpmath.mpf(r.value.numerator) / r.value.denominator  # type: ignore[union-attr]
    assert float(r) >= r.value  # float ok: the float handed back is rounded to the safe side


def test_to_dp_event_of_an_accountant_uses_its_relation() -> None:
    pytest.importorskip("dp_accounting")
    acc = Accountant(relation="replace-one").compose("gaussian:sigma=1,q=1/4", count=10)
    acc.step(noise_multiplier=2.0, sample_rate=0.5)
    ev = to_dp_event(acc)
    def shape(c: Composition) -> list[tuple[Fraction, Fraction, str, int]]:  # sigma per unit sensitivity
        return [(m.mechanism.sigma / m.mechanism.sensitivity, m.q, m.relation, n) for m, n in c.groups]

    assert shape(from_dp_event(ev, "replace-one")) == shape(acc.composition) == [
        (Fraction(1), Fraction(1, 4), "replace-one", 10), (Fraction(2), Fraction(1, 2), "replace-one", 1)]
    with pytest.raises(InvalidParameterError, match="disagrees"):
        to_dp_event(acc, "add-remove")
    assert to_dp_event(acc, "replace-one") == ev
    assert from_dp_event(to_dp_event(Accountant().compose("laplace:scale=2", 3))) == Composition.of("laplace:scale=2,count=3")
