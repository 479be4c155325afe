"""The atom profile of Murtagh-Vadhan's pure part: atoms of equal privacy loss, and exact signs on them.

The outcomes S of the product of randomized-response pairs (docs/mathematics.md §2) are grouped into
*atoms* of equal loss, sorted by loss; the atom list is symmetric (atom n-1-i is the complement of
atom i), so with suffix sums ``SP[m] = sum_{i>=m} p_i`` and ``SQ[m] = sum_{i<=n-1-m} p_i``,
``delta_pure(x) = SP[m] - e^x SQ[m]``, m the first atom with loss > x.  :class:`Profile` holds
those sums (exact, or certified fixed-point integers) and decides the sign of ``delta_pure(x) - t``
exactly; the two ways to build one are in :mod:`exactdp.engines.mv_atoms`.
"""

from __future__ import annotations

from fractions import Fraction

from flint import arb, ctx, fmpz

from exactdp.core import progress
from exactdp.core.errors import PrecisionError
from exactdp.core.linlog import LinLog
from exactdp.core.numbers import DEFAULT_DIGITS, MAX_PREC, arb_of_fraction

__all__ = ["NoExactProfile", "Profile", "compare_losses"]

#: First precision (bits) of sign tests: that of ``certify`` at 30 digits, so one set of weights serves both.
_START_PREC = int(DEFAULT_DIGITS * 3.33) + 64
#: Precision (bits) after which an undecided sign triggers the exact identity test.
_IDENTITY_PREC = 1024


def compare_losses(a: LinLog, b: LinLog) -> int:
    """The exact sign of a - b."""
    return (a - b).sign()


# -- the atom profile ---------------------------------------------------------------------------

def _ball(lo: int, hi: int, D: int) -> arb:
    """An Arb ball containing [lo/D, hi/D]."""
    d = arb(fmpz(D))
    a = arb(fmpz(lo)) / d
    return a if lo == hi else a.union(arb(fmpz(hi)) / d)


class Profile:
    """Atoms of the privacy-loss distribution of a product of randomized-response pairs.

    Subclasses give ``n``, ``loss(i)`` (ascending, complement-symmetric), ``exact`` (weights are
    exact rationals), ``_weights(prec)`` -> (lo, err, D): integers lo_i with lo_i/D <= p_i and
    sum_i (p_i - lo_i/D) <= err/D (err = 0 when exact),
    and ``exact_terms(i)`` -> [(N, LinLog x)] with p_i * Z = sum N e^x, Z = sum of all terms.
    """

    n: int
    exact: bool
    algorithm: str

    def __init__(self) -> None:
        self._cache: dict[int, tuple[list[int], int, int]] = {}

    def loss(self, i: int) -> LinLog:
        raise NotImplementedError

    def _weights(self, prec: int) -> tuple[list[int], int, int]:
        raise NotImplementedError

    def exact_terms(self, i: int) -> list[tuple[int, LinLog]]:
        raise NotImplementedError

    # suffix sums, cached by precision (a higher precision serves a lower one)
    def sums(self, prec: int) -> tuple[list[int], int, int]:
        key = 0 if self.exact else prec
        for kk in sorted(self._cache):
            if kk >= key:
                return self._cache[kk]
        lo, err, D = self._weights(key)
        slo = [0] * (self.n + 1)
        a = 0
        for i in range(self.n - 1, -1, -1):
            a += lo[i]
            slo[i] = a
        self._cache[key] = (slo, err, D)
        return self._cache[key]

    def sp_sq_exact(self, m: int) -> tuple[Fraction, Fraction]:
        slo, _, D = self.sums(0)
        sp = Fraction(slo[m], D)
        sq = Fraction(slo[0] - slo[self.n - m], D)
        return sp, sq

    def sp_sq_arb(self, m: int) -> tuple[arb, arb]:
        """Balls of SP[m] = sum_{i>=m} p_i and SQ[m] = sum_{i<n-m} p_i at the current precision."""
        slo, err, D = self.sums(ctx.prec)
        j = self.n - m
        sq = slo[0] - slo[j]
        return _ball(slo[m], slo[m] + err, D), _ball(sq, sq + err, D)

    def index_above(self, x: LinLog) -> int:
        """The first atom whose loss is > x (n if none), by exact comparisons."""
        lo, hi = 0, self.n
        while lo < hi:
            mid = (lo + hi) // 2
            if compare_losses(self.loss(mid), x) > 0:
                hi = mid
            else:
                lo = mid + 1
        return lo

    # delta_pure(x) - t on the segment of atoms >= m: exact sign
    def sign_dp_minus_t(self, x: LinLog, m: int, t: Fraction) -> int:
        if m >= self.n:
            return (0 > t) - (0 < t)
        if t <= 0:
            # delta_pure > 0 here: the top atom (S = everything, weight prod y/(1+y) > 0) has
            # loss > x, and every other term is >= 0
            return 1
        ex = x.exp_exact()
        if self.exact and ex is not None:
            sp, sq = self.sp_sq_exact(m)
            v = sp - ex * sq - t
            return (v > 0) - (v < 0)
        prec = _START_PREC
        tried_identity = False
        while prec <= MAX_PREC:
            progress.tick(f"deciding a sign at {prec} bits")
            with ctx.workprec(prec):
                bp, bq = self.sp_sq_arb(m)
                bv = bp - x.exp_arb() * bq - arb_of_fraction(t)
            if bv > 0:
                return 1
            if bv < 0:
                return -1
            if prec >= _IDENTITY_PREC and not tried_identity:
                tried_identity = True
                if self._identically_equal(x, m, t):
                    return 0
            prec *= 2
        raise PrecisionError(f"could not decide the sign of delta_pure - t within {MAX_PREC} bits")

    def _identically_equal(self, x: LinLog, m: int, t: Fraction) -> bool:
        # Z (delta_pure(x) - t) = sum_{i>=m} [T_i - e^x T_{n-1-i}] - t sum_i T_i with
        # T_i = sum N e^{r + log q}: collect the coefficient of every distinct e^r exactly;
        # by Lindemann-Weierstrass it vanishes iff every collected coefficient is 0.
        coef: dict[Fraction, Fraction] = {}

        def add(c: Fraction, y: LinLog) -> None:
            coef[y.R] = coef.get(y.R, Fraction(0)) + c * y.Q

        for i in range(self.n):
            for N, y in self.exact_terms(i):
                add(-t * N, y)
                if i >= m:
                    add(Fraction(N), y)
                if self.n - 1 - i >= m:
                    add(Fraction(-N), y + x)
        return all(v == 0 for v in coef.values())


class NoExactProfile(Exception):
    """No exact profile of this composition is affordable (the router then takes another engine)."""
