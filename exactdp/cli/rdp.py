"""``exactdp rdp``: the certified Rényi divergence of a composition at each order (docs/rdp.md).

    exactdp rdp COMPOSITION --orders 2,3.5,64 [--direction max|remove|add] [--digits D] [--json]

The divergences are computed by :mod:`exactdp.api.rdp` (through :func:`exactdp.query.run_rdp_query`,
the batch form); this module reads the options and prints
``{"query": "rdp", "orders": [{"order": "2", "lower": ..., "upper": ..., "digits": N}, ...]}``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from exactdp.cli.options import COMP_USAGE, EPILOG_NUMBERS, Parser, add_budget, add_composition
from exactdp.cli.output import error_message, status_of
from exactdp.core import progress
from exactdp.core.errors import ExactDPError, InvalidParameterError
from exactdp.engines.rdp import DIRECTIONS
from exactdp.model.inputs import composition_from_args
from exactdp.query import run_rdp_query

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser of ``exactdp rdp``."""
    p = Parser(
        prog="exactdp rdp",
        usage=f"exactdp rdp {COMP_USAGE} --orders LIST [--direction max|remove|add] [options]",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="The Rényi divergence D_alpha of the composition at each order alpha > 1, certified\n"
                    "(exact where rational): RDP adds at each order.  Gaussian, Laplace, discrete Laplace,\n"
                    "discrete Gaussian, randomized response and generic pure mechanisms, and the Poisson\n"
                    "subsamples of Gaussian, Laplace, randomized response and generic pairs, and mixtures of\n"
                    "Gaussians, at every order, in each direction (remove: the mixture first; max: the larger\n"
                    "of the two sums).  A fixed batch without replacement (sample=M,of=N) is bracketed: its\n"
                    "upper end is the bound of Wang-Balle-Kasiviswanathan 2019 (JSON key \"bound\"); so are a\n"
                    "batch drawn with replacement (with-replacement=true) and the truncated subsampled Gaussian\n"
                    "(truncate=B): the upper end is their labelled dominating pair's divergence.  docs/rdp.md.",
        epilog=("examples:\n"
                "  exactdp rdp --mechanism gaussian:sigma=2,count=10 --orders 2,3.5,64\n"
                "  exactdp rdp --mechanism gaussian:sigma=1,q=0.01,count=1000 --orders 2,8,32 --direction remove --json\n"
                "  exactdp rdp --mechanism laplace:scale=1 --mechanism rr:eps=1,categories=4 --orders 1.5,2 --digits 12\n"
                "  exactdp rdp --mechanism gaussian:sigma=1,q=0.01,count=1000 --orders 1.5,2.5,10.5 --digits 20\n"
                "  exactdp rdp --mechanism mog:sigma=1,sensitivities=0/1/2,probs=0.81/0.18/0.01 --orders 1.5,4 --direction add\n"
                "  exactdp rdp --mechanism gaussian:sigma=1,sample=600,of=60000,relation=replace-one --orders 2,8,2.5\n"
                "  exactdp rdp --mechanism gaussian:sigma=1,q=0.01,truncate=20,of=1000 --orders 2,8 --json\n\n"
                + EPILOG_NUMBERS),
    )
    add_composition(p)
    p.add_argument("--orders", metavar="LIST", required=True, help="comma-separated orders > 1, e.g. 2,3.5,64")
    p.add_argument("--direction", default="max", choices=DIRECTIONS,
                   help="remove: D(with the record || without); add: the reverse; max: the larger (default)")
    p.add_argument("--digits", default="10", metavar="N", help="significant digits per order (default 10)")
    add_budget(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """``exactdp rdp``: returns the exit status (docs/contracts.md §3)."""
    args = build_parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    try:
        with progress.task("rdp", max_seconds=progress.parse_seconds(args.max_seconds, "--max-seconds")):
            comp = composition_from_args(args.eps, args.delta, args.k, args.mechanism, args.mechanisms)
            orders = [o.strip() for o in args.orders.split(",")]
            if not all(orders):
                raise InvalidParameterError(f"--orders={args.orders!r} must be a comma-separated list such as 2,3.5,64")
            result = run_rdp_query({"query": "rdp", "orders": orders, "direction": args.direction,
                                    "digits": args.digits}, composition=comp)
    except ExactDPError as e:
        print(f"exactdp rdp: {error_message(e, None)}", file=sys.stderr)
        return status_of(e)
    if args.json:
        print(json.dumps(result))
    else:
        print(f"Rényi divergence ({args.direction}) of {comp}:")
        for r in result["orders"]:
            val = r["exact"] if r["exact"] is not None else f"[{r['lower']}, {r['upper']}]"
            sec = "§6, §7" if "labelled" in r.get("bound", "") and "wbk" in r.get("bound", "") else (
                "§7" if "labelled" in r.get("bound", "") else "§6")
            note = f"  (upper end: the {r['bound']} bound; docs/rdp.md {sec})" if "bound" in r else ""
            print(f"  order {r['order']:>8}  {val}{note}")
    return 0
