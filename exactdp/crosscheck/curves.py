"""The cross-check at the level of RDP curves: each peer's curve judged order by order, its conversion apart.

An RDP accountant computes, at each order alpha, a Rényi divergence of the composition, then
converts the curve to an (eps, delta) guarantee.  A wrong eps may come from either step, so the two
are judged separately (docs/peers/README.md, "RDP curves"):

- **the curve**: every order the peer reports is judged against the certified divergence
  (:func:`exactdp.testing.rdp.judge_rdp`; integer orders for a subsampled Gaussian, and at its
  fractional orders the certified divergence at floor(alpha), a lower bound since the divergence is
  non-decreasing in the order).  A value below it is ``unsound`` (or ``unsound-fp`` within 4 ulps).
- **the conversion**: the peer's own eps is compared with the certified conversion of the peer's
  *own* curve (its floats at their exact values) by :func:`cks_conversion`, the conversion of
  Canonne-Kamath-Steinke 2020 (Prop. 12) / Balle et al. 2020 (Thm 21) with the Bretagnolle-Huber
  case, min over the peer's orders, evaluated in Arb.  It is a valid conversion, so a peer eps at or
  above it is ``supported`` by its curve; an eps below it is ``unsupported``: the conversion claims
  more than the curve gives by the standard conversion (the looser Mironov 2017 Prop. 3 bound,
  :func:`mironov_conversion`, is reported beside it).

So a report says which is at fault: ``curve`` (an order below the certified divergence),
``conversion`` (a sound curve converted to an eps it does not support), both, or ``none``.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from flint import arb, ctx

from exactdp.core.enclosure import Enclosure
from exactdp.core.errors import ExactDPError
from exactdp.core.numbers import arb_of_fraction, format_fraction, fraction_of_arb_endpoints
from exactdp.crosscheck.adapters import Adapter, CurveApi, NotApplicable, ReportedCurve, Skipped
from exactdp.crosscheck.cases import Case
from exactdp.crosscheck.isolate import Limits, PeerLimitError, call_isolated
from exactdp.testing.judge import FP_ULPS, ulp_of_claim
from exactdp.testing.oracle import InvalidClaimError, exact_of_reported
from exactdp.testing.rdp import judge_rdp, show_value

__all__ = [
    "CONVERSION_VERDICTS",
    "CurveFinding",
    "check_curve",
    "cks_conversion",
    "curve_cases",
    "judge_conversion",
    "mironov_conversion",
    "order_str",
    "reported_str",
    "run_curves",
]

#: the verdicts on a peer's conversion of its own curve
CONVERSION_VERDICTS = ("supported", "unsupported-fp", "unsupported", "undecided")

#: working precision (bits) of the certified conversions
_PREC = 256


@dataclass
class CurveFinding:
    """One peer's RDP curve of one case, judged order by order (the keys of the JSON report).

    ``unsound`` lists each order below the certified divergence (order, the peer's value, the
    certified ``lower``/``upper``, verdict); ``undecided`` each order not decided (inside the
    enclosure, or above the lower bound at a fractional order of a subsampled Gaussian);
    ``conversion`` the judgement of the peer's own eps against the certified conversion of its curve;
    ``fault``: ``curve``, ``conversion``, ``curve and conversion`` or ``none``.
    """

    library: str
    api: str
    case: str
    inputs: dict[str, Any]
    direction: str = "max"
    orders: int = 0
    checked: int = 0
    sound: int = 0
    unsound: list[dict[str, Any]] = field(default_factory=list)
    undecided: list[dict[str, Any]] = field(default_factory=list)
    conversion: dict[str, Any] | None = None
    fault: str = "none"
    note: str = ""
    error: str | None = None
    seconds: float = 0.0

    @property
    def material(self) -> list[dict[str, Any]]:
        """The orders below the certified divergence by more than floating-point slack."""
        return [u for u in self.unsound if u["verdict"] == "unsound"]

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _arb_of(x: Fraction) -> arb:
    return arb_of_fraction(x)


def _ends(x: arb) -> tuple[Fraction, Fraction]:
    lo, hi = fraction_of_arb_endpoints(x)
    return lo, hi


def cks_conversion(orders: Sequence[Fraction], values: Sequence[Fraction], delta: Fraction,
                   digits: int = 20) -> Enclosure:
    """Certified eps of an RDP curve at ``delta``: max(0, min over the orders of eps(alpha)).

    eps(alpha) = r + log(1 - 1/alpha) - log(delta alpha)/(alpha - 1) (Canonne-Kamath-Steinke 2020,
    Prop. 12; Balle et al. 2020, Thm 21), and 0 where delta^2 > 1 - e^{-r} (Bretagnolle-Huber:
    TV <= sqrt(1 - e^{-KL}) and KL <= D_alpha), the conversion dp_accounting, Opacus and TF Privacy
    implement in floating point.  Every order > 1 and value gives a valid bound, so the minimum is one.

    >>> str(cks_conversion([Fraction(2)], [Fraction(1, 2)], Fraction(1, 10)))
    '[1.41629073187415506518, 1.41629073187415506519]'
    """
    return _min_conversion(orders, values, delta, digits, "cks")


def mironov_conversion(orders: Sequence[Fraction], values: Sequence[Fraction], delta: Fraction,
                       digits: int = 20) -> Enclosure:
    """Certified eps of an RDP curve at ``delta`` by Mironov 2017, Prop. 3: min over the orders of
    r + log(1/delta)/(alpha - 1) (the loosest standard conversion).

    >>> str(mironov_conversion([Fraction(2)], [Fraction(1, 2)], Fraction(1, 10)))
    '[2.80258509299404568401, 2.80258509299404568402]'
    """
    return _min_conversion(orders, values, delta, digits, "mironov")


def _min_conversion(orders: Sequence[Fraction], values: Sequence[Fraction], delta: Fraction, digits: int,
                    which: str) -> Enclosure:
    if not 0 < delta < 1:
        raise ValueError(f"delta={delta} must be in (0, 1)")
    lo_min: Fraction | None = None
    hi_min: Fraction | None = None
    with ctx.workprec(_PREC):
        d = _arb_of(delta)
        for a, r in zip(orders, values):
            if a <= 1:
                continue
            al, rr = _arb_of(a), _arb_of(r)
            if which == "mironov":
                lo, hi = _ends(rr + (1 / d).log() / (al - 1))
            else:
                formula = rr + (1 - 1 / al).log() - (d * al).log() / (al - 1)
                cond = d * d + (-rr).exp() - 1  # > 0: the Bretagnolle-Huber case, eps = 0
                flo, fhi = _ends(formula)
                if cond > 0:
                    lo, hi = Fraction(0), Fraction(0)
                elif cond < 0:
                    lo, hi = flo, fhi
                else:  # undecided at this precision: either may apply
                    lo, hi = min(Fraction(0), flo), max(Fraction(0), fhi)
            lo_min = lo if lo_min is None else min(lo_min, lo)
            hi_min = hi if hi_min is None else min(hi_min, hi)
    if lo_min is None or hi_min is None:
        return Enclosure.infinite(digits)
    if which == "cks":
        lo_min, hi_min = max(Fraction(0), lo_min), max(Fraction(0), hi_min)
    return Enclosure(lo_min, hi_min, digits, algorithm=f"{which} conversion")


def judge_conversion(rep: ReportedCurve, orders: Sequence[Fraction], values: Sequence[Fraction]) -> dict[str, Any]:
    """The peer's own eps against :func:`cks_conversion` of its own curve (module docstring)."""
    assert rep.delta is not None
    eps = exact_of_reported(rep.eps, "reported eps")
    cks = cks_conversion(orders, values, rep.delta)
    mir = mironov_conversion(orders, values, rep.delta)
    out: dict[str, Any] = {"delta": format_fraction(rep.delta), "reported_eps": show_value(eps, 40),
                           "conversion": "cks20", "lower": cks.lower_str(), "upper": cks.upper_str(),
                           "mironov_lower": mir.lower_str(), "mironov_upper": mir.upper_str()}
    if isinstance(eps, float) or (not isinstance(cks.upper, float) and eps >= cks.upper):
        v = "supported"
    elif eps < cks.lower:
        slack = FP_ULPS * ulp_of_claim(eps)
        v = "unsupported-fp" if not isinstance(cks.upper, float) and cks.upper <= eps + slack else "unsupported"
    else:
        v = "undecided"
    out["verdict"] = v
    return out


def check_curve(api: CurveApi, case: Case, *, digits: int = 20, max_seconds: float = 3.0,
                limits: Limits | None = None, cache: dict[Any, Any] | None = None) -> CurveFinding | None:
    """Ask one curve API one case and judge every order, then the conversion; None when not applicable."""
    t0 = time.perf_counter()
    base: dict[str, Any] = {"library": api.library, "api": api.name, "case": case.name,
                            "inputs": case.composition().to_inputs()}
    try:
        rep = api.run(case) if limits is None else call_isolated(api.run, case, limits)
    except NotApplicable:
        return None
    except Skipped as exc:
        return CurveFinding(**base, note=f"skipped: {exc}"[:300], seconds=round(time.perf_counter() - t0, 3))
    except PeerLimitError as exc:
        return CurveFinding(**base, error=str(exc)[:500], seconds=round(time.perf_counter() - t0, 3))
    except Exception as exc:  # noqa: BLE001 - a peer may raise anything; recorded as its error
        return CurveFinding(**base, error=f"{type(exc).__name__}: {exc}"[:500],
                            seconds=round(time.perf_counter() - t0, 3))
    f = CurveFinding(**{**base, "inputs": rep.composition.to_inputs()}, direction=rep.direction,
                     orders=len(rep.orders), note=rep.note)
    cache = {} if cache is None else cache
    exact_orders: list[Fraction] = []
    exact_values: list[Fraction] = []
    for a, value in zip(rep.orders, rep.values):
        try:
            v = judge_rdp(value, order=a, composition=rep.composition, direction=rep.direction, digits=digits,
                          max_seconds=max_seconds, cache=cache)
        except (InvalidClaimError, ExactDPError) as exc:  # NaN from the peer, an order out of range
            f.undecided.append({"order": repr(a), "reported": repr(value), "verdict": "not judged",
                                "note": str(exc)[:200]})
            continue
        if not isinstance(v.claim, float):
            exact_orders.append(v.order)
            exact_values.append(v.claim)
        entry = {**v.to_json(), "order": order_str(a), "reported": reported_str(value)}
        if v.verdict == "undecided":
            f.undecided.append(entry)
            continue
        f.checked += 1
        if v.sound:
            f.sound += 1
        else:
            f.unsound.append({**entry, "relative_gap": _gap(v.claim, v.divergence)})
    if rep.eps is not None and rep.delta is not None and 0 < rep.delta < 1 and exact_orders:
        try:
            f.conversion = judge_conversion(rep, exact_orders, exact_values)
        except (InvalidClaimError, ValueError) as exc:
            f.conversion = {"verdict": "not judged", "note": str(exc)[:200]}
    bad_curve = bool(f.material)
    bad_conv = f.conversion is not None and f.conversion.get("verdict") == "unsupported"
    f.fault = ("curve and conversion" if bad_curve and bad_conv else "curve" if bad_curve else
               "conversion" if bad_conv else "none")
    f.seconds = round(time.perf_counter() - t0, 3)
    return f


def order_str(a: Any) -> str:
    """An order as the library gave it: a float by its repr (judged at its exact binary value), else exactly.

    >>> order_str(1.1), order_str(2), order_str(Fraction(5, 2))
    ('1.1', '2', '2.5')
    """
    if isinstance(a, float) or (hasattr(a, "as_integer_ratio") and not isinstance(a, (int, Fraction))):
        return repr(float(a))  # float ok: the library's own float, printed round-trip exactly
    return format_fraction(Fraction(a)) if isinstance(a, (int, Fraction)) else str(a)


def reported_str(x: Any) -> str:
    """A reported value as the library gave it: a float by its repr (round-trip exact), else exactly.

    >>> reported_str(0.1), reported_str(Fraction(1, 3)), reported_str(float("inf"))
    ('0.1', '1/3', 'inf')
    """
    if isinstance(x, float) or (hasattr(x, "as_integer_ratio") and not isinstance(x, (int, Fraction))):
        return repr(float(x))  # float ok: the library's own float, printed round-trip exactly
    v = exact_of_reported(x)
    return "inf" if isinstance(v, float) else format_fraction(v)


def _gap(claim: Fraction | float, div: Enclosure) -> str:
    """The certified relative shortfall (divergence - claim)/divergence, at least; for display."""
    if isinstance(claim, float) or isinstance(div.lower, float) or div.lower <= 0:
        return ""
    return f"{float(1 - claim / div.lower):.3g}"  # float ok: display


def curve_cases(cases: Iterable[Case]) -> list[Case]:
    """The mechanism cases whose curve is asked (one per composition and query point, calibration
    cases left out: a curve does not depend on the query)."""
    seen: set[tuple[Any, ...]] = set()
    out = []
    for c in cases:
        if c.is_generic or c.is_calibration:
            continue
        key = (c.composition(), c.query, c.at)
        if key in seen:
            continue
        seen.add(key)
        out.append(c)
    return out


def run_curves(adapters: Iterable[Adapter], cases: Sequence[Case], *, digits: int = 20, max_seconds: float = 3.0,
               limits: Limits | None = None, say: Any = None,
               shard: tuple[int, int] | None = None) -> list[CurveFinding]:
    """Every curve API of every (available, loaded) adapter on every curve case; the findings in order."""
    from exactdp.core.executor import shard as take_shard

    work: list[tuple[CurveApi, Case]] = []
    for ad in adapters:
        try:
            apis = ad.curve_apis()
        except Exception as exc:  # noqa: BLE001 - a peer's import may raise anything: no curve APIs then
            if say is not None:
                say(f"[crosscheck] {ad.library}: no RDP curves ({type(exc).__name__}: {exc})")
            continue
        work += [(api, c) for api in apis for c in curve_cases(cases)]
    out = []
    cache: dict[Any, Any] = {}
    for api, case in take_shard(work, shard):
        f = check_curve(api, case, digits=digits, max_seconds=max_seconds, limits=limits, cache=cache)
        if f is None:
            continue
        out.append(f)
        if say is not None:
            bad = "; ".join(f"order {u['order']}: reported {u['reported']} < certified [{u['lower']}, {u['upper']}]"
                            for u in f.material[:3])
            conv = f", conversion {f.conversion['verdict']}" if f.conversion else ""
            nfp = len(f.unsound) - len(f.material)
            say(f"[crosscheck]   rdp curve {api.library} {api.name} | {case.name}: {f.checked} of {f.orders} orders "
                f"decided, {len(f.material)} unsound, {nfp} unsound-fp{conv}" + (f" [{bad}]" if bad else "") +
                (f" [{f.error}]" if f.error else ""))
    return out

