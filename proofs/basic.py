"""Basic composition and the Laplace example that shows it is tight (Steinke 2022, section 2)."""

from __future__ import annotations

import sympy as sp

from .framework import Derivation, Equal, Implementation, NonNegative, enclosure_contains, exact_equals, pos

__all__ = ["basic_composition", "laplace_optimality"]


def basic_composition() -> Derivation:
    """The likelihood ratio of independent mechanisms is the product of their ratios, so it lies
    in [e^{-sum eps_j}, e^{sum eps_j}] (Dwork-Roth 2014 Thm 3.16; Steinke 2022 Thm 1)."""
    k = 3
    p = sp.symbols(f"p1:{k + 1}", positive=True)
    q = sp.symbols(f"q1:{k + 1}", positive=True)
    e = sp.symbols(f"epsilon1:{k + 1}", positive=True)
    u = sp.symbols(f"u1:{k + 1}", positive=True)
    E = sum(e)
    joint_p, joint_q = sp.Mul(*p), sp.Mul(*q)
    # a ratio r_j in (0, e^{eps_j}] is e^{eps_j}/(1+u_j), one in [e^{-eps_j}, oo) is e^{-eps_j}(1+u_j), u_j >= 0
    upper_prod = sp.Mul(*[sp.exp(ej) / (1 + uj) for ej, uj in zip(e, u)])
    lower_prod = sp.Mul(*[sp.exp(-ej) * (1 + uj) for ej, uj in zip(e, u)])

    def tie_eps() -> str | None:
        from exactdp import Composition, epsilon

        comp = Composition.heterogeneous([("0.1", 0), ("0.25", 0), ("log(3/2)", 0)])
        return enclosure_contains(epsilon(comp, 0, method="basic", digits=30),
                                  sp.Rational(1, 10) + sp.Rational(1, 4) + sp.log(sp.Rational(3, 2)))

    def tie_delta() -> str | None:
        from exactdp import Composition, delta

        # one non-zero delta_j: sum delta_j and 1 - prod(1 - delta_j) coincide (= 1/1000)
        comp = Composition.heterogeneous([("0.1", "1e-3"), ("0.2", 0), ("0.05", 0, 2)])
        return exact_equals(delta(comp, "0.4", method="basic", digits=30), sp.Rational(1, 1000))

    return Derivation(
        "basic_composition",
        "the likelihood ratio of independent M_j is the product of the ratios, within [e^{-sum eps_j}, e^{sum eps_j}]",
        "Dwork-Roth 2014 Thm 3.16; Steinke 2022 (arXiv:2210.00597) Thm 1",
        [
            Equal("independence: the joint likelihood ratio factorises (k = 3)", joint_p / joint_q,
                  sp.Mul(*[pj / qj for pj, qj in zip(p, q)])),
            NonNegative("each ratio r_j = e^{eps_j}/(1+u_j) <= e^{eps_j}: e^{sum eps_j} - prod r_j >= 0",
                        sp.exp(E) - upper_prod),
            NonNegative("each ratio r_j = e^{-eps_j}(1+u_j) >= e^{-eps_j}: prod r_j - e^{-sum eps_j} >= 0",
                        lower_prod - sp.exp(-E)),
            Implementation("exactdp basic: eps at delta_g = 0 of (0.1, 0.25, log(3/2)) is 0.35 + log(3/2)", fn=tie_eps),
            Implementation("exactdp basic: delta at eps_g = sum eps_j is the (single) delta_j = 1/1000 exactly",
                           fn=tie_delta),
        ],
    )


def laplace_optimality() -> Derivation:
    """Laplace(k/eps) on k sensitivity-1 queries: at y_j >= max f_j the ratio is exactly e^eps,
    such outputs have probability 2^{-k}, the noise variance is 2k^2/eps^2 (Steinke 2022, section 2.1)."""
    eps, s, f = pos("epsilon s f")
    k = sp.symbols("k", positive=True, integer=True)
    z = sp.symbols("z", real=True)
    b = k / eps

    def lap(t: sp.Expr) -> sp.Expr:
        return sp.exp(-sp.Abs(t) / b) / (2 * b)

    # y = f(x) + s with s >= 0, and f(x') = f(x) - 1, so y >= max(f(x), f(x'))
    y = f + s
    ratio_j = lap(y - f) / lap(y - (f - 1))

    def tie() -> str | None:
        from exactdp import Composition, epsilon

        # k = 10 mechanisms Laplace(k/eps) with eps = 1: each is (1/10)-DP; basic gives exactly 1
        comp = Composition.homogeneous("1/10", 0, 10)
        return enclosure_contains(epsilon(comp, 0, method="basic", digits=30), sp.Integer(1))

    return Derivation(
        "laplace_optimality",
        "for Laplace(k/eps) noise the likelihood ratio is exactly e^eps on y_j >= max f_j (probability 2^{-k}); variance 2k^2/eps^2",
        "Steinke 2022 (arXiv:2210.00597) section 2.1",
        [
            Equal("one coordinate, y_j - f_j(x) = s >= 0: the ratio of Laplace densities is e^{eps/k}", ratio_j,
                  sp.exp(eps / k)),
            Equal("independence: the k-fold ratio is (e^{eps/k})^k = e^eps", sp.exp(eps / k) ** k, sp.exp(eps)),
            Equal("Pr[Laplace(k/eps) >= 0] = 1/2, so all k coordinates are >= f_j(x) w.p. 2^{-k}",
                  sp.integrate(lap(z), (z, 0, sp.oo)), sp.Rational(1, 2)),
            Equal("the noise has mean 0", sp.integrate(z * lap(z), (z, -sp.oo, sp.oo)), 0),
            Equal("the noise variance is 2 k^2 / eps^2", sp.integrate(z**2 * lap(z), (z, -sp.oo, sp.oo)),
                  2 * k**2 / eps**2),
            Implementation("exactdp basic: 10 mechanisms of (1/10)-DP compose to exactly eps = 1 (tight here)", fn=tie),
        ],
    )
