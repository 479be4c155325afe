"""The golden-table machinery: deterministic writers, outward rounding, manifest, atomic builds.

These tests build small tables of the test's own rows (exact rationals and Steinke's noise scale,
whose value the test recomputes with mpmath), so they do not depend on the generated tables/.
"""

from __future__ import annotations

import csv
import io
import json
from fractions import Fraction
from pathlib import Path

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exactdp.golden import load_table
from exactdp.golden.build import build
from exactdp.golden.manifest import check_manifest, read_manifest
from exactdp.golden.specs import compute_row
from exactdp.golden.table import RowSpec, TableSpec
from exactdp.golden.writers import (COLUMNS, check_row, csv_text, enclosure_cells, json_text, latex_text,
                                    markdown_text)
from exactdp.core.numbers import arb_of_fraction
from exactdp.core.enclosure import Enclosure, certify

mpmath.mp.dps = 60


def _rows_noise() -> list[RowSpec]:
    rows = []
    for k in (1, 3, 1000):
        rows.append(RowSpec("t_noise", "noise_scale", "basic-laplace", "1/3", "0", str(k), kind="noise"))
        rows.append(RowSpec("t_noise", "noise_scale", "steinke-advanced", "0.5", "0.000001", str(k), kind="noise",
                            note='quote " and, comma'))
    return rows


SPEC = TableSpec("t_noise", "test table", "rows of the test's own", "test", _rows_noise, figure="repro_steinke_noise")


def _oracle_steinke(eps: str, delta: str, k: int) -> mpmath.mpf:
    e, d = mpmath.mpf(Fraction(eps).numerator) / Fraction(eps).denominator, mpmath.mpf(delta)
    rho = e**2 / (4 * mpmath.log(1 / d) + 4 * e)
    return mpmath.sqrt(k / (2 * rho))


def test_rows_match_an_independent_evaluation() -> None:
    for spec in _rows_noise():
        row = compute_row(spec)
        check_row(row)
        if spec.method == "basic-laplace":
            assert row["exact"] == str(Fraction(int(spec.k)) / Fraction(spec.eps))
        else:
            v = _oracle_steinke(spec.eps, spec.delta, int(spec.k))
            assert mpmath.mpf(row["lower"]) <= v <= mpmath.mpf(row["upper"])
            assert abs(mpmath.mpf(row["upper"]) - mpmath.mpf(row["lower"])) <= v * mpmath.mpf(10) ** -29
            assert float(row["float_lower"]) <= v <= float(row["float_upper"])


@settings(max_examples=60, deadline=None)
@given(st.fractions(min_value=Fraction(1, 10**12), max_value=10**12), st.integers(3, 40))
def test_outward_rounding_and_directed_floats(q: Fraction, digits: int) -> None:
    enc = Enclosure.exact_value(q, digits)
    cells = enclosure_cells(enc)
    assert Fraction(cells["lower"]) <= q <= Fraction(cells["upper"])
    assert Fraction(float(cells["float_lower"])) <= q <= Fraction(float(cells["float_upper"]))
    assert Fraction(cells["exact"]) == q
    # a certified irrational: sqrt(q) lies in the outward-rounded strings (oracle: mpmath, 60 digits)
    s = certify(lambda: arb_of_fraction(q).sqrt(), digits)
    c = enclosure_cells(s)
    true = mpmath.sqrt(mpmath.mpf(q.numerator) / q.denominator)
    assert mpmath.mpf(c["lower"]) <= true <= mpmath.mpf(c["upper"])
    assert float(c["float_lower"]) <= true <= float(c["float_upper"])


def test_infinite_enclosure_cells() -> None:
    c = enclosure_cells(Enclosure.infinite(30))
    assert (c["lower"], c["upper"], c["float_lower"], c["float_upper"], c["exact"]) == ("inf", "inf", "inf", "inf", "")


def test_writers_are_deterministic_and_round_trip() -> None:
    rows = [compute_row(r) for r in _rows_noise()]
    a, b = csv_text(rows), csv_text([dict(r) for r in rows])
    assert a == b and a.endswith("\n") and "\r" not in a
    parsed = list(csv.DictReader(io.StringIO(a)))
    assert parsed == rows and tuple(parsed[0]) == COLUMNS
    meta = {"table": "t", "title": "T", "description": "d", "source": "s"}
    j = json_text(meta, rows)
    assert j == json_text(dict(reversed(list(meta.items()))), rows)
    obj = json.loads(j)
    assert obj["rows"] == rows and obj["columns"] == list(COLUMNS) and obj["schema"] == 1
    assert json.loads(json_text(meta, []))["rows"] == []


def test_check_row_rejects_other_schemas() -> None:
    row = compute_row(_rows_noise()[0])
    with pytest.raises(ValueError):
        check_row({**row, "extra": ""})
    with pytest.raises(ValueError):
        check_row({**row, "k": 3})
    with pytest.raises(ValueError):
        csv_text([{c: "" for c in reversed(COLUMNS)}])


def test_exports_escape_and_use_booktabs() -> None:
    rows = [compute_row(r) for r in _rows_noise()]
    rows[0] = {**rows[0], "method": "a_b|c&d%"}
    tex = latex_text(rows, caption="x_y")
    assert "\\toprule" in tex and "\\midrule" in tex and "\\bottomrule" in tex
    assert "a\\_b|c\\&d\\%" in tex and "\\caption{x\\_y}" in tex
    assert tex.count(" \\\\\n") == len(rows) + 1
    md = markdown_text(rows, columns=["method", "k", "lower"])
    lines = md.splitlines()
    assert lines[0] == "| method | k | lower |" and lines[1] == "|---|---|---|"
    assert "a_b\\|c&d%" in lines[2] and len(lines) == len(rows) + 2
    with pytest.raises(ValueError):
        markdown_text(rows, columns=["nope"])


def test_build_is_byte_reproducible_with_jobs_and_verified_by_manifest(tmp_path: Path) -> None:
    a = build(tmp_path / "a", specs=[SPEC], progress=False)
    b = build(tmp_path / "b", specs=[SPEC], progress=False, jobs=2)
    files = sorted(p.relative_to(a).as_posix() for p in a.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(b).as_posix() for p in b.rglob("*") if p.is_file())
    for f in files:
        assert (a / f).read_bytes() == (b / f).read_bytes(), f
    from exactdp import __version__

    assert check_manifest(a, version=__version__) == []
    man = read_manifest(a)
    assert man["version"] == __version__ and "t_noise.csv" in man["files"]
    # the figures are rendered twice per build; both builds agree, so they are listed with hashes
    assert "figures/repro_steinke_noise.png" in man["files"] and man["unverified"] == []
    assert load_table("t_noise", directory=a) == [compute_row(r) for r in _rows_noise()]
    # tampering is detected, naming the file; so are a wrong version and an unlisted file
    p = a / "t_noise.csv"
    p.write_bytes(p.read_bytes().replace(b"1000", b"1001", 1))
    assert check_manifest(a)[0].startswith("t_noise.csv: sha256")
    assert "generator version" in check_manifest(b, version="0.0.0")[0]
    # an unlisted file is the user's: not a difference, unless strict
    (b / "stray.txt").write_text("x")
    assert check_manifest(b) == []
    assert check_manifest(b, strict=True) == ["stray.txt: present but not listed in MANIFEST.json"]


def test_failed_build_leaves_the_old_tables_untouched(tmp_path: Path) -> None:
    out = build(tmp_path / "t", specs=[SPEC], progress=False, figures=False)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    bad = TableSpec("t_bad", "bad", "bad", "bad",
                    lambda: [RowSpec("t_bad", "delta", "no-such-method", "1", "0", "2", at="1")])
    with pytest.raises(Exception):
        build(out, specs=[SPEC, bad], progress=False, figures=False)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert [p.name for p in tmp_path.iterdir()] == ["t"]  # no temporary directory left behind


def test_cli_export_and_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from exactdp.cli.tables import main

    out = build(tmp_path / "t", specs=[SPEC], progress=False, figures=False)
    assert main(["export", "repro_steinke_noise", "--format", "latex", "--dir", str(out)]) == 2  # not in dir
    capsys.readouterr()
    assert main(["export", "no_such_table", "--format", "markdown"]) == 2
    assert "must be one of" in capsys.readouterr().err
    assert main(["verify", "--dir", str(tmp_path / "missing"), "--quiet"]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert main(["list"]) == 0
    assert "errata" in capsys.readouterr().out


def test_doctests_of_the_golden_modules() -> None:
    import doctest
    import importlib

    for name in ("exactdp.golden.writers", "exactdp.golden.specs", "exactdp.golden.errata", "exactdp.plots"):
        result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
        assert result.failed == 0, name


def test_verify_names_the_first_difference(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from exactdp import __version__
    from exactdp.cli.tables import main
    from exactdp.golden.manifest import manifest_text
    from exactdp.golden.verify import verify

    out = build(tmp_path / "t", tables=["kov15_grid"], progress=False, figures=False)
    assert verify(out, tables=["kov15_grid"], progress=False) == []
    # change one value and re-sign the manifest: the hashes match, the recomputation does not
    p = out / "kov15_grid.csv"
    lines = p.read_text().splitlines(keepends=True)
    assert ",optimal," in lines[1]
    lines[1] = lines[1].replace(",optimal,", ",optimaX,", 1)
    p.write_text("".join(lines))
    files = [q.relative_to(out).as_posix() for q in out.rglob("*") if q.is_file() and q.name != "MANIFEST.json"]
    (out / "MANIFEST.json").write_text(manifest_text(out, files, version=__version__))
    problems = verify(out, tables=["kov15_grid"], progress=False)
    assert problems and problems[0].startswith("kov15_grid.csv line 2:")
    assert main(["verify", "--dir", str(out), "--only", "kov15_grid", "--quiet"]) == 1
    assert "kov15_grid.csv line 2" in capsys.readouterr().err
