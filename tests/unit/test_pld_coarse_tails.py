"""The single-step laws' coarse upper tails (exactdp/engines/pld/edges.py ``coarse_bins``,
``fftcompose.coarse_tail``; docs/pld.md §12.12, stop 43): above the edge where the P-tail falls below
``tau / (2 w h)`` the bins are w grid steps wide, spread to their ends above (connect the dots) and
binned below.

Every check is against mpmath at 50 digits (the subsampled Gaussian's privacy profile is a difference
of normal tails at one threshold, and two steps a quadrature over the first step's output): the laws
of both orders bracket delta(eps) at eps inside the coarse bins, for one step and composed twice;
with the wide bins left out of the spread the upper law no longer dominates there, so the check can
fail."""

from __future__ import annotations

from fractions import Fraction

import mpmath
import pytest
from flint import arb, ctx
from mpref import subsampled_gaussian_delta1, subsampled_gaussian_delta2  # tests/unit/mpref.py

from exactdp.engines.pld import discrete, edges, fftcompose
from exactdp.engines.pld.laws import compose
from exactdp.engines.pld.models import GaussianPair, Reversed, Subsampled
from exactdp.engines.pld.queries import delta_lower, delta_upper

_MP = mpmath.mp.clone()
_MP.dps = 50
SIGMA, Q, H, TAU = Fraction(2), Fraction(1, 1000), Fraction(1, 14207), Fraction(1, 64 * 10**12)


def _delta(t: mpmath.mpf, order: str, steps: int) -> mpmath.mpf:
    """delta(t) of one or two Poisson-subsampled Gaussian steps (noise SIGMA, rate Q), at 50 digits."""
    with mpmath.workdps(50):
        s, q = mpmath.mpf(2), mpmath.mpf(1) / 1000
        return (subsampled_gaussian_delta1 if steps == 1 else subsampled_gaussian_delta2)(s, q, t, order)


def _laws(order: str) -> tuple:
    model = Subsampled(GaussianPair(1 / SIGMA), Q)
    return fftcompose.step_laws(model if order == "remove" else Reversed(model), H, TAU, 64)


def _wide(order: str) -> dict[int, int]:
    model = Subsampled(GaussianPair(1 / SIGMA), Q)
    jmin, jmax = discrete.tail_range(model, H, TAU)
    w, tail = fftcompose.coarse_tail(H, TAU) or (1, Fraction(0))
    with ctx.workprec(64):
        got = edges.coarse_bins(model if order == "remove" else Reversed(model), H, *(
            (jmin, jmax) if order == "remove" else (-jmax, -jmin)), w, tail, taylor=True)
    return got[3]


def _misses(up, low, steps: int, order: str, points: list[Fraction]) -> list[Fraction]:
    bad = []
    with ctx.workprec(128):
        for e in points:
            want = _delta(_MP.mpf(e.numerator) / e.denominator, order, steps)
            eb = arb(e.numerator) / e.denominator
            hi, lo = delta_upper(up, eb), delta_lower(low, eb)
            if not (_MP.mpf(hi.upper().str(40, radius=False)) * (1 + _MP.mpf(10) ** -35) >= want
                    >= _MP.mpf(lo.lower().str(40, radius=False)) * (1 - _MP.mpf(10) ** -35)):
                bad.append(e)
    return bad


def _points(order: str, n: int = 9) -> list[Fraction]:
    """Losses inside the coarse bins (the remove order's upper tail; the add order's lower tail)."""
    wide = sorted(_wide(order))
    assert len(wide) >= 4  # the grid does have a coarse tail
    picks = [wide[i * (len(wide) - 1) // (n - 1)] for i in range(n)]
    return [(a + Fraction(2 * i + 3, 7)) * H for i, a in enumerate(picks)]


@pytest.mark.parametrize("order", ["remove", "add"])
def test_one_step_laws_bracket_delta_inside_the_coarse_tail(order: str) -> None:
    up, low = _laws(order)
    assert _misses(up, low, 1, order, _points(order)) == []


@pytest.mark.parametrize("order", ["remove", "add"])
def test_two_steps_bracket_delta_past_the_coarse_tail(order: str) -> None:
    up, low = _laws(order)
    with ctx.workprec(128):
        up2, low2 = compose(up, up), compose(low, low)
    pts = [2 * p for p in _points(order, 5)]
    assert _misses(up2, low2, 2, order, pts) == []


def test_wide_bins_left_out_of_the_spread_are_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The upper law with the wide bins' masses left out of the spread (as if the coarse tail were
    dropped, not moved): delta above is missed inside the coarse tail."""
    real = discrete._connect_the_dots

    def without(h, jmin, Pb, Qt, PL, PR, QRt, p_inf, wide=None):  # type: ignore[no-untyped-def]
        zero = arb(0)
        keep = [zero if jmin + i in (wide or {}) else x for i, x in enumerate(Pb)]
        keep_q = [zero if jmin + i in (wide or {}) else x for i, x in enumerate(Qt)]
        return real(h, jmin, keep, keep_q, PL, PR, QRt, p_inf, {})

    monkeypatch.setattr(discrete, "_connect_the_dots", without)
    monkeypatch.setattr(edges, "_QUADS", {})
    monkeypatch.setattr(edges, "_BINS", {})
    up, low = _laws("remove")
    assert len(_misses(up, low, 1, "remove", _points("remove"))) >= 3
