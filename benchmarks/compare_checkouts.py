"""Before and after a change: the exactdp rows of the benchmarks, from two checkouts, in one run.

    python benchmarks/compare_checkouts.py OLD_CHECKOUT NEW_CHECKOUT [ROUNDS]

Each row runs the benchmark's own exactdp child (``bench_mechanisms.py --child exactdp I``,
``bench_heterogeneous.py --child exactdp I``, ``bench_homogeneous.exactdp_in_process(k)``, three
calibrations) from the old and the new checkout in turn (old, new, old, new, ...: the machine's drift
hits both alike), ROUNDS times (3), and keeps each side's best; the time is the one the child measures
itself (the query; imports excluded).  Each checkout runs with its own ``.venv/bin/python`` (a
virtual environment with that checkout installed), else with this interpreter.  The last column says
whether the two answers are the same (a row that stops on its time budget may differ).  Rows that
take long (mechanisms 7-8, heterogeneous 8-10: budget-bound) are left out.
"""
import json
import os
import subprocess
import sys

old, new = sys.argv[1], sys.argv[2]
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 3
HOM = ("import sys, time; sys.path.insert(0, 'benchmarks'); import bench_homogeneous as b; "
       "b.exactdp_in_process(30); t, e, d = b.exactdp_in_process({k}); print(t)")
CAL = ("import time, exactdp; t = time.perf_counter(); r = {call}; print(time.perf_counter() - t)")
rows = []
for i in (0, 1, 2, 3, 4, 5, 6):
    rows.append((f"mechanisms row {i}", ["benchmarks/bench_mechanisms.py", "--child", "exactdp", str(i)], "seconds"))
for i in (0, 1, 2, 3, 4, 5, 6, 7, 11):
    rows.append((f"heterogeneous row {i}", ["benchmarks/bench_heterogeneous.py", "--child", "exactdp", str(i)], "seconds"))
for k in ("30", "10**3", "10**4", "10**6", "10**9", "10**15"):
    rows.append((f"homogeneous k={k}", ["-c", HOM.format(k=k)], None))
for call in ('exactdp.calibrate_sigma(1000, "1", "1e-5", q="0.01")', 'exactdp.calibrate_eps(30, "1", "1e-5")',
             'exactdp.calibrate_k("gaussian:sigma=5", "1", "1e-5")'):
    rows.append((f"calibrate {call[8:]}", ["-c", CAL.format(call=call)], None))

def run(checkout, args, key):
    py = os.path.join(checkout, ".venv", "bin", "python")
    py = py if os.path.exists(py) else sys.executable
    p = subprocess.run([py, *args], cwd=checkout, capture_output=True, text=True, timeout=900, check=False)
    if p.returncode != 0:
        return None, p.stderr.strip().splitlines()[-1:]
    out = p.stdout.strip().splitlines()[-1]
    if key:
        d = json.loads(out); return float(d[key]), (d.get("lower"), d.get("upper"))
    return float(out), None

print(f"| row | before (best of {rounds}) | after | after/before | same answer |")
print("|---|---|---|---|---|")
for name, args, key in rows:
    best = {old: None, new: None}; ans = {}
    for _ in range(rounds):
        for c in (old, new):
            t, a = run(c, args, key)
            ans[c] = a
            if t is not None and (best[c] is None or t < best[c]):
                best[c] = t
    b, a = best[old], best[new]
    ratio = f"{a / b:.3f}" if a is not None and b else "-"
    def fmt(x: float | None) -> str:
        return "error" if x is None else f"{x:.4f} s"
    print(f"| {name} | {fmt(b)} | {fmt(a)} | {ratio} | {'yes' if ans[old] == ans[new] else 'NO ' + str(ans)} |", flush=True)
