"""Float roots for the FFT path's aiming steps: the eps hint's tilt and the windows' Chernoff
parameters (docs/pld.md §12.10).  Only choices: every bound they lead to is evaluated afterwards in
Arb or with a proved float bound, whatever the float they return.

The searches they serve are bisections whose exact floats the engine keeps (the golden tables read
the answers they aim): :func:`log_root` locates the root of a decreasing function first (the Illinois
rule in ``log x``, about ten evaluations), and :func:`above` then decides each step of the bisection
from it, evaluating the function only at the few points within ``DECIDED`` of the root, so a
bisection of 32 steps needs about a dozen evaluations and gives the same float (stop 43).
"""

from __future__ import annotations

import math
from collections.abc import Callable

__all__ = ["DECIDED", "ROOT_DECIDED", "ROOT_TOL", "above", "above_near", "bracketing", "curve_root", "log_root", "root"]

#: the relative distance from the located root beyond which a point's side is taken from the root:
#: the functions served change by about 1e-7 there (their slope in ``log x`` is about -10 at their
#: roots) against a float noise of about 1e-10 (sums over 10^5 steps)
DECIDED = 1e-8


def log_root(f: Callable[[float], float], lo: float, hi: float,  # float ok: a choice only
             f_lo: float | None = None, f_hi: float | None = None) -> float:  # float ok: a choice only
    """The root of f, decreasing, in ``[lo, hi]`` (0 < lo < hi) to ``1e-10`` in ``log x``: :func:`root`
    in the variable ``log x`` (the Illinois rule); ``hi`` if f(hi) > 0 (no root: every point is below
    it), ``lo`` if f(lo) <= 0 (every point is above it).  ``f_lo``, ``f_hi``: f at the ends where the
    caller has them.

    >>> r = log_root(lambda x: 2.0 - x, 1e-3, 1e3)
    >>> abs(r - 2.0) < 1e-9, log_root(lambda x: 1.0, 1.0, 4.0), log_root(lambda x: -1.0, 1.0, 4.0)
    (True, 4.0, 1.0)
    """
    xl, xh = math.log(lo), math.log(hi)  # float ok: a choice only
    x = root(lambda y: f(math.exp(y)), xl, xh, 1e-10 * max(1.0, abs(xh)), f_lo, f_hi)  # float ok: a choice
    return hi if x == xh else (lo if x == xl else math.exp(x))  # float ok: the ends exactly, as given


def above(x: float, root: float, f: Callable[[float], float]) -> bool:  # float ok: a choice only
    """Whether ``f(x) > 0`` for f decreasing with its root located at ``root`` (:func:`log_root`): from
    the root where x is farther than ``DECIDED`` from it, else by evaluating f.

    >>> above(1.0, 2.0, lambda x: 2.0 - x), above(3.0, 2.0, lambda x: 2.0 - x)
    (True, False)
    >>> above(2.0 * (1 + 1e-12), 2.0, lambda x: 2.0 - x)  # near the root: evaluated
    False
    """
    if x > 0 and root > 0 and abs(math.log(x / root)) > DECIDED:  # float ok: a choice only
        return x < root
    return f(x) > 0


def root(f: Callable[[float], float], lo: float, hi: float, tol: float,  # float ok: a choice only
         f_lo: float | None = None, f_hi: float | None = None) -> float:  # float ok: a choice only
    """The root of f, decreasing, in ``[lo, hi]`` to ``tol`` (absolute) by the Illinois rule (regula
    falsi, the kept end's value halved when it is kept twice; about ten evaluations); ``hi`` if f(hi)
    > 0, ``lo`` if f(lo) <= 0.  ``f_lo``, ``f_hi``: f at the ends where the caller has them.

    >>> abs(root(lambda x: 0.5 - x * x, 0.0, 1.0, 1e-15) - 0.5 ** 0.5) < 1e-14
    True
    """
    fl = f(lo) if f_lo is None else f_lo
    fh = f(hi) if f_hi is None else f_hi
    if fh > 0:
        return hi
    if not fl > 0:
        return lo
    side = 0
    for _ in range(200):
        if hi - lo <= tol:
            break
        x = hi - fh * (hi - lo) / (fh - fl)  # float ok: a choice only
        if not lo < x < hi:  # a NaN or a step off the bracket: bisect
            x = (lo + hi) / 2  # float ok: a choice only
        fx = f(x)
        if fx > 0:
            lo, fl = x, fx
            if side < 0:
                fh /= 2
            side = -1
        else:  # as bisection: not above 0 (a NaN too) moves the upper end
            hi, fh = x, fx
            if side > 0:
                fl /= 2
            side = 1
    return hi


def above_near(x: float, at: float, f: Callable[[float], float], near: float) -> bool:  # float ok: a choice
    """Whether ``f(x) > 0`` for f decreasing with its root located at ``at`` (:func:`root`): from the
    root where ``|x - at| > near``, else by evaluating f.

    >>> above_near(0.1, 0.5, lambda x: 0.5 - x, 1e-12), above_near(0.5 + 1e-14, 0.5, lambda x: 0.5 - x, 1e-12)
    (True, False)
    """
    if abs(x - at) > near:
        return x < at
    return f(x) > 0


# -- the float delta curves' crossings of delta_g (fftquery's eps brackets) -------------------------

def curve_root(f, lo: float, hi: float, level: float) -> float:  # float ok: root finding, certified after
    """The eps where the decreasing float curve f crosses level (bisection, until the range is
    ``ROOT_TOL`` of the root: the certified steps start ``1e-12`` of it away, a choice only).  The
    crossing is located first (:func:`root`, about a dozen evaluations), and each bisection step
    farther than ``ROOT_DECIDED`` from it is decided without an evaluation: the same float from about
    20 evaluations instead of 50 (stop 43).

    >>> abs(curve_root(lambda x: 1.0 - x, 0.0, 4.0, 0.25) - 0.75) < 1e-15
    True
    """
    def excess(x: float) -> float:  # float ok: a choice only
        return f(x) - level

    at = root(excess, lo, hi, ROOT_TOL * (1.0 + abs(hi)))  # 100 times below ROOT_DECIDED
    near = ROOT_DECIDED * (1.0 + abs(at))
    for _ in range(80):
        if hi - lo <= ROOT_TOL * (1.0 + abs(hi)):
            break
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if above_near(mid, at, excess, near) else (lo, mid)
    return (lo + hi) / 2


#: the relative distance from the located crossing beyond which a bisection step of :func:`curve_root` is
#: decided from it: the curves fall by about 20 delta per unit of eps there, so a point 1e-13 away is
#: about 1e-12 delta from the level, against their float noise of about 1e-16 delta (a choice only)
ROOT_DECIDED = 1e-13


#: the float roots' relative resolution (a choice only: every end is certified after)
ROOT_TOL = 1e-15


def bracketing(f, a: float, b: float, level: float) -> tuple[float, float]:  # float ok: a search range
    """[a, b] widened (a down to 0, b up) until the decreasing float curve f crosses level inside it:
    a tilt aimed far from the root must not clamp the root to an end of the first range (issue 26:
    8 x 10^-4 of an eps; a choice only, every end is certified after)."""
    for _ in range(40):
        if a > 0 and not f(a) > level:
            a, b = max(a - 2 * (b - a), 0.0), a
        elif not f(b) <= level:
            a, b = b, b + 2 * (b - a)
        else:
            break
    return a, b
