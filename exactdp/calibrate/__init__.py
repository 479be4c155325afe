"""Certified calibration: the per-step eps, count, noise or sampling rate that provably meets a target.

Every function answers an inverse question about a target ``(eps_g, delta_g)`` with a
:class:`Calibration`: ``value`` is **certified safe** (the composition at it is proved to be
``(eps_g, delta_g)``-DP) and ``fails_at``, a point just beyond it, is **certified to miss**
(docs/calibration.md; docs/mathematics.md §8).  Integer answers are exact: ``k`` meets the target
and ``k + 1`` does not.

* :func:`calibrate_eps`: the largest per-mechanism eps such that k (eps, delta)-DP mechanisms meet
  the target (optimal composition, or any ``method``);
* :func:`calibrate_scale`: the largest factor c such that the mechanisms (c eps_i, delta_i) meet it;
* :func:`calibrate_k`: the largest number of runs of any mechanism;
* :func:`calibrate_sigma`: the smallest Gaussian sigma (DP-SGD noise multiplier with ``q``);
* :func:`calibrate_q`: the largest Poisson sampling rate for a given sigma and number of steps;
* :func:`calibrate_laplace_scale`: the smallest Laplace scale for k queries.

The rooms: :mod:`~exactdp.calibrate.result` (the :class:`Calibration` and its text),
:mod:`~exactdp.calibrate.arguments` (the arguments, parsed exactly), :mod:`~exactdp.calibrate.driver`
(the clock and the result of a search), :mod:`~exactdp.calibrate.certsearch` (the certified search),
:mod:`~exactdp.calibrate.probes` (how one point is proved), the problems in
:mod:`~exactdp.calibrate.eps` (eps, scale factor), :mod:`~exactdp.calibrate.count` (k) and
:mod:`~exactdp.calibrate.noise` (sigma, q, Laplace scale), and :mod:`~exactdp.calibrate.budget`
(what a plan spends and what remains).

>>> from fractions import Fraction
>>> r = calibrate_eps(30, "1", "1e-5")
>>> r.value_str, r.fails_at_str, r.relative_gap < Fraction(1, 10**6)
('0.050807264', '0.05080728', True)
>>> from exactdp import is_private
>>> is_private(("0.050807264", 0, 30), "1", "1e-5"), is_private(("0.05080728", 0, 30), "1", "1e-5")
(True, False)
>>> r = calibrate_k("gaussian:sigma=10", "1", "1e-5")
>>> r.value, r.fails_at, r.exact
(7, 8, True)
"""


from __future__ import annotations

from exactdp.calibrate.certsearch import InfeasibleTargetError, Proof
from exactdp.calibrate.count import calibrate_k
from exactdp.calibrate.driver import DEFAULT_GAP_EXACT, DEFAULT_GAP_PLD, DEFAULT_SECONDS
from exactdp.calibrate.eps import calibrate_eps, calibrate_scale
from exactdp.calibrate.noise import calibrate_laplace_scale, calibrate_q, calibrate_sigma, get_noise_multiplier
from exactdp.calibrate.result import Calibration

__all__ = [
    "DEFAULT_GAP_EXACT",
    "DEFAULT_GAP_PLD",
    "DEFAULT_SECONDS",
    "Calibration",
    "InfeasibleTargetError",
    "Proof",
    "calibrate_eps",
    "calibrate_k",
    "calibrate_laplace_scale",
    "calibrate_q",
    "calibrate_scale",
    "calibrate_sigma",
    "get_noise_multiplier",
]
