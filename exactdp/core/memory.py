"""The memory bound of a computation: predicted before any large allocation, refused by name past it.

Every engine that can allocate much (an exact Murtagh-Vadhan profile, a PLD grid) predicts the
bytes a step needs and asks :func:`require` before it starts; past the bound the step is refused
with :class:`~exactdp.core.errors.MemoryBoundError`, which names the prediction.  The router then
takes a route that fits (docs/architecture.md, the dispatch table), and a refinement stops at the
finest grid that fits and answers the bracket it reached.  So no input makes exactdp allocate past
the bound, and nothing dies of an allocation failure inside a C library.

A bound given (the command line's ``--max-memory SIZE``, :func:`bounded`) is the whole process's
resident memory: what the process holds already (the interpreter, the inputs) counts against it.
Without one, each large step may take :data:`DEFAULT_BYTES` (2 GiB) beyond what the process holds,
so a long-lived process (a notebook, a test run, a Dask worker) answers the same query the same
way whatever it did before.

>>> parse_bytes("1.5G"), parse_bytes("300M"), parse_bytes("104857600")
(1610612736, 314572800, 104857600)
>>> with bounded("1G"):
...     bound()
1073741824
>>> bound() == DEFAULT_BYTES
True
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from fractions import Fraction

from exactdp.core.errors import InvalidParameterError, MemoryBoundError

__all__ = ["DEFAULT_BYTES", "MIN_BYTES", "available", "bound", "bounded", "format_bytes", "parse_bytes", "require",
           "resident"]

#: the default bound: 2 GiB (the issue's "a default that fits this machine comfortably")
DEFAULT_BYTES = 2 << 30
#: the smallest bound taken (the interpreter and its libraries hold about 40 MB before any work)
MIN_BYTES = 64 << 20
#: the largest bound taken (1 PiB: far past any machine, so a typo such as 2e30 is refused)
MAX_BYTES = 1 << 50

_UNITS = {"": 1, "B": 1, "K": 1 << 10, "KB": 1 << 10, "KIB": 1 << 10, "M": 1 << 20, "MB": 1 << 20, "MIB": 1 << 20,
          "G": 1 << 30, "GB": 1 << 30, "GIB": 1 << 30, "T": 1 << 40, "TB": 1 << 40, "TIB": 1 << 40}
_SIZE_RE = re.compile(r"^\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*([A-Za-z]*)\s*$")

_bound: ContextVar[int] = ContextVar("exactdp_memory_bound", default=DEFAULT_BYTES)
#: the bound given by the caller (None: the default, a per-step allowance)
_given: ContextVar[int | None] = ContextVar("exactdp_memory_given", default=None)


def parse_bytes(x: object, name: str = "max_memory") -> int:
    """A memory size in bytes: an integer, or a decimal number with a unit K, M, G or T (powers of
    1024; KB, MiB, ... read the same), between :data:`MIN_BYTES` and :data:`MAX_BYTES`.

    >>> parse_bytes("2GB") == 2 << 30
    True
    >>> parse_bytes("10k")
    Traceback (most recent call last):
    ...
    exactdp.core.errors.InvalidParameterError: max_memory='10k' must be at least 64M (the interpreter alone holds about 40M)
    >>> parse_bytes("lots")
    Traceback (most recent call last):
    ...
    exactdp.core.errors.InvalidParameterError: max_memory='lots' must be a size such as 500M, 2G or 1.5G
    """
    if isinstance(x, bool):
        raise InvalidParameterError(f"{name}={x!r} must be a size such as 500M, 2G or 1.5G")
    if isinstance(x, int):
        n = x
    else:
        m = _SIZE_RE.match(x) if isinstance(x, str) else None
        unit = m.group(2).upper() if m else ""
        if m is None or unit not in _UNITS:
            raise InvalidParameterError(f"{name}={x!r} must be a size such as 500M, 2G or 1.5G")
        n = int(Fraction(m.group(1)) * _UNITS[unit])
    if n < MIN_BYTES:
        raise InvalidParameterError(f"{name}={x!r} must be at least 64M (the interpreter alone holds about 40M)")
    if n > MAX_BYTES:
        raise InvalidParameterError(f"{name}={x!r} must be at most 1P")
    return n


def format_bytes(n: int) -> str:
    """A size for a message, rounded up to a tenth of its unit.

    >>> format_bytes(3 << 30), format_bytes(1536 << 20), format_bytes(100 << 20)
    ('3.0 GB', '1.5 GB', '100 MB')
    """
    if n >= 1 << 30:
        tenths = -(-n * 10 // (1 << 30))
        return f"{tenths // 10}.{tenths % 10} GB"
    return f"{-(-n // (1 << 20))} MB"


def bound() -> int:
    """The memory bound in force (bytes)."""
    return _bound.get()


@contextmanager
def bounded(max_memory: object, name: str = "max_memory") -> Iterator[None]:
    """Run the body under the bound ``max_memory`` (read by :func:`parse_bytes`); None keeps the
    bound in force."""
    if max_memory is None:
        yield
        return
    n = parse_bytes(max_memory, name)
    token, given = _bound.set(n), _given.set(n)
    try:
        yield
    finally:
        _given.reset(given)
        _bound.reset(token)


def resident() -> int:
    """The bytes this process holds now (its resident set; 0 where the system does not say)."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def available() -> int:
    """The bytes a new allocation may still take: a given bound less what the process holds now, or
    :data:`DEFAULT_BYTES` when none is given (module docstring)."""
    if _given.get() is None:
        return DEFAULT_BYTES
    return max(0, bound() - resident())


def require(need: int, what: str) -> None:
    """Refuse ``what`` by name when its predicted ``need`` (bytes) passes :func:`available`.

    >>> require(10, "a small step")
    >>> require(1 << 60, "a huge step")
    Traceback (most recent call last):
    ...
    exactdp.core.errors.MemoryBoundError: a huge step would take about 1073741824.0 GB, past the memory bound (2.0 GB, --max-memory)
    """
    if need > available():
        raise MemoryBoundError(f"{what} would take about {format_bytes(need)}, past the memory bound "
                               f"({format_bytes(bound())}, --max-memory)", need=need, bound=bound())
