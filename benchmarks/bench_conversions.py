"""Benchmark (issue 28 §2): what each RDP -> (eps, delta) conversion costs, certified, beside the optimum.

    python benchmarks/bench_conversions.py [--quick]
    python benchmarks/bench_conversions.py --plot docs/figures/conversions.png [--steps 1,10,100]

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

``--plot FILE`` (instead of the tables): the figure of docs/rdp.md §3, eps at delta 1e-5 of DP-SGD
(sigma 1, q 0.01) over 1 to 10,000 steps (``--steps LIST`` to choose them), for the certified optimum
(the PLD bracket, 3 digits) and each conversion (its best order, 4 digits), with their ratios to the
optimum below; the upper ends are drawn (the optimum's band is narrower than the line).  zcdp and
zcdp-tight refuse a subsample, so they are not drawn.  Needs matplotlib; about a minute.
"""

from __future__ import annotations

import sys
import time
from fractions import Fraction

import exactdp
from exactdp.core.errors import InvalidParameterError

DPSGD = ("gaussian:sigma=1,q=0.01,count=1000", "1e-5")
CONVERSIONS = ("rdp-mironov", "rdp-cks", "rdp-bbghs", "rdp-asoodeh")
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


#: the steps of the figure: 1, 2, 5, 10, ..., 10,000
PLOT_STEPS = tuple(m * 10**e for e in range(5) for m in (1, 2, 5) if m * 10**e <= 10**4)


def figure_rows(steps: tuple[int, ...]) -> dict[str, list[Fraction]]:
    """The upper ends of eps at delta 1e-5 for DP-SGD (sigma 1, q 0.01) at each step count, by method."""
    rows: dict[str, list[Fraction]] = {m: [] for m in ("optimal", *CONVERSIONS)}
    for k in steps:
        spec = f"gaussian:sigma=1,q=0.01,count={k}"
        for m, values in rows.items():
            e = exactdp.epsilon(spec, "1e-5", method=m, digits=3 if m == "optimal" else 4)
            values.append(Fraction(e.upper))
        print(f"  {k:6d} steps: " + "  ".join(f"{m} {float(v[-1]):.4f}" for m, v in rows.items()),  # float ok: display
              flush=True)
    return rows


def plot(path: str, steps: tuple[int, ...] = PLOT_STEPS) -> None:
    """Draw the figure of docs/rdp.md §3 into ``path`` (PNG, about 40 kB; no date in its metadata)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    rows = figure_rows(steps)
    fig = Figure(figsize=(6.4, 5.6), dpi=100)
    FigureCanvasAgg(fig)
    top, bottom = fig.subplots(2, 1, sharex=True, gridspec_kw={"height_ratios": [3, 2]})
    styles = {"optimal": ("k", "-", "optimal (certified PLD)"), "rdp-mironov": ("tab:red", "--", "rdp-mironov"),
              "rdp-cks": ("tab:blue", "-.", "rdp-cks"), "rdp-bbghs": ("tab:green", ":", "rdp-bbghs (= rdp-cks)"),
              "rdp-asoodeh": ("tab:purple", (0, (5, 1)), "rdp-asoodeh (optimal per order)")}
    opt = [float(v) for v in rows["optimal"]]  # float ok: drawing
    for m, values in rows.items():
        color, ls, label = styles[m]
        ys = [float(v) for v in values]  # float ok: drawing
        top.plot(steps, ys, color=color, linestyle=ls, marker="o", markersize=3, label=label)
        if m != "optimal":
            bottom.plot(steps, [y / o for y, o in zip(ys, opt)], color=color, linestyle=ls, marker="o", markersize=3,
                        label=label)
    top.set_xscale("log")
    top.set_yscale("log")
    top.set_ylabel("eps at delta = 1e-5 (upper end)")
    top.set_title("DP-SGD, sigma 1, q 0.01: what each RDP conversion costs", fontsize=10)
    top.grid(True, which="both", alpha=0.3)
    top.legend(fontsize=8)
    bottom.axhline(1, color="k", linewidth=0.8)
    bottom.set_ylabel("conversion / optimal")
    bottom.set_xlabel("steps (zcdp, zcdp-tight: refused for a subsample)")
    bottom.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, format="png", metadata={"Software": None})
    print(f"wrote {path}")


def main(argv: list[str]) -> int:
    if "--plot" in argv:
        i = argv.index("--plot")
        if i + 1 >= len(argv):
            print("--plot needs a file name", file=sys.stderr)
            return 2
        steps = PLOT_STEPS
        if "--steps" in argv and argv.index("--steps") + 1 < len(argv):
            steps = tuple(int(x) for x in argv[argv.index("--steps") + 1].split(","))
        plot(argv[i + 1], steps)
        return 0
    part1()
    if "--quick" not in argv:
        part2()
    print(f"({time.strftime('%Y-%m-%d %H:%M')})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
