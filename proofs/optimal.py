"""Optimal composition: KOV15 Thm 3.3 as a hockey-stick divergence, its mean privacy loss, and
the Murtagh-Vadhan heterogeneous condition (and the Murtagh-Vadhan poster's erratum)."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from math import comb, factorial

import sympy as sp

from .framework import (
    ByDerivative,
    Computed,
    Derivation,
    Equal,
    Implementation,
    NonNegative,
    SumOfSquares,
    Unequal,
    enclosure_contains,
    exact_equals,
    nonneg_certificate,
    pos,
)

__all__ = ["kov15_hockey_stick", "kov15_mean_loss", "mv_reduces_to_kov15", "mv_poster_erratum"]

R = sp.Rational


# -- the formulas being derived ----------------------------------------------------------------

def kov15_delta_i(x: sp.Expr, k: int, i: int) -> sp.Expr:
    """KOV15 Thm 3.3: delta_i = sum_{l<i} C(k,l) (x^{k-l} - x^{k-2i+l}) / (1+x)^k, x = e^eps."""
    return sum((comb(k, l) * (x ** (k - l) - x ** (k - 2 * i + l)) for l in range(i)), sp.Integer(0)) / (1 + x) ** k


def dominating_pair(x: sp.Expr, d: sp.Expr, dc: sp.Expr | None = None) -> tuple[list[sp.Expr], list[sp.Expr]]:
    """The (eps, delta) dominating pair on {0,1,2,3} (KOV15 section 3; docs/mathematics.md §1);
    ``dc`` stands for 1 - delta (a separate positive symbol makes sign certificates cheap)."""
    dc = 1 - d if dc is None else dc
    P = [d, dc * x / (1 + x), dc / (1 + x), sp.Integer(0)]
    Q = [sp.Integer(0), dc / (1 + x), dc * x / (1 + x), d]
    return P, Q


def _sign(term: sp.Expr, subs: dict) -> int | str:
    """+1 / -1 / 0 certified (x = 1 + u etc. via ``subs``), or the reason it is not settled."""
    t = sp.cancel(sp.together(term))
    if t == 0:
        return 0
    if nonneg_certificate(t, subs) is None:
        return 1
    if nonneg_certificate(-t, subs) is None:
        return -1
    return f"the sign of {t} is not certified"


def hockey_stick_product(P: Sequence[sp.Expr], Q: Sequence[sp.Expr], k: int, g: sp.Expr,
                         subs: dict) -> sp.Expr | str:
    """sum_y (P^k(y) - g Q^k(y))_+ over the k-fold product, each term's sign certified; outputs
    are grouped by their count vector (the terms depend only on it), weighted by the multinomial."""
    n = len(P)
    total = sp.Integer(0)
    for counts in itertools.product(range(k + 1), repeat=n):
        if sum(counts) != k:
            continue
        mult = factorial(k)
        for c in counts:
            mult //= factorial(c)
        p = sp.Mul(*[P[j] ** counts[j] for j in range(n)])
        q = sp.Mul(*[Q[j] ** counts[j] for j in range(n)])
        s = _sign(p - g * q, subs)
        if isinstance(s, str):
            return f"output counts {counts}: {s}"
        if s > 0:
            total += mult * (p - g * q)
    return total


def _exact_exponent_sign(plus: Sequence[sp.Expr], minus: Sequence[sp.Expr]) -> int:
    """The exact sign of sum(plus) - sum(minus) when every term is a rational, or every term is
    log(q) of a rational q (then compare prod q's); mixed kinds are refused (no guessing)."""
    terms = list(plus) + list(minus)
    if all(t.is_Rational for t in terms):
        d = sum(plus, sp.Integer(0)) - sum(minus, sp.Integer(0))
    elif all(isinstance(t, sp.log) and t.args[0].is_Rational for t in terms):
        d = sp.Mul(*[t.args[0] for t in plus]) - sp.Mul(*[t.args[0] for t in minus])
    else:
        raise ValueError(f"cannot decide the sign exactly for exponents {terms}")
    return int(bool(d > 0)) - int(bool(d < 0))


def mv_delta_pure(eps: Sequence[sp.Expr], eps_g: sp.Expr) -> sp.Expr:
    """MV Thm 1.5 by brute force over subsets: a subset S contributes iff eps(S) - eps(S^c) > eps_g,
    decided exactly (all exponents rational, or all logs of rationals)."""
    k = len(eps)
    total = sp.Integer(0)
    for mask in range(1 << k):
        S = [e for j, e in enumerate(eps) if (mask >> j) & 1]
        C = [e for j, e in enumerate(eps) if not (mask >> j) & 1]
        if _exact_exponent_sign(S, C + [eps_g]) > 0:
            total += _exp_sum(S) - _exp_sum([eps_g]) * _exp_sum(C)
    return total / sp.Mul(*[1 + _exp_sum([e]) for e in eps])


def _exp_sum(es: Sequence[sp.Expr]) -> sp.Expr:
    """e^{sum es}, as the exact rational prod q when every term is log(q)."""
    if es and all(isinstance(t, sp.log) and t.args[0].is_Rational for t in es):
        return sp.Mul(*[t.args[0] for t in es])
    return sp.exp(sum(es, sp.Integer(0)))


# -- derivations -------------------------------------------------------------------------------

def kov15_hockey_stick() -> Derivation:
    """KOV15 Thm 3.3: 1 - (1-delta)^k (1 - delta_i) is the hockey-stick divergence at (k-2i) eps of
    the k-fold product of dominating pairs, checked symbolically in x = e^eps and delta for k <= 4."""
    x, d, dc, u = pos("x delta deltabar u")
    subs = {x: 1 + u}  # x = e^eps >= 1; delta and deltabar = 1 - delta are positive
    P, Q = dominating_pair(x, d, dc)
    steps: list = []
    for k in range(1, 5):
        for i in range(0, k // 2 + 1):
            def check(k: int = k, i: int = i) -> str | None:
                hs = hockey_stick_product(P, Q, k, x ** (k - 2 * i), subs)
                if isinstance(hs, str):
                    return hs
                hs = hs.subs(dc, 1 - d)
                want = 1 - (1 - d) ** k * (1 - kov15_delta_i(x, k, i))
                if not sp.cancel(sp.together(hs - want)) == 0:
                    return f"hockey stick {sp.factor(hs)} != {want}"
                return None

            steps.append(Computed(f"k = {k}, i = {i}: sum over the 4^{k} outputs of (P^k - e^((k-2i) eps) Q^k)_+ "
                                  f"equals 1 - (1-delta)^k (1 - delta_i), every term's sign certified with e^eps = 1+u",
                                  fn=check))

    def tie_exact() -> str | None:
        from exactdp import Composition, optimal_delta

        comp = Composition.homogeneous("log(3/2)", 0, 10)
        for i in range(1, 6):
            want = kov15_delta_i(R(3, 2), 10, i)
            why = exact_equals(optimal_delta(comp, f"log({R(3, 2) ** (10 - 2 * i)})", digits=30), want)
            if why:
                return f"i = {i}: {why}"
        return None

    def tie_approx() -> str | None:
        from exactdp import Composition, optimal_delta

        comp = Composition.homogeneous("log(2)", "1/10", 4)
        want = 1 - R(9, 10) ** 4 * (1 - kov15_delta_i(sp.Integer(2), 4, 1))
        return exact_equals(optimal_delta(comp, "log(4)", digits=30), want)

    def tie_enclosure() -> str | None:
        from exactdp import Composition, optimal_delta

        comp = Composition.homogeneous("0.1", "1e-3", 30)
        want = 1 - (1 - R(1, 1000)) ** 30 * (1 - kov15_delta_i(sp.exp(R(1, 10)), 30, 10))
        return enclosure_contains(optimal_delta(comp, "1", digits=30), want)

    steps += [
        Equal("docs/mathematics.md §6: e^eps = 3/2, k = 10 gives delta_1..delta_5 = 6561/1953125, ..., 182369/390625",
              sp.Matrix([kov15_delta_i(R(3, 2), 10, i) for i in range(1, 6)]),
              sp.Matrix([R(6561, 1953125), R(53217, 1953125), R(205173, 1953125), R(505989, 1953125),
                         R(182369, 390625)])),
        Equal("docs/mathematics.md §6: 30 x (0.1, 1e-3) at eps_g = 1 (i = 10) is 0.03981841052213057502284336",
              sp.floor(10**26 * (1 - (1 - R(1, 1000)) ** 30 * (1 - kov15_delta_i(sp.exp(R(1, 10)), 30, 10))) + R(1, 2)),
              3981841052213057502284336),
        Implementation("exactdp.optimal_delta: 10 x log(3/2)-DP at eps_g = (10-2i) log(3/2) is delta_i exactly, i = 1..5",
                       fn=tie_exact),
        Implementation("exactdp.optimal_delta: 4 x (log 2, 1/10) at eps_g = log 4 is 1 - (9/10)^4 (1 - delta_1) exactly",
                       fn=tie_approx),
        Implementation("exactdp.optimal_delta: 30 x (0.1, 1e-3) at eps_g = 1 (i = 10; docs/mathematics.md §6: 0.0398184105...)",
                       fn=tie_enclosure),
    ]
    return Derivation(
        "kov15_hockey_stick",
        "delta_i of KOV15 Thm 3.3 is the hockey-stick divergence of the product of (eps, delta) dominating pairs",
        "Kairouz-Oh-Viswanath ICML 2015 (arXiv:1311.0776) Thm 3.3 and section 3",
        steps,
    )


def _unevaluated(build):
    """Build an expression without sympy's automatic evaluation (so --verbose/--latex show the
    left-hand side as written; the check itself evaluates it)."""
    with sp.evaluate(False):
        return build()


def _mv_inverse_pure(x: sp.Expr, eps: sp.Expr, k: int, t: sp.Expr) -> sp.Expr:
    """The optimal eps_g at delta_pure = t: on the segment where exactly l >= m contribute,
    delta_pure = A_m - e^{eps_g} B_m, so eps_g = log((A_m - t)/B_m) (docs/mathematics.md §2)."""
    for m in range(k, (k // 2), -1):
        A = sum(comb(k, l) * x**l for l in range(m, k + 1)) / (1 + x) ** k
        B = sum(comb(k, l) * x ** (k - l) for l in range(m, k + 1)) / (1 + x) ** k
        arg = (A - t) / B
        if sp.N(arg, 30) <= 0:
            continue
        eg = sp.log(arg)
        lo, hi = max(0, 2 * (m - 1) - k) * eps, (2 * m - k) * eps
        v = sp.N(eg, 40)
        if sp.N(lo, 40) <= v < sp.N(hi, 40):
            return eg
    raise ValueError("no segment found")


def kov15_mean_loss() -> Derivation:
    """The privacy loss of the (eps, delta) pair is +-eps on its finite part with mean eps tanh(eps/2)
    (KOV15 Thm 3.4 first term); Hoeffding gives the third term eps sqrt(2k log(1/delta~))."""
    eps, d, L, v = pos("epsilon delta L v")
    k = sp.symbols("k", positive=True, integer=True)
    x = sp.exp(eps)
    P, Q = dominating_pair(x, d)
    t = eps * sp.sqrt(2 * k * L)

    def thm34(e: sp.Expr, kk: int, dt: sp.Expr) -> sp.Expr:
        terms = [kk * e,
                 kk * e * sp.tanh(e / 2) + e * sp.sqrt(2 * kk * sp.log(sp.E + sp.sqrt(kk * e**2) / dt)),
                 kk * e * sp.tanh(e / 2) + e * sp.sqrt(2 * kk * sp.log(1 / dt))]
        return min(terms, key=lambda z: sp.N(z, 50))

    def tie_pure() -> str | None:
        from exactdp import Composition, epsilon

        got = epsilon(Composition.homogeneous("0.1", 0, 30), "1e-3", method="kov15-3.4", digits=30)
        return enclosure_contains(got, thm34(R(1, 10), 30, R(1, 1000)))

    def tie_approx() -> str | None:
        from exactdp import Composition, epsilon

        got = epsilon(Composition.homogeneous("0.1", "1e-4", 30), "1e-2", method="kov15-3.4", digits=30)
        dt = 1 - R(99, 100) / R(9999, 10000) ** 30  # delta_total = 1 - (1-delta)^k (1 - delta~)
        return enclosure_contains(got, thm34(R(1, 10), 30, dt))

    def tie_optimal() -> str | None:
        from exactdp import Composition, epsilon, optimal_delta, optimal_epsilon

        comp = Composition.homogeneous("0.1", 0, 30)
        e34 = epsilon(comp, "1e-3", method="kov15-3.4", digits=30)
        opt = optimal_epsilon(comp, "1e-3", digits=30)
        xx = sp.exp(R(1, 10))
        want = _mv_inverse_pure(xx, R(1, 10), 30, R(1, 1000))
        why = enclosure_contains(opt, want)
        if why:
            return f"optimal_epsilon: {why}"
        if not opt.upper <= e34.lower:
            return f"optimal eps {opt.upper_str()} exceeds kov15-3.4's {e34.lower_str()}"
        dd = optimal_delta(comp, e34.lower, digits=30)
        if not dd.upper <= R(1, 1000):
            return f"optimal_delta at kov15-3.4's eps is {dd.upper_str()} > 1e-3: the bound is unsound"
        return None

    return Derivation(
        "kov15_mean_loss",
        "the (eps, delta) pair's finite privacy loss is +-eps with mean eps tanh(eps/2): KOV15 Thm 3.4's first term",
        "KOV15 ICML 2015 Thm 3.4 (and its proof); Hoeffding 1963",
        [
            Equal("log P(1)/Q(1) = eps", _unevaluated(lambda: sp.log(P[1] / Q[1])), eps),
            Equal("log P(2)/Q(2) = -eps", _unevaluated(lambda: sp.log(P[2] / Q[2])), -eps),
            Equal("mean of the loss on the finite part {1, 2} under P: eps tanh(eps/2)",
                  (eps * P[1] - eps * P[2]) / (P[1] + P[2]), eps * sp.tanh(eps / 2)),
            Equal("Hoeffding for k losses in [-eps, eps]: exp(-2 t^2 / (k (2 eps)^2)) at t = eps sqrt(2k L) is e^{-L}",
                  _unevaluated(lambda: sp.exp(-2 * t**2 / (k * (2 * eps) ** 2))), sp.exp(-L)),
            ByDerivative("tanh(v) <= v for v >= 0 (so k eps tanh(eps/2) <= k eps^2/2 <= k eps^2, the 2013 form is looser)",
                         v - sp.tanh(v), v, 0,
                         SumOfSquares("(v - tanh v)' = tanh(v)^2", sp.tanh(v) ** 2, [(1, sp.tanh(v))])),
            Equal("docs/mathematics.md §6: the segment inverse for 30 x 0.1-DP at delta_g = 1e-3 is 1.4811439805399072046",
                  sp.floor(10**19 * _mv_inverse_pure(sp.exp(R(1, 10)), R(1, 10), 30, R(1, 1000)) + R(1, 2)),
                  14811439805399072046),
            Equal("docs/mathematics.md §6: Thm 3.4 at eps = 0.1, k = 30, delta~ = 1e-3 is 2.0957506835726820081",
                  sp.floor(10**19 * thm34(R(1, 10), 30, R(1, 1000)) + R(1, 2)), 20957506835726820081),
            Implementation("exactdp kov15-3.4: 30 x 0.1-DP at delta_g = 1e-3 is the min of the three terms (docs/mathematics.md §6: 2.0957506835...)",
                           fn=tie_pure),
            Implementation("exactdp kov15-3.4: 30 x (0.1, 1e-4) at delta_g = 1e-2, delta~ = 1 - 0.99/0.9999^30", fn=tie_approx),
            Implementation("exactdp.optimal_epsilon: 30 x 0.1-DP at 1e-3 is log((A_m - t)/B_m) on its segment "
                           "(docs/mathematics.md §6: 1.48114398...), below kov15-3.4, and optimal_delta there is <= 1e-3",
                           fn=tie_optimal),
        ],
    )


def mv_reduces_to_kov15() -> Derivation:
    """MV Thm 1.5 with all eps_i equal reduces to KOV15 Thm 3.3, symbolically for k <= 5."""
    x, u = pos("x u")
    steps: list = []
    for k in range(1, 6):
        e = sp.symbols(f"epsilon1:{k + 1}", positive=True)
        for i in range(0, k // 2 + 1):
            def check(k: int = k, i: int = i, e: tuple = e) -> str | None:
                eps_g = (k - 2 * i) * sp.log(x)
                total = sp.Integer(0)
                for mask in range(1 << k):
                    S = [e[j] for j in range(k) if (mask >> j) & 1]
                    C = [e[j] for j in range(k) if not (mask >> j) & 1]
                    term = sp.exp(sum(S, sp.Integer(0))) - sp.exp(eps_g) * sp.exp(sum(C, sp.Integer(0)))
                    term = sp.powsimp(sp.expand(term.subs({ej: sp.log(x) for ej in e})), force=True)
                    s = _sign(term, {x: 1 + u})
                    if isinstance(s, str):
                        return f"subset {mask:0{k}b}: {s}"
                    if s > 0:
                        total += term
                mv = total / (1 + x) ** k
                if sp.cancel(sp.together(mv - kov15_delta_i(x, k, i))) != 0:
                    return f"MV sum {sp.factor(mv)} != KOV15 delta_{i}"
                return None

            steps.append(Computed(f"k = {k}, i = {i}: with all eps_j = eps, eps_g = (k-2i) eps, the sum over the 2^{k} "
                                  f"subsets S of (e^eps(S) - e^eps_g e^eps(S^c))_+ / (1+e^eps)^k is KOV15 delta_i",
                                  fn=check))

    def tie_het() -> str | None:
        from exactdp import Composition, optimal_delta

        comp = Composition.heterogeneous([("log(2)", 0), ("log(3)", 0), ("log(3/2)", "1/10")])
        want = 1 - R(9, 10) * (1 - mv_delta_pure([sp.log(2), sp.log(3), sp.log(R(3, 2))], sp.log(2)))
        return exact_equals(optimal_delta(comp, "log(2)", digits=30), want)

    def tie_ref() -> str | None:
        from exactdp import Composition, optimal_delta

        es = ["0.1", "0.2", "0.3", "0.5", "0.7"]
        comp = Composition.heterogeneous([(e, 0) for e in es])
        want = mv_delta_pure([R(e) for e in es], R(6, 10))
        return enclosure_contains(optimal_delta(comp, "0.6", digits=30), want)

    steps += [
        Equal("docs/mathematics.md §6: pure eps = (0.1, 0.2, 0.3, 0.5, 0.7), delta_pure(0.6) = 0.19524053440970874309208...",
              sp.floor(10**25 * mv_delta_pure([R(1, 10), R(2, 10), R(3, 10), R(5, 10), R(7, 10)], R(6, 10)) + R(1, 2)),
              1952405344097087430920803),
        Implementation("exactdp.optimal_delta: (log 2, log 3, (log 3/2, 1/10)) at eps_g = log 2 equals the exact subset sum",
                       fn=tie_het),
        Implementation("exactdp.optimal_delta: pure (0.1, 0.2, 0.3, 0.5, 0.7) at eps_g = 0.6 (docs/mathematics.md §6: 0.19524053...)",
                       fn=tie_ref),
    ]
    return Derivation(
        "mv_reduces_to_kov15",
        "the Murtagh-Vadhan condition with all eps_i equal is KOV15 Thm 3.3 (k <= 5, every grid point)",
        "Murtagh-Vadhan TCC 2016 / ToC 14(8) 2018 (arXiv:1507.03113) Thm 1.5; KOV15 Thm 3.3",
        steps,
    )


def mv_poster_erratum() -> Derivation:
    """The Murtagh-Vadhan poster's variant, with e^{eps_g |S|} in place of e^{eps_g} e^{eps(S^c)}, does not
    reduce to KOV15: an exact counterexample (docs/mathematics.md §2, erratum)."""
    x, u = pos("x u")
    k = 3
    two = sp.Integer(2)

    def poster(xs: list, g: sp.Expr) -> sp.Expr:
        """The poster's form with x_i = e^{eps_i}, g = e^{eps_g} rational: (e^{eps(S)} - g^{|S|})_+ summed."""
        total = sp.Integer(0)
        for mask in range(1 << len(xs)):
            S = [xv for j, xv in enumerate(xs) if (mask >> j) & 1]
            t = sp.Mul(*S) - g ** len(S)
            if t > 0:
                total += t
        return total / sp.Mul(*[1 + xv for xv in xs])

    eps3 = [sp.log(two)] * k
    correct = mv_delta_pure(eps3, sp.log(two))
    wrong = poster([two] * k, two)
    P, Q = dominating_pair(two, sp.Integer(0))
    hs = hockey_stick_product(P, Q, k, two, {})

    def tie() -> str | None:
        from exactdp import Composition, optimal_delta

        got = optimal_delta(Composition.homogeneous("log(2)", 0, 3), "log(2)", digits=30)
        why = exact_equals(got, R(2, 9))
        if why:
            return why
        if got.exact == wrong:
            return "exactdp agrees with the poster's wrong formula"
        return None

    poster_sym = sum((comb(k, s) * (x**s - x**s) for s in range(k + 1)), sp.Integer(0))
    return Derivation(
        "mv_poster_erratum",
        "the poster's e^{eps_g |S|} variant of MV Thm 1.5 is wrong: 3 x log(2)-DP at eps_g = log 2 gives 0, the truth is 2/9",
        "Murtagh-Vadhan TCC 2016 poster vs Murtagh-Vadhan Thm 1.5; docs/mathematics.md §2 erratum",
        [
            Equal("MV Thm 1.5 (correct form) at eps_i = log 2 (k = 3), eps_g = log 2", correct, R(2, 9)),
            Equal("the hockey-stick divergence of the product of three RR(log 2) pairs at log 2 is 2/9", hs, R(2, 9)),
            Equal("KOV15 delta_1 at e^eps = 2, k = 3 is 2/9", kov15_delta_i(two, 3, 1), R(2, 9)),
            Equal("the poster's form at the same point", wrong, 0),
            Unequal("so the poster's form differs from the optimum (exact counterexample)", wrong, correct),
            Equal("in general with all eps_i = eps_g = eps the poster's sum of (e^{eps|S|} - e^{eps|S|})_+ is identically 0",
                  poster_sym, 0),
            NonNegative("while KOV15 delta_1 = (x^3 - x)/(1+x)^3 > 0 for x = e^eps = 1 + u > 1",
                        kov15_delta_i(x, 3, 1), {x: 1 + u}),
            Implementation("exactdp.optimal_delta: 3 x log(2)-DP at eps_g = log 2 is 2/9 exactly (not the poster's 0)", fn=tie),
        ],
    )
