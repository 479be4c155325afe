"""The command-line interface (docs/contracts.md §2).

    exactdp delta   COMPOSITION --at-eps EPS_G     [--method M] [--digits N] [--json]
    exactdp epsilon COMPOSITION --at-delta DELTA_G [--method M] [--digits N] [--json]
    exactdp check   COMPOSITION --eps-g EPS_G --delta-g DELTA_G [--json]   # exit 0 private, 1 not
    exactdp batch   < queries.jsonl > results.jsonl

Exit status (docs/contracts.md §3): 0 success (``check``: private), 1 ``check``: not private,
2 bad input or usage (one line on stderr, nothing written), 3 the requested digits could not be
certified within the precision or time cap, 4 ``check`` could not decide within its budget (the
message gives the time spent), 5 an internal error (a bug: please report it), 130 interrupted.
``batch`` exits with the largest status of its lines (a "not private" answer counts as 0).

The rooms: :mod:`~exactdp.cli.options` (the parser class, shared option groups and texts),
:mod:`~exactdp.cli.output` (text for people, error lines, exit statuses), one module per command
(:mod:`~exactdp.cli.query_commands` for delta, epsilon and check; :mod:`~exactdp.cli.batch`,
:mod:`~exactdp.cli.curve`, :mod:`~exactdp.cli.region`, :mod:`~exactdp.cli.budget`,
:mod:`~exactdp.cli.calibrate`, :mod:`~exactdp.cli.tables`, :mod:`~exactdp.cli.crosscheck`,
:mod:`~exactdp.cli.proofs`); this module holds :func:`main` and the table of subcommands.  Every
query is answered by :mod:`exactdp.query`.
"""


from __future__ import annotations

import argparse
import io
import os
import sys
import time
from collections.abc import Sequence

from exactdp.cli.batch import add_parser as add_batch_parser
from exactdp.cli.batch import run_batch
from exactdp.cli.options import EPILOG_NUMBERS, EXIT_HELP, METHODS_HELP, Parser
from exactdp.cli.output import EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, error_message, status_of
from exactdp.cli.query_commands import QUERY_COMMANDS, run_query_command
from exactdp.cli.query_commands import add_parsers as add_query_parsers
from exactdp.core import memory
from exactdp.core.errors import PrecisionError
from exactdp.core.version import __version__
from exactdp.query import run_query

__all__ = ["FORWARDED_COMMANDS", "build_parser", "main", "run_query"]

#: commands that own their options: name -> (module with ``main(argv) -> int``, one-line help)
FORWARDED_COMMANDS: dict[str, tuple[str, str]] = {
    "curve": ("exactdp.cli.curve", "the certified delta(eps) or eps(delta) curve of a composition at many points"),
    "calibrate": ("exactdp.cli.calibrate", "the noise, count or per-step eps that provably meets a target"),
    "budget": ("exactdp.cli.budget", "what a planned list of mechanisms spends of a target, and what remains"),
    "rdp": ("exactdp.cli.rdp", "the certified Rényi divergence (RDP curve) of a composition at each order"),
    "region": ("exactdp.cli.region", "the privacy region (tradeoff curve) of k equal mechanisms"),
    "tradeoff": ("exactdp.cli.tradeoff", "the certified trade-off curve (f-DP) beta(alpha) of a composition and its GDP mu"),
    "tables": ("exactdp.cli.tables", "build, verify and export the golden tables"),
    "crosscheck": ("exactdp.cli.crosscheck", "run other DP libraries against the exact oracle"),
    "proofs": ("exactdp.cli.proofs", "check the derivations behind exactdp with sympy"),
}


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser of the ``exactdp`` command."""
    fmt = argparse.RawDescriptionHelpFormatter
    parser = Parser(
        prog="exactdp",
        formatter_class=fmt,
        description=(
            "Exact and certified composition of differential-privacy guarantees.\n\n"
            "If you run mechanisms that are each (eps_i, delta_i)-DP on the same data, how private\n"
            "is the whole?  exactdp answers with no floating-point error: exact fractions where the\n"
            "answer is rational, otherwise an interval that provably contains the true value."
        ),
        epilog=(
            "examples:\n"
            "  exactdp epsilon --eps 0.1 --delta 0.001 --k 30 --at-delta 0.05\n"
            "  exactdp delta --eps 0.1 --delta 0.001 --k 30 --at-eps 1 --method kov15-3.4\n"
            "  exactdp check --mechanism 1,0.1 --mechanism 2,0.2 --eps-g 3 --delta-g 0.28\n\n"
            "methods (--method):\n" + METHODS_HELP + "\n\n" + EPILOG_NUMBERS + "\n\n" + EXIT_HELP
        ),
    )
    parser.add_argument("--version", action="version", version=f"exactdp {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)

    add_query_parsers(sub, fmt)
    add_batch_parser(sub, fmt)

    for name, (_, help_) in FORWARDED_COMMANDS.items():
        p = sub.add_parser(name, help=help_, add_help=False)
        p.add_argument("rest", nargs=argparse.REMAINDER)
    return parser


def _drop_unwritable_stdout() -> None:
    """After a failed write, a standard output that still cannot be flushed (a full disk) is pointed
    at the null device, so that the exit does not fail a second time with a traceback."""
    if sys.stdout is None:
        return
    try:
        sys.stdout.flush()
    except OSError:
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError, io.UnsupportedOperation):
            pass


def _run(parser: argparse.ArgumentParser, args: argparse.Namespace, query: str | None) -> int:
    if query is not None:
        return run_query_command(args, query)
    if args.command == "batch":
        return run_batch(args, sys.stdin, sys.stdout)
    if args.command in FORWARDED_COMMANDS:
        import importlib

        module = importlib.import_module(FORWARDED_COMMANDS[args.command][0])
        return int(module.main(args.rest))
    parser.print_help()
    return EXIT_USAGE


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (docs/contracts.md §3)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    if not argv:
        parser.print_help()
        return EXIT_USAGE
    if argv[0] in FORWARDED_COMMANDS:
        # these commands own their options: hand them the rest of the line untouched
        args = argparse.Namespace(command=argv[0], rest=argv[1:])
    else:
        args = parser.parse_args(argv)
    start = time.monotonic()
    query = args.command if args.command in QUERY_COMMANDS else None
    try:
        with memory.bounded(getattr(args, "max_memory", None), "--max-memory"):
            status = _run(parser, args, query)
        if sys.stdout is not None:
            sys.stdout.flush()  # a write that fails (a full disk) fails here, with one line, not at exit
        return status
    except KeyboardInterrupt:
        print("exactdp: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # e.g. `exactdp batch ... | head`
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except (Exception, MemoryError) as e:
        if os.environ.get("EXACTDP_DEBUG"):
            raise
        if isinstance(e, OSError):
            _drop_unwritable_stdout()
        seconds = time.monotonic() - start if isinstance(e, (PrecisionError, MemoryError)) else None
        print(f"exactdp: {error_message(e, query, seconds)}", file=sys.stderr)
        return status_of(e, query)
