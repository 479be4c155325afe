"""The replace-one pair of a Poisson-subsampled Laplace mechanism with bounded records (issue 27 §2;
docs/mathematics.md §9, Theorem 9.9): ``laplace:scale=B,q=Q,relation=replace-one,bounded=true``.

References are independent of the engine: mpmath quadrature of the pair's densities (the hockey-stick
divergence, one step; two steps as a nested quadrature ``delta_2(e) = int p(x) h(e - L(x)) dx`` with
``h(t)`` the one-step hockey stick at ``e^t``), the joint-convexity order against the unbounded
replace-one pair, and refusals by name.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import mpmath as mp
import pytest

import exactdp
from exactdp import optimal_delta
from exactdp.core.errors import InvalidParameterError
from exactdp.model.mechanisms import Laplace, PoissonSampled

SPEC = "laplace:scale=2,q=0.1,relation=replace-one,bounded=true"
B, Q, D = Fraction(2), Fraction(1, 10), Fraction(1)


def _densities(q: Fraction, c: Fraction):
    qq, cc = mp.mpf(q.numerator) / q.denominator, mp.mpf(c.numerator) / c.denominator

    def p(x):
        return (1 - qq) * mp.exp(-abs(x)) / 2 + qq * mp.exp(-abs(x + cc)) / 2

    def qd(x):
        return (1 - qq) * mp.exp(-abs(x)) / 2 + qq * mp.exp(-abs(x - cc)) / 2

    return p, qd, cc


def _hockey(p, qd, cc, t):
    """int (p - e^t q)_+ over the line: quadrature split at the kinks and at the crossing (bisection)."""
    g = mp.exp(t)

    def f(x):
        return p(x) - g * qd(x)

    cuts = [-mp.inf, -cc, mp.mpf(0), cc, mp.inf]
    if f(-cc) > 0 > f(cc):  # one crossing inside (-c, c): the loss is decreasing there
        lo, hi = -cc, cc
        for _ in range(mp.mp.prec + 10):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if f(mid) > 0 else (lo, mid)
        cuts = sorted(cuts + [(lo + hi) / 2])
    return mp.fsum(mp.quad(lambda x: max(f(x), 0), [a, b]) for a, b in itertools.pairwise(cuts))


@pytest.mark.parametrize("eps", ["0", "0.01", "0.03", "0.05"])
def test_one_step_delta_against_quadrature(eps: str) -> None:
    with mp.workdps(30):
        p, qd, cc = _densities(Q, D / (2 * B))
        ref = _hockey(p, qd, cc, mp.mpf(eps))
        got = optimal_delta(SPEC, eps, digits=15)
        lo, hi = mp.mpf(got.lower.numerator) / got.lower.denominator, mp.mpf(got.upper.numerator) / got.upper.denominator
        assert lo - mp.mpf("1e-12") <= ref <= hi + mp.mpf("1e-12"), (eps, ref, got)
        assert hi - lo < mp.mpf("1e-12")


@pytest.mark.slow
def test_two_steps_against_nested_quadrature() -> None:
    eps = "0.05"
    with mp.workdps(20):
        p, qd, cc = _densities(Q, D / (2 * B))
        e = mp.mpf(eps)

        def loss(x):
            return mp.log(p(x) / qd(x))

        e0 = loss(-cc)
        mass_lo = mp.quad(p, [-mp.inf, -cc])
        mass_hi = mp.quad(p, [cc, mp.inf])
        inner = mp.quad(lambda x: p(x) * _hockey(p, qd, cc, e - loss(x)), [-cc, 0, cc])
        ref = mass_lo * _hockey(p, qd, cc, e - e0) + mass_hi * _hockey(p, qd, cc, e + e0) + inner
        got = optimal_delta(SPEC + ",count=2", eps, digits=10)
        lo, hi = mp.mpf(got.lower.numerator) / got.lower.denominator, mp.mpf(got.upper.numerator) / got.upper.denominator
        assert lo - mp.mpf("1e-11") <= ref <= hi + mp.mpf("1e-11"), (ref, got)


@pytest.mark.parametrize("eps,count", [("0.02", 1), ("0.1", 3), ("0.3", 10)])
def test_bounded_pair_is_below_the_unbounded_replace_one_pair(eps: str, count: int) -> None:
    """Joint convexity: mixing both laws with the same Lap(0) can only lower the hockey stick below the
    diluted pair's q H(Lap(-c) || Lap(c)) (Theorem 9.2's worst case), step by step and so composed."""
    bounded = optimal_delta(f"{SPEC},count={count}", eps, digits=6)
    unbounded = optimal_delta(f"laplace:scale=2,q=0.1,relation=replace-one,count={count}", eps, digits=6)
    assert bounded.upper < unbounded.lower


@pytest.mark.parametrize("bad", [
    "laplace:scale=2,q=0.1,bounded=true",                           # add/remove
    "laplace:scale=2,relation=replace-one,bounded=true",            # no Poisson subsample
    "laplace:scale=2,q=0.1,relation=replace-one,bounded=maybe",     # not a truth value
    "laplace:scale=2,sample=10,of=100,relation=replace-one,bounded=true",
])
def test_spec_refusals(bad: str) -> None:
    with pytest.raises(InvalidParameterError, match="bounded"):
        exactdp.Composition.of([bad])


def test_value_refusals() -> None:
    with pytest.raises(InvalidParameterError, match="bounded"):
        PoissonSampled(Laplace(2), "0.1", "add-remove", bounded=True)
    with pytest.raises(InvalidParameterError, match="bounded"):
        PoissonSampled(Laplace(2), "0.1", "replace-one", bounded="true")  # type: ignore[arg-type]
    assert PoissonSampled(Laplace(2), "0.1", "replace-one", bounded=True).spec() == SPEC.replace(
        "scale=2", "scale=2")


def test_from_dp_event_reads_the_laplace_bounded() -> None:
    dp = pytest.importorskip("dp_accounting")
    event = dp.PoissonSampledDpEvent(0.5, dp.LaplaceDpEvent(2.0))  # 0.5 and 2.0: exact binary values
    comp = exactdp.from_dp_event(event, dp.NeighboringRelation.REPLACE_ONE, bounded=True)
    (m, k), = comp.groups
    assert isinstance(m, PoissonSampled) and m.bounded and isinstance(m.mechanism, Laplace) and k == 1
    # dp_accounting's replace-one sensitivity of a Laplace event is 2 (records within 1 of the origin)
    same = optimal_delta("laplace:scale=2,sensitivity=2,q=0.5,relation=replace-one,bounded=true", "0.1", digits=8)
    assert optimal_delta(comp, "0.1", digits=8) == same
    with pytest.raises(InvalidParameterError, match="bounded"):
        exactdp.from_dp_event(event, "add-remove", bounded=True)


def test_dp_accounting_refuses_this_event_under_replace_one() -> None:
    """dp_accounting has no answer to judge here: its PLD accountant refuses a Poisson-subsampled
    Laplace event under REPLACE_ONE, and its LaplacePrivacyLoss has no REPLACE adjacency (what
    Theorem 9.9 models is the pair its additive-noise base class documents for REPLACE)."""
    dp = pytest.importorskip("dp_accounting")
    acc = dp.pld.PLDAccountant(neighboring_relation=dp.NeighboringRelation.REPLACE_ONE)
    assert not acc.supports(dp.PoissonSampledDpEvent(0.1, dp.LaplaceDpEvent(2.0)))
    from dp_accounting.pld import privacy_loss_mechanism as plm

    with pytest.raises(NotImplementedError):
        plm.LaplacePrivacyLoss(2.0, sampling_prob=0.1, adjacency_type=plm.AdjacencyType.REPLACE)


def test_the_kit_judges_claims_against_the_quadrature() -> None:
    """With no dp_accounting answer to judge, the quadrature's delta stands in as a peer's claim: 1%
    above it is judged sound, 1% below it unsound."""
    from exactdp.testing import assert_sound_delta

    with mp.workdps(30):
        p, qd, cc = _densities(Q, D / (2 * B))
        ref = _hockey(p, qd, cc, mp.mpf("0.03"))
    assert_sound_delta(mp.nstr(ref * mp.mpf("1.01"), 20), composition=SPEC, eps_g="0.03")
    with pytest.raises(AssertionError):
        assert_sound_delta(mp.nstr(ref * mp.mpf("0.99"), 20), composition=SPEC, eps_g="0.03")


@pytest.mark.parametrize("eps,count", [("0.01", 1), ("0.01", 10), ("0.05", 10), ("0.2", 10)])
def test_the_named_assumption_numerically(eps: str, count: int) -> None:
    """Theorem 9.9 (iii) checked where it can be: the records 0 against D/2 (the add/remove pair at
    sensitivity D/2, both orders) and the antipodal records -D/4, D/4 (the bounded pair at D/2) stay
    below the bounded pair at D."""
    top = optimal_delta(f"{SPEC},count={count}", eps, digits=6)
    for other in ("laplace:scale=2,sensitivity=0.5,q=0.1,direction=remove",
                  "laplace:scale=2,sensitivity=0.5,q=0.1,direction=add",
                  "laplace:scale=2,sensitivity=0.5,q=0.1,relation=replace-one,bounded=true"):
        assert optimal_delta(f"{other},count={count}", eps, digits=6).upper <= top.lower, other


def test_the_accountant_reads_specs_and_events_alike() -> None:
    acc = exactdp.Accountant(relation="replace-one", bounded=True).compose("laplace:scale=2,q=0.1", count=3)
    assert optimal_delta(f"{SPEC},count=3", "0.1", digits=8) == acc.get_delta("0.1", digits=8)
