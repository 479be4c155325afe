"""Verify the golden tables: the manifest, then a fresh recomputation compared byte for byte.

Only the files the manifest lists are exactdp's and are checked; any other file in the folder is
the user's (a build never touches it) and is not a difference unless ``strict`` (the command line
notes such files: :func:`exactdp.golden.manifest.unlisted_files`).
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from exactdp.core.errors import InvalidParameterError
from exactdp.golden.build import Progress, figure_renderer, plan_build, run_build
from exactdp.golden.manifest import MANIFEST_NAME, check_manifest, read_manifest, unlisted_files

__all__ = ["check_verify_dir", "compare_dirs", "first_difference", "verify"]


def first_difference(name: str, expected: bytes, actual: bytes) -> str:
    """A one-line description of where two versions of a file first differ."""
    a_lines = expected.decode("utf-8", "replace").splitlines()
    b_lines = actual.decode("utf-8", "replace").splitlines()
    for i, (x, y) in enumerate(zip(a_lines, b_lines), 1):
        if x != y:
            return f"{name} line {i}: tables/ has {x[:200]!r}, recomputed {y[:200]!r}"
    if len(a_lines) != len(b_lines):
        return f"{name}: tables/ has {len(a_lines)} lines, recomputed {len(b_lines)}"
    return f"{name}: bytes differ (line ends or encoding)"


def compare_dirs(have: Path, fresh: Path, *, skip: Sequence[str] = ()) -> list[str]:
    """Differences between the files of ``have`` and a fresh build ``fresh`` (names relative)."""
    def listing(root: Path) -> set[str]:
        return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}

    a, b = listing(have) - set(skip), listing(fresh) - set(skip)
    problems = [f"{n}: recomputed but missing from tables/" for n in sorted(b - a)]
    problems += [f"{n}: in tables/ but not generated" for n in sorted(a - b)]
    for n in sorted(a & b):
        x, y = (have / n).read_bytes(), (fresh / n).read_bytes()
        if x != y:
            problems.append(first_difference(n, x, y))
    return problems


def check_verify_dir(directory: Path | str | None, what: str = "dir") -> Path:
    """The tables folder to verify (default: the checkout's, else the installed one), checked.

    Raises :class:`~exactdp.core.errors.InvalidParameterError` with one line when it does not exist,
    is not a folder, or has no ``MANIFEST.json`` (then it is not an exactdp tables folder).
    """
    from exactdp.golden import tables_dir

    root = Path(directory) if directory is not None else tables_dir()
    label = f"{what}={str(root)!r}"
    if not root.exists():
        raise InvalidParameterError(f"{label} does not exist")
    if not root.is_dir():
        raise InvalidParameterError(f"{label} is a file, not a folder")
    if not (root / MANIFEST_NAME).is_file():
        raise InvalidParameterError(f"{label} has no {MANIFEST_NAME}: it is not an exactdp tables folder")
    return root


def verify(directory: Path | str | None = None, *, jobs: int = 1, tables: Sequence[str] | None = None,
           recompute: bool = True, progress: bool = True, stream: TextIO | None = None,
           strict: bool = False) -> list[str]:
    """All differences found (empty: verified).  The manifest is checked first, then a recomputation.

    With ``tables``, only those tables are recomputed and compared (the manifest is still checked
    whole).  Files the manifest does not list are ignored, or differences when ``strict``.  A
    folder that does not exist or has no manifest raises (:func:`check_verify_dir`), as do a bad
    ``jobs``, unknown tables or a missing matplotlib, all before any row is computed.
    """
    from exactdp.core.version import __version__

    root = check_verify_dir(directory)
    figures = figure_renderer() is not None  # without matplotlib the figures cannot be redrawn
    with tempfile.TemporaryDirectory(prefix="exactdp-verify-") as tmp:
        plan = plan_build(Path(tmp) / "tables", jobs=jobs, tables=tables, figures=figures)
        bar = Progress(0, stream=stream, enabled=progress, label="verify")
        bar.show(f"checking {MANIFEST_NAME}")
        problems = check_manifest(root, version=__version__, strict=strict)
        if problems or not recompute:
            bar.close()
            return problems
        man = read_manifest(root)
        unverified = list(man.get("unverified", []))
        if man.get("figures_renderer") and man.get("figures_renderer") != figure_renderer():
            # Figure bytes depend on the matplotlib version; their hashes were checked above, and
            # the tables themselves are still recomputed and compared byte for byte.
            unverified += [f for f in man.get("files", {}) if f.startswith("figures/")]
            if stream is not None or progress:
                bar.close()
                print(f"exactdp tables verify: figures drawn by {man.get('figures_renderer')}, "
                      f"here {figure_renderer()}: figure bytes not recompared", file=stream or sys.stderr)
        fresh = run_build(plan, jobs=jobs, progress=bar)
        if tables:
            wanted = {f"{t}.{ext}" for t in tables for ext in ("csv", "json")}
            skip = [p.relative_to(root).as_posix() for p in root.rglob("*")
                    if p.is_file() and p.relative_to(root).as_posix() not in wanted]
            skip += [p.relative_to(fresh).as_posix() for p in fresh.rglob("*")
                     if p.is_file() and p.relative_to(fresh).as_posix() not in wanted]
            return compare_dirs(root, fresh, skip=skip)
        # the user's files (not listed in the manifest) are not compared; under strict they were reported above
        problems = compare_dirs(root, fresh, skip=unverified + [MANIFEST_NAME] + unlisted_files(root, man))
        if problems or len(unverified) > len(man.get("unverified", [])):
            return problems
        return _manifest_equal(root, fresh)


def _manifest_equal(root: Path, fresh: Path) -> list[str]:
    a, b = read_manifest(root), read_manifest(fresh)
    if a.get("files") != b.get("files"):
        return [f"{MANIFEST_NAME}: the recomputed manifest lists other files or hashes"]
    return []
