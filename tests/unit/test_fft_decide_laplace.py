"""Decisions of k copies of one Laplace mechanism through the float-FFT path (issue 26, docs/pld.md §12.7).

The reference is independent: the exact-product engine (``fft_path(False)``: fixed-point polynomial
products, no float FFT) brackets eps at 8 digits; claims 1e-7 outside that bracket are decided through
the FFT path (counted), each the right way.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

import exactdp.engines.pld.fftdecide as fd
from exactdp import Composition
from exactdp.core import progress
from exactdp.engines.pld.engine import pld_epsilon
from exactdp.engines.pld.fftquery import fft_path
from exactdp.testing import UnsoundClaimError, assert_sound

SPEC = "laplace:scale=10,count=100"
DG = Fraction(1, 10**6)


def test_laplace_claims_near_the_optimum_are_decided_by_the_fft_path(monkeypatch) -> None:
    with fft_path(False), progress.task("t", max_seconds=300, stream=None):
        ref = pld_epsilon(Composition.of([SPEC]), DG, digits=8)
    assert ref.upper - ref.lower <= Fraction(1, 10**7) * ref.lower
    calls: list[Fraction] = []
    real = fd._order_at

    def counting(*a, **kw):
        calls.append(a[1])
        return real(*a, **kw)

    monkeypatch.setattr(fd, "_order_at", counting)
    above = float(ref.upper * (1 + Fraction(1, 10**7)))  # float ok: a claim, rounded below
    below = float(ref.lower * (1 - Fraction(1, 10**7)))  # float ok: a claim
    assert_sound(above, composition=SPEC, delta_g="1e-6")
    assert calls, "the FFT decision path was not taken"
    with pytest.raises(UnsoundClaimError):
        assert_sound(below, composition=SPEC, delta_g="1e-6")
