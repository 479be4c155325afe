"""Certified privacy curves: delta(eps_g) at many eps_g, or eps_g(delta_g) at many delta_g.

This is what an accountant's whole curve is compared against.  Every point is a certified
enclosure (exact where the answer is rational), computed from one build of the composition's
distribution: one exact profile (KOV15 / Murtagh-Vadhan), one Gaussian closed form, or one
composed PLD whose grid is refined for the hardest point (docs/pld.md §8).

    exactdp curve COMPOSITION --eps-from A --eps-to B --points N [--digits D] [--json | --csv FILE] [--plot FILE]
    exactdp curve COMPOSITION --delta-from A --delta-to B --points N ...

eps_g points are evenly spaced exact rationals from A to B; delta_g points are spaced evenly in
log10 between A and B, each rounded to three significant digits (an exact decimal), so the
points are numbers a user can type.

>>> from exactdp import Composition
>>> pts = delta_curve(Composition.homogeneous("log(3/2)", 0, 10), ["0", "log(9/4)"], digits=10)
>>> [str(p) for p in pts]
['0.46686464', '0.259066368']
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import math
import sys
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

from exactdp.core import progress
from exactdp.core.enclosure import Enclosure
from exactdp.core.errors import ExactDPError, InvalidParameterError, PrecisionError
from exactdp.core.numbers import (
    DEFAULT_DIGITS,
    ExactReal,
    format_fraction,
    parse_delta,
    parse_digits,
    parse_eps,
    parse_k,
)
from exactdp.model.composition import Composition
from exactdp.route import route

__all__ = ["MAX_POINTS", "delta_curve", "delta_points", "eps_points", "epsilon_curve", "main"]

#: the most points a curve has
MAX_POINTS = 10_000


def _uses_pld(comp: Composition) -> bool:
    return route(comp).engine.name == "pld"


def _curve(comp: Any, points: Sequence[Any], parse: Callable[[Any, str], Any], name: str,
           pld_curve: Callable[..., list[Enclosure]], one: Callable[..., Enclosure], digits: Any,
           max_seconds: float | None) -> list[Enclosure]:
    """The shared body of the two curves: one PLD build for every point, or one exact query each."""
    comp = Composition.of(comp)
    pts = [parse(p, name) for p in points]
    digits = parse_digits(digits)
    if not pts:
        raise InvalidParameterError(f"the list of {name} points is empty: give at least one point")
    if _uses_pld(comp):
        return pld_curve(comp, pts, digits=digits, max_seconds=max_seconds)
    out = []
    for i, p in enumerate(pts):
        progress.tick(f"point {i + 1}/{len(pts)}")
        out.append(one(comp, p, digits=digits))
    return out


def delta_curve(comp: Any, eps_list: Sequence[Any], *, digits: int = DEFAULT_DIGITS,
                max_seconds: float | None = None) -> list[Enclosure]:
    """The optimal total delta at every eps_g of ``eps_list`` (each a certified enclosure)."""
    from exactdp.api.optimal import optimal_delta
    from exactdp.engines.pld.engine import pld_delta_curve

    return _curve(comp, eps_list, parse_eps, "eps_g", pld_delta_curve, optimal_delta, digits, max_seconds)


def epsilon_curve(comp: Any, deltas: Sequence[Any], *, digits: int = DEFAULT_DIGITS,
                  max_seconds: float | None = None) -> list[Enclosure]:
    """The optimal eps_g at every total delta_g of ``deltas`` (+inf where none is private)."""
    from exactdp.api.optimal import optimal_epsilon
    from exactdp.engines.pld.engine import pld_epsilon_curve

    return _curve(comp, deltas, parse_delta, "delta_g", pld_epsilon_curve, optimal_epsilon, digits, max_seconds)


def eps_points(a: Any, b: Any, n: Any) -> list[ExactReal]:
    """n evenly spaced exact eps_g from a to b (a <= b, rationals).

    >>> [str(x) for x in eps_points("0", "1", 3)]
    ['0', '0.5', '1']
    """
    lo, hi = parse_eps(a, "eps_from"), parse_eps(b, "eps_to")
    k = parse_k(n, "points")
    if lo.kind != "rational" or hi.kind != "rational":
        raise InvalidParameterError("eps_from and eps_to must be rationals (not log(...)) for a curve")
    if hi.value < lo.value:
        raise InvalidParameterError(f"eps_to={b!r} must be >= eps_from={a!r}")
    if k > MAX_POINTS:
        raise InvalidParameterError(f"points={n!r} must be at most {MAX_POINTS}")
    if k == 1:
        return [lo]
    return [ExactReal.rational(lo.value + (hi.value - lo.value) * i / (k - 1)) for i in range(k)]


def delta_points(a: Any, b: Any, n: Any) -> list[Fraction]:
    """n delta_g from a to b, evenly spaced in log10, rounded to 3 significant digits (exact decimals).

    >>> [format_fraction(x) for x in delta_points("1e-9", "1e-3", 4)]
    ['0.000000001', '0.0000001', '0.00001', '0.001']
    """
    lo, hi = parse_delta(a, "delta_from"), parse_delta(b, "delta_to")
    k = parse_k(n, "points")
    if lo <= 0:
        raise InvalidParameterError(f"delta_from={a!r} must be > 0 (the points are spaced in log10)")
    if hi < lo:
        raise InvalidParameterError(f"delta_to={b!r} must be >= delta_from={a!r}")
    if k > MAX_POINTS:
        raise InvalidParameterError(f"points={n!r} must be at most {MAX_POINTS}")
    if k == 1:
        return [lo]
    la = math.log10(lo.numerator) - math.log10(lo.denominator)  # float ok: only places the points
    lb = math.log10(hi.numerator) - math.log10(hi.denominator)  # float ok: only places the points
    out = [lo]
    for i in range(1, k - 1):
        x = la + (lb - la) * i / (k - 1)
        e = math.floor(x)
        mant = round(10 ** (x - e), 2)  # float ok: the point is then an exact 3-digit decimal
        out.append(Fraction(round(mant * 100)) / 100 * Fraction(10) ** e)
    out.append(hi)
    return sorted(set(out))


# -- command line --------------------------------------------------------------------------------------

def build_parser() -> argparse.ArgumentParser:
    from exactdp.cli import _COMP_USAGE, _EPILOG_NUMBERS, _add_budget, _add_composition, _Parser

    p = _Parser(
        prog="exactdp curve",
        usage=f"exactdp curve {_COMP_USAGE} (--eps-from A --eps-to B | --delta-from A --delta-to B) "
              "--points N [options]",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="The certified privacy curve of a composition at many points, from one build of its\n"
                    "distribution: delta(eps_g) for eps_g from A to B, or eps_g(delta_g) for delta_g from A to B\n"
                    "(log-spaced).  Every point is an enclosure [lower, upper] (exact where rational).",
        epilog=("examples:\n"
                "  exactdp curve --eps 0.1 --delta 0.001 --k 30 --eps-from 0 --eps-to 3 --points 7\n"
                "  exactdp curve --mechanism gaussian:sigma=2,count=50 --delta-from 1e-9 --delta-to 1e-3 --points 4 --json\n"
                "  exactdp curve --mechanism laplace:scale=10,count=100 --eps-from 1 --eps-to 5 --points 5 --digits 6 --csv -\n\n"
                + _EPILOG_NUMBERS),
    )
    _add_composition(p)
    g = p.add_argument_group("points (one of the two directions)")
    g.add_argument("--eps-from", metavar="A", help="first eps_g (delta direction)")
    g.add_argument("--eps-to", metavar="B", help="last eps_g")
    g.add_argument("--delta-from", metavar="A", help="first (smallest) delta_g (eps direction)")
    g.add_argument("--delta-to", metavar="B", help="last delta_g")
    p.add_argument("--points", metavar="N", required=True, help=f"number of points (at most {MAX_POINTS})")
    p.add_argument("--digits", default="10", metavar="N", help="significant digits per point (default 10)")
    _add_budget(p)
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print one JSON object")
    out.add_argument("--csv", metavar="FILE", help="write the points as CSV to FILE ('-' for stdout)")
    p.add_argument("--plot", metavar="FILE", help="draw the curve (the certified band) with matplotlib into FILE")
    return p


def _row(x: str, enc: Enclosure) -> dict[str, Any]:
    d = enc.to_json()
    return {"at": x, "lower": d["lower"], "upper": d["upper"], "exact": d["exact"],
            "float_lower": d["float_lower"], "float_upper": d["float_upper"], "digits": enc.digits,
            "algorithm": enc.algorithm}


def main(argv: Sequence[str] | None = None) -> int:
    """``exactdp curve``: returns the exit status (docs/contracts.md §3)."""
    from exactdp.cli import composition_from_args, error_message, parse_seconds, status_of

    args = build_parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    try:
        comp = composition_from_args(args.eps, args.delta, args.k, args.mechanism, args.mechanisms)
        eps_dir = args.eps_from is not None or args.eps_to is not None
        del_dir = args.delta_from is not None or args.delta_to is not None
        if eps_dir == del_dir:
            raise InvalidParameterError("give either --eps-from/--eps-to or --delta-from/--delta-to")
        if eps_dir and (args.eps_from is None or args.eps_to is None):
            raise InvalidParameterError("--eps-from and --eps-to go together")
        if del_dir and (args.delta_from is None or args.delta_to is None):
            raise InvalidParameterError("--delta-from and --delta-to go together")
        digits = parse_digits(args.digits)
        budget = parse_seconds(args.max_seconds)
        if args.plot:
            from exactdp.core.files import check_output_path, require_extra

            check_output_path(args.plot, "plot")
            require_extra("matplotlib", "--plot")
        if args.csv and args.csv != "-":
            from exactdp.core.files import check_output_path

            check_output_path(args.csv, "csv")
        with progress.task("curve", max_seconds=budget):
            if eps_dir:
                xs = eps_points(args.eps_from, args.eps_to, args.points)
                encs = delta_curve(comp, xs, digits=digits, max_seconds=budget)
                labels = [str(x) for x in xs]
            else:
                ds = delta_points(args.delta_from, args.delta_to, args.points)
                encs = epsilon_curve(comp, ds, digits=digits, max_seconds=budget)
                labels = [format_fraction(d) for d in ds]
        rows = [_row(x, e) for x, e in zip(labels, encs)]
        if args.plot:
            _plot(rows, comp, "delta" if eps_dir else "epsilon", args.plot)
    except (ExactDPError, PrecisionError, ValueError) as e:
        print(f"exactdp curve: {error_message(e, None)}", file=sys.stderr)
        return status_of(e) if isinstance(e, ExactDPError) else 2
    direction = "delta" if eps_dir else "epsilon"
    if args.json:
        print(json.dumps({"query": "curve", "direction": direction, "inputs": comp.to_inputs(), "points": rows}))
    elif args.csv:
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(["eps_g" if eps_dir else "delta_g", "lower", "upper", "exact", "float_lower", "float_upper",
                    "digits"])
        for r in rows:
            w.writerow([r["at"], r["lower"], r["upper"], r["exact"] or "", r["float_lower"], r["float_upper"],
                        r["digits"]])
        if args.csv == "-":
            sys.stdout.write(buf.getvalue())
        else:
            with open(args.csv, "w", encoding="utf-8", newline="") as fh:
                fh.write(buf.getvalue())
    else:
        what = "delta at eps_g" if eps_dir else "eps_g at delta_g"
        print(f"optimal {what} for {comp}:")
        for r in rows:
            exact = r["exact"]
            val = exact if exact is not None and len(exact) <= 40 else f"[{r['lower']}, {r['upper']}]"
            print(f"  {r['at']:>24}  {val}")
    if args.plot:
        print(f"plot written to {args.plot}", file=sys.stderr)
    return 0


def _plot(rows: list[dict[str, Any]], comp: Composition, direction: str, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    # float ok: drawing only; the band is the certified [lower, upper] at each point
    xs = [float(Fraction(r["at"])) for r in rows]  # float ok: plot coordinates
    lo = [float(r["float_lower"]) if r["float_lower"] != "inf" else math.inf for r in rows]  # float ok
    hi = [float(r["float_upper"]) if r["float_upper"] != "inf" else math.inf for r in rows]  # float ok
    fig, ax = plt.subplots(figsize=(6, 4))
    if direction == "delta":
        ax.fill_between(xs, lo, hi, alpha=0.4, label="certified [lower, upper]")
        ax.plot(xs, hi, lw=1)
        ax.set_xlabel("eps_g")
        ax.set_ylabel("delta")
        ax.set_yscale("log")
    else:
        ax.fill_betweenx(xs, lo, hi, alpha=0.4, label="certified [lower, upper]")
        ax.plot(hi, xs, lw=1)
        ax.set_ylabel("delta_g")
        ax.set_xlabel("eps_g")
        ax.set_yscale("log")
    ax.set_title(f"{str(comp)[:70]}", fontsize=8)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
