"""``exactdp calibrate`` on the command line: every --help example runs as shown, the JSON contract,
bad input, batch lines, and the answers checked again with ``exactdp check``-style decisions."""

from __future__ import annotations

import io
import json
import shlex
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from fractions import Fraction

import pytest

from exactdp import Composition, is_private
from exactdp.cli.calibrate import EXAMPLES
from exactdp.cli import main as cli_main
from exactdp.cli import run_query


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = cli_main(argv)
    return code, out.getvalue(), err.getvalue()


ALL_EXAMPLES = [e for ex in EXAMPLES.values() for e in ex]


@pytest.mark.parametrize("example", ALL_EXAMPLES)
def test_every_help_example_runs_as_shown(example: str) -> None:
    argv = shlex.split(example)
    assert argv[0] == "exactdp"
    code, out, err = run(argv[1:])
    assert code == 0, err
    assert out.strip() and not err
    if "--json" in argv:
        j = json.loads(out)
        assert j["query"] == "calibrate" and j["value"] is not None


def test_help_texts_show_the_examples() -> None:
    for what, examples in EXAMPLES.items():
        code, out, _ = _help(["calibrate", what, "--help"])
        assert code == 0
        for e in examples:
            assert e in out, f"{e!r} missing from 'exactdp calibrate {what} --help'"
    code, out, _ = _help(["calibrate", "--help"])
    assert code == 0 and "certified safe" in out


def _help(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = cli_main(argv)
        except SystemExit as e:
            code = int(e.code or 0)
    return code, out.getvalue(), err.getvalue()


def test_the_issue_command_lines_and_their_certificates() -> None:
    code, out, _ = run(["calibrate", "eps", "--k", "30", "--delta", "1e-7", "--target-eps", "1", "--target-delta",
                        "1e-5", "--json"])
    j = json.loads(out)
    assert code == 0 and j["inputs"] == {"k": 30, "delta": "0.0000001", "method": "optimal", "target_eps": "1",
                                         "target_delta": "0.00001"}
    assert is_private((j["value"], "1e-7", 30), "1", "1e-5")
    assert not is_private((j["fails_at"], "1e-7", 30), "1", "1e-5")

    code, out, _ = run(["calibrate", "k", "--mechanism", "0.2", "--target-eps", "2", "--target-delta", "1e-6",
                        "--json"])
    j = json.loads(out)
    assert code == 0 and isinstance(j["value"], int) and j["fails_at"] == j["value"] + 1
    assert is_private(("0.2", 0, j["value"]), "2", "1e-6") and not is_private(("0.2", 0, j["fails_at"]), "2", "1e-6")

    code, out, _ = run(["calibrate", "sigma", "--k", "50", "--sensitivity", "3", "--target-eps", "0.5",
                        "--target-delta", "1e-6", "--json"])
    j = json.loads(out)
    from exactdp.model.mechanisms import Gaussian

    assert is_private([(Gaussian(j["value"], "3"), 50)], "0.5", "1e-6")
    assert not is_private([(Gaussian(j["fails_at"], "3"), 50)], "0.5", "1e-6")

    code, out, _ = run(["calibrate", "laplace-scale", "--k", "5", "--target-eps", "1", "--target-delta", "1e-6",
                        "--json"])
    j = json.loads(out)
    assert code == 0 and j["certificate"]["value"]["verdict"] == "meets"
    assert j["certificate"]["fails_at"]["verdict"] == "fails"
    assert Fraction(j["value"]) > Fraction(j["fails_at"])


@pytest.mark.parametrize("argv", [
    ["calibrate", "eps", "--k", "0", "--target-eps", "1", "--target-delta", "1e-5"],
    ["calibrate", "eps", "--k", "3", "--target-eps", "1"],
    ["calibrate", "eps", "--k", "3", "--target-eps", "x", "--target-delta", "1e-5"],
    ["calibrate", "eps", "--k", "3", "--target-eps", "1", "--target-delta", "1e-5", "--method", "nope"],
    ["calibrate", "eps", "--k", "10", "--delta", "1e-5", "--target-eps", "1", "--target-delta", "1e-5"],
    ["calibrate", "k", "--mechanism", "gaussian:sigma=1,count=3", "--target-eps", "1", "--target-delta", "1e-5"],
    ["calibrate", "k", "--mechanism", "bogus:x=1", "--target-eps", "1", "--target-delta", "1e-5"],
    ["calibrate", "sigma", "--k", "3", "--q", "2", "--target-eps", "1", "--target-delta", "1e-5"],
    ["calibrate", "sigma", "--k", "3", "--target-eps", "1", "--target-delta", "1e-5", "--gap", "2"],
    ["calibrate", "sigma", "--k", "3", "--target-eps", "1", "--target-delta", "0"],
    ["calibrate", "nope"],
    ["calibrate", "scale", "--target-eps", "1", "--target-delta", "1e-5"],
])
def test_bad_input_is_one_line_and_status_2(argv: list[str]) -> None:
    code, out, err = run(argv)
    assert code == 2
    assert out == "" and err.count("\n") == 1 and err.startswith("exactdp"), err
    assert "Traceback" not in err


def test_undecided_k_exits_4() -> None:
    code, out, err = run(["calibrate", "k", "--mechanism", "gaussian:sigma=1,q=0.01", "--target-eps", "2",
                          "--target-delta", "1e-5", "--max-seconds", "0.01"])
    assert code == 4 and err.startswith("exactdp: undecided") and err.count("\n") == 1


def test_batch_calibrate_lines() -> None:
    r = run_query({"query": "calibrate", "calibrate": "eps", "k": 30, "target_eps": "1", "target_delta": "1e-5",
                   "id": 7})
    assert r["id"] == 7 and r["calibrate"] == "eps"
    assert is_private((r["value"], 0, 30), "1", "1e-5")
    r = run_query({"query": "calibrate", "calibrate": "k", "mechanism": "gaussian:sigma=10", "after": [
        "gaussian:sigma=20,count=4"], "target_eps": "1", "target_delta": "1e-5"})
    from exactdp.model.mechanisms import Gaussian

    comp = lambda k: Composition.of([(Gaussian("20"), 4), (Gaussian("10"), k)])  # noqa: E731
    assert is_private(comp(r["value"]), "1", "1e-5") and not is_private(comp(r["fails_at"]), "1", "1e-5")
    lines = "\n".join(json.dumps(o) for o in [
        {"query": "calibrate", "calibrate": "sigma", "k": 10, "target_eps": "1", "target_delta": "1e-5"},
        {"query": "calibrate", "calibrate": "sigma", "k": 10, "target_eps": "1"},
        {"query": "calibrate", "calibrate": "sigma", "k": 10, "target_eps": "1", "target_delta": "1e-5", "x": 1},
        {"query": "epsilon", "eps": "0.1", "k": 3, "at_delta": "0.01"},
    ]) + "\n"
    p = subprocess.run([sys.executable, "-m", "exactdp", "batch"], input=lines, capture_output=True, text=True,
                       timeout=120)
    outs = [json.loads(x) for x in p.stdout.splitlines()]
    assert len(outs) == 4 and p.returncode == 2
    assert "value" in outs[0] and "error" in outs[1] and "error" in outs[2] and outs[3]["query"] == "epsilon"


def test_subprocess_entry_point() -> None:
    p = subprocess.run([sys.executable, "-m", "exactdp", "calibrate", "sigma", "--k", "10", "--target-eps", "1",
                        "--target-delta", "1e-5"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and "certified safe" in p.stdout and p.stderr == ""
