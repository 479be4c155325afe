"""Progress lines on a terminal and time budgets for long computations.

A command runs its work inside :func:`task`; the engines call :func:`tick` in their loops.  A
``tick`` costs a clock read: it raises :class:`~exactdp.core.errors.TimeBudgetError` once the task's
budget (``max_seconds``) is spent, and after ``after`` seconds (2 by default) it redraws one
progress line on the task's stream (standard error when that is a terminal, else nothing), so a
long computation is never silent and a script's stderr stays clean.  Outside a task, ``tick`` does
nothing.  Nested tasks keep the outer deadline when it is earlier.

>>> with task("demo", stream=None):
...     tick("step 1")
...     round(elapsed()) == 0
True
"""

from __future__ import annotations

import math
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from fractions import Fraction
from types import FrameType
from typing import Any, Literal, TextIO

from exactdp.core.errors import InvalidParameterError, TimeBudgetError
from exactdp.core.numbers import parse_rational

__all__ = ["MAX_SECONDS", "budgeted", "elapsed", "parse_seconds", "remaining", "stderr_if_terminal", "task", "tick"]

#: the largest time budget taken, in seconds (about 31 years); the platform's alarm clock ends not far above
MAX_SECONDS = 10**9


def parse_seconds(x: object, name: str = "max_seconds") -> float | None:
    """A time budget: None (no budget), or a positive number of seconds, at most
    :data:`MAX_SECONDS`, as the float a clock takes (the one reader of every ``max_seconds``).

    A finite Python float is taken at its exact value (a clock budget, never a result: the one
    place exactdp takes a float input); every other input is read as an exact number.

    >>> parse_seconds("1.5"), parse_seconds(None), parse_seconds(0.5)
    (1.5, None, 0.5)
    >>> parse_seconds("1e300")
    Traceback (most recent call last):
    ...
    exactdp.core.errors.InvalidParameterError: max_seconds='1e300' must be at most 10^9 seconds (about 31 years)
    """
    if x is None:
        return None
    if isinstance(x, float) and not math.isfinite(x):  # float ok: a clock budget, never a result
        raise InvalidParameterError(f"{name}={x!r} must be a finite number of seconds")
    s = Fraction(x) if isinstance(x, float) else parse_rational(x, name)
    if s <= 0:
        raise InvalidParameterError(f"{name}={x!r} must be a positive number of seconds")
    if s > MAX_SECONDS:
        raise InvalidParameterError(f"{name}={x!r} must be at most 10^9 seconds (about 31 years)")
    return s.numerator / s.denominator  # float ok: a clock budget, never a result

#: a SIGALRM handler as ``signal.signal`` takes and returns it
_Handler = Callable[[int, FrameType | None], Any] | int | signal.Handlers | None


@dataclass
class _Task:
    label: str
    start: float  # float ok: a clock reading, never a result
    origin: float  # float ok: a clock reading: the start of the outermost task (what a budget counts from)
    deadline: float | None  # float ok: a clock reading
    stream: TextIO | None
    after: float  # float ok: seconds
    last_draw: float = 0.0  # float ok: a clock reading
    width: int = 0


_current: ContextVar[_Task | None] = ContextVar("exactdp_progress_task", default=None)


def stderr_if_terminal() -> TextIO | None:
    """``sys.stderr`` when it is a terminal, else None (no progress lines in logs and pipes)."""
    s = sys.stderr
    try:
        return s if s is not None and s.isatty() else None
    except (AttributeError, ValueError):
        return None


@contextmanager
def task(label: str, *, max_seconds: float | None = None, stream: TextIO | None | Literal["auto"] = "auto",
         after: float = 2.0) -> Iterator[None]:
    """Run the body as a task: progress after ``after`` seconds, a budget of ``max_seconds``."""
    now = time.monotonic()
    outer = _current.get()
    deadline = now + max_seconds if max_seconds is not None else None
    if outer is not None and outer.deadline is not None:
        deadline = outer.deadline if deadline is None else min(deadline, outer.deadline)
    out = stderr_if_terminal() if isinstance(stream, str) else stream  # the only string is "auto"
    origin = now
    if outer is not None:
        label = outer.label if label == outer.label else f"{outer.label}: {label}"
        out = outer.stream if isinstance(stream, str) else out
        origin = outer.origin
    t = _Task(label, now, origin, deadline, out, after)
    token = _current.set(t)
    alarm = _arm_alarm(t) if outer is None and deadline is not None else None
    try:
        yield
    finally:
        if alarm is not None:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, alarm)
        _current.reset(token)
        if t.width and t.stream is not None and outer is None:
            t.stream.write("\r" + " " * t.width + "\r")
            t.stream.flush()
        elif outer is not None:
            outer.width = max(outer.width, t.width)


@contextmanager
def budgeted(label: str, max_seconds: object) -> Iterator[None]:
    """Run the body within ``max_seconds`` (read by :func:`parse_seconds`): the ``max_seconds=`` of
    the Python entry points, with the meaning of the command line's ``--max-seconds``.

    None runs the body as it is (no task); a budget runs it as a :func:`task` (progress as the
    command line's), so :class:`~exactdp.core.errors.TimeBudgetError` is raised past it.

    >>> with budgeted("demo", "10"):
    ...     0 < remaining() <= 10
    True
    >>> with budgeted("demo", None):
    ...     remaining() is None
    True
    """
    budget = parse_seconds(max_seconds)
    if budget is None:
        yield
        return
    with task(label, max_seconds=budget):
        yield


def _arm_alarm(t: _Task) -> _Handler:
    """A backstop for code that does not tick: SIGALRM one second past the deadline (main thread only)."""
    if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        return None
    if signal.getitimer(signal.ITIMER_REAL)[0] > 0:  # someone else's alarm is running: leave it
        return None

    def ring(signum: int, frame: object) -> None:
        raise TimeBudgetError(f"the time budget ran out after {time.monotonic() - t.origin:.1f} s ({t.label})",
                              elapsed=time.monotonic() - t.origin)

    assert t.deadline is not None
    previous = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, min(max(t.deadline - time.monotonic(), 0.0) + 1.0, MAX_SECONDS))
    return previous


def tick(what: str = "") -> None:
    """A point in a long loop: check the budget, and redraw the progress line now and then."""
    t = _current.get()
    if t is None:
        return
    now = time.monotonic()
    if t.deadline is not None and now > t.deadline:
        raise TimeBudgetError(
            f"the time budget ran out after {now - t.origin:.1f} s ({t.label}{': ' + what if what else ''})",
            elapsed=now - t.origin,
        )
    if t.stream is not None and now - t.start >= t.after and now - t.last_draw >= 0.25:
        t.last_draw = now
        line = f"exactdp: {t.label}{': ' + what if what else ''} ({now - t.origin:.0f} s)"
        line = line[:150]
        pad = max(0, t.width - len(line))
        t.width = max(t.width, len(line))
        t.stream.write("\r" + line + " " * pad)
        t.stream.flush()


def elapsed() -> float:
    """Seconds since the current task started (0 outside a task)."""
    t = _current.get()
    return time.monotonic() - t.start if t is not None else 0.0


def remaining() -> float | None:
    """Seconds left in the budget (None: no budget)."""
    t = _current.get()
    if t is None or t.deadline is None:
        return None
    return t.deadline - time.monotonic()
