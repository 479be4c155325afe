"""Shared checks of the golden tables of issue 27 §7 / issue 28 §5 against independent mpmath references."""

from __future__ import annotations

import json
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path

import mpmath
import pytest

TABLES_DIR = Path(__file__).resolve().parents[2] / "tables"
needs_tables = pytest.mark.skipif(not (TABLES_DIR / "MANIFEST.json").is_file(), reason="tables/ not built")


def M(s: str) -> mpmath.mpf:
    """An exact table string (decimal, p/q, 1e-30) as an mpmath number."""
    q = Fraction(s)
    return mpmath.mpf(q.numerator) / q.denominator


def spec_params(row: dict[str, str]) -> tuple[str, dict[str, str]]:
    """The kind and the key=value parameters of a one-spec ``mechanisms`` cell."""
    (spec,) = json.loads(row["mechanisms"])
    kind, rest = spec.split(":", 1)
    return kind, dict(kv.split("=") for kv in rest.split(","))


def check_value(row: dict[str, str], value: mpmath.mpf, rel: mpmath.mpf) -> None:
    """[lower, upper] holds ``value`` (up to the reference's own relative error ``rel``), the floats
    are directed, and the printed width meets the digits column."""
    lo, hi = M(row["lower"]), M(row["upper"])
    slack = rel * max(abs(value), mpmath.mpf(10) ** -300)
    assert lo - slack <= value <= hi + slack, (row["mechanisms"], row["query"], row["at"], row["lower"],
                                               row["upper"], mpmath.nstr(value, 25))
    # the floats bound the exact enclosure (not its printed decimals): they hold the value too
    assert mpmath.mpf(float(row["float_lower"])) - slack <= value <= mpmath.mpf(float(row["float_upper"])) + slack
    if value != 0 and int(row["digits"]) > 0:
        assert (hi - lo) / abs(value) <= mpmath.mpf(10) ** (-int(row["digits"]) + 1), row


def check_epsilon(row: dict[str, str], delta_of: Callable[[mpmath.mpf], mpmath.mpf], rel: mpmath.mpf) -> None:
    """eps at delta_g: delta(eps) is non-increasing, so delta(upper) <= delta_g <= delta(lower)
    (up to the reference's relative error ``rel``), and the width meets the digits column."""
    dg = M(row["at"])
    lo, hi = M(row["lower"]), M(row["upper"])
    assert lo <= hi
    assert delta_of(hi) <= dg * (1 + rel), (row["mechanisms"], row["at"], row["upper"], mpmath.nstr(delta_of(hi), 20))
    if lo > 0:
        assert delta_of(lo) >= dg * (1 - rel), (row["mechanisms"], row["at"], row["lower"],
                                               mpmath.nstr(delta_of(lo), 20))
    f_lo, f_hi = mpmath.mpf(float(row["float_lower"])), mpmath.mpf(float(row["float_upper"]))
    assert delta_of(f_hi) <= dg * (1 + rel) and (f_lo <= 0 or delta_of(f_lo) >= dg * (1 - rel)), row
    if lo > 0:
        assert (hi - lo) / lo <= mpmath.mpf(10) ** (-int(row["digits"]) + 1), row


def corrupted(row: dict[str, str]) -> dict[str, str]:
    """The row with its enclosure moved just above itself (a wrong value at the row's own width)."""
    lo, hi = Fraction(row["lower"]), Fraction(row["upper"])
    shift = max(hi - lo, abs(hi) * Fraction(1, 10**6)) * 10
    lo2, hi2 = lo + shift + (hi - lo), hi + shift + (hi - lo)
    return dict(row, lower=str(float(lo2)), upper=str(float(hi2)), float_lower=repr(float(lo2)),
                float_upper=repr(float(hi2)))
