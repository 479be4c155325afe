"""The certified PLD engine: a composition of mechanisms -> [lower, upper] for delta or eps.

For each order of the neighbouring pair (one for symmetric mechanisms; "remove" and "add" once a
mechanism is Poisson subsampled, docs/mathematics.md §7; :mod:`exactdp.engines.pld.plan`) the engine
discretises every distinct mechanism on one grid ``h`` (connect-the-dots above, binning below,
:mod:`exactdp.engines.pld.discrete`), composes each group by binary powering and the groups by a
balanced product, in fixed-point integers that round every mass in the safe direction
(:mod:`exactdp.engines.pld.build`, :mod:`exactdp.engines.pld.fixed`, docs/pld.md §7.1-§7.2), and
answers from the two laws (:mod:`exactdp.engines.pld.queries`).  A query that looks only at losses
above some eps builds partial products that keep only what can reach it (docs/pld.md §7.3).  The
answer for the composition is the larger of the orders.  One run of one mechanism is answered from
its profile itself (:mod:`exactdp.engines.pld.single_step`).

Accuracy: both bounds are second order in ``h`` (docs/pld.md §6), and when every loss of every
mechanism lies on a common lattice (generic mechanisms with rational eps, k-ary randomized
response, the discrete Laplace and discrete Gaussian) the grid *is* that lattice and the two laws are the true one: then only the truncation
(at most ``tau`` of mass per cut) and the ball radii separate the bounds, so 30 digits are within
reach (docs/pld.md §7).  Otherwise the grid is refined, width ~ C h^2 predicting the next step,
until the requested digits are certified or the time budget would be exceeded
(:mod:`exactdp.engines.pld.refine`); the best bracket is returned with the digits it certifies
(``Enclosure.digits``).  This module is the engine's public API.
"""

from __future__ import annotations

import math
import time
from fractions import Fraction

from flint import arb, ctx

from exactdp.core import progress
from exactdp.core.enclosure import Enclosure
from exactdp.core.errors import InvalidParameterError, TimeBudgetError
from exactdp.core.numbers import (
    DEFAULT_DIGITS,
    ExactReal,
    arb_of_fraction,
    decimal_string,
    format_fraction,
    fraction_of_arb_endpoints,
)
from exactdp.engines.pld.build import Built, finest_build
from exactdp.engines.pld.extremes import decision_shortcut, delta_shortcut, epsilon_shortcut
from exactdp.engines.pld.fftdecide import decision_groups, fft_decision
from exactdp.engines.pld.fftquery import (
    ALGORITHM_FFT,
    affordable,
    fft_delta,
    fft_epsilon,
    fft_groups,
    fft_path,
)
from exactdp.engines.pld.plan import plan
from exactdp.engines.pld.queries import delta_lower, delta_upper, epsilon_lower, epsilon_upper
from exactdp.engines.pld.refine import (
    UNDECIDED_WHY,
    bracket_width,
    decide,
    is_unbounded,
    lower_rational,
    refine,
    time_budget,
)
from exactdp.engines.pld.single_step import single_delta, single_epsilon, single_step_models
from exactdp.model.composition import Composition

__all__ = ["pld_decide", "pld_decision", "pld_delta", "pld_delta_curve", "pld_epsilon", "pld_epsilon_curve"]


ALGORITHM = "pld"
ALGORITHM_LATTICE = "pld-lattice"


def _certified_digits(lo: Fraction | float, hi: Fraction | float, wanted: int) -> int:
    """How many significant digits the bracket certifies (at most ``wanted``)."""
    if isinstance(lo, float) or isinstance(hi, float) or lo == hi:
        return wanted
    if lo <= 0:
        return 0
    w = (hi - lo) / lo
    d = 0
    while d < wanted and w * 10 ** (d + 1) <= 1:
        d += 1
    return d


def _enclosure(lo: Fraction | float, hi: Fraction | float, digits: int, exact: bool,
               alg: str | None = None) -> Enclosure:
    """The engine's enclosure of a bracket, with the digits it certifies (``pld-lattice`` when the
    exact lattice answered, ``alg`` when given)."""
    alg = alg if alg is not None else (ALGORITHM_LATTICE if exact else ALGORITHM)
    if isinstance(lo, float) and isinstance(hi, float):
        return Enclosure.infinite(digits, alg)
    d = _certified_digits(lo, hi, digits)
    return Enclosure(lo, hi, max(d, 1) if d else 1, algorithm=alg) if not isinstance(hi, float) else \
        Enclosure(lo, hi, 1, algorithm=alg)


def _inf_mass_exceeds(comp: Composition, delta_g: Fraction) -> bool:
    """Whether, in some order, the +inf mass 1 - prod (1 - pi_i)^{n_i} is certainly above delta_g.

    Decided in Arb (log-space, no huge exact powers); an exact tie, or one too close to decide at
    2^14 bits, answers False and is left to the engine's brackets.
    """
    pl = plan(comp)
    for groups in pl.orders:
        terms = [(m.p_inf_exact(), c) for m, c in groups if m.p_inf_exact() > 0]
        if not terms:
            continue
        prec = 64
        while prec <= 1 << 14:
            with ctx.workprec(prec):
                s = arb(0)
                for pi, c in terms:
                    s += c * (-arb_of_fraction(pi)).log1p()
                # 1 - e^s > delta_g  <=>  s < log(1 - delta_g)
                d = s - (-arb_of_fraction(delta_g)).log1p() if delta_g < 1 else s
            if d < 0:
                return True
            if d > 0:
                break
            prec *= 2
    return False


# -- public queries ------------------------------------------------------------------------------------

def _check_comp(comp: Composition) -> None:
    if not isinstance(comp, Composition):
        raise InvalidParameterError("comp must be a Composition")


def pld_delta(comp: Composition, eps_g: ExactReal, *, digits: int = DEFAULT_DIGITS,
              max_seconds: float | None = None, eps_floor: Fraction | None = None) -> Enclosure:
    """A certified enclosure of the optimal delta at eps_g of any composition of mechanisms.

    The lower end comes from dominated (binned) pairs, the upper from dominating
    (connect-the-dots) pairs, both composed in safely rounded fixed point (docs/pld.md §7); the larger
    of the two orders of a subsampled composition is taken.  ``digits`` is the target; the
    enclosure's ``digits`` says how many were certified within ``max_seconds``.
    ``eps_floor`` (at most eps_g): the builds stay tight down to it (a curve reads them there).
    """
    _check_comp(comp)
    eps_g = ExactReal.parse(eps_g, "eps_g")
    short = delta_shortcut(comp, eps_g, digits)  # eps_g above every finite loss (docs/pld.md §11)
    if short is not None:
        return short
    single = single_step_models(comp)
    if single is not None:
        return single_delta(single, eps_g, digits)
    aim_d = 10.0 ** (-digits) * 0.99  # float ok: a target
    if (eps_g.kind == "rational" and fft_groups(comp) is not None
            and affordable(comp, digits, aim_d, time_budget(max_seconds))):  # k copies of one mechanism (§12)
        start = time.monotonic()
        lo_f, hi_f = fft_delta(comp, eps_g.value, aim_d, digits, start + time_budget(max_seconds))
        return _enclosure(lo_f, hi_f, digits, False, ALGORITHM_FFT).clamped(Fraction(0), Fraction(1))
    scale = None  # measured by a coarse first pass
    least = eps_floor if eps_floor is not None else lower_rational(eps_g)

    def bracket(b: Built) -> tuple[Fraction, Fraction]:
        with ctx.workprec(b.prec):
            e = eps_g.arb()
            lows, ups = [], []
            for up, low in b.laws:
                ups.append(delta_upper(up, e).upper())
                lows.append(delta_lower(low, e).lower())
            lo = max(fraction_of_arb_endpoints(x)[0] for x in lows)
            hi = max(fraction_of_arb_endpoints(x)[1] for x in ups)
        return max(lo, Fraction(0)), min(hi, Fraction(1))

    def done(lo: Fraction | float, hi: Fraction | float) -> bool:
        w = bracket_width(lo, hi)
        return w is not None and w <= 10.0 ** (-digits) * 0.99

    lo, hi, exact = refine(comp, digits, max_seconds, scale, bracket, done, lambda _: least)
    return _enclosure(lo, hi, digits, exact).clamped(Fraction(0), Fraction(1))


def pld_epsilon(comp: Composition, delta_g: Fraction, *, digits: int = DEFAULT_DIGITS,
                max_seconds: float | None = None, floors: bool = True,
                rel_width: Fraction | None = None) -> Enclosure:
    """A certified enclosure of the optimal eps at total delta_g of any composition of mechanisms.

    The upper end is a point where the dominating pairs' delta is certified <= delta_g; the lower
    end the largest eps where a dominated pair's delta is certified > delta_g (docs/pld.md §8).
    +inf exactly when the mass at +inf alone exceeds delta_g.  Each grid is built tight only
    above the lower end reached so far (docs/pld.md §7.3); ``floors=False`` keeps it tight at
    every eps (a curve reads it at other delta_g).  ``rel_width``: stop as soon as the certified
    relative width is at most this (instead of 10^-digits; a benchmark asks for a peer's accuracy).
    """
    _check_comp(comp)
    delta_g = Fraction(delta_g)
    short = epsilon_shortcut(comp, delta_g, digits)  # delta_g at a +inf mass, pure DP at 0 (docs/pld.md §11)
    if short is not None:
        return short
    single = single_step_models(comp)
    if single is not None:
        return single_epsilon(single, delta_g, digits)
    if _inf_mass_exceeds(comp, delta_g):  # delta(eps) >= the +inf mass > delta_g for every eps
        return Enclosure.infinite(digits, ALGORITHM)
    aim = float(rel_width) if rel_width is not None else 10.0 ** (-digits) * 0.99  # float ok: a target
    if delta_g > 0 and fft_groups(comp) is not None and affordable(comp, digits, aim, time_budget(max_seconds)):
        start = time.monotonic()  # k copies of one mechanism (docs/pld.md §12)
        lo_e, hi_e = fft_epsilon(comp, delta_g, aim, digits, start + time_budget(max_seconds))
        if hi_e is not None:
            return _enclosure(lo_e, hi_e, digits, False, ALGORITHM_FFT)
    if delta_g <= 0:
        scale = Fraction(1, 10**30)
    else:
        scale = delta_g

    def bracket(b: Built) -> tuple[Fraction | float, Fraction | float]:
        with ctx.workprec(b.prec):
            d = arb_of_fraction(delta_g)
            lows: list[Fraction] = []
            highs: list[Fraction | float] = []
            for up, low in b.laws:
                eu = epsilon_upper(up, d)
                highs.append(math.inf if eu is None else fraction_of_arb_endpoints(eu)[1])
                el = epsilon_lower(low, d, hint=eu if eu is not None else None)
                lows.append(fraction_of_arb_endpoints(el)[0])
                if low.p_inf.lower() >= d.upper() or (low.p_inf > d):
                    lows[-1] = math.inf  # type: ignore[call-overload]
        lo = max(lows, key=lambda x: (isinstance(x, float), x))
        hi = max(highs, key=lambda x: (isinstance(x, float), x))
        return (max(lo, Fraction(0)) if not isinstance(lo, float) else lo), hi

    def done(lo: Fraction | float, hi: Fraction | float) -> bool:
        if isinstance(lo, float):
            return True
        w = bracket_width(lo, hi)
        if w is None:
            return not isinstance(hi, float) and hi == 0
        if rel_width is not None:
            return not isinstance(lo, float) and not isinstance(hi, float) and hi - lo <= rel_width * lo
        return w <= 10.0 ** (-digits) * 0.99

    lo, hi, exact = refine(comp, digits, max_seconds, scale, bracket, done,
                            (lambda lo: lo) if floors else None,
                            float(rel_width) if rel_width is not None else None,  # float ok: a grid prediction
                            predict=True)
    if isinstance(lo, float):
        return Enclosure.infinite(digits, ALGORITHM_LATTICE if exact else ALGORITHM)
    return _enclosure(lo, hi, digits, exact)


def pld_delta_curve(comp: Composition, eps_list: list[ExactReal], *, digits: int = DEFAULT_DIGITS,
                    max_seconds: float | None = None) -> list[Enclosure]:
    """Certified delta at every eps of ``eps_list`` from one build of the distribution.

    The grid is refined for the largest eps (the smallest delta, the hardest relative width); every
    point is then read off the same composed laws (docs/pld.md §8).
    """
    _check_comp(comp)
    eps_list = [ExactReal.parse(e, "eps") for e in eps_list]
    shorts = [delta_shortcut(comp, e, digits) for e in eps_list]  # docs/pld.md §11
    if all(x is not None for x in shorts):
        return [x for x in shorts if x is not None]
    eps_list = [e for e, x in zip(eps_list, shorts) if x is None]
    return _merge(shorts, _delta_curve(comp, eps_list, digits, max_seconds))


def _merge(shorts: list[Enclosure | None], rest: list[Enclosure]) -> list[Enclosure]:
    """The shortcut answers where there are some, the engine's in order elsewhere."""
    it = iter(rest)
    return [x if x is not None else next(it) for x in shorts]


def _delta_curve(comp: Composition, eps_list: list[ExactReal], digits: int,
                 max_seconds: float | None) -> list[Enclosure]:
    if single_step_models(comp) is not None:
        return [pld_delta(comp, e, digits=digits) for e in eps_list]
    with ctx.workprec(64):
        hardest = max(eps_list, key=lambda e: e.arb().mid())
    least = min(lower_rational(e) for e in eps_list)
    with fft_path(False):  # a curve reads every point off one build of the exact products
        first = pld_delta(comp, hardest, digits=digits, max_seconds=max_seconds, eps_floor=least)
    b = finest_build(comp, least)
    if b is None:
        return [first for _ in eps_list]
    out = []
    with ctx.workprec(b.prec):
        for e in eps_list:
            progress.tick("reading the curve")
            x = e.arb()
            lo = max(fraction_of_arb_endpoints(delta_lower(low, x).lower())[0] for _, low in b.laws)
            hi = max(fraction_of_arb_endpoints(delta_upper(up, x).upper())[1] for up, _ in b.laws)
            lo, hi = max(lo, Fraction(0)), min(hi, Fraction(1))
            out.append(_enclosure(lo, hi, digits, b.exact).clamped(Fraction(0), Fraction(1)))
    return out


def pld_epsilon_curve(comp: Composition, deltas: list[Fraction], *, digits: int = DEFAULT_DIGITS,
                      max_seconds: float | None = None) -> list[Enclosure]:
    """Certified eps at every delta_g of ``deltas`` from one build (refined for the smallest delta_g)."""
    _check_comp(comp)
    deltas = [Fraction(d) for d in deltas]
    shorts = [epsilon_shortcut(comp, d, digits) for d in deltas]  # docs/pld.md §11
    if all(x is not None for x in shorts):
        return [x for x in shorts if x is not None]
    return _merge(shorts, _epsilon_curve(comp, [d for d, x in zip(deltas, shorts) if x is None], digits,
                                         max_seconds))


def _epsilon_curve(comp: Composition, deltas: list[Fraction], digits: int,
                   max_seconds: float | None) -> list[Enclosure]:
    if single_step_models(comp) is not None:
        return [pld_epsilon(comp, d, digits=digits) for d in deltas]
    with fft_path(False):  # a curve reads every point off one build of the exact products
        first = pld_epsilon(comp, min(deltas), digits=digits, max_seconds=max_seconds, floors=False)
    b = finest_build(comp)
    if b is None:
        return [first for _ in deltas]
    out = []
    with ctx.workprec(b.prec):
        for dg in deltas:
            progress.tick("reading the curve")
            if _inf_mass_exceeds(comp, dg):
                out.append(Enclosure.infinite(digits, ALGORITHM))
                continue
            d = arb_of_fraction(dg)
            los: list[Fraction] = []
            his: list[Fraction | float] = []
            for up, low in b.laws:
                eu = epsilon_upper(up, d)
                his.append(math.inf if eu is None else fraction_of_arb_endpoints(eu)[1])
                los.append(fraction_of_arb_endpoints(epsilon_lower(low, d, hint=eu))[0])
            lo, hi = max(los), max(his, key=lambda x: (isinstance(x, float), x))
            out.append(Enclosure.infinite(digits, ALGORITHM) if isinstance(hi, float) and lo == math.inf
                       else _enclosure(max(lo, Fraction(0)), hi, digits, b.exact))
    return out


def pld_decision(comp: Composition, eps_g: ExactReal, delta_g: Fraction, *,
                 deadline: float | None = None) -> tuple[str, Fraction, Fraction]:  # float ok: a clock time, never a result
    """("meets" | "fails" | "undecided", lower, upper): a certified bracket [lower, upper] of
    delta(eps_g), refined only until it excludes ``delta_g`` or the ``time.monotonic()`` deadline.

    Every grid's bracket is certified (docs/pld.md §4-§6), so the brackets of successive grids are
    intersected.  The next grid is aimed at the distance between the bracket and delta_g, not at
    a number of digits (width ~ C h^2, docs/pld.md §6): a point far from the boundary is decided on
    a coarse grid.  One run of one mechanism is decided on its profile itself (docs/pld.md §8); k
    copies of one Gaussian step or mixture at a rational eps_g through the float FFT at the claim
    (:func:`~exactdp.engines.pld.fftdecide.fft_decision`, docs/pld.md §12.7).
    """
    _check_comp(comp)
    eps_g = ExactReal.parse(eps_g, "eps_g")
    delta_g = Fraction(delta_g)
    short = decision_shortcut(comp, eps_g, delta_g)  # the exact ends decide (docs/pld.md §11.4)
    if short is not None:
        return short
    single = single_step_models(comp)
    if single is not None:
        lo_s, hi_s = Fraction(0), Fraction(1)
        for digits in (4, 10, 30):
            enc = single_delta(single, eps_g, digits)
            lo_s, hi_s = Fraction(enc.lower), Fraction(enc.upper)  # type: ignore[arg-type]
            if hi_s <= delta_g:
                return "meets", lo_s, hi_s
            if lo_s > delta_g:
                return "fails", lo_s, hi_s
        UNDECIDED_WHY.set("delta at eps_g equals delta_g to 30 digits")
        return "undecided", lo_s, hi_s
    if eps_g.kind == "rational" and decision_groups(comp) is not None:  # k copies of one mechanism (§12.7)
        return fft_decision(comp, eps_g.value, delta_g, None if is_unbounded() else deadline)
    return decide(comp, eps_g, delta_g, deadline)


def pld_decide(comp: Composition, eps_g: ExactReal, delta_g: Fraction, *,
               max_seconds: float | None = None) -> bool:
    """Whether the composition is (eps_g, delta_g)-DP, decided when the certified delta bracket of
    :func:`pld_decision` excludes delta_g; a tie within the budget raises :class:`TimeBudgetError`
    with the bracket."""
    start = time.monotonic()
    budget = time_budget(max_seconds)
    delta_g = Fraction(delta_g)
    UNDECIDED_WHY.set("the time budget ran out")
    v, lo, hi = pld_decision(comp, eps_g, delta_g, deadline=start + budget)
    if v == "meets":
        return True
    if v == "fails":
        return False
    raise TimeBudgetError(
        f"{UNDECIDED_WHY.get()}: delta at eps_g is certified in [{decimal_string(lo, 10, 'down')}, "
        f"{decimal_string(hi, 10, 'up')}] and delta_g = {format_fraction(delta_g)} lies inside",
        elapsed=time.monotonic() - start, best=(lo, hi))
