"""``tables/MANIFEST.json``: the sha256 of every generated file and the generator version.

The manifest is what ``exactdp tables verify`` checks first: a file whose bytes do not hash to the
recorded value, a file missing or not listed, or a different generator version is a difference.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from .writers import SCHEMA_VERSION

__all__ = ["MANIFEST_NAME", "sha256_file", "manifest_text", "read_manifest", "check_manifest"]

MANIFEST_NAME = "MANIFEST.json"


def sha256_file(path: Path) -> str:
    """The hex sha256 of a file's bytes."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def manifest_text(root: Path, files: Iterable[str], *, version: str,
                  unverified: Iterable[str] = (), renderer: str | None = None) -> str:
    """The manifest of ``files`` (paths relative to ``root``, ``/``-separated), sorted.

    ``unverified`` lists generated files that are not byte-reproducible (figures whose renderer
    is not deterministic here): they are named but carry no hash.  ``renderer`` records the
    matplotlib version that drew the figures (figure bytes depend on it).
    """
    obj: dict[str, Any] = {
        "files": {f: sha256_file(root / f) for f in sorted(set(files))},
        "figures_renderer": renderer,
        "generator": "exactdp",
        "schema": SCHEMA_VERSION,
        "unverified": sorted(set(unverified)),
        "version": version,
    }
    return json.dumps(obj, indent=1, sort_keys=True, ensure_ascii=True) + "\n"


def read_manifest(root: Path) -> dict[str, Any]:
    """The parsed manifest of a tables directory."""
    return json.loads((Path(root) / MANIFEST_NAME).read_text(encoding="utf-8"))


def check_manifest(root: Path, *, version: str | None = None) -> list[str]:
    """The differences between a tables directory and its manifest (empty when it matches).

    Checks the generator version (when given), that every listed file exists with the recorded
    sha256, and that no unlisted file is present (besides the manifest and ``unverified`` files).
    """
    root = Path(root)
    problems: list[str] = []
    try:
        man = read_manifest(root)
    except (OSError, ValueError) as e:
        return [f"{MANIFEST_NAME}: cannot be read ({e})"]
    if version is not None and man.get("version") != version:
        problems.append(f"{MANIFEST_NAME}: generator version {man.get('version')!r} != installed exactdp {version!r}")
    if man.get("schema") != SCHEMA_VERSION:
        problems.append(f"{MANIFEST_NAME}: schema {man.get('schema')!r} != {SCHEMA_VERSION}")
    files: Mapping[str, str] = man.get("files", {})
    for rel in sorted(files):
        p = root / rel
        if not p.is_file():
            problems.append(f"{rel}: listed in {MANIFEST_NAME} but missing")
        elif sha256_file(p) != files[rel]:
            problems.append(f"{rel}: sha256 {sha256_file(p)} != manifest {files[rel]}")
    allowed = set(files) | set(man.get("unverified", [])) | {MANIFEST_NAME}
    for p in sorted(root.rglob("*")):
        if p.is_file():
            rel = p.relative_to(root).as_posix()
            if rel not in allowed:
                problems.append(f"{rel}: present but not listed in {MANIFEST_NAME}")
    return problems
