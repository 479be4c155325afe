"""``exactdp calibrate``: the command line of certified calibration (docs/calibration.md §3).

    exactdp calibrate eps   --k K [--delta D] --target-eps E --target-delta DG [--method M] [--json]
    exactdp calibrate k     --mechanism SPEC --target-eps E --target-delta DG [--json]
    exactdp calibrate sigma --k K [--q Q] [--sensitivity S] [--relation R [--bounded]] --target-eps E --target-delta DG
    exactdp calibrate laplace-scale --k K [--q Q] [--sensitivity S] [--relation R [--bounded]] --target-eps E --target-delta DG
    exactdp calibrate scale (--mechanism E[,D[,COUNT]] ... | --mechanisms FILE) --target-eps E --target-delta DG
    exactdp calibrate q     --sigma S --k K [--sensitivity S] [--relation R [--bounded]] --target-eps E --target-delta DG

Exit status (docs/contracts.md §3): 0 an answer (its gap is stated), 2 bad input or a target no
value meets (one line on stderr), 3 no value could be certified safe within the budget, 4
``calibrate k`` could not separate k from k + 1 within its budget (the certified k and the
nearest certified failure are still printed), 5 an internal error.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import textwrap
import time
from collections.abc import Sequence
from typing import NoReturn

from exactdp.calibrate.result import Calibration
from exactdp.cli.options import add_memory
from exactdp.cli.output import EXIT_INTERRUPTED, EXIT_OK, EXIT_UNDECIDED, EXIT_USAGE, error_message, status_of
from exactdp.core import memory, progress
from exactdp.core.errors import InvalidParameterError, PrecisionError
from exactdp.model.composition import Composition
from exactdp.model.inputs import composition_from_args, mechanism_args, read_mechanisms_file
from exactdp.query import calibration_of

__all__ = ["EXAMPLES", "build_parser", "calibrate_args", "main"]

_WHAT = """\
what the answer means: 'value' is certified safe (the composition at it is proved to meet the
target (eps_g, delta_g): by an exact decision, the Gaussian closed form, a method's certified
enclosure, or the upper end of a certified PLD bracket) and 'fails_at', a value just beyond it,
is certified to miss the target; the optimum lies between them.  A count k is exact: k meets the
target and k + 1 does not.  Numbers are exact ('0.1' is 1/10, '1e-5', '1/3')."""

_EXIT = """\
exit status: 0 an answer (the gap reached is stated), 2 bad input or a target that no value meets,
3 no value could be certified safe within --max-seconds, 4 (calibrate k) k and k + 1 could not be
separated within the budget (the certified k and the nearest certified failure are printed), 5 an
internal error (a bug: please report)."""

#: the examples of each subcommand's --help; tests/cli/test_cli_calibrate.py runs every one as shown
EXAMPLES: dict[str, list[str]] = {
    "eps": [
        "exactdp calibrate eps --k 30 --target-eps 1 --target-delta 1e-5",
        "exactdp calibrate eps --k 100 --delta 1e-8 --target-eps 2 --target-delta 1e-5 --json",
        "exactdp calibrate eps --k 30 --target-eps 1 --target-delta 1e-5 --method drv10",
        "exactdp calibrate eps --k 30 --target-eps 1 --target-delta 1e-5 --round-to 0.001",
        "exactdp calibrate eps --k 1 --after 0.5 --after 0.3,1e-6 --target-eps 1 --target-delta 1e-5",
    ],
    "scale": [
        "exactdp calibrate scale --mechanism 0.1 --mechanism 0.2,1e-6,5 --target-eps 1 --target-delta 1e-5",
    ],
    "k": [
        "exactdp calibrate k --mechanism 0.1,1e-7 --target-eps 1 --target-delta 1e-5",
        "exactdp calibrate k --mechanism gaussian:sigma=10 --target-eps 1 --target-delta 1e-5 --json",
        "exactdp calibrate k --mechanism laplace:scale=20 --target-eps 1 --target-delta 1e-6",
        "exactdp calibrate k --mechanism gaussian:sigma=2,q=0.05 --target-eps 1 --target-delta 1e-5",
    ],
    "sigma": [
        "exactdp calibrate sigma --k 100 --target-eps 1 --target-delta 1e-5",
        "exactdp calibrate sigma --k 100 --sensitivity 2 --target-eps 1 --target-delta 1e-5 --round-to 0.01",
        "exactdp calibrate sigma --k 100 --q 0.05 --target-eps 1 --target-delta 1e-5 --json",
        "exactdp calibrate sigma --k 100 --q 0.05 --relation replace-one --bounded --target-eps 1 --target-delta 1e-5",
    ],
    "q": [
        "exactdp calibrate q --sigma 2 --k 100 --target-eps 1 --target-delta 1e-5",
        "exactdp calibrate q --sigma 5 --k 10 --relation replace-one --target-eps 1 --target-delta 1e-5",
    ],
    "laplace-scale": [
        "exactdp calibrate laplace-scale --k 10 --target-eps 1 --target-delta 1e-6",
        "exactdp calibrate laplace-scale --k 10 --sensitivity 2 --target-eps 1 --target-delta 0 --json",
        "exactdp calibrate laplace-scale --k 100 --q 0.01 --target-eps 1 --target-delta 1e-5",
    ],
}

_DESCRIPTIONS = {
    "eps": "The largest per-mechanism eps such that k mechanisms, each (eps, D)-DP (after the --after "
           "mechanisms, if any), compose to (eps_g, delta_g) under the optimal composition or --method.",
    "scale": "The largest factor c such that the mechanisms (c eps_i, delta_i) compose to (eps_g, delta_g): "
             "the heterogeneous form of 'calibrate eps'.",
    "k": "The largest number of runs k of a mechanism (after the --after mechanisms, if any) within the "
         "target: k is proved to meet it and k + 1 to miss it.",
    "sigma": "The smallest Gaussian noise sigma for k steps of sensitivity S; with --q Q the steps are "
             "Poisson subsampled at rate Q (the DP-SGD noise multiplier).",
    "q": "The largest Poisson sampling rate q for k subsampled Gaussian steps with noise sigma (q = 1, "
         "no subsampling, is the end of the range).",
    "laplace-scale": "The smallest Laplace scale b for k queries of L1 sensitivity S, judged by the Laplace "
                     "mechanism's own privacy loss (certified PLD engine); with --q Q the queries are Poisson "
                     "subsampled at rate Q.",
}


_SHORT = {
    "eps": "the largest per-mechanism eps of k (eps, D)-DP mechanisms",
    "scale": "the largest factor c such that (c eps_i, delta_i) meet the target",
    "k": "the largest number of runs of a mechanism (exact: k meets, k + 1 misses)",
    "sigma": "the smallest Gaussian sigma (with --q: the DP-SGD noise multiplier)",
    "q": "the largest Poisson sampling rate for a given sigma and number of steps",
    "laplace-scale": "the smallest Laplace scale for k queries",
}


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"exactdp calibrate: error: {message} (see '{self.prog} --help')\n")


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``exactdp calibrate``."""
    fmt = argparse.RawDescriptionHelpFormatter
    p = _Parser(prog="exactdp calibrate", formatter_class=fmt,
                description="The noise, count or per-step eps that provably meets a target (eps_g, delta_g).\n\n"
                            + _WHAT,
                epilog="examples:\n" + "\n".join(f"  {e}" for ex in EXAMPLES.values() for e in ex[:1])
                       + "\n\n" + _EXIT)
    sub = p.add_subparsers(dest="what", metavar="WHAT", parser_class=_Parser)
    for what, desc in _DESCRIPTIONS.items():
        s = sub.add_parser(what, help=_SHORT[what], formatter_class=fmt,
                           description=textwrap.fill(desc, 100) + "\n\n" + _WHAT,
                           epilog="examples:\n" + "\n".join(f"  {e}" for e in EXAMPLES[what]) + "\n\n" + _EXIT)
        if what in ("eps", "sigma", "laplace-scale", "q"):
            s.add_argument("--k", metavar="K", required=True, help="number of mechanisms / steps / queries")
        if what == "eps":
            s.add_argument("--delta", metavar="D", default="0", help="delta of each mechanism (default 0)")
        if what == "scale":
            s.add_argument("--mechanism", metavar="E[,D[,COUNT]]", action="append",
                           help="a mechanism (eps_i, delta_i), repeatable; COUNT equal ones")
            s.add_argument("--mechanisms", metavar="FILE", help="CSV lines eps,delta[,count] or JSON (as "
                                                                "'exactdp epsilon --mechanisms')")
        if what == "k":
            s.add_argument("--mechanism", metavar="SPEC", required=True,
                           help="the mechanism: 'E[,D]' (generic (E, D)-DP), 'gaussian:sigma=S[,sensitivity=D][,q=Q]', "
                                "'laplace:scale=B[,sensitivity=D][,q=Q]', 'rr:eps=E[,categories=K][,q=Q]', "
                                "'dlaplace:noise=A[,sensitivity=D][,q=Q]', 'dgaussian:sigma=S[,sensitivity=D][,q=Q]', "
                                "'mog:sigma=S,sensitivities=S1/S2/...,probs=P1/P2/...[,q=Q]'; a Gaussian also by "
                                "'gaussian:mu2=M' or 'gaussian:rho=R'; any kind also takes relation=add-remove|replace-one "
                                "and sample=M,of=N (as --mechanism of 'exactdp epsilon')")
        if what in ("eps", "k"):
            s.add_argument("--after", metavar="SPEC", action="append",
                           help="a mechanism already spent (as --mechanism of 'exactdp epsilon'), repeatable")
            s.add_argument("--after-file", metavar="FILE", help="mechanisms already spent, one per line (CSV or SPEC)")
        if what == "q":
            s.add_argument("--sigma", metavar="S", required=True, help="the Gaussian noise sigma (0: no noise, answered by the closed form 1 - (1-q)^k)")
        if what in ("sigma", "laplace-scale", "q"):
            s.add_argument("--sensitivity", metavar="S", default="1", help="the query's sensitivity (default 1)")
        if what in ("sigma", "laplace-scale"):
            s.add_argument("--q", metavar="Q", default="1", help="Poisson sampling rate (default 1: none; 0: nothing is sampled, and the answer is 0)")
        if what in ("sigma", "q", "laplace-scale"):
            s.add_argument("--relation", metavar="R", default="add-remove",
                           help="the neighbouring relation: add-remove (default) or replace-one (docs/mathematics.md "
                                "§9; without subsampling the pair, and so the answer, is the same under both)")
        if what in ("sigma", "q", "laplace-scale"):
            s.add_argument("--bounded", action="store_true",
                           help="with --relation replace-one: dp_accounting's bounded-records reading of the "
                                "Poisson-subsampled " + ("Laplace mechanism (docs/mathematics.md §9, Theorem 9.9; "
                                                         "with --q below 1 only)" if what == "laplace-scale" else
                                                         "Gaussian (docs/mathematics.md §9, Theorem 9.8)"))
        if what in ("eps", "scale"):
            s.add_argument("--method", metavar="M", default="optimal",
                           help="the composition theorem (default optimal): basic, drv10, kov15-3.4, ...")
            s.add_argument("--eta", metavar="ETA", help="accuracy parameter of --method mv-approx")
        s.add_argument("--target-eps", metavar="E", required=True, help="the target eps_g")
        s.add_argument("--target-delta", metavar="DG", required=True, help="the target (total) delta_g")
        if what != "k":
            s.add_argument("--gap", metavar="G", help="relative gap wanted between value and fails_at "
                                                      "(default 1e-6 for exact and closed-form answers, "
                                                      "1e-3 with the PLD engine)")
            s.add_argument("--round-to", metavar="R", help="round the value to a multiple of R in the safe "
                                                           "direction (eps and q down, sigma and b up) and "
                                                           "certify it again")
        s.add_argument("--max-seconds", metavar="S", help="time budget (default: none for exact answers, "
                                                          "300 s with the PLD engine)")
        add_memory(s)
        s.add_argument("--json", action="store_true", help="print one JSON object")
    return p


def _after(args: argparse.Namespace) -> Composition | None:
    spec = getattr(args, "after", None)
    path = getattr(args, "after_file", None)
    if not spec and path is None:
        return None
    return composition_from_args(None, None, None, spec, path)


def calibrate_args(args: argparse.Namespace) -> Calibration:
    """Run the calibration the parsed arguments ask for (:func:`exactdp.query.calibration_of`, as
    a batch calibration line); returns the Calibration."""
    mechanisms = None
    if args.what == "scale":
        if not args.mechanism and args.mechanisms is None:
            raise InvalidParameterError("mechanisms=None: give --mechanism E[,D[,COUNT]] (repeated) or --mechanisms FILE")
        mech = list(args.mechanism or [])
        if args.mechanisms is not None and args.mechanism:
            raise InvalidParameterError("give either --mechanism (repeated) or --mechanisms FILE, not both")
        mechanisms = read_mechanisms_file(args.mechanisms) if args.mechanisms is not None \
            else mechanism_args(mech, specs=False)
    return calibration_of(args.what, vars(args), after=_after(args), mechanisms=mechanisms)


def main(argv: Sequence[str] | None = None) -> int:
    """``exactdp calibrate ...``; returns the exit status (docs/contracts.md §3)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    if not argv:
        parser.print_help()
        return EXIT_USAGE
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # --help (0) or a usage error, already reported in one line (2)
        return int(e.code or 0) if not isinstance(e.code, str) else EXIT_USAGE
    if args.what is None:
        parser.print_help()
        return EXIT_USAGE
    start = time.monotonic()
    query = "check" if args.what == "k" else "calibrate"
    try:
        # the budget covers reading the mechanisms too (docs/contracts.md §2.1)
        with progress.task("calibrate", max_seconds=progress.parse_seconds(getattr(args, "max_seconds", None),
                                                                          "--max-seconds")), \
                memory.bounded(getattr(args, "max_memory", None), "--max-memory"):
            r = calibrate_args(args)
    except KeyboardInterrupt:
        print("exactdp: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except (Exception, MemoryError) as e:
        if os.environ.get("EXACTDP_DEBUG"):
            raise
        seconds = time.monotonic() - start
        if isinstance(e, PrecisionError):
            kind = "undecided" if query == "check" else "precision"
            print(f"exactdp: {kind} after {seconds:.1f} s: {' '.join(str(e).split())}", file=sys.stderr)
        else:
            print(f"exactdp calibrate: {error_message(e, query, None)}", file=sys.stderr)
        return status_of(e, query)
    if args.json:
        print(json.dumps(r.to_json()))
    else:
        print(str(r))
    if args.what == "k" and not r.exact:
        miss = f"k = {r.fails_at} to miss it" if r.fails_at is not None else "no larger k was certified to miss it"
        print(f"exactdp: undecided after {r.seconds:.1f} s: k = {r.value} is certified to meet the target and "
              f"{miss}, but the counts between them could not be decided within the budget "
              "(--max-seconds gives it more)", file=sys.stderr)
        return EXIT_UNDECIDED
    return EXIT_OK
