"""The registry of composition methods: every method answers in the same terms.

``delta`` is the smallest *total* delta the method certifies at eps_g; ``epsilon`` is the eps the
method certifies at the *total* delta_g (``+inf`` exactly when it certifies none), so methods
compare side by side (docs/contracts.md §2).  Implementations are imported lazily.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from exactdp.api.rdp import parse_order
from exactdp.core import progress
from exactdp.core.enclosure import Enclosure
from exactdp.core.errors import InvalidParameterError
from exactdp.core.numbers import (
    DEFAULT_DIGITS,
    CountInput,
    ExactInput,
    ExactReal,
    parse_delta,
    parse_digits,
    parse_eps,
    parse_rational,
)
from exactdp.model.composition import Composition, CompositionInput

__all__ = ["METHODS", "MethodSpec", "delta", "epsilon", "get_method", "method_names", "parse_orders"]


@dataclass(frozen=True)
class MethodSpec:
    """A method: where its two directions live, and a one-line description for ``--help``."""

    name: str
    module: str
    delta_attr: str | None
    epsilon_attr: str | None
    summary: str
    options: tuple[str, ...] = ()

    def _load(self, attr: str | None, direction: str) -> Callable[..., Enclosure]:
        if attr is None:
            raise InvalidParameterError(f"method={self.name!r} does not answer the {direction} query")
        fn: Callable[..., Enclosure] = getattr(importlib.import_module(self.module), attr)
        return fn

    def delta(self, comp: Composition, eps_g: ExactReal, *, digits: int, **options: Any) -> Enclosure:
        # a delta is a probability: every composition is (eps_g, 1)-DP, so [0, 1] may be intersected
        enc = self._load(self.delta_attr, "delta")(comp, eps_g, digits=digits, **options)
        return enc.clamped(Fraction(0), Fraction(1))

    def epsilon(self, comp: Composition, delta_g: Fraction, *, digits: int, **options: Any) -> Enclosure:
        return self._load(self.epsilon_attr, "epsilon")(comp, delta_g, digits=digits, **options)


_B = "exactdp.engines.bounds."
_R = "exactdp.engines.rdp_convert"
METHODS: dict[str, MethodSpec] = {
    m.name: m
    for m in [
        MethodSpec("optimal", "exactdp.api.optimal", "optimal_delta", "optimal_epsilon",
                   "the exact optimum (KOV15 Thm 3.3 for k equal mechanisms, Murtagh-Vadhan Thm 1.5 otherwise)"),
        MethodSpec("basic", _B + "basic", "basic_delta", "basic_epsilon",
                   "basic composition (sum eps_i, sum delta_i), Dwork-Roth Thm 3.16"),
        MethodSpec("drv10", _B + "advanced", "drv10_delta", "drv10_epsilon",
                   "advanced composition, Dwork-Rothblum-Vadhan 2010 Thm III.3"),
        MethodSpec("kov15-3.4", _B + "kov15", "kov15_34_delta", "kov15_34_epsilon",
                   "KOV15 Thm 3.4 closed form (tanh form, ICML)"),
        MethodSpec("kov15-3.4-2013", _B + "kov15", "kov15_34_2013_delta", "kov15_34_2013_epsilon",
                   "KOV15 Thm 3.4, early arXiv form with k eps^2 (stated for eps <= 0.9)"),
        MethodSpec("kov15-3.5", _B + "kov15", "kov15_35_delta", "kov15_35_epsilon",
                   "KOV15 Thm 3.5 closed form for heterogeneous mechanisms"),
        MethodSpec("steinke", _B + "advanced", "steinke_delta", "steinke_epsilon",
                   "Steinke's advanced composition (1/2 sum eps^2 + sqrt(2 log(1/delta) sum eps^2))"),
        MethodSpec("zcdp", _B + "advanced", "zcdp_delta", "zcdp_epsilon",
                   "pure DP -> zCDP (rho = eps tanh(eps/2)), Gaussians rho = mu^2/2, rho adds, then rho + 2 sqrt(rho log(1/delta))"),
        MethodSpec("zcdp-tight", _B + "zcdp_tight", "zcdp_tight_delta", "zcdp_tight_epsilon",
                   "as zcdp, with the Canonne-Kamath-Steinke 2020 conversion"),
        MethodSpec("mv-approx", "exactdp.engines.approx", None, "mv_approx_epsilon",
                   "the Murtagh-Vadhan Thm 1.7 approximation algorithm (needs --eta)", ("eta",)),
        MethodSpec("rdp-mironov", _R, "rdp_mironov_delta", "rdp_mironov_epsilon",
                   "RDP -> (eps, delta), Mironov 2017 Prop. 3, best of --orders (docs/rdp.md §3)", ("orders",)),
        MethodSpec("rdp-cks", _R, "rdp_cks_delta", "rdp_cks_epsilon",
                   "RDP -> (eps, delta), Canonne-Kamath-Steinke 2020 Prop. 12, best of --orders", ("orders",)),
        MethodSpec("rdp-bbghs", _R, "rdp_bbghs_delta", "rdp_bbghs_epsilon",
                   "RDP -> (eps, delta), Balle et al. 2020 Thm 21 (dp_accounting's), best of --orders", ("orders",)),
        MethodSpec("rdp-asoodeh", _R, "rdp_asoodeh_delta", "rdp_asoodeh_epsilon",
                   "RDP -> (eps, delta), the optimal conversion of one order (Asoodeh et al. 2021), certified, best of --orders", ("orders",)),
    ]
}


def method_names() -> list[str]:
    return list(METHODS)


def get_method(name: str) -> MethodSpec:
    if not isinstance(name, str) or name not in METHODS:
        raise InvalidParameterError(f"method={name!r} must be one of {', '.join(METHODS)}")
    return METHODS[name]


def _options(spec: MethodSpec, options: dict[str, Any]) -> dict[str, Any]:
    """The method's options, each known to it and parsed exactly (eta: a rational > 0; orders: a
    list of Rényi orders, optional: None takes the method's default orders)."""
    for name, value in options.items():
        if name not in spec.options:
            allowed = f"the options {', '.join(spec.options)}" if spec.options else "no options"
            raise InvalidParameterError(f"{name}={value!r}: method={spec.name!r} takes {allowed}")
    out: dict[str, Any] = {}
    for name in spec.options:
        if name == "orders":
            if options.get(name) is not None:
                out[name] = parse_orders(options[name])
            continue
        if options.get(name) is None:
            raise InvalidParameterError(f"{name}=None: method={spec.name!r} needs {name} (for example 0.01)")
        v = parse_rational(options[name], name)
        if v <= 0:
            raise InvalidParameterError(f"{name}={options[name]!r} must satisfy {name} > 0")
        out[name] = v
    return out


def parse_orders(orders: object) -> list[Fraction]:
    """The ``orders`` option of the RDP conversions: a non-empty list of Rényi orders (each > 1).

    >>> parse_orders(["2", 3, "3.5"])
    [Fraction(2, 1), Fraction(3, 1), Fraction(7, 2)]
    """
    if isinstance(orders, (str, bytes)) or not isinstance(orders, (list, tuple)) or not orders:
        raise InvalidParameterError(f"orders={orders!r} must be a non-empty list of orders > 1, e.g. [2, 3.5, 64]")
    return [parse_order(a) for a in orders]


def delta(comp: CompositionInput, eps_g: ExactInput, *, method: str = "optimal",
          digits: CountInput = DEFAULT_DIGITS, max_seconds: ExactInput | float | None = None,
          **options: object) -> Enclosure:
    """The smallest total delta that ``method`` certifies for ``comp`` at ``eps_g``.

    ``comp`` is anything :meth:`Composition.of` accepts; ``max_seconds`` bounds the time as
    ``--max-seconds`` does (:func:`exactdp.core.progress.budgeted`).

    >>> print(delta(("0.1", 0, 30), "1", method="basic", digits=10))
    1
    """
    spec = get_method(method)
    c = Composition.of(comp)
    x, d, opts = parse_eps(eps_g, "eps_g"), parse_digits(digits), _options(spec, options)
    with progress.budgeted("delta", max_seconds):
        return spec.delta(c, x, digits=d, **opts)


def epsilon(comp: CompositionInput, delta_g: ExactInput, *, method: str = "optimal",
            digits: CountInput = DEFAULT_DIGITS, max_seconds: ExactInput | float | None = None,
            **options: object) -> Enclosure:
    """The eps that ``method`` certifies for ``comp`` at total ``delta_g`` (+inf when none).

    ``comp`` is anything :meth:`Composition.of` accepts; ``max_seconds`` bounds the time as
    ``--max-seconds`` does (:func:`exactdp.core.progress.budgeted`).

    >>> print(epsilon(("0.1", 0, 30), "1e-3", method="basic", digits=10))
    3
    """
    spec = get_method(method)
    c = Composition.of(comp)
    d_g, d, opts = parse_delta(delta_g, "delta_g"), parse_digits(digits), _options(spec, options)
    with progress.budgeted("epsilon", max_seconds):
        return spec.epsilon(c, d_g, digits=d, **opts)


def method_options(method: str, eta: object, orders: object = None) -> dict[str, Any]:
    """The options of ``method`` from the command-line and batch form (``--eta`` / ``"eta"``,
    ``--orders`` / ``"orders"``): ``{"eta": eta}`` (a rational > 0) for a method that needs it,
    ``{"orders": [...]}`` for an RDP conversion given orders, else ``{}`` (an option the method does
    not take is refused).

    >>> method_options("mv-approx", "0.01")
    {'eta': Fraction(1, 100)}
    >>> method_options("rdp-cks", None, ["2", "8"])
    {'orders': [Fraction(2, 1), Fraction(8, 1)]}
    """
    spec = get_method(method)
    out: dict[str, Any] = {}
    if "eta" in spec.options:
        if eta is None:
            raise InvalidParameterError(f"eta=None: method={method!r} needs --eta (for example 0.01)")
        e = parse_rational(eta, "eta")
        if e <= 0:
            raise InvalidParameterError(f"eta={eta!r} must satisfy eta > 0")
        out["eta"] = e
    elif eta is not None:
        raise InvalidParameterError(f"eta={eta!r} is only for method 'mv-approx', not {method!r}")
    if orders is not None:
        if "orders" not in spec.options:
            takers = ", ".join(n for n, m in METHODS.items() if "orders" in m.options)
            raise InvalidParameterError(f"orders={orders!r} is only for the RDP conversions ({takers}), not {method!r}")
        out["orders"] = parse_orders(orders)
    return out
