"""The committed golden tables: manifest, byte-for-byte regeneration of a subset, and sampled rows
checked against independent evaluations written here from the formulas (mpmath at 60 digits:
the KOV15 / Murtagh-Vadhan direct sums, bisection for eps, the closed-form bounds), plus the
published values of docs/mathematics.md §6.
"""

from __future__ import annotations

import json
from fractions import Fraction
from itertools import product
from math import comb
from pathlib import Path

import mpmath
import pytest

from exactdp import __version__
from exactdp.golden import load_table, tables_dir
from exactdp.golden.build import build
from exactdp.golden.manifest import check_manifest, read_manifest
from exactdp.golden.specs import TABLES
from exactdp.golden.writers import COLUMNS

TABLES_DIR = Path(__file__).resolve().parents[2] / "tables"
SUBSET = ["kov15_grid", "exact_rational", "errata", "repro_privacy_region", "repro_steinke_noise"]

mp = mpmath.mp
mp.dps = 60
SLACK = mpmath.mpf(10) ** -45  # the oracle's own error is far below this; the tables' widths far above


def M(s: str) -> mpmath.mpf:
    """An exact table string as an mpmath number (decimals, p/q, log(p/q))."""
    s = s.strip()
    if s.startswith("log(") and s.endswith(")"):
        return mpmath.log(M(s[4:-1]))
    q = Fraction(s)
    return mpmath.mpf(q.numerator) / q.denominator


def groups_of(row: dict[str, str]) -> list[tuple[mpmath.mpf, Fraction, int]]:
    if row["mechanisms"]:
        return [(M(m[0]), Fraction(m[1]), int(m[2]) if len(m) > 2 else 1) for m in json.loads(row["mechanisms"])]
    return [(M(row["eps"]), Fraction(row["delta"]), int(row["k"]))]


def delta_opt(groups: list[tuple[mpmath.mpf, Fraction, int]], eps_g: mpmath.mpf) -> mpmath.mpf:
    """Optimal total delta at eps_g: MV Thm 1.5 summed over subsets, grouped by how many members of
    each group of equal mechanisms a subset takes (docs/mathematics.md §2; KOV15 when one group)."""
    keep, den = mpmath.mpf(1), mpmath.mpf(1)
    for e, d, c in groups:
        keep *= (1 - mpmath.mpf(d.numerator) / d.denominator) ** c
        den *= (1 + mpmath.exp(e)) ** c
    total = sum(e * c for e, _, c in groups)
    s = mpmath.mpf(0)
    for js in product(*(range(c + 1) for _, _, c in groups)):
        es = sum(j * e for j, (e, _, _) in zip(js, groups))
        if es - (total - es) > eps_g:
            mult = 1
            for j, (_, _, c) in zip(js, groups):
                mult *= comb(c, j)
            s += mult * (mpmath.exp(es) - mpmath.exp(eps_g) * mpmath.exp(total - es))
    return 1 - keep * (1 - s / den)


def check_enclosure(row: dict[str, str], value: mpmath.mpf) -> None:
    lo, hi = M(row["lower"]), M(row["upper"])
    assert lo - SLACK * abs(value) <= value <= hi + SLACK * abs(value), (row, mpmath.nstr(value, 40))
    if row["exact"]:
        assert abs(M(row["exact"]) - value) <= SLACK * max(abs(value), 1), row
    assert float(row["float_lower"]) <= value <= float(row["float_upper"]), row
    if value != 0:
        # outward rounding to `digits` significant digits may cross a power of 10 (0.99..9 | 1.0..01)
        assert (hi - lo) / abs(value) <= mpmath.mpf(10) ** (-int(row["digits"]) + 2), row


def check_epsilon_row(row: dict[str, str], groups: list[tuple[mpmath.mpf, Fraction, int]]) -> None:
    """eps at total delta_g: delta_opt is non-increasing in eps_g, so delta_opt(upper) <= delta_g
    and (when lower > 0) delta_opt(lower) >= delta_g; inf exactly when delta_g < 1 - prod(1-delta_i)."""
    delta_g = Fraction(row["at"])
    keep = Fraction(1)
    for _, d, c in groups:
        keep *= (1 - d) ** c
    if row["upper"] == "inf":
        assert delta_g < 1 - keep, row
        return
    assert delta_g >= 1 - keep, row
    dg = M(row["at"])
    assert delta_opt(groups, M(row["upper"])) <= dg * (1 + SLACK), row
    lo = M(row["lower"])
    if lo > 0:
        assert delta_opt(groups, lo) >= dg * (1 - SLACK), row
        assert (M(row["upper"]) - lo) / lo <= mpmath.mpf(10) ** -29, row
    else:
        assert delta_opt(groups, mpmath.mpf(0)) <= dg * (1 + SLACK), row


needs_tables = pytest.mark.skipif(not (TABLES_DIR / "MANIFEST.json").is_file(), reason="tables/ not built")


@needs_tables
def test_manifest_matches_the_files_and_version() -> None:
    assert check_manifest(TABLES_DIR, version=__version__) == []
    man = read_manifest(TABLES_DIR)
    for t in TABLES:
        assert f"{t.name}.csv" in man["files"] and f"{t.name}.json" in man["files"]
    assert sum(1 for f in man["files"] if f.startswith("figures/")) >= 8  # PNG + SVG of the reproductions


@needs_tables
def test_a_subset_regenerates_byte_for_byte(tmp_path: Path) -> None:
    out = build(tmp_path / "tables", tables=SUBSET, progress=False, jobs=2)
    compared = 0
    for p in sorted(out.rglob("*")):
        rel = p.relative_to(out).as_posix()
        if p.is_file() and rel not in ("README.md", "MANIFEST.json"):
            if rel.startswith("figures/") and rel in read_manifest(TABLES_DIR)["unverified"]:
                continue
            assert p.read_bytes() == (TABLES_DIR / rel).read_bytes(), rel
            compared += 1
    assert compared >= 2 * len(SUBSET)


@needs_tables
def test_schema_csv_and_json_hold_the_same_rows() -> None:
    import csv

    for t in TABLES:
        with open(TABLES_DIR / f"{t.name}.csv", newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
        assert rows == load_table(t.name, directory=TABLES_DIR), t.name
        assert tuple(rows[0]) == COLUMNS
        for r in rows:
            assert (r["k"] == "") == (r["mechanisms"] != ""), r
    assert tables_dir() == TABLES_DIR  # a source checkout finds its own tables


def by(table: str, **match: str) -> list[dict[str, str]]:
    return [r for r in load_table(table, directory=TABLES_DIR) if all(r[k] == v for k, v in match.items())]


@needs_tables
def test_kov15_grid_against_the_direct_sum() -> None:
    rows = load_table("kov15_grid", directory=TABLES_DIR)
    assert len(rows) == 16 + 6 + 16
    for r in rows:
        check_enclosure(r, delta_opt(groups_of(r), M(r["at"])))


@needs_tables
def test_published_values_reference_section_6() -> None:
    def within(row: dict[str, str], published: str) -> None:
        v = mpmath.mpf(published)
        assert M(row["lower"]) - mpmath.mpf(10) ** -(len(published) - 3) <= v <= M(row["upper"]) + mpmath.mpf(10) ** -(len(published) - 3), row

    within(by("kov15_grid", eps="0.1", k="30", at="1")[0], "0.03981841052213057502284336")
    within(by("kov15_grid", eps="0.1", k="30", at="2")[0], "0.0295865807017377067330572")
    within(by("kov15_grid", eps="0.4", k="10", at="0.8")[0], "0.7402118011984184315643465")
    within(by("repro_kov15_comparison", method="optimal", at="0.05")[0], "0.8463026344747974060804514")
    het = '[["0.1","0"],["0.2","0"],["0.3","0"],["0.5","0"],["0.7","0"]]'
    within(by("heterogeneous", method="optimal", mechanisms=het, at="0.6")[0], "0.1952405344097087430920803")
    within(by("heterogeneous", method="optimal", mechanisms=het, at="0.01")[0], "1.643345315277604654141905")
    assert by("heterogeneous", method="optimal", mechanisms='[["1","0.1"],["2","0.2"]]', at="3")[0]["exact"] == "0.28"
    # e^eps = 3/2, k = 10: delta_1..delta_5 exactly (docs/mathematics.md §3)
    grid = {r["note"]: r["exact"] for r in by("exact_rational", eps="log(1.5)", k="10") if r["note"].startswith("i=")}
    assert [Fraction(grid[f"i={i}"]) for i in range(1, 6)] == [
        Fraction(6561, 1953125), Fraction(53217, 1953125), Fraction(205173, 1953125),
        Fraction(505989, 1953125), Fraction(182369, 390625)]
    # dp_accounting's grid answers 22 and 20 and the optimum between grid points
    assert [r["exact"] for r in by("errata", method="dp_accounting-advanced_composition")] == ["22", "20"]
    opt = by("errata", method="optimal", eps="1", at="0.06")[0]
    within(opt, "21.7096126245")
    # eps=0.1, k=30, pure, delta_g=1e-3: the closed forms and the optimum
    for m, v in (("basic", "3"), ("drv10", "2.3513548815514764138"), ("kov15-3.4", "2.0957506835726820081"),
                 ("steinke", "2.1858421273245335394"), ("optimal", "1.4811439805399072046")):
        within(by("bounds_epsilon", method=m, eps="0.1", delta="0", k="30", at="0.001")[0], v)


@needs_tables
def test_sampled_optimal_rows_against_independent_sums() -> None:
    rows = [r for r in load_table("optimal_delta", directory=TABLES_DIR) if int(r["k"]) <= 1000]
    for r in rows[::9]:
        check_enclosure(r, delta_opt(groups_of(r), M(r["at"])))
    rows = [r for r in load_table("optimal_epsilon", directory=TABLES_DIR) if int(r["k"]) <= 100]
    for r in rows[::5]:
        check_epsilon_row(r, groups_of(r))
    het = load_table("heterogeneous", directory=TABLES_DIR)
    for r in [r for r in het if r["method"] == "optimal"][::3]:
        if r["query"] == "delta":
            check_enclosure(r, delta_opt(groups_of(r), M(r["at"])))
        else:
            check_epsilon_row(r, groups_of(r))
    for r in load_table("exact_rational", directory=TABLES_DIR):
        if r["query"] == "delta":
            check_enclosure(r, delta_opt(groups_of(r), M(r["at"])))
        else:
            check_epsilon_row(r, groups_of(r))


@needs_tables
def test_sampled_bounds_against_their_formulas() -> None:
    for r in load_table("bounds_epsilon", directory=TABLES_DIR)[::7]:
        e, d, k, dg = M(r["eps"]), Fraction(r["delta"]), int(r["k"]), Fraction(r["at"])
        if r["method"] == "basic" and k <= 1000:  # (1-delta)^k exactly is slow beyond
            # (k eps, k delta): eps_g = k eps when delta_g >= 1-(1-delta)^k (docs/mathematics.md §4), else inf
            if dg >= 1 - (1 - d) ** k:
                check_enclosure(r, k * e)
            else:
                assert r["upper"] == "inf", r
        elif r["method"] == "drv10" and dg > k * d:
            v = mpmath.sqrt(2 * k * mpmath.log(1 / M(format(dg - k * d)))) * e + k * e * (mpmath.exp(e) - 1)
            check_enclosure(r, v)
        elif r["method"] == "steinke" and dg > k * d:
            v = k * e**2 / 2 + mpmath.sqrt(2 * mpmath.log(1 / M(format(dg - k * d))) * k * e**2)
            check_enclosure(r, v)
    # every closed-form bound is an upper bound on the optimum (docs/mathematics.md §4)
    rows = load_table("bounds_epsilon", directory=TABLES_DIR)
    opt = {(r["eps"], r["delta"], r["k"], r["at"]): r for r in rows if r["method"] == "optimal"}
    for r in rows:
        o = opt[(r["eps"], r["delta"], r["k"], r["at"])]
        if r["lower"] != "inf" and o["upper"] != "inf":
            assert Fraction(r["upper"]) >= Fraction(o["lower"]), (r, o)
        elif o["upper"] == "inf":
            assert r["upper"] == "inf", (r, o)


@needs_tables
def test_reproductions_and_errata_against_their_formulas() -> None:
    for r in load_table("repro_steinke_noise", directory=TABLES_DIR):
        e, k = M(r["eps"]), int(r["k"])
        if r["method"] == "basic-laplace":
            assert Fraction(r["exact"]) == k / Fraction(r["eps"])
        elif r["method"] == "optimal-laplace":
            # b* = 1/eps_0*: k-fold (1/b)-DP is (eps, delta)-DP at b = upper and not at b = lower
            if k <= 1000:
                d = M(r["delta"])
                assert delta_opt([(1 / M(r["upper"]), Fraction(0), k)], e) <= d * (1 + SLACK), r
                assert delta_opt([(1 / M(r["lower"]), Fraction(0), k)], e) >= d * (1 - SLACK), r
            assert k / M(r["eps"]) >= M(r["upper"]) or k == 1, r  # never worse than basic composition
        else:
            rho = e**2 / (4 * mpmath.log(1 / M(r["delta"])) + 4 * e)
            check_enclosure(r, mpmath.sqrt(k / (2 * rho)))
            # the footnote's claim: rho + sqrt(4 rho log(1/delta)) <= eps
            assert rho + mpmath.sqrt(4 * rho * mpmath.log(1 / M(r["delta"]))) <= e
    for r in by("repro_privacy_region"):
        if r["query"] == "delta":
            check_enclosure(r, delta_opt(groups_of(r), M(r["at"])))
            continue
        e, d, k, m = M(r["eps"]), M(r["delta"]), int(r["k"]), int(r["at"])
        p = mpmath.exp(e) / (1 + mpmath.exp(e))
        q = (1 - d) ** k
        if r["query"] == "region_fa":
            v = q * sum(comb(k, j) * p ** (k - j) * (1 - p) ** j for j in range(m, k + 1))
        else:
            v = q * sum(comb(k, j) * p ** j * (1 - p) ** (k - j) for j in range(m))
        check_enclosure(r, v) if v != 0 else None
    errata = load_table("errata", directory=TABLES_DIR)
    for claim, opt in zip(errata[::2], errata[1::2]):
        assert opt["method"] == "optimal" and claim["at"] == opt["at"]
        g = groups_of(claim)
        if opt["query"] == "delta":
            check_enclosure(opt, delta_opt(g, M(opt["at"])))
        else:
            check_epsilon_row(opt, g)
        if claim["method"].startswith("slides-"):
            (e, _, k), = g
            slack = M(claim["at"])
            if claim["method"] == "slides-advanced":
                v = k * e**2 + e * mpmath.sqrt(k * mpmath.log(1 / slack))
            else:
                v = min(k * e, k * e**2 + mpmath.sqrt(k * e**2 * mpmath.log(mpmath.e + 1 / slack)))
            check_enclosure(claim, v)
            assert "UNSOUND" in claim["note"]  # these inputs are counterexamples
        if claim["method"] == "poster-mv-condition" and claim["mechanisms"] == '[["1","0","2"]]':
            assert claim["exact"] == "0" and "UNSOUND" in claim["note"]


@needs_tables
def test_region_vertices_agree_with_exactdp_region() -> None:
    """The table's vertices (a direct sum in exactdp.golden) overlap those of exactdp.api.region."""
    from exactdp import Composition
    from exactdp.api.region import privacy_region

    rows = [r for r in load_table("repro_privacy_region", directory=TABLES_DIR) if r["query"].startswith("region")]
    r0 = rows[0]
    theirs = privacy_region(Composition.homogeneous(r0["eps"], r0["delta"], int(r0["k"])))
    fa = {r["at"]: r for r in rows if r["query"] == "region_fa"}
    md = {r["at"]: r for r in rows if r["query"] == "region_md"}
    assert len(fa) == len(md) == int(r0["k"]) + 1
    for m in fa:
        a_lo, a_hi = Fraction(fa[m]["lower"]), Fraction(fa[m]["upper"])
        b_lo, b_hi = Fraction(md[m]["lower"]), Fraction(md[m]["upper"])
        assert any(x.lower <= a_hi and a_lo <= x.upper and y.lower <= b_hi and b_lo <= y.upper
                   for x, y in theirs), m


@needs_tables
def test_mv_approx_and_heterogeneous_bounds_are_never_below_the_optimum() -> None:
    for table in ("repro_mv_approx", "heterogeneous"):
        rows = load_table(table, directory=TABLES_DIR)
        opt = {(r["query"], r["mechanisms"], r["at"]): r for r in rows if r["method"] == "optimal"}
        for r in rows:
            o = opt[(r["query"], r["mechanisms"], r["at"])]
            if r["upper"] == "inf" or o["upper"] == "inf":
                assert r["upper"] == "inf" or o["upper"] != "inf", (r, o)
                continue
            # MV Thm 1.7: OptComp(delta_g) <= eps*; every closed form is an upper bound (both directions)
            assert Fraction(r["upper"]) >= Fraction(o["lower"]), (r, o)
