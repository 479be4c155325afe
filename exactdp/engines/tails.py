"""Few distinct (eps, delta) values, one of them with a huge count: binomial tails (MV Thm 1.5).

A composition of generic mechanisms in groups (eps_g, delta_g, n_g).  Take the group T with the
largest count; enumerate the joint outcomes r of the other groups (how many of each group's
mechanisms answered "up"), with P-mass w_r, Q-mass q_r and loss L_r.  Group T contributes a
binomial: j of its n mechanisms up has loss (2j - n) eps_T, P-mass Bin(n, p)(j) and Q-mass
Bin(n, 1-p)(j), p = e^{eps_T}/(1 + e^{eps_T}) (the randomized-response pair, docs/mathematics.md
§1-§2).  Murtagh-Vadhan Thm 1.5 then reads

    delta_pure(x) = sum_r [ w_r P[Bin(n, p) >= m_r] - e^x q_r P[Bin(n, 1-p) >= m_r] ],

m_r the least j with (2j - n) eps_T + L_r > x, and delta_opt(x) = 1 - prod(1-delta_i) (1 - delta_pure(x)).
The tails are regularized incomplete beta functions in Arb (as for KOV15, docs/mathematics.md
§3); between the thresholds of neighbouring r they differ by a few binomial probabilities, which
are summed (all positive: no cancellation), so the cost depends on the number of outcomes r and
on the spread of the thresholds, not on n.  The eps at delta_g is a certified root of this
decreasing function (:func:`exactdp.core.roots.decreasing_root`); (1 - delta_i)^{n_i} is never formed as
an exact fraction.

>>> from exactdp import Composition
>>> c = Composition.heterogeneous([("0.1", 0, 10**6), ("0.2", 0, 5)])
>>> str(tails_epsilon(c, Fraction(1, 10**6), digits=12))
'[5469.678571414, 5469.678571415]'
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from fractions import Fraction

from flint import arb, ctx, fmpz

from exactdp.core import progress
from exactdp.core.binomial import binomial_pmf, binomial_upper_tail
from exactdp.core.enclosure import Enclosure, certify
from exactdp.core.errors import PrecisionError
from exactdp.core.linlog import LinLog
from exactdp.core.numbers import DEFAULT_DIGITS, ExactReal, arb_of_fraction, fraction_of_arb_endpoints
from exactdp.core.roots import decreasing_root, sign_at
from exactdp.model.composition import Composition

__all__ = ["MIN_COUNT", "REST_CAP", "TAILS_SECONDS_PER_OUTCOME", "TAILS_SECONDS_START", "rest_outcomes", "tails_applies",
           "tails_decide", "tails_delta", "tails_epsilon", "tails_seconds"]

#: the largest number of joint outcomes of the small groups that are enumerated
REST_CAP = 20_000
#: the count from which the tail method is preferred to exact subset counting
MIN_COUNT = 2_000
#: the largest spread of thresholds summed term by term (past it, one incomplete beta per threshold)
WALK_CAP = 200_000

ALGORITHM = "binomial-tails"


def _groups(comp: Composition) -> list[tuple[ExactReal, Fraction, int]]:
    return [(m.eps, m.delta, c) for m, c in comp.groups]


def tails_applies(comp: Composition) -> bool:
    """Whether the composition has one dominant group and few joint outcomes of the others."""
    if not comp.is_generic or len(comp.groups) < 2:
        return False
    gs = sorted(_groups(comp), key=lambda g: -g[2])
    if gs[0][2] < MIN_COUNT or gs[0][0].is_zero():
        return False
    combos = 1
    for _, _, c in gs[1:]:
        combos *= c + 1
        if combos > REST_CAP:
            return False
    return True


#: seconds an eps query by binomial tails takes: a start plus a cost per joint outcome of the small
#: groups (measured on the helpers' two-core machine under load, python benchmarks/bench_route_costs.py,
#: 10 digits: 6 outcomes 0.2-1.0 s, 301 1.1 s, 501 1.2 s, 801 1.9 s, 4,221 5.6 s)
TAILS_SECONDS_START, TAILS_SECONDS_PER_OUTCOME = 0.5, 1.2e-3  # float ok: a time estimate


def rest_outcomes(comp: Composition) -> int:
    """How many joint outcomes of the groups other than the largest the tails enumerate (before merging)."""
    gs = sorted(_groups(comp), key=lambda g: -g[2])
    out = 1
    for e, _, c in gs[1:]:
        out *= (c + 1) if not e.is_zero() else 1
    return out


def tails_seconds(comp: Composition) -> float:  # float ok: a time estimate
    """About how many seconds an eps query by binomial tails takes (a prediction that only chooses a
    route, :mod:`exactdp.route`).

    >>> c = Composition.heterogeneous([("0.013", 0, 30000), ("0.027", 0, 200), ("0.1", 0, 20)])
    >>> rest_outcomes(c), round(tails_seconds(c), 1)
    (4221, 5.6)
    """
    return TAILS_SECONDS_START + TAILS_SECONDS_PER_OUTCOME * rest_outcomes(comp)


class _Setup:
    """The dominant group T, the merged outcomes of the others, and prod (1 - delta_i)^{n_i}."""

    def __init__(self, comp: Composition) -> None:
        gs = sorted(_groups(comp), key=lambda g: -g[2])
        (self.eps_t, self.delta_t, self.n), rest = gs[0], gs[1:]
        self.rest = [(e, c) for e, _, c in rest if not e.is_zero()]
        self.deltas = [(d, c) for _, d, c in gs if d]
        # outcomes of the rest: loss sum (2 j_g - n_g) eps_g, exact keys (LinLog) merged
        outs: dict[LinLog, list[tuple[int, ...]]] = {}
        for v in itertools.product(*[range(c + 1) for _, c in self.rest]):
            L = LinLog(Fraction(0))
            for (e, c), j in zip(self.rest, v):
                if 2 * j - c:
                    L = L + LinLog.of(e).scale(2 * j - c)
            outs.setdefault(L, []).append(v)
        self.losses = list(outs)
        self.vecs = [outs[L] for L in self.losses]
        self.eps_t_ll = LinLog.of(self.eps_t)
        self._loss_arbs: list[arb] | None = None

    def log_pd(self) -> arb:
        """log prod (1 - delta_i)^{n_i}, at the working precision."""
        s = arb(0)
        for d, c in self.deltas:
            s += c * (-arb_of_fraction(d)).log1p()
        return s

    def threshold(self, x: LinLog, L: LinLog, x_arb: arb | None = None, L_arb: arb | None = None) -> int:
        """The least j in [0, n+1] with (2j - n) eps_T + L > x.

        Each comparison is the sign of a 128-bit ball when the ball excludes 0 (a proof), else the
        exact comparison of LinLogs.  ``x_arb``, ``L_arb``: x and L as 128-bit balls, if known.
        """
        n = self.n
        with ctx.workprec(128):
            xa = x.arb() if x_arb is None else x_arb
            La = L.arb() if L_arb is None else L_arb
            ea = self.eps_t_ll.arb()
            d = xa - La
            est = (d / ea + n) / 2
            if not est.is_finite():
                raise PrecisionError("a tail threshold could not be located")
            fl = est.mid().floor().unique_fmpz()
            assert fl is not None  # the floor of a finite ball's midpoint is an exact integer
            j = int(fl) + 1
            j = min(max(j, 0), n + 1)

            def above(jj: int) -> bool:  # (2 jj - n) eps_T + L > x
                v = ea * (2 * jj - n) - d
                if v > 0:
                    return True
                if v < 0:
                    return False
                return (self.eps_t_ll.scale(2 * jj - n) + L - x).sign() > 0

            while j > 0 and above(j - 1):
                j -= 1
            while j <= n and not above(j):
                j += 1
        return j

    def thresholds(self, x: LinLog) -> list[int]:
        """The threshold of every outcome of the rest at x."""
        if self._loss_arbs is None:
            with ctx.workprec(128):
                self._loss_arbs = [L.arb() for L in self.losses]
        with ctx.workprec(128):
            xa = x.arb()
        return [self.threshold(x, L, xa, La) for L, La in zip(self.losses, self._loss_arbs)]

    def weights(self) -> list[tuple[arb, arb]]:
        """(w_r, q_r): P- and Q-masses of the rest's outcomes, at the working precision."""
        tabs: list[list[tuple[arb, arb]]] = []
        for e, c in self.rest:
            y = e.exp_arb()
            p, q = y / (1 + y), 1 / (1 + y)
            binoms = [(arb.bin_uiui(c, j) if c < 2**62 else arb(fmpz(math.comb(c, j)))) for j in range(c + 1)]
            tabs.append([(b * p ** j * q ** (c - j), b * q ** j * p ** (c - j)) for j, b in enumerate(binoms)])
        out = []
        for vs in self.vecs:
            w = qm = arb(0)
            for v in vs:
                a = b = arb(1)
                for tab, j in zip(tabs, v):
                    a *= tab[j][0]
                    b *= tab[j][1]
                w += a
                qm += b
            out.append((w, qm))
        return out


def _tails(n: int, p: arb, ms: list[int]) -> dict[int, arb]:
    """P[Bin(n, p) >= m] for every m in ms: one incomplete beta, then binomial terms between them."""
    out: dict[int, arb] = {}
    todo = sorted(set(ms), reverse=True)
    inside = [m for m in todo if 0 < m <= n]
    for m in todo:
        if m <= 0:
            out[m] = arb(1)
        elif m > n:
            out[m] = arb(0)
    if not inside:
        return out
    if inside[0] - inside[-1] > WALK_CAP:
        for m in inside:
            progress.tick("binomial tails")
            out[m] = binomial_upper_tail(n, m, p)
        return out
    # walk down from the largest threshold: A(m-1) = A(m) + P[Bin = m-1], every term positive
    m0 = inside[0]
    acc = binomial_upper_tail(n, m0, p)
    out[m0] = acc
    q = 1 - p
    j = m0 - 1
    pm = binomial_pmf(n, j, p)  # P[Bin = j]
    for k, m in enumerate(inside[1:]):
        while j >= m:
            acc = acc + pm
            pm = pm * j / (n - j + 1) * q / p  # P[Bin = j-1] from P[Bin = j]
            j -= 1
        out[m] = acc
        if k % 64 == 0:
            progress.tick("binomial tails")
    return out


def _delta_pure_arb(s: _Setup, x: LinLog, ms: list[int], weights: list[tuple[arb, arb]]) -> arb:
    y = s.eps_t.exp_arb()
    p = y / (1 + y)
    A = _tails(s.n, p, ms)
    B = _tails(s.n, 1 - p, ms)
    ex = x.exp_arb()
    total = arb(0)
    for (w, q), m in zip(weights, ms):
        total += w * A[m] - ex * q * B[m]
    return total


def _thresholds(s: _Setup, x: LinLog) -> list[int]:
    return s.thresholds(x)


def _delta_opt(s: _Setup, x: LinLog, ms: list[int]) -> arb:
    dp = _delta_pure_arb(s, x, ms, s.weights())
    pd = s.log_pd().exp()
    # 1 - pd (1 - dp) = (1 - pd) + pd dp, both terms >= 0
    return -(s.log_pd().expm1()) + pd * dp


def tails_delta(comp: Composition, eps_g: ExactReal, *, digits: int = DEFAULT_DIGITS) -> Enclosure:
    """The optimal total delta at eps_g (Murtagh-Vadhan Thm 1.5 with binomial tails), certified."""
    s = _Setup(comp)
    x = LinLog.of(ExactReal.parse(eps_g, "eps_g"))
    ms = _thresholds(s, x)
    enc = certify(lambda: _delta_opt(s, x, ms), digits, algorithm=ALGORITHM)
    return enc.clamped(Fraction(0), Fraction(1))


def _infinite(s: _Setup, delta_g: Fraction) -> bool:
    """delta_g < 1 - prod(1 - delta_i)^{n_i}, decided in log space (a tie answers False)."""
    if not s.deltas:
        return False
    prec = 64
    while prec <= 1 << 14:
        with ctx.workprec(prec):
            d = s.log_pd() - (-arb_of_fraction(delta_g)).log1p()
        if d < 0:
            return True
        if d > 0:
            return False
        prec *= 2
    raise PrecisionError("delta_g equals 1 - prod(1 - delta_i)^{n_i} to 2^14 bits: no decision rather than a guess")


def _sa_sb(s: _Setup, ms: list[int], weights: list[tuple[arb, arb]]) -> tuple[arb, arb]:
    """(SA, SB) of a segment: delta_pure(x) = SA - e^x SB for every x whose thresholds are ``ms``."""
    y = s.eps_t.exp_arb()
    p = y / (1 + y)
    A = _tails(s.n, p, ms)
    B = _tails(s.n, 1 - p, ms)
    sa = sb = arb(0)
    for (w, q), m in zip(weights, ms):
        sa += w * A[m]
        sb += q * B[m]
    return sa, sb


def _start_bracket(s: _Setup, log_inv_t: float,  # float ok: search start only
                   above: Callable[[Fraction], bool]) -> tuple[Fraction, Fraction]:
    """[lo, hi] with ``above(lo)`` and not ``above(hi)`` (as the low-precision midpoints say), found
    from the central-limit guess mu + sigma sqrt(2 ln(1/t)) of the loss (P-mean mu, P-sd sigma: each
    (eps, n) group adds n eps tanh(eps/2) and n eps^2 / cosh(eps/2)^2), widened by doubling steps.
    Only a start for the search; nothing is certified here."""
    mu = var = 0.0
    for e, c in [(s.eps_t, s.n)] + s.rest:
        ef = float(e.arb().mid())  # float ok: search start only
        mu += c * ef * math.tanh(ef / 2)
        var += c * (ef / math.cosh(ef / 2)) ** 2
    sd = math.sqrt(var)  # float ok: search start only
    guess = max(mu + sd * math.sqrt(2 * max(log_inv_t, 0.0)), 0.0)  # float ok: search start only
    step = Fraction(max(sd, 1e-6)).limit_denominator(2**20)  # float ok: as above
    x = Fraction(guess).limit_denominator(2**20)
    if above(x):
        lo, hi = x, x + step
        while above(hi):
            lo, hi, step = hi, hi + 2 * step, 2 * step
            if hi > 2**60:
                raise PrecisionError("the eps of this composition is beyond 2^60")
        return lo, hi
    hi, lo = x, max(x - step, Fraction(0))
    while lo > 0 and not above(lo):
        hi, lo, step = lo, max(lo - 2 * step, Fraction(0)), 2 * step
    return lo, hi


def tails_epsilon(comp: Composition, delta_g: Fraction, *, digits: int = DEFAULT_DIGITS) -> Enclosure:
    """The optimal eps at total delta_g (+inf when delta_g < 1 - prod(1 - delta_i)), certified.

    delta_pure is convex, decreasing and piecewise affine in e^x (docs/mathematics.md §2), equal to
    SA - e^x SB on each segment of constant thresholds.  Newton's method on it, started at x = 0,
    increases to the root and reaches its segment in finitely many steps; there the root is the
    closed form x* = log((SA - t)/SB), t = 1 - (1 - delta_g)/prod(1 - delta_i), certified in Arb and
    checked to lie inside its segment.
    """
    s = _Setup(comp)
    delta_g = Fraction(delta_g)
    if _infinite(s, delta_g):
        return Enclosure.infinite(digits, ALGORITHM)

    def t_arb() -> arb:  # t = 1 - (1 - delta_g)/pd, at the working precision
        return 1 - arb_of_fraction(1 - delta_g) * (-s.log_pd()).exp()

    zero = LinLog(Fraction(0))
    ms0 = _thresholds(s, zero)
    if sign_at(lambda _: _delta_pure_arb(s, zero, ms0, s.weights()) - t_arb(), Fraction(0)) <= 0:
        return Enclosure.exact_value(Fraction(0), digits, ALGORITHM)
    # a start just left of the root: a bracket around a central-limit guess, then bisection on
    # low-precision midpoints down to a fraction of a segment (only a start: Newton's steps and the
    # final segment check decide)

    def above(xq: Fraction) -> bool:
        with ctx.workprec(64):
            v = _delta_pure_arb(s, LinLog(xq), _thresholds(s, LinLog(xq)), s.weights()) - t_arb()
        return bool(v.mid() > 0)

    with ctx.workprec(64):
        log_t = float(t_arb().log().mid()) if t_arb() > 0 else -745.0  # float ok: search start only
    lo_x, hi_x = _start_bracket(s, -log_t if math.isfinite(log_t) else 745.0, above)
    quarter = Fraction(float(s.eps_t.arb().mid()) / 4)  # float ok: a quarter segment, search start only
    for _ in range(80):
        if hi_x - lo_x <= max(quarter, (hi_x + lo_x) / 2**30):
            break
        mid = (lo_x + hi_x) / 2
        mid = Fraction(round(mid * 2**40), 2**40)
        if above(mid):
            lo_x = mid
        else:
            hi_x = mid
    x = lo_x
    ms = _thresholds(s, LinLog(x))
    for _ in range(500):
        progress.tick("Newton steps on the segments")
        with ctx.workprec(128):
            sa, sb = _sa_sb(s, ms, s.weights())
            r = (sa - t_arb()) / sb
            if not (r > 0):
                raise PrecisionError("the binomial-tail segment search lost its footing")
            nxt = fraction_of_arb_endpoints(r.log())[0]
        if nxt <= x:  # the line's root is not to the right: x's segment holds the root
            break
        ms_n = _thresholds(s, LinLog(nxt))
        if ms_n == ms:
            break
        x, ms = nxt, ms_n
    # the root of this segment's line, certified, and inside the segment
    weights = None

    def root() -> arb:
        nonlocal weights
        sa, sb = _sa_sb(s, ms, s.weights())
        return ((sa - t_arb()) / sb).log()

    enc = certify(root, digits, algorithm=ALGORITHM)
    assert isinstance(enc.lower, Fraction) and isinstance(enc.upper, Fraction)  # certify's ends are finite
    if _thresholds(s, LinLog(enc.lower)) == ms and _thresholds(s, LinLog(enc.upper)) == ms:
        return enc
    # the root sits at a breakpoint (to working precision): bracket it with the certified signs
    f = lambda e: _delta_opt(s, LinLog(fraction_of_arb_endpoints(e)[0]),
                             _thresholds(s, LinLog(fraction_of_arb_endpoints(e)[0]))) - arb_of_fraction(delta_g)
    a, b = enc.lower - abs(enc.lower) / 10**(digits + 2) - Fraction(1, 10**(digits + 2)), enc.upper + abs(enc.upper) / 10**(digits + 2)
    return decreasing_root(f, max(a, Fraction(0)), b, digits, algorithm=ALGORITHM)


def tails_decide(comp: Composition, eps_g: ExactReal, delta_g: Fraction) -> bool:
    """Whether the composition is (eps_g, delta_g)-DP: the certified sign of delta_opt(eps_g) - delta_g."""
    s = _Setup(comp)
    delta_g = Fraction(delta_g)
    if _infinite(s, delta_g):
        return False
    x = LinLog.of(ExactReal.parse(eps_g, "eps_g"))
    ms = _thresholds(s, x)
    sgn = sign_at(lambda _: _delta_opt(s, x, ms) - arb_of_fraction(delta_g), Fraction(0))
    if sgn == 0:
        raise PrecisionError("delta_opt(eps_g) equals delta_g to 2^17 bits: no decision rather than a guess")
    return sgn < 0
