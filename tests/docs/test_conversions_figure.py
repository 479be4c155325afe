"""The conversion-cost figure of docs/rdp.md §3 (issue 28 §2): committed, small, shown, and the command
the page gives draws it."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIGURE = ROOT / "docs" / "figures" / "conversions.png"


def documented_command() -> str:
    text = (ROOT / "docs" / "rdp.md").read_text(encoding="utf-8")
    m = re.search(r"^python benchmarks/bench_conversions\.py --plot (\S+)$", text, flags=re.MULTILINE)
    assert m, "docs/rdp.md shows the command that draws the figure"
    assert m.group(1) == "docs/figures/conversions.png"
    return m.group(0)


def test_the_figure_is_committed_small_and_shown() -> None:
    documented_command()
    assert FIGURE.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert FIGURE.stat().st_size < 150_000
    assert "](figures/conversions.png)" in (ROOT / "docs" / "rdp.md").read_text(encoding="utf-8")


def _draw(tmp_path: Path, extra: list[str]) -> Path:
    pytest.importorskip("matplotlib")
    out = tmp_path / "conversions.png"
    argv = documented_command().split()[1:]
    argv[argv.index("--plot") + 1] = str(out)
    p = subprocess.run([sys.executable, *argv, *extra], check=False, cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stderr[-2000:]
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size < 150_000
    return out


def test_the_command_draws_a_figure_at_two_step_counts(tmp_path: Path) -> None:
    _draw(tmp_path, ["--steps", "1,10"])


@pytest.mark.slow
def test_the_documented_command_runs_as_shown(tmp_path: Path) -> None:
    _draw(tmp_path, [])
