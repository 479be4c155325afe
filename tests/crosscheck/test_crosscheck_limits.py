"""The cross-check's peer calls in child processes under a memory and a time limit, its incremental
report, ``--jobs``/``--executor`` and ``--shard`` (issue 25 §2 and §6), with the fake peers of
fake_peers.py (no real peer library needed)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path

import pytest

import fake_peers
from exactdp.cli.crosscheck import main
from exactdp.core.executor import ExecutorSpec
from exactdp.crosscheck import cases as cases_module
from exactdp.crosscheck.adapters import ADAPTERS
from exactdp.crosscheck.isolate import Limits, PeerOutOfMemory, PeerTimeout, call_isolated, parse_memory
from exactdp.crosscheck.report import run_crosscheck
from exactdp.testing.oracle import Oracle

HERE = Path(__file__).parent
MiB = 2**20


def _key(f) -> tuple:  # noqa: ANN001 - a finding without its timing
    d = f.to_json() if hasattr(f, "to_json") else dict(f)
    d.pop("seconds")
    return tuple(sorted((k, json.dumps(v)) for k, v in d.items()))


def test_limits_turn_memory_hogs_hangs_and_crashes_into_error_findings() -> None:
    t0 = time.monotonic()
    rep = run_crosscheck([fake_peers.FAKE], fake_peers.CASES, progress=None, limits=Limits(256 * MiB, 2))
    by = {(f.api, f.case): f for f in rep.findings}
    assert time.monotonic() - t0 < 40  # the sleeper was stopped at 2 s a case, not waited for (60 s)
    for case in ("ref-eps", "ref-delta"):
        assert by["fake.ok", case].verdict == "sound"
        assert by["fake.hog", case].verdict == "error" and by["fake.hog", case].error.startswith("out of memory")
        assert by["fake.sleepy", case].verdict == "error" and by["fake.sleepy", case].error.startswith("timeout")
        assert by["fake.crash", case].verdict == "error" and "died" in by["fake.crash", case].error
        assert by["fake.boom", case].error == "OverflowError: math range error"
    assert ("fake.ok", "ref-pure") not in by and rep.not_applicable == 1  # NotApplicable crosses the process
    assert by["fake.sleepy", "ref-pure"].error.startswith("timeout")
    # the run itself is unharmed: the exact optimum of ref-eps still brackets the reference value
    f = by["fake.ok", "ref-eps"]
    ref = Fraction("1.4811439805399072046")  # docs/mathematics.md §6, 20 digits
    assert abs(Fraction(f.exact_lower) - ref) < Fraction(1, 10**18) and abs(Fraction(f.exact_upper) - ref) < Fraction(1, 10**18)


def test_call_isolated_returns_values_and_reraises_the_peers_exceptions() -> None:
    lim = Limits(256 * MiB, 5)
    assert call_isolated(sorted, [3, 1, 2], lim) == [1, 2, 3]
    with pytest.raises(ZeroDivisionError):
        call_isolated(lambda x: 1 // x, 0, lim)
    with pytest.raises(PeerOutOfMemory):
        call_isolated(lambda n: bytearray(n), 2**33, lim)
    with pytest.raises(PeerTimeout):
        call_isolated(time.sleep, 30, Limits(None, 0.5))
    assert parse_memory("1G") == 2**30 and parse_memory("64MiB") == 64 * MiB and parse_memory("none") is None


def _cli(monkeypatch: pytest.MonkeyPatch, *args: str) -> int:
    monkeypatch.setitem(ADAPTERS, "fakepeer", fake_peers.FAKE)
    monkeypatch.setitem(ADAPTERS, "fastpeer", fake_peers.FAST)
    monkeypatch.setattr(cases_module, "sweep", lambda quick=False: fake_peers.CASES)
    return main(list(args))


def test_cli_records_the_verdicts_and_writes_a_complete_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    js = tmp_path / "r.json"
    code = _cli(monkeypatch, "fakepeer", "--json", str(js), "--memory-limit", "256M", "--call-timeout", "1")
    obj = json.loads(js.read_text())
    assert code == 0 and obj["complete"] is True
    errors = {(f["api"], f["case"]): f["error"] for f in obj["findings"] if f["verdict"] == "error"}
    assert errors["fake.hog", "ref-eps"].startswith("out of memory")
    assert errors["fake.sleepy", "ref-delta"].startswith("timeout")


@pytest.mark.parametrize("args,msg", [
    (["--memory-limit", "0"], "memory-limit='0' must be a size"), (["--memory-limit", "lots"], "must be a size"),
    (["--call-timeout", "0"], "call-timeout=0.0 must be"), (["--shard", "4/3"], "shard='4/3' must be I/N"),
    (["--jobs", "0"], "jobs='0' must be a positive integer"), (["--executor", "dask:x"], "must be 'local' or dask")])
def test_cli_bad_limits_executor_or_shard_is_one_line_and_status_2(
        args: list[str], msg: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    assert _cli(monkeypatch, "fastpeer", *args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and msg in err


def test_jobs_and_shards_give_the_findings_of_one_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def findings(*args: str) -> list[tuple]:
        out = tmp_path / "r.json"
        assert _cli(monkeypatch, "fastpeer", "--json", str(out), *args) == 0
        return [_key(f) for f in json.loads(out.read_text())["findings"]]

    one = findings()
    assert len(one) == 5  # 2 APIs x 3 cases, less (ok, ref-pure): not applicable
    assert findings("--jobs", "2") == one
    assert findings("--jobs", "2", "--memory-limit", "none") == one
    shards = [findings("--shard", f"{i}/3") for i in (1, 2, 3)]
    assert sorted(sum(shards, [])) == sorted(one) and all(shards)


def test_run_crosscheck_in_worker_processes_keeps_the_sweep_order() -> None:
    oracle = Oracle(digits=20)
    one = run_crosscheck([fake_peers.FAST], fake_peers.CASES, progress=None, oracle=oracle)
    two = run_crosscheck([fake_peers.FAST], fake_peers.CASES, progress=None, oracle=oracle,
                         executor=ExecutorSpec("local", 2), limits=Limits())
    assert [_key(f) for f in two.findings] == [_key(f) for f in one.findings]


def test_a_killed_run_leaves_a_valid_partial_report(tmp_path: Path) -> None:
    js = tmp_path / "r.json"
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import fake_peers\n"
            "from exactdp.crosscheck import cases\nfrom exactdp.crosscheck.adapters import ADAPTERS\n"
            "from exactdp.cli.crosscheck import main\n"
            "ADAPTERS['fakepeer'] = fake_peers.FAKE; cases.sweep = lambda quick=False: fake_peers.CASES\n"
            "main(['fakepeer', '--json', sys.argv[2], '--call-timeout', '30'])\n")
    p = subprocess.Popen([sys.executable, "-c", code, str(HERE), str(js)], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while not js.exists() and time.monotonic() < deadline:  # ok, ok, then the hog; the sleeper hangs
            time.sleep(0.2)
        time.sleep(1)
    finally:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
    obj = json.loads(js.read_text())
    assert obj["complete"] is False and len(obj["findings"]) >= 1
    assert obj["findings"][0]["api"] == "fake.ok" and obj["findings"][0]["verdict"] == "sound"
    assert not [x for x in os.listdir(tmp_path) if x.endswith(".tmp")]
