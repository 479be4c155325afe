"""Benchmark: optimal heterogeneous composition, exactdp (MV Thm 1.5) vs dp_accounting's PLD.

    python benchmarks/bench_heterogeneous.py [--quick]

Cases (fixed seed):
  * k = 100, 400, 1000 mechanisms, eps_i drawn uniformly from {0.001, ..., 0.100} (a 1/1000 grid),
    delta_i = 0;
  * 10^4 mechanisms drawn from 5 distinct values on the 1/1000 grid (delta_i = 0 or 1e-6);
  * an off-grid case: 200 mechanisms with two values of seven significant digits.
Both libraries answer the same two queries in one run: delta at eps_g (mean + 2 sd of the privacy
loss, rounded to 1/100) and eps at total delta_g = 1 - prod(1 - delta_i) + 1e-5.

dp_accounting: ``from_privacy_parameters(DifferentialPrivacyParameters(eps_i, delta_i))`` for each
mechanism and ``compose`` over the list (for 10^4 mechanisms, ``self_compose`` per distinct value,
then ``compose``: composing 10^4 PLDs one by one takes hours), then ``get_delta_for_epsilon`` /
``get_epsilon_for_delta`` (default discretization).  exactdp: ``optimal_delta`` and
``optimal_epsilon`` at 30 certified digits, each case in a fresh child process whose peak resident
memory (``ru_maxrss``) is reported.  "Error" is dp_accounting's float against the certified enclosure.
"""

from __future__ import annotations

import json
import math
import random
import resource
import subprocess
import sys
import time
from fractions import Fraction



def delta_g_for(mechs: list[tuple[Fraction, Fraction, int]]) -> Fraction:
    """1 - prod(1 - delta_i) + 1e-5: the floor below which eps is infinite, plus 1e-5."""
    pd = Fraction(1)
    for _, d, c in mechs:
        pd *= (1 - d) ** c
    return 1 - pd + Fraction(1, 10**5)


def cases(quick: bool) -> list[tuple[str, list[tuple[Fraction, Fraction, int]]]]:
    rng = random.Random(20261123)
    out = []
    for k in [100, 400, 1000]:
        out.append((f"k={k}, 1/1000 grid", [(Fraction(rng.randint(1, 100), 1000), Fraction(0), 1) for _ in range(k)]))
    if not quick:
        vals = [Fraction(13, 1000), Fraction(27, 1000), Fraction(41, 1000), Fraction(66, 1000), Fraction(1, 10)]
        counts = [0] * 5
        for _ in range(10**4):
            counts[rng.randrange(5)] += 1
        ds = [Fraction(0), Fraction(1, 10**6), Fraction(0), Fraction(1, 10**6), Fraction(0)]
        out.append(("10^4 from 5 values", [(v, d, c) for v, d, c in zip(vals, ds, counts)]))
    out.append(("off-grid, 200 x 2 values", [(Fraction("0.0123457"), Fraction(0), 120),
                                              (Fraction("0.0456789"), Fraction(1, 10**6), 80)]))
    return out


def eps_g_for(mechs: list[tuple[Fraction, Fraction, int]]) -> Fraction:
    """mean + 2 sd of the privacy loss, rounded to 1/100 (only chooses the query point)."""
    mean = sum(c * float(e) * math.tanh(float(e) / 2) for e, _, c in mechs)  # float ok: query point
    var = sum(c * float(e) ** 2 for e, _, c in mechs)  # float ok: query point
    return Fraction(round((mean + 2 * math.sqrt(var)) * 100), 100)


def run_exactdp(mechs: list[tuple[Fraction, Fraction, int]]) -> dict:
    from exactdp import Composition, ExactReal
    from exactdp.optimal import optimal_delta, optimal_epsilon

    comp = Composition.heterogeneous(mechs)
    eg = eps_g_for(mechs)
    t = time.perf_counter()
    d = optimal_delta(comp, ExactReal.rational(eg))
    t1 = time.perf_counter()
    e = optimal_epsilon(comp, delta_g_for(mechs))
    t2 = time.perf_counter()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    return {"t_delta": t1 - t, "t_eps": t2 - t1, "rss_mb": rss / 1024, "algorithm": d.algorithm,
            "d": [str(d.lower), str(d.upper)], "e": [str(e.lower), str(e.upper)], "eps_g": str(eg)}


def run_dp_accounting(mechs: list[tuple[Fraction, Fraction, int]], grouped: bool) -> tuple[float, float, float]:
    from dp_accounting.pld import privacy_loss_distribution as pld
    from dp_accounting.pld.common import DifferentialPrivacyParameters

    eg = eps_g_for(mechs)
    t = time.perf_counter()
    if grouped:
        plds = [pld.from_privacy_parameters(DifferentialPrivacyParameters(float(e), float(d))).self_compose(c)  # float ok: peer API
                for e, d, c in mechs]
    else:
        plds = [pld.from_privacy_parameters(DifferentialPrivacyParameters(float(e), float(d)))  # float ok: peer API
                for e, d, c in mechs for _ in range(c)]
    acc = plds[0]
    for p in plds[1:]:
        acc = acc.compose(p)
    dv = acc.get_delta_for_epsilon(float(eg))  # float ok: peer API
    ev = acc.get_epsilon_for_delta(float(delta_g_for(mechs)))  # float ok: peer API
    return time.perf_counter() - t, dv, ev


def rel_err(x: float, lo: Fraction, hi: Fraction) -> str:
    fx = Fraction(x)
    if lo <= fx <= hi:
        return "inside"
    d = fx - hi if fx > hi else fx - lo
    return f"{float(d / hi):+.1e}"  # float ok: display


def main(argv: list[str]) -> int:
    if argv[:1] == ["--child"]:
        quick = argv[2] == "1"
        print(json.dumps(run_exactdp(cases(quick)[int(argv[1])][1])))
        return 0
    quick = "--quick" in argv
    # every exactdp child runs before dp_accounting is loaded here: on Linux ru_maxrss is
    # inherited across fork/exec, so a child spawned later would report the parent's peak
    results = []
    for i, (name, mechs) in enumerate(cases(quick)):
        out = subprocess.run([sys.executable, __file__, "--child", str(i), "1" if quick else "0"],
                             capture_output=True, text=True, check=True)
        results.append(json.loads(out.stdout))
    rows = []
    for (name, mechs), r in zip(cases(quick), results):
        t_ex = r["t_delta"] + r["t_eps"]
        t_dp, dv, ev = run_dp_accounting(mechs, grouped=name.startswith("10^4"))
        dlo, dhi = (Fraction(x) for x in r["d"])
        elo, ehi = (Fraction(x) for x in r["e"])
        rows.append((name, r["algorithm"], t_ex, t_dp, t_dp / t_ex, rel_err(dv, dlo, dhi), rel_err(ev, elo, ehi),
                     r["rss_mb"], r["eps_g"], float(dlo), float(elo)))  # float ok: display
        print(rows[-1], file=sys.stderr, flush=True)
    print("| case | exactdp algorithm | exactdp (both queries) | dp_accounting (compose + both) | ratio dp_acc/exactdp "
          "| dp_acc delta error | dp_acc eps error | exactdp peak RSS | eps_g | delta(eps_g) | eps(delta_g) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for n, alg, te, td, ratio, de, ee, rss, eg, dl, el in rows:
        print(f"| {n} | {alg} | {te:.3f} s | {td:.2f} s | {ratio:.1f} | {de} | {ee} | {rss:.0f} MB | {eg} | {dl:.6g} | {el:.6g} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
