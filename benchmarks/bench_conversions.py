"""Benchmark (issue 28 §2): what each RDP -> (eps, delta) conversion costs, certified, beside the optimum.

    python benchmarks/bench_conversions.py [--quick]

Part 1, the DP-SGD row (sigma 1, q 0.01, 1,000 steps, delta 1e-5): exactdp certifies each
conversion's best eps over its default orders to 10 digits (``exactdp.epsilon(..., method=NAME,
digits=10)``, timed in process, imports excluded), beside dp_accounting's RdpAccountant and
Opacus's RDPAccountant (their floats and times, same run, where installed; dp_accounting twice:
with its default orders, which include fractional ones exactdp does not compute for a subsampled
Gaussian, and with the integer orders of the same set, which exactdp uses), and the certified
optimum (the PLD bracket, ``digits=4``).  Ratios: peer eps / exactdp's upper end (1 when they agree)
and peer time / exactdp time.

Part 2, "what each conversion costs": for a few compositions, the eps at delta 1e-5 of each
conversion (upper ends, rounded up to 6 digits) and its ratio to the certified optimum's upper end;
zcdp and zcdp-tight where the composition has a zCDP rho (Gaussians, pure pairs), "-" where they
refuse.  ``--quick``: part 1 only.
"""

from __future__ import annotations

import sys
import time
from fractions import Fraction

import exactdp
from exactdp.core.errors import InvalidParameterError

DPSGD = ("gaussian:sigma=1,q=0.01,count=1000", "1e-5")
CONVERSIONS = ("rdp-mironov", "rdp-cks", "rdp-bbghs")
COST_ROWS = [
    ("Gaussian s=2 x 10", ["gaussian:sigma=2,count=10"]),
    ("Gaussian s=10 x 1000", ["gaussian:sigma=10,count=1000"]),
    ("Laplace b=10 x 100", ["laplace:scale=10,count=100"]),
    ("pure (0.1, 0) x 100", [("0.1", "0", 100)]),
    ("DP-SGD s=1 q=0.01 x 1000", ["gaussian:sigma=1,q=0.01,count=1000"]),
]


def _timed(fn, *args, **kw):  # type: ignore[no-untyped-def]
    t = time.perf_counter()
    out = fn(*args, **kw)
    return out, time.perf_counter() - t


def _dp_accounting(integer_only: bool) -> tuple[float, float, float] | str:
    try:
        import dp_accounting
        from dp_accounting.rdp import rdp_privacy_accountant as rdp
    except ImportError as e:
        return f"not installed ({e.name})"
    orders = [o for o in rdp.DEFAULT_RDP_ORDERS if not integer_only or float(o).is_integer()]
    t = time.perf_counter()
    acc = rdp.RdpAccountant(orders=orders)
    acc.compose(dp_accounting.PoissonSampledDpEvent(0.01, dp_accounting.GaussianDpEvent(1.0)), 1000)
    eps, order = acc.get_epsilon_and_optimal_order(1e-5)
    return float(eps), float(order), time.perf_counter() - t  # float ok: peer floats


def _opacus() -> tuple[float, float, float] | str:
    try:
        from opacus.accountants import RDPAccountant
    except ImportError as e:
        return f"not installed ({e.name})"
    t = time.perf_counter()
    acc = RDPAccountant()
    acc.history = [(1.0, 0.01, 1000)]  # (noise multiplier, sample rate, steps)
    eps, order = acc.get_privacy_spent(delta=1e-5)
    return float(eps), float(order), time.perf_counter() - t  # float ok: peer floats


def part1() -> None:
    print("DP-SGD sigma=1 q=0.01 1000 steps, eps at delta 1e-5")
    print(f"  {'who':36s} {'eps':>26s} {'order':>6s} {'seconds':>8s} {'eps ratio':>10s} {'time ratio':>10s}")
    spec, delta = DPSGD
    best = None
    for name in CONVERSIONS:
        e, dt = _timed(exactdp.epsilon, spec, delta, method=name, digits=10)
        order = e.algorithm.rpartition("order ")[2].rstrip(")")
        print(f"  exactdp {name:28s} [{e.lower_str()}, {e.upper_str()}] {order:>6s} {dt:8.3f}")
        if best is None or e.upper < best[0].upper:
            best = (e, dt)
    assert best is not None
    up = Fraction(best[0].upper)
    for who, res in (("dp_accounting RdpAccountant", _dp_accounting(False)),
                     ("dp_accounting, integer orders", _dp_accounting(True)),
                     ("Opacus RDPAccountant", _opacus())):
        if isinstance(res, str):
            print(f"  {who:36s} {res}")
            continue
        eps, order, dt = res
        print(f"  {who:36s} {eps:26.12f} {order:6g} {dt:8.3f} {eps / float(up):10.7f} "  # float ok: display
              f"{dt / best[1]:10.2f}")
    opt, dt = _timed(exactdp.epsilon, spec, delta, digits=4)
    print(f"  exactdp optimal (PLD)                [{opt.lower_str()}, {opt.upper_str()}] {'':>6s} {dt:8.3f} "
          f"{float(up / Fraction(opt.upper)):10.4f}  (best conversion / optimum)")  # float ok: display


def part2() -> None:
    methods = ("optimal", *CONVERSIONS, "zcdp", "zcdp-tight")
    print("\nwhat each conversion costs: eps at delta 1e-5 (upper ends) and the ratio to the optimum")
    print(f"  {'composition':26s} " + " ".join(f"{m:>19s}" for m in methods))
    for label, comp in COST_ROWS:
        cells = []
        opt_up = None
        for m in methods:
            try:
                e = exactdp.epsilon(comp, "1e-5", method=m, digits=6 if m != "optimal" else 4)
            except InvalidParameterError:
                cells.append(f"{'-':>19s}")
                continue
            if m == "optimal":
                opt_up = Fraction(e.upper)
                cells.append(f"{e.upper_str():>19s}")
            else:
                assert opt_up is not None
                ratio = float(Fraction(e.upper) / opt_up)  # float ok: display
                cells.append(f"{e.upper_str()[:9]:>9s} ({ratio:6.3f}x)")
        print(f"  {label:26s} " + " ".join(cells))


def main(argv: list[str]) -> int:
    part1()
    if "--quick" not in argv:
        part2()
    print(f"({time.strftime('%Y-%m-%d %H:%M')})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
