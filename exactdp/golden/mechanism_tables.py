"""The golden tables of the new mechanisms, relations and views (issue 27 §7, issue 28 §5).

* ``discrete``: k-fold discrete Laplace and discrete Gaussian (docs/mathematics.md §7.10-§7.11);
* ``mixture``: mixtures of Gaussians in each direction (§7.12);
* ``relations``: replace-one Poisson subsampling, the two orders of add/remove, fixed batches (§9); then\n  replace-special randomized response, the truncated subsampled Gaussian and batches with replacement;
* ``conversions``: eps at delta of the RDP conversions beside the optimum (docs/rdp.md §3);
* ``tradeoff``: beta(alpha) of the trade-off curve (docs/tradeoff.md).

Each row is a :class:`~exactdp.golden.table.RowSpec` evaluated by
:func:`exactdp.golden.specs.compute_row`; the kinds ``"convert"`` (a conversion at the orders of
``options``) and ``"tradeoff"`` (beta at alpha = ``at``) are evaluated by :func:`evaluate_view`.
"""

from __future__ import annotations

from exactdp.core.enclosure import Enclosure
from exactdp.core.numbers import parse_delta
from exactdp.golden.table import RowSpec, TableSpec
from exactdp.model.composition import Composition

__all__ = ["MECHANISM_TABLES", "evaluate_view"]


def _row(table: str, query: str, spec: str, at: str, digits: int, source: str, note: str = "",
         method: str = "optimal", kind: str = "method", options: tuple[tuple[str, str], ...] = ()) -> RowSpec:
    return RowSpec(table, query, method, mechanisms=((spec,),), at=at, digits=digits, source=source, note=note,
                   kind=kind, options=options)


# -- discrete -------------------------------------------------------------------------------

DISCRETE_MECHANISMS = tuple(f"dlaplace:noise={a},sensitivity={d}" for a in ("0.1", "0.5", "1") for d in (1, 2)) + \
    tuple(f"dgaussian:sigma={s}" for s in ("1", "3"))
DISCRETE_K = (1, 2, 10, 100)
DISCRETE_DELTA_G = ("0.000001", "1e-10", "1e-30")
DISCRETE_EPS_G = ("0.5", "1")
DISCRETE_SOURCE = ("docs/mathematics.md §7.10 (discrete Laplace: D + 1 losses) and §7.11 (discrete Gaussian: the window "
                   "and its proved tail), composed by the certified PLD engine (docs/pld.md)")


def _discrete_rows() -> list[RowSpec]:
    rows = []
    for m in DISCRETE_MECHANISMS:
        for k in DISCRETE_K:
            digits = 12 if k <= 10 else 8
            note = "symmetric pair: both orders have one law"
            for dg in DISCRETE_DELTA_G:
                rows.append(_row("discrete", "epsilon", f"{m},count={k}", dg, digits, DISCRETE_SOURCE, note))
            for eg in DISCRETE_EPS_G:
                rows.append(_row("discrete", "delta", f"{m},count={k}", eg, digits, DISCRETE_SOURCE, note))
    return rows


# -- mixture --------------------------------------------------------------------------------

MIXTURES = ("mog:sigma=1,sensitivities=0/1/2,probs=0.81/0.18/0.01", "mog:sigma=2,sensitivities=1/3,probs=0.5/0.5",
            "mog:sigma=1,sensitivities=0/1,probs=0.9/0.1")
MIXTURE_SOURCE = ("docs/mathematics.md §7.12 (dp_accounting's MixtureOfGaussiansDpEvent; Choquette-Choo et al. 2023, "
                  "arXiv:2310.15526): remove P = sum p_i N(s_i, S^2) vs Q = N(0, S^2), add the reverse, max the larger")


def _mixture_rows() -> list[RowSpec]:
    rows = []
    note = "the larger of the two orders (remove, add), docs/mathematics.md §7.12"
    for m in MIXTURES:
        for k, digits in ((1, 10), (2, 5)):
            rows.append(_row("mixture", "delta", f"{m},count={k}", "0.5", digits, MIXTURE_SOURCE, note))
            rows.append(_row("mixture", "epsilon", f"{m},count={k}", "0.000001", digits, MIXTURE_SOURCE, note))
        rows.append(_row("mixture", "epsilon", f"{m},count=100", "0.000001", 3, MIXTURE_SOURCE,
                         note + "; certified bracket"))
    for d in ("remove", "add"):  # one order alone (direction=remove: the mixture first)
        rows.append(_row("mixture", "delta", f"{MIXTURES[0]},direction={d},count=1", "0.1", 10, MIXTURE_SOURCE,
                         f"the {d} order alone, docs/mathematics.md §7.12"))
    return rows


# -- relations ------------------------------------------------------------------------------

RELATION_BASES = ("gaussian:sigma=1", "laplace:scale=1")
RELATION_SCHEMES = ("q=0.1,relation=replace-one", "q=0.1,direction=remove", "q=0.1,direction=add",
                    "q=0.1,direction=max", "sample=100,of=1000,relation=replace-one")
RELATION_SOURCE = ("docs/mathematics.md §9: Theorem 9.2 (replace-one Poisson: the diluted pair), §7.5 (add/remove "
                   "Poisson, each order), Theorem 9.3 (a fixed batch of m from n: the symmetrised pair)")


def _relations_rows() -> list[RowSpec]:
    rows = []
    for base in RELATION_BASES:
        for scheme in RELATION_SCHEMES:
            for k, digits in ((1, 10), (2, 6)):
                spec = f"{base},{scheme},count={k}"
                note = "k runs: two-sided, the gap is real (Theorem 9.7)" if "sample" in scheme and k > 1 else ""
                rows.append(_row("relations", "delta", spec, "0.1", digits, RELATION_SOURCE, note))
                rows.append(_row("relations", "epsilon", spec, "0.000001", digits, RELATION_SOURCE, note))
    return rows


# the three newest mechanisms (issue 27 §7): replace-special randomized response (exact pair), the truncated
# subsampled Gaussian and a Gaussian batch drawn with replacement (certified upper bounds), appended to ``relations``
SPECIAL_RR = ("rr:eps=1,categories=4,relation=replace-special", "rr:eps=0.5,categories=10,relation=replace-special",
              "rr:eps=2,categories=2,relation=replace-special")
TRUNCATED = ("gaussian:sigma=1,q=0.01,truncate=20,of=1000",
             "gaussian:sigma=1,q=0.01,truncate=20,of=1000,relation=replace-one",
             "gaussian:sigma=2,q=0.1,truncate=5,of=100")
WITH_REPLACEMENT = ("gaussian:sigma=2,sample=10,of=100,with-replacement=true",
                    "gaussian:sigma=4,sample=3,of=100,with-replacement=true")
NEW_RELATION_DELTA_G = ("0.001", "1e-10", "1e-30")
NEW_RELATION_SOURCE = ("docs/mathematics.md §9: Theorem 9.5 (randomized response against the special value's uniform "
                       "output, both orders, exact), Theorem 9.4 (the truncated subsampled Gaussian: the labelled "
                       "pair, add/remove; the diluted pair at rate (1-t)q + tg, replace-one) and Theorem 9.6 (a "
                       "Gaussian batch drawn with replacement: the labelled pair over j ~ Bin(M, 1/N))")
UPPER = "a certified upper bound: the stated pair dominates the mechanism (not claimed tight)"


def _new_relations_rows() -> list[RowSpec]:
    rows = []
    for m in SPECIAL_RR:
        for dg in NEW_RELATION_DELTA_G:
            rows.append(_row("relations", "epsilon", f"{m},count=1", dg, 12, NEW_RELATION_SOURCE,
                             "exact pair, the larger of the two orders (Theorem 9.5)"))
        rows.append(_row("relations", "delta", f"{m},count=1", "0.5", 12, NEW_RELATION_SOURCE,
                         "exact pair, the larger of the two orders (Theorem 9.5)"))
        for dg in ("0.001", "1e-30"):
            rows.append(_row("relations", "epsilon", f"{m},count=2", dg, 3, NEW_RELATION_SOURCE,
                             "exact pair, two runs: certified bracket (Theorem 9.5)"))
    for m in TRUNCATED + WITH_REPLACEMENT:
        for dg in ("0.00001", "1e-30"):
            rows.append(_row("relations", "epsilon", f"{m},count=1", dg, 8, NEW_RELATION_SOURCE, UPPER))
        rows.append(_row("relations", "delta", f"{m},count=1", "0.5", 8, NEW_RELATION_SOURCE, UPPER))
    for m in (TRUNCATED[2], WITH_REPLACEMENT[1]):
        rows.append(_row("relations", "epsilon", f"{m},count=10", "0.00001", 2, NEW_RELATION_SOURCE,
                         UPPER + "; ten runs: certified bracket"))
    for m in WITH_REPLACEMENT_SUMS:  # Theorem 9.6 beyond the Gaussian (issue 27 §3)
        for dg in ("0.00001", "1e-30"):
            rows.append(_row("relations", "epsilon", f"{m},count=1", dg, 8, WITH_REPLACEMENT_SUMS_SOURCE, UPPER))
        rows.append(_row("relations", "delta", f"{m},count=1", "0.5", 8, WITH_REPLACEMENT_SUMS_SOURCE, UPPER))
    return rows


# batches drawn with replacement of the other sums (Theorem 9.6: the labelled pair over j of the j-shifted pairs)
WITH_REPLACEMENT_SUMS = ("laplace:scale=1,sample=10,of=100,with-replacement=true",
                         "dlaplace:noise=1,sample=10,of=100,with-replacement=true",
                         "dgaussian:sigma=2,sample=10,of=100,with-replacement=true")
WITH_REPLACEMENT_SUMS_SOURCE = ("docs/mathematics.md §9, Theorem 9.6 (a Laplace, discrete Laplace or discrete Gaussian "
                                "sum on a batch drawn with replacement: the labelled pair over j ~ Bin(M, 1/N) of the "
                                "pairs at sensitivity jD)")


# dp_accounting's replace-one pair of a Poisson-subsampled Gaussian with bounded records (Theorem 9.8), appended
BOUNDED = "gaussian:sigma=1,q=0.1,relation=replace-one,bounded=true"
BOUNDED_SOURCE = ("docs/mathematics.md §9, Theorem 9.8 (records within half the replace-one sensitivity: the pair "
                  "((1-q)N(0) + qN(-D/2), (1-q)N(0) + qN(D/2)), dp_accounting's reading)")
BOUNDED_NOTE = "the pair is attained: a lower bound of the mechanism's optimum, the optimum under dp_accounting's assumption"


def _bounded_rows() -> list[RowSpec]:
    rows = []
    for k, digits in ((1, 10), (2, 6)):
        rows.append(_row("relations", "delta", f"{BOUNDED},count={k}", "0.1", digits, BOUNDED_SOURCE, BOUNDED_NOTE))
        rows.append(_row("relations", "epsilon", f"{BOUNDED},count={k}", "0.000001", digits, BOUNDED_SOURCE, BOUNDED_NOTE))
    return rows


# the replace-one Poisson Laplace with bounded records (Theorem 9.9), appended after the Gaussian's
BOUNDED_LAPLACE = "laplace:scale=2,q=0.1,relation=replace-one,bounded=true"
BOUNDED_LAPLACE_SOURCE = ("docs/mathematics.md §9, Theorem 9.9 (records within half the replace-one sensitivity: the "
                          "pair ((1-q)Lap(0) + qLap(-D/2), (1-q)Lap(0) + qLap(D/2)), the reading dp_accounting's "
                          "additive-noise base class documents for REPLACE)")
BOUNDED_LAPLACE_NOTE = "the pair is attained: a lower bound of the mechanism's optimum, the optimum under the named assumption"


def _bounded_laplace_rows() -> list[RowSpec]:
    return [_row("relations", "delta", f"{BOUNDED_LAPLACE},count=1", "0.01", 10, BOUNDED_LAPLACE_SOURCE,
                 BOUNDED_LAPLACE_NOTE),
            _row("relations", "epsilon", f"{BOUNDED_LAPLACE},count=1", "0.000001", 10, BOUNDED_LAPLACE_SOURCE,
                 BOUNDED_LAPLACE_NOTE)]


def _all_relations_rows() -> list[RowSpec]:
    return _relations_rows() + _new_relations_rows() + _bounded_rows() + _bounded_laplace_rows()


# -- conversions ----------------------------------------------------------------------------

CONVERSION_COMPOSITIONS = ("gaussian:sigma=2,count=10", "laplace:scale=2,count=10", "gaussian:sigma=1,q=0.01,count=1000")
CONVERSION_ORDERS = ("2", "3", "4", "6", "8", "12", "16", "24", "32", "48", "64")
CONVERSION_METHODS = ("optimal", "rdp-mironov", "rdp-cks", "rdp-bbghs")
CONVERSION_SOURCE = ("docs/rdp.md §3: Mironov 2017 Prop. 3, Canonne-Kamath-Steinke 2020 Prop. 12, Balle et al. 2020 "
                     "Thm 21, the best of the orders in options; optimal: the certified optimum beside them")


def _conversion_rows() -> list[RowSpec]:
    rows = []
    orders = (("orders", ",".join(CONVERSION_ORDERS)),)
    for c in CONVERSION_COMPOSITIONS:
        for m in CONVERSION_METHODS:
            digits = 12 if m != "optimal" or "q=" not in c else 4
            rows.append(_row("conversions", "epsilon", c, "0.00001", digits, CONVERSION_SOURCE, method=m,
                             kind="convert", options=() if m == "optimal" else orders))
    return rows


# -- tradeoff -------------------------------------------------------------------------------

TRADEOFF_ALPHAS = ("0.000001", "0.0001", "0.01", "0.1", "0.5")
TRADEOFF_COMPOSITIONS = (
    (("gaussian:sigma=1,count=4",), 20, "Gaussian: beta = Phi(Phi^-1(1 - alpha) - mu), mu^2 = k/sigma^2 (exact)"),
    (("gaussian:sigma=2,count=100",), 20, "Gaussian: beta = Phi(Phi^-1(1 - alpha) - mu), mu^2 = k/sigma^2 (exact)"),
    (("0.5", "0", "10"), 20, "pure (0.5, 0), 10 runs: the KOV15 vertices (exact)"),
    (("log(2)", "0", "3"), 20, "pure (log 2, 0), 3 runs: the KOV15 vertices (rational)"),
    (("gaussian:sigma=1,q=0.1,count=10",), 4, "Poisson-subsampled Gaussian: certified PLD bracket"),
)
TRADEOFF_SOURCE = "docs/tradeoff.md: the trade-off curve beta(alpha) (Dong-Roth-Su 2022); KOV15 §2 vertices"


def _tradeoff_rows() -> list[RowSpec]:
    return [RowSpec("tradeoff", "beta", "optimal", mechanisms=(m,), at=a, digits=d, source=TRADEOFF_SOURCE, note=note,
                    kind="tradeoff")
            for m, d, note in TRADEOFF_COMPOSITIONS for a in TRADEOFF_ALPHAS]


def evaluate_view(spec: RowSpec, comp: Composition) -> Enclosure:
    """The enclosure of a ``"convert"`` row (eps at delta_g = ``at`` by ``method`` at the orders of
    ``options``) or a ``"tradeoff"`` row (beta at alpha = ``at``, docs/tradeoff.md)."""
    from exactdp.engines.pld.refine import unbounded

    if spec.kind == "tradeoff":
        from exactdp.api.tradeoff import tradeoff

        with unbounded():
            return tradeoff(comp, [spec.at], digits=spec.digits).betas[0]
    from exactdp.api.methods import get_method, parse_orders

    opts = dict(spec.options)
    kw = {"orders": parse_orders(opts["orders"].split(","))} if "orders" in opts else {}
    with unbounded():
        return get_method(spec.method).epsilon(comp, parse_delta(spec.at, "at"), digits=spec.digits, **kw)


MECHANISM_TABLES: tuple[TableSpec, ...] = (
    TableSpec("discrete", "Discrete Laplace and discrete Gaussian: optimal eps at delta_g and delta at eps_g",
              "k runs (k in {1,2,10,100}) of the discrete Laplace (noise a in {0.1,0.5,1}, sensitivity 1 and 2) and "
              "the discrete Gaussian (sigma in {1,3}, sensitivity 1): eps_g at delta_g down to 1e-30 and delta_g at "
              "eps_g in {0.5, 1}; 12 digits (8 at k = 100).  Both pairs are symmetric, so both orders agree.",
              DISCRETE_SOURCE, _discrete_rows),
    TableSpec("mixture", "Mixtures of Gaussians: each direction, certified",
              "Three mixtures (3 and 2 components; the last is the Poisson-subsampled Gaussian), k in {1, 2}, the larger "
              "of the two orders: delta at eps_g = 0.5 and eps at delta_g = 1e-6 (10 digits at k = 1, 5 at k = 2); "
              "k = 100 as a 3-digit bracket; the first mixture's remove and add orders alone at eps_g = 0.1.",
              MIXTURE_SOURCE, _mixture_rows),
    TableSpec("relations", "Neighbouring relations and sampling schemes: replace-one, each order, fixed batches",
              "A Gaussian (sigma 1) and a Laplace (scale 1) under Poisson subsampling (q = 0.1) with replace-one "
              "neighbours, the remove / add / max orders of add/remove, and a fixed batch of 100 of 1000 (replace-one), "
              "k in {1, 2}: delta at eps_g = 0.1 and eps at delta_g = 1e-6 (10 digits at k = 1, 6 at k = 2).  Then "
              "the newest (Theorems 9.4-9.6): replace-special randomized response (exact pair; eps at delta_g 1e-3 "
              "to 1e-30 and delta at eps_g = 0.5, one and two runs), the truncated subsampled Gaussian (add/remove "
              "and replace-one) and a Gaussian batch drawn with replacement, one run and ten, labelled as the "
              "certified upper bounds they are.",
              RELATION_SOURCE, _all_relations_rows),
    TableSpec("conversions", "What the RDP conversions cost: eps at delta_g = 1e-5 beside the optimum",
              "rdp-mironov, rdp-cks and rdp-bbghs at the orders of options (the certified best over them, 12 digits) "
              "beside the optimal eps, for 10 Gaussians (sigma 2), 10 Laplaces (scale 2) and 1000 steps of DP-SGD "
              "(sigma 1, q = 0.01; its optimum a 4-digit bracket).",
              CONVERSION_SOURCE, _conversion_rows),
    TableSpec("tradeoff", "Trade-off points: beta(alpha) of the optimal test",
              "beta at alpha in {1e-6, 1e-4, 0.01, 0.1, 0.5} for Gaussian compositions (closed form) and pure "
              "(eps, 0) compositions (the KOV15 vertices), 20 digits, and a Poisson-subsampled Gaussian "
              "(PLD bracket, 4 digits).",
              TRADEOFF_SOURCE, _tradeoff_rows),
)
