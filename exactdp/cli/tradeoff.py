"""``exactdp tradeoff``: the certified trade-off curve (f-DP) of a composition and its GDP mu (docs/tradeoff.md).

    exactdp tradeoff COMPOSITION --alpha 0.001,0.01,0.1 [--digits D] [--json | --csv FILE] [--plot FILE]

The curve is computed by :mod:`exactdp.api.tradeoff`; this module reads the options and prints (as the
batch line of :func:`exactdp.query.run_tradeoff_query` does)
``{"query": "tradeoff", "points": [{"alpha": "0.01", "lower": ..., "upper": ...}, ...], "gdp_mu": {...}}``,
a CSV of the points, or the text, and draws the certified band.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys
from collections.abc import Sequence
from fractions import Fraction

from exactdp.api.tradeoff import MAX_ALPHAS, Tradeoff, tradeoff
from exactdp.cli.options import COMP_USAGE, EPILOG_NUMBERS, Parser, add_budget, add_composition
from exactdp.cli.output import error_message, status_of
from exactdp.core import progress
from exactdp.core.errors import ExactDPError, InvalidParameterError
from exactdp.core.numbers import parse_digits
from exactdp.model.inputs import composition_from_args

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser of ``exactdp tradeoff``."""
    p = Parser(
        prog="exactdp tradeoff",
        usage=f"exactdp tradeoff {COMP_USAGE} --alpha LIST [options]",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="The certified trade-off curve of a composition (f-DP): at each type I error alpha, the\n"
                    "type II error beta(alpha) of the optimal test between two neighbouring datasets, as an\n"
                    "enclosure [lower, upper]; and gdp_mu, the smallest mu for which the composition is mu-GDP\n"
                    "(f >= G_mu, G_mu(alpha) = Phi(Phi^-1(1 - alpha) - mu)), +inf when there is none.  Gaussian\n"
                    "compositions are exact (closed form); others come from the certified PLD.  gdp_mu is exact\n"
                    "for Gaussians, subsampled Gaussians and mixtures of Gaussians (sqrt(sum m_i^2), m_i the\n"
                    "largest shift over sigma: DP-SGD is sqrt(k)/sigma-GDP whatever q); with pure-DP or\n"
                    "fixed-batch steps its upper end is a certified bound; [lower, inf] where a step has no\n"
                    "Gaussian bound; its \"algorithm\" names the argument (docs/tradeoff.md §5).  The true\n"
                    "positive rate of dp_accounting is 1 - beta.  docs/tradeoff.md.",
        epilog=("examples:\n"
                "  exactdp tradeoff --mechanism gaussian:sigma=2,count=10 --alpha 0.001,0.01,0.1\n"
                "  exactdp tradeoff --mechanism gaussian:sigma=2,q=0.01,count=16 --alpha 0.01 --digits 4\n"
                "  exactdp tradeoff --mechanism laplace:scale=10,count=20 --alpha 0.01,0.1,0.5 --digits 6 --json\n"
                "  exactdp tradeoff --eps 0.5 --k 4 --alpha 0.05,0.2 --csv -\n\n"
                + EPILOG_NUMBERS),
    )
    add_composition(p)
    p.add_argument("--alpha", metavar="LIST", required=True,
                   help=f"comma-separated type I errors in (0, 1), e.g. 0.001,0.01,0.1 (at most {MAX_ALPHAS})")
    p.add_argument("--digits", default="10", metavar="N", help="significant digits per point (default 10)")
    add_budget(p)
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print one JSON object")
    out.add_argument("--csv", metavar="FILE", help="write the points as CSV to FILE ('-' for stdout)")
    p.add_argument("--plot", metavar="FILE", help="draw the curve (the certified band) with matplotlib into FILE")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """``exactdp tradeoff``: returns the exit status (docs/contracts.md §3)."""
    args = build_parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    try:
        budget = progress.parse_seconds(args.max_seconds, "--max-seconds")
        with progress.task("tradeoff", max_seconds=budget):
            comp = composition_from_args(args.eps, args.delta, args.k, args.mechanism, args.mechanisms)
            alphas = [a.strip() for a in args.alpha.split(",")]
            if not all(alphas):
                raise InvalidParameterError(f"--alpha={args.alpha!r} must be a comma-separated list such as "
                                            "0.001,0.01,0.1")
            digits = parse_digits(args.digits, "--digits")
            if args.plot:
                from exactdp.core.files import check_output_path, require_extra

                check_output_path(args.plot, "plot")
                require_extra("matplotlib", "--plot")
            if args.csv and args.csv != "-":
                from exactdp.core.files import check_output_path

                check_output_path(args.csv, "csv")
            t = tradeoff(comp, alphas, digits=digits)
            result = t.to_json(digits)
            if args.plot:
                _plot(list(t.alphas), t, str(comp), args.plot)
    except ExactDPError as e:
        print(f"exactdp tradeoff: {error_message(e, None)}", file=sys.stderr)
        return status_of(e)
    if args.json:
        print(json.dumps({"query": "tradeoff", "inputs": comp.to_inputs(), "points": result["points"],
                          "gdp_mu": result["gdp_mu"]}))
    elif args.csv:
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(["alpha", "lower", "upper", "exact", "float_lower", "float_upper", "digits"])
        for r in result["points"]:
            w.writerow([r["alpha"], r["lower"], r["upper"], r["exact"] or "", r["float_lower"], r["float_upper"],
                        r["digits"]])
        if args.csv == "-":
            sys.stdout.write(buf.getvalue())
        else:
            with open(args.csv, "w", encoding="utf-8", newline="") as fh:
                fh.write(buf.getvalue())
    else:
        print(f"trade-off curve (type II error beta at type I error alpha) of {comp}:")
        for r in result["points"]:
            val = r["exact"] if r["exact"] is not None and len(r["exact"]) <= 40 else f"[{r['lower']}, {r['upper']}]"
            print(f"  alpha {r['alpha']:>12}  beta {val}")
        m = result["gdp_mu"]
        mu = m["exact"] if m["exact"] is not None else f"[{m['lower']}, {m['upper']}]"
        how = f"  ({m['algorithm']}, docs/tradeoff.md §5)" if m.get("algorithm") else ""
        print(f"  GDP mu (smallest mu with f >= G_mu): {mu}{how}")
    if args.plot:
        print(f"plot written to {args.plot}", file=sys.stderr)
    return 0


def _plot(alphas: list[Fraction], t: Tradeoff, title: str, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from exactdp.plots import plot_tradeoff

    fig, ax = plt.subplots(figsize=(5, 5))
    plot_tradeoff(alphas, t.betas, ax=ax)
    ax.set_title(title[:70], fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
