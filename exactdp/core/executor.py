"""Where the work of ``batch``, ``tables build`` and ``crosscheck`` runs: one executor seam (docs/cluster.md).

:func:`parse_executor` reads ``--jobs N`` and ``--executor URL`` into an :class:`ExecutorSpec`:
``local`` (the default: N worker processes, or this process when N is 1) or ``dask://HOST:PORT``
(an existing Dask scheduler; needs the optional extra ``pip install 'exactdp[dask]'``).
:func:`open_executor` gives the :class:`concurrent.futures.Executor` (None for in-process), and
:func:`map_ordered` maps a function over items in chunks and yields the results in input order as
they become available, with a bounded number of chunks in flight (a million-line input never sits
in memory).  :func:`parse_shard` and :func:`shard` take the I-th of N round-robin slices of a
stream (``--shard I/N``, for the array jobs of a cluster's batch scheduler).

>>> spec = parse_executor(None, "1")
>>> spec.kind, spec.jobs, spec.in_process
('local', 1, True)
>>> with open_executor(spec) as ex:
...     list(map_ordered(abs, [-3, 1, -2], ex))
[3, 1, 2]
>>> parse_shard("2/3"), list(shard("abcdefg", (2, 3)))
((2, 3), ['b', 'e'])
"""

from __future__ import annotations

import collections
import concurrent.futures as cf
import multiprocessing
import re
import signal
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import islice
from typing import Any, TypeVar

from exactdp.core.errors import InvalidParameterError, MissingExtraError

__all__ = ["ExecutorSpec", "map_ordered", "open_executor", "parse_executor", "parse_shard", "shard"]

T = TypeVar("T")
R = TypeVar("R")

_DASK_URL = re.compile(r"^dask://(?P<host>[A-Za-z0-9._-]+|\[[0-9A-Fa-f:.]+\]):(?P<port>[0-9]{1,5})/?$")


@dataclass(frozen=True)
class ExecutorSpec:
    """Where to run: ``kind`` "local" (``jobs`` processes; this process when 1) or "dask" (``address``
    of a Dask scheduler, ``tcp://HOST:PORT``)."""

    kind: str = "local"
    jobs: int = 1
    address: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in ("local", "dask"):
            raise InvalidParameterError(f"executor kind={self.kind!r} must be 'local' or 'dask'")
        if isinstance(self.jobs, bool) or not isinstance(self.jobs, int) or self.jobs < 1:
            raise InvalidParameterError(f"jobs={self.jobs!r} must be a positive integer")
        if (self.kind == "dask") != (self.address is not None):
            raise InvalidParameterError("a dask executor needs an address, a local one none")

    @property
    def in_process(self) -> bool:
        """Whether the work runs in this process (local, one job)."""
        return self.kind == "local" and self.jobs == 1


def parse_executor(url: str | None, jobs: object = 1) -> ExecutorSpec:
    """The executor of ``--executor URL`` (None or ``local``: processes; ``dask://HOST:PORT``) and
    ``--jobs N``; a bad value is an :class:`~exactdp.core.errors.InvalidParameterError` naming it.

    >>> parse_executor("dask://127.0.0.1:8786").address
    'tcp://127.0.0.1:8786'
    >>> parse_executor("local", "4").jobs
    4
    """
    n = _positive_int(jobs, "jobs")
    if url is None or url == "local":
        return ExecutorSpec("local", n)
    m = _DASK_URL.match(url) if isinstance(url, str) else None
    if m is None or not 0 < int(m["port"]) < 65536:
        raise InvalidParameterError(f"executor={url!r} must be 'local' or dask://HOST:PORT "
                                    "(e.g. dask://127.0.0.1:8786, a running Dask scheduler)")
    return ExecutorSpec("dask", n, f"tcp://{m['host']}:{int(m['port'])}")


def _positive_int(x: object, name: str) -> int:
    n = int(x) if isinstance(x, str) and re.fullmatch(r"\s*[0-9]+\s*", x) else x
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise InvalidParameterError(f"{name}={x!r} must be a positive integer")
    return n


def parse_shard(text: str | None) -> tuple[int, int] | None:
    """``--shard I/N`` as (I, N) with 1 <= I <= N (None: no sharding).

    >>> parse_shard(None) is None
    True
    """
    if text is None:
        return None
    m = re.fullmatch(r"\s*([0-9]+)\s*/\s*([0-9]+)\s*", text) if isinstance(text, str) else None
    if m is None or not 1 <= int(m[1]) <= int(m[2]):
        raise InvalidParameterError(f"shard={text!r} must be I/N with 1 <= I <= N (e.g. 2/8: the second of 8 shards)")
    return int(m[1]), int(m[2])


def shard(items: Iterable[T], which: tuple[int, int] | None) -> Iterator[T]:
    """The I-th of N round-robin slices of ``items``: the items number I, I+N, I+2N, ... (from 1)."""
    if which is None:
        return iter(items)
    i, n = which
    return islice(items, i - 1, None, n)


def _ignore_sigint() -> None:  # a worker process: Ctrl-C is the parent's to handle (it stops the workers)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@contextmanager
def open_executor(spec: ExecutorSpec) -> Iterator[cf.Executor | None]:
    """The executor of ``spec`` (None when the work runs in this process), shut down on exit: on an
    error or Ctrl-C, queued work is cancelled and local worker processes are stopped."""
    if spec.in_process:
        yield None
        return
    if spec.kind == "dask":
        try:
            from distributed import Client
        except ImportError:
            raise MissingExtraError("--executor dask://... needs distributed, which is not installed: "
                                    "pip install 'exactdp[dask]'") from None
        try:
            client = Client(spec.address, timeout=10)
        except OSError as e:
            raise InvalidParameterError(f"executor={spec.address}: no Dask scheduler answers there ({e})") from None
        try:
            ex = client.get_executor()
            yield ex
        finally:
            client.close()
        return
    methods = multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
    pool = cf.ProcessPoolExecutor(spec.jobs, mp_context=ctx, initializer=_ignore_sigint)
    try:
        yield pool
    except BaseException:
        # the running calls are stopped too (the standard executor has no public way to do it)
        procs = list((getattr(pool, "_processes", None) or {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        for proc in procs:
            proc.terminate()
        raise
    else:
        pool.shutdown(wait=True)


def _run_chunk(fn: Callable[[Any], R], chunk: Sequence[Any]) -> list[R]:
    return [fn(x) for x in chunk]


def map_ordered(fn: Callable[[T], R], items: Iterable[T], executor: cf.Executor | None, *, chunk_size: int = 1,
                max_in_flight: int | None = None, on_wait: Callable[[], None] | None = None) -> Iterator[R]:
    """``fn`` of every item, yielded in input order as soon as each is known.

    In-process (``executor`` None) one item at a time; else in chunks of ``chunk_size`` items (one
    task each, so light items do not pay a round trip each), at most ``max_in_flight`` chunks
    submitted and not yet yielded (default: 4 per worker; the input is read only that far ahead).
    ``on_wait`` is called about every 0.25 s while the next result is awaited (a progress line).
    An exception of ``fn`` is raised here, at its item's place; ``fn`` and the items must pickle.
    """
    if executor is None:
        yield from map(fn, items)
        return
    if chunk_size < 1:
        raise InvalidParameterError(f"chunk_size={chunk_size!r} must be a positive integer")
    limit = max_in_flight or 4 * max(1, getattr(executor, "_max_workers", 0) or _dask_workers(executor) or 4)
    pending: collections.deque[cf.Future[list[R]]] = collections.deque()
    it = iter(items)
    exhausted = False
    while True:
        while not exhausted and len(pending) < limit:
            chunk = list(islice(it, chunk_size))
            if not chunk:
                exhausted = True
                break
            pending.append(executor.submit(_run_chunk, fn, chunk))
        if not pending:
            return
        head = pending[0]
        while not head.done():
            cf.wait([head], timeout=0.25)
            if on_wait is not None and not head.done():
                on_wait()
        pending.popleft()
        yield from head.result()


def _dask_workers(executor: cf.Executor) -> int:
    client = getattr(executor, "_client", None)
    try:
        return sum(w.get("nthreads", 1) for w in client.scheduler_info()["workers"].values()) if client else 0
    except Exception:  # noqa: BLE001 - only a sizing hint; a scheduler that will not say gets the default
        return 0
