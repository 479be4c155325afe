"""The doctests in the public modules run as tests (each shows an exact output)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

def _modules() -> list[str]:
    """Every module of the package (a module split or added is covered without editing this list)."""
    import exactdp

    names = ["exactdp"]
    for info in pkgutil.walk_packages(exactdp.__path__, "exactdp."):
        names.append(info.name)
    return sorted(names)


MODULES = _modules()


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} doctest failures in {name}"
