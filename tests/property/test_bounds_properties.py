"""Properties of the closed-form bounds: monotonicity, the two directions agree, soundness.

Soundness (every bound certifies no less than the optimum) is checked against an independent
oracle written here: the optimal delta of Murtagh-Vadhan Thm 1.5 (docs/mathematics.md §2) by brute
force over subsets for short lists, and its homogeneous form (MV Thm 1.4 / KOV15 Thm 3.3) for k
equal mechanisms, in mpmath at 50 digits.  When ``exactdp.engines.kov15`` is implemented, the
bounds are also compared with it.
"""

from __future__ import annotations

import itertools
from fractions import Fraction
from types import SimpleNamespace

import mpmath
import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from exactdp.engines.bounds import advanced, basic, kov15, zcdp_tight
from exactdp.model.composition import Composition
from exactdp.core.numbers import ExactReal
from exactdp.core.enclosure import Enclosure

#: every bound by its function name, from the module that defines it
bounds = SimpleNamespace(**{n: getattr(m, n) for m in (basic, advanced, kov15, zcdp_tight) for n in m.__all__})

METHODS = ["basic", "drv10", "kov15_34", "kov15_34_2013", "kov15_35", "steinke", "zcdp", "zcdp_tight"]
DIGITS = 15
SETTINGS = settings(max_examples=25, deadline=None)

eps_st = st.one_of(
    st.fractions(min_value=Fraction(1, 100), max_value=Fraction(2), max_denominator=100),
    st.sampled_from(["log(3/2)", "log(2)", "log(11/10)"]),
)
delta_st = st.sampled_from([Fraction(0), Fraction(1, 10**6), Fraction(1, 1000)])
delta_g_st = st.sampled_from([Fraction(1, 10**8), Fraction(1, 10**5), Fraction(1, 100), Fraction(1, 5)])
eps_g_st = st.fractions(min_value=Fraction(1, 10), max_value=Fraction(8), max_denominator=50)
method_st = st.sampled_from(METHODS)


def _eps(comp: Composition, method: str, delta_g: Fraction) -> Enclosure:
    return getattr(bounds, f"{method}_epsilon")(comp, delta_g, digits=DIGITS)


def _delta(comp: Composition, method: str, eps_g: object) -> Enclosure:
    return getattr(bounds, f"{method}_delta")(comp, ExactReal.parse(eps_g), digits=DIGITS)


def _le(a: Enclosure, b: Enclosure) -> bool:
    """a <= b is possible given the enclosures (inf is exact)."""
    if b.is_infinite:
        return True
    if a.is_infinite:
        return False
    return a.lower <= b.upper


# -- monotonicity --------------------------------------------------------------------------------

@SETTINGS
@given(method_st, eps_st, delta_st, st.integers(1, 40), delta_g_st)
@example("kov15_34", "log(2)", Fraction(1, 1000), 1, Fraction(1, 100))
def test_epsilon_monotone_in_k(method: str, eps: object, delta: Fraction, k: int, delta_g: Fraction) -> None:
    a = _eps(Composition.homogeneous(eps, delta, k), method, delta_g)
    b = _eps(Composition.homogeneous(eps, delta, k + 1), method, delta_g)
    assert _le(a, b), (a, b)


@SETTINGS
@given(method_st, eps_st, delta_st, st.integers(1, 40), eps_g_st)
def test_delta_monotone_in_k(method: str, eps: object, delta: Fraction, k: int, eps_g: Fraction) -> None:
    a = _delta(Composition.homogeneous(eps, delta, k), method, eps_g)
    b = _delta(Composition.homogeneous(eps, delta, k + 1), method, eps_g)
    assert _le(a, b), (a, b)


@SETTINGS
@given(method_st, st.fractions(min_value=Fraction(1, 100), max_value=Fraction(2), max_denominator=100),
       st.fractions(min_value=Fraction(1, 1000), max_value=Fraction(1), max_denominator=1000),
       delta_st, st.integers(1, 30), delta_g_st)
def test_epsilon_monotone_in_eps(method: str, eps: Fraction, step: Fraction, delta: Fraction, k: int,
                                 delta_g: Fraction) -> None:
    a = _eps(Composition.homogeneous(eps, delta, k), method, delta_g)
    b = _eps(Composition.homogeneous(eps + step, delta, k), method, delta_g)
    assert _le(a, b), (a, b)


@SETTINGS
@given(method_st, eps_st, delta_st, st.integers(1, 30), delta_g_st, delta_g_st)
def test_epsilon_monotone_in_delta_g(method: str, eps: object, delta: Fraction, k: int, d1: Fraction,
                                     d2: Fraction) -> None:
    d1, d2 = min(d1, d2), max(d1, d2)
    comp = Composition.homogeneous(eps, delta, k)
    assert _le(_eps(comp, method, d2), _eps(comp, method, d1))


@SETTINGS
@given(method_st, eps_st, delta_st, st.integers(1, 30), eps_g_st, eps_g_st)
def test_delta_monotone_in_eps_g(method: str, eps: object, delta: Fraction, k: int, e1: Fraction,
                                 e2: Fraction) -> None:
    e1, e2 = min(e1, e2), max(e1, e2)
    comp = Composition.homogeneous(eps, delta, k)
    a, b = _delta(comp, method, e2), _delta(comp, method, e1)
    assert _le(a, b) and 0 <= a.lower and b.upper <= 1


# -- the two directions agree --------------------------------------------------------------------

hetero_st = st.lists(st.tuples(eps_st, delta_st, st.integers(1, 5)), min_size=1, max_size=4)


@SETTINGS
@given(method_st, hetero_st, delta_g_st)
@example("kov15_34", [("log(2)", Fraction(0), 10)], Fraction(1, 10**5))
@example("zcdp_tight", [(Fraction(1, 100), Fraction(1, 1000), 1)], Fraction(1, 5))
def test_delta_of_epsilon_is_at_most_delta(method: str, mechs: list, delta_g: Fraction) -> None:
    comp = Composition.heterogeneous(mechs)
    e = _eps(comp, method, delta_g)
    assume(not e.is_infinite)
    d = _delta(comp, method, e.upper)  # e.upper >= the bound's eps at delta_g
    assert d.lower <= delta_g, (e, d)


@SETTINGS
@given(method_st, hetero_st, eps_g_st)
def test_epsilon_of_delta_is_at_most_eps(method: str, mechs: list, eps_g: Fraction) -> None:
    comp = Composition.heterogeneous(mechs)
    d = _delta(comp, method, eps_g)
    assume(d.upper < 1)
    e = _eps(comp, method, Fraction(d.upper))
    assert not e.is_infinite and e.lower <= eps_g, (d, e)


# -- soundness against the optimum ----------------------------------------------------------------

def _mp(x: Fraction) -> mpmath.mpf:
    return mpmath.mpf(x.numerator) / x.denominator


def _mp_eps(e: object) -> mpmath.mpf:
    r = ExactReal.parse(e)
    return mpmath.log(_mp(r.value)) if r.kind == "log" else _mp(r.value)


def optimal_delta_oracle(mechs: list[tuple[object, Fraction, int]], eps_g: Fraction) -> mpmath.mpf:
    """MV Thm 1.5: 1 - prod(1-delta_i) (1 - delta_pure(eps_g)), by brute force over subsets (k <= 10)
    or, for one group, the homogeneous form MV Thm 1.4 with binomial coefficients."""
    eg = _mp(eps_g)
    keep = mpmath.fprod((1 - _mp(d)) ** c for _, d, c in mechs)
    if len(mechs) == 1:
        e, _, k = mechs[0]
        e = _mp_eps(e)
        s = mpmath.fsum(mpmath.binomial(k, l) * (mpmath.exp(l * e) - mpmath.exp(eg) * mpmath.exp((k - l) * e))
                        for l in range(k + 1) if (2 * l - k) * e > eg)
        pure = s / (1 + mpmath.exp(e)) ** k
    else:
        es = [_mp_eps(e) for e, _, c in mechs for _ in range(c)]
        total = mpmath.fsum(es)
        s = mpmath.mpf(0)
        for mask in itertools.product((0, 1), repeat=len(es)):
            es_in = mpmath.fsum(e for e, b in zip(es, mask) if b)
            s += max(mpmath.mpf(0), mpmath.exp(es_in) - mpmath.exp(eg) * mpmath.exp(total - es_in))
        pure = s / mpmath.fprod(1 + mpmath.exp(e) for e in es)
    return 1 - keep * (1 - pure)


small_st = st.lists(st.tuples(eps_st, delta_st, st.integers(1, 3)), min_size=1, max_size=3).filter(
    lambda m: sum(c for *_, c in m) <= 8)


@SETTINGS
@given(method_st, st.one_of(small_st, st.tuples(eps_st, delta_st, st.integers(1, 400)).map(lambda t: [t])),
       eps_g_st)
@example("zcdp_tight", [("log(2)", Fraction(0), 3)], Fraction(1))
def test_delta_bounds_are_sound(method: str, mechs: list, eps_g: Fraction) -> None:
    comp = Composition.heterogeneous(mechs)
    d = _delta(comp, method, eps_g)
    with mpmath.workdps(50):
        opt = optimal_delta_oracle([(str(m.eps), m.delta, c) for m, c in comp.groups], eps_g)
        assert _mp(Fraction(d.upper)) >= opt - mpmath.mpf(10) ** -40, (d, opt)


@SETTINGS
@given(method_st, st.one_of(small_st, st.tuples(eps_st, delta_st, st.integers(1, 400)).map(lambda t: [t])),
       delta_g_st)
def test_epsilon_bounds_are_sound(method: str, mechs: list, delta_g: Fraction) -> None:
    comp = Composition.heterogeneous(mechs)
    e = _eps(comp, method, delta_g)
    if e.is_infinite:
        return
    groups = [(str(m.eps), m.delta, c) for m, c in comp.groups]
    with mpmath.workdps(50):
        # the optimum is private at (e.upper, delta_g) because e.upper >= the bound's eps
        assert optimal_delta_oracle(groups, Fraction(e.upper)) <= _mp(delta_g) + mpmath.mpf(10) ** -40


def _kov15_available() -> bool:
    try:
        from exactdp.engines.kov15 import kov15_epsilon  # noqa: F401
    except (ImportError, NotImplementedError, AttributeError):
        return False
    return True


@pytest.mark.skipif(not _kov15_available(), reason="exactdp.engines.kov15 is still a placeholder")
@SETTINGS
@given(method_st, eps_st, delta_st, st.integers(1, 200), delta_g_st)
def test_bounds_at_least_the_optimum_kov15(method: str, eps: object, delta: Fraction, k: int,
                                           delta_g: Fraction) -> None:
    from exactdp.engines.kov15 import kov15_epsilon

    comp = Composition.homogeneous(eps, delta, k)
    try:
        opt = kov15_epsilon(comp, delta_g, digits=DIGITS)
    except NotImplementedError:
        pytest.skip("kov15 not implemented")
    assert _le(opt, _eps(comp, method, delta_g))


GRID = [("1/10", Fraction(0), 400), ("log(11/10)", Fraction(1, 10**6), 100), ("1/2", Fraction(0), 50)]


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("eps, delta, k", GRID)
def test_soundness_grid_large_k(method: str, eps: str, delta: Fraction, k: int) -> None:
    """Deterministic soundness checks where the better bounds come within ~30% of the optimum."""
    comp = Composition.homogeneous(eps, delta, k)
    groups = [(eps, delta, k)]
    with mpmath.workdps(50):
        for eps_g in (Fraction(2), Fraction(4), Fraction(6)):
            d = _delta(comp, method, eps_g)
            assert _mp(Fraction(d.upper)) >= optimal_delta_oracle(groups, eps_g) - mpmath.mpf(10) ** -40
        for delta_g in (Fraction(1, 10**8), Fraction(1, 10**5), Fraction(1, 100)):
            e = _eps(comp, method, delta_g)
            if not e.is_infinite:
                assert optimal_delta_oracle(groups, Fraction(e.upper)) <= _mp(delta_g) + mpmath.mpf(10) ** -40
