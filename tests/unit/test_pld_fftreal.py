"""One real vector's k-fold power by half-length transforms and its l1 bound (docs/pld.md §12.3, "One
real vector in a half-length transform"), against exact cyclic powers.

The reference does not use any FFT: the floats are read as the exact rationals they hold, powered by
fmpq_poly, and folded onto the window (index J lands at ``(J - start) mod n``) in Fractions.
"""

from __future__ import annotations

import random
from fractions import Fraction

import numpy as np
import pytest
from flint import fmpq, fmpq_poly

from exactdp.core.errors import InvalidParameterError
from exactdp.engines.pld import fftcompose as C
from exactdp.engines.pld import fftpower as F
from exactdp.engines.pld import fftradix as R
from exactdp.engines.pld import fftreal as Q


def _skip(k: int) -> Fraction:
    """The modulus bound of the coefficients ``real_power`` leaves unpowered at k steps."""
    return R.skip_modulus(R.skip_level(k))


def _cyclic(t: np.ndarray, k: int, n: int, start: int) -> list[Fraction]:
    """The exact cyclic k-fold power of the floats t on the window ``[start, start + n)``."""
    p = fmpq_poly([fmpq(*Fraction(float(a)).as_integer_ratio()) for a in t]) ** k  # float ok: exact values
    out = [Fraction(0)] * n
    for j, c in enumerate(p.coeffs()):
        out[(j - start) % n] += Fraction(int(c.p), int(c.q))
    return out


def _l1(v: np.ndarray, exact: list[Fraction]) -> Fraction:
    return sum((abs(Fraction(float(a)) - b) for a, b in zip(v.tolist(), exact)), Fraction(0))  # float ok: exact


def _law(rng: random.Random, size: int, spread: int = 0) -> np.ndarray:
    x = np.array([rng.random() * 2.0 ** -rng.randint(0, spread) for _ in range(size)])
    return x / x.sum()


CASES = [  # (name, law, k, n, start)
    ("n 2", lambda r: _law(r, 2), 3, 2, 0),
    ("n 2, odd start", lambda r: _law(r, 1), 5, 2, 1),
    ("n 4", lambda r: _law(r, 3), 2, 4, 1),
    ("n 8, aliased", lambda r: _law(r, 5), 3, 8, 3),
    ("n 16, full", lambda r: _law(r, 16), 4, 16, 7),
    ("k 1", lambda r: _law(r, 30), 1, 32, 0),
    ("uniform", lambda r: _law(r, 16), 5, 128, 0),
    ("wide dynamic range", lambda r: _law(r, 24, 300), 7, 256, 9),
    ("spike", lambda r: np.eye(1, 9, 4)[0], 6, 64, 0),
    ("two ends", lambda r: np.array([0.5] + [0.0] * 10 + [0.5]), 9, 128, 1),
    ("tiny entries", lambda r: np.array([1e-300, 0.25, 0.5, 0.25 - 1e-17, 5e-324]), 8, 64, 0),
    ("aliased, window off centre", lambda r: _law(r, 20), 12, 128, 40),
    ("aliased, window at 0", lambda r: _law(r, 12), 20, 64, 0),
    ("aliased, negative start", lambda r: _law(r, 12), 20, 64, -7),
    ("odd length, odd start", lambda r: _law(r, 301), 3, 1024, 101),
    ("long, k 40", lambda r: _law(r, 50), 40, 2048, 500),
    ("mass below 1", lambda r: _law(r, 40) * 0.375, 6, 256, 0),
]


@pytest.mark.parametrize("name,make,k,n,start", CASES, ids=[c[0] for c in CASES])
def test_the_error_is_within_the_bound(name: str, make, k: int, n: int, start: int) -> None:
    """The true l1 distance to the exact cyclic power is below :func:`real_bound`, which is the
    returned ``l2`` times sqrt(n); and not absurdly above it (measured: 60 to 600 times the error
    where the error is not 0)."""
    t = make(random.Random(name))
    pw = Q.real_power(t, k, n, start, keep=True)
    bound = Q.real_bound(n, k, *F.sum_up(t), _skip(k))
    assert pw.l2 == F.l2_of(bound, n) and pw.t is t and pw.k == k and pw.outside is None and pw.start == start
    err = _l1(pw.v, _cyclic(t, k, n, start))
    assert err <= bound, (name, float(err), float(bound))
    assert bound <= 2000 * err or err == 0, (name, float(err), float(bound))


def test_the_bound_is_near_power_parts_bound() -> None:
    """The half-length path's bound is within a few percent of the full-length one's (docs/pld.md §12.3)."""
    for n in (4, 64, 1 << 12, 1 << 22):
        for k in (1, 7, 10**5):
            s, sq = Fraction(1), Fraction(1, 300)
            r = Q.real_bound(n, k, s, sq) / F.power_bound(n, k, s, sq)
            assert Fraction(9, 10) <= r <= Fraction(11, 10), (n, k, float(r))


@pytest.mark.parametrize("n", [1 << 13, 1 << 15])
def test_a_long_vector_with_fused_stages(n: int) -> None:
    """Lengths whose half-length transforms run segments and fused sweeps (docs/pld.md §12.2)."""
    rng = random.Random(n)
    t = _law(rng, 400, 20)
    k, start = 5, n // 3
    pw = Q.real_power(t, k, n, start)
    bound = Q.real_bound(n, k, *F.sum_up(t))
    err = _l1(pw.v, _cyclic(t, k, n, start))
    assert 0 < err <= bound <= 2000 * err


def test_close_to_power_parts_but_other_floats() -> None:
    """Both paths are within their bounds of the same cyclic power, so within the sum of the bounds
    of each other, but they are different float computations."""
    t = _law(random.Random(1), 40)
    k, n, start = 6, 256, 3
    a = Q.real_power(t, k, n, start)
    b = F.power_parts(t, k, n, start)
    s, sq = F.sum_up(t)
    gap = sum((abs(Fraction(float(x)) - Fraction(float(y))) for x, y in zip(a.v.tolist(), b.v.tolist())),
              Fraction(0))  # float ok: exact values
    assert 0 < gap <= Q.real_bound(n, k, s, sq) + F.power_bound(n, k, s, sq)
    assert a.outside == b.outside == F.outside_mass(t, k, start, n)


def _float32_twiddles_of(monkeypatch: pytest.MonkeyPatch, length: int) -> None:
    """The table of ``length`` in float32, whichever way the real power reads it: ``twiddles(length)``
    or ``half_twiddles(2 length)`` (the half-length transforms' table, docs/pld.md §12.2)."""
    real, real_half = Q.twiddles, Q.half_twiddles

    def single(tw: F.Twiddles) -> F.Twiddles:
        return F.Twiddles(tw.n, tw.re.astype(np.float32).astype(np.float64), tw.im.astype(np.float32).astype(np.float64),
                          tw.mu)

    def make(n: int) -> F.Twiddles:
        return single(real(n)) if n == length else real(n)

    def make_half(n: int) -> F.Twiddles:
        return single(real_half(n)) if n // 2 == length else real_half(n)
    monkeypatch.setattr(Q, "twiddles", make)
    monkeypatch.setattr(Q, "half_twiddles", make_half)


def _separate_in_float32(monkeypatch: pytest.MonkeyPatch, length: int) -> None:
    real = Q.separate

    def single(zr: np.ndarray, zi: np.ndarray, count: int | None = None):
        return tuple(p.astype(np.float32).astype(np.float64) for p in real(zr, zi, count))
    monkeypatch.setattr(Q, "separate", single)


BROKEN = [  # (what is broken, how): each a variant the bound must catch
    ("the butterfly stage's and the pre-stage's twiddles in float32", lambda mp, n: _float32_twiddles_of(mp, n)),
    ("the half-length transforms' twiddles in float32", lambda mp, n: _float32_twiddles_of(mp, n // 2)),
    ("the separation in float32", _separate_in_float32),
]


@pytest.mark.parametrize("what,breaks", BROKEN, ids=[b[0] for b in BROKEN])
def test_a_broken_variant_exceeds_the_bound(monkeypatch: pytest.MonkeyPatch, what: str, breaks) -> None:
    """A variant with one step in single precision is far outside the bound: the test above would
    catch a step left out of the proof."""
    t = _law(random.Random(5), 40)
    k, n, start = 6, 256, 0
    breaks(monkeypatch, n)
    pw = Q.real_power(t, k, n, start)
    assert _l1(pw.v, _cyclic(t, k, n, start)) > Q.real_bound(n, k, *F.sum_up(t), _skip(k)), what


@pytest.mark.parametrize("n", [2, 4, 16, 1 << 12])
def test_the_spectrum_is_real_at_0_and_n_over_2(n: int) -> None:
    """``X^_0`` and ``X^_{n/2}`` have imaginary part 0 exactly, so the mirrored powers are conjugate
    symmetric to the float (docs/pld.md §12.3, step 5), and ``X^_0`` is the sum of the floats within
    its rounding."""
    t = _law(random.Random(n), min(n, 37), 30)
    xr, xi = Q._spectrum(t, n)
    assert xr.shape[0] == xi.shape[0] == n // 2 + 1
    assert xi[0] == 0 and xi[n // 2] == 0
    _, pi = R.cpower(xr, xi, 9)
    assert pi[0] == 0 and pi[n // 2] == 0
    assert abs(Fraction(float(xr[0])) - sum((Fraction(float(a)) for a in t), Fraction(0))) < Fraction(1, 10**14)


@pytest.mark.parametrize("start", [0, 1, 2, 5, 63, 64, 100, -3, -4, 1001])
def test_the_interleaved_shift_is_the_scaled_roll(start: int) -> None:
    """``_interleaved`` is ``np.roll`` of the interleaved, scaled vector bit for bit."""
    rng = np.random.default_rng(start % 11)
    yr, yi = rng.random(32) - 0.25, rng.random(32) - 0.5
    yr[::7] = 2.0 ** -1070  # scaled into the subnormals
    y = np.empty(64)
    y[0::2], y[1::2] = yr, yi
    want = np.roll(y * (1.0 / 64), -(start % 64))  # float ok: 1/64 is exact, the engine's scale
    assert Q._interleaved(yr, yi, 1.0 / 64, start).tobytes() == want.tobytes()  # float ok: as above


def test_n_1_and_bad_arguments() -> None:
    one = Q.real_power(np.array([0.75]), 3, 1, 2)
    assert one.v.tolist() == F.power_parts(np.array([0.75]), 3, 1, 2).v.tolist()
    with pytest.raises(InvalidParameterError):
        Q.real_power(np.array([0.5, -0.1]), 2, 4, 0)
    with pytest.raises(InvalidParameterError):
        Q.real_power(np.array([0.5, 0.5]), 2, 6, 0)
    with pytest.raises(InvalidParameterError):
        Q.real_power(np.array([0.5, 0.5]), 0, 4, 0)
    with pytest.raises(InvalidParameterError):
        Q.real_bound(1, 2, Fraction(1), Fraction(1))


def test_the_tilted_power_is_the_real_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """``fftcompose.tilted_power`` powers its one law by :func:`real_power`, keeping the data for the
    wrapped mass (docs/pld.md §12.4)."""
    from flint import arb

    seen = []
    real = C.real_power

    def recording(t, k, n, start, **kw):
        seen.append((n, start, kw))
        return real(t, k, n, start, **kw)

    monkeypatch.setattr(C, "real_power", recording)
    law = [arb(1) / 4, arb(1) / 2, arb(1) / 4]
    tl = C.tilted_power(law, 0, Fraction(1, 10), 5, Fraction(0), True, window=(16, 0))
    assert seen == [(16, 0, {"keep": True})]
    assert tl.power.t is not None and tl.power.k == 5 and tl.power.outside is None


def test_the_coefficients_too_small_to_power_stay_within_the_bound() -> None:
    """At 300 steps a coefficient of squared modulus at most ``2^(-2 1132 / 300)`` (about 0.0054) is set
    to 0 instead of powered (docs/pld.md §12.3, "Coefficients too small to power"): most of a smooth
    law's spectrum here.  The output is within the bound that carries ``sqrt(n) (skip + E1)^k``, against the
    exact cyclic power, and close to the output with every coefficient powered."""
    x = np.exp(-((np.arange(16) - 7.5) ** 2) / 12)
    t = x / x.sum()
    k, n, start = 300, 1024, 1800
    xr, xi = Q._spectrum(t, n)
    skipped = int(np.count_nonzero(xr * xr + xi * xi <= R.skip_level(k)))
    assert skipped > n // 4, skipped
    pw = Q.real_power(t, k, n, start)
    exact = _cyclic(t, k, n, start)
    bound = Q.real_bound(n, k, *F.sum_up(t), _skip(k))
    err = _l1(pw.v, exact)
    assert err <= bound, (float(err), float(bound))
    full = Q.real_power(t, k, n, start, skip=False)
    assert _l1(full.v, exact) <= Q.real_bound(n, k, *F.sum_up(t))


def test_a_skip_left_out_of_the_bound_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """Coefficients up to modulus 0.995 left unpowered (the threshold far too high) put the output far
    from the exact power: beyond the bound without its skip term, within the bound with it (which then
    says so: a sound but wide bound).  The skip term is needed."""
    t = np.array([0.25, 0.25, 0.25, 0.25])
    k, n, start = 300, 1024, 400
    monkeypatch.setattr(Q, "skip_level", lambda k: 0.995 ** 2)
    pw = Q.real_power(t, k, n, start)
    err = _l1(pw.v, _cyclic(t, k, n, start))
    assert err > Q.real_bound(n, k, *F.sum_up(t)), float(err)
    assert err <= Q.real_bound(n, k, *F.sum_up(t), R.skip_modulus(0.995 ** 2))


@pytest.mark.parametrize("n, filled", [(1 << 13, 280), (1 << 13, 4096), (1 << 10, 3), (1 << 16, 1000),
                                       (1 << 17, 9000), (64, 1)])
def test_a_transform_of_a_zero_padded_input_copies_its_first_stages_to_the_same_floats(n: int, filled: int) -> None:
    """``fftradix.fft(..., nonzero=L)`` (stop 43): the stages of span m <= N/(2L) pair transforms of
    exact zeros, and copy; the result is the full transform's, float for float (several segments at
    2^17), and a ``nonzero`` that wrongly claims zeros (a quarter of the entries) changes it."""
    from exactdp.engines.pld import fftradix

    rng = np.random.default_rng(n + filled)
    re, im = np.zeros(n), np.zeros(n)
    re[:filled], im[:filled] = rng.random(filled), rng.random(filled)
    tw = fftradix.twiddles(n)
    full = fftradix.fft(re, im, tw)
    pruned = fftradix.fft(re, im, tw, nonzero=filled)
    assert np.array_equal(full[0], pruned[0]) and np.array_equal(full[1], pruned[1])
    if filled >= 4:  # two more stages copied over entries that are not 0
        wrong = fftradix.fft(re, im, tw, nonzero=filled // 4)
        assert not (np.array_equal(full[0], wrong[0]) and np.array_equal(full[1], wrong[1]))
