"""The ``calibration`` golden table: certified calibrations beside the usual recipes (docs/calibration.md §6).

Each row is one calibration, written with the schema of ``tables/README.md``:

* ``query`` ``calibrate_eps``: the per-step eps of k equal (eps, ``delta``)-DP mechanisms;
  ``calibrate_sigma``: the Gaussian sigma (sensitivity 1) of k steps, Poisson subsampled at the
  rate ``q`` given in ``options`` when there is one (the DP-SGD noise multiplier);
* ``at``: the target, ``eps_g,delta_g``;
* ``lower``/``upper``: an enclosure of the optimum of the method named in ``method``.  For a
  calibration by search (``optimal``, and the bounds ``basic``, ``drv10``, ``steinke``,
  ``zcdp-tight`` inverted by the same search) the two ends are the certified pair: for eps the
  lower end is the certified-safe ``value`` and the upper end ``fails_at``, for sigma the reverse
  (the note says which); for a closed-form recipe (``dwork-roth-a1``, ``zcdp-recipe``) the
  certified enclosure of the formula's value.
"""

from __future__ import annotations

from fractions import Fraction

from flint import arb

from exactdp.core.enclosure import Enclosure, certify
from exactdp.core.numbers import arb_of_fraction, format_fraction
from exactdp.golden.table import RowSpec

__all__ = ["DESCRIPTION", "SOURCE", "TITLE", "calibration_row_enclosure", "calibration_rows"]

TARGETS = (("1", "0.00001"), ("1", "0.000001"), ("2", "0.00001"), ("8", "0.00001"))
EPS_K = (10, 100, 1000)
EPS_METHODS = ("optimal", "basic", "drv10", "steinke", "zcdp-tight")
SIGMA_K = (1, 10, 100, 1000)
DPSGD = (("0.01", 1000, ("2", "0.00001")), ("0.01", 1000, ("8", "0.00001")))

SOURCES = {
    "optimal": "exactdp calibrate (docs/calibration.md): certified search with exact decisions, KOV15 Thm 3.3",
    "basic": "Dwork-Roth 2014 Thm 3.16 (basic composition): eps_g / k per step",
    "drv10": "Dwork-Rothblum-Vadhan FOCS 2010 Thm III.3 (advanced composition), inverted by exactdp calibrate",
    "steinke": "Steinke 2022, arXiv:2210.00597 (advanced composition), inverted by exactdp calibrate",
    "zcdp-tight": "Bun-Steinke 2016; Canonne-Kamath-Steinke 2020 (tight conversion), inverted by exactdp calibrate",
    "optimal-gaussian": "Balle-Wang ICML 2018 Thm 8 (analytic Gaussian; mu^2 adds): certified root, exactdp calibrate",
    "zcdp-recipe": "Bun-Steinke TCC 2016 Prop 1.3/1.6: k steps are k/(2 sigma^2)-zCDP, eps = rho + 2 sqrt(rho log(1/delta))",
    "dwork-roth-a1": "Dwork-Roth 2014 Thm A.1: sigma = sqrt(2 log(1.25/delta)) / eps for one step, eps < 1",
    "dwork-roth-a1+basic": "Dwork-Roth 2014 Thm A.1 per step at (eps_g/k, delta_g/k), composed by Thm 3.16",
    "optimal-dpsgd": "exactdp calibrate sigma --q: certified search with PLD brackets (docs/pld.md), gap 1e-2",
}

TITLE = "Calibration: per-step eps and Gaussian sigma for common targets, beside the usual recipes"
DESCRIPTION = ("Per-step eps of k equal eps-DP mechanisms and Gaussian sigma (sensitivity 1) of k steps for common "
               "targets (eps_g, delta_g) = at; the optimum is certified ([lower, upper] holds it: one end proved to "
               "meet the target, the other to miss it), beside basic and advanced composition, zCDP and the "
               "classical Gaussian recipe of Dwork-Roth Thm A.1, and two DP-SGD noise multipliers (q = 0.01, "
               "1000 steps).")
SOURCE = "docs/calibration.md; Dwork-Roth 2014; DRV10; Steinke 2022; Bun-Steinke 2016; Balle-Wang 2018"


def calibration_rows() -> list[RowSpec]:
    """The rows of the calibration table, in build order (the two slow DP-SGD rows at 0 and 8)."""

    def dpsgd(q: str, k: int, eg: str, dg: str) -> RowSpec:
        return RowSpec("calibration", "calibrate_sigma", "optimal", "", "", str(k), at=f"{eg},{dg}",
                       options=(("q", q),), kind="calibrate", digits=2, source=SOURCES["optimal-dpsgd"])

    # the two slow DP-SGD rows at positions 0 and 8: the first rows of the first two chunks that
    # `tables build --jobs 2` hands out (8 rows each), so they are computed in parallel from the start
    (q1, k1, (e1, d1)), (q2, k2, (e2, d2)) = DPSGD
    rows = [dpsgd(q1, k1, e1, d1)]
    for eg, dg in TARGETS:
        for k in EPS_K:
            for m in EPS_METHODS:
                rows.append(RowSpec("calibration", "calibrate_eps", m, "", "0", str(k), at=f"{eg},{dg}",
                                    kind="calibrate", source=SOURCES[m], digits=5))
    for eg, dg in TARGETS:
        for k in SIGMA_K:
            ms = ["optimal", "zcdp-recipe", "dwork-roth-a1+basic"] + (["dwork-roth-a1"] if k == 1 else [])
            for m in ms:
                if m.startswith("dwork-roth") and Fraction(eg) / k >= 1:
                    continue  # Thm A.1 is stated for eps < 1
                rows.append(RowSpec("calibration", "calibrate_sigma", m, "", "", str(k), at=f"{eg},{dg}",
                                    kind="calibrate", digits=5,
                                    source=SOURCES["optimal-gaussian" if m == "optimal" else m]))
    rows.insert(8, dpsgd(q2, k2, e2, d2))
    return rows


def calibration_row_enclosure(spec: RowSpec) -> tuple[Enclosure, str]:
    """The enclosure of one calibration row and its note."""
    from exactdp.calibrate import calibrate_eps, calibrate_sigma

    eg_s, dg_s = spec.at.split(",")
    eg, dg, k = Fraction(eg_s), Fraction(dg_s), int(spec.k)
    opts = dict(spec.options)
    if spec.query == "calibrate_eps":
        r = calibrate_eps(k, eg_s, dg_s, delta=spec.delta or "0", method=spec.method)
        note = (f"lower = value {r.value_str} is certified to meet the target, upper = fails_at {r.fails_at_str} "
                f"to miss it ({r.value_proof.how})")
        return Enclosure(r.value, r.fails_at, spec.digits, algorithm="calibrate"), note  # type: ignore[arg-type]
    if spec.method == "optimal":
        q = opts.get("q")
        r = calibrate_sigma(k, eg_s, dg_s, q=q or "1", gap="0.01" if q else None)
        note = (f"upper = value {r.value_str} is certified to meet the target, lower = fails_at {r.fails_at_str} "
                f"to miss it ({r.value_proof.how})" + (f"; Poisson sampling rate q = {q}" if q else ""))
        return Enclosure(r.fails_at, r.value, spec.digits, algorithm="calibrate"), note  # type: ignore[arg-type]
    if spec.method == "zcdp-recipe":
        # rho* with rho + 2 sqrt(rho L) = eps_g, L = log(1/delta_g): sqrt(rho*) = sqrt(L + eps_g) - sqrt(L);
        # k steps are k/(2 sigma^2)-zCDP, so sigma = sqrt(k / (2 rho*))
        def compute() -> arb:
            L = (1 / arb_of_fraction(dg)).log()
            r = (L + arb_of_fraction(eg)).sqrt() - L.sqrt()
            return (arb(k) / (2 * r * r)).sqrt()

        return certify(compute, spec.digits, algorithm="zcdp-recipe"), "sigma of the recipe (safe, not optimal)"
    per_eps, per_delta = (eg, dg) if spec.method == "dwork-roth-a1" else (eg / k, dg / k)

    def a1() -> arb:
        return (2 * (arb_of_fraction(Fraction(5, 4) / per_delta)).log()).sqrt() / arb_of_fraction(per_eps)

    note = "one step" if spec.method == "dwork-roth-a1" else \
        f"each step ({format_fraction(per_eps)}, {format_fraction(per_delta)})-DP by Thm A.1, k steps by basic composition"
    return certify(a1, spec.digits, algorithm=spec.method), note
