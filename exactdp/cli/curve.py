"""``exactdp curve``: the certified privacy curve of a composition at many points (docs/pld.md §8).

    exactdp curve COMPOSITION --eps-from A --eps-to B --points N [--digits D] [--json | --csv FILE] [--plot FILE]
    exactdp curve COMPOSITION --delta-from A --delta-to B --points N ...

The points and the curve are computed by :mod:`exactdp.api.curve`; this module reads the options
and prints the points (text, JSON or CSV), or draws the certified band.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys
from collections.abc import Sequence
from typing import Any

from exactdp.api.curve import MAX_POINTS, delta_curve, delta_points, eps_points, epsilon_curve
from exactdp.cli.options import COMP_USAGE, EPILOG_NUMBERS, Parser, add_budget, add_composition, add_direction
from exactdp.cli.output import error_message, status_of
from exactdp.core import progress
from exactdp.core.enclosure import Enclosure
from exactdp.core.errors import ExactDPError, InvalidParameterError, PrecisionError
from exactdp.core.numbers import format_fraction, parse_digits
from exactdp.model.composition import Composition, directed
from exactdp.model.inputs import composition_from_args
from exactdp.model.mechanisms import parse_direction

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser of ``exactdp curve``."""
    p = Parser(
        prog="exactdp curve",
        usage=f"exactdp curve {COMP_USAGE} (--eps-from A --eps-to B | --delta-from A --delta-to B) "
              "--points N [options]",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="The certified privacy curve of a composition at many points, from one build of its\n"
                    "distribution: delta(eps_g) for eps_g from A to B, or eps_g(delta_g) for delta_g from A to B\n"
                    "(log-spaced).  Every point is an enclosure [lower, upper] (exact where rational).",
        epilog=("examples:\n"
                "  exactdp curve --eps 0.1 --delta 0.001 --k 30 --eps-from 0 --eps-to 3 --points 7\n"
                "  exactdp curve --mechanism gaussian:sigma=2,count=50 --delta-from 1e-9 --delta-to 1e-3 --points 4 --json\n"
                "  exactdp curve --mechanism laplace:scale=10,count=100 --eps-from 1 --eps-to 5 --points 5 --digits 6 --csv -\n\n"
                + EPILOG_NUMBERS),
    )
    add_composition(p)
    g = p.add_argument_group("points (one of the two directions)")
    g.add_argument("--eps-from", metavar="A", help="first eps_g (delta direction; below 0 too, e.g. -1)")
    g.add_argument("--eps-to", metavar="B", help="last eps_g")
    g.add_argument("--delta-from", metavar="A", help="first (smallest) delta_g (eps direction)")
    g.add_argument("--delta-to", metavar="B", help="last delta_g")
    p.add_argument("--points", metavar="N", required=True, help=f"number of points (at most {MAX_POINTS})")
    p.add_argument("--digits", default="10", metavar="N", help="significant digits per point (default 10)")
    add_budget(p)
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print one JSON object")
    out.add_argument("--csv", metavar="FILE", help="write the points as CSV to FILE ('-' for stdout)")
    add_direction(p)
    p.add_argument("--plot", metavar="FILE", help="draw the curve (the certified band) with matplotlib into FILE")
    return p


def _row(x: str, enc: Enclosure, digits: int) -> dict[str, Any]:
    d = enc.to_json(requested=digits)  # "digits": what the printed ends certify (docs/contracts.md §4)
    row = {"at": x, "lower": d["lower"], "upper": d["upper"], "exact": d["exact"],
           "float_lower": d["float_lower"], "float_upper": d["float_upper"], "digits": d["digits"],
           "algorithm": enc.algorithm}
    if "digits_requested" in d:
        row["digits_requested"] = d["digits_requested"]
    return row


def main(argv: Sequence[str] | None = None) -> int:
    """``exactdp curve``: returns the exit status (docs/contracts.md §3)."""
    args = build_parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    try:
        # the budget covers reading the mechanisms too (docs/contracts.md §2.1)
        with progress.task("curve", max_seconds=progress.parse_seconds(args.max_seconds, "--max-seconds")):
            pair_direction = parse_direction(args.direction, "--direction")
            comp = directed(composition_from_args(args.eps, args.delta, args.k, args.mechanism, args.mechanisms),
                            pair_direction)
            eps_dir = args.eps_from is not None or args.eps_to is not None
            del_dir = args.delta_from is not None or args.delta_to is not None
            if eps_dir == del_dir:
                raise InvalidParameterError("give either --eps-from/--eps-to or --delta-from/--delta-to")
            if eps_dir and (args.eps_from is None or args.eps_to is None):
                raise InvalidParameterError("--eps-from and --eps-to go together")
            if del_dir and (args.delta_from is None or args.delta_to is None):
                raise InvalidParameterError("--delta-from and --delta-to go together")
            digits = parse_digits(args.digits)
            budget = progress.parse_seconds(args.max_seconds)
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
                    labels, pts = [str(x) for x in xs], list[Any](xs)
                else:
                    ds = delta_points(args.delta_from, args.delta_to, args.points)
                    encs = epsilon_curve(comp, ds, digits=digits, max_seconds=budget)
                    labels, pts = [format_fraction(d) for d in ds], list[Any](ds)
            rows = [_row(x, e, digits) for x, e in zip(labels, encs)]
            if args.plot:
                _plot(pts, encs, comp, "delta" if eps_dir else "epsilon", args.plot)
    except (ExactDPError, PrecisionError, ValueError) as e:
        print(f"exactdp curve: {error_message(e, None)}", file=sys.stderr)
        return status_of(e) if isinstance(e, ExactDPError) else 2
    direction = "delta" if eps_dir else "epsilon"
    if args.json:
        print(json.dumps({"query": "curve", "direction": direction, "pair_direction": pair_direction,
                          "inputs": comp.to_inputs(), "points": rows}))
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
        for r, enc in zip(rows, encs):
            exact = r["exact"]
            val = exact if exact is not None and len(exact) <= 40 else f"[{enc.lower_str()}, {enc.upper_str()}]"
            print(f"  {r['at']:>24}  {val}")
    if args.plot:
        print(f"plot written to {args.plot}", file=sys.stderr)
    return 0


def _plot(xs: Sequence[Any], encs: list[Enclosure], comp: Composition, direction: str, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from exactdp.plots import plot_curve

    fig, ax = plt.subplots(figsize=(6, 4))
    plot_curve(xs, encs, direction=direction, ax=ax)
    ax.set_title(f"{str(comp)[:70]}", fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
