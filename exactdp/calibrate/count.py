"""Calibrating a count: the largest number k of runs of a mechanism that meets a target, exact
(k is proved to meet it and k + 1 to miss it; docs/calibration.md §2.2).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

from exactdp.calibrate.arguments import inputs_record, parse_base, parse_target, with_base
from exactdp.calibrate.certsearch import InfeasibleTargetError, integer_search
from exactdp.calibrate.driver import approx_rational, finish, gaussian_mu2_root, start_run
from exactdp.calibrate.probes import dominating_generic, probe_for
from exactdp.calibrate.result import Calibration
from exactdp.core import progress
from exactdp.core.errors import PrecisionError
from exactdp.core.numbers import ExactInput, ExactReal
from exactdp.model.composition import Composition, CompositionInput
from exactdp.model.generic import Mechanism
from exactdp.model.inputs import MechanismInput, mechanism_text, single_mechanism
from exactdp.model.mechanisms import Gaussian, PoissonSampled

__all__ = ["calibrate_k"]


def calibrate_k(mechanism: MechanismInput, target_eps: ExactInput, target_delta: ExactInput, *,
                base: CompositionInput | None = None, max_seconds: ExactInput | None = None) -> Calibration:
    """The largest number k of runs of ``mechanism`` (after ``base``, if given) that meets the target:
    k is proved to meet it and k + 1 to miss it (docs/calibration.md §2.2).

    ``mechanism``: a mechanism value, a spec string (``"gaussian:sigma=1,q=0.01"``,
    ``"laplace:scale=10"``, ``"0.1,1e-6"`` for a generic (0.1, 1e-6)-DP one) or an (eps, delta) pair.

    >>> r = calibrate_k("0.1,1e-6", "1", "1e-5")   # here the deltas bind: 11 x 1e-6 > 1e-5
    >>> r.value, r.fails_at, r.exact
    (10, 11, True)
    """
    mech = single_mechanism(mechanism)
    eps_g, delta_g = parse_target(target_eps, target_delta)
    b = parse_base(base)

    def comp_of(x: int) -> Composition:
        return with_base(b, ((mech, int(x)),))

    sample = comp_of(1)
    from exactdp.engines.gaussian import gaussian_mu2

    engine0 = "exact" if sample.is_generic else ("gaussian-closed-form" if gaussian_mu2(sample) is not None else "pld")
    run = start_run(progress.parse_seconds(max_seconds), engine0)
    probe, engine = probe_for(sample, comp_of, eps_g, delta_g, deadline=lambda: run.deadline)
    inputs = inputs_record(eps_g, delta_g, mechanism=mechanism_text(mech), after=str(b) if b is not None else None)
    with progress.task("calibrate k"):
        x0 = 1
        if engine == "gaussian-closed-form":
            assert isinstance(mech, Gaussian)  # the closed form answers plain Gaussian mechanisms only
            mu2_base = gaussian_mu2(b) if b is not None else Fraction(0)
            m_star = gaussian_mu2_root(eps_g, delta_g)
            if m_star is not None and mu2_base is not None:
                per = mech.mu2
                x0 = max(1, int((m_star[0] - mu2_base) / per))
        elif engine == "exact":
            assert isinstance(mech, Mechanism)  # exact decisions answer generic (eps, delta) mechanisms only
            e = mech.eps.rational_value()
            if e is not None and e > 0 and eps_g.sign() > 0:
                x0 = max(1, int(approx_rational(eps_g) / e))
        else:
            x0 = _k_guess(mech, eps_g, delta_g, b)
        res = integer_search(probe, x0=x0, deadline=run.deadline)
    return finish("k", True, res, inputs=inputs, engine=engine, gap=None, run=run, integer=True)


def _k_guess(mech: Any, eps_g: ExactReal, delta_g: Fraction, base: Composition | None) -> int:
    """A first count to probe for a PLD mechanism (chooses a probe only): for a subsampled Gaussian
    the central-limit approximation (Dong, Roth and Su 2022), for a pure-DP mechanism (Laplace,
    randomized response) the exact count of its dominating generic mechanism (certified safe, so
    the search only goes up), else 1."""
    try:
        if isinstance(mech, PoissonSampled) and isinstance(mech.mechanism, Gaussian) and base is None:
            m = gaussian_mu2_root(eps_g, delta_g, digits=6)
            if m is None:
                return 1
            mu2 = float(mech.mechanism.mu2)  # float ok: a first probe
            t = float(mech.q) ** 2 * math.expm1(min(mu2, 700.0))  # float ok
            return max(1, min(int(float(m[0]) / t), 10**12)) if t > 0 else 1  # float ok
        g = dominating_generic(Composition(((mech, 1),)))
        if g is not None and base is None:
            gm = g.groups[0][0]
            return calibrate_k(gm, eps_g, delta_g).value  # type: ignore[return-value]
    except (InfeasibleTargetError, PrecisionError, OverflowError):
        pass
    return 1
