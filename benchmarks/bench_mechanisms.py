"""Benchmark: certified mechanism accounting, exactdp beside dp_accounting and prv_accountant.

    python benchmarks/bench_mechanisms.py [--quick] [--only I,J]

Every row asks the same question of every library in one run: the eps of a composition at a
total delta (and, for the Gaussian, the delta at an eps).  exactdp answers with a certified
bracket [lower, upper] (30 digits for the Gaussian closed form, the requested digits for the PLD
engine) and its relative width; each peer answers with a float, which is then judged against the
bracket: ``inside``, ``+x`` (above the certified upper end by x relative: sound, looser), or ``-x``
(below the certified *lower* end by x relative: unsound by at least that much).  Peers that are
not installed, raise, or run past their time limit are reported as such.  Every library runs in
a fresh child process (time includes nothing but the call; peak memory is the child's).

Rows (issue 11's targets): Gaussian compositions at any k (both directions, 30 digits);
DP-SGD sigma = 1, q = 0.01, 1000 steps, delta 1e-5 (relative width <= 1e-5 within 60 s) and
10^4 steps (<= 1e-4 within 5 min); sigma = 0.8, q = 0.125, 1000 steps, delta 1e-6; 100 x
Laplace(b = 10) at delta 1e-6 (<= 1e-6); and deltas down to 1e-30.  Issue 27: 100 steps of the
discrete Laplace (a = 0.1) and the discrete Gaussian (sigma = 10), 10 certified digits in < 2 s; a
mixture of Gaussians (dp_accounting's MixtureOfGaussiansDpEvent) of 10 components x 1000 steps,
relative width <= 1e-4 within 60 s.  The peers run under ``EXACTDP_BENCH_PEER_PYTHON`` when set (an
interpreter that has them), else under this one.  A DP-SGD run of 10^5 steps
(3 digits within 60 s) is the size real training reaches.  ``--only I,J`` runs those rows (0-based).
"""

from __future__ import annotations

import json
import math
import os
import resource
import subprocess
import sys
import time
from fractions import Fraction

#: a DP-FTRL-like mixture: a record seen up to 9 times, rarely
MOG10 = "mog:sensitivities=0/1/2/3/4/5/6/7/8/9,probs=0.9/0.05/0.02/0.01/0.005/0.005/0.004/0.003/0.002/0.001"

# (name, spec list, query, at, exactdp digits, exactdp budget s, peer timeout s)
ROWS = [
    ("Gaussian s=1.1 x 1", ["gaussian:sigma=1.1,count=1"], "epsilon", "1e-5", 30, 60, 120),
    ("Gaussian s=1.1 x 10^4", ["gaussian:sigma=1.1,count=10000"], "epsilon", "1e-5", 30, 60, 300),
    ("Gaussian s=1.1 x 10^4 (delta at eps 4500)", ["gaussian:sigma=1.1,count=10000"], "delta", "4500", 30, 60, 300),
    ("Gaussian s=30 x 100, delta 1e-30", ["gaussian:sigma=30,count=100"], "epsilon", "1e-30", 30, 60, 300),
    ("DP-SGD s=1 q=0.01 x 1000, delta 1e-5", ["gaussian:sigma=1,q=0.01,count=1000"], "epsilon", "1e-5", 5, 60, 600),
    ("DP-SGD s=0.8 q=0.125 x 1000, delta 1e-6", ["gaussian:sigma=0.8,q=0.125,count=1000"], "epsilon", "1e-6", 4, 120, 600),
    ("100 x Laplace(b=10), delta 1e-6", ["laplace:scale=10,count=100"], "epsilon", "1e-6", 6, 60, 300),
    ("DP-SGD s=1 q=0.01 x 10^4, delta 1e-5", ["gaussian:sigma=1,q=0.01,count=10000"], "epsilon", "1e-5", 4, 300, 900),
    ("DP-SGD s=1 q=0.01 x 10^5, delta 1e-5", ["gaussian:sigma=1,q=0.01,count=100000"], "epsilon", "1e-5", 3, 60, 900),
    ("100 x discrete Laplace(a=0.1), delta 1e-6", ["dlaplace:noise=0.1,count=100"], "epsilon", "1e-6", 10, 60, 300),
    ("100 x discrete Gaussian(s=10), delta 1e-6", ["dgaussian:sigma=10,count=100"], "epsilon", "1e-6", 10, 60, 300),
    ("MoG 10 components s=8 x 1000, delta 1e-5", [MOG10 + ",sigma=8,count=1000"], "epsilon", "1e-5", 5, 60, 600),
    ("MoG 3 components s=2 x 1000, delta 1e-5", ["mog:sensitivities=0/1/2,probs=0.81/0.18/0.01,sigma=2,count=1000"],
     "epsilon", "1e-5", 5, 60, 600),
]
QUICK = {0, 1, 2, 3, 6, 9, 10}
PEERS = ("dp_accounting", "prv_accountant")
#: the interpreter that runs the peers (one with them installed)
PEER_PYTHON = os.environ.get("EXACTDP_BENCH_PEER_PYTHON", sys.executable)


def _spec(s: str) -> dict:
    kind, _, rest = s.partition(":")
    d = dict(kv.split("=") for kv in rest.split(","))
    d["kind"] = kind
    return d


def run_exactdp(row: tuple) -> dict:
    from exactdp import Composition, optimal_delta, optimal_epsilon
    from exactdp.core import progress

    name, specs, query, at, digits, budget, _ = row
    comp = Composition.of(specs)
    t = time.perf_counter()
    with progress.task("bench", max_seconds=budget, stream=None):
        enc = optimal_epsilon(comp, at, digits=digits) if query == "epsilon" else optimal_delta(comp, at, digits=digits)
    dt = time.perf_counter() - t
    return {"seconds": dt, "lower": str(enc.lower), "upper": str(enc.upper), "algorithm": enc.algorithm,
            "digits": enc.digits, "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def _dp_accounting(row: tuple) -> float:
    import dp_accounting
    from dp_accounting.pld import pld_privacy_accountant

    name, specs, query, at, *_ = row
    if any(_spec(s)["kind"] == "dgaussian" for s in specs):
        return _dp_accounting_dgaussian(row)
    events = []
    for s in specs:
        d = _spec(s)
        n = int(d.get("count", 1))
        if d["kind"] == "dlaplace":
            ev = dp_accounting.dp_event.DiscreteLaplaceDpEvent(float(Fraction(d["noise"])),  # float ok: peer API
                                                               int(d.get("sensitivity", 1)))
        elif d["kind"] == "mog":
            from dp_accounting.dp_event import MixtureOfGaussiansDpEvent

            ev = MixtureOfGaussiansDpEvent(float(d["sigma"]), [float(Fraction(x)) for x in d["sensitivities"].split("/")],  # float ok: peer API
                                           [float(Fraction(x)) for x in d["probs"].split("/")])  # float ok: peer API
        elif d["kind"] == "gaussian":
            ev = dp_accounting.GaussianDpEvent(float(d["sigma"]))  # float ok: peer API
        else:
            ev = dp_accounting.LaplaceDpEvent(float(d["scale"]))  # float ok: peer API
        if "q" in d:
            ev = dp_accounting.PoissonSampledDpEvent(float(d["q"]), ev)  # float ok: peer API
        events.append(dp_accounting.SelfComposedDpEvent(ev, n))
    acc = pld_privacy_accountant.PLDAccountant()
    acc.compose(dp_accounting.ComposedDpEvent(events))
    if query == "epsilon":
        return acc.get_epsilon(float(Fraction(at)))  # float ok: peer API
    return acc.get_delta(float(Fraction(at)))  # float ok: peer API


def _dp_accounting_dgaussian(row: tuple) -> float:
    """dp_accounting 0.6.0 has no DiscreteGaussianDpEvent: its PLD library's own constructor."""
    from dp_accounting.pld import privacy_loss_distribution as pldlib

    name, specs, query, at, *_ = row
    pld = None
    for s in specs:
        d = _spec(s)
        if d["kind"] != "dgaussian" or "q" in d:
            raise NotImplementedError("only unsampled discrete Gaussians here")
        one = pldlib.from_discrete_gaussian_mechanism(float(Fraction(d["sigma"])),  # float ok: peer API
                                                      sensitivity=int(d.get("sensitivity", 1)))
        one = one.self_compose(int(d.get("count", 1)))
        pld = one if pld is None else pld.compose(one)
    assert pld is not None
    if query == "epsilon":
        return pld.get_epsilon_for_delta(float(Fraction(at)))  # float ok: peer API
    return pld.get_delta_for_epsilon(float(Fraction(at)))  # float ok: peer API


def _prv_accountant(row: tuple) -> float:
    from prv_accountant import Accountant
    from prv_accountant.privacy_random_variables import (GaussianMechanism, LaplaceMechanism,
                                                         PoissonSubsampledGaussianMechanism)

    name, specs, query, at, *_ = row
    prvs, counts = [], []
    for s in specs:
        d = _spec(s)
        if d["kind"] == "mog":
            raise NotImplementedError("prv_accountant has no mixture of Gaussians")
        if d["kind"] == "gaussian" and "q" in d:
            prvs.append(PoissonSubsampledGaussianMechanism(sampling_probability=float(d["q"]),  # float ok: peer API
                                                           noise_multiplier=float(d["sigma"])))  # float ok: peer API
        elif d["kind"] in ("dlaplace", "dgaussian"):
            raise NotImplementedError("prv_accountant has no discrete mechanisms")
        elif d["kind"] == "gaussian":
            prvs.append(GaussianMechanism(noise_multiplier=float(d["sigma"])))  # float ok: peer API
        else:
            prvs.append(LaplaceMechanism(mu=1 / float(d["scale"])))  # float ok: peer API (mu is eps = 1/b)
        counts.append(int(d.get("count", 1)))
    if query != "epsilon":
        raise NotImplementedError("prv_accountant answers eps at a delta")
    from prv_accountant import PRVAccountant

    acc = PRVAccountant(prvs=prvs, max_self_compositions=counts, eps_error=0.01,
                        delta_error=float(Fraction(at)) / 1000)  # float ok: peer API
    lo, est, hi = acc.compute_epsilon(delta=float(Fraction(at)), num_self_compositions=counts)  # float ok: peer API
    return hi  # the upper end of prv_accountant's own error bars: its sound claim


def run_peer(peer: str, row: tuple) -> dict:
    t = time.perf_counter()
    try:
        v = (_dp_accounting if peer == "dp_accounting" else _prv_accountant)(row)
        return {"seconds": time.perf_counter() - t, "value": v}
    except ImportError as e:
        return {"skipped": f"not installed ({e.name})"}
    except NotImplementedError as e:
        return {"skipped": str(e)}
    except Exception as e:  # noqa: BLE001 - the peer's failure is the finding
        return {"seconds": time.perf_counter() - t, "error": f"{type(e).__name__}: {str(e)[:80]}"}


def verdict(value: float, lo: Fraction, hi: Fraction) -> str:
    if isinstance(value, float) and math.isinf(value):
        return "inf"
    v = Fraction(value)
    if lo <= v <= hi:
        return "inside"
    if v > hi:
        return f"+{float((v - hi) / hi):.1e}"  # float ok: display
    return f"-{float((lo - v) / lo):.1e} UNSOUND"  # float ok: display


def child(argv: list[str]) -> int:
    who, i = argv[0], int(argv[1])
    row = ROWS[i]
    out = run_exactdp(row) if who == "exactdp" else run_peer(who, row)
    out["rss"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(out))
    return 0


def main(argv: list[str]) -> int:
    if argv[:1] == ["--child"]:
        return child(argv[1:])
    quick = "--quick" in argv
    only = {int(x) for x in argv[argv.index("--only") + 1].split(",")} if "--only" in argv else None
    print("| case | exactdp certified bracket | rel. width | algorithm | exactdp time | peak MB | "
          + " | ".join(f"{p}: value vs bracket, time, ratio" for p in PEERS) + " |")
    print("|---|---|---|---|---|---|" + "---|" * len(PEERS))
    for i, row in enumerate(ROWS):
        if (quick and i not in QUICK) or (only is not None and i not in only):
            continue
        name, *_, budget, peer_timeout = row
        try:
            out = subprocess.run([sys.executable, __file__, "--child", "exactdp", str(i)], capture_output=True,
                                 text=True, timeout=budget + 120, check=True)
            ex = json.loads(out.stdout)
        except subprocess.TimeoutExpired:
            print(f"| {name} | timeout | | | | |" + " |" * len(PEERS), flush=True)
            continue
        lo, hi = Fraction(ex["lower"]), Fraction(ex["upper"])
        width = float((hi - lo) / lo) if lo > 0 else float("nan")  # float ok: display
        cells = []
        for p in PEERS:
            try:
                po = subprocess.run([PEER_PYTHON, __file__, "--child", p, str(i)], capture_output=True, text=True,
                                    timeout=peer_timeout, check=True)
                r = json.loads(po.stdout)
            except subprocess.TimeoutExpired:
                cells.append(f"timeout after {peer_timeout} s")
                continue
            except subprocess.CalledProcessError as e:
                cells.append(f"crashed ({e.returncode})")
                continue
            if "skipped" in r:
                cells.append(f"skipped: {r['skipped']}")
            elif "error" in r:
                cells.append(f"error: {r['error']} ({r['seconds']:.2f} s)")
            else:
                cells.append(f"{r['value']:.10g} {verdict(r['value'], lo, hi)}, {r['seconds']:.2f} s, "
                             f"x{r['seconds'] / ex['seconds']:.2g}")
        from exactdp.core.numbers import decimal_string
        show = f"[{decimal_string(lo, 10, 'down')}, {decimal_string(hi, 10, 'up')}]"  # rounded outward
        print(f"| {name} | {show} | {width:.1e} | {ex['algorithm']} | {ex['seconds']:.2f} s | {ex['rss']:.0f} | "
              + " | ".join(cells) + " |", flush=True)
    print("\nratio: peer time / exactdp time (above 1: exactdp faster).  A value below the certified lower end is "
          "unsound by at least the amount shown; inside the bracket it is within exactdp's certified width.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
