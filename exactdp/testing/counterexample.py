"""Search for an exact counterexample to a claimed composition bound.

A claimed bound ``claimed_epsilon(eps, delta, k, delta_g)`` says: k-fold composition of
(eps, delta)-DP is (claimed, delta_g)-DP.  It is refuted by one input where the claim is below
the optimal eps OptComp(delta_g) (KOV15 Thm 3.3; Murtagh-Vadhan Thm 1.5 for a list).  The search
is deterministic: first the corners of a regime grid where closed-form bounds break (small and
large eps, k from 1 to 10^5 including k > 1025, delta_g from 1e-30 to 1/2, delta_g below the
feasibility threshold 1 - (1-delta)^k), then the rest of the grid in a fixed shuffled order; the first violation found
is shrunk locally toward small k and simple numbers, and returned as a :class:`Counterexample`.

A search never passes vacuously.  Each input tried is counted (:class:`SearchStats`) as
*checked* (the claim is a number, judged exactly), *declined* (the claim raised one of
:data:`DECLINES`, or returned None or +inf) or an *error* (it raised anything else, or returned
NaN, -inf or something that is not a number).  "No counterexample" (None) is returned only when
at least ``min_checked`` of the inputs tried (default :data:`MIN_CHECKED`, one half) were
checked; otherwise :class:`VacuousSearchError` says how many were tried, checked, declined and
errored, with the first error.
"""

from __future__ import annotations

import math
import random
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, fields
from fractions import Fraction
from functools import partial
from typing import Any

from exactdp.core.enclosure import Enclosure
from exactdp.core.errors import InvalidParameterError
from exactdp.core.numbers import format_fraction, parse_delta, parse_k
from exactdp.model.composition import Composition
from exactdp.testing.oracle import (
    InvalidClaimError,
    Oracle,
    Verdict,
    exact_of_reported,
    judge_epsilon,
    oracle_or_default,
    parse_rel_tol,
    short_repr,
)

__all__ = [
    "DECLINES",
    "DELTA_GRID",
    "DELTA_G_GRID",
    "EPS_GRID",
    "EPS_G_GRID",
    "K_GRID",
    "MIN_CHECKED",
    "Counterexample",
    "SearchStats",
    "VacuousSearchError",
    "covers_basic_delta",
    "find_counterexample",
    "find_counterexample_heterogeneous",
    "find_delta_counterexample",
]

F = Fraction
#: The regime grid (exact values).  Extremes first in each list.
EPS_GRID: tuple[Fraction, ...] = (F(1, 100), F(10), F(1, 10), F(1), F(1, 2), F(3))
DELTA_GRID: tuple[Fraction, ...] = (F(0), F(1, 10**6), F(1, 10**3))
K_GRID: tuple[int, ...] = (1, 1000, 2, 100, 10, 30, 2000, 100000)
DELTA_G_GRID: tuple[Fraction, ...] = (F(1, 10**12), F(1, 2), F(1, 10**6), F(1, 10**3), F(1, 10), F(1, 100),
                                      F(1, 10**15), F(1, 10**30))
#: The eps_g grid of the delta direction (:func:`find_delta_counterexample`).
EPS_G_GRID: tuple[Fraction, ...] = (F(1, 100), F(10), F(1, 10), F(1), F(1, 2), F(3), F(30))

#: Simple values tried by the shrinker (simplest first).
_SIMPLE_EPS = (F(1), F(2), F(1, 2), F(1, 10), F(5), F(10), F(1, 100), F(3))
_SIMPLE_DELTA = (F(0), F(1, 10**3), F(1, 10**6))
_SIMPLE_DELTA_G = (F(1, 2), F(1, 10), F(1, 100), F(1, 10**3), F(1, 10**6), F(1, 10**9), F(1, 10**12))


#: The exceptions by which a claim *declines* an input (outside its stated range, a math domain
#: error, an overflow): the input is skipped and counted as declined.  Anything else a claim
#: raises is an error, counted and reported, never silently taken as "no claim".
DECLINES: tuple[type[Exception], ...] = (ValueError, ArithmeticError)

#: Default least fraction of the inputs tried that must be checked for a search to return None.
MIN_CHECKED = Fraction(1, 2)


def _size(q: Fraction) -> int:
    return len(str(abs(q.numerator))) + len(str(q.denominator))


@dataclass
class SearchStats:
    """What one search did with the inputs it tried; ``tried == checked + declined + errors``.

    ``checked``: the claim was a number, judged exactly; ``declined``: the claim raised one of
    :data:`DECLINES` or returned None or +inf; ``errors``: it raised anything else or returned
    NaN, -inf or a non-number.  ``first_error`` / ``first_decline`` describe the first of each
    (the input and what happened).  Pass an instance as ``stats=`` to a search to read the counts
    after it (the search resets and fills it in); a :class:`VacuousSearchError` carries a copy.
    Shrinking a counterexample is not counted.
    """

    tried: int = 0
    checked: int = 0
    declined: int = 0
    errors: int = 0
    first_error: str | None = None
    first_decline: str | None = None

    def reset(self) -> None:
        for f in fields(self):
            setattr(self, f.name, f.default)

    def required(self, min_checked: Fraction) -> int:
        """The least number of checked claims for ``min_checked`` of the inputs tried (at least 1)."""
        return max(1, math.ceil(min_checked * self.tried))

    def summary(self) -> str:
        """``"tried T: C checked, D declined, E errors"``."""
        return f"tried {self.tried}: {self.checked} checked, {self.declined} declined, {self.errors} errors"


class VacuousSearchError(AssertionError):
    """A search checked too few claims for "no counterexample" to mean anything.

    ``.stats`` is the :class:`SearchStats` of the search; the first exception the claim raised,
    if any, is chained as ``__cause__``.
    """

    def __init__(self, message: str, stats: SearchStats) -> None:
        super().__init__(message)
        self.stats = stats


@dataclass(frozen=True)
class Counterexample:
    """An input where a claimed bound is below the certified optimum.

    ``mechanisms`` is the (eps, delta) list (``eps``, ``delta``, ``k`` are also set for a
    homogeneous claim); ``claimed`` the claim's exact value; ``optimum`` the certified enclosure
    of the optimal eps at ``delta_g`` (+inf when no eps is private there).
    """

    mechanisms: tuple[tuple[Fraction, Fraction], ...]
    delta_g: Fraction
    claimed: Fraction | float
    optimum: Enclosure
    relative_shortfall: Fraction | None
    eps: Fraction | None = None
    delta: Fraction | None = None
    k: int | None = None
    examples_tried: int = 0
    examples_checked: int = 0

    @property
    def composition(self) -> Composition:
        if self.k is not None:
            assert self.eps is not None and self.delta is not None  # set together with k
            return Composition.homogeneous(self.eps, self.delta, self.k)
        return Composition.heterogeneous(list(self.mechanisms))

    def __str__(self) -> str:
        if self.k is not None:
            assert self.eps is not None and self.delta is not None  # set together with k
            inp = f"eps={format_fraction(self.eps)}, delta={format_fraction(self.delta)}, k={self.k}"
        else:
            inp = _mechanisms_str(self.mechanisms)
        claimed = "inf" if isinstance(self.claimed, float) else format_fraction(self.claimed)
        if len(claimed) > 24:
            claimed = f"~{float(self.claimed)!r}"  # float ok: display only
        rel = ""
        if self.relative_shortfall is not None:
            rel = f" ({float(self.relative_shortfall):.3g} relative below it)"  # float ok: display only
        return (f"Counterexample({inp}, delta_g={format_fraction(self.delta_g)}: claimed eps {claimed} "
                f"< optimum {self.optimum}{rel})")


def _mechanisms_str(mechs: Sequence[tuple[Fraction, Fraction]]) -> str:
    runs: list[list[Any]] = []
    for m in mechs:
        if runs and runs[-1][0] == m:
            runs[-1][1] += 1
        else:
            runs.append([m, 1])
    return "mechanisms=" + " + ".join(
        f"{f'{c} x ' if c > 1 else ''}({format_fraction(e)}, {format_fraction(d)})" for (e, d), c in runs)


def _point_str(eps: Fraction, d: Fraction, k: int, dg: Fraction) -> str:
    return f"eps={format_fraction(eps)}, delta={format_fraction(d)}, k={k}, delta_g={format_fraction(dg)}"


def _delta_point_str(p: tuple[Fraction, Fraction, int, Fraction]) -> str:
    return f"eps={format_fraction(p[0])}, delta={format_fraction(p[1])}, k={p[2]}, eps_g={format_fraction(p[3])}"


def _exc_str(e: BaseException) -> str:
    """``"TypeError: message"`` on one line, at most 160 characters."""
    try:
        text = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
    except Exception:  # noqa: BLE001 - a broken __str__ may raise anything; the type's name is shown instead
        text = type(e).__name__
    text = " ".join(text.split())
    return text if len(text) <= 160 else text[:157] + "..."


#: exponents up to this are taken exactly in :func:`covers_basic_delta`; beyond, an Arb enclosure first
EXACT_POWER_MAX = 5000


def _delta_covered(delta_g: Fraction, pairs: Sequence[tuple[Fraction, int]]) -> bool:
    """Exactly whether delta_g >= 1 - prod (1 - delta_i)^n_i, never forming a huge exact power
    unless an enclosure at 1024 bits cannot separate the two (only at an exact tie)."""
    if all(d == 0 for d, _ in pairs):
        return delta_g >= 0
    if all(n <= EXACT_POWER_MAX for _, n in pairs):
        p = F(1)
        for d, n in pairs:
            p *= (1 - d) ** n
        return delta_g >= 1 - p
    from flint import arb, ctx

    for prec in (128, 1024):
        with ctx.workprec(prec):
            kept = arb(1)
            for d, n in pairs:
                kept *= (1 - arb(d.numerator) / d.denominator) ** n
            spent, dg = 1 - kept, arb(delta_g.numerator) / delta_g.denominator
            if spent < dg:
                return True
            if spent > dg:
                return False
    p = F(1)
    for d, n in pairs:
        p *= (1 - d) ** n
    return delta_g >= 1 - p


def covers_basic_delta(delta_g: Any, delta: Any, k: Any = 1) -> bool:
    """Whether delta_g >= 1 - (1 - delta)^k: the total delta of k (eps, delta)-DP mechanisms under
    basic composition (Dwork-Roth Thm 3.16; docs/mathematics.md §4), decided exactly.

    For a claim function that declines inputs no finite eps can meet.  Unlike ``1 - (1 - delta) ** k``
    on Fractions it costs microseconds at k = 10^5 (an Arb enclosure decides; the exact power is
    formed only at an exact tie).

    >>> covers_basic_delta("0.5", "0.001", 100000), covers_basic_delta("0.0019989", "0.001", 2)
    (False, False)
    >>> covers_basic_delta("0.001999", "0.001", 2)
    True
    """
    return _delta_covered(parse_delta(delta_g, "delta_g"), [(parse_delta(delta, "delta"), parse_k(k))])


def _basic_clears(claimed: Fraction, mechs: Sequence[tuple[Fraction, Fraction, int]], delta_g: Fraction) -> bool:
    """Cheap certificate of soundness: basic composition (Dwork-Roth Thm 3.16).

    ``mechs`` are (eps_i, delta_i, n_i): n_i copies.  The composition is (sum n_i eps_i,
    1 - prod(1 - delta_i)^n_i)-DP (docs/mathematics.md §4), so a claim >= sum n_i eps_i at
    delta_g >= 1 - prod(1 - delta_i)^n_i is sound without the oracle.
    """
    tot = sum((e * n for e, _, n in mechs), F(0))
    return claimed >= tot and _delta_covered(delta_g, [(d, n) for _, d, n in mechs])


class _Search:
    """Shared state of one search: the oracle, the tolerance, the counts."""

    def __init__(self, name: str, fn: Any, fn_name: str, *, oracle: Any, rel_tol: Any, max_examples: Any,
                 shrink: Any, min_checked: Any, stats: Any) -> None:
        self.name = name
        if not callable(fn):
            raise InvalidParameterError(f"{fn_name}={short_repr(fn)} must be callable")
        self.fn = fn
        self.oracle = Oracle(digits=15) if oracle is None else oracle_or_default(oracle)
        self.rel_tol = parse_rel_tol(rel_tol)
        self.max_examples = parse_k(max_examples, "max_examples")
        if not isinstance(shrink, bool):
            raise InvalidParameterError(f"shrink={short_repr(shrink)} must be True or False")
        self.shrink = shrink
        self.min_checked = parse_rel_tol(min_checked, "min_checked")
        if self.min_checked > 1:
            raise InvalidParameterError(f"min_checked={short_repr(min_checked)} must be a fraction between 0 and 1")
        if stats is not None and not isinstance(stats, SearchStats):
            raise InvalidParameterError(f"stats={short_repr(stats)} must be a SearchStats or None")
        self.stats = stats if stats is not None else SearchStats()
        self.stats.reset()
        self.counting = True
        self.first_exception: BaseException | None = None

    def ask(self, args: tuple[Any, ...], where: Callable[[], str]) -> Fraction | None:
        """Call the claim at one input and count what happened: its exact value, or None."""
        st = self.stats
        if self.counting:
            st.tried += 1
        try:
            raw = self.fn(*args)
        except DECLINES as e:
            self._declined(where, f"raised {_exc_str(e)}")
            return None
        except Exception as e:  # noqa: BLE001 - not a documented way to decline: an error, reported, never skipped
            if self.first_exception is None and self.counting:
                self.first_exception = e
            self._error(where, f"raised {_exc_str(e)}")
            return None
        if raw is None:
            self._declined(where, "returned None")
            return None
        try:
            claimed = exact_of_reported(raw, "claim")
        except InvalidClaimError:
            self._error(where, f"returned {short_repr(raw)}, which is not a number")
            return None
        if isinstance(claimed, float):  # +inf: claims nothing
            self._declined(where, "returned inf")
            return None
        if self.counting:
            st.checked += 1
        return claimed

    def _declined(self, where: Callable[[], str], what: str) -> None:
        if self.counting:
            self.stats.declined += 1
            if self.stats.first_decline is None:
                self.stats.first_decline = f"at {where()}: the claim {what}"

    def _error(self, where: Callable[[], str], what: str) -> None:
        if self.counting:
            self.stats.errors += 1
            if self.stats.first_error is None:
                self.stats.first_error = f"at {where()}: the claim {what}"

    def violation(self, claimed: Fraction | None, comp: Callable[[], Composition],
                  mechs: Sequence[tuple[Fraction, Fraction, int]], delta_g: Fraction) -> Verdict | None:
        if claimed is None:
            return None
        if claimed >= 0 and _basic_clears(claimed, mechs, delta_g):
            return None
        v = judge_epsilon(claimed, comp(), delta_g, oracle=self.oracle)
        if v.sound:
            return None
        if v.relative_shortfall is not None and v.relative_shortfall <= self.rel_tol:
            return None
        return v

    def no_counterexample(self) -> None:
        """None when enough claims were checked; else raise :class:`VacuousSearchError`."""
        st = self.stats
        need = st.required(self.min_checked)
        if st.checked < need:
            parts = [(f"{self.name} checked {st.checked} of {st.tried} claims (needs at least {need}: "
                      f"min_checked={format_fraction(self.min_checked)} of those tried); "
                      f"{st.declined} declined, {st.errors} errors")]
            if st.first_error is not None:
                parts.append(f"first error {st.first_error}")
            if st.first_decline is not None:
                parts.append(f"first decline {st.first_decline}")
            parts.append("no counterexample was found, but a search that checks so few claims proves nothing")
            raise VacuousSearchError("; ".join(parts), SearchStats(**vars(st))) from self.first_exception
        if st.errors:
            warnings.warn(f"{self.name}: {st.summary()}; first error {st.first_error}", RuntimeWarning,
                          stacklevel=3)


def _grid_order(points: list[Any], n_corners: int) -> list[Any]:
    """Corners first (the given head), then the rest in a fixed pseudo-random order."""
    head, tail = points[:n_corners], points[n_corners:]
    random.Random(20150611).shuffle(tail)
    return head + tail


def _homogeneous_points() -> list[tuple[Fraction, Fraction, int, Fraction]]:
    corners = []
    for eps in (EPS_GRID[0], EPS_GRID[1]):
        for k in (K_GRID[0], K_GRID[1]):
            for dg in (DELTA_G_GRID[0], DELTA_G_GRID[1]):
                for d in (F(0), F(1, 10**3)):
                    corners.append((eps, d, k, dg))
    rest = [(e, d, k, dg) for e in EPS_GRID for d in DELTA_GRID for k in K_GRID for dg in DELTA_G_GRID
            if (e, d, k, dg) not in corners]
    return _grid_order(corners + rest, len(corners))


def _ask_h(search: _Search, p: tuple[Fraction, Fraction, int, Fraction]) -> tuple[Fraction | None, Verdict | None]:
    eps, d, k, dg = p
    claimed = search.ask(p, lambda: _point_str(*p))
    return claimed, search.violation(claimed, lambda: Composition.homogeneous(eps, d, k),
                                     [(eps, d, k)], dg)


def find_counterexample(
    claimed_epsilon: Callable[[Fraction, Fraction, int, Fraction], Any],
    *,
    max_examples: int = 2000,
    rel_tol: Any = 0,
    shrink: bool = True,
    oracle: Oracle | None = None,
    min_checked: Any = MIN_CHECKED,
    stats: SearchStats | None = None,
) -> Counterexample | None:
    """Search for (eps, delta, k, delta_g) where ``claimed_epsilon`` is below the optimal eps.

    ``claimed_epsilon(eps, delta, k, delta_g)`` claims that k-fold composition of (eps, delta)-DP
    is (claimed, delta_g)-DP (delta_g is the total delta).  The optimum is KOV15 Thm 3.3; the
    verdict is exact (:func:`exactdp.testing.oracle.judge_epsilon`).  Returns the first violation
    in ``max_examples`` grid points, shrunk toward small k and simple numbers.  A claim declines
    an input by raising ValueError/ArithmeticError (:data:`DECLINES`) or returning None or inf;
    raising anything else, or returning NaN, -inf or a non-number, is an error.  Returns None
    only when there is no violation and at least ``min_checked`` (default one half) of the inputs
    tried were checked; otherwise raises :class:`VacuousSearchError` with the counts.  Pass a
    :class:`SearchStats` as ``stats`` to read the counts afterwards; on success with errors a
    RuntimeWarning says how many.  ``rel_tol`` forgives relative shortfalls up to it.

    >>> import math
    >>> def drv10_no_2(eps, delta, k, dg):  # Dwork-Rothblum-Vadhan without the 2 under the root
    ...     d1 = dg - k * delta
    ...     return math.sqrt(k * math.log(1 / d1)) * eps + k * eps * (math.exp(eps) - 1) if d1 > 0 else None
    >>> print(find_counterexample(drv10_no_2))  # doctest: +ELLIPSIS
    Counterexample(eps=0.01, delta=0, k=29, delta_g=0.000000000001: claimed eps ~0.2859... < optimum [0.28953531836807, 0.2895353183680701] (0.0123 relative below it))
    >>> def basic(eps, delta, k, dg):  # basic composition, Dwork-Roth Thm 3.16: sound
    ...     return k * eps if covers_basic_delta(dg, delta, k) else None
    >>> stats = SearchStats()
    >>> find_counterexample(basic, stats=stats) is None, stats.summary()
    (True, 'tried 1152: 648 checked, 504 declined, 0 errors')
    >>> find_counterexample(lambda eps, delta, k, dg: float("nan"))
    Traceback (most recent call last):
    ...
    exactdp.testing.counterexample.VacuousSearchError: find_counterexample checked 0 of 1152 claims (needs at least 576: min_checked=0.5 of those tried); 0 declined, 1152 errors; first error at eps=0.01, delta=0, k=1, delta_g=0.000000000001: the claim returned nan, which is not a number; no counterexample was found, but a search that checks so few claims proves nothing
    """
    search = _Search("find_counterexample", claimed_epsilon, "claimed_epsilon", oracle=oracle,
                     rel_tol=rel_tol, max_examples=max_examples, shrink=shrink, min_checked=min_checked,
                     stats=stats)
    found = None
    for point in _homogeneous_points()[: search.max_examples]:
        claimed, v = _ask_h(search, point)
        if v is not None:
            assert claimed is not None  # a violation has a claim
            found = (point, claimed, v)
            break
    if found is None:
        search.no_counterexample()
        return None
    tried, checked = search.stats.tried, search.stats.checked
    point, claimed, v = found
    if search.shrink:
        search.counting = False
        point, claimed, v = _shrink_homogeneous(search, point, claimed, v)
    eps, d, k, dg = point
    return Counterexample(((eps, d),) * k, dg, claimed, v.optimum, v.relative_shortfall, eps, d, k, tried, checked)


def _key_h(p: tuple[Fraction, Fraction, int, Fraction]) -> tuple[Any, ...]:
    eps, d, k, dg = p
    return (k, _size(eps), _size(d), _size(dg), eps, d, -dg)


def _neighbours_h(p: tuple[Fraction, Fraction, int, Fraction]) -> Iterator[tuple[Fraction, Fraction, int, Fraction]]:
    eps, d, k, dg = p
    for k2 in sorted({1, 2, k // 10, k // 2, k - 1}):
        if 1 <= k2 < k:
            yield (eps, d, k2, dg)
    for e2 in _SIMPLE_EPS:
        yield (e2, d, k, dg)
    for d2 in _SIMPLE_DELTA:
        yield (eps, d2, k, dg)
    for g2 in _SIMPLE_DELTA_G:
        yield (eps, d, k, g2)


def _shrink_homogeneous(search: _Search, point: Any, claimed: Fraction, v: Verdict,
                        budget: int = 120) -> tuple[Any, Fraction, Verdict]:
    """Greedy local shrink: move to any simpler neighbour that still violates, until none does."""
    improved = True
    while improved and budget > 0:
        improved = False
        for q in sorted(set(_neighbours_h(point)), key=_key_h):
            if _key_h(q) >= _key_h(point) or budget <= 0:
                continue
            budget -= 1
            c, w = _ask_h(search, q)
            if w is not None and c is not None:
                point, claimed, v, improved = q, c, w, True
                break
    return point, claimed, v


# -- heterogeneous ---------------------------------------------------------------------------

def _heterogeneous_lists() -> list[tuple[tuple[Fraction, Fraction], ...]]:
    z = F(0)
    lists: list[list[tuple[Fraction, Fraction]]] = [
        [(F(1, 100), z)] * 30 + [(F(1, 50), z)] * 10,
        [(F(1, 100), z)] * 20 + [(F(1), z)],
        [(F(1, 10), z)] * 50 + [(F(1, 5), z)] * 50,
        [(F(1, 10), z), (F(10), z)],
        [(F(1, 10), z), (F(1, 2), z), (F(1), z)],
        [(F(1, 10), z), (F(2, 10), z), (F(3, 10), z), (F(5, 10), z), (F(7, 10), z)],
        [(F(1, 2), z)] * 6 + [(F(1), z)] * 6,
        [(F(1, 10), F(1, 10**3)), (F(2), z)],
        [(F(1), F(1, 10)), (F(2), F(2, 10))],
        [(F(1, 10), z)] * 30 + [(F(3), z)] * 2,
        [(F(1), z), (F(2), z), (F(3), z)],
        [(F(1, 10), F(1, 10**6))] * 10 + [(F(1, 5), F(1, 10**6))] * 10,
        [(F(3), z)] * 4 + [(F(1, 10), z)] * 4,
        [(F(1, 2), z), (F(1), F(1, 10**3))],
    ]
    return [tuple(x) for x in lists]


def _ask_l(search: _Search, mechs: tuple[tuple[Fraction, Fraction], ...],
           dg: Fraction) -> tuple[Fraction | None, Verdict | None]:
    claimed = search.ask((list(mechs), dg), lambda: f"{_mechanisms_str(mechs)}, delta_g={format_fraction(dg)}")
    return claimed, search.violation(claimed, lambda: Composition.heterogeneous(list(mechs)),
                                     [(e, d, 1) for e, d in mechs], dg)


def find_counterexample_heterogeneous(
    claimed_epsilon_list: Callable[[list[tuple[Fraction, Fraction]], Fraction], Any],
    *,
    max_examples: int = 1000,
    rel_tol: Any = 0,
    shrink: bool = True,
    oracle: Oracle | None = None,
    min_checked: Any = MIN_CHECKED,
    stats: SearchStats | None = None,
) -> Counterexample | None:
    """Search for a mechanism list and delta_g where ``claimed_epsilon_list`` is below the optimum.

    ``claimed_epsilon_list(mechanisms, delta_g)`` gets a list of exact ``(eps_i, delta_i)`` pairs
    and the total delta_g and claims the composition is (claimed, delta_g)-DP.  The optimum is
    Murtagh-Vadhan Thm 1.5.  Mixed small/large eps, repeated mechanisms and tiny delta_g are tried
    first; a violation is shrunk by dropping mechanisms and simplifying numbers.  Declines,
    errors, ``min_checked`` and ``stats`` are as in :func:`find_counterexample`.

    >>> def basic(mechs, dg):  # basic composition, Dwork-Roth Thm 3.16: sound
    ...     no_delta = 1
    ...     for _, d in mechs:
    ...         no_delta *= 1 - d
    ...     return sum(e for e, _ in mechs) if dg >= 1 - no_delta else None
    >>> stats = SearchStats()
    >>> find_counterexample_heterogeneous(basic, stats=stats) is None, stats.summary()
    (True, 'tried 84: 73 checked, 11 declined, 0 errors')
    """
    search = _Search("find_counterexample_heterogeneous", claimed_epsilon_list, "claimed_epsilon_list",
                     oracle=oracle, rel_tol=rel_tol, max_examples=max_examples, shrink=shrink,
                     min_checked=min_checked, stats=stats)
    points = [(m, dg) for dg in (F(1, 10**12), F(1, 2), F(1, 10**6), F(1, 10**3), F(1, 10), F(1, 100))
              for m in _heterogeneous_lists()]
    found = None
    for mechs, dg in points[: search.max_examples]:
        claimed, v = _ask_l(search, mechs, dg)
        if v is not None:
            assert claimed is not None  # a violation has a claim
            found = (mechs, dg, claimed, v)
            break
    if found is None:
        search.no_counterexample()
        return None
    tried, checked = search.stats.tried, search.stats.checked
    mechs, dg, claimed, v = found
    if search.shrink:
        search.counting = False
        mechs, dg, claimed, v = _shrink_het(search, mechs, dg, claimed, v)
    return Counterexample(mechs, dg, claimed, v.optimum, v.relative_shortfall,
                          examples_tried=tried, examples_checked=checked)


def _key_l(p: tuple[tuple[tuple[Fraction, Fraction], ...], Fraction]) -> tuple[Any, ...]:
    mechs, dg = p
    return (len(mechs), sum(_size(e) + _size(d) for e, d in mechs), _size(dg), sum(e for e, _ in mechs), -dg)


def _neighbours_l(p: tuple[tuple[tuple[Fraction, Fraction], ...], Fraction]) -> Iterator[Any]:
    mechs, dg = p
    n = len(mechs)
    if n > 1:
        yield (mechs[: n // 2], dg)
        yield (mechs[n // 2:], dg)
        for i in range(n):
            yield (mechs[:i] + mechs[i + 1:], dg)
    for i, (e, d) in enumerate(mechs):
        for e2 in _SIMPLE_EPS:
            yield (mechs[:i] + ((e2, d),) + mechs[i + 1:], dg)
        if d:
            yield (mechs[:i] + ((e, F(0)),) + mechs[i + 1:], dg)
    for g2 in _SIMPLE_DELTA_G:
        yield (mechs, g2)


def _shrink_het(search: _Search, mechs: Any, dg: Fraction, claimed: Fraction, v: Verdict,
                budget: int = 120) -> tuple[Any, Fraction, Fraction, Verdict]:
    point = (mechs, dg)
    improved = True
    while improved and budget > 0:
        improved = False
        for q in sorted(set(_neighbours_l(point)), key=_key_l):
            if _key_l(q) >= _key_l(point) or budget <= 0:
                continue
            budget -= 1
            c, w = _ask_l(search, *q)
            if w is not None and c is not None:
                point, claimed, v, improved = q, c, w, True
                break
    return point[0], point[1], claimed, v


# -- the delta direction ---------------------------------------------------------------------------

def find_delta_counterexample(
    claimed_delta: Callable[[Fraction, Fraction, int, Fraction], Any],
    *,
    max_examples: int = 2000,
    rel_tol: Any = 0,
    oracle: Oracle | None = None,
    min_checked: Any = MIN_CHECKED,
    stats: SearchStats | None = None,
) -> Counterexample | None:
    """Search for (eps, delta, k, eps_g) where ``claimed_delta`` is below the optimal total delta.

    ``claimed_delta(eps, delta, k, eps_g)`` claims that k-fold composition of (eps, delta)-DP is
    (eps_g, claimed)-DP.  The optimum is delta_opt(eps_g) of KOV15 Thm 3.3, decided exactly.
    Same grid of eps, delta and k as :func:`find_counterexample` (k up to 10^5), eps_g over
    :data:`EPS_G_GRID`; declines, errors, ``min_checked`` and ``stats`` as there.  The returned
    :class:`Counterexample` carries eps_g in ``delta_g``'s place and the delta enclosure as
    ``optimum`` (it is not shrunk).

    >>> def basic(eps, delta, k, eps_g):  # basic composition: delta_g = k delta at eps_g >= k eps
    ...     return k * delta if eps_g >= k * eps else None
    >>> stats = SearchStats()
    >>> find_delta_counterexample(basic, stats=stats, min_checked=Fraction(1, 5)) is None, stats.summary()
    (True, 'tried 1008: 246 checked, 762 declined, 0 errors')
    >>> print(find_delta_counterexample(lambda eps, delta, k, eps_g: delta))  # drops the composition  # doctest: +ELLIPSIS
    Counterexample(...)
    """
    from exactdp.testing.judge import judge

    search = _Search("find_delta_counterexample", claimed_delta, "claimed_delta", oracle=oracle,
                     rel_tol=rel_tol, max_examples=max_examples, shrink=False, min_checked=min_checked,
                     stats=stats)
    points = [(e, d, k, g) for e in EPS_GRID for d in DELTA_GRID for k in K_GRID for g in EPS_G_GRID]
    for eps, d, k, eg in _grid_order(points, 0)[: search.max_examples]:
        p = (eps, d, k, eg)
        claimed = search.ask(p, partial(_delta_point_str, p))
        if claimed is None or claimed >= 1:
            continue
        v = judge(claimed, Composition.homogeneous(eps, d, k), eps_g=eg, oracle=search.oracle)
        if v.sound or (v.gap_upper is not None and v.gap_upper <= search.rel_tol):
            continue
        return Counterexample(((eps, d),) * k, eg, claimed, v.optimum, v.relative_shortfall, eps, d, k,
                              search.stats.tried, search.stats.checked)
    search.no_counterexample()
    return None
