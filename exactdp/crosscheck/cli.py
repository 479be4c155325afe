"""``exactdp crosscheck [LIBRARY ...] [--json FILE] [--markdown FILE] [--quick]``.

Runs the sweep of :mod:`exactdp.crosscheck.cases` through the peer libraries' accountants and
judges every answer against the certified optimum.  Progress goes to stderr.  The exit status
says whether the cross-check ran (0), not whether the peers are sound; 2 is a usage error.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    from .adapters import adapter_names

    p = argparse.ArgumentParser(
        prog="exactdp crosscheck",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Cross-check DP accountants of other libraries against exactdp's certified optimum.\n"
                    "Verdicts: sound (claim >= optimum), unsound (below it; fp-level if < 1e-9 relative), "
                    "error (the library raised).",
        epilog="examples:\n  exactdp crosscheck --quick --json crosscheck.json --markdown crosscheck.md\n"
               "  exactdp crosscheck dp_accounting prv_accountant\n\n"
               f"libraries: {', '.join(adapter_names())} (each skipped with a note when not installed;\n"
               "install them with: pip install 'exactdp[peers]')",
    )
    p.add_argument("libraries", nargs="*", metavar="LIBRARY", help="libraries to check (default: all)")
    p.add_argument("--json", metavar="FILE", help="write the JSON report to FILE ('-' for stdout)")
    p.add_argument("--markdown", metavar="FILE", help="write the Markdown summary to FILE ('-' for stdout)")
    p.add_argument("--quick", action="store_true", help="the short sweep (for CI)")
    p.add_argument("--digits", type=int, default=20, help="certified digits of the optimum (default 20)")
    p.add_argument("--list", action="store_true", help="list the libraries and cases, and exit")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``exactdp crosscheck``; returns the exit status."""
    from .adapters import get_adapter, adapter_names
    from .cases import sweep
    from .report import CachedOracle, run_crosscheck, to_markdown, write_json

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
    from ..errors import ExactDPError
    from ..files import check_output_path

    try:  # before the sweep: a report that cannot be written is a one-line error, not lost work
        for opt, path in (("json", args.json), ("markdown", args.markdown)):
            if path and path != "-":
                check_output_path(path, opt)
    except ExactDPError as exc:
        print(f"exactdp crosscheck: error: {exc}", file=sys.stderr)
        return 2
    cases = sweep(quick=args.quick)
    if args.list:
        for a in adapters:
            ok, note = a.available()
            print(f"{a.library}: {note}")
        for c in cases:
            print(c.describe())
        return 0
    report = run_crosscheck(adapters, cases, oracle=CachedOracle(args.digits))
    if args.json:
        write_json(report, args.json)
    md = to_markdown(report)
    if args.markdown:
        if args.markdown == "-":
            sys.stdout.write(md)
        else:
            with open(args.markdown, "w", encoding="utf-8") as fh:
                fh.write(md)
    if not args.json and not args.markdown:
        sys.stdout.write(md)
    print(f"[crosscheck] done: {report.count('sound')} sound, {report.count('unsound')} unsound, "
          f"{report.count('error')} error, {report.count('skipped')} skipped", file=sys.stderr)
    return 0
