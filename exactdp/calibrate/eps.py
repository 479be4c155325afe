"""Calibrating per-mechanism eps: the largest eps of k equal (eps, delta)-DP mechanisms, and the
largest factor c of a list (c eps_i, delta_i), that meet a target (docs/calibration.md §2.1).

Probes are exact decisions (KOV15 Thm 3.3, Murtagh-Vadhan Thm 1.5), a method's certified
enclosure, or PLD brackets when the mechanisms already spent (``base``) are specific ones.
"""

from __future__ import annotations

from fractions import Fraction

from exactdp.api.methods import method_options
from exactdp.calibrate.arguments import (
    inputs_record,
    parse_base,
    parse_gap,
    parse_round_to,
    parse_target,
    with_base,
)
from exactdp.calibrate.certsearch import InfeasibleTargetError, search, shortest_decimal_in
from exactdp.calibrate.driver import DEFAULT_GAP_EXACT, DEFAULT_GAP_PLD, approx_rational, finish, start_run
from exactdp.calibrate.probes import probe_for
from exactdp.calibrate.result import Calibration
from exactdp.core import progress
from exactdp.core.errors import InvalidParameterError
from exactdp.core.numbers import ExactInput, ExactReal, parse_delta, parse_k
from exactdp.model.composition import Composition, CompositionInput
from exactdp.model.generic import Mechanism

__all__ = ["calibrate_eps", "calibrate_scale"]


def calibrate_eps(k: ExactInput, target_eps: ExactInput, target_delta: ExactInput, *, delta: ExactInput = 0,
                  method: str = "optimal", eta: ExactInput | None = None, base: CompositionInput | None = None,
                  gap: ExactInput | None = None, round_to: ExactInput | None = None,
                  max_seconds: ExactInput | None = None) -> Calibration:
    """The largest eps such that ``k`` mechanisms, each (eps, ``delta``)-DP (after the mechanisms of
    ``base``, if given), meet the target under ``method`` (docs/calibration.md §2.1).

    >>> r = calibrate_eps(10, "1", "1e-6", method="basic")
    >>> r.value_str, r.fails_at_str, r.value_proof.how
    ('0.1', '0.10000007', 'basic enclosure')
    """
    k = parse_k(k, "k")
    eps_g, delta_g = parse_target(target_eps, target_delta)
    d = parse_delta(delta, "delta")
    b = parse_base(base)
    if not isinstance(method, str):
        raise InvalidParameterError(f"method={method!r} must be a method name such as 'optimal' or 'drv10'")
    options = method_options(method, eta)
    if b is not None and not b.is_generic and method != "optimal":
        b.require_generic(f"method={method!r}")
    g = parse_gap(gap, DEFAULT_GAP_EXACT if (b is None or b.is_generic) else DEFAULT_GAP_PLD)
    r_to = parse_round_to(round_to)

    def comp_of(x: Fraction) -> Composition:
        return with_base(b, ((Mechanism(ExactReal.rational(x), d), k),))

    sample = comp_of(Fraction(1, 10))
    run = start_run(progress.parse_seconds(max_seconds), "exact" if sample.is_generic else "pld")
    probe, engine = probe_for(sample, comp_of, eps_g, delta_g, method=method, options=options, deadline=lambda: run.deadline)
    inputs = inputs_record(eps_g, delta_g, k=k, delta=d, method=method, eta=options.get("eta"),
                     after=str(b) if b is not None else None)
    with progress.task(f"calibrate eps ({method})"):
        edge = probe(Fraction(0))
        if edge.verdict == "fails":
            raise InfeasibleTargetError(
                f"no eps >= 0 meets the target: even eps = 0 misses it ({edge.proof.describe('the target')}); "
                "the per-mechanism deltas alone exceed delta_g")
        start = approx_rational(eps_g) / (k + (b.k if b is not None else 0)) if eps_g.sign() > 0 else Fraction(1, 1000 * k)
        start = shortest_decimal_in(start * Fraction(9, 10), start) if start > 0 else Fraction(1, 1000 * k)
        res = search(probe, worse_up=True, x0=start, gap=g, deadline=run.deadline, label="calibrate eps",
                     polish=engine != "pld")
    return finish("eps", True, res, inputs=inputs, engine=engine, gap=g, run=run, probe=probe, round_to=r_to)


def calibrate_scale(mechanisms: CompositionInput, target_eps: ExactInput, target_delta: ExactInput, *,
                    method: str = "optimal", eta: ExactInput | None = None, gap: ExactInput | None = None,
                    round_to: ExactInput | None = None, max_seconds: ExactInput | None = None) -> Calibration:
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
    eps_g, delta_g = parse_target(target_eps, target_delta)
    if not isinstance(method, str):
        raise InvalidParameterError(f"method={method!r} must be a method name such as 'optimal' or 'drv10'")
    options = method_options(method, eta)
    g = parse_gap(gap, DEFAULT_GAP_EXACT)
    r_to = parse_round_to(round_to)

    def comp_of(x: Fraction) -> Composition:
        return Composition(tuple((Mechanism(ExactReal.rational(x * e), d), c) for e, d, c in groups))

    run = start_run(progress.parse_seconds(max_seconds), "exact")
    probe, engine = probe_for(comp, comp_of, eps_g, delta_g, method=method, options=options, deadline=lambda: run.deadline)
    inputs = inputs_record(eps_g, delta_g, mechanisms=comp.to_inputs().get("mechanisms", [comp.to_inputs()]),
                     method=method, eta=options.get("eta"))
    with progress.task(f"calibrate scale ({method})"):
        edge = probe(Fraction(0))
        if edge.verdict == "fails":
            raise InfeasibleTargetError(f"no scale factor c >= 0 meets the target: even c = 0 misses it "
                                        f"({edge.proof.describe('the target')})")
        x0 = approx_rational(eps_g) / total if eps_g.sign() > 0 else Fraction(1, 1000) / total
        x0 = shortest_decimal_in(x0 * Fraction(9, 10), x0) if x0 > 0 else Fraction(1, 1000) / total
        res = search(probe, worse_up=True, x0=x0, gap=g, deadline=run.deadline, label="calibrate scale")
    return finish("scale", True, res, inputs=inputs, engine=engine, gap=g, run=run, probe=probe, round_to=r_to)
