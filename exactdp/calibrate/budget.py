"""The budget view (``exactdp budget``): what a planned list of mechanisms spends of a target, and what remains.

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

The command line is :mod:`exactdp.cli.budget`.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from exactdp.calibrate.certsearch import InfeasibleTargetError
from exactdp.calibrate.count import calibrate_k
from exactdp.calibrate.eps import calibrate_eps
from exactdp.calibrate.result import Calibration
from exactdp.core import progress
from exactdp.core.enclosure import Enclosure
from exactdp.core.numbers import ExactInput, ExactReal, decimal_string, format_fraction, parse_delta, parse_eps
from exactdp.model.composition import Composition, CompositionInput
from exactdp.model.inputs import MechanismInput, mechanism_text, single_mechanism

__all__ = ["BOUND_METHODS", "BudgetReport", "BudgetRow", "budget", "draw", "spending_curve"]

#: the classical bounds shown beside the optimum (docs/mathematics.md §4)
BOUND_METHODS = ("basic", "drv10", "kov15-3.5", "steinke", "zcdp", "zcdp-tight")


@dataclass(frozen=True)
class BudgetRow:
    """One method's view: eps spent at the target delta, whether it certifies the target, and the
    largest eps of one more mechanism it allows (None when nothing remains)."""

    method: str
    spent: Enclosure
    within: bool
    remaining: Calibration | None


@dataclass(frozen=True)
class BudgetReport:
    """The budget view of a plan against a target (docs/calibration.md §5)."""

    plan: Composition
    target_eps: ExactReal
    target_delta: Fraction
    within: bool
    rows: tuple[BudgetRow, ...]
    next_mechanism: str | None
    next_count: Calibration | None  # the count of next_mechanism
    next_delta: Fraction
    notes: tuple[str, ...] = field(default=())
    seconds: float = 0.0  # float ok: a timing

    def to_json(self) -> dict[str, Any]:
        def enc(e: Enclosure) -> dict[str, Any]:
            lo, hi = e.printed_ends()
            return {"lower": lo, "upper": hi}

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
        lines = [(f"budget of {self.plan} against (eps_g, delta_g) = ({self.target_eps}, "
                  f"{format_fraction(self.target_delta)})"),
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


def budget(plan: CompositionInput, target_eps: ExactInput, target_delta: ExactInput, *,
           next_mechanism: MechanismInput | None = None, next_delta: ExactInput = 0,
           methods: Sequence[str] = BOUND_METHODS, max_seconds: ExactInput | None = None) -> BudgetReport:
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
            mech = single_mechanism(next_mechanism)
            nxt = mechanism_text(mech)
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
