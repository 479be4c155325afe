"""Containment of the float-FFT path's brackets (docs/pld.md §12): a fast subset of the stop-41 sweep.

Rows drawn from the sweep (sigma in [0.5, 5], q none or in [0.001, 0.5], k in [16, 20000], an eps query
at delta_g in [1e-12, 1e-2] or a delta query at eps_g in [0.1, 10]).  Every bracket the path returns
must contain the optimum; two references independent of it check that: the exact-product engine on the
same composition (``fft_path(False)``, docs/pld.md §7: the two brackets must intersect) and, for k
unsubsampled Gaussian steps (one Gaussian of mu = sqrt(k) / sigma), the closed form
``Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)`` in mpmath at 50 digits.
"""

from __future__ import annotations

from fractions import Fraction

import mpmath
import pytest

from exactdp import Composition
from exactdp.core import progress
from exactdp.core.enclosure import Enclosure
from exactdp.engines.pld.engine import pld_delta, pld_epsilon
from exactdp.engines.pld.fftquery import fft_path

_MP = mpmath.mp.clone()
_MP.dps = 50


def _m(x: Fraction) -> mpmath.mpf:
    return _MP.mpf(x.numerator) / x.denominator


def _gaussian_delta(sigma: str, k: int, eps: mpmath.mpf) -> mpmath.mpf:
    """The optimal delta(eps) of k Gaussian steps of noise sigma (sensitivity 1): one Gaussian of
    mu = sqrt(k) / sigma (docs/mathematics.md), in mpmath at 50 digits."""
    mu = _MP.sqrt(k) / _MP.mpf(sigma)
    return _MP.ncdf(-eps / mu + mu / 2) - _MP.exp(eps) * _MP.ncdf(-eps / mu - mu / 2)


def _spec(sigma: str, q: str | None, k: int) -> str:
    return f"gaussian:sigma={sigma}" + (f",q={q}" if q else "") + f",count={k}"


def _query(spec: str, kind: str, target: str, digits: int, fft: bool, seconds: float) -> Enclosure:
    comp = Composition.of([spec])
    with progress.task("containment", max_seconds=seconds, stream=None), fft_path(fft):
        if kind == "eps":
            return pld_epsilon(comp, Fraction(target), digits=digits)
        return pld_delta(comp, Fraction(target), digits=digits)


def _ends(e: Enclosure) -> tuple[Fraction, Fraction]:
    assert isinstance(e.lower, Fraction) and isinstance(e.upper, Fraction)
    return e.lower, e.upper


def _holds_closed_form(sigma: str, k: int, kind: str, target: str, lo: Fraction, hi: Fraction) -> bool:
    """Whether [lo, hi] holds the closed form's optimum: for delta directly; for eps (delta decreasing
    in eps) exactly when delta(lo) >= delta_g >= delta(hi), the lower end 0 always holding."""
    if kind == "delta":
        return _m(lo) <= _gaussian_delta(sigma, k, _m(Fraction(target))) <= _m(hi)
    d = _m(Fraction(target))
    return (lo == 0 or _gaussian_delta(sigma, k, _m(lo)) >= d) and _gaussian_delta(sigma, k, _m(hi)) <= d


# (sigma, q, k, query, target, digits, seconds): sweep rows whose two brackets take < 1 s each
ROWS = [
    ("0.583", None, 45, "delta", "1.860", 6, 60),
    ("2.298", None, 31, "eps", "3.67e-6", 6, 60),
    ("2.162", None, 322, "eps", "4.60e-7", 6, 60),
    ("4.828", None, 362, "delta", "6.832", 6, 60),
    ("1.713", None, 536, "eps", "1.73e-7", 3, 60),
    ("0.689", "0.0745", 74, "eps", "2.09e-3", 6, 60),
    ("1.584", "0.0301", 1357, "eps", "1.66e-11", 6, 60),
    ("1.074", "0.0588", 3354, "delta", "4.242", 3, 60),
    ("1.377", "0.425", 8402, "delta", "8.974", 3, 60),
    # a delta below 1e-308 of its upper end (the relative width past the float range: it raised
    # OverflowError in fftquery._width before stop 41)
    ("3", "0.01", 300, "delta", "5", 3, 60),
    # a short budget: coarse grids and an early stop
    ("1.2", "0.02", 2000, "eps", "1e-6", 6, 2),
]


@pytest.mark.parametrize("sigma,q,k,kind,target,digits,seconds", ROWS)
def test_the_fft_bracket_holds_the_optimum(sigma: str, q: str | None, k: int, kind: str, target: str,
                                           digits: int, seconds: float) -> None:
    spec = _spec(sigma, q, k)
    fft = _query(spec, kind, target, digits, True, seconds)
    assert fft.algorithm == "pld-fft"
    lo, hi = _ends(fft)
    assert lo <= hi
    exact = _query(spec, kind, target, 3, False, 60)
    assert exact.algorithm in ("pld", "pld-lattice")
    e_lo, e_hi = _ends(exact)
    assert lo <= e_hi and e_lo <= hi  # both hold the optimum: they intersect
    if q is None:
        assert _holds_closed_form(sigma, k, kind, target, lo, hi)


def test_a_bracket_from_the_wrong_law_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The check can fail: with the binned (dominated) law powered in place of the connect-the-dots
    (dominating) one, the upper end comes out below the closed form's delta (the row's bracket is
    about 6e-11 wide; the binned law's losses sit up to one cell lower)."""
    from exactdp.engines.pld import fftcompose

    sigma, q, k, kind, target, digits, seconds = ROWS[0]
    laws = fftcompose.step_laws
    monkeypatch.setattr(fftcompose, "step_laws", lambda *a, **kw: (laws(*a, **kw)[1],) * 2)
    fft = _query(_spec(sigma, q, k), kind, target, digits, True, seconds)
    assert fft.algorithm == "pld-fft"
    lo, hi = _ends(fft)
    assert not _holds_closed_form(sigma, k, kind, target, lo, hi)
    assert _m(hi) < _gaussian_delta(sigma, k, _m(Fraction(target)))


def test_a_delta_near_1_far_below_the_mean_gets_its_digits() -> None:
    """6666 Gaussian steps of sigma 1.403 (mu = 58) at eps 1.794, 29 sd below the composed mean: delta
    is 1 - 10^-150 or so.  The binned Q's missing bottom (docs/pld.md §12.4, part (iii)) was charged
    1220 times the query's weight, and the path answered [0, 1] at 6 digits (stop 41's sweep); its
    second form charges the mass below the window."""
    sigma, k, target = "1.403", 6666, "1.794"
    fft = _query(_spec(sigma, None, k), "delta", target, 6, True, 60)
    assert fft.algorithm == "pld-fft"
    lo, hi = _ends(fft)
    assert _holds_closed_form(sigma, k, "delta", target, lo, hi)
    assert fft.digits >= 6 and lo > 0


def test_a_delta_far_below_1e_20_is_not_held_at_the_truncation() -> None:
    """230 steps of sigma 4.443, q 0.0871 at eps 3.799: delta 1.64e-32.  The truncations' mass was
    set from 10^-20 whatever the delta (the upper end stayed at 8.9e-32: no digit); it is set from the
    delta reached (fftquery.fft_delta).  The exact products at 6 digits (4 certified) meet it."""
    spec = _spec("4.443", "0.0871", 230)
    fft = _query(spec, "delta", "3.799", 6, True, 60)
    assert fft.algorithm == "pld-fft" and fft.digits >= 3
    lo, hi = _ends(fft)
    exact = _query(spec, "delta", "3.799", 3, False, 60)
    e_lo, e_hi = _ends(exact)
    assert lo <= e_hi and e_lo <= hi

