"""The dispatch table: which engine answers a composition, and why.

:data:`ROUTES` is read top to bottom; the first row whose test holds answers.  Each row names the
composition's shape, the engine that answers it, and the reason; the answer's ``"algorithm"``
(in the JSON contract, docs/contracts.md §3) is one of the names its engine lists in
:data:`ENGINES`.  Adding an engine or a mechanism is one row here (docs/architecture.md).

==================  =========================================================  =============
row                 shape of the composition                                   engine
==================  =========================================================  =============
non-private         a mechanism without noise (sigma = 0, scale = 0)           ``nonprivate``
gaussian            Gaussian mechanisms only (no subsampling): mu^2 adds       ``gaussian``
specific            any other specific mechanism (Laplace, RR, subsampling)   ``pld``
homogeneous         k equal generic (eps, delta) mechanisms                    ``kov15``
small-lattice       one huge group with few joint outcomes of the others, on   ``pld``
                    a common lattice predicted faster than the tails (composed
                    exactly in fixed point)
tails               one huge group with few joint outcomes of the others      ``tails``
exact-profile       an affordable exact profile (common grid or enumeration)  ``mv``
otherwise           many distinct off-grid values, huge exact products, or a   ``pld``
                    lattice of more than 20,000 atoms in fixed point
==================  =========================================================  =============

>>> from exactdp.model.composition import Composition

T = TypeVar("T")
>>> route(Composition.homogeneous("0.1", "0.001", 30)).row
'homogeneous'
>>> r = route(Composition.of(["gaussian:sigma=1,count=10", "gaussian:sigma=2"]))
>>> r.row, r.engine.name, r.payload
('gaussian', 'gaussian', Fraction(41, 4))
>>> route(Composition.of([("1", "0.1"), ("2", "0.2")])).engine.name
'mv'
>>> route(Composition.of(["gaussian:sigma=0", "laplace:scale=1"])).row
'non-private'
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, TypeVar

from exactdp.core import memory
from exactdp.core.enclosure import Enclosure
from exactdp.core.errors import MemoryBoundError
from exactdp.core.numbers import ExactReal
from exactdp.engines import gaussian, kov15, kov15_decide, mv, tails
from exactdp.engines.mv_profile import NoExactProfile
from exactdp.engines.pld import engine as pld
from exactdp.engines.pld.plan import lattice_bytes, lattice_points, lattice_seconds, plan, prec_for
from exactdp.model.composition import Composition
from exactdp.model.mechanisms import NonPrivate

T = TypeVar("T")

# The engines are called through their modules (``kov15.kov15_delta``), so that a test that replaces
# an engine function (tests/proofs: a wrong formula must fail a derivation) reaches every caller.

__all__ = ["ENGINES", "MV_FIXED_POINT_ATOMS", "ROUTES", "ROUTE_DIGITS", "Engine", "Route", "Row", "answer", "route"]

#: the digits the time predictions of the routes are made for (the default digits of a query)
ROUTE_DIGITS = 10


@dataclass(frozen=True)
class Engine:
    """One engine's three queries, each ``(comp, value, payload[, digits])``, and the algorithm
    names its answers carry."""

    name: str
    delta: Callable[[Composition, ExactReal, int, Any], Enclosure]
    epsilon: Callable[[Composition, Fraction, int, Any], Enclosure]
    decide: Callable[[Composition, ExactReal, Fraction, Any], bool]
    algorithms: tuple[str, ...]


@dataclass(frozen=True)
class Row:
    """One row of the dispatch table: ``test(comp)`` is the payload the engine is handed (what the
    test computed and the engine reuses: mu^2, an exact profile) or :data:`NO` when the row does
    not apply."""

    name: str
    engine: str
    reason: str
    test: Callable[[Composition], Any]
    #: the prediction that chose the row, appended to its reason (None: the shape alone chose it)
    why: Callable[[Composition], str] | None = None


@dataclass(frozen=True)
class Route:
    """Where a composition goes: the row that matched, its engine and the payload."""

    row: str
    engine: Engine
    reason: str
    payload: Any = None


#: a row's test returns this when the row does not apply (a payload may itself be None)
NO: Any = object()

#: the algorithm of the answers about a composition holding a mechanism without noise: the pair of
#: two point masses apart has delta = 1 at every eps (docs/mathematics.md §7.13)
NONPRIVATE = "non-private"

ENGINES: dict[str, Engine] = {e.name: e for e in (
    Engine("gaussian",
           lambda c, x, d, mu2: gaussian.gaussian_delta(mu2, x, digits=d),
           lambda c, x, d, mu2: gaussian.gaussian_epsilon(mu2, x, digits=d),
           lambda c, e, dg, mu2: gaussian.gaussian_decide(mu2, e, dg),
           ("gaussian-closed-form",)),
    Engine("nonprivate",
           lambda c, x, d, _: Enclosure.exact_value(Fraction(1), d, NONPRIVATE),
           lambda c, x, d, _: Enclosure.infinite(d, NONPRIVATE),
           lambda c, e, dg, _: False,
           (NONPRIVATE,)),
    Engine("kov15",
           lambda c, x, d, _: kov15.kov15_delta(c, x, digits=d),
           lambda c, x, d, _: kov15.kov15_epsilon(c, x, digits=d),
           lambda c, e, dg, _: kov15_decide.kov15_decide(c, e, dg),
           ("kov15-exact", "kov15-direct", "kov15-incomplete-beta")),
    Engine("mv",
           lambda c, x, d, prof: mv.mv_delta(c, x, digits=d, profile=prof),
           lambda c, x, d, prof: mv.mv_epsilon(c, x, digits=d, profile=prof),
           lambda c, e, dg, prof: mv.mv_decide(c, e, dg, profile=prof),
           ("exact-counting", "enumeration", "brute-force")),
    Engine("tails",
           lambda c, x, d, _: tails.tails_delta(c, x, digits=d),
           lambda c, x, d, _: tails.tails_epsilon(c, x, digits=d),
           lambda c, e, dg, _: tails.tails_decide(c, e, dg),
           ("binomial-tails",)),
    Engine("pld",
           lambda c, x, d, _: pld.pld_delta(c, x, digits=d),
           lambda c, x, d, _: pld.pld_epsilon(c, x, digits=d),
           lambda c, e, dg, _: pld.pld_decide(c, e, dg),
           ("pld", "pld-lattice", "pld-single-step", "pld-extremes", "pld-fft")),
)}


def _non_private(comp: Composition) -> Any:
    return None if any(isinstance(m, NonPrivate) for m, _ in comp.groups) else NO


def _gaussian_only(comp: Composition) -> Any:
    mu2 = gaussian.gaussian_mu2(comp)
    return NO if mu2 is None else mu2


def _specific(comp: Composition) -> Any:
    return None if not comp.is_generic else NO


def _homogeneous(comp: Composition) -> Any:
    return None if comp.is_homogeneous else NO


def _lattice_vs_tails(comp: Composition) -> tuple[float, float, bool]:  # float ok: time predictions
    """(predicted seconds of the exact lattice, of the binomial tails, whether the lattice's predicted
    bytes fit the memory bound), at :data:`ROUTE_DIGITS` digits."""
    pl = plan(comp)
    fits = lattice_bytes(pl, prec_for(ROUTE_DIGITS, Fraction(1))) <= memory.available()
    return lattice_seconds(pl, ROUTE_DIGITS), tails.tails_seconds(comp), fits


def _small_lattice(comp: Composition) -> Any:
    if not tails.tails_applies(comp):
        return NO
    lat, tl, fits = _lattice_vs_tails(comp)
    return None if fits and lat < tl else NO


def _predicted(comp: Composition) -> str:
    lat, tl, fits = _lattice_vs_tails(comp)
    pts = lattice_points(comp)
    where = "" if fits else ", past the memory bound"
    lattice = f"the exact lattice of {pts:.2g} points {lat:.2g} s{where}" if math.isfinite(lat) else "no exact lattice"  # float ok: a message
    return (f" (predicted at {ROUTE_DIGITS} digits: {lattice}; binomial tails over "
            f"{tails.rest_outcomes(comp):,} outcomes of the small groups {tl:.2g} s)")


def _tails(comp: Composition) -> Any:
    return None if tails.tails_applies(comp) else NO


#: an exact profile in fixed point (weights not rational) over more atoms than this goes to the PLD
#: lattice, which composes the same lattice by FFT (measured, 5 values on the 1/100 grid, eps at
#: delta_g 1e-6, 10 digits: 19,800 atoms 0.04 s vs 0.01 s; 99,000 atoms 2.3 s vs 0.03 s; 198,000
#: atoms 32 s vs 0.06 s; 660,000 atoms past 8 GB vs 0.1 s), docs/pld.md §7.1
MV_FIXED_POINT_ATOMS = 20_000


def _exact_profile(comp: Composition) -> Any:
    try:
        prof = mv.exact_profile(comp)
    except NoExactProfile:
        return NO
    if prof is not None and not prof.exact and prof.n > MV_FIXED_POINT_ATOMS:
        return NO
    return prof


def _always(comp: Composition) -> Any:
    return None


ROUTES: tuple[Row, ...] = (
    Row("non-private", "nonprivate", "a mechanism without noise: delta = 1 at every eps, eps = inf at every delta < 1 "
        "(docs/mathematics.md §7.13)", _non_private),
    Row("gaussian", "gaussian", "Gaussian mechanisms only: mu^2 adds, closed form (Balle-Wang 2018 Thm 8)",
        _gaussian_only),
    Row("specific", "pld", "specific mechanisms: the certified PLD bracket (docs/pld.md)", _specific),
    Row("homogeneous", "kov15", "k equal (eps, delta) mechanisms: KOV15 Thm 3.3, constant time in k", _homogeneous),
    Row("small-lattice", "pld", "one huge group on a common lattice predicted faster than the binomial tails: "
        "composed exactly in fixed point (docs/pld.md §7.1)", _small_lattice, _predicted),
    Row("tails", "tails", "one huge group, few joint outcomes of the others: binomial tails (MV Thm 1.5)", _tails,
        _predicted),
    Row("exact-profile", "mv", "an affordable exact profile: Murtagh-Vadhan Thm 1.5 by exact counting or "
        "enumeration", _exact_profile),
    Row("otherwise", "pld", "many distinct off-grid values, huge exact products, or a large fixed-point lattice: "
        "the certified PLD bracket", _always),
)


def route(comp: Composition) -> Route:
    """The first row of :data:`ROUTES` that applies to ``comp``, with its engine and payload."""
    for row in ROUTES:
        payload = row.test(comp)
        if payload is not NO:
            return Route(row.name, ENGINES[row.engine], row.reason + (row.why(comp) if row.why else ""), payload)
    raise AssertionError("the last row of ROUTES applies to every composition")  # pragma: no cover


def answer(comp: Composition, ask: Callable[[Route], T]) -> tuple[T, Route]:
    """``ask(route(comp))`` and the route that answered; an exact route predicted to pass the memory
    bound (:class:`~exactdp.core.errors.MemoryBoundError`, raised before it allocates) hands the
    query to the certified PLD bracket, which fits any bound by its grid, and says why.

    >>> def ask(r: Route) -> str:  # an exact engine that predicts too much memory
    ...     if r.engine.name != "pld":
    ...         raise MemoryBoundError("the exact profile would take about 9.0 GB, past the memory bound")
    ...     return r.engine.name
    >>> name, r = answer(Composition.of([("1", "0.1"), ("2", "0.2")]), ask)
    >>> name, r.row
    ('pld', 'otherwise')
    """
    r = route(comp)
    try:
        return ask(r), r
    except MemoryBoundError as e:
        if r.engine.name == "pld":
            raise
        alt = Route("otherwise", ENGINES["pld"], f"the {r.row} row would pass the memory bound ({e}): the "
                    "certified PLD bracket instead")
        return ask(alt), alt
