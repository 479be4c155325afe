"""Packaging that keeps its word (issue 25 §5): every declared dependency has a lower bound, CI
installs exactly those lower bounds (.ci/lowest, pins derived from pyproject.toml by
.ci/lowest_pins.py), and the wheel ships the symbolic derivations (proofs/ as exactdp.proofs)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

try:
    import tomllib
except ImportError:  # Python 3.10
    tomllib = pytest.importorskip("tomli")

ROOT = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
PINS = ROOT / ".ci" / "lowest_pins.py"
#: the extras this project owns the versions of; `peers` and `opacus` are other projects' libraries
#: (the cross-check runs whatever version is installed) and `lint` pins exact tool versions
BOUNDED_EXTRAS = ("test", "proofs", "plot")


def _declared() -> list[Requirement]:
    reqs = [Requirement(r) for r in PROJECT["project"]["dependencies"]]
    for extra in BOUNDED_EXTRAS:
        reqs += [Requirement(r) for r in PROJECT["project"]["optional-dependencies"][extra]]
    return reqs


def _lower(req: Requirement) -> Version | None:
    lows = [Version(s.version) for s in req.specifier if s.operator == ">="]
    return lows[0] if len(lows) == 1 else None


def _pins(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(PINS), *args], capture_output=True, text=True, timeout=60)


def test_every_declared_dependency_has_one_lower_bound() -> None:
    missing = [str(r) for r in _declared() if _lower(r) is None]
    assert not missing, f"no single '>=' lower bound: {missing}"


def test_the_lower_bounds_are_the_versions_that_work() -> None:
    """The bounds found by installing each release (docs/install.md records what failed and why):
    python-flint 0.6.0 lacks ctx.workprec (README's first command exits 5), 0.7.x lacks
    fmpz_poly.truncate (every PLD query exits 5); gmpy2 2.1.x reports its mpq as a builtins type,
    so exactdp refused gmpy2.mpq input; mpmath 1.0 lacks log1p (1.1 has no wheel); matplotlib 3.7.0-3.7.2
    allow numpy 2, which their wheels cannot import."""
    lows = {r.name: _lower(r) for r in _declared()}
    assert lows["python-flint"] >= Version("0.8")
    assert lows["gmpy2"] >= Version("2.2")
    assert lows["mpmath"] >= Version("1.2.1")
    assert lows["matplotlib"] >= Version("3.7.3")


def test_the_ci_pins_are_derived_from_pyproject() -> None:
    r = _pins("--extra", "test", "--extra", "plot")
    assert r.returncode == 0, r.stderr
    expected = []
    for req in [Requirement(x) for x in PROJECT["project"]["dependencies"]] + [
            Requirement(x) for e in ("test", "plot") for x in PROJECT["project"]["optional-dependencies"][e]]:
        pin = f"{req.name}=={_lower(req)}"
        if pin not in expected:
            expected.append(pin)
    assert r.stdout.split() == expected
    core = _pins()
    assert core.stdout.split() == expected[: len(PROJECT["project"]["dependencies"])]


def test_the_pins_follow_a_changed_declaration(tmp_path: Path) -> None:
    """Change pyproject and the pins change: nothing in the CI step is written twice."""
    py = tmp_path / "pyproject.toml"
    py.write_text('[project]\nname = "x"\ndependencies = ["alpha>=1.2.3", "Beta_b[fast] >= 0.9, <2 ; python_version >= \'3.10\'"]\n')
    r = _pins("--pyproject", str(py))
    assert (r.returncode, r.stdout.split()) == (0, ["alpha==1.2.3", "Beta_b==0.9"]), r.stderr
    py.write_text('[project]\nname = "x"\ndependencies = ["alpha>=1.2.3", "gamma"]\n')
    r = _pins("--pyproject", str(py))
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.strip().splitlines() == [".ci/lowest_pins.py: error: 'gamma' declares no single '>=' lower bound"]


def test_ci_runs_the_lowest_step_with_derived_pins() -> None:
    run = (ROOT / ".ci" / "run").read_text()
    lowest = (ROOT / ".ci" / "lowest").read_text()
    assert re.search(r"^\.ci/lowest\b", run, flags=re.M), "the CI script does not run .ci/lowest"
    assert "lowest_pins.py" in lowest
    names = [r.name for r in _declared()]
    assert not [n for n in names if re.search(re.escape(n) + r"\s*==", lowest)], "a pin written by hand"


# -- the wheel and its packages -----------------------------------------------------------------

def test_the_package_list_is_every_package_and_the_proofs() -> None:
    """pyproject lists the packages (setuptools cannot find a mapped one): the list is the directories."""
    tool = PROJECT["tool"]["setuptools"]
    on_disk = sorted(".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "exactdp").rglob("__init__.py"))
    assert sorted(tool["packages"]) == sorted([*on_disk, "exactdp.proofs"])
    assert tool["package-dir"] == {"exactdp.proofs": "proofs"}
    assert (ROOT / "proofs" / "__init__.py").is_file() and (ROOT / "proofs" / "cli.py").is_file()


@pytest.mark.slow
def test_the_wheel_ships_the_derivations_and_the_command_finds_them(tmp_path: Path) -> None:
    """Build the wheel for real: proofs/ is in it as exactdp/proofs/, and the installed command runs it."""
    import zipfile

    dist = tmp_path / "dist"
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", str(ROOT), "-w", str(dist)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    (wheel,) = dist.glob("exactdp-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    wanted = {f"exactdp/proofs/{p.name}" for p in (ROOT / "proofs").glob("*.py")} | {"exactdp/proofs/README.md"}
    assert wanted <= names, sorted(wanted - names)
    assert not [n for n in names if n.startswith("proofs/")], "a top-level proofs package would shadow others"
    site = tmp_path / "site"
    r = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(site), str(wheel)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    code = ("import sys, exactdp.cli, exactdp.proofs; "
            f"assert exactdp.proofs.__file__.startswith({str(site)!r}), exactdp.proofs.__file__; "
            "sys.exit(exactdp.cli.main(['proofs', 'basic_composition']))")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"PYTHONPATH": str(site)}
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.startswith("PASS basic_composition: ")
