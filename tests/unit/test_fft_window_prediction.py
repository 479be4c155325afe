"""The float-FFT path's window prediction (``fftcost.predicted_window``, docs/pld.md §12.10) is at least
the points ``fftpower.window_for`` had to hold on one grid, over a spread of small DP-SGD rows: the
sd rule (a skewed law whose binned pair holds both tails: about 2.98 composed sd per root), the spans
rule (2 expected sampled steps: about 10 predicted single-step spans) and a delta query.  The windows
are ``window_for``'s own choice on the discretised laws, an independent computation of the prediction
(which reads only the plan's moments); the check is shown to fail with constants below the need."""

from __future__ import annotations

import time
from fractions import Fraction

import pytest

from exactdp import Composition
from exactdp.engines.pld import fftcost
from exactdp.engines.pld import fftquery as fq
from exactdp.engines.pld.fftpower import taken_windows
from exactdp.engines.pld.plan import plan, prec_for

ROWS = [("gaussian:sigma=1,q=0.001,count=2000", "eps"),    # q k = 2: the spans rule (10.1 spans needed)
        ("gaussian:sigma=0.6,q=0.3,count=10000", "eps"),   # the sd rule: 2.98 sd per root
        ("gaussian:sigma=1,count=1000", "eps"),            # steps not subsampled: 2.83
        ("gaussian:sigma=1,q=0.01,count=1000", "delta")]   # a delta query, q k = 10
AIM = 1e-3


def _shortfalls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int, int]]:
    """(row, window predicted, points needed) for each row whose one grid (the first, predicted one:
    no pre-pass, no refinement) needed more points than predicted."""
    monkeypatch.setattr(fq, "pre_grid", lambda *a, **kw: None)
    monkeypatch.setattr(fq, "_next_grid", lambda *a, **kw: None)
    # the laws truncated for 6 digits, not for the aim's 3 (``aim_digits``): the longer laws, whose
    # windows the constants were measured on (shorter laws need no more points)
    monkeypatch.setattr(fq, "aim_digits", lambda aim, digits, sampled=0: digits)
    out = []
    for row, query in ROWS:
        comp = Composition.of([row])
        pl = plan(comp)
        delta = query == "delta"
        h = fq.first_grid(pl, AIM, prec_for(6, Fraction(1, 10**20 if delta else 10**5)))
        if delta:
            fq.fft_delta(comp, Fraction(1), AIM, 6, time.monotonic() + 60)
        else:
            fq.fft_epsilon(comp, Fraction(1, 10**5), AIM, 6, time.monotonic() + 60)
        need, window = taken_windows(), fftcost.predicted_window(pl, h, AIM)
        assert need > 0
        if window < need:
            out.append((row, window, need))
    return out


def test_the_predicted_window_holds_the_points_needed(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _shortfalls(monkeypatch) == []


@pytest.mark.parametrize(("sds", "spans"), [(1.5, fftcost.WINDOW_SPANS), (2.9, 5)])
def test_the_check_fails_with_constants_below_the_need(monkeypatch: pytest.MonkeyPatch, sds: float,
                                                         spans: int) -> None:
    """1.5 sd per root misses the sd rule's row; the constants before the refit (2.9 sd per root, 5
    spans at any q k) missed the row of 2 expected sampled steps (2^16 predicted, 96,822 points needed)."""
    monkeypatch.setattr(fftcost, "WINDOW_SDS_PER_ROOT", sds)
    monkeypatch.setattr(fftcost, "WINDOW_SPANS", spans)
    missed = {row for row, _, _ in _shortfalls(monkeypatch)}
    assert missed
    if spans == 5:
        assert "gaussian:sigma=1,q=0.001,count=2000" in missed
    else:
        assert "gaussian:sigma=0.6,q=0.3,count=10000" in missed
