"""Issue 25 §2: every input reader is bounded, and the time budget covers reading the input.

`/dev/zero`, an endless pipe and an endless batch line are refused by name (exit 2) with memory
bounded (each case runs under a 2 GB address-space limit that the unbounded readers blew through);
a batch line over the line limit is that line's error and the next line is answered; a list too long
to read within `--max-seconds` stops at the budget (exit 3) and the message's seconds are the wall
clock's, not the time since the engine started.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import exactdp.model.inputs as inputs
from exactdp.cli import main
from exactdp.core.files import MAX_INPUT_BYTES, MAX_LINE_BYTES

EXE = str(Path(sys.executable).parent / "exactdp")
DEV_ZERO = pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
LIMIT = "ulimit -v 2000000; "  # 2 GB of address space: far above what a bounded reader needs


def _sh(cmd: str, tmp_path: Path, timeout: float = 120) -> tuple[subprocess.CompletedProcess[str], float]:
    start = time.monotonic()
    r = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, timeout=timeout, cwd=tmp_path)
    return r, time.monotonic() - start


def _one_line(r: subprocess.CompletedProcess[str], status: int, *needles: str) -> None:
    assert r.returncode == status, (r.returncode, r.stderr[-500:])
    assert r.stderr.count("\n") == 1 and "internal error" not in r.stderr and "Traceback" not in r.stderr, r.stderr
    for n in needles:
        assert n in r.stderr, r.stderr


@DEV_ZERO
@pytest.mark.parametrize("source", ["--mechanisms /dev/zero", "--mechanisms - < /dev/zero",
                                    "--mechanisms - < <(yes 0.1,0)"])
def test_endless_inputs_are_refused_by_name_in_bounded_memory(source: str, tmp_path: Path) -> None:
    r, _ = _sh(f"{LIMIT}{EXE} epsilon {source} --at-delta 1e-5", tmp_path)
    _one_line(r, 2, f"more than {MAX_INPUT_BYTES >> 20} MiB", "count")


@DEV_ZERO
def test_batch_from_dev_zero_ends_with_one_line_in_bounded_memory(tmp_path: Path) -> None:
    r, _ = _sh(f"{LIMIT}{EXE} batch < /dev/zero", tmp_path)
    _one_line(r, 2, "no end")


def test_a_batch_line_over_the_limit_is_that_line_s_error(tmp_path: Path) -> None:
    long = tmp_path / "long.jsonl"
    good = '{"query": "epsilon", "eps": "0.1", "k": 3, "at_delta": "0.1", "digits": 5, "id": "next"}\n'
    with long.open("w") as f:
        f.write('{"query": "epsilon", "mechanisms": [' + '["0.1", "0"], ' * (MAX_LINE_BYTES // 14) + '["0.1", "0"]]}\n')
        f.write(good)
    r, _ = _sh(f"{LIMIT}{EXE} batch < {long}", tmp_path)
    first, second = (json.loads(x) for x in r.stdout.splitlines())
    assert "line 1 is longer than" in first["error"] and "MiB" in first["error"], first
    assert second.get("id") == "next" and "lower" in second, second
    assert r.returncode == 2


@pytest.fixture(scope="module")
def many(tmp_path_factory: pytest.TempPathFactory) -> Path:
    f = tmp_path_factory.mktemp("many") / "many.csv"
    f.write_text("".join(f"0.{i + 1:06d},0\n" for i in range(200_000)))
    return f


@pytest.mark.parametrize("command", ["epsilon --at-delta 1e-5", "check --eps-g 1 --delta-g 1e-5",
                                     "curve --eps-from 1 --eps-to 2 --points 2",
                                     "calibrate scale --target-eps 1 --target-delta 1e-5",
                                     "budget --target-eps 1 --target-delta 1e-5"])
def test_the_budget_covers_reading_a_long_list(command: str, many: Path, tmp_path: Path) -> None:
    """2x10^5 distinct mechanisms take several seconds to read alone: a 2 s budget stops the reading
    (curve, calibrate and budget ran 11 s, 27 s and 218 s with --max-seconds 2)."""
    what, rest = command.split(" ", 1) if not command.startswith("calibrate") else ("calibrate scale",
                                                                                    command[16:])
    r, wall = _sh(f"{EXE} {what} --mechanisms {many} {rest} --max-seconds 2", tmp_path)
    _one_line(r, 4 if what == "check" else 3, "time budget ran out after")  # check: 4, undecided
    said = float(r.stderr.split("ran out after ")[1].split(" s")[0])
    assert 2 <= said <= wall, (said, wall, r.stderr)
    assert wall < 8, (wall, r.stderr)  # reading alone took over 10 s before the budget covered it


def test_too_many_distinct_mechanisms_are_refused_by_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(inputs, "MAX_DISTINCT_MECHANISMS", 100)
    f = tmp_path / "m.csv"
    f.write_text("0.5,0,7\n" * 1000 + "".join(f"0.{i + 1:04d},0\n" for i in range(99)))
    assert main(["epsilon", "--mechanisms", str(f), "--at-delta", "1e-5", "--digits", "3", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["inputs"]["mechanisms"][0] == ["0.5", "0", "7000"]  # equal lines are one mechanism
    f.write_text("".join(f"0.{i + 1:04d},0\n" for i in range(101)))
    assert main(["epsilon", "--mechanisms", str(f), "--at-delta", "1e-5"]) == 2
    err = capsys.readouterr().err
    assert "more than 100 distinct mechanisms" in err and err.count("\n") == 1, err
    with pytest.raises(Exception, match="more than 100 distinct"):
        inputs.mechanisms_from_json([[f"0.{i + 1:04d}", "0"] for i in range(101)], "mechanisms")


def test_a_budget_running_out_while_a_line_is_parsed_is_the_budget_not_that_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The budget may run out inside a line's parse (a progress tick there): exit 3, "time budget ran
    out", not exit 2 naming the line as a bad input (seen under load: "line 7379")."""
    from exactdp.core.errors import TimeBudgetError
    from exactdp.model.composition import Composition

    real = Composition.heterogeneous
    calls = {"n": 0}

    def slow(entries: object) -> Composition:
        calls["n"] += 1
        if calls["n"] == 3:
            raise TimeBudgetError("the time budget ran out after 2.0 s (reading)")
        return real(entries)  # type: ignore[arg-type]

    monkeypatch.setattr(inputs.Composition, "heterogeneous", staticmethod(slow))
    f = tmp_path / "m.csv"
    f.write_text("".join(f"0.{i + 1:04d},0\n" for i in range(5)))
    assert main(["epsilon", "--mechanisms", str(f), "--at-delta", "1e-5"]) == 3
    err = capsys.readouterr().err
    assert "time budget ran out" in err and "line 3" not in err and err.count("\n") == 1, err
