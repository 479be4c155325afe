"""exactdp.core.numbers: exact parsing, enclosures, outward rounding, the precision loop.

Oracles: Python's exact ``fractions.Fraction`` arithmetic and ``decimal`` text, never the module itself.
"""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

import gmpy2
import pytest
from flint import arb, fmpq, fmpz
from hypothesis import given, settings
from hypothesis import strategies as st

from exactdp.core.errors import InexactInputError, InvalidParameterError, PrecisionError
from exactdp.core.numbers import (ExactReal, decimal_string, format_fraction, fraction_of_arb_endpoints,
    from_float, parse_delta, parse_digits, parse_eps, parse_k, parse_rational)
from exactdp.core.enclosure import Enclosure, certify

# -- parsing -------------------------------------------------------------------------------------

@pytest.mark.parametrize(
    "x, expected",
    [
        (3, Fraction(3)),
        (-7, Fraction(-7)),
        (Fraction(1, 3), Fraction(1, 3)),
        (gmpy2.mpq(1, 3), Fraction(1, 3)),
        (gmpy2.mpz(5), Fraction(5)),
        (fmpq(2, 7), Fraction(2, 7)),
        (fmpz(9), Fraction(9)),
        (Decimal("0.1"), Fraction(1, 10)),
        (Decimal("1E-6"), Fraction(1, 10**6)),
        ("0.1", Fraction(1, 10)),
        ("1e-6", Fraction(1, 10**6)),
        ("2.5E+3", Fraction(2500)),
        (".5", Fraction(1, 2)),
        ("+2", Fraction(2)),
        ("1/3", Fraction(1, 3)),
        (" 1 / 3 ", Fraction(1, 3)),
        ("-1/3", Fraction(-1, 3)),
        ("0.30000000000000000000000000000000000001", Fraction(30000000000000000000000000000000000001, 10**38)),
    ],
)
def test_parse_rational_exact(x: object, expected: Fraction) -> None:
    got = parse_rational(x, "x")
    assert type(got) is Fraction and got == expected


@pytest.mark.parametrize("x", ["abc", "", "1/0", "0x10", "1_000", "inf", "nan", "1/-3", "1,5", "--1"])
def test_parse_rational_rejects_non_numbers(x: str) -> None:
    with pytest.raises(InvalidParameterError, match="x="):
        parse_rational(x, "x")


@pytest.mark.parametrize("x", [Decimal("NaN"), Decimal("Infinity"), Decimal("-Infinity")])
def test_parse_rational_rejects_nonfinite_decimal(x: Decimal) -> None:
    with pytest.raises(InvalidParameterError):
        parse_rational(x, "x")


@pytest.mark.parametrize("x", [0.1, 1.0, float("nan"), float("inf")])
def test_float_refused_with_the_fix(x: float) -> None:
    with pytest.raises(InexactInputError) as info:
        parse_rational(x, "eps")
    msg = str(info.value)
    assert "eps=" in msg and "float" in msg
    assert "Fraction" in msg and "from_float" in msg and f"'{x!r}'" in msg


@pytest.mark.parametrize("x", [True, False, None, object(), gmpy2.mpfr("0.5"), [1], b"1"])
def test_non_numbers_refused(x: object) -> None:
    with pytest.raises((InexactInputError, InvalidParameterError)):
        parse_rational(x, "x")


def test_inexact_error_is_typeerror_and_invalid_is_valueerror() -> None:
    with pytest.raises(TypeError):
        parse_rational(0.5)
    with pytest.raises(ValueError):
        parse_delta("2")


@given(st.floats(allow_nan=False, allow_infinity=False))
@settings(max_examples=200, deadline=None)
def test_from_float_is_exact(x: float) -> None:
    q = from_float(x)
    assert q == Fraction(*x.as_integer_ratio())
    m, e = math.frexp(x)
    assert q == Fraction(int(m * 2**53)) * Fraction(2) ** (e - 53)


@pytest.mark.parametrize("x", [float("nan"), float("inf"), 1, "0.1"])
def test_from_float_refuses_non_finite_and_non_floats(x: object) -> None:
    with pytest.raises(InvalidParameterError):
        from_float(x)  # type: ignore[arg-type]


def test_from_float_value() -> None:
    assert from_float(0.1) == Fraction(3602879701896397, 36028797018963968)


@pytest.mark.parametrize(
    "x, kind, value",
    [
        ("log(3/2)", "log", Fraction(3, 2)),
        ("log( 2 )", "log", Fraction(2)),
        ("log(1e3)", "log", Fraction(1000)),
        ("log(1)", "rational", Fraction(0)),
        ("0.25", "rational", Fraction(1, 4)),
        ("-0", "rational", Fraction(0)),
        (Fraction(1, 7), "rational", Fraction(1, 7)),
    ],
)
def test_parse_eps(x: object, kind: str, value: Fraction) -> None:
    r = parse_eps(x)
    assert (r.kind, r.value) == (kind, value)


@pytest.mark.parametrize("x", ["-1", "-1e-30", "log(1/2)", "log(0)", "log(-1)", "inf", "nan", "-inf",
                               "log(2", "abc", Fraction(-1, 3)])
def test_parse_eps_rejects(x: object) -> None:
    with pytest.raises(InvalidParameterError, match="eps"):
        parse_eps(x)


def test_parse_eps_float_refused() -> None:
    with pytest.raises(InexactInputError):
        parse_eps(0.1)


def test_exact_real_facts() -> None:
    r = ExactReal.parse("log(3/2)")
    assert r.exp_exact() == Fraction(3, 2) and r.sign() == 1 and not r.is_zero()
    assert ExactReal.parse("0").exp_exact() == 1 and ExactReal.parse("0").is_zero()
    assert ExactReal.parse("0.5").exp_exact() is None
    assert str(r) == "log(1.5)" and ExactReal.parse(str(r)) == r
    # the balls really enclose log(3/2) and e^(1/2) (mpmath at 60 digits as the oracle)
    import mpmath

    with mpmath.workdps(60):
        for ball, v in ((r.arb(), mpmath.log(mpmath.mpf(3) / 2)),
                        (ExactReal.parse("0.5").exp_arb(), mpmath.exp(mpmath.mpf(1) / 2))):
            lo, hi = fraction_of_arb_endpoints(ball)
            assert mpmath.mpf(lo.numerator) / lo.denominator <= v <= mpmath.mpf(hi.numerator) / hi.denominator


@pytest.mark.parametrize("x, expected", [("0", 0), ("1e-3", Fraction(1, 1000)), ("0.999", Fraction(999, 1000)),
                                         (Fraction(1, 2), Fraction(1, 2)), ("-0", 0)])
def test_parse_delta_ok(x: object, expected: Fraction) -> None:
    assert parse_delta(x) == expected


@pytest.mark.parametrize("x", ["1", "1.0", "-1e-9", Fraction(3, 2), "nan", "inf", "-inf", "abc", 2])
def test_parse_delta_rejects(x: object) -> None:
    with pytest.raises(InvalidParameterError, match="delta"):
        parse_delta(x)


def test_parse_delta_message_shows_constraint() -> None:
    with pytest.raises(InvalidParameterError, match=r"delta=Fraction\(3, 2\) must satisfy 0 <= delta < 1"):
        parse_delta(Fraction(3, 2))


@pytest.mark.parametrize("x, expected", [(1, 1), ("10", 10), (" 7 ", 7), (Fraction(4, 2), 2), (10**15, 10**15),
                                         (Decimal("3"), 3)])
def test_parse_k_ok(x: object, expected: int) -> None:
    assert parse_k(x) == expected


@pytest.mark.parametrize("x", [0, -1, 1.5, "1.5", True, False, "abc", "-0", Fraction(1, 2), None, ""])
def test_parse_k_rejects(x: object) -> None:
    with pytest.raises(InvalidParameterError, match="k="):
        parse_k(x)


class _Index:
    """An integer-like object that is neither an int nor a numpy type: it has only __index__."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __index__(self) -> int:
        return self.n


def test_parse_k_takes_numpy_integers_and_index_objects() -> None:
    np = pytest.importorskip("numpy")
    for t in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint64):
        assert parse_k(t(30)) == 30 and type(parse_k(t(30))) is int
    assert parse_k(np.array(7)) == 7  # a 0-d integer array has __index__
    assert parse_k(_Index(12)) == 12 and parse_k(gmpy2.mpz(3)) == 3 and parse_k(fmpz(4)) == 4
    assert parse_rational(np.int64(-3)) == -3 and parse_rational(_Index(5)) == 5


def test_parse_k_refuses_numpy_bools_floats_and_arrays() -> None:
    np = pytest.importorskip("numpy")
    for x in (np.True_, np.False_, np.float64(3.0), np.float32(3.0), np.array([1, 2]), np.int64(0), _Index(-1)):
        with pytest.raises(InvalidParameterError, match="k="):
            parse_k(x)
    with pytest.raises(InvalidParameterError, match="not a bool"):
        parse_k(np.True_)
    with pytest.raises(InexactInputError, match="bool"):
        parse_rational(np.bool_(True))


def test_integers_beyond_the_int_string_limit() -> None:
    # CPython refuses int() of strings over 4300 digits with a bare ValueError
    big = "1" * 5000
    assert parse_k(big) == int(Decimal(big))
    assert parse_rational(big + "/3") == Fraction(int(Decimal(big)), 3)


@pytest.mark.parametrize("x", [0, -3, "x", 10001, "2.5"])
def test_parse_digits_rejects(x: object) -> None:
    with pytest.raises(InvalidParameterError, match="digits="):
        parse_digits(x)


# -- decimal strings, rounded outward ------------------------------------------------------------

def _dec(s: str) -> Fraction:
    return Fraction(Decimal(s))


fractions_st = st.fractions(min_value=Fraction(-10**12), max_value=Fraction(10**12), max_denominator=10**15).filter(
    lambda q: q != 0)


@given(fractions_st, st.integers(min_value=1, max_value=40))
@settings(max_examples=300, deadline=None)
def test_decimal_string_directed(q: Fraction, digits: int) -> None:
    down, up = decimal_string(q, digits, "down"), decimal_string(q, digits, "up")
    lo, hi = _dec(down), _dec(up)
    assert lo <= q <= hi
    # at most `digits` significant digits, and one unit in the last place apart at most
    for s in (down, up):
        assert len(s.lstrip("-").replace(".", "").strip("0")) <= digits
    if lo != q:
        assert hi - lo <= abs(q) * Fraction(2, 10 ** (digits - 1))


def test_decimal_string_examples() -> None:
    assert decimal_string(Fraction(2, 3), 5, "down") == "0.66666"
    assert decimal_string(Fraction(2, 3), 5, "up") == "0.66667"
    assert decimal_string(Fraction(-2, 3), 3, "down") == "-0.667"
    assert decimal_string(Fraction(-2, 3), 3, "up") == "-0.666"
    assert decimal_string(Fraction(999999, 10**6), 3, "up") == "1"
    assert decimal_string(Fraction(1, 3 * 10**20), 3, "down") == "0.00000000000000000000333"
    assert decimal_string(Fraction(10**30), 3, "down") == "1" + "0" * 30
    assert decimal_string(Fraction(0), 3, "up") == "0"


def test_format_fraction() -> None:
    assert format_fraction(Fraction(1, 1000)) == "0.001"
    assert format_fraction(Fraction(1, 3)) == "1/3"
    assert format_fraction(Fraction(-5, 4)) == "-1.25"
    assert format_fraction(Fraction(7)) == "7"
    for q in (Fraction(1, 1000), Fraction(-5, 4), Fraction(1, 3), Fraction(123456789, 2**20)):
        assert parse_rational(format_fraction(q)) == q


# -- enclosures ----------------------------------------------------------------------------------

def test_enclosure_exact_value() -> None:
    e = Enclosure.exact_value(Fraction(1, 3))
    assert e.lower == e.upper == e.exact == Fraction(1, 3) and e.is_exact
    js = e.to_json()
    assert js["exact"] == "1/3"
    assert _dec(js["lower"]) <= Fraction(1, 3) <= _dec(js["upper"])
    assert Enclosure.exact_value(Fraction(1, 8)).to_json()["lower"] == "0.125"


def test_enclosure_infinite() -> None:
    e = Enclosure.infinite()
    assert e.is_infinite and e.float_upper() == math.inf and str(e) == "inf"
    assert e.to_json()["lower"] == "inf" and e.to_json()["upper"] == "inf"


def test_enclosure_validates() -> None:
    with pytest.raises(InvalidParameterError):
        Enclosure(Fraction(2), Fraction(1))
    with pytest.raises(InvalidParameterError):
        Enclosure(Fraction(1), Fraction(2), exact=Fraction(1))


@pytest.mark.parametrize("kw", [dict(lower=None), dict(upper="abc"), dict(lower=0.5), dict(upper=float("nan")),
                                dict(digits=0), dict(digits="abc"), dict(digits=True), dict(exact=object()),
                                dict(exact_log=Fraction(-1)), dict(algorithm=3), dict(lower=[])])
def test_enclosure_refuses_junk_with_typed_errors(kw: dict) -> None:
    args = dict(lower=Fraction(1), upper=Fraction(2))
    args.update(kw)
    with pytest.raises((InvalidParameterError, InexactInputError)):
        Enclosure(**args)


def test_enclosure_ends_may_be_ints_or_infinite() -> None:
    e = Enclosure(1, 2)
    assert isinstance(e.lower, Fraction) and e.contains("1.5")
    assert Enclosure(Fraction(0), math.inf).upper == math.inf
    for bad in (None, "abc", object(), 0.5):
        with pytest.raises((InvalidParameterError, InexactInputError)):
            Enclosure.exact_value(bad)
        with pytest.raises((InvalidParameterError, InexactInputError)):
            Enclosure.log_of(bad)
    with pytest.raises(InvalidParameterError, match="q=-1 must be > 0"):
        Enclosure.log_of(-1)


def test_enclosure_log_of() -> None:
    import mpmath

    e = Enclosure.log_of(Fraction(3, 2), 25)
    assert e.exact_log == Fraction(3, 2) and e.exact is None
    with mpmath.workdps(60):
        v = mpmath.log(mpmath.mpf(3) / 2)
        lo = mpmath.mpf(e.lower.numerator) / e.lower.denominator
        hi = mpmath.mpf(e.upper.numerator) / e.upper.denominator
        assert lo <= v <= hi and (hi - lo) / v <= mpmath.mpf("1e-25")
    assert Enclosure.log_of(Fraction(1)).exact == 0


@given(st.fractions(min_value=Fraction(-10**300), max_value=Fraction(10**300), max_denominator=10**30),
       st.fractions(min_value=0, max_value=1, max_denominator=10**30))
@settings(max_examples=300, deadline=None)
def test_float_bounds_are_directed(lo: Fraction, w: Fraction) -> None:
    e = Enclosure(lo, lo + w)
    fl, fu = e.float_lower(), e.float_upper()
    assert Fraction(fl) <= e.lower and Fraction(fu) >= e.upper
    # and they are the nearest such floats
    assert Fraction(math.nextafter(fl, math.inf)) > e.lower
    assert Fraction(math.nextafter(fu, -math.inf)) < e.upper


def test_float_bounds_beyond_float_range() -> None:
    e = Enclosure(Fraction(10**400), Fraction(10**400 + 1))
    assert e.float_upper() == math.inf and e.float_lower() == 1.7976931348623157e308


def test_contains() -> None:
    e = Enclosure(Fraction(1, 10), Fraction(2, 10))
    assert e.contains("0.1") and e.contains("1/5") and not e.contains("0.2000000001")
    with pytest.raises(InexactInputError):
        e.contains(0.15)


# -- the precision loop --------------------------------------------------------------------------

def test_certify_encloses_sqrt2() -> None:
    e = certify(lambda: arb(2).sqrt(), 40)
    assert e.lower > 0 and e.lower**2 <= 2 <= e.upper**2
    assert (e.upper - e.lower) / e.lower <= Fraction(1, 10**42)
    assert e.lower_str().startswith("1.414213562373095048801688724209698078569")


def test_certify_raises_at_tiny_cap() -> None:
    with pytest.raises(PrecisionError):
        certify(lambda: arb(2).sqrt(), 50, max_prec=64)


def test_certify_refuses_zero() -> None:
    with pytest.raises(PrecisionError):
        certify(lambda: arb(0), 10, max_prec=512)
    with pytest.raises(PrecisionError):
        certify(lambda: arb(1) - arb(3).sqrt() ** 2 + 2, 10, max_prec=512)


def test_strings_of_very_small_and_very_long_values() -> None:
    e = Enclosure(Fraction(1, 10**5000), Fraction(2, 10**5000))
    lo, hi = e.lower_str(), e.upper_str()
    assert _dec(lo) <= e.lower and _dec(hi) >= e.upper
    assert format_fraction(Fraction(1, 3**10000)).startswith("1/")


def test_a_numpy_float_gets_the_same_advice_as_a_python_float() -> None:
    # issue 25 §4: the advice showed the string 'np.float64(1.0)', which is no number
    np = pytest.importorskip("numpy")
    for x, shown in ((np.float64(1.0), "'1.0'"), (np.float32(0.1), "'0.1'"), (0.1, "'0.1'")):
        with pytest.raises(InexactInputError) as e:
            parse_eps(x)
        assert f"pass a string such as {shown}" in str(e.value) and "np." not in str(e.value).split("such as")[1]
    from exactdp.core.numbers import exact_floats

    with exact_floats():  # the float's exact binary value, float32 included
        assert parse_eps(np.float32(0.1)).value == Fraction(np.float32(0.1).item())
    with pytest.raises(InexactInputError):  # a longdouble is not a float's value: refused, never rounded
        parse_eps(np.longdouble("0.1"))


# -- an enclosure where a number is asked for; honest "digits" (issue 25 §3, §4) -------------------

def _nearest_float_is(f: float, q: Fraction) -> bool:
    """Whether f is a float64 nearest q (checked against both neighbours, exactly)."""
    here = abs(Fraction(f) - q)
    return all(abs(Fraction(g) - q) >= here for g in (math.nextafter(f, -math.inf), math.nextafter(f, math.inf)))


@given(st.fractions(min_value=Fraction(-10**30), max_value=Fraction(10**30), max_denominator=10**40),
       st.fractions(min_value=0, max_value=10**10, max_denominator=10**40))
@settings(max_examples=300, deadline=None)
def test_float_format_round_are_the_float_nearest_the_midpoint(lo: Fraction, w: Fraction) -> None:
    e = Enclosure(lo, lo + w, 10)
    f = float(e)
    assert _nearest_float_is(f, lo + w / 2)
    assert e.float_lower() <= f <= e.float_upper()  # the midpoint lies inside, so its nearest float does too
    assert format(e, ".3e") == format(f, ".3e") and f"{e:.6f}" == f"{f:.6f}" and format(e, "") == str(e)
    assert round(e, 3) == round(f, 3) and isinstance(round(e, 3), float)
    assert round(e) == round(f) and isinstance(round(e), int)


def test_float_of_exact_and_infinite_values() -> None:
    assert float(Enclosure.exact_value(Fraction(1, 3))) == 1 / 3  # the correctly rounded value
    assert float(Enclosure.exact_value(Fraction(1, 10))) == 0.1
    assert float(Enclosure.infinite()) == math.inf and float(Enclosure(Fraction(1), math.inf)) == math.inf
    assert float(Enclosure(Fraction(10**400), Fraction(10**400 + 1))) == math.inf  # beyond float64: overflows
    assert float(Enclosure.exact_value(Fraction(1, 10**400))) == 0.0
    e = Enclosure.log_of(Fraction(3, 2), 25)
    assert f"{e:.10f}" == "0.4054651081" and round(e, 4) == 0.4055  # log(1.5) = 0.40546510810816...


def test_repr_is_short_and_readable() -> None:
    e = Enclosure(Fraction(84630263447, 10**11), Fraction(84630263448, 10**11), 10, algorithm="kov15")
    assert repr(e) == "Enclosure([0.84630263447, 0.84630263448], digits=10, algorithm='kov15')"
    assert repr(Enclosure.exact_value(Fraction(1, 3))) == "Enclosure(exact=1/3)"
    assert repr(Enclosure.infinite()) == "Enclosure(exact=inf)"
    huge = Enclosure.exact_value(Fraction(1, 3**5000), algorithm="kov15-exact")
    r = repr(huge)
    assert len(r) < 120 and "characters" in r and r.endswith("algorithm='kov15-exact')")
    wide = Enclosure.log_of(Fraction(3, 2), 1000)  # 1000 digits requested: the repr prints 17-18 of each end
    lo_s, hi_s = repr(wide).split("[")[1].split("]")[0].split(", ")
    assert len(r) < 120 and _dec(lo_s) <= wide.lower and _dec(hi_s) >= wide.upper  # still outward
    assert "digits=1000" in repr(wide)


def test_repr_html_escapes_and_says_what_is_certified() -> None:
    e = Enclosure(Fraction(1), Fraction(101, 100), 5, algorithm="<b>&")
    h = e._repr_html_()
    assert h.startswith("<span") and h.endswith("</span>") and "<b>" not in h and "&lt;b&gt;&amp;" in h
    assert "[1, 1.01]" in h and "2 of 5 significant digits certified" in h
    assert "(exact)" in Enclosure.exact_value(Fraction(1, 3))._repr_html_()


def _honest_digits(lo_s: str, hi_s: str, exact: str | None, requested: int) -> int:
    """The reference: the digits the printed strings certify, by the definition, with Fraction."""
    if exact is not None or lo_s == hi_s:
        return requested
    if "inf" in lo_s or "inf" in hi_s:
        return 0
    lo, hi = Fraction(Decimal(lo_s)), Fraction(Decimal(hi_s))
    if lo <= 0 <= hi:
        return 0
    n = 0
    while n < requested and (hi - lo) * 10 ** (n + 1) <= min(abs(lo), abs(hi)):
        n += 1
    return n


@given(st.fractions(min_value=Fraction(-10**6), max_value=Fraction(10**6), max_denominator=10**20),
       st.fractions(min_value=0, max_value=10, max_denominator=10**20), st.integers(1, 40), st.integers(1, 40))
@settings(max_examples=400, deadline=None)
def test_json_digits_never_overstate_the_printed_bracket(lo: Fraction, w: Fraction, d: int, asked: int) -> None:
    e = Enclosure(lo, lo + w, d)
    js = e.to_json(requested=asked)
    want = _honest_digits(js["lower"], js["upper"], js["exact"], asked)
    assert js["digits"] == want == e.certified_digits(asked)
    assert (js.get("digits_requested") == asked) == (want < asked)
    assert e.to_json()["digits"] == _honest_digits(js["lower"], js["upper"], js["exact"], d)


def test_digits_of_the_issue_examples() -> None:
    # [0, 5.1e-57]: touches 0, nothing certified; a relative width of 0.28: not even one digit
    for lo, hi in ((Fraction(0), Fraction(51, 10**58)), (Fraction("0.003896727"), Fraction("0.00499001")),
                   (Fraction(-1, 10**9), Fraction(1, 10**9)), (Fraction(1), math.inf)):
        js = Enclosure(lo, hi, 1).to_json(requested=30)
        assert js["digits"] == 0 and js["digits_requested"] == 30, js
    js = Enclosure(Fraction(1), Fraction(1001, 1000), 3).to_json(requested=30)  # width exactly 10^-3
    assert js["digits"] == 3 and js["digits_requested"] == 30
    js = Enclosure.infinite(30).to_json(requested=30)
    assert js["digits"] == 30 and "digits_requested" not in js
    js = Enclosure(Fraction(101), Fraction(101), 1).to_json(requested=5)  # one point: printed exactly
    assert js["lower"] == js["upper"] == "101" and js["digits"] == 5


@pytest.mark.parametrize("q", [Fraction(123456789123456789, 10**18), Fraction(1, 2**200), Fraction(-7, 2**70),
                               Fraction(10**50 + 1, 10**3), Fraction(259066368, 10**9)])
def test_an_exact_terminating_value_is_printed_exactly_at_both_ends(q: Fraction) -> None:
    # issue 25 §3: lower/upper were rounded away from an exact value longer than `digits`
    for d in (1, 3, 30):
        js = Enclosure.exact_value(q, d).to_json()
        assert js["exact"] == format_fraction(q) and "/" not in js["exact"]
        assert _dec(js["lower"]) == _dec(js["upper"]) == q and js["lower"] == js["exact"], (q, d, js)
        assert js["digits"] == d and "digits_requested" not in js


@pytest.mark.parametrize("q", [Fraction(1, 3), Fraction(-22, 7), Fraction(10**40, 3), Fraction(1, 3**700)])
def test_an_exact_non_terminating_value_is_bracketed_tightly(q: Fraction) -> None:
    for d in (1, 5, 30):
        js = Enclosure.exact_value(q, d).to_json()
        lo, hi = _dec(js["lower"]), _dec(js["upper"])
        assert lo < q < hi and (hi - lo) <= Fraction(1, 10**d) * min(abs(lo), abs(hi))
        assert js["exact"] == format_fraction(q) and js["digits"] == d


def test_exact_log_values_keep_their_certified_ends() -> None:
    e = Enclosure.log_of(Fraction(9, 4), 12)
    js = e.to_json()
    assert js["exact_log"] == "log(2.25)" and js["exact"] is None and js["digits"] == 12
    assert _dec(js["lower"]) <= e.lower and _dec(js["upper"]) >= e.upper
    assert js["lower"] == e.lower_str() and js["upper"] == e.upper_str()
