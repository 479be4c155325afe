"""The query commands ``exactdp delta``, ``exactdp epsilon`` and ``exactdp check`` (docs/contracts.md §2).

    exactdp delta   COMPOSITION --at-eps EPS_G     [--method M] [--digits N] [--json]
    exactdp epsilon COMPOSITION --at-delta DELTA_G [--method M [--orders LIST]] [--digits N] [--json]
    exactdp check   COMPOSITION --eps-g EPS_G --delta-g DELTA_G [--json]   # exit 0 private, 1 not

Each builds the query object of its options (the batch format) and prints the result of
:func:`exactdp.query.run_query`: as text for people, or as the JSON object with ``--json``.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from exactdp import query
from exactdp.cli.options import (
    COMP_USAGE,
    EPILOG_NUMBERS,
    EXIT_HELP,
    add_budget,
    add_common,
    add_composition,
    add_direction,
    split_orders,
)
from exactdp.cli.output import EXIT_NOT_PRIVATE, EXIT_OK, human
from exactdp.core import progress
from exactdp.model.composition import directed
from exactdp.model.inputs import composition_from_args
from exactdp.model.mechanisms import parse_direction

__all__ = ["EXAMPLES", "QUERY_COMMANDS", "add_parsers", "run_query_command"]

#: the query commands
QUERY_COMMANDS = ("delta", "epsilon", "check")

#: the examples of each command's --help (tests/docs/test_examples_run.py runs every one)
EXAMPLES = {
    "delta": """\
examples:
  exactdp delta --eps 0.1 --delta 0.001 --k 30 --at-eps 1
  exactdp delta --eps 'log(3/2)' --k 10 --at-eps 'log(9/4)'          # an exact fraction
  exactdp delta --mechanism 1,0.1 --mechanism 2,0.2 --at-eps 3 --json
  exactdp delta --eps 0.1 --delta 0.001 --k 30 --at-eps 1 --method drv10
  exactdp delta --mechanism gaussian:sigma=2,count=100 --at-eps 1       # Gaussian closed form
  exactdp delta --mechanism laplace:scale=2,count=2 --at-eps 0.2 --digits 8
  exactdp delta --mechanism gaussian:sigma=2,count=10 --at-eps 5 --method rdp-cks --orders 2,2.7,3""",
    "epsilon": """\
examples:
  exactdp epsilon --eps 0.1 --delta 0.001 --k 30 --at-delta 0.05
  exactdp epsilon --eps 0.1 --k 30 --at-delta 1e-3 --method kov15-3.4
  printf '0.1,0,20\n0.5,1e-6,3\n' | exactdp epsilon --mechanisms - --at-delta 1e-3 --digits 10 --json
  exactdp epsilon --mechanism gaussian:sigma=1,q=0.01,count=1000 --at-delta 1e-5 --digits 4   # DP-SGD
  exactdp epsilon --mechanism laplace:scale=10,count=100 --at-delta 1e-6 --digits 6
  exactdp epsilon --mechanism gaussian:sigma=1,q=0.01,count=1000 --at-delta 1e-5 --method rdp-bbghs   # RDP
  exactdp epsilon --mechanism gaussian:sigma=1,sample=60,of=6000,count=100 --at-delta 1e-5 --digits 3   # fixed batch, replace-one

mechanisms other than generic (E, D) ones (Gaussian, Laplace, k-ary randomized response,
Poisson subsampling with q=Q) are answered by the Gaussian closed form or by the certified PLD
engine: a bracket [lower, upper] refined until --digits are certified or --max-seconds (default
30 s for these) runs out; the JSON "digits" says how many digits the bracket certifies.""",
    "check": """\
examples:
  exactdp check --eps 0.1 --delta 0.001 --k 30 --eps-g 1 --delta-g 0.05; echo $?   # 0: private
  exactdp check --eps 1 --k 10 --eps-g 10 --delta-g 0                              # exactly at the boundary
  exactdp check --mechanism gaussian:sigma=1,q=0.01,count=1000 --eps-g 2 --delta-g 1e-5""",
}


def add_parsers(sub: Any, fmt: type[argparse.HelpFormatter]) -> None:
    """The parsers of delta, epsilon and check, added to the subcommands ``sub``."""
    p = sub.add_parser("delta", help="the total delta at a given eps_g", formatter_class=fmt,
                       usage=f"exactdp delta {COMP_USAGE} --at-eps EPS_G [options]",
                       description="The smallest total delta such that the composition is (eps_g, delta)-DP.",
                       epilog=EXAMPLES["delta"] + "\n\n" + EPILOG_NUMBERS + "\n\n" + EXIT_HELP)
    add_composition(p)
    p.add_argument("--at-eps", metavar="EPS_G", required=True, help="the global eps_g")
    add_common(p)
    add_direction(p)

    p = sub.add_parser("epsilon", help="the eps_g at a given total delta_g", formatter_class=fmt,
                       usage=f"exactdp epsilon {COMP_USAGE} --at-delta DELTA_G [options]",
                       description="The least eps_g such that the composition is (eps_g, delta_g)-DP "
                                   "(inf when no eps_g works).",
                       epilog=EXAMPLES["epsilon"] + "\n\n" + EPILOG_NUMBERS + "\n\n" + EXIT_HELP)
    add_composition(p)
    p.add_argument("--at-delta", metavar="DELTA_G", required=True, help="the total delta_g")
    add_common(p)
    add_direction(p)

    p = sub.add_parser("check", help="is the composition (eps_g, delta_g)-DP? exit 0 yes, 1 no",
                       formatter_class=fmt,
                       usage=f"exactdp check {COMP_USAGE} --eps-g EPS_G --delta-g DELTA_G [options]",
                       description="An exact yes/no, never wrong, even exactly at the boundary: exit 0 private,\n"
                                   "1 not private.  When it cannot decide within its budget (--max-seconds, or the\n"
                                   "precision cap) it says so with exit status 4 and the time spent; never a guess.",
                       epilog=EXAMPLES["check"] + "\n\n" + EPILOG_NUMBERS + "\n\n" + EXIT_HELP)
    add_composition(p)
    p.add_argument("--eps-g", metavar="EPS_G", required=True, help="the global eps_g")
    p.add_argument("--delta-g", metavar="DELTA_G", required=True, help="the global delta_g")
    add_budget(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    add_direction(p)


def run_query_command(args: argparse.Namespace, what: str) -> int:
    """``exactdp delta``, ``epsilon`` or ``check`` (``what``): the query object of the options,
    answered by :func:`exactdp.query.run_query`, printed; returns the exit status.  The time budget
    (``--max-seconds``) covers reading the mechanisms as well as the answer."""
    with progress.task(what, max_seconds=progress.parse_seconds(args.max_seconds, "--max-seconds")):
        return _run_query_command(args, what)


def _run_query_command(args: argparse.Namespace, what: str) -> int:
    comp = composition_from_args(args.eps, args.delta, args.k, args.mechanism, args.mechanisms)
    obj: dict[str, Any] = {"query": what}
    obj["direction"] = args.direction
    comp = directed(comp, parse_direction(args.direction, "--direction"))
    if what == "check":
        obj.update(eps_g=args.eps_g, delta_g=args.delta_g)
    else:
        obj.update(method=args.method, digits=args.digits)
        if args.eta is not None:
            obj["eta"] = args.eta
        if args.orders is not None:
            obj["orders"] = split_orders(args.orders)
        if what == "delta":
            obj["at_eps"] = args.at_eps
        else:
            obj["at_delta"] = args.at_delta
    if args.max_seconds is not None:
        obj["max_seconds"] = args.max_seconds
    result = query.run_query(obj, composition=comp)
    if args.json:
        print(json.dumps(result))
    else:
        print(human(result, str(comp)))
    if what == "check":
        return EXIT_OK if result["private"] else EXIT_NOT_PRIVATE
    return EXIT_OK
