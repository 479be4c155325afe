"""The basic mechanisms: randomized response, Laplace (privacy, accuracy, privacy-loss distribution)
and Gaussian (privacy loss N(rho, 2 rho), mu^2 adds)."""

from __future__ import annotations

import sympy as sp

from .framework import Derivation, Equal, Implementation, NonNegative, enclosure_contains, exact_equals, pos

__all__ = ["randomized_response", "laplace_mechanism", "laplace_pld", "gaussian_privacy_loss"]

R = sp.Rational


def randomized_response() -> Derivation:
    """Randomized response (truthful w.p. e^eps/(1+e^eps)) is eps-DP; the debiased estimator is
    unbiased with variance e^eps/((e^eps-1)^2 n); Hoeffding gives the lecture notes' accuracy bound."""
    eps, m, n, beta = pos("epsilon m n beta")
    x = sp.exp(eps)
    p_true = x / (1 + x)
    # one person's report S_i with q(d_i) = q in {0, 1}: Pr[S_i = 1] = (1 + q (x - 1))/(1 + x)
    q = sp.symbols("q", nonnegative=True)
    pr1 = q * p_true + (1 - q) * (1 - p_true)
    c = (1 + x) / (x - 1)
    mean_r = (1 + m * (x - 1)) / (1 + x)  # E[r] for r = (sum S_i)/n when q(D) = m
    t = sp.sqrt(sp.log(2 / beta) / (2 * n))

    def tie() -> str | None:
        from exactdp import Composition, delta, epsilon

        # RR(log 3) is (log 3)-DP: basic composition of 4 of them is log 81, and delta at log 81 is 0
        comp = Composition.homogeneous("log(3)", 0, 4)
        why = enclosure_contains(epsilon(comp, 0, method="basic", digits=30), sp.log(81))
        return why or exact_equals(delta(comp, "log(81)", method="basic", digits=30), 0)

    return Derivation(
        "randomized_response",
        "randomized response is eps-DP, its debiased estimator is unbiased with variance e^eps/((e^eps-1)^2 n)",
        "Warner 1965; Gaboardi, CSE660 lecture notes (Buffalo, 2017) privacy and accuracy theorems; Dwork-Roth 2014 section 3.2",
        [
            Equal("likelihood ratio of the report 'yes' between q(d)=1 and q(d)=0 is e^eps",
                  pr1.subs(q, 1) / pr1.subs(q, 0), x),
            Equal("likelihood ratio of the report 'no' is e^{-eps}", (1 - pr1.subs(q, 1)) / (1 - pr1.subs(q, 0)), 1 / x),
            Equal("E[S_i] = (1 + q(d_i)(e^eps - 1))/(1 + e^eps), so E[r] = (1 + m (e^eps - 1))/(1 + e^eps), m = q(D)",
                  pr1, (1 + q * (x - 1)) / (1 + x)),
            Equal("unbiased: E[(1+e^eps)/(e^eps-1) (r - 1/(1+e^eps))] = q(D)", c * (mean_r - 1 / (1 + x)), m),
            Equal("Var S_i = p(1-p) = e^eps/(1+e^eps)^2 whatever q(d_i)",
                  pr1.subs(q, 1) * (1 - pr1.subs(q, 1)) - pr1.subs(q, 0) * (1 - pr1.subs(q, 0)), 0),
            Equal("variance of the estimator: c^2 e^eps/((1+e^eps)^2 n) = e^eps/((e^eps-1)^2 n) = 1/(4 n sinh^2(eps/2))",
                  c**2 * x / ((1 + x) ** 2 * n), 1 / (4 * n * sp.sinh(eps / 2) ** 2)),
            Equal("Hoeffding: 2 exp(-2 n t^2) at t = sqrt(log(2/beta)/(2n)) is beta, so the lecture notes' bound "
                  "(1+e^eps)/(e^eps-1) t holds w.p. >= 1 - beta", 2 * sp.exp(-2 * n * t**2), beta),
            Implementation("exactdp basic: 4 x RR(log 3) is log(81)-DP with delta 0 exactly", fn=tie),
        ],
    )


def laplace_mechanism() -> Derivation:
    """The Laplace mechanism with scale Delta/eps is eps-DP, and
    Pr[|q(D) - r| >= (Delta/eps) log(1/beta)] = beta exactly (Gaboardi, CSE660 lecture notes, 2017)."""
    eps, D, s, w, tt, beta = pos("epsilon Delta s w t beta")
    z = sp.symbols("z", real=True)
    b = D / eps

    def lossat(y: sp.Expr) -> sp.Expr:  # log p_0(y)/p_Delta(y) with p_c = Laplace(c, b)
        return (sp.Abs(y - D) - sp.Abs(y)) / b

    density = sp.exp(-sp.Abs(z) / b) / (2 * b)

    def tie() -> str | None:
        from exactdp import Composition, delta

        return exact_equals(delta(Composition.homogeneous("0.5", 0, 1), "0.5", method="basic", digits=30), 0)

    return Derivation(
        "laplace_mechanism",
        "Laplace(Delta/eps) noise is eps-DP, and Pr[|noise| >= (Delta/eps) log(1/beta)] = beta exactly",
        "Dwork-McSherry-Nissim-Smith 2006; Gaboardi, CSE660 lecture notes (Buffalo, 2017), Laplace accuracy theorem",
        [
            Equal("y = -s <= 0: the privacy loss is eps", lossat(-s), eps),
            Equal("y = Delta + s >= Delta: the privacy loss is -eps", lossat(D + s), -eps),
            NonNegative("y = Delta w/(1+w) in (0, Delta): eps - loss >= 0", eps - lossat(D * w / (1 + w))),
            NonNegative("y = Delta w/(1+w) in (0, Delta): loss + eps >= 0", lossat(D * w / (1 + w)) + eps),
            Equal("the density integrates to 1", sp.integrate(density, (z, -sp.oo, sp.oo)), 1),
            Equal("Pr[|noise| >= t] = e^{-t/b}", 2 * sp.integrate(density, (z, tt, sp.oo)), sp.exp(-tt / b)),
            Equal("at t = (Delta/eps) log(1/beta) that is beta", sp.exp(-tt / b).subs(tt, b * sp.log(1 / beta)), beta),
            Implementation("exactdp basic: one 0.5-DP mechanism has delta 0 at eps_g = 0.5 exactly", fn=tie),
        ],
    )


def laplace_pld() -> Derivation:
    """The Laplace privacy-loss distribution (scale b, sensitivity Delta, eps = Delta/b): atoms 1/2
    at +eps and e^{-eps}/2 at -eps, density e^{(z-eps)/2}/4 on (-eps, eps); profile
    delta(eps') = 1 - e^{-(eps-eps')/2} (Steinke 2022 section 3)."""
    eps, b, ep, s = pos("epsilon b epsilon' s")
    z = sp.symbols("z", real=True)
    D = eps * b
    y = sp.symbols("y", real=True)
    p0 = sp.exp(-sp.Abs(y) / b) / (2 * b)  # P = Laplace(0, b); Q = Laplace(Delta, b)
    atom_plus = sp.integrate(sp.exp(y / b) / (2 * b), (y, -sp.oo, 0))  # loss = +eps on y <= 0
    atom_minus = sp.integrate(sp.exp(-y / b) / (2 * b), (y, D, sp.oo))  # loss = -eps on y >= Delta
    dens = sp.exp((z - eps) / 2) / 4
    # on (0, Delta) the loss is z = (Delta - 2y)/b, so y = (Delta - b z)/2, |dy/dz| = b/2
    yz = (D - b * z) / 2
    profile = atom_plus * (1 - sp.exp(ep - eps)) + sp.integrate((1 - sp.exp(ep - z)) * dens, (z, ep, eps))

    def tie() -> str | None:
        from exactdp import Composition, delta

        # at eps' = eps the profile is 0: the single Laplace mechanism is (eps, 0)-DP
        return exact_equals(delta(Composition.homogeneous("0.7", 0, 1), "0.7", method="basic", digits=30), 0)

    return Derivation(
        "laplace_pld",
        "Laplace PLD: atoms 1/2 at eps, e^{-eps}/2 at -eps, density e^{(z-eps)/2}/4 between; delta(eps') = 1 - e^{-(eps-eps')/2}",
        "Steinke 2022 (arXiv:2210.00597) section 3; Koskela-Jalko-Honkela 2020",
        [
            Equal("P[y <= 0] = 1/2 (loss +eps)", atom_plus, R(1, 2)),
            Equal("P[y >= Delta] = e^{-eps}/2 (loss -eps)", atom_minus, sp.exp(-eps) / 2),
            Equal("change of variables: p(y(z)) |dy/dz| = e^{(z-eps)/2}/4 for y(z) = (Delta - b z)/2 in (0, Delta)",
                  (p0.subs(y, yz) * b / 2).subs(z, eps - 2 * eps * s / (1 + s)), dens.subs(z, eps - 2 * eps * s / (1 + s))),
            Equal("total mass 1", atom_plus + atom_minus + sp.integrate(dens, (z, -eps, eps)), 1),
            Equal("profile delta(eps') = E_P[(1 - e^{eps' - Z})_+] = 1 - e^{-(eps - eps')/2} for 0 <= eps' <= eps",
                  profile.subs(ep, eps * s / (1 + s)), (1 - sp.exp(-(eps - ep) / 2)).subs(ep, eps * s / (1 + s))),
            Implementation("exactdp basic: the profile vanishes at eps' = eps (0.7-DP has delta 0 at 0.7)", fn=tie),
        ],
    )


def gaussian_privacy_loss() -> Derivation:
    """For N(Delta, sigma^2) vs N(0, sigma^2) the privacy loss is N(rho, 2 rho), rho = Delta^2/(2 sigma^2);
    mu^2 = 2 rho adds under composition; delta(eps) = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu)."""
    D, sig, eps, r1, r2 = pos("Delta sigma epsilon rho1 rho2")
    y = sp.symbols("y", real=True)
    p = sp.exp(-(y - D) ** 2 / (2 * sig**2)) / sp.sqrt(2 * sp.pi * sig**2)
    q = sp.exp(-(y**2) / (2 * sig**2)) / sp.sqrt(2 * sp.pi * sig**2)
    L = sp.expand(sp.expand_log(sp.log(p / q), force=True))
    rho = D**2 / (2 * sig**2)
    mu = D / sig
    Lfun = (2 * y * D - D**2) / (2 * sig**2)
    mean = sp.integrate(Lfun * p, (y, -sp.oo, sp.oo))
    var = sp.integrate((Lfun - rho) ** 2 * p, (y, -sp.oo, sp.oo))
    qmean = sp.integrate(Lfun * q, (y, -sp.oo, sp.oo))
    Phi = lambda a: (1 + sp.erf(a / sp.sqrt(2))) / 2  # noqa: E731
    # P[L > eps] with L ~ N(rho, 2 rho): Phi((rho - eps)/sqrt(2 rho)); under Q, L ~ N(-rho, 2 rho)
    t_p = Phi((rho - eps) / sp.sqrt(2 * rho))
    t_q = Phi((-rho - eps) / sp.sqrt(2 * rho))

    def tie() -> str | None:
        from exactdp import Composition, epsilon

        # zcdp: rho adds; 10 x 0.2-DP -> rho = 10 * 0.2 tanh(0.1), then rho + 2 sqrt(rho log(1/delta))
        got = epsilon(Composition.homogeneous("0.2", 0, 10), "1e-5", method="zcdp", digits=30)
        rv = 10 * R(1, 5) * sp.tanh(R(1, 10))
        return enclosure_contains(got, rv + 2 * sp.sqrt(rv * sp.log(10**5)))

    return Derivation(
        "gaussian_privacy_loss",
        "the Gaussian privacy loss is N(rho, 2 rho), rho = Delta^2/(2 sigma^2), so mu^2 = 2 rho adds under composition",
        "Steinke 2022 (arXiv:2210.00597) section 3.1; Balle-Wang 2018 Thm 8; Dong-Roth-Su 2019",
        [
            Equal("log p(y)/q(y) = (2 y Delta - Delta^2)/(2 sigma^2) (affine in y, so the loss is Gaussian)", L, Lfun),
            Equal("its mean under P is rho = Delta^2/(2 sigma^2)", mean, rho),
            Equal("its variance under P is 2 rho", var, 2 * rho),
            Equal("its mean under Q is -rho", qmean, -rho),
            Equal("composition: N(rho1, 2 rho1) + N(rho2, 2 rho2) = N(rho1 + rho2, 2 (rho1 + rho2)), i.e. mu^2 = 2 rho adds",
                  2 * r1 + 2 * r2, 2 * (r1 + r2)),
            Equal("delta(eps) = P[L > eps] - e^eps Q[L > eps] = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu)",
                  t_p - sp.exp(eps) * t_q, Phi(mu / 2 - eps / mu) - sp.exp(eps) * Phi(-mu / 2 - eps / mu)),
            Implementation("exactdp zcdp: rho adds (10 x 0.2-DP, rho_j = 0.2 tanh(0.1)), converted at delta = 1e-5", fn=tie),
        ],
    )
