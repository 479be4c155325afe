"""Advanced composition: DRV10, Steinke's zCDP route, and the footnote identity for rho."""

from __future__ import annotations

import sympy as sp

from .framework import (
    ByDerivative,
    Derivation,
    Equal,
    Implementation,
    NonNegative,
    SumOfSquares,
    enclosure_contains,
    pos,
)
from .optimal import _unevaluated

__all__ = ["drv10_algebra", "drv10_mean_term", "steinke_zcdp", "steinke_rho_footnote", "zcdp_conversion",
           "asoodeh_two_point"]

R = sp.Rational


def drv10_value(eps: sp.Expr, k: int, delta_prime: sp.Expr) -> sp.Expr:
    """DRV10 Thm III.3: sqrt(2k log(1/delta')) eps + k eps (e^eps - 1)."""
    return sp.sqrt(2 * k * sp.log(1 / delta_prime)) * eps + k * eps * (sp.exp(eps) - 1)


def drv10_algebra() -> Derivation:
    """DRV10 Thm III.3: Azuma at t = eps sqrt(2k log(1/delta')) gives tail delta', and the delta
    direction delta' = exp(-(eps_g - k eps(e^eps-1))^2/(2k eps^2)) is its exact inverse."""
    eps, L, mu, w = pos("epsilon L mu w")
    k = sp.symbols("k", positive=True, integer=True)
    t = eps * sp.sqrt(2 * k * L)
    azuma = lambda tt: sp.exp(-tt**2 / (2 * k * eps**2))  # noqa: E731
    eps_g = k * mu + w  # an eps_g above the mean term k mu

    def tie_eps_pure() -> str | None:
        from exactdp import Composition, epsilon

        got = epsilon(Composition.homogeneous("0.1", 0, 30), "1e-3", method="drv10", digits=30)
        return enclosure_contains(got, drv10_value(R(1, 10), 30, R(1, 1000)))

    def tie_eps_approx() -> str | None:
        from exactdp import Composition, epsilon

        # delta_total = k delta + delta': delta' = 1e-3 - 30 * 1e-5 = 7e-4
        got = epsilon(Composition.homogeneous("0.1", "1e-5", 30), "1e-3", method="drv10", digits=30)
        return enclosure_contains(got, drv10_value(R(1, 10), 30, R(7, 10000)))

    def tie_delta() -> str | None:
        from exactdp import Composition, delta

        e, kk = R(1, 10), 30
        mean = kk * e * (sp.exp(e) - 1)
        want = kk * R(1, 100000) + sp.exp(-(R(5, 2) - mean) ** 2 / (2 * kk * e**2))
        got = delta(Composition.homogeneous("0.1", "1e-5", 30), "2.5", method="drv10", digits=30)
        return enclosure_contains(got, want)

    return Derivation(
        "drv10_algebra",
        "DRV10: eps' = sqrt(2k log(1/delta')) eps + k eps (e^eps - 1) at delta_total = k delta + delta', and its inverse",
        "Dwork-Rothblum-Vadhan FOCS 2010 Thm III.3; Dwork-Roth 2014 Thm 3.20",
        [
            Equal("Azuma's tail exp(-t^2/(2k eps^2)) at t = eps sqrt(2k L), L = log(1/delta'), is delta' = e^{-L}",
                  _unevaluated(lambda: azuma(t)), sp.exp(-L)),
            Equal("the delta direction inverts the eps direction: for eps_g = k mu + w (w > 0), "
                  "eps sqrt(2k log(1/delta'(eps_g))) + k mu = eps_g",
                  eps * sp.sqrt(2 * k * (-sp.log(azuma(eps_g - k * mu)))) + k * mu, eps_g),
            Equal("docs/mathematics.md §6: at eps = 0.1, k = 30, delta' = 1e-3 the formula is 2.3513548815514764138",
                  sp.floor(10**19 * drv10_value(R(1, 10), 30, R(1, 1000)) + R(1, 2)), 23513548815514764138),
            Implementation("exactdp drv10: eps of 30 x 0.1-DP at delta_g = 1e-3 (docs/mathematics.md §6: 2.35135488155...)",
                           fn=tie_eps_pure),
            Implementation("exactdp drv10: eps of 30 x (0.1, 1e-5) at delta_g = 1e-3 (delta' = 7e-4)", fn=tie_eps_approx),
            Implementation("exactdp drv10: delta of 30 x (0.1, 1e-5) at eps_g = 2.5 is 30e-5 + exp(-(2.5 - 3(e^0.1-1))^2/0.6)",
                           fn=tie_delta),
        ],
    )


def drv10_mean_term() -> Derivation:
    """The privacy loss of an eps-DP pair has mean eps tanh(eps/2) <= eps (e^eps - 1), the DRV10
    mean term (KOV15 section 3.3; DRV10 Lemma III.2)."""
    eps, u, v = pos("epsilon u v")
    x = sp.exp(eps)
    X = sp.symbols("x", positive=True)
    p_plus, p_minus = x / (1 + x), 1 / (1 + x)

    def tie() -> str | None:
        from exactdp import Composition, epsilon

        comp = Composition.homogeneous("0.1", 0, 30)
        drv = epsilon(comp, "1e-3", method="drv10", digits=30)
        kov = epsilon(comp, "1e-3", method="kov15-3.4", digits=30)
        # kov15-3.4 <= k eps tanh(eps/2) + eps sqrt(2k log(1/delta)); DRV10 has the same sqrt term
        gap = 30 * R(1, 10) * (sp.exp(R(1, 10)) - 1 - sp.tanh(R(1, 20)))
        gq = sp.Rational(sp.N(gap, 40)) * (1 - R(1, 10**30))
        if not drv.lower - kov.upper >= gq:
            return f"drv10 - kov15-3.4 = {float(drv.lower - kov.upper)} < k eps (e^eps - 1 - tanh(eps/2)) = {sp.N(gap, 10)}"  # float ok: message
        return None

    return Derivation(
        "drv10_mean_term",
        "the mean privacy loss eps tanh(eps/2) of an eps-DP pair is at most DRV10's eps (e^eps - 1)",
        "DRV10 Lemma III.2 / Dwork-Roth 2014 Thm 3.20 proof; KOV15 (ICML 2015) section 3.3",
        [
            Equal("the loss is +eps w.p. e^eps/(1+e^eps), -eps w.p. 1/(1+e^eps): mean eps tanh(eps/2)",
                  eps * p_plus - eps * p_minus, eps * sp.tanh(eps / 2)),
            ByDerivative("e^eps - 1 >= 0 for eps >= 0, so x = e^eps = 1 + u with u >= 0", sp.exp(eps) - 1, eps, 0,
                         NonNegative("(e^eps - 1)' = e^eps > 0", sp.exp(eps))),
            NonNegative("with x = e^eps = 1 + u: eps (x - 1) - eps (x - 1)/(x + 1) >= 0",
                        eps * (X - 1) - eps * (X - 1) / (X + 1), {X: 1 + u}),
            Equal("the ratio of the two mean terms is e^eps + 1 (>= 2)",
                  eps * (x - 1) / (eps * sp.tanh(eps / 2)), x + 1),
            Implementation("exactdp: drv10 - kov15-3.4 >= k eps (e^eps - 1 - tanh(eps/2)) at 30 x 0.1-DP, delta_g = 1e-3",
                           fn=tie),
        ],
    )


def steinke_zcdp() -> Derivation:
    """Steinke's advanced composition is eps^2/2-zCDP composition plus the conversion
    rho + 2 sqrt(rho log(1/delta)); and eps-DP gives rho = eps tanh(eps/2) <= eps^2/2."""
    S, L, eps, v, a = pos("S L epsilon v alpha")
    x = sp.exp(eps)
    rho = S / 2  # sum_j eps_j^2 / 2, rho adds under composition
    # Renyi divergence of order alpha: sum P^a Q^(1-a); for a product pair it factorises (exponents add)
    P = [x / (1 + x), 1 / (1 + x)]
    Q = [1 / (1 + x), x / (1 + x)]
    one = sum(p**a * q ** (1 - a) for p, q in zip(P, Q))
    two = sum(P[i] ** a * P[j] ** a * Q[i] ** (1 - a) * Q[j] ** (1 - a) for i in range(2) for j in range(2))

    def tie_steinke() -> str | None:
        from exactdp import Composition, epsilon

        got = epsilon(Composition.homogeneous("0.1", 0, 30), "1e-3", method="steinke", digits=30)
        Sv, Lv = 30 * R(1, 100), sp.log(1000)
        return enclosure_contains(got, Sv / 2 + sp.sqrt(2 * Lv * Sv))

    def tie_steinke_het() -> str | None:
        from exactdp import Composition, epsilon

        comp = Composition.heterogeneous([("0.1", "1e-5", 10), ("0.2", 0, 5)])
        got = epsilon(comp, "1e-3", method="steinke", digits=30)
        Sv, Lv = 10 * R(1, 100) + 5 * R(4, 100), sp.log(1 / (R(1, 1000) - 10 * R(1, 100000)))
        return enclosure_contains(got, Sv / 2 + sp.sqrt(2 * Lv * Sv))

    def tie_zcdp() -> str | None:
        from exactdp import Composition, epsilon

        got = epsilon(Composition.homogeneous("0.1", 0, 30), "1e-3", method="zcdp", digits=30)
        r = 30 * R(1, 10) * sp.tanh(R(1, 20))
        return enclosure_contains(got, r + 2 * sp.sqrt(r * sp.log(1000)))

    return Derivation(
        "steinke_zcdp",
        "1/2 sum eps_j^2 + sqrt(2 log(1/delta) sum eps_j^2) is (sum eps_j^2/2)-zCDP converted by rho + 2 sqrt(rho log(1/delta))",
        "Steinke 2022 (arXiv:2210.00597); Bun-Steinke 2016 Props 1.3, 1.4, Lemma 2.3",
        [
            Equal("the conversion rho + 2 sqrt(rho L) at rho = S/2 (S = sum eps_j^2) is S/2 + sqrt(2 L S)",
                  rho + 2 * sp.sqrt(rho * L), S / 2 + sp.sqrt(2 * L * S)),
            Equal("Renyi divergences add: the order-alpha moment of a product pair is the product of the moments",
                  two, one**2),
            ByDerivative("tanh(v) <= v for v >= 0", v - sp.tanh(v), v, 0,
                         SumOfSquares("(v - tanh v)' = tanh(v)^2", sp.tanh(v) ** 2, [(1, sp.tanh(v))])),
            Equal("eps^2/2 - eps tanh(eps/2) = 2 v (v - tanh v) at v = eps/2, hence rho = eps tanh(eps/2) <= eps^2/2",
                  eps**2 / 2 - eps * sp.tanh(eps / 2), (2 * v * (v - sp.tanh(v))).subs(v, eps / 2)),
            Equal("docs/mathematics.md §6: S = 30 * 0.01, L = log(1000) gives 2.1858421273245335394",
                  sp.floor(10**19 * (R(3, 10) / 2 + sp.sqrt(2 * sp.log(1000) * R(3, 10))) + R(1, 2)),
                  21858421273245335394),
            Implementation("exactdp steinke: 30 x 0.1-DP at delta = 1e-3 gives 0.15 + sqrt(0.6 log 1000) (docs/mathematics.md §6: 2.18584...)",
                           fn=tie_steinke),
            Implementation("exactdp steinke: 10 x (0.1, 1e-5) + 5 x 0.2 at delta_total 1e-3: delta = 1e-3 - 1e-4",
                           fn=tie_steinke_het),
            Implementation("exactdp zcdp: rho = 30 * 0.1 tanh(0.05) adds, then rho + 2 sqrt(rho log 1000)", fn=tie_zcdp),
        ],
    )


def steinke_rho_footnote() -> Derivation:
    """rho = eps^2/(4L + 4eps) gives (eps - rho)^2 - 4 rho L = eps^3 (8L + 9eps)/(16 (L + eps)^2) >= 0,
    so rho + sqrt(4 rho L) <= eps (Steinke 2022 footnote 2)."""
    eps, L = pos("epsilon L")
    rho = eps**2 / (4 * L + 4 * eps)
    rhs = eps**3 * (8 * L + 9 * eps) / (16 * (L + eps) ** 2)

    def tie() -> str | None:
        from exactdp import Composition, epsilon

        # eps = 1, delta = 1e-6: rho = 1/(4 log(1e6) + 4); k = 100 queries at eps_j = 0.0183 <= sqrt(2 rho/k)
        ej, kk = R(183, 10000), 100
        rho1 = 1 / (4 * sp.log(10**6) + 4)
        if not kk * ej**2 <= 2 * rho1:
            return "test point: k eps_j^2 must be <= 2 rho"
        got = epsilon(Composition.homogeneous("0.0183", 0, kk), "1e-6", method="steinke", digits=30)
        r = kk * ej**2 / 2
        why = enclosure_contains(got, r + sp.sqrt(4 * r * sp.log(10**6)))
        if why:
            return why
        if not got.upper <= 1:
            return f"steinke gives {got.upper_str()} > eps = 1"
        return None

    return Derivation(
        "steinke_rho_footnote",
        "rho = eps^2/(4 log(1/delta) + 4 eps) satisfies rho + sqrt(4 rho log(1/delta)) <= eps",
        "Steinke 2022 (differentialprivacy.org, extract of arXiv:2210.00597) footnote 2",
        [
            Equal("(eps - rho)^2 - 4 rho L = eps^3 (8L + 9 eps) / (16 (L + eps)^2)", (eps - rho) ** 2 - 4 * rho * L, rhs),
            NonNegative("the right-hand side is >= 0", rhs),
            NonNegative("eps - rho = eps (4L + 3 eps)/(4 (L + eps)) >= 0", eps - rho),
            Equal("so (eps - rho - sqrt(4 rho L)) (eps - rho + sqrt(4 rho L)) = that rhs >= 0, and the second factor is > 0",
                  (eps - rho - sp.sqrt(4 * rho * L)) * (eps - rho + sp.sqrt(4 * rho * L)), rhs),
            Equal("docs/mathematics.md §6 value: eps = 1, delta = 1e-6 gives rho = 0.016874207542284743326 (rounded to 21 places)",
                  sp.floor(10**21 * rho.subs({eps: 1, L: sp.log(10**6)}) + R(1, 2)), 16874207542284743326),
            Implementation("exactdp steinke: 100 queries with eps_j = 0.0183 (sum eps_j^2 <= 2 rho) stay within eps = 1",
                           fn=tie),
        ],
    )


def zcdp_conversion() -> Derivation:
    """rho-zCDP => (eps, exp(-(eps - rho)^2/(4 rho))): the inverse of rho + 2 sqrt(rho log(1/delta)), and
    the Chernoff bound e^{(a-1)(a rho - eps)} at its optimal order a* = (eps + rho)/(2 rho); the
    tight conversion of Canonne-Kamath-Steinke multiplies it by (1 - 1/a)^a/(a - 1)."""
    rho, w, a, eps = pos("rho w alpha epsilon")
    L = w**2 / (4 * rho)  # log(1/delta) at eps = rho + w
    chern = (a - 1) * (a * rho - eps)
    a_star = (eps + rho) / (2 * rho)

    def cks(r: sp.Expr, e: sp.Expr, av: sp.Expr) -> sp.Expr:
        return sp.exp((av - 1) * (av * r - e)) / (av - 1) * (1 - 1 / av) ** av

    def tie() -> str | None:
        from exactdp import Composition, delta, optimal_delta

        comp = Composition.homogeneous("0.1", 0, 30)
        r, e = 30 * R(1, 10) * sp.tanh(R(1, 20)), R(3, 2)
        simple = delta(comp, "1.5", method="zcdp", digits=30)
        why = enclosure_contains(simple, sp.exp(-(e - r) ** 2 / (4 * r)))
        if why:
            return f"zcdp: {why}"
        tight = delta(comp, "1.5", method="zcdp-tight", digits=30)
        for av in (R(5), R(11, 2), R(6)):
            bound = sp.Rational(sp.N(cks(r, e, av), 40)) * (1 + R(1, 10**30))
            if not tight.upper <= bound:
                return f"zcdp-tight {tight.upper_str()} exceeds the CKS value {sp.N(bound, 12)} at alpha = {av}"
        if not tight.upper <= simple.lower:
            return f"zcdp-tight {tight.upper_str()} exceeds the simple conversion {simple.lower_str()}"
        opt = optimal_delta(comp, "1.5", digits=30)
        if not opt.upper <= tight.lower:
            return f"zcdp-tight {tight.lower_str()} is below the optimum {opt.upper_str()}: unsound"
        return None

    return Derivation(
        "zcdp_conversion",
        "rho-zCDP gives delta(eps) = exp(-(eps - rho)^2/(4 rho)) (Chernoff at alpha* = (eps + rho)/(2 rho)); CKS is tighter",
        "Bun-Steinke 2016 Prop 1.3; Canonne-Kamath-Steinke 2020 (arXiv:2004.00010) Prop 12",
        [
            Equal("inverse: at log(1/delta) = (eps - rho)^2/(4 rho), eps = rho + w: rho + 2 sqrt(rho log(1/delta)) = eps",
                  rho + 2 * sp.sqrt(rho * L), rho + w),
            Equal("the Chernoff exponent (alpha-1)(alpha rho - eps) is stationary at alpha* = (eps + rho)/(2 rho)",
                  sp.diff(chern, a).subs(a, a_star), 0),
            NonNegative("and convex: its second derivative 2 rho > 0", sp.diff(chern, a, 2)),
            Equal("its value there is -(eps - rho)^2/(4 rho)", chern.subs(a, a_star), -(eps - rho) ** 2 / (4 * rho)),
            Implementation("exactdp zcdp / zcdp-tight / optimal at 30 x 0.1-DP, eps_g = 1.5: simple = "
                           "exp(-(1.5 - rho)^2/(4 rho)) >= tight (<= CKS at alpha = 5, 5.5, 6) >= optimal", fn=tie),
        ],
    )


def asoodeh_two_point() -> Derivation:
    """The two-point problem of the rdp-asoodeh conversion (docs/rdp.md §3.1): the derivatives of
    h(p, q) = p^a q^(1-a) + (1-p)^a (1-q)^(1-a) that the Newton step and the tangent plane use, the
    convexity of each perspective term (so F = p - gamma q - lambda h is concave), and the corner
    optimum p = 1, q = e^-tau where h = K and delta* = 1 - e^(eps - tau)."""
    p, q, r, s, b, tau = pos("p q r s b tau")
    a = 1 + b  # alpha > 1
    h = p**a * q ** (1 - a) + r**a * s ** (1 - a)  # r = 1 - p, s = 1 - q

    def dp(e: sp.Expr) -> sp.Expr:
        return sp.diff(e, p) - sp.diff(e, r)

    def dq(e: sp.Expr) -> sp.Expr:
        return sp.diff(e, q) - sp.diff(e, s)

    a1, b1, r1, r2 = (p / q) ** (a - 1), (r / s) ** (a - 1), p / q, r / s
    c = a * (a - 1)
    t = p**a * q ** (1 - a)
    hess = sp.Matrix([[sp.diff(t, p, 2), sp.diff(t, p, q)], [sp.diff(t, p, q), sp.diff(t, q, 2)]])

    def tie() -> str | None:
        from exactdp import delta, epsilon

        # one Gaussian, sigma 1: tau(4) = 2 >= eps + log(4/3) at eps = 1, the corner
        d = delta("gaussian:sigma=1", "1", method="rdp-asoodeh", orders=[4], digits=25)
        why = enclosure_contains(d, 1 - sp.exp(-1))
        if why:
            return f"delta at the corner: {why}"
        # eps at delta 1/2 >= 1/alpha: the corner again, eps = tau + log(1 - delta) = 2 - log 2
        e = epsilon("gaussian:sigma=1", "0.5", method="rdp-asoodeh", orders=[4], digits=25)
        why = enclosure_contains(e, 2 - sp.log(2))
        return f"eps at the corner: {why}" if why else None

    return Derivation(
        "asoodeh_two_point",
        "the rdp-asoodeh two-point problem: h's derivatives, each term jointly convex, the corner optimum 1 - e^(eps - tau)",
        "Asoodeh-Liao-Calmon-Kosut-Sankar 2021; docs/rdp.md §3.1",
        [
            Equal("h_p = a ((p/q)^(a-1) - ((1-p)/(1-q))^(a-1))", dp(h), a * (a1 - b1)),
            Equal("h_q = (1-a) ((p/q)^a - ((1-p)/(1-q))^a)", dq(h), (1 - a) * (r1 * a1 - r2 * b1)),
            Equal("h_pp = a (a-1) ((p/q)^(a-1)/p + ((1-p)/(1-q))^(a-1)/(1-p))", dp(dp(h)), c * (a1 / p + b1 / r)),
            Equal("h_pq = -a (a-1) ((p/q)^(a-1)/q + ((1-p)/(1-q))^(a-1)/(1-q))", dq(dp(h)), -c * (a1 / q + b1 / s)),
            Equal("h_qq = a (a-1) ((p/q)^a/q + ((1-p)/(1-q))^a/(1-q))", dq(dq(h)), c * (r1 * a1 / q + r2 * b1 / s)),
            Equal("the perspective p^a q^(1-a) has a Hessian of determinant 0", hess.det(), 0),
            Equal("and trace (p/q)^(a-1) a (a-1) (1/p + p/q^2)", hess[0, 0] + hess[1, 1],
                  (p / q) ** b * a * (a - 1) * (1 / p + p / q**2)),
            NonNegative("the trace's factor after the positive (p/q)^(a-1) is >= 0: the Hessian is positive "
                        "semi-definite, so each term and h are convex and F = p - gamma q - lambda h is concave",
                        a * (a - 1) * (1 / p + p / q**2)),
            Equal("the corner q = e^-tau, p = 1 meets the constraint: h(1, q) = q^(1-a) = K = e^((a-1) tau)",
                  (sp.exp(-tau)) ** (1 - a), sp.exp((a - 1) * tau)),
            Implementation("exactdp rdp-asoodeh at one Gaussian (sigma 1, order 4, tau 2): delta at eps 1 is "
                           "1 - e^-1, eps at delta 1/2 is 2 - log 2", fn=tie),
        ],
    )
