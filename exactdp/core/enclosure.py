"""Enclosures and the precision loop: exact rational endpoints that provably contain a real value.

An :class:`Enclosure` is what every inexact answer of exactdp is (docs/contracts.md §1): exact
rational endpoints ``lower <= true value <= upper``, printed rounded outward.  :func:`certify`
evaluates an Arb ball at rising precision until it is narrow enough.

An enclosure behaves like a number where a number is asked for (docs/contracts.md §4.1): as a
``float`` it is the float64 nearest the exact midpoint of ``[lower, upper]`` (the value itself when
exact), ``format(e, ".3f")`` and ``round(e, 3)`` format and round that same float, and
:meth:`Enclosure.float_lower` / :meth:`Enclosure.float_upper` are the safe sides.  There is no
arithmetic and no ordering: an interval has none that would not pretend.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Literal

from flint import arb, ctx

from exactdp.core import progress
from exactdp.core.errors import InvalidParameterError, PrecisionError
from exactdp.core.numbers import (
    DEFAULT_DIGITS,
    INF,
    MAX_PREC,
    CountInput,
    ExactInput,
    arb_of_fraction,
    decimal_string,
    directed_float,
    format_fraction,
    fraction_of_arb_endpoints,
    fraction_of_decimal_string,
    parse_digits,
    parse_rational,
)

__all__ = ["Enclosure", "certify"]


# -- the enclosure ---------------------------------------------------------------------------

def _fmt_end(x: Fraction | float, digits: int, direction: Literal["down", "up"]) -> str:
    if isinstance(x, float):
        return "inf" if x > 0 else "-inf"
    return decimal_string(x, digits, direction)


#: about how many significant digits a repr or notebook view prints of each end (the fields keep them all)
_REPR_DIGITS = 17
#: the longest exact value a repr or notebook view prints whole
_REPR_EXACT_CHARS = 40


def _decimal_fraction(s: str) -> Fraction:
    """A printed decimal end as the exact rational it states (no int-digits limit)."""
    return fraction_of_decimal_string(s)


def _digits_certified(lo: Fraction, hi: Fraction, cap: int) -> int:
    """The largest n <= cap with hi - lo <= 10^-n min(|lo|, |hi|) (0 when 0 is in [lo, hi], lo < hi).

    >>> _digits_certified(Fraction(1), Fraction(101, 100), 30), _digits_certified(Fraction(1), Fraction(2), 30)
    (2, 0)
    """
    if lo == hi:
        return cap
    if lo <= 0 <= hi:
        return 0
    ratio = min(abs(lo), abs(hi)) / (hi - lo)
    t = ratio.numerator // ratio.denominator  # 10^n <= ratio exactly when 10^n <= floor(ratio)
    if t == 0:
        return 0
    n = max(0, (t.bit_length() - 1) * 1233 // 4096)  # 1233/4096 ~ log10(2): an estimate, corrected below
    while n > 0 and 10**n > t:
        n -= 1
    while 10 ** (n + 1) <= t:
        n += 1
    return min(n, cap)


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
            a, b = fraction_of_decimal_string(lo), fraction_of_decimal_string(hi)
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
        return self.lower if isinstance(self.lower, float) else directed_float(self.lower, "down")

    def float_upper(self) -> float:
        """The smallest float64 >= upper (a safe upper bound for float-based libraries)."""
        return self.upper if isinstance(self.upper, float) else directed_float(self.upper, "up")

    def printed_ends(self) -> tuple[str, str]:
        """``lower`` and ``upper`` as the JSON prints them (docs/contracts.md §4): an exact value
        with a terminating decimal expansion (or a bracket of one such point) exactly at both ends,
        however long, anything else rounded outward as :meth:`lower_str` and :meth:`upper_str`.

        >>> Enclosure.exact_value(Fraction(123456789, 10**9), digits=3).printed_ends()
        ('0.123456789', '0.123456789')
        >>> Enclosure.exact_value(Fraction(1, 3), digits=3).printed_ends()
        ('0.3333', '0.3334')
        """
        q = self.exact if self.exact is not None else self.lower if self.lower == self.upper else None
        if isinstance(q, Fraction):  # an exact value (or a bracket of one point)
            s = format_fraction(q)
            if "/" not in s:
                return s, s
        return self._printed()

    def certified_digits(self, requested: CountInput | None = None) -> int:
        """The significant digits the printed ends certify: the largest ``n <= requested`` with
        ``upper - lower <= 10^-n min(|lower|, |upper|)``, computed exactly on the decimal strings
        :meth:`printed_ends` gives (docs/contracts.md §4).

        ``requested`` defaults to :attr:`digits` (the precision asked of the engine; this count is
        never above it).  An exact value (and an exact +inf) certifies all of them; a bracket that
        contains or touches 0 with nonzero width certifies none, and so does a half-infinite one.

        >>> Enclosure(Fraction(0), Fraction(51, 10**58), 30).certified_digits()
        0
        >>> Enclosure(Fraction("0.003896727"), Fraction("0.00499001"), 30).certified_digits()
        0
        >>> Enclosure(Fraction("1.8277"), Fraction("1.8293"), 30).certified_digits()
        3
        >>> Enclosure.exact_value(Fraction(1, 3), 12).certified_digits(), Enclosure.infinite(7).certified_digits()
        (12, 7)
        """
        cap = self.digits if requested is None else parse_digits(requested, "requested")
        if self.exact is not None or self.is_infinite:
            return cap
        lo_s, hi_s = self.printed_ends()
        if "inf" in lo_s or "inf" in hi_s:
            return 0
        return _digits_certified(_decimal_fraction(lo_s), _decimal_fraction(hi_s), cap)

    def to_json(self, requested: CountInput | None = None) -> dict[str, Any]:
        """The result keys of the JSON contract (docs/contracts.md §4).

        ``"digits"`` is :meth:`certified_digits` of ``requested`` (default :attr:`digits`), and
        ``"digits_requested"`` is added when fewer were certified.

        >>> js = Enclosure(Fraction("1.8277"), Fraction("1.8293"), 3).to_json(requested=8)
        >>> js["lower"], js["upper"], js["digits"], js["digits_requested"]
        ('1.8277', '1.8293', 3, 8)
        """
        lo, hi = self.printed_ends()
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
        cap = self.digits if requested is None else parse_digits(requested, "requested")
        out["digits"] = self.certified_digits(cap)
        if out["digits"] < cap:
            out["digits_requested"] = cap
        return out

    def __str__(self) -> str:
        if self.exact is not None:
            return format_fraction(self.exact)
        if self.is_infinite:
            return "inf"
        lo, hi = self._printed()
        return f"[{lo}, {hi}]"

    # a number where a number is asked for (docs/contracts.md §4.1)
    def __float__(self) -> float:
        """The float64 nearest the exact midpoint ``(lower + upper) / 2`` (ties to even).

        The value itself, correctly rounded, when exact; ``inf`` when an end is +inf, ``-inf`` when
        an end is -inf (``nan`` for both).  Not a bound: :meth:`float_lower` and
        :meth:`float_upper` are the safe sides.

        >>> e = Enclosure(Fraction(1, 3), Fraction(2, 3))
        >>> float(e), float(Enclosure.exact_value(Fraction(1, 10))), float(Enclosure.infinite())  # float ok: a doctest
        (0.5, 0.1, inf)
        """
        lo, hi = self.lower, self.upper
        if isinstance(hi, float) and hi > 0:
            return math.inf if not (isinstance(lo, float) and lo < 0) else math.nan  # (-inf, inf): no midpoint
        if isinstance(lo, float) or isinstance(hi, float):
            return -math.inf
        mid = (lo + hi) / 2
        try:
            return mid.numerator / mid.denominator  # float ok: correctly rounded, documented as not a bound
        except OverflowError:
            return math.inf if mid > 0 else -math.inf

    def __format__(self, spec: str) -> str:
        """``format(e, spec)``: ``str(e)`` for the empty spec, else the float nearest the midpoint
        (the ``float`` of ``e``, not a bound) formatted with ``spec``; the bracket is ``str(e)``.

        >>> e = Enclosure(Fraction(84630263447, 10**11), Fraction(84630263448, 10**11), 10)
        >>> f"{e:.3f}", format(e, ".2e"), f"{e}"
        ('0.846', '8.46e-01', '[0.84630263447, 0.84630263448]')
        """
        if not spec:
            return str(self)
        return format(float(self), spec)  # float ok: display only, documented as not a bound

    def __round__(self, ndigits: int | None = None) -> int | float:
        """``round(e, n)`` rounds the ``float`` of ``e`` as ``round`` does: a float (an int for ``round(e)``).

        >>> round(Enclosure(Fraction(84630263447, 10**11), Fraction(84630263448, 10**11), 10), 3)
        0.846
        """
        return round(float(self), ndigits)  # float ok: display only

    def __repr__(self) -> str:
        """A short readable form: the bracket to about 17 significant digits (rounded outward, so
        still an enclosure) and the digits the enclosure certifies (:meth:`certified_digits`), or
        the exact value (shortened past 40 characters).

        >>> Enclosure(Fraction(84630263447, 10**11), Fraction(84630263448, 10**11), 10, algorithm="kov15")
        Enclosure([0.84630263447, 0.84630263448], digits=10, algorithm='kov15')
        >>> Enclosure.exact_value(Fraction(1, 3))
        Enclosure(exact=1/3)
        >>> Enclosure.log_of(Fraction(3, 2), 5)
        Enclosure([0.405465, 0.405466], digits=5, exact_log=log(1.5))
        >>> Enclosure(Fraction(0), Fraction(51, 10**58), 30, algorithm="pld")
        Enclosure([0, 0.0000000000000000000000000000000000000000000000000000000051], digits=0 (of 30 requested), algorithm='pld')
        """
        extra = [f"algorithm={self.algorithm!r}"] if self.algorithm is not None else []
        if self.exact is not None:
            return f"Enclosure({', '.join([f'exact={self._short_value()}', *extra])})"
        if self.is_infinite:
            return f"Enclosure({', '.join(['exact=inf', *extra])})"
        lo, hi = self._short_ends()
        n = self.certified_digits()
        parts = [f"[{lo}, {hi}]", f"digits={n}" + (f" (of {self.digits} requested)" if n < self.digits else "")]
        if self.exact_log is not None:
            parts.append(f"exact_log=log({self._short(format_fraction(self.exact_log))})")
        return f"Enclosure({', '.join(parts + extra)})"

    def _repr_html_(self) -> str:
        """The notebook view: the bracket (or exact value) and how many digits it certifies.

        >>> Enclosure.exact_value(Fraction(1, 3))._repr_html_()
        '<span class="exactdp-enclosure">1/3 <small>(exact)</small></span>'
        >>> Enclosure(Fraction(1), Fraction(2), 3)._repr_html_()
        '<span class="exactdp-enclosure">[1, 2] <small>(0 of 3 significant digits certified)</small></span>'
        """
        if self.exact is not None:
            body, note = self._short_value(), "exact"
        elif self.is_infinite:
            body, note = "inf", "exact"
        else:
            lo, hi = self._short_ends()
            n = self.certified_digits()
            body = f"[{lo}, {hi}]"
            note = f"{n} of {self.digits} significant digits certified"
            if self.exact_log is not None:
                note += f"; exactly log({self._short(format_fraction(self.exact_log))})"
        if self.algorithm is not None:
            note += f"; {self.algorithm}"
        return f'<span class="exactdp-enclosure">{html.escape(body)} <small>({html.escape(note)})</small></span>'

    @staticmethod
    def _short(s: str) -> str:
        if len(s) <= _REPR_EXACT_CHARS:
            return s
        return f"{s[:20]}...{s[-8:]} ({len(s)} characters)"

    def _short_value(self) -> str:
        """The exact value, whole when short, else its first and last characters and its length."""
        assert self.exact is not None
        return self._short(format_fraction(self.exact))

    def _short_ends(self) -> tuple[str, str]:
        """Both ends rounded outward to about :data:`_REPR_DIGITS` significant digits (a few more
        where the bracket needs them to keep its width, as :meth:`lower_str`)."""
        if self.digits <= _REPR_DIGITS:
            return self._printed()
        return Enclosure(self.lower, self.upper, _REPR_DIGITS)._printed()


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
