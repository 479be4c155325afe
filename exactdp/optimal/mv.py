"""Placeholder: the optimal method is being built (see the open issues)."""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    raise NotImplementedError("the optimal method is not available yet in this version of exactdp")
