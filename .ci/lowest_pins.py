"""The lowest declared version of every dependency, read from pyproject.toml: ``name>=X`` -> ``name==X``.

``python .ci/lowest_pins.py`` prints the pins of the core dependencies, one a line (what ``.ci/lowest``
installs); ``--extra NAME`` (repeatable) adds the pins of that extra.  A dependency with no ``>=``
lower bound is an error (exit status 2, one line naming it): the pins are derived from the
declaration, so the CI step cannot drift from it.  Only the standard library is used (``tomllib``,
Python 3.11+; ``tomli`` on 3.10).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"

#: ``name[extras]>=X`` optionally followed by more comma-separated clauses (``,<Y``) and a marker.
_REQUIREMENT = re.compile(r"^\s*(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*(?P<spec>[^;]*)(?:;.*)?$")
_LOWER = re.compile(r"^\s*>=\s*(?P<version>[0-9][A-Za-z0-9.+!-]*)\s*$")


class NoLowerBound(ValueError):
    """A declared dependency without a ``>=`` lower bound."""


def lowest_pin(requirement: str) -> str:
    """``name==X`` for a requirement ``name>=X[,...]``; NoLowerBound when it has no ``>=`` clause."""
    m = _REQUIREMENT.match(requirement)
    if m is None:
        raise NoLowerBound(f"cannot read the requirement {requirement!r}")
    lows = [low.group("version") for clause in m.group("spec").split(",") if (low := _LOWER.match(clause))]
    if len(lows) != 1:
        raise NoLowerBound(f"{requirement!r} declares no single '>=' lower bound")
    return f"{m.group('name')}=={lows[0]}"


def requirements(pyproject: Path, extras: list[str]) -> list[str]:
    """The core dependencies of ``pyproject`` and those of the named extras, as declared."""
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    out = list(project.get("dependencies", []))
    declared = project.get("optional-dependencies", {})
    for extra in extras:
        if extra not in declared:
            raise NoLowerBound(f"pyproject.toml declares no extra {extra!r}")
        out += [r for r in declared[extra] if r not in out]
    return out


def pins(pyproject: Path = PYPROJECT, extras: list[str] | None = None) -> list[str]:
    """The lowest-version pins of the core dependencies (and of ``extras``)."""
    return [lowest_pin(r) for r in requirements(pyproject, extras or [])]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog=".ci/lowest_pins.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--extra", action="append", default=[], help="also pin this extra's dependencies")
    p.add_argument("--pyproject", type=Path, default=PYPROJECT, help="the pyproject.toml to read")
    args = p.parse_args(argv)
    try:
        lines = pins(args.pyproject, args.extra)
    except (NoLowerBound, OSError, KeyError, tomllib.TOMLDecodeError) as e:
        print(f"{p.prog}: error: {e}", file=sys.stderr)
        return 2
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
