"""Calibration answers checked independently (docs/calibration.md).

Every returned ``value`` must meet the target and every ``fails_at`` must miss it, judged by
computations that share no code with the search: the exact decision ``is_private`` (generic),
a direct mpmath evaluation of the KOV15 sum (generic, small k), a linear scan over k, an mpmath
root of the Gaussian closed form, and the PLD engine's own brackets (DP-SGD, Laplace).
"""

from __future__ import annotations

import json
from fractions import Fraction

import mpmath
import pytest

from exactdp import Composition, is_private
from exactdp.calibrate import (Calibration, InfeasibleTargetError, calibrate_eps, calibrate_k,
                               calibrate_laplace_scale, calibrate_q, calibrate_scale, calibrate_sigma)
from exactdp.calibrate.certsearch import Outcome, Proof, integer_search, search, shortest_decimal_in
from exactdp.core.errors import ExactDPError, InvalidParameterError, TimeBudgetError
from exactdp.model.mechanisms import Gaussian, Laplace, PoissonSampled
from exactdp.core.numbers import ExactReal
from exactdp.engines.pld.engine import pld_decide

F = Fraction


@pytest.fixture(autouse=True)
def _mp():  # type: ignore[no-untyped-def]
    with mpmath.workdps(50):
        yield


def M(x: object) -> mpmath.mpf:
    x = Fraction(x)  # type: ignore[arg-type]
    return mpmath.mpf(x.numerator) / x.denominator


def kov15_delta(eps: Fraction, delta: Fraction, k: int, eps_g: Fraction) -> mpmath.mpf:
    """delta_opt(eps_g) of k (eps, delta)-DP mechanisms, the plain sum of docs/mathematics.md §3.2 in mpmath."""
    x, r = mpmath.exp(M(eps)), mpmath.exp(M(eps_g))
    s = mpmath.mpf(0)
    for l in range(k + 1):
        if (2 * l - k) * eps > eps_g:
            s += mpmath.binomial(k, l) * (x ** l - r * x ** (k - l))
    dp = s / (1 + x) ** k
    return 1 - (1 - M(delta)) ** k * (1 - dp)


def gaussian_delta(mu2: mpmath.mpf, eps: mpmath.mpf) -> mpmath.mpf:
    mu = mpmath.sqrt(mu2)
    return mpmath.ncdf(mu / 2 - eps / mu) - mpmath.exp(eps) * mpmath.ncdf(-mu / 2 - eps / mu)


def check_certificates(r: Calibration, eps_g: str, delta_g: str) -> None:
    """Each printed certificate must say what its verdict claims: a bracket of delta(eps_g) below
    delta_g for "meets" and above it for "fails" (of eps(delta_g) against eps_g for a method)."""
    for proof, verdict in ((r.value_proof, "meets"), (r.fails_proof, "fails")):
        if proof is None:
            continue
        assert proof.verdict == verdict
        if proof.quantity:
            bound = F(delta_g) if proof.quantity.startswith("delta") else F(eps_g)
            assert proof.lower <= proof.upper
            if verdict == "meets":
                assert proof.upper <= bound, proof
            else:
                assert proof.lower > bound, proof


# -- the search itself ------------------------------------------------------------------------------

def test_shortest_decimal_in() -> None:
    assert shortest_decimal_in(F(1234, 1000), F(1236, 1000)) == F(1235, 1000)
    assert shortest_decimal_in(F(9, 10), F(11, 10)) == 1
    assert shortest_decimal_in(F(-3, 10), F(5, 10)) == 0
    assert shortest_decimal_in(F(1, 3), F(1, 3)) == F(1, 3)
    for a, b in [(F(1, 7), F(1, 6)), (F(123456, 10**9), F(123457, 10**9)), (F(99, 1), F(101, 1))]:
        c = shortest_decimal_in(a, b)
        assert a <= c <= b and 10**12 % c.denominator == 0   # a decimal with few digits


def _exact_probe(boundary: Fraction, worse_up: bool, undecided_within: Fraction = F(0), log: list | None = None):
    def probe(x):  # type: ignore[no-untyped-def]
        if log is not None:
            log.append(x)
        d = Fraction(x) - boundary
        if abs(d) < undecided_within:
            return Outcome("undecided", 0.0, Proof("undecided", "test"))
        ok = d <= 0 if worse_up else d >= 0
        score = float(d) if worse_up else -float(d)
        return Outcome("meets" if ok else "fails", score, Proof("meets" if ok else "fails", "test"))
    return probe


@pytest.mark.parametrize("boundary", [F(1, 3), F(7, 1000), F(12345, 7), F(1, 10**6)])
@pytest.mark.parametrize("worse_up", [True, False])
def test_search_finds_both_certified_ends(boundary: Fraction, worse_up: bool) -> None:
    gap = F(1, 10**4)
    r = search(_exact_probe(boundary, worse_up), worse_up=worse_up, x0=F(1), gap=gap)
    assert r.safe is not None and r.fail is not None and not r.stopped
    if worse_up:
        assert r.safe <= boundary < r.fail
    else:
        assert r.fail < boundary <= r.safe
    assert abs(r.fail - r.safe) <= gap * r.safe
    assert r.probes < 60


def test_search_stops_honestly_in_an_undecided_zone() -> None:
    b = F(1, 3)
    r = search(_exact_probe(b, True, undecided_within=F(1, 1000)), worse_up=True, x0=F(1, 10), gap=F(1, 10**6))
    assert r.safe is not None and r.fail is not None
    assert r.safe <= b - F(1, 1000) and r.fail >= b + F(1, 1000)   # never inside the zone
    assert r.stopped == "undecided" and r.undecided


def test_integer_search_exact() -> None:
    for b in (1, 2, 7, 1000, 123457, 10**12 + 3):
        r = integer_search(_exact_probe(F(b), True), x0=1)
        assert (r.safe, r.fail) == (b, b + 1)
    with pytest.raises(InfeasibleTargetError):
        integer_search(_exact_probe(F(1, 2), True), x0=5)


def test_search_never_trusts_a_misleading_score() -> None:
    # scores that point the wrong way: only the verdicts may move the ends
    def probe(x):  # type: ignore[no-untyped-def]
        ok = x <= F(2, 3)
        return Outcome("meets" if ok else "fails", -float(x), Proof("meets" if ok else "fails", "test"))
    r = search(probe, worse_up=True, x0=F(1, 10), gap=F(1, 10**5))
    assert r.safe <= F(2, 3) < r.fail and (r.fail - r.safe) <= F(1, 10**5) * r.safe


# -- generic compositions -----------------------------------------------------------------------

CASES = [(30, "0", "1", "1e-5"), (10, "0.00001", "1", "0.001"), (3, "0", "0.5", "0.01"), (100, "1e-8", "2", "1e-5"),
         (1, "0", "1", "0.1"), (7, "0.001", "0.3", "0.05")]


@pytest.mark.parametrize("k, d, eg, dg", CASES)
def test_calibrate_eps_optimal_is_certified(k: int, d: str, eg: str, dg: str) -> None:
    r = calibrate_eps(k, eg, dg, delta=d)
    assert isinstance(r, Calibration) and r.engine == "exact" and r.gap_reached
    assert is_private((r.value, d, k), eg, dg)
    assert not is_private((r.fails_at, d, k), eg, dg)
    assert r.value < r.fails_at and r.relative_gap <= F(1, 10**6)
    check_certificates(r, eg, dg)
    # independently: the plain KOV15 sum in mpmath, for small k
    if k <= 100:
        assert kov15_delta(r.value, F(d), k, F(eg)) <= M(dg)
        assert kov15_delta(r.fails_at, F(d), k, F(eg)) > M(dg)
    # a value a user can type
    assert len(r.value_str) < 14 and "/" not in r.value_str


def test_calibrate_eps_brute_force_small() -> None:
    # k = 4, eps on a 1/200 grid: the largest grid point that meets must lie in [value, fails_at)
    k, eg, dg = 4, F(1), F(1, 100)
    grid = [F(i, 200) for i in range(1, 200)]
    best = max(e for e in grid if kov15_delta(e, F(0), k, eg) <= M(dg))
    r = calibrate_eps(k, eg, dg)
    assert best <= r.fails_at and best + F(1, 200) > r.value


@pytest.mark.parametrize("method", ["basic", "drv10", "kov15-3.4", "steinke", "zcdp", "zcdp-tight"])
def test_calibrate_eps_methods(method: str) -> None:
    from exactdp import epsilon

    r = calibrate_eps(30, "1", "1e-5", method=method)
    assert r.engine == method
    check_certificates(r, "1", "1e-5")
    assert epsilon((r.value, 0, 30), "1e-5", method=method, digits=20).upper <= 1
    assert epsilon((r.fails_at, 0, 30), "1e-5", method=method, digits=20).lower > 1
    opt = calibrate_eps(30, "1", "1e-5")
    assert r.fails_at <= opt.fails_at  # every bound is looser than the optimum


def test_calibrate_eps_basic_is_exact_at_the_boundary() -> None:
    r = calibrate_eps(10, "1", "1e-6", method="basic")
    assert r.value == F(1, 10)  # 10 x 0.1 = 1 exactly meets; polished to the shortest decimal


def test_calibrate_eps_with_base_and_scale() -> None:
    base = [("0.5", "0"), ("0.3", "1e-6")]
    r = calibrate_eps(1, "1", "1e-5", base=base)
    assert is_private(base + [(r.value, "0")], "1", "1e-5")
    assert not is_private(base + [(r.fails_at, "0")], "1", "1e-5")
    mechs = [("0.1", "0"), ("0.2", "1e-6", 5)]
    c = calibrate_scale(mechs, "1", "1e-5")
    scaled = lambda f: [(f * F(e), d, *n) for e, d, *n in mechs]  # noqa: E731
    assert is_private(scaled(c.value), "1", "1e-5") and not is_private(scaled(c.fails_at), "1", "1e-5")
    with pytest.raises(InvalidParameterError):
        calibrate_scale([("log(2)", "0")], "1", "1e-5")


def test_round_to_rounds_in_the_safe_direction() -> None:
    r = calibrate_eps(30, "1", "1e-5", round_to="0.001")
    assert r.value == F(50, 1000) and is_private((r.value, 0, 30), "1", "1e-5")
    s = calibrate_sigma(100, "1", "1e-5", round_to="0.01")
    assert s.value == F(3731, 100) and s.value_proof.verdict == "meets"


def test_infeasible_targets() -> None:
    with pytest.raises(InfeasibleTargetError):
        calibrate_eps(10, "1", "1e-5", delta="1e-5")  # 10 deltas alone exceed delta_g
    with pytest.raises(InfeasibleTargetError):
        calibrate_k("0.1,0.01", "1", "0.001")          # even one run misses
    with pytest.raises(InfeasibleTargetError):
        calibrate_sigma(10, "1", "0")                  # a Gaussian never has delta = 0


def test_calibrate_k_generic_against_a_linear_scan() -> None:
    for spec, eg, dg in [("0.1", "1", "1e-5"), ("0.05,1e-7", "1", "1e-5"), ("0.3", "2", "0.001"),
                         ("log(2)", "log(8)", "0.01")]:
        r = calibrate_k(spec, eg, dg)
        e, *d = spec.split(",")
        d0 = d[0] if d else "0"
        k = 1
        while is_private((e, d0, k + 1), eg, dg):
            k += 1
        assert (r.value, r.fails_at, r.exact) == (k, k + 1, True)


def test_calibrate_k_large_generic() -> None:
    r = calibrate_k("0.001", "1", "1e-6")
    assert r.exact and is_private(("0.001", 0, r.value), "1", "1e-6")
    assert not is_private(("0.001", 0, r.value + 1), "1", "1e-6")
    assert r.value > 20000


# -- Gaussian: the closed form ----------------------------------------------------------------------

@pytest.mark.parametrize("k, s, eg, dg", [(100, "1", "1", "1e-5"), (1, "1", "1", "1e-5"), (1000, "2", "8", "1e-9"),
                                          (10, "0.5", "0.1", "0.01")])
def test_calibrate_sigma_against_an_mpmath_root(k: int, s: str, eg: str, dg: str) -> None:
    r = calibrate_sigma(k, eg, dg, sensitivity=s)
    star = mpmath.findroot(lambda sig: gaussian_delta(k * M(s) ** 2 / sig ** 2, M(eg)) - M(dg),
                           M(r.value))
    assert M(r.fails_at) < star <= M(r.value)
    check_certificates(r, eg, dg)
    # the certified brackets hold the mpmath value of delta at both ends
    for x, p in ((r.value, r.value_proof), (r.fails_at, r.fails_proof)):
        d = gaussian_delta(k * M(s) ** 2 / M(x) ** 2, M(eg))
        assert M(p.lower) <= d <= M(p.upper)
    assert r.relative_gap <= F(1, 10**6)
    assert is_private([(Gaussian(r.value, s), k)], eg, dg)
    assert not is_private([(Gaussian(r.fails_at, s), k)], eg, dg)


def test_calibrate_k_gaussian_closed_form() -> None:
    r = calibrate_k("gaussian:sigma=10", "1", "1e-5")
    assert (r.value, r.fails_at) == (7, 8)
    for k in range(1, 10):
        assert (gaussian_delta(mpmath.mpf(k) / 100, mpmath.mpf(1)) <= M("1e-5")) == (k <= 7)


def test_calibrate_k_laplace_against_a_linear_scan() -> None:
    r = calibrate_k("laplace:scale=20", "1", "1e-6")
    assert r.exact
    check_certificates(r, "1", "1e-6")
    ok = [pld_decide(Composition.of([(Laplace("20"), k)]), ExactReal.parse("1"), F(1, 10**6), max_seconds=60)
          for k in range(1, r.value + 2)]
    assert all(ok[:-1]) and not ok[-1]


def test_calibrate_laplace_scale() -> None:
    r = calibrate_laplace_scale(10, "1", "1e-6")
    check_certificates(r, "1", "1e-6")
    c = Composition.of([(Laplace(r.value), 10)])
    assert pld_decide(c, ExactReal.parse("1"), F(1, 10**6), max_seconds=60)
    assert not pld_decide(Composition.of([(Laplace(r.fails_at), 10)]), ExactReal.parse("1"), F(1, 10**6),
                          max_seconds=60)
    assert r.comparison and r.value <= 10  # no worse than basic composition
    p = calibrate_laplace_scale(10, "1", "0", sensitivity=2)   # pure DP: exactly b = k D / eps_g
    assert p.value == 20 and p.fails_at < 20


def test_pld_certificates_hold_the_true_delta() -> None:
    # two Laplace(2) steps have delta(0.2) = 0.1956159447572328391067 (docs/mathematics.md §7.3, by
    # quadrature): with that target the optimal scale is 2, so the certified pair must straddle 2
    r = calibrate_laplace_scale(2, "0.2", "0.1956159447572328391067")
    check_certificates(r, "0.2", "0.1956159447572328391067")
    assert r.fails_at < 2 + F(1, 10**12) and r.value > 2 - F(1, 10**12)


def test_calibrate_q_end_of_range() -> None:
    r = calibrate_q("10", 10, "1", "1e-3")
    assert r.value == 1 and r.fails_at is None and r.exact


# -- results ---------------------------------------------------------------------------------------

def test_result_json_and_text() -> None:
    r = calibrate_sigma(100, "1", "1e-5")
    j = r.to_json()
    json.dumps(j)
    assert j["value"] == r.value_str and j["fails_at"] == r.fails_at_str
    assert j["inputs"]["k"] == 100 and j["inputs"]["target_delta"] == "0.00001"
    assert j["certificate"]["value"]["verdict"] == "meets" and j["certificate"]["fails_at"]["verdict"] == "fails"
    assert Fraction(j["certificate"]["value"]["upper"]) <= F(1, 10**5)
    assert Fraction(j["certificate"]["fails_at"]["lower"]) > F(1, 10**5)
    text = str(r)
    assert "certified safe" in text and "certified to miss" in text
    k = calibrate_k("0.1", "1", "1e-5").to_json()
    assert isinstance(k["value"], int) and k["fails_at"] == k["value"] + 1 and k["exact"] is True
    with pytest.raises(Exception):
        r.value = F(1)  # type: ignore[misc]  # frozen


def test_budget_gives_the_best_certified_bracket() -> None:
    # a time budget too short for any probe of DP-SGD: a typed error with what was reached
    with pytest.raises(TimeBudgetError):
        calibrate_sigma(1000, "1", "1e-5", q="0.01", max_seconds="0.001")


@pytest.mark.parametrize("bad", [dict(gap="0"), dict(gap="1"), dict(round_to="-1"), dict(max_seconds="0"),
                                 dict(q="-0.5"), dict(q="1.5"), dict(sensitivity="0")])  # q = 0 is answered: test_calibrate_degenerate
def test_bad_arguments(bad: dict) -> None:
    with pytest.raises(ExactDPError):
        calibrate_sigma(10, "1", "1e-5", **bad)


# -- the slow ones: DP-SGD against direct PLD brackets ------------------------------------------------

@pytest.mark.slow
def test_dpsgd_sigma_checked_with_pld_brackets() -> None:
    r = calibrate_sigma(1000, "2", "1e-5", q="0.01")
    assert r.engine == "pld" and r.gap_reached
    check_certificates(r, "2", "1e-5")
    comp = lambda s: Composition.of([(PoissonSampled(Gaussian(s), "0.01"), 1000)])  # noqa: E731
    assert pld_decide(comp(r.value), ExactReal.parse("2"), F(1, 10**5), max_seconds=200)
    assert not pld_decide(comp(r.fails_at), ExactReal.parse("2"), F(1, 10**5), max_seconds=200)


@pytest.mark.slow
def test_dpsgd_q_and_k_checked_with_pld_brackets() -> None:
    r = calibrate_q("2", 100, "1", "1e-5")
    check_certificates(r, "1", "1e-5")
    comp = lambda q, k=100: Composition.of([(PoissonSampled(Gaussian("2"), q), k)])  # noqa: E731
    assert pld_decide(comp(r.value), ExactReal.parse("1"), F(1, 10**5), max_seconds=200)
    assert not pld_decide(comp(r.fails_at), ExactReal.parse("1"), F(1, 10**5), max_seconds=200)
    k = calibrate_k("gaussian:sigma=2,q=0.05", "1", "1e-5")
    assert k.exact
    check_certificates(k, "1", "1e-5")
    assert pld_decide(comp("0.05", k.value), ExactReal.parse("1"), F(1, 10**5), max_seconds=200)
    assert not pld_decide(comp("0.05", k.value + 1), ExactReal.parse("1"), F(1, 10**5), max_seconds=200)


def test_dpsgd_probes_decided_by_the_float_fft_place_the_next_probe_from_the_end_that_decided() -> None:
    """A float-FFT decision (docs/pld.md §12.7) refines only the end that decides and may leave the
    other trivial (upper 1): the secant's score is that end, not the midpoint, else the search took twice
    the probes (16 against 8 for this query). The answer is still checked: the value meets, fails_at misses."""
    from exactdp.api.optimal import is_private
    from exactdp.query import run_query

    r = run_query({"query": "calibrate", "calibrate": "sigma", "k": 1000, "q": "0.01", "target_eps": "2",
                   "target_delta": "1e-5"})
    assert r["engine"] == "pld" and r["gap_reached"], r
    assert r["probes"] <= 11, r
    value, fails = Fraction(r["value"]), Fraction(r["fails_at"])
    assert fails < value and is_private(f"gaussian:sigma={value},q=0.01,count=1000", 2, Fraction(1, 10**5))
