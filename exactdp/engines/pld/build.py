"""Building the composed laws of a plan at one grid, and the cache of the last few builds.

Every distinct mechanism of each order is discretised on the grid ``h`` (connect-the-dots above,
binning below, :mod:`exactdp.engines.pld.discrete`), each group is composed by binary powering
and the groups by a balanced product, in fixed-point integers that round every mass in the safe
direction (:mod:`exactdp.engines.pld.fixed`, docs/pld.md §7.1-§7.2).  On the exact lattice one
chain suffices; off it, a build may keep only what a query at eps >= its floor can still reach
(docs/pld.md §7.3).
"""

from __future__ import annotations

import math
import time
from dataclasses import replace
from fractions import Fraction

from flint import ctx

from exactdp.core import memory, progress
from exactdp.core.numbers import arb_of_fraction
from exactdp.engines.pld import fixed, store
from exactdp.engines.pld.discrete import binomial_law, discretize, discretize_binomial, tail_range
from exactdp.engines.pld.laws import Built, Law, trim
from exactdp.engines.pld.models import GenericPair, LossModel
from exactdp.engines.pld.plan import Plan, binomial_group, build_bytes, grid_points, lattice_bytes, op_count, plan
from exactdp.model.composition import Composition

__all__ = ["Built", "build", "build_cached", "finest_build"]


def _binomial_units(model: LossModel, h: Fraction) -> int | None:
    """eps/h when the model is a generic pair whose eps is a positive multiple of h, else None."""
    if not isinstance(model, GenericPair) or model.eps.kind != "rational" or model.eps.value <= 0:
        return None
    u = model.eps.value / h
    return int(u) if u.denominator == 1 else None


def _models_by_identity(groups: tuple[tuple[LossModel, int], ...]) -> list[tuple[LossModel, int]]:
    """The groups with equal models (by key) merged, their counts added, in first-seen order."""
    merged: dict[tuple, tuple[LossModel, int]] = {}
    for m, c in groups:
        k = m.key()
        merged[k] = (m, merged[k][1] + c) if k in merged else (m, c)
    return list(merged.values())


def _fixed_chain(parts: list[tuple[Law, int]], budget: Fraction, *, pair: bool = False,
                 floor: int | None = None) -> fixed.FixedLaw:
    """The product of ``law ** count`` over ``parts`` in fixed point (:mod:`exactdp.engines.pld.fixed`), with
    fraction bits and tail cuts that each lose at most a quarter of ``budget``.

    ``pair``: binned laws off the lattice, P floored and tilted Q rounded up (docs/pld.md §7.2).
    ``floor``: a grid index below which no query will look; partial products then keep only what
    can still reach it (docs/pld.md §7.3).
    """
    stages = sum(2 * c.bit_length() for _, c in parts) + len(parts)
    points = sum(l.span * c for l, c in parts)
    bits = fixed.bits_for(budget / 4, points, stages)
    cut = int(budget * (1 << bits) / (8 * stages))
    # binned factors enter with their tilts centred, and Q keeps the extra bits their spread needs (§7.2)
    n_binned = sum(c for l, c in parts if not l.exact)
    qbits = fixed.q_bits(parts[0][0].h, n_binned, bits) if pair and parts else 0
    ones = [fixed.from_law(l, bits, pair=pair, qbits=qbits, qshift=fixed.tilt_centre(l) if pair else Fraction(0))
            for l, _ in parts]
    if floor is None:
        return fixed.product([fixed.power(f, c, cut) for f, (_, c) in zip(ones, parts)], cut)
    reaches = [fixed.Reach.of(f).times(c) for f, (_, c) in zip(ones, parts)]
    total = reaches[0]
    for r in reaches[1:]:
        total = total + r
    # a partial sum is cut where the rest stays below its Hoeffding bound but for about budget/4
    tau_bits = budget.denominator.bit_length() - budget.numerator.bit_length() + 3
    log_tau = tau_bits * math.log(2) + math.log(stages)  # float ok: a floor choice only (§7.3)
    if pair:
        # a binned output of index sum j has its loss in (j h, (j + n) h], n the binned factors:
        # the queries at eps >= floor h look at index sums down to floor - n (docs/pld.md §7.3)
        floor -= sum(c for l, c in parts if not l.exact)
    floors = fixed.Floors(floor, total, log_tau)
    laws = [fixed.power(f, c, cut, floors) for f, (_, c) in zip(ones, parts)]
    return fixed.product(laws, cut, floors, reaches)


def _lattice_chain(disc: list[tuple[tuple[Law, Law], int]], groups: tuple[tuple[LossModel, int], ...],
                   h: Fraction, budget: Fraction) -> Law:
    """The exact composed law of one order on its lattice, as a fixed-point sub-measure whose missing
    mass is at most about ``budget`` (a quarter each to the binomial windows, the cuts and the floors).

    A group of at least 64 generic pairs enters as its windowed binomial law; any other group is
    powered.  Everything is composed in fixed point (:mod:`exactdp.engines.pld.fixed`, docs/pld.md §7.1).
    """
    parts: list[tuple[Law, int]] = []
    n_parts = len(disc)
    t_part = arb_of_fraction(budget / (4 * max(n_parts, 1)))
    for ((_, l), c), (model, _) in zip(disc, _models_by_identity(groups)):
        units = _binomial_units(model, h)
        if c >= 64 and units is not None:
            assert isinstance(model, GenericPair)  # _binomial_units answers only for generic pairs
            parts.append((binomial_law(units, model.delta, c, h, t_part), 1))
        else:
            parts.append((trim(l, t_part), c))
    return fixed.to_law(_fixed_chain(parts, budget))


def _grid_chains(disc: list[tuple[tuple[Law, Law], int]], budget: Fraction,
                 floor: int | None = None) -> tuple[Law, Law]:
    """(upper, lower) composed laws of one order off the lattice, in fixed point (docs/pld.md §7.2):
    the upper laws as sub-measures of their dominating pairs with the missing mass at +inf, the
    lower laws with P floored and tilted Q rounded up.  Each side loses at most about ``budget``.
    ``floor``: the grid index below which no query will look (docs/pld.md §7.3)."""
    t_part = arb_of_fraction(budget / (4 * max(len(disc), 1)))
    up = _fixed_chain([(trim(u, t_part), c) for (u, _), c in disc], budget, floor=floor)
    low = _fixed_chain([(trim(l, t_part), c) for (_, l), c in disc], budget, pair=True, floor=floor)
    return fixed.to_upper_law(up), fixed.to_law(low)


def build(pl: Plan, h: Fraction, tau: Fraction, prec: int, floor: Fraction | None = None) -> Built:
    """Discretise and compose every order at grid ``h`` (truncating at most ``tau`` of mass per cut).

    ``floor``: no query of this build will look at a loss below it (an eps >= floor); off the
    lattice the partial products then keep only what can still reach it (docs/pld.md §7.3).  The
    laws stay certified at every eps, only looser below the floor.
    """
    # the exact lattice is composed in fixed point (docs/pld.md §7.1): far fewer bytes a point than balls
    need = lattice_bytes(pl, prec) if pl.lattice is not None and h == pl.lattice else build_bytes(pl, h, prec)
    memory.require(need, f"a PLD grid of about {grid_points(pl, h):,.0f} points at {prec} bits")
    start = time.monotonic()
    laws = []
    exact = True
    n_ops = op_count(pl)
    with ctx.workprec(prec):
        ta = arb_of_fraction(tau)
        for groups in pl.orders:
            disc = []
            for model, count in _models_by_identity(groups):
                progress.tick(f"discretising {model.name} on the grid 1/{float(1 / h):.4g}")  # float ok: a message
                jmin, jmax = tail_range(model, h, tau)
                disc.append((discretize(model, h, jmin, jmax, prec=prec), count))
            if not all(u.exact for (u, _), _ in disc):
                # off the lattice: a large group of generic pairs is composed exactly first (a binomial
                # pair) and discretised once, instead of powering its discretised step (docs/pld.md §6)
                disc = [(discretize_binomial(m.eps.value, m.delta, c, h, ta), 1) if binomial_group(m, c) else d
                        for d, (m, c) in zip(disc, _models_by_identity(groups))]
            if all(u.exact for (u, _), _ in disc):
                # exact laws: one chain suffices, in fixed point (docs/pld.md §7.1).  It is a sub-measure
                # of the true law (a lower bound, docs/pld.md §3); the missing mass adds at most its
                # P-mass to delta, so the same law with the missing mass put at +inf is an upper bound
                low = _lattice_chain(disc, groups, h, tau * n_ops)
                up = replace(low, upper=True, p_inf=low.p_inf + low.moved)
            else:
                exact = False
                index = math.floor(floor / h) if floor is not None else None
                up, low = _grid_chains(disc, tau * n_ops, index)
            laws.append((up, low))
    return Built(h, prec, tau, laws, exact, time.monotonic() - start, floor if not exact else None)


# -- the cache of the last few builds ------------------------------------------------------------------

#: the last three builds, by (plan key, h, tau, prec, floor): a refinement, a curve and a decision
#: read the builds they made again
_CACHE: dict[tuple, Built] = {}


def build_cached(pl: Plan, h: Fraction, tau: Fraction, prec: int, floor: Fraction | None = None) -> Built:
    """:func:`build`, remembered: the same arguments answer the same build (the oldest of three goes).

    With ``EXACTDP_CACHE_DIR`` set, a build not in memory is looked up on disk before it is made,
    and one that is made is stored there (:mod:`exactdp.engines.pld.store`, docs/pld.md §7.4).
    """
    key = (pl.key, h, tau, prec, floor)
    if key not in _CACHE:
        b = store.load(key)
        if b is None:
            b = build(pl, h, tau, prec, floor)
            store.save(key, b)
        if len(_CACHE) >= 3:
            _CACHE.pop(next(iter(_CACHE)))
        _CACHE[key] = b
    return _CACHE[key]


def finest_build(comp: Composition, floor: Fraction | None = None) -> Built | None:
    """The finest build of this composition in the cache (the one a refinement ended with) that is
    tight down to ``floor`` (None: at every eps)."""
    key = plan(comp).key
    builds = [b for k, b in _CACHE.items() if k[0] == key
              and (b.floor is None or (floor is not None and b.floor <= floor))]
    return min(builds, key=lambda b: (b.h, -b.prec)) if builds else None
