"""Symbolic derivations of the facts exactdp relies on, checked step by step with sympy.

Each derivation is a named sequence of steps (equalities sympy reduces to 0, inequalities with a
certificate) that ends by evaluating exactdp's own functions at exact points, so a wrong formula
in the package fails a proof.  ``python -m proofs`` (or ``exactdp proofs``) runs them all; see
``proofs/README.md``.

Importing this package does not import sympy: the derivation modules are loaded on first use
(``DERIVATIONS``, ``run``, ``run_all``, ``derivation_names``), so a missing sympy is reported by the
command line as one line naming the extra to install, not as a traceback.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .framework import Derivation, Outcome

__all__ = ["DERIVATIONS", "derivation_names", "run_all", "run", "Derivation", "Outcome",
           "SYMPY_EXTRA", "sympy_missing"]

#: What to install when sympy is missing.
SYMPY_EXTRA = "pip install 'exactdp[proofs]'"


def sympy_missing() -> str | None:
    """None when sympy can be imported, else the reason (the ImportError's message)."""
    try:
        import sympy  # noqa: F401
    except ImportError as e:
        return str(e) or "sympy cannot be imported"
    return None


def _registry() -> dict[str, Callable[[], Derivation]]:
    from . import advanced, basic, mechanisms, optimal, pld, properties

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
        properties.replace_one_sampling,
        properties.truncated_sampling,
        properties.special_randomized_response,
        properties.replacement_sampling,
        pld.pld_connect_the_dots,
        pld.pld_binning_and_truncation,
        pld.pld_fixed_point,
        pld.pld_fixed_off_lattice,
        advanced.asoodeh_two_point,
        properties.gdp_gaussian_shift,
        properties.fixed_batch_attained,
    ]
    return {b.__name__: b for b in builders}


_REGISTRY: dict[str, Callable[[], Derivation]] | None = None


def _derivations() -> dict[str, Callable[[], Derivation]]:
    global _REGISTRY
    if _REGISTRY is None:
        _REGISTRY = _registry()
    return _REGISTRY


def __getattr__(name: str) -> Any:
    # PEP 562: the registry and the framework classes are loaded (with sympy) on first access
    if name == "DERIVATIONS":
        return _derivations()
    if name in ("Derivation", "Outcome"):
        from . import framework

        return getattr(framework, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def derivation_names() -> list[str]:
    return list(_derivations())


def run(name: str) -> Outcome:
    """Run one derivation by name."""
    from .framework import run_derivation

    return run_derivation(_derivations()[name])


def run_all(names: list[str] | None = None) -> list[Outcome]:
    """Run the named derivations (all by default), in registry order."""
    return [run(n) for n in (names or derivation_names())]
