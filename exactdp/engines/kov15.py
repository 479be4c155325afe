"""Optimal composition of k equal (eps, delta)-DP mechanisms (KOV15 Thm 3.3 / MV Thm 1.4).

For the k-fold composition of (eps, delta)-DP mechanisms, with x = e^eps, r = e^{eps_g}:

    delta_opt(eps_g) = 1 - (1-delta)^k (1 - delta_pure(eps_g)),
    delta_pure(eps_g) = (1+x)^{-k} sum_{l: (2l-k) eps > eps_g} C(k,l) (x^l - r x^{k-l})

(Kairouz-Oh-Viswanath, ICML 2015, Thm 3.3 on the grid eps_g = (k-2i) eps; Murtagh-Vadhan 2018
Thm 1.4/1.5 for any eps_g; docs/mathematics.md §3).  Write m for the least l with
(2l-k) eps > eps_g and p = x/(1+x).  Then delta_pure = A_m - r B_m with

    A_m = P[Bin(k, p) >= m] = I_p(m, k-m+1),    B_m = P[Bin(k, 1-p) >= m] = I_{1-p}(m, k-m+1),

binomial tails, i.e. regularized incomplete beta functions, which Arb evaluates with rigorous
error bounds in time independent of k.  Three evaluation routes, all certified:

* ``exact``: e^eps and e^{eps_g} rational and the integers involved small enough
  (``k * bits <= EXACT_BITS``, about k <= 5000 for e^eps = 3/2): exact big-integer sums, the result
  is an exact Fraction (``Enclosure.exact_value``), the eps answer exactly ``log(q)``.
* ``direct``: k <= DIRECT_K_MAX: the sum of positive terms C(k,l) x^{k-l} (x^{2l-k} - r)/(1+x)^k
  in Arb (no cancellation between terms).
* ``beta``: larger k (tested up to 10^15): the two incomplete beta functions, each evaluated as
  the smaller of a tail and its complement; the cancellation in A_m - r B_m is absorbed by the
  automatic precision loop.

For very large k the exact rationals would have millions of digits, so the answer is then a
certified enclosure even when e^eps is rational (documented in the README).
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from functools import lru_cache

import flint
from flint import arb, ctx, fmpz

from exactdp.core import progress
from exactdp.core.binomial import binomial_upper_tail
from exactdp.core.enclosure import Enclosure, certify
from exactdp.core.errors import InvalidParameterError, PrecisionError
from exactdp.core.numbers import DEFAULT_DIGITS, ExactReal, arb_of_fraction
from exactdp.model.composition import Composition

__all__ = [
    "DIRECT_K_MAX",
    "EXACT_BITS",
    "K_MAX",
    "GridEps",
    "check_k_max",
    "delta_pure_threshold",
    "kov15_delta",
    "kov15_epsilon",
    "kov15_grid",
]

#: exact rational results are used while k * (bits of e^eps and of 1 - delta) stays below this,
#: so that an exact answer stays printable (Python refuses int -> str beyond 4300 digits by default).
EXACT_BITS = 12_000
#: the largest k summed term by term in Arb; above it the incomplete beta route is used (measured:
#: the sum is faster up to k ~ 5000 for eps queries and ~ 20000 for delta queries at 30 digits).
DIRECT_K_MAX = 5000
#: the largest k the optimal engine accepts: up to it every query answers in seconds (Arb's
#: incomplete beta at larger parameters can take minutes); the closed-form bounds answer any k.
K_MAX = 10**15
#: precision cap (bits) of a sign decision before the exact fallback is tried.
_DECIDE_PREC = 1 << 13

_ALG_EXACT = "kov15-exact"
_ALG_DIRECT = "kov15-direct"
_ALG_BETA = "kov15-incomplete-beta"


# -- small exact helpers ------------------------------------------------------------------------

def exact_sign(q: Fraction | int) -> int:
    """The sign of an exact rational: -1, 0 or 1."""
    return (q > 0) - (q < 0)


def _refine_sign(ball: Callable[[], arb], start: int = 64, max_prec: int = _DECIDE_PREC) -> int | None:
    """Sign of the real computed by ``ball()`` (Arb), refining precision; None if still undecided."""
    prec = start
    while prec <= max_prec:
        progress.tick(f"deciding a sign at {prec} bits")
        with ctx.workprec(prec):
            b = ball()
        if b.is_finite():
            if b > 0:
                return 1
            if b < 0:
                return -1
        prec *= 2
    return None


def exact_ok(k: int, *qs: Fraction) -> bool:
    """Whether k-th powers of these rationals are small enough to compute exactly."""
    bits = sum(max(q.numerator.bit_length(), q.denominator.bit_length()) for q in qs) + 1
    return k * bits <= EXACT_BITS


def _sign_n_eps_minus(n: int, eps: ExactReal, eps_g: ExactReal) -> int:
    """Exact sign of n*eps - eps_g (eps > 0).

    Equality needs eps_g/eps rational: both rational (compared exactly), or both logs with
    x^n = r (checked exactly when n is small enough for x^n = r to be possible at all).
    For one log and one nonzero rational, n log(x) = eps_g would make e^{eps_g} rational,
    impossible for rational eps_g != 0 (Lindemann), so Arb refinement terminates.
    """
    if n <= 0:  # n eps <= 0 <= eps_g
        return -eps_g.sign() if n == 0 else -1
    if eps_g.is_zero():
        return exact_sign(n)
    if eps.kind == "rational" and eps_g.kind == "rational":
        return exact_sign(n * eps.value - eps_g.value)
    s = _refine_sign(lambda: arb(fmpz(n)) * eps.arb() - eps_g.arb())
    if s is not None:
        return s
    if eps.kind == "log" and eps_g.kind == "log":
        x, r = eps.value, eps_g.value
        # x > 1 has numerator >= 2, so x^n = r needs n <= bits of r's numerator
        if abs(n) <= r.numerator.bit_length() + r.denominator.bit_length() + 1:
            return exact_sign(x ** n - r)
    s = _refine_sign(lambda: arb(fmpz(n)) * eps.arb() - eps_g.arb(), start=_DECIDE_PREC, max_prec=1 << 17)
    if s is None:
        raise PrecisionError(f"could not decide the sign of {n}*eps - eps_g")
    return s


def delta_pure_threshold(comp: Composition, eps_g: ExactReal) -> int:
    """The least l with (2l-k) eps > eps_g (k+1 when none): the first term of the KOV15 sum.

    >>> delta_pure_threshold(Composition.homogeneous("0.1", 0, 30), ExactReal.parse("1"))
    21
    """
    eps, _, k = comp.homogeneous_params()
    return threshold(eps, eps_g, k)


def threshold(eps: ExactReal, eps_g: ExactReal, k: int) -> int:
    if eps.is_zero():
        return k + 1
    if _sign_n_eps_minus(k, eps, eps_g) <= 0:  # k eps <= eps_g: no term
        return k + 1
    # smallest n with n eps > eps_g, n in [1, k]: estimate, then correct with exact signs
    with ctx.workprec(64):
        est = eps_g.arb() / eps.arb()
    lo_n = 0
    if est.is_finite():
        fl = est.lower().floor().unique_fmpz()
        assert fl is not None  # the floor of an exact endpoint is an exact integer
        lo_n = int(fl)
    n = max(1, min(k, lo_n))
    while n > 1 and _sign_n_eps_minus(n - 1, eps, eps_g) > 0:
        n -= 1
    while _sign_n_eps_minus(n, eps, eps_g) <= 0:
        n += 1
    # 2l - k >= n  <=>  l >= ceil((k+n)/2)
    return -((-(k + n)) // 2)


# -- (1-delta)^k ----------------------------------------------------------------------------------

def c_arb(delta: Fraction, k: int) -> arb:
    """(1-delta)^k as an Arb ball at the current precision."""
    if delta == 0:
        return arb(1)
    return (arb(fmpz(k)) * (-arb_of_fraction(delta)).log1p()).exp()


def _one_minus_c_arb(delta: Fraction, k: int) -> arb:
    """1 - (1-delta)^k without cancellation: -expm1(k log1p(-delta))."""
    if delta == 0:
        return arb(0)
    return -((arb(fmpz(k)) * (-arb_of_fraction(delta)).log1p()).expm1())


def cmp_pow(delta: Fraction, k: int, delta_g: Fraction) -> int:
    """Exact sign of delta_g - (1 - (1-delta)^k)."""
    if delta == 0:
        return exact_sign(delta_g)
    base, target = 1 - delta, 1 - delta_g
    if exact_ok(k, base):
        return exact_sign(base ** k - target)
    # base = n/d in lowest terms with d >= 2, so base^k has a denominator of more than k bits;
    # equal to target only if target's denominator is that large.
    if target.denominator.bit_length() > k and k * base.denominator.bit_length() <= 4 * 10**6:
        return exact_sign(base ** k - target)
    s = _refine_sign(lambda: c_arb(delta, k) - arb_of_fraction(target), max_prec=1 << 17)
    if s is None:
        raise PrecisionError("could not compare delta_g with 1 - (1-delta)^k")
    return s


# -- exact sums -----------------------------------------------------------------------------------

@lru_cache(maxsize=8)
def exact_prefix(a: int, b: int, k: int) -> tuple[int, tuple[int, ...]]:
    """((a+b)^k, prefix sums P[j] = sum_{i<j} C(k,i) a^i b^{k-i}) for x = a/b."""
    t = b ** k
    acc = 0
    out = [0]
    for j in range(k + 1):
        acc += t
        out.append(acc)
        if j < k:
            t = t * (k - j) * a // ((j + 1) * b)
    return (a + b) ** k, tuple(out)


def exact_AB(x: Fraction, k: int, m: int) -> tuple[Fraction, Fraction]:
    """(A_m, B_m) exactly: A_m = P[Bin(k,p) >= m], B_m = P[Bin(k,1-p) >= m], p = x/(1+x)."""
    if m > k:
        return Fraction(0), Fraction(0)
    m = max(m, 0)
    tot, pre = exact_prefix(x.numerator, x.denominator, k)
    s1 = pre[k + 1] - pre[m]          # sum_{l >= m} t_l,  t_l = C(k,l) a^l b^{k-l}
    s2 = pre[k - m + 1]               # sum_{l >= m} t_{k-l} = sum_{j <= k-m} t_j
    return Fraction(s1, tot), Fraction(s2, tot)


# -- Arb sums -------------------------------------------------------------------------------------

def _AB_arb(eps: ExactReal, k: int, m: int) -> tuple[arb, arb]:
    """(A_m, B_m) as Arb balls at the current precision."""
    if m > k:
        return arb(0), arb(0)
    x = eps.exp_arb()
    if k <= DIRECT_K_MAX:
        w = 1 / (1 + x) ** k   # w_l = C(k,l) x^{k-l}/(1+x)^k, from l = k down
        sa = arb(0)
        sb = arb(0)
        xl = x ** k            # x^l / x^{k-l} bookkeeping: a_l = w_l x^{2l-k}
        for l in range(k, max(m, 0) - 1, -1):
            sb += w
            sa += w * xl
            if l > 0:
                w = w * x * l / (k - l + 1)
                xl = xl / (x * x)
        return sa, sb
    p = x / (1 + x)
    return binomial_upper_tail(k, m, p), binomial_upper_tail(k, m, 1 - p)


def _delta_pure_arb(eps: ExactReal, eps_g: ExactReal | GridEps, k: int, m: int) -> arb:
    """delta_pure(eps_g) = A_m - e^{eps_g} B_m in Arb (m is the exact threshold)."""
    if m > k:
        return arb(0)
    if k <= DIRECT_K_MAX:
        # positive terms: C(k,l) x^{k-l}/(1+x)^k * r * expm1((2l-k) eps - eps_g), MV Thm 1.5
        x = eps.exp_arb()
        e, eg = eps.arb(), eps_g.arb()
        r = eps_g.exp_arb()
        w = 1 / (1 + x) ** k
        s = arb(0)
        for l in range(k, m - 1, -1):
            s += w * (arb(2 * l - k) * e - eg).expm1()
            if l > 0:
                w = w * x * l / (k - l + 1)
        return s * r
    A, B = _AB_arb(eps, k, m)
    return A - eps_g.exp_arb() * B


# -- the problem, normalised -----------------------------------------------------------------------

class Homogeneous:
    """The exact data of a homogeneous composition, with the exact-mode decision."""

    def __init__(self, comp: Composition) -> None:
        self.eps, self.delta, self.k = comp.homogeneous_params()
        self.x = self.eps.exp_exact()  # e^eps as a Fraction, or None

    def exact_with(self, *extra: Fraction | None) -> bool:
        if self.x is None or any(q is None for q in extra):
            return False
        return exact_ok(self.k, self.x, 1 - self.delta)

    def c_exact(self) -> Fraction:
        return (1 - self.delta) ** self.k


def _one_minus_c_enclosure(h: Homogeneous, digits: int) -> Enclosure:
    if h.delta == 0:
        return Enclosure.exact_value(Fraction(0), digits, _ALG_EXACT)
    if exact_ok(h.k, 1 - h.delta):
        return Enclosure.exact_value(1 - h.c_exact(), digits, _ALG_EXACT)
    return certify(lambda: _one_minus_c_arb(h.delta, h.k), digits, algorithm=_ALG_BETA)


def _require_homogeneous(comp: Composition) -> None:
    if not isinstance(comp, Composition) or not comp.is_homogeneous:
        raise InvalidParameterError("comp must be a homogeneous Composition (k equal mechanisms)")
    check_k_max(comp.k)


def check_k_max(k: int) -> None:
    """Refuse, up front, a k beyond what the optimal engine answers in bounded time."""
    if k > K_MAX:
        raise InvalidParameterError(
            f"k={k} must be at most 10^15 for the optimal method (beyond it the certified incomplete beta "
            "functions take minutes); the closed-form bounds answer any k, e.g. --method kov15-3.4 or zcdp-tight")


def _alg(k: int) -> str:
    return _ALG_DIRECT if k <= DIRECT_K_MAX else _ALG_BETA


# -- delta at eps_g -------------------------------------------------------------------------------

def kov15_delta(comp: Composition, eps_g: ExactReal, *, digits: int = DEFAULT_DIGITS) -> Enclosure:
    """The optimal total delta at eps_g for k equal mechanisms (KOV15 Thm 3.3, MV Thm 1.4).

    Exact (a Fraction) when e^eps and e^{eps_g} are rational and k is moderate.

    >>> c = Composition.homogeneous("log(3/2)", 0, 10)
    >>> kov15_delta(c, ExactReal.log(Fraction(3, 2) ** 8), digits=10).exact
    Fraction(6561, 1953125)
    >>> str(kov15_delta(Composition.homogeneous("0.1", "0.001", 30), ExactReal.parse("1"), digits=20))
    '[0.0398184105221305750228, 0.0398184105221305750229]'
    """
    _require_homogeneous(comp)
    h = Homogeneous(comp)
    m = threshold(h.eps, eps_g, h.k)
    if m > h.k:  # delta_pure = 0 exactly
        return _one_minus_c_enclosure(h, digits)
    r = eps_g.exp_exact()
    if h.x is not None and r is not None and h.exact_with(r):
        A, B = exact_AB(h.x, h.k, m)
        dp = A - r * B
        return Enclosure.exact_value(1 - h.c_exact() * (1 - dp), digits, _ALG_EXACT)
    eps, delta, k = h.eps, h.delta, h.k

    def compute() -> arb:
        dp = _delta_pure_arb(eps, eps_g, k, m)
        if delta == 0:
            return dp
        # 1 - c (1 - dp) = (1 - c) + c dp: two nonnegative terms, no cancellation
        return _one_minus_c_arb(delta, k) + c_arb(delta, k) * dp

    return certify(compute, digits, algorithm=_alg(k))


# -- eps at delta_g -------------------------------------------------------------------------------

def sign_dp_minus_t(h: Homogeneous, eps_g: ExactReal | GridEps, m: int, t_exact: Fraction | None, delta_g: Fraction,
                     max_prec: int = _DECIDE_PREC) -> int | None:
    """Sign of delta_pure(eps_g) - t, t = 1 - (1-delta_g)/(1-delta)^k; None if undecided."""
    r = eps_g.exp_exact()
    if m > h.k:
        return -exact_sign(t_exact) if t_exact is not None else -cmp_pow(h.delta, h.k, delta_g)
    if t_exact is not None and h.x is not None and r is not None and h.exact_with(r):
        A, B = exact_AB(h.x, h.k, m)
        return exact_sign(A - r * B - t_exact)
    eps, delta, k = h.eps, h.delta, h.k
    dg = arb_of_fraction
    # dp - t = dp - 1 + (1-delta_g)/c;  compare c (dp - 1) + (1 - delta_g) with 0 (c > 0)

    def ball() -> arb:
        return c_arb(delta, k) * (_delta_pure_arb(eps, eps_g, k, m) - 1) + dg(1 - delta_g)

    return _refine_sign(ball, max_prec=max_prec)


def _grid_eps(eps: ExactReal, n: int) -> ExactReal:
    """n*eps exactly (log(x^n) for a log eps, kept small enough to write down)."""
    if eps.kind == "rational":
        return ExactReal.rational(n * eps.value)
    return ExactReal.log(eps.value ** n)


class GridEps:
    """n*eps, usable where an ExactReal is (arb, exp_arb, exp_exact) without computing x^n for huge n."""

    def __init__(self, eps: ExactReal, n: int) -> None:
        self.eps, self.n = eps, n
        self.kind = eps.kind

    def arb(self) -> flint.arb:
        return arb(fmpz(self.n)) * self.eps.arb()

    def exp_arb(self) -> flint.arb:
        return self.eps.exp_arb() ** fmpz(self.n) if self.eps.kind == "log" else self.arb().exp()

    def exp_exact(self) -> Fraction | None:
        if self.n == 0:
            return Fraction(1)
        if self.eps.kind == "log" and exact_ok(self.n, self.eps.value):
            return self.eps.value ** self.n
        return None

    def is_zero(self) -> bool:
        return self.n == 0 or self.eps.is_zero()

    def sign(self) -> int:
        return exact_sign(self.n) * self.eps.sign()


def kov15_epsilon(comp: Composition, delta_g: Fraction, *, digits: int = DEFAULT_DIGITS) -> Enclosure:
    """The optimal eps at total delta_g for k equal mechanisms (KOV15 Thm 3.3, MV Thm 1.4/1.5).

    +inf exactly when delta_g < 1 - (1-delta)^k.  Otherwise delta_pure is affine in e^{eps_g}
    between breakpoints, delta_pure = A_m - e^{eps_g} B_m, so on the right segment the optimum is
    the closed form eps_g* = max(0, log((A_m - t)/B_m)), t = 1 - (1-delta_g)/(1-delta)^k
    (docs/mathematics.md §2); exactly log(q) for a rational q when e^eps is rational.

    >>> e = kov15_epsilon(Composition.homogeneous("0.1", "0.001", 30), Fraction(1, 20), digits=20)
    >>> e.lower_str()
    '0.84630263447479740608'
    """
    _require_homogeneous(comp)
    delta_g = Fraction(delta_g)
    h = Homogeneous(comp)
    eps, delta, k = h.eps, h.delta, h.k
    if cmp_pow(delta, k, delta_g) < 0:
        return Enclosure.infinite(digits, _ALG_EXACT)
    if eps.is_zero():
        return Enclosure.exact_value(Fraction(0), digits, _ALG_EXACT)
    exact_c = exact_ok(k, 1 - delta)
    t_exact = 1 - (1 - delta_g) / h.c_exact() if exact_c else None
    zero = ExactReal.rational(0)
    m0 = k // 2 + 1
    # eps_g* = 0 when delta_pure(0) <= t
    s0 = sign_dp_minus_t(h, zero, m0, t_exact, delta_g)
    if s0 is None:
        raise PrecisionError("could not decide whether delta_pure(0) <= t (an exact tie at eps_g = 0?)")
    if s0 <= 0:
        return Enclosure.exact_value(Fraction(0), digits, _ALG_EXACT)
    # t == 0 exactly (delta_g = 1 - (1-delta)^k): the answer is the last breakpoint k eps
    if (t_exact == 0) if t_exact is not None else (cmp_pow(delta, k, delta_g) == 0):
        if eps.kind == "rational":
            return Enclosure.exact_value(k * eps.value, digits, _ALG_EXACT)
        if exact_ok(k, eps.value):
            return Enclosure.log_of(eps.value ** k, digits, _ALG_EXACT)
        return certify(lambda: arb(fmpz(k)) * eps.arb(), digits, algorithm=_ALG_BETA)
    # binary search the least m in [m0, k] with g(m) = delta_pure((2m-k) eps) <= t;
    # g(m) is delta_pure at the right end of segment m, whose threshold is m+1.
    lo, hi = m0, k           # g(hi) = 0 <= t;  delta_pure(0) > t
    ties: set[int] = set()
    while lo < hi:
        progress.tick(f"locating the optimal segment among {hi - lo + 1} (k = {k})")
        mid = (lo + hi) // 2
        s = sign_dp_minus_t(h, GridEps(eps, 2 * mid - k), mid + 1, t_exact, delta_g)
        if s is None:
            # g(mid) and t agree to thousands of bits: the optimum is the breakpoint (2 mid - k) eps
            # or lies on segment mid or mid+1; both closed forms are evaluated and the max taken
            # (delta_pure is convex in e^{eps_g}, so each segment's line lies below it and
            # e^{eps_g*} = max_m (A_m - t)/B_m).
            ties = {mid, mid + 1}
            break
        if s <= 0:
            hi = mid
        else:
            lo = mid + 1
    cands = sorted(ties) if ties else [lo]
    if t_exact is not None and h.x is not None and h.exact_with(Fraction(1)) and not ties:
        A, B = exact_AB(h.x, k, lo)
        q = (A - t_exact) / B
        if q <= 1:
            return Enclosure.exact_value(Fraction(0), digits, _ALG_EXACT)
        return Enclosure.log_of(q, digits, _ALG_EXACT)

    def compute() -> arb:
        best: arb | None = None
        for m in cands:
            A, B = _AB_arb(eps, k, m)
            # A - t = A - 1 + (1-delta_g)/c
            v = ((A - 1) * c_arb(delta, k) + arb_of_fraction(1 - delta_g)) / (B * c_arb(delta, k))
            best = v if best is None else best.max(v)
        assert best is not None  # cands is never empty
        return best.log()

    return certify(compute, digits, algorithm=_alg(k))


# -- the KOV15 grid -------------------------------------------------------------------------------

def kov15_grid(comp: Composition, *, digits: int = DEFAULT_DIGITS) -> list[tuple[int, ExactReal | GridEps, Enclosure]]:
    """The KOV15 Thm 3.3 grid: (i, eps_i = (k-2i) eps, total delta_i) for i = 0..floor(k/2).

    The composition is (eps_i, delta_i)-DP for every i and these points are tight.  With
    e^eps rational (and k moderate) every delta_i is an exact Fraction.

    >>> [d.exact for _, _, d in kov15_grid(Composition.homogeneous("log(3/2)", 0, 10))][1:3]
    [Fraction(6561, 1953125), Fraction(53217, 1953125)]
    """
    _require_homogeneous(comp)
    h = Homogeneous(comp)
    eps, k = h.eps, h.k
    if k > 100_000:
        raise InvalidParameterError(f"k={k} must be at most 100000 for the full grid (it has k/2+1 points)")
    out: list[tuple[int, ExactReal | GridEps, Enclosure]] = []
    x = h.x
    if x is not None and h.exact_with(Fraction(1)):
        c = h.c_exact()
        for i in range(k // 2 + 1):
            n = k - 2 * i
            A, B = exact_AB(x, k, k - i + 1)
            dp = A - x ** n * B
            out.append((i, _grid_eps(eps, n), Enclosure.exact_value(1 - c * (1 - dp), digits, _ALG_EXACT)))
        return out
    deltas = _grid_arb(h, digits)
    for i in range(k // 2 + 1):
        n = k - 2 * i
        g = _grid_eps(eps, n) if (eps.kind == "rational" or exact_ok(n, eps.value)) else GridEps(eps, n)
        out.append((i, g, deltas[i]))
    return out


def _grid_arb(h: Homogeneous, digits: int) -> list[Enclosure]:
    """All grid deltas at once: suffix sums in Arb at one precision, raised until all are certified.

    With w_l = C(k,l) x^{k-l}/(1+x)^k, SA[m] = sum_{l>=m} w_l x^{2l-k}, SB[m] = sum_{l>=m} w_l,
    delta_pure at eps_g = (k-2i) eps is SA[m] - x^{k-2i} SB[m] with m = k-i+1 (KOV15 Thm 3.3).
    """
    eps, delta, k = h.eps, h.delta, h.k
    first = _one_minus_c_enclosure(h, digits)
    if eps.is_zero():
        return [first] * (k // 2 + 1)
    target = Fraction(1, 10 ** (digits + 2))
    prec = int(digits * 3.33) + 64 + 2 * k.bit_length()
    from exactdp.core.numbers import fraction_of_arb_endpoints

    while prec <= (1 << 17):
        out = [first]
        with ctx.workprec(prec):
            x = eps.exp_arb()
            x2 = x * x
            w = 1 / (1 + x) ** k
            y = x ** k                      # x^{2l-k} at l = k
            SA, SB = arb(0), arb(0)
            c1, c = _one_minus_c_arb(delta, k), c_arb(delta, k)
            ok = True
            for i in range(1, k // 2 + 1):
                l = k - i + 1               # add term l: SA, SB become the sums over l' >= k-i+1
                SA += w * y
                SB += w
                w = w * x * l / (k - l + 1)
                y = y / x2
                # x^{k-2i} = y * x^2 after the update (y is now x^{2(l-1)-k} = x^{k-2i})
                dp = SA - y * SB
                b = dp if delta == 0 else c1 + c * dp
                if not b.is_finite() or not b > 0:
                    ok = False
                    break
                lo, hi = fraction_of_arb_endpoints(b)
                if lo <= 0 or hi - lo > target * lo:
                    ok = False
                    break
                out.append(Enclosure(lo, hi, digits, algorithm=_ALG_DIRECT))
        if ok:
            return out
        prec *= 2
    raise PrecisionError(f"could not certify the KOV15 grid to {digits=} digits")


def _delta_at_grid(h: Homogeneous, n: int, i: int, digits: int) -> Enclosure:
    eps, delta, k = h.eps, h.delta, h.k
    m = k - i + 1
    if i == 0 or eps.is_zero():
        return _one_minus_c_enclosure(h, digits)
    g = GridEps(eps, n)

    def compute() -> arb:
        dp = _delta_pure_arb(eps, g, k, m)
        return dp if delta == 0 else _one_minus_c_arb(delta, k) + c_arb(delta, k) * dp

    return certify(compute, digits, algorithm=_alg(k))
