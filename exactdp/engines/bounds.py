"""The closed-form composition bounds of docs/mathematics.md §4, each as a certified enclosure.

Every method has two directions, in the terms of :mod:`exactdp.api.methods`:

* ``<name>_delta(comp, eps_g, *, digits)`` -- the smallest **total** delta the bound certifies at
  ``eps_g``.  Every mechanism is (eps, 1)-DP, so the answer is capped at 1, and **1 means
  nothing certified** (no parameter value of the bound reaches ``eps_g``).
* ``<name>_epsilon(comp, delta_g, *, digits)`` -- the eps the bound certifies at total
  ``delta_g``; ``Enclosure.infinite()`` when the bound certifies none (e.g. the delta budget left
  after the bookkeeping, ``delta' = delta_g - sum delta_i``, is <= 0).

Each function evaluates its formula exactly as published (no minimum with another bound beyond
the minimum the formula itself contains).  Rational answers are exact; everything else is an Arb
ball turned into exact rational endpoints at rising precision.  Comparisons that decide a branch
(``sum eps_i <= eps_g``, ``delta~ <= 0``) are made exactly: a number ``r + sum c_j log q_j`` is
zero only if ``r == 0`` and ``prod q_j^c_j == 1`` (Lindemann: ``e^r`` is transcendental for a
rational ``r != 0``), which is checked in integers.  Elsewhere the formulas are continuous, and
``max(0, .)`` / ``min(1, .)`` are applied to balls, so an input exactly at a threshold is handled
without deciding it.

Every method accepts every composition; k equal mechanisms are one group with a count, so
``k = 10**15`` costs nothing (the mechanisms are never expanded).
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

from flint import arb, ctx, fmpz

from exactdp.core.enclosure import Enclosure
from exactdp.core.errors import PrecisionError
from exactdp.core.numbers import MAX_PREC, ExactReal, arb_of_fraction, fraction_of_arb_endpoints
from exactdp.model.composition import Composition

__all__ = [
    "basic_delta",
    "basic_epsilon",
    "drv10_delta",
    "drv10_epsilon",
    "kov15_34_2013_delta",
    "kov15_34_2013_epsilon",
    "kov15_34_delta",
    "kov15_34_epsilon",
    "kov15_35_delta",
    "kov15_35_epsilon",
    "steinke_delta",
    "steinke_epsilon",
    "zcdp_delta",
    "zcdp_epsilon",
    "zcdp_tight_delta",
    "zcdp_tight_epsilon",
]

# (eps, delta, count) triples: a composition's groups, never expanded
_Groups = list[tuple[ExactReal, Fraction, int]]

_EXACT_PRODUCT_BITS = 4_000_000  # above this, exact products of powers are not formed
_TIGHT_MAX_PREC = 1 << 14  # the bisections of zcdp-tight cost O(prec) Arb evaluations


def _tight_cap(digits: int) -> int:
    """Precision cap of zcdp-tight: 2^14 bits, or four doublings past the starting precision."""
    return max(_TIGHT_MAX_PREC, 16 * (digits * 10 // 3 + 64))


# -- exact helpers ------------------------------------------------------------------------------

def _groups(comp: Composition) -> _Groups:
    comp.require_generic("a closed-form bound")
    return [(m.eps, m.delta, c) for m, c in comp.groups]


def _sign_loglinear(r: Fraction, logs: list[tuple[int, Fraction]]) -> int:
    """The exact sign of ``r + sum_j c_j log(q_j)`` (integers c_j, rationals q_j > 0).

    Zero iff ``r == 0`` and ``prod q_j^c_j == 1``: if ``r != 0`` and the sum were 0 then
    ``e^{-r} = prod q_j^c_j`` would be algebraic, contradicting Lindemann's theorem.  So Arb at
    rising precision always terminates unless the value is 0, which is checked in integers.
    """
    logs = [(c, q) for c, q in logs if c != 0 and q != 1]
    if not logs:
        return (r > 0) - (r < 0)
    checked = False
    prec = 128
    while prec <= MAX_PREC:
        with ctx.workprec(prec):
            x = arb_of_fraction(r)
            for c, q in logs:
                x += arb(fmpz(c)) * arb_of_fraction(q).log()
        if x > 0:
            return 1
        if x < 0:
            return -1
        if r == 0 and not checked:
            checked = True
            bits = sum(abs(c) * (q.numerator.bit_length() + q.denominator.bit_length()) for c, q in logs)
            if bits <= _EXACT_PRODUCT_BITS:
                num = den = 1
                for c, q in logs:
                    a, b = (q.numerator, q.denominator) if c > 0 else (q.denominator, q.numerator)
                    num *= a ** abs(c)
                    den *= b ** abs(c)
                if num == den:
                    return 0
        prec *= 2
    raise PrecisionError(f"could not decide the sign of {r} + sum c log q within {MAX_PREC} bits")


def _loglinear(x: ExactReal, c: int = 1) -> tuple[Fraction, list[tuple[int, Fraction]]]:
    if x.kind == "log":
        return Fraction(0), [(c, x.value)]
    return c * x.value, []


def _cmp_eps(a: ExactReal, b: ExactReal) -> int:
    """Exact sign of a - b."""
    ra, la = _loglinear(a)
    rb, lb = _loglinear(b, -1)
    return _sign_loglinear(ra + rb, la + lb)


def _eps_sum_parts(groups: _Groups) -> tuple[Fraction, list[tuple[int, Fraction]]]:
    """sum eps_i = r + sum c log q, exactly."""
    r = Fraction(0)
    logs: list[tuple[int, Fraction]] = []
    for e, _, c in groups:
        er, el = _loglinear(e, c)
        r += er
        logs += el
    return r, logs


def _sum_eps_minus(groups: _Groups, eps_g: ExactReal) -> int:
    """Exact sign of sum eps_i - eps_g."""
    r, logs = _eps_sum_parts(groups)
    rg, lg = _loglinear(eps_g, -1)
    return _sign_loglinear(r + rg, logs + lg)


def _all_zero(groups: _Groups) -> bool:
    return all(e.is_zero() for e, _, _ in groups)


def _delta_sum(groups: _Groups) -> Fraction:
    return sum((c * d for _, d, c in groups), Fraction(0))


def _retention_exact(groups: _Groups) -> Fraction | None:
    """prod (1 - delta_i) exactly, when its size is reasonable."""
    bits = sum(c * (d.numerator.bit_length() + d.denominator.bit_length()) for _, d, c in groups if d)
    if bits > _EXACT_PRODUCT_BITS // 8:
        return None
    p = Fraction(1)
    for _, d, c in groups:
        if d:
            p *= (1 - d) ** c
    return p


def _cmp_retention(groups: _Groups, x: Fraction) -> int:
    """Exact sign of prod (1 - delta_i) - x, for 0 < x <= 1."""
    p = _retention_exact(groups)
    if p is not None:
        return (p > x) - (p < x)
    return _sign_loglinear(Fraction(0), [(c, 1 - d) for _, d, c in groups if d] + [(-1, x)])


# -- Arb pieces ---------------------------------------------------------------------------------

def _a(q: Fraction | int) -> arb:
    return arb_of_fraction(Fraction(q))


def _tanh_half(e: ExactReal) -> arb:
    """tanh(eps/2) = (e^eps - 1)/(e^eps + 1), exact for eps = log(q)."""
    q = e.exp_exact()
    if q is not None:
        return _a((q - 1) / (q + 1))
    return (e.arb() / 2).tanh()


def _expm1(e: ExactReal) -> arb:
    q = e.exp_exact()
    if q is not None:
        return _a(q - 1)
    return e.arb().expm1()


def _gsum(groups: _Groups, term: Callable[[ExactReal], arb]) -> arb:
    s = arb(0)
    for e, _, c in groups:
        s += arb(fmpz(c)) * term(e)
    return s


def _s1(groups: _Groups) -> arb:
    return _gsum(groups, lambda e: e.arb())


def _s2(groups: _Groups) -> arb:
    return _gsum(groups, lambda e: e.arb() ** 2)


def _rho(groups: _Groups) -> arb:
    """sum eps_i tanh(eps_i/2): the zCDP parameter of the composition (Bun-Steinke 2016 Prop. 1.4)."""
    return _gsum(groups, lambda e: e.arb() * _tanh_half(e))


def _retention_arb(groups: _Groups) -> arb:
    """prod (1 - delta_i) as a ball (exp of a sum of log1p, fine for huge counts)."""
    p = _retention_exact(groups)
    if p is not None:
        return _a(p)
    s = arb(0)
    for _, d, c in groups:
        if d:
            s += arb(fmpz(c)) * _a(-d).log1p()
    return s.exp()


def _certify_clamped(
    compute: Callable[[], arb],
    digits: int,
    algorithm: str,
    *,
    lo: Fraction | None = None,
    hi: Fraction | None = None,
    max_prec: int = MAX_PREC,
) -> Enclosure:
    """Certify ``min(hi, max(lo, v))`` for the value v that ``compute()`` encloses.

    Like :func:`exactdp.core.numbers.certify`, but the clamps are applied to the exact endpoints
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


def _exact_sum_eps(groups: _Groups, digits: int, algorithm: str) -> Enclosure:
    """sum eps_i: exact when rational, exact_log when a sum of logs of moderate size."""
    r, logs = _eps_sum_parts(groups)
    if not logs:
        return Enclosure.exact_value(r, digits, algorithm)
    if r == 0:
        bits = sum(c * (q.numerator.bit_length() + q.denominator.bit_length()) for c, q in logs)
        if bits <= 100_000:
            prod = Fraction(1)
            for c, q in logs:
                prod *= q ** c
            return Enclosure.log_of(prod, digits, algorithm)
    return _certify_clamped(lambda: _s1(groups), digits, algorithm)


def _one(digits: int, algorithm: str) -> Enclosure:
    return Enclosure.exact_value(Fraction(1), digits, algorithm)


# -- basic composition --------------------------------------------------------------------------

def basic_delta(comp: Composition, eps_g: ExactReal, *, digits: int) -> Enclosure:
    """Total delta of basic composition at eps_g: ``min(1, sum delta_i)`` if ``sum eps_i <= eps_g``, else 1.

    Basic composition (Dwork-Roth 2014 Thm 3.16): the composition is (sum eps_i, sum delta_i)-DP.
    Exact.  1 means nothing certified.
    """
    g = _groups(comp)
    if _sum_eps_minus(g, eps_g) <= 0:
        return Enclosure.exact_value(min(Fraction(1), _delta_sum(g)), digits, "basic")
    return _one(digits, "basic")


def basic_epsilon(comp: Composition, delta_g: Fraction, *, digits: int) -> Enclosure:
    """Eps of basic composition at total delta_g: ``sum eps_i`` if ``sum delta_i <= delta_g``, else inf.

    Dwork-Roth 2014 Thm 3.16.  Exact when the eps_i are rational (or all logs: then exact_log).

    >>> basic_epsilon(Composition.homogeneous("0.1", "1e-4", 30), Fraction(1, 100), digits=20).exact
    Fraction(3, 1)
    >>> basic_epsilon(Composition.homogeneous("0.1", "1e-4", 30), Fraction(1, 10**4), digits=20).is_infinite
    True
    """
    g = _groups(comp)
    if _delta_sum(g) > delta_g:
        return Enclosure.infinite(digits, "basic")
    return _exact_sum_eps(g, digits, "basic")


# -- the "advanced composition" shape: eps = A + sqrt(2 V log(1/delta')), total D + delta' --------
#
# DRV10 (general heterogeneous form): A = sum eps_i (e^eps_i - 1), V = sum eps_i^2;
# Steinke: A = V/2, V = sum eps_i^2; zCDP simple conversion: eps = rho + 2 sqrt(rho log(1/delta'))
# = A + sqrt(2 V log(1/delta')) with A = rho, V = 2 rho.  Inverse (A, V > 0), for delta' in (0, 1]:
#   A + sqrt(2 V log(1/delta')) <= eps_g  <=>  delta' >= exp(-(eps_g - A)^2 / (2V))  and eps_g >= A,
# so the least delta' is exp(-max(0, eps_g - A)^2 / (2V)) (= 1, nothing certified, when eps_g <= A).

def _advanced_delta(groups: _Groups, eps_g: ExactReal, digits: int, algorithm: str,
                    av: Callable[[], tuple[arb, arb]]) -> Enclosure:
    d = _delta_sum(groups)
    if _all_zero(groups):  # eps' = 0 for every delta' > 0: the infimum of D + delta' is D
        return Enclosure.exact_value(min(Fraction(1), d), digits, algorithm)

    def compute() -> arb:
        a, v = av()
        y = (eps_g.arb() - a).nonnegative_part()
        return _a(d) + (-(y * y) / (2 * v)).exp()

    return _certify_clamped(compute, digits, algorithm, lo=Fraction(0), hi=Fraction(1))


def _advanced_epsilon(groups: _Groups, delta_g: Fraction, digits: int, algorithm: str,
                      av: Callable[[], tuple[arb, arb]]) -> Enclosure:
    dprime = delta_g - _delta_sum(groups)
    if dprime <= 0:
        return Enclosure.infinite(digits, algorithm)
    if _all_zero(groups):
        return Enclosure.exact_value(Fraction(0), digits, algorithm)

    def compute() -> arb:
        a, v = av()
        return a + (2 * v * (-_a(dprime).log())).sqrt()

    return _certify_clamped(compute, digits, algorithm)


def _drv10_av(groups: _Groups) -> Callable[[], tuple[arb, arb]]:
    return lambda: (_gsum(groups, lambda e: e.arb() * _expm1(e)), _s2(groups))


def drv10_delta(comp: Composition, eps_g: ExactReal, *, digits: int) -> Enclosure:
    """Total delta of DRV10 advanced composition at eps_g: ``sum delta_i + delta'`` (capped at 1).

    Dwork-Rothblum-Vadhan FOCS 2010 Thm III.3 (Dwork-Roth 2014 Thm 3.20), in its general
    heterogeneous form ``eps' = sqrt(2 log(1/delta') sum eps_i^2) + sum eps_i (e^eps_i - 1)``
    (the published homogeneous formula ``sqrt(2k log(1/delta')) eps + k eps (e^eps - 1)`` when all
    are equal), inverted: ``delta' = exp(-((eps_g - A)/sqrt(V))^2/2)`` when ``eps_g > A``.
    """
    g = _groups(comp)
    return _advanced_delta(g, eps_g, digits, "drv10", _drv10_av(g))


def drv10_epsilon(comp: Composition, delta_g: Fraction, *, digits: int) -> Enclosure:
    """Eps of DRV10 at total delta_g = sum delta_i + delta': ``sqrt(2 log(1/delta') sum eps_i^2) + sum eps_i (e^eps_i - 1)``.

    Dwork-Rothblum-Vadhan FOCS 2010 Thm III.3; inf when ``delta' <= 0``.

    >>> e = drv10_epsilon(Composition.homogeneous("0.1", 0, 30), Fraction(1, 1000), digits=20)
    >>> e.lower_str(), e.upper_str()   # docs/mathematics.md §6: 2.3513548815514764138
    ('2.3513548815514764138', '2.35135488155147641381')
    """
    g = _groups(comp)
    return _advanced_epsilon(g, delta_g, digits, "drv10", _drv10_av(g))


def _steinke_av(groups: _Groups) -> Callable[[], tuple[arb, arb]]:
    def av() -> tuple[arb, arb]:
        v = _s2(groups)
        return v / 2, v
    return av


def steinke_delta(comp: Composition, eps_g: ExactReal, *, digits: int) -> Enclosure:
    """Total delta of Steinke's advanced composition at eps_g: ``delta + sum delta_j`` (capped at 1).

    Steinke 2022 (arXiv:2210.00597): ``eps = 1/2 sum eps_j^2 + sqrt(2 log(1/delta) sum eps_j^2)``,
    inverted: ``delta = exp(-(eps_g - S/2)^2/(2S))`` for ``eps_g > S/2``, ``S = sum eps_j^2``.

    >>> print(steinke_delta(Composition.homogeneous("0.1", 0, 30), ExactReal.parse("0.1"), digits=5))
    1
    """
    g = _groups(comp)
    return _advanced_delta(g, eps_g, digits, "steinke", _steinke_av(g))


def steinke_epsilon(comp: Composition, delta_g: Fraction, *, digits: int) -> Enclosure:
    """Eps of Steinke's advanced composition at total delta_g = delta + sum delta_j.

    Steinke 2022 (arXiv:2210.00597): ``1/2 sum eps_j^2 + sqrt(2 log(1/delta) sum eps_j^2)``.
    """
    g = _groups(comp)
    return _advanced_epsilon(g, delta_g, digits, "steinke", _steinke_av(g))


def _zcdp_av(groups: _Groups) -> Callable[[], tuple[arb, arb]]:
    def av() -> tuple[arb, arb]:
        rho = _rho(groups)
        return rho, 2 * rho
    return av


def zcdp_delta(comp: Composition, eps_g: ExactReal, *, digits: int) -> Enclosure:
    """Total delta of the zCDP route at eps_g: ``delta + sum delta_j`` (capped at 1).

    eps-DP => rho-zCDP with ``rho = eps tanh(eps/2)`` (Bun-Steinke 2016 Prop. 1.4 as sharpened in
    Canonne-Kamath-Steinke 2020); rho adds; rho-zCDP => ``(rho + 2 sqrt(rho log(1/delta)), delta)``-DP
    (Bun-Steinke 2016 Prop. 1.3), inverted: ``delta = exp(-((eps_g - rho)/(2 sqrt(rho)))^2)`` for
    ``eps_g > rho``.
    """
    g = _groups(comp)
    return _advanced_delta(g, eps_g, digits, "zcdp", _zcdp_av(g))


def zcdp_epsilon(comp: Composition, delta_g: Fraction, *, digits: int) -> Enclosure:
    """Eps of the zCDP route at total delta_g: ``rho + 2 sqrt(rho log(1/delta))``, rho = sum eps_j tanh(eps_j/2).

    Bun-Steinke 2016 Prop. 1.3/1.4; ``delta = delta_g - sum delta_j``, inf when <= 0.
    """
    g = _groups(comp)
    return _advanced_epsilon(g, delta_g, digits, "zcdp", _zcdp_av(g))


# -- KOV15 Thm 3.4 / 3.5 ------------------------------------------------------------------------
#
# Both have the shape eps~ = min{S1, T + sqrt(2 V log(e + sqrt(V)/delta~)), T + sqrt(2 V log(1/delta~))}
# with total delta 1 - P (1 - delta~), P = prod (1 - delta_l):
#   Thm 3.5: S1 = sum eps_l, T = sum eps_l tanh(eps_l/2), V = sum eps_l^2;
#   Thm 3.4: the same for k copies of (eps, delta): S1 = k eps, T = k eps tanh(eps/2), V = k eps^2
#            (arXiv 2013 form: T = k eps^2).
# Inverse at eps_g (smallest delta~ in (0, 1] whose min is <= eps_g; the smallest over the terms):
#   S1 <= eps_g gives delta~ = 0 (the infimum; basic composition);
#   third term: delta~_3 = exp(-x), x = max(0, eps_g - T)^2 / (2V);
#   second term: log(e + sqrt(V)/delta~) <= x  <=>  delta~ >= sqrt(V)/(e^x - e), possible only if x > 1.

def _kov_delta(hgroups: _Groups, eps_g: ExactReal, digits: int, algorithm: str,
               t_term: Callable[[ExactReal], arb]) -> Enclosure:
    """The delta direction of the KOV15 shape for the mechanisms ``hgroups`` (see above)."""
    if _sum_eps_minus(hgroups, eps_g) <= 0:  # delta~ = 0
        p = _retention_exact(hgroups)
        if p is not None:
            return Enclosure.exact_value(1 - p, digits, algorithm)
        return _certify_clamped(lambda: 1 - _retention_arb(hgroups), digits, algorithm,
                                lo=Fraction(0), hi=Fraction(1))

    def compute() -> arb:
        v = _s2(hgroups)
        t = _gsum(hgroups, t_term)
        y = (eps_g.arb() - t).nonnegative_part()
        x = y * y / (2 * v)
        d3 = (-x).exp()
        one = arb(1)
        e = arb.const_e()
        if x > 1:
            d2 = v.sqrt() / (x.exp() - e)
        else:
            xu = fraction_of_arb_endpoints(x)[1] if x.is_finite() else None
            if xu is not None and xu > 1:  # x may be on either side of 1: d2 in [low, +inf)
                low = v.sqrt() / (_a(xu).exp() - e)
                d2 = (low if low.is_finite() and low > 0 else arb(0)).union(one)
            else:  # x <= 1: the second term reaches no eps_g
                d2 = one
        dt = d2.min(d3).min(one)
        return 1 - _retention_arb(hgroups) * (1 - dt)

    return _certify_clamped(compute, digits, algorithm, lo=Fraction(0), hi=Fraction(1))


def _kov_epsilon(hgroups: _Groups, delta_g: Fraction, digits: int, algorithm: str,
                 t_term: Callable[[ExactReal], arb]) -> Enclosure:
    # 1 - P (1 - delta~) = delta_g  <=>  delta~ = 1 - (1 - delta_g)/P
    s = _cmp_retention(hgroups, 1 - delta_g)  # sign of P - (1 - delta_g) = sign of delta~
    if s < 0:
        return Enclosure.infinite(digits, algorithm)
    if s == 0 or _all_zero(hgroups):  # delta~ = 0: only the first term, sum eps (basic composition)
        return _exact_sum_eps(hgroups, digits, algorithm)
    p = _retention_exact(hgroups)
    dt_exact = 1 - (1 - delta_g) / p if p is not None else None

    def other_terms() -> arb:
        dt = _a(dt_exact) if dt_exact is not None else 1 - _a(1 - delta_g) / _retention_arb(hgroups)
        v = _s2(hgroups)
        t = _gsum(hgroups, t_term)
        t3 = t + (2 * v * (-dt.log())).sqrt()
        t2 = t + (2 * v * (arb.const_e() + v.sqrt() / dt).log()).sqrt()
        return t2.min(t3)

    # When the first term (sum eps, exact) certainly wins the min, the answer is exactly sum eps.
    prec = int(digits * 3.33) + 64
    for _ in range(4):
        with ctx.workprec(prec):
            gap = other_terms() - _s1(hgroups)
        if gap > 0:
            return _exact_sum_eps(hgroups, digits, algorithm)
        if gap < 0:
            break
        prec *= 2
    return _certify_clamped(lambda: _s1(hgroups).min(other_terms()), digits, algorithm)


def _max_params(comp: Composition) -> _Groups:
    """(max eps_i, max delta_i, k): each mechanism is (max eps, max delta)-DP."""
    g = _groups(comp)
    emax = g[0][0]
    for e, _, _ in g[1:]:
        if _cmp_eps(e, emax) > 0:
            emax = e
    return [(emax, max(d for _, d, _ in g), comp.k)]


def _t_tanh(e: ExactReal) -> arb:
    return e.arb() * _tanh_half(e)


def _t_sq(e: ExactReal) -> arb:
    return e.arb() ** 2


def kov15_34_delta(comp: Composition, eps_g: ExactReal, *, digits: int) -> Enclosure:
    """Total delta ``1 - (1-delta)^k (1-delta~)`` of KOV15 Thm 3.4 at eps_g (capped at 1).

    Kairouz-Oh-Viswanath ICML 2015 Thm 3.4: k-fold composition of (eps, delta)-DP is
    ``(eps~, 1 - (1-delta)^k (1-delta~))``-DP with ``eps~ = min{k eps, k eps tanh(eps/2) +
    eps sqrt(2k log(e + sqrt(k eps^2)/delta~)), k eps tanh(eps/2) + eps sqrt(2k log(1/delta~))}``.
    A heterogeneous list is treated as k mechanisms that are each (max eps_i, max delta_i)-DP
    (valid: an (eps_i, delta_i)-DP mechanism is (max eps, max delta)-DP).

    >>> kov15_34_delta(Composition.homogeneous("log(2)", 0, 10), ExactReal.parse("log(1024)"), digits=20).exact
    Fraction(0, 1)
    """
    g = _max_params(comp)
    return _kov_delta(g, eps_g, digits, "kov15-3.4", _t_tanh)


def kov15_34_epsilon(comp: Composition, delta_g: Fraction, *, digits: int) -> Enclosure:
    """eps~ of KOV15 Thm 3.4 at total delta_g = 1 - (1-delta)^k (1-delta~); inf when delta~ < 0.

    Kairouz-Oh-Viswanath ICML 2015 Thm 3.4 (tanh form).  Heterogeneous lists: applied to
    (max eps_i, max delta_i, k), valid since each mechanism is then (max eps, max delta)-DP.
    At delta~ = 0 exactly the value is the first term, k eps (basic composition).
    """
    return _kov_epsilon(_max_params(comp), delta_g, digits, "kov15-3.4", _t_tanh)


def kov15_34_2013_delta(comp: Composition, eps_g: ExactReal, *, digits: int) -> Enclosure:
    """Total delta of the early arXiv form of KOV15 Thm 3.4 (k eps^2 for k eps tanh(eps/2)) at eps_g.

    Kairouz-Oh-Viswanath arXiv:1311.0776v1 (2013), stated for eps <= 0.9 (evaluated as written
    for any eps).  Heterogeneous lists: applied to (max eps_i, max delta_i, k).
    """
    g = _max_params(comp)
    return _kov_delta(g, eps_g, digits, "kov15-3.4-2013", _t_sq)


def kov15_34_2013_epsilon(comp: Composition, delta_g: Fraction, *, digits: int) -> Enclosure:
    """eps~ of the early arXiv form of KOV15 Thm 3.4 at total delta_g.

    Kairouz-Oh-Viswanath arXiv:1311.0776v1: ``min{k eps, k eps^2 + eps sqrt(2k log(e + sqrt(k eps^2)/delta~)),
    k eps^2 + eps sqrt(2k log(1/delta~))}``.  Heterogeneous lists: (max eps_i, max delta_i, k).
    """
    return _kov_epsilon(_max_params(comp), delta_g, digits, "kov15-3.4-2013", _t_sq)


def kov15_35_delta(comp: Composition, eps_g: ExactReal, *, digits: int) -> Enclosure:
    """Total delta ``1 - (1-delta~) prod (1-delta_l)`` of KOV15 Thm 3.5 at eps_g (capped at 1).

    Kairouz-Oh-Viswanath ICML 2015 Thm 3.5: ``eps~ = min{sum eps_l, sum eps_l tanh(eps_l/2) +
    sqrt(2 sum eps_l^2 log(e + sqrt(sum eps_l^2)/delta~)), sum eps_l tanh(eps_l/2) +
    sqrt(2 sum eps_l^2 log(1/delta~))}``.
    """
    g = _groups(comp)
    return _kov_delta(g, eps_g, digits, "kov15-3.5", _t_tanh)


def kov15_35_epsilon(comp: Composition, delta_g: Fraction, *, digits: int) -> Enclosure:
    """eps~ of KOV15 Thm 3.5 at total delta_g = 1 - (1-delta~) prod (1-delta_l); inf when delta~ < 0.

    Kairouz-Oh-Viswanath ICML 2015 Thm 3.5.
    """
    return _kov_epsilon(_groups(comp), delta_g, digits, "kov15-3.5", _t_tanh)


# -- zCDP with the tight conversion (Canonne-Kamath-Steinke 2020) --------------------------------
#
# rho-zCDP => (eps, delta)-DP with delta(eps) = inf_{a>1} exp(f(a)),
#   f(a) = (a-1)(a rho - eps) - log(a-1) + a log(1 - 1/a)
# (CKS 2020, arXiv:2004.00010, Prop. 12 / Steinke 2024).  Differentiating:
#   f'(a) = (2a-1) rho - eps + log(1 - 1/a),  f''(a) = 2 rho + 1/(a(a-1)) > 0,
# so f is convex; f'(1+) = -inf and f'(+inf) = +inf when rho > 0: a unique minimiser a*.
# The eps direction: solving delta = exp(f(a)) for eps gives, for each a,
#   g(a) = a rho + (log(1/delta) + (a-1) log(a-1) - a log a)/(a-1),
#   g'(a) = rho + (log a - log(1/delta))/(a-1)^2,
# and g' < 0 exactly when rho (a-1)^2 + log a < log(1/delta) (an increasing left side): unimodal.
# Certified minimum of a unimodal h with derivative h' over a > 1: bracket a* in X = [lo, hi] by
# the certified sign of h', bisect at exact dyadic points, then with m in X
#   h(m) >= min h = h(a*) = h(m) + h'(xi)(a* - m) in h(m) + h'(X)(X - m)   (mean value theorem),
# which is tight because h'(a*) = 0 and |h'(X)| <= max|h''| |X|.

def _certified_min(h: Callable[[arb], arb], dh: Callable[[arb], arb],
                   near_one: Callable[[Fraction], arb] | None = None) -> arb:
    """A ball containing inf_{t>0} h(t), for h unimodal with a unique stationary point (see above).

    The variable is t = a - 1 (so points near a = 1 are exact).  ``near_one(u)``, when given,
    encloses the infimum of h over (0, u]; it is used when the minimiser is certified to lie
    below u = 2^-(4 prec + 64).
    """
    prec = ctx.prec
    lo = Fraction(1, 2)
    while not dh(_a(lo)) < 0:  # find lo with dh(lo) < 0 certainly
        lo /= 2
        if lo < Fraction(1, 2 ** (4 * prec + 64)):
            if near_one is not None and dh(_a(lo)) > 0:  # the minimiser is in (0, lo)
                return near_one(lo)
            return arb("nan")
    hi = Fraction(1)
    while not dh(_a(hi)) > 0:
        hi *= 2
        if hi > 2 ** (4 * prec + 64):
            return arb("nan")
    # bisect until the bracket is small relative to min(lo, 1)
    for _ in range(8 * prec + 256):
        if hi - lo <= min(lo, Fraction(1)) / 2 ** (prec // 2 + 8):
            break
        mid = lo + (hi - lo) / 2
        s = dh(_a(mid))
        if s < 0:
            lo = mid
        elif s > 0:
            hi = mid
        else:
            break
    m = lo + (hi - lo) / 2
    x = _a(lo).union(_a(hi))
    hm = h(_a(m))
    low = hm + dh(x) * (x - _a(m))
    return low.union(hm) if low.is_finite() else arb("nan")


# In t = a - 1 > 0 (a log(1 - 1/a) = a log t - a log a):
#   f(t) = t (a rho - eps) + t log t - a log a,          f'(t) = (1 + 2t) rho - eps + log t - log1p(t),
#   g(t) = a rho + (L + t log t - a log a)/t,             g'(t) = rho + (log1p(t) - L)/t^2,
# with a = 1 + t, a log a = (1 + t) log1p(t), L = log(1/delta).

def _tight_f(rho: arb, eps: arb) -> tuple[Callable[[arb], arb], Callable[[arb], arb]]:
    def f(t: arb) -> arb:
        a = 1 + t
        return t * (a * rho - eps) + t * t.log() - a * t.log1p()

    def df(t: arb) -> arb:
        return (1 + 2 * t) * rho - eps + t.log() - t.log1p()

    return f, df


def _tight_f_near_one(eps: arb) -> Callable[[Fraction], arb]:
    # For 0 < t <= u < 1/e:  f(t) >= -u eps + u log u - (1 + u) u  (t log t is decreasing on
    # (0, 1/e), log1p(t) <= t <= u), and inf f <= lim_{t -> 0+} f(t) = 0.
    def bound(u: Fraction) -> arb:
        au = _a(u)
        return (-au * eps + au * au.log() - (1 + au) * au).union(arb(0))
    return bound


def _tight_g(rho: arb, big_l: arb) -> tuple[Callable[[arb], arb], Callable[[arb], arb]]:
    def g(t: arb) -> arb:
        a = 1 + t
        return a * rho + (big_l + t * t.log() - a * t.log1p()) / t

    def dg(t: arb) -> arb:
        return rho + (t.log1p() - big_l) / (t * t)

    return g, dg


def zcdp_tight_delta(comp: Composition, eps_g: ExactReal, *, digits: int) -> Enclosure:
    """Total delta ``delta(eps_g) + sum delta_j`` of the zCDP route with the tight conversion (capped at 1).

    rho = sum eps_j tanh(eps_j/2) (Bun-Steinke 2016), and rho-zCDP => (eps, delta)-DP with
    ``delta = inf_{a>1} exp((a-1)(a rho - eps))/(a-1) * (1-1/a)^a`` (Canonne-Kamath-Steinke 2020,
    arXiv:2004.00010; Steinke 2024), minimised with a certified bracket (derivation above).
    """
    g = _groups(comp)
    d = _delta_sum(g)
    if _all_zero(g):  # rho = 0: delta(eps) = 0 for every eps >= 0
        return Enclosure.exact_value(min(Fraction(1), d), digits, "zcdp-tight")

    def compute() -> arb:
        eps = eps_g.arb()
        f, df = _tight_f(_rho(g), eps)
        return _a(d) + _certified_min(f, df, _tight_f_near_one(eps)).exp()

    return _certify_clamped(compute, digits, "zcdp-tight", lo=Fraction(0), hi=Fraction(1),
                            max_prec=_tight_cap(digits))


def zcdp_tight_epsilon(comp: Composition, delta_g: Fraction, *, digits: int) -> Enclosure:
    """Eps of the zCDP route with the tight conversion at total delta_g = delta + sum delta_j.

    ``eps(delta) = max(0, inf_{a>1} a rho + (log(1/delta) + (a-1) log(a-1) - a log a)/(a-1))``
    (the tight conversion of Canonne-Kamath-Steinke 2020 solved for eps); inf when delta <= 0.
    """
    g = _groups(comp)
    dprime = delta_g - _delta_sum(g)
    if dprime <= 0:
        return Enclosure.infinite(digits, "zcdp-tight")
    if _all_zero(g):
        return Enclosure.exact_value(Fraction(0), digits, "zcdp-tight")

    def compute() -> arb:
        gg, dg = _tight_g(_rho(g), -_a(dprime).log())
        return _certified_min(gg, dg)

    return _certify_clamped(compute, digits, "zcdp-tight", lo=Fraction(0), max_prec=_tight_cap(digits))
