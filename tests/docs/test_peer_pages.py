"""docs/peers/*.md: every page's test is run against the real library (docs/peers/README.md).

The python block of each page is written to a file and run by pytest in a subprocess, as a
maintainer would run it in their own suite: it must pass (its strict xfails are the peers' known
bugs, caught by the kit; a fixed bug turns into a failure here).  A page whose library is not
installed is skipped with the reason; Opacus runs in CI's own Opacus step; jax-privacy (not installed by
CI: JAX is a large download) where it is installed.
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

PEERS = Path(__file__).resolve().parents[2] / "docs" / "peers"
MODULE = {"dp_accounting": "dp_accounting", "prv_accountant": "prv_accountant", "autodp": "autodp",
          "opendp": "opendp", "opacus": "opacus", "tf_privacy": "tensorflow_privacy",
          "jax_privacy": "jax_privacy"}


def _block(page: Path) -> str:
    blocks = re.findall(r"```python\n(.*?)```", page.read_text(encoding="utf-8"), flags=re.S)
    assert len(blocks) == 1, f"{page.name}: one python block expected, found {len(blocks)}"
    return blocks[0]


def test_every_peer_has_a_page() -> None:
    assert {p.stem for p in PEERS.glob("*.md")} - {"README"} == set(MODULE)


def _param(name: str) -> object:
    marks = [pytest.mark.opacus] if name == "opacus" else [pytest.mark.peers]
    return pytest.param(name, marks=marks, id=name)


@pytest.mark.parametrize("name", [_param(n) for n in MODULE])
def test_peer_page_runs_against_the_real_library(name: str, tmp_path: Path) -> None:
    code = _block(PEERS / f"{name}.md")
    if importlib.util.find_spec(MODULE[name]) is None:
        pytest.skip(f"{MODULE[name]} is not installed (docs/peers/{name}.md says how)")
    test_file = tmp_path / f"test_peer_{name}.py"
    test_file.write_text(code, encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=",
                          "-W", "ignore", str(test_file)], capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    assert "xpassed" not in out.stdout, out.stdout[-2000:]
    assert re.search(r"\d+ (passed|xfailed)", out.stdout), out.stdout[-2000:]
