"""k runs of a fixed batch without replacement answered two-sided (issue 27, docs/mathematics.md §9,
Theorem 9.7): the optimum lies between the pair one dataset pair attains (the larger of the orders
((1-g)B + gA, B) and its reverse, composed separately) and the symmetrised pair of Theorem 9.3.

The references are independent of the engine: the attaining datasets' outputs written out in Fractions
(binary randomized response on "some record of the batch is 1", every batch enumerated), brute force
over every dataset in {0,1}^n, and mpmath quadrature of the Gaussian pair's k-fold product.
"""

from __future__ import annotations

import functools
import itertools
import subprocess
import sys
from fractions import Fraction
from pathlib import Path
from typing import Any

import mpmath
import pytest
from exactpmf import hockey, power  # tests/unit/exactpmf.py

from exactdp.api.optimal import is_private, optimal_delta, optimal_epsilon
from exactdp.core.errors import PrecisionError
from exactdp.model.attained import TWO_SIDED, attained, is_tight
from exactdp.model.composition import Composition
from exactdp.model.generic import PureDP
from exactdp.model.mechanisms import Gaussian, PoissonSampled, SampledWithoutReplacement
from exactdp.testing import judge
from exactdp.testing.oracle import Oracle

F = Fraction
EXE = str(Path(sys.executable).parent / "exactdp")
RR_KEEP = F(3, 4)  # binary randomized response, e^eps = 3
RR = PureDP("log(3)")


# -- brute force in Fractions ------------------------------------------------------------------------

def _rr(bit: int) -> dict[Any, Fraction]:
    return {bit: RR_KEEP, 1 - bit: 1 - RR_KEEP}


def _wor_output(data: tuple[int, ...], m: int) -> dict[Any, Fraction]:
    """RR of "some record of the batch is 1", the batch uniform over the m-subsets (every one listed)."""
    subs = list(itertools.combinations(range(len(data)), m))
    out: dict[Any, Fraction] = {}
    for s in subs:
        for y, p in _rr(int(any(data[i] for i in s))).items():
            out[y] = out.get(y, F(0)) + p / len(subs)
    return out


def _worst(n: int, m: int, k: int, a: Fraction) -> Fraction:
    """max over datasets in {0,1}^n and their replace-one neighbours of the k-run hockey-stick."""
    best = F(0)
    for d in itertools.product((0, 1), repeat=n):
        for i in range(n):
            d2 = d[:i] + (1 - d[i],) + d[i + 1:]
            best = max(best, hockey(power(_wor_output(d, m), k), power(_wor_output(d2, m), k), a))
    return best


def _attaining(n: int, m: int, k: int, a: Fraction) -> Fraction:
    """The attaining datasets of Theorem 9.7: (1, 0, ..., 0) against (0, ..., 0), both orders."""
    one, zero = (1,) + (0,) * (n - 1), (0,) * n
    p, q = power(_wor_output(one, m), k), power(_wor_output(zero, m), k)
    return max(hockey(p, q, a), hockey(q, p, a))


RR_CASES = [(4, 2, "log(3/2)", F(3, 2)), (5, 2, "log(2)", F(2)), (4, 1, "log(5/4)", F(5, 4))]


@pytest.mark.parametrize("k", [1, 2, 3])
@pytest.mark.parametrize(("n", "m", "eps", "a"), RR_CASES)
def test_randomized_response_lower_end_is_the_attaining_datasets_and_brute_force_lies_inside(
        n: int, m: int, eps: str, a: Fraction, k: int) -> None:
    comp = Composition(((SampledWithoutReplacement(RR, m, n), k),))
    low = _attaining(n, m, k, a)
    # the lower end's pair is what the two datasets give, exactly (the theorem's construction)
    att = optimal_delta(attained(comp), eps, digits=10)  # type: ignore[arg-type]
    assert att.lower <= low <= att.upper
    got = optimal_delta(comp, eps, digits=10)
    assert got.lower <= low <= got.upper  # the two-sided answer holds the attained value...
    worst = _worst(n, m, k, a)
    assert low <= worst <= got.upper  # ... and every dataset's, the worst one included
    if k == 1:
        assert worst == low  # one run: tight (Theorem 9.3)


# -- the Gaussian: quadrature of the attaining pair's k-fold product ------------------------------------

def _mp(x: Fraction) -> Any:
    return mpmath.mpf(x.numerator) / x.denominator


def _gaussian_attained(g: Fraction, eps: Fraction, k: int) -> Any:
    """max of H_a(P^k || Q^k) and H_a(Q^k || P^k), P = (1-g)N(0,1) + gN(1,1), Q = N(0,1), a = e^eps: over
    Q^k, with L(x) = 1 - g + g e^{x - 1/2} the likelihood ratio, E[(prod L - a)_+] and E[(1 - a prod L)_+]; the
    last coordinate in closed form (L increasing), the others by mpmath quadrature."""
    gm, a = _mp(g), mpmath.e ** _mp(eps)
    half = mpmath.mpf(1) / 2

    def lr(x: Any) -> Any:
        return 1 - gm + gm * mpmath.exp(x - half)

    def thr(c: Any) -> Any:  # L(t) = c
        return half + mpmath.log((c - 1 + gm) / gm) if c > 1 - gm else -mpmath.inf

    def rem_last(c: Any) -> Any:  # E[(c L(X) - a)_+], X ~ N(0, 1)
        t = thr(a / c)
        up = (1 - gm) * mpmath.ncdf(-t) + gm * mpmath.ncdf(1 - t)
        return c * up - a * mpmath.ncdf(-t)

    def add_last(c: Any) -> Any:  # E[(1 - a c L(X))_+]
        t = thr(1 / (a * c))
        if t == -mpmath.inf:
            return mpmath.mpf(0)
        return mpmath.ncdf(t) - a * c * ((1 - gm) * mpmath.ncdf(t) + gm * mpmath.ncdf(t - 1))

    def expect(f: Any, c: Any, j: int) -> Any:
        if j == 1:
            return f(c)
        return mpmath.quad(lambda x: mpmath.npdf(x) * expect(f, c * lr(x), j - 1), [-mpmath.inf, -2, 0, 2, 4, mpmath.inf])

    return max(expect(rem_last, mpmath.mpf(1), k), expect(add_last, mpmath.mpf(1), k))


@pytest.mark.parametrize("k", [1, 2])  # count 3 would need a 3-fold nested quadrature (minutes per case); properties cover k >= 3
@pytest.mark.parametrize(("m", "n", "eps"), [(1, 4, F(1, 2)), (3, 10, F(1, 5))])
def test_gaussian_lower_end_against_quadrature_of_the_attaining_pair(m: int, n: int, eps: Fraction, k: int) -> None:
    comp = Composition(((SampledWithoutReplacement(Gaussian(1), m, n), k),))
    with mpmath.workdps(30):
        ref = _gaussian_attained(F(m, n), eps, k)
    att = optimal_delta(attained(comp), str(eps), digits=6)  # type: ignore[arg-type]
    got = optimal_delta(comp, str(eps), digits=6)
    with mpmath.workdps(30):
        tol = mpmath.mpf(10) ** -14  # the quadrature's accuracy
        assert _mp(att.lower) * (1 - tol) <= ref <= _mp(att.upper) * (1 + tol)
        assert got.lower == att.lower and _mp(got.lower) * (1 - tol) <= ref <= _mp(got.upper) * (1 + tol)
    assert (TWO_SIDED in (got.algorithm or "")) == (k > 1)


# -- properties ---------------------------------------------------------------------------------------

def test_containment_and_monotone_in_count() -> None:
    w = SampledWithoutReplacement(Gaussian(1), 10, 100)
    ends = [optimal_epsilon([(w, k)], "1e-5", digits=4) for k in (1, 2, 3, 6)]
    for e in ends:
        assert e.lower <= e.upper
    for e, f in zip(ends, ends[1:]):
        assert e.lower <= f.lower and e.upper <= f.upper
    # the gap is real: the attained end is certified below the symmetrised pair's for k > 1
    sym = optimal_epsilon([(w, 3)], "1e-5", digits=4)
    assert sym.lower < optimal_epsilon(attained(Composition(((w, 3),))), "1e-5", digits=4).upper < sym.upper  # type: ignore[arg-type]


def test_attained_and_tight() -> None:
    w = SampledWithoutReplacement(Gaussian(1), 10, 100)
    assert is_tight(Composition(((w, 1),))) and not is_tight(Composition(((w, 2),)))
    assert not is_tight(Composition(((w, 1), (Gaussian(2), 1))))  # the symmetrised pair composed with another
    a = attained(Composition(((w, 2), (Gaussian(2), 1))))
    assert a is not None and a.groups == ((PoissonSampled(Gaussian(1), F(1, 10)), 2), (Gaussian(2), 1))
    # no attained pair beside an add/remove Poisson order or a truncated batch
    assert attained(Composition.of(["gaussian:sigma=1,sample=10,of=100,count=2",
                                    "gaussian:sigma=1,q=0.1,direction=remove"])) is None
    assert attained(Composition.of("gaussian:sigma=1,q=0.1,truncate=5,of=100")) is None


# -- the kit, the check, the printed answer --------------------------------------------------------------

COMP = "gaussian:sigma=1,sample=10,of=100,relation=replace-one,count=3"


@functools.lru_cache(maxsize=1)
def _ends() -> tuple[Fraction, Fraction, Fraction]:
    """The attained pair's certified eps (both ends) and the symmetrised pair's upper end, at delta_g 1e-5."""
    c = Composition.of(COMP)
    low = optimal_epsilon(attained(c), "1e-5", digits=6)  # type: ignore[arg-type]
    sym = optimal_epsilon(c, "1e-5", digits=6)
    return low.lower, low.upper, sym.upper


def test_kit_calls_a_claim_below_the_attained_end_unsound_and_between_the_ends_undecided() -> None:
    lo, lo_up, up = _ends()
    oracle = Oracle(max_seconds=5)
    below = judge(float(lo * (1 - F(1, 100))), COMP, delta_g="1e-5", oracle=oracle)
    assert below.verdict == "unsound" and below.gap_lower is not None and below.gap_lower > 0
    mid = (lo_up + up) / 2  # above the attained optimum, below the dominating pair's lower end
    j = judge(float(mid), COMP, delta_g="1e-5", oracle=oracle)
    assert j.verdict == "undecided" and "Theorem 9.7" in j.note and "Theorem 9.7" in j.describe()
    assert j.optimum.lower <= lo_up and j.optimum.upper >= up
    above = judge(float(up * (1 + F(1, 1000))), COMP, delta_g="1e-5", oracle=oracle)
    assert above.verdict == "sound"


def test_check_is_undecided_between_the_ends_and_decided_outside() -> None:
    lo, lo_up, up = _ends()
    mid = (lo_up + up) / 2
    with pytest.raises(PrecisionError, match="Theorem 9.7"):
        is_private(COMP, str(mid), "1e-5")
    assert is_private(COMP, str(up * (1 + F(1, 1000))), "1e-5") is True
    assert is_private(COMP, str(lo * (1 - F(1, 1000))), "1e-5") is False
    r = subprocess.run([EXE, "check", COMP, "--eps-g", str(float(mid)), "--delta-g", "1e-5"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 4 and "Theorem 9.7" in r.stderr and r.stderr.count("\n") == 1


def test_printed_answer_holds_both_ends_and_says_the_gap_is_real() -> None:
    r = subprocess.run([EXE, "epsilon", COMP, "--at-delta", "1e-5", "--digits", "6", "--json"],
                       capture_output=True, text=True, timeout=120)
    import json

    js = json.loads(r.stdout)
    lo, _, up = _ends()
    assert F(js["lower"]) <= lo and F(js["upper"]) >= up
    assert js["bound"] == TWO_SIDED and js["stopped_by"] == "gap" and js["digits"] < 6
    t = subprocess.run([EXE, "epsilon", COMP, "--at-delta", "1e-5", "--digits", "6"], capture_output=True, text=True,
                       timeout=120)
    assert "gap is real" in t.stdout and "--max-seconds gives it more" not in t.stdout
