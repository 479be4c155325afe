"""``exactdp budget``: what a planned list of mechanisms spends of a target, and what remains.

    exactdp budget (--mechanism SPEC ... | --mechanisms FILE) --target-eps E --target-delta DG
                   [--next SPEC] [--next-delta D] [--plot FILE] [--json] [--max-seconds S]

Spent: the certified optimal eps of the plan at the target delta and the exact decision whether the
plan alone meets the target.  Remaining: the largest eps of one more (eps, D)-DP mechanism that
still meets the target (certified, :func:`exactdp.calibrate.calibrate_eps` with the plan as base),
and with ``--next SPEC`` the largest further count of that mechanism (exact: k more runs meet the
target and k + 1 do not).  For plans of (eps, delta)-DP mechanisms the classical bounds (basic,
DRV10, KOV15 Thm 3.5, Steinke, zCDP) are shown beside the optimum, each with what it says remains.
``--plot`` draws the spending curve: eps at the target delta as the plan runs, optimum and bounds,
against the target (docs/calibration.md §5).

Exit status: 0 the plan meets the target, 1 it does not (nothing remains), 2 bad input, 3 a
certified answer was out of reach within the budget, 5 an internal error.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from exactdp.core import progress
from exactdp.core.enclosure import Enclosure
from exactdp.core.errors import ExactDPError, InvalidParameterError, PrecisionError
from exactdp.core.numbers import decimal_string, format_fraction, parse_delta, parse_eps
from exactdp.model.composition import Composition

__all__ = ["BOUND_METHODS", "EXAMPLES", "BudgetReport", "budget", "main"]

#: the classical bounds shown beside the optimum (docs/mathematics.md §4)
BOUND_METHODS = ("basic", "drv10", "kov15-3.5", "steinke", "zcdp", "zcdp-tight")

EXAMPLES = [
    "exactdp budget --mechanism 0.1,0,10 --mechanism 0.5,1e-6 --target-eps 2 --target-delta 1e-5",
    "exactdp budget --mechanism 0.05,0,20 --target-eps 2 --target-delta 1e-5 --next 0.1 --json",
    "exactdp budget --mechanism gaussian:sigma=20,count=5 --target-eps 1 --target-delta 1e-5 --next gaussian:sigma=10",
    "printf '0.1,0,10\\n0.5,1e-6\\n' | exactdp budget --mechanisms - --target-eps 2 --target-delta 1e-5 --plot spend.png",
]


@dataclass(frozen=True)
class BudgetRow:
    """One method's view: eps spent at the target delta, whether it certifies the target, and the
    largest eps of one more mechanism it allows (None when nothing remains)."""

    method: str
    spent: Enclosure
    within: bool
    remaining: Any  # a Calibration, or None


@dataclass(frozen=True)
class BudgetReport:
    """The budget view of a plan against a target (docs/calibration.md §5)."""

    plan: Composition
    target_eps: Any
    target_delta: Fraction
    within: bool
    rows: tuple[BudgetRow, ...]
    next_mechanism: str | None
    next_count: Any  # a Calibration of k, or None
    next_delta: Fraction
    notes: tuple[str, ...] = field(default=())
    seconds: float = 0.0  # float ok: a timing

    def to_json(self) -> dict[str, Any]:
        def enc(e: Enclosure) -> dict[str, Any]:
            return {"lower": e.lower_str(), "upper": e.upper_str()}

        out: dict[str, Any] = {
            "query": "budget",
            "inputs": {**self.plan.to_inputs(), "target_eps": str(self.target_eps),
                       "target_delta": format_fraction(self.target_delta),
                       "next_delta": format_fraction(self.next_delta)},
            "within_target": self.within,
            "methods": [{"method": r.method, "spent_eps": enc(r.spent), "within_target": r.within,
                         "remaining_eps": r.remaining.to_json() if r.remaining is not None else None}
                        for r in self.rows],
        }
        if self.next_mechanism is not None:
            out["inputs"]["next"] = self.next_mechanism
            out["next_count"] = self.next_count.to_json() if self.next_count is not None else None
        if self.notes:
            out["notes"] = list(self.notes)
        out["seconds"] = round(self.seconds, 3)
        return out

    def __str__(self) -> str:
        lines = [f"budget of {self.plan} against (eps_g, delta_g) = ({self.target_eps}, "
                 f"{format_fraction(self.target_delta)})",
                 "  " + ("the plan meets the target" if self.within else "the plan MISSES the target: nothing remains")
                 + " (optimal composition, exact decision)" if self.plan.is_generic else
                 "  " + ("the plan meets the target" if self.within else "the plan MISSES the target: nothing remains")
                 + " (optimal composition, certified)"]
        nd = format_fraction(self.next_delta)
        head = f"  {'method':<12} {'eps spent at delta_g':<34} {'meets':<6} one more (eps, {nd})-DP mechanism: eps <="
        lines.append(head)
        for r in self.rows:
            spent = f"[{_short(r.spent.lower, 'down')}, {_short(r.spent.upper, 'up')}]" if r.spent.lower != r.spent.upper \
                else _short(r.spent.lower, "down")
            if r.spent.is_infinite:
                spent = "inf"
            rem = "nothing" if r.remaining is None else (
                f"{r.remaining.value_str} (certified; {r.remaining.fails_at_str} misses)"
                if r.remaining.fails_at is not None else r.remaining.value_str)
            lines.append(f"  {r.method:<12} {spent:<34} {'yes' if r.within else 'no':<6} {rem}")
        if self.next_mechanism is not None:
            c = self.next_count
            if c is None:
                lines.append(f"  next {self.next_mechanism}: not even one more run meets the target")
            elif c.exact and c.fails_at is not None:
                lines.append(f"  next {self.next_mechanism}: at most {c.value} more runs ({c.fails_at} miss the target; exact)")
            else:
                lines.append(f"  next {self.next_mechanism}: {c.value} more runs meet the target"
                             + (f", {c.fails_at} miss it" if c.fails_at is not None else "")
                             + " (the counts between could not be decided within the budget)")
        for n in self.notes:
            lines.append(f"  note: {n}")
        return "\n".join(lines)


def _short(q: Any, direction: str) -> str:
    if isinstance(q, float):  # float ok: +inf from an enclosure end, tested exactly
        return "inf"
    if q == 0:
        return "0"
    return decimal_string(q, 8, direction)  # type: ignore[arg-type]


def budget(plan: object, target_eps: object, target_delta: object, *, next_mechanism: object = None,
           next_delta: object = 0, methods: Sequence[str] = BOUND_METHODS,
           max_seconds: object = None) -> BudgetReport:
    """The budget view of ``plan`` (anything :meth:`Composition.of` accepts) against the target
    (docs/calibration.md §5).

    >>> r = budget([("0.1", "0", 10), ("0.5", "0.000001")], "2", "1e-5")
    >>> r.within, r.rows[0].method, r.rows[0].remaining.value_str, r.rows[0].remaining.fails_at_str
    (True, 'optimal', '0.51463463', '0.5146348')
    >>> [(x.method, x.within, x.remaining and x.remaining.value_str) for x in r.rows[1:3]]
    [('basic', True, '0.5'), ('drv10', False, None)]
    """
    from exactdp.api.methods import get_method
    from exactdp.api.optimal import is_private, optimal_epsilon
    from exactdp.calibrate import InfeasibleTargetError, calibrate_eps, calibrate_k

    comp = Composition.of(plan)
    eps_g, delta_g = parse_eps(target_eps, "target_eps"), parse_delta(target_delta, "target_delta")
    nd = parse_delta(next_delta, "next_delta")
    for m in methods:
        get_method(m)
    start = time.monotonic()
    notes: list[str] = []
    rows: list[BudgetRow] = []
    with progress.task("budget"):
        within = is_private(comp, eps_g, delta_g)
        spent = optimal_epsilon(comp, delta_g, digits=8)
        rem = None
        if within:
            try:
                rem = calibrate_eps(1, eps_g, delta_g, delta=nd, base=comp, max_seconds=max_seconds)
            except InfeasibleTargetError:
                rem = None
        rows.append(BudgetRow("optimal", spent, within, rem))
        if comp.is_generic:
            for m in methods:
                e = get_method(m).epsilon(comp, delta_g, digits=8)
                ok = not e.is_infinite and _leq(e.upper, eps_g)
                r = None
                if ok:
                    try:
                        r = calibrate_eps(1, eps_g, delta_g, delta=nd, base=comp, method=m, max_seconds=max_seconds)
                    except InfeasibleTargetError:
                        r = None
                rows.append(BudgetRow(m, e, ok, r))
        else:
            notes.append("the classical bounds need (eps, delta)-DP mechanisms; this plan has "
                         + ", ".join(sorted({getattr(m, 'kind', 'generic') for m, _ in comp.groups})) + " ones")
        nxt, count = None, None
        if next_mechanism is not None:
            from exactdp.calibrate import _mech_str, _mechanism

            mech = _mechanism(next_mechanism)
            nxt = _mech_str(mech)
            if within:
                try:
                    count = calibrate_k(mech, eps_g, delta_g, base=comp, max_seconds=max_seconds)
                except InfeasibleTargetError:
                    count = None
    return BudgetReport(comp, eps_g, delta_g, within, tuple(rows), nxt, count, nd, tuple(notes),
                        time.monotonic() - start)


def _leq(a: Any, eps_g: Any) -> bool:
    from exactdp.calibrate.probes import cmp_real

    return not isinstance(a, float) and cmp_real(a, eps_g) <= 0  # +inf (an enclosure end) is never <= eps_g


# -- the plot ------------------------------------------------------------------------------------------

def spending_curve(report: BudgetReport, *, points: int = 24) -> dict[str, list[tuple[int, float]]]:  # float ok: plotting only
    """eps at the target delta after each prefix of the plan (optimal and, for generic plans, the
    bounds): ``{method: [(runs so far, eps upper end as a float for plotting)]}``."""
    from exactdp.api.methods import get_method

    comp = report.plan
    total = comp.k
    marks: list[int] = []
    done = 0
    for _, c in comp.groups:
        for f in (Fraction(1, 4), Fraction(1, 2), Fraction(3, 4), Fraction(1)):
            n = done + max(1, int(c * f))
            if n not in marks:
                marks.append(n)
        done += c
    if len(marks) > points:
        step = len(marks) / points
        marks = sorted({marks[int(i * step)] for i in range(points)} | {total})
    methods = ["optimal"] + ([r.method for r in report.rows[1:]] if comp.is_generic else [])
    out: dict[str, list[tuple[int, float]]] = {m: [] for m in methods}  # float ok: plotting only
    for n in marks:
        progress.tick(f"spending curve at {n} of {total} runs")
        prefix = _prefix(comp, n)
        for m in methods:
            e = get_method(m).epsilon(prefix, report.target_delta, digits=4)
            y = float("inf") if e.is_infinite else float(e.upper)  # float ok: plotting only
            out[m].append((n, y))
    return out


def _prefix(comp: Composition, n: int) -> Composition:
    groups = []
    left = n
    for m, c in comp.groups:
        if left <= 0:
            break
        groups.append((m, min(c, left)))
        left -= c
    return Composition(tuple(groups))


def draw(report: BudgetReport, path: str) -> None:
    """The spending curve as a figure (PNG, SVG or PDF by the file's suffix)."""
    from exactdp.core.files import require_extra

    require_extra("matplotlib", "exactdp budget --plot")
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    curve = spending_curve(report)
    fig = Figure(figsize=(6.4, 4.2))
    ax = fig.subplots()
    styles = {"optimal": "-", "basic": ":", "drv10": "-.", "kov15-3.5": "--"}
    for m, pts in curve.items():
        xs = [x for x, y in pts if y != float("inf")]  # float ok: plotting only
        ys = [y for x, y in pts if y != float("inf")]  # float ok: plotting only
        if xs:
            ax.plot(xs, ys, styles.get(m, "--"), marker="o", markersize=2.5, label=m,
                    linewidth=2.2 if m == "optimal" else 1.2)
    tgt = float(report.target_eps.arb().mid())  # float ok: plotting only
    ax.axhline(tgt, color="black", linewidth=0.8)
    ax.annotate(f"target eps_g = {report.target_eps}", (0.01, tgt), xycoords=("axes fraction", "data"),
                textcoords="offset points", xytext=(2, 3), fontsize=8)
    ax.set_xlabel("mechanisms run (plan order)")
    ax.set_ylabel(f"eps at delta_g = {format_fraction(report.target_delta)}")
    ax.set_title("privacy spent as the plan runs (upper ends of certified enclosures)", fontsize=9)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(path)


# -- the command line ------------------------------------------------------------------------------------

class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"exactdp budget: error: {message} (see 'exactdp budget --help')\n")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="exactdp budget", formatter_class=argparse.RawDescriptionHelpFormatter,
                description="What a planned list of mechanisms spends of a target (eps_g, delta_g), and what "
                            "remains:\nthe largest eps of one more mechanism (certified: that eps meets the target "
                            "and a value\njust above it does not) and, with --next, the largest further count of a "
                            "mechanism\n(exact).  Classical bounds are shown beside the optimum for (eps, delta)-DP "
                            "plans.",
                epilog="examples:\n" + "\n".join(f"  {e}" for e in EXAMPLES)
                       + "\n\nplan files: one mechanism per line, 'eps,delta[,count]' or a SPEC such as "
                         "'gaussian:sigma=2,count=100'.\n\nexit status: 0 the plan meets the target, 1 it does not, "
                         "2 bad input, 3 out of the time or precision budget, 5 an internal error.")
    p.add_argument("--mechanism", metavar="SPEC", action="append",
                   help="a planned mechanism, repeatable: 'E[,D[,COUNT]]' or 'gaussian:sigma=S[,q=Q][,count=N]', ...")
    p.add_argument("--mechanisms", metavar="FILE", help="the plan, one mechanism per line (CSV or SPEC), '-' for stdin")
    p.add_argument("--target-eps", metavar="E", required=True, help="the target eps_g")
    p.add_argument("--target-delta", metavar="DG", required=True, help="the target (total) delta_g")
    p.add_argument("--next", metavar="SPEC", help="a mechanism to run next: how many more runs fit (exact)")
    p.add_argument("--next-delta", metavar="D", default="0",
                   help="delta of the one more mechanism whose largest eps is reported (default 0)")
    p.add_argument("--plot", metavar="FILE", help="draw the spending curve (PNG, SVG or PDF; needs matplotlib)")
    p.add_argument("--max-seconds", metavar="S", help="time budget of each calibration")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    return p


def _plan(args: argparse.Namespace) -> Composition:
    from exactdp.cli import composition_from_args

    if not args.mechanism and args.mechanisms is None:
        raise InvalidParameterError("mechanisms=None: give the plan with --mechanism SPEC (repeated) or --mechanisms FILE")
    items = []
    for s in args.mechanism or []:
        if ":" not in s and s.count(",") == 2:  # E,D,COUNT
            e, d, c = (x.strip() for x in s.split(","))
            items.append((e, d, c))
        else:
            items.append(s)
    if args.mechanisms is not None:
        return composition_from_args(None, None, None, None, args.mechanisms) if not items else \
            _raise("give either --mechanism (repeated) or --mechanisms FILE, not both")
    rows: list[Any] = []
    for it in items:
        if isinstance(it, tuple):
            rows.append(list(it))
        else:
            from exactdp.cli import _parse_mechanism_arg

            rows.append(_parse_mechanism_arg(it))
    return Composition.heterogeneous(rows)


def _raise(msg: str) -> Any:
    raise InvalidParameterError(msg)


def main(argv: Sequence[str] | None = None) -> int:
    """``exactdp budget ...``; returns the exit status."""
    import os

    from exactdp.cli import error_message, status_of
    from exactdp.core.files import check_output_path, require_extra

    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        return int(e.code or 0) if not isinstance(e.code, str) else 2
    start = time.monotonic()
    try:
        plan = _plan(args)
        if args.plot is not None:  # checked before any work
            require_extra("matplotlib", "exactdp budget --plot")
            check_output_path(args.plot, "plot")
        report = budget(plan, args.target_eps, args.target_delta, next_mechanism=args.next,
                        next_delta=args.next_delta, max_seconds=args.max_seconds)
        if args.plot is not None:
            draw(report, args.plot)
    except KeyboardInterrupt:
        print("exactdp: interrupted", file=sys.stderr)
        return 130
    except (Exception, MemoryError) as e:
        if os.environ.get("EXACTDP_DEBUG"):
            raise
        secs = time.monotonic() - start if isinstance(e, PrecisionError) else None
        prefix = "exactdp budget: " if isinstance(e, ExactDPError) and not isinstance(e, PrecisionError) else "exactdp: "
        print(prefix + error_message(e, None, secs), file=sys.stderr)
        return status_of(e, None)
    print(json.dumps(report.to_json()) if args.json else str(report))
    return 0 if report.within else 1
