"""``python -m proofs``: run every derivation, one PASS/FAIL line each; exit 1 on any failure.

stdout carries only the PASS/FAIL lines (and the LaTeX document for ``--latex -``).  When stderr is
a terminal, a progress line (``proofs: 5/18 kov15_hockey_stick ...``) is kept on stderr while the
derivations run.  Without sympy the command prints one line naming the extra to install and exits 2.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, TextIO

from . import SYMPY_EXTRA, sympy_missing

if TYPE_CHECKING:
    from .framework import Outcome

__all__ = ["main", "build_parser", "latex_document"]

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors as one line and exit status 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


class _Progress:
    """A one-line progress display on stderr, drawn only when stderr is a terminal."""

    def __init__(self, stream: TextIO, total: int, prog: str) -> None:
        self.stream, self.total, self.prog = stream, total, prog
        self.on = _isatty(stream)
        self.shown = False

    def show(self, i: int, name: str) -> None:
        if self.on:
            self.stream.write(f"\r\x1b[K{self.prog}: {i}/{self.total} {name} ...")
            self.stream.flush()
            self.shown = True

    def clear(self) -> None:
        if self.on and self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self.shown = False


def _isatty(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # a closed or exotic stream: no progress
        return False


def build_parser(prog: str = "python -m proofs") -> argparse.ArgumentParser:
    p = _Parser(
        prog=prog,
        description="Check the symbolic derivations behind exactdp step by step (sympy), "
        "each tied to exactdp's own functions.",
    )
    p.add_argument("names", nargs="*", metavar="NAME", help="derivations to run (default: all; --list lists them)")
    p.add_argument("--verbose", "-v", action="store_true", help="print every step and its status")
    p.add_argument("--latex", metavar="FILE", help="write the derivations as a LaTeX document ('-' for stdout)")
    p.add_argument("--list", action="store_true", help="list the derivation names and exit")
    return p


def latex_document(outcomes: Sequence[Outcome]) -> str:
    """A standalone LaTeX document: each derivation's statement, source and checked steps."""
    from . import DERIVATIONS
    from .framework import _tex_text

    lines = [
        r"\documentclass[10pt]{article}",
        r"\usepackage{amsmath,amssymb}",
        r"\usepackage[margin=2cm]{geometry}",
        r"\allowdisplaybreaks",
        r"\title{exactdp: symbolic derivations checked by sympy}",
        r"\date{}",
        r"\begin{document}",
        r"\maketitle",
        r"Every step below was checked by machine: an equality is reduced by sympy to $0$, an "
        r"inequality carries a certificate (non-negative coefficients after a substitution, a sum "
        r"of squares, or a derivative's sign plus a boundary value); the last steps compare the "
        r"derived expressions with exactdp's own certified enclosures.",
    ]
    for o in outcomes:
        doc = (DERIVATIONS[o.name].__doc__ or "").strip() if o.name in DERIVATIONS else ""
        status = "PASS" if o.ok else "FAIL"
        lines.append(r"\section*{" + _tex_text(o.name) + f" [{status}]" + "}")
        lines.append(r"\textbf{Statement.} " + _tex_text(o.statement) + r"\\")
        if doc:
            lines.append(r"\emph{" + _tex_text(" ".join(doc.split())) + r"}\\")
        if not o.results:
            lines.append(_tex_text(f"{o.failed_step}: {o.reason}"))
            continue
        lines.append(r"\begin{enumerate}")
        for step, why in o.results:
            try:
                body = step.latex()
            except Exception:  # a step whose expression sympy cannot typeset is shown as text
                body = _tex_text(step.show())
            mark = "" if why is None else r" \textbf{FAILED: " + _tex_text(why) + "}"
            lines.append(r"\item " + body + mark)
        lines.append(r"\end{enumerate}")
    lines.append(r"\end{document}")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None, *, prog: str = "python -m proofs") -> int:
    """Run the command line; returns the exit status (``prog`` names the command in messages)."""
    args = build_parser(prog).parse_args(argv)
    why = sympy_missing()
    if why is not None:
        print(f"{prog}: error: the proofs need sympy ({why}); install it with: {SYMPY_EXTRA}", file=sys.stderr)
        return EXIT_USAGE
    try:
        return _run(args, prog)
    except KeyboardInterrupt:
        print(f"\n{prog}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


def _run(args: argparse.Namespace, prog: str) -> int:
    from . import derivation_names, run

    if args.list:
        print("\n".join(derivation_names()))
        return EXIT_OK
    unknown = [n for n in args.names if n not in derivation_names()]
    if unknown:
        print(f"{prog}: error: unknown derivation(s): {', '.join(unknown)}; known: {', '.join(derivation_names())}",
              file=sys.stderr)
        return EXIT_USAGE
    if args.latex and args.latex != "-":
        target = os.path.dirname(os.path.abspath(args.latex))
        if not os.path.isdir(target) or not os.access(target, os.W_OK):
            print(f"{prog}: error: --latex {args.latex!r}: {target!r} is not a writable directory", file=sys.stderr)
            return EXIT_USAGE
    names = list(args.names) or derivation_names()
    progress = _Progress(sys.stderr, len(names), prog.split()[-1])
    outcomes = []
    try:
        for i, name in enumerate(names, 1):
            progress.show(i, name)
            o = run(name)
            outcomes.append(o)
            progress.clear()
            print(o.line())
            if args.verbose:
                for step, why in o.results:
                    print(f"    [{'ok' if why is None else 'FAIL'}] {step.show()}")
                    if why is not None:
                        print(f"           {why}")
            sys.stdout.flush()
    finally:
        progress.clear()
    if args.latex:
        doc = latex_document(outcomes)
        if args.latex == "-":
            sys.stdout.write(doc)
        else:
            try:
                with open(args.latex, "w", encoding="utf-8") as fh:
                    fh.write(doc)
            except OSError as e:
                print(f"{prog}: error: --latex {args.latex!r} cannot be written: {e.strerror}", file=sys.stderr)
                return EXIT_USAGE
    failed = [o.name for o in outcomes if not o.ok]
    if failed:
        print(f"{len(failed)} of {len(outcomes)} derivations FAILED: {', '.join(failed)}", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_OK
