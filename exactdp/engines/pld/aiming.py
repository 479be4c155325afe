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

__all__ = ["DECIDED", "above", "log_root"]

#: the relative distance from the located root beyond which a point's side is taken from the root:
#: the functions served change by about 1e-7 there (their slope in ``log x`` is about -10 at their
#: roots) against a float noise of about 1e-10 (sums over 10^5 steps)
DECIDED = 1e-8


def log_root(f: Callable[[float], float], lo: float, hi: float,  # float ok: a choice only
             f_lo: float | None = None, f_hi: float | None = None) -> float:  # float ok: a choice only
    """The root of f, decreasing, in ``[lo, hi]`` (0 < lo < hi) to ``1e-10`` in ``log x`` by the Illinois
    rule (regula falsi in log x, the kept end's value halved when it is kept twice); ``hi`` if f(hi) >
    0 (no root: every point is below it), ``lo`` if f(lo) <= 0 (every point is above it).  ``f_lo``,
    ``f_hi``: f at the ends where the caller has them.

    >>> r = log_root(lambda x: 2.0 - x, 1e-3, 1e3)
    >>> abs(r - 2.0) < 1e-12, log_root(lambda x: 1.0, 1.0, 4.0), log_root(lambda x: -1.0, 1.0, 4.0)
    (True, 4.0, 1.0)
    """
    xl, xh = math.log(lo), math.log(hi)  # float ok: a choice only
    fl = f(lo) if f_lo is None else f_lo
    fh = f(hi) if f_hi is None else f_hi
    if fh > 0:
        return hi
    if not fl > 0:
        return lo
    side = 0
    for _ in range(100):
        if xh - xl <= 1e-10 * max(1.0, abs(xh)):  # float ok: a choice only (100 times below DECIDED)
            break
        x = xh - fh * (xh - xl) / (fh - fl)  # float ok: a choice only
        if not xl < x < xh:  # a NaN or a step off the bracket: bisect
            x = (xl + xh) / 2  # float ok: a choice only
        fx = f(math.exp(x))  # float ok: a choice only
        if fx > 0:
            xl, fl = x, fx
            if side < 0:
                fh /= 2
            side = -1
        else:  # as bisection: not above 0 (a NaN too) moves the upper end
            xh, fh = x, fx
            if side > 0:
                fl /= 2
            side = 1
    return math.exp(xh)  # float ok: a choice only


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
