"""The golden table rdp_subsampled_gaussian (issue 28 §5) against an independent evaluation: the
Mironov-Talwar-Zhang binomial sum written here in mpmath at 40 digits (no code shared with the engine).
"""

from __future__ import annotations

import json
from fractions import Fraction
from itertools import product
from math import comb
from pathlib import Path

import mpmath
import pytest

from exactdp.golden import load_table
from exactdp.golden.build import build
from exactdp.golden.manifest import read_manifest

TABLES_DIR = Path(__file__).resolve().parents[2] / "tables"
NAME = "rdp_subsampled_gaussian"
SIGMAS, QS, ORDERS = ("0.5", "1", "2", "4"), ("0.001", "0.01", "0.1", "0.5"), (2, 3, 4, 8, 16, 32, 64, 128, 256)

needs_tables = pytest.mark.skipif(not (TABLES_DIR / "MANIFEST.json").is_file(), reason="tables/ not built")


def M(s: str) -> mpmath.mpf:
    q = Fraction(s)
    return mpmath.mpf(q.numerator) / q.denominator


def divergence(sigma: str, q: str, alpha: int) -> mpmath.mpf:
    """D_alpha((1-q) N(0, s^2) + q N(1, s^2) || N(0, s^2)): the binomial sum, mpmath at 40 digits."""
    with mpmath.workdps(40):
        s2, qq = M(sigma) ** 2, M(q)
        tot = mpmath.fsum(comb(alpha, k) * (1 - qq) ** (alpha - k) * qq ** k * mpmath.exp((k * k - k) / (2 * s2))
                          for k in range(alpha + 1))
        return mpmath.log(tot) / (alpha - 1)


def check_row(row: dict[str, str]) -> None:
    """The row's enclosure holds the reference and certifies 20 digits; its floats are directed."""
    (spec,) = json.loads(row["mechanisms"])
    params = dict(kv.split("=") for kv in spec.split(":", 1)[1].split(","))
    ref = divergence(params["sigma"], params["q"], int(row["at"]))
    with mpmath.workdps(40):
        lo, hi = M(row["lower"]), M(row["upper"])
        slack = abs(ref) * mpmath.mpf(10) ** -36  # the reference's own error is far below this
        assert lo - slack <= ref <= hi + slack, (row["mechanisms"], row["at"], row["lower"], row["upper"],
                                                 mpmath.nstr(ref, 30))
        assert (hi - lo) / ref <= mpmath.mpf(10) ** -20, row
        assert int(row["digits"]) == 20
        assert mpmath.mpf(float(row["float_lower"])) <= lo and hi <= mpmath.mpf(float(row["float_upper"]))
        assert float(row["float_lower"]) <= ref <= float(row["float_upper"])


@needs_tables
def test_every_row_against_the_mpmath_binomial_sum() -> None:
    rows = load_table(NAME, directory=TABLES_DIR)
    assert len(rows) == len(SIGMAS) * len(QS) * len(ORDERS)
    grid = [(f'["gaussian:sigma={s},q={q}"]', str(a)) for s, q, a in product(SIGMAS, QS, ORDERS)]
    assert [(r["mechanisms"], r["at"]) for r in rows] == grid
    for r in rows:
        assert r["query"] == "rdp" and r["options"] == "direction=remove" and "Mironov-Talwar-Zhang" in r["source"]
        check_row(r)


@needs_tables
def test_the_check_fails_on_a_wrong_row() -> None:
    """The test can fail: a row whose upper end is a little too low, or whose value is the divergence
    of a neighbouring order, is caught."""
    rows = load_table(NAME, directory=TABLES_DIR)
    r = dict(rows[40])
    hi = Fraction(r["upper"])
    r["upper"] = str(float(hi - (hi - Fraction(r["lower"])) * 10**3))  # below the true value
    r["lower"] = str(float(Fraction(r["upper"]) * (1 - Fraction(1, 10**21))))
    with pytest.raises(AssertionError):
        check_row(r)
    shifted = dict(rows[40], at=str(int(rows[40]["at"]) * 2 if rows[40]["at"] != "256" else 128))
    with pytest.raises(AssertionError):
        check_row(shifted)


@needs_tables
def test_the_table_regenerates_byte_for_byte(tmp_path: Path) -> None:
    out = build(tmp_path / "tables", tables=[NAME], progress=False, figures=False)
    for ext in ("csv", "json"):
        assert (out / f"{NAME}.{ext}").read_bytes() == (TABLES_DIR / f"{NAME}.{ext}").read_bytes()
        assert f"{NAME}.{ext}" in read_manifest(TABLES_DIR)["files"]
