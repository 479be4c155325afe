"""The float-FFT convolution power and its proved l1 bound (docs/pld.md §12), against exact powers.

The reference is independent of the FFT: the float inputs are scaled to integers (their exact binary
values) and powered by fmpz_poly, exactly; the true l1 error of the FFT result (on its window, plus
the mass outside it) is then computed in Fractions.
"""

from __future__ import annotations

import cmath
import random
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from flint import fmpz_poly

from exactdp.engines.pld import fftpower as F
from exactdp.engines.pld import fftradix as R
from exactdp.engines.pld import fftwrap as W


def _exact_power(t: np.ndarray, k: int) -> tuple[list[int], int]:
    """(coefficients, e): t^{*k} exactly, coefficient J = coeffs[J] / 2^e."""
    fr = [Fraction(float(x)) for x in t]
    den = max(f.denominator for f in fr)
    ints = [int(f * den) for f in fr]
    assert all(Fraction(i, den) == f for i, f in zip(ints, fr))
    e = (den.bit_length() - 1) * k
    p = fmpz_poly(ints) ** k
    return [int(c) for c in p.coeffs()], e


def _true_error(t: np.ndarray, k: int, n: int, start: int, v: np.ndarray) -> Fraction:
    coeffs, e = _exact_power(t, k)
    scale = 1 << e
    err = Fraction(0)
    for j, c in enumerate(coeffs):
        if start <= j < start + n:
            err += abs(Fraction(float(v[j - start])) - Fraction(c, scale))
        else:
            err += Fraction(c, scale)
    for i in range(n):  # window points beyond the support
        if start + i >= len(coeffs) or start + i < 0:
            err += abs(Fraction(float(v[i])))
    return err


def _random_law(rng: random.Random, n: int, spread: int = 0) -> np.ndarray:
    x = np.array([rng.random() * 2.0 ** -rng.randint(0, spread) for _ in range(n)])
    return x / x.sum()


CASES = [
    ("uniform", lambda r: _random_law(r, 16), 5, 128, None),
    ("uniform, k 1", lambda r: _random_law(r, 30), 1, 32, None),
    ("wide dynamic range", lambda r: _random_law(r, 24, 300), 7, 256, None),
    ("spike", lambda r: np.eye(1, 9, 4)[0], 6, 64, None),
    ("two ends", lambda r: np.array([0.5] + [0.0] * 10 + [0.5]), 9, 128, None),
    ("tiny entries", lambda r: np.array([1e-300, 0.25, 0.5, 0.25 - 1e-17, 5e-324]), 8, 64, None),
    ("aliased, centred window", lambda r: _random_law(r, 20), 12, 128, None),
    ("aliased, window off centre", lambda r: _random_law(r, 20), 12, 128, 40),
    ("aliased, window at 0", lambda r: _random_law(r, 12), 20, 64, 0),
    ("long, k 40", lambda r: _random_law(r, 50), 40, 2048, None),
]


@pytest.mark.parametrize("name,make,k,n,start", CASES, ids=[c[0] for c in CASES])
def test_error_within_bound(name: str, make, k: int, n: int, start: int | None) -> None:
    rng = random.Random(name)
    t = make(rng)
    v, bound = F.power_tilted(t, k, n, start=start)
    s = F.centred_start(t, k, n) if start is None else start
    err = _true_error(t, k, n, s, v)
    assert err <= bound, (name, float(err), float(bound))


def test_bound_not_absurdly_loose() -> None:
    """On an unaliased case the bound is within 10^4 of the true error."""
    rng = random.Random(7)
    t = _random_law(rng, 40)
    v, bound = F.power_tilted(t, 6, 256, start=0)
    err = _true_error(t, 6, 256, 0, v)
    assert 0 < err <= bound <= 10**4 * err, (float(err), float(bound))


def test_outside_mass_bounds_the_true_tails() -> None:
    rng = random.Random(3)
    t = _random_law(rng, 15)
    k, n = 30, 128
    coeffs, e = _exact_power(t, k)
    for start in (0, 100, 150, 250, 300):
        out = Fraction(sum(c for j, c in enumerate(coeffs) if not start <= j < start + n), 1 << e)
        assert out <= F.outside_mass(t, k, start, n)


def test_fft_matches_the_dft_within_higham_bound() -> None:
    """Theorem 24.2 checked numerically: ||fl(F x) - F x||_2 <= factor ||F x||_2, F x in mpmath."""
    import mpmath

    rng = random.Random(11)
    for n in (2, 8, 64, 256):
        x = [rng.random() for _ in range(n)]
        y = [rng.random() for _ in range(n)]
        r, i = F.fft(np.array(x), np.array(y), F.twiddles(n))
        with mpmath.workdps(40):
            err2 = mpmath.mpf(0)
            norm2 = mpmath.mpf(0)
            for kk in range(n):
                exact = mpmath.fsum(mpmath.mpc(x[j], y[j]) * mpmath.expjpi(mpmath.mpf(-2 * j * kk) / n)
                                    for j in range(n))
                err2 += abs(mpmath.mpc(float(r[kk]), float(i[kk])) - exact) ** 2
                norm2 += abs(exact) ** 2
            q = F.fft_factor(n, F.twiddles(n).mu)
            assert mpmath.sqrt(err2) <= mpmath.mpf(q.numerator) / q.denominator * mpmath.sqrt(norm2)


@pytest.fixture
def float32_twiddles(monkeypatch: pytest.MonkeyPatch):
    real = F.twiddles

    def make(n: int) -> F.Twiddles:
        tw = real(n)
        return F.Twiddles(n, tw.re.astype(np.float32).astype(np.float64),
                          tw.im.astype(np.float32).astype(np.float64), tw.mu)
    monkeypatch.setattr(F, "twiddles", make)


def test_a_broken_fft_exceeds_the_bound(float32_twiddles: None) -> None:
    """float32 twiddles (error ~1e-8, the bound assumes ~1e-16): the true error passes the bound."""
    rng = random.Random(5)
    t = _random_law(rng, 40)
    v, bound = F.power_tilted(t, 6, 256, start=0)
    assert _true_error(t, 6, 256, 0, v) > bound


def test_a_dropped_stage_exceeds_the_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    """An FFT that skips its last stage of butterflies is far outside the bound."""
    real_stage = R._stage

    def stage(er, orr, ei, oi, wr, wi, inverse, tmp, m):
        if m == 128:  # the last stage of n = 256
            return
        real_stage(er, orr, ei, oi, wr, wi, inverse, tmp, m)
    monkeypatch.setattr(R, "_stage", stage)
    rng = random.Random(5)
    t = _random_law(rng, 40)
    v, bound = F.power_tilted(t, 6, 256, start=0)
    assert _true_error(t, 6, 256, 0, v) > bound


def test_bad_arguments() -> None:
    from exactdp.core.errors import InvalidParameterError

    with pytest.raises(InvalidParameterError):
        F.power_tilted(np.array([0.5, -0.1]), 2, 4)
    with pytest.raises(InvalidParameterError):
        F.power_tilted(np.array([0.5, 0.5]), 2, 6)
    with pytest.raises(InvalidParameterError):
        F.power_tilted(np.array([0.5, 0.5]), 0, 4)


def _reference_fft(x: list[float], y: list[float], tw: F.Twiddles, inverse: bool) -> tuple[list, list]:
    """The radix-2 decimation-in-time FFT written out point by point in Python floats (each
    operation IEEE-rounded, the model of Higham's Theorem 24.2): the arithmetic fftpower.fft must do."""
    n = len(x)
    bits = n.bit_length() - 1
    rev = [int(format(i, f"0{bits}b")[::-1], 2) if bits else 0 for i in range(n)]
    xr, xi = [x[r] for r in rev], [y[r] for r in rev]
    m = 1
    while m < n:
        step = n // (2 * m)
        for k in range(0, n, 2 * m):
            for j in range(m):
                wr = float(tw.re[j * step])
                wi = -float(tw.im[j * step]) if inverse else float(tw.im[j * step])
                br, bi = xr[k + j + m], xi[k + j + m]
                tr = wr * br - wi * bi
                ti = wr * bi + wi * br
                ar, ai = xr[k + j], xi[k + j]
                xr[k + j], xi[k + j] = ar + tr, ai + ti
                xr[k + j + m], xi[k + j + m] = ar - tr, ai - ti
        m *= 2
    return xr, xi


def _simple_fft(x: np.ndarray, y: np.ndarray, tw: R.Twiddles, inverse: bool) -> tuple[np.ndarray, np.ndarray]:
    """The textbook vectorised radix-2 FFT, one whole-vector numpy ufunc per real operation and
    stage (no pieces, no transposes): checked against :func:`_reference_fft` below, it is the
    reference for the lengths too long for the point-by-point one."""
    n = x.shape[0]
    bits = n.bit_length() - 1
    rev = np.array([int(format(i, f"0{bits}b")[::-1], 2) if bits else 0 for i in range(n)], dtype=np.intp)
    xr, xi = x[rev].copy(), y[rev].copy()
    m = 1
    while m < n:
        step = n // (2 * m)
        wr, wi = tw.re[::step][:m], (-tw.im[::step][:m] if inverse else tw.im[::step][:m])
        vr, vi = xr.reshape(-1, 2, m), xi.reshape(-1, 2, m)
        tr = wr * vr[:, 1] - wi * vi[:, 1]
        ti = wr * vi[:, 1] + wi * vr[:, 1]
        ar, ai = vr[:, 0].copy(), vi[:, 0].copy()
        vr[:, 0], vi[:, 0] = ar + tr, ai + ti
        vr[:, 1], vi[:, 1] = ar - tr, ai - ti
        m *= 2
    return xr, xi


FFT_SHAPES = [  # (n, _CHUNK or None, _FUSE or None): every path of fftradix.fft
    (1, None, None), (2, None, None), (4, None, None), (8, None, None), (16, None, None), (64, None, None),
    (512, None, None), (2048, None, None),
    (2, 1, None), (4, 1, None), (8, 1, 1), (16, 1, 2), (16, 2, None),  # segments of 2 and 4 points
    (512, 8, None), (2048, 16, None), (2048, 1024, None), (1 << 14, 1 << 13, None),
    (1024, 8, 2), (2048, 16, 1), (4096, 4, 5), (1 << 12, 32, 3),  # fused groups of 1, 2, 3, 5 stages
]


@pytest.mark.parametrize(("n", "chunk", "fuse"), FFT_SHAPES)
def test_the_fft_does_the_arithmetic_of_the_pointwise_reference(
        monkeypatch: pytest.MonkeyPatch, n: int, chunk: int | None, fuse: int | None) -> None:
    """Bit for bit: the vectorised, in-place FFT (and its inverse) performs exactly the operations of
    the point-by-point radix-2 algorithm whose error Theorem 24.2 bounds (docs/pld.md §12.2), also
    with its stages run piece by piece (``chunk``: segments of 2 chunk points, gathered, transposed
    for the first stages; ``fuse``: that many longer stages per sweep), so the bound holds unchanged;
    the inputs are left as they were."""
    if chunk is not None:
        monkeypatch.setattr(R, "_CHUNK", chunk)
    if fuse is not None:
        monkeypatch.setattr(R, "_FUSE", fuse)
    rng = random.Random(n if chunk is None else n + chunk)
    x = [rng.random() - 0.25 for _ in range(n)]
    y = [rng.random() - 0.75 for _ in range(n)]
    tw = F.twiddles(n)
    ax, ay = np.array(x), np.array(y)
    for inverse in (False, True):
        r, i = F.fft(ax, ay, tw, inverse=inverse)
        rr, ri = _reference_fft(x, y, tw, inverse)
        assert r.tolist() == rr and i.tolist() == ri
        sr, si = _simple_fft(ax, ay, tw, inverse)
        assert sr.tolist() == rr and si.tolist() == ri
        assert ax.tolist() == x and ay.tolist() == y


@pytest.mark.parametrize(("n", "chunk", "fuse"), [(1 << 17, None, None), (1 << 18, None, 2), (1 << 14, 1 << 6, None),
                                                  (1 << 15, 1 << 5, 3), (1 << 13, 1 << 3, 4)])
def test_a_long_fft_is_the_textbook_vectorised_fft(monkeypatch: pytest.MonkeyPatch, n: int, chunk: int | None,
                                                   fuse: int | None) -> None:
    """Bit for bit against :func:`_simple_fft` at lengths with many segments and several fused sweeps
    of many blocks each (default pieces above the chunk, and small pieces), both directions."""
    if chunk is not None:
        monkeypatch.setattr(R, "_CHUNK", chunk)
    if fuse is not None:
        monkeypatch.setattr(R, "_FUSE", fuse)
    rng = np.random.default_rng(n)
    x, y = rng.random(n) - 0.25, rng.random(n) - 0.75
    tw = F.twiddles(n)
    for inverse in (False, True):
        r, i = F.fft(x, y, tw, inverse=inverse)
        sr, si = _simple_fft(x, y, tw, inverse)
        assert np.array_equal(r, sr) and np.array_equal(i, si)


def test_a_skipped_piece_is_caught_by_the_pointwise_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    """The bit-for-bit comparison bites: fused stages that leave one piece's butterflies out differ."""
    monkeypatch.setattr(R, "_CHUNK", 16)
    real = R._stage
    seen = []

    def skip_one_piece(er, orr, ei, oi, wr, wi, inverse, tmp, m):
        if m >= 32:  # a fused stage (span beyond a segment of 32 points)
            seen.append(m)
            if len(seen) == 3:
                return
        real(er, orr, ei, oi, wr, wi, inverse, tmp, m)
    monkeypatch.setattr(R, "_stage", skip_one_piece)
    rng = random.Random(3)
    x = [rng.random() for _ in range(256)]
    y = [0.0] * 256
    tw = F.twiddles(256)
    r, i = F.fft(np.array(x), np.array(y), tw)
    rr, ri = _reference_fft(x, y, tw, False)
    assert len(seen) > 3
    assert r.tolist() != rr or i.tolist() != ri


def test_the_bit_reversal_is_the_reversed_binary_digits() -> None:
    """``bit_reversal`` by doubling equals reversing each index's binary digits (docs/pld.md §12.2)."""
    for n in (1, 2, 4, 8, 1024, 1 << 13):
        bits = n.bit_length() - 1
        assert R.bit_reversal(n).tolist() == [int(format(i, f"0{bits}b")[::-1], 2) if bits else 0 for i in range(n)]


def _old_nearest(x) -> float:  # float ok: the Fraction rounding that _nearest replaced (docs/pld.md §12.2)
    from exactdp.core.numbers import fraction_of_arb_endpoints

    lo, hi = fraction_of_arb_endpoints(x)
    return float((lo + hi) / 2)  # float ok: Fraction -> float is correctly rounded


def test_nearest_is_the_correctly_rounded_midpoint() -> None:
    """``_nearest`` (the midpoint's mantissa and exponent as Python ints) gives the float of the old
    Fraction rounding on many balls: twiddle-like values at 96 bits, halfway cases (ties to even),
    huge and tiny exponents, zero and negatives (docs/pld.md §12.2)."""
    from flint import arb, ctx, fmpq

    rng = random.Random(12)
    balls = []
    with ctx.workprec(96):
        for _ in range(2000):
            s, c = arb(fmpq(2 * rng.randrange(1 << 20), 1 << 21)).sin_cos_pi()
            balls += [s, c, -s]
    for _ in range(500):  # exact values, many of them halfway between two floats
        man = rng.randrange(1, 1 << 60) | (1 << rng.randrange(53, 60))
        exp = rng.randrange(-1100, 300)
        with ctx.workprec(200):
            balls.append(arb(fmpq(man, 1) * fmpq(2) ** exp if exp >= 0 else fmpq(man, 1 << -exp)))
    for man in ((1 << 53) + 1, (1 << 54) + 2, (1 << 54) + 6, 3, 0):  # ties: to even, both ways
        with ctx.workprec(200):
            balls += [arb(fmpq(man, 1 << 60)), arb(-fmpq(man, 1 << 60)), arb(man) * arb(2) ** 900]
    # python-flint 0.8 and 0.9 round to nearest: _nearest is then its own conversion (R._FLOAT_NEAREST, stop 44)
    for b in balls:
        got, want = R._nearest(b), _old_nearest(b)
        assert got == want and str(got) == str(want), (b, got, want)
        assert R._nearest_exact(b) == want and str(R._nearest_exact(b)) == str(want), (b, want)


def test_the_pointwise_power_does_the_arithmetic_of_binary_powering() -> None:
    """Bit for bit: ``cpower`` is binary powering with the standard complex product (docs/pld.md §12.3)."""
    rng = random.Random(3)
    a = [complex(rng.random() - 0.5, rng.random() - 0.5) for _ in range(50)]

    def mul(p: tuple[float, float], q: tuple[float, float]) -> tuple[float, float]:
        return p[0] * q[0] - p[1] * q[1], p[0] * q[1] + p[1] * q[0]

    for k in (1, 2, 5, 64, 1000):
        got_r, got_i = R.cpower(np.array([z.real for z in a]), np.array([z.imag for z in a]), k)
        for z, gr, gi in zip(a, got_r.tolist(), got_i.tolist()):
            res: tuple[float, float] | None = None
            base, e = (z.real, z.imag), k
            while e:
                if e & 1:
                    res = base if res is None else mul(res, base)
                e >>= 1
                if e:
                    base = mul(base, base)
            assert res == (gr, gi)


def _worst_wrap(t: np.ndarray, k: int, start: int, n: int, i0: int, rate: Fraction):
    """The largest ``|sum_W w (C - L) - sum_{not W} w L|`` over the weights ``0 <= w_I <= e^{-rate I}``
    (I >= i0; 0 below), C the cyclic and L the linear power: exact powers, weights in mpmath.

    The functional is linear in w with coefficients ``D_I = [I in W] C_I - L_I``; its largest modulus
    over the box is the larger of the positive and the negative coefficients' weighted sums."""
    import mpmath

    coeffs, e = _exact_power(t, k)
    top = len(coeffs) - 1
    wrapped = {start + i: 0 for i in range(n)}
    for j, c in enumerate(coeffs):
        wrapped[start + (j - start) % n] += c
    pos = neg = mpmath.mpf(0)
    with mpmath.workdps(60):
        x = mpmath.exp(-mpmath.mpf(rate.numerator) / rate.denominator)
        for i in range(min(start, 0), max(top, start + n - 1) + 1):
            d = (wrapped.get(i, 0) if start <= i < start + n else 0) - (coeffs[i] if 0 <= i <= top else 0)
            if i < i0 or d == 0:
                continue
            w = x ** i * d / mpmath.mpf(2) ** e
            pos, neg = (pos + w, neg) if d > 0 else (pos, neg - w)
        return max(pos, neg)


WRAP_CASES = [  # (law size, k, n, start, i0, rate)
    (12, 20, 64, 0, 30, Fraction(1, 20)),           # window at 0, the top wraps
    (12, 20, 64, 0, 5, Fraction(0)),                # no weight decay: the plain tails
    (12, 20, 64, 60, 90, Fraction(1, 10)),          # both ends outside
    (12, 20, 64, 60, 40, Fraction(1, 10)),          # the query below the window: missing bottom
    (12, 20, 64, 60, 110, Fraction(1, 30)),         # the query near the window's top
    (12, 20, 64, 60, 140, Fraction(1, 10)),         # the query above the window
    (16, 12, 32, 70, 80, Fraction(1, 50)),          # short window, wide law
    (16, 12, 32, 30, 50, Fraction(1, 3)),           # steep weights
    (10, 30, 128, 80, 120, Fraction(1, 40)),        # centred, little aliasing
    (10, 30, 128, 140, 150, Fraction(0)),           # the top end of the support
    (12, 20, 32, 100, 0, Fraction(1, 5)),           # steep weights, the query far below the window
    (12, 20, 32, 100, 40, Fraction(1)),             # the mass below the query: part (iii)'s second form
    (12, 20, 64, 130, 90, Fraction(1, 4)),          # ... and below a longer window
]


@pytest.mark.parametrize("size,k,n,start,i0,rate", WRAP_CASES)
def test_wrapped_mass_bounds_the_worst_weights(size: int, k: int, n: int, start: int, i0: int,
                                               rate: Fraction) -> None:
    """docs/pld.md §12.4: :func:`wrapped_mass` bounds the wrap-around error of every admissible weight
    vector (the worst one computed from the exact powers), wherever the window and the query sit."""
    import mpmath

    t = _random_law(random.Random(size * 1000 + start + i0), size, 8)
    pw = F.Power(np.zeros(n), start, Fraction(0), None, t, k)
    bound = W.wrapped_mass(pw, i0, rate)
    worst = _worst_wrap(t, k, start, n, i0, rate)
    with mpmath.workdps(60):
        assert worst <= mpmath.mpf(bound.upper().str(50, radius=False)), (float(worst), bound)


@pytest.mark.parametrize("part", [0, 1, 2, 3])
def test_each_wrapped_part_is_needed(monkeypatch: pytest.MonkeyPatch, part: int) -> None:
    """The bound with any one of its four parts left out (docs/pld.md §12.4) is exceeded by the
    worst weights in one of the cases: the test above would catch a part missing from the proof."""
    import mpmath

    orig = W.wrap_terms

    def without(*a):
        terms = list(orig(*a))
        terms[part] = Fraction(0)
        return tuple(terms)

    monkeypatch.setattr(W, "wrap_terms", without)
    caught = False
    for size, k, n, start, i0, rate in WRAP_CASES:
        t = _random_law(random.Random(size * 1000 + start + i0), size, 8)
        pw = F.Power(np.zeros(n), start, Fraction(0), None, t, k)
        bound = W.wrapped_mass(pw, i0, rate)
        with mpmath.workdps(60):
            caught |= _worst_wrap(t, k, start, n, i0, rate) > mpmath.mpf(bound.upper().str(50, radius=False))
    assert caught


def test_the_mass_below_the_query_is_charged_the_query_weight() -> None:
    """Part (iii)'s second form (docs/pld.md §12.4): with most of the weighted mass below the query
    and the window above it, the bound is within 100 times the worst weights' error (the first form
    alone: 2.7e-12 against 1.5e-19)."""
    import mpmath

    size, k, n, start, i0, rate = 12, 20, 32, 100, 40, Fraction(1)
    t = _random_law(random.Random(size * 1000 + start + i0), size, 8)
    bound = W.wrapped_mass(F.Power(np.zeros(n), start, Fraction(0), None, t, k), i0, rate)
    with mpmath.workdps(60):
        assert mpmath.mpf(bound.upper().str(50, radius=False)) <= 100 * _worst_wrap(t, k, start, n, i0, rate)


def test_a_wrapped_bound_is_kept_only_where_it_holds() -> None:
    """A bound computed for one query serves the later queries at larger i0 and rate (it is
    non-increasing in both, docs/pld.md §12.4), and is computed anew below them."""
    t = _random_law(random.Random(5), 12, 8)
    pw = F.Power(np.zeros(64), 60, Fraction(0), None, t, 20)
    first = W.wrapped_mass(pw, 100, Fraction(1, 10))
    assert W.wrapped_mass(pw, 101, Fraction(1, 5)) is first
    lower = W.wrapped_mass(pw, 40, Fraction(1, 10))
    assert lower is not first and lower.upper() >= first.upper()


def _cyclic_error(t: np.ndarray, k: int, n: int, start: int, v: np.ndarray) -> Fraction:
    """``sum_i |v_i - C_i|``, C the exact cyclic k-fold power on the window (fmpz, Fractions)."""
    coeffs, e = _exact_power(t, k)
    cyc = [0] * n
    for j, c in enumerate(coeffs):
        cyc[(j - start) % n] += c
    return sum((abs(Fraction(float(v[i])) - Fraction(cyc[i], 1 << e)) for i in range(n)), Fraction(0))


PAIR_CASES = [  # (name, x, y, k, n, start)
    ("alike", lambda r: _random_law(r, 16), lambda r: _random_law(r, 16), 5, 128, 0),
    ("y tiny", lambda r: _random_law(r, 20), lambda r: _random_law(r, 20) * 1e-12, 7, 256, 10),
    ("x tiny", lambda r: _random_law(r, 12) * 2.0 ** -60, lambda r: _random_law(r, 14), 6, 128, 0),
    ("different lengths", lambda r: _random_law(r, 9), lambda r: _random_law(r, 25, 40), 4, 128, 3),
    ("aliased", lambda r: _random_law(r, 20), lambda r: _random_law(r, 20, 20), 12, 64, 60),
    ("k 1", lambda r: _random_law(r, 30), lambda r: _random_law(r, 30), 1, 32, 0),
    ("long, k 40", lambda r: _random_law(r, 50), lambda r: _random_law(r, 50, 10), 40, 2048, 500),
    ("tiny entries", lambda r: np.array([1e-300, 0.25, 0.5, 0.25 - 1e-17, 5e-324]),
     lambda r: np.array([0.5, 0.0, 5e-324, 0.5]), 8, 64, 0),
    # most of the spectrum at or below the skip level (docs/pld.md §12.3, "Coefficients too small to power")
    ("smooth, k 300", lambda r: _smooth(16, 7.5), lambda r: _smooth(16, 6.0), 300, 1024, 1800),
]


def _smooth(size: int, centre: float) -> np.ndarray:
    x = np.exp(-((np.arange(size) - centre) ** 2) / 12)
    return x / x.sum()


@pytest.mark.parametrize("name,mx,my,k,n,start", PAIR_CASES, ids=[c[0] for c in PAIR_CASES])
def test_pair_error_within_bound(name: str, mx, my, k: int, n: int, start: int) -> None:
    """docs/pld.md §12.3: two real vectors powered through one forward and one inverse transform;
    each result is within the l1 bound of :func:`pair_bound` of its exact cyclic power."""
    rng = random.Random(name)
    x, y = mx(rng), my(rng)
    px, py = F.power_pair(x, y, k, n, start)
    assert px.l2 == py.l2 and px.t is x and py.t is y
    l1 = F.pair_bound(n, k, F.sum_up(x), F.sum_up(y), R.skip_modulus(R.skip_level(k)))
    assert px.l2 == F.l2_of(l1, n)
    for t, pw in ((x, px), (y, py)):
        err = _cyclic_error(t, k, n, start, pw.v)
        assert err <= l1, (name, float(err), float(l1))


def test_a_pair_separated_in_single_precision_exceeds_the_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    """The separation of X and Y rounded to float32 (a broken variant) is caught by the bound."""
    orig = F.separate

    def single(zr: np.ndarray, zi: np.ndarray, count: int | None = None):
        return tuple(p.astype(np.float32).astype(np.float64) for p in orig(zr, zi, count))

    monkeypatch.setattr(F, "separate", single)
    rng = random.Random("alike")
    x, y = _random_law(rng, 16), _random_law(rng, 16)
    px, _ = F.power_pair(x, y, 5, 128, 0)
    assert _cyclic_error(x, 5, 128, 0, px.v) > F.pair_bound(128, 5, F.sum_up(x), F.sum_up(y))


def test_a_two_mode_law_gets_a_window_half_as_long() -> None:
    """docs/pld.md §12.4, the DP-SGD case in small: a tilted law with a rare far mode (the sampled
    record's loss) has a long upper tail.  Holding both tails at e^-23 needs 2^14 points; charged
    with the weights the queries give it, the wrap-around of a window of 2^13 points is within
    1e-9 of the query's weight, while the mass outside that window is far above e^-23."""
    j = np.arange(1001.0)
    t = np.exp(-((j - 50) ** 2) / 2000) + 1e-2 * np.exp(-((j - 900) ** 2) / 2000)
    t = t / t.sum()
    k, rate = 30, Fraction(1, 50)
    n_old, _ = F.window_for(t, k, -23.0)
    n_new, start = F.window_for(t, k, -23.0, float(rate))  # float ok: the window's choice
    assert 2 * n_new <= n_old
    i0 = int(k * float((t * j).sum()))  # float ok: the query at the k-fold mean, a choice
    bound = W.wrapped_mass(F.Power(np.zeros(n_new), start, Fraction(0), None, t, k), i0, rate)
    from flint import arb, ctx

    with ctx.workprec(128):
        rel = bound * (arb(rate.numerator) / rate.denominator * i0).exp()
        assert rel < arb(10) ** -9
    assert F.outside_mass(t, k, start, n_new) > Fraction(1, 10**9)


def test_the_window_of_many_steps_holds_the_query() -> None:
    """With 10^5 steps the window sits around the k-fold mean, where the tilt puts the queries, and
    its wrap-around is negligible there (a window once placed k indices too low, docs/pld.md §12.4)."""
    j = np.arange(50.0)
    t = np.exp(-((j - 20) ** 2) / 50)
    t = t / t.sum()
    k, rate = 100_000, Fraction(1, 100)
    n, start = F.window_for(t, k, -23.0, float(rate))  # float ok: the window's choice
    i0 = int(k * float((t * j).sum()))  # float ok: the query at the k-fold mean, a choice
    assert start <= i0 < start + n
    bound = W.wrapped_mass(F.Power(np.zeros(n), start, Fraction(0), None, t, k), i0, rate)
    from flint import arb, ctx

    with ctx.workprec(128):
        assert bound * (arb(rate.numerator) / rate.denominator * i0).exp() < arb(10) ** -9


def test_the_stage_twiddles_are_the_tables_floats_contiguous_and_bounded_in_memory() -> None:
    """The per-stage twiddles (docs/pld.md §12.2, the speed-up of issue 26) are exactly the floats
    ``tw[j step]`` of the table (so Theorem 24.2's mu holds unchanged), stored contiguous (the middle
    stages read them once per block of butterflies), and one length's copies hold at most n floats."""
    n = 1 << 12
    tw = F.twiddles(n)
    total = 0
    m = 1
    while m < n:
        step = n // (2 * m)
        wr, wi = R._stage_twiddles(tw, step, m)
        assert wr.flags.c_contiguous and wi.flags.c_contiguous
        assert wr.tolist() == tw.re[::step][:m].tolist() and wi.tolist() == tw.im[::step][:m].tolist()
        m *= 2
    for wr, wi in R._STAGE_TW.values():
        total += wr.shape[0] + wi.shape[0]
    assert total <= n
    R._stage_twiddles(F.twiddles(16), 2, 4)  # another length: the first one's copies are let go
    assert all(key[0] == 16 for key in R._STAGE_TW)


@pytest.mark.parametrize("n", [1 << 14, 1 << 15, 1 << 16])
def test_a_long_fft_does_the_arithmetic_of_the_pointwise_reference(n: int) -> None:
    """Bit for bit at lengths whose middle stages read the contiguous stage twiddles over many blocks
    (both directions: the inverse's conjugation by a swapped sum and difference is exact)."""
    rng = random.Random(n)
    x = [rng.random() - 0.25 for _ in range(n)]
    y = [rng.random() - 0.75 for _ in range(n)]
    tw = F.twiddles(n)
    for inverse in (False, True):
        r, i = F.fft(np.array(x), np.array(y), tw, inverse=inverse)
        rr, ri = _reference_fft(x, y, tw, inverse)
        assert r.tolist() == rr and i.tolist() == ri


@pytest.mark.parametrize("block", [1, 16, 1 << 13])
def test_the_blocked_pointwise_power_is_binary_powering_on_every_block(monkeypatch: pytest.MonkeyPatch,
                                                                       block: int) -> None:
    """Bit for bit over several blocks and a ragged last one (docs/pld.md §12.3, the pointwise power
    in cache-sized blocks, squares by one product and a doubling): the same floats as binary powering
    by the standard complex product, and the input left unchanged."""
    monkeypatch.setattr(R, "_POWER_BLOCK", block)
    rng = random.Random(block)
    a = [complex(rng.random() - 0.5, rng.random() - 0.5) for _ in range(40)]
    a += [cmath.rect(0.9999, 6.3 * rng.random()) for _ in range(43)]  # near the unit circle: no underflow

    def mul(p: tuple[float, float], q: tuple[float, float]) -> tuple[float, float]:
        return p[0] * q[0] - p[1] * q[1], p[0] * q[1] + p[1] * q[0]

    ar = np.array([z.real for z in a])
    ai = np.array([z.imag for z in a])
    for k in (1, 3, 77, 1000, 100001):
        got_r, got_i = R.cpower(ar, ai, k)
        assert ar.tolist() == [z.real for z in a] and ai.tolist() == [z.imag for z in a]
        for z, gr, gi in zip(a, got_r.tolist(), got_i.tolist()):
            res: tuple[float, float] | None = None
            base, e = (z.real, z.imag), k
            while e:
                if e & 1:
                    res = base if res is None else mul(res, base)
                e >>= 1
                if e:
                    base = mul(base, base)
            assert res == (gr, gi)


def _old_separate(zr: np.ndarray, zi: np.ndarray) -> tuple[np.ndarray, ...]:
    """The separation as first written (np.roll copies of the reversed vectors; docs/pld.md §12.3)."""
    rr = np.roll(zr[::-1], 1)
    ri = np.roll(zi[::-1], 1)
    return (np.add(zr, rr) * 0.5, np.subtract(zi, ri) * 0.5, np.add(zi, ri) * 0.5,  # float ok: halving
            np.subtract(rr, zr) * 0.5)  # float ok: halving, as in the engine


@pytest.mark.parametrize("n", [1, 2, 4, 8, 1024])
def test_the_separation_in_place_is_the_rolled_one(n: int) -> None:
    """``separate`` reads ``Z_{-j}`` through a reversed view instead of rolled copies: the same floats
    (docs/pld.md §12.3), signs of zero included, with values that underflow when halved; with a
    ``count``, the first ``count`` of them."""
    rng = np.random.default_rng(n)
    zr, zi = rng.random(n) - 0.5, rng.random(n) - 0.5
    zr[::3] *= 2.0 ** -1070  # halving these rounds (underflow): the same rounding either way
    zi[1::5] = -0.0
    want = _old_separate(zr, zi)
    for count in sorted({1, n // 2 + 1 if n > 1 else 1, n}):
        got = R.separate(zr, zi, count)
        for g, w in zip(got, want):
            assert g.tobytes() == w[:count].tobytes()


@pytest.mark.parametrize("start", [0, 1, 5, 63, 64, 100, -3, 1000])
def test_the_one_pass_shift_is_the_scaled_roll(start: int) -> None:
    """``_shifted(v, 1/n, start)`` is ``np.roll(v / n, -(start mod n))`` bit for bit (the window's
    first point first; docs/pld.md §12.3)."""
    rng = np.random.default_rng(start % 7)
    v = rng.random(64) - 0.25
    v[::9] = 2.0 ** -1070  # scaled into the subnormals
    want = np.roll(v * (1.0 / 64), -(start % 64))  # float ok: 1/64 is exact, the engine's scale
    assert F._shifted(v, 1.0 / 64, start).tobytes() == want.tobytes()  # float ok: as above


@pytest.mark.parametrize(("n", "start"), [(1 << 10, 37), (1 << 17, 60_000)])
def test_power_pair_is_the_textbook_pipeline_bit_for_bit(n: int, start: int) -> None:
    """``power_pair`` end to end: the textbook FFT of ``x + i y``, the rolled separation, the powers,
    ``(pr - qi) + i (pi + qr)``, the textbook inverse, scaled by 1/n and rolled to the window: the
    same floats (docs/pld.md §12.2-§12.3), at a length with fused sweeps (2^17)."""
    x, y = _random_law(random.Random(n), 300), _random_law(random.Random(n + 1), 200, 30)
    k = 1000
    px, py = F.power_pair(x, y, k, n, start)
    zr, zi = np.zeros(n), np.zeros(n)
    zr[:300], zi[:200] = x, y
    tw = F.twiddles(n)
    ar, ai = _simple_fft(zr, zi, tw, False)
    xr, xi, yr, yi = _old_separate(ar, ai)
    pr, pi = R.cpower(xr, xi, k)
    qr, qi = R.cpower(yr, yi, k)
    wr, wi = _simple_fft(pr - qi, pi + qr, tw, True)
    assert px.v.tobytes() == np.roll(wr * (1.0 / n), -start).tobytes()  # float ok: 1/n exact
    assert py.v.tobytes() == np.roll(wi * (1.0 / n), -start).tobytes()  # float ok: 1/n exact


def _full_circle_g(ar: np.ndarray, ai: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """``P + i Q`` as first computed: X, Y separated (rolled copies) and powered at every j."""
    xr, xi, yr, yi = _old_separate(ar, ai)
    pr, pi = R.cpower(xr, xi, k)
    qr, qi = R.cpower(yr, yi, k)
    return pr - qi, pi + qr


HALF_LAWS = [  # (name, x, y): random laws, spikes (exact zeros in the spectrum), flat laws (real spectra)
    ("random", lambda n, r: _random_law(r, max(n // 3, 1), 40), lambda n, r: _random_law(r, max(n // 2, 1))),
    ("spikes", lambda n, r: np.eye(1, n, n // 4)[0], lambda n, r: np.eye(1, n, n - 1)[0] / 2),
    ("flat", lambda n, r: np.full(n, 1.0 / n), lambda n, r: np.zeros(max(n // 2, 1))),
]


@pytest.mark.parametrize("n", [1, 2, 4, 8, 16, 128, 1 << 12])
@pytest.mark.parametrize("law", HALF_LAWS, ids=[h[0] for h in HALF_LAWS])
def test_the_pair_powered_on_half_the_spectrum_is_the_whole_circles(n: int, law) -> None:
    """docs/pld.md §12.3, "Half the spectrum": separating and powering at ``j <= n/2`` only, and
    building ``G_{n-j}`` from index j, gives the values of the whole-circle computation (an exact
    zero may change sign, which no later value sees), and :func:`power_pair` end to end the same
    floats as before, on several n, k and windows."""
    _, mx, my = law
    rng = random.Random(n)
    x, y = mx(n, rng), my(n, rng)
    tw = F.twiddles(n)
    for k in (1, 2, 3, 77, 1000, 100_000):
        zr, zi = np.zeros(n), np.zeros(n)
        zr[:x.shape[0]], zi[:y.shape[0]] = x, y
        ar, ai = F.fft(zr, zi, tw)
        want = _full_circle_g(ar, ai, k)
        got = F._pair_powers(ar, ai, k)
        assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
        for start in (0, n // 3 + 1, -5):
            px, py = F.power_pair(x, y, k, n, start)
            wr, wi = F.fft(*want, tw, inverse=True)
            assert px.v.tobytes() == np.roll(wr * (1.0 / n), -start).tobytes()  # float ok: 1/n exact
            assert py.v.tobytes() == np.roll(wi * (1.0 / n), -start).tobytes()  # float ok: 1/n exact


def test_transforms_in_threads_keep_their_floats() -> None:
    """The transform's work arrays are per thread: four threads transforming different vectors at
    once (numpy lets go of the GIL inside each ufunc) get the floats of one thread alone."""
    from concurrent.futures import ThreadPoolExecutor

    n = 1 << 16
    tw = F.twiddles(n)
    rng = np.random.default_rng(4)
    inputs = [(rng.random(n) - 0.5, rng.random(n) - 0.5) for _ in range(4)]
    alone = [F.fft(x, y, tw, inverse=bool(i % 2)) for i, (x, y) in enumerate(inputs)]

    def run(i: int) -> bool:
        x, y = inputs[i % 4]
        r, im = F.fft(x, y, tw, inverse=bool(i % 2))
        return r.tobytes() == alone[i % 4][0].tobytes() and im.tobytes() == alone[i % 4][1].tobytes()

    with ThreadPoolExecutor(4) as ex:
        assert all(ex.map(run, range(24)))


def _exact_weighted(t: np.ndarray, k: int, a: int, rate: Fraction, upper: bool, log_f: Fraction) -> mpmath.mpf:
    """``e^{log_f} sum x^J L_J`` over J >= a (``upper``) or J <= a, ``x = e^{-rate}``, ``L = t^{*k}``
    from the exact power (fmpz), in mpmath at 60 digits: independent of the float sums and of Arb."""
    import mpmath

    coeffs, e = _exact_power(t, k)
    with mpmath.workdps(60):
        x = mpmath.exp(-mpmath.mpf(rate.numerator) / rate.denominator)
        tot = mpmath.mpf(0)
        for j, c in enumerate(coeffs):
            if (j >= a) if upper else (j <= a):
                tot += mpmath.mpf(c) / mpmath.mpf(2) ** e * x ** j
        return tot * mpmath.exp(mpmath.mpf(log_f.numerator) / log_f.denominator)


def _nan_sums(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every float sum of fftwrap without a finite value (as a ball that holds 0 and overflows its log)."""
    from flint import arb

    monkeypatch.setattr(W, "power_sum", lambda v, log_r: arb("nan"))


@pytest.mark.parametrize("upper", [True, False])
def test_a_weighted_tail_without_a_finite_chernoff_bound_falls_back_to_the_plain_bound(
        monkeypatch: pytest.MonkeyPatch, upper: bool) -> None:
    """Where no float sum of the Chernoff bounds has a finite value, ``_weighted_tail`` bounds the sum by
    ``e^{log_f} max(x^J) (sum t)^k`` over the range of J (docs/pld.md §12.4, "the plain bound") instead of
    raising (the kit's DP-SGD strategy met the raise under load at sigma 1/2, q 1/8, 10^5 steps, delta
    10^-25): every bound is at least the exact weighted sum, for rates of both signs and ends inside and
    outside the support."""
    import mpmath

    _nan_sums(monkeypatch)
    rng = random.Random(7)
    for _ in range(40):
        t = np.array([rng.randint(0, 8) / 16 for _ in range(rng.randint(2, 5))])
        t[rng.randrange(t.shape[0])] += 1 / 32
        k = rng.randint(1, 6)
        top = k * (t.shape[0] - 1)
        a = rng.randint(-2, top + 2)
        rate = Fraction(rng.randint(-20, 20), 8)
        log_f = Fraction(rng.randint(-30, 30), 8)
        got = W._weighted_tail(t, k, a, rate, upper, log_f)
        want = _exact_weighted(t, k, a, rate, upper, log_f)
        with mpmath.workdps(60):
            assert mpmath.mpf(got.numerator) / got.denominator >= want, (t, k, a, rate, upper, log_f)


def test_the_plain_bound_needs_its_larger_end() -> None:
    """The plain bound takes ``x^J`` at the end of J's range where it is larger: with the lower end
    always (right for rate >= 0 only), an upper tail at a negative rate would be under-bounded."""
    import mpmath

    t, k, a, rate = np.array([0.5, 0.5]), 4, 1, Fraction(-1)
    right = W._plain_tail(t, k, a, rate, True, Fraction(0))
    want = _exact_weighted(t, k, a, rate, True, Fraction(0))   # ((1 + e)/2)^4 - 1/16
    with mpmath.workdps(60):
        wrong = mpmath.exp(1) ** a * 1 ** k   # x^a S^k: x = e, S = 1
        assert mpmath.mpf(right.numerator) / right.denominator >= want > wrong


def test_wrap_terms_hold_when_no_float_sum_is_finite(monkeypatch: pytest.MonkeyPatch) -> None:
    """``wrap_terms`` with every float sum failing (the plain bounds only; before, it raised): each of its
    four parts is at least the exact part computed from the exact power (docs/pld.md §12.4)."""
    import mpmath

    _nan_sums(monkeypatch)
    law = np.array([0.25, 0.5, 0.25])
    k, n, start, i0, rate = 40, 32, 30, 40, Fraction(1, 10)
    parts = W.wrap_terms(law, k, start, n, i0, rate)
    c = max(i0, start)
    exact = [_exact_weighted(law, k, max(start + n, i0), rate, True, rate * i0),
             _exact_weighted(law, k, c + n, Fraction(0), True, -rate * (c - i0)),
             mpmath.mpf(0),  # i0 >= start: no missing bottom at indices >= i0
             min(_exact_weighted(law, k, start - 1, Fraction(0), False, -rate * (c - i0)),
                 _exact_weighted(law, k, start - 1, rate, False, -rate * (n - i0)))]
    with mpmath.workdps(60):
        for got, want in zip(parts, exact):
            assert mpmath.mpf(got.numerator) / got.denominator >= want
    assert parts[3] > 0


@pytest.mark.parametrize("n", [2, 8, 64, 1024])
def test_every_twiddle_is_within_mu_of_the_root_computed_or_read_from_a_longer_table(n: int) -> None:
    """Each float pair of ``twiddles(n)`` lies within ``mu`` (complex modulus) of ``exp(-2 pi i j / n)``,
    computed in mpmath at 60 digits, and so does each of ``half_twiddles(2n)`` (the table of n read
    from the table of 2n, docs/pld.md §12.2).  A table read with the wrong stride fails: its entries
    are other roots.  Each table is a function of its length alone: computed again, the same floats."""
    with mpmath.workdps(60):
        direct = R.twiddles(n)
        half = R.half_twiddles(2 * n)
        big = R.twiddles(4 * n)
        wrong = R.Twiddles(n, big.re[::2][: max(n // 2, 1)], big.im[::2][: max(n // 2, 1)], half.mu)
        mu = mpmath.mpf(half.mu.numerator) / half.mu.denominator
        assert half.n == n and half.mu == direct.mu

        def worst(tw: R.Twiddles) -> mpmath.mpf:
            return max(abs(mpmath.mpc(tw.re[j], tw.im[j]) - mpmath.expjpi(mpmath.mpf(-2 * j) / n))
                       for j in range(max(n // 2, 1)))

        assert worst(direct) <= mu and worst(half) <= mu
        if n >= 4:
            assert worst(wrong) > mu
    saved = dict(R._TWIDDLES)
    R._TWIDDLES.clear()
    try:
        again = R.twiddles(n)
        assert again.re.tolist() == direct.re.tolist() and again.im.tolist() == direct.im.tolist()
    finally:
        R._TWIDDLES.clear()
        R._TWIDDLES.update(saved)
