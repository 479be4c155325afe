"""The pieces the commands' parsers share: the parser class, the option groups (composition, time
budget, method and digits) and the usage and epilog texts (docs/contracts.md §2).

Every usage error is one line on stderr and exit status 2 (:class:`Parser`).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any, NoReturn

from exactdp.api.methods import METHODS
from exactdp.cli.output import EXIT_USAGE
from exactdp.core.errors import InvalidParameterError
from exactdp.core.numbers import DEFAULT_DIGITS
from exactdp.engines.pld.refine import DEFAULT_SECONDS

__all__ = [
    "COMP_USAGE",
    "EPILOG_NUMBERS",
    "EXIT_HELP",
    "METHODS_HELP",
    "Parser",
    "add_budget",
    "add_common",
    "add_composition",
    "add_memory",
    "split_orders",
]

#: the exit statuses, as every query command's --help ends
EXIT_HELP = """\
exit status: 0 success (check: private), 1 check: not private, 2 bad input (one line on stderr,
nothing written), 3 the requested digits could not be certified within the precision or time cap,
4 check could not decide within its budget, 5 internal error (a bug: please report), 130 interrupted."""

#: how numbers are read and what a result means (the epilogs' common paragraph)
EPILOG_NUMBERS = """\
numbers are exact: '0.1' is exactly 1/10, '1e-6', '1/3', and for an eps 'log(3/2)' means
eps = log(3/2) exactly (then e^eps is rational and many answers are exact fractions).
Results are certified enclosures: lower <= true value <= upper, rounded outward."""

#: the methods of --method, one per line with its summary
METHODS_HELP = "\n".join(f"  {name:<15} {spec.summary}" for name, spec in METHODS.items())


class Parser(argparse.ArgumentParser):
    """argparse that reports usage errors as one line and exit status 2; a mistyped option is named
    before the options it left missing (``--epss 0.1`` is the error, not the missing ``--at-delta``)."""

    _argv: list[str] | None = None

    def parse_known_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                         namespace: argparse.Namespace | None = None) -> tuple[argparse.Namespace, list[str]]:
        self._argv = list(args) if args is not None else None
        return super().parse_known_args(args, namespace)

    def unknown_options(self) -> list[str]:
        """The ``--options`` of the command line that this parser knows by no name or unique prefix."""
        known = [o for a in self._actions for o in a.option_strings]
        out = []
        for tok in self._argv or []:
            if tok == "--":
                break
            name = tok.split("=", 1)[0]
            if tok.startswith("--") and name not in known and len([o for o in known if o.startswith(name)]) != 1:
                out.append(name)
        return out

    def error(self, message: str) -> NoReturn:
        unknown = self.unknown_options()
        if unknown and message.startswith(("the following arguments are required", "one of the arguments")):
            message = f"unrecognized arguments: {' '.join(unknown)}"
        self.exit(EXIT_USAGE, f"exactdp: error: {message} (see '{self.prog} --help')\n")


#: the usage of the three composition forms
COMP_USAGE = "(--eps E [--delta D] --k K | --mechanism SPEC ... | --mechanisms FILE)"


class _Specs(argparse.Action):
    """Positional SPECs: the same as one ``--mechanism SPEC`` each (``exactdp rdp SPEC --orders 2``)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        if values:
            namespace.mechanism = list(getattr(namespace, "mechanism", None) or []) + list(values)


def add_composition(p: argparse.ArgumentParser) -> None:
    """The composition options: --eps/--delta/--k, --mechanism (repeated) or --mechanisms FILE; a SPEC
    given without ``--mechanism`` (positional) counts as one."""
    g = p.add_argument_group(
        "composition (required: one of the three forms)",
        "k equal mechanisms (--eps E [--delta D] --k K), or a list (--mechanism E[,D[,COUNT]] or SPEC repeated, "
        "or --mechanisms FILE)",
    )
    g.add_argument("--eps", metavar="E", help="eps of each of the k mechanisms, e.g. 0.1 or 'log(3/2)'")
    g.add_argument("--delta", metavar="D", help="delta of each of the k mechanisms (default 0)")
    g.add_argument("--k", metavar="K", help="number of mechanisms")
    g.add_argument("--mechanism", metavar="SPEC", action="append",
                   help="one mechanism (or COUNT equal ones), repeatable: 'E[,D[,COUNT]]' (generic (E, D)-DP), "
                        "'gaussian:sigma=S[,sensitivity=D][,q=Q][,count=N]', "
                        "'laplace:scale=B[,sensitivity=D][,q=Q][,count=N]', 'rr:eps=E[,categories=K][,q=Q][,count=N]', "
                        "'dlaplace:noise=A[,sensitivity=D][,q=Q][,count=N]', "
                        "'dgaussian:sigma=S[,sensitivity=D][,q=Q][,count=N]', "
                        "'mog:sigma=S,sensitivities=S1/S2/...,probs=P1/P2/...[,q=Q][,count=N]'; a Gaussian also "
                        "by 'gaussian:mu2=M' or 'gaussian:rho=R'; any kind also takes relation=add-remove|replace-one "
                        "and sample=M,of=N (a fixed batch without replacement, replace-one); gaussian, laplace, "
                        "dlaplace and dgaussian also sample=M,of=N,with-replacement=true (M draws with replacement, "
                        "replace-one: an upper bound)")
    g.add_argument("--mechanisms", metavar="FILE",
                   help="UTF-8 file, one mechanism per line: CSV 'eps,delta[,count]' or a SPEC; or JSON "
                        "[[eps, delta, count?] or \"SPEC\", ...]; '-' reads stdin")
    g.add_argument("composition", nargs="*", metavar="SPEC", action=_Specs, default=None,
                   help="a mechanism SPEC as a positional argument, the same as --mechanism SPEC (repeatable), "
                        "e.g. exactdp rdp gaussian:sigma=1,q=0.01,count=1000 --orders 2,8")


def add_budget(p: argparse.ArgumentParser) -> None:
    """The --max-seconds option."""
    p.add_argument("--max-seconds", metavar="S", default=None,
                   help="time budget in seconds. The certified PLD bracket (mechanisms, long lists) refines "
                        f"within it and prints the digits it reached (default {DEFAULT_SECONDS:g} s); an exact "
                        "engine past it stops with exit status 3 (check: 4) and says how far it got (default: "
                        "no limit)")
    add_memory(p)


def add_memory(p: argparse.ArgumentParser) -> None:
    """The --max-memory option (exactdp.core.memory)."""
    p.add_argument("--max-memory", metavar="SIZE", default=None,
                   help="memory bound of the whole process, e.g. 500M or 4G (default: 2G for each large step). Each large step is "
                        "predicted before it allocates: an exact route that would pass the bound hands the query to "
                        "the certified PLD bracket, whose grids stop at the finest that fits (fewer digits, said so)")


def add_direction(p: argparse.ArgumentParser) -> None:
    """--direction max|remove|add: which order of a neighbouring pair a profile takes."""
    p.add_argument("--direction", default="max", metavar="D",
                   help="max (default: both orders of a neighbouring pair, the larger), remove or add (that order "
                        "only, for a Poisson subsample under add/remove or a mixture of Gaussians; symmetric mechanisms "
                        "answer the same)")


def add_common(p: argparse.ArgumentParser, *, method: bool = True) -> None:
    """--method, --eta and --orders (with ``method``), --digits, --max-seconds and --json."""
    if method:
        p.add_argument("--method", default="optimal", metavar="M",
                       help=f"the composition theorem to evaluate (default optimal); one of: {', '.join(METHODS)}")
        p.add_argument("--eta", metavar="ETA", help="accuracy parameter of --method mv-approx (e.g. 0.01)")
        p.add_argument("--orders", metavar="LIST", help="comma-separated Rényi orders of the RDP conversions "
                       "(--method rdp-mironov, rdp-cks, rdp-bbghs, rdp-asoodeh), e.g. 2,3.5,64; default: dp_accounting's "
                       "orders 1.1..10.9, 11..63, 128..1024 (docs/rdp.md §3)")
    p.add_argument("--digits", default=str(DEFAULT_DIGITS), metavar="N",
                   help=f"significant digits certified (default {DEFAULT_DIGITS})")
    add_budget(p)
    p.add_argument("--json", action="store_true", help="print one JSON object (the batch result format)")


def split_orders(text: str) -> list[str]:
    """The orders of ``--orders 2,3.5,64`` as strings (each parsed exactly later); an empty item is refused.

    >>> split_orders("2, 3.5,64")
    ['2', '3.5', '64']
    """
    orders = [o.strip() for o in text.split(",")]
    if not all(orders):
        raise InvalidParameterError(f"--orders={text!r} must be a comma-separated list such as 2,3.5,64")
    return orders
