"""Symbolic derivations of the facts exactdp relies on, checked step by step with sympy.

Each derivation is a named sequence of steps (equalities sympy reduces to 0, inequalities with a
certificate) that ends by evaluating exactdp's own functions at exact points, so a wrong formula
in the package fails a proof.  ``python -m proofs`` runs them all; see ``proofs/README.md``.

sympy is imported here, never by ``import exactdp``.
"""

from __future__ import annotations

from collections.abc import Callable

from .framework import Derivation, Outcome, run_derivation

__all__ = ["DERIVATIONS", "derivation_names", "run_all", "run", "Derivation", "Outcome"]


def _registry() -> dict[str, Callable[[], Derivation]]:
    from . import advanced, basic, mechanisms, optimal, properties

    builders = [
        basic.basic_composition,
        basic.laplace_optimality,
        advanced.drv10_algebra,
        advanced.drv10_mean_term,
        advanced.steinke_zcdp,
        advanced.steinke_rho_footnote,
        advanced.zcdp_conversion,
        optimal.kov15_hockey_stick,
        optimal.kov15_mean_loss,
        optimal.mv_reduces_to_kov15,
        optimal.mv_poster_erratum,
        mechanisms.randomized_response,
        mechanisms.laplace_mechanism,
        mechanisms.laplace_pld,
        mechanisms.gaussian_privacy_loss,
        properties.group_privacy,
        properties.post_processing,
        properties.poisson_subsampling,
    ]
    return {b.__name__: b for b in builders}


DERIVATIONS: dict[str, Callable[[], Derivation]] = _registry()


def derivation_names() -> list[str]:
    return list(DERIVATIONS)


def run(name: str) -> Outcome:
    """Run one derivation by name."""
    return run_derivation(DERIVATIONS[name])


def run_all(names: list[str] | None = None) -> list[Outcome]:
    """Run the named derivations (all by default), in registry order."""
    return [run(n) for n in (names or derivation_names())]
