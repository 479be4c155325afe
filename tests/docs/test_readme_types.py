"""The README's Python tour type-checks as a user's code under ``mypy --strict`` (issue 24).

The public API takes exact numbers as a user writes them (``exactdp.core.numbers.ExactInput``:
``"0.1"``, ``Fraction(1, 10)``, ``30``), so ``Gaussian("1.1")`` or ``optimal_epsilon(c, "0.05")``
must not be a type error.  Only the README block's own lines are judged (``--follow-imports=silent``:
the package's internals are checked by ``mypy -p exactdp`` in CI).  Skipped where mypy is not
installed (CI installs it: the ``lint`` extra).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _tour() -> str:
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(encoding="utf-8"), re.S)
    assert blocks, "README.md has no ```python block"
    return blocks[0]


def _mypy(path: Path, cache: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent",
                           "--config-file", str(ROOT / "pyproject.toml"), "--cache-dir", str(cache), str(path)],
                          capture_output=True, text=True, timeout=600, cwd=ROOT)


def test_readme_python_block_is_clean_under_mypy_strict(tmp_path: Path) -> None:
    pytest.importorskip("mypy")
    f = tmp_path / "readme_tour.py"
    f.write_text(_tour(), encoding="utf-8")
    r = _mypy(f, tmp_path / "cache")
    assert r.returncode == 0, r.stdout + r.stderr


def test_the_check_catches_a_type_error(tmp_path: Path) -> None:
    # the same run must fail on a user's mistake (a list where an exact number belongs)
    pytest.importorskip("mypy")
    f = tmp_path / "wrong.py"
    f.write_text("from exactdp import optimal_epsilon\noptimal_epsilon((\"0.1\", \"0\", 30), [0.05])\n",
                 encoding="utf-8")
    r = _mypy(f, tmp_path / "cache")
    assert r.returncode == 1 and "wrong.py:2" in r.stdout, r.stdout + r.stderr
