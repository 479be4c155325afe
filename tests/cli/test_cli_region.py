"""``exactdp region``: vertices, JSON, grid, plot, help and bad input (one line, exit 2)."""

from __future__ import annotations

import json
import subprocess
import sys
from fractions import Fraction

import pytest

from exactdp.cli.region import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        rc = main(list(argv))
    except SystemExit as e:  # argparse errors and --help
        rc = int(e.code or 0)
    out, err = capsys.readouterr()
    return rc, out, err


def test_json_exact_vertices_and_grid(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = run(capsys, "--eps", "log(3/2)", "--k", "10", "--json", "--grid")
    assert rc == 0 and err == ""
    obj = json.loads(out)
    assert obj["inputs"] == {"eps": "log(1.5)", "delta": "0", "k": 10}
    assert len(obj["vertices"]) == 10 + 4
    assert obj["vertices"][0] == {"p_fa": {"lower": "0", "upper": "0", "exact": "0", "float_lower": 0.0, "float_upper": 0.0},
                                  "p_md": {"lower": "1", "upper": "1", "exact": "1", "float_lower": 1.0, "float_upper": 1.0}}
    # docs/mathematics.md §3: delta_1 = 6561/1953125
    assert Fraction(obj["grid"][1]["delta"]["exact"]) == Fraction(6561, 1953125)
    # the vertex for m = k: P_FA = (1/(1+x))^10 with x = 3/2, exact
    assert Fraction(obj["vertices"][2]["p_fa"]["exact"]) == Fraction(2, 5) ** 10


def test_human_output_certified(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run(capsys, "--eps", "0.1", "--delta", "0.001", "--k", "3", "--digits", "12")
    assert rc == 0
    lines = out.splitlines()
    assert lines[0].startswith("privacy region of 3 x (0.1, 0.001)-DP: 7 vertices")
    assert "0.997002999" in lines[2]  # (0, (1-delta)^k), exact
    assert "[" in lines[3]  # an enclosure: e^0.1 is transcendental


@pytest.mark.parametrize("argv", [
    ["--eps", "-1", "--k", "3"],
    ["--eps", "0.1", "--k", "0"],
    ["--eps", "0.1", "--delta", "1.5", "--k", "3"],
    ["--eps", "abc", "--k", "3"],
    ["--k", "3"],
    ["--eps", "0.1", "--k", "3", "--digits", "0"],
    ["--eps", "0.1", "--k", "100000000"],
])
def test_bad_input_one_line_exit_2(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    rc, out, err = run(capsys, *argv)
    assert rc == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_help_teaches_with_example(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run(capsys, "--help")
    assert rc == 0
    assert "exactdp region --eps 'log(3/2)' --k 10" in out and "--plot" in out


def test_plot(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("matplotlib")
    f = tmp_path / "region.png"
    rc, out, _ = run(capsys, "--eps", "0.5", "--k", "8", "--plot", str(f))
    assert rc == 0 and f.stat().st_size > 1000
    assert out.rstrip().endswith(f"plot written to {f}")


def test_through_main_cli() -> None:
    """``exactdp region`` is forwarded by the main command line."""
    p = subprocess.run([sys.executable, "-m", "exactdp", "region", "--eps", "log(2)", "--k", "2", "--json"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    v = json.loads(p.stdout)["vertices"]
    assert [(x["p_fa"]["exact"], x["p_md"]["exact"]) for x in v] == [
        ("0", "1"), ("0", "1"), ("1/9", "5/9"), ("5/9", "1/9"), ("1", "0"), ("1", "0")]
