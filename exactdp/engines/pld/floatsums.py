"""Weighted sums of float vectors, ``sum_j v_j r^j``, by float64 dot products with a proved bound
(docs/pld.md §12.6, "The float sums").

The FFT path reads its powered float vectors through geometric weights: the tail sums of
:mod:`exactdp.engines.pld.fftcompose` and the Chernoff bounds of :mod:`exactdp.engines.pld.fftwrap`.
:func:`power_sum` splits the indices into blocks of B, ``j = B b + o``: the per-offset factors ``r^o``
are floats with a proved relative error (a few powers ``r^{2^i}`` from Arb, multiplied in floats),
each block's sum is one float64 dot product (any order of evaluation: Higham's bound
``gamma_B sum |terms|``, plus the products' underflow), and the blocks are combined in Arb by the
per-block factor ``(r^B)^b``.  The answer is an Arb ball holding the exact sum of the exact floats.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import numpy as np
from flint import arb, arb_poly, ctx

from exactdp.core.numbers import arb_of_fraction

__all__ = ["dot_error_factor", "power_sum"]

_PREC = 128
#: the unit roundoff of float64, round to nearest
_U = Fraction(1, 1 << 53)
#: the largest absolute error of one product (or fused multiply-add) that underflows: half the
#: smallest subnormal
_ETA = Fraction(1, 1 << 1075)
#: ``|log r| B`` at most this: every per-offset factor and partial product lies in
#: ``[e^-400, e^400]``, normal floats, where the standard model holds
_LOG_RANGE = 400.0  # float ok: the block's choice
#: the longest block (a power of 2): fewer blocks to combine in Arb against a longer dot product
_MAX_BLOCK = 1024


def _gamma(n: int) -> Fraction:
    """``gamma_n = n u / (1 - n u)`` (Higham §3.1): the relative bound of an n-term dot product."""
    return n * _U / (1 - n * _U)


@functools.lru_cache(maxsize=256)
def dot_error_factor(block: int, rho: Fraction) -> tuple[Fraction, Fraction]:
    """``(c1, c2)``: for a block of ``block`` terms with float factors ``m_o``, ``|m_o - r^o| <=
    rho r^o``, the computed ``D = fl(sum v_o m_o)`` and ``F = fl(sum |v_o| m_o)`` (any order) give
    ``|sum v_o r^o - D| <= c1 F + c2`` (docs/pld.md §12.6).

    ``sum |v| |r^o - m_o| <= rho' A`` with ``A = sum |v| m_o`` and ``rho' = rho / (1 - rho)``;
    ``|D - sum v m| <= gamma_B A + B 2^-1074`` (each product adds at most ``2^-1075`` when it
    underflows); ``A <= (F + B 2^-1074) / (1 - gamma_B)``.

    >>> dot_error_factor(1, Fraction(0))[0] == Fraction(1, 2**53 - 1) / (1 - Fraction(1, 2**53 - 1))
    True
    """
    g = _gamma(block)
    c1 = (rho / (1 - rho) + g) / (1 - g)
    c2 = (c1 + 1) * block * 2 * _ETA
    return c1, c2


_TABLES: dict[tuple[Fraction, int], tuple[np.ndarray, Fraction]] = {}


def _offsets(log_r: Fraction, block: int) -> tuple[np.ndarray, Fraction]:
    """Floats ``m_o``, ``o < block`` (a power of 2), and a rational rho with ``|m_o - r^o| <= rho
    r^o``, ``r = e^{log_r}`` (docs/pld.md §12.6).

    ``m[2^i + o] = fl(m[o] p_i)`` with ``p_i`` the float nearest ``r^{2^i}`` (its relative error
    checked in Arb, at most ``a``, a power of 2): ``m_o`` is a product of at most L = log2(block)
    factors p_i by at most L - 1 roundings, every partial product a normal float (``|log r| block <=
    400``), so ``|m_o / r^o - 1| <= (1 + a)^L (1 + u)^{L-1} - 1 <= e^s - 1 <= s (1 + s) = rho``,
    ``s = L a + (L - 1) u`` (``e^s - 1 - s <= s^2`` for ``s <= 1``): a rational of a few bits, where the
    product itself had thousands.  ``r = 1`` gives ones and rho = 0.

    >>> m, rho = _offsets(Fraction(-1, 3), 8)
    >>> import mpmath
    >>> with mpmath.workdps(50):
    ...     errs = [abs(mpmath.mpf(float(m[o])) / mpmath.exp(mpmath.mpf(-o) / 3) - 1) for o in range(8)]  # float ok: a doctest reading floats
    ...     ok = all(e <= mpmath.mpf(rho.numerator) / rho.denominator for e in errs)
    >>> ok, rho < Fraction(1, 10**14)
    (True, True)
    """
    key = (log_r, block)
    hit = _TABLES.get(key)
    if hit is not None:
        return hit
    levels = block.bit_length() - 1
    m = np.ones(block)
    rho = Fraction(0)
    if log_r != 0 and levels > 0:
        worst = arb(0)
        with ctx.workprec(_PREC):
            p = arb_of_fraction(log_r).exp()
            for i in range(levels):
                if i:
                    p = p * p  # a ball holding r^(2^i): one product, not another exp
                pf = float(p.mid())  # float ok: a float near r^(2^i), its error checked next
                worst = max(worst, (abs(arb(pf) - p) / p).upper())  # exact points: compared exactly
                np.multiply(m[: 1 << i], pf, out=m[1 << i: 2 << i])
            a = _power_of_2_above(worst)
        rho = _rho(levels, a)
    if len(_TABLES) > 64:
        _TABLES.clear()
    _TABLES[key] = (m, rho)
    return m, rho


@functools.lru_cache(maxsize=256)
def _rho(levels: int, a: Fraction) -> Fraction:
    """``s (1 + s)``, ``s = L a + (L - 1) u``: the per-offset factors' relative bound (:func:`_offsets`),
    remembered (a query asks for a few values of (L, a) many times)."""
    s = levels * a + (levels - 1) * _U
    if not s <= 1:
        raise ArithmeticError("a per-offset factor far from its power")  # p_i is the nearest float
    return s * (1 + s)


def _power_of_2_above(x: arb) -> Fraction:
    """The least power of 2 at least every point of the finite ball x (at least its upper end), read
    from the upper end's mantissa and exponent in integers; 2^-1100 where that end is <= 0 (a bound
    above 0 in every case).

    >>> _power_of_2_above(arb(3) / 16), _power_of_2_above(arb(1) / 4), _power_of_2_above(arb(-1)) == Fraction(1, 1 << 1100)
    (Fraction(1, 4), Fraction(1, 4), True)
    """
    man, exp = x.upper().man_exp()
    m, e = int(man), int(exp)
    if m <= 0:
        return Fraction(1, 1 << 1100)
    b = m.bit_length()  # 2^(b-1) <= m < 2^b
    k = e + (b - 1 if m == 1 << (b - 1) else b)  # 2^k is the least power of 2 >= m 2^e
    return Fraction(1 << k) if k >= 0 else Fraction(1, 1 << -k)


def _block_of(log_r: Fraction, n: int) -> int:
    """The block length: a power of 2 with ``|log r| B <= 400``, at most 1024 and about n."""
    a = abs(float(log_r))  # float ok: the block's choice, bounded below by the check it makes
    b = 1
    while b < _MAX_BLOCK and b < n and (b * 2) * a <= _LOG_RANGE:
        b *= 2
    return b


def _block_sums(v: np.ndarray, m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per block of ``len(m)``: ``fl(sum v_o m_o)`` and ``fl(sum |v_o| m_o)`` (real float64 dot
    products; the last block may be shorter)."""
    block = m.shape[0]
    full = (v.shape[0] // block) * block
    body = v[:full].reshape(-1, block)
    # einsum's own loops, not BLAS: the bound holds for any order of evaluation, and a threaded BLAS
    # spins when the cores are busy (10x slower on a loaded 2-core machine, docs/pld.md §12.6)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):  # both are bounded or checked
        d = np.einsum("ij,j->i", body, m)
        f = np.einsum("ij,j->i", np.abs(body), m)
        if full < v.shape[0]:
            rest, mr = v[full:], m[: v.shape[0] - full]
            d = np.append(d, np.einsum("i,i->", rest, mr))
            f = np.append(f, np.einsum("i,i->", np.abs(rest), mr))
    return d, f


@functools.lru_cache(maxsize=256)
def _factor_balls(block: int, rho: Fraction, prec: int) -> tuple[arb, arb]:
    """:func:`dot_error_factor` as Arb balls at ``prec`` bits (exact rationals' balls, remembered)."""
    c1, c2 = dot_error_factor(block, rho)
    with ctx.workprec(prec):
        return arb_of_fraction(c1), arb_of_fraction(c2)


def power_sum(v: np.ndarray, log_r: Fraction) -> arb:
    """A ball holding ``sum_j v_j r^j`` (``r = e^{log_r}``) of the exact float64 values v, of any
    sign (docs/pld.md §12.6): per block of B a float dot product with per-offset float factors, its
    error ``c1 F_b + c2`` (:func:`dot_error_factor`), the blocks combined in Arb at ``X = r^B``:
    ``sum_b X^b D_b +- (c1 sum_b X^b F_b + c2 sum_b X^b)``.  A vector whose products overflow is
    summed in Arb from its floats instead.  Call inside the caller's working precision.

    >>> x = power_sum(np.array([1.0, -0.5, 0.25]), Fraction(0))
    >>> x.contains(arb(3) / 4) and x.rad() < 1e-15
    True
    """
    n = v.shape[0]
    if n == 0:
        return arb(0)
    with ctx.workprec(max(ctx.prec, _PREC)):
        block = _block_of(log_r, n)
        m, rho = _offsets(log_r, block)
        if n <= block:  # one block: its dot products alone, no combination in Arb (X^0 = 1)
            with np.errstate(over="ignore", under="ignore", invalid="ignore"):  # bounded or checked
                d1 = float(np.einsum("i,i->", v, m[:n]))  # float ok: an exact float, its error bounded below (einsum, not BLAS)
                f1 = float(np.einsum("i,i->", np.abs(v), m[:n]))  # float ok: as above
            if math.isfinite(d1) and math.isfinite(f1):
                c1, c2 = _factor_balls(block, rho, ctx.prec)
                return arb(d1) + (c1 * arb(f1) + c2) * arb(0, 1)
        d, f = _block_sums(v, m)
        lr = arb_of_fraction(log_r)
        if not (np.isfinite(d).all() and np.isfinite(f).all()):  # overflow: the exact floats in Arb
            return arb_poly(v.tolist())(lr.exp())
        c1, c2 = _factor_balls(block, rho, ctx.prec)
        x = (lr * block).exp()
        main = arb_poly(d.tolist())(x)
        spread = c1 * arb_poly(f.tolist())(x) + c2 * arb_poly([1] * d.shape[0])(x)
        return main + spread * arb(0, 1)


def _check() -> None:  # pragma: no cover - the module's constants, checked when it loads
    assert math.exp(_LOG_RANGE) * 4 < 2.0 ** 1023 and math.exp(-_LOG_RANGE) / 4 > 2.0 ** -1022  # float ok: a check


_check()
