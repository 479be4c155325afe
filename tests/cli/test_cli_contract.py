"""The command-line contract (docs/contracts.md §2-§4): exit statuses, one-line errors, JSON keys, batch.

Success cases use closed-form bound methods (basic, drv10, ...), whose values are checked against
exact arithmetic or docs/mathematics.md §6, so these tests do not depend on the optimal solvers.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from decimal import Decimal
from fractions import Fraction

import pytest

from exactdp.cli import main

COMP = ["--eps", "0.1", "--k", "30"]
CONTRACT_KEYS = {"query", "method", "inputs", "lower", "upper", "exact", "private", "digits"}


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        code = main(argv)
    except SystemExit as e:  # argparse's own exits (--help, usage errors)
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
    out, err = capsys.readouterr()
    return code, out, err


BAD = [
    # eps
    ["delta", "--eps", "-1", "--k", "3", "--at-eps", "1", "--method", "basic"],
    ["delta", "--eps", "nan", "--k", "3", "--at-eps", "1", "--method", "basic"],
    ["delta", "--eps", "inf", "--k", "3", "--at-eps", "1", "--method", "basic"],
    ["delta", "--eps", "abc", "--k", "3", "--at-eps", "1", "--method", "basic"],
    ["delta", "--eps", "log(0)", "--k", "3", "--at-eps", "1", "--method", "basic"],
    ["delta", "--eps", "log(1/2)", "--k", "3", "--at-eps", "1", "--method", "basic"],
    # delta
    ["delta", "--eps", "0.1", "--delta", "1", "--k", "3", "--at-eps", "1", "--method", "basic"],
    ["delta", "--eps", "0.1", "--delta", "-0.1", "--k", "3", "--at-eps", "1", "--method", "basic"],
    ["delta", "--eps", "0.1", "--delta", "1.5", "--k", "3", "--at-eps", "1", "--method", "basic"],
    ["delta", "--eps", "0.1", "--delta", "nan", "--k", "3", "--at-eps", "1", "--method", "basic"],
    # k
    ["delta", "--eps", "0.1", "--k", "0", "--at-eps", "1", "--method", "basic"],
    ["delta", "--eps", "0.1", "--k", "-1", "--at-eps", "1", "--method", "basic"],
    ["delta", "--eps", "0.1", "--k", "1.5", "--at-eps", "1", "--method", "basic"],
    ["delta", "--eps", "0.1", "--k", "abc", "--at-eps", "1", "--method", "basic"],
    ["delta", "--eps", "0.1", "--at-eps", "1", "--method", "basic"],
    ["delta", "--k", "3", "--at-eps", "1", "--method", "basic"],
    # digits
    ["delta", *COMP, "--at-eps", "1", "--method", "basic", "--digits", "0"],
    ["delta", *COMP, "--at-eps", "1", "--method", "basic", "--digits", "-3"],
    ["delta", *COMP, "--at-eps", "1", "--method", "basic", "--digits", "x"],
    ["delta", *COMP, "--at-eps", "1", "--method", "basic", "--digits", "99999"],
    # targets
    ["delta", *COMP, "--method", "basic"],
    ["epsilon", *COMP, "--method", "basic"],
    ["check", *COMP, "--eps-g", "1"],
    ["check", *COMP, "--delta-g", "0.1"],
    ["delta", *COMP, "--at-eps", "-1", "--method", "basic"],
    ["delta", *COMP, "--at-eps", "x", "--method", "basic"],
    ["epsilon", *COMP, "--at-delta", "1", "--method", "basic"],
    ["epsilon", *COMP, "--at-delta", "-1e-3", "--method", "basic"],
    # mechanisms
    ["delta", "--mechanism", "0.1,0.2,0.3", "--at-eps", "1", "--method", "basic"],
    ["delta", "--mechanism", ",", "--at-eps", "1", "--method", "basic"],
    ["delta", "--mechanism", "0.1,", "--at-eps", "1", "--method", "basic"],
    ["delta", "--mechanism", "-0.1", "--at-eps", "1", "--method", "basic"],
    ["delta", "--mechanism", "0.1,2", "--at-eps", "1", "--method", "basic"],
    ["delta", *COMP, "--mechanism", "0.1", "--at-eps", "1", "--method", "basic"],
    ["delta", "--mechanisms", "/nonexistent/file.csv", "--at-eps", "1", "--method", "basic"],
    # method
    ["delta", *COMP, "--at-eps", "1", "--method", "nope"],
    ["delta", *COMP, "--at-eps", "1", "--method", "drv10", "--eta", "0.1"],
    ["epsilon", *COMP, "--at-delta", "0.1", "--method", "mv-approx"],
    ["epsilon", *COMP, "--at-delta", "0.1", "--method", "mv-approx", "--eta", "0"],
    ["delta", *COMP, "--at-eps", "1", "--bogus"],
    ["frobnicate"],
]


@pytest.mark.parametrize("argv", BAD, ids=[" ".join(a) for a in BAD])
def test_bad_input_is_one_line_and_status_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(argv, capsys)
    assert code == 2, (code, out, err)
    lines = err.strip("\n").split("\n")
    assert len(lines) == 1 and lines[0].startswith("exactdp"), err
    assert "Traceback" not in err and out == ""


@pytest.mark.parametrize("argv", [BAD[0], BAD[12], BAD[28], ["delta", *COMP, "--at-eps", "1", "--method", "nope"]])
def test_bad_input_subprocess(argv: list[str]) -> None:
    p = subprocess.run([sys.executable, "-m", "exactdp", *argv], capture_output=True, text=True, timeout=60)
    assert p.returncode == 2
    assert len(p.stderr.strip().split("\n")) == 1 and "Traceback" not in p.stderr
    assert p.stdout == ""


def test_no_arguments_prints_help_and_status_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run([], capsys)
    assert code == 2 and "usage" in out


@pytest.mark.parametrize("argv", [["--help"], ["delta", "--help"], ["epsilon", "--help"], ["check", "--help"],
                                  ["batch", "--help"]])
def test_help_exits_0_with_an_example(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(argv, capsys)
    assert code == 0 and "example" in out and "exactdp " in out


def test_help_subprocess() -> None:
    p = subprocess.run([sys.executable, "-m", "exactdp", "--help"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and "examples:" in p.stdout and "drv10" in p.stdout


# -- success -------------------------------------------------------------------------------------

def test_json_contract_keys_exact(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["epsilon", "--eps", "0.1", "--delta", "0.001", "--k", "30", "--at-delta", "0.05",
                          "--method", "basic", "--json"], capsys)
    assert code == 0 and err == ""
    obj = json.loads(out)
    assert CONTRACT_KEYS <= set(obj)
    assert obj["query"] == "epsilon" and obj["method"] == "basic" and obj["private"] is None
    assert obj["inputs"] == {"eps": "0.1", "delta": "0.001", "k": 30, "at_delta": "0.05"}
    assert obj["exact"] == "3" and obj["lower"] == obj["upper"] == "3" and obj["digits"] == 30


def test_json_enclosure_contains_reference_value(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["epsilon", *COMP, "--at-delta", "1e-3", "--method", "drv10", "--json", "--digits", "25"],
                       capsys)
    obj = json.loads(out)
    assert code == 0 and obj["exact"] is None and obj["digits"] == 25
    lo, hi = Fraction(Decimal(obj["lower"])), Fraction(Decimal(obj["upper"]))
    golden = Fraction("2.3513548815514764138")  # docs/mathematics.md §6 (20 digits)
    assert lo <= hi and abs(lo - golden) < Fraction(1, 10**19) and hi - lo <= Fraction(1, 10**23)


def test_heterogeneous_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["delta", "--mechanism", "1,0.1", "--mechanism", "2,0.2", "--at-eps", "3", "--method",
                        "basic", "--json"], capsys)
    obj = json.loads(out)
    assert code == 0
    assert obj["inputs"] == {"mechanisms": [["1", "0.1"], ["2", "0.2"]], "at_eps": "3"}
    assert obj["exact"] == "0.3"  # basic: sum of the deltas, exactly


def test_human_output(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["epsilon", *COMP, "--at-delta", "1e-3", "--method", "steinke"], capsys)
    assert code == 0 and "steinke" in out and "2.18584212732453353936" in out
    code, out, _ = run(["epsilon", "--eps", "5", "--delta", "0.1", "--k", "3", "--at-delta", "0.1",
                        "--method", "drv10"], capsys)
    assert code == 0 and "inf" in out


def test_mechanisms_file(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    f = tmp_path / "m.csv"
    f.write_text("eps,delta,count\n0.1,0,2\n0.2,1e-3\n")
    code, out, _ = run(["delta", "--mechanisms", str(f), "--at-eps", "1", "--method", "basic", "--json"], capsys)
    assert code == 0 and json.loads(out)["exact"] == "0.001"
    g = tmp_path / "m.json"
    g.write_text('[["0.1", "0", 2], ["0.2", "1e-3"]]')
    code, out2, _ = run(["delta", "--mechanisms", str(g), "--at-eps", "1", "--method", "basic", "--json"], capsys)
    assert code == 0 and json.loads(out2)["inputs"] == json.loads(out)["inputs"]


@pytest.mark.parametrize("method", ["basic", "drv10", "kov15-3.4", "kov15-3.4-2013", "kov15-3.5", "steinke",
                                    "zcdp", "zcdp-tight"])
def test_every_bound_method_answers_both_directions(method: str, capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["delta", *COMP, "--at-eps", "1.5"], ["epsilon", *COMP, "--at-delta", "1e-3"]):
        code, out, err = run([*argv, "--method", method, "--json", "--digits", "12"], capsys)
        assert code == 0, err
        obj = json.loads(out)
        assert obj["method"] == method and Fraction(Decimal(obj["lower"])) <= Fraction(Decimal(obj["upper"]))


# -- batch ---------------------------------------------------------------------------------------

def _batch(lines: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
           status: int = 2) -> list[dict]:
    monkeypatch.setattr(sys, "stdin", io.StringIO("\n".join(lines) + "\n"))
    code, out, _ = run(["batch"], capsys)
    assert code == status  # a batch with a bad line exits 2 (docs/contracts.md §3); its good lines are answered
    return [json.loads(line) for line in out.splitlines()]


def test_batch_in_order_and_errors_do_not_stop_it(monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    lines = [
        '{"query": "epsilon", "eps": "0.1", "delta": "0.001", "k": 30, "at_delta": "0.05", "method": "basic"}',
        "not json",
        '{"query": "delta", "eps": -1, "k": 3, "at_eps": "1", "method": "basic"}',
        "",
        '{"query": "delta", "mechanisms": [["0.1", "0"], ["0.2", "1e-6"]], "at_eps": 1, "method": "basic"}',
        '[1, 2]',
        '{"query": "delta", "eps": "0.1", "k": 3, "at_eps": "1", "method": "basic", "extra": 1}',
        '{"query": "epsilon", "eps": 0.1, "k": 30, "at_delta": 0.001, "method": "steinke", "digits": 10}',
        '{"query": "nope"}',
    ]
    res = _batch(lines, monkeypatch, capsys)
    assert len(res) == 8  # the blank line is skipped
    assert res[0]["exact"] == "3" and CONTRACT_KEYS <= set(res[0])
    assert set(res[1]) == {"error"} and set(res[2]) == {"error"} and "eps" in res[2]["error"]
    assert res[3]["exact"] == "0.000001"
    assert set(res[4]) == {"error"} and set(res[5]) == {"error"} and set(res[7]) == {"error"}
    # JSON numbers are read as the decimal text they are written as: 0.1 is exactly 1/10
    assert res[6]["inputs"]["eps"] == "0.1" and res[6]["lower"] == "2.1858421273"


def test_batch_unhashable_method_is_an_error_line(monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    lines = ['{"query": "delta", "eps": "0.1", "k": 3, "at_eps": "1", "method": ["basic"]}',
             '{"query": "delta", "eps": "0.1", "k": 3, "at_eps": "1", "method": "basic"}']
    res = _batch(lines, monkeypatch, capsys)
    assert set(res[0]) == {"error"} and res[1]["exact"] == "0"


def test_batch_subprocess() -> None:
    stdin = ('{"query": "delta", "eps": "0.1", "k": 30, "at_eps": "3", "method": "basic"}\n'
             '{"query": "delta", "eps": "x", "k": 30, "at_eps": "3", "method": "basic"}\n'
             '{"query": "epsilon", "eps": "log(3/2)", "k": 10, "at_delta": "0", "method": "basic"}\n')
    p = subprocess.run([sys.executable, "-m", "exactdp", "batch"], input=stdin, capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 2 and "Traceback" not in p.stderr  # line 2 is bad input
    res = [json.loads(line) for line in p.stdout.splitlines()]
    assert res[0]["exact"] == "0" and set(res[1]) == {"error"} and res[1]["error"].startswith("line 2:") and res[2]["exact_log"] == "log(57.6650390625)"


def test_tiny_result_is_printed(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["delta", "--eps", "1", "--k", "1", "--at-eps", "200", "--method", "drv10", "--json"],
                         capsys)
    lower = json.loads(out)["lower"]  # below 10^-999: written with an exponent (docs/contracts.md §4)
    assert code == 0 and "e-" in lower and 0 < Fraction(lower) < Fraction(1, 10**8000), lower


def test_max_seconds_help_states_the_default_the_engine_really_has() -> None:
    # issue 25 §3: the help said "default: no limit" while the PLD bracket stops by itself after 30 s
    import subprocess
    import sys
    from pathlib import Path

    from exactdp.engines.pld.refine import DEFAULT_SECONDS

    exe = str(Path(sys.executable).parent / "exactdp")
    text = " ".join(subprocess.run([exe, "epsilon", "--help"], capture_output=True, text=True, timeout=60).stdout.split())
    assert f"prints the digits it reached (default {DEFAULT_SECONDS:g} s)" in text


def test_a_mistyped_option_is_named_before_the_options_it_left_missing() -> None:
    # issue 25 §3: `epsilon --epss 0.1` said "--at-delta is required"
    import subprocess
    import sys
    from pathlib import Path

    exe = str(Path(sys.executable).parent / "exactdp")

    def run(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([exe, *argv], capture_output=True, text=True, timeout=60)

    r = run("epsilon", "--epss", "0.1")
    assert r.returncode == 2 and "unrecognized arguments: --epss" in r.stderr and "required" not in r.stderr
    r = run("check", "--eps", "0.1", "--k", "3", "--eps-g", "1", "--delta-gg", "0.1")
    assert r.returncode == 2 and "unrecognized arguments: --delta-gg" in r.stderr
    r = run("epsilon", "--eps", "0.1", "--k", "3")  # nothing mistyped: the missing option is named
    assert r.returncode == 2 and "required: --at-delta" in r.stderr
    assert run("epsilon", "--eps", "0.1", "--k", "3", "--at-del", "0.1").returncode == 0  # a unique prefix still works
