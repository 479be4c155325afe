"""The command line of proofs/: progress on a terminal, one-line errors without sympy or without the
derivations, ``exactdp proofs`` from a checkout and from a wheel-like install (proofs/ ships as
exactdp.proofs), and every example of proofs/README.md."""

from __future__ import annotations

import io
import os
import re
import shlex
import shutil
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import exactdp.cli  # noqa: E402
import exactdp.cli.proofs  # noqa: E402
import proofs.cli  # noqa: E402

NO_SYMPY = "pip install 'exactdp[proofs]'"


class _Tty(io.StringIO):
    """A stderr that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def _env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    env.update(extra)
    return env


def _blocker(tmp_path: Path) -> Path:
    """A directory that, first on PYTHONPATH, makes ``import sympy`` fail as if sympy were absent."""
    d = tmp_path / "block"
    (d / "sympy").mkdir(parents=True)
    (d / "sympy" / "__init__.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'sympy'\", name='sympy')\n")
    return d


def _one_line_error(stderr: str, prefix: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith(prefix), stderr
    assert "Traceback" not in stderr
    return lines[0]


# -- progress on a terminal ---------------------------------------------------------------------

def test_progress_on_a_terminal_stderr_only(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    tty = _Tty()
    monkeypatch.setattr(sys, "stderr", tty)
    assert proofs.cli.main(["basic_composition", "group_privacy"]) == 0
    out = capsys.readouterr().out
    assert [line.split(":")[0] for line in out.splitlines()] == ["PASS basic_composition", "PASS group_privacy"]
    err = tty.getvalue()
    assert "proofs: 1/2 basic_composition ..." in err and "proofs: 2/2 group_privacy ..." in err
    assert err.endswith("\r\x1b[K"), "the progress line is cleared at the end"
    assert "proofs:" not in out


def test_no_progress_when_stderr_is_not_a_terminal(capsys) -> None:
    assert proofs.cli.main(["basic_composition"]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    assert captured.out.startswith("PASS basic_composition: ")


def test_progress_through_a_real_pty() -> None:
    pty = pytest.importorskip("pty")
    master, slave = pty.openpty()
    p = subprocess.Popen([sys.executable, "-m", "proofs", "basic_composition"], cwd=ROOT, env=_env(),
                         stdout=subprocess.PIPE, stderr=slave)
    os.close(slave)
    out, _ = p.communicate(timeout=120)
    err = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:
            break
        if not chunk:
            break
        err += chunk
    os.close(master)
    assert p.returncode == 0
    assert out.decode().startswith("PASS basic_composition: ")
    assert b"proofs: 1/1 basic_composition ..." in err


# -- without sympy --------------------------------------------------------------------------------

def test_main_without_sympy_in_process(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.setitem(sys.modules, "sympy", None)  # import sympy now raises ImportError
    assert proofs.cli.main([]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert NO_SYMPY in _one_line_error(captured.err, "python -m proofs: error: ")


def test_exactdp_proofs_without_sympy_in_process(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.setitem(sys.modules, "sympy", None)
    assert exactdp.cli.main(["proofs", "--list"]) == 2
    assert NO_SYMPY in _one_line_error(capsys.readouterr().err, "exactdp proofs: error: ")


@pytest.mark.parametrize("cmd, prefix", [(["-m", "proofs"], "python -m proofs: error: "),
                                         (["-m", "exactdp", "proofs"], "exactdp proofs: error: ")])
def test_without_sympy_in_a_subprocess(tmp_path: Path, cmd: list[str], prefix: str) -> None:
    r = subprocess.run([sys.executable, *cmd], cwd=ROOT, env=_env(PYTHONPATH=str(_blocker(tmp_path))),
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2, r.stdout + r.stderr
    assert r.stdout == ""
    assert NO_SYMPY in _one_line_error(r.stderr, prefix)


def test_import_proofs_does_not_import_sympy() -> None:
    code = "import sys, proofs, proofs.cli; sys.exit(1 if 'sympy' in sys.modules else 0)"
    assert subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=_env(), timeout=60).returncode == 0


# -- an installed wheel: proofs/ ships as exactdp.proofs (pyproject package-dir) ----------------

def _wheel_like_site(tmp_path: Path, with_proofs: bool) -> Path:
    """exactdp copied into a site directory as the wheel installs it: proofs/ as exactdp/proofs."""
    site = tmp_path / "site"
    shutil.copytree(ROOT / "exactdp", site / "exactdp", ignore=shutil.ignore_patterns("_tables", "__pycache__"))
    if with_proofs:
        shutil.copytree(ROOT / "proofs", site / "exactdp" / "proofs", ignore=shutil.ignore_patterns("__pycache__"))
    return site


def _run_from_site(tmp_path: Path, site: Path, args: list[str], *path: Path) -> subprocess.CompletedProcess[str]:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    # as a wheel installs it: without the import hook of this checkout's editable install, which maps
    # exactdp.proofs to proofs/ wherever exactdp itself comes from
    code = ("import sys; "
            "sys.meta_path[:] = [f for f in sys.meta_path if not str(getattr(f, '__module__', '')).startswith('__editable__')]; "
            "import exactdp, exactdp.cli; "
            f"assert exactdp.__file__.startswith({str(site)!r}), exactdp.__file__; "
            f"sys.exit(exactdp.cli.main({['proofs', *args]!r}))")
    pythonpath = os.pathsep.join(str(p) for p in (*path, site))
    return subprocess.run([sys.executable, "-c", code], cwd=work, env=_env(PYTHONPATH=pythonpath),
                          capture_output=True, text=True, timeout=120)


def test_exactdp_proofs_from_a_wheel_like_install(tmp_path: Path) -> None:
    """The installed command finds the derivations the wheel ships (exactdp.proofs), away from any checkout."""
    site = _wheel_like_site(tmp_path, with_proofs=True)
    r = _run_from_site(tmp_path, site, ["--list"])
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == proofs.derivation_names()
    r = _run_from_site(tmp_path, site, ["steinke_rho_footnote"])
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("PASS steinke_rho_footnote: ")


def test_exactdp_proofs_from_a_wheel_like_install_without_sympy(tmp_path: Path) -> None:
    site = _wheel_like_site(tmp_path, with_proofs=True)
    r = _run_from_site(tmp_path, site, [], _blocker(tmp_path))
    assert r.returncode == 2, r.stdout + r.stderr
    assert r.stdout == ""
    assert NO_SYMPY in _one_line_error(r.stderr, "exactdp proofs: error: ")


def test_exactdp_proofs_without_the_derivations(tmp_path: Path) -> None:
    """An installation that lost exactdp.proofs: one line naming the extra, no placeholder address."""
    site = _wheel_like_site(tmp_path, with_proofs=False)
    r = _run_from_site(tmp_path, site, ["--list"])
    assert r.returncode == 2, r.stdout + r.stderr
    assert r.stdout == ""
    line = _one_line_error(r.stderr, "exactdp proofs: error: ")
    assert line == exactdp.cli.proofs.NOT_INSTALLED
    assert NO_SYMPY in line and "<" not in line and "git clone" not in line


def test_exactdp_proofs_without_the_derivations_in_process(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.setitem(sys.modules, "exactdp.proofs", None)  # import now raises ImportError
    monkeypatch.setitem(sys.modules, "proofs", None)
    assert exactdp.cli.main(["proofs"]) == 2
    line = _one_line_error(capsys.readouterr().err, "exactdp proofs: error: ")
    assert line == exactdp.cli.proofs.NOT_INSTALLED and NO_SYMPY in line


def test_exactdp_proofs_from_the_checkout_outside_it(tmp_path: Path) -> None:
    """From a source checkout (editable install), exactdp proofs finds proofs/ from any directory."""
    code = f"import sys; sys.path.insert(0, {str(ROOT)!r}); import exactdp.cli; sys.exit(exactdp.cli.main(['proofs', 'steinke_rho_footnote']))"
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=_env(), capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("PASS steinke_rho_footnote: ")


def test_exactdp_proofs_failure_exit_status(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    import exactdp.engines.bounds.advanced
    from exactdp.core.enclosure import Enclosure

    right = exactdp.engines.bounds.advanced.drv10_epsilon

    def wrong(*args, **kwargs):  # DRV10 moved up by 10^-25 relative: a nearly right formula
        e = right(*args, **kwargs)
        return Enclosure(e.lower * (1 + Fraction(1, 10**25)), e.upper * (1 + Fraction(1, 10**25)), e.digits)

    monkeypatch.setattr(exactdp.engines.bounds.advanced, "drv10_epsilon", wrong)
    assert exactdp.cli.main(["proofs", "drv10_algebra"]) == 1
    captured = capsys.readouterr()
    assert captured.out.startswith("FAIL drv10_algebra: ")
    assert captured.err.strip() == "1 of 1 derivations FAILED: drv10_algebra"


def test_unknown_name_is_one_line(capsys) -> None:
    assert proofs.cli.main(["no_such_derivation"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    _one_line_error(captured.err, "python -m proofs: error: unknown derivation(s): no_such_derivation")


def test_bad_option_is_one_line(capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        proofs.cli.main(["--no-such-option"])
    assert exc.value.code == 2
    _one_line_error(capsys.readouterr().err, "python -m proofs: error: unrecognized arguments")


def test_unwritable_latex_is_refused_before_running(tmp_path: Path, capsys) -> None:
    assert proofs.cli.main(["--latex", str(tmp_path / "no" / "such" / "dir.tex"), "basic_composition"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    _one_line_error(captured.err, "python -m proofs: error: --latex ")


# -- every example of proofs/README.md runs as shown ----------------------------------------------

def _readme_commands() -> list[str]:
    text = (ROOT / "proofs" / "README.md").read_text()
    blocks = re.findall(r"```bash\n(.*?)```", text, flags=re.S)
    cmds = []
    for block in blocks:
        for line in block.splitlines():
            cmd = line.split("  #")[0].strip()
            if cmd:
                cmds.append(cmd)
    return cmds


def test_readme_lists_the_examples() -> None:
    cmds = _readme_commands()
    assert "python -m proofs" in cmds
    assert any(c.startswith("exactdp proofs") for c in cmds)
    assert len(cmds) >= 6


def test_every_readme_example_runs(tmp_path: Path) -> None:
    exactdp_script = Path(sys.executable).with_name("exactdp")
    procs = []
    for i, cmd in enumerate(_readme_commands()):
        argv = shlex.split(cmd)
        if argv[0] == "python":
            argv[0] = sys.executable
        elif argv[0] == "exactdp":
            argv = [str(exactdp_script)] + argv[1:] if exactdp_script.exists() else [sys.executable, "-m", "exactdp"] + argv[1:]
        cwd = tmp_path / f"cmd{i}"
        cwd.mkdir()
        # as from the root of a checkout: the checkout importable, files written in a scratch directory
        procs.append((cmd, cwd, subprocess.Popen(argv, cwd=cwd, env=_env(PYTHONPATH=str(ROOT)), text=True,
                                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)))
    names = proofs.derivation_names()
    for cmd, cwd, p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, f"{cmd}: {err}"
        assert "Traceback" not in err, cmd
        lines = out.splitlines()
        if "--list" in cmd:
            assert lines == names, cmd
            continue
        results = [line for line in lines if line.startswith(("PASS ", "FAIL "))]
        assert results and all(line.startswith("PASS ") for line in results), cmd
        if cmd == "python -m proofs":
            assert [line.split(":")[0] for line in results] == [f"PASS {n}" for n in names]
        if "--latex out.tex" in cmd:
            assert (cwd / "out.tex").read_text().startswith("\\documentclass"), cmd
        if "--latex -" in cmd:
            assert "\\begin{document}" in out, cmd
        if "--verbose" in cmd:
            assert any(line.startswith("    [ok] ") for line in lines), cmd
