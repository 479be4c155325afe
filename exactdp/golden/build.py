"""Build the golden tables: compute every row, then update the tables folder file by file, safely.

Determinism: rows come from fixed grids in a fixed order; ``--jobs N`` computes them in worker
processes, ``--executor dask://HOST:PORT`` on a Dask cluster (:mod:`exactdp.core.executor`; results
come back in submission order); the writers are pure functions
of the rows; nothing depends on time, locale or machine.

Safety: a build never deletes, moves or overwrites a file it did not write.

* Everything the user can get wrong is checked by :func:`plan_build` before any row is computed
  (computing every table takes about 20 s): ``jobs``, the table names, matplotlib when figures are
  asked for, and the output folder.  That folder must be new (its parent must exist: a mistyped
  path is not created), empty, or an exactdp tables folder, one whose ``MANIFEST.json`` says
  ``"generator": "exactdp"``; anything else is refused with one line.
* The files exactdp wrote are those the old manifest lists (:mod:`exactdp.golden.manifest`).  Only
  they are replaced, or removed when a full build no longer produces them and their bytes are
  still the ones exactdp wrote.  Every other file of the folder is the user's and is left alone; a
  file the build would have to write over that the old manifest does not list is refused.
* Every new file is first written into a temporary folder inside the output folder (the same
  filesystem), then moved into place with ``os.replace``, which is atomic per file; stale files go
  next and ``MANIFEST.json`` last.  An error or Ctrl-C at any point before the end puts every old
  file back and removes the temporary files: the previous tables stay as they were.
* ``tables=[...]`` (``--only``) rebuilds just those tables (CSV, JSON, and their figures) and
  rewrites ``README.md`` and ``MANIFEST.json`` so that they describe every table in the folder:
  the other tables keep their bytes and their manifest entries.  ``figures=False``
  (``--no-figures``) draws no figure and keeps the figures already there as they are.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, TextIO

from exactdp.core.errors import InvalidParameterError, MissingExtraError
from exactdp.core.executor import ExecutorSpec, map_ordered, open_executor
from exactdp.core.files import require_extra
from exactdp.golden.manifest import (
    MANIFEST_NAME,
    exactdp_manifest,
    listed_files,
    manifest_json,
    sha256_bytes,
    sha256_file,
)
from exactdp.golden.specs import TABLES, compute_row
from exactdp.golden.table import RowSpec, TableSpec
from exactdp.golden.writers import COLUMNS, SCHEMA_VERSION, csv_text, json_text

__all__ = [
    "BuildPlan",
    "Progress",
    "build",
    "compute_tables",
    "default_tables_dir",
    "figure_renderer",
    "plan_build",
    "readme_text",
    "run_build",
]


def default_tables_dir() -> Path:
    """The ``tables/`` directory of the source checkout this package runs from.

    An installed (non-editable) package has no checkout: then ``--out``/``--dir`` must be given.
    """
    repo = Path(__file__).resolve().parents[2]
    if not (repo / "pyproject.toml").is_file():
        raise FileNotFoundError("not running from a source checkout: give the tables directory (--out / --dir)")
    return repo / "tables"


def _isatty(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


class Progress:
    """One progress line on a terminal (stderr), so a long build or verification is never silent.

    On a terminal the line is drawn at once by :meth:`show` (so something appears within the first
    second), redrawn in place at most ten times a second with the elapsed time, and erased by
    :meth:`close`.  On anything else (a log, a pipe, a test's StringIO) nothing is written: no
    carriage returns or bars in logs, as :mod:`exactdp.core.progress` does for the other commands.
    """

    def __init__(self, total: int = 0, *, stream: TextIO | None = None, enabled: bool = True,
                 label: str = "tables") -> None:
        self.total, self.done, self.label = total, 0, label
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = enabled
        self.tty = enabled and _isatty(self.stream)
        self._what = ""
        self._start = time.monotonic()  # only for the elapsed time shown; never reaches the output files
        self._last_draw = float("-inf")  # float ok: a clock reading
        self._width = 0

    def show(self, what: str) -> None:
        """Say what is being done now (drawn at once)."""
        self._what = what
        self._draw(force=True)

    def status(self, what: str) -> None:
        """Say what is being done after the rows (a line without the bar, drawn at once)."""
        self.total = self.done = 0
        self.show(what)

    def update(self, n: int = 1, what: str = "") -> None:
        """``n`` more rows are done (``what``: the table they belong to)."""
        self.done += n
        if what:
            self._what = what
        self._draw()

    def refresh(self) -> None:
        """Redraw (the elapsed time) while waiting for a slow row."""
        self._draw()

    def _draw(self, force: bool = False) -> None:
        if not self.tty:
            return
        now = time.monotonic()
        if not force and now - self._last_draw < 0.1 and self.done < self.total:
            return
        self._last_draw = now
        secs = f"{now - self._start:.0f} s"
        if self.total:
            width = 30
            fill = width * min(self.done, self.total) // self.total
            line = (f"{self.label} [{'#' * fill}{'.' * (width - fill)}] {self.done}/{self.total} "
                    f"{self._what[:30]:<30} {secs}")
        else:
            line = f"{self.label}: {self._what[:60]} ({secs})"
        pad = max(0, self._width - len(line))
        self._width = max(self._width, len(line))
        self.stream.write("\r" + line + " " * pad)
        self.stream.flush()

    def close(self) -> None:
        """Erase the line (the command then prints its one-line result)."""
        if self.tty and self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()
            self._width = 0


_CHUNK = 8  # rows per task sent to a worker process (a Dask worker: the same)


def _compute(item: tuple[str, RowSpec]) -> dict[str, str]:
    name, r = item
    try:
        return compute_row(r)
    except Exception as e:
        raise type(e)(f"table {name}: row {r}: {e}") from e


def compute_tables(specs: Sequence[TableSpec], *, jobs: int = 1, progress: Progress | None = None,
                   executor: ExecutorSpec | None = None) -> dict[str, list[dict[str, str]]]:
    """Every row of every table in ``specs``, in table order (``jobs`` worker processes, or the
    ``executor``: docs/cluster.md)."""
    work: list[tuple[str, RowSpec]] = [(t.name, r) for t in specs for r in t.rows()]
    if progress is not None:
        progress.total = len(work)
        progress.show(work[0][0] if work else "")
    out: dict[str, list[dict[str, str]]] = {t.name: [] for t in specs}
    spec = executor or ExecutorSpec("local", _check_jobs(jobs))
    if spec.kind == "local" and len(work) <= 1:
        spec = ExecutorSpec("local", 1)
    with open_executor(spec) as ex:
        # results come back in submission order, whatever order the workers finish in; while a
        # slow row is computed, on_wait keeps the progress line's elapsed time moving
        rows = map_ordered(_compute, work, ex, chunk_size=_CHUNK,
                           on_wait=progress.refresh if progress is not None else None)
        for (name, _), row in zip(work, rows):
            out[name].append(row)
            if progress is not None:
                progress.update(1, name)
    return out


def readme_text(specs: Sequence[TableSpec], counts: dict[str, int], figures: Iterable[str]) -> str:
    """tables/README.md: the schema and the list of tables (generated, like every file here)."""
    lines = [
        "# exactdp golden tables",
        "",
        "Generated by `exactdp tables build` (do not edit by hand); `exactdp tables verify` recomputes",
        "every file and checks it byte for byte and against `MANIFEST.json` (sha256 of every file and",
        "the generator version).  Every value is exact or a certified enclosure: the true value lies",
        "in [lower, upper].",
        "",
        "Only the files `MANIFEST.json` lists are exactdp's.  `exactdp tables build` replaces them one by",
        "one (each atomically, the manifest last; an error or Ctrl-C puts the old ones back) and never",
        "deletes, moves or overwrites any other file of this folder; `exactdp tables build --only NAME ...`",
        "rebuilds just those tables and keeps the others byte for byte.  `exactdp tables verify` notes",
        "files the manifest does not list and fails on them only with `--strict`.",
        "",
        f"## Schema (version {SCHEMA_VERSION})",
        "",
        "Each table `NAME` is written twice with the same rows: `NAME.csv` (a header line, then one line",
        "per row, `\\n` line ends, RFC 4180 quoting) and `NAME.json` (`{\"table\", \"title\", \"description\",",
        "\"source\", \"schema\", \"columns\", \"rows\": [{column: cell}]}`).  Every cell is a string; an",
        "empty string means not applicable.  Rows are in the fixed order of the table's grid.",
        "",
        "| column | meaning |",
        "|---|---|",
        "| `table` | the table name (the file stem) |",
        ("| `query` | `delta` (total delta at eps_g = `at`), `epsilon` (eps_g at total delta_g = `at`), "
         "`noise_scale` (Laplace scale per query), `region_fa` / `region_md` (coordinate of vertex `at` of the tradeoff curve), "
         "`calibrate_eps` / `calibrate_sigma` (the per-step eps or the Gaussian sigma that meets the target `at`; the note "
         "says which end is certified to meet it and which to miss it), `rdp` (the Rényi divergence at order `at`, "
         "docs/rdp.md), `beta` (the type II error of the optimal test at type I error `at`, docs/tradeoff.md) |"),
        ("| `method` | a method of `exactdp --method` (`optimal`, `basic`, `drv10`, `kov15-3.4`, ...), or the name of a "
         "claim in the errata table, or `basic-laplace` / `steinke-advanced` / `optimal-laplace` (noise scales), or "
         "`rdp` (the certified divergence of docs/rdp.md; `options` gives its `direction`) |"),
        "| `options` | method options, `key=value` separated by `;` (e.g. `eta=0.1` for `mv-approx`, `orders=2,3,4` for an RDP conversion) |",
        "| `eps`, `delta`, `k` | a homogeneous composition: k mechanisms, each (eps, delta)-DP; empty for a heterogeneous row |",
        "| `mechanisms` | a heterogeneous composition, compact JSON: `[eps, delta(, count)]` entries of strings, or a mechanism spec string such as `\"gaussian:sigma=1,q=0.01,count=1000\"` (the `--mechanism` syntax of `exactdp --help`); empty for a homogeneous row |",
        ("| `at` | the query point: eps_g for `delta`, total delta_g for `epsilon`, the vertex index for `region_*`, "
         "the target `eps_g,delta_g` for `calibrate_*`, the order alpha for `rdp`, alpha for `beta` |"),
        "| `lower`, `upper` | the certified enclosure, rounded outward (lower toward -inf, upper toward +inf) with at least `digits` significant digits and as many more as needed for the printed interval itself to have relative width <= 10^-digits; `inf` is exact +infinity |",
        "| `exact` | the exact value `p/q` (or a finite decimal) when the value is rational, else empty |",
        "| `exact_log` | `log(q)` when the value is exactly log of the rational q, else empty |",
        "| `digits` | significant digits certified: the printed interval [`lower`, `upper`] has relative width <= 10^-digits |",
        "| `float_lower`, `float_upper` | the largest float64 <= the exact lower end and the smallest float64 >= the exact upper end of the enclosure (Python `repr`), safe bounds for float code; with fewer than 16 digits they may lie inside the printed [`lower`, `upper`] |",
        "| `note` | remarks: the grid index, delta~ of a reproduction, the verdict of an erratum |",
        "| `source` | where the statement computed is published |",
        "",
        "Exact numbers (`eps`, `delta`, `at`, `exact`) are finite decimals (`0.000001`) when they are one, else",
        "`p/q`; an eps may be `log(p/q)`, meaning exactly the natural log of p/q.  Column order: "
        + ", ".join(f"`{c}`" for c in COLUMNS) + ".",
        "",
        "## Tables",
        "",
        "| table | rows | title |",
        "|---|---|---|",
    ]
    for t in specs:
        lines.append(f"| `{t.name}` | {counts.get(t.name, 0)} | {t.title} |")
    lines.append("")
    for t in specs:
        lines += [f"### {t.name}", "", t.description, "", f"Source: {t.source}.", ""]
    figs = sorted(figures)
    if figs:
        lines += ["## Figures", "", "Under `figures/`, PNG and SVG, drawn from the tables with matplotlib (Agg, fixed",
                  "rcParams, no metadata).  Files listed under `unverified` in MANIFEST.json were not byte-reproducible",
                  "on the build machine and are not checked.", ""]
        lines += [f"- `figures/{f}`" for f in figs]
        lines.append("")
    return "\n".join(lines)


def figure_renderer() -> str | None:
    """``"matplotlib X.Y.Z"``, the renderer whose bytes the figures are, or None without matplotlib."""
    try:
        import matplotlib
    except ImportError:
        return None
    return f"matplotlib {matplotlib.__version__}"


# -- planning: every check before the expensive work ----------------------------------------------

@dataclass(frozen=True)
class BuildPlan:
    """What a build computes and what it may touch in its output folder, decided before any row.

    ``old`` is the folder's previous manifest (None: a new or empty folder).  ``keep`` are the
    files of the old manifest the build leaves as they are (path -> their recorded sha256),
    ``keep_unverified`` its unverified files kept, ``kept_rows`` the row counts of the tables kept
    (for README.md), ``remove`` the files of the old manifest that this build no longer produces.
    """

    out: Path
    label: str
    specs: tuple[TableSpec, ...]
    universe: tuple[TableSpec, ...]
    figures: bool
    old: Mapping[str, Any] | None
    keep: Mapping[str, str]
    keep_unverified: tuple[str, ...]
    kept_rows: Mapping[str, int]
    remove: tuple[str, ...]

    def produced(self) -> list[str]:
        """The files the build writes, besides README.md and MANIFEST.json."""
        files = [f"{t.name}.{ext}" for t in self.specs for ext in ("csv", "json")]
        if self.figures:
            files += [f"figures/{t.figure}.{fmt}" for t in self.specs if t.figure for fmt in ("png", "svg")]
        return files


def _check_jobs(jobs: object) -> int:
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise InvalidParameterError(f"jobs={jobs!r} must be a positive integer")
    return jobs


def _check_out_dir(path: Path, label: str) -> dict[str, Any] | None:
    """The manifest of the output folder ``path`` (None: new or empty), or raise naming the problem."""
    if path.is_symlink() and not path.exists():
        raise InvalidParameterError(f"{label} is a broken symbolic link; give a folder")
    if path.exists() and not path.is_dir():
        raise InvalidParameterError(f"{label} is a file, not a folder; give a new, empty or exactdp tables folder")
    if not path.exists():
        parent = path.parent if str(path.parent) else Path(".")
        if not parent.is_dir():
            raise InvalidParameterError(f"{label}: the folder {str(parent)!r} does not exist "
                                        f"(it is not created: check the path, or create it first)")
        if not os.access(parent, os.W_OK | os.X_OK):
            raise InvalidParameterError(f"{label}: the folder {str(parent)!r} cannot be written (permission denied)")
        return None
    if not os.access(path, os.R_OK | os.W_OK | os.X_OK):
        raise InvalidParameterError(f"{label} cannot be written (permission denied)")
    entries = sorted(p.name for p in path.iterdir())
    if not entries:
        return None
    man = exactdp_manifest(path)
    if man is None:
        more = f" and {len(entries) - 1} more" if len(entries) > 1 else ""
        raise InvalidParameterError(
            f"{label} holds other files ({entries[0]!r}{more}) and is not an exactdp tables folder "
            f"(no {MANIFEST_NAME} of exactdp): give a new or empty folder; a build never deletes files it did not write")
    return man


def _inside(rel: object) -> bool:
    """Whether a manifest entry names a file inside its folder (relative, no ``..``, ``/``-separated)."""
    if not isinstance(rel, str) or not rel or "\\" in rel or rel.startswith("/"):
        return False
    parts = PurePosixPath(rel).parts
    return all(p not in ("", ".", "..") for p in parts) and ":" not in parts[0]


def _row_count(path: Path, label: str, rel: str) -> int:
    try:
        rows = json.loads(path.read_text(encoding="utf-8"))["rows"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise InvalidParameterError(f"{label}: {rel} (kept as it is) cannot be read: {e}; "
                                    f"rebuild every table (without --only)") from None
    return len(rows)


def plan_build(out: Path | str | None = None, *, jobs: int = 1, tables: Sequence[str] | None = None,
               figures: bool = True, specs: Sequence[TableSpec] | None = None) -> BuildPlan:
    """Check everything a build needs and decide what it will touch, before any row is computed.

    ``specs`` are the tables of the folder (default: the project's), ``tables`` the names of those
    to rebuild (default: all).  Raises :class:`~exactdp.core.errors.InvalidParameterError` (a bad
    ``jobs``, an unknown table, an output folder that is missing its parent, is a file, cannot be
    written, holds files that are not exactdp's, ...) or :class:`~exactdp.core.errors.MissingExtraError`
    (figures without matplotlib), each with one line.
    """
    from exactdp.core.version import __version__

    _check_jobs(jobs)
    universe = tuple(specs) if specs is not None else TABLES
    names = [t.name for t in universe]
    partial = tables is not None
    if partial:
        wanted = list(dict.fromkeys(tables or ()))
        if not wanted:
            raise InvalidParameterError("tables=[] must name at least one table")
        for n in wanted:
            if n not in names:
                raise InvalidParameterError(f"table={n!r} must be one of {', '.join(names)}")
        chosen = tuple(t for t in universe if t.name in wanted)
    else:
        chosen = universe
    path = Path(out) if out is not None else default_tables_dir()
    label = f"out={str(path)!r}"
    old = _check_out_dir(path, label)
    root = path.resolve()
    drawn = bool(figures) and any(t.figure for t in chosen)
    if drawn:
        try:
            require_extra("matplotlib", "drawing the figures")
        except MissingExtraError as e:
            raise MissingExtraError(f"{e} (or build without figures: --no-figures)") from None
    if partial and old is not None and (old.get("version") != __version__ or old.get("schema") != SCHEMA_VERSION):
        raise InvalidParameterError(
            f"{label} holds tables of exactdp {old.get('version')} (schema {old.get('schema')}), this is exactdp "
            f"{__version__}: rebuild every table (without --only) rather than mix the two")

    plan = BuildPlan(root, label, chosen, universe, drawn, old, {}, (), {}, ())
    produced = set(plan.produced())
    ours = listed_files(old) if old is not None else set()
    for rel in sorted(produced) + ["README.md", MANIFEST_NAME]:
        p = root / rel
        if p.is_dir():
            raise InvalidParameterError(f"{label}: {rel} is a folder; move it away first")
        if (p.exists() or p.is_symlink()) and rel not in ours:
            raise InvalidParameterError(f"{label}: {rel} is not listed in {MANIFEST_NAME} (exactdp did not write it) "
                                        f"and would be overwritten; move it away first")
    if drawn and (root / "figures").exists():
        if not (root / "figures").is_dir():
            raise InvalidParameterError(f"{label}: figures is a file, not a folder; move it away first")
        if not os.access(root / "figures", os.W_OK | os.X_OK):
            raise InvalidParameterError(f"{label}: the folder 'figures' cannot be written (permission denied)")

    old_files: Mapping[str, str] = old.get("files", {}) if old is not None else {}
    old_unverified: list[str] = list(old.get("unverified", [])) if old is not None else []
    for rel in sorted(set(old_files) | set(old_unverified)):
        if not _inside(rel):  # a manifest may come with a downloaded folder: it never points outside
            raise InvalidParameterError(f"{label}: {MANIFEST_NAME} lists {rel!r}, which is not a file inside the folder")

    def kept(rel: str) -> bool:  # a file of the old manifest this build does not rewrite: keep or remove?
        return partial or (not figures and rel.startswith("figures/"))

    keep: dict[str, str] = {}
    keep_unverified: list[str] = []
    remove: list[str] = []
    for rel in sorted(set(old_files) | set(old_unverified)):
        if rel in produced or rel == "README.md":
            continue
        p = root / rel
        if kept(rel):
            if not p.is_file():
                hint = "rebuild every table (without --only)" if partial else "build with figures"
                raise InvalidParameterError(f"{label}: {rel} is listed in {MANIFEST_NAME} but missing, so the new "
                                            f"manifest could not list it; {hint}")
            if rel in old_files:
                keep[rel] = old_files[rel]
            else:
                keep_unverified.append(rel)
        elif p.is_file() and (rel not in old_files or sha256_file(p) == old_files[rel]):
            remove.append(rel)  # exactdp wrote it and nothing changed it since; a changed one is left alone
    kept_rows = {t.name: _row_count(root / f"{t.name}.json", label, f"{t.name}.json")
                 for t in universe if f"{t.name}.json" in keep}
    return BuildPlan(root, label, chosen, universe, drawn, old, keep, tuple(keep_unverified), kept_rows, tuple(remove))


# -- writing: stage in a temporary folder, then move each file into place -------------------------

def _stage(stage: Path, plan: BuildPlan, rows: Mapping[str, list[dict[str, str]]], *, version: str,
           progress: Progress | None) -> list[str]:
    """Write every new file under ``stage`` (same relative paths); returns them, MANIFEST.json last."""
    hashes: dict[str, str] = {}
    unverified: list[str] = []
    order: list[str] = []

    def put(rel: str, data: bytes, *, hashed: bool = True) -> None:
        p = stage / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
        order.append(rel)
        if hashed:
            hashes[rel] = sha256_bytes(data)
        else:
            unverified.append(rel)

    for t in plan.specs:
        put(f"{t.name}.csv", csv_text(rows[t.name]).encode("utf-8"))
        put(f"{t.name}.json", json_text(t.meta(), rows[t.name]).encode("utf-8"))
    drew = False
    if plan.figures:
        from exactdp.plots import render

        for t in plan.specs:
            if t.figure is None:
                continue
            if progress is not None:
                progress.status(f"drawing figures/{t.figure}")
            for fmt in ("png", "svg"):
                first = render(t.figure, rows[t.name], fmt)
                second = render(t.figure, rows[t.name], fmt)  # byte-reproducible? render twice
                put(f"figures/{t.figure}.{fmt}", first, hashed=first == second)
                drew = True
    files = {**plan.keep, **hashes}
    unverified_all = sorted(set(plan.keep_unverified) | set(unverified))
    counts = {**plan.kept_rows, **{name: len(r) for name, r in rows.items()}}
    listed = [t for t in plan.universe if t.name in counts]
    figures = sorted(f[len("figures/"):] for f in set(files) | set(unverified_all) if f.startswith("figures/"))
    put("README.md", readme_text(listed, counts, figures).encode("utf-8"))
    files["README.md"] = hashes["README.md"]
    kept_figures = any(f.startswith("figures/") for f in set(plan.keep) | set(plan.keep_unverified))
    renderer = figure_renderer() if drew else (plan.old or {}).get("figures_renderer") if kept_figures else None
    put(MANIFEST_NAME, manifest_json(files, version=version, unverified=unverified_all, renderer=renderer).encode("utf-8"))
    return order


def _keep_copy(src: Path, dst: Path) -> None:
    """A copy of ``src`` at ``dst`` that survives ``src`` being replaced (a hard link when possible)."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(src, dst)
    except OSError:  # no hard links on this filesystem
        shutil.copy2(src, dst)


def _commit(root: Path, stage: Path, backup: Path, files: Sequence[str], remove: Sequence[str]) -> None:
    """Move the staged ``files`` into ``root`` (in order) and remove ``remove``; all or nothing.

    Each move is one ``os.replace`` (atomic: a reader sees the old file or the new one, never a
    mix).  The old version of each file is kept under ``backup`` until the end, so that an error
    or Ctrl-C half way puts every old file back and removes the new ones.
    """
    done: list[tuple[str, str]] = []  # (path, "replaced" | "created" | "removed")
    made: list[Path] = []
    try:
        for i, rel in enumerate(files):
            if rel == MANIFEST_NAME:
                assert i == len(files) - 1
                for gone in remove:  # stale files go before the manifest that stops listing them
                    (backup / gone).parent.mkdir(parents=True, exist_ok=True)
                    os.replace(root / gone, backup / gone)
                    done.append((gone, "removed"))
            dst = root / rel
            if not dst.parent.is_dir():
                dst.parent.mkdir()
                made.append(dst.parent)
            if dst.exists():
                _keep_copy(dst, backup / rel)
                os.replace(stage / rel, dst)
                done.append((rel, "replaced"))
            else:
                os.replace(stage / rel, dst)
                done.append((rel, "created"))
    except BaseException:
        for rel, how in reversed(done):
            try:
                if how == "created":
                    os.remove(root / rel)
                else:
                    os.replace(backup / rel, root / rel)
            except OSError:  # pragma: no cover - best effort; the manifest shows what is left
                pass
        for d in reversed(made):
            try:
                d.rmdir()
            except OSError:  # pragma: no cover
                pass
        raise
    for d in sorted({(root / gone).parent for gone in remove}, reverse=True):
        if d != root and d.is_dir() and not any(d.iterdir()):
            d.rmdir()  # e.g. figures/ once its last figure is gone (exactdp made it)


def run_build(plan: BuildPlan, *, jobs: int = 1, progress: Progress | None = None,
              executor: ExecutorSpec | None = None) -> Path:
    """Compute the rows of ``plan`` and update its folder (see the module docstring); returns it."""
    from exactdp.core.version import __version__

    try:
        rows = compute_tables(plan.specs, jobs=jobs, progress=progress, executor=executor)
        if progress is not None:
            progress.status("writing")
        created = not plan.out.exists()
        if created:
            plan.out.mkdir()  # its parent exists (checked); parents are never created
        tmp = Path(tempfile.mkdtemp(prefix=".exactdp-build-", dir=plan.out))
        try:
            files = _stage(tmp / "new", plan, rows, version=__version__, progress=progress)
            _commit(plan.out, tmp / "new", tmp / "old", files, plan.remove)
        except BaseException:
            if created:
                shutil.rmtree(tmp, ignore_errors=True)
                try:
                    plan.out.rmdir()
                except OSError:  # pragma: no cover
                    pass
            raise
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    finally:
        if progress is not None:
            progress.close()
    return plan.out


def build(out: Path | str | None = None, *, jobs: int = 1, tables: Sequence[str] | None = None,
          figures: bool = True, progress: bool = True, stream: TextIO | None = None,
          specs: Sequence[TableSpec] | None = None, executor: ExecutorSpec | None = None) -> Path:
    """Regenerate the tables (all, or the named ones) into ``out`` (default: the repo's tables/).

    Returns the output directory (absolute).  Everything is checked before any row is computed
    (:func:`plan_build`); files are replaced one by one, each atomically, and only files exactdp
    wrote are ever replaced or removed (see the module docstring).  ``specs`` builds other tables
    than the project's (used by the tests); ``tables`` then names some of them; ``executor`` (from
    :func:`exactdp.core.executor.parse_executor`) computes the rows elsewhere than ``jobs`` local processes.
    """
    plan = plan_build(out, jobs=jobs, tables=tables, figures=figures, specs=specs)
    return run_build(plan, jobs=jobs, progress=Progress(0, stream=stream, enabled=progress), executor=executor)
