"""The oracle at the level of RDP curves: a reported Rényi divergence judged at one order (docs/kit.md §7).

An RDP accountant reports, at each order alpha, an upper bound on the Rényi divergence of the
composition (docs/rdp.md §1).  A reported value below the certified divergence
(:func:`exactdp.api.rdp.rdp_curve`) is unsound.  The verdicts, each decided exactly:

- ``sound``: the reported value is >= the divergence;
- ``unsound-fp``: below it by at most :data:`~exactdp.testing.judge.FP_ULPS` units in the last place
  of the reported float (a floating-point slip);
- ``unsound``: below it by more;
- ``undecided``: the value lies inside the certified enclosure and refining it (more digits, within
  the time budget) did not settle it; never counted as sound.  A fixed batch without replacement
  (``sample=M,of=N``) is bracketed by an upper bound (docs/rdp.md §6): a value between the bracket's
  ends is undecided at once, never unsound.

Every order is judged against the certified divergence at that order, fractional orders of
Poisson subsamples included (Arb's rigorous integrator with proved tails, docs/rdp.md §5).

Nothing here imports hypothesis, pytest or a peer library.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from exactdp.core.enclosure import Enclosure
from exactdp.core.errors import InvalidParameterError
from exactdp.core.numbers import format_fraction, parse_digits
from exactdp.engines.rdp import DIRECTIONS
from exactdp.engines.rdp_labelled import is_rdp_bound
from exactdp.model.composition import Composition
from exactdp.testing.assertions import UndecidedClaimError, UnsoundClaimError, raise_failures
from exactdp.testing.judge import FP_ULPS, ulp_of_claim
from exactdp.testing.oracle import (
    InvalidClaimError,
    curve_points,
    exact_of_reported,
    kit_composition,
    parse_rel_tol,
    short_repr,
)

__all__ = [
    "RDP_SECONDS",
    "RDP_VERDICTS",
    "RdpJudgement",
    "assert_rdp_curve_sound",
    "assert_rdp_sound",
    "judge_rdp",
    "parse_order_list",
    "parse_reported_order",
    "show_value",
]

#: the verdicts of :func:`judge_rdp`
RDP_VERDICTS = ("sound", "unsound-fp", "unsound", "undecided")

#: the default time budget (seconds) of refining one order's enclosure
RDP_SECONDS = 10

#: the largest number of digits a refinement asks for
_MAX_DIGITS = 2560


@dataclass(frozen=True)
class RdpJudgement:
    """The exact verdict on one reported RDP value (see the module docstring for the verdicts).

    ``divergence`` is the certified enclosure of the composition's Rényi divergence at ``order``
    (``bound`` is ``"enclosure"``); ``claim`` is the reported value exactly (``INF`` for +inf).
    """

    verdict: str
    composition: Composition
    order: Fraction
    direction: str
    claim: Fraction | float
    divergence: Enclosure
    bound: str = "enclosure"
    note: str = ""

    @property
    def sound(self) -> bool:
        return self.verdict == "sound"

    def describe(self) -> str:
        """One line: the composition, the order, the reported value, the certified enclosure, the verdict."""
        claim = "inf" if isinstance(self.claim, float) else show_value(self.claim)
        if self.bound == "enclosure":
            div = f"certified divergence in {self.divergence}"
        else:
            div = (f"certified divergence >= {self.divergence.lower_str()} (the divergence at order "
                   f"{self.divergence_order()}, a lower bound at this fractional order)")
        s = (f"composition {self.composition}, order {format_fraction(self.order)} ({self.direction}): reported "
             f"RDP = {claim}, {div}")
        if self.verdict == "unsound":
            s += " -> UNSOUND: below the certified divergence"
        elif self.verdict == "unsound-fp":
            s += f" -> UNSOUND at floating-point level (within {FP_ULPS} ulps of the reported value)"
        elif self.verdict == "undecided":
            s += " -> UNDECIDED: " + (self.note or "inside the certified enclosure")
            return s
        else:
            s += " -> sound"
        return s + (f" [{self.note}]" if self.note else "")

    def divergence_order(self) -> str:
        """The order at which ``divergence`` was computed (``floor(order)`` for a lower bound)."""
        return format_fraction(self.order) if self.bound == "enclosure" else str(math.floor(self.order))

    def to_json(self) -> dict[str, Any]:
        """The keys of one order in the cross-check's JSON report (docs/peers/README.md)."""
        return {"order": format_fraction(self.order), "reported": show_value(self.claim, 40),
                "lower": self.divergence.lower_str(), "upper": self.divergence.upper_str(),
                "bound": self.bound, "verdict": self.verdict, "note": self.note}


def show_value(x: Fraction | float, limit: int = 30) -> str:
    """A reported value for a message: exact when short, else ``~`` its nearest float.

    >>> show_value(Fraction(1, 4)), show_value(Fraction(1, 3**70))
    ('0.25', '~3.994957556592953e-34')
    """
    if isinstance(x, float):
        return "inf"
    t = format_fraction(x)
    return t if len(t) <= limit else f"~{float(x)!r}"  # float ok: display only


def parse_reported_order(x: Any) -> Fraction:
    """An order as a library reports it: exact (int, Fraction, str), a float at its exact binary value.

    A float order is the order the library computed at, so it is judged at that value
    (``1.1`` is ``2476979795053773/2251799813685248``); an order must be > 1.

    >>> parse_reported_order(2.0), parse_reported_order("3/2"), parse_reported_order(1.25)
    (Fraction(2, 1), Fraction(3, 2), Fraction(5, 4))
    """
    from exactdp.api.rdp import parse_order

    if isinstance(x, bool):
        raise InvalidParameterError(f"order={x!r} must be a number > 1")
    if isinstance(x, float) or (hasattr(x, "as_integer_ratio") and not isinstance(x, (int, Fraction))):
        try:
            n, d = x.as_integer_ratio()
        except (OverflowError, ValueError):
            raise InvalidParameterError(f"order={short_repr(x)} must be a finite number > 1") from None
        return parse_order(Fraction(int(n), int(d)))
    return parse_order(x)


def _is_float(x: Any) -> bool:
    return isinstance(x, float) or (hasattr(x, "as_integer_ratio") and not isinstance(x, (int, Fraction)))


def _enclosure(comp: Composition, order: Fraction, digits: int, direction: str) -> Enclosure:
    from exactdp.api.rdp import rdp_curve

    return rdp_curve(comp, [order], digits=digits, direction=direction)[0]


def _verdict(claim: Fraction | float, enc: Enclosure, fp: bool) -> str | None:
    """The verdict the enclosure decides, or None when the claim lies inside it (not exact)."""
    if isinstance(claim, float):  # +inf claims nothing
        return "sound"
    if enc.is_infinite:
        return "unsound"
    if isinstance(enc.upper, Fraction) and claim >= enc.upper:
        return "sound"
    if claim < enc.lower:
        if fp:
            slack = FP_ULPS * ulp_of_claim(claim)
            if not isinstance(enc.upper, float) and enc.upper <= claim + slack:
                return "unsound-fp"
            if enc.lower > claim + slack:
                return "unsound"
            return None
        return "unsound"
    return None


def judge_rdp(
    reported: Any,
    *,
    order: Any,
    composition: Any,
    direction: str = "max",
    digits: Any = 20,
    max_seconds: Any = None,
    exact_floats: bool | None = None,
    cache: dict[Any, Enclosure] | None = None,
    relation: Any = None,
) -> RdpJudgement:
    """The exact verdict on ``reported`` as the Rényi divergence of ``composition`` at ``order``.

    ``reported`` is read at its exact value (a float at its binary value, +inf claims nothing;
    None, NaN and non-numbers raise :class:`~exactdp.testing.oracle.InvalidClaimError`).  The
    enclosure of :func:`exactdp.api.rdp.rdp_curve` (``digits``, doubled while the value lies inside
    it and ``max_seconds``, default :data:`RDP_SECONDS`, allow) decides.  ``cache`` (a dict) keeps
    the enclosures between calls (the cross-check asks many values of one composition).

    >>> judge_rdp("0.25", order=2, composition="gaussian:sigma=2").verdict
    'sound'
    >>> judge_rdp(0.2499999999, order=2, composition="gaussian:sigma=2").verdict
    'unsound'
    """
    try:
        claim = exact_of_reported(reported, "reported RDP")
    except InvalidClaimError as e:
        raise InvalidClaimError(f"{e} (order {short_repr(order)})", reported) from None
    a = parse_reported_order(order)
    if not isinstance(direction, str) or direction not in DIRECTIONS:
        raise InvalidParameterError(f"direction={short_repr(direction)} must be one of {', '.join(DIRECTIONS)}")
    comp = kit_composition(composition, exact_floats, relation)
    if cache is not None and not isinstance(cache, dict):
        raise InvalidParameterError(f"cache={short_repr(cache)} must be a dict or None")
    d = parse_digits(digits)
    budget = RDP_SECONDS if max_seconds is None else max_seconds
    if isinstance(budget, bool) or not isinstance(budget, (int, float)) or not 0 < budget < math.inf:
        raise InvalidParameterError(f"max_seconds={short_repr(max_seconds)} must be a number of seconds > 0")
    fp = _is_float(reported)
    bound, at = "enclosure", a
    start = time.monotonic()

    def enclosure(n: int) -> Enclosure:
        key = (comp, at, n, direction)
        if cache is not None and key in cache:
            return cache[key]
        e = _enclosure(comp, at, n, direction)
        if cache is not None:
            cache[key] = e
        return e

    enc = enclosure(d)
    while True:
        v = _verdict(claim, enc, fp)
        if v is not None:
            return RdpJudgement(v, comp, a, direction, claim, enc, bound, "")
        if is_rdp_bound(enc.algorithm):  # a bracket that more digits do not narrow (docs/rdp.md §6, §7)
            return RdpJudgement("undecided", comp, a, direction, claim, enc, bound,
                                "the reported value lies between the divergence of a pair the batches attain "
                                f"and the {enc.algorithm} upper bound ({_bound_source(enc.algorithm or '')}): the "
                                "divergence itself is not computed, so nothing between them is called sound or "
                                "unsound")
        if enc.exact is not None or enc.digits * 2 > _MAX_DIGITS or time.monotonic() - start > budget:
            return RdpJudgement("undecided", comp, a, direction, claim, enc, bound,
                                f"the reported value lies inside the certified enclosure at {enc.digits} digits and "
                                "the time budget ran out (raise max_seconds)")
        enc = enclosure(enc.digits * 2)


def _check(v: RdpJudgement, tol: Fraction) -> RdpJudgement:
    if v.sound:
        return v
    if v.verdict == "undecided":
        raise UndecidedClaimError(v)
    if tol > 0 and not isinstance(v.claim, float) and isinstance(v.divergence.upper, Fraction) \
            and v.divergence.upper > 0 and 1 - v.claim / v.divergence.upper <= tol:
        return v  # certified to be at most rel_tol below
    raise UnsoundClaimError(v)


def assert_rdp_sound(
    reported: Any,
    *,
    order: Any,
    composition: Any,
    direction: str = "max",
    rel_tol: Any = 0,
    digits: Any = 20,
    max_seconds: Any = None,
    exact_floats: bool | None = None,
    relation: Any = None,
) -> RdpJudgement:
    """Assert that ``reported`` >= the Rényi divergence of ``composition`` at ``order`` (docs/kit.md §7).

    ``composition`` is anything :meth:`exactdp.Composition.of` reads (floats in it only with
    ``exact_floats=True``, at their exact binary value); ``direction`` is that of
    :func:`exactdp.api.rdp.rdp_curve` (``"remove"`` for a subsampled Gaussian, the direction RDP
    accountants compute).  Fails with :class:`~exactdp.testing.assertions.UnsoundClaimError` below
    the certified divergence (``rel_tol`` forgives a shortfall certified to be at most that
    relative amount), :class:`~exactdp.testing.assertions.UndecidedClaimError` when the budget
    cannot decide; returns the :class:`RdpJudgement`.

    >>> assert_rdp_sound(0.25, order=2, composition="gaussian:sigma=2").verdict
    'sound'
    >>> assert_rdp_sound("0.2", order=2, composition="gaussian:sigma=2")
    Traceback (most recent call last):
    ...
    exactdp.testing.assertions.UnsoundClaimError: composition gaussian:sigma=2, order 2 (max): reported RDP = 0.2, certified divergence in 0.25 -> UNSOUND: below the certified divergence
    """
    tol = parse_rel_tol(rel_tol)
    return _check(judge_rdp(reported, order=order, composition=composition, direction=direction, digits=digits,
                            max_seconds=max_seconds, exact_floats=exact_floats, relation=relation), tol)


def assert_rdp_curve_sound(
    reported_by_order: Any,
    values: Any = None,
    *,
    composition: Any,
    direction: str = "max",
    rel_tol: Any = 0,
    digits: Any = 20,
    max_seconds: Any = None,
    exact_floats: bool | None = None,
    relation: Any = None,
) -> list[RdpJudgement]:
    """Assert a whole reported RDP curve: every order is judged, and the failure lists every one that fails.

    ``reported_by_order`` is a mapping ``{order: value}``, a list of ``(order, value)`` pairs, or
    the orders themselves with their values in ``values`` (e.g. an accountant's ``orders`` and
    ``rdp`` arrays).  Same conventions as :func:`assert_rdp_sound`; raises
    :class:`~exactdp.testing.assertions.UnsoundClaimError` (with every unsound and undecided order in
    its message) when any order is unsound, else
    :class:`~exactdp.testing.assertions.UndecidedClaimError` when any is undecided.

    >>> [v.verdict for v in assert_rdp_curve_sound([2, 3], [0.25, 0.375], composition="gaussian:sigma=2")]
    ['sound', 'sound']
    """
    tol = parse_rel_tol(rel_tol)
    comp = kit_composition(composition, exact_floats, relation)
    cache: dict[Any, Enclosure] = {}
    out, bad = [], []
    for order, value in curve_points(reported_by_order, values, "order"):
        v = judge_rdp(value, order=order, composition=comp, direction=direction, digits=digits,
                      max_seconds=max_seconds, cache=cache)
        out.append(v)
        try:
            _check(v, tol)
        except (UnsoundClaimError, UndecidedClaimError):
            bad.append(v)
    raise_failures(bad, len(out), "orders of the RDP curve")
    return out


def parse_order_list(orders: Any) -> list[Fraction]:
    """Orders as a list of exact Fractions (see :func:`parse_reported_order`).

    >>> parse_order_list([2, 2.5, "3"])
    [Fraction(2, 1), Fraction(5, 2), Fraction(3, 1)]
    """
    if isinstance(orders, (str, bytes)) or not isinstance(orders, Iterable):
        raise InvalidParameterError(f"orders={short_repr(orders)} must be a list of orders > 1")
    return [parse_reported_order(o) for o in orders]



def _bound_source(name: str) -> str:
    """Where a bracket's upper bound comes from, for a judgement's reason."""
    out = []
    if "wbk19" in name:
        out.append("Wang-Balle-Kasiviswanathan 2019")
    if "labelled" in name:
        out.append("the labelled dominating pair, docs/mathematics.md §9, docs/rdp.md §7")
    return "; ".join(out)
