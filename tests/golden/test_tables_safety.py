"""``exactdp tables build`` never deletes, moves or overwrites a file it did not write.

Each test snapshots a folder (every file's bytes and every subfolder), runs a build that must be
refused or must leave some files alone, and compares.  The tables are small ones of the tests' own
(exact Laplace scales, milliseconds) or the cheapest project tables (kov15_grid,
repro_privacy_region), so the whole file runs in seconds.
"""

from __future__ import annotations

import io
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from exactdp.core.errors import InvalidParameterError, MissingExtraError
from exactdp.golden import build as build_module
from exactdp.golden.build import build
from exactdp.cli.tables import main
from exactdp.golden.manifest import check_manifest, read_manifest, unlisted_files
from exactdp.golden.table import RowSpec, TableSpec


def _noise_rows(name: str, ks: tuple[int, ...]) -> Any:
    return lambda: [RowSpec(name, "noise_scale", "basic-laplace", "1/3", "0", str(k), kind="noise") for k in ks]


A = TableSpec("t_a", "table a", "exact Laplace scales", "test", _noise_rows("t_a", (1, 2, 3)),
              figure="repro_steinke_noise")
B = TableSpec("t_b", "table b", "exact Laplace scales", "test", _noise_rows("t_b", (5, 7)))
B2 = TableSpec("t_b", "table b", "exact Laplace scales, more of them", "test", _noise_rows("t_b", (5, 7, 11)))


def snapshot(root: Path) -> dict[str, bytes | None]:
    """Every file (its bytes) and folder (None) under ``root``, by relative path."""
    return {p.relative_to(root).as_posix(): (p.read_bytes() if p.is_file() else None) for p in root.rglob("*")}


def user_folder(root: Path) -> dict[str, bytes | None]:
    """A folder of the user's: files, a subfolder, a hidden file, one named like a table."""
    root.mkdir()
    (root / "thesis.tex").write_bytes(b"\\section{Results}\n")
    (root / "data").mkdir()
    (root / "data" / "runs.csv").write_bytes(b"run,eps\n1,0.5\n")
    (root / ".hidden").write_bytes(b"secret")
    (root / "kov15_grid.csv").write_bytes(b"my own numbers\n")
    return snapshot(root)


@pytest.fixture
def no_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test if any row is computed: every check must come before the expensive work."""
    def fail(*args: object, **kwargs: object) -> None:
        raise AssertionError("rows were computed before the arguments were checked")

    monkeypatch.setattr(build_module, "compute_tables", fail)


def one_error_line(err: str) -> str:
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("exactdp tables: error: "), err
    assert "Traceback" not in err
    return lines[0]


# -- refusing folders that are not exactdp's ------------------------------------------------------

def test_a_folder_of_user_files_is_refused_and_left_byte_identical(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], no_rows: None) -> None:
    out = tmp_path / "mine"
    before = user_folder(out)
    assert main(["build", "--out", str(out), "--only", "kov15_grid", "--quiet"]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert "not an exactdp tables folder" in line and str(out) in line
    assert snapshot(out) == before
    with pytest.raises(InvalidParameterError, match="not an exactdp tables folder"):
        build(out, specs=[A], progress=False)
    assert snapshot(out) == before
    # a MANIFEST.json that is not exactdp's does not make it one
    (out / "MANIFEST.json").write_text('{"generator": "someone else", "files": {}}')
    before = snapshot(out)
    with pytest.raises(InvalidParameterError, match="not an exactdp tables folder"):
        build(out, specs=[A], progress=False)
    assert snapshot(out) == before


def test_out_dot_in_a_folder_of_user_files_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], no_rows: None) -> None:
    work = tmp_path / "work"
    before = user_folder(work)
    monkeypatch.chdir(work)
    assert main(["build", "--out", ".", "--quiet"]) == 2
    assert "out='.'" in one_error_line(capsys.readouterr().err)
    assert snapshot(work) == before
    assert [p.name for p in tmp_path.iterdir()] == ["work"]


@pytest.mark.parametrize("case", ["missing parent", "a file", "a file as parent"])
def test_bad_out_paths_are_refused_before_any_row(
        tmp_path: Path, case: str, capsys: pytest.CaptureFixture[str], no_rows: None) -> None:
    (tmp_path / "f.txt").write_bytes(b"x")
    out = {"missing parent": tmp_path / "nope" / "tables", "a file": tmp_path / "f.txt",
           "a file as parent": tmp_path / "f.txt" / "tables"}[case]
    before = snapshot(tmp_path)
    assert main(["build", "--out", str(out), "--only", "kov15_grid", "--quiet"]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert str(out) in line
    if case == "missing parent":
        assert f"the folder {str(tmp_path / 'nope')!r} does not exist" in line
    assert snapshot(tmp_path) == before  # no folder created, nothing written


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root can write anywhere")
def test_an_unwritable_out_is_refused_before_any_row(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], no_rows: None) -> None:
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        for out in (ro, ro / "tables"):
            assert main(["build", "--out", str(out), "--quiet"]) == 2
            assert "cannot be written (permission denied)" in one_error_line(capsys.readouterr().err)
        assert list(ro.iterdir()) == []
    finally:
        ro.chmod(0o700)


def test_an_unwritable_out_is_refused_even_as_root(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], no_rows: None) -> None:
    """The same check, with the permission answer simulated (root gets write access everywhere)."""
    ro = tmp_path / "ro"
    ro.mkdir()
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, mode, **kw: False if Path(p).resolve() == ro else real_access(p, mode, **kw))
    for out in (ro, ro / "tables"):
        assert main(["build", "--out", str(out), "--quiet"]) == 2
        assert "cannot be written (permission denied)" in one_error_line(capsys.readouterr().err)
    assert list(ro.iterdir()) == []


@pytest.mark.parametrize("argv, expected", [
    (["--only", "kov15_grid", "no_such_table"], "table='no_such_table' must be one of"),
    (["--jobs", "0"], "jobs='0' must be a positive integer"),
    (["--jobs", "two"], "jobs='two' must be a positive integer"),
])
def test_bad_arguments_are_refused_before_any_row(
        tmp_path: Path, argv: list[str], expected: str, capsys: pytest.CaptureFixture[str], no_rows: None) -> None:
    assert main(["build", "--out", str(tmp_path / "t"), "--quiet", *argv]) == 2
    assert expected in one_error_line(capsys.readouterr().err)
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(InvalidParameterError, match="jobs=0 must be a positive integer"):
        build(tmp_path / "t", specs=[A], jobs=0, progress=False)


def test_missing_matplotlib_is_refused_with_the_extra_unless_no_figures(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # `import matplotlib` now raises ImportError
    computed: list[object] = []
    real = build_module.compute_tables
    monkeypatch.setattr(build_module, "compute_tables", lambda *a, **k: computed.append(a) or real(*a, **k))
    out = tmp_path / "t"
    assert main(["build", "--out", str(out), "--only", "repro_privacy_region", "--quiet"]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert "pip install 'exactdp[plot]'" in line and "--no-figures" in line
    assert computed == [] and not out.exists()
    with pytest.raises(MissingExtraError):
        build(out, specs=[A], progress=False)
    assert main(["build", "--out", str(out), "--only", "repro_privacy_region", "--no-figures", "--quiet"]) == 0
    assert computed and not (out / "figures").exists()
    assert sorted(read_manifest(out)["files"]) == ["README.md", "repro_privacy_region.csv", "repro_privacy_region.json"]


# -- updating an exactdp tables folder --------------------------------------------------------------

def test_building_into_an_exactdp_folder_keeps_the_users_files(tmp_path: Path) -> None:
    out = build(tmp_path / "t", specs=[A, B], progress=False)
    (out / "notes.txt").write_bytes(b"mine")
    (out / "mine").mkdir()
    (out / "mine" / "deep.json").write_bytes(b"{}")
    (out / "figures" / "my_plot.pdf").write_bytes(b"%PDF")
    mine = {k: v for k, v in snapshot(out).items() if k in ("notes.txt", "mine", "mine/deep.json", "figures/my_plot.pdf")}
    assert len(mine) == 4
    build(out, specs=[A, B2], progress=False)  # a full build that changes t_b
    after = snapshot(out)
    assert {k: after[k] for k in mine} == mine
    assert check_manifest(out) == []  # the user's files are not differences ...
    assert unlisted_files(out) == ["figures/my_plot.pdf", "mine/deep.json", "notes.txt"]  # ... only notes
    assert len(check_manifest(out, strict=True)) == 3
    assert b"11" in (out / "t_b.csv").read_bytes()


def test_a_file_the_manifest_does_not_list_is_never_overwritten(tmp_path: Path) -> None:
    out = build(tmp_path / "t", specs=[A], progress=False, figures=False)
    (out / "figures").mkdir()
    (out / "figures" / "repro_steinke_noise.png").write_bytes(b"my own png")
    before = snapshot(out)
    with pytest.raises(InvalidParameterError, match="not listed in MANIFEST.json .* would be overwritten"):
        build(out, specs=[A], progress=False)
    assert snapshot(out) == before


def test_only_keeps_every_other_table_and_figure_byte_identical(tmp_path: Path) -> None:
    full = build(tmp_path / "full", specs=[A, B], progress=False)
    out = build(tmp_path / "t", specs=[A, B], progress=False)
    before = snapshot(out)
    assert "figures/repro_steinke_noise.png" in before
    # nothing changed: rebuilding one table gives back the very same folder
    build(out, specs=[A, B], tables=["t_b"], progress=False)
    assert snapshot(out) == before == snapshot(full)
    # t_b changes: only its files, README.md (its row count) and MANIFEST.json change
    build(out, specs=[A, B2], tables=["t_b"], progress=False)
    after = snapshot(out)
    changed = sorted(k for k in after if after[k] != before.get(k))
    assert changed == ["MANIFEST.json", "README.md", "t_b.csv", "t_b.json"]
    assert check_manifest(out) == []
    man = read_manifest(out)
    assert set(man["files"]) == {"README.md", "t_a.csv", "t_a.json", "t_b.csv", "t_b.json",
                                 "figures/repro_steinke_noise.png", "figures/repro_steinke_noise.svg"}
    assert "| `t_a` | 3 |" in after["README.md"].decode() and "| `t_b` | 3 |" in after["README.md"].decode()
    # and the same as a full build of the new tables
    assert after == snapshot(build(tmp_path / "full2", specs=[A, B2], progress=False))


def test_cli_only_keeps_the_other_tables_and_the_manifest_consistent(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "t"
    assert main(["build", "--out", str(out), "--only", "kov15_grid", "repro_privacy_region", "--quiet"]) == 0
    (out / "notes.txt").write_bytes(b"mine")
    before = snapshot(out)
    assert "figures/repro_privacy_region.svg" in before
    capsys.readouterr()
    assert main(["build", "--out", str(out), "--only", "kov15_grid", "--quiet"]) == 0
    assert "left 1 other file(s) as they were: notes.txt" in capsys.readouterr().err
    assert snapshot(out) == before
    assert main(["verify", "--dir", str(out), "--manifest-only", "--quiet"]) == 0
    err = capsys.readouterr().err
    assert "note: 1 file(s) not listed in MANIFEST.json" in err and "notes.txt" in err and err.endswith("OK\n")
    assert main(["verify", "--dir", str(out), "--manifest-only", "--strict", "--quiet"]) == 1
    assert "notes.txt: present but not listed" in capsys.readouterr().err


def test_a_full_build_removes_only_its_own_stale_files(tmp_path: Path) -> None:
    out = build(tmp_path / "t", specs=[A, B], progress=False)
    (out / "notes.txt").write_bytes(b"mine")
    build(out, specs=[A], progress=False)  # t_b is no longer built: exactdp wrote it, it goes
    assert not (out / "t_b.csv").exists() and not (out / "t_b.json").exists()
    assert (out / "notes.txt").read_bytes() == b"mine" and check_manifest(out) == []
    # a stale file the user changed since is theirs now: left alone (and no longer listed)
    build(out, specs=[A, B], progress=False)
    (out / "t_b.csv").write_bytes(b"edited by hand\n")
    build(out, specs=[A], progress=False)
    assert (out / "t_b.csv").read_bytes() == b"edited by hand\n" and not (out / "t_b.json").exists()
    assert unlisted_files(out) == ["notes.txt", "t_b.csv"]
    # the figures go when the build that drew them no longer does; --no-figures keeps them as they are
    figs = {k: v for k, v in snapshot(out).items() if k.startswith("figures/")}
    build(out, specs=[A], progress=False, figures=False)
    assert {k: v for k, v in snapshot(out).items() if k.startswith("figures/")} == figs
    assert check_manifest(out) == [] and "figures/repro_steinke_noise.png" in read_manifest(out)["files"]
    before = snapshot(out)
    with pytest.raises(InvalidParameterError, match="t_b.csv is not listed"):  # the user's t_b.csv now
        build(out, specs=[B], progress=False)
    assert snapshot(out) == before
    (out / "t_b.csv").unlink()
    build(out, specs=[B], progress=False)
    assert not (out / "figures").exists() and not (out / "t_a.csv").exists()
    assert unlisted_files(out) == ["notes.txt"] and check_manifest(out) == []


def test_only_refuses_to_mix_versions(tmp_path: Path) -> None:
    out = build(tmp_path / "t", specs=[A, B], progress=False)
    man = (out / "MANIFEST.json").read_text().replace('"version": "', '"version": "0.0.0-old-')
    (out / "MANIFEST.json").write_text(man)
    before = snapshot(out)
    with pytest.raises(InvalidParameterError, match="rebuild every table"):
        build(out, specs=[A, B], tables=["t_b"], progress=False)
    assert snapshot(out) == before


# -- failures half way ----------------------------------------------------------------------------

class Boom(Exception):
    pass


@pytest.mark.parametrize("error", [Boom, KeyboardInterrupt])
def test_a_failure_while_writing_leaves_the_previous_tables_and_no_temporary_files(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, error: type[BaseException]) -> None:
    out = build(tmp_path / "t", specs=[A, B], progress=False)
    (out / "notes.txt").write_bytes(b"mine")
    before = snapshot(out)
    real = build_module.json_text
    calls: list[int] = []

    def json_text_failing_on_the_second_table(*args: Any, **kwargs: Any) -> str:
        calls.append(1)
        if len(calls) == 2:
            raise error("injected")
        return real(*args, **kwargs)

    monkeypatch.setattr(build_module, "json_text", json_text_failing_on_the_second_table)
    with pytest.raises(error):
        build(out, specs=[A, B2], progress=False)
    assert len(calls) == 2
    assert snapshot(out) == before  # also: no .exactdp-build-* folder left
    # into a new folder: the folder the build made is gone again
    calls.clear()
    with pytest.raises(error):
        build(tmp_path / "new", specs=[A, B2], progress=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t"]


@pytest.mark.parametrize("fail_at", [1, 3, 5, 8])
def test_a_failure_while_moving_files_into_place_puts_the_old_ones_back(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fail_at: int) -> None:
    """The moves are one os.replace each; the n-th fails: every file moved before goes back.

    Moves: t_b.csv, t_b.json, README.md (1-3), the stale t_a.csv, t_a.json and two figures (4-7),
    MANIFEST.json (8).
    """
    out = build(tmp_path / "t", specs=[A, B], progress=False)
    build(out, specs=[A, B], progress=False)
    (out / "notes.txt").write_bytes(b"mine")
    (out / "figures" / "old.png").write_bytes(b"user figure")
    before = snapshot(out)
    real = os.replace
    calls: list[str] = []

    def replace(src: Any, dst: Any) -> None:
        calls.append(str(dst))
        if len(calls) == fail_at:
            raise OSError(28, "No space left on device (injected)")
        real(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(OSError):
        build(out, specs=[B2], progress=False)  # replaces t_b, removes t_a and the figures
    monkeypatch.setattr(os, "replace", real)
    assert len(calls) >= 2 * fail_at - 1  # the rollback moved the replaced files back
    assert snapshot(out) == before


# -- progress ---------------------------------------------------------------------------------------

class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_on_a_terminal_shows_at_once_and_nothing_elsewhere(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tty = Terminal()
    real = build_module.compute_row
    seen: list[str] = []
    monkeypatch.setattr(build_module, "compute_row", lambda r: seen.append(tty.getvalue()) or real(r))
    build(tmp_path / "a", specs=[A], stream=tty)
    assert seen and "tables" in seen[0]  # drawn before the first row was computed
    assert "\r" in tty.getvalue() and tty.getvalue().endswith("\r")  # the line is erased at the end
    log = io.StringIO()
    build(tmp_path / "b", specs=[A], stream=log)
    assert log.getvalue() == ""  # no bars or carriage returns in a log
    quiet = Terminal()
    build(tmp_path / "c", specs=[A], stream=quiet, progress=False)
    assert quiet.getvalue() == ""


def test_verify_progress_on_a_terminal_and_a_clean_stderr_otherwise(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from exactdp.golden.verify import verify

    out = tmp_path / "t"
    assert main(["build", "--out", str(out), "--only", "kov15_grid", "--no-figures"]) == 0
    assert capsys.readouterr().err == f"exactdp tables: wrote {out}\n"  # stderr is not a terminal here
    tty = Terminal()
    assert verify(out, tables=["kov15_grid"], stream=tty) == []
    assert tty.getvalue().startswith("\rverify: checking MANIFEST.json")
    assert main(["verify", "--dir", str(out), "--only", "kov15_grid"]) == 0
    assert capsys.readouterr().err == "exactdp tables verify: OK\n"


def test_verify_and_export_user_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "f.txt").write_bytes(b"x")
    (tmp_path / "empty").mkdir()
    for argv in (["verify", "--dir", str(tmp_path / "missing")], ["verify", "--dir", str(tmp_path / "f.txt")],
                 ["verify", "--dir", str(tmp_path / "empty")], ["verify", "--only", "nope"],
                 ["verify", "--jobs", "-1"], ["export", "kov15_grid", "--dir", str(tmp_path / "missing")],
                 ["export", "kov15_grid", "--dir", str(tmp_path / "empty")], ["export", "nope"]):
        assert main(argv) == 2, argv
        one_error_line(capsys.readouterr().err)


def test_a_manifest_pointing_outside_its_folder_is_refused(tmp_path: Path) -> None:
    """A folder may come from elsewhere: its manifest cannot make a build remove files outside it."""
    import json

    from exactdp.golden.manifest import sha256_file

    out = build(tmp_path / "t", specs=[A, B], progress=False)
    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"precious")
    man = json.loads((out / "MANIFEST.json").read_text())
    man["files"]["../victim.txt"] = sha256_file(victim)  # "stale": a full build would remove it
    (out / "MANIFEST.json").write_text(json.dumps(man))
    before = snapshot(tmp_path)
    with pytest.raises(InvalidParameterError, match="not a file inside the folder"):
        build(out, specs=[A, B], progress=False)
    assert snapshot(tmp_path) == before
