"""Structural properties: group privacy, post-processing on finite output spaces, and privacy
amplification by Poisson subsampling."""

from __future__ import annotations

import sympy as sp

from .framework import Computed, Derivation, Equal, Implementation, NonNegative, enclosure_contains, pos
from .optimal import dominating_pair, hockey_stick_product

__all__ = ["group_privacy", "post_processing", "poisson_subsampling", "replace_one_sampling"]

R = sp.Rational


def group_privacy() -> Derivation:
    """(eps, delta)-DP gives (g eps, delta (e^{g eps} - 1)/(e^eps - 1)) for groups of size g,
    by induction along a path of g neighbours (Dwork-Roth 2014 Thm 2.2; Vadhan 2017 Lemma 2.3)."""
    x, d, Pn = pos("x delta P_g")
    g = sp.symbols("g", positive=True, integer=True)
    B = lambda n: d * (x**n - 1) / (x - 1)  # noqa: E731

    def tie() -> str | None:
        from exactdp import Composition, delta

        # g = 4 copies of (log(3/2), 1/100): basic at eps_g = 4 log(3/2) lies between the exact
        # optimum 1 - (99/100)^4 and the group-privacy delta (1/100)((3/2)^4 - 1)/(1/2)
        got = delta(Composition.homogeneous("log(3/2)", "1/100", 4), "log(81/16)", method="basic", digits=30)
        lo, hi = 1 - R(99, 100) ** 4, B(4).subs({x: R(3, 2), d: R(1, 100)})
        if not (lo <= got.lower and got.upper <= hi):
            return f"basic gives [{got.lower_str()}, {got.upper_str()}], outside [{lo}, {hi}]"
        return None

    return Derivation(
        "group_privacy",
        "(eps, delta)-DP implies (g eps, delta (e^{g eps} - 1)/(e^eps - 1))-DP for groups of g (g eps-DP when delta = 0)",
        "Dwork-Roth 2014 Thm 2.2; Vadhan 2017 Lemma 2.3",
        [
            Equal("base case g = 1: B(1) = delta", B(1), d),
            Equal("induction: P_0 <= e^eps P_1 + delta and P_1 <= e^{g eps} P_{g+1} + B(g) give "
                  "P_0 <= e^{(g+1) eps} P_{g+1} + B(g+1)", x * (x**g * Pn + B(g)) + d, x ** (g + 1) * Pn + B(g + 1)),
            Equal("B(g) = delta sum_{j<g} e^{j eps} (checked for g = 5)", B(5), d * sum(x**j for j in range(5))),
            Equal("pure case: delta = 0 gives B(g) = 0, i.e. g eps-DP", B(g).subs(d, 0), 0),
            Implementation("exactdp basic: 4 x (log 3/2, 1/100) at 4 log(3/2) lies between 1 - 0.99^4 and the group bound",
                           fn=tie),
        ],
    )


def post_processing() -> Derivation:
    """A Markov kernel K applied to both outputs cannot increase the hockey-stick divergence:
    PK(T) - e^eps QK(T) = sum_y K(y, T) (P(y) - e^eps Q(y)) <= sum_y (P(y) - e^eps Q(y))_+."""
    x, a, b, v, u = pos("x a b v u")
    P = sp.symbols("P1:4", positive=True)
    Q = sp.symbols("Q1:4", positive=True)
    K = sp.symbols("K1:4", nonnegative=True)  # K(y, T) for a fixed event T of the output space Z
    lhs = sum(Pi * Ki for Pi, Ki in zip(P, K)) - x * sum(Qi * Ki for Qi, Ki in zip(Q, K))
    two, k = sp.Integer(2), 3
    Pr, Qr = dominating_pair(two, R(1, 10))

    def counts() -> str | None:
        # the count of 1s (with the delta flags) is a deterministic post-processing of the product of
        # three (log 2, 1/10) pairs; it is also sufficient, so the divergence is unchanged
        full = hockey_stick_product(Pr, Qr, k, two, {})
        if isinstance(full, str):
            return full
        # pushforward to (flag0, flag3, number of 1s): outputs with a 0 have Q = 0, with a 3 have P = 0
        pz, qz = R(0), R(0)
        c = (1 - R(1, 10)) ** k / (1 + two) ** k
        tot = R(0)
        for n1 in range(k + 1):
            pz = sp.binomial(k, n1) * c * two**n1
            qz = sp.binomial(k, n1) * c * two ** (k - n1)
            tot += max(pz - two * qz, 0)
        tot += 1 - (1 - R(1, 10)) ** k  # outputs containing a 0 (Q = 0)
        if sp.simplify(full - tot) != 0:
            return f"product {full} != pushforward {tot}"
        return None

    def tie() -> str | None:
        from exactdp import Composition, delta

        got = delta(Composition.homogeneous("log(2)", "1/10", 3), "log(8)", method="basic", digits=30)
        hs = hockey_stick_product(Pr, Qr, k, sp.Integer(8), {})
        if not got.lower >= hs:
            return f"basic gives {got.lower_str()} < the divergence {hs} of a post-processing of the composition"
        return None

    return Derivation(
        "post_processing",
        "post-processing by any Markov kernel on finite output spaces cannot increase delta(eps)",
        "Dwork-Roth 2014 Prop 2.1; KOV15 section 2 (data processing)",
        [
            Equal("linearity: PK(T) - e^eps QK(T) = sum_y K(y,T) (P(y) - e^eps Q(y)) (|Y| = 3)",
                  lhs, sum(Ki * (Pi - x * Qi) for Pi, Qi, Ki in zip(P, Q, K))),
            NonNegative("case P(y) - e^eps Q(y) = a >= 0, K = 1/(1+v) in (0,1]: (a)_+ - K a = a (1 - K) >= 0",
                        a - a / (1 + v)),
            NonNegative("case P(y) - e^eps Q(y) = -b < 0: (-b)_+ - K (-b) = K b >= 0", 0 + b / (1 + v)),
            Computed("example: the number of 1s of three (log 2, 1/10) pairs is a sufficient post-processing; "
                     "its divergence at log 2 equals that of the product", fn=counts),
            Implementation("exactdp basic: delta of 3 x (log 2, 1/10) at log 8 is >= the divergence of the product there",
                           fn=tie),
        ],
    )


def poisson_subsampling() -> Derivation:
    """Poisson subsampling with rate p turns (eps, delta) into (log(1 + p (e^eps - 1)), p delta)
    (Steinke 2022 Thm 29; Balle-Barthe-Gaboardi 2018)."""
    x, d, p, A, B, u, v, cp = pos("x delta p A B u v c")
    y = 1 + p * (x - 1)  # e^{eps'}
    c = (1 - p) * (x - 1) - 1

    def tie() -> str | None:
        from exactdp import Composition, epsilon

        # eps = log 2, delta = 1/100, p = 1/10: each subsampled step is (log(11/10), 1/1000)-DP
        comp = Composition.homogeneous("log(11/10)", "1/1000", 5)
        return enclosure_contains(epsilon(comp, "5/1000", method="basic", digits=30),
                                  5 * sp.log(1 + R(1, 10) * (2 - 1)))

    return Derivation(
        "poisson_subsampling",
        "Poisson subsampling at rate p: (eps, delta)-DP becomes (log(1 + p(e^eps - 1)), p delta)-DP",
        "Steinke 2022 (arXiv:2210.00597) section 6.1 Thm 29; Balle-Barthe-Gaboardi NeurIPS 2018",
        [
            Equal("with A = P[M(S+u) in T] <= e^eps B + delta, B = P[M(S) in T]: p (e^eps B + delta) + (1-p) B "
                  "= e^{eps'} B + p delta", p * (x * B + d) + (1 - p) * B, y * B + p * d),
            Equal("the other direction: e^{eps'} (p A + (1-p) B) + p delta - B = p(1-p)(e^eps-1)((e^eps-1) A + delta) "
                  "- p c (e^eps A + delta - B), c = (1-p)(e^eps-1) - 1",
                  y * (p * A + (1 - p) * B) + p * d - B,
                  p * (1 - p) * (x - 1) * ((x - 1) * A + d) - p * c * (x * A + d - B)),
            NonNegative("first term >= 0 (p = 1/(1+v), e^eps = 1 + u)", p * (1 - p) * (x - 1) * ((x - 1) * A + d),
                        {p: 1 / (1 + v), x: 1 + u}),
            NonNegative("if c < 0 the second term is -p c (e^eps A + delta - B) >= 0 (write -c = c' > 0, "
                        "e^eps A + delta - B = v >= 0 by hypothesis)", p * cp * v),
            Equal("if c >= 0 use the direct form: e^{eps'} p A + p c B + p delta", y * (p * A + (1 - p) * B) + p * d - B,
                  y * p * A + p * c * B + p * d),
            NonNegative("and eps' <= eps: e^eps - e^{eps'} = (1-p)(e^eps - 1) >= 0", x - y, {p: 1 / (1 + v), x: 1 + u}),
            Implementation("exactdp basic: 5 subsampled steps (log(11/10), 1/1000) at total delta 5/1000 give 5 log(1 + (2-1)/10)",
                           fn=tie),
        ],
    )


def replace_one_sampling() -> Derivation:
    """The pairs of docs/mathematics.md §9: the mixture identity behind Theorem 9.3 (a fixed batch
    without replacement), the reversal identity that gives its eps < 0 half, the nonnegative mass
    at 0 of the symmetrised pair, and the diluted pair of Theorem 9.2; tied to the engine."""
    g, a, A, B, PE, QE = pos("gamma alpha A_E B_E P_E Q_E")
    s, t, p0, u, v = pos("s t p_0 u v")
    q = sp.symbols("q", positive=True)

    def tie() -> str | None:
        from exactdp import optimal_delta
        from exactdp.model.generic import PureDP
        from exactdp.model.mechanisms import PoissonSampled, SampledWithoutReplacement

        # RR(log 3): A = (3/4, 1/4), B = (1/4, 3/4); a batch of 1 of 2 mixes to (1/2, 1/2): at e^eps = 3/2
        # the divergence is (1/2 - 3/2 * 1/4) = 1/8; the diluted pair at q = 1/2 is (1/2)(3/4 - 3/2 * 1/4) = 3/16
        why = exact_or_contains(optimal_delta([SampledWithoutReplacement(PureDP("log(3)"), 1, 2)], "log(3/2)",
                                              digits=30), R(1, 8))
        return why or exact_or_contains(optimal_delta([PoissonSampled(PureDP("log(3)"), "1/2", relation="replace-one")],
                                                      "log(3/2)", digits=30), R(3, 16))

    return Derivation(
        "replace_one_sampling",
        "a fixed batch without replacement: H_a((1-g)B + gA || B) = g H_{1+(a-1)/g}(A || B); H_a(P||Q) = 1 - a + "
        "a H_{1/a}(Q||P); the symmetrised pair's mass at 0 is (1-g)(s - t) + p_0 >= 0; the diluted pair",
        "Balle-Barthe-Gaboardi NeurIPS 2018 Thm 2 and Thm 10; Zhu-Dong-Wang AISTATS 2022 Thm 11; docs/mathematics.md §9",
        [
            Equal("on any set E: (1-g) B(E) + g A(E) - a B(E) = g (A(E) - (1 + (a-1)/g) B(E)), so the mixture's "
                  "divergence at a is g times the base's at 1 + (a-1)/g", (1 - g) * B + g * A - a * B,
                  g * (A - (1 + (a - 1) / g) * B)),
            Equal("on any set E: P(E) - a Q(E) = 1 - a + a (Q(E^c) - P(E^c)/a), so H_a(P||Q) = 1 - a + a H_{1/a}(Q||P)",
                  PE - a * QE, 1 - a + a * ((1 - QE) - (1 - PE) / a)),
            Equal("mass at 0: with s = A(L>0), t = B(L>0) = A(L<0), p_0 = A(L=0), 1 = s + t + p_0, "
                  "1 - (g s + (1-g) t) - t = (1-g)(s - t) + p_0", (s + t + p0) - (g * s + (1 - g) * t) - t,
                  (1 - g) * (s - t) + p0),
            NonNegative("and it is >= 0 when s >= t (write s = t + u, and g = 1/(1+v) in (0, 1))", (1 - g) * u + p0,
                        {g: 1 / (1 + v)}),
            Equal("the diluted pair: (1-q)(1 - a) + q (A(E) - a B(E)) on E plus the separate point, the joint-convexity "
                  "bound (1-q)(1-a) + q H_a(A||B) for a < 1", (1 - q) * (1 - a) + q * (A - a * B),
                  ((1 - q) * 1 + q * A) - a * ((1 - q) * 1 + q * B)),
            Implementation("exactdp: one batch of 1 of 2 of RR(log 3) at e^eps = 3/2 is 1/8; the diluted pair at q = 1/2 "
                           "is 3/16", fn=tie),
        ],
    )


def exact_or_contains(enc: object, value: sp.Expr) -> str | None:
    """None when the enclosure is exactly ``value`` or contains it within 10^-20 (relative)."""
    from .framework import exact_equals

    why = exact_equals(enc, value)
    return None if why is None else enclosure_contains(enc, value)


def truncated_sampling() -> Derivation:
    """The identities behind docs/mathematics.md §9, Theorems 9.4 and 9.5: the batch T of the other
    records is independent of K given K >= B, the conditional rate g in closed form, the linearity that
    makes the replace-one pair one diluted pair, and dp_accounting's replace-special randomized response
    written by eps; tied to the engine."""
    m, k, q, b, n, t, g, a, A, r, kk = pos("m k q B N t g a A_E r K")
    f = sp.factorial

    def c(x: sp.Expr, y: sp.Expr) -> sp.Expr:
        return f(x) / (f(y) * f(x - y))

    def tie() -> str | None:
        from fractions import Fraction

        from exactdp import optimal_delta
        from exactdp.model.special import SpecialRandomizedResponse
        from exactdp.model.truncation import truncation_weights

        if truncation_weights(Fraction(1, 2), 1, 3) != (Fraction(3, 4), Fraction(2, 9)):
            return "the truncation weights of (q, B, N) = (1/2, 1, 3) are not (3/4, 2/9)"
        # RR over 4 buckets with e^eps = 5 against the uniform output, at e^eps = 3/2: remove 5/8 - 3/8 = 1/4,
        # add 3 (1/4 - 3/16) = 3/16; the larger is 1/4
        return exact_or_contains(optimal_delta([SpecialRandomizedResponse("log(5)", 4)], "log(3/2)", digits=30),
                                 sp.Rational(1, 4))

    return Derivation(
        "truncated_sampling",
        "the truncated Poisson batch: P(T = tau, K = k) = P(K = k)/C(N-1, B) for |tau| = B; "
        "q E[B/(K+1); K >= B] = B P(Bin(N, q) >= B+1)/N; the replace-one rate (1-t) q + t g; "
        "replace-special randomized response",
        "docs/mathematics.md §9, Theorems 9.4 and 9.5; dp_accounting's from_truncated_subsampled_gaussian_mechanism "
        "and from_randomized_response",
        [
            Equal("a fixed B-subset tau of the N-1 others is the truncated batch with K = k others sampled with "
                  "probability q^k (1-q)^(N-1-k) C(N-1-B, k-B) / C(k, B), which is P(K = k) / C(N-1, B): "
                  "T is uniform and independent of K given K >= B",
                  c(n - 1 - b, kk - b) / c(kk, b), c(n - 1, kk) / c(n - 1, b)),
            Equal("each term of E[q B/(K+1); K >= B], K ~ Bin(m, q), m = N - 1, is B/(m+1) times the term k+1 of "
                  "Bin(m+1, q): q C(m,k) q^k (1-q)^(m-k)/(k+1) = C(m+1,k+1) q^(k+1) (1-q)^(m-k)/(m+1)",
                  q * c(m, k) * q**k * (1 - q)**(m - k) / (k + 1),
                  c(m + 1, k + 1) * q**(k + 1) * (1 - q)**(m - k) / (m + 1)),
            Equal("replace-one: the labelled mixture of the diluted pairs at rates q (weight 1-t) and g (weight t) "
                  "has the profile of the diluted pair at rate (1-t) q + t g, on every event (a < 1 shown)",
                  (1 - t) * ((1 - q) * (1 - a) + q * A) + t * ((1 - g) * (1 - a) + g * A),
                  (1 - ((1 - t) * q + t * g)) * (1 - a) + ((1 - t) * q + t * g) * A),
            Equal("replace-special: dp_accounting's randomized response (noise p, k buckets) keeps the bucket w.p. "
                  "1 - p + p/k = e^eps/(e^eps + k - 1) with e^eps = 1 + k(1-p)/p = r",
                  1 - (k / (r + k - 1)) + (k / (r + k - 1)) / k, r / (r + k - 1)),
            Implementation("exactdp: the weights of (1/2, 1, 3) are (3/4, 2/9); RR(log 5, 4 buckets) against the "
                           "uniform output at e^eps = 3/2 is 1/4", fn=tie),
        ],
    )
