"""A large group of generic pairs composed before discretising (docs/pld.md §6), and tilted Q-masses
(§3), against independent computations: exact binomial sums in mpmath and the exact Murtagh-Vadhan
optimum.
"""

from __future__ import annotations

import math
import time
from fractions import Fraction

import mpmath
import pytest
from flint import arb, ctx

from exactdp import Composition, optimal_epsilon
from exactdp.core import progress
from exactdp.core.numbers import arb_of_fraction
from exactdp.engines.pld.discrete import discretize_binomial
from exactdp.engines.pld.engine import pld_epsilon
from exactdp.engines.pld.queries import delta_lower, delta_upper, epsilon_lower, epsilon_upper

F = Fraction


def binomial_delta(eps: Fraction, delta: Fraction, n: int, x: Fraction) -> mpmath.mpf:
    """delta(x) of n composed (eps, delta) pairs by direct summation over j (mpmath, 50 digits)."""
    with mpmath.workdps(50):
        e = mpmath.mpf(eps.numerator) / eps.denominator
        p = mpmath.e**e / (1 + mpmath.e**e)
        keep = (1 - mpmath.mpf(delta.numerator) / delta.denominator) ** n
        X = mpmath.mpf(x.numerator) / x.denominator
        s = mpmath.fsum(mpmath.binomial(n, j) * p**j * (1 - p) ** (n - j) * (1 - mpmath.e ** (X - (2 * j - n) * e))
                        for j in range(n + 1) if (2 * j - n) * e > X)
        return 1 - keep + keep * s


def test_discretized_binomial_brackets_the_exact_group() -> None:
    eps, delta, n = F(1234567, 10**7), F(1, 10**6), 300
    h = F(1, 50)  # the atoms (2j - n) eps lie off this grid
    with ctx.workprec(120):
        up, low = discretize_binomial(eps, delta, n, h, arb(10) ** -30)
        for x in (F(0), F(3), F(7), F(12)):
            truth = binomial_delta(eps, delta, n, x)
            X = arb_of_fraction(x)
            lo, hi = delta_lower(low, X), delta_upper(up, X)
            with mpmath.workdps(50):
                assert mpmath.mpf(float(lo.lower())) <= truth * (1 + mpmath.mpf(10) ** -14)  # float ok: a tolerance far below the width
                assert truth <= mpmath.mpf(float(hi.upper())) * (1 + mpmath.mpf(10) ** -14)  # float ok: as above
            assert hi.upper() - lo.lower() < arb(10) ** -3 * (hi.upper() + arb(10) ** -12)  # second order in h: narrow


def test_off_lattice_groups_bracket_the_exact_optimum() -> None:
    # two large groups off any usable lattice: the grid path composes each as one binomial pair
    comp = Composition.heterogeneous([("0.1234567", 0, 400), ("0.0312345", "1e-7", 300), ("0.7", 0, 3)])
    exact = optimal_epsilon(comp, F(1, 10**4), digits=25)  # the exact subset-count engine
    with progress.task("test", max_seconds=60, stream=None):
        br = pld_epsilon(comp, F(1, 10**4), digits=6, max_seconds=30)
    assert br.algorithm == "pld"
    assert br.lower <= exact.upper and exact.lower <= br.upper
    assert (br.upper - br.lower) / br.lower < F(1, 10**5)


@pytest.mark.slow  # 8-12 s (CI time: the main step)
def test_huge_counts_off_the_lattice_answer_with_digits() -> None:
    """Five values with 10^7 copies each: the lattice is too large, the grid path answers."""
    five = [F(13, 1000), F(27, 1000), F(41, 1000), F(66, 1000), F(1, 10)]
    comp = Composition.heterogeneous([(v, 0, 10**7) for v in five])
    t = time.monotonic()
    e = pld_epsilon(comp, F(1, 10**6), digits=10, max_seconds=8)
    assert time.monotonic() - t < 30
    assert e.lower > 0 and (e.upper - e.lower) / e.lower < F(1, 10**5)
    # monotone: one more copy of the largest eps cannot lower eps
    more = Composition.heterogeneous([(v, 0, 10**7 + (v == F(1, 10))) for v in five])
    e2 = pld_epsilon(more, F(1, 10**6), digits=10, max_seconds=8)
    assert e2.upper >= e.lower


def test_far_out_losses_keep_their_lower_bound() -> None:
    """Losses near 10^5: untilted Q-masses would be below the float range of the cut scan."""
    with ctx.workprec(120):
        up, low = discretize_binomial(F(1, 10), F(0), 10**7, F(1), arb(10) ** -25)
        d = arb(10) ** -6
        eu, el = epsilon_upper(up, d), epsilon_lower(low, d, hint=epsilon_upper(up, d))
    assert el.lower() > 0.999 * eu.upper()  # float ok: the two sides within 0.1 % (they were 7 % apart)


def test_binned_binomial_on_a_shared_grid_brackets_the_exact_group_and_computes_each_tilt_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """eps = 11/100 on the grid 1/4: the exponent g h - (2j - n) eps of the tilted Q takes one value
    per residue of 22j/25 modulo 1 (25 values), so e^x is computed 25 times, not once per atom (issue
    29: the binning dominated the builds of lists with millions of copies).  The bracket still holds
    the direct mpmath sum."""
    import exactdp.engines.pld.discrete as disc

    calls = []
    real = disc.arb_of_fraction

    def counting(x: Fraction) -> arb:
        calls.append(x)
        return real(x)

    monkeypatch.setattr(disc, "arb_of_fraction", counting)
    eps, delta, n, h = F(11, 100), F(1, 10**7), 2000, F(1, 4)
    with ctx.workprec(120):
        up, low = discretize_binomial(eps, delta, n, h, arb(10) ** -30)
        tilts = [x for x in calls if -h <= x < 0 or x == 0]
        assert len(tilts) <= 25, len(tilts)  # one per residue (each atom once before: hundreds)
        for x in (F(0), F(3), F(9), F(15)):
            truth = binomial_delta(eps, delta, n, x)
            X = real(x)
            lo, hi = delta_lower(low, X), delta_upper(up, X)
            with mpmath.workdps(50):
                assert mpmath.mpf(float(lo.lower())) <= truth * (1 + mpmath.mpf(10) ** -14)  # float ok: a tolerance far below the width
                assert truth <= mpmath.mpf(float(hi.upper())) * (1 + mpmath.mpf(10) ** -14)  # float ok: as above
            assert hi.upper() - lo.lower() < arb(10) ** -2 * (hi.upper() + arb(10) ** -12)


def test_the_grids_of_a_refinement_share_a_group_s_binomial_window(monkeypatch: pytest.MonkeyPatch) -> None:
    """The window of Bin(n, p) does not depend on the grid: a second grid computes no binomial mass
    (issue 29), and its laws are those computed afresh (the window is a pure function of eps, n, tau
    and the precision)."""
    import exactdp.engines.pld.discrete as disc

    eps, n, tau = F(17, 200), 30011, arb(10) ** -30
    with ctx.workprec(120):
        disc.discretize_binomial(eps, F(0), n, F(1, 4), tau)
        calls = []
        real = disc.binomial_pmf
        monkeypatch.setattr(disc, "binomial_pmf", lambda *a: calls.append(a) or real(*a))
        up, low = disc.discretize_binomial(eps, F(0), n, F(1, 9), tau)
        assert calls == []  # the window of the first grid, reused
        disc._WINDOWS.clear()
        up2, low2 = disc.discretize_binomial(eps, F(0), n, F(1, 9), tau)
        assert len(calls) == 1
        for a, b in ((up.P, up2.P), (low.P, low2.P), (low.Q, low2.Q)):
            assert a is not None and b is not None
            assert all(x.mid() == y.mid() and x.rad() == y.rad() for x, y in zip(a.coeffs(), b.coeffs()))
            assert a.length() == b.length()
        other = disc.discretize_binomial(eps, F(0), n, F(1, 9), tau * 2)  # another tau: its own window
        assert len(calls) == 2 and other[1].P.length() >= 1


@pytest.mark.slow  # 8-12 s (CI time: the main step)
def test_a_first_grid_that_runs_past_its_cap_hands_over_to_the_default_grid(monkeypatch: pytest.MonkeyPatch) -> None:
    """The first grid predicted from the composition (finer than the default) gets a share of the
    budget; on a loaded machine that share can run out before any bracket exists, and the coarser
    default grid then answers in the rest instead of the whole query failing (issue 29, family list
    #13 under load).  The bracket is checked against the grouped-binomial mpmath oracle."""
    from exactdp.engines.pld import refine as R
    from exactdp.testing.families import mv_delta

    groups = [(F(312345, 10**7), F(0), 300), (F(1234567, 10**7), F(0), 200), (F(1, 5), F(0), 10)]
    delta_g = F(1, 10**6)
    hs: list[Fraction] = []
    real = R.build_cached

    def slow_first(pl, h, *a):  # type: ignore[no-untyped-def]
        hs.append(h)
        while len(hs) == 1:  # the first build never ends: only the budget stops it
            time.sleep(0.01)
            progress.tick()
        return real(pl, h, *a)

    monkeypatch.setattr(R, "build_cached", slow_first)
    with progress.task("test", max_seconds=12, stream=None):
        e = pld_epsilon(Composition.heterogeneous(groups), delta_g, digits=10, max_seconds=10)
    assert len(hs) >= 2 and hs[1] > hs[0]  # the default grid, coarser than the predicted one
    assert e.lower > 0 and e.upper < math.inf and e.digits >= 3
    assert mv_delta(groups, e.upper) <= _q(delta_g) <= mv_delta(groups, e.lower)


def _q(x: Fraction) -> mpmath.mpf:
    return mpmath.mpf(x.numerator) / x.denominator
