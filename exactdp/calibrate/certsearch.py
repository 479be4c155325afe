"""The certified search behind every calibration (docs/calibration.md §2).

A calibration problem is a parameter ``x`` (a per-step eps, a scale factor, a count, a noise
scale, a sampling rate) and a monotone property "the composition at ``x`` meets the target":
true on one side of an unknown boundary ``x*``, false on the other (docs/mathematics.md §8).
``worse_up`` says which side: True when a larger ``x`` is less private (eps, k, q), False when it
is more private (sigma, Laplace scale).

A *probe* decides the property at one exact point and says how (:class:`Proof`): ``"meets"``,
``"fails"`` or ``"undecided"`` (a certified bracket that contains the target within its budget).
Only probes move the two ends of the answer:

* ``safe``: the best point proved to meet the target (the answer, ``value``);
* ``fail``: the nearest point beyond it proved to miss (``fails_at``).

Floats enter only to *choose* the next point (a secant estimate of the boundary from the probes'
approximate scores); they never decide anything, so a bad estimate costs time, never soundness.
The points are short decimals (the shortest decimal in a small window around the chosen point),
so the answer is a number a user can type.

>>> def probe(x):  # the property x <= 1/3, decided exactly
...     ok = x <= Fraction(1, 3)
...     return Outcome("meets" if ok else "fails", float(x - Fraction(1, 3)), Proof("meets" if ok else "fails", "exact"))  # float ok: doctest display
>>> r = search(probe, worse_up=True, x0=Fraction(1, 10), gap=Fraction(1, 1000))
>>> str(float(r.safe)), str(float(r.fail)), r.safe <= Fraction(1, 3) < r.fail, (r.fail - r.safe) / r.safe <= Fraction(1, 1000)  # float ok: doctest display
('0.3332', '0.33344', True, True)
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction

from exactdp.core import progress
from exactdp.core.errors import InvalidParameterError, TimeBudgetError

__all__ = [
    "InfeasibleTargetError",
    "Outcome",
    "Proof",
    "SearchResult",
    "integer_search",
    "search",
    "shortest_decimal_in",
]

Number = Fraction | int


class InfeasibleTargetError(InvalidParameterError):
    """No value of the calibrated parameter meets the target (e.g. even eps = 0 misses it)."""


@dataclass(frozen=True)
class Proof:
    """How one probe was decided.

    ``verdict``: ``"meets"``, ``"fails"`` or ``"undecided"``; ``how``: the certificate (``"exact
    decision"``, ``"Gaussian closed form"``, ``"PLD bracket"``, ``"drv10 enclosure"``, ...);
    ``quantity``: what the bracket encloses (``"delta(eps_g)"`` or ``"eps(delta_g)"``), with its
    exact ends ``lower`` and ``upper`` when there is one.
    """

    verdict: str
    how: str
    quantity: str = ""
    lower: Fraction | None = None
    upper: Fraction | None = None
    seconds: float = 0.0  # float ok: a timing

    def describe(self, bound: str, value: Fraction | None = None) -> str:
        """One line, e.g. ``delta(eps_g) in [9.1e-06, 9.3e-06] <= delta_g = 1e-05 (PLD bracket)``;
        with the bound's ``value`` the ends are printed with enough digits to show the comparison."""
        rel = {"meets": "<=", "fails": ">"}.get(self.verdict, "contains")
        if self.quantity and self.lower is not None and self.upper is not None:
            if self.lower == self.upper and _dec(self.lower, "down", 40) == _dec(self.lower, "up", 40):
                rng, sep = _dec(self.lower, "down", 40), " = "  # exactly that decimal (not a rounding of it)
            else:
                sep = " in "
                for d in range(6, 41, 2):
                    lo, hi = _dec(self.lower, "down", d), _dec(self.upper, "up", d)
                    if value is None or self.verdict == "undecided" or \
                            (self.verdict == "meets" and Fraction(hi) <= value) or \
                            (self.verdict == "fails" and Fraction(lo) > value):
                        break
                rng = f"[{lo}, {hi}]"
            return f"{self.quantity}{sep}{rng} {rel} {bound} ({self.how})"
        word = {"meets": "meets the target", "fails": "misses the target"}.get(self.verdict, "undecided")
        return f"{word} ({self.how})"

    def to_json(self) -> dict[str, object]:
        """``{"verdict", "how"[, "quantity", "lower", "upper"]}``: the bracket's ends as decimals
        rounded outward (lower down, upper up) to 12 significant digits, exact when shorter."""
        out: dict[str, object] = {"verdict": self.verdict, "how": self.how}
        if self.quantity:
            out["quantity"] = self.quantity
            out["lower"] = _dec(self.lower, "down", 12) if self.lower is not None else None
            out["upper"] = _dec(self.upper, "up", 12) if self.upper is not None else None
        return out


def _dec(q: Fraction, direction: str, digits: int) -> str:
    """q exactly when it is a decimal of at most ``digits`` significant digits, else rounded
    toward -inf ("down") or +inf ("up") to that many."""
    from exactdp.core.numbers import decimal_string, format_fraction

    s = format_fraction(q)
    if "/" not in s and len(s.lstrip("-").replace(".", "").strip("0")) <= digits:
        return s
    return decimal_string(q, digits, direction)  # type: ignore[arg-type]


@dataclass(frozen=True)
class Outcome:
    """What a probe returns: the verdict, an approximate signed score (negative: meets; used only
    to choose the next point), and the proof."""

    verdict: str
    score: float | None  # float ok: chooses probes only
    proof: Proof


@dataclass
class SearchResult:
    """The two certified ends reached, and the cost."""

    safe: Number | None
    fail: Number | None
    safe_proof: Proof | None
    fail_proof: Proof | None
    probes: int = 0
    undecided: list[Number] = field(default_factory=list)
    seconds: float = 0.0  # float ok: a timing
    stopped: str = ""       # why the search stopped before the gap target ("" if it reached it)
    at_limit: bool = False  # the safe end is the edge of the domain (nothing beyond it to fail)


# -- short decimals ---------------------------------------------------------------------------------

def shortest_decimal_in(a: Fraction, b: Fraction) -> Fraction:
    """The decimal with the fewest significant digits in [a, b] (0 < a <= b), nearest the middle.

    >>> shortest_decimal_in(Fraction(123449, 100000), Fraction(12351, 10000))
    Fraction(247, 200)
    >>> shortest_decimal_in(Fraction(1, 3), Fraction(1, 3))
    Fraction(1, 3)
    """
    if a > b:
        a, b = b, a
    if a == b:
        return a
    if a <= 0 <= b:
        return Fraction(0)
    neg = b < 0
    if neg:
        a, b = -b, -a
    mid = (a + b) / 2
    e = _floor_log10(b)
    step = Fraction(10) ** (e + 1)
    for _ in range(2000):
        n_lo = -((-a.numerator * step.denominator) // (a.denominator * step.numerator))  # ceil(a/step)
        n_hi = (b.numerator * step.denominator) // (b.denominator * step.numerator)    # floor(b/step)
        if n_lo <= n_hi:
            n = round(mid / step)
            n = min(max(n, n_lo), n_hi)
            out = n * step
            return -out if neg else out
        step /= 10
    out = mid  # unreachable for a < b; kept total
    return -out if neg else out


def _digits(q: Fraction) -> int:
    """Significant digits of q written as a decimal (a large number when it is not a decimal)."""
    from exactdp.core.numbers import format_fraction

    t = format_fraction(q)
    return 10**6 if "/" in t else len(t.lstrip("-").replace(".", "").strip("0"))


def _floor_log10(a: Fraction) -> int:
    e = (a.numerator.bit_length() - a.denominator.bit_length()) * 1233 // 4096
    while Fraction(10) ** e > a:
        e -= 1
    while Fraction(10) ** (e + 1) <= a:
        e += 1
    return e


# -- the search -------------------------------------------------------------------------------------

Probe = Callable[[Number], Outcome]


def _log(x: Number) -> float:  # float ok: a coordinate for the secant estimate only
    return math.log(x) if x > 0 else -math.inf  # float ok: a search heuristic: only picks the next probe, which is then certified


def search(probe: Probe, *, worse_up: bool, x0: Fraction, gap: Fraction,
           lo_limit: Fraction = Fraction(0), hi_limit: Fraction | None = None,
           deadline: float | None = None, label: str = "calibrate",  # float ok: a clock time, never a result
           max_probes: int = 200, polish: bool | Probe = True) -> SearchResult:
    """Find ``safe`` (proved to meet) and ``fail`` (proved to miss) with
    ``|fail - safe| <= gap * safe``, both short decimals, by certified probes only.

    ``x0 > 0`` is a first guess; the domain is ``(lo_limit, hi_limit]`` (``lo_limit`` itself is
    probed only when every point above it fails, or, for ``worse_up=False``, never).  ``polish``:
    once the gap is reached, probe the shortest decimal between the ends (worth it when probes near
    the boundary are cheap: exact decisions and closed forms); a probe given as ``polish`` is used
    for that one point instead (a cheap certified one that may answer "undecided").
    """
    start = time.monotonic()
    st = _State(probe, worse_up, start, deadline)
    x0 = Fraction(x0)
    if x0 <= lo_limit:
        raise InvalidParameterError(f"x0={x0} must be above the domain's lower end {lo_limit}")
    if hi_limit is not None and x0 > hi_limit:
        x0 = hi_limit

    # 1. bracket the boundary: a safe point and a failing point
    x = x0
    spread = Fraction(1, 2)
    while st.safe is None or st.fail is None:
        if st.out_of_time() or st.n >= max_probes:
            return st.result("time" if st.out_of_time() else "probes")
        progress.tick(f"bracketing, {st.n} probes")
        out = st.do(x)
        if out is None:
            return st.result("time")
        if st.safe is None and st.fail is None:  # undecided at the first point: look on both sides
            x = _step(x0, -spread if worse_up else spread, lo_limit, hi_limit)
            alt = _step(x0, spread if worse_up else -spread, lo_limit, hi_limit)
            st.do(alt)
            spread = min(spread * 2, Fraction(15, 16))
            continue
        if st.fail is None:  # go the less private way from the safe point
            assert st.safe is not None
            if hi_limit is not None and worse_up and st.safe[0] >= hi_limit:
                r = st.result("")
                r.at_limit = True
                return r
            nxt = st.extrapolate(toward_fail=True)
            if worse_up and hi_limit is not None:
                nxt = min(nxt, hi_limit)
            if not worse_up and nxt <= lo_limit * 2 + Fraction(1, 10**60):  # nearly down to the edge
                r = st.result("limit")
                r.at_limit = True
                return r
            x = nxt
        else:  # go the more private way from the failing point
            nxt = st.extrapolate(toward_fail=False)
            if worse_up and nxt <= lo_limit + (st.fail[0] - lo_limit) / 10**12:
                # every point down to near the edge fails: try the edge itself
                edge = st.do_edge(lo_limit)
                if edge is None or edge.verdict != "meets":
                    raise InfeasibleTargetError(f"no value above {lo_limit} meets the target"
                                                + ("" if edge is None else f" ({edge.proof.describe('the target')})"))
                break
            if not worse_up and nxt > 10**15 * x0:
                raise InfeasibleTargetError(f"no value up to {float(nxt):.3g} meets the target")  # float ok: message
            x = nxt

    # 2. narrow the bracket to the gap, alternating the side aimed at
    aim_fail = True
    polished = False
    history: list[Fraction] = []
    while True:
        assert st.safe is not None and st.fail is not None
        s, f = Fraction(st.safe[0]), Fraction(st.fail[0])
        width = abs(f - s)
        ref = s if s != 0 else f
        if width <= gap * abs(ref):
            if polish and not polished:
                # the shortest decimal strictly between the ends: one more probe, and either end
                # it moves becomes shorter and nearer the boundary
                polished = True
                lo_in, hi_in = min(s, f), max(s, f)
                c = shortest_decimal_in(lo_in + width / 10**6, hi_in - width / 10**6)
                if _digits(c) < _digits(s) and c not in st.tried and \
                        st.do(c, None if polish is True else polish) is not None:
                    continue
            return st.result("")
        if st.out_of_time() or st.n >= max_probes:
            return st.result("time" if st.out_of_time() else "probes")
        progress.tick(f"between {float(s):.6g} and {float(f):.6g}, {st.n} probes")  # float ok: a message
        history.append(width)
        est = st.estimate()
        lo_in, hi_in = min(s, f), max(s, f)
        stalled = len(history) >= 4 and history[-1] > history[-4] / 3
        if est is None or stalled:
            p = _middle(lo_in, hi_in)
            history.clear()
        else:
            margin = min(gap * abs(est) / 3, width / 4)
            # aim just beyond the estimate on the side whose end is to move
            toward_hi = aim_fail == worse_up
            p = est + margin if toward_hi else est - margin
            p = min(max(p, lo_in + width / 20), hi_in - width / 20)
        tol = min(gap * abs(p) / 12, width / 20)
        p = shortest_decimal_in(max(p - tol, lo_in + width / 100), min(p + tol, hi_in - width / 100))
        if p in st.tried or p in (s, f):
            # the estimate points at a place already probed (undecided there): probe the middle of
            # the larger stretch between an end and the undecided points
            zone = sorted(Fraction(u) for u in st.undecided if lo_in < u < hi_in)
            stretches = [(lo_in, zone[0]), (zone[-1], hi_in)] if zone else [(lo_in, hi_in)]
            a, b = max(stretches, key=lambda ab: ab[1] - ab[0])
            if b - a <= gap * abs(ref) / 4:
                return st.result("undecided")
            p = shortest_decimal_in(a + (b - a) * 2 / 5, a + (b - a) * 3 / 5)
            if p in st.tried:
                return st.result("undecided")
        out = st.do(p)
        if out is None:
            return st.result("time")
        if out.verdict != "undecided":
            aim_fail = out.verdict == "meets"  # the safe end moved: move the failing end next


def _middle(a: Fraction, b: Fraction) -> Fraction:
    """The geometric middle of [a, b] when both are positive and far apart, else the arithmetic one."""
    if a > 0 and b / a > 4:
        g = math.sqrt(float(a) * float(b))  # float ok: chooses a probe
        return Fraction(g).limit_denominator(10**12) if a < Fraction(g) < b else (a + b) / 2
    return (a + b) / 2


def _step(x: Fraction, rel: Fraction, lo_limit: Fraction, hi_limit: Fraction | None) -> Fraction:
    y = x * (1 + rel)
    if y <= lo_limit:
        y = (x + lo_limit) / 2
    if hi_limit is not None and y > hi_limit:
        y = hi_limit
    return shortest_decimal_in(y * (1 - abs(rel) / 8), y * (1 + abs(rel) / 8)) if y > 0 else y


class _State:
    def __init__(self, probe: Probe, worse_up: bool, start: float, deadline: float | None) -> None:  # float ok: a clock time, never a result
        self.probe, self.worse_up, self.start, self.deadline = probe, worse_up, start, deadline
        self.safe: tuple[Number, float | None, Proof] | None = None  # float ok: scores
        self.fail: tuple[Number, float | None, Proof] | None = None
        self.points: list[tuple[Number, float]] = []  # float ok: (x, score) of every scored probe
        self.n = 0
        self.tried: set[Number] = set()
        self.undecided: list[Number] = []
        self.illinois = {"safe": 0, "fail": 0}
        self.last_moved = ""

    def out_of_time(self) -> bool:
        return self.deadline is not None and time.monotonic() >= self.deadline

    def _better_safe(self, x: Number) -> bool:
        return self.safe is None or ((x > self.safe[0]) if self.worse_up else (x < self.safe[0]))

    def _better_fail(self, x: Number) -> bool:
        return self.fail is None or ((x < self.fail[0]) if self.worse_up else (x > self.fail[0]))

    def do(self, x: Number, probe: Probe | None = None) -> Outcome | None:
        try:
            out = (probe or self.probe)(x)
        except TimeBudgetError:
            return None
        self.n += 1
        self.tried.add(x)
        if out.score is not None and math.isfinite(out.score):
            self.points.append((x, out.score))
        if out.verdict == "meets":
            if self._better_safe(x):
                self.safe = (x, out.score, out.proof)
                self.illinois["fail"] += 1 if self.last_moved == "safe" else 0
                self.illinois["safe"] = 0
                self.last_moved = "safe"
        elif out.verdict == "fails":
            if self._better_fail(x):
                self.fail = (x, out.score, out.proof)
                self.illinois["safe"] += 1 if self.last_moved == "fail" else 0
                self.illinois["fail"] = 0
                self.last_moved = "fail"
        else:
            self.undecided.append(x)
        return out

    def do_edge(self, x: Number) -> Outcome | None:
        return self.do(x)

    def extrapolate(self, toward_fail: bool) -> Fraction:
        """The next point outward from the one end found, by a secant on the scores in log-log
        space when two scored points exist (the step bounded to a factor in [1.5, 64]), else x4."""
        end = self.safe if toward_fail else self.fail
        assert end is not None
        x = Fraction(end[0])
        up = toward_fail == self.worse_up
        factor = 4.0  # float ok: a step size
        pts = sorted(self.points, key=lambda p: abs(_log(p[0]) - _log(x)))[:2]
        if len(pts) == 2 and pts[0][0] != pts[1][0] and x > 0:
            (x1, s1), (x2, s2) = pts
            u1, u2 = _log(x1), _log(x2)
            if s1 != s2 and math.isfinite(u1) and math.isfinite(u2):
                u = u1 - s1 * (u2 - u1) / (s2 - s1)
                f = math.exp(min(max(u - _log(x), -50.0), 50.0))  # float ok: a search heuristic: only picks the next probe, which is then certified
                f = f if up else 1 / f
                if math.isfinite(f) and f > 1:
                    factor = min(max(f * 1.1, 1.5), 64.0)
        y = x * Fraction(factor).limit_denominator(1000) if up else x / Fraction(factor).limit_denominator(1000)
        return shortest_decimal_in(y * Fraction(31, 32), y * Fraction(33, 32))

    def estimate(self) -> Fraction | None:
        """A secant (Illinois) estimate of the boundary between the two ends, or None."""
        assert self.safe is not None and self.fail is not None
        (xs, ss, _), (xf, sf, _) = self.safe, self.fail
        if ss is None or sf is None or not (ss < 0 < sf) or xs <= 0 or xf <= 0:
            return None
        ss = ss / 2 ** min(self.illinois["safe"], 30)
        sf = sf / 2 ** min(self.illinois["fail"], 30)
        us, uf = _log(xs), _log(xf)
        u = us + (0 - ss) * (uf - us) / (sf - ss)
        e = Fraction(math.exp(u)).limit_denominator(10**15)  # float ok: a search heuristic: only picks the next probe, which is then certified
        lo, hi = min(xs, xf), max(xs, xf)
        return e if lo < e < hi else None

    def result(self, stopped: str) -> SearchResult:
        return SearchResult(
            self.safe[0] if self.safe else None, self.fail[0] if self.fail else None,
            self.safe[2] if self.safe else None, self.fail[2] if self.fail else None,
            self.n, self.undecided, time.monotonic() - self.start, stopped)


# -- integers -------------------------------------------------------------------------------------

def integer_search(probe: Probe, *, x0: int, deadline: float | None = None, label: str = "calibrate k",  # float ok: a clock time, never a result
                   max_value: int = 10**15, max_probes: int = 400) -> SearchResult:
    """The largest integer k >= 1 that meets the target (a larger k is less private): ``safe = k``
    proved to meet, ``fail = k + 1`` proved to miss when the probes can separate them.

    >>> r = integer_search(lambda k: Outcome("meets" if k <= 1234 else "fails", float(k - 1234.5),  # float ok: doctest display
    ...                                      Proof("meets" if k <= 1234 else "fails", "exact")), x0=1)
    >>> r.safe, r.fail
    (1234, 1235)
    """
    start = time.monotonic()
    st = _State(probe, True, start, deadline)
    x = max(int(x0), 1)
    while st.safe is None or st.fail is None:
        if st.out_of_time() or st.n >= max_probes:
            return st.result("time" if st.out_of_time() else "probes")
        progress.tick(f"bracketing, {st.n} probes")
        out = st.do(x)
        if out is None:
            return st.result("time")
        if out.verdict == "undecided" and st.safe is None and st.fail is None:
            if x == 1:
                x = 2
            else:
                st.do(max(1, x // 2))
                x = x * 2
            continue
        if st.fail is None:
            assert st.safe is not None
            if st.safe[0] >= max_value:
                r = st.result("limit")
                r.at_limit = True
                return r
            nxt = int(st.extrapolate(toward_fail=True))
            x = min(max(nxt, int(st.safe[0]) + 1), max_value)
        else:
            if st.fail[0] <= 1:
                raise InfeasibleTargetError("not even one run meets the target")
            nxt = int(st.extrapolate(toward_fail=False))
            x = max(min(nxt, int(st.fail[0]) - 1), 1)
    aim_fail = True
    history: list[int] = []
    while True:
        assert st.safe is not None and st.fail is not None
        s, f = int(st.safe[0]), int(st.fail[0])
        if f - s <= 1:
            return st.result("")
        if st.out_of_time() or st.n >= max_probes:
            return st.result("time" if st.out_of_time() else "probes")
        progress.tick(f"between {s} and {f}, {st.n} probes")
        history.append(f - s)
        est = st.estimate()
        stalled = len(history) >= 4 and history[-1] * 3 > history[-4]
        if f - s <= 1 + len(st.undecided) and all(k in st.undecided for k in range(s + 1, f)):
            return st.result("undecided")
        if est is None or stalled:
            p = (s + f) // 2
            history.clear()
        else:
            e = float(est)  # float ok: chooses a probe
            p = math.floor(e) + (1 if aim_fail else 0)
        p = min(max(p, s + 1), f - 1)
        if p in st.undecided:  # the nearest point not tried yet (one exists: checked above)
            p = next(k for d in range(1, f - s) for k in (p + d, p - d) if s < k < f and k not in st.undecided)
        out = st.do(p)
        if out is None:
            return st.result("time")
        if out.verdict != "undecided":
            aim_fail = out.verdict == "meets"
