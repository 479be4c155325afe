"""The exact number layer: parsing of exact inputs, exact reals, Arb conversions, outward decimals.

Everything that leaves this module is exact: a :class:`fractions.Fraction`, an
:class:`ExactReal` (a rational ``r`` or ``log(q)`` for a rational ``q > 0``), or an
:class:`Enclosure` whose endpoints are exact rationals that provably contain the true value
(docs/contracts.md §1).  Floating point never enters: a ``float`` input is refused, and the
only floats that leave are the directed ``float_lower()`` / ``float_upper()``.

Arithmetic on reals is done in Arb balls (python-flint), whose radius bounds every rounding
error, so a ball turned into exact endpoints is a rigorous enclosure.
"""

from __future__ import annotations

import math
import operator
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Literal, Protocol, SupportsIndex, SupportsInt, Union, cast

import flint
from flint import arb, fmpq, fmpz

from exactdp.core.errors import InexactInputError, InvalidParameterError, PrecisionError

__all__ = [
    "DEFAULT_DIGITS",
    "INF",
    "MAX_PREC",
    "CountInput",
    "ExactInput",
    "ExactReal",
    "arb_of_fraction",
    "decimal_string",
    "directed_float",
    "exact_floats",
    "exact_floats_enabled",
    "float_as_exact",
    "format_fraction",
    "fraction_of_arb_endpoints",
    "fraction_of_decimal_string",
    "from_float",
    "parse_delta",
    "parse_digits",
    "parse_eps",
    "parse_k",
    "parse_rational",
    "parse_real",
]

DEFAULT_DIGITS = 30
#: Precision cap (bits) of the automatic precision loop; past it a PrecisionError is raised.
MAX_PREC = 1 << 17
#: Exact +infinity (an eps that no finite value certifies).  A float, but an exact one.
INF = float("inf")  # float ok: +inf is exact

#: An exact number as a user may write it (the one input alias of the public API): an int, a
#: Fraction, a Decimal, an ExactReal, or a string ("0.1" is exactly 1/10, "1e-6", "1/3", and for an
#: eps "log(3/2)").  A gmpy2 ``mpq`` is accepted too; a ``float`` is refused at run time.
ExactInput = Union[int, Fraction, Decimal, str, "ExactReal"]
#: A positive integer (a count, a k) as a user may write it: an int or anything with ``__index__``
#: (a numpy integer), an integral string ("30"), Fraction or Decimal; a bool and a float are refused.
CountInput = SupportsIndex | str | Fraction | Decimal

_LOG_RE = re.compile(r"^\s*log\s*\(\s*(?P<arg>[^()]+?)\s*\)\s*$")
_NUM_RE = re.compile(r"^\s*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?\s*$")
_FRAC_RE = re.compile(r"^\s*[+-]?\d+\s*/\s*\d+\s*$")


class _Ratio(Protocol):
    """What gmpy2's mpq and mpz have (gmpy2 ships no types)."""

    @property
    def numerator(self) -> SupportsInt: ...

    @property
    def denominator(self) -> SupportsInt: ...


def directed_float(q: Fraction, direction: Literal["down", "up"]) -> float:
    """The float64 nearest ``q`` on one side: the largest float <= q ("down") or the smallest >= q
    ("up"); past the float range, the largest finite float or an infinity on the safe side.

    >>> directed_float(Fraction(1, 3), "down") < Fraction(1, 3) < directed_float(Fraction(1, 3), "up")
    True
    """
    try:
        f = float(q)  # float ok: corrected below to round toward the requested side
    except OverflowError:
        if direction == "up":
            return math.inf if q > 0 else -sys.float_info.max
        return -math.inf if q < 0 else sys.float_info.max
    if direction == "up" and Fraction(f) < q:
        return math.nextafter(f, math.inf)
    if direction == "down" and Fraction(f) > q:
        return math.nextafter(f, -math.inf)
    return f


def from_float(x: float) -> Fraction:
    """The exact binary value of a float, for callers who really mean it.

    >>> from_float(0.1)
    Fraction(3602879701896397, 36028797018963968)
    """
    if not isinstance(x, float) or not math.isfinite(x):
        raise InvalidParameterError(f"{x=} must be a finite float")
    return Fraction(x)


def float_as_exact(x: object) -> object:
    """``x`` itself, or for a ``float`` its exact binary value (:func:`from_float`): the reading of
    the functions named after a float library's (``Accountant.get_epsilon``, ``get_noise_multiplier``,
    docs/contracts.md §1.1), whose callers pass floats; everything else is parsed as usual after it.

    >>> float_as_exact(0.5), float_as_exact("0.1")
    (Fraction(1, 2), '0.1')
    """
    return from_float(x) if isinstance(x, float) else x


_EXACT_FLOATS: ContextVar[bool] = ContextVar("exactdp_exact_floats", default=False)


@contextmanager
def exact_floats(enabled: bool = True) -> Iterator[None]:
    """Inside the block, a finite ``float`` input is taken at its exact binary value.

    The opt-in of docs/kit.md §2 for numbers as DP libraries produce them: ``Gaussian(1.1)``
    then means sigma = ``Fraction(1.1)`` (the float's exact value, never the decimal 1.1), with
    no string conversion.  Outside it a float is refused (docs/contracts.md §1.1).  NaN and
    infinities are refused either way.

    >>> from exactdp.model.mechanisms import Gaussian
    >>> with exact_floats():
    ...     Gaussian(0.5).sigma
    Fraction(1, 2)
    """
    if not isinstance(enabled, bool):
        raise InvalidParameterError(f"enabled={enabled!r} must be True or False")
    token = _EXACT_FLOATS.set(enabled)
    try:
        yield
    finally:
        _EXACT_FLOATS.reset(token)


def exact_floats_enabled() -> bool:
    """Whether floats are read at their exact binary value here (:func:`exact_floats`)."""
    return _EXACT_FLOATS.get()


def _is_numpy(x: object) -> bool:
    return type(x).__module__.split(".")[0] == "numpy"


def _float_value(x: object) -> float | None:
    """x as a float when it is one: a Python float, or a numpy float16/32/64 scalar, whose value a
    float holds exactly (a longdouble does not: it stays refused; numpy itself is not imported)."""
    if isinstance(x, float):
        return x
    if _is_numpy(x) and type(x).__name__ in ("float16", "float32", "float64"):
        return float(x)  # type: ignore[arg-type]  # float ok: a float16/32/64's own value, held exactly
    return None


def _type_name(x: object) -> str:
    return type(x).__module__ + "." + type(x).__qualname__ if type(x).__module__ != "builtins" else type(x).__name__


def parse_rational(x: object, name: str = "value") -> Fraction:
    """An exact rational from int, Fraction, gmpy2.mpq/mpz, flint fmpq/fmpz, Decimal or a string.

    Strings may be decimals (``"0.1"``, ``"1e-6"``) or fractions (``"1/3"``).  A float is
    refused with an error that shows the fix.

    >>> parse_rational("1e-6")
    Fraction(1, 1000000)
    >>> parse_rational("1/3")
    Fraction(1, 3)
    """
    if _is_bool(x):
        raise InexactInputError(f"{name}={x!r} must be a number, not a bool")
    f = _float_value(x)
    if f is not None:
        if _EXACT_FLOATS.get():
            if not math.isfinite(f):
                raise InvalidParameterError(f"{name}={x!r} must be a finite number")
            return Fraction(f)
        # the advice shows the plain decimal (a numpy float's repr is 'np.float64(0.1)', not a number)
        shortest = str(x) if _is_numpy(x) and not isinstance(x, float) else float.__repr__(f)
        raise InexactInputError(
            f"{name}={x!r} is a float, which is not exact; pass a string such as "
            f"'{shortest}' (exactly the decimal you mean), a Fraction(...), or from_float({float.__repr__(f)}) "
            "for the float's exact binary value"
        )
    if isinstance(x, int):
        return Fraction(x)
    if isinstance(x, Fraction):
        return x
    if isinstance(x, Decimal):
        if not x.is_finite():
            raise InvalidParameterError(f"{name}={x!r} must be finite")
        return _fraction_of_decimal(x, name, x)
    if isinstance(x, (fmpq, fmpz)):
        return Fraction(int(x.p), int(x.q)) if isinstance(x, fmpq) else Fraction(int(x))
    mod = type(x).__module__
    if mod.startswith("gmpy2"):
        tname = type(x).__name__
        if tname in ("mpq", "mpz"):
            q = cast(_Ratio, x)  # a gmpy2 mpq or mpz: an exact numerator and denominator
            return Fraction(int(q.numerator), int(q.denominator))
        raise InexactInputError(f"{name}={x!r} is a {tname}, which is not exact; use gmpy2.mpq or a string")
    if isinstance(x, str):
        s = x.strip()
        if _NUM_RE.match(s):
            return _fraction_of_decimal(Decimal(s), name, x)
        if _FRAC_RE.match(s):
            num, den = (_int_of_digits(t) for t in s.split("/"))
            if den == 0:
                raise InvalidParameterError(f"{name}={x!r} has a zero denominator")
            return Fraction(num, den)
        raise InvalidParameterError(
            f"{name}={x!r} is not an exact number; write a decimal ('0.1', '1e-6') or a fraction ('1/3')"
        )
    n = _index(x)
    if n is not None:  # numpy integers and anything else implementing __index__
        return Fraction(n)
    raise InexactInputError(f"{name}={x!r} (type {_type_name(x)}) is not an exact number")


def _is_bool(x: object) -> bool:
    """A Python or numpy bool (numpy is never imported: its bool is recognised by name)."""
    t = type(x)
    return isinstance(x, bool) or (t.__module__ == "numpy" and t.__name__ in ("bool", "bool_"))


def _index(x: object) -> int | None:
    """``operator.index(x)`` for an integer-like x (numpy integer, gmpy2.mpz, ...), else None.

    A bool and a float (including numpy floats, which have no ``__index__``) are not integers.
    """
    if _is_bool(x) or isinstance(x, float) or not hasattr(type(x), "__index__"):
        return None
    try:
        return operator.index(cast(SupportsIndex, x))  # its type has __index__ (checked above)
    except Exception:  # noqa: BLE001 - a foreign __index__ may raise anything (a numpy array): not an integer
        return None


def _int_of_digits(s: str) -> int:
    """int(s) for a string of digits (with sign and spaces), without CPython's 4300-digit limit."""
    return int(Decimal(s.strip()))


#: Largest decimal exponent accepted in an input ("1e-100000" is fine, "1e-100000000" is refused:
#: its exact value has 10^8 digits).
MAX_DECIMAL_EXPONENT = 100_000


def _fraction_of_decimal(d: Decimal, name: str, x: object) -> Fraction:
    exp = d.as_tuple().exponent
    if isinstance(exp, int) and abs(exp) > MAX_DECIMAL_EXPONENT:
        raise InvalidParameterError(f"{name}={x!r} must have a decimal exponent within +-{MAX_DECIMAL_EXPONENT}")
    return Fraction(d)


@dataclass(frozen=True, order=False)
class ExactReal:
    """An exact real: ``kind == "rational"`` means ``value``; ``kind == "log"`` means ``log(value)``.

    ``log(q)`` lets an eps have a rational exponential, so compositions can be computed over Q.
    ``log(1)`` is normalised to the rational 0.

    >>> ExactReal.parse("log(3/2)").exp_exact()
    Fraction(3, 2)
    >>> str(ExactReal.parse("0.25"))
    '0.25'
    """

    kind: Literal["rational", "log"]
    value: Fraction

    def __post_init__(self) -> None:
        if not isinstance(self.kind, str) or self.kind not in ("rational", "log"):
            raise InvalidParameterError(f"kind={self.kind!r} must be 'rational' or 'log'")
        if not isinstance(self.value, Fraction):
            object.__setattr__(self, "value", parse_rational(self.value, "value"))
        if self.kind == "log":
            if self.value <= 0:
                raise InvalidParameterError(f"log argument value={self.value} must be > 0")
            if self.value == 1:
                object.__setattr__(self, "kind", "rational")
                object.__setattr__(self, "value", Fraction(0))

    @classmethod
    def rational(cls, q: ExactInput) -> ExactReal:
        return cls("rational", parse_rational(q))

    @classmethod
    def log(cls, q: ExactInput) -> ExactReal:
        return cls("log", parse_rational(q))

    @classmethod
    def parse(cls, x: object, name: str = "value") -> ExactReal:
        """Parse like :func:`parse_rational`, and also ``"log(p/q)"`` meaning log(p/q) exactly."""
        if isinstance(x, ExactReal):
            return x
        if isinstance(x, str):
            m = _LOG_RE.match(x)
            if m:
                q = parse_rational(m.group("arg"), name)
                if q <= 0:
                    raise InvalidParameterError(f"{name}={x!r}: the argument of log must be > 0")
                return cls("log", q)
            if x.strip().lower().lstrip("+-") in ("inf", "infinity", "nan"):
                raise InvalidParameterError(f"{name}={x!r} must be a finite number")
        return cls("rational", parse_rational(x, name))

    # -- exact facts -------------------------------------------------------------------------
    def is_zero(self) -> bool:
        return self.kind == "rational" and self.value == 0

    def sign(self) -> int:
        """Exact sign (log(q) is positive iff q > 1)."""
        if self.kind == "rational":
            return (self.value > 0) - (self.value < 0)
        return (self.value > 1) - (self.value < 1)

    def exp_exact(self) -> Fraction | None:
        """e**self as an exact rational when it is one (a log, or zero), else None."""
        if self.kind == "log":
            return self.value
        if self.value == 0:
            return Fraction(1)
        return None

    def rational_value(self) -> Fraction | None:
        return self.value if self.kind == "rational" else None

    # -- balls at the current Arb precision --------------------------------------------------
    def arb(self) -> flint.arb:
        """This real as an Arb ball at the current precision."""
        q = arb_of_fraction(self.value)
        return q.log() if self.kind == "log" else q

    def exp_arb(self) -> flint.arb:
        """e**self as an Arb ball at the current precision (exact when rational)."""
        q = arb_of_fraction(self.value)
        return q if self.kind == "log" else q.exp()

    def __str__(self) -> str:
        s = format_fraction(self.value)
        return f"log({s})" if self.kind == "log" else s

    def __repr__(self) -> str:
        return f"ExactReal.parse({str(self)!r})"


def parse_real(x: object, name: str = "value") -> ExactReal:
    return ExactReal.parse(x, name)


def parse_eps(x: object, name: str = "eps") -> ExactReal:
    """An eps: exact, finite and >= 0 (``"log(3/2)"`` allowed).

    >>> parse_eps("-1")
    Traceback (most recent call last):
    ...
    exactdp.core.errors.InvalidParameterError: eps='-1' must satisfy eps >= 0
    >>> parse_eps("1e1000").sign(), parse_eps("1e1001").sign()
    Traceback (most recent call last):
    ...
    exactdp.core.errors.InvalidParameterError: eps='1e1001' is above 10^1000, the largest eps exactdp takes (e^eps would need more bits than the precision cap; an eps above 50 already allows any answer with odds beyond 10^21)
    """
    r = ExactReal.parse(x, name)
    if r.sign() < 0:
        raise InvalidParameterError(f"{name}={x!r} must satisfy {name} >= 0")
    if r.kind == "rational" and r.value > MAX_EPS:
        raise InvalidParameterError(f"{name}={x!r} is above 10^1000, the largest eps exactdp takes (e^eps would need "
                                    "more bits than the precision cap; an eps above 50 already allows any answer "
                                    "with odds beyond 10^21)")
    return r


#: the largest eps taken (docs/contracts.md §1.1): e^eps for a larger one is past the precision cap
MAX_EPS = 10**1000


def parse_delta(x: object, name: str = "delta") -> Fraction:
    """A delta: exact with ``0 <= delta < 1``."""
    if isinstance(x, str) and x.strip().lower().lstrip("+-") in ("inf", "infinity", "nan"):
        raise InvalidParameterError(f"{name}={x!r} must be a finite number with 0 <= {name} < 1")
    d = parse_rational(x, name)
    if not (0 <= d < 1):
        raise InvalidParameterError(f"{name}={_show(x)} must satisfy 0 <= {name} < 1")
    return d


def parse_k(x: object, name: str = "k") -> int:
    """A positive integer: an int, a numpy integer or anything with ``__index__``, an integral
    string, Fraction or Decimal.  A bool (Python or numpy) and a float are refused.

    >>> parse_k("30"), parse_k(Fraction(30))
    (30, 30)
    >>> parse_k(1.0)
    Traceback (most recent call last):
    ...
    exactdp.core.errors.InvalidParameterError: k=1.0 must be a positive integer
    """
    if _is_bool(x):
        raise InvalidParameterError(f"{name}={x!r} must be a positive integer, not a bool")
    if isinstance(x, int):
        v = x
    elif isinstance(x, str) and re.fullmatch(r"\s*\+?\d+\s*", x):
        v = _int_of_digits(x)
    elif (n := _index(x)) is not None:
        v = n
    else:
        try:
            q = parse_rational(x, name)
        except (InexactInputError, InvalidParameterError):
            raise InvalidParameterError(f"{name}={x!r} must be a positive integer") from None
        if q.denominator != 1:
            raise InvalidParameterError(f"{name}={x!r} must be a positive integer")
        v = int(q)
    if v < 1:
        raise InvalidParameterError(f"{name}={x!r} must be a positive integer")
    return v


def parse_digits(x: object, name: str = "digits") -> int:
    """A positive integer number of significant digits (at most 10000)."""
    d = parse_k(x, name)
    if d > 10000:
        raise InvalidParameterError(f"{name}={x!r} must be at most 10000")
    return d


def _show(x: object) -> str:
    return repr(x) if not isinstance(x, Fraction) else f"Fraction({x.numerator}, {x.denominator})"


# -- Arb <-> exact ---------------------------------------------------------------------------

def arb_of_fraction(q: Fraction) -> arb:
    """An Arb ball of ``q`` at the current precision (exact when q is dyadic and fits)."""
    if q.denominator == 1:
        return arb(fmpz(q.numerator))
    return arb(fmpq(q.numerator, q.denominator))


def _fraction_of_man_exp(man: fmpz, exp: fmpz) -> Fraction:
    m, e = int(man), int(exp)
    return Fraction(m * (1 << e)) if e >= 0 else Fraction(m, 1 << -e)


#: the binary exponents an Arb ball's parts are written out at exactly (2^-(2^24): a 2 MB integer); a radius
#: below that (2^-(10^400) and the like) is widened outward, to 2^-REL_BITS of the midpoint's size
ABS_BITS = 1 << 24
REL_BITS = 1 << 20


def fraction_of_arb_endpoints(x: arb) -> tuple[Fraction, Fraction]:
    """Exact rational endpoints [mid - rad, mid + rad] of a finite Arb ball; a radius too small to
    write out (below 2^-ABS_BITS) is widened outward to 2^-REL_BITS times the midpoint's size, and a
    midpoint beyond 2^+-ABS_BITS is refused as a :class:`PrecisionError`.

    >>> lo, hi = fraction_of_arb_endpoints(arb(1, arb(2) ** -(1 << 26)))   # 1 +- 2^-(2^26): widened
    >>> lo < 1 < hi and hi - lo == Fraction(4, 1 << REL_BITS)   # 1 +- 2^(1 - REL_BITS)
    True
    """
    if not x.is_finite():
        raise PrecisionError(f"{x=} is not a finite ball")
    (mm, me), (rm, re) = x.mid().man_exp(), x.rad().man_exp()
    m, e, r, f = int(mm), int(me), int(rm), int(re)
    if m != 0 and not -ABS_BITS <= e <= ABS_BITS:
        raise PrecisionError(f"a value near 2^{e + m.bit_length()} is too far from 1 to write out exactly")
    mid = _fraction_of_man_exp(mm, me)
    top = e + m.bit_length() if m != 0 else -ABS_BITS  # |mid| < 2^top
    k = top - REL_BITS
    if r != 0 and f < -ABS_BITS and k >= f + r.bit_length():  # 2^k > rad: a larger radius, outward
        rad = Fraction(1, 1 << -k) if k < 0 else Fraction(1 << k)
    else:
        rad = _fraction_of_man_exp(rm, re)
    return mid - rad, mid + rad


# -- decimal strings, rounded outward ---------------------------------------------------------

def decimal_string(q: Fraction, digits: int, direction: Literal["down", "up", "exact"]) -> str:
    """``q`` with ``digits`` significant digits, rounded toward -inf ("down") or +inf ("up").

    With "exact", q must be a finite decimal and is written out in full.

    >>> decimal_string(Fraction(2, 3), 5, "down"), decimal_string(Fraction(2, 3), 5, "up")
    ('0.66666', '0.66667')
    >>> decimal_string(Fraction(-2, 3), 3, "down")
    '-0.667'
    """
    if q == 0:
        return "0"
    if direction == "exact":
        s = format_fraction(q)
        if "/" in s:
            raise ValueError(f"{q=} is not a finite decimal")
        return s
    neg = q < 0
    a = -q if neg else q
    e = _floor_log10(a)
    scale = digits - 1 - e  # a * 10^scale has `digits` integer digits
    num, den = (a.numerator * _pow10(scale), a.denominator) if scale >= 0 else (a.numerator, a.denominator * _pow10(-scale))
    round_up = (direction == "up") != neg  # magnitude rounded up?
    m = -((-num) // den) if round_up else num // den
    if len(_istr(m)) > digits:  # 9.99 rounded up to 10.0: drop one digit (exact, it ends in 0)
        m //= 10
        scale -= 1
    if abs(e) >= EXPONENT_FROM:  # 1.2e-1950000, not two million zeros (docs/contracts.md §4)
        return ("-" if neg else "") + _place_point(m, len(_istr(m)) - 1) + f"e{len(_istr(m)) - 1 - scale:+d}"
    return ("-" if neg else "") + _place_point(m, scale)


def fraction_of_decimal_string(s: str) -> Fraction:
    """The exact rational a decimal string states (``"-0.25"``, ``"1.5e-1950000"``), with GMP's
    powers of 10 (``Fraction(Decimal(s))`` takes seconds on an exponent in the millions).

    >>> fraction_of_decimal_string("-1.25e-3"), fraction_of_decimal_string("12.5")
    (Fraction(-1, 800), Fraction(25, 2))
    """
    sign, digits, exp = Decimal(s).as_tuple()
    if not isinstance(exp, int):
        raise InvalidParameterError(f"value={s!r} is not a finite decimal")
    m = int(fmpz("".join(map(str, digits)) or "0")) * (-1 if sign else 1)  # fmpz: no 4300-digit limit
    return Fraction(m * _pow10(exp)) if exp >= 0 else Fraction(m, _pow10(-exp))


#: magnitudes from 10^EXPONENT_FROM up, or 10^-EXPONENT_FROM down, are written with an exponent
EXPONENT_FROM = 1000


def _pow10(n: int) -> int:
    """10**n for n >= 0 (GMP's power: fast for the millions of digits of a deep tail)."""
    return int(fmpz(10) ** n)


def _istr(n: int) -> str:
    """str(n) without CPython's 4300-digit limit on int -> str conversion."""
    return str(fmpz(n))


#: log10(2) to 64 bits, below it: 0.30102999566398119521... (the estimate is then off by at most 2)
_LOG10_2_Q64 = 5553023288523357132


def _below_pow10(a: Fraction, e: int) -> bool:
    """Whether a < 10^e, exactly, with integers."""
    if e >= 0:
        return a.numerator < a.denominator * _pow10(e)
    return a.numerator * _pow10(-e) < a.denominator


def _floor_log10(a: Fraction) -> int:
    """floor(log10(a)) for a > 0, exactly: estimated from bit lengths (off by at most 2), then
    corrected by exact integer comparisons.

    >>> _floor_log10(Fraction(999)), _floor_log10(Fraction(1000)), _floor_log10(Fraction(1, 1001))
    (2, 3, -4)
    """
    e = ((a.numerator.bit_length() - a.denominator.bit_length()) * _LOG10_2_Q64) >> 64
    while not _below_pow10(a, e + 1):
        e += 1
    while _below_pow10(a, e):
        e -= 1
    return e


def _place_point(m: int, scale: int) -> str:
    s = _istr(m)
    if scale <= 0:
        return s + "0" * (-scale)
    if len(s) > scale:
        out = s[:-scale] + "." + s[-scale:]
    else:
        out = "0." + "0" * (scale - len(s)) + s
    return out.rstrip("0").rstrip(".") if "." in out else out


def format_fraction(q: Fraction) -> str:
    """The canonical exact string of a rational (docs/contracts.md §4).

    A terminating decimal (optional ``-``, digits, optional ``.`` and digits, no exponent, no
    trailing zeros) when the denominator is ``2^a 5^b``, otherwise ``p/q`` in lowest terms with
    q > 1.  Both forms are read back exactly by ``fractions.Fraction``.

    >>> format_fraction(Fraction(1, 1000)), format_fraction(Fraction(1, 3)), format_fraction(Fraction(-5, 2))
    ('0.001', '1/3', '-2.5')
    """
    d = q.denominator
    twos = (d & -d).bit_length() - 1
    d >>= twos
    fives = 0
    while d % 5 == 0:
        d //= 5
        fives += 1
    if d != 1:
        return f"{_istr(q.numerator)}/{_istr(q.denominator)}"
    scale = max(twos, fives)
    m = q * 10**scale
    return _place_point(int(m), scale) if m >= 0 else "-" + _place_point(int(-m), scale)
