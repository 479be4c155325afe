"""Issue 27 §6: the dp_events() strategy, and properties over the DpEvents it draws.

- round trip: from_dp_event(to_dp_event(from_dp_event(e))) is the same composition (the floats of a
  drawn event are exact binary values, so nothing may change);
- dp_accounting's RdpAccountant eps is a proven upper bound (an independent computation: its RDP
  conversion), so the kit must find it sound for every event it supports;
- dp_accounting's PLDAccountant eps is judged and its verdict recorded (the peer's accuracy is not
  required: the test checks the verdict is one of the kit's, never a pass/fail on the peer).
"""

from __future__ import annotations

import importlib.util
import sys

import pytest
from hypothesis import HealthCheck, assume, event, given, settings

from exactdp import from_accountant, from_dp_event, to_dp_event
from exactdp.core.errors import MissingExtraError
from exactdp.testing import VERDICTS, Oracle, assert_sound, judge

pytestmark = pytest.mark.skipif(importlib.util.find_spec("dp_accounting") is None,
                                reason="needs dp_accounting (peers extra)")


def events(**kw):  # type: ignore[no-untyped-def]
    from exactdp.testing.strategies import dp_events

    return dp_events(**kw)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(events())
def test_round_trip_is_exact(e: object) -> None:
    c = from_dp_event(e)
    assert from_dp_event(to_dp_event(c)) == c


def test_binary_rr_and_subsampled_mixture_round_trip() -> None:
    """The two shapes the strategy found: binary randomized response (read as the generic pure pair,
    eps = log 3) and a Poisson-subsampled mixture (read as a mixture with sensitivity 0 added)."""
    import dp_accounting as dp

    for e in (dp.RandomizedResponseDpEvent(0.5, 2),
              dp.PoissonSampledDpEvent(0.1, dp.dp_event.MixtureOfGaussiansDpEvent(1.0, [1.0, 2.0], [0.75, 0.25]))):
        c = from_dp_event(e)
        assert from_dp_event(to_dp_event(c)) == c


def test_strategy_names_the_missing_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    from exactdp.testing.strategies import dp_events

    monkeypatch.setitem(sys.modules, "dp_accounting", None)
    with pytest.raises(MissingExtraError, match="dp_accounting"):
        dp_events()


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(events(mixtures=False, max_count=3))
def test_rdp_accountant_eps_is_sound(e: object) -> None:
    from dp_accounting.rdp.rdp_privacy_accountant import RdpAccountant

    acc = RdpAccountant()
    try:
        acc.compose(e)
        eps = acc.get_epsilon(1e-5)
    except Exception:  # noqa: BLE001 - an event the RDP accountant does not support (discrete Laplace, RR)
        assume(False)
    v = assert_sound(eps, composition=acc, delta_g="1e-5", max_seconds=3)
    event(v.verdict)


@pytest.mark.slow
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(events(mixtures=False, max_depth=1, max_count=3))
def test_pld_accountant_verdict(e: object) -> None:
    from dp_accounting.pld.pld_privacy_accountant import PLDAccountant

    acc = PLDAccountant()
    try:
        acc.compose(e)
        eps = acc.get_epsilon(1e-5)
    except Exception:  # noqa: BLE001 - an event the peer does not support
        assume(False)
    j = judge(eps, acc, delta_g="1e-5", oracle=Oracle(max_seconds=2))
    assert j.verdict in VERDICTS and j.composition == from_accountant(acc)
    event(j.verdict)
