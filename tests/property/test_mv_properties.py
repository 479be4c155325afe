"""Properties of the optimal heterogeneous composition (MV Thm 1.5): permutation invariance and
monotonicity in every eps_i (docs/mathematics.md §2), checked exactly on log-rational inputs."""

from __future__ import annotations

from fractions import Fraction

from hypothesis import example, given, settings
from hypothesis import strategies as st

from exactdp import Composition, ExactReal
from exactdp.engines.mv import mv_decide, mv_delta, mv_epsilon

Y = st.sampled_from([Fraction(3, 2), Fraction(2), Fraction(5, 4), Fraction(9, 4), Fraction(7, 5), Fraction(3)])
D = st.sampled_from([Fraction(0), Fraction(1, 10**6), Fraction(1, 1000)])
MECHS = st.lists(st.tuples(Y, D), min_size=2, max_size=6)


def comp(ms) -> Composition:
    return Composition.heterogeneous([(f"log({y})", d) for y, d in ms])


@settings(max_examples=25, deadline=None)
@given(MECHS, st.randoms(use_true_random=False), st.sampled_from([Fraction(1), Fraction(2), Fraction(9, 2)]))
def test_permutation_invariance(ms, rnd, E):
    perm = list(ms)
    rnd.shuffle(perm)
    assert mv_delta(comp(ms), ExactReal.log(E)).exact == mv_delta(comp(perm), ExactReal.log(E)).exact
    a, b = mv_epsilon(comp(ms), Fraction(1, 20)), mv_epsilon(comp(perm), Fraction(1, 20))
    assert (a.lower, a.upper, a.exact_log) == (b.lower, b.upper, b.exact_log)


@settings(max_examples=25, deadline=None)
@example(ms=[(Fraction(3, 2), Fraction(0)), (Fraction(2), Fraction(0))], i=0, bump=Fraction(4, 3))
@given(MECHS, st.integers(0, 5), st.sampled_from([Fraction(11, 10), Fraction(4, 3), Fraction(2)]))
def test_monotone_in_every_eps_i(ms, i, bump):
    i %= len(ms)
    bigger = list(ms)
    bigger[i] = (ms[i][0] * bump, ms[i][1])
    for E in [Fraction(1), Fraction(2), Fraction(5)]:
        assert mv_delta(comp(ms), ExactReal.log(E)).exact <= mv_delta(comp(bigger), ExactReal.log(E)).exact
    for dg in [Fraction(1, 100), Fraction(1, 10)]:
        a, b = mv_epsilon(comp(ms), dg, digits=20), mv_epsilon(comp(bigger), dg, digits=20)
        assert a.lower <= b.upper


@settings(max_examples=20, deadline=None)
@given(MECHS, st.sampled_from([Fraction(1), Fraction(3, 2), Fraction(4)]))
def test_decide_matches_delta_exactly(ms, E):
    c = comp(ms)
    d = mv_delta(c, ExactReal.log(E)).exact
    assert mv_decide(c, ExactReal.log(E), d)
    if d > 0:
        assert not mv_decide(c, ExactReal.log(E), d - Fraction(1, 10**60))
