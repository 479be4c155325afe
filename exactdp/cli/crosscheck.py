"""``exactdp crosscheck [LIBRARY ...] [--json FILE] [--markdown FILE] [--html FILE] [--quick] [--jobs N] ...``.

Runs the sweep of :mod:`exactdp.crosscheck.cases` through the peer libraries' accountants and
judges every answer against the certified optimum (docs/peers/README.md).  Each library call runs
in a child process under ``--memory-limit`` and ``--call-timeout``; the JSON and Markdown reports
are rewritten (atomically) as findings come in, so a run that is killed leaves a valid partial
report (``"complete": false``).  Progress goes to
stderr when it is a terminal.  Exit status (docs/contracts.md §3): 0 nothing unsound, 1 at least
one ``unsound`` answer (so a CI job can gate on it), 2 a usage error, 5 an internal error.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

__all__ = ["build_parser", "main"]


EXIT_STATUSES = """exit status:
  0  the cross-check ran and no answer is `unsound` (unsound-fp, undecided, error, skipped and
     unsupported findings are reported, not fatal)
  1  at least one answer is `unsound`: below the certified optimum by more than 4 ulps (or an
     order of an RDP curve below the certified Rényi divergence by more than 4 ulps)
  2  bad arguments, or a report path that cannot be written (one line on stderr, nothing run)
  5  an internal error of exactdp"""


def build_parser() -> argparse.ArgumentParser:
    from exactdp.crosscheck.adapters import adapter_names

    p = argparse.ArgumentParser(
        prog="exactdp crosscheck",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Cross-check DP accountants of other libraries against exactdp's certified optimum.\n"
                    "Verdicts: sound, loose (> 1% above), unsound-fp (<= 4 ulps below), unsound (material),\n"
                    "undecided (inside the certified bracket, budget spent), lower-estimate, error, skipped,\n"
                    "unsupported (the library has no form for an event of the case).",
        epilog="examples:\n  exactdp crosscheck --quick --jobs 2 --json crosscheck.json --markdown crosscheck.md --html crosscheck.html\n"
               "  exactdp crosscheck autodp opendp --quick --markdown -\n\n"
               f"libraries: {', '.join(adapter_names())} (each skipped with a note when not installed;\n"
               "install them with: pip install 'exactdp[peers]'; Opacus: pip install 'torch==2.13.0+cpu' 'exactdp[opacus]')\n\n"
               "The quick sweep takes about 2 minutes with every peer; without --quick the full sweep\n"
               "(k beyond 1025, delta_g down to 1e-30, DP-SGD grids, every soundness option) about 15 minutes.\n\n"
               + EXIT_STATUSES,
    )
    p.add_argument("libraries", nargs="*", metavar="LIBRARY", help="libraries to check (default: all)")
    p.add_argument("--json", metavar="FILE", help="write the JSON report to FILE ('-' for stdout)")
    p.add_argument("--markdown", metavar="FILE", help="write the Markdown summary to FILE ('-' for stdout)")
    p.add_argument("--html", metavar="FILE", help="write a self-contained HTML report (a figure per library) to FILE")
    p.add_argument("--quick", action="store_true", help="the short sweep (for CI)")
    p.add_argument("--digits", type=int, default=20, help="certified digits of the optimum (default 20)")
    p.add_argument("--max-seconds", type=float, default=None, metavar="S",
                   help="time budget of one certified bracket or decision on a mechanism composition "
                        "(default 3 with --quick, 10 otherwise)")
    p.add_argument("--list", action="store_true", help="list the libraries and cases, and exit")
    p.add_argument("--no-rdp-curves", action="store_true",
                   help="skip the RDP-curve section (each RDP accountant's curve judged order by order against the "
                        "certified Rényi divergence, its eps against the certified conversion of its own curve)")
    p.add_argument("--jobs", default="1", metavar="N", help="check in N parallel processes (default 1)")
    p.add_argument("--executor", default=None, metavar="URL",
                   help="where the checks run: 'local' (default: --jobs processes) or dask://HOST:PORT, a running "
                        "Dask scheduler (pip install 'exactdp[dask]'); docs/cluster.md")
    p.add_argument("--shard", default=None, metavar="I/N",
                   help="check only the I-th of N round-robin slices of the (API, case) pairs (array jobs; "
                        "the findings of the N reports together are those of the whole run)")
    p.add_argument("--memory-limit", default="4G", metavar="SIZE",
                   help="memory one library call may take beyond the run's own, in a child process (default 4G; "
                        "'none': no child process, no limit); past it: an error finding 'out of memory'")
    p.add_argument("--call-timeout", type=float, default=600.0, metavar="S",
                   help="seconds one library call may take (default 600); past it: an error finding 'timeout'")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``exactdp crosscheck``; returns the exit status (see ``EXIT_STATUSES``)."""
    import math
    import time

    from exactdp.crosscheck.adapters import adapter_names, get_adapter
    from exactdp.crosscheck.cases import sweep
    from exactdp.crosscheck.report import (
        CachedOracle,
        Report,
        run_crosscheck,
        summary,
        to_html,
        to_markdown,
        write_json,
        write_text,
    )

    parser = build_parser()
    try:
        args = parser.parse_args(list(argv) if argv is not None else None)
    except SystemExit as exc:
        return int(exc.code or 0)
    try:
        adapters = [get_adapter(n) for n in (args.libraries or adapter_names())]
    except KeyError as exc:
        print(f"exactdp crosscheck: error: {exc.args[0]}", file=sys.stderr)
        return 2
    if not 1 <= args.digits <= 1000:
        print(f"exactdp crosscheck: error: digits={args.digits} must be in 1..1000", file=sys.stderr)
        return 2
    if args.max_seconds is not None and not (math.isfinite(args.max_seconds) and args.max_seconds > 0):
        print(f"exactdp crosscheck: error: max-seconds={args.max_seconds} must be a number of seconds > 0",
              file=sys.stderr)
        return 2
    from exactdp.core.errors import ExactDPError, InvalidParameterError
    from exactdp.core.executor import parse_executor, parse_shard
    from exactdp.core.files import check_output_path
    from exactdp.crosscheck.isolate import Limits, parse_memory

    try:  # before the sweep: a report that cannot be written is a one-line error, not lost work
        for opt, path in (("json", args.json), ("markdown", args.markdown), ("html", args.html)):
            if path and path != "-":
                check_output_path(path, opt)
        spec = parse_executor(args.executor, args.jobs)
        shard = parse_shard(args.shard)
        memory = parse_memory(args.memory_limit)
        if not (math.isfinite(args.call_timeout) and args.call_timeout > 0):
            raise InvalidParameterError(f"call-timeout={args.call_timeout} must be a number of seconds > 0")
        limits = Limits(memory, args.call_timeout) if memory is not None else None
    except ExactDPError as exc:
        print(f"exactdp crosscheck: error: {exc}", file=sys.stderr)
        return 2
    cases = sweep(quick=args.quick)
    if args.list:
        for a in adapters:
            _ok, note = a.available()
            print(f"{a.library}: {note}")
        for c in cases:
            print(c.describe())
        return 0
    budget = args.max_seconds if args.max_seconds is not None else (3.0 if args.quick else 10.0)
    last = [0.0]

    def partial(rep: Report) -> None:  # the reports so far, rewritten atomically at most every 2 s
        if time.monotonic() - last[0] < 2.0:
            return
        if args.json and args.json != "-":
            write_json(rep, args.json, complete=False)
        if args.markdown and args.markdown != "-":
            write_text(to_markdown(rep), args.markdown)
        last[0] = time.monotonic()

    try:
        report = run_crosscheck(adapters, cases, oracle=CachedOracle(args.digits, max_seconds=budget), limits=limits,
                                executor=spec, shard=shard, on_finding=partial, curves=not args.no_rdp_curves)
    except ExactDPError as exc:  # e.g. no Dask scheduler at the address, or distributed not installed
        print(f"exactdp crosscheck: error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        write_json(report, args.json)
    md = to_markdown(report)
    if args.markdown:
        write_text(md, args.markdown)
    if args.html:
        write_text(to_html(report), args.html)
    if not args.json and not args.markdown and not args.html:
        sys.stdout.write(md)
    sm = summary(report)
    print("[crosscheck] done: " + ", ".join(f"{sm[v]} {v}" for v in
                                            ("sound", "loose", "unsound-fp", "unsound", "undecided", "lower-estimate",
                                             "error", "skipped", "unsupported"))
          + f" ({report.seconds} s)"
          + (f"; RDP curves: {sm['rdp_orders_checked']} orders decided, {sm['rdp_orders_unsound']} unsound"
             if report.curves else ""), file=sys.stderr)
    return 1 if report.unsound else 0
