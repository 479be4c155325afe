"""RDP -> (eps, delta) conversions, certified and named (docs/rdp.md §3).

A composition with Rényi divergence tau(alpha) at an order alpha > 1 is (eps, delta)-DP for the eps
(or delta) that a conversion gives at that order; each order gives a valid guarantee, so the best one
is the minimum over the orders tried.  Three published conversions, each in its published form
(alpha > 1, 0 < delta < 1, L = log(1/delta)):

* ``rdp-mironov`` (Mironov 2017, Prop. 3): ``eps = tau + L/(alpha-1)``, so at eps
  ``delta = exp((alpha-1)(tau-eps))``;
* ``rdp-cks`` (Canonne-Kamath-Steinke 2020, Prop. 12):
  ``delta = exp((alpha-1)(tau-eps)) (1-1/alpha)^alpha / (alpha-1)``, so at delta
  ``eps = tau + (L + (alpha-1) log(alpha-1) - alpha log alpha)/(alpha-1)``;
* ``rdp-bbghs`` (Balle-Barthe-Gaboardi-Hsu-Sato 2020, Thm 21, the form dp_accounting's RdpAccountant
  evaluates): ``eps = tau + log((alpha-1)/alpha) - (log delta + log alpha)/(alpha-1)``, so at eps
  ``log delta = (alpha-1)(tau - eps + log(1 - 1/alpha)) - log alpha``.

``rdp-cks`` and ``rdp-bbghs`` are the same function of (alpha, tau, delta) written two ways
(docs/rdp.md §3 shows the one-line identity); both names are kept because both statements are cited.
``rdp-asoodeh`` (Asoodeh et al. 2021) is the optimal conversion of one order's divergence, the value of
a two-point optimisation with no closed form; :mod:`exactdp.engines.rdp_asoodeh` certifies it at each
order (a feasible binary pair below, weak duality above), and the minimum over orders is taken as for
the others.

The divergence is the composition's (:func:`exactdp.engines.rdp.composition_divergence_arb`) in the
``max`` direction: the larger of its two certified sums (remove and add), so the conversion holds for
both orders of every neighbouring pair without assuming which one dominates.  For a fixed batch
without replacement it is the upper bound of Wang-Balle-Kasiviswanathan 2019 (docs/rdp.md §6), so the
conversion is the conversion of that bound, an upper bound all the same (each conversion is increasing
in tau), and the ``algorithm`` says so and names the bound (``"rdp-bbghs (order 6, wbk19-thm27)"``).

The minimum over orders: each order's value lies in its ball [l_i, u_i], and min is non-decreasing in
each argument, so ``min_i l_i <= min_i v_i <= min_i u_i``: the enclosure is [min of lowers, min of
uppers].  The order named in the ``algorithm`` (``"rdp-bbghs (order 12)"``) is the one with the
smallest upper end (the first such in the list): when balls overlap it need not be the true minimiser,
but the enclosure contains the true minimum either way.

>>> e = conversion_epsilon(Composition.of("gaussian:sigma=2,count=10"), Fraction(1, 10**5), digits=10,
...                        name="rdp-mironov", orders=[2, 3, 4, 8])
>>> e.algorithm, e.lower_str(), e.upper_str()   # 5 + log(10**5)/3 at order 4
('rdp-mironov (order 4)', '8.8376418216', '8.8376418217')
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fractions import Fraction

from flint import arb, ctx

from exactdp.core import progress
from exactdp.core.enclosure import Enclosure
from exactdp.core.errors import InvalidParameterError, PrecisionError
from exactdp.core.numbers import MAX_PREC, ExactReal, arb_of_fraction, format_fraction, fraction_of_arb_endpoints
from exactdp.engines.rdp import composition_bound_name, composition_divergence_arb, is_infinite
from exactdp.engines.rdp_asoodeh import asoodeh_eps_term, asoodeh_logdelta_term
from exactdp.model.composition import Composition

__all__ = [
    "CONVERSIONS",
    "DEFAULT_ORDERS",
    "conversion_delta",
    "conversion_epsilon",
    "rdp_asoodeh_delta",
    "rdp_asoodeh_epsilon",
    "rdp_bbghs_delta",
    "rdp_bbghs_epsilon",
    "rdp_cks_delta",
    "rdp_cks_epsilon",
    "rdp_mironov_delta",
    "rdp_mironov_epsilon",
]

#: the orders tried when none are given: dp_accounting's RdpAccountant defaults, as exact decimals
#: (1.1, 1.2, ..., 10.9, then 11, 12, ..., 63, then 128, 256, 512, 1024); orders a composition cannot
#: answer (fractional ones for a subsampled Gaussian) are skipped
DEFAULT_ORDERS: tuple[Fraction, ...] = (
    tuple(1 + Fraction(x, 10) for x in range(1, 100)) + tuple(Fraction(x) for x in range(11, 64))
    + tuple(Fraction(x) for x in (128, 256, 512, 1024))
)

# each conversion: (eps at the exact order from tau and L = log(1/delta), log delta at the order from tau and eps)
_Term = Callable[[Fraction, arb, arb], arb]
_ArbTerm = Callable[[arb, arb, arb], arb]


def _mironov_eps(a: arb, tau: arb, big_l: arb) -> arb:
    return tau + big_l / (a - 1)


def _mironov_logdelta(a: arb, tau: arb, eps: arb) -> arb:
    return (a - 1) * (tau - eps)


def _cks_logdelta(a: arb, tau: arb, eps: arb) -> arb:
    # log of exp((a-1)(tau-eps)) (1-1/a)^a / (a-1)
    return (a - 1) * (tau - eps) + a * (1 - 1 / a).log() - (a - 1).log()


def _cks_eps(a: arb, tau: arb, big_l: arb) -> arb:
    # _cks_logdelta(a, tau, eps) = -L solved for eps
    return tau + (big_l + (a - 1) * (a - 1).log() - a * a.log()) / (a - 1)


def _bbghs_eps(a: arb, tau: arb, big_l: arb) -> arb:
    # log delta = -L
    return tau + ((a - 1) / a).log() + (big_l - a.log()) / (a - 1)


def _bbghs_logdelta(a: arb, tau: arb, eps: arb) -> arb:
    return (a - 1) * (tau - eps + (-1 / a).log1p()) - a.log()


def _at_order(f: _ArbTerm) -> _Term:
    """A closed form of an Arb order as a term of the exact order."""
    def term(alpha: Fraction, tau: arb, x: arb) -> arb:
        return f(arb_of_fraction(alpha), tau, x)
    return term


CONVERSIONS: dict[str, tuple[_Term, _Term]] = {
    "rdp-mironov": (_at_order(_mironov_eps), _at_order(_mironov_logdelta)),
    "rdp-cks": (_at_order(_cks_eps), _at_order(_cks_logdelta)),
    "rdp-bbghs": (_at_order(_bbghs_eps), _at_order(_bbghs_logdelta)),
    "rdp-asoodeh": (asoodeh_eps_term, asoodeh_logdelta_term),
}


def _orders(orders: Sequence[Fraction] | None) -> tuple[list[Fraction], bool]:
    if orders is None:
        return list(DEFAULT_ORDERS), False
    if not orders:
        raise InvalidParameterError("orders=[] must name at least one order")
    return list(orders), True


def _certify_min(comp: Composition, orders: Sequence[Fraction] | None, digits: int, name: str,
                 term: Callable[[Fraction, arb], arb],
                 finish: Callable[[list[tuple[Fraction, Fraction]], int, Fraction], Enclosure | None]) -> Enclosure:
    """The precision loop: ``term(alpha, tau)`` at each order, then ``finish(endpoints, winner, target)``
    turns the exact endpoints into the enclosure, or None to raise the precision."""
    alphas, given = _orders(orders)
    target = Fraction(1, 10 ** (digits + 2))
    prec = digits * 10 // 3 + 64
    last: list[arb] = []
    while prec <= MAX_PREC:
        progress.tick(f"{name}: {len(alphas)} orders at {prec} bits")
        kept: list[Fraction] = []
        balls: list[arb] = []
        first_refusal: InvalidParameterError | None = None
        with ctx.workprec(prec):
            for a in alphas:
                try:
                    tau = composition_divergence_arb(comp.groups, a, "max")
                except InvalidParameterError as e:
                    if given:
                        raise InvalidParameterError(f"method={name!r}: {e}") from None
                    first_refusal = first_refusal or e
                    continue
                kept.append(a)
                balls.append(term(a, tau))
        if not kept:
            raise InvalidParameterError(f"method={name!r}: no order of the default set is answered for this "
                                        f"composition ({first_refusal})")
        alphas, last = kept, balls
        if all(b.is_finite() for b in balls):
            ends = [fraction_of_arb_endpoints(b) for b in balls]
            w = min(range(len(ends)), key=lambda i: ends[i][1])  # the smallest upper end, first of equals
            with ctx.workprec(prec):
                enc = finish(ends, w, target)
                named = composition_bound_name(comp.groups, alphas[w])
                bound = f", {named}" if named is not None else ""
            if enc is not None:
                return Enclosure(enc.lower, enc.upper, digits, exact=enc.exact,
                                 algorithm=f"{name} (order {format_fraction(alphas[w])}{bound})")
        prec *= 2
    raise PrecisionError(f"{name}: could not certify {digits=} significant digits within {MAX_PREC} bits "
                         f"(last balls {last[:3]}...)")


def conversion_epsilon(comp: Composition, delta_g: Fraction, *, digits: int, name: str,
                       orders: Sequence[Fraction] | None = None) -> Enclosure:
    """The eps that conversion ``name`` certifies at delta_g, minimised over ``orders`` (default
    :data:`DEFAULT_ORDERS`), clamped at 0; +inf when it certifies none (delta_g = 0, or an infinite
    divergence: a generic pair with delta > 0)."""
    eps_term = CONVERSIONS[name][0]
    if delta_g <= 0 or any(is_infinite(m) for m, _ in comp.groups):
        _orders(orders)
        return Enclosure.infinite(digits, name)

    def term(a: Fraction, tau: arb) -> arb:
        return eps_term(a, tau, -arb_of_fraction(delta_g).log())

    def finish(ends: list[tuple[Fraction, Fraction]], w: int, target: Fraction) -> Enclosure | None:
        lo, hi = max(Fraction(0), min(e[0] for e in ends)), max(Fraction(0), ends[w][1])
        if hi == 0:  # eps <= 0 certified at some order: (0, delta)-DP
            return Enclosure.exact_value(Fraction(0))
        if lo > 0 and hi - lo <= target * lo:
            return Enclosure(lo, hi)
        return None

    return _certify_min(comp, orders, digits, name, term, finish)


def conversion_delta(comp: Composition, eps_g: ExactReal, *, digits: int, name: str,
                     orders: Sequence[Fraction] | None = None) -> Enclosure:
    """The delta that conversion ``name`` certifies at eps_g, minimised over ``orders`` (default
    :data:`DEFAULT_ORDERS`), capped at 1 (1: nothing certified)."""
    logdelta_term = CONVERSIONS[name][1]
    if any(is_infinite(m) for m, _ in comp.groups):
        _orders(orders)
        return Enclosure.exact_value(Fraction(1), digits, name)

    def term(a: Fraction, tau: arb) -> arb:
        return logdelta_term(a, tau, eps_g.arb())

    def finish(ends: list[tuple[Fraction, Fraction]], w: int, target: Fraction) -> Enclosure | None:
        lo_log, hi_log = min(e[0] for e in ends), ends[w][1]
        if lo_log >= 0:  # delta >= 1 at every order: nothing certified
            return Enclosure.exact_value(Fraction(1))
        lo = fraction_of_arb_endpoints(arb_of_fraction(lo_log).exp())[0]
        hi = min(Fraction(1), fraction_of_arb_endpoints(arb_of_fraction(hi_log).exp())[1])
        if lo > 0 and hi - lo <= target * lo:
            return Enclosure(lo, hi)
        return None

    return _certify_min(comp, orders, digits, name, term, finish)


def rdp_mironov_epsilon(comp: Composition, delta_g: Fraction, *, digits: int,
                        orders: Sequence[Fraction] | None = None) -> Enclosure:
    """Eps of Mironov 2017 Prop. 3, ``min_alpha tau(alpha) + log(1/delta_g)/(alpha-1)`` (module docstring)."""
    return conversion_epsilon(comp, delta_g, digits=digits, name="rdp-mironov", orders=orders)


def rdp_mironov_delta(comp: Composition, eps_g: ExactReal, *, digits: int,
                      orders: Sequence[Fraction] | None = None) -> Enclosure:
    """Delta of Mironov 2017 Prop. 3 at eps_g, ``min_alpha exp((alpha-1)(tau(alpha) - eps_g))``."""
    return conversion_delta(comp, eps_g, digits=digits, name="rdp-mironov", orders=orders)


def rdp_cks_epsilon(comp: Composition, delta_g: Fraction, *, digits: int,
                    orders: Sequence[Fraction] | None = None) -> Enclosure:
    """Eps of Canonne-Kamath-Steinke 2020 Prop. 12 solved for eps, minimised over the orders."""
    return conversion_epsilon(comp, delta_g, digits=digits, name="rdp-cks", orders=orders)


def rdp_cks_delta(comp: Composition, eps_g: ExactReal, *, digits: int,
                  orders: Sequence[Fraction] | None = None) -> Enclosure:
    """Delta of Canonne-Kamath-Steinke 2020 Prop. 12, ``exp((alpha-1)(tau-eps)) (1-1/alpha)^alpha/(alpha-1)``."""
    return conversion_delta(comp, eps_g, digits=digits, name="rdp-cks", orders=orders)


def rdp_bbghs_epsilon(comp: Composition, delta_g: Fraction, *, digits: int,
                      orders: Sequence[Fraction] | None = None) -> Enclosure:
    """Eps of Balle et al. 2020 Thm 21, ``tau + log((alpha-1)/alpha) - (log delta + log alpha)/(alpha-1)``."""
    return conversion_epsilon(comp, delta_g, digits=digits, name="rdp-bbghs", orders=orders)


def rdp_bbghs_delta(comp: Composition, eps_g: ExactReal, *, digits: int,
                    orders: Sequence[Fraction] | None = None) -> Enclosure:
    """Delta of Balle et al. 2020 Thm 21 solved for delta, minimised over the orders."""
    return conversion_delta(comp, eps_g, digits=digits, name="rdp-bbghs", orders=orders)


def rdp_asoodeh_epsilon(comp: Composition, delta_g: Fraction, *, digits: int,
                        orders: Sequence[Fraction] | None = None) -> Enclosure:
    """Eps of Asoodeh et al. 2021, the optimal conversion of one order's divergence, certified by a
    feasible pair and weak duality (:mod:`exactdp.engines.rdp_asoodeh`), minimised over the orders."""
    return conversion_epsilon(comp, delta_g, digits=digits, name="rdp-asoodeh", orders=orders)


def rdp_asoodeh_delta(comp: Composition, eps_g: ExactReal, *, digits: int,
                      orders: Sequence[Fraction] | None = None) -> Enclosure:
    """Delta of Asoodeh et al. 2021 at eps_g >= 0, certified (docs/rdp.md §3.1), minimised over the orders."""
    if eps_g.sign() < 0:
        raise InvalidParameterError(f"method='rdp-asoodeh' takes eps >= 0 (got eps={eps_g}): its optimisation "
                                    "is stated for e^eps >= 1 (docs/rdp.md §3.1)")
    return conversion_delta(comp, eps_g, digits=digits, name="rdp-asoodeh", orders=orders)
