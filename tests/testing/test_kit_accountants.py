"""Issue 27 §5-§6: the kit judges a DpEvent or an accountant (dp_accounting's, Opacus's, exactdp's).

What an accountant holds is read into a composition in one place (``exactdp.from_accountant``); each
test compares that reading with the composition built by hand from the floats' exact binary values
(Fraction arithmetic), and judges against the Gaussian closed form computed here in mpmath
(delta(eps) = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu), mu^2 = sum of 1/sigma^2), never the
engine against itself.  dp_accounting's real accountants are used where it is installed; Opacus is
stood in for by classes with its attribute names (the tests need no torch).
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import mpmath
import pytest

import exactdp
from exactdp import Accountant, Composition, from_accountant
from exactdp.core.errors import InvalidParameterError
from exactdp.model.mechanisms import DiscreteLaplace, Gaussian, Laplace, MixtureOfGaussians, NonPrivate, PoissonSampled
from exactdp.testing import (
    UnsoundClaimError,
    assert_rdp_curve_sound,
    assert_rdp_sound,
    assert_sound,
    assert_sound_curve,
    assert_sound_delta,
    assert_sound_pair,
    assert_tight,
    judge,
    looseness_report,
)

needs_dp = pytest.mark.skipif(importlib.util.find_spec("dp_accounting") is None,
                              reason="needs dp_accounting (peers extra)")


def gaussian_eps(mu2: Fraction, delta: str, dps: int = 40) -> mpmath.mpf:
    """The optimal eps of a mu-GDP Gaussian at delta, by bisection on the closed form in mpmath."""
    with mpmath.workdps(dps):
        mu = mpmath.sqrt(mpmath.mpf(mu2.numerator) / mu2.denominator)
        d = mpmath.mpf(delta)

        def dlt(e: Any) -> Any:
            return mpmath.ncdf(mu / 2 - e / mu) - mpmath.exp(e) * mpmath.ncdf(-mu / 2 - e / mu)

        return mpmath.findroot(lambda e: dlt(e) - d, (mpmath.mpf(0), mpmath.mpf(50)), solver="bisect")


def exact(x: float) -> Fraction:
    return Fraction(*x.as_integer_ratio())


# -- Opacus stand-ins (attribute names of opacus.accountants and PrivacyEngine) ---------------------------

@dataclass
class RDPAccountant:
    history: list[tuple[float, float, int]] = field(default_factory=list)

    def step(self, *, noise_multiplier: float, sample_rate: float) -> None:  # Opacus merges equal steps
        if self.history and self.history[-1][:2] == (noise_multiplier, sample_rate):
            nm, q, n = self.history.pop()
            self.history.append((nm, q, n + 1))
        else:
            self.history.append((noise_multiplier, sample_rate, 1))


@dataclass
class PrivacyEngine:
    accountant: RDPAccountant


def test_opacus_history_reads_as_subsampled_gaussians() -> None:
    acc = RDPAccountant()
    for _ in range(30):
        acc.step(noise_multiplier=1.1, sample_rate=0.01)
    acc.step(noise_multiplier=0.7, sample_rate=1.0)
    want = Composition(((PoissonSampled(Gaussian(exact(1.1)), exact(0.01)), 30), (Gaussian(exact(0.7)), 1)))
    assert from_accountant(acc) == want
    assert from_accountant(PrivacyEngine(acc)) == want
    assert exactdp.testing.as_composition(acc) == want


def test_opacus_gaussian_history_judged_against_closed_form() -> None:
    acc = RDPAccountant([(2.0, 1.0, 3), (4.0, 1.0, 4)])  # mu^2 = 3/4 + 4/16 = 1
    ref = gaussian_eps(Fraction(1), "1e-5")
    above = float(ref * (1 + mpmath.mpf("1e-9")))
    below = float(ref * (1 - mpmath.mpf("1e-6")))
    assert assert_sound(above, composition=acc, delta_g="1e-5").sound
    assert assert_sound(above, composition=PrivacyEngine(acc), delta_g="1e-5").sound
    with pytest.raises(UnsoundClaimError):
        assert_sound(below, composition=acc, delta_g="1e-5")
    with pytest.raises(InvalidParameterError, match="disagrees"):
        assert_sound(above, composition=acc, delta_g="1e-5", relation="replace-one")


def test_exactdp_accountant_read_with_its_relation_and_non_private() -> None:
    acc = Accountant().compose("gaussian:sigma=2", 4)
    assert from_accountant(acc) == Composition(((Gaussian(2), 4),))
    ref = gaussian_eps(Fraction(1), "1e-6")
    assert assert_tight(float(ref * (1 + mpmath.mpf("1e-12"))), composition=acc, delta_g="1e-6", rel="1e-9").sound
    acc.compose(exactdp.NonPrivate() if hasattr(exactdp, "NonPrivate") else NonPrivate())
    with pytest.raises(UnsoundClaimError):  # a non-private run: no finite eps holds
        assert_sound(1000, composition=acc, delta_g="1e-6")
    assert assert_sound(float("inf"), composition=acc, delta_g="1e-6").sound


def test_relation_refused_for_plain_compositions() -> None:
    with pytest.raises(InvalidParameterError, match="relation"):
        assert_sound(3, composition=("0.1", 0, 30), delta_g="1e-3", relation="replace-one")


# -- DpEvents by hand (dp_accounting's class names and fields) ----------------------------------------------

@dataclass
class NonPrivateDpEvent:
    pass


@dataclass
class PoissonSampledDpEvent:
    sampling_probability: float
    event: Any


def test_subsampled_non_private_event_is_judged_exactly() -> None:
    """A Poisson subsample (rate q) of a non-private run is private at delta = q for every eps >= 0 (the
    record is absent w.p. 1 - q, revealed w.p. q: total variation q), so delta(0) = q exactly."""
    ev = PoissonSampledDpEvent(0.25, NonPrivateDpEvent())
    assert assert_sound_delta(0.25, composition=ev, eps_g=0).sound
    with pytest.raises(UnsoundClaimError):
        assert_sound_delta(0.2499, composition=ev, eps_g=0)
    with pytest.raises(UnsoundClaimError):  # not sampled: nothing finite holds
        assert_sound(1000, composition=NonPrivateDpEvent(), delta_g="0.5")
    acc = Accountant().compose(ev)  # the accountant keeps it exactly too
    d = acc.get_delta(0)
    assert d.lower == d.upper == Fraction(1, 4) and from_accountant(acc) == from_accountant(ev)
    assert assert_sound_delta(0.25, composition=acc, eps_g=0).sound


# -- the real dp_accounting --------------------------------------------------------------------------------

@needs_dp
def test_dp_accounting_accountants_read_exactly() -> None:
    import dp_accounting as dp
    from dp_accounting import dp_event as de
    from dp_accounting.pld.pld_privacy_accountant import PLDAccountant
    from dp_accounting.rdp.rdp_privacy_accountant import RdpAccountant

    pld = PLDAccountant()
    pld.compose(dp.PoissonSampledDpEvent(0.01, dp.GaussianDpEvent(1.1)), 50)
    pld.compose(de.DiscreteLaplaceDpEvent(0.5, 1), 3)
    pld.compose(dp.LaplaceDpEvent(7.0))
    want = Composition(((PoissonSampled(Gaussian(exact(1.1)), exact(0.01)), 50),
                        (DiscreteLaplace(Fraction(1, 2), 1), 3), (Laplace(7), 1)))
    assert from_accountant(pld) == want
    mog = dp.ComposedDpEvent([de.MixtureOfGaussiansDpEvent(1.3, [0, 1, 2], [0.5, 0.3, 0.2]), pld.ledger])
    assert from_accountant(mog) == Composition(
        ((MixtureOfGaussians(exact(1.3), [0, 1, 2], [Fraction(1, 2), exact(0.3), exact(0.2)]), 1), *want.groups))
    rdp = RdpAccountant(neighboring_relation=dp.NeighboringRelation.REPLACE_ONE)
    rdp.compose(dp.GaussianDpEvent(1.5), 10)
    assert from_accountant(rdp) == Composition(((Gaussian(exact(1.5), 2), 10),))  # replace-one: sensitivity 2
    with pytest.raises(InvalidParameterError, match="disagrees"):
        from_accountant(rdp, "add-remove")


@needs_dp
def test_rdp_accountant_eps_is_sound_and_understated_eps_is_not() -> None:
    import dp_accounting as dp
    from dp_accounting.rdp.rdp_privacy_accountant import RdpAccountant

    acc = RdpAccountant()
    acc.compose(dp.GaussianDpEvent(2.0), 4)  # mu^2 = 1
    eps = acc.get_epsilon(1e-5)
    ref = gaussian_eps(Fraction(1), "1e-5")
    assert eps >= ref  # the RDP conversion is an upper bound (independent check of the verdict below)
    assert assert_sound(eps, composition=acc, delta_g="1e-5").sound
    assert assert_sound_pair(eps, 1e-5, composition=acc).sound
    understated = float(ref) * 0.9  # a deliberately understated eps for the same ledger
    with pytest.raises(UnsoundClaimError, match="UNSOUND"):
        assert_sound(understated, composition=acc, delta_g="1e-5")
    with pytest.raises(UnsoundClaimError):
        assert_sound_curve({"1e-3": 10, "1e-5": understated}, composition=acc)
    assert [r.verdict for r in looseness_report({"1e-5": understated}, composition=acc).rows] == ["unsound"]
    # RDP of a Gaussian of sensitivity 1 at order a is a / (2 sigma^2): 4 runs, sigma 2 -> a / 2
    assert_rdp_curve_sound([2, 3], [1.0, 1.5], composition=acc)
    with pytest.raises(UnsoundClaimError):
        assert_rdp_sound(0.99, order=2, composition=acc)


@needs_dp
def test_pld_accountant_judged_by_verdict() -> None:
    """dp_accounting's PLD eps of DP-SGD is judged; the test asserts the kit's verdict is a verdict
    (the peer's accuracy is reported, not required), and an understated eps is unsound."""
    import dp_accounting as dp
    from dp_accounting.pld.pld_privacy_accountant import PLDAccountant

    acc = PLDAccountant()
    acc.compose(dp.PoissonSampledDpEvent(0.01, dp.GaussianDpEvent(1.0)), 10)
    eps = acc.get_epsilon(1e-5)
    j = judge(eps, acc, delta_g="1e-5", oracle=exactdp.testing.Oracle(max_seconds=2))
    assert j.verdict in ("sound", "loose", "unsound-fp", "unsound", "undecided")
    assert isinstance(j.composition, Composition) and j.composition.groups[0][1] == 10
    with pytest.raises(UnsoundClaimError):
        assert_sound(eps / 2, composition=acc, delta_g="1e-5", max_seconds=2)
