"""``--executor dask://HOST:PORT`` against a Dask scheduler and workers started here on 127.0.0.1
(issue 25 §6): the same lines, in the same order, as ``--jobs 1``.  Marked ``dask``; skipped when
``distributed`` is not installed (pip install 'exactdp[dask]')."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.dask
pytest.importorskip("distributed")

HERE = Path(__file__).parent
ROOT = HERE.parent.parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def scheduler(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    dask = shutil.which("dask", path=str(Path(sys.executable).parent)) or shutil.which("dask")
    if dask is None:
        pytest.skip("the dask command is not installed")
    port = _free_port()
    logs = tmp_path_factory.mktemp("dask")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE.parent / "crosscheck"), str(ROOT)])}
    procs = [subprocess.Popen([dask, "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"],
                              stdout=subprocess.DEVNULL, stderr=open(logs / "scheduler.log", "w"), env=env)]
    try:
        procs.append(subprocess.Popen([dask, "worker", f"tcp://127.0.0.1:{port}", "--nworkers", "2", "--nthreads", "1",
                                       "--no-dashboard", "--host", "127.0.0.1"],
                                      stdout=subprocess.DEVNULL, stderr=open(logs / "worker.log", "w"), env=env))
        from distributed import Client

        with Client(f"tcp://127.0.0.1:{port}", timeout=30) as client:
            client.wait_for_workers(2, timeout=60)
        yield f"dask://127.0.0.1:{port}"
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in reversed(procs):
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()


LINES = [json.dumps({"query": "epsilon", "eps": f"0.{i + 1}", "delta": "1e-4", "k": 5 + i, "at_delta": "1e-3", "id": i})
         for i in range(40)] + ['{"query": "delta", "eps": "x", "k": 3, "at_eps": "1"}', "{nope"]


def _run(*args: str) -> tuple[int, bytes]:
    p = subprocess.run([sys.executable, "-m", "exactdp", *args], input=("\n".join(LINES) + "\n").encode(),
                       capture_output=True, timeout=300, check=False)
    return p.returncode, p.stdout


def test_batch_on_a_dask_cluster_gives_the_bytes_of_one_process(scheduler: str) -> None:
    local = _run("batch", "--jobs", "1")
    assert local[0] == 2 and local[1].count(b"\n") == 42
    assert _run("batch", "--executor", scheduler) == local
    assert _run("batch", "--executor", scheduler, "--shard", "2/3")[1] == _run("batch", "--shard", "2/3")[1]


def test_tables_build_on_a_dask_cluster_gives_the_bytes_of_one_process(scheduler: str, tmp_path: Path) -> None:
    from exactdp.core.executor import parse_executor
    from exactdp.golden.build import build

    names = ["kov15_grid"]
    a = build(tmp_path / "a", tables=names, figures=False, progress=False)
    b = build(tmp_path / "b", tables=names, figures=False, progress=False, executor=parse_executor(scheduler))
    files = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    assert files and files == sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    for f in files:
        if f.name != "MANIFEST.json":  # it records when it was built
            assert (a / f).read_bytes() == (b / f).read_bytes(), f


def test_crosscheck_on_a_dask_cluster_gives_the_findings_of_one_process(scheduler: str,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(HERE.parent / "crosscheck"))  # also on the workers' path (PYTHONPATH above)
    import fake_peers

    from exactdp.core.executor import parse_executor
    from exactdp.crosscheck.isolate import Limits
    from exactdp.crosscheck.report import run_crosscheck

    def key(f) -> str:  # noqa: ANN001
        d = f.to_json()
        d.pop("seconds")
        return json.dumps(d)

    one = run_crosscheck([fake_peers.FAST], fake_peers.CASES, progress=None)
    dask = run_crosscheck([fake_peers.FAST], fake_peers.CASES, progress=None, executor=parse_executor(scheduler),
                          limits=Limits(256 * 2**20, 30))
    assert [key(f) for f in dask.findings] == [key(f) for f in one.findings] and len(one.findings) == 5
    t0 = time.monotonic()
    slow = run_crosscheck([fake_peers.FAKE], fake_peers.CASES[:1], progress=None, executor=parse_executor(scheduler),
                          limits=Limits(256 * 2**20, 8))
    errors = {f.api: f.error for f in slow.findings}
    assert errors["fake.hog"].startswith("out of memory") and errors["fake.sleepy"].startswith("timeout")
    assert time.monotonic() - t0 < 60
