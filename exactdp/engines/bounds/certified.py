"""Certified values of a closed-form bound: the clamped precision loop, and sum eps_i exactly.

Rational answers are exact; everything else is an Arb ball turned into exact rational endpoints at
rising precision, with ``max(0, .)`` / ``min(1, .)`` applied to the endpoints, so an input exactly at
a threshold is handled without deciding it.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

from flint import arb, ctx

from exactdp.core.enclosure import Enclosure
from exactdp.core.errors import PrecisionError
from exactdp.core.numbers import MAX_PREC, fraction_of_arb_endpoints
from exactdp.engines.bounds.sums import Groups, eps_sum_parts, s1

__all__ = ["certify_clamped", "exact_sum_eps"]


def certify_clamped(
    compute: Callable[[], arb],
    digits: int,
    algorithm: str,
    *,
    lo: Fraction | None = None,
    hi: Fraction | None = None,
    max_prec: int = MAX_PREC,
) -> Enclosure:
    """Certify ``min(hi, max(lo, v))`` for the value v that ``compute()`` encloses.

    Like :func:`exactdp.core.enclosure.certify`, but the clamps are applied to the exact endpoints
    (``min``/``max`` are monotone, so the clamped interval contains the clamped value), and a
    ball entirely past a clamp gives the clamp exactly.
    """
    target = Fraction(1, 10 ** (digits + 2))
    prec = digits * 10 // 3 + 64
    last = None
    while prec <= max_prec:
        with ctx.workprec(prec):
            x = compute()
        last = x
        if x.is_finite():
            _check_range(x)
            a, b = fraction_of_arb_endpoints(x)
            if lo is not None:
                if b <= lo:
                    return Enclosure.exact_value(lo, digits, algorithm)
                a = max(a, lo)
            if hi is not None:
                if a >= hi:
                    return Enclosure.exact_value(hi, digits, algorithm)
                b = min(b, hi)
            if not (a <= 0 <= b) and b - a <= target * min(abs(a), abs(b)):
                return Enclosure(a, b, digits, algorithm=algorithm)
        prec *= 2
    raise PrecisionError(f"could not certify {digits=} significant digits within {max_prec} bits (last ball {last})")


_MAX_BINARY_EXPONENT = 1 << 20  # |value| outside [2^-2^20, 2^2^20] is not turned into a Fraction


def _check_range(x: arb) -> None:
    """Refuse (PrecisionError) a ball whose magnitude is astronomically far from 1.

    ``exp(-2e18)`` is a legitimate Arb ball, but its exact endpoints would be rationals with
    billions of digits; such a value is reported as out of range instead.
    """
    if x.contains(0):
        return
    man, exp = x.mid().man_exp()
    top = int(exp) + int(man).bit_length()
    if abs(top) > _MAX_BINARY_EXPONENT:
        raise PrecisionError(f"the value is about 2^{top}, outside the representable range "
                             f"2^-{_MAX_BINARY_EXPONENT} .. 2^{_MAX_BINARY_EXPONENT}")


def exact_sum_eps(groups: Groups, digits: int, algorithm: str) -> Enclosure:
    """sum eps_i: exact when rational, exact_log when a sum of logs of moderate size."""
    r, logs = eps_sum_parts(groups)
    if not logs:
        return Enclosure.exact_value(r, digits, algorithm)
    if r == 0:
        bits = sum(c * (q.numerator.bit_length() + q.denominator.bit_length()) for c, q in logs)
        if bits <= 100_000:
            prod = Fraction(1)
            for c, q in logs:
                prod *= q ** c
            return Enclosure.log_of(prod, digits, algorithm)
    return certify_clamped(lambda: s1(groups), digits, algorithm)
