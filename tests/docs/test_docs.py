"""The project's own documentation (docs/): every citation of it resolves, no private working notes
are mentioned anywhere, and the reference values of docs/mathematics.md §6 are what exactdp computes.
"""

from __future__ import annotations

import io
import json
import os
import re
import shlex
import subprocess
import sys
from contextlib import redirect_stdout
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import pytest

from exactdp.cli import main as exactdp_main

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
CITING = ("exactdp", "proofs", "tables", "tests", "docs", "README.md")
SKIP_DIRS = {".git", "__pycache__", ".pytest_cache", ".hypothesis", ".mypy_cache", "build", "dist"}
BINARY = {".png", ".pdf", ".pyc", ".so", ".gz", ".whl", ".zip"}

#: "docs/NAME.md §N", "docs/NAME.md §N.M", "docs/NAME.md §N-§M" (JSON tables write § as \u00a7)
CITATION = re.compile(r"docs/([A-Za-z0-9_.-]+\.md)\s*§(\d+(?:\.\d+)?)(?:\s*-\s*§(\d+(?:\.\d+)?))?")


def _is_excluded_dir(name: str) -> bool:
    return name in SKIP_DIRS or name.startswith(".venv") or name.endswith(".egg-info")


def _text_files(top: Path) -> list[Path]:
    if top.is_file():
        return [top]
    out = []
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames[:] = [d for d in dirnames if not _is_excluded_dir(d)]
        out += [Path(dirpath) / f for f in filenames if Path(f).suffix not in BINARY]
    return out


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace").replace("\\u00a7", "§")


def _repository_files() -> list[Path]:
    """Every file of the repository outside .git: tracked and untracked-but-not-ignored files when
    this is a git checkout, else a walk that skips caches and virtual environments."""
    try:
        r = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                           cwd=ROOT, capture_output=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        r = None
    if r is not None and r.returncode == 0 and r.stdout:
        files = [ROOT / p for p in r.stdout.decode().split("\0") if p]
        return [f for f in files if f.is_file() and f.suffix not in BINARY]
    return _text_files(ROOT)


# -- 1. citations of docs/ resolve ------------------------------------------------------------

def headings(doc: Path) -> set[str]:
    """The section numbers of a docs page: every Markdown heading that starts with §N or §N.M."""
    found = set()
    for line in _read(doc).splitlines():
        m = re.match(r"^#{1,6}\s+§(\d+(?:\.\d+)?)(?=\s|$)", line)
        if m:
            found.add(m.group(1))
    return found


def _section_range(a: str, b: str | None) -> list[str]:
    if b is None:
        return [a]
    if "." not in a and "." not in b:
        return [str(n) for n in range(int(a), int(b) + 1)]
    return [a, b]


def citations() -> list[tuple[str, str, str]]:
    """(file citing, page, section) for every docs citation in the code, tables, proofs, tests, docs."""
    out = []
    for top in CITING:
        for f in _text_files(ROOT / top):
            for m in CITATION.finditer(_read(f)):
                for sec in _section_range(m.group(2), m.group(3)):
                    out.append((str(f.relative_to(ROOT)), m.group(1), sec))
    return out


def unresolved(cites: list[tuple[str, str, str]]) -> list[str]:
    bad = []
    cache: dict[str, set[str] | None] = {}
    for where, page, sec in cites:
        if page not in cache:
            cache[page] = headings(DOCS / page) if (DOCS / page).is_file() else None
        secs = cache[page]
        if secs is None:
            bad.append(f"{where}: docs/{page} does not exist")
        elif sec not in secs:
            bad.append(f"{where}: docs/{page} has no heading §{sec}")
    return sorted(set(bad))


def test_there_are_citations_of_every_main_page() -> None:
    pages = {page for _, page, _ in citations()}
    assert {"mathematics.md", "contracts.md"} <= pages


def test_every_docs_citation_resolves() -> None:
    cites = citations()
    assert len(cites) > 50
    assert unresolved(cites) == []


def test_the_resolver_can_fail() -> None:
    # built at run time, so that this file does not itself contain a dangling citation
    fake = [("x.py", "mathematics.md", "99"), ("x.py", "contracts.md", "1.7"), ("x.py", "nosuch" + ".md", "1")]
    assert len(unresolved(fake)) == 3
    assert unresolved([("x.py", "mathematics.md", "6"), ("x.py", "contracts.md", "1.5")]) == []
    m = CITATION.search("see docs/" + "mathematics.md §2-§4 and more")
    assert m and _section_range(m.group(2), m.group(3)) == ["2", "3", "4"]


def test_required_structure() -> None:
    math_secs = headings(DOCS / "mathematics.md")
    assert {str(n) for n in range(1, 9)} <= math_secs
    assert "7.9" in math_secs and "2.3" in math_secs
    titles = re.findall(r"^## (§\d .*)$", _read(DOCS / "mathematics.md"), flags=re.M)
    assert titles == [
        "§1 Definitions",
        "§2 Optimal heterogeneous composition (Murtagh-Vadhan)",
        "§3 Optimal homogeneous composition (KOV15)",
        "§4 Closed-form bounds",
        "§5 Symbolic facts checked in proofs/",
        "§6 Reference values",
        "§7 Specific mechanisms",
        "§8 Calibration",
        "§9 Neighbouring relations and sampling schemes",
    ]
    contract_secs = headings(DOCS / "contracts.md")
    assert {"1", "2", "3", "4"} | {f"1.{i}" for i in range(1, 7)} <= contract_secs
    index = _read(DOCS / "README.md")
    for page in DOCS.glob("*.md"):
        if page.name != "README.md":
            assert f"({page.name})" in index, f"docs/README.md does not list {page.name}"


# -- 2. no private working notes are mentioned ---------------------------------------------------

NOTES = [
    re.compile(r"REFERENCE\.md"),
    re.compile(r"ARCHITECTURE\.md"),
    re.compile(r"\bseeds?/"),
    re.compile(r"\b\d{3}_[0-9a-f]{16}(?:\.txt)?\b"),
    re.compile(r"\bseeds?\s+(?:documents?|posters?|slides?|transcriptions?|files?|notes?|\d{3})\b", re.I),
    re.compile(r"^\s*Seed:", re.M),
]


def notes_mentioned(text: str) -> list[str]:
    return [m.group(0) for pat in NOTES for m in pat.finditer(text)]


def test_no_file_mentions_the_private_notes() -> None:
    here = Path(__file__).resolve()
    bad = []
    for f in _repository_files():
        if f.resolve() == here:
            continue  # this file spells the patterns out
        hits = notes_mentioned(_read(f))
        if hits:
            bad.append(f"{f.relative_to(ROOT)}: {hits}")
    assert bad == []


def test_the_notes_detector_can_fail() -> None:
    for text in ["see " + "REFERENCE" + ".md section 2", "as in ARCHITECTURE" + ".md", "the seed" + " poster says",
                 "in seeds" + "/001_cfcc7a60a0ac808c.txt", "    Seed" + ": min{k eps}"]:
        assert notes_mentioned(text), text
    for text in ["rng = random.Random(seed)", "Cases (fixed seed):", "@pytest.mark.parametrize('seed', range(6))"]:
        assert not notes_mentioned(text), text


# -- 3. the reference values of docs/mathematics.md §6 -------------------------------------------

ROW = re.compile(r"^\|\s*(?P<quantity>.+?)\s*\|\s*`(?P<value>[^`]+)`(?P<exact>\s*\(exact\))?\s*\|\s*`(?P<command>[^`]+)`\s*\|\s*$")


def reference_rows() -> list[dict[str, str]]:
    text = _read(DOCS / "mathematics.md")
    section = text.split("## §6 Reference values", 1)[1].split("\n## §7", 1)[0]
    rows = []
    for line in section.splitlines():
        m = ROW.match(line)
        if m:
            rows.append({k: (v or "").strip() for k, v in m.groupdict().items()})
    return rows


def significant_digits(value: str) -> int:
    return len(value.replace("-", "").replace(".", "").lstrip("0"))


def _query(command: str, digits: int) -> dict:
    argv = shlex.split(command)
    assert argv[0] == "exactdp", command
    out = io.StringIO()
    with redirect_stdout(out):
        rc = exactdp_main(argv[1:] + ["--json", "--digits", str(digits)])
    assert rc == 0, command
    return json.loads(out.getvalue())


def _python_enclosure(command: str) -> tuple[Fraction, Fraction]:
    argv = shlex.split(command)
    assert argv[:2] == ["python", "-c"], command
    r = subprocess.run([sys.executable, "-c", argv[2]], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    lo, hi = r.stdout.strip().strip("[]").split(",")
    return Fraction(lo.strip()), Fraction(hi.strip())


def rounding_agrees(value: str, lower: Fraction, upper: Fraction) -> bool:
    """Whether ``value`` is the true value (in [lower, upper]) rounded to nearest at its last digit."""
    v = Fraction(Decimal(value))
    exponent = Decimal(value).adjusted() - significant_digits(value) + 1
    half_ulp = Fraction(10) ** exponent / 2
    return v - half_ulp <= lower and upper <= v + half_ulp


def check_row(row: dict[str, str]) -> str | None:
    """None when the row agrees with exactdp's computation, else why not."""
    value, command = row["value"], row["command"]
    if command.startswith("python -c"):
        lo, hi = _python_enclosure(command)
        return None if rounding_agrees(value, lo, hi) else f"{value} vs [{lo}, {hi}]"
    result = _query(command, significant_digits(value) + 12)
    if row["exact"]:
        if result["exact"] is None or Fraction(result["exact"]) != Fraction(value):
            return f"{value} is marked exact, exactdp gives exact={result['exact']}"
        return None
    m = re.search(r"exactly `log\(([^)]+)\)`", row["quantity"])
    if m and result.get("exact_log") != f"log({m.group(1)})":
        return f"log({m.group(1)}) vs exact_log={result.get('exact_log')}"
    lo, hi = Fraction(result["lower"]), Fraction(result["upper"])
    return None if rounding_agrees(value, lo, hi) else f"{value} vs [{result['lower']}, {result['upper']}]"


ROWS = reference_rows()


def test_section_6_has_the_reference_values() -> None:
    assert len(ROWS) >= 25
    assert all(r["command"].startswith(("exactdp ", "python -c")) for r in ROWS)


@pytest.mark.parametrize("row", ROWS, ids=[f"{r['command'][8:60]}" for r in ROWS])
def test_reference_value_agrees_with_exactdp(row: dict[str, str]) -> None:
    assert check_row(row) is None


def test_a_wrong_reference_value_is_caught() -> None:
    row = next(r for r in ROWS if r["command"] == "exactdp delta --eps 0.1 --delta 0.001 --k 30 --at-eps 1")
    assert check_row(row) is None
    last = row["value"][-1]
    assert check_row(dict(row, value=row["value"][:-1] + ("0" if last != "0" else "1"))) is not None
    assert check_row(dict(row, value=row["value"] + "9")) is not None  # one digit too many, and wrong
    exact_row = next(r for r in ROWS if r["exact"])
    assert check_row(dict(exact_row, value=exact_row["value"] + "1")) is not None
    log_row = next(r for r in ROWS if "exactly `log(" in r["quantity"])
    assert check_row(dict(log_row, quantity="exactly `log(1314253/240129)`")) is not None


def test_two_values_against_an_independent_mpmath_sum() -> None:
    """Not exactdp at all: the KOV15 / MV Thm 1.4 sum at 50 digits (docs/mathematics.md §3)."""
    mpmath = pytest.importorskip("mpmath")
    mp = mpmath.mp

    def delta_opt(eps: str, delta: str, k: int, eps_g: str):
        e, d, g = mp.mpf(eps), mp.mpf(delta), mp.mpf(eps_g)
        x, r = mp.exp(e), mp.exp(g)
        s = mp.fsum(mp.binomial(k, l) * (x**l - r * x**(k - l)) for l in range(k + 1) if (2 * l - k) * e > g)
        return 1 - (1 - d) ** k * (1 - s / (1 + x) ** k)

    values = {r["command"]: r["value"] for r in ROWS}
    with mpmath.workdps(50):
        _compare_two(values, delta_opt, mp)


def _compare_two(values, delta_opt, mp) -> None:
    for cmd, args in [("exactdp delta --eps 0.1 --delta 0.001 --k 30 --at-eps 1", ("0.1", "0.001", 30, "1")),
                      ("exactdp delta --eps 0.4 --delta 0.1 --k 10 --at-eps 0.8", ("0.4", "0.1", 10, "0.8"))]:
        v = values[cmd]
        ulp = mp.mpf(10) ** (Decimal(v).adjusted() - significant_digits(v) + 1)
        assert abs(delta_opt(*args) - mp.mpf(v)) <= ulp / 2


# -- §7 values that have closed forms: recomputed with mpmath ----------------------------------

def test_section_7_subsampled_gaussian_values() -> None:
    mpmath = pytest.importorskip("mpmath")
    mp = mpmath.mp
    text = _read(DOCS / "mathematics.md")

    def remove(s, q, eps, d=1):
        s, q, eps, d = map(mp.mpf, (s, q, eps, d))
        xs = s**2 / d * mp.log((mp.exp(eps) - (1 - q)) / q) + d / 2
        tail = lambda z: mp.ncdf(-z)
        return (1 - q) * tail(xs / s) + q * tail((xs - d) / s) - mp.exp(eps) * tail(xs / s)

    with mpmath.workdps(30):
        for (s, q, eps), shown in [(("1", "0.01", "0.01"), "0.0019002737053015712141"),
                                   (("0.8", "0.125", "0.5"), "0.010891765799201512165")]:
            assert f"`{shown}`" in text
            ulp = mp.mpf(10) ** (Decimal(shown).adjusted() - significant_digits(shown) + 1)
            assert abs(remove(s, q, eps) - mp.mpf(shown)) <= ulp / 2
