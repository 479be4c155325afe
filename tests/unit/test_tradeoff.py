"""Trade-off curves (f-DP) and the GDP mu (docs/tradeoff.md), against independent references.

References share no code with the engine: mpmath's normal distribution (the Gaussian closed form
Phi(Phi^-1(1 - alpha) - mu), the subsampled Gaussian's Neyman-Pearson curves), the Laplace
trade-off function in closed form (Dong, Roth and Su: the test thresholding the output), and the
Neyman-Pearson test of products of generic (eps, 0) and k-ary randomized-response pairs enumerated
in exact Fractions.
"""

from __future__ import annotations

from collections.abc import Iterator
from fractions import Fraction
from itertools import product
from math import comb

import mpmath
import pytest

import exactdp
from exactdp.api.tradeoff import Tradeoff, parse_alpha, tradeoff, true_positive_rates
from exactdp.core.errors import InvalidParameterError
from exactdp.engines.pld.tradeoff import pld_tradeoff
from exactdp.model.composition import Composition


@pytest.fixture(autouse=True)
def _keep_mpmath_precision() -> Iterator[None]:
    """The references set mpmath's precision; other tests' references need theirs back."""
    dps = mpmath.mp.dps
    yield
    mpmath.mp.dps = dps


ALPHAS = ["0.001", "0.01", "0.1", "0.3", "0.5", "0.9"]


def _frac(x: mpmath.mpf) -> Fraction:
    return Fraction(mpmath.nstr(x, mpmath.mp.dps - 5, min_fixed=-1, max_fixed=1)) if x != 0 else Fraction(0)


def _contains(enc: exactdp.Enclosure, ref: Fraction, slack: Fraction = Fraction(1, 10**40)) -> bool:
    return enc.lower - slack <= ref <= enc.upper + slack


def _gauss_ref(mu: mpmath.mpf, a: str) -> Fraction:
    al = mpmath.mpf(Fraction(a).numerator) / Fraction(a).denominator
    return _frac(mpmath.ncdf(-mpmath.sqrt(2) * mpmath.erfinv(2 * al - 1) - mu))


def _np_curve(atoms: list[tuple[Fraction, Fraction]], alpha: Fraction) -> Fraction:
    """The Neyman-Pearson trade-off T(P, Q)(alpha) of a finite pair given as (P, Q) masses per outcome,
    exactly: outcomes sorted by P/Q decreasing, the boundary outcome randomised."""
    atoms = sorted(atoms, key=lambda pq: (pq[0] / pq[1]) if pq[1] else Fraction(10**100), reverse=True)
    need = 1 - alpha  # the P-mass the acceptance region S' must hold
    beta = Fraction(0)
    for p, q in atoms:
        if need <= 0:
            break
        if p <= need:
            need -= p
            beta += q
        else:
            beta += q * need / p
            need = Fraction(0)
    return beta


def _product(one: list[tuple[Fraction, Fraction]], k: int) -> list[tuple[Fraction, Fraction]]:
    out = []
    for combo in product(one, repeat=k):
        p, q = Fraction(1), Fraction(1)
        for a, b in combo:
            p, q = p * a, q * b
        out.append((p, q))
    return out


# -- Gaussian -----------------------------------------------------------------------------------

@pytest.mark.parametrize("count", [1, 3])
def test_gaussian_closed_form_30_digits(count: int) -> None:
    mpmath.mp.dps = 60
    t = tradeoff(f"gaussian:sigma=1,count={count}", ALPHAS, digits=30)
    mu = mpmath.sqrt(count)
    for a, b in zip(ALPHAS, t.betas):
        assert _contains(b, _gauss_ref(mu, a), Fraction(1, 10**50))
        assert b.relative_width() <= Fraction(1, 10**30)
    assert t.gdp_mu.contains(_frac(mu)) or _contains(t.gdp_mu, _frac(mu))
    assert (t.gdp_mu.exact == 1) == (count == 1)


@pytest.mark.parametrize("count", [1, 3])
def test_pld_engine_brackets_the_gaussian_closed_form(count: int) -> None:
    mpmath.mp.dps = 40
    comp = Composition.of(f"gaussian:sigma=1,count={count}")
    pts, mu = pld_tradeoff(comp, [Fraction(a) for a in ALPHAS], digits=6, max_seconds=60)
    for a, b in zip(ALPHAS, pts):
        ref = _gauss_ref(mpmath.sqrt(count), a)
        assert _contains(b, ref, Fraction(1, 10**30)), (a, b, ref)
        assert b.relative_width() <= Fraction(1, 10**5)
    # a lower bound of mu, close to the true sqrt(count); the upper end is +inf (a truncated law)
    true_mu = _frac(mpmath.sqrt(count))
    assert true_mu - Fraction(1, 50) <= mu.lower <= true_mu and mu.upper == exactdp.INF


def test_gdp_mu_of_gaussian_compositions_exact() -> None:
    assert tradeoff("gaussian:sigma=2,count=16", ["0.5"]).gdp_mu.exact == 2
    comp = [exactdp.Gaussian(1), (exactdp.Gaussian(2), 4)]  # mu^2 = 1 + 4/4 = 2
    mpmath.mp.dps = 50
    m = tradeoff(comp, ["0.5"], digits=20).gdp_mu
    assert _contains(m, _frac(mpmath.sqrt(2)), Fraction(0)) and m.relative_width() <= Fraction(1, 10**20)


# -- generic (eps, 0) pairs and randomized response: exact Neyman-Pearson by enumeration ---------

def _generic_atoms(x: Fraction) -> list[tuple[Fraction, Fraction]]:
    """The canonical (eps, 0) pair, e^eps = x: outputs 'up' and 'down'."""
    p = x / (1 + x)
    return [(p, 1 - p), (1 - p, p)]


def _np_vertices(atoms: list[tuple[Fraction, Fraction]]) -> list[tuple[Fraction, Fraction]]:
    """The vertices (alpha, beta) of the Neyman-Pearson curve of a finite pair, exactly."""
    atoms = sorted(atoms, key=lambda pq: pq[0] / pq[1], reverse=True)
    out, sp, sq = [(Fraction(1), Fraction(0))], Fraction(0), Fraction(0)
    for p, q in atoms:
        sp, sq = sp + p, sq + q
        out.append((1 - sp, sq))
    return out


def _both_paths(comp: object, alphas: list[str], digits: int) -> list[list[exactdp.Enclosure]]:
    """The public answer (the KOV15 vertices for k equal generic pairs) and the PLD engine's."""
    c = Composition.of(comp)  # type: ignore[arg-type]
    pld, _ = pld_tradeoff(c, [Fraction(a) for a in alphas], digits=digits, max_seconds=60)
    return [list(tradeoff(c, alphas, digits=digits).betas), pld]


@pytest.mark.parametrize("k", [1, 2, 3])
def test_generic_pure_pair_off_lattice_against_fraction_enumeration(k: int) -> None:
    # eps = log(3/2): off every rational lattice (the PLD's grid route), e^eps = 3/2 exact
    atoms = _product(_generic_atoms(Fraction(3, 2)), k)
    region, pld = _both_paths(("log(3/2)", 0, k), ALPHAS, 5)
    for a, r, b in zip(ALPHAS, region, pld):
        ref = _np_curve(atoms, Fraction(a))
        assert r.exact == ref  # the KOV15 vertices are exact rationals here
        assert b.lower <= ref <= b.upper and b.relative_width() <= Fraction(1, 10**5), (k, a, b, ref)
        if k == 1:  # Kairouz et al.: f(alpha) = max(0, 1 - e^eps alpha, e^-eps (1 - alpha))
            x, al = Fraction(3, 2), Fraction(a)
            assert ref == max(Fraction(0), 1 - x * al, (1 - al) / x)


@pytest.mark.parametrize("k", [1, 2, 5])
def test_generic_pure_pair_on_the_lattice_25_digits(k: int) -> None:
    # eps = 1 is a lattice: the PLD laws are exact up to truncation; the reference is the binomial NP test
    mpmath.mp.dps = 60
    e = mpmath.e
    p = e / (1 + e)
    for betas in _both_paths(("1", 0, k), ALPHAS, 25):
        for a, b in zip(ALPHAS, betas):
            need, beta = 1 - mpmath.mpf(Fraction(a).numerator) / Fraction(a).denominator, mpmath.mpf(0)
            for j in range(k, -1, -1):  # j 'ups': loss (2j - k) eps, largest first
                pj = comb(k, j) * p**j * (1 - p) ** (k - j)
                qj = comb(k, j) * (1 - p) ** j * p ** (k - j)
                if need <= 0:
                    break
                take = min(pj, need)
                beta += qj * take / pj
                need -= take
            assert _contains(b, _frac(beta), Fraction(1, 10**35)), (k, a, b)
            assert b.relative_width() <= Fraction(1, 10**25)


@pytest.mark.parametrize(("eps", "x", "k"), [("log(3/2)", Fraction(3, 2), 1), ("log(3/2)", Fraction(3, 2), 4),
                                             ("log(2)", Fraction(2), 3)])
def test_gdp_mu_of_pure_dp_from_the_exact_vertices(eps: str, x: Fraction, k: int) -> None:
    # mu = max over the NP curve's interior vertices of Phi^-1(1 - a) - Phi^-1(b) (docs/tradeoff.md §5)
    mpmath.mp.dps = 50
    verts = _np_vertices(_product(_generic_atoms(x), k))
    inv = lambda q: mpmath.sqrt(2) * mpmath.erfinv(2 * mpmath.mpf(q.numerator) / q.denominator - 1)
    ref = max(inv(1 - a) - inv(b) for a, b in verts if 0 < a < 1 and 0 < b < 1)
    mu = tradeoff((eps, 0, k), ["0.5"], digits=20).gdp_mu
    assert _contains(mu, _frac(ref), Fraction(1, 10**40)) and mu.relative_width() <= Fraction(1, 10**20)
    if k == 1:  # one eps-DP step: mu = 2 Phi^-1(e^eps / (1 + e^eps))
        assert abs(ref - 2 * inv(x / (1 + x))) < mpmath.mpf(10) ** -40
    # the PLD engine's certified lower end lies below it
    _, pld_mu = pld_tradeoff(Composition.of((eps, 0, k)), [Fraction(1, 2)], digits=3, max_seconds=5)
    assert pld_mu.lower <= mu.upper and pld_mu.upper == exactdp.INF


def test_k_ary_randomized_response_against_enumeration() -> None:
    # rr:eps=log(2),categories=4: outputs x (2/5 vs 1/5), x' (1/5 vs 2/5), two others (1/5 each)
    one = [(Fraction(2, 5), Fraction(1, 5)), (Fraction(1, 5), Fraction(2, 5)),
           (Fraction(1, 5), Fraction(1, 5)), (Fraction(1, 5), Fraction(1, 5))]
    t = tradeoff("rr:eps=log(2),categories=4,count=2", ALPHAS, digits=5, max_seconds=60)
    assert t.betas[0].algorithm is not None and t.betas[0].algorithm.startswith("pld-tradeoff")
    for a, b in zip(ALPHAS, t.betas):
        ref = _np_curve(_product(one, 2), Fraction(a))
        assert b.lower <= ref <= b.upper, (a, b, ref)


def test_approximate_dp_has_no_gdp_mu_and_beta_zero_past_the_inf_mass() -> None:
    t = tradeoff(("1", "0.01", 2), ["0.5", "0.995"], digits=6)
    assert t.gdp_mu.is_infinite  # f(0) = 0.99^2 < 1: no G_mu lies below f
    assert t.betas[1].exact == 0  # alpha >= 1 - p_inf: beta = 0
    pld, mu = pld_tradeoff(Composition.of(("1", "0.01", 2)), [Fraction(1, 2), Fraction(995, 1000)], digits=6)
    assert mu.is_infinite and pld[1].lower == 0 and pld[1].upper < Fraction(1, 10**30)
    assert pld[0].lower <= t.betas[0].upper and t.betas[0].lower <= pld[0].upper


# -- Laplace: the closed form of one step ---------------------------------------------------------

@pytest.mark.parametrize("scale", ["1", "2"])
def test_laplace_one_step_against_the_threshold_test(scale: str) -> None:
    mpmath.mp.dps = 40
    eps = 1 / mpmath.mpf(scale)
    t = tradeoff(f"laplace:scale={scale}", ALPHAS, digits=6, max_seconds=60)
    for a, b in zip(ALPHAS, t.betas):
        al = mpmath.mpf(Fraction(a).numerator) / Fraction(a).denominator
        if al < mpmath.exp(-eps) / 2:
            ref = 1 - mpmath.exp(eps) * al
        elif al <= mpmath.mpf(1) / 2:
            ref = mpmath.exp(-eps) / (4 * al)
        else:
            ref = mpmath.exp(-eps) * (1 - al)
        assert _contains(b, _frac(ref), Fraction(1, 10**30)), (scale, a, b, ref)
        assert b.relative_width() <= Fraction(1, 10**5)


def _laplace2_tradeoff(b: str, alpha: mpmath.mpf) -> mpmath.mpf:
    """T(alpha) of two Laplace(b) steps (sensitivity 1) by the Neyman-Pearson test on the summed loss,
    in mpmath: one step's loss is +-1/b (atoms, x <= 0 and x >= 1) or (1 - 2x)/b on (0, 1), with P-density
    e^{-(1/b - l)/2}/4 there and Q = P e^{-l}; the two-step tails are the atom-atom, atom-continuous
    (closed forms) and continuous-continuous (a quadrature) parts; the boundary atom is randomised."""
    e = 1 / mpmath.mpf(b)

    def pd(c: mpmath.mpf) -> mpmath.mpf:  # P-density of the continuous part of one loss, on (-e, e)
        return mpmath.exp(-(e - c) / 2) / 4

    def clamp(s: mpmath.mpf) -> mpmath.mpf:
        return min(max(s, -e), e)

    def FP(s: mpmath.mpf) -> mpmath.mpf:  # P(c > s)
        return (1 - mpmath.exp(-(e - clamp(s)) / 2)) / 2

    def FQ(s: mpmath.mpf) -> mpmath.mpf:  # Q(c > s)
        return mpmath.exp(-e / 2) * (mpmath.exp(-clamp(s) / 2) - mpmath.exp(-e / 2)) / 2

    aP = {e: mpmath.mpf(1) / 2, -e: mpmath.exp(-e) / 2}      # atoms: P masses (Q = P e^-l)
    def tails(t: mpmath.mpf, strict: bool = True) -> tuple[mpmath.mpf, mpmath.mpf]:
        # (P(L > t), Q(L > t)); strict=False: >=
        p = q = mpmath.mpf(0)
        for a1, m1 in aP.items():
            for a2, m2 in aP.items():
                if a1 + a2 > t or (not strict and a1 + a2 == t):
                    p += m1 * m2
                    q += m1 * m2 * mpmath.exp(-(a1 + a2))
            # atom + continuous, both orders
            p += 2 * m1 * FP(t - a1)
            q += 2 * m1 * mpmath.exp(-a1) * FQ(t - a1)
        pts = sorted({-e, e, clamp(t - e), clamp(t + e)})
        p += mpmath.quad(lambda c: pd(c) * FP(t - c), pts)
        q += mpmath.quad(lambda c: pd(c) * mpmath.exp(-c) * FQ(t - c), pts)
        return p, q
    need = 1 - alpha
    for t0 in (2 * e, mpmath.mpf(0), -2 * e):  # the atoms of L
        pg, qg = tails(t0)
        pge, _ = tails(t0, strict=False)
        if pg <= need <= pge:
            return qg + (need - pg) * mpmath.exp(-t0)
    lo, hi = -2 * e, 2 * e
    for _ in range(64):
        mid = (lo + hi) / 2
        if tails(mid)[0] > need:
            lo = mid
        else:
            hi = mid
    return tails(hi)[1]


@pytest.mark.parametrize("scale", ["1", "2"])
def test_laplace_two_steps_against_quadrature(scale: str) -> None:
    mpmath.mp.dps = 20
    alphas = ["0.01", "0.1", "0.3", "0.5"]
    t = tradeoff(f"laplace:scale={scale},count=2", alphas, digits=6, max_seconds=60)
    for a, b in zip(alphas, t.betas):
        ref = _laplace2_tradeoff(scale, mpmath.mpf(Fraction(a).numerator) / Fraction(a).denominator)
        assert _contains(b, _frac(ref), Fraction(1, 10**12)), (scale, a, b, ref)
        assert b.relative_width() <= Fraction(1, 10**5)


@pytest.mark.parametrize("scale", ["1", "2"])
def test_laplace_gdp_mu_lower_end_below_the_true_mu(scale: str) -> None:
    """mu = sup_alpha Phi^-1(1 - alpha) - Phi^-1(f(alpha)) of one Laplace step, f in closed form; the
    supremum located by a scan in log alpha and a ternary search (it is unimodal there)."""
    mpmath.mp.dps = 20
    e = 1 / mpmath.mpf(scale)

    def f(a: mpmath.mpf) -> mpmath.mpf:
        if a < mpmath.exp(-e) / 2:
            return 1 - mpmath.exp(e) * a
        return mpmath.exp(-e) / (4 * a) if a <= mpmath.mpf(1) / 2 else mpmath.exp(-e) * (1 - a)

    def g(x: mpmath.mpf) -> mpmath.mpf:
        a = mpmath.exp(x)
        return mpmath.sqrt(2) * (mpmath.erfinv(1 - 2 * a) - mpmath.erfinv(2 * f(a) - 1))

    top = mpmath.log(mpmath.mpf(1) / 2)
    step = (top + 8) / 400
    _, x = max((g(-8 + i * step), -8 + i * step) for i in range(401))
    lo, hi = x - step, x + step
    for _ in range(80):
        m1, m2 = lo + (hi - lo) / 3, hi - (hi - lo) / 3
        lo, hi = (m1, hi) if g(m1) < g(m2) else (lo, m2)
    true_mu = _frac(g(lo))
    mu = tradeoff(f"laplace:scale={scale}", ["0.5"], digits=6).gdp_mu
    assert true_mu - Fraction(1, 10**4) <= mu.lower <= true_mu + Fraction(1, 10**12)
    # the upper end: the eps-DP bound -2 Phi^-1(1/(1 + e^eps)) (docs/tradeoff.md Theorem 5.2), above the true mu
    drs = _frac(-2 * mpmath.sqrt(2) * mpmath.erfinv(2 / (1 + mpmath.exp(e)) - 1))
    assert true_mu <= drs <= mu.upper <= drs + Fraction(1, 10**12)


# -- the two orders: a Poisson-subsampled Gaussian ----------------------------------------------

def test_subsampled_gaussian_symmetrised_against_mpmath() -> None:
    """One step of gaussian:sigma=1,q=1/5.  "remove": P = (1-q) N(0,1) + q N(1,1), Q = N(0,1); the ratio
    grows with x, so T(alpha) = Q(x > t) where P(x <= t) = alpha; "add" is the reversed pair, T^-1.
    The tightest f is the convex hull of min(T, T^-1): T and T^-1 outside the bridge, and on it
    the line of slope -1 through the test at loss 0 (x = 1/2): alpha + beta = 1 - q (Phi(1/2) - Phi(-1/2))."""
    mpmath.mp.dps = 40
    q = mpmath.mpf(1) / 5
    Phi = mpmath.ncdf

    def a_of(t: mpmath.mpf) -> mpmath.mpf:
        return (1 - q) * Phi(t) + q * Phi(t - 1)

    def T(al: mpmath.mpf) -> mpmath.mpf:
        t = mpmath.findroot(lambda s: a_of(s) - al, 0)
        return 1 - Phi(t)

    def Tinv(al: mpmath.mpf) -> mpmath.mpf:
        return a_of(-mpmath.sqrt(2) * mpmath.erfinv(2 * al - 1))

    x1, x2 = a_of(mpmath.mpf(1) / 2), 1 - Phi(mpmath.mpf(1) / 2)
    c = x1 + x2
    t = tradeoff("gaussian:sigma=1,q=0.2", [*ALPHAS, "0.35", "0.4"], digits=5, max_seconds=60)
    for a, b in zip(t.alphas, t.betas):
        al = mpmath.mpf(a.numerator) / a.denominator
        ref = c - al if min(x1, x2) <= al <= max(x1, x2) else min(T(al), Tinv(al))
        assert _contains(b, _frac(ref), Fraction(1, 10**30)), (a, b, ref)
        assert b.relative_width() <= Fraction(1, 10**4)


# -- the API ------------------------------------------------------------------------------------

def test_true_positive_rates_are_one_minus_beta() -> None:
    t = tradeoff("laplace:scale=3,count=2", ["0.05", "0.2"], digits=6)
    tpr = true_positive_rates("laplace:scale=3,count=2", ["0.05", "0.2"], digits=6)
    for b, r in zip(t.betas, tpr):
        assert r.lower == 1 - b.upper and r.upper == 1 - b.lower
    assert exactdp.true_positive_rates is true_positive_rates and exactdp.tradeoff is tradeoff


def test_json_shape() -> None:
    js = tradeoff("gaussian:sigma=1", ["0.01"], digits=8).to_json(8)
    assert js["query"] == "tradeoff" and js["gdp_mu"]["exact"] == "1"
    p = js["points"][0]
    assert p["alpha"] == "0.01" and Fraction(p["lower"]) <= Fraction(p["upper"])


@pytest.mark.parametrize("bad", [["0"], ["1"], ["-0.1"], ["1.5"], [], "0.1", ["x"]])
def test_bad_alphas_are_refused(bad: object) -> None:
    with pytest.raises(InvalidParameterError):
        tradeoff("gaussian:sigma=1", bad)  # type: ignore[arg-type]


def test_parse_alpha_and_frozen_result() -> None:
    assert parse_alpha("1/3") == Fraction(1, 3)
    with pytest.raises(exactdp.InexactInputError):
        parse_alpha(0.1)
    with pytest.raises(InvalidParameterError):
        Tradeoff((Fraction(1, 2),), (), exactdp.Enclosure.infinite())


def test_one_direction_of_a_subsample_is_refused_by_name() -> None:
    # one order alone is not closed under reversal: the symmetric formula of docs/tradeoff.md §2 would
    # read the reverse order's profile from it (an unsound lower end)
    with pytest.raises(InvalidParameterError, match="both orders"):
        tradeoff("gaussian:sigma=1,q=0.1,direction=remove", ["0.1"])
