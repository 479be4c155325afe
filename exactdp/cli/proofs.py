"""``exactdp proofs``: run the symbolic derivations of ``proofs/`` from the installed command.

The derivations live in the ``proofs`` package of a source checkout, beside ``exactdp/``; a wheel
does not ship them.  This command finds that package next to the imported ``exactdp`` (a checkout,
or an editable install of one) or anywhere importable, and hands it the rest of the command line
(``exactdp proofs --verbose`` is ``python -m proofs --verbose``).  When there is no ``proofs``
package it prints one line saying how to run them from a source checkout and exits 2; without
sympy, ``proofs`` itself prints one line naming the extra to install and exits 2.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

__all__ = ["NOT_INSTALLED", "main"]

PROG = "exactdp proofs"
EXIT_USAGE = 2

#: The one line printed when the ``proofs`` package is not importable (an installed wheel).
NOT_INSTALLED = (
    f"{PROG}: error: the symbolic derivations (proofs/) are not part of an installed exactdp; "
    "run them from a source checkout: git clone <the exactdp repository> && cd exactdp && "
    "pip install -e '.[proofs]' && python -m proofs"
)


def _checkout_root() -> Path | None:
    """The source checkout this exactdp was imported from, when it has a proofs/ package."""
    root = Path(__file__).resolve().parents[2]  # <checkout>/exactdp/cli/proofs.py
    return root if (root / "proofs" / "__init__.py").is_file() else None


def _import_proofs() -> ModuleType | None:
    """exactdp's ``proofs`` package (with its ``cli``), or None when it is not importable."""
    root = _checkout_root()
    added = root is not None and str(root) not in sys.path
    if added:
        sys.path.insert(0, str(root))
    try:
        import proofs
        import proofs.cli
    except ModuleNotFoundError as e:
        if e.name in ("proofs", "proofs.cli"):
            return None
        raise
    finally:
        if added:
            sys.path.remove(str(root))
    if not callable(getattr(proofs.cli, "main", None)):  # some other package called "proofs"
        return None
    module: ModuleType = proofs  # proofs/ is not type-checked (pyproject): it is a module all the same
    return module


def main(argv: Sequence[str]) -> int:
    """Run ``proofs`` with ``argv``; exit status 2 with one line when it is not available."""
    proofs = _import_proofs()
    if proofs is None:
        print(NOT_INSTALLED, file=sys.stderr)
        return EXIT_USAGE
    return int(proofs.cli.main(list(argv), prog=PROG))
