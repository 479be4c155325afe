"""``python -m proofs``: run every derivation, one PASS/FAIL line each; exit 1 on any failure."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from . import derivation_names, run_all
from .framework import Outcome, _tex_text

__all__ = ["main", "build_parser", "latex_document"]


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m proofs",
        description="Check the symbolic derivations behind exactdp step by step (sympy), "
        "each tied to exactdp's own functions.",
    )
    p.add_argument("names", nargs="*", help=f"derivations to run (default: all): {', '.join(derivation_names())}")
    p.add_argument("--verbose", "-v", action="store_true", help="print every step and its status")
    p.add_argument("--latex", metavar="FILE", help="write the derivations as a LaTeX document ('-' for stdout)")
    p.add_argument("--list", action="store_true", help="list the derivation names and exit")
    return p


def latex_document(outcomes: Sequence[Outcome]) -> str:
    """A standalone LaTeX document: each derivation's statement, source and checked steps."""
    from . import DERIVATIONS

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


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.list:
        print("\n".join(derivation_names()))
        return 0
    unknown = [n for n in args.names if n not in derivation_names()]
    if unknown:
        print(f"unknown derivation(s): {', '.join(unknown)}; known: {', '.join(derivation_names())}", file=sys.stderr)
        return 2
    outcomes = run_all(list(args.names) or None)
    for o in outcomes:
        print(o.line())
        if args.verbose:
            for step, why in o.results:
                print(f"    [{'ok' if why is None else 'FAIL'}] {step.show()}")
                if why is not None:
                    print(f"           {why}")
    if args.latex:
        doc = latex_document(outcomes)
        if args.latex == "-":
            sys.stdout.write(doc)
        else:
            with open(args.latex, "w", encoding="utf-8") as fh:
                fh.write(doc)
    failed = [o.name for o in outcomes if not o.ok]
    if failed:
        print(f"{len(failed)} of {len(outcomes)} derivations FAILED: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0
