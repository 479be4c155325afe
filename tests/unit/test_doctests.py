"""The doctests in the public modules run as tests (each shows an exact output)."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "exactdp",
    "exactdp.core.numbers",
    "exactdp.model.composition",
    "exactdp.api.methods",
    "exactdp.api.optimal",
    "exactdp.engines.bounds",
    "exactdp.engines.kov15",
    "exactdp.engines.mv",
    "exactdp.engines.approx",
    "exactdp.api.region",
    "exactdp.model.mechanisms",
    "exactdp.engines.gaussian",
    "exactdp.core.roots",
    "exactdp.core.files",
    "exactdp.core.progress",
    "exactdp.api.curve",
    "exactdp.engines.tails",
    "exactdp.testing.oracle",
    "exactdp.testing.assertions",
    "exactdp.testing.counterexample",
    "exactdp.calibrate",
    "exactdp.calibrate.certsearch",
    "exactdp.calibrate.budget",
]


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} doctest failures in {name}"
