"""Typed errors of exactdp: one root class, each subclass also a matching builtin."""

from __future__ import annotations

__all__ = ["ExactDPError", "InvalidParameterError", "InexactInputError", "PrecisionError"]


class ExactDPError(Exception):
    """Root of every error exactdp raises on purpose."""


class InvalidParameterError(ExactDPError, ValueError):
    """A parameter is outside its domain (raised before any computation)."""


class InexactInputError(ExactDPError, TypeError):
    """An input that is not exact (a float) or not a number at all."""


class PrecisionError(ExactDPError, ArithmeticError):
    """The requested width could not be certified within the precision cap."""
