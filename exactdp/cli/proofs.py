"""``exactdp proofs``: run the symbolic derivations (the repository's ``proofs/``) from the installed command.

The derivations live in ``proofs/`` at the root of the repository (``python -m proofs`` in a
checkout); the wheel ships the same files as the subpackage ``exactdp.proofs`` (pyproject.toml maps
``proofs/`` there), and sympy comes with the ``proofs`` extra: ``pip install 'exactdp[proofs]'``
then ``exactdp proofs``.  This command imports ``exactdp.proofs`` (a wheel, or an editable install),
else the ``proofs`` package of the source checkout this exactdp was imported from, and hands it the
rest of the command line (``exactdp proofs --verbose`` is ``python -m proofs --verbose``).  Without
sympy the derivations print one line naming the extra to install and exit 2; an installation that
lacks them altogether says the same in one line (exit 2).  Nothing here imports the derivations
statically: they sit outside the layers (docs/architecture.md) and use exactdp's public functions.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

__all__ = ["NOT_INSTALLED", "main"]

PROG = "exactdp proofs"
EXIT_USAGE = 2

#: The subpackage of the wheel that holds the derivations (the repository's proofs/, mapped).
SHIPPED = "exactdp.proofs"

#: The one line printed when the derivations are in neither place (an installation that lost them).
NOT_INSTALLED = (
    f"{PROG}: error: this installation of exactdp lacks its symbolic derivations ({SHIPPED}); "
    "reinstall it with the proofs extra: pip install 'exactdp[proofs]'"
)


def _checkout_root() -> Path | None:
    """The source checkout this exactdp was imported from, when it has a proofs/ package."""
    root = Path(__file__).resolve().parents[2]  # <checkout>/exactdp/cli/proofs.py
    return root if (root / "proofs" / "__init__.py").is_file() else None


def _import(name: str) -> ModuleType | None:
    """``name`` and its ``cli`` submodule, or None when ``name`` is not importable or is not the derivations."""
    try:
        module = importlib.import_module(name)
        cli = importlib.import_module(name + ".cli")
    except ModuleNotFoundError as e:
        if e.name in (name, name + ".cli"):
            return None
        raise
    return module if callable(getattr(cli, "main", None)) else None  # else some other package called so


def _import_proofs() -> ModuleType | None:
    """The derivations: the wheel's ``exactdp.proofs``, else the checkout's ``proofs``, else None."""
    shipped = _import(SHIPPED)
    if shipped is not None:
        return shipped
    root = _checkout_root()
    if root is None:
        return None
    added = str(root) not in sys.path
    if added:
        sys.path.insert(0, str(root))
    try:
        return _import("proofs")
    finally:
        if added:
            sys.path.remove(str(root))


def main(argv: Sequence[str]) -> int:
    """Run the derivations with ``argv``; exit status 2 with one line when they are not available."""
    proofs = _import_proofs()
    if proofs is None:
        print(NOT_INSTALLED, file=sys.stderr)
        return EXIT_USAGE
    cli = importlib.import_module(proofs.__name__ + ".cli")
    return int(cli.main(list(argv), prog=PROG))
