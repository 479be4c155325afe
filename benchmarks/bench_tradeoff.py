"""Benchmark (issue 28 §3): the certified trade-off curve of 1,000 DP-SGD steps, beside dp_accounting.

    python benchmarks/bench_tradeoff.py [--count N] [--points P] [--digits D] [--budget S]

exactdp certifies beta(alpha) of gaussian:sigma=1,q=0.01,count=N (1000) at P (100) type I errors
alpha, log-spaced from 1e-4 to 0.5 and rounded to three significant digits (exact decimals), to D
(6) digits, i.e. relative width <= 1e-6, within S (30) seconds; it prints the time, the largest
relative width reached, whether the target was met, and the GDP mu bracket (the time beside its CPU
time: on a shared machine the wall clock also counts the other processes).  In the same run,
where the installed dp_accounting has ``get_true_positive_rates`` (on its PLD), its true positive
rates 1 - beta at the same alphas are timed and placed against the certified brackets (``inside``,
or above / below by a relative amount); where it does not, the line says so.
"""

from __future__ import annotations

import argparse
import math
import time
from fractions import Fraction


def alphas(points: int) -> list[Fraction]:
    out = []
    for i in range(points):
        x = -4 + (math.log10(0.5) + 4) * i / max(points - 1, 1)  # float ok: places the points only
        e = math.floor(x)
        out.append(Fraction(round(10 ** (x - e) * 100)) / 100 * Fraction(10) ** e)
    return sorted(set(out))


def peer(count: int, al: list[Fraction]) -> tuple[str, list[float] | None, float]:
    """dp_accounting's true positive rates at ``al`` (None when this version has none), and its time."""
    try:
        import dp_accounting
        from dp_accounting.pld import privacy_loss_distribution as pld_mod
    except ImportError:
        return "dp_accounting is not installed", None, 0.0
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version

    try:
        version = dist_version("dp-accounting")
    except PackageNotFoundError:
        version = getattr(dp_accounting, "__version__", "?")
    t = time.perf_counter()
    pld = pld_mod.from_gaussian_mechanism(1.0, sampling_prob=0.01, use_connect_dots=True).self_compose(count)
    fn = getattr(pld, "get_true_positive_rates", None)
    if fn is None:
        return f"dp_accounting {version}: no get_true_positive_rates in this version", None, 0.0
    tpr = [float(x) for x in fn([float(a) for a in al])]
    return f"dp_accounting {version}", tpr, time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--points", type=int, default=100)
    ap.add_argument("--digits", type=int, default=6)
    ap.add_argument("--budget", type=float, default=30.0)
    a = ap.parse_args()
    from exactdp import tradeoff
    from exactdp.core import progress

    al = alphas(a.points)
    spec = f"gaussian:sigma=1,q=0.01,count={a.count}"
    t, c = time.perf_counter(), time.process_time()
    with progress.task("bench", max_seconds=a.budget, stream=None):
        res = tradeoff(spec, al, digits=a.digits)
    dt, dc = time.perf_counter() - t, time.process_time() - c
    widths = [(b.upper - b.lower) / b.lower if b.lower > 0 else math.inf for b in res.betas]
    w = max(widths)
    target = 10.0 ** -a.digits
    print(f"{spec}: {len(al)} alphas in [{float(al[0]):g}, {float(al[-1]):g}], digits {a.digits}")
    print(f"exactdp: {dt:.2f} s ({dc:.2f} s of CPU), largest relative width {float(w):.2e} "
          f"({'reached' if w <= target else 'NOT reached'} {target:.0e}), algorithm {res.betas[0].algorithm}")
    print(f"exactdp GDP mu: [{res.gdp_mu.lower_str()}, {res.gdp_mu.upper_str()}]")
    for i in (0, len(al) // 2, len(al) - 1):
        print(f"  alpha {float(al[i]):<10g} beta [{res.betas[i].lower_str()}, {res.betas[i].upper_str()}]")
    name, tpr, pt = peer(a.count, al)
    if tpr is None:
        print(f"peer: {name}")
        return
    worst = 0.0
    outside = 0
    for b, r in zip(res.betas, tpr):
        beta = 1 - r
        lo, hi = float(b.lower), float(b.upper)  # float ok: comparing with the peer's floats only
        if not lo <= beta <= hi:
            outside += 1
            worst = max(worst, abs(beta - (lo if beta < lo else hi)) / max(lo, 1e-300))
    print(f"peer: {name}: {pt:.2f} s, {len(tpr) - outside}/{len(tpr)} inside the certified brackets"
          + (f", worst {worst:.1e} relative outside" if outside else ""))


if __name__ == "__main__":
    main()
