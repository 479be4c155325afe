"""The doctests in the public modules run as tests (each shows an exact output)."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "exactdp",
    "exactdp.numbers",
    "exactdp.composition",
    "exactdp.methods",
    "exactdp.optimal",
    "exactdp.bounds",
    "exactdp.optimal.kov15",
    "exactdp.optimal.mv",
    "exactdp.optimal.approx",
    "exactdp.region",
    "exactdp.mechanisms",
    "exactdp.gaussian",
    "exactdp.roots",
    "exactdp.files",
    "exactdp.progress",
    "exactdp.curve",
    "exactdp.optimal.tails",
    "exactdp.testing.oracle",
    "exactdp.testing.assertions",
    "exactdp.testing.counterexample",
    "exactdp.calibrate",
    "exactdp.calibrate.certsearch",
    "exactdp.budget",
]


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} doctest failures in {name}"
