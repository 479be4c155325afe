"""The executor seam (exactdp.core.executor) and its use by ``batch``: order, streaming, shards, errors."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import time

import pytest

from exactdp.cli import main as cli_main
from exactdp.core.errors import InvalidParameterError
from exactdp.core.executor import ExecutorSpec, map_ordered, open_executor, parse_executor, parse_shard, shard


def slow_square(x: int) -> int:
    time.sleep(0.02 * (x % 3 == 0))  # items finish out of order in the workers
    return x * x


def test_map_ordered_keeps_the_input_order_across_processes_and_chunks() -> None:
    items = list(range(37))
    with open_executor(ExecutorSpec("local", 3)) as ex:
        assert ex is not None
        for chunk in (1, 4, 50):
            assert list(map_ordered(slow_square, items, ex, chunk_size=chunk)) == [x * x for x in items]


def test_map_ordered_reads_only_a_bounded_window_of_the_input() -> None:
    """An endless input: the first results come back, and only a few chunks were read ahead."""
    taken: list[int] = []

    def endless() -> itertools.count:
        for i in itertools.count():
            taken.append(i)
            yield i

    with open_executor(ExecutorSpec("local", 2)) as ex:
        first = list(itertools.islice(map_ordered(abs, endless(), ex, chunk_size=3, max_in_flight=4), 5))
    assert first == [0, 1, 2, 3, 4]
    assert len(taken) <= 3 * (4 + 2) + 1


@pytest.mark.parametrize("url,jobs,msg", [
    ("dask://", 1, "must be 'local' or dask://HOST:PORT"), ("http://h:1", 1, "must be 'local' or dask://HOST:PORT"),
    ("dask://h:0", 1, "must be 'local'"), ("dask://h:99999", 1, "must be 'local'"), (None, "0", "jobs='0'"),
    (None, "x", "jobs='x'"), (None, True, "jobs=True")])
def test_bad_executor_or_jobs_is_a_typed_error(url: str | None, jobs: object, msg: str) -> None:
    with pytest.raises(InvalidParameterError, match=msg):
        parse_executor(url, jobs)


@pytest.mark.parametrize("text", ["0/3", "4/3", "1", "a/b", "1/0", "-1/2", "2/3/4"])
def test_bad_shard_is_a_typed_error(text: str) -> None:
    with pytest.raises(InvalidParameterError, match="must be I/N with 1 <= I <= N"):
        parse_shard(text)


def test_the_shards_partition_the_items() -> None:
    items = list(range(20))
    parts = [list(shard(items, (i, 3))) for i in (1, 2, 3)]
    assert sorted(sum(parts, [])) == items and parts[0] == items[0::3]


# -- batch --------------------------------------------------------------------------------------------

LINES = [json.dumps({"query": "epsilon", "eps": f"0.{i + 1}", "delta": "1e-4", "k": 5 + i, "at_delta": "1e-3"})
         for i in range(7)] + ['{"query": "delta", "eps": "x", "k": 3, "at_eps": "1"}', "", "{nope"]
DATA = ("\n".join(LINES) + "\n").encode()


def _batch(*args: str, data: bytes = DATA) -> tuple[int, list[str], str]:
    p = subprocess.run([sys.executable, "-m", "exactdp", "batch", *args], input=data, capture_output=True, timeout=120)
    return p.returncode, p.stdout.decode().splitlines(), p.stderr.decode()


def test_batch_jobs_give_the_same_bytes_as_one_process() -> None:
    one = _batch()
    assert _batch("--jobs", "3") == one and _batch("--jobs", "2", "--executor", "local") == one
    assert one[0] == 2 and len(one[1]) == 9


def test_batch_shards_merge_into_the_unsharded_output() -> None:
    code, whole, _ = _batch()
    merged: list[dict] = []
    for i in (1, 2, 3):
        c, out, _ = _batch("--shard", f"{i}/3", "--jobs", "2" if i == 2 else "1")
        assert c in (0, 2)
        merged += [json.loads(x) for x in out]
    merged.sort(key=lambda r: r["line"])
    assert [r.pop("line") for r in merged] == [1, 2, 3, 4, 5, 6, 7, 8, 10]  # physical line numbers (9 is blank)
    assert [json.dumps(r) for r in merged] == whole  # byte for byte, once the line numbers are dropped
    assert code == 2


@pytest.mark.parametrize("args,msg", [
    (["--executor", "dask:/x"], "executor='dask:/x' must be 'local' or dask://HOST:PORT"),
    (["--shard", "4/3"], "shard='4/3' must be I/N"), (["--jobs", "0"], "jobs='0' must be a positive integer")])
def test_batch_bad_executor_or_shard_is_one_line_and_status_2(args: list[str], msg: str) -> None:
    code, out, err = _batch(*args)
    assert code == 2 and out == [] and err.count("\n") == 1 and msg in err


def test_batch_dask_without_distributed_names_the_extra(monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed -> ImportError
    monkeypatch.setattr(sys, "stdin", __import__("io").StringIO(LINES[0] + "\n"))
    code = cli_main(["batch", "--executor", "dask://127.0.0.1:8786"])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    assert captured.err.count("\n") == 1 and "pip install 'exactdp[dask]'" in captured.err
