"""Enclosures and the precision loop: exact rational endpoints that provably contain a real value.

An :class:`Enclosure` is what every inexact answer of exactdp is (docs/contracts.md §1): exact
rational endpoints ``lower <= true value <= upper``, printed rounded outward.  :func:`certify`
evaluates an Arb ball at rising precision until it is narrow enough.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Any, Literal

from flint import arb, ctx

from exactdp.core import progress
from exactdp.core.errors import InvalidParameterError, PrecisionError
from exactdp.core.numbers import (
    DEFAULT_DIGITS,
    INF,
    MAX_PREC,
    ExactInput,
    arb_of_fraction,
    decimal_string,
    format_fraction,
    fraction_of_arb_endpoints,
    parse_digits,
    parse_rational,
)

__all__ = ["Enclosure", "certify"]


# -- the enclosure ---------------------------------------------------------------------------

def _fmt_end(x: Fraction | float, digits: int, direction: Literal["down", "up"]) -> str:
    if isinstance(x, float):
        return "inf" if x > 0 else "-inf"
    return decimal_string(x, digits, direction)


def _short_exact(q: Fraction | None, digits: int) -> str | None:
    """q written exactly, when it is a decimal of at most ``digits`` significant digits."""
    if q is None:
        return None
    s = format_fraction(q)
    if "/" in s or len(s.replace("-", "").replace(".", "").strip("0")) > digits:
        return None
    return s


@dataclass(frozen=True)
class Enclosure:
    """Exact rational endpoints ``lower <= true value <= upper`` (or an exact value).

    ``exact`` is the value when it is rational; ``exact_log`` is ``q`` when the value is
    exactly ``log(q)``.  ``lower == upper == INF`` is an exact +infinity.

    >>> e = Enclosure.exact_value(Fraction(1, 3))
    >>> e.lower_str(), e.upper_str(), e.exact
    ('0.3333333333333333333333333333333', '0.3333333333333333333333333333334', Fraction(1, 3))
    """

    lower: Fraction | float
    upper: Fraction | float
    digits: int = DEFAULT_DIGITS
    exact: Fraction | None = None
    exact_log: Fraction | None = None
    algorithm: str | None = None

    def __post_init__(self) -> None:
        for name in ("lower", "upper"):
            v = getattr(self, name)
            if not (isinstance(v, Fraction) or (isinstance(v, float) and math.isinf(v))):
                object.__setattr__(self, name, parse_rational(v, name))  # +-inf is the only float
        object.__setattr__(self, "digits", parse_digits(self.digits))
        for name in ("exact", "exact_log"):
            v = getattr(self, name)
            if v is not None and not isinstance(v, Fraction):
                object.__setattr__(self, name, parse_rational(v, name))
        if self.exact_log is not None and self.exact_log <= 0:
            raise InvalidParameterError(f"exact_log={self.exact_log} must be > 0")
        if self.algorithm is not None and not isinstance(self.algorithm, str):
            raise InvalidParameterError(f"algorithm={self.algorithm!r} must be a string or None")
        if not (self.lower <= self.upper):
            raise InvalidParameterError(f"lower={self.lower} must be <= upper={self.upper}")
        if self.exact is not None and not (self.lower == self.exact == self.upper):
            raise InvalidParameterError("an exact enclosure must have lower == exact == upper")

    # constructors
    @classmethod
    def exact_value(cls, q: Fraction, digits: int = DEFAULT_DIGITS, algorithm: str | None = None) -> Enclosure:
        """The exact rational ``q`` (lower == exact == upper)."""
        q = parse_rational(q, "q")
        return cls(q, q, digits, exact=q, algorithm=algorithm)

    @classmethod
    def infinite(cls, digits: int = DEFAULT_DIGITS, algorithm: str | None = None) -> Enclosure:
        return cls(INF, INF, digits, algorithm=algorithm)

    @classmethod
    def log_of(cls, q: Fraction, digits: int = DEFAULT_DIGITS, algorithm: str | None = None) -> Enclosure:
        """The exact value log(q), q > 0 rational, certified to ``digits``."""
        q = parse_rational(q, "q")
        digits = parse_digits(digits)
        if q <= 0:
            raise InvalidParameterError(f"q={format_fraction(q)} must be > 0")
        if q == 1:
            return cls.exact_value(Fraction(0), digits, algorithm)
        enc = certify(lambda: arb_of_fraction(q).log(), digits)
        return cls(enc.lower, enc.upper, digits, exact_log=q, algorithm=algorithm)

    # facts
    @property
    def is_exact(self) -> bool:
        return self.exact is not None

    @property
    def is_infinite(self) -> bool:
        return self.lower == INF

    def contains(self, x: ExactInput | float) -> bool:
        """Whether the exact rational ``x`` (or the float +-inf) lies in [lower, upper]."""
        if isinstance(x, float) and math.isinf(x):
            return self.upper == x
        q = parse_rational(x, "x")
        return self.lower <= q <= self.upper

    def relative_width(self) -> Fraction | float:
        """(upper - lower) / min(|lower|, |upper|): 0 when exact or infinite, 10^9 when 0 is inside,
        and the float +inf when one endpoint alone is infinite."""
        lo, hi = self.lower, self.upper
        if self.is_infinite or lo == hi:
            return Fraction(0)
        if lo <= 0 <= hi:
            return Fraction(10**9)
        if isinstance(lo, float) or isinstance(hi, float):  # one endpoint alone is +-inf
            return INF
        return (hi - lo) / min(abs(lo), abs(hi))

    def clamped(self, low: Fraction, high: Fraction) -> Enclosure:
        """This enclosure intersected with [low, high], for a value known to lie there (a probability).

        >>> Enclosure(Fraction(99, 100), Fraction(101, 100), 1).clamped(Fraction(0), Fraction(1)).upper
        Fraction(1, 1)
        """
        low, high = parse_rational(low, "low"), parse_rational(high, "high")
        if low > high:
            raise InvalidParameterError(f"{low=} must be <= {high=}")
        lo, hi = self.lower, self.upper
        if not isinstance(lo, float) and lo < low:
            lo = low
        if isinstance(hi, float) or hi > high:
            hi = high
        if lo == self.lower and hi == self.upper:
            return self
        if self.exact is not None:
            return self
        return Enclosure(lo, hi, self.digits, exact_log=self.exact_log if lo == hi else None,
                         algorithm=self.algorithm)

    # strings and floats
    def _printed(self) -> tuple[str, str]:
        """Both ends as decimals, rounded outward, with enough digits that the printed interval
        itself has relative width <= 10^-digits (docs/contracts.md §4)."""
        if self.exact is not None:
            s = _short_exact(self.exact, self.digits)
            if s is not None:
                return s, s
        if isinstance(self.lower, float) or isinstance(self.upper, float):
            return _fmt_end(self.lower, self.digits, "down"), _fmt_end(self.upper, self.digits, "up")
        target = Fraction(1, 10**self.digits)
        best = None
        for n in range(self.digits, self.digits + 7):
            lo, hi = decimal_string(self.lower, n, "down"), decimal_string(self.upper, n, "up")
            best = (lo, hi)
            a, b = Fraction(Decimal(lo)), Fraction(Decimal(hi))  # Decimal: no int-digits limit
            m = min(abs(a), abs(b))
            if a == b or (m > 0 and not (a < 0 < b) and b - a <= target * m):
                break
        assert best is not None
        return best

    def lower_str(self) -> str:
        """The lower end, rounded toward -inf, with at least ``digits`` significant digits."""
        return self._printed()[0]

    def upper_str(self) -> str:
        """The upper end, rounded toward +inf, with at least ``digits`` significant digits."""
        return self._printed()[1]

    def float_lower(self) -> float:
        """The largest float64 <= lower (a safe lower bound for float-based libraries)."""
        if isinstance(self.lower, float):
            return self.lower
        try:
            f = float(self.lower)  # float ok: corrected below to round toward -inf
        except OverflowError:
            return -math.inf if self.lower < 0 else sys.float_info.max
        if Fraction(f) > self.lower:
            f = math.nextafter(f, -math.inf)
        return f

    def float_upper(self) -> float:
        """The smallest float64 >= upper (a safe upper bound for float-based libraries)."""
        if isinstance(self.upper, float):
            return self.upper
        try:
            f = float(self.upper)  # float ok: corrected below to round toward +inf
        except OverflowError:
            return math.inf if self.upper > 0 else -sys.float_info.max
        if Fraction(f) < self.upper:
            f = math.nextafter(f, math.inf)
        return f

    def to_json(self) -> dict[str, Any]:
        """The result keys of the JSON contract (docs/contracts.md §4)."""
        lo, hi = self._printed()
        out: dict[str, Any] = {
            "lower": lo,
            "upper": hi,
            "exact": format_fraction(self.exact) if self.exact is not None else None,
            "float_lower": _json_float(self.float_lower()),
            "float_upper": _json_float(self.float_upper()),
        }
        if self.exact_log is not None:
            out["exact_log"] = f"log({format_fraction(self.exact_log)})"
        if self.algorithm is not None:
            out["algorithm"] = self.algorithm
        out["digits"] = self.digits
        return out

    def __str__(self) -> str:
        if self.exact is not None:
            return format_fraction(self.exact)
        if self.is_infinite:
            return "inf"
        lo, hi = self._printed()
        return f"[{lo}, {hi}]"


def _json_float(x: float) -> float | str:
    """A directed float for JSON: a number, or the string "inf"/"-inf" (JSON has no infinity)."""
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


# -- the precision loop -------------------------------------------------------------------------

def certify(
    compute: Callable[[], arb],
    digits: int = DEFAULT_DIGITS,
    *,
    start_prec: int | None = None,
    max_prec: int = MAX_PREC,
    algorithm: str | None = None,
) -> Enclosure:
    """Evaluate ``compute()`` in Arb at rising precision until its relative width is small enough.

    ``compute`` is called inside a scoped ``ctx.workprec``; it must build its ball from exact
    inputs only.  The ball must exclude zero (a value that may be exactly zero is the caller's to
    detect exactly).  The returned enclosure is the ball's exact endpoints, with relative width at
    most ``10**-(digits + 2)``, so that outward rounding to ``digits`` significant digits keeps it
    within ``10**-digits``.  Past ``max_prec`` bits a :class:`PrecisionError` is raised.

    >>> certify(lambda: arb(2).sqrt(), 10).lower_str()   # 11 digits keep the printed width <= 1e-10
    '1.4142135623'
    """
    target = Fraction(1, 10 ** (digits + 2))
    prec = start_prec or int(digits * 3.33) + 64
    last: arb | None = None
    while prec <= max_prec:
        progress.tick(f"certifying {digits} digits at {prec} bits")
        with ctx.workprec(prec):
            x = compute()
        last = x
        if x.is_finite() and not x.contains(0):
            lo, hi = fraction_of_arb_endpoints(x)
            m = min(abs(lo), abs(hi))
            if hi - lo <= target * m:
                return Enclosure(lo, hi, digits, algorithm=algorithm)
        prec *= 2
    raise PrecisionError(
        f"could not certify {digits=} significant digits within {max_prec} bits of precision "
        f"(last ball {last})"
    )
