"""Benchmark: optimal composition of k equal mechanisms, exactdp vs dp_accounting's PLD accountant.

    python benchmarks/bench_homogeneous.py [--quick]

For each k the same two queries go through both libraries in one run:
  * epsilon at total delta_g = 1e-5,
  * delta at eps_g = mean + 3 sd of the privacy loss (a rational, rounded to 1/100),
for k mechanisms that are each (eps, delta)-DP with eps = 0.01, delta = 0.

dp_accounting: ``from_privacy_parameters(DifferentialPrivacyParameters(eps, delta)).self_compose(k)``,
then ``get_epsilon_for_delta`` / ``get_delta_for_epsilon`` (default discretization), timed in process.
exactdp: timed in process (``optimal_epsilon`` / ``optimal_delta``, 30 certified digits) and as a
whole process (``exactdp batch`` answering both queries: interpreter start-up and imports included).
"Error" is how far dp_accounting's float is from the certified enclosure, relative to it.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import time
from fractions import Fraction

from exactdp.model.composition import Composition
from exactdp.core.enclosure import Enclosure
from exactdp.api.optimal import optimal_delta, optimal_epsilon

EPS, DELTA, DELTA_G = Fraction(1, 100), Fraction(0), Fraction(1, 10**5)
KS_BOTH = [30, 10**3, 10**4, 10**6]
KS_EXACTDP = [10**9, 10**15]


def eps_g_for(k: int) -> Fraction:
    """mean + 3 sd of the privacy loss, rounded to 1/100 (a rational query point)."""
    e = float(EPS)  # float ok: only chooses the query point
    mean, sd = k * e * math.tanh(e / 2), e * math.sqrt(k)
    return Fraction(round((mean + 3 * sd) * 100), 100)


def rel_err(x: float, enc: Enclosure) -> str:
    if enc.is_infinite:
        return "exact" if math.isinf(x) else "finite vs inf"
    fx = Fraction(x)
    if enc.lower <= fx <= enc.upper:
        return "inside"
    d = fx - enc.upper if fx > enc.upper else fx - enc.lower
    return f"{float(d / enc.upper):+.2e}"  # float ok: display


def exactdp_in_process(k: int) -> tuple[float, Enclosure, Enclosure]:
    comp = Composition.homogeneous(EPS, DELTA, k)
    t = time.perf_counter()
    e = optimal_epsilon(comp, DELTA_G)
    d = optimal_delta(comp, eps_g_for(k))
    return time.perf_counter() - t, e, d


def exactdp_process(k: int) -> float:
    lines = "".join(json.dumps(q) + "\n" for q in [
        {"query": "epsilon", "eps": str(EPS), "delta": str(DELTA), "k": k, "at_delta": str(DELTA_G)},
        {"query": "delta", "eps": str(EPS), "delta": str(DELTA), "k": k, "at_eps": str(eps_g_for(k))},
    ])
    t = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "exactdp", "batch"], input=lines, capture_output=True, text=True)
    dt = time.perf_counter() - t
    if p.returncode != 0 or "error" in p.stdout:
        raise RuntimeError(p.stdout + p.stderr)
    return dt


def dp_accounting_run(k: int) -> tuple[float, float, float]:
    from dp_accounting.pld import common, privacy_loss_distribution

    t = time.perf_counter()
    pld = privacy_loss_distribution.from_privacy_parameters(
        common.DifferentialPrivacyParameters(float(EPS), float(DELTA))).self_compose(k)  # float ok: its API
    e = pld.get_epsilon_for_delta(float(DELTA_G))  # float ok
    d = pld.get_delta_for_epsilon(float(eps_g_for(k)))  # float ok
    return time.perf_counter() - t, e, d


def main() -> int:
    quick = "--quick" in sys.argv
    ks = [k for k in KS_BOTH if not (quick and k > 10**4)]
    import dp_accounting  # noqa: F401  (import time excluded from its timing, as for exactdp in process)

    print(f"k equal ({EPS}, {DELTA})-DP mechanisms; eps at delta_g = {DELTA_G}; delta at eps_g = mean + 3 sd")
    hdr = (f"{'k':>8} | {'exactdp s':>9} {'process s':>9} | {'dp_acc s':>9} {'ratio':>7} {'ratio(proc)':>11} | "
           f"{'certified eps (lower end)':>27} {'dp_acc eps err':>14} | {'certified delta (lower end)':>27} "
           f"{'dp_acc delta err':>16}")
    print(hdr)
    print("-" * len(hdr))
    for k in ks + KS_EXACTDP:
        t_in, e, d = exactdp_in_process(k)
        t_proc = exactdp_process(k)
        if k in KS_BOTH:
            t_dp, e_dp, d_dp = dp_accounting_run(k)
            cols = (f"{t_dp:9.3f} {t_dp / t_in:7.0f} {t_dp / t_proc:11.1f}", rel_err(e_dp, e), rel_err(d_dp, d))
        else:
            cols = (f"{'-':>9} {'-':>7} {'-':>11}", "-", "-")
        kk = f"10^{len(str(k)) - 1}" if str(k).strip("0") == "1" else str(k)
        print(f"{kk:>8} | {t_in:9.3f} {t_proc:9.3f} | {cols[0]} | {e.lower_str()[:27]:>27} {cols[1]:>14} | "
              f"{d.lower_str()[:27]:>27} {cols[2]:>16}")
    print("ratio = dp_accounting time / exactdp time (in process; and whole exactdp process)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
