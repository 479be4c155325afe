"""Certified roots of monotone functions evaluated in Arb.

A root is *certified* by two exact rational points a < b where the function's sign is proved
(ball evaluations that exclude zero) to differ; the root lies in [a, b] by continuity.  The points
are found by Newton steps on ball midpoints (any guess is fine: only the final sign checks carry
the proof), then the bracket is tightened until its relative width meets the request.

>>> from flint import arb
>>> e = decreasing_root(lambda x: 2 - x * x, Fraction(0), Fraction(2), 20)
>>> e.lower ** 2 < 2 < e.upper ** 2, e.relative_width() <= Fraction(1, 10**22)
(True, True)
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

from flint import arb, ctx

from exactdp.core import progress
from exactdp.core.enclosure import Enclosure
from exactdp.core.errors import PrecisionError
from exactdp.core.numbers import MAX_PREC, arb_of_fraction, fraction_of_arb_endpoints

__all__ = ["decreasing_root", "sign_at"]


def sign_at(f: Callable[[arb], arb], x: Fraction, start_prec: int = 64, max_prec: int = MAX_PREC) -> int:
    """The sign of f(x) at an exact rational x, refining the precision; 0 only if never decided."""
    prec = start_prec
    while prec <= max_prec:
        progress.tick(f"sign test at {prec} bits")
        with ctx.workprec(prec):
            v = f(arb_of_fraction(x))
        if v > 0:
            return 1
        if v < 0:
            return -1
        prec *= 2
    return 0


def _mid(x: arb) -> Fraction:
    lo, _ = fraction_of_arb_endpoints(x.mid())
    return lo


def decreasing_root(f: Callable[[arb], arb], lo: Fraction, hi: Fraction, digits: int, *,
                    guess: Fraction | None = None, algorithm: str | None = None) -> Enclosure:
    """An enclosure of the root of a decreasing f on [lo, hi] (f(lo) > 0 > f(hi) must hold).

    The relative width of the result is at most 10^-(digits+2) (so that printing to ``digits``
    keeps the promise); a :class:`PrecisionError` is raised when signs cannot be decided.
    """
    prec = int(3.33 * digits) + 64
    if sign_at(f, lo, prec) <= 0 or sign_at(f, hi, prec) >= 0:
        raise PrecisionError("the root bracket could not be certified (f(lo) > 0 > f(hi) failed)")
    target = Fraction(1, 10 ** (digits + 2))
    a, b = lo, hi
    x = guess if guess is not None and lo < guess < hi else (lo + hi) / 2
    for _ in range(400):
        progress.tick(f"root in [{float(a):.8g}, {float(b):.8g}]")  # float ok: a message
        if (a > 0 or b < 0) and b - a <= target * min(abs(a), abs(b)):
            return Enclosure(a, b, digits, algorithm=algorithm)
        if a <= 0 <= b and b - a <= Fraction(1, 2 ** (prec - 8)):
            raise PrecisionError("the root is 0 to working precision: no relative width can be certified")
        width = b - a
        # a Newton guess from ball midpoints (never trusted: only the sign tests below decide)
        with ctx.workprec(prec):
            xa = arb_of_fraction(x)
            d = arb_of_fraction(max(width / 1024, abs(x) * target / 16, Fraction(1, 2 ** (prec - 4))))
            fx = f(xa)
            df = (f(xa + d) - f(xa - d)) / (2 * d)
        ratio = fx / df  # not finite when df's ball holds 0 (a flat f at low precision): bisect then
        xn = x - _mid(ratio) if ratio.is_finite() else (a + b) / 2
        step = abs(xn - x)
        if not a < xn < b:
            xn, step = (a + b) / 2, (b - a) / 4
        # Newton's error after a step is of the order of the step squared: a bracket of the step's
        # size around the new point usually holds the root and shrinks quadratically
        r = max(abs(xn) * target / 4, min(step, (b - a) / 4), Fraction(1, 2 ** (prec - 8)))
        for p in (xn - r, xn + r):
            if not a < p < b:
                continue
            s = sign_at(f, p, prec)
            if s > 0:
                a = p
            elif s < 0:
                b = p
            else:
                prec *= 2
        if b - a > width / 2:  # the guess did not help enough: bisect
            m = (a + b) / 2
            s = sign_at(f, m, prec)
            if s > 0:
                a = m
            elif s < 0:
                b = m
            else:
                prec *= 2
        x = xn if a < xn < b else (a + b) / 2
        if x.denominator.bit_length() > prec:  # keep the rationals short
            x = Fraction(round(x * 2**prec), 2**prec)
            if not a < x < b:
                x = (a + b) / 2
    raise PrecisionError(f"could not certify the root to {digits=} digits")
