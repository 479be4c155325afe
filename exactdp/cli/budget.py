"""``exactdp budget``: what a planned list of mechanisms spends of a target, and what remains.

    exactdp budget (--mechanism SPEC ... | --mechanisms FILE) --target-eps E --target-delta DG
                   [--next SPEC] [--next-delta D] [--plot FILE] [--json] [--max-seconds S]

The report is computed by :func:`exactdp.calibrate.budget.budget` (docs/calibration.md §5); this
module reads the plan (``--mechanism`` in the budget form: 'E', 'E,D', 'E,D,COUNT' or a SPEC) and
prints the report, or draws the spending curve.

Exit status: 0 the plan meets the target, 1 it does not (nothing remains), 2 bad input, 3 a
certified answer was out of reach within the budget, 5 an internal error.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from typing import NoReturn

from exactdp.calibrate.budget import budget, draw
from exactdp.cli.options import add_memory
from exactdp.cli.output import error_message, status_of
from exactdp.core import memory, progress
from exactdp.core.errors import ExactDPError, InvalidParameterError, PrecisionError
from exactdp.core.files import check_output_path, require_extra
from exactdp.model.composition import Composition
from exactdp.model.inputs import mechanism_args, read_mechanisms_file

__all__ = ["EXAMPLES", "build_parser", "main"]

#: the examples of ``exactdp budget --help``; tests/cli/test_cli_budget.py runs every one as shown
EXAMPLES = [
    "exactdp budget --mechanism 0.1,0,10 --mechanism 0.5,1e-6 --target-eps 2 --target-delta 1e-5",
    "exactdp budget --mechanism 0.05,0,20 --target-eps 2 --target-delta 1e-5 --next 0.1 --json",
    "exactdp budget --mechanism gaussian:sigma=20,count=5 --target-eps 1 --target-delta 1e-5 --next gaussian:sigma=10",
    "printf '0.1,0,10\\n0.5,1e-6\\n' | exactdp budget --mechanisms - --target-eps 2 --target-delta 1e-5 --plot spend.png",
]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(2, f"exactdp budget: error: {message} (see 'exactdp budget --help')\n")


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser of ``exactdp budget``."""
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
    p.add_argument("--max-seconds", metavar="S", help="time budget of the whole command, reading the plan included (default: none)")
    add_memory(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    return p


def _plan(args: argparse.Namespace) -> Composition:
    if not args.mechanism and args.mechanisms is None:
        raise InvalidParameterError("mechanisms=None: give the plan with --mechanism SPEC (repeated) or --mechanisms FILE")
    if args.mechanisms is not None:
        if args.mechanism:
            raise InvalidParameterError("give either --mechanism (repeated) or --mechanisms FILE, not both")
        return read_mechanisms_file(args.mechanisms)
    return mechanism_args(args.mechanism)


def main(argv: Sequence[str] | None = None) -> int:
    """``exactdp budget ...``; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        return int(e.code or 0) if not isinstance(e.code, str) else 2
    start = time.monotonic()
    try:
        # one budget for the whole command, reading the plan included (docs/contracts.md §2.1)
        with progress.task("budget", max_seconds=progress.parse_seconds(args.max_seconds, "--max-seconds")), \
                memory.bounded(args.max_memory, "--max-memory"):
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
