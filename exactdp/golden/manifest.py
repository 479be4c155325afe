"""``tables/MANIFEST.json``: the sha256 of every generated file and the generator version.

The manifest is what ``exactdp tables verify`` checks first: a listed file whose bytes do not hash
to the recorded value, a listed file missing, or a different generator version is a difference.

The manifest is also the record of which files of a folder exactdp wrote.  A folder is an exactdp
tables folder when its ``MANIFEST.json`` says ``"generator": "exactdp"``; the files it lists (and
its ``unverified`` figures) are exactdp's, every other file there is the user's: ``build`` never
deletes, moves or overwrites it, and ``verify`` only notes it (:func:`unlisted_files`), failing
on it only when asked to be strict.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from exactdp.golden.writers import SCHEMA_VERSION

__all__ = [
    "GENERATOR",
    "MANIFEST_NAME",
    "check_manifest",
    "exactdp_manifest",
    "listed_files",
    "manifest_json",
    "manifest_text",
    "read_manifest",
    "sha256_bytes",
    "sha256_file",
    "unlisted_files",
]

MANIFEST_NAME = "MANIFEST.json"

#: The ``"generator"`` of a manifest written by exactdp: what makes a folder an exactdp tables folder.
GENERATOR = "exactdp"


def sha256_bytes(data: bytes) -> str:
    """The hex sha256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> str:
    """The hex sha256 of a file's bytes."""
    return sha256_bytes(Path(path).read_bytes())


def manifest_json(hashes: Mapping[str, str], *, version: str, unverified: Iterable[str] = (),
                  renderer: str | None = None) -> str:
    """The manifest text of files whose sha256 are ``hashes`` (relative ``/``-separated path -> hex).

    ``unverified`` lists generated files that are not byte-reproducible (figures whose renderer
    is not deterministic here): they are named but carry no hash.  ``renderer`` records the
    matplotlib version that drew the figures (figure bytes depend on it).
    """
    obj: dict[str, Any] = {
        "files": {f: hashes[f] for f in sorted(hashes)},
        "figures_renderer": renderer,
        "generator": GENERATOR,
        "schema": SCHEMA_VERSION,
        "unverified": sorted(set(unverified)),
        "version": version,
    }
    return json.dumps(obj, indent=1, sort_keys=True, ensure_ascii=True) + "\n"


def manifest_text(root: Path, files: Iterable[str], *, version: str,
                  unverified: Iterable[str] = (), renderer: str | None = None) -> str:
    """The manifest of ``files`` (paths relative to ``root``, ``/``-separated), hashed from disk."""
    return manifest_json({f: sha256_file(Path(root) / f) for f in set(files)}, version=version,
                         unverified=unverified, renderer=renderer)


def read_manifest(root: Path) -> dict[str, Any]:
    """The parsed manifest of a tables directory."""
    return json.loads((Path(root) / MANIFEST_NAME).read_text(encoding="utf-8"))


def exactdp_manifest(root: Path) -> dict[str, Any] | None:
    """The manifest of ``root`` when it is an exactdp tables folder, else None.

    None when there is no ``MANIFEST.json``, when it cannot be read or parsed, or when its
    ``"generator"`` is not ``"exactdp"``: such a folder holds nothing exactdp may replace.
    """
    try:
        man = read_manifest(root)
    except (OSError, ValueError):
        return None
    if not isinstance(man, dict) or man.get("generator") != GENERATOR or not isinstance(man.get("files", {}), dict):
        return None
    return man


def listed_files(man: Mapping[str, Any]) -> set[str]:
    """Every file a manifest names as exactdp's: its hashed files, its unverified files, itself."""
    return set(man.get("files", {})) | set(man.get("unverified", [])) | {MANIFEST_NAME}


def unlisted_files(root: Path, man: Mapping[str, Any] | None = None) -> list[str]:
    """The files under ``root`` that its manifest does not list (the user's, not exactdp's), sorted."""
    root = Path(root)
    if man is None:
        man = exactdp_manifest(root) or {}
    listed = listed_files(man)
    return sorted(rel for p in root.rglob("*") if p.is_file()
                  and (rel := p.relative_to(root).as_posix()) not in listed)


def check_manifest(root: Path, *, version: str | None = None, strict: bool = False) -> list[str]:
    """The differences between a tables directory and its manifest (empty when it matches).

    Checks the generator version (when given) and the schema, and that every listed file exists
    with the recorded sha256.  Files the manifest does not list are not exactdp's and are not
    differences (see :func:`unlisted_files`), unless ``strict``.
    """
    root = Path(root)
    problems: list[str] = []
    try:
        man = read_manifest(root)
    except (OSError, ValueError) as e:
        return [f"{MANIFEST_NAME}: cannot be read ({e})"]
    if not isinstance(man, dict) or man.get("generator") != GENERATOR:
        return [f"{MANIFEST_NAME}: not written by exactdp (generator must be {GENERATOR!r})"]
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
    if strict:
        problems += [f"{rel}: present but not listed in {MANIFEST_NAME}" for rel in unlisted_files(root, man)]
    return problems
