"""Certified probes: does the composition at one point meet the target (eps_g, delta_g)?

Each probe returns an :class:`~exactdp.calibrate.search.Outcome` whose verdict is proved
(docs/calibration.md §1):

* generic (eps, delta)-DP compositions, optimal method: the exact decision :func:`exactdp.is_private`
  (KOV15 Thm 3.3 / Murtagh-Vadhan Thm 1.5; docs/contracts.md §1.5), never wrong;
* a closed-form method (``basic``, ``drv10``, ...): the method's certified enclosure of eps at
  delta_g: upper end <= eps_g proves "meets", lower end > eps_g proves "fails"
  (docs/mathematics.md §4);
* Gaussian compositions: the closed form delta(eps_g) of docs/mathematics.md §7.2 in Arb;
* any other mechanism composition: the PLD engine's certified bracket [lower, upper] of delta at
  eps_g (docs/pld.md §8): upper <= delta_g proves "meets", lower > delta_g proves "fails".
  The grid is refined only as far as the decision needs: the first coarse grid settles a point
  far from the boundary, and each refinement aims at the width that the previous bracket says is
  needed (width ~ h^2, docs/pld.md §6) instead of a fixed number of digits.

Scores (floats) only choose the next point of the search.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from flint import arb, ctx

from exactdp.calibrate.certsearch import Outcome, Proof
from exactdp.core import progress
from exactdp.core.errors import PrecisionError
from exactdp.core.numbers import ExactReal, arb_of_fraction, fraction_of_arb_endpoints
from exactdp.model.composition import Composition
from exactdp.model.generic import Mechanism

__all__ = ["cmp_real", "gaussian_probe", "generic_probe", "method_probe", "pld_probe", "probe_for"]


def cmp_real(a: Fraction, b: ExactReal, max_prec: int = 1 << 14) -> int:
    """The exact sign of a - b for a rational a and an exact real b (log(q) included); 0 only on
    equality (a rational never equals log(q) for q != 1: Lindemann)."""
    r = b.rational_value()
    if r is not None:
        return (a > r) - (a < r)
    prec = 64
    while prec <= max_prec:
        with ctx.workprec(prec):
            d = arb_of_fraction(a) - b.arb()
        if d > 0:
            return 1
        if d < 0:
            return -1
        prec *= 2
    raise PrecisionError(f"could not compare {a} with {b}")


def _f(q: Fraction | float | arb) -> float:  # float ok: scores only
    return float(q)  # float ok: a search score only


def _log_ratio(mid: Fraction | float, delta_g: Fraction) -> float | None:  # float ok: a score
    if mid <= 0 or delta_g <= 0:
        return None
    return math.log(_f(mid)) - math.log(_f(delta_g)) if _f(mid) > 0 else None  # float ok: a search score only


# -- generic compositions: exact decisions -------------------------------------------------------------

def generic_probe(comp_of: Callable[[Any], Composition], eps_g: ExactReal, delta_g: Fraction) -> Callable[[Any], Outcome]:
    """Exact decisions (``is_private``); the score is OptComp(delta_g) - eps_g at 6 digits."""
    from exactdp.api.optimal import is_private, optimal_epsilon

    def probe(x: Any) -> Outcome:
        progress.tick("exact decision")
        t0 = time.monotonic()
        comp = comp_of(x)
        ok = is_private(comp, eps_g, delta_g)
        score: float | None = None  # float ok: a score
        try:
            e = optimal_epsilon(comp, delta_g, digits=6)
            score = math.inf if e.is_infinite else _f((e.lower + e.upper) / 2) - _f(eps_g.arb().mid())
        except PrecisionError:
            score = None
        if score is not None and ((ok and score > 0) or (not ok and score < 0)):
            score = -1e-300 if ok else 1e-300  # float ok: keep the score's sign consistent with the proof
        how = "exact decision, " + ("KOV15 Thm 3.3" if comp.is_homogeneous else "Murtagh-Vadhan Thm 1.5")
        v = "meets" if ok else "fails"
        return Outcome(v, score, Proof(v, how, seconds=time.monotonic() - t0))

    return probe


def method_probe(comp_of: Callable[[Any], Composition], eps_g: ExactReal, delta_g: Fraction, method: str,
                 options: dict[str, Any]) -> Callable[[Any], Outcome]:
    """A closed-form method's certified eps at delta_g against eps_g (more digits when it straddles)."""
    from exactdp.api.methods import get_method

    spec = get_method(method)

    def probe(x: Any) -> Outcome:
        t0 = time.monotonic()
        comp = comp_of(x)
        enc = None
        for digits in (8, 20, 40):
            progress.tick(f"{method} at {digits} digits")
            enc = spec.epsilon(comp, delta_g, digits=digits, **options)
            if enc.is_infinite:
                return Outcome("fails", math.inf, Proof("fails", f"{method}: certifies no finite eps at delta_g",
                                                        seconds=time.monotonic() - t0))
            if cmp_real(enc.upper, eps_g) <= 0:  # type: ignore[arg-type]
                v = "meets"
                break
            if cmp_real(enc.lower, eps_g) > 0:  # type: ignore[arg-type]
                v = "fails"
                break
        else:
            v = "undecided"
        assert enc is not None
        score = _f((enc.lower + enc.upper) / 2) - _f(eps_g.arb().mid())
        return Outcome(v, score, Proof(v, f"{method} enclosure", "eps(delta_g)", enc.lower, enc.upper,  # type: ignore[arg-type]
                                       seconds=time.monotonic() - t0))

    return probe


# -- Gaussian compositions: the closed form --------------------------------------------------------------

def gaussian_delta_arb(mu2: arb, eps: arb) -> arb:
    """delta(eps) of a Gaussian composition with sum mu_i^2 = mu2 (docs/mathematics.md §7.2), mu2 a ball."""
    mu = mu2.sqrt()

    def phi(x: arb) -> arb:
        return (-x / arb(2).sqrt()).erfc() / 2

    return phi(mu / 2 - eps / mu) - eps.exp() * phi(-mu / 2 - eps / mu)


def gaussian_probe(comp_of: Callable[[Any], Composition], eps_g: ExactReal, delta_g: Fraction) -> Callable[[Any], Outcome]:
    """The Gaussian closed form at rising precision until its ball excludes delta_g."""
    from exactdp.engines.gaussian import gaussian_mu2

    def probe(x: Any) -> Outcome:
        t0 = time.monotonic()
        comp = comp_of(x)
        mu2 = gaussian_mu2(comp)
        assert mu2 is not None
        prec = 64
        while prec <= 1 << 16:
            progress.tick(f"Gaussian closed form at {prec} bits")
            with ctx.workprec(prec):
                d = gaussian_delta_arb(arb_of_fraction(mu2), eps_g.arb())
            lo, hi = fraction_of_arb_endpoints(d)
            lo, hi = max(lo, Fraction(0)), min(hi, Fraction(1))
            if hi <= delta_g or lo > delta_g:
                v = "meets" if hi <= delta_g else "fails"
                return Outcome(v, _log_ratio((lo + hi) / 2, delta_g),
                               Proof(v, "Gaussian closed form", "delta(eps_g)", lo, hi, time.monotonic() - t0))
            prec *= 2
        return Outcome("undecided", 0.0, Proof("undecided", "Gaussian closed form", "delta(eps_g)", lo, hi,
                                               time.monotonic() - t0))

    return probe


# -- everything else: the PLD engine --------------------------------------------------------------------

def pld_probe(comp_of: Callable[[Any], Composition], eps_g: ExactReal, delta_g: Fraction,
              deadline: Callable[[], float | None]) -> Callable[[Any], Outcome]:  # float ok: a clock time, never a result
    """Probes decided by the PLD engine's certified bracket of delta(eps_g), refined only until it
    excludes delta_g or the deadline (:func:`exactdp.engines.pld.engine.pld_decision`, docs/pld.md §8)."""
    from exactdp.engines.pld.engine import pld_decision

    def probe(x: Any) -> Outcome:
        t0 = time.monotonic()
        try:
            v, lo, hi = pld_decision(comp_of(x), eps_g, delta_g, deadline=deadline())
        except PrecisionError as e:  # a point the grids cannot place (an atom at eps_g itself): look elsewhere
            return Outcome("undecided", 0.0, Proof("undecided", f"PLD: {' '.join(str(e).split())}",
                                                   seconds=time.monotonic() - t0))
        # the score places the next probe only: the end that decided (a float-FFT decision refines that
        # end alone and may leave the other trivial, docs/pld.md §12.7, so the midpoint would mislead)
        at = (lo + hi) / 2
        if hi > 2 * lo:
            at = hi if v == "meets" else lo if v == "fails" else at
        if v == "fails" and lo <= delta_g:  # the exact ends decided: delta(eps_g) > delta_g, however little
            return Outcome(v, None, Proof(v, "the PLD's exact ends: eps_g is below the largest privacy loss and "
                                          "delta(eps_g) > delta_g (docs/pld.md §11.4)", seconds=time.monotonic() - t0))
        return Outcome(v, _log_ratio(at, delta_g) if v != "undecided" else 0.0,
                       Proof(v, "PLD bracket", "delta(eps_g)", lo, hi, time.monotonic() - t0))

    return probe


def dominating_generic(comp: Composition) -> Composition | None:
    """The generic composition that dominates ``comp`` when every mechanism has a pure-DP eps of its
    own (Laplace(b) is (sensitivity/b)-DP, discrete Laplace (noise D)-DP, k-ary randomized response eps-DP: docs/mathematics.md §5
    item 8, §7.4), generic ones kept; None otherwise (Gaussian, subsampled)."""
    from exactdp.model.generic import PureDP
    from exactdp.model.mechanisms import DiscreteLaplace, Laplace, RandomizedResponse

    groups = []
    for m, c in comp.groups:
        if isinstance(m, (Laplace, RandomizedResponse, DiscreteLaplace)):
            groups.append((PureDP(m.eps), c))
        elif isinstance(m, Mechanism):
            groups.append((m, c))
        else:
            return None
    return Composition(tuple(groups))


def dominated_probe(comp_of: Callable[[Any], Composition], eps_g: ExactReal, delta_g: Fraction,
                    pld: Callable[[Any], Outcome] | None) -> Callable[[Any], Outcome]:
    """First the exact decision on the dominating generic composition (cheap; "meets" there proves
    "meets" here, docs/pld.md §1), then the PLD bracket (with ``pld=None``: "undecided").  The score is log(delta/delta_g) either way."""
    from exactdp.api.optimal import is_private, optimal_delta

    def probe(x: Any) -> Outcome:
        t0 = time.monotonic()
        g = dominating_generic(comp_of(x))
        if g is not None and is_private(g, eps_g, delta_g):
            score = None
            try:
                d = optimal_delta(g, eps_g, digits=4)
                score = _log_ratio((d.lower + d.upper) / 2, delta_g)
            except PrecisionError:
                pass
            how = ("exact decision on the dominating pure-DP composition " + str(g)
                   + " (" + ("KOV15 Thm 3.3" if g.is_homogeneous else "Murtagh-Vadhan Thm 1.5") + ")")
            return Outcome("meets", score, Proof("meets", how, seconds=time.monotonic() - t0))
        if pld is None:
            return Outcome("undecided", None, Proof("undecided", "the dominating generic composition misses"))
        return pld(x)

    return probe


def probe_for(comp: Composition, comp_of: Callable[[Any], Composition], eps_g: ExactReal, delta_g: Fraction, *,
              method: str = "optimal", options: dict[str, Any] | None = None,
              deadline: Callable[[], float | None] = lambda: None) -> tuple[Callable[[Any], Outcome], str]:  # float ok: a clock time, never a result
    """The probe for the compositions ``comp_of(x)`` and the engine's name (from the sample ``comp``).

    With the optimal method each point is dispatched on its own composition: generic -> exact
    decision, Gaussian only -> closed form, pure-DP mechanisms (Laplace, randomized response) ->
    the exact decision on the dominating generic composition and, when that misses, the PLD
    bracket; anything else -> PLD bracket (a sampling rate of 1 turns a subsampled Gaussian into
    a plain one, for example).
    """
    from exactdp.engines.gaussian import gaussian_mu2

    if method != "optimal":
        comp.require_generic(f"method={method!r}")
        return method_probe(comp_of, eps_g, delta_g, method, options or {}), method
    exact = generic_probe(comp_of, eps_g, delta_g)
    gauss = gaussian_probe(comp_of, eps_g, delta_g)
    pld = pld_probe(comp_of, eps_g, delta_g, deadline)
    dom = dominated_probe(comp_of, eps_g, delta_g, pld)

    def probe(x: Any) -> Outcome:
        c = comp_of(x)
        if c.is_generic:
            return exact(x)
        if gaussian_mu2(c) is not None:
            return gauss(x)
        if dominating_generic(c) is not None:
            return dom(x)
        return pld(x)

    if comp.is_generic:
        name = "exact"
    elif gaussian_mu2(comp) is not None:
        name = "gaussian-closed-form"
    else:
        name = "pld"
    return probe, name
