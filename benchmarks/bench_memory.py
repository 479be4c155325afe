"""How much memory one PLD build holds per grid point, against the prediction that keeps it within
``--max-memory`` (exactdp.engines.pld.plan.build_bytes; issue 29 §1).

    python benchmarks/bench_memory.py           # 7 builds, each in a fresh interpreter (about 1 minute)
    python benchmarks/bench_memory.py --quick   # 3 builds

Each build runs in its own process; its peak resident memory (VmHWM) less the interpreter's before the
build is the measured cost.  The prediction must stay above the measurement on every row (the
"ratio" column >= 1), or a refinement could pass the bound.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

CHILD = r"""
import json, sys, time
from fractions import Fraction
from exactdp.engines.pld.build import build
from exactdp.engines.pld.plan import build_bytes, grid_for, grid_points, on_lattice, op_count, plan, prec_for, tau_for
from exactdp.model.composition import Composition
spec, points, digits = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
def hwm():  # VmHWM: this process image's peak (ru_maxrss would keep the forking parent's peak across exec)
    return 1024 * int([l for l in open("/proc/self/status") if l.startswith("VmHWM:")][0].split()[1])
pl = plan(Composition.of(spec.split(";")))
h = on_lattice(pl, grid_for(pl, points))
scale = Fraction(1, 10**5)
prec, tau = prec_for(digits, scale), tau_for(digits, scale, op_count(pl))
before = hwm()
t = time.monotonic()
build(pl, h, tau, prec)
peak = hwm()
print(json.dumps({"points": grid_points(pl, h), "prec": prec, "measured": peak - before,
                  "predicted": build_bytes(pl, h, prec), "seconds": time.monotonic() - t}))
"""

ROWS = [
    ("gaussian:sigma=1,q=0.01,count=1000", 16_000, 6),
    ("gaussian:sigma=1,q=0.01,count=1000", 64_000, 6),
    ("laplace:scale=10,count=100", 64_000, 10),
    ("gaussian:sigma=1,q=0.01,count=100000", 64_000, 6),
    ("gaussian:sigma=1,q=0.01,count=1000", 64_000, 20),
    ("gaussian:sigma=1,q=0.01,count=1000", 256_000, 6),
    ("gaussian:sigma=1,q=0.01,count=1000", 64_000, 40),
    ("approx:eps=0.013,count=700;approx:eps=0.027,count=700;approx:eps=0.1,delta=1e-9,count=700;laplace:scale=30,count=50", 64_000, 10),
]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="the first three rows only")
    args = ap.parse_args()
    rows = ROWS[:3] if args.quick else ROWS
    print(f"{'composition (; separates mechanisms)':40} {'points':>8} {'bits':>5} {'measured MB':>12} {'predicted MB':>13} {'ratio':>6} {'s':>6}")
    worst = float("inf")  # float ok: a benchmark's ratio
    for spec, pts, digits in rows:
        r = subprocess.run([sys.executable, "-c", CHILD, spec, str(pts), str(digits)], capture_output=True,
                           text=True, check=True)
        d = json.loads(r.stdout)
        ratio = d["predicted"] / max(d["measured"], 1)
        worst = min(worst, ratio)
        print(f"{spec:40} {d['points']:8.0f} {d['prec']:5d} {d['measured'] / 2**20:12.1f} "
              f"{d['predicted'] / 2**20:13.1f} {ratio:6.2f} {d['seconds']:6.1f}")
    print(f"worst predicted/measured ratio: {worst:.2f} (must be >= 1)")
    return 0 if worst >= 1 else 1


if __name__ == "__main__":
    sys.exit(main())
