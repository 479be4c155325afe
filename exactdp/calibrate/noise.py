"""Calibrating noise: the smallest Gaussian sigma (the DP-SGD noise multiplier with subsampling), the
largest Poisson sampling rate for a given sigma, and the smallest Laplace scale, that meet a target
(docs/calibration.md §2.3).

Without subsampling the Gaussian boundary is a certified root of the closed form (mu^2 adds); with
it, and for Laplace noise, a search with PLD-bracket decisions.
"""

from __future__ import annotations

import math
import time
from fractions import Fraction
from typing import Any

from flint import ctx

from exactdp.calibrate.arguments import (
    inputs_record,
    parse_gap,
    parse_positive,
    parse_rate,
    parse_relation_reading,
    parse_round_to,
    parse_target,
    relation_record,
)
from exactdp.calibrate.certsearch import InfeasibleTargetError, Outcome, Proof, search, shortest_decimal_in
from exactdp.calibrate.driver import (
    DEFAULT_GAP_EXACT,
    DEFAULT_GAP_PLD,
    closed_form_pair,
    finish,
    gaussian_mu2_root,
    start_run,
)
from exactdp.calibrate.eps import calibrate_eps
from exactdp.calibrate.probes import probe_for
from exactdp.calibrate.result import Calibration
from exactdp.core import progress
from exactdp.core.errors import InvalidParameterError, PrecisionError
from exactdp.core.numbers import (
    CountInput,
    ExactInput,
    arb_of_fraction,
    decimal_string,
    float_as_exact,
    format_fraction,
    fraction_of_arb_endpoints,
    parse_k,
    parse_rational,
)
from exactdp.model.composition import Composition

__all__ = ["calibrate_laplace_scale", "calibrate_q", "calibrate_sigma", "get_noise_multiplier"]


def calibrate_sigma(k: ExactInput, target_eps: ExactInput, target_delta: ExactInput, *, q: ExactInput = 1,
                    sensitivity: ExactInput = 1, gap: ExactInput | None = None, round_to: ExactInput | None = None,
                    max_seconds: ExactInput | None = None, relation: object = "add-remove",
                    bounded: object = False) -> Calibration:
    """The smallest Gaussian sigma such that ``k`` steps (Poisson subsampled at rate ``q`` when
    q < 1: the DP-SGD noise multiplier) meet the target (docs/calibration.md §2.3).  Without
    subsampling the boundary is a certified root of the closed form (mu^2 adds); with it, a
    search with PLD-bracket decisions.

    ``relation``: ``"add-remove"`` (the default) or ``"replace-one"`` (dp_accounting's
    ``NeighboringRelation`` members read the same), the relation the subsampled steps are judged
    under (docs/mathematics.md §9, Theorem 9.2); ``bounded=True`` (replace-one only): dp_accounting's
    bounded-records reading (Theorem 9.8).  Without subsampling the pair is the same under both
    relations (``sensitivity`` is stated for the relation in use), so sigma is too.

    >>> r = calibrate_sigma(100, "1", "1e-5")
    >>> r.value_str, r.fails_at_str, r.engine
    ('37.306326', '37.30631', 'gaussian-closed-form')
    """
    k = parse_k(k, "k")
    eps_g, delta_g = parse_target(target_eps, target_delta)
    qq = parse_rate(q, zero=True)
    s = parse_positive(sensitivity, "sensitivity")
    rel, bnd = parse_relation_reading(relation, bounded)
    if bnd and qq == 1:
        raise InvalidParameterError("bounded=True (dp_accounting's bounded-records reading, docs/mathematics.md §9, "
                                    "Theorem 9.8) is a reading of Poisson-subsampled Gaussian steps: give q < 1")
    if qq == 0:  # nothing is ever sampled: every sigma, 0 included, meets every target (eps_g >= 0)
        return _unsampled("sigma", inputs_record(eps_g, delta_g, k=k, q=qq, sensitivity=s, **relation_record(rel, bnd)))
    from exactdp.model.mechanisms import Gaussian, PoissonSampled

    def comp_of(x: Fraction) -> Composition:
        m: Any = Gaussian(x, s)
        return Composition(((PoissonSampled(m, qq, rel, bounded=bnd) if qq < 1 else m, k),))

    engine0 = "gaussian-closed-form" if qq == 1 else "pld"
    g = parse_gap(gap, DEFAULT_GAP_EXACT if qq == 1 else DEFAULT_GAP_PLD)
    r_to = parse_round_to(round_to)
    run = start_run(progress.parse_seconds(max_seconds), engine0)
    probe, engine = probe_for(comp_of(Fraction(1)), comp_of, eps_g, delta_g, deadline=lambda: run.deadline)
    inputs = inputs_record(eps_g, delta_g, k=k, q=qq, sensitivity=s, **relation_record(rel, bnd))
    if delta_g == 0:
        raise InfeasibleTargetError("no sigma meets delta_g = 0: a Gaussian mechanism has delta(eps) > 0 at every eps")
    m_star = gaussian_mu2_root(eps_g, delta_g)
    if m_star is None:
        raise InfeasibleTargetError("no sigma meets the target (the Gaussian boundary is out of range)")
    # sigma for plain Gaussian steps: mu^2 = k s^2 / sigma^2 = m*  ->  sigma* = s sqrt(k / m*)
    with progress.task("calibrate sigma"):
        lo_s, hi_s = _sqrt_bounds(k * s * s / m_star[1]), _sqrt_bounds(k * s * s / m_star[0])
        if qq == 1:
            res = closed_form_pair(probe, lo_s[0], hi_s[1], False, g)
            if res.safe is None or res.fail is None:  # not expected: fall back to the search
                res = search(probe, worse_up=False, x0=hi_s[1], gap=g, deadline=run.deadline, label="calibrate sigma")
        else:
            guess = _dpsgd_sigma_guess(float(m_star[0]), float(qq), k, float(s))  # float ok: a first probe
            x0 = shortest_decimal_in(Fraction(guess) * Fraction(99, 100), Fraction(guess) * Fraction(101, 100))
            res = search(probe, worse_up=False, x0=x0, gap=g, deadline=run.deadline, label="calibrate sigma",
                         polish=False)
    comparison: tuple[tuple[str, str], ...] = ()
    if qq < 1 and rel == "add-remove":  # float ok: an approximation shown for comparison, labelled as such
        clt = _dpsgd_sigma_guess(float(m_star[0]), float(qq), k, float(s))  # float ok: an approximation shown for comparison
        comparison = (("the central-limit approximation (Dong-Roth-Su 2022, not certified)", f"sigma ~ {clt:.6g}"),)
    return finish("sigma", False, res, inputs=inputs, engine=engine, gap=g, run=run, probe=probe, round_to=r_to,
                   comparison=comparison)


def _sqrt_bounds(x: Fraction) -> tuple[Fraction, Fraction]:
    """Exact rationals lo <= sqrt(x) <= hi (a 200-bit ball)."""
    with ctx.workprec(200):
        return fraction_of_arb_endpoints(arb_of_fraction(x).sqrt())



def _dpsgd_sigma_guess(mu2: float, q: float, k: int, s: float) -> float:  # float ok: a first probe only
    """sigma from the central-limit approximation of DP-SGD (Dong, Roth and Su 2022, Thm 6):
    mu = q sqrt(k (e^{(s/sigma)^2} - 1)), solved for sigma at mu^2 = mu2 (the Gaussian boundary)."""
    t = math.log1p(mu2 / (q * q * k)) if q * q * k > 0 else 1.0  # float ok: a first probe only
    return s / math.sqrt(t) if t > 0 else 1.0  # float ok: a first probe only



def calibrate_q(sigma: ExactInput, k: ExactInput, target_eps: ExactInput, target_delta: ExactInput, *,
                sensitivity: ExactInput = 1, gap: ExactInput | None = None, round_to: ExactInput | None = None,
                max_seconds: ExactInput | None = None, relation: object = "add-remove",
                bounded: object = False) -> Calibration:
    """The largest Poisson sampling rate q such that ``k`` subsampled Gaussian steps with noise
    ``sigma`` meet the target (docs/calibration.md §2.3); q = 1 (no subsampling) is the end of the
    range, with no failing point beyond it.  ``relation`` and ``bounded`` as in
    :func:`calibrate_sigma`.

    >>> r = calibrate_q("10", 10, "1", "1e-3")    # even q = 1 (plain Gaussian steps) meets this target
    >>> r.value_str, r.fails_at, r.value_proof.how
    ('1', None, 'Gaussian closed form')
    """
    sig = parse_rational(sigma, "sigma")
    if sig < 0:
        raise InvalidParameterError(f"sigma={sigma!r} must be >= 0")
    k = parse_k(k, "k")
    eps_g, delta_g = parse_target(target_eps, target_delta)
    s = parse_positive(sensitivity, "sensitivity")
    rel, bnd = parse_relation_reading(relation, bounded)
    if sig == 0:  # no noise: a closed form
        return _noiseless_q(k, delta_g, parse_gap(gap, DEFAULT_GAP_EXACT),
                            inputs_record(eps_g, delta_g, sigma=sig, k=k, sensitivity=s, **relation_record(rel, bnd)))
    from exactdp.model.mechanisms import Gaussian, PoissonSampled

    def comp_of(x: Fraction) -> Composition:
        m: Any = Gaussian(sig, s)
        return Composition(((PoissonSampled(m, x, rel, bounded=bnd) if x < 1 else m, k),))

    g = parse_gap(gap, DEFAULT_GAP_PLD)
    r_to = parse_round_to(round_to)
    run = start_run(progress.parse_seconds(max_seconds), "pld")
    probe, _ = probe_for(comp_of(Fraction(1, 2)), comp_of, eps_g, delta_g, deadline=lambda: run.deadline)
    inputs = inputs_record(eps_g, delta_g, sigma=sig, k=k, sensitivity=s, **relation_record(rel, bnd))
    if delta_g == 0:
        raise InfeasibleTargetError("no sampling rate q > 0 meets delta_g = 0: a subsampled Gaussian mechanism has "
                                    "delta(eps) > 0 at every eps")
    with progress.task("calibrate q"):
        m_star = gaussian_mu2_root(eps_g, delta_g)
        x0f = 0.01  # float ok: a first probe
        if m_star is not None:
            x0f = math.sqrt(float(m_star[0]) / (k * math.expm1(min((float(s) / float(sig)) ** 2, 700))))  # float ok
        x0f = min(max(x0f, 1e-9), 1.0)
        x0 = shortest_decimal_in(Fraction(x0f) * Fraction(9, 10), Fraction(x0f))
        res = search(probe, worse_up=True, x0=x0, gap=g, hi_limit=Fraction(1), deadline=run.deadline,
                     label="calibrate q", polish=False)
    return finish("q", True, res, inputs=inputs, engine="pld", gap=g, run=run, probe=probe, round_to=r_to)


def calibrate_laplace_scale(k: ExactInput, target_eps: ExactInput, target_delta: ExactInput, *,
                            q: ExactInput = 1, sensitivity: ExactInput = 1, gap: ExactInput | None = None,
                            round_to: ExactInput | None = None, max_seconds: ExactInput | None = None,
                            relation: object = "add-remove", bounded: object = False) -> Calibration:
    """The smallest Laplace scale b such that ``k`` queries of L1 sensitivity ``sensitivity`` with
    Laplace(b) noise (Poisson subsampled at rate ``q`` when q < 1) meet the target, judged by the
    mechanism's own privacy loss (PLD engine; docs/calibration.md §2.3).

    ``relation`` and ``bounded`` as in :func:`calibrate_sigma`: the relation the subsampled steps are
    judged under (docs/mathematics.md §9, Theorem 9.2) and, under replace-one with q < 1,
    dp_accounting's bounded-records reading (Theorem 9.9; refused without subsampling).  Without
    subsampling the pair, and so b, is the same under both relations (it is recorded in ``inputs``).
    The generic bound (Laplace(b) is (sensitivity/b)-DP, and log(1 + q (e^{sensitivity/b} - 1))-DP
    when subsampled under add/remove, composed optimally) and basic composition are given for
    comparison.

    >>> r = calibrate_laplace_scale(10, "1", "0", sensitivity=2)   # pure DP: b = 20 is the optimum
    >>> r.value_str, r.value_proof.how.startswith("exact decision")
    ('20', True)
    >>> r = calibrate_laplace_scale(10, "1", "0", q="0.5")    # the optimum: 10 log(1 + (e^{1/b} - 1)/2) = 1
    >>> r.value_str, r.fails_at_str
    ('5.238269', '5.238265')
    """
    k = parse_k(k, "k")
    eps_g, delta_g = parse_target(target_eps, target_delta)
    qq = parse_rate(q, zero=True)
    s = parse_positive(sensitivity, "sensitivity")
    rel, bnd = parse_relation_reading(relation, bounded)
    if bnd and qq == 1:
        raise InvalidParameterError("bounded=True (dp_accounting's bounded-records reading, docs/mathematics.md §9, "
                                    "Theorem 9.9) is a reading of Poisson-subsampled Laplace steps: give q < 1")
    if qq == 0:  # nothing is ever sampled: every scale, 0 included, meets every target (eps_g >= 0)
        return _unsampled("laplace-scale", inputs_record(eps_g, delta_g, k=k, q=qq, sensitivity=s,
                                                         **relation_record(rel, bnd)))
    from exactdp.model.mechanisms import Laplace, PoissonSampled

    def comp_of(x: Fraction) -> Composition:
        m: Any = Laplace(x, s)
        return Composition(((PoissonSampled(m, qq, rel, bounded=bnd) if qq < 1 else m, k),))

    # at delta_g = 0 every probe is decided exactly by the largest loss (docs/pld.md §11.4): cheap, so a fine gap
    g = parse_gap(gap, DEFAULT_GAP_EXACT if delta_g == 0 else DEFAULT_GAP_PLD)
    r_to = parse_round_to(round_to)
    run = start_run(progress.parse_seconds(max_seconds), "pld")
    probe, _ = probe_for(comp_of(Fraction(1)), comp_of, eps_g, delta_g, deadline=lambda: run.deadline)
    inputs = inputs_record(eps_g, delta_g, k=k, q=qq if qq < 1 else None, sensitivity=s, **relation_record(rel, bnd))
    if delta_g == 0 and eps_g.is_zero():
        raise InfeasibleTargetError("no Laplace scale meets (eps_g, delta_g) = (0, 0): at every scale the largest "
                                    "privacy loss is above 0")
    comparison: list[tuple[str, str]] = []
    with progress.task("calibrate laplace-scale"):
        # a safe starting point: the generic bound, Laplace(b) being (s/b)-DP (docs/mathematics.md §5 item 8)
        # and log(1 + q (e^{s/b} - 1))-DP Poisson subsampled under add/remove (§5 item 11; the largest loss of §9's pair)
        gen = calibrate_eps(k, eps_g, delta_g, gap="1e-4")
        amplified = qq < 1 and rel == "add-remove"
        b_generic = _scale_of_eps(s, Fraction(gen.value), qq if amplified else Fraction(1)) if gen.value > 0 else None
        if b_generic is not None and (amplified or qq == 1 or not bnd):
            what = "Laplace(b) subsampled as log(1 + q (e^{sensitivity/b} - 1))-DP" if amplified \
                else "Laplace(b) as (sensitivity/b)-DP"
            comparison.append((f"the generic bound ({what}, optimal composition)",
                               f"b = {decimal_string(b_generic, 8, 'up')}"))
        e_basic = eps_g.rational_value()
        if e_basic and (amplified or qq == 1):  # not None, not 0
            b_basic = _scale_of_eps(s, e_basic / k, qq)
            text = format_fraction(b_basic) if qq == 1 else decimal_string(b_basic, 8, "up")
            comparison.append(("basic composition (b = k sensitivity / eps_g)" if qq == 1 else
                               "basic composition (each query (eps_g/k)-DP: b = sensitivity / log(1 + (e^{eps_g/k} - 1)/q))",
                               f"b = {text}"))
        x0 = b_generic * Fraction(4, 5) if b_generic is not None else Fraction(k) * s
        if qq < 1 and not amplified and b_generic is not None:
            x0 = _scale_of_eps(s, Fraction(gen.value), qq) * Fraction(4, 5)  # the add/remove bound: a first probe only
        x0 = shortest_decimal_in(x0 * Fraction(99, 100), x0)
        from exactdp.calibrate.probes import dominated_probe

        polish: Any = dominated_probe(comp_of, eps_g, delta_g, None) if qq == 1 else delta_g == 0
        res = search(probe, worse_up=False, x0=x0, gap=g, deadline=run.deadline, label="calibrate laplace-scale",
                     polish=polish)
    return finish("laplace-scale", False, res, inputs=inputs, engine="pld", gap=g, run=run, probe=probe,
                   round_to=r_to, comparison=tuple(comparison))


def _scale_of_eps(s: Fraction, eps: Fraction, q: Fraction) -> Fraction:
    """An exact rational b >= s / log(1 + (e^eps - 1)/q), the scale at which Laplace(b) of
    sensitivity s, Poisson subsampled at rate q (q = 1: none), is eps-DP under add/remove
    (docs/mathematics.md §9: the subsampled pair's largest loss is log(1 + q (e^{s/b} - 1))),
    rounded up (a larger b is more private); s / eps exactly when q = 1.

    >>> _scale_of_eps(Fraction(2), Fraction(1, 10), Fraction(1))
    Fraction(20, 1)
    """
    if q == 1:
        return s / eps
    with ctx.workprec(200):
        t = (arb_of_fraction(eps).expm1() / arb_of_fraction(q)).log1p()
        return fraction_of_arb_endpoints(arb_of_fraction(s) / t)[1]


def _unsampled(parameter: str, inputs: dict[str, Any]) -> Calibration:
    """The answer at q = 0: no record is ever sampled, so the outputs on neighbouring datasets are one
    law and delta(eps) = 0 at every eps >= 0 (docs/calibration.md §2.3); the smallest noise
    (``parameter``: ``"sigma"`` or ``"laplace-scale"``) is 0."""
    t0 = time.monotonic()
    name = "sigma" if parameter == "sigma" else "b"
    proof = Proof("meets", f"q = 0: no record is ever sampled, so both outputs are one law at every {name} >= 0",
                  "delta(eps_g)", Fraction(0), Fraction(0))
    return Calibration(parameter, "smallest", Fraction(0), None, proof, None, None, True, inputs, "exact", 0,
                       time.monotonic() - t0)


def _noiseless_delta(q: Fraction, k: int) -> tuple[Fraction, Fraction]:
    """Exact rationals enclosing 1 - (1-q)^k: delta(eps) at every eps >= 0 of k Poisson-subsampled
    steps without noise (docs/calibration.md §2.3), under either relation."""
    base = 1 - q
    if k * (base.numerator.bit_length() + base.denominator.bit_length()) <= 1 << 16:  # small: exactly
        exact = 1 - base ** k
        return exact, exact
    for prec in (128, 512, 4096):
        with ctx.workprec(prec):
            lo, hi = fraction_of_arb_endpoints(1 - arb_of_fraction(1 - q) ** k)
        if hi - lo <= hi * Fraction(1, 10**20) or prec == 4096:
            return max(lo, Fraction(0)), min(hi, Fraction(1))
    raise AssertionError("unreachable")


def _noiseless_q(k: int, delta_g: Fraction, g: Fraction, inputs: dict[str, Any]) -> Calibration:
    """The largest rate q at sigma = 0: k steps without noise on Poisson subsamples have
    delta(eps) = 1 - (1-q)^k at every eps >= 0 (docs/calibration.md §2.3), so the boundary is
    q* = 1 - (1 - delta_g)^(1/k); both ends are decided by that closed form in Arb."""
    t0 = time.monotonic()
    if delta_g == 0:
        raise InfeasibleTargetError("no sampling rate q > 0 meets delta_g = 0 without noise: a step that samples the "
                                    "record reveals it (delta(eps) = 1 - (1-q)^k > 0)")
    how = "closed form without noise: delta = 1 - (1-q)^k"

    def probe(x: Fraction) -> Outcome:
        lo, hi = _noiseless_delta(x, k)
        verdict = "meets" if hi <= delta_g else "fails" if lo > delta_g else "undecided"
        return Outcome(verdict, None, Proof(verdict, how, "delta(eps_g)", lo, hi))

    if delta_g >= 1:
        return Calibration("q", "largest", Fraction(1), None, probe(Fraction(1)).proof, None, None, True, inputs,
                           "closed-form", 1, time.monotonic() - t0)
    if k == 1:  # delta = q exactly: q = delta_g is the optimum itself
        fail = shortest_decimal_in(delta_g * (1 + g / 2), delta_g * (1 + g))
        return Calibration("q", "largest", delta_g, fail, probe(delta_g).proof, probe(fail).proof, (fail - delta_g) / delta_g,
                           False, inputs, "closed-form", 2, time.monotonic() - t0, g)
    with ctx.workprec(200):
        lo, hi = fraction_of_arb_endpoints(1 - (arb_of_fraction(1 - delta_g).log() / k).exp())
    res = closed_form_pair(probe, max(lo, Fraction(0)), hi, True, g)
    if res.safe is None or res.fail is None:  # the ends are g/6 from the root: only a tie at 4096 bits
        raise PrecisionError("the noiseless closed form could not separate the ends at 4096 bits (not expected: "
                             "they lie a sixth of the gap from the root)")
    return Calibration("q", "largest", res.safe, res.fail, res.safe_proof, res.fail_proof,  # type: ignore[arg-type]
                       abs(Fraction(res.fail) - Fraction(res.safe)) / Fraction(res.safe), False, inputs,
                       "closed-form", res.probes, time.monotonic() - t0, g)


def get_noise_multiplier(*, target_epsilon: ExactInput | float, target_delta: ExactInput | float,
                         sample_rate: ExactInput | float, steps: CountInput | None = None,
                         epochs: ExactInput | float | None = None,
                         gap: ExactInput | None = None, max_seconds: ExactInput | None = None,
                         relation: object = "add-remove", bounded: object = False, accountant: object = "rdp",
                         epsilon_tolerance: object = None) -> Calibration:
    """Opacus's ``get_noise_multiplier``, certified: the smallest noise multiplier sigma such that
    ``steps`` Poisson-subsampled Gaussian steps at ``sample_rate`` (DP-SGD) meet (target_epsilon,
    target_delta), as :func:`calibrate_sigma` (docs/calibration.md §2.3, docs/interop.md).
    Opacus accounts under add/remove (the default); ``relation="replace-one"`` (or dp_accounting's
    ``NeighboringRelation.REPLACE_ONE``) and ``bounded=True`` (dp_accounting's reading, Theorem 9.8)
    as in :func:`calibrate_sigma`.

    ``epochs`` instead of ``steps`` means ``floor(epochs / sample_rate)`` steps, as Opacus counts
    them.  Floats (``target_epsilon``, ``target_delta``, ``sample_rate``, ``epochs``), as Opacus's
    callers pass them, are read at their exact binary values (docs/contracts.md §1.1): the question
    the calling program holds.  The result's float is the certified-safe sigma rounded up (``Calibration.__float__``).
    Opacus's ``accountant`` (``"rdp"``, ``"prv"`` or ``"gdp"``) and ``epsilon_tolerance`` are taken
    so that a call written for Opacus runs unchanged; neither changes the answer, the smallest sigma
    certified to meet the target by the optimal accounting (any accountant's eps at it is an upper
    bound at least as large), with ``fails_at`` within ``gap`` of it.

    >>> r = get_noise_multiplier(target_epsilon=1, target_delta="1e-5", sample_rate=1, steps=100)
    >>> r.value_str, float(r) >= r.value  # float ok: a doctest of the float rounding
    ('37.306326', True)
    """
    # Opacus's callers pass floats: each is read at its exact binary value (docs/contracts.md §1.1)
    exact: list[Any] = [float_as_exact(x) for x in (target_epsilon, target_delta, sample_rate, epochs)]
    t_eps, t_delta, rate, n_epochs = exact
    if not isinstance(accountant, str) or accountant not in ("rdp", "prv", "gdp"):
        raise InvalidParameterError(f"accountant={accountant!r} must be one of Opacus's names 'rdp', 'prv' or 'gdp' "
                                    "(exactdp answers the optimal accounting whichever is named)")
    if epsilon_tolerance is not None and not (isinstance(epsilon_tolerance, (int, float, Fraction, str))
                                              and not isinstance(epsilon_tolerance, bool)):
        raise InvalidParameterError(f"epsilon_tolerance={epsilon_tolerance!r} must be a number (Opacus's tolerance; "
                                    "exactdp's precision is gap=)")
    q = parse_rate(rate, "sample_rate")
    if (steps is None) == (n_epochs is None):
        raise InvalidParameterError("give either steps or epochs (Opacus's get_noise_multiplier takes one of them)")
    if n_epochs is not None:
        n = math.floor(parse_positive(n_epochs, "epochs") / q)
        if n < 1:
            raise InvalidParameterError(f"epochs={epochs!r} at sample_rate={sample_rate!r} is less than one step")
    else:
        n = parse_k(steps, "steps")
    return calibrate_sigma(n, t_eps, t_delta, q=q, gap=gap, max_seconds=max_seconds, relation=relation,
                           bounded=bounded)
