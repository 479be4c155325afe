"""Structural properties: group privacy, post-processing on finite output spaces, and privacy
amplification by Poisson subsampling."""

from __future__ import annotations

import sympy as sp

from .framework import Computed, Derivation, Equal, Implementation, NonNegative, enclosure_contains, pos
from .optimal import dominating_pair, hockey_stick_product

__all__ = ["group_privacy", "post_processing", "poisson_subsampling", "replace_one_sampling", "truncated_sampling",
           "special_randomized_response", "replacement_sampling", "gdp_gaussian_shift",
           "fixed_batch_attained"]

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


def _hockey_stick_atoms(P: list[sp.Expr], Q: list[sp.Expr], a: sp.Expr) -> sp.Expr:
    """H_a(P || Q) = sum max(P_i - a Q_i, 0) of two laws on the same finite outputs (exact rationals)."""
    return sum((max(p - a * q, sp.Integer(0)) for p, q in zip(P, Q, strict=True)), sp.Integer(0))


def _product(P: list[sp.Expr], k: int) -> list[sp.Expr]:
    """The k-fold product law of P on the k-tuples of its outputs (in lexicographic order)."""
    out: list[sp.Expr] = [sp.Integer(1)]
    for _ in range(k):
        out = [u * p for u in out for p in P]
    return out


def special_randomized_response() -> Derivation:
    """The identities behind docs/mathematics.md §9, Theorem 9.5: k-ary randomized response against the
    uniform output of the special value (replace-special) is a pair of laws on k buckets with two losses;
    the two orders are each other's reversal and agree at a = 1; tied to the engine on two runs by an exact
    sum over all 16 outputs."""
    x, k, a = pos("x k a")  # x = e^eps, k buckets, a = e^eps_g
    Z = x + k - 1
    p_true, p_other, q_true, q_other = x / Z, 1 / Z, 1 / k, 1 / k
    rem_mid = p_true - a * q_true              # H_a(R(x) || U) for k/Z <= a <= k x/Z: the true bucket only
    add_mid = (k - 1) * (q_other - a * p_other)  # H_a(U || R(x)) for Z/(k x) <= a <= Z/k: the other buckets

    def tie() -> str | None:
        from exactdp import optimal_delta
        from exactdp.model.special import SpecialRandomizedResponse

        # two runs of RR(log 5, 4 buckets) at e^eps_g = 3/2, both orders summed over all 4^2 outputs
        xv, kv, av = sp.Integer(5), 4, R(3, 2)
        P = [xv / (xv + kv - 1)] + [1 / (xv + kv - 1)] * (kv - 1)
        Q = [R(1, kv)] * kv
        P2, Q2 = _product(P, 2), _product(Q, 2)
        want = max(_hockey_stick_atoms(P2, Q2, av), _hockey_stick_atoms(Q2, P2, av))
        if want != R(45, 128):
            return f"the exact sum over the 16 outputs is {want}, not 45/128"
        return exact_or_contains(optimal_delta([SpecialRandomizedResponse("log(5)", 4)] * 2, "log(3/2)", digits=30),
                                 want)

    return Derivation(
        "special_randomized_response",
        "replace-special randomized response: R(x) vs uniform U has losses log(k e^eps/Z) and log(k/Z), "
        "Z = e^eps + k - 1; H_a(R || U) = 1 - a + a H_{1/a}(U || R); the two orders agree at a = 1; "
        "the remove order's eps is log(k e^eps/Z) <= eps",
        "docs/mathematics.md §9, Theorem 9.5; dp_accounting's from_randomized_response (REPLACE_SPECIAL)",
        [
            Equal("R(x) is a law: e^eps/Z + (k-1)/Z = 1", p_true + (k - 1) * p_other, 1),
            Equal("U is a law: 1/k + (k-1)/k = 1", q_true + (k - 1) * q_other, 1),
            Equal("the true bucket's loss: (e^eps/Z)/(1/k) = k e^eps/Z", p_true / q_true, k * x / Z),
            Equal("another bucket's loss: (1/Z)/(1/k) = k/Z", p_other / q_other, k / Z),
            Equal("the reversal H_a(R || U) = 1 - a + a H_{1/a}(U || R) on the middle segment (the true bucket "
                  "above a in one order is the other buckets above 1/a in the other)",
                  rem_mid, 1 - a + a * add_mid.subs(a, 1 / a)),
            Equal("at a = 1 both orders are the total variation (k-1)(e^eps - 1)/(k Z)",
                  rem_mid.subs(a, 1) - add_mid.subs(a, 1), 0),
            NonNegative("the remove order's largest loss is at most eps: e^eps - k e^eps/Z = e^eps (e^eps - 1)/Z >= 0 "
                        "(x = 1 + u)", x - k * x / Z, {x: 1 + sp.Symbol("u", positive=True)}),
            Implementation("exactdp: two runs of RR(log 5, 4 buckets) under replace-special at e^eps_g = 3/2 are "
                           "45/128 (the add order; remove gives 19/64), the exact sum over all 16 outputs", fn=tie),
        ],
    )


def replacement_sampling() -> Derivation:
    """The identities behind docs/mathematics.md §9, Theorem 9.6: the binomial weights of the count J of
    draws of the changed slot sum to 1, the labelled pair's profile is the b_j-mixture of the Gaussian
    profiles (labels are seen, so H_a is linear over them), each Gaussian pair is symmetric; tied to the
    engine at one run."""
    n, v, xx = pos("N v x")
    b = lambda mm, j: sp.binomial(mm, j) * (1 / n) ** j * (1 - 1 / n) ** (mm - j)  # noqa: E731

    def weights_sum() -> str | None:
        for mm in range(1, 9):
            if sp.simplify(sum(b(mm, j) for j in range(mm + 1)) - 1) != 0:
                return f"the weights of M = {mm} do not sum to 1"
            if sp.simplify(sum(j * b(mm, j) for j in range(mm + 1)) - sp.Integer(mm) / n) != 0:
                return f"the weights of M = {mm} do not have mean M/N"
        return None

    def labelled() -> str | None:
        """On M = 3 draws from N = 4, with finite pairs on each label (j = 0: one law against itself; j >= 1:
        binary pairs of ratio (j+1) and 1/(j+1)), H_a of the labelled pair, summed over all its outputs,
        is sum_j b_j H_a(P_j || Q_j) at a = 1/2, 1, 3/2, 5/2: the labels are seen, so the best event
        is the union of the best event of each label."""
        pairs = [([R(1, 3), R(2, 3)], [R(1, 3), R(2, 3)])] + \
            [([R(j + 1, j + 2), R(1, j + 2)], [R(1, j + 2), R(j + 1, j + 2)]) for j in range(1, 4)]
        bs = [b(3, j).subs(n, 4) for j in range(4)]
        if sum(bs) != 1:
            return "the weights of (M, N) = (3, 4) do not sum to 1"
        P = [bj * p for bj, (Pj, _) in zip(bs, pairs, strict=True) for p in Pj]
        Q = [bj * q for bj, (_, Qj) in zip(bs, pairs, strict=True) for q in Qj]
        for av in (R(1, 2), sp.Integer(1), R(3, 2), R(5, 2)):
            mix = sum((bj * _hockey_stick_atoms(Pj, Qj, av) for bj, (Pj, Qj) in zip(bs, pairs, strict=True)),
                      sp.Integer(0))
            if _hockey_stick_atoms(P, Q, av) != mix:
                return f"the labelled pair's H_a at a = {av} is not the mixture of the pairs' H_a"
            if _hockey_stick_atoms(*pairs[0], av) != max(1 - av, sp.Integer(0)):
                return f"H_a(R || R) at a = {av} is not (1 - a)_+"
        return None

    def tie() -> str | None:
        from exactdp import optimal_delta
        from exactdp.model.mechanisms import Gaussian
        from exactdp.model.replacement import SampledWithReplacement

        # M = 3 draws from N = 4, sigma 1, D = 1, at eps = 1/2: sum_j b_j delta_j(1/2) with the Gaussian
        # delta_mu(e) = Phi(mu/2 - e/mu) - e^e Phi(-mu/2 - e/mu), mu = j, and b_0 (1 - e^(1/2))_+ = 0
        e = R(1, 2)
        phi = lambda z: (1 + sp.erf(z / sp.sqrt(2))) / 2  # noqa: E731
        want = sum((b(3, j).subs(n, 4) * (phi(sp.Integer(j) / 2 - e / j) - sp.exp(e) * phi(-sp.Integer(j) / 2 - e / j))
                    for j in range(1, 4)), sp.Integer(0))
        return enclosure_contains(optimal_delta([SampledWithReplacement(Gaussian("1"), 3, 4)], "1/2", digits=30), want)

    return Derivation(
        "replacement_sampling",
        "a Gaussian batch drawn with replacement: b_j = C(M, j) N^-j (1 - 1/N)^(M-j) sum to 1 (mean M/N); the "
        "labelled pair's profile is sum_j b_j H_a(N(jD) || N(0)), the j = 0 term (1 - a)_+; each Gaussian pair "
        "is symmetric",
        "docs/mathematics.md §9, Theorem 9.6; dp_accounting's SampledWithReplacementDpEvent",
        [
            Computed("the binomial weights of M = 1..8 draws sum to 1 and have mean M/N (symbolic in N)",
                     fn=weights_sum),
            Computed("the labelled pair's H_a is the b_j-mixture of the pairs' H_a (the labels are seen), and a "
                     "law against itself gives (1 - a)_+: exact sums over all outputs of M = 3 draws from N = 4",
                     fn=labelled),
            Equal("the Gaussian pair at distance mu (v = mu^2) is symmetric: the loss law under P, N(v/2, v), times "
                  "e^-x is the loss law under Q, N(-v/2, v) (exponents)",
                  -(xx - v / 2) ** 2 / (2 * v) - xx, -(xx + v / 2) ** 2 / (2 * v)),
            Implementation("exactdp: 3 draws with replacement from 4 records, sigma 1, at eps = 1/2 is "
                           "sum_j b_j delta_j(1/2) (sympy at 50 digits)", fn=tie),
        ],
    )


def gdp_gaussian_shift() -> Derivation:
    """The GDP mu of eps-DP (the vertex of f_eps meets G_mu at mu = -2 Phi^-1(1/(1 + e^eps))), and the
    Gaussian-tail step of the exactness of M = sqrt(sum m_i^2) for compositions of Gaussian shifts:
    (1 - G_mu(a)) / (1 - G_M(a)) -> 0 as a -> 0 for mu < M (docs/tradeoff.md §5, Theorems 5.1-5.2)."""
    x, t, d, big = pos("x t d M")
    a = 1 / (1 + x)  # x = e^eps
    inv = lambda p: sp.sqrt(2) * sp.erfinv(2 * p - 1)  # noqa: E731  Phi^-1
    cdf = lambda z: (1 + sp.erf(z / sp.sqrt(2))) / 2  # noqa: E731  Phi
    dens = lambda z: sp.exp(-z**2 / 2) / sp.sqrt(2 * sp.pi)  # noqa: E731  the normal density
    small = big - d  # mu = M - d < M
    # Mills: z/(1 + z^2) phi(z) <= Phibar(z) <= phi(z)/z for z > 0, so the tail ratio is at most
    # phi(t - mu)/phi(t - M) (1 + (t - M)^2)/((t - mu)(t - M)) for t > M
    bound = sp.exp(-d * t + (big**2 - small**2) / 2) * (1 + (t - big) ** 2) / ((t - small) * (t - big))

    def tie() -> str | None:
        from fractions import Fraction

        from exactdp import Composition, tradeoff
        from exactdp.core.enclosure import Enclosure
        from exactdp.engines.gdp import gdp_mu, shifts

        up = gdp_mu(shifts(Composition.of("laplace:scale=1")), Fraction(0), 60).upper
        assert isinstance(up, Fraction)
        why = enclosure_contains(Enclosure.exact_value(up), -2 * inv(1 / (1 + sp.E)))
        if why:
            return why
        mu = tradeoff("gaussian:sigma=1/2,q=1/10,count=4", ["1/10"], digits=3).gdp_mu
        return None if mu.exact == 4 else f"4 subsampled Gaussians of shift 2: mu {mu}, not exactly 4"

    return Derivation(
        "gdp_gaussian_shift",
        "eps-DP is mu-GDP iff mu >= -2 Phi^-1(1/(1 + e^eps)); Gaussian tails make a Gaussian-shift composition "
        "exactly sqrt(sum m_i^2)-GDP",
        "Dong, Roth and Su 2022 (GDP of eps-DP; composition of GDP); docs/tradeoff.md §5",
        [
            Equal("the two pieces of f_eps meet on the diagonal at a* = 1/(1 + e^eps): 1 - e^eps a* = a*",
                  1 - x * a, a),
            Equal("and e^-eps (1 - a*) = a*", (1 - a) / x, a),
            Equal("Phi(-Phi^-1(a*)) = 1 - a* (erf is odd), so Phi^-1(1 - a*) = -Phi^-1(a*) and "
                  "mu* = Phi^-1(1 - a*) - Phi^-1(a*) = -2 Phi^-1(a*)", cdf(-inv(a)), 1 - a),
            Equal("G_mu*(a*) = Phi(Phi^-1(1 - a*) - mu*) = Phi(-Phi^-1(a*) + 2 Phi^-1(a*)) = a*: the vertex lies on "
                  "G_mu* (and below it for a smaller mu, G decreasing in mu)", cdf(-inv(a) + 2 * inv(a)), a),
            Equal("the normal densities' ratio phi(t - mu)/phi(t - M) = e^{-(M - mu) t + (M^2 - mu^2)/2}",
                  dens(t - small) / dens(t - big), sp.exp(-d * t + (big**2 - small**2) / 2)),
            Equal("the Mills bound of the tail ratio tends to 0 as t -> inf (d = M - mu > 0)",
                  sp.limit(bound, t, sp.oo), 0),
            Implementation("exactdp: one Laplace(1) step's mu upper end is -2 Phi^-1(1/(1 + e)) (60 digits); "
                           "4 subsampled Gaussians of shift 2 have mu exactly 4", fn=tie),
        ],
    )


def fixed_batch_attained() -> Derivation:
    """The lower end of k runs of a fixed batch (docs/mathematics.md §9, Theorem 9.7): the batch holds the
    changed record with chance m/n, so the attaining datasets' one run is ((1-g)B + gA, B), and k runs of
    independent batches are its k-fold product; tied to the engine on randomized response."""
    n, m, g, a, A, B = pos("n m gamma alpha A_E B_E")
    f = sp.factorial

    def tie() -> str | None:
        from exactdp import optimal_delta
        from exactdp.model.attained import attained
        from exactdp.model.composition import Composition
        from exactdp.model.generic import PureDP
        from exactdp.model.mechanisms import SampledWithoutReplacement

        # RR(log 3), a batch of 1 of 2: one run on (1, 0) is (1/2, 1/2) against B = (1/4, 3/4) on (0, 0).
        # Two runs at e^eps = 3/2: the remove order sum (P^2 - 3/2 Q^2)_+ = 1/4 - 3/32 = 5/32, the add order
        # (9/16 - 3/2 * 1/4) = 3/16; the larger is 3/16, inside the two-sided answer and its attained end.
        comp = Composition(((SampledWithoutReplacement(PureDP("log(3)"), 1, 2), 2),))
        got = optimal_delta(comp, "log(3/2)", digits=20)
        if not got.lower <= sp.Rational(3, 16) <= got.upper:
            return f"3/16 is not inside the two-sided answer {got}"
        return exact_or_contains(optimal_delta(attained(comp), "log(3/2)", digits=30), sp.Rational(3, 16))

    return Derivation(
        "fixed_batch_attained",
        "k runs of a fixed batch: the changed record is in a uniform m-subset of n with chance C(n-1, m-1)/C(n, m) "
        "= m/n, so the attaining datasets' run is ((1-g)B + gA, B) and k runs its k-fold product",
        "docs/mathematics.md §9, Theorem 9.7",
        [
            Equal("the chance that the batch holds the changed record: C(n-1, m-1)/C(n, m) = m/n",
                  f(n - 1) / (f(m - 1) * f(n - m)) / (f(n) / (f(m) * f(n - m))), m / n),
            Equal("on any set E, one run on (x = 1, the rest 0): g A(E) + (1-g) B(E), the remove order's P",
                  g * A + (1 - g) * B, (1 - g) * B + g * A),
            Equal("the add order is the same two laws swapped, so H_a of either order is attained: "
                  "(1-g)B(E) + gA(E) - a B(E) = g A(E) - (a - 1 + g) B(E)", (1 - g) * B + g * A - a * B,
                  g * A - (a - 1 + g) * B),
            Implementation("exactdp: two runs of a batch of 1 of 2 of RR(log 3) at e^eps = 3/2: the attaining "
                           "datasets give 3/16, inside the two-sided answer", fn=tie),
        ],
    )
