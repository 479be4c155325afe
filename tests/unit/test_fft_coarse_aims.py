"""The float-FFT path at coarse widths (issue 26, stop 42; docs/pld.md §12.4, §12.6, §12.7): an eps query
asked for a relative width sizes its truncations for that width (``fftquery.aim_digits``), and the
windows aim at ``log(aim) - 12`` (``fftcost.path_log_target``), both where the expected number of
sampled steps is at least ``fftcost.MANY_SAMPLED``; the binned pair's tilt is aimed by its cells' own
offsets (``fftcompose._low_theta``).

Every bracket is checked against a reference independent of the path: the closed form of k Gaussian
steps in mpmath at 50 digits, or the exact-product engine (``fft_path(False)``).  Two tests show the
limits are needed: with the threshold at 0 a row of 3 expected sampled steps certifies no upper end on
its grid, and with the pair aimed half a cell per step low (the rule before) a row loses its lower end."""

from __future__ import annotations

import time
from fractions import Fraction

import mpmath
import pytest

from exactdp import Composition
from exactdp.core import progress
from exactdp.engines.pld import fftcompose, fftcost, fftquery
from exactdp.engines.pld.engine import pld_epsilon
from exactdp.engines.pld.fftquery import ALGORITHM_FFT, fft_path
from exactdp.engines.pld.plan import tau_for

_MP = mpmath.mp.clone()
_MP.dps = 50


def _m(x: Fraction) -> mpmath.mpf:
    return _MP.mpf(x.numerator) / x.denominator


def _gaussian_delta(sigma: str, k: int, eps: mpmath.mpf) -> mpmath.mpf:
    """delta(eps) of k Gaussian steps of noise sigma: one Gaussian of mu = sqrt(k) / sigma."""
    mu = _MP.sqrt(k) / _MP.mpf(sigma)
    return _MP.ncdf(-eps / mu + mu / 2) - _MP.exp(eps) * _MP.ncdf(-eps / mu - mu / 2)


def _eps(spec: str, delta: str, width: str, seconds: float = 60):
    with progress.task("coarse", max_seconds=seconds, stream=None):
        return pld_epsilon(Composition.of([spec]), Fraction(delta), digits=8, rel_width=Fraction(width))


@pytest.mark.parametrize(("sigma", "k", "delta", "width"), [("3", 50, "1e-5", "1e-2"), ("1.5", 400, "1e-8", "3e-3"),
                                                            ("0.8", 2000, "1e-3", "3e-2"), ("5", 10000, "1e-6", "1e-3")])
def test_coarse_widths_of_gaussian_steps_hold_the_closed_form(sigma: str, k: int, delta: str, width: str) -> None:
    """k unsubsampled Gaussian steps (k >= 30 sampled steps: both economies apply): the path's bracket
    is at most the width asked and holds the optimum, ``delta(lo) >= delta_g >= delta(hi)``."""
    e = _eps(f"gaussian:sigma={sigma},count={k}", delta, width)
    lo, hi = Fraction(e.lower), Fraction(e.upper)
    assert e.algorithm == ALGORITHM_FFT and 0 < lo and hi - lo <= Fraction(width) * lo
    dg = _m(Fraction(delta))
    assert _gaussian_delta(sigma, k, _m(lo)) >= dg >= _gaussian_delta(sigma, k, _m(hi))


def test_a_dpsgd_coarse_width_truncates_for_the_width_and_meets_the_exact_products(monkeypatch) -> None:
    """DP-SGD sigma 1, q 0.05 x 1000 (q k = 50) at a width of 3e-3 asked with 8 print digits: every
    single-step law is cut at the tau of 3 digits (``aim_digits``), not of 8, and the bracket meets the
    exact products' at 3 digits.  The same query at q 0.005 (q k = 5) keeps the tau of its 8 digits."""
    taus: list[Fraction] = []
    orig = fftcompose.step_laws

    def recording(model, h, tau, prec, tight=0):  # type: ignore[no-untyped-def]
        taus.append(tau)
        return orig(model, h, tau, prec, tight)

    monkeypatch.setattr(fftcompose, "step_laws", recording)
    spec, dg = "gaussian:sigma=1,q=0.05,count=1000", Fraction(1, 10**5)
    e = _eps(spec, "1e-5", "3e-3")
    assert e.algorithm == ALGORITHM_FFT and Fraction(e.upper) - Fraction(e.lower) <= Fraction(3, 1000) * Fraction(e.lower)
    assert taus and set(taus) == {tau_for(3, dg, 8)}
    with progress.task("coarse", max_seconds=60, stream=None), fft_path(False):
        ref = pld_epsilon(Composition.of([spec]), dg, digits=3)
    assert Fraction(e.lower) <= Fraction(ref.upper) and Fraction(ref.lower) <= Fraction(e.upper)
    taus.clear()
    few = _eps("gaussian:sigma=1,q=0.005,count=1000", "1e-5", "3e-3")
    assert few.algorithm == ALGORITHM_FFT and taus and set(taus) == {tau_for(8, dg, 8)}


def test_the_benchmark_row_halves_its_upper_windows_and_meets_the_exact_products(monkeypatch) -> None:
    """DP-SGD sigma 2, q 0.001 x 10^5 (q k = 100) at 3.2e-3, the row of ``benchmarks/bench_dpsgd.py`` that
    stop 42 worked on: every window is 2^14 points (2^15 at the e^-23 tail), and the bracket meets the
    exact products' (3 digits)."""
    windows: list[tuple[str, int]] = []
    orig = fftcompose.window_for

    def recording(t, k, lt=-23.0, rate=0.0, also=()):  # type: ignore[no-untyped-def]
        got = orig(t, k, lt, rate, also)
        windows.append(("pair" if also else "upper", got[0]))
        return got

    monkeypatch.setattr(fftcompose, "window_for", recording)
    spec = "gaussian:sigma=2,q=0.001,count=100000"
    e = _eps(spec, "1e-5", "3.2e-3")
    assert e.algorithm == ALGORITHM_FFT and Fraction(e.upper) - Fraction(e.lower) <= Fraction("3.2e-3") * Fraction(e.lower)
    assert sorted(windows) == [("pair", 1 << 14), ("upper", 1 << 14), ("upper", 1 << 14)], windows
    with progress.task("coarse", max_seconds=120, stream=None), fft_path(False):
        ref = pld_epsilon(Composition.of([spec]), Fraction(1, 10**5), digits=3)
    assert Fraction(e.lower) <= Fraction(ref.upper) and Fraction(ref.lower) <= Fraction(e.upper)


def _one_grid(spec: str, aim: float) -> tuple[Fraction, Fraction | None]:
    with progress.task("coarse", max_seconds=60, stream=None):
        return fftquery.fft_epsilon(Composition.of([spec]), Fraction(1, 10**5), aim, 8, time.monotonic() + 60)


def test_few_sampled_steps_keep_the_tails_of_their_digits(monkeypatch) -> None:
    """sigma 0.8, q 0.001 x 3000 (q k = 3) at 1e-4, one grid: with the threshold at 0 (both economies
    taken) the shorter "add" law's window misses its upper tail past the query and no upper end is
    certified; with it, the grid certifies both ends (docs/pld.md §12.7)."""
    monkeypatch.setattr(fftquery, "_next_grid", lambda *a, **kw: None)
    spec = "gaussian:sigma=0.8,q=0.001,count=3000"
    lo, hi = _one_grid(spec, 1e-4)
    assert hi is not None and 0 < lo < hi
    monkeypatch.setattr(fftquery, "MANY_SAMPLED", 0)
    monkeypatch.setattr(fftcost, "MANY_SAMPLED", 0)
    assert _one_grid(spec, 1e-4)[1] is None


def test_the_binned_pair_is_aimed_by_its_cells_offsets(monkeypatch) -> None:
    """sigma 1, q 0.01 x 10^4 at 3e-2 (q k = 100), one grid (h = 1/168): as it is, both ends are certified
    and the pair's window is 2^11 points (2^12 before stop 42); with the pair's tilt aimed half a cell
    per step below eps (the rule before) its crossing with eps lies below the window's start and no
    lower end is certified (docs/pld.md §12.6)."""
    monkeypatch.setattr(fftquery, "_next_grid", lambda *a, **kw: None)
    windows: list[int] = []
    orig = fftcompose.window_for

    def recording(t, k, lt=-23.0, rate=0.0, also=()):  # type: ignore[no-untyped-def]
        got = orig(t, k, lt, rate, also)
        if also:
            windows.append(got[0])
        return got

    monkeypatch.setattr(fftcompose, "window_for", recording)
    spec = "gaussian:sigma=1,q=0.01,count=10000"
    lo, hi = _one_grid(spec, 3e-2)
    assert hi is not None and 0 < lo < hi and windows and max(windows) <= 2048, windows

    def half_a_cell(p, qt, k, h, target):  # type: ignore[no-untyped-def]
        return fftcompose.choose_theta(p, k, h, target - k * float(h) / 2)

    monkeypatch.setattr(fftcompose, "_low_theta", half_a_cell)
    lo2, hi2 = _one_grid(spec, 3e-2)
    assert lo2 == 0 and hi2 is not None
