"""Every derivation in proofs/ passes: each step settled by sympy, each tie-in agreeing with exactdp."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

import proofs  # noqa: E402
from proofs.cli import main  # noqa: E402

NAMES = proofs.derivation_names()


def test_at_least_fourteen_derivations() -> None:
    assert len(NAMES) >= 14
    assert len(set(NAMES)) == len(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_derivation_passes(name: str) -> None:
    out = proofs.run(name)
    assert out.ok, out.line()
    assert out.line() == f"PASS {name}: {out.statement}"
    # every derivation is tied to the implementation
    kinds = {type(step).__name__ for step, _ in out.results}
    assert "Implementation" in kinds, f"{name} never checks exactdp"
    assert all(why is None for _, why in out.results)


def test_main_prints_one_line_each_and_exits_zero(capsys: pytest.CaptureFixture[str], tmp_path) -> None:
    tex = tmp_path / "proofs.tex"
    rc = main(["--latex", str(tex), "basic_composition", "group_privacy"])
    out = capsys.readouterr().out.splitlines()
    assert rc == 0
    assert [line.split(":")[0] for line in out] == ["PASS basic_composition", "PASS group_privacy"]
    text = tex.read_text()
    assert text.startswith("\\documentclass") and text.rstrip().endswith("\\end{document}")
    assert "\\section*{basic\\_composition [PASS]}" in text


def test_verbose_prints_steps(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--verbose", "steinke_rho_footnote"]) == 0
    out = capsys.readouterr().out
    assert "[ok] (eps - rho)^2 - 4 rho L" in out


def test_unknown_name_is_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["no_such_derivation"]) == 2


def test_python_m_proofs_subprocess_latex_to_stdout() -> None:
    r = subprocess.run([sys.executable, "-m", "proofs", "--latex", "-", "randomized_response"],
                       cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("PASS randomized_response: ")
    assert "\\begin{document}" in r.stdout


def test_import_exactdp_does_not_import_sympy() -> None:
    code = "import sys, exactdp; sys.exit(1 if 'sympy' in sys.modules else 0)"
    assert subprocess.run([sys.executable, "-c", code], cwd=ROOT, timeout=60).returncode == 0
