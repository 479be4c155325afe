"""The PLD engine's tilted float-FFT path (docs/pld.md §12): k copies of one continuous mechanism.

References independent of the path: the Gaussian closed form in mpmath (q = 1), mpmath quadrature of
two subsampled-Gaussian steps, and the exact-product engine (the brackets must intersect).  A bound
broken on purpose (error terms 0, no tilt) is caught.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import pytest
from test_pld import gaussian_profile, subsampled_gaussian_delta2  # sibling module: independent references

from exactdp import Composition
from exactdp.core.numbers import ExactReal
from exactdp.engines.pld import fftcompose as C
from exactdp.engines.pld import fftpower as F
from exactdp.engines.pld import fftreal as R
from exactdp.engines.pld.engine import pld_delta, pld_epsilon
from exactdp.engines.pld.fftquery import fft_groups, fft_path
from exactdp.engines.pld.plan import plan




def _m(q: Fraction) -> mpmath.mpf:
    return mpmath.mpf(q.numerator) / q.denominator


def _inside(lo: Fraction, hi: Fraction, x: mpmath.mpf) -> bool:
    return _m(lo) <= x <= _m(hi)


def test_the_path_takes_k_copies_of_one_continuous_mechanism() -> None:
    assert fft_groups(Composition.of(["gaussian:sigma=1,q=0.01,count=1000"])) is not None
    assert fft_groups(Composition.of(["gaussian:sigma=1,q=0.01,count=8"])) is None  # too few copies
    assert fft_groups(Composition.of(["laplace:scale=1,count=100", "gaussian:sigma=2,count=100"])) is None
    assert fft_groups(Composition.of(["approx:eps=0.1,delta=0,count=100"])) is None  # a lattice
    # measured slower than the exact products (docs/pld.md §12.7): Laplace and mixtures keep them
    assert fft_groups(Composition.of(["laplace:scale=10,count=100"])) is None
    assert fft_groups(Composition.of(["mog:sigma=8,sensitivities=0/1/2,probs=0.8/0.1/0.1,count=1000"])) is None
    with fft_path(False):
        assert fft_groups(Composition.of(["gaussian:sigma=1,q=0.01,count=1000"])) is None


@pytest.mark.parametrize("sigma,count,eps", [("4", 64, "1"), ("2", 100, "3"), ("8", 400, "0.5")])
def test_gaussian_delta_against_the_closed_form(sigma: str, count: int, eps: str) -> None:
    """count Gaussian steps are one Gaussian with mu^2 = count / sigma^2: delta in mpmath."""
    comp = Composition.of([f"gaussian:sigma={sigma},count={count}"])
    enc = pld_delta(comp, ExactReal.parse(eps), digits=5)
    assert enc.algorithm == "pld-fft"
    truth = gaussian_profile(mpmath.mpf(count) / mpmath.mpf(sigma) ** 2, mpmath.mpf(eps))
    assert _inside(Fraction(enc.lower), Fraction(enc.upper), truth)
    assert enc.relative_width() <= Fraction(1, 10**5)


def test_gaussian_epsilon_against_the_closed_form() -> None:
    comp = Composition.of(["gaussian:sigma=4,count=64"])  # mu = 2
    enc = pld_epsilon(comp, Fraction(1, 10**5), digits=6)
    assert enc.algorithm == "pld-fft"
    lo, hi = Fraction(enc.lower), Fraction(enc.upper)
    # the closed form is decreasing in eps: delta(lower) > 1e-5 >= delta(upper)
    assert gaussian_profile(mpmath.mpf(4), _m(lo)) > mpmath.mpf("1e-5") >= gaussian_profile(mpmath.mpf(4), _m(hi))
    assert hi - lo <= lo / 10**6


@pytest.mark.parametrize("sigma,q,eps", [("1", "0.1", "0.2"), ("0.8", "0.125", "0.5")])
def test_two_subsampled_steps_against_quadrature(sigma: str, q: str, eps: str) -> None:
    """The path's pieces at k = 2 (below the routing threshold): the "remove" order's bracket holds
    its mpmath quadrature, and the larger order's the larger delta (as tests/unit/test_pld.py)."""
    comp = Composition.of([f"gaussian:sigma={sigma},q={q},count=2"])
    h = Fraction(1, 2000)
    e = Fraction(eps)
    brackets = []
    for model, k in (o[0] for o in plan(comp).orders):
        fo = C.fft_order(model, k, h, Fraction(1, 10**25), e, 120)
        brackets.append(C.order_delta_bounds(fo, e))
    with mpmath.workdps(30):
        s_, q_, e_ = mpmath.mpf(sigma), mpmath.mpf(q), mpmath.mpf(eps)
        remove = subsampled_gaussian_delta2(s_, q_, e_, "remove")
        truth = max(remove, subsampled_gaussian_delta2(s_, q_, e_, "add"))
        assert _inside(*brackets[0], remove)
        assert _inside(max(b[0] for b in brackets), max(b[1] for b in brackets), truth)
    lo, hi = brackets[0]
    assert hi - lo <= hi / 1000


@pytest.mark.parametrize("spec,eps", [("gaussian:sigma=0.8,q=0.1,count=64", "1"),
                                      ("gaussian:sigma=1,q=0.02,count=300", "0.5")])
def test_brackets_meet_the_exact_product_engine(spec: str, eps: str) -> None:
    comp = Composition.of([spec])
    fft = pld_delta(comp, ExactReal.parse(eps), digits=4)
    with fft_path(False):
        exact = pld_delta(comp, ExactReal.parse(eps), digits=4)
    assert fft.algorithm == "pld-fft" and exact.algorithm == "pld"
    assert Fraction(fft.lower) <= Fraction(exact.upper) and Fraction(exact.lower) <= Fraction(fft.upper)


def test_epsilon_meets_the_exact_product_engine() -> None:
    comp = Composition.of(["gaussian:sigma=1,q=0.05,count=200"])
    fft = pld_epsilon(comp, Fraction(1, 10**5), digits=4)
    with fft_path(False):
        exact = pld_epsilon(comp, Fraction(1, 10**5), digits=4)
    assert fft.algorithm == "pld-fft"
    assert Fraction(fft.lower) <= Fraction(exact.upper) and Fraction(exact.lower) <= Fraction(fft.upper)


def test_a_broken_bound_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the FFT's error terms set to 0 and no tilt, a delta near 1e-25 (far below the float
    noise of an untilted FFT) comes out outside the closed form; with the real bound it is inside."""
    comp = Composition.of(["gaussian:sigma=2,count=64"])  # mu^2 = 16
    eps = Fraction(50)
    truth = gaussian_profile(mpmath.mpf(16), _m(eps))
    model, k = plan(comp).orders[0][0]
    h = Fraction(1, 200)
    lo, hi = C.order_delta_bounds(C.fft_order(model, k, h, Fraction(1, 10**40), eps, 200), eps)
    assert _inside(lo, hi, truth)
    monkeypatch.setattr(C, "choose_theta", lambda *a: Fraction(0))
    monkeypatch.setattr(R, "real_bound", lambda *a: Fraction(0))  # the upper law's power (docs/pld.md §12.3)
    monkeypatch.setattr(F, "outside_mass", lambda *a: Fraction(0))
    monkeypatch.setattr(C, "wrapped_mass", lambda *a: C.arb(0))
    lo, hi = C.order_delta_bounds(C.fft_order(model, k, h, Fraction(1, 10**40), eps, 200), eps)
    assert not _inside(lo, hi, truth)


def test_a_tilt_aimed_far_from_the_root_still_finds_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 26 §4: 100 steps of sigma 0.8, q 0.001 at delta 1e-5.  The saddle estimate aims the tilt
    at eps ~0.58, four times the optimum (~0.141), and the float root search used to be clamped to
    the end of its first range: the path answered a sound but useless [0.135, 0.219].  The search
    range now widens until the curve crosses delta, and the tilt is aimed again until the estimate
    settles: the bracket of the first grid alone is tight and meets the exact products'."""
    import time

    from exactdp.engines.pld import fftquery
    from exactdp.engines.pld.fftquery import fft_epsilon

    monkeypatch.setattr(fftquery, "_next_grid", lambda *a: None)  # one grid: no refinement hides it

    comp = Composition.of(["gaussian:sigma=0.8,q=0.001,count=100"])
    lo, hi = fft_epsilon(comp, Fraction(1, 10**5), 3e-4, 4, time.monotonic() + 120)  # float ok: a target
    assert hi is not None and hi - lo <= lo * Fraction(3, 10**4)
    with fft_path(False):
        exact = pld_epsilon(comp, Fraction(1, 10**5), digits=3)
    assert lo <= Fraction(exact.upper) and Fraction(exact.lower) <= hi


@pytest.mark.parametrize("reach", [80, 6])
def test_a_tail_sum_summed_to_its_reach_encloses_the_whole_sum(monkeypatch: pytest.MonkeyPatch, reach: int) -> None:
    """``_tail_sums`` sums the terms whose weight is above 2^-reach of the first and encloses the rest
    by ``max |v| e^{-rate I1} / (1 - e^{-rate})`` (docs/pld.md §12.6): the ball holds the whole sum,
    computed term by term in mpmath at 50 digits, even when the rest is far from negligible."""
    import numpy as np

    rng = np.random.default_rng(reach)
    v = rng.random(6000) - 0.1  # a computed vector may hold small negative floats
    start, i0 = 50, 400
    tl = C.Tilted(Fraction(3), Fraction(1, 1000), 0, C.arb(0), F.Power(v, start, Fraction(0), Fraction(0)))
    monkeypatch.setattr(C, "_REACH", reach)
    s, _ = C._tail_sums(tl, i0, Fraction(1, 2))
    with mpmath.workdps(50):
        rate = mpmath.mpf(7) / 2000
        terms = [mpmath.mpf(float(x)) * mpmath.exp(-rate * (start + i)) for i, x in enumerate(v.tolist())]
        whole = mpmath.fsum(terms[i0 - start:])
        lo = mpmath.mpf(s.lower().str(45, radius=False))
        hi = mpmath.mpf(s.upper().str(45, radius=False))
        assert lo - abs(whole) * mpmath.mpf(10) ** -40 <= whole <= hi + abs(whole) * mpmath.mpf(10) ** -40
        if reach == 6:  # the terms summed alone miss the whole sum by far: the enclosing ball is needed
            cut = i0 - start + math.ceil(reach * math.log(2) / (3.5 / 1000)) + 1  # float ok: as _tail_sums
            assert abs(mpmath.fsum(terms[i0 - start:cut]) - whole) > abs(whole) * mpmath.mpf(10) ** -3


def test_the_default_budget_routes_dpsgd_rows_to_the_path_and_few_sampled_steps_away() -> None:
    """Issue 26 §4: with the default 30 s the 1000-step DP-SGD row takes the path (its first grid is
    predicted within half the budget), and k subsampled steps with q k < 2 keep the exact products
    whatever the budget (measured faster there: docs/pld.md §12.7)."""
    from exactdp.engines.pld.fftquery import affordable, few_sampled

    row = Composition.of(["gaussian:sigma=1,q=0.01,count=1000"])
    assert affordable(row, 6, 1e-6, 30.0)  # float ok: a time budget
    few = Composition.of(["gaussian:sigma=0.8,q=0.001,count=100"])
    assert few_sampled(few) and not affordable(few, 4, 1e-4, 1e6)  # float ok: a time budget
    assert not few_sampled(Composition.of(["gaussian:sigma=1,q=0.02,count=300"]))
    assert not few_sampled(Composition.of(["gaussian:sigma=2,count=64"]))  # not subsampled


def test_the_upper_bound_charges_one_error_term(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 26 (fewer certification calls): the upper bound's B sum carries no error charge, so one
    upper query computes the wrap bound once, not twice; the bracket still holds the closed form."""
    comp = Composition.of(["gaussian:sigma=2,count=64"])  # mu^2 = 16
    eps = Fraction(3)
    truth = gaussian_profile(mpmath.mpf(16), _m(eps))
    model, k = plan(comp).orders[0][0]
    fo = C.fft_order(model, k, Fraction(1, 200), Fraction(1, 10**40), eps, 200)
    calls: list[object] = []
    real = C.wrapped_mass

    def counted(*a: object) -> object:
        calls.append(a)
        return real(*a)  # type: ignore[arg-type]

    monkeypatch.setattr(C, "wrapped_mass", counted)
    _, hi = C.order_delta_bounds(fo, eps, sides="upper")
    assert _inside(Fraction(0), hi, truth)
    assert fo.up.power.t is not None  # the power kept its data: the wrap bound is computed
    assert len(calls) == 1


def test_candidates_with_one_first_index_share_their_sums(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 26 (fewer certification calls): two candidate eps with the same first index reuse the
    tail sums and their error (they do not depend on eps); each bracket still holds the closed form."""
    comp = Composition.of(["gaussian:sigma=2,count=64"])  # mu^2 = 16
    model, k = plan(comp).orders[0][0]
    h = Fraction(1, 200)
    eps = Fraction(3)
    fo = C.fft_order(model, k, h, Fraction(1, 10**40), eps, 200)
    near = eps + h / 1000  # same first index on the grid
    assert C._first_index(fo.up, eps, True) == C._first_index(fo.up, near, True)
    calls: list[object] = []
    real = C.wrapped_mass

    def counted(*a: object) -> object:
        calls.append(a)
        return real(*a)  # type: ignore[arg-type]

    monkeypatch.setattr(C, "wrapped_mass", counted)
    for e in (eps, near):
        _, hi = C.order_delta_bounds(fo, e, sides="upper")
        assert _inside(Fraction(0), hi, gaussian_profile(mpmath.mpf(16), _m(e)))
    assert len(calls) == 1


@pytest.mark.parametrize("spec,width", [("gaussian:sigma=2,q=0.001,count=100000", Fraction("3.2e-3")),
                                        ("gaussian:sigma=1,q=0.01,count=1000", Fraction("3.7e-6"))])
def test_the_laws_at_the_float_blocks_precision_keep_the_bracket(monkeypatch: pytest.MonkeyPatch, spec: str,
                                                                  width: Fraction) -> None:
    """An eps query's single-step laws in Arb at T + 24 bits (``fftquery.laws_prec``: 64 bits where the
    float blocks' rule is T = 40, docs/pld.md §12.11) instead of the query's 103: the target width is still
    met, the width within 1 % of the one at the query's precision, and both brackets hold the exact
    products' (an independent route, no float)."""
    import exactdp.engines.pld.fftquery as fq
    from exactdp.core import progress

    comp = Composition.of([spec])
    with progress.task("t", max_seconds=120, stream=None):
        low = pld_epsilon(comp, Fraction(1, 10**5), digits=8, rel_width=width)
    monkeypatch.setattr(fq, "LAWS_GUARD", 1000)  # the query's own precision
    with progress.task("t", max_seconds=120, stream=None):
        full = pld_epsilon(comp, Fraction(1, 10**5), digits=8, rel_width=width)
    for e in (low, full):
        assert e.algorithm == "pld-fft" and e.upper - e.lower <= width * e.lower
    w_low, w_full = (low.upper - low.lower) / low.lower, (full.upper - full.lower) / full.lower
    assert abs(w_low - w_full) <= w_full / 100, (float(w_low), float(w_full))
    with fft_path(False), progress.task("t", max_seconds=300, stream=None):
        ref = pld_epsilon(comp, Fraction(1, 10**5), digits=3)
    for e in (low, full):
        assert e.lower <= ref.upper and ref.lower <= e.upper


def test_the_binned_pair_is_powered_apart_and_reaches_a_width_the_shared_bound_did_not() -> None:
    """The binned pair's two laws are powered by two real transforms, each with its own bound (docs/pld.md
    §12.6, "The binned pair, powered apart"): powered together, every output carried both powers' errors and
    DP-SGD sigma 2, q 0.001 x 10^5 stopped near 1.2e-6 (relative) whatever the grid (the memory bound
    after about 18 s).  Now it reaches 1e-6 through the path (in about 2 s), and the bracket meets the exact
    products' own (an independent computation, at 3 digits)."""
    from exactdp.core import progress

    comp = Composition.of(["gaussian:sigma=2,q=0.001,count=100000"])
    with progress.task("test", max_seconds=60, stream=None):  # the route's prediction is far above the 2 s
        enc = pld_epsilon(comp, Fraction(1, 10**5), digits=8, rel_width=Fraction(1, 10**6))
    assert enc.algorithm == "pld-fft"
    assert enc.upper - enc.lower <= Fraction(1, 10**6) * enc.lower, (enc.lower, enc.upper)
    with fft_path(False):
        ref = pld_epsilon(comp, Fraction(1, 10**5), digits=3)
    assert ref.lower <= enc.upper and enc.lower <= ref.upper, (ref, enc)


def test_a_flat_float_curve_doubles_the_step_instead_of_leaving_the_float_range(monkeypatch: pytest.MonkeyPatch) -> None:
    """sigma 4, q 0.001 x 2000 (two sampled steps expected) on its one first grid: a certified end missed
    where the float curve is flat was divided by the least slope (1e-300), the next candidate eps was
    about 1e295 and the float curve's index ``eps / h`` overflowed (found by benchmarks/bench_windows.py).
    Now the step doubles there, the curves read an eps past every index as the +inf mass, and the
    bracket holds the exact products' (an independent route)."""
    import time

    import exactdp.engines.pld.fftquery as fq
    from exactdp.core import progress

    monkeypatch.setattr(fq, "pre_grid", lambda *a, **kw: None)
    monkeypatch.setattr(fq, "_next_grid", lambda *a, **kw: None)
    comp = Composition.of(["gaussian:sigma=4,q=0.001,count=2000"])
    lo, hi = fq.fft_epsilon(comp, Fraction(1, 10**5), 1e-5, 6, time.monotonic() + 600)
    assert hi is not None and 0 < lo <= hi
    with fft_path(False), progress.task("t", max_seconds=120, stream=None):
        ref = pld_epsilon(comp, Fraction(1, 10**5), digits=4)
    assert lo <= ref.upper and ref.lower <= hi, (lo, hi, ref)


def test_the_lower_root_is_searched_near_the_upper_one() -> None:
    """8616 Gaussian steps of sigma 2.127 at delta 5.82e-11 (eps about 1232; found by the stop-41
    containment sweep): the search range of the first grid is +-616 around the hint, and the lower float
    curve, evaluated 600 units below the tilt's aim (weights clipped), crossed delta_g near 603; the
    lower end was then never certified and, the next grid past the memory bound, the answer was
    [0, 1238.754].  The lower curve's root is now searched from just below the upper curve's
    (``fftquery.LOW_SEARCH``): the lower end is certified, and the bracket holds the closed form."""
    from exactdp.core import progress

    comp = Composition.of(["gaussian:sigma=2.127,count=8616"])
    dg = Fraction("5.82e-11")
    with progress.task("t", max_seconds=60, stream=None):
        enc = pld_epsilon(comp, dg, digits=9)
    lo, hi = Fraction(enc.lower), Fraction(enc.upper)
    assert enc.algorithm == "pld-fft" and lo > 1000, (lo, hi)
    mu2 = mpmath.mpf(8616) / mpmath.mpf("2.127") ** 2
    with mpmath.workdps(40):
        assert gaussian_profile(mu2, _m(lo)) > _m(dg) >= gaussian_profile(mu2, _m(hi))
