"""The fixed-point layer off the lattice (exactdp/engines/pld/fixed.py, docs/pld.md §7.2-§7.3).

Upper laws are sub-measures of their dominating pairs with the missing mass at +inf; lower laws
keep P floored and tilted Q rounded up; floors drop (lower) or lift (upper) what no query looks
at.  Every check is against a computation that shares no code with the layer: exact Fraction
convolutions of the same pairs, and delta by summing over all 2^k outputs in mpmath.
"""

from __future__ import annotations

import itertools
import random
from fractions import Fraction

import mpmath
import pytest
from flint import arb, arb_poly, ctx
from hypothesis import given, settings
from hypothesis import strategies as st

from exactdp import Composition
from exactdp.core.numbers import arb_of_fraction
from exactdp.engines.pld import engine, fixed
from exactdp.engines.pld.build import Built, build
from exactdp.engines.pld.laws import Law
from exactdp.engines.pld.plan import plan
from exactdp.engines.pld.queries import delta_lower, delta_upper
from exactdp.engines.pld.refine import refine
from test_pld_fixed import convolve  # the exact Fraction convolution (a sibling test module)

F = Fraction
H = F(1, 8)


def pair_law(P: dict[int, Fraction], Qt: dict[int, Fraction]) -> Law:
    """A binned (lower) law with exact balls: P-masses and tilted Q-masses at grid indices."""
    lo, hi = min(P), max(P)
    with ctx.workprec(160):
        p = [arb_of_fraction(P.get(j, F(0))) for j in range(lo, hi + 1)]
        q = [arb_of_fraction(Qt.get(j, F(0))) for j in range(lo, hi + 1)]
    return Law(H, lo, arb_poly(p), arb_poly(q), arb(0), upper=False, exact=False, moved=arb(0))


def as_dict(f: fixed.FixedLaw, poly: object) -> dict[int, Fraction]:
    return {f.offset + f.stride * i: F(int(c), 2**f.bits) for i, c in enumerate(poly.coeffs())}  # type: ignore[attr-defined]


def test_pair_from_law_rounds_p_down_and_q_up() -> None:
    with ctx.workprec(60):  # balls of nonzero radius: the ends are what is rounded
        p = [arb(1) / 3, arb(2) / 7, arb(0)]
        q = [arb(1) / 5, arb(1) / 9, arb(1) / 11]
    law = Law(H, -1, arb_poly(p), arb_poly(q), arb(0), upper=False, exact=False, moved=arb(0))
    f = fixed.from_law(law, 40, pair=True)
    assert f.Q is not None
    with ctx.workprec(200):
        for i, c in enumerate(f.N.coeffs()):
            assert arb(int(c)) * arb(2) ** -40 <= p[i].lower()
            assert arb(int(c) + 1) * arb(2) ** -40 > p[i].lower()
        for i, c in enumerate(f.Q.coeffs()):
            assert arb(int(c)) * arb(2) ** -40 >= q[i].upper()
    # the output whose P floors to zero at the top is dropped from both (a restriction)
    assert f.N.length() == f.Q.length() == 2


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 4), st.integers(1, 9), st.integers(0, 9)), min_size=2, max_size=5),
       st.integers(20, 48))
def test_pair_products_bound_the_exact_convolution(specs: list[tuple[int, int, int]], bits: int) -> None:
    """P of the fixed product never above, tilted Q never below, the exact convolution of the pairs."""
    exact_p: dict[int, Fraction] = {0: F(1)}
    exact_q: dict[int, Fraction] = {0: F(1)}
    laws = []
    for units, num, qnum in specs:
        P = {-units: F(10 - num, 10), units: F(num, 10)}
        Qt = {j: v * F(10 + qnum, 20) for j, v in P.items()}  # tilted Q = P e^{jh - L}, a factor in (0, 1]
        laws.append(fixed.from_law(pair_law(P, Qt), bits, pair=True))
        exact_p, exact_q = convolve(exact_p, P), convolve(exact_q, Qt)
    f = fixed.product(laws)
    assert f.Q is not None
    got_p, got_q = as_dict(f, f.N), as_dict(f, f.Q)
    slack = F(4 * len(specs) * 2 ** len(specs), 2**bits)
    for j in got_p:
        assert got_p[j] <= exact_p.get(j, F(0))
        assert got_q[j] >= exact_q.get(j, F(0))
        assert got_q[j] - exact_q.get(j, F(0)) <= slack
    assert sum(exact_p.values()) - sum(got_p.values()) <= slack * len(exact_p)


def test_floors_lift_upper_mass_and_drop_lower_outputs() -> None:
    P = {j: F(1, 9) for j in range(-4, 5)}
    up = replace_upper(pair_law(P, P))
    fu = fixed.from_law(up, 40)
    g = fixed.compose(fu, fu, 0, low=1)
    assert g.offset == 1 and g.upper
    assert g.total() == fixed.compose(fu, fu).total()  # nothing lost: the mass below sits at index 1
    fl = fixed.from_law(pair_law(P, P), 40, pair=True)
    g2 = fixed.compose(fl, fl, 0, low=1)
    assert g2.offset == 1 and g2.Q is not None and g2.Q.length() == g2.N.length()
    full = fixed.compose(fl, fl)
    assert g2.N.coeffs() == full.N.coeffs()[1 - full.offset:]  # the outputs kept are unchanged
    assert g2.Q.coeffs() == full.Q.coeffs()[1 - full.offset:]  # type: ignore[union-attr]


def replace_upper(law: Law) -> Law:
    from dataclasses import replace

    return replace(law, Q=None, upper=True)


def test_mixing_sides_is_refused() -> None:
    P = {-1: F(1, 2), 1: F(1, 2)}
    with pytest.raises(ValueError):
        fixed.compose(fixed.from_law(pair_law(P, P), 30, pair=True), fixed.from_law(replace_upper(pair_law(P, P)), 30))
    with pytest.raises(ValueError):
        fixed.from_law(pair_law(P, P), 30)  # a binned law must keep its Q


def brute_delta(eps_list: list[Fraction], eps_g: Fraction) -> mpmath.mpf:
    """delta(eps_g) of pure generic pairs by summing over all 2^k outputs (Murtagh-Vadhan Thm 1.5)."""
    with mpmath.workdps(50):
        es = [mpmath.mpf(e.numerator) / e.denominator for e in eps_list]
        Z = mpmath.fprod(1 + mpmath.exp(e) for e in es)
        E = mpmath.fsum(es)
        x = mpmath.mpf(eps_g.numerator) / eps_g.denominator
        s = mpmath.mpf(0)
        for S in itertools.product((0, 1), repeat=len(es)):
            eS = mpmath.fsum(e for e, b in zip(es, S) if b)
            v = mpmath.exp(eS) - mpmath.exp(x) * mpmath.exp(E - eS)
            if v > 0:
                s += v
        return s / Z


def off_grid(k: int, seed: int) -> list[Fraction]:
    rng = random.Random(seed)
    return sorted({F(rng.randint(100000, 5000000), 10**7) for _ in range(k)})


@pytest.mark.parametrize("k, seed, eps_g", [(12, 3, F(1, 2)), (14, 4, F(3, 2)), (10, 5, F(0))])
def test_floored_builds_bracket_the_brute_force(k: int, seed: int, eps_g: Fraction) -> None:
    """Builds floored at eps_g, below it, and (loose but sound) above it all contain the truth; the
    floor at eps_g costs no tightness against the unfloored build."""
    vals = off_grid(k, seed)
    comp = Composition.heterogeneous([(v, 0, 1) for v in vals])
    pl = plan(comp)
    h, tau, prec = F(1, 97), F(1, 10**20), 120
    truth = brute_delta(vals, eps_g)
    widths = {}
    for floor in (None, eps_g, eps_g - F(1, 3), eps_g + 1):
        b = build(pl, h, tau, prec, floor)
        assert not b.exact
        up, low = b.laws[0]
        with ctx.workprec(prec):
            e = arb_of_fraction(eps_g)
            lo, hi = delta_lower(low, e), delta_upper(up, e)
        with mpmath.workdps(50):
            assert mpmath.mpf(lo.lower().str(40, radius=False)) <= truth * (1 + mpmath.mpf(10) ** -35)
            assert truth <= mpmath.mpf(hi.upper().str(40, radius=False)) * (1 + mpmath.mpf(10) ** -35)
        widths[floor] = float((hi.upper() - lo.lower()).mid())  # float ok: a width comparison in a test
    assert widths[eps_g] <= widths[None] * 1.001 + 1e-30
    assert widths[eps_g - F(1, 3)] <= widths[None] * 1.001 + 1e-30


def test_epsilon_query_with_floors_contains_the_brute_force_crossing() -> None:
    vals = off_grid(12, 7)
    comp = Composition.heterogeneous([(v, 0, 1) for v in vals])
    enc = engine.pld_epsilon(comp, F(1, 10**3), digits=4)
    assert enc.algorithm == "pld"
    assert enc.relative_width() <= F(1, 10**4)
    # delta at the certified upper end is <= delta_g, at the lower end > delta_g
    with mpmath.workdps(50):
        assert brute_delta(vals, enc.upper) <= mpmath.mpf(1) / 1000
        assert brute_delta(vals, enc.lower) > mpmath.mpf(1) / 1000
    # the curve reads builds that are tight at every eps asked
    curve = engine.pld_delta_curve(comp, [F(0), enc.lower], digits=4)
    for e, c in zip([F(0), enc.lower], curve):
        t = brute_delta(vals, e)
        assert mpmath.mpf(c.lower.numerator) / c.lower.denominator <= t <= mpmath.mpf(c.upper.numerator) / c.upper.denominator
        assert c.relative_width() <= F(1, 10**3)


def test_epsilon_stops_at_a_requested_relative_width() -> None:
    vals = off_grid(12, 8)
    comp = Composition.heterogeneous([(v, 0, 1) for v in vals])
    w = F(3, 10**4)
    enc = engine.pld_epsilon(comp, F(1, 10**4), digits=12, rel_width=w)
    assert enc.upper - enc.lower <= w * enc.lower
    with mpmath.workdps(50):  # the ends lie within 3e-4 of the crossing: compare at 50 digits
        assert brute_delta(vals, enc.upper) <= mpmath.mpf(1) / 10**4 < brute_delta(vals, enc.lower)


def test_tiny_tilted_q_masses_are_still_rounded_up() -> None:
    """Q-products far below one unit floor to zero; the +1 must still cover every output kept."""
    P = {-1: F(1, 2), 1: F(1, 2)}
    Qt = {j: v / 2**50 for j, v in P.items()}
    f = fixed.from_law(pair_law(P, Qt), 30, pair=True)
    g = fixed.compose(fixed.compose(f, f), f)
    assert g.Q is not None
    exact_q = convolve(convolve(Qt, Qt), Qt)
    got = as_dict(g, g.Q)
    assert set(got) == set(as_dict(g, g.N))
    for j, q in got.items():
        assert q >= exact_q.get(j, F(0))


def test_many_binned_factors_on_a_coarse_grid_keep_a_tight_lower_end() -> None:
    """1000 binned factors at h = 1/9 tilt Q down by up to e^{-111}: the extra Q bits keep the lower
    end meaningful (without them it collapsed to 0, and without the +1 it rose above the upper end)."""
    vals = off_grid(1000, 9)
    comp = Composition.heterogeneous([(v, 0, 1) for v in vals])
    b = build(plan(comp), F(1, 9), F(1, 10**20), 100, None)
    up, low = b.laws[0]
    from exactdp.engines.pld.queries import epsilon_lower, epsilon_upper

    with ctx.workprec(100):
        d = arb_of_fraction(F(1, 10**6))
        hi = epsilon_upper(up, d)
        lo = epsilon_lower(low, d)
        assert hi is not None
        assert 0 < lo.lower() and lo.upper() <= hi.lower()
        assert (hi - lo).upper() < hi.lower() / 20  # a coarse grid, but a real bracket
        for x in ("5", "10", "20"):
            e = arb(x)
            assert delta_lower(low, e).upper() <= delta_upper(up, e).lower()


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 4), st.integers(1, 9), st.integers(0, 9)), min_size=2, max_size=5),
       st.integers(24, 48), st.fractions(F(-3), F(3), max_denominator=64))
def test_centred_tilts_still_bound_the_exact_convolution(specs: list[tuple[int, int, int]], bits: int,
                                                         s: Fraction) -> None:
    """A factor entered with its tilt centred at s holds Q e^{jh + s}; untilted by the summed shift,
    the product's Q is never below the exact convolution (the shift changes no bound)."""
    exact_q: dict[int, Fraction] = {0: F(1)}
    laws = []
    for units, num, qnum in specs:
        P = {-units: F(10 - num, 10), units: F(num, 10)}
        Qt = {j: v * F(10 + qnum, 20) for j, v in P.items()}
        laws.append(fixed.from_law(pair_law(P, Qt), bits, pair=True, qbits=6, qshift=s))
        exact_q = convolve(exact_q, Qt)
    f = fixed.product(laws)
    assert f.Q is not None and f.qshift == s * len(specs)
    with ctx.workprec(bits + 200):
        back = arb(-f.qshift.numerator) / f.qshift.denominator
        # each rounding adds at most one unit 2^-(bits + qbits), grown by the other factors' tilted
        # sums (at most e^s each): the tilted product stays within that of e^S times the exact one
        grow = max(arb(1), (arb(s.numerator) / s.denominator).exp()) ** len(specs)
        slack = arb(4 * 2 ** len(specs)) * arb(2) ** (-(f.bits + f.qbits)) * grow
        for j, q in as_dict(replace_bits(f), f.Q).items():
            exact = arb_of_fraction(exact_q.get(j, F(0)))
            got = arb_of_fraction(q) * back.exp()
            assert not got < exact  # untilted Q >= the exact one
            assert not arb_of_fraction(q) > exact / back.exp() + slack  # and not far above it


def replace_bits(f: fixed.FixedLaw) -> fixed.FixedLaw:
    """The law with Q read in its own units (2^-(bits + qbits))."""
    from dataclasses import replace

    return replace(f, bits=f.bits + f.qbits)


def test_engine_centres_binned_factors_and_brackets_the_brute_force() -> None:
    """The engine enters binned factors with centred tilts (a nonzero summed shift) and the lower
    law it returns still sits below the brute-force delta at every eps."""
    vals = off_grid(12, 11)
    comp = Composition.heterogeneous([(v, 0, 1) for v in vals])
    b = build(plan(comp), F(1, 53), F(1, 10**20), 120, None)
    up, low = b.laws[0]
    assert low.qshift != 0
    for eps_g in (F(0), F(1, 3), F(7, 5)):
        truth = brute_delta(vals, eps_g)
        with ctx.workprec(120):
            lo, hi = delta_lower(low, arb_of_fraction(eps_g)), delta_upper(up, arb_of_fraction(eps_g))
        with mpmath.workdps(50):
            assert mpmath.mpf(lo.lower().str(40, radius=False)) <= truth * (1 + mpmath.mpf(10) ** -35)
            assert truth <= mpmath.mpf(hi.upper().str(40, radius=False)) * (1 + mpmath.mpf(10) ** -35)
            assert mpmath.mpf(lo.lower().str(40, radius=False)) > truth * mpmath.mpf("0.9")  # tight too


def test_many_binned_steps_of_one_mechanism_keep_a_lower_end_on_a_coarse_grid() -> None:
    """10^4 Poisson-subsampled Gaussian steps at h = 1/20 (tilts up to e^{-500} uncentred): centred,
    the lower law is a real bound at a coarse grid, inside the upper one and near the fine answer."""
    from exactdp.model.mechanisms import Gaussian, PoissonSampled

    comp = Composition(groups=((PoissonSampled(mechanism=Gaussian(sigma=F(1), sensitivity=F(1)), q=F(1, 100)), 10**4),))
    pl = plan(comp)
    b = build(pl, F(1, 20), F(1, 10**30), 150, F(1))
    up, low = b.laws[0]
    assert low.qshift > 100  # the tilts of 10^4 factors were centred
    fine = engine.pld_delta(comp, F(1), digits=3)
    with ctx.workprec(150):
        lo, hi = delta_lower(low, arb(1)), delta_upper(up, arb(1))
    assert 0 < lo.lower() and lo.upper() <= hi.lower()
    assert _f(lo.lower()) <= fine.upper and fine.lower <= _f(hi.upper())
    assert _f(lo.lower()) > fine.lower / 2  # coarse, but a real lower end


def _f(x: arb) -> Fraction:
    return F(x.str(30, radius=False))


def test_float_midpoints_of_huge_and_tiny_fixed_masses() -> None:
    """Midpoints (cut selection only) are correct past 2^1024 units and capped far beyond 1."""
    from flint import fmpz_poly

    got = fixed._mids(fmpz_poly([3, 2**1500, 3 * 2**1499, 2**3000]), 1502)
    assert got[:3] == [0.0, 0.25, 0.375] and got[3] == 1e301
    assert fixed._mids(fmpz_poly([1, 2**60]), 1100) == [0.0, 2.0**-1040]


def test_refinement_goes_on_while_the_lower_end_is_still_zero() -> None:
    """A build whose lower end is 0 (many binned factors blur a coarse lower law) says nothing of the
    width: the refinement must go to finer grids, not return [0, upper]."""
    vals = off_grid(10, 12)
    comp = Composition.heterogeneous([(v, 0, 1) for v in vals])
    eps_g = F(1, 2)
    truth = brute_delta(vals, eps_g)
    seen: list[Fraction] = []

    def bracket(b: Built) -> tuple[Fraction, Fraction]:
        seen.append(b.h)
        up, low = b.laws[0]
        with ctx.workprec(b.prec):
            e = arb_of_fraction(eps_g)
            lo, hi = _f(delta_lower(low, e).lower()), _f(delta_upper(up, e).upper())
        return (F(0) if len(seen) <= 2 else max(lo, F(0))), hi  # the first two builds: no lower end

    def done(lo: Fraction | float, hi: Fraction | float) -> bool:
        return isinstance(lo, Fraction) and lo > 0 and hi - lo <= lo / 10**4

    lo, hi, _ = refine(comp, 4, 30.0, F(1, 10), bracket, done)
    assert len(seen) >= 3 and seen[-1] < seen[0]
    assert 0 < lo and hi - lo <= lo / 10**4
    with mpmath.workdps(50):
        assert mpmath.mpf(lo.numerator) / lo.denominator <= truth <= mpmath.mpf(hi.numerator) / hi.denominator
