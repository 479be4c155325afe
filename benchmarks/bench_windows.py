"""The points the float-FFT path's windows had to hold against the window predicted for them
(exactdp.engines.pld.fftcost.predicted_window; docs/pld.md §12.10, exactdp issue 26).

    python benchmarks/bench_windows.py            # the grid of DP-SGD rows of the refit (minutes)
    python benchmarks/bench_windows.py --quick    # a few small rows
    python benchmarks/bench_windows.py --rows "gaussian:sigma=1,q=0.01,count=10000@1e-5" ...

Each row runs exactly one grid of the path: the first grid (``fftquery.first_grid``, the one the
prediction is made for), without the pre-pass and without refinement, and records every
``window_for`` call's points (``fftpower.taken_windows`` around the call), by order and by kind
(``upper``: the upper law's power; ``pair``: the binned pair's).  Sizes, not times: deterministic.
The columns: the composed sd over h (``pl.sd / h``), ``ratio`` = points / (sd/h sqrt(-log_target))
per kind (the largest over the orders and the re-aims of the tilt), the window predicted, and
``ok`` (the prediction at least every window's points).  A row whose grid is predicted past
``--max-seconds`` (``fftcost.grid_cost``) is skipped.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from fractions import Fraction
from typing import Any

from exactdp import Composition
from exactdp.engines.pld import fftcompose, fftquery
from exactdp.engines.pld.fftcost import grid_cost, log_target, predicted_window, step_points
from exactdp.engines.pld.fftpower import taken_windows, window_for
from exactdp.engines.pld.plan import plan, prec_for

SIGMAS = (0.6, 1, 2, 4)
QS: tuple[float | None, ...] = (0.001, 0.01, 0.1, 0.3, None)
COUNTS = (100, 1000, 10**4, 10**5, 10**6)
AIMS = (1e-3, 1e-5, 1e-7)
QUICK = ["gaussian:sigma=1,q=0.01,count=1000@1e-5", "gaussian:sigma=0.6,q=0.3,count=100@1e-3",
         "gaussian:sigma=4,count=1000@1e-7", "gaussian:sigma=1,q=0.01,count=10000@1e-5#delta"]


def spec(sigma: float, q: float | None, k: int) -> str:
    return f"gaussian:sigma={sigma}" + (f",q={q}" if q is not None else "") + f",count={k}"


def measure(row: str, aim: float, delta: bool, max_seconds: float) -> dict[str, Any]:
    """One grid of the path on ``row`` at ``aim`` (an eps query at delta 1e-5, or a delta query at
    eps 1): the points each window had to hold, by order and kind."""
    comp = Composition.of([row])
    pl = plan(comp)
    groups = fftquery.fft_groups(comp)
    if groups is None:
        return {"row": row, "aim": aim, "skip": "not on the path's domain"}
    prec = prec_for(6, Fraction(1, 10**20 if delta else 10**5))
    h = fftquery.first_grid(pl, aim, prec)
    seconds, need = grid_cost(pl, h, prec, aim)
    if seconds > max_seconds:
        return {"row": row, "aim": aim, "skip": f"predicted {seconds:.0f} s"}
    calls: list[tuple[str, int]] = []
    steps: list[int] = []

    def recording(t, k, lt=-23.0, rate=0.0, also=()):  # type: ignore[no-untyped-def]
        taken_windows()
        out = window_for(t, k, lt, rate, also)
        calls.append(("pair" if also else "upper", taken_windows()))
        steps.append(t.shape[0] - 1)
        return out

    saved = fftcompose.window_for, fftquery.pre_grid, fftquery._next_grid
    fftcompose.window_for = recording
    fftquery.pre_grid = lambda *a, **kw: None   # no pre-pass: the one grid predicted
    fftquery._next_grid = lambda *a, **kw: None  # no refinement
    t0 = time.monotonic()
    try:
        if delta:
            fftquery.fft_delta(comp, Fraction(1), aim, 6, time.monotonic() + 10**6)
        else:
            fftquery.fft_epsilon(comp, Fraction(1, 10**5), aim, 6, time.monotonic() + 10**6)
    finally:
        fftcompose.window_for, fftquery.pre_grid, fftquery._next_grid = saved
    took = time.monotonic() - t0
    unit = pl.sd / float(h) * math.sqrt(-log_target(aim))  # float ok: a measurement
    # the calls come order by order: (upper, pair) per order (an order of one side has one), re-aims repeat
    per = len(calls) // max(1, len(calls) // (2 * len(groups))) if calls else 0
    ratio = {kind: max((p for c, p in calls if c == kind), default=0) / unit for kind in ("upper", "pair")}
    window = predicted_window(pl, h, aim)
    most = max(p for _, p in calls)
    return {"row": row, "aim": aim, "query": "delta" if delta else "eps", "h": f"1/{1 / h}",
            "sd_h": round(pl.sd / float(h)), "log_target": log_target(aim),  # float ok: a measurement
            "points": [p for _, p in calls], "step": steps,
            "step_points": round(step_points(pl, h)), "kinds": [c for c, _ in calls], "per_round": per,
            "upper": round(ratio["upper"], 3), "pair": round(ratio["pair"], 3),
            "window": window, "most": most, "ok": window >= most, "over": round(window / most, 2),
            "route": fftquery.affordable(comp, 6, aim, 120.0), "seconds": round(took, 1),
            "predicted_s": round(seconds, 1), "bytes": need}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--rows", nargs="*", help="SPEC@AIM[#delta] rows instead of the grid")
    ap.add_argument("--max-seconds", type=float, default=60.0)
    ap.add_argument("--start", type=int, default=0, help="skip the grid's first rows")
    a = ap.parse_args()
    if a.rows or a.quick:
        rows = []
        for r in a.rows or QUICK:
            body, _, kind = r.partition("#")
            s, _, aim = body.partition("@")
            rows.append((s, float(aim), kind == "delta"))
    else:
        rows = [(spec(s, q, k), aim, False) for s in SIGMAS for q in QS for k in COUNTS for aim in AIMS]
    for s, aim, delta in rows[a.start:]:
        try:
            out = measure(s, aim, delta, a.max_seconds)
        except Exception as e:  # noqa: BLE001 - a row the path fails on is reported, the others go on
            out = {"row": s, "aim": aim, "skip": f"{type(e).__name__}: {e}"}
        print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
