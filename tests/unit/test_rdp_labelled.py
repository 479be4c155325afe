"""RDP of the labelled pairs, named as bounds (issue 28 §1; docs/rdp.md §7): a batch drawn with replacement
(Theorem 9.6) and the truncated subsampled Gaussian (Theorem 9.4).

The references are independent of the engine: the labelled pair's Rényi divergence by mpmath quadrature
(or direct sums over the integers) of each label's densities at 50 digits, and the exact Rényi divergence of
brute-force tiny datasets (every draw sequence, every Poisson sample and truncation), which the bound must
not undercut; the lower end of a bracket is the divergence of the dataset pair it names, checked the same way.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from fractions import Fraction
from math import comb
from pathlib import Path
from typing import Any

import mpmath
import pytest
from flint import ctx

from exactdp.api.rdp import rdp_curve
from exactdp.engines.rdp import divergence_arb
from exactdp.engines.rdp_labelled import TRUNC_BOUND, WR_BOUND, is_rdp_bound
from exactdp.model.mechanisms import DiscreteGaussian, DiscreteLaplace, Gaussian, Laplace
from exactdp.model.replacement import SampledWithReplacement
from exactdp.model.truncation import TruncatedSubsampledGaussian

EXE = str(Path(sys.executable).parent / "exactdp")
F = Fraction
mp = mpmath.mp
DPS = 50


def _mpf(x: Fraction | int) -> Any:
    x = F(x)
    return mp.mpf(x.numerator) / x.denominator


def _ball_holds(ball: Any, ref: Any, tol: str = "1e-40") -> bool:
    lo, hi = mp.mpf(ball.lower().str(60, radius=False)), mp.mpf(ball.upper().str(60, radius=False))
    slack = mp.mpf(tol) * max(1, abs(ref))
    return lo - slack <= ref <= hi + slack


def _engine(m: object, alpha: Fraction, direction: str = "max") -> Any:
    with ctx.workprec(240):
        return divergence_arb(m, alpha, direction)


# -- each label's moment E_Q[(P/Q)^alpha] by quadrature or direct sums, written from the densities ----------

def _gauss_pdf(x: Any, m: Any) -> Any:
    return mp.npdf(x, m, 1)


def _moment_continuous(p: Any, q: Any, a: Any, points: list[Any]) -> Any:
    return mp.quad(lambda x: p(x) ** a * q(x) ** (1 - a), [-mp.inf, *points, mp.inf])


def _moment_discrete(pmf: Any, shift: int, a: Any, reach: int) -> Any:
    return mp.fsum(pmf(x - shift) ** a * pmf(x) ** (1 - a) for x in range(-reach, reach + shift + 1))


def _label_moment(inner: Any, j: int, a: Any) -> Any:
    if isinstance(inner, Gaussian):
        mu = j * _mpf(inner.sensitivity / inner.sigma)
        return _moment_continuous(lambda x: _gauss_pdf(x, mu), lambda x: _gauss_pdf(x, 0), a, [mp.mpf(0), mu])
    if isinstance(inner, Laplace):
        b, s = _mpf(inner.scale), j * _mpf(inner.sensitivity)
        return _moment_continuous(lambda x: mp.exp(-abs(x - s) / b) / (2 * b), lambda x: mp.exp(-abs(x) / b) / (2 * b),
                                  a, [mp.mpf(0), s])
    if isinstance(inner, DiscreteLaplace):
        t = _mpf(inner.noise)
        c = (1 - mp.exp(-t)) / (1 + mp.exp(-t))
        return _moment_discrete(lambda x: c * mp.exp(-t * abs(x)), j * inner.sensitivity, a, int(400 / t) + 20)
    sg = _mpf(inner.sigma)
    reach = int(30 * sg) + 20 + j * inner.sensitivity
    z = mp.fsum(mp.exp(-mp.mpf(x) ** 2 / (2 * sg * sg)) for x in range(-2 * reach, 2 * reach + 1))
    return _moment_discrete(lambda x: mp.exp(-mp.mpf(x) ** 2 / (2 * sg * sg)) / z, j * inner.sensitivity, a, reach)


def _wr_reference(mech: SampledWithReplacement, alpha: Fraction, shift_weight: Any = 0) -> Any:
    """log(sum_j b_j E_j)/(alpha - 1), b_j = C(M, j) (1/N)^j (1 - 1/N)^(M - j) (``shift_weight`` moved
    from label 0 to label 1: a deliberately wrong weight)."""
    a = _mpf(alpha)
    m, n = mech.sample, mech.of
    p = mp.mpf(1) / n
    b = [comb(m, j) * p ** j * (1 - p) ** (m - j) for j in range(m + 1)]
    b[0] -= shift_weight
    b[1] += shift_weight
    return mp.log(b[0] + mp.fsum(b[j] * _label_moment(mech.mechanism, j, a) for j in range(1, m + 1))) / (a - 1)


WR_CASES = [(Gaussian(1), 2, 3, F(2)), (Gaussian(2, 3), 3, 7, F(7, 2)), (Gaussian(1), 6, 100, F(5, 2)),
            (Laplace(1), 2, 3, F(2)), (Laplace(2, 3), 4, 10, F(3, 2)), (DiscreteLaplace("1/2"), 3, 5, F(5, 2)),
            (DiscreteLaplace(1, 2), 2, 3, F(3)), (DiscreteGaussian(1), 2, 3, F(2)), (DiscreteGaussian(2), 3, 5, F(5, 2))]


@pytest.mark.parametrize(("inner", "m", "n", "alpha"), WR_CASES)
def test_with_replacement_is_the_labelled_pair(inner: Any, m: int, n: int, alpha: Fraction) -> None:
    mech = SampledWithReplacement(inner, m, n)
    with mp.workdps(DPS):
        ref = _wr_reference(mech, alpha)
        for d in ("max", "remove", "add"):  # the pair is symmetric
            assert _ball_holds(_engine(mech, alpha, d), ref), (d, ref)


def test_a_wrong_weight_is_caught() -> None:
    mech = SampledWithReplacement(Gaussian(1), 2, 3)
    with mp.workdps(DPS):
        assert _ball_holds(_engine(mech, F(2)), _wr_reference(mech, F(2)))
        assert not _ball_holds(_engine(mech, F(2)), _wr_reference(mech, F(2), mp.mpf("1e-6")), tol="1e-12")


def test_discrete_labels_past_the_exact_work_take_an_upper_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    """With no label computed exactly (the pure bound e^{(alpha-1) j eps} and the Gaussian's for every j), the
    answer is above the exact labelled pair's, so still an upper bound."""
    import exactdp.engines.rdp_labelled as rl

    for inner in (DiscreteLaplace("1/2"), DiscreteGaussian(1)):
        mech = SampledWithReplacement(inner, 3, 5)
        exact = _engine(mech, F(5, 2))
        monkeypatch.setattr(rl, "DISCRETE_EXACT_WORK", 0)
        monkeypatch.setattr(rl, "_DGAUSS_EXACT_LABELS", 0)
        loose = _engine(mech, F(5, 2))
        monkeypatch.undo()
        assert loose >= exact


# -- the truncated subsampled Gaussian ----------------------------------------------------------------------

def _truncation(q: Any, b: int, n: int) -> tuple[Any, Any]:
    """t = P(K >= B), g = E[q B/(K+1) | K >= B], K ~ Bin(N-1, q), from the definition."""
    pk = [comb(n - 1, k) * q ** k * (1 - q) ** (n - 1 - k) for k in range(n)]
    t = mp.fsum(pk[b:])
    return t, mp.fsum(p * q * b / (k + 1) for k, p in enumerate(pk) if k >= b) / t


def _sub_moment(r: Any, mu: Any, a: Any, direction: str) -> Any:
    mix = lambda x: (1 - r) * _gauss_pdf(x, 0) + r * _gauss_pdf(x, mu)
    base = lambda x: _gauss_pdf(x, 0)
    p, q = (mix, base) if direction == "remove" else (base, mix)
    return _moment_continuous(p, q, a, [mp.mpf(0), mu])


def _truncated_reference(m: TruncatedSubsampledGaussian, alpha: Fraction, direction: str) -> Any:
    a, s = _mpf(alpha), _mpf(m.sigma)
    q = _mpf(m.q)
    t, g = _truncation(q, m.truncate, m.of)
    if m.relation == "replace-one":
        r = (1 - t) * q + t * g
        return mp.log((1 - r) + r * _moment_continuous(lambda x: _gauss_pdf(x, 2 / s), lambda x: _gauss_pdf(x, 0), a,
                                                       [mp.mpf(0), 2 / s])) / (a - 1)
    if direction == "max":
        return max(_truncated_reference(m, alpha, "remove"), _truncated_reference(m, alpha, "add"))
    return mp.log((1 - t) * _sub_moment(q, 1 / s, a, direction) + t * _sub_moment(g, 2 / s, a, direction)) / (a - 1)


TRUNC_CASES = [(F(1), F(1, 2), 1, 3, "add-remove"), (F(2), F(1, 3), 2, 5, "add-remove"),
               (F(1), F(1, 10), 2, 30, "add-remove"), (F(1), F(1, 2), 1, 3, "replace-one"),
               (F(3, 2), F(1, 5), 2, 8, "replace-one")]


@pytest.mark.parametrize(("sigma", "q", "b", "n", "relation", "alpha"),
                         [(*c, a) for c in TRUNC_CASES for a in (F(2), F(5, 2))] + [(*TRUNC_CASES[0], F(6))])
def test_truncated_is_the_labelled_pair(sigma: Fraction, q: Fraction, b: int, n: int, relation: str,
                                        alpha: Fraction) -> None:
    mech = TruncatedSubsampledGaussian(sigma, q, b, n, relation)
    with mp.workdps(DPS):
        for d in ("remove", "add", "max"):
            ref = _truncated_reference(mech, alpha, d)
            assert _ball_holds(_engine(mech, alpha, d), ref, tol="1e-30"), (d, ref)


# -- the bound against brute force over tiny datasets -------------------------------------------------------

def _renyi_mixtures(p: dict[Fraction, Fraction], q: dict[Fraction, Fraction], a: Any, sd: Any) -> Any:
    """D_a of two finite mixtures of N(m, sd^2) by quadrature."""
    def dens(mix: dict[Fraction, Fraction], x: Any) -> Any:
        return mp.fsum(_mpf(w) * mp.npdf(x, _mpf(m), sd) for m, w in mix.items())

    pts = sorted({_mpf(m) for m in list(p) + list(q)})
    return mp.log(mp.quad(lambda x: dens(p, x) ** a * dens(q, x) ** (1 - a), [-mp.inf, *pts, mp.inf])) / (a - 1)


def _draws(recs: list[int], m: int) -> dict[Fraction, Fraction]:
    out: dict[Fraction, Fraction] = {}
    for seq in itertools.product(recs, repeat=m):
        out[F(sum(seq))] = out.get(F(sum(seq)), F(0)) + F(1, len(recs) ** m)
    return out


def _batch_means(recs: list[int], q: Fraction, b: int) -> dict[Fraction, Fraction]:
    """The truncated subsampled sum's law: every Poisson sample, cut to a uniform b-subset when larger."""
    out: dict[Fraction, Fraction] = {}
    for keep in itertools.product((0, 1), repeat=len(recs)):
        w = F(1)
        for k in keep:
            w *= q if k else 1 - q
        s = [recs[i] for i, k in enumerate(keep) if k]
        subs = [s] if len(s) <= b else [list(c) for c in itertools.combinations(s, b)]
        for t in subs:
            out[F(sum(t))] = out.get(F(sum(t)), F(0)) + w / len(subs)
    return out


@pytest.mark.parametrize("alpha", [F(2), F(7, 2)])
def test_with_replacement_bound_is_above_every_tiny_dataset(alpha: Fraction) -> None:
    """3 records in {0, 1}, 2 draws, N(0, 1) noise: each replacement of the last record, both orders; the
    lower end is the divergence of the dataset (0, 0, 1) against (0, 0, 0)."""
    mech = SampledWithReplacement(Gaussian(1), 2, 3)
    (enc,) = rdp_curve([(mech, 1)], [alpha], digits=6)
    assert enc.algorithm == WR_BOUND
    worst = mp.mpf(0)
    with mp.workdps(25):
        a = _mpf(alpha)
        for others in itertools.product((0, 1), repeat=2):
            for x, y in ((0, 1), (1, 0)):
                worst = max(worst, _renyi_mixtures(_draws([*others, x], 2), _draws([*others, y], 2), a, mp.mpf(1)))
        assert worst <= _mpf(enc.upper) + mp.mpf("1e-15"), (worst, enc)
        lower = _renyi_mixtures(_draws([0, 0, 1], 2), _draws([0, 0, 0], 2), a, mp.mpf(1))
        assert abs(_mpf(enc.lower) - lower) < mp.mpf("1e-5") * lower and enc.lower <= enc.upper


@pytest.mark.parametrize(("relation", "alpha"), [("add-remove", F(2)), ("add-remove", F(5, 2)), ("replace-one", F(2))])
def test_truncated_bound_is_above_every_tiny_dataset(relation: str, alpha: Fraction) -> None:
    """N = 3 records in {0, 1} (add/remove: against the same dataset without the last record), q = 1/2, cut
    to B = 1, noise N(0, 1); the lower end is the divergence of the dataset (0, 0, 1) against (0, 0) (add/remove)
    or (0, 0, 0) (replace-one)."""
    q, b, n = F(1, 2), 1, 3
    mech = TruncatedSubsampledGaussian(1, q, b, n, relation)
    (enc,) = rdp_curve([(mech, 1)], [alpha], digits=6)
    assert enc.algorithm == TRUNC_BOUND
    worst = mp.mpf(0)
    with mp.workdps(25):
        a = _mpf(alpha)
        for others in itertools.product((0, 1), repeat=n - 1):
            for x, y in ((0, 1), (1, 0), (1, None), (0, None)):
                if (y is None) != (relation == "add-remove"):
                    continue
                p = _batch_means([*others, x], q, b)
                r = _batch_means([*others] if y is None else [*others, y], q, b)
                worst = max(worst, _renyi_mixtures(p, r, a, mp.mpf(1)), _renyi_mixtures(r, p, a, mp.mpf(1)))
        assert worst <= _mpf(enc.upper) + mp.mpf("1e-15"), (worst, enc)
        base = [0, 0] if relation == "add-remove" else [0, 0, 0]
        p, r = _batch_means([0, 0, 1], q, b), _batch_means(base, q, b)
        lower = max(_renyi_mixtures(p, r, a, mp.mpf(1)), _renyi_mixtures(r, p, a, mp.mpf(1)))
        assert abs(_mpf(enc.lower) - lower) < mp.mpf("1e-5") * lower and enc.lower <= enc.upper


# -- names, conversions, the command ------------------------------------------------------------------------

def test_names() -> None:
    assert is_rdp_bound(WR_BOUND) and is_rdp_bound(TRUNC_BOUND) and is_rdp_bound("wbk19-thm27+labelled-thm9.6")
    assert not is_rdp_bound("rdp") and not is_rdp_bound(None) and not is_rdp_bound("labelled-thm9.6+rdp")


def test_cli_rdp_and_conversion_name_the_bound() -> None:
    out = subprocess.run([EXE, "rdp", "--mechanism", "laplace:scale=2,sample=4,of=100,with-replacement=true",
                          "--mechanism", "gaussian:sigma=1,q=0.01,truncate=20,of=1000", "--orders", "2,3.5", "--json"],
                         check=False, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)["orders"]
    assert [r["bound"] for r in rows] == ["labelled-thm9.6+labelled-thm9.4"] * 2
    assert all(F(r["lower"]) == 0 < F(r["upper"]) for r in rows)  # a mixture of Laplaces: no attained pair computed
    out = subprocess.run([EXE, "epsilon", "--mechanism", "gaussian:sigma=2,sample=4,of=100,with-replacement=true,count=10",
                          "--at-delta", "1e-5", "--method", "rdp-bbghs", "--json"], check=False, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    assert "labelled-thm9.6" in json.loads(out.stdout)["algorithm"]


def test_the_kit_is_undecided_inside_the_bracket_and_unsound_below_its_lower_end() -> None:
    from exactdp.testing import UndecidedClaimError, UnsoundClaimError, assert_rdp_sound, judge_rdp

    c = [(TruncatedSubsampledGaussian(1, "0.01", 20, 1000), 10)]
    enc = rdp_curve(c, [2], digits=20)[0]
    mid = (enc.lower + enc.upper) / 2
    assert judge_rdp(str(enc.upper), order=2, composition=c).verdict == "sound"
    v = judge_rdp(str(mid), order=2, composition=c)
    assert v.verdict == "undecided" and TRUNC_BOUND in v.note and "labelled dominating pair" in v.note
    with pytest.raises(UndecidedClaimError):
        assert_rdp_sound(mid, order=2, composition=c)
    with pytest.raises(UnsoundClaimError):
        assert_rdp_sound(enc.lower * F(99, 100), order=2, composition=c)
