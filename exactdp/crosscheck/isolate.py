"""One peer call in a child process, with a memory and a time limit (docs/peers/README.md, "Limits").

A peer library may allocate without bound (the full sweep of one of them took 16.7 GB and was
killed by the kernel, taking the whole run with it) or never return.  :func:`call_isolated` runs
one call in a forked child whose address space may grow by at most ``memory`` bytes over the
parent's (``resource.setrlimit(RLIMIT_AS)``, set in the child only) and which is killed after
``seconds``; it returns the call's value or re-raises its exception, and raises
:class:`PeerOutOfMemory` or :class:`PeerTimeout` instead of taking the run down.  The value and
the exception come back pickled; where ``fork`` is missing the call runs in this process, unlimited.

>>> call_isolated(sum, [1, 2, 3], Limits(memory=2**30, seconds=30))
6
>>> parse_memory("4G"), parse_memory("512M"), parse_memory("none")
(4294967296, 536870912, None)
"""

from __future__ import annotations

import os
import pickle
import re
import select
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from exactdp.core.errors import InvalidParameterError

__all__ = ["DEFAULT_MEMORY", "DEFAULT_SECONDS", "Limits", "PeerLimitError", "PeerOutOfMemory", "PeerTimeout",
           "call_isolated", "parse_memory"]

#: the default limits of one peer call: 4 GiB more address space than the run's own, 10 minutes
DEFAULT_MEMORY = 4 * 2**30
DEFAULT_SECONDS = 600.0  # float ok: seconds on a clock


class PeerLimitError(Exception):
    """A peer call went past one of its limits (reported as an ``error`` finding, the run goes on)."""


class PeerOutOfMemory(PeerLimitError):
    """The call wanted more memory than its limit (or the kernel killed it)."""


class PeerTimeout(PeerLimitError):
    """The call did not return within its time limit."""


@dataclass(frozen=True)
class Limits:
    """The limits of one peer call: ``memory`` bytes of address space more than the parent's (None:
    no limit) and ``seconds`` of wall-clock time (None: no limit)."""

    memory: int | None = DEFAULT_MEMORY
    seconds: float | None = DEFAULT_SECONDS  # float ok: seconds on a clock

    def __post_init__(self) -> None:
        if self.memory is not None and (isinstance(self.memory, bool) or not isinstance(self.memory, int)
                                        or self.memory <= 0):
            raise InvalidParameterError(f"memory={self.memory!r} must be a positive number of bytes or None")
        if self.seconds is not None and (isinstance(self.seconds, bool) or not isinstance(self.seconds, (int, float))
                                         or not 0 < self.seconds < 10**9):
            raise InvalidParameterError(f"seconds={self.seconds!r} must be a number of seconds > 0 or None")


_UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def parse_memory(text: str) -> int | None:
    """A memory size as in ``--memory-limit``: ``4G``, ``512M``, ``100000K``, bytes, or ``none``."""
    if isinstance(text, str) and text.strip().lower() in ("none", "off", "unlimited"):
        return None
    m = re.fullmatch(r"\s*([0-9]+)\s*([KMGT]?)I?B?\s*", text.upper()) if isinstance(text, str) else None
    if m is None or int(m[1]) == 0:
        raise InvalidParameterError(f"memory-limit={text!r} must be a size like 4G, 512M or 'none'")
    return int(m[1]) * _UNITS[m[2]]


def _address_space() -> int:
    """This process's address space in bytes (0 where /proc does not say)."""
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _child(fn: Callable[[Any], Any], arg: Any, limits: Limits, w: int) -> None:  # pragma: no cover - in the child
    import resource

    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
        if limits.memory is not None:
            cap = _address_space() + limits.memory
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
        try:
            out: tuple[str, Any] = ("ok", fn(arg))
        except MemoryError:
            out = ("oom", None)
        except BaseException as exc:  # noqa: BLE001 - the peer's exception goes back to the parent
            out = ("raised", exc)
        try:
            data = pickle.dumps(out)
        except Exception as exc:  # noqa: BLE001 - an exception or value that does not pickle: its text
            data = pickle.dumps(("raised", RuntimeError(f"{type(out[1]).__name__}: {out[1]}"[:500]
                                                        if out[0] == "raised" else f"unpicklable result: {exc}")))
        view = memoryview(data)
        while view:
            view = view[os.write(w, view):]
    finally:
        os._exit(0)


def call_isolated(fn: Callable[[Any], Any], arg: Any, limits: Limits) -> Any:
    """``fn(arg)`` in a child process under ``limits``; its value, or its exception re-raised, or
    :class:`PeerOutOfMemory` / :class:`PeerTimeout`."""
    if not hasattr(os, "fork"):  # pragma: no cover - not POSIX: no child, no limits
        return fn(arg)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.close(r)
        _child(fn, arg, limits, w)
    os.close(w)
    chunks: list[bytes] = []
    deadline = None if limits.seconds is None else time.monotonic() + limits.seconds
    timed_out = False
    try:
        while True:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                timed_out = True
                break
            ready, _, _ = select.select([r], [], [], left)
            if not ready:
                continue
            data = os.read(r, 1 << 16)
            if not data:
                break
            chunks.append(data)
    finally:
        os.close(r)
        if timed_out or not chunks:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        _, status = os.waitpid(pid, 0)
    if timed_out:
        raise PeerTimeout(f"timeout: no answer within {limits.seconds:g} s (the per-call time limit)")
    if not chunks:
        why = f"signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status) else f"status {os.waitstatus_to_exitcode(status)}"
        if os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL:
            raise PeerOutOfMemory("out of memory: the call was killed (SIGKILL, e.g. by the kernel's OOM killer)")
        raise RuntimeError(f"the peer call died without an answer ({why})")
    kind, value = pickle.loads(b"".join(chunks))
    if kind == "oom":
        mib = "" if limits.memory is None else f" (the per-call limit is {limits.memory // 2**20} MiB)"
        raise PeerOutOfMemory(f"out of memory: the call wanted more memory{mib}")
    if kind == "raised":
        raise value
    return value
