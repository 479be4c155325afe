"""The golden tables: fixed grids of queries, each row computed exactly or as a certified enclosure.

A :class:`~exactdp.golden.table.TableSpec` names a table and lists its
:class:`~exactdp.golden.table.RowSpec` s in a fixed order (nested loops over sorted grids);
:func:`compute_row` turns one RowSpec into one row of the schema of ``tables/README.md`` (see
:data:`exactdp.golden.writers.COLUMNS`).  RowSpecs are plain frozen data, so ``--jobs N`` can farm
them out to processes and put the results back in order.
"""

from __future__ import annotations

import json
import sys
from fractions import Fraction

from flint import arb

from exactdp.core.enclosure import Enclosure, certify
from exactdp.core.numbers import arb_of_fraction, format_fraction, parse_delta, parse_eps
from exactdp.golden.calibration import DESCRIPTION as _CAL_DESCRIPTION
from exactdp.golden.calibration import SOURCE as _CAL_SOURCE
from exactdp.golden.calibration import TITLE as _CAL_TITLE
from exactdp.golden.calibration import calibration_row_enclosure, calibration_rows
from exactdp.golden.mechanism_tables import MECHANISM_TABLES, evaluate_view
from exactdp.golden.table import DIGITS, RowSpec, TableSpec
from exactdp.model.composition import Composition

__all__ = [
    "METHOD_SOURCES",
    "TABLES",
    "basic_noise_scale",
    "compute_row",
    "get_table",
    "steinke_noise_scale",
    "table_names",
]

#: Where each method's statement is published (the ``source`` column).
METHOD_SOURCES: dict[str, str] = {
    "optimal": "KOV15 Thm 3.3 (Kairouz-Oh-Viswanath ICML 2015, arXiv:1311.0776); MV Thm 1.4 off the grid",
    "optimal-het": "Murtagh-Vadhan Thm 1.5 (TCC 2016, arXiv:1507.03113)",
    "basic": "Dwork-Roth 2014 Thm 3.16",
    "drv10": "Dwork-Rothblum-Vadhan FOCS 2010 Thm III.3; Dwork-Roth 2014 Thm 3.20",
    "kov15-3.4": "KOV15 ICML Thm 3.4 (tanh form)",
    "kov15-3.4-2013": "arXiv:1311.0776 (2013) Thm 3.4, k eps^2 form stated for eps <= 0.9",
    "kov15-3.5": "KOV15 ICML Thm 3.5",
    "steinke": "Steinke 2022, arXiv:2210.00597 (advanced composition)",
    "zcdp": "Bun-Steinke 2016 (eps-DP => eps tanh(eps/2)-zCDP; rho + 2 sqrt(rho log(1/delta)))",
    "zcdp-tight": "Bun-Steinke 2016; Canonne-Kamath-Steinke 2020 arXiv:2004.00010 (tight conversion)",
    "mv-approx": "Murtagh-Vadhan Thm 1.7 (approxComp, PSI-Library)",
    "poster-mv-condition": "the Murtagh-Vadhan TCC 2016 poster as transcribed; correct: MV Thm 1.5",
    "slides-advanced": "the KOV15 ICML 2015 talk slides as transcribed; correct: DRV10 Thm III.3",
    "slides-theorem-i": "the KOV15 ICML 2015 talk slides 'Composition Theorem I' as transcribed; correct: KOV15 Thm 3.4",
    "dp_accounting-advanced_composition": "dp_accounting advanced_composition (grid points only); docs/mathematics.md §3",
    "basic-laplace": "Dwork-Roth 2014 Thm 3.16 with Laplace(k/eps) per query (Steinke 2022, arXiv:2210.00597)",
    "optimal-laplace": "KOV15 Thm 3.3 applied to k (1/b)-DP Laplace mechanisms; least b by bisection with exact decisions",
    "steinke-advanced": "Steinke 2022 advanced composition, footnote 2 (Steinke 2022, arXiv:2210.00597): Laplace(sqrt(k/(2 rho))), rho = eps^2/(4 log(1/delta) + 4 eps)",
}

BOUND_METHODS = ("basic", "drv10", "kov15-3.4", "kov15-3.4-2013", "kov15-3.5", "steinke", "zcdp", "zcdp-tight")
HET_BOUND_METHODS = ("basic", "kov15-3.5", "steinke", "zcdp", "zcdp-tight")


# -- evaluation -----------------------------------------------------------------------------

def basic_noise_scale(eps: Fraction, k: int) -> Fraction:
    """Laplace scale b = k/eps per query so that k sensitivity-1 queries are eps-DP (basic composition)."""
    return Fraction(k) / eps


def steinke_noise_scale(eps: Fraction, delta: Fraction, k: int, *, digits: int) -> Enclosure:
    """Laplace scale sqrt(k/(2 rho)), rho = eps^2/(4 log(1/delta) + 4 eps): k queries are (eps, delta)-DP.

    Steinke 2022 (footnote 2): Laplace(b) on a sensitivity-1 query is (1/b)-DP, so k of
    them have sum eps_j^2 = k/b^2 = 2 rho, and advanced composition gives
    1/2 sum eps_j^2 + sqrt(2 log(1/delta) sum eps_j^2) = rho + sqrt(4 rho log(1/delta)) <= eps.
    """
    def compute() -> arb:
        e = arb_of_fraction(eps)
        rho = e ** 2 / (4 * (1 / arb_of_fraction(delta)).log() + 4 * e)
        return (k / (2 * rho)).sqrt()

    return certify(compute, digits, algorithm="steinke-advanced")


def optimal_noise_scale(eps: Fraction, delta: Fraction, k: int, *, digits: int) -> Enclosure:
    """The least Laplace scale b such that k sensitivity-1 queries with Laplace(b) are (eps, delta)-DP
    by the optimal composition of k (1/b)-DP mechanisms (KOV15 Thm 3.3).

    Laplace(b) is exactly (1/b)-DP; delta_opt is non-decreasing in each eps_i (docs/mathematics.md
    section 2), so {eps_0 : k-fold eps_0-DP is (eps, delta)-DP} is an interval [0, eps_0*].  Bisection
    with exact decisions (``is_private``, never a guess) keeps lo private and hi not, so
    eps_0* lies in [lo, hi) and b* = 1/eps_0* in (1/hi, 1/lo].
    """
    from exactdp.api.optimal import is_private

    def private(e0: Fraction) -> bool:
        return is_private(Composition.homogeneous(e0, 0, k), eps, delta)

    lo = eps / k  # basic composition: k eps/k = eps, so private
    hi = eps + 1
    while private(hi):
        lo, hi = hi, 2 * hi
    target = Fraction(1, 10 ** (digits + 2))
    while (hi - lo) > target * lo:
        mid = (lo + hi) / 2
        if private(mid):
            lo = mid
        else:
            hi = mid
    return Enclosure(1 / hi, 1 / lo, digits, algorithm="bisection with exact decisions")


def _evaluate(spec: RowSpec, comp: Composition) -> tuple[Enclosure, str]:
    from exactdp.api.methods import get_method

    opts: dict[str, object] = {}
    for key, val in spec.options:
        opts[key] = Fraction(val) if key == "eta" else val
    if spec.kind in ("convert", "tradeoff"):  # the tables of exactdp.golden.mechanism_tables
        return evaluate_view(spec, comp), spec.note
    if spec.kind == "method" and not comp.is_generic:
        # mechanisms: certified brackets, refined to ``digits`` with no time budget (reproducible)
        from exactdp.engines.pld.refine import unbounded

        m = get_method(spec.method)
        with unbounded():
            if spec.query == "delta":
                return m.delta(comp, parse_eps(spec.at, "at"), digits=spec.digits), spec.note
            return m.epsilon(comp, parse_delta(spec.at, "at"), digits=spec.digits), spec.note
    if spec.kind == "method":
        m = get_method(spec.method)
        if spec.query == "delta":
            return m.delta(comp, parse_eps(spec.at, "at"), digits=spec.digits, **opts), spec.note
        if spec.query == "epsilon":
            return m.epsilon(comp, parse_delta(spec.at, "at"), digits=spec.digits, **opts), spec.note
        raise ValueError(f"query={spec.query!r} must be 'delta' or 'epsilon' for kind 'method'")
    if spec.kind == "claim":
        from exactdp.golden.errata import CLAIMS

        query, fn = CLAIMS[spec.method]
        claim = fn(comp, spec.at, digits=spec.digits)
        opt = get_method("optimal")
        if query == "delta":
            best = opt.delta(comp, parse_eps(spec.at, "at"), digits=spec.digits)
        else:
            best = opt.epsilon(comp, parse_delta(spec.at, "at"), digits=spec.digits)
        return claim, _verdict(claim, best, spec)
    if spec.kind == "noise":
        eps, delta, k = comp.homogeneous_params()
        e = eps.rational_value()
        assert e is not None
        if spec.method == "basic-laplace":
            return Enclosure.exact_value(basic_noise_scale(e, k), spec.digits), spec.note
        if spec.method == "optimal-laplace":
            return optimal_noise_scale(e, delta, k, digits=spec.digits), spec.note
        return steinke_noise_scale(e, delta, k, digits=spec.digits), spec.note
    if spec.kind == "region":
        return _region_vertex(comp, spec), spec.note
    if spec.kind == "rdp":
        from exactdp.api.rdp import rdp_curve

        return rdp_curve(comp, [spec.at], digits=spec.digits, direction=dict(spec.options)["direction"])[0], spec.note
    raise ValueError(f"kind={spec.kind!r} is unknown")


def _verdict(claim: Enclosure, best: Enclosure, spec: RowSpec) -> str:
    # A claimed delta (at eps_g) or eps (at delta_g) below the certified optimum is unsound;
    # above it, sound but not optimal.  Decided from the exact enclosure endpoints.
    opt = f"certified optimum in [{best.lower_str()}, {best.upper_str()}]"
    if claim.upper < best.lower:
        v = "UNSOUND: the claim is below the " + opt
    elif claim.lower > best.upper:
        v = "sound but not optimal: the claim is above the " + opt
    elif claim.exact is not None and best.exact is not None and claim.exact == best.exact:
        v = "correct: equals the " + opt
    else:
        v = "undecided at these digits: the claim overlaps the " + opt
    return (spec.note + "; " if spec.note else "") + v


def _region_vertex(comp: Composition, spec: RowSpec) -> Enclosure:
    # A vertex (P_FA, P_MD) of the tradeoff curve of k (eps, delta)-DP mechanisms, docs/mathematics.md
    # section 3 (KOV15 section 2): with q = (1-delta)^k and p0 = e^eps/(1+e^eps),
    # vertex m = (sum_{j>=m} w0_j, sum_{j<m} w1_j), w0_j = q C(k,j) p0^(k-j) (1-p0)^j,
    # w1_j = q C(k,j) p0^j (1-p0)^(k-j).  Query "region_fa" gives the first coordinate, "region_md" the second.
    from math import comb

    eps, delta, k = comp.homogeneous_params()
    m = int(spec.at)
    q = (1 - delta) ** k
    fa = spec.query == "region_fa"
    js = range(m, k + 1) if fa else range(m)
    if not js:
        return Enclosure.exact_value(Fraction(0), spec.digits)
    x = eps.exp_exact()
    if x is not None:
        tot = Fraction(0)
        for j in js:
            tot += comb(k, j) * (x ** (k - j) if fa else x ** j)
        return Enclosure.exact_value(q * tot / (1 + x) ** k, spec.digits, algorithm="exact")

    def compute() -> arb:
        ex = eps.exp_arb()
        s = arb(0)
        for j in js:
            s += comb(k, j) * (ex ** (k - j) if fa else ex ** j)
        return arb_of_fraction(q) * s / (1 + ex) ** k

    return certify(compute, spec.digits, algorithm="direct sum")


def _normal_at(spec: RowSpec) -> str:
    """The query point written as the JSON contract writes it (``str(ExactReal)`` / format_fraction)."""
    if spec.query == "delta":
        return str(parse_eps(spec.at, "at"))
    if spec.query == "epsilon":
        return format_fraction(parse_delta(spec.at, "at"))
    return spec.at


def compute_row(spec: RowSpec) -> dict[str, str]:
    """The row of the schema for one RowSpec (every cell a string)."""
    from exactdp.golden.writers import COLUMNS, enclosure_cells

    if spec.kind == "calibrate":  # the calibration table: the unknown is the per-step parameter
        enc, note = calibration_row_enclosure(spec)
        row = {c: "" for c in COLUMNS}
        row.update(table=spec.table, query=spec.query, method=spec.method,
                   options=";".join(f"{k}={v}" for k, v in spec.options), delta=spec.delta, k=spec.k,
                   at=spec.at, note=note, source=spec.source)
        row.update(enclosure_cells(enc))
        return row
    comp = spec.composition()
    enc, note = _evaluate(spec, comp)
    # Outward decimal rounding of a tiny value (e.g. a DRV10 delta near 10^-5000) writes integers
    # beyond CPython's default str() limit; lift it for this row only (reported to numbers.py).
    old_limit = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    try:
        cells = enclosure_cells(enc)
    finally:
        sys.set_int_max_str_digits(old_limit)
    inputs = comp.to_inputs()
    row = {c: "" for c in COLUMNS}
    row.update(
        table=spec.table, query=spec.query, method=spec.method,
        options=";".join(f"{k}={v}" for k, v in spec.options),
        at=_normal_at(spec), note=note, source=spec.source or METHOD_SOURCES.get(spec.method, ""),
    )
    if "mechanisms" in inputs:
        row["mechanisms"] = json.dumps(inputs["mechanisms"], separators=(",", ":"))
    else:
        row["eps"], row["delta"], row["k"] = inputs["eps"], inputs["delta"], str(inputs["k"])
    row.update(cells)
    return row


# -- the grids ------------------------------------------------------------------------------

K_GRID = (1, 2, 5, 10, 30, 100, 1000, 10**4, 10**6)
EPS_GRID = ("0.01", "0.1", "0.5", "1", "2")
DELTA_GRID = ("0", "0.000001", "0.001")
DELTA_G_GRID = ("0.001", "0.000001", "0.000000001")
EPS_G_GRID = ("0.1", "0.5", "1", "2", "5", "10")


def _fmt(q: Fraction) -> str:
    return format_fraction(q)


def _homogeneous_cases() -> list[tuple[str, str, int]]:
    return [(e, d, k) for e in EPS_GRID for d in DELTA_GRID for k in K_GRID]


def _opt_delta_rows() -> list[RowSpec]:
    return [RowSpec("optimal_delta", "delta", "optimal", e, d, str(k), at=g)
            for e, d, k in _homogeneous_cases() for g in EPS_G_GRID]


def _opt_epsilon_rows() -> list[RowSpec]:
    return [RowSpec("optimal_epsilon", "epsilon", "optimal", e, d, str(k), at=g)
            for e, d, k in _homogeneous_cases() for g in DELTA_G_GRID]


def _bounds_epsilon_rows() -> list[RowSpec]:
    return [RowSpec("bounds_epsilon", "epsilon", m, e, d, str(k), at=g)
            for e, d, k in _homogeneous_cases() for g in DELTA_G_GRID for m in ("optimal",) + BOUND_METHODS]


BOUNDS_DELTA_K = (1, 10, 30, 100, 1000)


def _bounds_delta_rows() -> list[RowSpec]:
    return [RowSpec("bounds_delta", "delta", m, e, d, str(k), at=g)
            for e in EPS_GRID for d in DELTA_GRID for k in BOUNDS_DELTA_K for g in ("1", "2", "5")
            for m in ("optimal",) + BOUND_METHODS]


KOV15_CASES = (("0.1", "0.001", 30), ("0.4", "0.1", 10), ("1", "0.001", 30))


def _kov15_grid_rows() -> list[RowSpec]:
    rows = []
    for e, d, k in KOV15_CASES:
        for i in range(k // 2 + 1):
            at = _fmt((k - 2 * i) * Fraction(e))
            rows.append(RowSpec("kov15_grid", "delta", "optimal", e, d, str(k), at=at, note=f"i={i}",
                                source="KOV15 Thm 3.3 grid point eps_g = (k-2i) eps"))
    return rows


HET_CASES: tuple[tuple[tuple[str, ...], ...], ...] = (
    (("0.1", "0"), ("0.2", "0"), ("0.3", "0"), ("0.5", "0"), ("0.7", "0")),
    (("1", "0.1"), ("2", "0.2")),
    (("0.25", "0"), ("0.5", "0"), ("1", "0"), ("2", "0")),
    (("0.1", "0", "10"), ("0.5", "0", "5")),
    (("0.01", "0.000001", "50"), ("0.1", "0.000001", "20"), ("0.5", "0.001", "2")),
    (("0.05", "0", "40"), ("0.2", "0.00001", "10"), ("1", "0", "1")),
)
HET_EPS_G = ("0.5", "0.6", "1", "2", "3")
HET_DELTA_G = ("0.01", "0.001", "0.000001")


def _het_rows() -> list[RowSpec]:
    rows = []
    src = METHOD_SOURCES["optimal-het"]
    for mech in HET_CASES:
        for g in HET_EPS_G:
            for m in ("optimal",) + HET_BOUND_METHODS:
                rows.append(RowSpec("heterogeneous", "delta", m, mechanisms=mech, at=g,
                                    source=src if m == "optimal" else ""))
        for g in HET_DELTA_G:
            for m in ("optimal",) + HET_BOUND_METHODS:
                rows.append(RowSpec("heterogeneous", "epsilon", m, mechanisms=mech, at=g,
                                    source=src if m == "optimal" else ""))
    return rows


def _exact_rows() -> list[RowSpec]:
    rows = []
    src = "KOV15 Thm 3.3 / MV Thm 1.4 over Q (docs/mathematics.md §3, e^eps = 3/2, k = 10)"
    # e^eps = 3/2, k = 10: the grid points eps_g = log((3/2)^(10-2i)) give the rationals of docs/mathematics.md §3.
    for i in range(6):
        rows.append(RowSpec("exact_rational", "delta", "optimal", "log(3/2)", "0", "10",
                            at=f"log({_fmt(Fraction(3, 2) ** (10 - 2 * i))})", note=f"i={i}", source=src))
    for e, d, k, gs in (("log(3/2)", "0", 10, ("log(2)", "log(3)", "log(5)")),
                        ("log(2)", "0.1", 5, ("log(2)", "log(4)", "log(8)")),
                        ("log(5/4)", "0.001", 30, ("log(3/2)", "log(2)", "log(4)"))):
        for g in gs:
            rows.append(RowSpec("exact_rational", "delta", "optimal", e, d, str(k), at=g, source=src))
        for g in ("0.1", "0.01", "0.001"):
            rows.append(RowSpec("exact_rational", "epsilon", "optimal", e, d, str(k), at=g, source=src,
                                note="eps is log of a rational when the closed-form inverse is"))
    het = (("log(2)", "0"), ("log(3/2)", "0"), ("log(5/4)", "0", "2"))
    for g in ("0", "log(2)", "log(3/2)"):
        rows.append(RowSpec("exact_rational", "delta", "optimal", mechanisms=het, at=g,
                            source=METHOD_SOURCES["optimal-het"] + " over Q"))
    for g in ("0.1", "0.01"):
        rows.append(RowSpec("exact_rational", "epsilon", "optimal", mechanisms=het, at=g,
                            source=METHOD_SOURCES["optimal-het"] + " over Q"))
    return rows


# 30-fold (0.1, 0.001): delta~ from 1e-10 to 0.1; every method at the same total delta_g = k delta + delta~.
SLACKS = tuple(Fraction(m, 10**j) for j in range(10, 0, -1) for m in (1, 2, 5) if Fraction(m, 10**j) <= Fraction(1, 10))


def _repro_kov15_rows() -> list[RowSpec]:
    rows = []
    e, d, k = "0.1", "0.001", 30
    for s in SLACKS:
        at = _fmt(k * Fraction(d) + s)
        for m in ("optimal", "basic", "drv10", "kov15-3.4"):
            rows.append(RowSpec("repro_kov15_comparison", "epsilon", m, e, d, str(k), at=at,
                                note=f"delta~={_fmt(s)}; total delta_g = k delta + delta~"))
    return rows


def _repro_region_rows() -> list[RowSpec]:
    e, d, k = "0.4", "0.1", 10
    rows = []
    for i in range(k // 2 + 1):
        rows.append(RowSpec("repro_privacy_region", "delta", "optimal", e, d, str(k),
                            at=_fmt((k - 2 * i) * Fraction(e)), note=f"i={i}",
                            source="KOV15 Thm 3.3 grid (the region is the intersection of these regions)"))
    src = "KOV15 section 2 / docs/mathematics.md §3: vertex m of the tradeoff curve (P_FA, P_MD)"
    for m in range(k, -1, -1):
        for q in ("region_fa", "region_md"):
            rows.append(RowSpec("repro_privacy_region", q, "optimal", e, d, str(k), at=str(m),
                                kind="region", source=src, note="vertex index m"))
    return rows


MV_APPROX_CASES: tuple[tuple[tuple[str, ...], ...], ...] = (
    (("0.1", "0", "5"), ("0.2", "0", "5")),
    (("0.1", "0", "10"), ("0.2", "0", "10")),
    (("0.05", "0", "20"), ("0.1", "0", "10"), ("0.3", "0", "5")),
    (("0.1", "0.00000001", "30"), ("0.25", "0.00000001", "10")),
)


def _repro_mv_rows() -> list[RowSpec]:
    rows = []
    for mech in MV_APPROX_CASES:
        for g in ("0.001", "0.000001"):
            rows.append(RowSpec("repro_mv_approx", "epsilon", "optimal", mechanisms=mech, at=g,
                                source=METHOD_SOURCES["optimal-het"]))
            # eta = 0.01 only where it runs in seconds (its DP grows like k^2/eta * sum eps_i)
            for eta in ("0.1", "0.01") if sum(int(m[2]) for m in mech) <= 10 else ("0.1", "0.05"):
                rows.append(RowSpec("repro_mv_approx", "epsilon", "mv-approx", mechanisms=mech, at=g,
                                    options=(("eta", eta),)))
            rows.append(RowSpec("repro_mv_approx", "epsilon", "kov15-3.5", mechanisms=mech, at=g))
    return rows


def _repro_steinke_rows() -> list[RowSpec]:
    rows = []
    for e, d in (("1", "0.000001"), ("0.1", "0.000001")):
        for k in K_GRID:
            for m in ("basic-laplace", "steinke-advanced", "optimal-laplace"):
                rows.append(RowSpec("repro_steinke_noise", "noise_scale", m, e, d if m != "basic-laplace" else "0",
                                    str(k), kind="noise",
                                    note="Laplace scale per query; total (eps, delta) as in eps, delta"))
    return rows


def _errata_rows() -> list[RowSpec]:
    rows = []
    cases = [
        ("poster-mv-condition", (("1", "0", "2"),), "", "", "", "1.5",
         "2-fold 1-DP: the poster's e^{eps_g |S|} makes every term negative"),
        ("poster-mv-condition", (("0.1", "0"), ("0.2", "0"), ("0.3", "0"), ("0.5", "0"), ("0.7", "0")),
         "", "", "", "0.6", "docs/mathematics.md §6 heterogeneous case"),
        ("slides-advanced", (), "0.1", "0", "30", "0.000001", "missing factor 2 under the square root"),
        ("slides-advanced", (), "0.01", "0", "100", "0.000000001", "missing factor 2 under the square root"),
        ("slides-theorem-i", (), "0.1", "0", "30", "0.000001", "as transcribed"),
        ("slides-theorem-i", (), "0.01", "0", "100", "0.000000001", "as transcribed"),
        ("dp_accounting-advanced_composition", (), "1", "0.001", "30", "0.06", "dp_accounting test value 22"),
        ("dp_accounting-advanced_composition", (), "1", "0.001", "30", "0.1", "dp_accounting test value 20"),
    ]
    from exactdp.golden.errata import CLAIMS

    for name, mech, e, d, k, at, note in cases:
        query = CLAIMS[name][0]
        rows.append(RowSpec("errata", query, name, e, d, k, mechanisms=mech, at=at, note=note, kind="claim"))
        rows.append(RowSpec("errata", query, "optimal", e, d, k, mechanisms=mech, at=at,
                            note="certified optimum for the claim above",
                            source=METHOD_SOURCES["optimal-het" if mech else "optimal"]))
    return rows


MECHANISM_SOURCES = {
    "gaussian": "Balle-Wang ICML 2018 Thm 8; Dong-Roth-Su 2022 (mu^2 adds): delta(eps) = Phi(mu/2 - eps/mu) - "
                "e^eps Phi(-mu/2 - eps/mu); docs/mathematics.md §7",
    "laplace": "the Laplace privacy-loss distribution (docs/mathematics.md §7), composed by the certified PLD "
               "engine (docs/pld.md)",
    "dpsgd": "Poisson-subsampled Gaussian, add/remove neighbours, both orders (docs/mathematics.md §7), composed by "
             "the certified PLD engine (docs/pld.md); dominating pair: Doroshenko et al. PETS 2022",
}


def _spec_row(table: str, query: str, spec: str, at: str, digits: int, source: str, note: str = "") -> RowSpec:
    return RowSpec(table, query, "optimal", mechanisms=((spec,),), at=at, digits=digits, source=source, note=note)


def _gaussian_rows() -> list[RowSpec]:
    rows = []
    for sigma in ("0.5", "1", "2", "5"):
        for k in (1, 10, 100, 1000):
            for dg in ("0.00001", "0.0000000001", "1e-30"):
                rows.append(_spec_row("gaussian", "epsilon", f"gaussian:sigma={sigma},count={k}", dg, DIGITS,
                                      MECHANISM_SOURCES["gaussian"]))
    for sigma, k, eg in (("1", 100, "10"), ("2", 1000, "20"), ("5", 1000, "5")):
        rows.append(_spec_row("gaussian", "delta", f"gaussian:sigma={sigma},count={k}", eg, DIGITS,
                              MECHANISM_SOURCES["gaussian"]))
    return rows


def _laplace_rows() -> list[RowSpec]:
    rows = []
    for b in ("1", "10"):
        for k in (1, 2, 10, 100):
            for dg in ("0.001", "0.000001"):
                digits = DIGITS if k == 1 else 6
                rows.append(_spec_row("laplace", "epsilon", f"laplace:scale={b},count={k}", dg, digits,
                                      MECHANISM_SOURCES["laplace"],
                                      "one run: the profile itself" if k == 1 else "certified bracket"))
    return rows


def _dpsgd_rows() -> list[RowSpec]:
    rows = []
    for sigma in ("0.8", "1", "2"):
        for q in ("0.001", "0.01", "0.1"):
            for k in (100, 1000):
                rows.append(_spec_row("dpsgd", "epsilon", f"gaussian:sigma={sigma},q={q},count={k}", "0.00001", 4,
                                      MECHANISM_SOURCES["dpsgd"], "certified bracket, 4 digits requested"))
    return rows


RDP_SIGMAS = ("0.5", "1", "2", "4")
RDP_QS = ("0.001", "0.01", "0.1", "0.5")
RDP_ORDERS = (2, 3, 4, 8, 16, 32, 64, 128, 256)
RDP_SOURCE = ("Mironov-Talwar-Zhang 2019 §3.3 binomial sum: D_alpha((1-q) N(0, s^2) + q N(1, s^2) || N(0, s^2)) = "
              "1/(alpha-1) log sum_k C(alpha, k) (1-q)^(alpha-k) q^k e^{(k^2-k)/(2 s^2)}, integer alpha; docs/rdp.md §2")


def _rdp_rows() -> list[RowSpec]:
    """The Rényi divergence of the Poisson-subsampled Gaussian (sensitivity 1), remove direction."""
    return [RowSpec("rdp_subsampled_gaussian", "rdp", "rdp", mechanisms=((f"gaussian:sigma={s},q={q}",),),
                    at=str(a), options=(("direction", "remove"),), kind="rdp", digits=20, source=RDP_SOURCE)
            for s in RDP_SIGMAS for q in RDP_QS for a in RDP_ORDERS]


def _calibration_rows() -> list[RowSpec]:
    return calibration_rows()


TABLES: tuple[TableSpec, ...] = (
    TableSpec("kov15_grid", "KOV15 grid: optimal total delta at eps_g = (k-2i) eps",
              "The exact privacy region of k-fold (eps, delta)-DP at every KOV15 grid point, for "
              "(0.1, 0.001, 30), (0.4, 0.1, 10), (1, 0.001, 30).", "KOV15 Thm 3.3", _kov15_grid_rows),
    TableSpec("optimal_delta", "Optimal total delta at eps_g, homogeneous grid",
              "k in {1,2,5,10,30,100,1000,1e4,1e6}, eps in {0.01,0.1,0.5,1,2}, delta in {0,1e-6,1e-3}, "
              "eps_g in {0.1,0.5,1,2,5,10}.", METHOD_SOURCES["optimal"], _opt_delta_rows),
    TableSpec("optimal_epsilon", "Optimal eps_g at total delta_g, homogeneous grid",
              "The same compositions as optimal_delta at delta_g in {1e-3,1e-6,1e-9}; inf where "
              "delta_g < 1-(1-delta)^k.", METHOD_SOURCES["optimal"], _opt_epsilon_rows),
    TableSpec("bounds_epsilon", "Closed-form bounds beside the optimum: eps at total delta_g",
              "Every closed-form bound of docs/mathematics.md §4 beside the optimum, for the compositions of "
              "optimal_epsilon.", "docs/mathematics.md §4", _bounds_epsilon_rows, figure="bounds_looseness"),
    TableSpec("bounds_delta", "Closed-form bounds beside the optimum: total delta at eps_g",
              "Every closed-form bound beside the optimum, k in {1,10,30,100,1000}, eps_g in {1,2,5}.",
              "docs/mathematics.md §4", _bounds_delta_rows),
    TableSpec("heterogeneous", "Optimal heterogeneous composition beside the bounds",
              "Lists of (eps_i, delta_i[, count]) mechanisms, both query directions.",
              METHOD_SOURCES["optimal-het"], _het_rows),
    TableSpec("exact_rational", "Exact rational tables (eps = log(p/q))",
              "When e^eps and e^eps_g are rational the optimal delta is an exact fraction; eps at delta_g is "
              "then the log of a rational on a segment whose closed form is rational.",
              "KOV15 Thm 3.3; MV Thm 1.5; docs/mathematics.md §3", _exact_rows),
    TableSpec("repro_kov15_comparison", "Reproduction: 30-fold composition of (0.1, 0.001)-DP",
              "Optimal vs basic vs DRV10 vs KOV15 Thm 3.4: eps at total delta_g = k delta + delta~ across delta~ "
              "(the comparison figure of KOV15 and its talk slides).", "KOV15 ICML 2015, comparison figure",
              _repro_kov15_rows, figure="repro_kov15_comparison"),
    TableSpec("repro_privacy_region", "Reproduction: privacy region of the 10-fold composition of (0.4, 0.1)-DP",
              "The grid deltas and the vertices of the tradeoff curve (P_FA, P_MD).",
              "KOV15 ICML 2015, privacy region figure; KOV15 talk slides", _repro_region_rows, figure="repro_privacy_region"),
    TableSpec("repro_mv_approx", "Reproduction: Murtagh-Vadhan approximation vs the KOV15 bound",
              "MV Thm 1.7 (eta = 0.1, and 0.01 for k = 10 or 0.05 beyond) beside KOV15 Thm 3.5 and the optimum, heterogeneous lists.",
              "Murtagh-Vadhan TCC 2016 poster, 'algorithm outperforms bound provided in [3]'",
              _repro_mv_rows, figure="repro_mv_approx"),
    TableSpec("repro_steinke_noise", "Reproduction: noise for k sensitivity-1 queries, basic vs advanced",
              "Laplace scale per query: basic composition k/eps (Theta(k)) vs Steinke's advanced composition "
              "sqrt(k/(2 rho)) (Theta(sqrt k)), and the least scale the optimal composition of k (1/b)-DP "
              "mechanisms allows.", "Steinke 2022 (arXiv:2210.00597)", _repro_steinke_rows,
              figure="repro_steinke_noise"),
    TableSpec("gaussian", "Gaussian mechanisms: optimal eps at total delta_g (closed form, 30 digits)",
              "k runs of N(0, sigma^2) noise on a sensitivity-1 query: eps_g at delta_g down to 1e-30, and a few "
              "deltas at eps_g.  mu^2 = k/sigma^2 adds exactly.", MECHANISM_SOURCES["gaussian"], _gaussian_rows),
    TableSpec("laplace", "Laplace mechanisms: optimal eps at total delta_g (certified brackets)",
              "k runs of Laplace(b) noise on a sensitivity-1 query; one run is answered to 30 digits by its profile, "
              "compositions by the certified PLD engine to 6 digits (the digits column says how many are certified). "
              "The generic (1/b)-DP optimum is larger: Laplace is not the worst case of its class.",
              MECHANISM_SOURCES["laplace"], _laplace_rows),
    TableSpec("dpsgd", "DP-SGD: Poisson-subsampled Gaussian, certified eps brackets",
              "sigma x q x steps at delta_g = 1e-5: the eps of DP-SGD (add/remove neighbours, the larger order) as a "
              "certified bracket [lower, upper] from a dominated and a dominating pair; 4 digits requested.",
              MECHANISM_SOURCES["dpsgd"], _dpsgd_rows, figure="dpsgd_brackets"),
    TableSpec("calibration", _CAL_TITLE, _CAL_DESCRIPTION, _CAL_SOURCE, _calibration_rows),
    TableSpec("errata", "Errata: published formulas that are wrong, with exact counterexamples",
              "Each claim row (the formula as written) is followed by the certified optimum for the same inputs; "
              "the note says whether the claim is unsound (below the optimum) or merely not optimal.  Not listed: "
              "the 2013 arXiv form of KOV15 Thm 3.4 (k eps^2 for k eps tanh(eps/2)) is never below the ICML form "
              "(tanh(eps/2) < eps), so it stays sound beyond eps <= 0.9; bounds_epsilon shows it above the optimum "
              "on every row.",
              "docs/mathematics.md §2-§4", _errata_rows),
    TableSpec("rdp_subsampled_gaussian", "RDP of the Poisson-subsampled Gaussian (20 digits)",
              "The Rényi divergence of one step of DP-SGD, the mixture (1-q) N(0, sigma^2) + q N(1, sigma^2) against "
              "N(0, sigma^2) (remove direction, sensitivity 1), at integer orders: sigma in {0.5,1,2,4}, q in "
              "{0.001,0.01,0.1,0.5}, alpha in {2,3,4,8,16,32,64,128,256}; k steps add k times this.",
              RDP_SOURCE, _rdp_rows),
) + MECHANISM_TABLES


def table_names() -> list[str]:
    """The names of all golden tables, in build order."""
    return [t.name for t in TABLES]


def get_table(name: str) -> TableSpec:
    """The spec of table ``name``."""
    for t in TABLES:
        if t.name == name:
            return t
    raise KeyError(f"table={name!r} must be one of {', '.join(table_names())}")
