"""Typed errors of exactdp: one root class, each subclass also a matching builtin."""

from __future__ import annotations

__all__ = [
    "ExactDPError",
    "InexactInputError",
    "InvalidParameterError",
    "MemoryBoundError",
    "MissingExtraError",
    "PrecisionError",
    "TimeBudgetError",
]


class ExactDPError(Exception):
    """Root of every error exactdp raises on purpose."""


class InvalidParameterError(ExactDPError, ValueError):
    """A parameter is outside its domain (raised before any computation)."""


class InexactInputError(ExactDPError, TypeError):
    """An input that is not exact (a float) or not a number at all."""


class PrecisionError(ExactDPError, ArithmeticError):
    """The requested width could not be certified within the precision cap."""


class MissingExtraError(ExactDPError, ImportError):
    """An optional dependency is not installed; the message names the extra that installs it."""


class TimeBudgetError(PrecisionError):
    """The time budget (``--max-seconds``) ran out before the answer was certified.

    ``elapsed`` is the time spent (seconds); ``best`` the best certified enclosure reached, if any.
    """

    def __init__(self, message: str, *, elapsed: float = 0.0, best: object = None) -> None:  # float ok: seconds
        super().__init__(message)
        self.elapsed = elapsed
        self.best = best


class MemoryBoundError(PrecisionError):
    """A computation was predicted to need more memory than the bound (``--max-memory``) allows; it
    was refused before allocating.  ``need`` and ``bound`` are the predicted and allowed bytes."""

    def __init__(self, message: str, *, need: int = 0, bound: int = 0) -> None:
        super().__init__(message)
        self.need = need
        self.bound = bound
