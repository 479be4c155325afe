"""``exactdp tables``: build, verify, list and export the golden tables.

    exactdp tables build  [--out DIR] [--jobs N] [--executor URL] [--only NAME ...] [--no-figures] [--quiet]
    exactdp tables verify [--dir DIR] [--jobs N] [--only NAME ...] [--manifest-only] [--strict] [--quiet]
    exactdp tables export NAME --format latex|markdown|csv|json [--columns C,C,...] [--dir DIR]
    exactdp tables list

``build`` writes into a new, empty or exactdp tables folder only, replaces just the files its
manifest lists and never touches any other file (:mod:`exactdp.golden.build`); ``verify`` notes
files the manifest does not list and fails on them only with ``--strict``.  Every mistake a user
can make (a path, a table name, ``--jobs``, a missing extra) is one line
``exactdp tables: error: ...`` and exit status 2, before any row is computed.

Exit status: 0 success, 1 ``verify`` found a difference, 2 bad arguments, 130 interrupted.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from exactdp.core.errors import ExactDPError, InvalidParameterError

__all__ = ["build_parser", "main"]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"exactdp tables: error: {message} (see '{self.prog} --help')\n")


def _jobs(s: str) -> int:
    try:
        n = int(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"jobs={s!r} must be a positive integer") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"jobs={s!r} must be a positive integer")
    return n


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``exactdp tables``."""
    from exactdp.golden.specs import table_names

    names = ", ".join(table_names())
    p = _Parser(prog="exactdp tables", description="The golden tables: exact or certified values "
                "of the optimal composition and of every classical bound, reproductions, errata.",
                epilog=f"tables: {names}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    b = sub.add_parser("build", help="regenerate the tables (deterministic; replaces only exactdp's own files)",
                       description="Regenerate the tables into DIR.  DIR must be new (its parent must exist), "
                       "empty, or an exactdp tables folder (its MANIFEST.json says generator exactdp); only the "
                       "files its manifest lists are replaced, each atomically, and no other file is touched.")
    b.add_argument("--out", metavar="DIR", help="output directory (default: the repository's tables/)")
    b.add_argument("--jobs", type=_jobs, default=1, metavar="N", help="worker processes (default 1)")
    b.add_argument("--executor", default=None, metavar="URL",
                   help="where the rows are computed: 'local' (default: --jobs processes) or dask://HOST:PORT, "
                        "a running Dask scheduler (pip install 'exactdp[dask]'); docs/cluster.md")
    b.add_argument("--only", nargs="+", metavar="NAME",
                   help="rebuild only these tables; the others keep their files and manifest entries")
    b.add_argument("--no-figures", action="store_true",
                   help="draw no figures (needs no matplotlib); figures already in DIR are kept as they are")
    b.add_argument("--quiet", action="store_true", help="no progress bar")
    v = sub.add_parser("verify", help="recompute and compare with tables/ and its MANIFEST.json")
    v.add_argument("--dir", metavar="DIR", help="tables directory (default: the repository's tables/)")
    v.add_argument("--jobs", type=_jobs, default=1, metavar="N", help="worker processes (default 1)")
    v.add_argument("--only", nargs="+", metavar="NAME", help="recompute only these tables")
    v.add_argument("--manifest-only", action="store_true", help="check the hashes and version only")
    v.add_argument("--strict", action="store_true",
                   help="fail on files the manifest does not list (default: a note)")
    v.add_argument("--quiet", action="store_true", help="no progress bar")
    e = sub.add_parser("export", help="print a table as booktabs LaTeX or Markdown")
    e.add_argument("name", metavar="NAME")
    e.add_argument("--format", choices=("latex", "markdown", "csv", "json"), default="markdown")
    e.add_argument("--columns", metavar="C,C,...", help="columns to show (default: a compact set)")
    e.add_argument("--dir", metavar="DIR", help="tables directory (default: the installed tables)")
    e.add_argument("--caption", help="LaTeX: wrap in a table environment with this caption")
    sub.add_parser("list", help="list the tables")
    return p


def _check_names(names: Sequence[str] | None) -> None:
    from exactdp.golden.specs import table_names

    for n in names or ():
        if n not in table_names():
            raise ValueError(f"table={n!r} must be one of {', '.join(table_names())}")


def _dir_arg(value: str, what: str) -> Path:
    """An existing folder given on the command line, or a one-line error."""
    p = Path(value)
    if not p.exists():
        raise InvalidParameterError(f"{what}={value!r} does not exist")
    if not p.is_dir():
        raise InvalidParameterError(f"{what}={value!r} is a file, not a folder")
    return p


def _names(files: Sequence[str], most: int = 5) -> str:
    return ", ".join(files[:most]) + (f" and {len(files) - most} more" if len(files) > most else "")


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``exactdp tables ARGS``; returns the exit status."""
    try:
        args = build_parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    except SystemExit as e:  # a usage error (one line printed, status 2) or --help (status 0)
        return e.code if isinstance(e.code, int) else 2
    try:
        if args.command == "build":
            from exactdp.core.executor import parse_executor
            from exactdp.golden.build import build
            from exactdp.golden.manifest import unlisted_files

            spec = parse_executor(args.executor, args.jobs)
            out = build(args.out, jobs=args.jobs, tables=args.only, figures=not args.no_figures,
                        progress=not args.quiet, executor=spec)
            others = unlisted_files(out)
            kept = f" (left {len(others)} other file(s) as they were: {_names(others)})" if others else ""
            print(f"exactdp tables: wrote {out}{kept}", file=sys.stderr)
            return 0
        if args.command == "verify":
            from exactdp.golden.manifest import unlisted_files
            from exactdp.golden.verify import check_verify_dir, verify

            _check_names(args.only)
            root = check_verify_dir(args.dir)
            problems = verify(root, jobs=args.jobs, tables=args.only, recompute=not args.manifest_only,
                              progress=not args.quiet, strict=args.strict)
            others = [] if args.strict else unlisted_files(root)
            if others:
                print(f"exactdp tables verify: note: {len(others)} file(s) not listed in MANIFEST.json, not "
                      f"exactdp's, not checked: {_names(others)} (--strict fails on them)", file=sys.stderr)
            if problems:
                print(f"exactdp tables verify: FAILED: {problems[0]}", file=sys.stderr)
                if len(problems) > 1:
                    print(f"  ({len(problems) - 1} more differences)", file=sys.stderr)
                return 1
            print("exactdp tables verify: OK", file=sys.stderr)
            return 0
        if args.command == "export":
            from exactdp.golden import load_table, table_meta
            from exactdp.golden.writers import csv_text, json_text, latex_text, markdown_text

            _check_names([args.name])
            directory = _dir_arg(args.dir, "dir") if args.dir is not None else None
            rows = load_table(args.name, directory=directory)
            cols = [c.strip() for c in args.columns.split(",")] if args.columns else None
            if cols is None and args.name == "errata":  # the verdict is the point of that table
                cols = ["query", "method", "eps", "delta", "k", "mechanisms", "at", "lower", "upper", "note"]
            if args.format == "latex":
                text = latex_text(rows, columns=cols, caption=args.caption,
                                  label=f"tab:{args.name}" if args.caption else None)
            elif args.format == "markdown":
                text = markdown_text(rows, columns=cols)
            elif args.format == "csv":
                text = csv_text(rows)
            else:
                text = json_text(table_meta(args.name, directory=directory), rows)
            sys.stdout.write(text)
            return 0
        if args.command == "list":
            from exactdp.golden.specs import TABLES

            for t in TABLES:
                print(f"{t.name:<24} {t.title}")
            return 0
        build_parser().print_help(sys.stderr)
        return 2
    except BrokenPipeError:  # e.g. `exactdp tables export ... | head`
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except (ExactDPError, ValueError, KeyError) as e:
        msg = e.args[0] if isinstance(e, KeyError) and e.args else str(e)
        print(f"exactdp tables: error: {_one_line(msg)}", file=sys.stderr)
        return 2
    except OSError as e:  # a path that went away or became unwritable while we worked
        where = f"{e.filename}: " if e.filename else ""
        print(f"exactdp tables: error: {where}{e.strerror or e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("exactdp tables: interrupted (no table was changed)", file=sys.stderr)
        return 130


def _one_line(msg: str) -> str:
    return " ".join(str(msg).split())


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
