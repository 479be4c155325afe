"""Batches drawn with replacement beyond the Gaussian (issue 27 §3; docs/mathematics.md §9, Theorem 9.6):
the Laplace, discrete Laplace and discrete Gaussian sums.

The references are independent of the engine: the labelled pair's profile written here from the
definitions (closed form for the Laplace, direct mpmath sums over the integers for the discrete laws),
and brute force over every tiny dataset (the law of the sum of the drawn records, convolved with the
noise, its hockey-stick divergence by mpmath quadrature or summation): the worst of them reaches 0.85-0.93
of the bound at eps = 0.1.
"""

from __future__ import annotations

import itertools
from fractions import Fraction
from math import comb
from typing import Any

import mpmath
import pytest

from exactdp.api.optimal import optimal_delta
from exactdp.core.errors import InvalidParameterError
from exactdp.model.dp_event import from_dp_event
from exactdp.model.mechanisms import DiscreteGaussian, DiscreteLaplace, Laplace, RandomizedResponse
from exactdp.model.replacement import SampledWithReplacement, replacement_weights
from exactdp.model.spec import parse_mechanism_spec

F = Fraction
mp = mpmath.mp


def _mpf(x: Fraction | int) -> Any:
    x = F(x)
    return mp.mpf(x.numerator) / x.denominator


# -- the inner pairs' profiles, written from the definitions -------------------------------------------

def _laplace_delta(eps_j: Any, e: Any) -> Any:
    """H_{e^e}(Lap(1, b) || Lap(0, b)) with eps_j = 1/b: 1 - e^{(e - eps_j)/2} on [0, eps_j], else 0."""
    return max(mp.mpf(0), 1 - mp.exp((e - eps_j) / 2)) if e >= 0 else None


def _pmf_dlaplace(a: Any) -> Any:
    c = (1 - mp.exp(-a)) / (1 + mp.exp(-a))
    return lambda x: c * mp.exp(-a * abs(x))


def _pmf_dgauss(s: Any) -> Any:
    z = mp.fsum(mp.exp(-mp.mpf(x) ** 2 / (2 * s * s)) for x in range(-int(60 * s) - 60, int(60 * s) + 61))
    return lambda x: mp.exp(-mp.mpf(x) ** 2 / (2 * s * s)) / z


def _discrete_delta(pmf: Any, shift: int, e: Any, reach: int) -> Any:
    """sum_x (pmf(x - shift) - e^e pmf(x))_+ over |x| <= reach + shift (the rest below 1e-45)."""
    a = mp.exp(e)
    return mp.fsum(max(mp.mpf(0), pmf(x - shift) - a * pmf(x)) for x in range(-reach, reach + shift + 1))


def _labelled_delta(mech: SampledWithReplacement, e: Any) -> Any:
    """sum_{j >= 1} b_j delta_j(e) + b_0 (1 - e^e)_+ + the mass beyond the cut (the pair without noise), with
    b_j = C(M, j) (1/N)^j (1 - 1/N)^(M - j) computed here (Theorem 9.6)."""
    m, n, inner = mech.sample, mech.of, mech.mechanism
    ws = replacement_weights(mech)
    b = [comb(m, j) * (_mpf(F(1, n)) ** j) * (1 - _mpf(F(1, n))) ** (m - j) for j in range(len(ws))]
    for j, w in enumerate(ws):  # the engine's weights are the binomial ones (checked here, not trusted)
        assert abs(_mpf(w) - b[j]) < mp.mpf(10) ** -35
    out = b[0] * max(mp.mpf(0), 1 - mp.exp(e))
    for j in range(1, len(b)):
        if isinstance(inner, Laplace):
            d = _laplace_delta(j * _mpf(inner.sensitivity / inner.scale), e)
        elif isinstance(inner, DiscreteLaplace):
            d = _discrete_delta(_pmf_dlaplace(_mpf(inner.noise)), j * inner.sensitivity, e,
                                int(110 / inner.noise) + 10)
        else:
            s = _mpf(inner.sigma)
            d = _discrete_delta(_pmf_dgauss(s), j * inner.sensitivity, e, int(16 * s) + 10)
        out += b[j] * d
    return out + (1 - mp.fsum(b))  # beyond the cut: profile 1


CASES = [(Laplace(1), 2, 3, "0.5"), (Laplace(2, 3), 3, 5, "0.25"), (Laplace("1/2"), 20, 200, "1"),
         (DiscreteLaplace("1/2"), 2, 3, "0.5"), (DiscreteLaplace(1, 2), 4, 10, "0.75"),
         (DiscreteGaussian(1), 2, 3, "0.5"), (DiscreteGaussian(2, 3), 5, 50, "0.25")]


@pytest.mark.parametrize(("inner", "m", "n", "eps"), CASES)
def test_with_replacement_is_the_labelled_pair(inner: Any, m: int, n: int, eps: str) -> None:
    mech = SampledWithReplacement(inner, m, n)
    enc = optimal_delta([(mech, 1)], eps, digits=15)
    with mp.workdps(45):
        ref = _labelled_delta(mech, mp.mpf(eps))
        assert _mpf(enc.lower) - mp.mpf("1e-30") <= ref <= _mpf(enc.upper) + mp.mpf("1e-30"), (ref, enc)


def test_a_wrong_weight_is_caught() -> None:
    """The reference tells the labelled pair from one with the label's weights moved by 1/100."""
    mech = SampledWithReplacement(Laplace(1), 2, 3)
    enc = optimal_delta([(mech, 1)], "0.5", digits=15)
    with mp.workdps(30):
        e = mp.mpf("0.5")
        b = [mp.mpf(4) / 9, mp.mpf(4) / 9 + mp.mpf("0.01"), mp.mpf(1) / 9 - mp.mpf("0.01")]
        wrong = b[1] * _laplace_delta(mp.mpf(1), e) + b[2] * _laplace_delta(mp.mpf(2), e)
        assert not _mpf(enc.lower) - mp.mpf("1e-20") <= wrong <= _mpf(enc.upper) + mp.mpf("1e-20")


# -- brute force over tiny datasets ---------------------------------------------------------------------

def _draws(recs: list[int], m: int) -> dict[int, Fraction]:
    """The law of the sum of m uniform draws with replacement from recs: {sum: probability}."""
    out: dict[int, Fraction] = {}
    for seq in itertools.product(recs, repeat=m):
        out[sum(seq)] = out.get(sum(seq), F(0)) + F(1, len(recs) ** m)
    return out


def _hockey_laplace(p: dict[int, Fraction], q: dict[int, Fraction], a: Any, b: Any) -> Any:
    """H_a of two finite mixtures of Laplace(mean, b): quadrature of (p - a q)_+ between its sign changes."""
    def f(y: Any) -> Any:
        return (mp.fsum(_mpf(w) * mp.exp(-abs(y - x) / b) for x, w in p.items())
                - a * mp.fsum(_mpf(w) * mp.exp(-abs(y - x) / b) for x, w in q.items())) / (2 * b)

    means = sorted({mp.mpf(x) for x in list(p) + list(q)})
    grid = [means[0] - 60 * b + (means[-1] - means[0] + 120 * b) * i / 600 for i in range(601)]
    cuts = [grid[0]]
    for u, v in itertools.pairwise(grid):
        if (f(u) > 0) != (f(v) > 0):
            cuts.append(mp.findroot(f, (u, v), solver="bisect") if f(u) * f(v) < 0 else u)
    cuts.append(grid[-1])
    total = mp.mpf(0)
    for u, v in itertools.pairwise(cuts):
        if f((u + v) / 2) > 0:
            total += mp.quad(f, [u, *[x for x in means if u < x < v], v])
    return total


def _hockey_discrete(p: dict[int, Fraction], q: dict[int, Fraction], a: Any, pmf: Any, reach: int) -> Any:
    ys = range(min(p) - reach, max(p) + reach + 1)

    def law(mix: dict[int, Fraction], y: int) -> Any:
        return mp.fsum(_mpf(w) * pmf(y - x) for x, w in mix.items())

    return mp.fsum(max(mp.mpf(0), law(p, y) - a * law(q, y)) for y in ys)


@pytest.mark.parametrize(("inner", "hockey"), [
    (Laplace(1), lambda p, q, a: _hockey_laplace(p, q, a, mp.mpf(1))),
    (DiscreteLaplace("1/2"), lambda p, q, a: _hockey_discrete(p, q, a, _pmf_dlaplace(mp.mpf("0.5")), 120)),
    (DiscreteGaussian(1), lambda p, q, a: _hockey_discrete(p, q, a, _pmf_dgauss(mp.mpf(1)), 20)),
])
def test_with_replacement_dominates_brute_force(inner: Any, hockey: Any) -> None:
    """Every dataset of 3 records in {0, 1} and each replacement of its last record: the sum of 2 draws with
    replacement plus the noise, both orders, is at most the pair's upper end (and not far below it)."""
    eps = "0.1"
    enc = optimal_delta([(SampledWithReplacement(inner, 2, 3), 1)], eps, digits=12)
    worst = mp.mpf(0)
    with mp.workdps(25):
        a = mp.exp(mp.mpf(eps))
        for others in itertools.product((0, 1), repeat=2):
            for x, y in ((0, 1), (1, 0)):
                worst = max(worst, hockey(_draws([*others, x], 2), _draws([*others, y], 2), a))
        assert worst <= _mpf(enc.upper) + mp.mpf("1e-12"), (worst, enc)
        assert worst >= _mpf(enc.lower) / 2  # not vacuous (the label j is not seen: not claimed tight)


# -- specs, events, refusals ----------------------------------------------------------------------------

@pytest.mark.parametrize(("spec", "mech"), [
    ("laplace:scale=2,sensitivity=3,sample=5,of=100,with-replacement=true", SampledWithReplacement(Laplace(2, 3), 5, 100)),
    ("dlaplace:noise=0.5,sample=5,of=100,with-replacement=true", SampledWithReplacement(DiscreteLaplace("1/2"), 5, 100)),
    ("dgaussian:sigma=2,sensitivity=2,sample=5,of=100,with-replacement=true",
     SampledWithReplacement(DiscreteGaussian(2, 2), 5, 100)),
])
def test_specs_round_trip(spec: str, mech: SampledWithReplacement) -> None:
    m, _ = parse_mechanism_spec(spec)
    assert m == mech and str(m) == spec and parse_mechanism_spec(str(m))[0] == m


def test_refusals_name_the_group() -> None:
    for bad in ("rr:eps=1,sample=2,of=3,with-replacement=true", "approx:eps=1,delta=0.1,sample=2,of=3,with-replacement=true",
                "mog:sigma=1,sensitivities=0/1,probs=0.5/0.5,sample=2,of=3,with-replacement=true"):
        with pytest.raises(InvalidParameterError, match="group of j"):
            parse_mechanism_spec(bad)
    with pytest.raises(InvalidParameterError, match="group of j"):
        SampledWithReplacement(RandomizedResponse(1, 3), 2, 3)


def test_events_are_read() -> None:
    class LaplaceDpEvent:
        def __init__(self, b: float) -> None:
            self.noise_multiplier = b

    class DiscreteLaplaceDpEvent:
        def __init__(self, a: float, s: int) -> None:
            self.noise_parameter, self.sensitivity = a, s

    class SampledWithReplacementDpEvent:
        def __init__(self, n: int, m: int, event: Any) -> None:
            self.source_dataset_size, self.sample_size, self.event = n, m, event

    ev = SampledWithReplacementDpEvent(1000, 8, LaplaceDpEvent(2.0))
    (m, k), = from_dp_event(ev, relation="replace-one").groups
    assert k == 1 and isinstance(m, SampledWithReplacement) and isinstance(m.mechanism, Laplace)
    assert (m.sample, m.of) == (8, 1000)
    ev = SampledWithReplacementDpEvent(10, 2, DiscreteLaplaceDpEvent(0.5, 2))
    assert from_dp_event(ev, relation="replace-one").groups == ((SampledWithReplacement(DiscreteLaplace("1/2", 2), 2, 10), 1),)


def test_round_trip_through_dp_accounting() -> None:
    """(dp_accounting 0.6.0 has no DiscreteGaussianDpEvent: the discrete Gaussian is not written.)"""
    pytest.importorskip("dp_accounting")
    from exactdp.model.dp_event import to_dp_event

    for m in (SampledWithReplacement(Laplace(2), 4, 100), SampledWithReplacement(DiscreteLaplace("1/2", 3), 4, 100)):
        ev = to_dp_event([(m, 3)], relation="replace-one")
        (back, k), = from_dp_event(ev, relation="replace-one").groups
        assert isinstance(back, SampledWithReplacement) and k == 3 and (back.sample, back.of) == (4, 100)
        assert type(back.mechanism) is type(m.mechanism)
        if isinstance(m.mechanism, Laplace):  # dp_accounting's Laplace is read at replace-one sensitivity 2
            assert back.mechanism.eps == m.mechanism.eps
        else:
            assert back.mechanism == m.mechanism
