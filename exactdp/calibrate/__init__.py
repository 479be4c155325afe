"""Certified calibration: the per-step eps, count, noise or sampling rate that provably meets a target.

Every function answers an inverse question about a target ``(eps_g, delta_g)`` with a
:class:`Calibration`: ``value`` is **certified safe** (the composition at it is proved to be
``(eps_g, delta_g)``-DP) and ``fails_at``, a point just beyond it, is **certified to miss**
(docs/calibration.md; docs/mathematics.md §8).  Integer answers are exact: ``k`` meets the target
and ``k + 1`` does not.

* :func:`calibrate_eps`: the largest per-mechanism eps such that k (eps, delta)-DP mechanisms meet
  the target (optimal composition, or any ``method``);
* :func:`calibrate_scale`: the largest factor c such that the mechanisms (c eps_i, delta_i) meet it;
* :func:`calibrate_k`: the largest number of runs of any mechanism;
* :func:`calibrate_sigma`: the smallest Gaussian sigma (DP-SGD noise multiplier with ``q``);
* :func:`calibrate_q`: the largest Poisson sampling rate for a given sigma and number of steps;
* :func:`calibrate_laplace_scale`: the smallest Laplace scale for k queries.

>>> r = calibrate_eps(30, "1", "1e-5")
>>> r.value_str, r.fails_at_str, r.relative_gap < Fraction(1, 10**6)
('0.050807264', '0.05080728', True)
>>> from exactdp import is_private
>>> is_private(("0.050807264", 0, 30), "1", "1e-5"), is_private(("0.05080728", 0, 30), "1", "1e-5")
(True, False)
>>> r = calibrate_k("gaussian:sigma=10", "1", "1e-5")
>>> r.value, r.fails_at, r.exact
(7, 8, True)
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from flint import arb, ctx

from exactdp.calibrate.certsearch import (
    InfeasibleTargetError,
    Outcome,
    Proof,
    SearchResult,
    integer_search,
    search,
    shortest_decimal_in,
)
from exactdp.calibrate.probes import gaussian_delta_arb, probe_for
from exactdp.core import progress
from exactdp.core.errors import InvalidParameterError, PrecisionError, TimeBudgetError
from exactdp.core.numbers import (
    ExactReal,
    arb_of_fraction,
    decimal_string,
    format_fraction,
    fraction_of_arb_endpoints,
    parse_delta,
    parse_eps,
    parse_k,
    parse_rational,
)
from exactdp.model.composition import Composition
from exactdp.model.generic import Mechanism

__all__ = [
    "DEFAULT_GAP_EXACT",
    "DEFAULT_GAP_PLD",
    "DEFAULT_SECONDS",
    "Calibration",
    "InfeasibleTargetError",
    "Proof",
    "calibrate_eps",
    "calibrate_k",
    "calibrate_laplace_scale",
    "calibrate_q",
    "calibrate_scale",
    "calibrate_sigma",
    "main",
    "run_calibrate_query",
]

#: default relative gap between value and fails_at for exact decisions and closed forms
DEFAULT_GAP_EXACT = Fraction(1, 10**6)
#: default relative gap for the PLD engine: wide enough that an independent ``is_private`` re-check
#: of both ends decides within its own default budget (docs/calibration.md §3)
DEFAULT_GAP_PLD = Fraction(1, 10**3)
#: default time budget (seconds) of a calibration that uses the PLD engine
DEFAULT_SECONDS = 300.0


@dataclass(frozen=True)
class Calibration:
    """A certified calibration (docs/calibration.md §1).

    ``value``: the answer, proved to meet the target (``value_proof`` says how); ``fails_at``: a
    point just beyond it (larger for eps, k, q, c; smaller for sigma and scales), proved to miss
    (``fails_proof``); None only when ``value`` is the end of the domain (q = 1, k = 10^15).
    ``relative_gap = |fails_at - value| / value``; ``exact`` is True for an integer answer with
    ``fails_at = value + 1`` (and for a domain end).  ``inputs`` is the question in normal form,
    ``engine`` the certificate's kind (``exact``, ``gaussian-closed-form``, ``pld`` or a method),
    ``comparison`` classical recipes' values for the same question, ``note`` why the requested
    gap was not reached, if it was not.
    """

    parameter: str
    direction: str  # "largest" or "smallest"
    value: Fraction | int
    fails_at: Fraction | int | None
    value_proof: Proof
    fails_proof: Proof | None
    relative_gap: Fraction | None
    exact: bool
    inputs: dict[str, Any]
    engine: str
    probes: int
    seconds: float  # float ok: a timing
    gap_requested: Fraction | None = None
    note: str = ""
    comparison: tuple[tuple[str, str], ...] = field(default=())

    @property
    def value_str(self) -> str:
        """``value`` as an exact string (a decimal, ``p/q``, or the integer)."""
        return _v(self.value)

    @property
    def fails_at_str(self) -> str | None:
        """``fails_at`` as an exact string, or None."""
        return None if self.fails_at is None else _v(self.fails_at)

    @property
    def gap_reached(self) -> bool:
        """Whether the requested relative gap (or, for an integer, k + 1) was certified."""
        if self.fails_at is None:
            return self.exact
        if isinstance(self.value, int) and not isinstance(self.value, bool) and self.gap_requested is None:
            return self.exact
        return self.relative_gap is not None and self.gap_requested is not None and \
            self.relative_gap <= self.gap_requested

    def to_json(self) -> dict[str, Any]:
        """The JSON result (docs/calibration.md §4)."""
        def s(x: Fraction | int | None) -> Any:
            if x is None or isinstance(x, int):
                return x
            return format_fraction(x)

        out: dict[str, Any] = {
            "query": "calibrate", "calibrate": self.parameter, "direction": self.direction,
            "inputs": dict(self.inputs), "value": s(self.value), "fails_at": s(self.fails_at),
            "relative_gap": _gap_str(self.relative_gap), "exact": self.exact,
            "gap_requested": format_fraction(self.gap_requested) if self.gap_requested is not None else None,
            "gap_reached": self.gap_reached,
            "certificate": {"value": self.value_proof.to_json(),
                            "fails_at": self.fails_proof.to_json() if self.fails_proof else None},
            "engine": self.engine, "probes": self.probes, "seconds": round(self.seconds, 3),
        }
        if self.note:
            out["note"] = self.note
        if self.comparison:
            out["comparison"] = dict(self.comparison)
        return out

    def __str__(self) -> str:
        return human(self)


def _gap_str(g: Fraction | None) -> str | None:
    if g is None:
        return None
    return "0" if g == 0 else decimal_string(g, 3, "up")


_NAMES = {"eps": "per-mechanism eps", "scale": "scale factor c", "k": "number of runs k", "sigma": "sigma",
          "q": "sampling rate q", "laplace-scale": "Laplace scale b"}


def human(r: Calibration) -> str:
    """The result for people: the question, the answer and both certificates."""
    i = r.inputs
    tgt = f"(eps_g, delta_g) = ({i['target_eps']}, {i['target_delta']})"
    what = {
        "eps": lambda: f"{_n(i['k'], 'mechanism')}, each (eps, {i.get('delta', '0')})-DP" + _base_text(i),
        "scale": lambda: "the mechanisms (c eps_i, delta_i) of " + str(i.get("mechanisms")),
        "k": lambda: f"runs of {i['mechanism']}" + _base_text(i),
        "sigma": lambda: f"{_n(i['k'], 'Gaussian step')}" + (f" at q = {i['q']}" if i.get("q", "1") != "1" else "")
        + (f", sensitivity {i['sensitivity']}" if i.get("sensitivity", "1") != "1" else ""),
        "q": lambda: f"{_n(i['k'], 'Poisson-subsampled Gaussian step')} with sigma = {i['sigma']}",
        "laplace-scale": lambda: f"{_n(i['k'], 'Laplace query', 'Laplace queries')}" + (f" of sensitivity {i['sensitivity']}"
                                                                if i.get("sensitivity", "1") != "1" else ""),
    }[r.parameter]()
    method = f" ({i['method']} composition)" if i.get("method", "optimal") != "optimal" else ""
    name = r.parameter if r.parameter != "laplace-scale" else "b"
    lines = [f"{r.direction} {_NAMES[r.parameter]} for {what} within {tgt}{method}"]

    def v(x: Fraction | int) -> str:
        return str(x) if isinstance(x, int) else format_fraction(x)

    lines.append(f"  {name} = {v(r.value)}    certified safe: {r.value_proof.describe(*_bound(r.value_proof, i))}")
    if r.fails_at is not None and r.fails_proof is not None:
        lines.append(f"  {name} = {v(r.fails_at)}    certified to miss: {r.fails_proof.describe(*_bound(r.fails_proof, i))}")
        if r.exact:
            lines.append(f"  exact: {v(r.value)} meets the target and {v(r.fails_at)} does not")
        else:
            lines.append(f"  nearly optimal: the optimum lies between them, a relative distance of at most "
                         f"{_gap_str(r.relative_gap)} ({r.probes} probes, {r.seconds:.1f} s)")
    elif r.exact:
        lines.append(f"  ({v(r.value)} is the end of the range searched: every value up to it meets the target)")
    else:
        lines.append("  (no value beyond it was certified to miss the target within the budget)")
    for label, val in r.comparison:
        lines.append(f"  for comparison, {label}: {val}")
    if r.note:
        lines.append(f"  note: {r.note}")
    return "\n".join(lines)


def _n(k: int, word: str, plural: str | None = None) -> str:
    return f"{k} {word if k == 1 else (plural or word + 's')}"


def _bound(p: Proof, i: dict[str, Any]) -> tuple[str, Fraction | None]:
    if p.quantity.startswith("eps"):
        e = ExactReal.parse(i["target_eps"])
        return f"eps_g = {i['target_eps']}", e.rational_value()
    return f"delta_g = {i['target_delta']}", Fraction(i["target_delta"])


def _base_text(i: dict[str, Any]) -> str:
    return f", after {i['after']}" if i.get("after") else ""


# -- argument parsing ------------------------------------------------------------------------------

def _target(eps_g: object, delta_g: object) -> tuple[ExactReal, Fraction]:
    return parse_eps(eps_g, "target_eps"), parse_delta(delta_g, "target_delta")


def _gap(gap: object, default: Fraction) -> Fraction:
    if gap is None:
        return default
    g = parse_rational(gap, "gap")
    if not 0 < g < 1:
        raise InvalidParameterError(f"gap={gap!r} must satisfy 0 < gap < 1 (a relative distance, e.g. 1e-4)")
    return g


def _round_to(r: object) -> Fraction | None:
    if r is None:
        return None
    v = parse_rational(r, "round_to")
    if v <= 0:
        raise InvalidParameterError(f"round_to={r!r} must be > 0 (e.g. 1e-6)")
    return v


def _seconds(s: object) -> float | None:  # float ok: a clock time, never a result
    if s is None:
        return None
    v = parse_rational(s, "max_seconds")
    if v <= 0:
        raise InvalidParameterError(f"max_seconds={s!r} must be a positive number of seconds")
    return v.numerator / v.denominator  # float ok: a clock budget


def _base(base: object) -> Composition | None:
    if base is None:
        return None
    return Composition.of(base)


def _with_base(base: Composition | None, groups: tuple[tuple[Any, int], ...]) -> Composition:
    return Composition((base.groups if base is not None else ()) + groups)


def _positive(x: object, name: str) -> Fraction:
    v = parse_rational(x, name)
    if v <= 0:
        raise InvalidParameterError(f"{name}={x!r} must be > 0")
    return v


def _rate(x: object, name: str = "q") -> Fraction:
    v = parse_rational(x, name)
    if not 0 < v <= 1:
        raise InvalidParameterError(f"{name}={x!r} must satisfy 0 < {name} <= 1")
    return v


def _mechanism(m: object) -> Any:
    """A mechanism from a value, a spec string ('gaussian:sigma=1,q=0.01', 'approx:eps=0.1',
    '0.1,1e-6') or an (eps, delta) pair; a count in a spec is refused (k is what is calibrated)."""
    from exactdp.model.mechanisms import SpecificMechanism, normalise_mechanism
    from exactdp.model.spec import parse_mechanism_spec

    if isinstance(m, (Mechanism, SpecificMechanism)):
        return normalise_mechanism(m)
    if isinstance(m, str):
        if ":" in m:
            mech, count = parse_mechanism_spec(m)
            if count != 1:
                raise InvalidParameterError(f"mechanism={m!r}: leave out count=..., the number of runs is what "
                                            "calibrate k finds")
            return mech
        parts = [p.strip() for p in m.split(",")]
        if not 1 <= len(parts) <= 2 or not all(parts):
            raise InvalidParameterError(f"mechanism={m!r} must be a spec such as 'gaussian:sigma=1' or 'E[,D]'")
        return Mechanism.of(parts[0], parts[1] if len(parts) > 1 else 0)
    if isinstance(m, (tuple, list)) and 1 <= len(m) <= 2:
        return Mechanism.of(m[0], m[1] if len(m) > 1 else 0)
    raise InvalidParameterError(f"mechanism={m!r} must be a mechanism, a spec string or an (eps, delta) pair")


def _mech_str(m: Any) -> str:
    return m.spec() if hasattr(m, "spec") else f"({m.eps}, {format_fraction(m.delta)})-DP"


def _inputs(eps_g: ExactReal, delta_g: Fraction, **kw: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, v in kw.items():
        if v is None:
            continue
        out[key] = format_fraction(v) if isinstance(v, Fraction) else v
    out["target_eps"], out["target_delta"] = str(eps_g), format_fraction(delta_g)
    return out


# -- the shared driver ------------------------------------------------------------------------------

@dataclass
class _Run:
    deadline: float | None  # float ok: a clock time, never a result
    start: float  # float ok: a clock time, never a result

    def left(self) -> float | None:  # float ok: seconds
        return None if self.deadline is None else self.deadline - time.monotonic()


def _start(max_seconds: float | None, engine: str) -> _Run:  # float ok: a clock time, never a result
    now = time.monotonic()
    if max_seconds is None and engine == "pld":
        max_seconds = DEFAULT_SECONDS
    left = progress.remaining()
    if left is not None:
        max_seconds = left if max_seconds is None else min(max_seconds, left)
    return _Run(None if max_seconds is None else now + max_seconds, now)


def _finish(parameter: str, worse_up: bool, res: SearchResult, *, inputs: dict[str, Any], engine: str,
            gap: Fraction | None, run: _Run, probe: Any = None, round_to: Fraction | None = None,
            comparison: tuple[tuple[str, str], ...] = (), integer: bool = False) -> Calibration:
    if res.safe is None or res.safe_proof is None:
        best = f"; the nearest point proved to miss is {_v(res.fail)}" if res.fail is not None else ""
        raise TimeBudgetError(f"no value could be certified safe within the budget ({res.probes} probes, "
                              f"{res.seconds:.1f} s{best})", elapsed=res.seconds,
                              best=(None, res.fail))
    value, proof = res.safe, res.safe_proof
    note = ""
    n = res.probes
    if round_to is not None and not integer:
        m = Fraction(value) / round_to
        v2 = (math.floor(m) if worse_up else math.ceil(m)) * round_to
        if v2 != value:
            out: Outcome = probe(v2)
            n += 1
            proof = out.proof if out.verdict == "meets" else Proof(
                "meets", f"monotonicity: {format_fraction(Fraction(value))} meets the target "
                f"({res.safe_proof.describe('the target')}) and {format_fraction(v2)} is on its safe side")
            value = v2
    fails = res.fail
    gap_val: Fraction | None = None
    if fails is not None and value != 0:
        gap_val = abs(Fraction(fails) - Fraction(value)) / abs(Fraction(value))
    exact = (integer and fails is not None and abs(fails - value) == 1) or (fails is None and res.at_limit)
    if res.stopped == "time":
        note = f"the time budget ran out after {res.seconds:.1f} s before the requested gap was certified"
    elif res.stopped == "probes":
        note = "the probe limit was reached before the requested gap was certified"
    elif res.stopped == "undecided":
        note = "the engine could not separate the points between value and fails_at within its limits"
    elif res.stopped == "limit" or (fails is None and res.at_limit):
        note = "every value searched up to the end of the range meets the target"
    if res.undecided and not note:
        note = f"{len(res.undecided)} probe(s) near the boundary were undecided within their budget"
    return Calibration(parameter, "largest" if worse_up else "smallest", value, fails, proof,
                       res.fail_proof, gap_val, exact, inputs, engine, n, time.monotonic() - run.start,
                       None if integer else gap, note, comparison)


def _v(x: Any) -> str:
    return str(x) if isinstance(x, int) or x is None else format_fraction(x)


# -- the problems -----------------------------------------------------------------------------------

def calibrate_eps(k: object, target_eps: object, target_delta: object, *, delta: object = 0,
                  method: str = "optimal", eta: object = None, base: object = None, gap: object = None,
                  round_to: object = None, max_seconds: object = None) -> Calibration:
    """The largest eps such that ``k`` mechanisms, each (eps, ``delta``)-DP (after the mechanisms of
    ``base``, if given), meet the target under ``method`` (docs/calibration.md §2.1).

    >>> r = calibrate_eps(10, "1", "1e-6", method="basic")
    >>> r.value_str, r.fails_at_str, r.value_proof.how
    ('0.1', '0.10000007', 'basic enclosure')
    """
    k = parse_k(k, "k")
    eps_g, delta_g = _target(target_eps, target_delta)
    d = parse_delta(delta, "delta")
    b = _base(base)
    if not isinstance(method, str):
        raise InvalidParameterError(f"method={method!r} must be a method name such as 'optimal' or 'drv10'")
    from exactdp.cli import _method_options

    options = _method_options(method, eta)
    if b is not None and not b.is_generic and method != "optimal":
        b.require_generic(f"method={method!r}")
    g = _gap(gap, DEFAULT_GAP_EXACT if (b is None or b.is_generic) else DEFAULT_GAP_PLD)
    r_to = _round_to(round_to)

    def comp_of(x: Fraction) -> Composition:
        return _with_base(b, ((Mechanism(ExactReal.rational(x), d), k),))

    sample = comp_of(Fraction(1, 10))
    run = _start(_seconds(max_seconds), "exact" if sample.is_generic else "pld")
    probe, engine = probe_for(sample, comp_of, eps_g, delta_g, method=method, options=options, deadline=lambda: run.deadline)
    inputs = _inputs(eps_g, delta_g, k=k, delta=d, method=method, eta=options.get("eta"),
                     after=str(b) if b is not None else None)
    with progress.task(f"calibrate eps ({method})"):
        edge = probe(Fraction(0))
        if edge.verdict == "fails":
            raise InfeasibleTargetError(
                f"no eps >= 0 meets the target: even eps = 0 misses it ({edge.proof.describe('the target')}); "
                "the per-mechanism deltas alone exceed delta_g")
        start = _approx(eps_g) / (k + (b.k if b is not None else 0)) if eps_g.sign() > 0 else Fraction(1, 1000 * k)
        start = shortest_decimal_in(start * Fraction(9, 10), start) if start > 0 else Fraction(1, 1000 * k)
        res = search(probe, worse_up=True, x0=start, gap=g, deadline=run.deadline, label="calibrate eps",
                     polish=engine != "pld")
    return _finish("eps", True, res, inputs=inputs, engine=engine, gap=g, run=run, probe=probe, round_to=r_to)


def calibrate_scale(mechanisms: object, target_eps: object, target_delta: object, *, method: str = "optimal",
                    eta: object = None, gap: object = None, round_to: object = None,
                    max_seconds: object = None) -> Calibration:
    """The largest factor c such that the mechanisms (c eps_i, delta_i) meet the target
    (docs/calibration.md §2.1): the heterogeneous form of :func:`calibrate_eps`.  Every eps_i must
    be rational (c log(q) is not an exact input).

    >>> r = calibrate_scale([("1", 0), ("2", 0)], "1.5", "0", method="basic")
    >>> r.value_str, r.fails_at_str
    ('0.5', '0.50000035')
    """
    comp = Composition.of(mechanisms)
    comp.require_generic("calibrate scale")
    groups: list[tuple[Fraction, Fraction, int]] = []
    for m, c in comp.groups:
        e = m.eps.rational_value()
        if e is None:
            raise InvalidParameterError(f"eps={m.eps} must be rational for the scale-factor calibration "
                                        "(c log(q) is not an exact number)")
        groups.append((e, m.delta, c))
    total = sum(e * c for e, _, c in groups)
    if total == 0:
        raise InvalidParameterError("mechanisms: every eps_i is 0, so no scale factor changes anything")
    eps_g, delta_g = _target(target_eps, target_delta)
    if not isinstance(method, str):
        raise InvalidParameterError(f"method={method!r} must be a method name such as 'optimal' or 'drv10'")
    from exactdp.cli import _method_options

    options = _method_options(method, eta)
    g = _gap(gap, DEFAULT_GAP_EXACT)
    r_to = _round_to(round_to)

    def comp_of(x: Fraction) -> Composition:
        return Composition(tuple((Mechanism(ExactReal.rational(x * e), d), c) for e, d, c in groups))

    run = _start(_seconds(max_seconds), "exact")
    probe, engine = probe_for(comp, comp_of, eps_g, delta_g, method=method, options=options, deadline=lambda: run.deadline)
    inputs = _inputs(eps_g, delta_g, mechanisms=comp.to_inputs().get("mechanisms", [comp.to_inputs()]),
                     method=method, eta=options.get("eta"))
    with progress.task(f"calibrate scale ({method})"):
        edge = probe(Fraction(0))
        if edge.verdict == "fails":
            raise InfeasibleTargetError(f"no scale factor c >= 0 meets the target: even c = 0 misses it "
                                        f"({edge.proof.describe('the target')})")
        x0 = _approx(eps_g) / total if eps_g.sign() > 0 else Fraction(1, 1000) / total
        x0 = shortest_decimal_in(x0 * Fraction(9, 10), x0) if x0 > 0 else Fraction(1, 1000) / total
        res = search(probe, worse_up=True, x0=x0, gap=g, deadline=run.deadline, label="calibrate scale")
    return _finish("scale", True, res, inputs=inputs, engine=engine, gap=g, run=run, probe=probe, round_to=r_to)


def calibrate_k(mechanism: object, target_eps: object, target_delta: object, *, base: object = None,
                max_seconds: object = None) -> Calibration:
    """The largest number k of runs of ``mechanism`` (after ``base``, if given) that meets the target:
    k is proved to meet it and k + 1 to miss it (docs/calibration.md §2.2).

    ``mechanism``: a mechanism value, a spec string (``"gaussian:sigma=1,q=0.01"``,
    ``"laplace:scale=10"``, ``"0.1,1e-6"`` for a generic (0.1, 1e-6)-DP one) or an (eps, delta) pair.

    >>> r = calibrate_k("0.1,1e-6", "1", "1e-5")   # here the deltas bind: 11 x 1e-6 > 1e-5
    >>> r.value, r.fails_at, r.exact
    (10, 11, True)
    """
    mech = _mechanism(mechanism)
    eps_g, delta_g = _target(target_eps, target_delta)
    b = _base(base)

    def comp_of(x: int) -> Composition:
        return _with_base(b, ((mech, int(x)),))

    sample = comp_of(1)
    from exactdp.engines.gaussian import gaussian_mu2

    engine0 = "exact" if sample.is_generic else ("gaussian-closed-form" if gaussian_mu2(sample) is not None else "pld")
    run = _start(_seconds(max_seconds), engine0)
    probe, engine = probe_for(sample, comp_of, eps_g, delta_g, deadline=lambda: run.deadline)
    inputs = _inputs(eps_g, delta_g, mechanism=_mech_str(mech), after=str(b) if b is not None else None)
    with progress.task("calibrate k"):
        x0 = 1
        if engine == "gaussian-closed-form":
            mu2_base = gaussian_mu2(b) if b is not None else Fraction(0)
            m_star = _gaussian_mu2_root(eps_g, delta_g)
            if m_star is not None and mu2_base is not None:
                per = mech.mu ** 2
                x0 = max(1, int((m_star[0] - mu2_base) / per))
        elif engine == "exact":
            e = mech.eps.rational_value()
            if e is not None and e > 0 and eps_g.sign() > 0:
                x0 = max(1, int(_approx(eps_g) / e))
        else:
            x0 = _k_guess(mech, eps_g, delta_g, b)
        res = integer_search(probe, x0=x0, deadline=run.deadline)
    return _finish("k", True, res, inputs=inputs, engine=engine, gap=None, run=run, integer=True)


def _k_guess(mech: Any, eps_g: ExactReal, delta_g: Fraction, base: Composition | None) -> int:
    """A first count to probe for a PLD mechanism (chooses a probe only): for a subsampled Gaussian
    the central-limit approximation (Dong, Roth and Su 2022), for a pure-DP mechanism (Laplace,
    randomized response) the exact count of its dominating generic mechanism (certified safe, so
    the search only goes up), else 1."""
    from exactdp.calibrate.probes import dominating_generic
    from exactdp.model.mechanisms import Gaussian, PoissonSampled

    try:
        if isinstance(mech, PoissonSampled) and isinstance(mech.mechanism, Gaussian) and base is None:
            m = _gaussian_mu2_root(eps_g, delta_g, digits=6)
            if m is None:
                return 1
            mu = float(mech.mechanism.mu)  # float ok: a first probe
            t = float(mech.q) ** 2 * math.expm1(min(mu * mu, 700.0))  # float ok
            return max(1, min(int(float(m[0]) / t), 10**12)) if t > 0 else 1  # float ok
        g = dominating_generic(Composition(((mech, 1),)))
        if g is not None and base is None:
            gm = g.groups[0][0]
            return calibrate_k(gm, eps_g, delta_g).value  # type: ignore[return-value]
    except (InfeasibleTargetError, PrecisionError, OverflowError):
        pass
    return 1


def _gaussian_mu2_root(eps_g: ExactReal, delta_g: Fraction, digits: int = 30) -> tuple[Fraction, Fraction] | None:
    """An enclosure [lo, hi] of the mu^2 at which a Gaussian composition's delta(eps_g) equals delta_g
    (delta is increasing in mu^2, docs/mathematics.md §7.2), or None when delta_g = 0."""
    from exactdp.core.roots import decreasing_root, sign_at

    if delta_g <= 0:
        return None

    def f(m: arb) -> arb:
        return arb_of_fraction(delta_g) - gaussian_delta_arb(m, eps_g.arb())

    lo, hi = Fraction(1, 1 << 20), Fraction(1)
    while sign_at(f, lo) <= 0:
        lo /= 1 << 20
        if lo < Fraction(1, 1 << 400):
            return None
    while sign_at(f, hi) >= 0:
        hi *= 4
        if hi > 1 << 200:
            return None
    enc = decreasing_root(f, lo, hi, digits)
    return enc.lower, enc.upper  # type: ignore[return-value]


def _closed_form_pair(probe: Any, lo: Fraction, hi: Fraction, worse_up: bool, gap: Fraction) -> SearchResult:
    """The final pair around a boundary known to lie in [lo, hi]: the safe end about gap/3 inside,
    the failing end about gap/3 beyond, both short decimals, both proved by probes."""
    t0 = time.monotonic()
    a, b = (lo, hi) if worse_up else (hi, lo)  # a: the safe side's end of the enclosure
    sgn = -1 if worse_up else 1
    safe = shortest_decimal_in(a * (1 + sgn * gap / 6), a * (1 + sgn * gap / 3))
    fail = shortest_decimal_in(b * (1 - sgn * gap / 6), b * (1 - sgn * gap / 3))
    o1, o2 = probe(safe), probe(fail)
    res = SearchResult(safe if o1.verdict == "meets" else None, fail if o2.verdict == "fails" else None,
                       o1.proof if o1.verdict == "meets" else None, o2.proof if o2.verdict == "fails" else None,
                       2, seconds=time.monotonic() - t0)
    return res


def calibrate_sigma(k: object, target_eps: object, target_delta: object, *, q: object = 1,
                    sensitivity: object = 1, gap: object = None, round_to: object = None,
                    max_seconds: object = None) -> Calibration:
    """The smallest Gaussian sigma such that ``k`` steps (Poisson subsampled at rate ``q`` when
    q < 1: the DP-SGD noise multiplier) meet the target (docs/calibration.md §2.3).  Without
    subsampling the boundary is a certified root of the closed form (mu^2 adds); with it, a
    search with PLD-bracket decisions.

    >>> r = calibrate_sigma(100, "1", "1e-5")
    >>> r.value_str, r.fails_at_str, r.engine
    ('37.306326', '37.30631', 'gaussian-closed-form')
    """
    k = parse_k(k, "k")
    eps_g, delta_g = _target(target_eps, target_delta)
    qq = _rate(q)
    s = _positive(sensitivity, "sensitivity")
    from exactdp.model.mechanisms import Gaussian, PoissonSampled

    def comp_of(x: Fraction) -> Composition:
        m: Any = Gaussian(x, s)
        return Composition(((PoissonSampled(m, qq) if qq < 1 else m, k),))

    engine0 = "gaussian-closed-form" if qq == 1 else "pld"
    g = _gap(gap, DEFAULT_GAP_EXACT if qq == 1 else DEFAULT_GAP_PLD)
    r_to = _round_to(round_to)
    run = _start(_seconds(max_seconds), engine0)
    probe, engine = probe_for(comp_of(Fraction(1)), comp_of, eps_g, delta_g, deadline=lambda: run.deadline)
    inputs = _inputs(eps_g, delta_g, k=k, q=qq, sensitivity=s)
    if delta_g == 0:
        raise InfeasibleTargetError("no sigma meets delta_g = 0: a Gaussian mechanism has delta(eps) > 0 at every eps")
    m_star = _gaussian_mu2_root(eps_g, delta_g)
    if m_star is None:
        raise InfeasibleTargetError("no sigma meets the target (the Gaussian boundary is out of range)")
    # sigma for plain Gaussian steps: mu^2 = k s^2 / sigma^2 = m*  ->  sigma* = s sqrt(k / m*)
    with progress.task("calibrate sigma"):
        lo_s, hi_s = _sqrt_bounds(k * s * s / m_star[1]), _sqrt_bounds(k * s * s / m_star[0])
        if qq == 1:
            res = _closed_form_pair(probe, lo_s[0], hi_s[1], False, g)
            if res.safe is None or res.fail is None:  # not expected: fall back to the search
                res = search(probe, worse_up=False, x0=hi_s[1], gap=g, deadline=run.deadline, label="calibrate sigma")
        else:
            x0 = _dpsgd_sigma_guess(float(m_star[0]), float(qq), k, float(s))  # float ok: a first probe
            x0 = shortest_decimal_in(Fraction(x0) * Fraction(99, 100), Fraction(x0) * Fraction(101, 100))
            res = search(probe, worse_up=False, x0=x0, gap=g, deadline=run.deadline, label="calibrate sigma",
                         polish=False)
    comparison = ()
    if qq < 1:  # float ok: an approximation shown for comparison, labelled as such
        clt = _dpsgd_sigma_guess(float(m_star[0]), float(qq), k, float(s))  # float ok: an approximation shown for comparison
        comparison = (("the central-limit approximation (Dong-Roth-Su 2022, not certified)", f"sigma ~ {clt:.6g}"),)
    return _finish("sigma", False, res, inputs=inputs, engine=engine, gap=g, run=run, probe=probe, round_to=r_to,
                   comparison=comparison)


def _sqrt_bounds(x: Fraction) -> tuple[Fraction, Fraction]:
    """Exact rationals lo <= sqrt(x) <= hi (a 200-bit ball)."""
    with ctx.workprec(200):
        return fraction_of_arb_endpoints(arb_of_fraction(x).sqrt())


def _approx(e: ExactReal) -> Fraction:
    """A rational near e (chooses a first probe only)."""
    with ctx.workprec(64):
        return Fraction(float(e.arb().mid())).limit_denominator(10**12)  # float ok: a first probe


def _dpsgd_sigma_guess(mu2: float, q: float, k: int, s: float) -> float:  # float ok: a first probe only
    """sigma from the central-limit approximation of DP-SGD (Dong, Roth and Su 2022, Thm 6):
    mu = q sqrt(k (e^{(s/sigma)^2} - 1)), solved for sigma at mu^2 = mu2 (the Gaussian boundary)."""
    t = math.log1p(mu2 / (q * q * k)) if q * q * k > 0 else 1.0  # float ok: a first probe only
    return s / math.sqrt(t) if t > 0 else 1.0  # float ok: a first probe only


def calibrate_q(sigma: object, k: object, target_eps: object, target_delta: object, *, sensitivity: object = 1,
                gap: object = None, round_to: object = None, max_seconds: object = None) -> Calibration:
    """The largest Poisson sampling rate q such that ``k`` subsampled Gaussian steps with noise
    ``sigma`` meet the target (docs/calibration.md §2.3); q = 1 (no subsampling) is the end of the
    range, with no failing point beyond it.

    >>> r = calibrate_q("10", 10, "1", "1e-3")    # even q = 1 (plain Gaussian steps) meets this target
    >>> r.value_str, r.fails_at, r.value_proof.how
    ('1', None, 'Gaussian closed form')
    """
    sig = _positive(sigma, "sigma")
    k = parse_k(k, "k")
    eps_g, delta_g = _target(target_eps, target_delta)
    s = _positive(sensitivity, "sensitivity")
    from exactdp.model.mechanisms import Gaussian, PoissonSampled

    def comp_of(x: Fraction) -> Composition:
        m: Any = Gaussian(sig, s)
        return Composition(((PoissonSampled(m, x) if x < 1 else m, k),))

    g = _gap(gap, DEFAULT_GAP_PLD)
    r_to = _round_to(round_to)
    run = _start(_seconds(max_seconds), "pld")
    probe, _ = probe_for(comp_of(Fraction(1, 2)), comp_of, eps_g, delta_g, deadline=lambda: run.deadline)
    inputs = _inputs(eps_g, delta_g, sigma=sig, k=k, sensitivity=s)
    if delta_g == 0:
        raise InfeasibleTargetError("no sampling rate q > 0 meets delta_g = 0: a subsampled Gaussian mechanism has "
                                    "delta(eps) > 0 at every eps")
    with progress.task("calibrate q"):
        m_star = _gaussian_mu2_root(eps_g, delta_g)
        x0f = 0.01  # float ok: a first probe
        if m_star is not None:
            x0f = math.sqrt(float(m_star[0]) / (k * math.expm1(min((float(s) / float(sig)) ** 2, 700))))  # float ok
        x0f = min(max(x0f, 1e-9), 1.0)
        x0 = shortest_decimal_in(Fraction(x0f) * Fraction(9, 10), Fraction(x0f))
        res = search(probe, worse_up=True, x0=x0, gap=g, hi_limit=Fraction(1), deadline=run.deadline,
                     label="calibrate q", polish=False)
    return _finish("q", True, res, inputs=inputs, engine="pld", gap=g, run=run, probe=probe, round_to=r_to)


def calibrate_laplace_scale(k: object, target_eps: object, target_delta: object, *, sensitivity: object = 1,
                            gap: object = None, round_to: object = None, max_seconds: object = None) -> Calibration:
    """The smallest Laplace scale b such that ``k`` queries of L1 sensitivity ``sensitivity`` with
    Laplace(b) noise meet the target, judged by the Laplace mechanism's own privacy loss (PLD
    engine; docs/calibration.md §2.3).  The generic bound (Laplace(b) is (sensitivity/b)-DP,
    composed optimally) and basic composition (b = k sensitivity / eps_g) are given for comparison.

    >>> r = calibrate_laplace_scale(10, "1", "0", sensitivity=2)   # pure DP: b = 20 is the optimum
    >>> r.value_str, r.value_proof.how.startswith("exact decision")
    ('20', True)
    """
    k = parse_k(k, "k")
    eps_g, delta_g = _target(target_eps, target_delta)
    s = _positive(sensitivity, "sensitivity")
    from exactdp.model.mechanisms import Laplace

    def comp_of(x: Fraction) -> Composition:
        return Composition(((Laplace(x, s), k),))

    g = _gap(gap, DEFAULT_GAP_PLD)
    r_to = _round_to(round_to)
    run = _start(_seconds(max_seconds), "pld")
    probe, _ = probe_for(comp_of(Fraction(1)), comp_of, eps_g, delta_g, deadline=lambda: run.deadline)
    inputs = _inputs(eps_g, delta_g, k=k, sensitivity=s)
    comparison: list[tuple[str, str]] = []
    with progress.task("calibrate laplace-scale"):
        # a safe starting point: the generic bound, Laplace(b) being (s/b)-DP (docs/mathematics.md §5 item 8)
        gen = calibrate_eps(k, eps_g, delta_g, gap="1e-4")
        b_generic = s / gen.value if gen.value > 0 else None  # type: ignore[operator]
        if b_generic is not None:
            comparison.append(("the generic bound (Laplace(b) as (sensitivity/b)-DP, optimal composition)",
                               f"b = {decimal_string(b_generic, 8, 'up')}"))
        if eps_g.rational_value():  # not None, not 0
            comparison.append(("basic composition (b = k sensitivity / eps_g)",
                               f"b = {format_fraction(k * s / eps_g.rational_value())}"))  # type: ignore[operator]
        x0 = b_generic * Fraction(4, 5) if b_generic is not None else Fraction(k) * s
        x0 = shortest_decimal_in(x0 * Fraction(99, 100), x0)
        from exactdp.calibrate.probes import dominated_probe

        res = search(probe, worse_up=False, x0=x0, gap=g, deadline=run.deadline, label="calibrate laplace-scale",
                     polish=dominated_probe(comp_of, eps_g, delta_g, None))
    return _finish("laplace-scale", False, res, inputs=inputs, engine="pld", gap=g, run=run, probe=probe,
                   round_to=r_to, comparison=tuple(comparison))


def run_calibrate_query(obj: dict[str, Any]) -> dict[str, Any]:
    """Answer a batch line ``{"query": "calibrate", "calibrate": "eps" | "scale" | "k" | "sigma" |
    "q" | "laplace-scale", ...}`` (docs/calibration.md §4); returns the JSON result."""
    from exactdp.cli.calibrate import run_calibrate_query as run

    return run(obj)


def main(argv: list[str] | None = None) -> int:
    """``exactdp calibrate ...`` (docs/calibration.md §3)."""
    from exactdp.cli.calibrate import main as cli_main

    return cli_main(argv)
