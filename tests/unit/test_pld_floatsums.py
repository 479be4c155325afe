"""The float sums of the FFT path and their proved bound (docs/pld.md §12.6, "The float sums"), against
the exact sums of the same floats.

The reference is independent of the float code: every float is read as its exact binary value (an Arb
ball of radius 0, or a Fraction) and the weighted sum is accumulated term by term in Arb at 600 bits
(or in Fractions at rate 0).  Each case checks that the returned ball holds the exact sum and that it
is not uselessly wide.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from flint import arb, ctx, fmpq

from exactdp.engines.pld import fftcompose as C
from exactdp.engines.pld import fftpower as F
from exactdp.engines.pld import floatsums as S


def _exact(v: np.ndarray, log_r: Fraction, first: int = 0) -> tuple[arb, arb]:
    """(sum_j v_j r^(first + j), sum_j |v_j| r^(first + j)) term by term in Arb at 600 bits."""
    with ctx.workprec(600):
        lr = arb(fmpq(log_r.numerator, log_r.denominator))
        r = lr.exp()
        w = (lr * first).exp()
        s, a = arb(0), arb(0)
        for x in v.tolist():
            t = arb(x) * w  # arb(float) is the float's exact value
            s += t
            a += abs(t)
            w *= r
        return s, a


def _holds(ball: arb, v: np.ndarray, log_r: Fraction) -> bool:
    with ctx.workprec(600):
        ref, _ = _exact(v, log_r)
        return bool(ball.contains(ref))


def _signed(n: int, seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).random(n) - 0.1
    v[::7] = -1e-17  # the FFT's negative float noise
    return v


def _tiny(n: int) -> np.ndarray:
    pattern = np.array([5e-324, 1e-310, 2.0 ** -1022, -2.0 ** -1022, 1e-300, 1.0, -1e-320, 0.0, 3e-308, 0.25])
    return np.resize(pattern, n)


CASES = [  # (name, vector, log r)
    ("positive, slow decay", lambda: np.random.default_rng(1).random(5000), Fraction(-1, 2000)),
    ("negative noise", lambda: _signed(20000, 2), Fraction(-1, 1000)),
    ("the engine's rate", lambda: _signed(40000, 3), Fraction(-4793499487013922, 10**19)),
    ("long tail", lambda: np.exp(-np.arange(300_000) / 50_000.0) * np.random.default_rng(4).random(300_000),
     Fraction(-1, 100_000)),
    ("subnormal-adjacent entries, underflowing products", lambda: _tiny(3000), Fraction(-1, 3)),
    ("subnormal-adjacent entries, rate 0", lambda: _tiny(1000), Fraction(0)),
    ("huge rate", lambda: _signed(50, 5), Fraction(-1000)),
    ("huge rate, far beyond the float range", lambda: _signed(5, 6), Fraction(-10**6)),
    ("growing weights", lambda: np.random.default_rng(7).random(3000), Fraction(1, 7)),
    ("steeply growing weights", lambda: _signed(40, 8), Fraction(40)),
    ("products that overflow: summed in Arb", lambda: np.full(2048, 1e300), Fraction(1, 3)),
    ("rate 0, signed", lambda: np.random.default_rng(9).random(4096) - 0.5, Fraction(0)),
    ("one entry", lambda: np.array([0.3]), Fraction(-5)),
    ("a partial last block", lambda: _signed(1024 * 3 + 17, 10), Fraction(-1, 5000)),
]


@pytest.mark.parametrize("name,make,log_r", CASES, ids=[c[0] for c in CASES])
def test_power_sum_holds_the_exact_sum(name: str, make, log_r: Fraction) -> None:  # type: ignore[no-untyped-def]
    """docs/pld.md §12.6: the ball of :func:`power_sum` holds ``sum v_j r^j`` of the exact floats, and
    its radius is at most 2^-30 of ``sum |v_j| r^j`` (plus the underflow's few 2^-1074)."""
    v = make()
    with ctx.workprec(128):
        s = S.power_sum(v, log_r)
    with ctx.workprec(600):
        ref, mag = _exact(v, log_r)
        assert s.contains(ref), (name, s, ref)
        assert s.rad() <= mag * arb(2) ** -30 + arb(2) ** -1000, (name, s.rad(), mag)


def test_a_rational_sum_at_rate_0_is_exact_in_fractions() -> None:
    """At r = 1 the sum is a rational: the ball holds the Fraction sum of the floats."""
    v = np.random.default_rng(11).random(3000) * 2.0 ** -40 - 2.0 ** -41
    exact = sum((Fraction(x) for x in v.tolist()), Fraction(0))
    with ctx.workprec(128):
        s = S.power_sum(v, Fraction(0))
        assert s.contains(arb(fmpq(exact.numerator, exact.denominator)))


def test_the_bound_without_its_gamma_term_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The dot products' rounding (Higham's ``gamma_B sum |terms|``) is part of the bound: at r = 1
    (factors 1 exactly, rho = 0) with the gamma term set to 0 the ball misses the exact sum of a
    signed vector, while the real bound holds it."""
    vs = [np.random.default_rng(seed).random(4096) - 0.5 for seed in range(4)]

    def forget() -> None:  # the remembered factors (lru caches) and tables, so the patch is seen and undone
        S._TABLES.clear()
        S.dot_error_factor.cache_clear()
        S._factor_balls.cache_clear()

    with ctx.workprec(128):
        assert all(_holds(S.power_sum(v, Fraction(0)), v, Fraction(0)) for v in vs)
        monkeypatch.setattr(S, "_gamma", lambda n: Fraction(0))
        forget()
        try:
            assert not all(_holds(S.power_sum(v, Fraction(0)), v, Fraction(0)) for v in vs)
        finally:
            monkeypatch.undo()
            forget()


@pytest.mark.parametrize("log_r", [Fraction(-1, 3000), Fraction(-1, 3), Fraction(5, 17), Fraction(-399, 1024),
                                   Fraction(-4793499487013922, 10**19)])
def test_the_offset_factors_are_within_rho(log_r: Fraction) -> None:
    """The per-offset floats of a block: ``|m_o - r^o| <= rho r^o`` for every offset, in Arb at 600
    bits, with rho a few units in the last place."""
    block = S._block_of(log_r, 1 << 20)
    m, rho = S._offsets(log_r, block)
    assert block >= 1 and m.shape == (block,) and 0 <= rho < Fraction(1, 1 << 45)
    with ctx.workprec(600):
        lr = arb(fmpq(log_r.numerator, log_r.denominator))
        rq = arb(fmpq(rho.numerator, rho.denominator))
        for o in range(block):
            exact = (lr * o).exp()
            assert abs(arb(float(m[o])) - exact) <= rq * exact, (o, float(m[o]))  # float ok: one exact float


TAIL_CASES = [  # (theta, h, extra, start, i0, vector)
    (Fraction(3), Fraction(1, 1000), Fraction(1, 2), 50, 400, lambda: _signed(6000, 12)),
    (Fraction(50), Fraction(1), Fraction(1), 10, 12, lambda: _signed(200, 13)),          # a huge rate
    (Fraction(0), Fraction(1, 500), Fraction(0), 0, 30, lambda: _signed(3000, 14)),      # rate 0: all summed
    (Fraction(2), Fraction(1, 3), Fraction(1), 5, 5, lambda: _tiny(2000)),               # tiny entries
]


@pytest.mark.parametrize("theta,h,extra,start,i0,make", TAIL_CASES)
def test_tail_sums_hold_the_exact_sum(theta: Fraction, h: Fraction, extra: Fraction, start: int, i0: int,
                                      make) -> None:  # type: ignore[no-untyped-def]
    """``_tail_sums`` (docs/pld.md §12.6): the ball holds ``sum_{I >= i0} v_I e^{-(theta + extra) h I}``
    of the exact floats (negative noise, huge rates, tiny entries)."""
    v = make()
    tl = C.Tilted(theta, h, 0, arb(0), F.Power(v, start, Fraction(0), Fraction(0)))
    with ctx.workprec(128):
        s, _ = C._tail_sums(tl, i0, extra)
    with ctx.workprec(600):
        ref, mag = _exact(v[i0 - start:], -(theta + extra) * h, i0)
        assert s.contains(ref), (s, ref)
        assert s.rad() <= mag * arb(2) ** -30 + arb(2) ** -1000
