"""One-sided assertions for a DP accountant's test suite.

An accountant's eps (or delta) is a claimed *upper bound* on the optimum; it is wrong only when
it is below the optimum (KOV15 Thm 3.3 / Murtagh-Vadhan Thm 1.5).  These assertions fail with a
message giving the inputs, the reported value and the certified optimum enclosure.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from .oracle import InvalidClaimError, Oracle, Verdict, _rel_tol, judge_delta, judge_epsilon

__all__ = ["InvalidClaimError", "UnsoundClaimError", "assert_sound", "assert_sound_delta"]


class UnsoundClaimError(AssertionError):
    """A reported eps or delta is below the certified optimum; ``.verdict`` holds the details."""

    def __init__(self, verdict: Verdict) -> None:
        super().__init__(verdict.describe())
        self.verdict = verdict


def _check(v: Verdict, tol: Fraction) -> Verdict:
    if v.sound:
        return v
    if tol > 0 and v.relative_shortfall is not None and v.relative_shortfall <= tol:
        return v
    raise UnsoundClaimError(v)


def assert_sound(
    reported_epsilon: Any,
    *,
    composition: Any,
    delta_g: Any,
    rel_tol: Any = 0,
    oracle: Oracle | None = None,
) -> Verdict:
    """Assert that ``reported_epsilon`` >= the optimal eps of ``composition`` at total ``delta_g``.

    The optimum is OptComp(delta_g), KOV15 Thm 3.3 (equal mechanisms) or Murtagh-Vadhan Thm 1.5.
    ``composition`` is anything :meth:`exactdp.Composition.of` accepts (a Composition, an
    ``(eps, delta, k)`` triple, a list of ``(eps, delta[, count])`` entries); a float reported
    value is taken at its exact binary value, +inf is trivially sound, and a value that is not a
    number (None, NaN, -inf, a string such as "abc") fails with :class:`InvalidClaimError`.
    ``rel_tol`` lets a claim pass that is below the optimum by at most that relative amount (e.g.
    ``"1e-12"`` to forgive floating-point-level slips).  Returns the :class:`Verdict`; raises
    :class:`UnsoundClaimError`.

    >>> from exactdp.testing import assert_sound
    >>> assert_sound(3, composition=("0.1", 0, 30), delta_g="1e-3").sound
    True
    >>> assert_sound(1.4, composition=("0.1", 0, 30), delta_g="1e-3")
    Traceback (most recent call last):
    ...
    exactdp.testing.assertions.UnsoundClaimError: composition 30 x (0.1, 0)-DP, delta_g=0.001: reported eps = 3152519739159347/2251799813685248 (~1.4), certified optimum in [1.48114398053990720461, 1.48114398053990720462] -> UNSOUND, 0.0548 relative below the optimum
    >>> assert_sound(None, composition=("0.1", 0, 30), delta_g="1e-3")
    Traceback (most recent call last):
    ...
    exactdp.testing.oracle.InvalidClaimError: reported eps=None is not a number; a claim must be a finite number or +inf (composition 30 x (0.1, 0)-DP, delta_g=0.001)
    """
    tol = _rel_tol(rel_tol)
    return _check(judge_epsilon(reported_epsilon, composition, delta_g, oracle=oracle), tol)


def assert_sound_delta(
    reported_delta: Any,
    *,
    composition: Any,
    eps_g: Any,
    rel_tol: Any = 0,
    oracle: Oracle | None = None,
) -> Verdict:
    """Assert that ``reported_delta`` >= the optimal total delta of ``composition`` at ``eps_g``.

    The optimum is delta_opt(eps_g) of Murtagh-Vadhan Thm 1.5 (KOV15 Thm 3.3 when homogeneous).
    Same conventions as :func:`assert_sound`.

    >>> assert_sound_delta("0.28", composition=[("1", "0.1"), ("2", "0.2")], eps_g=3).sound
    True
    """
    tol = _rel_tol(rel_tol)
    return _check(judge_delta(reported_delta, composition, eps_g, oracle=oracle), tol)
