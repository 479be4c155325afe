"""Ordinary faults end in exit 2 with one line naming the problem, never exit 5 "internal error".

A closed standard input, an output file the system refuses, a full disk, an absurd time budget and a
batch line nested 100,000 brackets deep are the user's machine or input, not a bug in exactdp
(docs/contracts.md §3).  Each case runs the installed command in a child process, as a user would.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

EXE = str(Path(sys.executable).parent / "exactdp")
LINUX_PROC = pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux's /proc")
DEV_FULL = pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")


def _sh(cmd: str, tmp_path: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, timeout=120, cwd=tmp_path,
                          input=stdin)


def _one_line_usage_error(r: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert r.stderr.count("\n") == 1 and "internal error" not in r.stderr, r.stderr
    for n in needles:
        assert n in r.stderr, r.stderr


def test_batch_with_standard_input_closed(tmp_path: Path) -> None:
    r = _sh(f"{EXE} batch <&-", tmp_path)
    _one_line_usage_error(r, "standard input", "closed")
    assert r.stdout == ""


def test_mechanisms_from_a_closed_standard_input(tmp_path: Path) -> None:
    r = _sh(f"{EXE} epsilon --mechanisms - --at-delta 1e-5 <&-", tmp_path)
    _one_line_usage_error(r, "mechanisms='-'", "closed")


@LINUX_PROC
@pytest.mark.parametrize("cmd", [
    "curve --mechanism laplace:scale=10,count=100 --eps-from 1 --eps-to 5 --points 3 --digits 3 --csv /proc/x",
    "budget --mechanism 0.1,0,10 --target-eps 2 --target-delta 0 --plot /proc/x.png",
    "crosscheck --quick --json /proc/x",
])
def test_an_output_file_the_system_refuses_is_refused_before_any_work(cmd: str, tmp_path: Path) -> None:
    # /proc lets os.access say "writable" to root but creates no file: the refusal must come first
    t = time.monotonic()
    r = _sh(f"{EXE} {cmd}", tmp_path)
    _one_line_usage_error(r, "/proc/x", "cannot be written")
    assert r.stdout == "" and time.monotonic() - t < 30


def test_an_output_file_that_can_be_written_is_left_as_written(tmp_path: Path) -> None:
    # the probe behind the refusal above must not leave a file of its own, nor remove the real one
    out = tmp_path / "curve.csv"
    r = _sh(f"{EXE} curve --mechanism laplace:scale=10,count=100 --eps-from 1 --eps-to 5 --points 3 "
            f"--digits 3 --csv {out}", tmp_path)
    assert r.returncode == 0, r.stderr
    assert out.read_text().startswith("eps_g,lower,upper")


@DEV_FULL
@pytest.mark.parametrize("cmd", [
    "epsilon --eps 0.1 --k 30 --at-delta 1e-5",
    "region --eps 0.1 --k 3 --json",
    "epsilon --eps 0.1 --k 30 --at-delta 1e-5 --json",
])
def test_a_full_disk_is_one_line_and_exit_2(cmd: str, tmp_path: Path) -> None:
    r = _sh(f"{EXE} {cmd} > /dev/full", tmp_path)
    _one_line_usage_error(r, "No space left on device")
    assert "Traceback" not in r.stderr and "Exception ignored" not in r.stderr


@DEV_FULL
def test_batch_to_a_full_disk(tmp_path: Path) -> None:
    line = '{"query": "epsilon", "eps": "0.1", "k": 3, "at_delta": "0.1"}\n'
    r = _sh(f"{EXE} batch > /dev/full", tmp_path, stdin=line)
    _one_line_usage_error(r, "No space left on device")


@pytest.mark.parametrize("value", ["1e300", "1e400", "1000000001"])
def test_an_absurd_time_budget_is_refused_by_name(value: str, tmp_path: Path) -> None:
    r = _sh(f"{EXE} epsilon --eps 0.1 --k 30 --at-delta 1e-5 --max-seconds {value}", tmp_path)
    _one_line_usage_error(r, "--max-seconds=", "at most 10^9 seconds")
    ok = _sh(f"{EXE} epsilon --eps 0.1 --k 30 --at-delta 1e-5 --max-seconds 1000000000 --digits 5", tmp_path)
    assert ok.returncode == 0, ok.stderr


def test_an_absurd_time_budget_in_batch_is_that_line_s_error(tmp_path: Path) -> None:
    lines = ('{"query": "epsilon", "eps": "0.1", "k": 3, "at_delta": "0.1", "max_seconds": 1e300}\n'
             '{"query": "epsilon", "eps": "0.1", "k": 3, "at_delta": "0.1", "digits": 5}\n')
    r = _sh(f"{EXE} batch", tmp_path, stdin=lines)
    first, second = r.stdout.splitlines()
    assert "at most 10^9 seconds" in first and '"error"' in first
    assert '"lower"' in second and r.returncode == 2


def test_a_batch_line_nested_too_deeply_is_that_line_s_error(tmp_path: Path) -> None:
    deep = "[" * 100_000 + "]" * 100_000
    lines = deep + "\n" + '{"query": "epsilon", "eps": "0.1", "k": 3, "at_delta": "0.1", "digits": 5}\n'
    r = _sh(f"{EXE} batch", tmp_path, stdin=lines)
    first, second = r.stdout.splitlines()
    assert "nested too deeply" in first and "internal error" not in first
    assert '"lower"' in second
    assert r.returncode == 2, r.stderr
