"""Golden tables: deterministic builds, a manifest, verification, exports, and loading.

``load_table(name)`` reads a table from the repository's ``tables/`` in a source checkout, or
from the copy shipped as package data in an installed wheel (``exactdp/_tables``); the
environment variable ``EXACTDP_TABLES`` points it elsewhere.

>>> rows = load_table("kov15_grid")            # doctest: +SKIP
>>> rows[0]["lower"]                            # doctest: +SKIP
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

__all__ = ["available_tables", "load_table", "table_meta", "tables_dir"]


def _candidates() -> list[Path]:
    here = Path(__file__).resolve()
    out = []
    env = os.environ.get("EXACTDP_TABLES")
    if env:
        out.append(Path(env))
    out.append(here.parents[2] / "tables")  # source checkout: <repo>/exactdp/golden/__init__.py
    out.append(here.parents[1] / "_tables")  # wheel: package data exactdp/_tables
    out.append(here.parent / "_tables")  # wheel, alternative layout: exactdp/golden/_tables
    return out


def tables_dir(directory: Path | str | None = None) -> Path:
    """The directory the tables are read from (the first of: ``directory``, $EXACTDP_TABLES,
    the source checkout's ``tables/``, the installed package data) that has a MANIFEST.json."""
    if directory is not None:
        return Path(directory)
    for c in _candidates():
        if (c / "MANIFEST.json").is_file():
            return c
    raise FileNotFoundError("no golden tables found: run 'exactdp tables build' in a source checkout, "
                            "or install a wheel that ships exactdp/_tables")


def _read(name: str, directory: Path | str | None) -> dict[str, Any]:
    path = tables_dir(directory) / f"{name}.json"
    if not path.is_file():
        raise FileNotFoundError(f"table={name!r}: {path} does not exist")
    return json.loads(path.read_text(encoding="utf-8"))


def load_table(name: str, *, directory: Path | str | None = None) -> list[dict[str, str]]:
    """The rows of golden table ``name`` (every cell a string; schema in tables/README.md).

    Works in a source checkout and in an installed wheel (package data).
    """
    return list(_read(name, directory)["rows"])


def table_meta(name: str, *, directory: Path | str | None = None) -> dict[str, Any]:
    """The header of a table (title, description, source), without its rows."""
    obj = _read(name, directory)
    return {k: v for k, v in obj.items() if k not in ("rows", "schema", "columns")}


def available_tables(directory: Path | str | None = None) -> list[str]:
    """The names of the tables present (sorted): those whose JSON the folder's manifest lists.

    Other ``.json`` files in the folder are the user's, not tables (a build never touches them).
    """
    from exactdp.golden.manifest import exactdp_manifest

    root = tables_dir(directory)
    man = exactdp_manifest(root)
    if man is None:  # no manifest to go by: every JSON file but the manifest
        return sorted(p.stem for p in root.glob("*.json") if p.name != "MANIFEST.json")
    return sorted(f[:-len(".json")] for f in man.get("files", {}) if f.endswith(".json") and "/" not in f)
