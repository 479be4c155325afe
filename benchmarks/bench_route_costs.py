"""Calibration: the time and memory predictions that choose a route, beside what the routes take.

    python benchmarks/bench_route_costs.py [--tails-only | --lattice-only]

For compositions that binomial tails and the exact lattice can both answer (one huge group, few
joint outcomes of the others, on a common lattice), each asks eps at delta_g to 10 digits by both
routes in a fresh child process (imports before the clock) and prints the seconds and peak memory
each took beside ``exactdp.engines.tails.tails_seconds`` and
``exactdp.engines.pld.plan.lattice_seconds`` / ``lattice_bytes``: the constants of those
predictions (TAILS_SECONDS_*, LATTICE_SECONDS_*, LATTICE_BYTES_*) were read off this table
(issue 29 §1).  A prediction only chooses a route: every answer is certified whichever answers.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from fractions import Fraction as F
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

CASES = [
    ([(F(1, 10), F(0), 10**4), (F(1, 5), F(0), 5)], F(1, 10**6)),
    ([(F(1, 10), F(0), 10**6), (F(1, 5), F(0), 5)], F(1, 10**6)),
    ([(F(1, 100), F(0), 10**5), (F(3, 100), F(0), 300)], F(1, 10**9)),
    ([(F(13, 1000), F(0), 10**4), (F(27, 1000), F(0), 500)], F(1, 10**6)),
    ([(F(13, 1000), F(0), 3 * 10**4), (F(27, 1000), F(0), 200), (F(1, 10), F(0), 20)], F(1, 10**6)),
    ([(F(3, 1000), F(0), 800), (F(21, 1000), F(0), 7800)], F(1, 10**4)),
    ([(F(13, 1000), F(0), 10**5), (F(27, 1000), F(0), 300), (F(71, 1000), F(0), 300)], F(1, 10**6)),
]


def child(i: int, how: str) -> dict:
    from exactdp import Composition
    from exactdp.core import memory, progress
    from exactdp.engines import tails
    from exactdp.engines.pld.engine import pld_epsilon

    groups, dg = CASES[i]
    comp = Composition.heterogeneous(groups)
    t = time.perf_counter()
    with memory.bounded("16G"), progress.task("calibrate", max_seconds=120, stream=None):
        e = tails.tails_epsilon(comp, dg, digits=10) if how == "tails" else pld_epsilon(comp, dg, digits=10)
    return {"seconds": time.perf_counter() - t, "algorithm": e.algorithm, "digits": e.digits,
            "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def main(argv: list[str]) -> int:
    if argv[:1] == ["--child"]:
        print(json.dumps(child(int(argv[1]), argv[2])))
        return 0
    from exactdp import Composition
    from exactdp.engines import tails
    from exactdp.engines.pld.plan import lattice_bytes, lattice_points, lattice_seconds, plan, prec_for

    hows = ["tails"] if "--tails-only" in argv else ["lattice"] if "--lattice-only" in argv else ["tails", "lattice"]
    print("| composition | lattice points | route | seconds | predicted s | peak MB | predicted MB |")
    print("|---|---|---|---|---|---|---|")
    for i, (groups, _) in enumerate(CASES):
        comp = Composition.heterogeneous(groups)
        name = " + ".join(f"{e} x {c}" for e, _, c in groups)
        pl = plan(comp)
        for how in hows:
            if how == "tails" and not tails.tails_applies(comp):
                continue
            p = subprocess.run([sys.executable, __file__, "--child", str(i), how], capture_output=True, text=True,
                               timeout=300, check=False)
            r = json.loads(p.stdout) if p.returncode == 0 else {"seconds": float("nan"), "peak_mb": float("nan")}  # float ok: display
            pred = tails.tails_seconds(comp) if how == "tails" else lattice_seconds(pl, 10)
            mb = "" if how == "tails" else f"{lattice_bytes(pl, prec_for(10, F(1))) / 2**20:.0f} (+ the interpreter)"
            print(f"| {name} | {lattice_points(comp):.3g} | {how} | {r['seconds']:.2f} | {pred:.2f} | "
                  f"{r['peak_mb']:.0f} | {mb} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
