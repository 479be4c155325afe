"""One query object in, one result object out: the JSON contract of ``exactdp batch`` (docs/contracts.md §2).

:func:`run_query` answers one object (a ``delta``, ``epsilon``, ``check`` or ``calibrate`` query)
with its result object; the ``batch`` command answers each input line with it, the ``delta``,
``epsilon`` and ``check`` commands build such an object from their options and print its result,
and the ``calibrate`` command shares :func:`calibration_of` with the calibration lines
(docs/calibration.md §4).  JSON numbers are read as the decimals they are written as
(:func:`exactdp.model.inputs.load_json_exact`).

>>> r = run_query({"query": "delta", "eps": "log(3/2)", "k": 10, "at_eps": "log(9/4)", "digits": 10})
>>> r["exact"], r["inputs"]
('0.259066368', {'eps': 'log(1.5)', 'delta': '0', 'k': 10, 'at_eps': 'log(2.25)'})
>>> run_query({"query": "check", "eps": "1", "k": 10, "eps_g": "10", "delta_g": "0", "id": 7})["private"]
True
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from decimal import Decimal
from fractions import Fraction
from typing import Any

from exactdp.api import optimal
from exactdp.api.methods import get_method, method_options
from exactdp.api.rdp import parse_order, rdp_curve
from exactdp.api.tradeoff import tradeoff
from exactdp.calibrate.count import calibrate_k
from exactdp.calibrate.eps import calibrate_eps, calibrate_scale
from exactdp.calibrate.noise import calibrate_laplace_scale, calibrate_q, calibrate_sigma
from exactdp.calibrate.result import Calibration
from exactdp.core import progress
from exactdp.core.enclosure import Enclosure
from exactdp.core.errors import InvalidParameterError
from exactdp.core.numbers import DEFAULT_DIGITS, format_fraction, parse_delta, parse_digits
from exactdp.engines.pld import refine
from exactdp.engines.rdp_labelled import is_rdp_bound
from exactdp.model.attained import TWO_SIDED
from exactdp.model.composition import Composition, directed
from exactdp.model.inputs import composition_from_args, mechanisms_from_json
from exactdp.model.mechanisms import parse_direction

__all__ = ["CALIBRATE_KEYS", "QUERY_KEYS", "RDP_KEYS", "TRADEOFF_KEYS", "calibration_of", "run_calibrate_query",
           "run_query", "run_rdp_query", "run_tradeoff_query"]

#: the keys of a delta, epsilon or check query object
QUERY_KEYS = {"query", "method", "digits", "eps", "delta", "k", "mechanisms", "at_eps", "at_delta",
              "eps_g", "delta_g", "eta", "max_seconds", "id", "orders", "direction"}

#: the keys of each kind of calibration object (besides "query", "calibrate" and "id"): the options
#: of ``exactdp calibrate WHAT`` with ``_`` for ``-``
CALIBRATE_KEYS = {
    "eps": {"k", "delta", "target_eps", "target_delta", "method", "eta", "after", "gap", "round_to", "max_seconds"},
    "scale": {"mechanisms", "target_eps", "target_delta", "method", "eta", "gap", "round_to", "max_seconds"},
    "k": {"mechanism", "target_eps", "target_delta", "after", "max_seconds"},
    "sigma": {"k", "q", "sensitivity", "target_eps", "target_delta", "gap", "round_to", "max_seconds", "relation",
              "bounded"},
    "q": {"sigma", "k", "sensitivity", "target_eps", "target_delta", "gap", "round_to", "max_seconds", "relation",
          "bounded"},
    "laplace-scale": {"k", "q", "sensitivity", "target_eps", "target_delta", "gap", "round_to", "max_seconds",
                      "relation", "bounded"},
}


def _json_value(v: Any) -> Any:
    return str(v) if isinstance(v, Decimal) else v


def run_query(obj: dict[str, Any], *, default_digits: int = DEFAULT_DIGITS,
              composition: Composition | None = None) -> dict[str, Any]:
    """Answer one query object (the batch format) and return the result object.

    A ``max_seconds`` key bounds the time spent, reading the mechanisms included
    (:class:`~exactdp.core.errors.TimeBudgetError` past it).  ``composition``: the composition the
    object's ``eps``/``delta``/``k`` or ``mechanisms`` keys stand for, already read (the CLI reads
    it from its options and files), so that it is not read twice.
    """
    if not isinstance(obj, dict):
        raise InvalidParameterError(f"query={obj!r} must be a JSON object")
    if obj.get("query") == "calibrate":  # calibration lines are answered by exactdp.calibrate (issue 12)
        return run_calibrate_query(obj)
    if obj.get("query") == "rdp":
        return run_rdp_query(obj, default_digits=default_digits)
    if obj.get("query") == "tradeoff":
        return run_tradeoff_query(obj, default_digits=default_digits)
    query = obj.get("query")
    if query not in ("delta", "epsilon", "check"):
        raise InvalidParameterError(f"query={query!r} must be 'delta', 'epsilon', 'check', 'calibrate', 'rdp' or "
                                    "'tradeoff'")
    unknown = sorted(set(obj) - QUERY_KEYS)
    if unknown:
        raise InvalidParameterError(f"keys={unknown} are not query keys; known: {sorted(QUERY_KEYS)}")
    o = {key: _json_value(v) for key, v in obj.items()}
    with progress.task(query, max_seconds=progress.parse_seconds(o.get("max_seconds"))):
        return _answer_query(query, obj, o, default_digits, composition)  # the budget covers the reading too


def _composition(obj: dict[str, Any], o: dict[str, Any], composition: Composition | None) -> Composition:
    """The composition of a query object: ``composition`` when the caller read it already, else its
    ``mechanisms`` list or its ``eps``/``delta``/``k`` keys (never both)."""
    if composition is not None:
        return composition
    if "mechanisms" in obj:
        if any(key in obj for key in ("eps", "delta", "k")):
            raise InvalidParameterError("give either eps/delta/k or mechanisms, not both")
        return mechanisms_from_json(obj["mechanisms"], "mechanisms")
    return composition_from_args(o.get("eps"), o.get("delta"), o.get("k"), None, None)


def _answer_query(query: str, obj: dict[str, Any], o: dict[str, Any], default_digits: int,
                  composition: Composition | None) -> dict[str, Any]:
    direction = parse_direction(o.get("direction", "max"))
    comp = directed(_composition(obj, o, composition), direction)
    digits = parse_digits(o.get("digits", default_digits))
    method = o.get("method", "optimal")
    options = method_options(method, o.get("eta"), _orders_value(o.get("orders")))
    inputs = comp.to_inputs()
    result: dict[str, Any] = {"query": query, "method": method, "inputs": inputs, "direction": direction}
    if query == "delta":
        eps_g = optimal.signed_eps(_require(o, "at_eps"), "at_eps")
        if eps_g.sign() < 0 and method != "optimal":
            raise InvalidParameterError(f"at_eps={eps_g}: an eps below 0 is answered by the optimal method only")
        inputs["at_eps"] = str(eps_g)
        if method == "optimal":  # the answer says which row of the dispatch table gave it, and why
            enc, r = optimal.routed_delta(comp, eps_g, digits=digits)
            result.update(_enclosure_fields(enc.clamped(Fraction(0), Fraction(1)), digits), route=r.row,
                          reason=r.reason)
        else:
            enc = get_method(method).delta(comp, eps_g, digits=digits, **options)
            result.update(_enclosure_fields(enc, digits))
    elif query == "epsilon":
        delta_g = parse_delta(_require(o, "at_delta"), "at_delta")
        inputs["at_delta"] = format_fraction(delta_g)
        if method == "optimal":
            enc, r = optimal.routed_epsilon(comp, delta_g, digits=digits)
            result.update(_enclosure_fields(enc, digits), route=r.row, reason=r.reason)
        else:
            enc = get_method(method).epsilon(comp, delta_g, digits=digits, **options)
            result.update(_enclosure_fields(enc, digits))
    else:
        if method != "optimal":
            raise InvalidParameterError(f"method={method!r}: check answers only for the optimal method")
        eps_g = optimal.signed_eps(_require(o, "eps_g"), "eps_g")  # below 0 too, as delta's at_eps
        delta_g = parse_delta(_require(o, "delta_g"), "delta_g")
        inputs["eps_g"], inputs["delta_g"] = str(eps_g), format_fraction(delta_g)
        start = time.monotonic()
        private = optimal.is_private(comp, eps_g, delta_g)
        result.update({"lower": None, "upper": None, "exact": None, "private": private, "digits": None,
                       "seconds": round(time.monotonic() - start, 3)})
        return _with_id(result, obj)
    if "eta" in options:
        inputs["eta"] = format_fraction(options["eta"])
    if "orders" in options:
        inputs["orders"] = [format_fraction(a) for a in options["orders"]]
    result["private"] = None
    return _with_id(result, obj)


def _orders_value(orders: Any) -> Any:
    """The ``orders`` of a query object with JSON decimals as the strings they were written as."""
    return [_json_value(x) for x in orders] if isinstance(orders, list) else orders


def _with_id(result: dict[str, Any], obj: dict[str, Any]) -> dict[str, Any]:
    if "id" in obj:
        result["id"] = obj["id"]
    return result


def _require(o: dict[str, Any], key: str) -> Any:
    if o.get(key) is None:
        raise InvalidParameterError(f"{key}=None: the query needs '{key}'")
    return o[key]


def _enclosure_fields(enc: Enclosure, digits: int) -> dict[str, Any]:
    # "digits": what the printed lower and upper certify, never more than the query asked for;
    # "digits_requested" beside it when fewer (a bracketing engine stopped early: say so)
    js = enc.to_json(requested=digits)
    if "digits_requested" in js:  # what stopped the refinement: the time budget or the memory bound
        js["stopped_by"] = refine.STOPPED_BY.get()
    if TWO_SIDED in (enc.algorithm or ""):  # between an attained and a dominating pair: a real gap
        js["bound"] = TWO_SIDED
        if "digits_requested" in js:
            js["stopped_by"] = "gap"
    return js


# -- Rényi divergences ----------------------------------------------------------------------------

#: the keys of an rdp query object (as the options of ``exactdp rdp``)
RDP_KEYS = {"query", "eps", "delta", "k", "mechanisms", "orders", "direction", "digits", "max_seconds", "id"}


def run_rdp_query(obj: dict[str, Any], *, default_digits: int = DEFAULT_DIGITS,
                  composition: Composition | None = None) -> dict[str, Any]:
    """One batch line ``{"query": "rdp", "mechanisms": [...], "orders": [...]}`` -> its JSON result,
    the object ``exactdp rdp --json`` prints (docs/rdp.md); ``composition``: already read (the CLI).

    >>> r = run_rdp_query({"query": "rdp", "mechanisms": ["gaussian:sigma=2,count=10"], "orders": [2, "3.5"]})
    >>> [(o["order"], o["exact"]) for o in r["orders"]]
    [('2', '2.5'), ('3.5', '4.375')]
    """
    unknown = sorted(set(obj) - RDP_KEYS)
    if unknown:
        raise InvalidParameterError(f"keys={unknown} are not rdp query keys; known: {sorted(RDP_KEYS)}")
    o = {key: _json_value(v) for key, v in obj.items()}
    orders = o.get("orders")
    if not isinstance(orders, list) or not orders:
        raise InvalidParameterError(f"orders={orders!r} must be a non-empty list of orders > 1")
    orders = [_json_value(x) for x in orders]
    direction = o.get("direction", "max")
    with progress.task("rdp", max_seconds=progress.parse_seconds(o.get("max_seconds"))):
        comp = _composition(obj, o, composition)
        digits = parse_digits(o.get("digits", default_digits))
        encs = rdp_curve(comp, orders, digits=digits, direction=direction)
    rows = []
    for x, enc in zip(orders, encs):
        j = enc.to_json(digits)
        row = {"order": format_fraction(parse_order(x)), "lower": j["lower"], "upper": j["upper"],
               "exact": j["exact"], "digits": j["digits"]}
        if is_rdp_bound(enc.algorithm):  # a bracket: upper is the bound, not the divergence (docs/rdp.md §6, §7)
            row["bound"] = enc.algorithm
        rows.append(row)
    return _with_id({"query": "rdp", "direction": direction, "inputs": comp.to_inputs(), "orders": rows}, obj)


# -- trade-off curves ------------------------------------------------------------------------------

#: the keys of a tradeoff query object (as the options of ``exactdp tradeoff``)
TRADEOFF_KEYS = {"query", "eps", "delta", "k", "mechanisms", "alphas", "digits", "max_seconds", "id"}


def run_tradeoff_query(obj: dict[str, Any], *, default_digits: int = DEFAULT_DIGITS,
                       composition: Composition | None = None) -> dict[str, Any]:
    """One batch line ``{"query": "tradeoff", "mechanisms": [...], "alphas": [...]}`` -> its JSON result,
    the object ``exactdp tradeoff --json`` prints (docs/tradeoff.md); ``composition``: already read (the CLI).

    >>> r = run_tradeoff_query({"query": "tradeoff", "mechanisms": ["gaussian:sigma=1,count=4"], "alphas": ["0.5"],
    ...                         "digits": 10})
    >>> r["gdp_mu"]["exact"], r["points"][0]["alpha"], r["points"][0]["lower"]
    ('2', '0.5', '0.022750131948')
    """
    unknown = sorted(set(obj) - TRADEOFF_KEYS)
    if unknown:
        raise InvalidParameterError(f"keys={unknown} are not tradeoff query keys; known: {sorted(TRADEOFF_KEYS)}")
    o = {key: _json_value(v) for key, v in obj.items()}
    alphas = o.get("alphas")
    if not isinstance(alphas, list) or not alphas:
        raise InvalidParameterError(f"alphas={alphas!r} must be a non-empty list of numbers in (0, 1)")
    alphas = [_json_value(x) for x in alphas]
    with progress.task("tradeoff", max_seconds=progress.parse_seconds(o.get("max_seconds"))):
        comp = _composition(obj, o, composition)
        digits = parse_digits(o.get("digits", default_digits))
        t = tradeoff(comp, alphas, digits=digits)
    out = t.to_json(digits)
    return _with_id({"query": "tradeoff", "inputs": comp.to_inputs(), "points": out["points"],
                     "gdp_mu": out["gdp_mu"]}, obj)


# -- calibration ----------------------------------------------------------------------------------

def run_calibrate_query(obj: dict[str, Any]) -> dict[str, Any]:
    """One batch line ``{"query": "calibrate", "calibrate": WHAT, ...}`` -> its JSON result
    (docs/calibration.md §4).  The keys are the options of ``exactdp calibrate WHAT`` with ``_``
    for ``-`` (``target_eps``, ``round_to``, ...); ``after`` and ``mechanisms`` are lists as in
    the batch ``mechanisms`` key."""
    if not isinstance(obj, dict):
        raise InvalidParameterError(f"query={obj!r} must be a JSON object")
    what = obj.get("calibrate")
    if what not in CALIBRATE_KEYS:
        raise InvalidParameterError(f"calibrate={what!r} must be one of {', '.join(CALIBRATE_KEYS)}")
    allowed = CALIBRATE_KEYS[what] | {"query", "calibrate", "id"}
    unknown = sorted(set(obj) - allowed)
    if unknown:
        raise InvalidParameterError(f"keys={unknown} are not keys of a 'calibrate {what}' query; known: {sorted(allowed)}")
    o = {k: _json_value(v) for k, v in obj.items()}
    for key in ("target_eps", "target_delta"):
        if o.get(key) is None:
            raise InvalidParameterError(f"{key}=None: the query needs '{key}'")
    after = mechanisms_from_json(obj["after"], "after") if obj.get("after") is not None else None
    mechanisms = mechanisms_from_json(_need(o, what, "mechanisms"), "mechanisms") if what == "scale" else None
    out = calibration_of(what, o, after=after, mechanisms=mechanisms).to_json()
    if "id" in obj:
        out["id"] = obj["id"]
    return out


def _need(o: Mapping[str, Any], what: str, key: str) -> Any:
    if o.get(key) is None:
        raise InvalidParameterError(f"{key}=None: a 'calibrate {what}' query needs '{key}'")
    return o[key]


def calibration_of(what: str, o: Mapping[str, Any], *, after: Composition | None = None,
                   mechanisms: Composition | None = None) -> Calibration:
    """The calibration ``what`` (eps, scale, k, sigma, q or laplace-scale) of the values ``o`` (the
    keys of :data:`CALIBRATE_KEYS`, a missing one at its default), with the mechanisms already
    spent (``after``) and, for ``scale``, the mechanisms, both already read."""
    tgt = (o["target_eps"], o["target_delta"])
    common: dict[str, Any] = {"max_seconds": o.get("max_seconds")}
    if what != "k":
        common.update(gap=o.get("gap"), round_to=o.get("round_to"))
    if what == "eps":
        return calibrate_eps(_need(o, what, "k"), *tgt, delta=o.get("delta", "0"), method=o.get("method", "optimal"),
                             eta=o.get("eta"), base=after, **common)
    if what == "scale":
        assert mechanisms is not None  # read by the caller (a JSON list, or --mechanism / --mechanisms)
        return calibrate_scale(mechanisms, *tgt, method=o.get("method", "optimal"), eta=o.get("eta"), **common)
    if what == "k":
        return calibrate_k(_need(o, what, "mechanism"), *tgt, base=after, **common)
    common["relation"] = o.get("relation") or "add-remove"
    if what == "sigma":
        return calibrate_sigma(_need(o, what, "k"), *tgt, q=o.get("q", "1"), sensitivity=o.get("sensitivity", "1"),
                               bounded=o.get("bounded") or False, **common)
    if what == "q":
        return calibrate_q(_need(o, what, "sigma"), _need(o, what, "k"), *tgt, sensitivity=o.get("sensitivity", "1"),
                           bounded=o.get("bounded") or False, **common)
    return calibrate_laplace_scale(_need(o, what, "k"), *tgt, q=o.get("q", "1"), sensitivity=o.get("sensitivity", "1"),
                                   bounded=o.get("bounded") or False, **common)
