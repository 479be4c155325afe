"""Issue 25 §3: one syntax for every command's ``--mechanism``: ``E[,D[,COUNT]]`` or a SPEC.

``--mechanism 0.1,0,3`` once must mean what ``--mechanism 0.1`` three times means, in every command
that takes a list of mechanisms (``delta``, ``epsilon``, ``check``, ``curve``, ``budget``,
``calibrate eps --after``, ``calibrate scale``), and the same bad value gets the same one-line refusal.
"""

from __future__ import annotations

import json

import pytest

from exactdp.cli import main

TARGET = ["--target-eps", "2", "--target-delta", "1e-5"]

# each command, its arguments around the mechanism options, and how a --mechanism value is given
COMMANDS: dict[str, tuple[list[str], str]] = {
    "delta": (["delta", "--at-eps", "0.5", "--json"], "--mechanism"),
    "epsilon": (["epsilon", "--at-delta", "1e-5", "--json"], "--mechanism"),
    "check": (["check", "--eps-g", "0.5", "--delta-g", "1e-5", "--json"], "--mechanism"),
    "curve": (["curve", "--eps-from", "0.1", "--eps-to", "0.5", "--points", "3", "--json"], "--mechanism"),
    "budget": (["budget", *TARGET, "--json"], "--mechanism"),
    "calibrate eps --after": (["calibrate", "eps", "--k", "2", *TARGET, "--json"], "--after"),
    "calibrate scale": (["calibrate", "scale", *TARGET, "--json"], "--mechanism"),
}


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        code = main(argv)
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 2
    out, err = capsys.readouterr()
    return code, out, err


def without_echo(obj: object) -> object:
    """A JSON value without the echo of the inputs (which shows the options as written) and timings."""
    if isinstance(obj, dict):
        return {k: without_echo(v) for k, v in obj.items() if k not in ("inputs", "seconds")}
    if isinstance(obj, list):
        return [without_echo(v) for v in obj]
    return obj


def answer(out: str) -> object:
    return without_echo(json.loads(out))


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_e_d_count_means_count_copies_in_every_command(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    argv, opt = COMMANDS[command]
    code1, out1, err1 = run([*argv, opt, "0.1,0,3", opt, "0.2,1e-7"], capsys)
    code2, out2, err2 = run([*argv, opt, "0.1", opt, "0.1,0", opt, "0.1,0,1", opt, "0.2,1e-7"], capsys)
    assert code1 == code2 == 0 or (command == "check" and code1 == code2), (err1, err2)
    assert answer(out1) == answer(out2)


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("bad", ["0.1,0,3,4", "0.1,,3", "0.1,0,0", "0.1,0,2.5", ","])
def test_bad_values_get_one_line_exit_2(command: str, bad: str, capsys: pytest.CaptureFixture[str]) -> None:
    argv, opt = COMMANDS[command]
    code, out, err = run([*argv, opt, bad], capsys)
    assert code == 2, (out, err)
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert "mechanism" in err or "after" in err, err


def test_a_spec_where_generic_mechanisms_are_scaled_is_refused_by_name(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run([*COMMANDS["calibrate scale"][0], "--mechanism", "gaussian:sigma=1"], capsys)
    assert code == 2 and "scales generic mechanisms" in err and "E[,D[,COUNT]]" in err, err


def test_calibrate_k_refuses_a_count_it_is_asked_to_find(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["calibrate", "k", "--mechanism", "0.1,0,3", *TARGET], capsys)
    assert code == 2 and "leave out COUNT" in err, err
