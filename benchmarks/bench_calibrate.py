"""Benchmark: certified calibration (exactdp) beside Opacus and dp_accounting, in one run.

    python benchmarks/bench_calibrate.py [--quick]

For each problem the same question goes to every library installed:

* DP-SGD noise multiplier (q = 0.01, 1000 steps) at (eps_g, 1e-5): exactdp ``calibrate_sigma``,
  Opacus ``get_noise_multiplier`` (its RDP and PRV accountants), dp_accounting
  ``mechanism_calibration.calibrate_dp_mechanism`` with its PLD and RDP accountants;
* the number of DP-SGD steps (sigma = 1, q = 0.01) within (2, 1e-5): exactdp ``calibrate_k``,
  dp_accounting ``calibrate_dp_mechanism(discrete=True)``;
* the Gaussian sigma of 100 plain steps, and the Laplace scale of 100 queries;
* the per-step eps of 1000 equal eps-DP mechanisms (exactdp only: neither peer calibrates a
  generic (eps, delta)-DP mechanism).

Columns: the time of each, the ratio peer / exactdp, the answer, and whether the answer is safe,
*decided by exactdp* (certified: the composition at the peer's float, taken exactly, is proved to
meet or to miss the target; "undecided" when the bracket still holds the target after 180 s).
For exactdp the cost of one forward query (the certified eps at 3 digits at the answer) is
timed too, and the calibration's cost is given in forward queries (the issue's target: at most
about 50).  Each peer is skipped with the reason when it is not installed (Opacus needs torch:
``pip install "torch==2.13.0+cpu" opacus``; dp_accounting is in the ``peers`` extra).
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
import warnings
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from exactdp import Composition, optimal_epsilon
from exactdp.calibrate import calibrate_eps, calibrate_k, calibrate_laplace_scale, calibrate_sigma
from exactdp.calibrate.probes import probe_for
from exactdp.model.mechanisms import Gaussian, Laplace, PoissonSampled
from exactdp.core.numbers import parse_delta, parse_eps

SAFETY_SECONDS = 180.0


def have(module: str) -> tuple[Any, str]:
    try:
        return importlib.import_module(module), ""
    except Exception as e:  # noqa: BLE001 - any import failure is a reason to skip
        return None, f"{module} not installed ({type(e).__name__})"


def timed(f: Callable[[], Any]) -> tuple[float, Any]:
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = f()
    return time.perf_counter() - t, out


def verdict(comp_of: Callable[[Any], Composition], x: Any, eps_g: str, delta_g: str) -> str:
    """Whether the composition at x (a float taken exactly, or an int) meets the target, decided by exactdp."""
    xe = Fraction(x) if isinstance(x, float) else x
    deadline = time.monotonic() + SAFETY_SECONDS
    probe, _ = probe_for(comp_of(xe), comp_of, parse_eps(eps_g), parse_delta(delta_g), deadline=lambda: deadline)
    out = probe(xe)
    return {"meets": "safe", "fails": "UNSAFE", "undecided": "undecided"}[out.verdict]


def dpsgd(sigma: Any, q: str = "0.01", k: int = 1000) -> Composition:
    return Composition.of([(PoissonSampled(Gaussian(sigma), q), k)])


Row = dict[str, str]


def fmt_t(t: float | None) -> str:
    return "-" if t is None else (f"{t:.3f} s" if t < 10 else f"{t:.1f} s")


def run_sigma_dpsgd(eps_g: str, rows: list[Row], opacus: Any, dpa: Any) -> None:
    q, steps, dg = 0.01, 1000, "0.00001"
    problem = f"DP-SGD sigma, q=0.01, 1000 steps, ({eps_g}, 1e-5)"
    t, r = timed(lambda: calibrate_sigma(steps, eps_g, dg, q="0.01"))
    tf, _ = timed(lambda: optimal_epsilon(dpsgd(r.value), dg, digits=3))
    rows.append({"problem": problem, "library": "exactdp calibrate_sigma", "time": fmt_t(t), "ratio": "1",
                 "answer": f"{r.value_str} (fails at {r.fails_at_str})", "safe": "safe (certified)",
                 "forward": f"{fmt_t(tf)}; {t / tf:.1f} forward queries"})
    comp_of = lambda s: dpsgd(s)  # noqa: E731
    if opacus is None:
        rows.append({"problem": problem, "library": "opacus", "answer": f"skipped: {OPACUS_WHY}"})
    else:
        for acc in ("rdp", "prv"):
            tp, s = timed(lambda: opacus.get_noise_multiplier(target_epsilon=float(eps_g), target_delta=1e-5,
                                                              sample_rate=q, steps=steps, accountant=acc))
            rows.append({"problem": problem, "library": f"opacus get_noise_multiplier ({acc})", "time": fmt_t(tp),
                         "ratio": f"{tp / t:.2f}", "answer": f"{s:.6g}", "safe": verdict(comp_of, s, eps_g, dg)})
    if dpa is None:
        rows.append({"problem": problem, "library": "dp_accounting", "answer": f"skipped: {DPA_WHY}"})
    else:
        from dp_accounting import dp_event, mechanism_calibration, pld, rdp

        for name, make in (("pld", lambda: pld.PLDAccountant()), ("rdp", lambda: rdp.RdpAccountant())):
            def ev(s: float) -> Any:
                return dp_event.SelfComposedDpEvent(dp_event.PoissonSampledDpEvent(q, dp_event.GaussianDpEvent(s)), steps)

            tp, s = timed(lambda: mechanism_calibration.calibrate_dp_mechanism(make, ev, float(eps_g), 1e-5))
            rows.append({"problem": problem, "library": f"dp_accounting calibrate_dp_mechanism ({name})",
                         "time": fmt_t(tp), "ratio": f"{tp / t:.2f}", "answer": f"{s:.6g}",
                         "safe": verdict(comp_of, s, eps_g, dg)})


def run_steps(rows: list[Row], dpa: Any) -> None:
    problem = "DP-SGD steps, sigma=1, q=0.01, (2, 1e-5)"
    t, r = timed(lambda: calibrate_k("gaussian:sigma=1,q=0.01", "2", "1e-5"))
    tf, _ = timed(lambda: optimal_epsilon(dpsgd("1", k=r.value), "1e-5", digits=3))
    rows.append({"problem": problem, "library": "exactdp calibrate_k", "time": fmt_t(t), "ratio": "1",
                 "answer": f"{r.value} ({r.fails_at} fails{'' if r.exact else '; not separated'})",
                 "safe": "safe (certified)", "forward": f"{fmt_t(tf)}; {t / tf:.1f} forward queries"})
    if dpa is None:
        rows.append({"problem": problem, "library": "dp_accounting", "answer": f"skipped: {DPA_WHY}"})
        return
    from dp_accounting import dp_event, mechanism_calibration, pld

    def ev(n: int) -> Any:
        return dp_event.SelfComposedDpEvent(dp_event.PoissonSampledDpEvent(0.01, dp_event.GaussianDpEvent(1.0)), n)

    tp, n = timed(lambda: mechanism_calibration.calibrate_dp_mechanism(
        pld.PLDAccountant, ev, 2.0, 1e-5, mechanism_calibration.LowerEndpointAndGuess(1, 1000), discrete=True))
    rows.append({"problem": problem, "library": "dp_accounting calibrate_dp_mechanism (pld, discrete)",
                 "time": fmt_t(tp), "ratio": f"{tp / t:.2f}", "answer": str(n),
                 "safe": verdict(lambda k: dpsgd("1", k=int(k)), int(n), "2", "0.00001")})


def run_gaussian(rows: list[Row], opacus: Any, dpa: Any) -> None:
    problem = "Gaussian sigma, 100 steps, (1, 1e-5)"
    t, r = timed(lambda: calibrate_sigma(100, "1", "1e-5"))
    comp_of = lambda s: Composition.of([(Gaussian(s), 100)])  # noqa: E731
    tf, _ = timed(lambda: optimal_epsilon(comp_of(r.value), "1e-5", digits=3))
    rows.append({"problem": problem, "library": "exactdp calibrate_sigma", "time": fmt_t(t), "ratio": "1",
                 "answer": f"{r.value_str} (fails at {r.fails_at_str})", "safe": "safe (certified)",
                 "forward": f"{fmt_t(tf)}; {t / tf:.1f} forward queries"})
    if opacus is not None:
        tp, s = timed(lambda: opacus.get_noise_multiplier(target_epsilon=1.0, target_delta=1e-5, sample_rate=1.0,
                                                          steps=100, accountant="rdp"))
        rows.append({"problem": problem, "library": "opacus get_noise_multiplier (rdp)", "time": fmt_t(tp),
                     "ratio": f"{tp / t:.2f}", "answer": f"{s:.6g}", "safe": verdict(comp_of, s, "1", "0.00001")})
    if dpa is not None:
        from dp_accounting import dp_event, mechanism_calibration, pld

        tp, s = timed(lambda: mechanism_calibration.calibrate_dp_mechanism(
            pld.PLDAccountant, lambda x: dp_event.SelfComposedDpEvent(dp_event.GaussianDpEvent(x), 100), 1.0, 1e-5))
        rows.append({"problem": problem, "library": "dp_accounting calibrate_dp_mechanism (pld)", "time": fmt_t(tp),
                     "ratio": f"{tp / t:.2f}", "answer": f"{s:.6g}", "safe": verdict(comp_of, s, "1", "0.00001")})


def run_laplace(rows: list[Row], dpa: Any) -> None:
    problem = "Laplace scale, 100 queries, (1, 1e-6)"
    t, r = timed(lambda: calibrate_laplace_scale(100, "1", "1e-6"))
    comp_of = lambda b: Composition.of([(Laplace(b), 100)])  # noqa: E731
    tf, _ = timed(lambda: optimal_epsilon(comp_of(r.value), "1e-6", digits=3))
    rows.append({"problem": problem, "library": "exactdp calibrate_laplace_scale", "time": fmt_t(t), "ratio": "1",
                 "answer": f"{r.value_str} (fails at {r.fails_at_str})", "safe": "safe (certified)",
                 "forward": f"{fmt_t(tf)}; {t / tf:.1f} forward queries"})
    if dpa is not None:
        from dp_accounting import dp_event, mechanism_calibration, pld

        tp, s = timed(lambda: mechanism_calibration.calibrate_dp_mechanism(
            pld.PLDAccountant, lambda b: dp_event.SelfComposedDpEvent(dp_event.LaplaceDpEvent(b), 100), 1.0, 1e-6))
        rows.append({"problem": problem, "library": "dp_accounting calibrate_dp_mechanism (pld)", "time": fmt_t(tp),
                     "ratio": f"{tp / t:.2f}", "answer": f"{s:.6g}", "safe": verdict(comp_of, s, "1", "0.000001")})


def run_eps(rows: list[Row]) -> None:
    problem = "per-step eps, 1000 x (eps, 0)-DP, (1, 1e-5)"
    t, r = timed(lambda: calibrate_eps(1000, "1", "1e-5"))
    tf, _ = timed(lambda: optimal_epsilon((r.value, 0, 1000), "1e-5", digits=3))
    rows.append({"problem": problem, "library": "exactdp calibrate_eps", "time": fmt_t(t), "ratio": "1",
                 "answer": f"{r.value_str} (fails at {r.fails_at_str})", "safe": "safe (certified)",
                 "forward": f"{fmt_t(tf)}; {t / tf:.1f} forward queries"})
    rows.append({"problem": problem, "library": "opacus, dp_accounting",
                 "answer": "skipped: no calibration of a generic (eps, delta)-DP mechanism"})


OPACUS_WHY = DPA_WHY = ""


def main(argv: list[str] | None = None) -> int:
    global OPACUS_WHY, DPA_WHY
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="one DP-SGD target only")
    args = ap.parse_args(argv)
    opacus, OPACUS_WHY = have("opacus.accountants.utils")
    dpa, DPA_WHY = have("dp_accounting.mechanism_calibration")
    rows: list[Row] = []
    for eg in (("2",) if args.quick else ("1", "2", "8")):
        run_sigma_dpsgd(eg, rows, opacus, dpa)
    if not args.quick:
        run_steps(rows, dpa)
    run_gaussian(rows, opacus, dpa)
    run_laplace(rows, dpa)
    run_eps(rows)
    cols = ["problem", "library", "time", "ratio", "answer", "safe", "forward"]
    print("| " + " | ".join(["problem", "library", "time", "peer / exactdp", "answer", "safe? (decided by exactdp)",
                             "exactdp: one forward query; calibration cost"]) + " |")
    print("|" + "---|" * len(cols))
    for r in rows:
        print("| " + " | ".join(r.get(c, "") for c in cols) + " |")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
