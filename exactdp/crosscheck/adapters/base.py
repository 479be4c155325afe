"""The adapter's types: a peer library (:class:`Adapter`), one entry point (:class:`Api`), its answer.

An API turns a :class:`~exactdp.crosscheck.cases.Case` into the library's own calls and returns a
:class:`Reported`, or raises :class:`NotApplicable` (it cannot express the case) or
:class:`Skipped` (out of scope, with the reason) or :class:`Unsupported` (the library has no form for
an event of the case).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from exactdp.crosscheck.cases import Case
from exactdp.model.composition import Composition

__all__ = ["Adapter", "Api", "CurveApi", "NotApplicable", "Reported", "ReportedCurve", "Skipped", "Unsupported"]


@dataclass(frozen=True)
class Reported:
    """A library's answer: ``value`` (its claim) for ``composition`` at ``at``.

    ``side`` is ``"upper"`` for a claimed upper bound (judged) or ``"lower"`` for a documented
    under-estimate (an optimistic PLD, prv_accountant's lower value), which is labelled
    ``lower-estimate`` and never called unsound.
    """

    value: Any
    composition: Composition
    at: Fraction
    note: str = ""
    side: str = "upper"


class NotApplicable(Exception):
    """The API cannot express this case (e.g. an approximate-DP mechanism in a pure-DP API)."""


class Skipped(Exception):
    """The API could express the case but it is out of scope (e.g. a replace-one relation).

    Reported as a ``skipped`` finding with the reason, never counted as checked.
    """


class Unsupported(Exception):
    """The library has no form for an event of the case (a mechanism, a sampling scheme or a relation
    it does not support): reported as an ``unsupported`` finding with the reason, never a crash and
    never counted as checked (docs/peers/README.md, "Events and relations")."""


@dataclass(frozen=True)
class Api:
    """One library entry point under test."""

    library: str
    name: str
    run: Callable[[Case], Reported]


@dataclass(frozen=True)
class ReportedCurve:
    """A library's RDP curve of a composition: ``values[i]`` at ``orders[i]`` (the library's own numbers).

    ``composition`` is exactly what the library was given, ``direction`` that of its divergence
    (``"remove"`` for a Poisson-subsampled mechanism, the direction RDP accountants compute; docs/rdp.md).
    ``eps`` is the library's own eps at total ``delta`` converted from this same curve (None when
    it does not convert it here), judged apart from the curve (docs/peers/README.md, "RDP curves").
    """

    orders: tuple[Any, ...]
    values: tuple[Any, ...]
    composition: Composition
    direction: str = "max"
    eps: Any = None
    delta: Fraction | None = None
    note: str = ""


@dataclass(frozen=True)
class CurveApi:
    """One entry point of a library that computes an RDP curve."""

    library: str
    name: str
    run: Callable[[Case], ReportedCurve]


@dataclass
class Adapter:
    """A peer library: its import name, and the APIs the cross-check calls."""

    library: str
    module: str
    build: Callable[[], list[Api]]
    distribution: str = ""
    apis_cache: list[Api] | None = field(default=None, repr=False)
    install: str = ""
    curves: Callable[[], list[CurveApi]] | None = None
    curves_cache: list[CurveApi] | None = field(default=None, repr=False)

    def available(self) -> tuple[bool, str]:
        """(importable, version or the reason it is not)."""
        try:
            importlib.import_module(self.module)
        except Exception as exc:  # noqa: BLE001 - ImportError, or a broken install raising anything: not installed
            how = self.install or f"pip install '{self.distribution or self.library}'"
            return False, f"not installed ({type(exc).__name__}: {exc}); {how}"
        try:
            from importlib.metadata import version

            return True, version(self.distribution or self.library)
        except Exception:  # noqa: BLE001 - an odd install's metadata may fail any way; the version is only shown
            return True, "unknown version"

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without its built APIs (closures): a worker process builds its own."""
        return {**self.__dict__, "apis_cache": None, "curves_cache": None}

    def apis(self) -> list[Api]:
        """The library's APIs under test, built (and the library imported) on first use."""
        if self.apis_cache is None:
            self.apis_cache = self.build()
        return self.apis_cache

    def curve_apis(self) -> list[CurveApi]:
        """The library's RDP-curve entry points (none when it has no RDP accountant), built on first use."""
        if self.curves is None:
            return []
        if self.curves_cache is None:
            self.curves_cache = self.curves()
        return self.curves_cache
