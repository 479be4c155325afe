"""Opacus: its RDP, PRV and Gaussian accountants, stepped as a training loop does, and ``get_noise_multiplier``.

See docs/peers/opacus.md.  Opacus (and torch) are imported only when :func:`apis` runs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from exactdp.crosscheck.adapters.base import Api, CurveApi, NotApplicable, Reported, ReportedCurve
from exactdp.crosscheck.adapters.given import (
    calibrated_claim,
    curve_direction,
    curve_parts,
    dpsgd_parameters,
    exact_value,
    given_composition,
    parts_of,
    require_mechanisms,
    to_float,
)
from exactdp.crosscheck.cases import Case

__all__ = ["apis", "curves"]


def apis() -> list[Api]:
    """The APIs under test (imports the library)."""
    from opacus.accountants import GaussianAccountant, PRVAccountant, RDPAccountant
    from opacus.accountants.utils import get_noise_multiplier

    def accountant_with(cls: Any, label: str) -> Callable[[Case], Reported]:
        def run(case: Case) -> Reported:
            require_mechanisms(case)
            sigma, q, steps = dpsgd_parameters(case)
            if case.query != "epsilon" or case.at == 0:
                raise NotApplicable("Opacus accountants answer get_epsilon(delta > 0)")
            acc = cls()
            for _ in range(steps):  # as a training loop does: one step() per optimizer step
                acc.step(noise_multiplier=sigma, sample_rate=q)
            at = exact_value(to_float(case.at))
            return Reported(acc.get_epsilon(delta=to_float(at)), given_composition(parts_of(case)), at,
                            f"{label}: step(noise_multiplier, sample_rate) x {steps}, get_epsilon(delta); add/remove")
        return run

    def noise_with(kind: str) -> Callable[[Case], Reported]:
        def run(case: Case) -> Reported:
            if not case.is_calibration:
                raise NotApplicable("calibration cases only")
            _, q, steps = dpsgd_parameters(case)
            assert case.target is not None
            sigma = get_noise_multiplier(target_epsilon=to_float(case.target), target_delta=to_float(case.at), sample_rate=q,
                                         steps=steps, accountant=kind)
            return calibrated_claim(sigma, q, steps, case, f"get_noise_multiplier(accountant={kind!r})")
        return run

    return [
        Api("opacus", "RDPAccountant.get_epsilon", accountant_with(RDPAccountant, "RDPAccountant")),
        Api("opacus", "PRVAccountant.get_epsilon", accountant_with(PRVAccountant, "PRVAccountant")),
        Api("opacus", "GaussianAccountant.get_epsilon", accountant_with(GaussianAccountant, "GaussianAccountant")),
        Api("opacus", "get_noise_multiplier(accountant='rdp')", noise_with("rdp")),
        Api("opacus", "get_noise_multiplier(accountant='prv')", noise_with("prv")),
        Api("opacus", "get_noise_multiplier(accountant='gdp')", noise_with("gdp")),
    ]


def curves() -> list[CurveApi]:
    """The RDP curve of ``opacus.accountants.analysis.rdp.compute_rdp`` at ``RDPAccountant.DEFAULT_ALPHAS``
    and its eps from ``get_privacy_spent`` (imports the library)."""
    from opacus.accountants import RDPAccountant
    from opacus.accountants.analysis import rdp as analysis

    def run(case: Case) -> ReportedCurve:
        parts = curve_parts(case)
        sigma, q, steps = dpsgd_parameters(case)
        orders = list(RDPAccountant.DEFAULT_ALPHAS)
        rdp = analysis.compute_rdp(q=q, noise_multiplier=sigma, steps=steps, orders=orders)
        eps, at = None, None
        if case.query == "epsilon" and case.at != 0:
            at = exact_value(to_float(case.at))
            eps = analysis.get_privacy_spent(orders=orders, rdp=rdp, delta=to_float(at))[0]
        return ReportedCurve(tuple(orders), tuple(rdp), given_composition(parts), curve_direction(parts), eps, at,
                             "analysis.rdp.compute_rdp(q, noise_multiplier, steps, DEFAULT_ALPHAS); get_privacy_spent")

    return [CurveApi("opacus", "accountants.analysis.rdp.compute_rdp", run)]
