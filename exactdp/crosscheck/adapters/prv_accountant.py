"""prv_accountant (Microsoft): ``PRVAccountant`` on generic and mechanism compositions.

See docs/peers/prv_accountant.md.  prv_accountant is imported only when :func:`apis` runs.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from exactdp.crosscheck.adapters.base import Api, NotApplicable, Reported
from exactdp.crosscheck.adapters.given import (
    as_given,
    exact_value,
    given_composition,
    parts_of,
    require_generic,
    require_mechanisms,
    to_float,
)
from exactdp.crosscheck.cases import Case
from exactdp.model.composition import Composition

__all__ = ["apis"]


def apis() -> list[Api]:
    """The APIs under test (imports the library)."""
    from prv_accountant import (
        ApproximateDPMechanism,
        GaussianMechanism,
        LaplaceMechanism,
        PoissonSubsampledGaussianMechanism,
        PRVAccountant,
        PureDPMechanism,
    )

    def run_prv(case: Case, prvs: list[Any], counts: list[int], at: Fraction) -> tuple[float, float, float]:
        delta_error = to_float(at) * 1e-3 if case.query == "epsilon" else 1e-10
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            acc = PRVAccountant(prvs=prvs, max_self_compositions=counts, eps_error=0.01, delta_error=delta_error)
            if case.query == "epsilon":
                return acc.compute_epsilon(to_float(at), counts)
            return acc.compute_delta(to_float(at), counts)

    def generic(case: Case) -> Reported:
        require_generic(case)
        if case.query == "epsilon" and case.at == 0:
            raise NotApplicable("PRVAccountant needs delta > 0")
        comp, at, groups = as_given(case)
        prvs = [ApproximateDPMechanism(e, d) if d > 0 else PureDPMechanism(e) for e, d, _ in groups]
        counts = [c for _, _, c in groups]
        lo, est, up = run_prv(case, prvs, counts, at)
        return Reported(up, comp, at, f"upper of (lower, estimate, upper) = ({lo!r}, {est!r}, {up!r}); eps_error=0.01")

    def mech_with(pick: int) -> Callable[[Case], Reported]:
        def run(case: Case) -> Reported:
            require_mechanisms(case)
            parts = parts_of(case, events=pick == 2)  # the upper API says which new events it cannot take
            prvs = []
            for p in parts:
                if p.kind == "gaussian":
                    prvs.append(GaussianMechanism(p.param) if p.q is None else
                                PoissonSubsampledGaussianMechanism(p.q, p.param))
                elif p.q is None:
                    prvs.append(LaplaceMechanism(1.0 / p.param))  # mu = sensitivity / scale
                else:
                    raise NotApplicable("prv_accountant has no subsampled Laplace")
            lap = [p for p in parts if p.kind == "laplace"]
            given = given_composition(parts)
            if lap:  # the library got mu = 1/b as a float: the Laplace it judged has scale 1/mu exactly
                from exactdp.model.mechanisms import Laplace

                given = Composition(tuple((Laplace(1 / exact_value(1.0 / p.param)) if p.kind == "laplace" else p.exact(),
                                           p.count) for p in parts))
            at = exact_value(to_float(case.at))
            lo, est, up = run_prv(case, prvs, [p.count for p in parts], at)
            vals = (lo, est, up)
            note = f"(lower, estimate, upper) = ({lo!r}, {est!r}, {up!r}); eps_error=0.01; " \
                   "PoissonSubsampledGaussianMechanism is the remove direction, judged under add/remove"
            return Reported(vals[pick], given, at, note, "lower" if pick == 0 else "upper")
        return run

    return [
        Api("prv_accountant", "PRVAccountant(Pure/ApproximateDPMechanism).upper", generic),
        Api("prv_accountant", "PRVAccountant(Gaussian/Laplace/PoissonSubsampledGaussianMechanism).upper",
            mech_with(2)),
        Api("prv_accountant", "PRVAccountant(Gaussian/Laplace/PoissonSubsampledGaussianMechanism).lower [lower estimate]",
            mech_with(0)),
    ]
