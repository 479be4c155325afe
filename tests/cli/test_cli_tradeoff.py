"""``exactdp tradeoff``: JSON, CSV, text, plot, the batch line, and bad input (one line, exit 2)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path

import mpmath
import pytest

from exactdp.cli import main as exactdp_main
from exactdp.cli.tradeoff import main


@pytest.fixture(autouse=True)
def _keep_mpmath_precision() -> Iterator[None]:
    """The references set mpmath's precision; other tests' references need theirs back."""
    dps = mpmath.mp.dps
    yield
    mpmath.mp.dps = dps

def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        rc = main(list(argv))
    except SystemExit as e:  # argparse errors and --help
        rc = int(e.code or 0)
    out, err = capsys.readouterr()
    return rc, out, err


def _gauss(mu: float, a: str) -> Fraction:
    mpmath.mp.dps = 40
    al = mpmath.mpf(Fraction(a).numerator) / Fraction(a).denominator
    return Fraction(mpmath.nstr(mpmath.ncdf(mpmath.sqrt(2) * mpmath.erfinv(1 - 2 * al) - mu), 35))


def test_json_matches_the_issue_shape(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = run(capsys, "--mechanism", "gaussian:sigma=1,count=4", "--alpha", "0.001,0.01,0.1", "--json")
    assert rc == 0 and err == ""
    obj = json.loads(out)
    assert obj["query"] == "tradeoff" and [p["alpha"] for p in obj["points"]] == ["0.001", "0.01", "0.1"]
    for p in obj["points"]:
        ref = _gauss(2, p["alpha"])
        assert Fraction(p["lower"]) - Fraction(1, 10**30) <= ref <= Fraction(p["upper"]) + Fraction(1, 10**30)
    assert obj["gdp_mu"]["lower"] == obj["gdp_mu"]["upper"] == "2"


def test_pld_composition_text_csv_and_infinite_mu(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run(capsys, "--eps", "1", "--delta", "0.01", "--k", "3", "--alpha", "0.1", "--csv", "-",
                     "--digits", "6")
    assert rc == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    assert rows[0]["alpha"] == "0.1" and Fraction(rows[0]["lower"]) <= Fraction(rows[0]["upper"])
    rc, out, _ = run(capsys, "--eps", "1", "--delta", "0.01", "--k", "3", "--alpha", "0.1", "--digits", "6")
    assert rc == 0 and "GDP mu" in out and "inf" in out


def test_plot_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    f = tmp_path / "t.png"
    rc, _, err = run(capsys, "--mechanism", "laplace:scale=2,count=3", "--alpha", "0.01,0.1,0.5", "--digits", "4",
                     "--plot", str(f))
    assert rc == 0 and f.stat().st_size > 1000 and "plot written" in err


@pytest.mark.parametrize("alpha", ["0", "1", "-0.5", "2", ",", "0.1,", "abc", "0.1;0.2"])
def test_bad_alpha_one_line_exit_2(capsys: pytest.CaptureFixture[str], alpha: str) -> None:
    rc, out, err = run(capsys, "--mechanism", "gaussian:sigma=1", "--alpha", alpha)
    assert rc == 2 and out == "" and len(err.strip().splitlines()) == 1 and "alpha" in err


def test_missing_composition_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = run(capsys, "--alpha", "0.1")
    assert rc == 2 and out == "" and len(err.strip().splitlines()) == 1


def test_through_the_main_command_and_batch(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    assert exactdp_main(["tradeoff", "--mechanism", "gaussian:sigma=2", "--alpha", "0.5", "--json"]) == 0
    first = json.loads(capsys.readouterr().out)
    line = json.dumps({"query": "tradeoff", "mechanisms": ["gaussian:sigma=2"], "alphas": [0.5], "id": 3})
    monkeypatch.setattr("sys.stdin", io.StringIO(line + "\n"))
    assert exactdp_main(["batch"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["id"] == 3 and res["gdp_mu"]["exact"] == "0.5"
    assert res["points"][0]["alpha"] == "0.5" and res["points"][0]["lower"].startswith(first["points"][0]["lower"][:12])
    bad = json.dumps({"query": "tradeoff", "mechanisms": ["gaussian:sigma=2"], "alphas": []})
    monkeypatch.setattr("sys.stdin", io.StringIO(bad + "\n"))
    assert exactdp_main(["batch"]) == 2
