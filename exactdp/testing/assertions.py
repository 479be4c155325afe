"""Assertions for a DP library's test suite (docs/kit.md §3).

An accountant's eps (or delta) is a claimed *upper bound* on the optimum; it is wrong only when
it is below the optimum (KOV15 Thm 3.3 / Murtagh-Vadhan Thm 1.5 for generic mechanisms, the
certified PLD bracket of docs/pld.md for Gaussian, Laplace and subsampled ones).  Every check
here is decided exactly by :func:`exactdp.testing.judge.judge` and fails with a message giving the
inputs, the reported value and the certified optimum:

- :func:`assert_sound`: a reported eps at total ``delta_g``, or an ``(eps, delta)`` pair
  (OpenDP's ``map``, diffprivlib's budget);
- :func:`assert_sound_delta`: a reported delta at ``eps_g``;
- :func:`assert_sound_pair`: the claim "the composition is (eps, delta)-DP";
- :func:`assert_sound_curve`: every point of a reported curve;
- :func:`assert_tight`: two-sided, sound and at most ``rel`` above the optimum;
- :func:`looseness_report`: how far above the optimum each reported point is.

A claim inside a bracket that the time budget cannot settle fails with
:class:`UndecidedClaimError`: a check that was not made passes nothing.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Literal

from exactdp.core.errors import InvalidParameterError
from exactdp.core.numbers import exact_floats_enabled, format_fraction
from exactdp.testing.judge import Judgement, judge
from exactdp.testing.oracle import (
    InvalidClaimError,
    Oracle,
    oracle_or_default,
    parse_rel_tol,
    read_composition,
    short_repr,
)

__all__ = [
    "InvalidClaimError",
    "LoosenessReport",
    "TooLooseError",
    "UndecidedClaimError",
    "UnsoundClaimError",
    "assert_sound",
    "assert_sound_curve",
    "assert_sound_delta",
    "assert_sound_pair",
    "assert_tight",
    "looseness_report",
    "raise_failures",
]


class UnsoundClaimError(AssertionError):
    """A reported eps or delta is below the certified optimum; ``.verdict`` holds the details."""

    def __init__(self, verdict: Any, message: str | None = None) -> None:
        super().__init__(message or verdict.describe())
        self.verdict = verdict


class UndecidedClaimError(AssertionError):
    """The claim lies inside the certified bracket and the budget could not decide it.

    Not a pass: raise ``max_seconds`` (or the plugin's ``--exactdp-max-seconds``), or check a
    claim outside the bracket.  ``.verdict`` is the :class:`~exactdp.testing.judge.Judgement`.
    """

    def __init__(self, verdict: Any) -> None:
        super().__init__(verdict.describe())
        self.verdict = verdict


class TooLooseError(AssertionError):
    """A sound claim that is more than the allowed relative amount above the optimum."""

    def __init__(self, verdict: Any, rel: Fraction) -> None:
        super().__init__(f"{verdict.describe()}; assert_tight allows at most {float(rel):.3g} relative above "  # float ok
                         "the optimum")
        self.verdict = verdict
        self.rel = rel


def _oracle(oracle: Any, exact_floats: Any, max_seconds: Any) -> Oracle:
    """The oracle to judge with: ``oracle`` (or a fresh one) with the per-call overrides."""
    o = oracle_or_default(oracle)
    changes: dict[str, Any] = {}
    if exact_floats is not None:
        if not isinstance(exact_floats, bool):
            raise InvalidParameterError(f"exact_floats={short_repr(exact_floats)} must be True, False or None")
        changes["exact_floats"] = exact_floats
    elif exact_floats_enabled() and not o.exact_floats:
        changes["exact_floats"] = True  # the plugin's --exactdp-exact-floats, or an exact_floats() block
    if max_seconds is not None:
        changes["max_seconds"] = max_seconds
    return dataclasses.replace(o, **changes) if changes else o


def _check(v: Judgement, tol: Fraction) -> Judgement:
    if v.sound or v.verdict == "lower-estimate":
        return v
    if v.verdict == "undecided":
        raise UndecidedClaimError(v)
    if tol > 0 and v.gap_upper is not None and v.gap_upper <= tol:
        return v  # certified to be at most rel_tol below
    raise UnsoundClaimError(v)


def raise_failures(bad: list[Any], total: int, what: str) -> None:
    """Raise for the failing points of a reported curve (``what``: "orders of the RDP curve", ...):
    :class:`UndecidedClaimError` when every failure is undecided, else :class:`UnsoundClaimError`
    for the first unsound one, the message naming each failing point on one line."""
    if not bad:
        return
    if all(v.verdict == "undecided" for v in bad):
        raise UndecidedClaimError(bad[0]) from None
    msg = f"{len(bad)} of {total} {what} fail: " + "; ".join(v.describe() for v in bad)
    raise UnsoundClaimError(next(v for v in bad if v.verdict != "undecided"), msg)


def assert_sound(
    reported_epsilon: Any,
    *,
    composition: Any,
    delta_g: Any = None,
    rel_tol: Any = 0,
    oracle: Oracle | None = None,
    exact_floats: bool | None = None,
    max_seconds: Any = None,
    relation: Any = None,
) -> Judgement:
    """Assert that ``reported_epsilon`` >= the optimal eps of ``composition`` at total ``delta_g``.

    ``composition`` is anything :meth:`exactdp.Composition.of` accepts: an ``(eps, delta, k)``
    triple, a list of ``(eps, delta[, count])`` entries, mechanisms
    (``[(PoissonSampled(Gaussian("1"), "0.01"), 1000)]``) or spec strings
    (``"gaussian:sigma=1,q=0.01,count=1000"``); or a dp_accounting ``DpEvent`` (under ``relation``,
    default add-remove) or accountant, an Opacus accountant, an :class:`exactdp.Accountant`
    (:func:`exactdp.from_accountant`, docs/kit.md §1; every assertion reads it so).  Called without ``delta_g`` on an
    ``(eps, delta)`` pair it checks the pair (:func:`assert_sound_pair`).  A float reported value
    is taken at its exact binary value, +inf is trivially sound, a value that is not a number
    fails with :class:`InvalidClaimError`.  ``exact_floats=True`` reads float *inputs* (the
    composition, delta_g) at their exact binary value.  ``rel_tol`` lets a claim pass that is
    certified to be at most that relative amount below the optimum.  ``max_seconds`` bounds each
    bracket and decision on a mechanism composition; a claim the budget cannot settle fails with
    :class:`UndecidedClaimError`.  Returns the :class:`~exactdp.testing.judge.Judgement`; raises
    :class:`UnsoundClaimError`.

    >>> from exactdp.testing import assert_sound
    >>> assert_sound(3, composition=("0.1", 0, 30), delta_g="1e-3").sound
    True
    >>> assert_sound(1.4, composition=("0.1", 0, 30), delta_g="1e-3")
    Traceback (most recent call last):
    ...
    exactdp.testing.assertions.UnsoundClaimError: composition 30 x (0.1, 0)-DP, delta_g=0.001: reported eps = ~1.4, certified optimum in [1.48114398053990720461, 1.48114398053990720462] -> UNSOUND, 0.0548 relative below the optimum
    >>> assert_sound((2.5, 1e-3), composition=("0.1", 0, 30)).verdict     # an (eps, delta) pair
    'loose'
    """
    composition = read_composition(composition, relation)
    if delta_g is None:
        if isinstance(reported_epsilon, (tuple, list)) and len(reported_epsilon) == 2:
            eps, delta = reported_epsilon
            return assert_sound_pair(eps, delta, composition=composition, rel_tol=rel_tol, oracle=oracle,
                                     exact_floats=exact_floats, max_seconds=max_seconds)
        raise InvalidParameterError("delta_g is required (or pass an (eps, delta) pair as the claim)")
    tol = parse_rel_tol(rel_tol)
    o = _oracle(oracle, exact_floats, max_seconds)
    return _check(judge(reported_epsilon, composition, delta_g=delta_g, oracle=o), tol)


def assert_sound_delta(
    reported_delta: Any,
    *,
    composition: Any,
    eps_g: Any,
    rel_tol: Any = 0,
    oracle: Oracle | None = None,
    exact_floats: bool | None = None,
    max_seconds: Any = None,
    relation: Any = None,
) -> Judgement:
    """Assert that ``reported_delta`` >= the optimal total delta of ``composition`` at ``eps_g``.

    Same conventions as :func:`assert_sound`.

    >>> assert_sound_delta("0.28", composition=[("1", "0.1"), ("2", "0.2")], eps_g=3).sound
    True
    """
    composition = read_composition(composition, relation)
    tol = parse_rel_tol(rel_tol)
    o = _oracle(oracle, exact_floats, max_seconds)
    return _check(judge(reported_delta, composition, eps_g=eps_g, oracle=o), tol)


def _pair_delta(delta: Any) -> Any:
    """A reported delta as a delta_g input: floats are the library's own numbers, read exactly."""
    from exactdp.testing.oracle import exact_of_reported

    d = exact_of_reported(delta, "reported delta")
    if isinstance(d, float):
        raise InvalidClaimError(f"reported delta={short_repr(delta)} must be a finite number", delta)
    if not 0 <= d < 1:
        raise InvalidClaimError(f"reported delta={short_repr(delta)} must satisfy 0 <= delta < 1", delta)
    return d


def assert_sound_pair(
    eps: Any,
    delta: Any,
    *,
    composition: Any,
    rel_tol: Any = 0,
    oracle: Oracle | None = None,
    exact_floats: bool | None = None,
    max_seconds: Any = None,
    relation: Any = None,
) -> Judgement:
    """Assert the claim "``composition`` is (``eps``, ``delta``)-DP" (OpenDP / diffprivlib style).

    Both numbers are the library's (floats at their exact binary value).  The pair is sound iff
    eps >= the optimal eps at delta_g = delta, which is how it is judged (so the message gives
    the optimum and the gap).

    >>> assert_sound_pair(1.5, 1e-3, composition=("0.1", 0, 30)).sound
    True
    """
    d = _pair_delta(delta)
    return assert_sound(eps, composition=composition, delta_g=d, rel_tol=rel_tol, oracle=oracle,
                        exact_floats=exact_floats, max_seconds=max_seconds, relation=relation)


def _points(curve: Any) -> list[tuple[Any, Any]]:
    if isinstance(curve, Mapping):
        pts = list(curve.items())
    elif isinstance(curve, (str, bytes)) or not isinstance(curve, Iterable):
        raise InvalidParameterError(f"curve={short_repr(curve)} must be a mapping or a list of (at, value) pairs")
    else:
        pts = list(curve)
    for p in pts:
        if not (isinstance(p, (tuple, list)) and len(p) == 2):
            raise InvalidParameterError(f"curve point {short_repr(p)} must be an (at, value) pair")
    if not pts:
        raise InvalidParameterError("curve=[] has no point: an empty curve checks nothing")
    return pts


def assert_sound_curve(
    curve: Any,
    *,
    composition: Any,
    query: Literal["epsilon", "delta"] = "epsilon",
    rel_tol: Any = 0,
    oracle: Oracle | None = None,
    exact_floats: bool | None = None,
    max_seconds: Any = None,
    relation: Any = None,
) -> list[Judgement]:
    """Assert every point of a reported curve: ``{delta_g: eps}`` (``query="epsilon"``) or
    ``{eps_g: delta}`` (``query="delta"``), a mapping or a list of pairs.

    Every point is judged; the failure lists each unsound or undecided point.  The ``at``
    values are inputs (exact; floats only with ``exact_floats``), the reported ones the
    library's numbers.

    >>> len(assert_sound_curve({"1e-3": 1.49, "1e-6": 2.6}, composition=("0.1", 0, 30)))
    2
    """
    if not isinstance(query, str) or query not in ("epsilon", "delta"):
        raise InvalidParameterError(f"query={short_repr(query)} must be 'epsilon' or 'delta'")
    composition = read_composition(composition, relation)
    tol = parse_rel_tol(rel_tol)
    o = _oracle(oracle, exact_floats, max_seconds)
    out, bad = [], []
    for at, value in _points(curve):
        kw = {"delta_g": at} if query == "epsilon" else {"eps_g": at}
        v = judge(value, composition, oracle=o, **kw)
        out.append(v)
        try:
            _check(v, tol)
        except (UnsoundClaimError, UndecidedClaimError):
            bad.append(v)
    if bad:
        lines = [f"{len(bad)} of {len(out)} points of the curve fail:"] + [f"  {v.describe()}" for v in bad]
        first = bad[0]
        if all(v.verdict == "undecided" for v in bad):
            raise UndecidedClaimError(first) from None
        err = UnsoundClaimError(next(v for v in bad if v.verdict != "undecided"), "\n".join(lines))
        raise err
    return out


def assert_tight(
    reported: Any,
    *,
    composition: Any,
    delta_g: Any = None,
    eps_g: Any = None,
    rel: Any = "1e-3",
    oracle: Oracle | None = None,
    exact_floats: bool | None = None,
    max_seconds: Any = None,
    relation: Any = None,
) -> Judgement:
    """Two-sided: the claim is sound *and* certified at most ``rel`` (relative) above the optimum.

    Pass ``delta_g`` for an eps, ``eps_g`` for a delta.  Fails with :class:`UnsoundClaimError`
    below the optimum, :class:`TooLooseError` when it is certainly more than ``rel`` above, and
    :class:`UndecidedClaimError` when the certified bracket is too wide to tell (a mechanism
    bracket refined within ``max_seconds``).

    >>> assert_tight(1.4811439805399075, composition=("0.1", 0, 30), delta_g="1e-3", rel="1e-12").verdict
    'sound'
    >>> assert_tight(1.6, composition=("0.1", 0, 30), delta_g="1e-3", rel="0.01")
    Traceback (most recent call last):
    ...
    exactdp.testing.assertions.TooLooseError: composition 30 x (0.1, 0)-DP, delta_g=0.001: reported eps = ~1.6, certified optimum in [1.48114398053990720461, 1.48114398053990720462] -> sound but LOOSE, 0.0802 relative above the optimum; assert_tight allows at most 0.01 relative above the optimum
    """
    composition = read_composition(composition, relation)
    r = parse_rel_tol(rel, "rel")
    o = _oracle(oracle, exact_floats, max_seconds)
    if (delta_g is None) == (eps_g is None):
        raise InvalidParameterError("pass exactly one of delta_g= (an eps claim) or eps_g= (a delta claim)")
    v = _check(judge(reported, composition, delta_g=delta_g, eps_g=eps_g, oracle=o), Fraction(0))
    if not isinstance(v.optimum.upper, float) and v.optimum.upper == 0:  # an optimum of exactly 0
        if v.claim == 0:
            return v
        raise TooLooseError(v, r)  # any positive claim is infinitely far above 0, relatively
    if v.gap_lower is not None and v.gap_lower > r:
        raise TooLooseError(v, r)
    if v.gap_upper is None or v.gap_upper > r:
        if isinstance(v.claim, float):
            raise TooLooseError(v, r)  # +inf is as loose as a claim gets
        raise UndecidedClaimError(dataclasses.replace(
            v, verdict="undecided", note=f"the certified bracket is too wide to tell whether the claim is within "
                                         f"{float(r):.3g} of the optimum"))  # float ok: a message
    return v


@dataclass(frozen=True)
class LoosenessReport:
    """How far above the optimum each reported point is (``rows`` of judgements).

    ``worst`` is the row with the largest certified excess; ``str()`` is a small table.
    """

    rows: tuple[Judgement, ...]

    @property
    def worst(self) -> Judgement | None:
        ok = [r for r in self.rows if r.gap_lower is not None and r.sound]
        return max(ok, key=lambda r: r.gap_lower) if ok else None  # type: ignore[arg-type, return-value]

    @property
    def all_sound(self) -> bool:
        return all(r.sound for r in self.rows)

    def __str__(self) -> str:
        head = ["at | reported | certified optimum | verdict | relative gap", "---|---|---|---|---"]
        body = []
        for r in self.rows:
            at = format_fraction(r.at) if isinstance(r.at, Fraction) else str(r.at)
            claim = "inf" if isinstance(r.claim, float) else f"{float(r.claim)!r}"  # float ok: display
            body.append(f"{at} | {claim} | {r.optimum} | {r.verdict} | {r.relative_gap or ''}")
        return "\n".join(head + body)


def looseness_report(
    curve: Any,
    *,
    composition: Any,
    query: Literal["epsilon", "delta"] = "epsilon",
    oracle: Oracle | None = None,
    exact_floats: bool | None = None,
    max_seconds: Any = None,
    relation: Any = None,
) -> LoosenessReport:
    """Judge every point of a curve (as :func:`assert_sound_curve`) without failing; a report.

    >>> rep = looseness_report({"1e-3": 2.0957506835726821, "1e-6": 3}, composition=("0.1", 0, 30))
    >>> [r.verdict for r in rep.rows], rep.worst.relative_gap
    (['loose', 'loose'], '0.415')
    """
    if not isinstance(query, str) or query not in ("epsilon", "delta"):
        raise InvalidParameterError(f"query={short_repr(query)} must be 'epsilon' or 'delta'")
    composition = read_composition(composition, relation)
    o = _oracle(oracle, exact_floats, max_seconds)
    rows = []
    for at, value in _points(curve):
        kw = {"delta_g": at} if query == "epsilon" else {"eps_g": at}
        rows.append(judge(value, composition, oracle=o, **kw))
    return LoosenessReport(tuple(rows))
