"""exactdp.engines.bounds against an independent mpmath oracle written from docs/mathematics.md §4.

The oracle evaluates each published eps formula at 80 digits (mpmath ``mp``), and obtains the delta
direction by *numerical* inversion (bisection in log delta), not by the closed-form inverses the
module uses; zcdp-tight is minimised by golden-section search over the original expression.  An
enclosure must contain the oracle value (up to a tolerance far below the enclosure width) and be
no wider than 1e-22 relative at digits=25.
"""

from __future__ import annotations

from fractions import Fraction
from types import SimpleNamespace

import mpmath
import pytest
from flint import arb, ctx

from exactdp.engines.bounds import advanced, basic, kov15, zcdp_tight
from exactdp.model.composition import Composition
from exactdp.core.numbers import ExactReal, arb_of_fraction
from exactdp.core.enclosure import Enclosure, certify

#: every bound by its function name, from the module that defines it
bounds = SimpleNamespace(**{n: getattr(m, n) for m in (basic, advanced, kov15, zcdp_tight) for n in m.__all__})

mp = mpmath.mp.clone() if hasattr(mpmath.mp, "clone") else mpmath.mp
DPS = 80
DIGITS = 25

METHODS = ["basic", "drv10", "kov15_34", "kov15_34_2013", "kov15_35", "steinke", "zcdp", "zcdp_tight"]

COMPS = {
    "h-0.1x30-pure": Composition.homogeneous("0.1", 0, 30),
    "h-0.1x30-1e-3": Composition.homogeneous("0.1", "0.001", 30),
    "h-log1.5x10": Composition.homogeneous("log(3/2)", "1e-6", 10),
    "h-1x5": Composition.homogeneous("1", 0, 5),
    "h-0.01x1000": Composition.homogeneous("0.01", "1e-8", 1000),
    "het-5": Composition.heterogeneous([("0.1", 0), ("0.2", "1e-6"), ("0.3", 0), ("0.5", "1e-5"), ("0.7", 0)]),
    "het-logs": Composition.heterogeneous([("log(2)", "1e-4", 3), ("0.05", 0, 20)]),
}
DELTAS = [Fraction(1, 10**6), Fraction(1, 1000), Fraction(1, 20)]
EPSS = ["0.5", "1.5", "3"]


# -- the oracle --------------------------------------------------------------------------------

def _mp(x: ExactReal | Fraction) -> mpmath.mpf:
    if isinstance(x, Fraction):
        return mpmath.mpf(x.numerator) / x.denominator
    v = mpmath.mpf(x.value.numerator) / x.value.denominator
    return mpmath.log(v) if x.kind == "log" else v


def _mechs(comp: Composition) -> list[tuple[mpmath.mpf, mpmath.mpf, int]]:
    return [(_mp(m.eps), _mp(m.delta), c) for m, c in comp.groups]


def _kov_terms(S1, T, V, dt):  # noqa: N803 - the paper's names
    e = mpmath.e
    return min(S1, T + mpmath.sqrt(2 * V * mpmath.log(e + mpmath.sqrt(V) / dt)),
               T + mpmath.sqrt(2 * V * mpmath.log(1 / dt)))


def _tight_delta(rho, eps):
    """inf_{a>1} e^{(a-1)(a rho - eps)}/(a-1) (1-1/a)^a by golden section in t = log(a-1)."""
    def lf(t):
        a = 1 + mpmath.exp(t)
        return (a - 1) * (a * rho - eps) - mpmath.log(a - 1) + a * mpmath.log(1 - 1 / a)
    lo, hi = mpmath.mpf(-80), mpmath.mpf(60)
    r = (mpmath.sqrt(5) - 1) / 2
    x1, x2 = hi - r * (hi - lo), lo + r * (hi - lo)
    f1, f2 = lf(x1), lf(x2)
    for _ in range(260):
        if f1 < f2:
            hi, x2, f2 = x2, x1, f1
            x1 = hi - r * (hi - lo)
            f1 = lf(x1)
        else:
            lo, x1, f1 = x1, x2, f2
            x2 = lo + r * (hi - lo)
            f2 = lf(x2)
    return mpmath.exp(min(f1, f2))


def oracle_epsilon(method: str, comp: Composition, delta_g: Fraction):
    """The published eps formula at total delta_g (mpmath, DPS digits); mpmath.inf when none."""
    ms = _mechs(comp)
    dg = _mp(delta_g)
    D = sum(c * d for _, d, c in ms)
    S1 = sum(c * e for e, _, c in ms)
    S2 = sum(c * e**2 for e, _, c in ms)
    if method == "basic":
        return S1 if D <= dg else mpmath.inf
    if method in ("drv10", "steinke", "zcdp", "zcdp_tight"):
        dp = dg - D
        if dp <= 0:
            return mpmath.inf
        L = mpmath.log(1 / dp)
        if method == "drv10":
            return mpmath.sqrt(2 * L * S2) + sum(c * e * (mpmath.exp(e) - 1) for e, _, c in ms)
        if method == "steinke":
            return S2 / 2 + mpmath.sqrt(2 * L * S2)
        rho = sum(c * e * mpmath.tanh(e / 2) for e, _, c in ms)
        if rho == 0:
            return mpmath.mpf(0)
        if method == "zcdp":
            return rho + 2 * mpmath.sqrt(rho * L)
        if _tight_delta(rho, 0) <= dp:
            return mpmath.mpf(0)
        return mpmath.findroot(lambda x: mpmath.log(_tight_delta(rho, x)) - mpmath.log(dp),
                               (mpmath.mpf(0), rho + 2 * mpmath.sqrt(rho * L) + 1), solver="illinois",
                               tol=mpmath.mpf(10) ** (-70))
    S1, T, V, P = _kov_params(method, comp)
    dt = 1 - (1 - dg) / P
    if dt < 0:
        return mpmath.inf
    if dt == 0:
        return S1
    return _kov_terms(S1, T, V, dt)


def _kov_params(method: str, comp: Composition):
    """(S1, T, V, P) of KOV15 Thm 3.4 (on max eps, max delta, k) or Thm 3.5."""
    ms = _mechs(comp)
    if method in ("kov15_34", "kov15_34_2013"):
        e, d, k = max(m[0] for m in ms), max(m[1] for m in ms), comp.k
        T = k * e * mpmath.tanh(e / 2) if method == "kov15_34" else k * e**2
        return k * e, T, k * e**2, (1 - d) ** k
    return (sum(c * e for e, _, c in ms), sum(c * e * mpmath.tanh(e / 2) for e, _, c in ms),
            sum(c * e**2 for e, _, c in ms), mpmath.fprod((1 - d) ** c for _, d, c in ms))


def oracle_delta(method: str, comp: Composition, eps_g: ExactReal):
    """The smallest total delta whose eps formula is <= eps_g, by bisection in log of the free delta."""
    ms = _mechs(comp)
    eg = _mp(eps_g)
    D = sum(c * d for _, d, c in ms)
    S1 = sum(c * e for e, _, c in ms)
    if method == "basic":
        return min(1, D) if S1 <= eg else mpmath.mpf(1)
    if method in ("kov15_34", "kov15_34_2013", "kov15_35"):
        S1, T, V, P = _kov_params(method, comp)
        if S1 <= eg:
            return 1 - P

        def eps_at(dt):  # eps~(delta~) is decreasing
            return _kov_terms(S1, T, V, dt)

        def free_to_total(dt):
            return 1 - P * (1 - dt)
    else:
        if method == "zcdp_tight":
            rho = sum(c * e * mpmath.tanh(e / 2) for e, _, c in ms)
            if rho == 0:
                return min(1, D)
            return min(mpmath.mpf(1), D + _tight_delta(rho, eg))
        if all(e == 0 for e, _, _ in ms):
            return min(1, D)

        def eps_at(dp):
            return _advanced_eps(method, ms, dp)
        def free_to_total(dp):
            return D + dp
    if eps_at(mpmath.mpf(1)) > eg:
        return mpmath.mpf(1)
    lo, hi = mpmath.mpf(-3000), mpmath.mpf(0)  # t = log(free delta); eps_at(e^hi) <= eg
    if eps_at(mpmath.exp(lo)) <= eg:
        raise AssertionError("bracket too small")
    for _ in range(300):
        mid = (lo + hi) / 2
        if eps_at(mpmath.exp(mid)) <= eg:
            hi = mid
        else:
            lo = mid
    return min(mpmath.mpf(1), free_to_total(mpmath.exp(hi)))


def _advanced_eps(method, ms, dp):
    L = mpmath.log(1 / dp)
    S2 = sum(c * e**2 for e, _, c in ms)
    if method == "drv10":
        return mpmath.sqrt(2 * L * S2) + sum(c * e * (mpmath.exp(e) - 1) for e, _, c in ms)
    if method == "steinke":
        return S2 / 2 + mpmath.sqrt(2 * L * S2)
    rho = sum(c * e * mpmath.tanh(e / 2) for e, _, c in ms)
    return rho + 2 * mpmath.sqrt(rho * L)


def _to_fraction(x) -> Fraction:
    m, e = mpmath.mpf(x).man_exp
    return Fraction(int(m) * 2**e) if e >= 0 else Fraction(int(m), 2**-e)


def assert_encloses(enc: Enclosure, v, rel_tol) -> None:
    if v == mpmath.inf:
        assert enc.is_infinite, f"expected inf, got {enc}"
        return
    assert not enc.is_infinite, f"got inf, expected {v}"
    lo, hi = _mp(Fraction(enc.lower)), _mp(Fraction(enc.upper))
    tol = abs(v) * rel_tol
    assert lo - tol <= v <= hi + tol, f"{mpmath.nstr(v, 40)} not in {enc}"
    if enc.exact is None and v != 0:
        assert (hi - lo) / abs(v) <= mpmath.mpf("1e-22"), f"too wide: {enc}"


@pytest.fixture(autouse=True)
def _precision():
    with mpmath.workdps(DPS):
        yield


def _tol(method: str) -> mpmath.mpf:
    # the oracle's own accuracy: golden section / bisection reach ~1e-40 at 80 digits
    return mpmath.mpf("1e-35") if method == "zcdp_tight" else mpmath.mpf("1e-60")


# -- tests ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("cname", list(COMPS))
def test_epsilon_matches_oracle(method: str, cname: str) -> None:
    comp = COMPS[cname]
    for dg in DELTAS:
        if method == "zcdp_tight" and dg != Fraction(1, 1000):
            continue  # the nested oracle is slow; one target per composition is enough
        enc = getattr(bounds, f"{method}_epsilon")(comp, dg, digits=DIGITS)
        assert_encloses(enc, oracle_epsilon(method, comp, dg), _tol(method))


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("cname", list(COMPS))
def test_delta_matches_oracle(method: str, cname: str) -> None:
    comp = COMPS[cname]
    for eg in EPSS:
        eps_g = ExactReal.parse(eg)
        enc = getattr(bounds, f"{method}_delta")(comp, eps_g, digits=DIGITS)
        v = oracle_delta(method, comp, eps_g)
        # the bisection oracle is accurate to ~2^-300 in log delta
        assert_encloses(enc, v, mpmath.mpf("1e-60") if method == "basic" else mpmath.mpf("1e-40"))
        assert 0 <= enc.lower and enc.upper <= 1


# -- docs/mathematics.md §6 pins: eps=0.1, k=30, pure, delta_g=1e-3 -------------------------------

PINS = {
    "basic": "3",
    "drv10": "2.3513548815514764138",
    "kov15_34": "2.0957506835726820081",
    "steinke": "2.1858421273245335394",
}


@pytest.mark.parametrize("method", list(PINS))
def test_reference_values(method: str) -> None:
    comp = Composition.homogeneous("0.1", 0, 30)
    enc = getattr(bounds, f"{method}_epsilon")(comp, Fraction(1, 1000), digits=30)
    golden = Fraction(PINS[method])  # 20 significant digits, rounded to nearest (docs/mathematics.md §6)
    assert abs((enc.lower + enc.upper) / 2 - golden) <= Fraction(1, 2 * 10**19)
    if method == "basic":
        assert enc.exact == 3


def test_steinke_footnote_rho() -> None:
    """docs/mathematics.md §4 and §6: rho = eps^2/(4 log(1/delta) + 4 eps) = 0.016874207542284743326 and
    rho + sqrt(4 rho log(1/delta)) <= eps, for eps = 1, delta = 1e-6."""
    def rho() -> arb:
        big_l = -arb_of_fraction(Fraction(1, 10**6)).log()
        return 1 / (4 * big_l + 4)
    enc = certify(rho, 30)
    assert abs((enc.lower + enc.upper) / 2 - Fraction("0.016874207542284743326")) <= Fraction(1, 2 * 10**21)
    with ctx.workprec(200):
        r, big_l = rho(), -arb_of_fraction(Fraction(1, 10**6)).log()
        assert r + (4 * r * big_l).sqrt() < 1


def test_kov34_2013_identical_to_35_for_equal_mechanisms() -> None:
    comp = COMPS["h-0.1x30-1e-3"]
    a = bounds.kov15_34_epsilon(comp, Fraction(1, 20), digits=DIGITS)
    b = bounds.kov15_35_epsilon(comp, Fraction(1, 20), digits=DIGITS)
    assert a.lower <= b.upper and b.lower <= a.upper


# -- exact and degenerate cases ------------------------------------------------------------------

def test_basic_is_exact() -> None:
    comp = Composition.heterogeneous([("0.1", "1e-3"), ("1/3", 0, 2)])
    e = bounds.basic_epsilon(comp, Fraction(1, 100), digits=DIGITS)
    assert e.exact == Fraction(1, 10) + Fraction(2, 3)
    assert bounds.basic_epsilon(comp, Fraction(1, 10**4), digits=DIGITS).is_infinite
    assert bounds.basic_delta(comp, ExactReal.parse("0.77"), digits=DIGITS).exact == Fraction(1, 1000)
    assert bounds.basic_delta(comp, ExactReal.parse("0.76"), digits=DIGITS).exact == 1


def test_basic_log_sum_is_exact_log() -> None:
    comp = Composition.homogeneous("log(3/2)", 0, 10)
    e = bounds.basic_epsilon(comp, Fraction(0), digits=DIGITS)
    assert e.exact_log == Fraction(3, 2) ** 10
    # eps_g exactly equal to sum eps: decided exactly (log(3^10/2^10) == 10 log(3/2))
    at = ExactReal.log(Fraction(3, 2) ** 10)
    for m in ("basic", "kov15_34", "kov15_35"):
        assert getattr(bounds, f"{m}_delta")(comp, at, digits=DIGITS).exact == 0, m


@pytest.mark.parametrize("method", METHODS)
def test_eps_zero_mechanisms(method: str) -> None:
    comp = Composition.homogeneous(0, "0.01", 5)
    e = getattr(bounds, f"{method}_epsilon")(comp, Fraction(1, 10), digits=DIGITS)
    assert e.exact == 0
    d = getattr(bounds, f"{method}_delta")(comp, ExactReal.parse(0), digits=DIGITS)
    expected = 1 - Fraction(99, 100) ** 5 if method.startswith("kov") else Fraction(5, 100)
    assert d.exact == expected


@pytest.mark.parametrize("method", METHODS)
def test_unreachable(method: str) -> None:
    comp = Composition.homogeneous("5", "0.1", 3)
    assert getattr(bounds, f"{method}_epsilon")(comp, Fraction(1, 10), digits=DIGITS).is_infinite
    assert getattr(bounds, f"{method}_delta")(comp, ExactReal.parse("0.1"), digits=DIGITS).exact == 1


@pytest.mark.parametrize("method", METHODS)
def test_huge_k(method: str) -> None:
    """k = 10**15 as one group: never expanded, and agrees with the oracle."""
    comp = Composition.homogeneous("1e-9", "1e-20", 10**15)
    enc = getattr(bounds, f"{method}_epsilon")(comp, Fraction(1, 10), digits=DIGITS)
    if method != "zcdp_tight":
        assert_encloses(enc, oracle_epsilon(method, comp, Fraction(1, 10)), _tol(method))
    d = getattr(bounds, f"{method}_delta")(comp, ExactReal.parse("0.1"), digits=DIGITS)
    assert 0 < d.lower <= d.upper <= 1


def test_drv10_heterogeneous_equals_homogeneous_form() -> None:
    """The heterogeneous DRV10 form with equal eps_i is the published homogeneous formula."""
    a = bounds.drv10_epsilon(Composition.heterogeneous([("0.1", "1e-4")] * 30), Fraction(1, 100), digits=DIGITS)
    b = bounds.drv10_epsilon(Composition.homogeneous("0.1", "1e-4", 30), Fraction(1, 100), digits=DIGITS)
    assert (a.lower, a.upper) == (b.lower, b.upper)


def test_kov34_heterogeneous_uses_max() -> None:
    het = Composition.heterogeneous([("0.1", "1e-6"), ("0.3", "1e-5"), ("0.2", 0)])
    hom = Composition.homogeneous("0.3", "1e-5", 3)
    for m in ("kov15_34", "kov15_34_2013"):
        a = getattr(bounds, f"{m}_epsilon")(het, Fraction(1, 100), digits=DIGITS)
        b = getattr(bounds, f"{m}_epsilon")(hom, Fraction(1, 100), digits=DIGITS)
        assert (a.lower, a.upper) == (b.lower, b.upper)


def test_threshold_ties_are_enclosed() -> None:
    """eps_g exactly at DRV10's threshold sum eps (e^eps - 1) (log(1024) for 10 x log(2)): delta' = 1."""
    comp = Composition.homogeneous("log(2)", 0, 10)
    d = bounds.drv10_delta(comp, ExactReal.log(1024), digits=DIGITS)
    assert d.upper == 1 and 1 - d.lower <= Fraction(1, 10**25)


def test_zcdp_tight_minimiser_near_one() -> None:
    """rho = 1000 tanh(500): the optimal order a is within e^-1000 of 1 and delta(0) = 1 - tiny."""
    comp = Composition.homogeneous("1000", 0, 1)
    d = bounds.zcdp_tight_delta(comp, ExactReal.parse(0), digits=DIGITS)
    assert d.upper == 1 and 1 - d.lower <= Fraction(1, 10**100)
    e = bounds.zcdp_tight_epsilon(comp, Fraction(1, 10**6), digits=DIGITS)
    with mpmath.workdps(DPS):
        assert_encloses(e, oracle_epsilon("zcdp_tight", comp, Fraction(1, 10**6)), _tol("zcdp_tight"))


def test_astronomically_small_value_is_refused() -> None:
    from exactdp.core.errors import PrecisionError

    with pytest.raises(PrecisionError, match="representable"):
        bounds.drv10_delta(Composition.homogeneous("1e-8", 0, 1), ExactReal.parse(20), digits=DIGITS)
