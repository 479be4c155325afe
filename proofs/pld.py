"""The rounding steps of the certified PLD engine (docs/pld.md §2-§5), checked symbolically."""

from __future__ import annotations

import itertools

import sympy as sp

from .framework import ByDerivative, Computed, Derivation, Equal, Implementation, NonNegative, pos

__all__ = ["pld_connect_the_dots", "pld_binning_and_truncation", "pld_fixed_point", "pld_fixed_off_lattice"]


def _hinge(x: sp.Expr) -> sp.Expr:
    return sp.Max(x, 0)


def pld_connect_the_dots() -> Derivation:
    """Connect-the-dots (docs/pld.md §2): splitting an atom of R between the grid points around it
    keeps its P-mass and Q-mean and never lowers the hockey-stick curve; the bin-mass formulas of
    exactdp.engines.pld.discrete are exactly that split, and they keep the total P-mass."""
    q, a, s, t, u = pos("q a s t u")
    al = sp.Symbol("alpha", positive=True)
    # a < R < b on the grid cell [a, b]:  R = a + s, b = R + t
    R = a + s
    b = R + t
    q_lo = q * (b - R) / (b - a)
    q_hi = q * (R - a) / (b - a)

    def formulas_are_the_split() -> str | None:
        # 3 bins [A0,A1], [A1,A2], [A2,A3] with one atom each (Q-mass w_i at ratio r_i inside bin i),
        # a left tail (P-mass PL) and a right tail (ratio r3 > A3, Q-mass w3): the bin-mass formulas
        # must give the same P-masses as splitting each atom by hand.
        A = sp.symbols("A0:4", positive=True)
        w = sp.symbols("w0:4", positive=True)
        r = sp.symbols("r0:4", positive=True)
        PL = sp.symbols("PL", nonnegative=True)
        Pb = [w[i] * r[i] for i in range(3)]
        Qb = [w[i] for i in range(3)]
        D = [A[i + 1] - A[i] for i in range(3)]
        G = [Pb[i] - A[i] * Qb[i] for i in range(3)]
        tt = [G[i] / D[i] for i in range(3)]
        QR, PR = w[3], w[3] * r[3]
        p = [PL + A[0] * (Qb[0] - tt[0]),
             A[1] * (tt[0] + Qb[1] - tt[1]),
             A[2] * (tt[1] + Qb[2] - tt[2]),
             A[3] * (tt[2] + QR)]
        p_inf = PR - A[3] * QR
        # by hand: atom i in [A_i, A_{i+1}] puts Q-mass w_i (A_{i+1}-r_i)/D_i at A_i, w_i (r_i-A_i)/D_i at A_{i+1}
        hand = [PL, sp.Integer(0), sp.Integer(0), sp.Integer(0)]
        for i in range(3):
            hand[i] += A[i] * w[i] * (A[i + 1] - r[i]) / D[i]
            hand[i + 1] += A[i + 1] * w[i] * (r[i] - A[i]) / D[i]
        hand[3] += A[3] * w[3]              # the flat chord: Q-mass above the grid lands on the top point...
        hand_inf = w[3] * r[3] - A[3] * w[3]  # ...and the rest of its P-mass at +inf
        for i in range(4):
            if sp.simplify(p[i] - hand[i]) != 0:
                return f"p_{i}: formula {sp.simplify(p[i])} != split {sp.simplify(hand[i])}"
        if sp.simplify(p_inf - hand_inf) != 0:
            return "p_inf differs from the split"
        total = sum(p) + p_inf - (PL + sum(Pb) + PR)
        if sp.simplify(total) != 0:
            return f"the total P-mass is not kept: {sp.simplify(total)}"
        return None

    def engine() -> str | None:
        from fractions import Fraction

        from flint import arb, ctx

        from exactdp.engines.pld.discrete import discretize
        from exactdp.engines.pld.laws import power
        from exactdp.engines.pld.models import LaplacePair
        from exactdp.engines.pld.queries import delta_lower, delta_upper

        # 2 x Laplace(b = 2): delta(0.2) = 0.195615944757 (docs/mathematics.md §7), bracketed
        ref = Fraction(195615944757, 10**12)
        with ctx.workprec(128):
            up, lo = discretize(LaplacePair(Fraction(1, 2)), Fraction(1, 1000), -501, 500, prec=128)
            e = arb(1) / 5
            hi_v = delta_upper(power(up, 2), e).upper()
            lo_v = delta_lower(power(lo, 2), e).lower()
        if not (lo_v < arb(ref.numerator) / ref.denominator + arb(10) ** -12
                and arb(ref.numerator) / ref.denominator - arb(10) ** -12 < hi_v):
            return f"the bracket [{lo_v}, {hi_v}] misses {ref}"
        return None

    return Derivation(
        "pld_connect_the_dots",
        "connect-the-dots is a dominating pair on the grid: mass kept, Q-mean kept, curve never lower",
        "Doroshenko, Ghazi, Kamath, Kumar, Manurangsi, PETS 2022; docs/pld.md §2",
        [
            Equal("the split keeps the Q-mass", q_lo + q_hi, q),
            Equal("the split keeps the Q-mean of R (so the P-mass: p = a q_lo + b q_hi)", a * q_lo + b * q_hi, q * R),
            Equal("for alpha <= a both split terms are positive and the curves agree: "
                  "(a - alpha) q_lo + (b - alpha) q_hi = (R - alpha) q", (a - al) * q_lo + (b - al) * q_hi, (R - al) * q),
            Equal("for a <= alpha <= R, with alpha = a + s', R = alpha + t', b = R + u': the split's term minus the "
                  "atom's is q (t'+u')(s'+t')/(s'+t'+u') - q t' = q s' u'/(s'+t'+u')",
                  q * (t + u) * (s + t) / (s + t + u) - q * t, q * s * u / (s + t + u)),
            NonNegative("so the split's curve is above the atom's there", q * s * u / (s + t + u)),
            NonNegative("for R <= alpha <= b the split keeps (b - alpha) q_hi >= 0 where the atom has 0 "
                        "(alpha = R + s', b = alpha + u')", u * q * (s + t) / (s + t + u)),
            Computed("the bin-mass formulas of exactdp.engines.pld.discrete are exactly the split of every atom, "
                     "and keep the total P-mass", fn=formulas_are_the_split),
            Implementation("exactdp.engines.pld: 2 x Laplace(b = 2) at eps 0.2 is bracketed around 0.195615944757", fn=engine),
        ],
    )


def pld_binning_and_truncation() -> Derivation:
    """Binning (docs/pld.md §3) and composition/truncation (§4-§5): merging outputs never raises the
    curve, a cut is a lower bound, the +inf mass composes monotonically, moving mass up only raises delta."""
    x, y = sp.symbols("x y", real=True)
    s1, s2 = pos("s1 s2")
    c, d = pos("c d")

    def merge_cases() -> str | None:
        # (x + y)_+ <= x_+ + y_+ for every sign pattern of x, y and of x + y
        for sx, sy in itertools.product((1, -1), repeat=2):
            X, Y = sx * s1, sy * s2
            for bigger in (s1, s2):  # which magnitude dominates when the signs differ
                sub = {s1: bigger + 1, s2: 1} if bigger is s1 else {s1: 1, s2: bigger + 1}
                lhs = _hinge(X + Y).subs(sub)
                rhs = (_hinge(X) + _hinge(Y)).subs(sub)
                diff = sp.simplify(rhs - lhs)
                if diff.is_nonnegative is not True:
                    return f"cannot show (x+y)_+ <= x_+ + y_+ for signs {sx, sy}: {diff}"
        return None

    def engine() -> str | None:
        from fractions import Fraction

        from exactdp import Composition
        from exactdp.api.optimal import optimal_epsilon
        from exactdp.engines.pld.engine import pld_epsilon

        comp = Composition.heterogeneous([("log(3/2)", 0, 4), ("log(2)", "0.001", 3)])
        exact = optimal_epsilon(comp, Fraction(1, 100), digits=20)
        br = pld_epsilon(comp, Fraction(1, 100), digits=4, max_seconds=30)
        if not (br.lower <= exact.upper and exact.lower <= br.upper):  # both certified: they must meet
            return f"the PLD bracket {br} misses the exact optimum {exact}"
        return None

    return Derivation(
        "pld_binning_and_truncation",
        "binning is a post-processing: merged outputs and cuts give lower bounds; composition and truncation keep the sides",
        "docs/pld.md §3-§5; Blackwell's theorem for binary experiments",
        [
            Computed("merging two outputs never raises the curve: (x + y)_+ <= x_+ + y_+ (every sign pattern)",
                     fn=merge_cases),
            NonNegative("a cut T is a lower bound: sum_T (P - a Q) <= sum (P - a Q)_+ since x_+ - x = (-x)_+ >= 0; "
                        "with x = -c < 0 the gap is c", c),
            Equal("the +inf mass of a product: 1 - (1 - a)(1 - b) = a + b - a b", 1 - (1 - c) * (1 - d), c + d - c * d),
            NonNegative("and it is non-decreasing in a on [0, 1]: d/da (a + b - a b) = 1 - b, with b = 1 - d' <= 1", d),
            Equal("moving P-mass from loss l to a larger loss l' = l + s1 raises 1 - e^{eps - L} by "
                  "e^{eps-l} - e^{eps-l'} = e^{eps-l'} (e^{s1} - 1)",
                  sp.exp(c - s2 + s1) - sp.exp(c - s2), sp.exp(c - s2) * (sp.exp(s1) - 1)),
            ByDerivative("and e^{s1} - 1 >= 0 for s1 >= 0 (so (1 - e^{eps-L})_+, non-decreasing in L, rises too)",
                         expr=sp.exp(s1) - 1, var=s1, lower=0,
                         derivative=NonNegative("d/ds1 (e^{s1} - 1) = e^{s1} > 0", sp.exp(s1))),
            Implementation("exactdp.engines.pld brackets the exact Murtagh-Vadhan optimum of 4 x log(3/2) + 3 x (log 2, 0.001)",
                           fn=engine),
        ],
    )


def pld_fixed_point() -> Derivation:
    """Fixed-point lattice products (docs/pld.md §7.1): floors and products of nonnegative lower
    bounds are lower bounds, so the composed integers are a sub-measure; its delta is a lower bound
    and adding the missing mass (each unit adds at most 1) an upper bound."""
    a, b, A, B = pos("a b A B")
    u, v = pos("u v")
    s = pos("s")

    def integer_layer() -> str | None:
        # the layer against an exact rational convolution: every composed integer at or below
        # the true mass, and the missing mass below one unit per coefficient per product
        from fractions import Fraction

        from flint import arb, arb_poly, ctx

        from exactdp.core.numbers import arb_of_fraction
        from exactdp.engines.pld import fixed
        from exactdp.engines.pld.laws import Law

        F = Fraction
        bits = 40
        masses = [{1: F(3, 4), -1: F(1, 4)}, {2: F(2, 3), -2: F(1, 3)}, {0: F(1, 7), 3: F(6, 7)}]
        laws, exact = [], {0: F(1)}
        for m in masses:
            lo, hi = min(m), max(m)
            with ctx.workprec(128):
                P = arb_poly([arb_of_fraction(m.get(j, F(0))) for j in range(lo, hi + 1)])
            laws.append(fixed.power(fixed.from_law(Law(F(1, 8), lo, P, None, arb(0), False, True, arb(0)), bits), 3))
            for _ in range(3):
                nxt: dict[int, Fraction] = {}
                for i, p in exact.items():
                    for j, q in m.items():
                        nxt[i + j] = nxt.get(i + j, F(0)) + p * q
                exact = nxt
        f = fixed.product(laws)
        got = {f.offset + f.stride * i: F(int(c), 2**bits) for i, c in enumerate(f.N.coeffs())}
        for j, p in got.items():
            if p > exact.get(j, F(0)):
                return f"the integer mass at {j} is {p}, above the exact {exact.get(j, F(0))}"
        missing = 1 - sum(got.values())
        if not 0 <= missing <= F(16 * len(exact), 2**bits):
            return f"missing mass {missing} outside [0, 16 * {len(exact)} units]"
        return None

    def engine() -> str | None:
        from fractions import Fraction

        from exactdp import Composition
        from exactdp.api.optimal import optimal_epsilon
        from exactdp.engines.pld.engine import pld_epsilon

        comp = Composition.heterogeneous([("0.1", 0, 200), ("0.3", 0, 70), ("0.05", "1e-8", 100)])
        exact = optimal_epsilon(comp, Fraction(1, 10**5), digits=25)
        br = pld_epsilon(comp, Fraction(1, 10**5), digits=20)
        if br.algorithm != "pld-lattice":
            return f"the lattice path was not taken ({br.algorithm})"
        if not (br.lower <= exact.upper and exact.lower <= br.upper):
            return f"the fixed-point bracket {br} misses the exact optimum {exact}"
        if (br.upper - br.lower) > Fraction(1, 10**19) * br.lower:
            return f"the fixed-point bracket {br} is wider than 20 digits"
        return None

    return Derivation(
        "pld_fixed_point",
        "on a lattice, floored integer products are a sub-measure of the composed law: its delta is a lower "
        "bound, and with the missing mass at +inf an upper bound",
        "docs/pld.md §7.1",
        [
            Equal("a product of lower bounds: A B - a b = (A - a) B + a (B - b)", A * B - a * b,
                  (A - a) * B + a * (B - b)),
            NonNegative("which is >= 0 when 0 <= a <= A and 0 <= b <= B (A = a + u, B = b + v); a coefficient "
                        "of a product is a sum of such products, and a floor only lowers it",
                        ((a + u) * (b + v) - a * b).expand(), {}),
            ByDerivative("above eps a lattice point weighs 1 - e^{eps - jh} = 1 - e^{-s} >= 0 (s = jh - eps > 0), "
                         "so delta is non-decreasing in every mass: the sub-measure gives a lower bound",
                         expr=1 - sp.exp(-s), var=s, lower=0,
                         derivative=NonNegative("d/ds (1 - e^{-s}) = e^{-s} > 0", sp.exp(-s))),
            NonNegative("and the weight is at most 1: 1 - (1 - e^{-s}) = e^{-s} >= 0, so each unit of missing "
                        "mass adds at most 1 to delta (the upper bound puts it at +inf)", sp.exp(-s)),
            Computed("the integer layer against exact rational convolutions: every composed mass at or "
                     "below the truth, the missing mass below one unit per coefficient per product",
                     fn=integer_layer),
            Implementation("exactdp.engines.pld's fixed-point lattice brackets the exact optimum of "
                           "200 x 0.1 + 70 x 0.3 + 100 x (0.05, 1e-8) at 1e-5 to 20 digits", fn=engine),
        ],
    )


def pld_fixed_off_lattice() -> Derivation:
    """Fixed point off the lattice and floors (docs/pld.md §7.2-§7.3): a binned law with P floored and
    Q rounded up bounds every cut from below; moving P-mass up is undone by a merge (a
    post-processing), so a lifted upper law still dominates."""
    P, Q, dp, dq, x = pos("P Q d_P d_Q x")
    m, a, t = pos("m a t")

    def pair_layer() -> str | None:
        # binned pairs composed in integers against exact rational convolutions
        from fractions import Fraction

        from flint import arb, arb_poly, ctx

        from exactdp.core.numbers import arb_of_fraction
        from exactdp.engines.pld import fixed
        from exactdp.engines.pld.laws import Law

        F = Fraction
        bits = 36
        specs = [({-1: F(1, 4), 1: F(3, 4)}, F(5, 7)), ({-2: F(1, 3), 2: F(2, 3)}, F(2, 3)), ({0: F(1, 2), 3: F(1, 2)}, F(9, 10))]
        laws, ep, eq = [], {0: F(1)}, {0: F(1)}
        for Pm, r in specs:
            Qm = {j: v * r for j, v in Pm.items()}
            lo, hi = min(Pm), max(Pm)
            with ctx.workprec(128):
                pp = arb_poly([arb_of_fraction(Pm.get(j, F(0))) for j in range(lo, hi + 1)])
                qq = arb_poly([arb_of_fraction(Qm.get(j, F(0))) for j in range(lo, hi + 1)])
            laws.append(fixed.from_law(Law(F(1, 8), lo, pp, qq, arb(0), False, False, arb(0)), bits, pair=True))
            for src, acc in ((Pm, ep), (Qm, eq)):
                nxt: dict[int, Fraction] = {}
                for i, p in acc.items():
                    for j, q in src.items():
                        nxt[i + j] = nxt.get(i + j, F(0)) + p * q
                acc.clear()
                acc.update(nxt)
        f = fixed.product(laws)
        assert f.Q is not None
        for i, (c, d) in enumerate(zip(f.N.coeffs(), f.Q.coeffs())):
            j = f.offset + i
            if F(int(c), 2**bits) > ep.get(j, F(0)):
                return f"P at {j} is {F(int(c), 2**bits)}, above the exact {ep.get(j, F(0))}"
            if F(int(d), 2**bits) < eq.get(j, F(0)):
                return f"tilted Q at {j} is {F(int(d), 2**bits)}, below the exact {eq.get(j, F(0))}"
        return None

    def engine() -> str | None:
        import itertools
        from fractions import Fraction

        import mpmath

        from exactdp import Composition
        from exactdp.engines.pld.engine import pld_delta

        vals = [Fraction(v, 10**6) for v in (123457, 234561, 345671, 456781, 98761, 301234, 411117, 199999)]
        eps = Fraction(1, 2)
        enc = pld_delta(Composition.heterogeneous([(v, 0, 1) for v in vals]), eps, digits=5)
        if enc.algorithm != "pld":
            return f"the off-lattice path was not taken ({enc.algorithm})"
        with mpmath.workdps(40):
            es = [mpmath.mpf(v.numerator) / v.denominator for v in vals]
            Z = mpmath.fprod(1 + mpmath.exp(e) for e in es)
            E = mpmath.fsum(es)
            s = mpmath.fsum(max(mpmath.mpf(0), mpmath.exp(mpmath.fsum(e for e, b in zip(es, S) if b))
                                - mpmath.exp(mpmath.mpf(1) / 2) * mpmath.exp(E - mpmath.fsum(e for e, b in zip(es, S) if b)))
                            for S in itertools.product((0, 1), repeat=len(es))) / Z
            lo = mpmath.mpf(enc.lower.numerator) / enc.lower.denominator
            hi = mpmath.mpf(enc.upper.numerator) / enc.upper.denominator
            if not lo <= s <= hi:
                return f"the floored fixed-point bracket [{lo}, {hi}] misses the sum over outputs {s}"
        return None

    return Derivation(
        "pld_fixed_off_lattice",
        "off the lattice, a binned law with P floored and tilted Q rounded up bounds delta from below, and "
        "lifting an upper law's low mass to a floor keeps it dominating",
        "docs/pld.md §7.2-§7.3",
        [
            Equal("a cut of the rounded pair against the true one: (P - e^x Q) - ((P - d_P) - e^x (Q + d_Q)) "
                  "= d_P + e^x d_Q", (P - sp.exp(x) * Q) - ((P - dp) - sp.exp(x) * (Q + dq)), dp + sp.exp(x) * dq),
            NonNegative("which is >= 0 for d_P, d_Q >= 0: P floored and Q rounded up only lower every cut "
                        "P(S) - e^eps Q(S) <= delta", dp + sp.exp(x) * dq),
            Equal("lifting P-mass m from loss a to a + t (t > 0): the outcomes (m, m e^{-a-t}) and "
                  "(0, m (e^{-a} - e^{-a-t})) merge back into (m, m e^{-a})",
                  m * sp.exp(-a - t) + m * (sp.exp(-a) - sp.exp(-a - t)), m * sp.exp(-a)),
            NonNegative("the added outcome's Q-mass m e^{-a} (1 - e^{-t}) with t = ln(1 + x), x >= 0, is "
                        "m e^{-a} x / (1 + x) >= 0: a valid pair, of which the unlifted one is a post-processing",
                        m * sp.exp(-a) * x / (1 + x)),
            Computed("binned pairs composed in integers against exact rational convolutions: P never above, "
                     "tilted Q never below", fn=pair_layer),
            Implementation("exactdp.engines.pld's floored fixed-point bracket contains delta(0.5) of eight off-grid "
                           "values summed over all 2^8 outputs", fn=engine),
        ],
    )
