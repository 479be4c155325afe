"""Discretised privacy-loss laws on a grid and their composition (docs/pld.md §4-§5).

A :class:`Law` is a ball computation (Arb, python-flint ``arb_poly``): a coefficient is a ball
that contains the exact value of the law being represented, so no rounding direction has to be
tracked by hand.  It is either the **upper** (connect-the-dots) law of a pair that dominates the
true one, or the **lower** (binned) law of a pair that it dominates (:mod:`exactdp.engines.pld.discrete`,
docs/pld.md §2-§3).

Composition multiplies generating polynomials: the product of upper laws is the law of the
product of dominating pairs; summing the bin indices of lower laws is a further post-processing
of the product of binned pairs (docs/pld.md §4).  Truncation only moves mass in the safe
direction: on the upper side, mass below the window moves up to its edge and mass above it
moves to +inf; on the lower side, truncated outcomes are dropped, which can only lower the
bound (docs/pld.md §5).  A law is *exact* when the model's losses all lie on the grid and it has
no continuous part: then the upper, the lower and the true pair coincide and Q is P e^{-jh}.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import TypeVar

from flint import arb, arb_poly

from exactdp.core import progress

T = TypeVar("T")

__all__ = ["Built", "Law", "binary_power", "compose", "power", "product", "trim"]


@dataclass(frozen=True)
class Law:
    """A discretised law: coefficient i of ``P`` (and ``Q``) is the mass at grid index ``offset + i``.

    ``upper``: a P-law of a dominating pair on the grid (Q-masses are P e^{-jh}).  Otherwise a
    lower law: ``P`` and ``Q`` are the masses of merged outcomes (``Q`` is None when the law is
    exact, i.e. Q = P e^{-jh}).  ``Q`` holds the *tilted* masses Q_j e^{jh} (j the grid index): a
    product of tilted laws is the tilted product (e^{(i + k) h} = e^{ih} e^{kh}), and the tilted
    masses are about the size of the P-masses however far out the losses lie, so products keep the
    dynamic range of P.  ``p_inf`` is the P-mass at +inf.  ``moved`` bounds the mass the
    truncations moved or dropped (for diagnostics and the refinement's error budget).
    """

    h: Fraction
    offset: int
    P: arb_poly
    Q: arb_poly | None
    p_inf: arb
    upper: bool
    exact: bool
    moved: arb
    #: coefficient i sits at grid index offset + stride * i (a binomial law is strided)
    stride: int = 1
    #: the tilt's centre: ``Q`` holds Q_j e^{jh + qshift} (a composed lower law keeps its Q near its
    #: P this way, docs/pld.md §7.2); 0 for a law discretised by :mod:`exactdp.engines.pld.discrete`
    qshift: Fraction = Fraction(0)

    @property
    def length(self) -> int:
        return self.P.length()

    @property
    def span(self) -> int:
        """The number of grid points the law covers."""
        return self.stride * (self.P.length() - 1) + 1 if self.P.length() else 0


@dataclass
class Built:
    """The composed laws of every order at one grid (:mod:`exactdp.engines.pld.build` makes them,
    :mod:`exactdp.engines.pld.store` keeps them on disk)."""

    h: Fraction
    prec: int
    tau: Fraction
    laws: list[tuple[Law, Law]]       # (upper, lower) per order
    exact: bool
    seconds: float                    # float ok: a timing
    #: the laws are tight only for eps >= floor (None: at every eps)
    floor: Fraction | None = None


# -- composition -------------------------------------------------------------------------------------

def _dense(law: Law) -> Law:
    """The same law with stride 1 (zeros between the coefficients of a strided law)."""
    if law.stride == 1:
        return law
    s = law.stride

    def spread(p: arb_poly) -> arb_poly:
        c = p.coeffs()
        out = [arb(0)] * ((len(c) - 1) * s + 1 if c else 1)
        out[::s] = c
        return arb_poly(out)

    return replace(law, P=spread(law.P), Q=spread(law.Q) if law.Q is not None else None, stride=1)


def _polyphase(dense: arb_poly, sparse: arb_poly, s: int) -> arb_poly:
    """dense(y) * sparse(y^s): split dense into its s residue classes, multiply each by sparse.

    dense(y) = sum_r y^r R_r(y^s), so the product is sum_r y^r (R_r * sparse)(y^s): every output
    index r + s i comes from exactly one class, and s short products replace one long one.
    """
    c = dense.coeffs()
    n = len(c)
    m = sparse.length()
    out = [arb(0)] * (n + s * (m - 1)) if n and m else [arb(0)]
    for r in range(min(s, n)):
        prod = arb_poly(c[r::s]) * sparse
        pc = prod.coeffs()
        out[r:r + s * len(pc):s] = pc
    return arb_poly(out)


def trim(law: Law, tau: arb) -> Law:
    """Cut the tails of total P-mass at most ``tau`` each side (moved up / to +inf, or dropped)."""
    if law.stride != 1:
        law = _dense(law)
    c = law.P.coeffs()
    n = len(c)
    if n <= 2:
        return law
    lo, acc = 0, arb(0)
    while lo < n - 1:
        nxt = acc + c[lo]
        if not nxt.upper() <= tau.lower():
            break
        acc = nxt
        lo += 1
    hi, acc_hi = n - 1, arb(0)
    while hi > lo:
        nxt = acc_hi + c[hi]
        if not nxt.upper() <= tau.lower():
            break
        acc_hi = nxt
        hi -= 1
    if lo == 0 and hi == n - 1:
        return law
    keep = c[lo:hi + 1]
    moved = law.moved + acc + acc_hi
    if law.upper:
        keep[0] = keep[0] + acc        # mass below the window moves up to its edge
        return replace(law, offset=law.offset + lo, P=arb_poly(keep), p_inf=law.p_inf + acc_hi, moved=moved)
    Q = law.Q
    if Q is not None:
        qc = Q.coeffs()
        qc = qc + [arb(0)] * (n - len(qc))
        Q = arb_poly(qc[lo:hi + 1])
    return replace(law, offset=law.offset + lo, P=arb_poly(keep), Q=Q, moved=moved)


def compose(a: Law, b: Law, tau: arb | None = None) -> Law:
    """The law of the composition (product of pairs), truncated by ``tau``."""
    if a.upper != b.upper or a.h != b.h:
        raise ValueError("compose laws of the same side and grid")
    if a.stride != 1 or b.stride != 1:
        if a.stride != 1 and b.stride != 1:
            a = _dense(a)
        dense, sparse = (a, b) if a.stride == 1 else (b, a)
        if not (dense.exact and sparse.exact):
            return compose(_dense(a), _dense(b), tau)
        P = _polyphase(dense.P, sparse.P, sparse.stride)
        p_inf = a.p_inf + b.p_inf - a.p_inf * b.p_inf
        out = Law(a.h, a.offset + b.offset, P, None, p_inf, a.upper, True, a.moved + b.moved)
        return trim(out, tau) if tau is not None else out
    P = a.P * b.P
    if a.upper or (a.exact and b.exact):
        Q = None  # an upper law is a grid pair (Q = P e^{-jh}); so is a product of exact laws
    else:
        qa = a.Q if a.Q is not None else _q_of_exact(a)
        qb = b.Q if b.Q is not None else _q_of_exact(b)
        Q = qa * qb
        if (a.qshift if a.Q is not None else 0) or (b.qshift if b.Q is not None else 0):
            raise ValueError("compose centred lower laws in fixed point (exactdp.engines.pld.fixed)")
    # +inf: some component produced an output that Q never produces; 1-(1-a)(1-b) is monotone in a, b
    p_inf = a.p_inf + b.p_inf - a.p_inf * b.p_inf
    out = Law(a.h, a.offset + b.offset, P, Q, p_inf, a.upper, a.exact and b.exact, a.moved + b.moved)
    return trim(out, tau) if tau is not None else out


def _q_of_exact(law: Law) -> arb_poly:
    """Tilted Q-masses of an exact law: Q_j e^{jh} = P_j."""
    return law.P


def binary_power(x: T, n: int, mul: Callable[[T, T], T], size: Callable[[T], int]) -> T:
    """x composed n >= 1 times with itself by binary powering (``mul`` composes two laws)."""
    if n < 1:
        raise ValueError("power needs n >= 1")
    result: T | None = None
    base = x
    k = n
    while k:
        progress.tick(f"composing {n} steps ({size(base)} grid points)")
        if k & 1:
            result = base if result is None else mul(result, base)
        k >>= 1
        if k:
            base = mul(base, base)
    assert result is not None
    return result


def power(law: Law, n: int, tau: arb | None = None) -> Law:
    """The n-fold composition of ``law`` with itself (binary powering, truncated after each step)."""
    return binary_power(law, n, lambda a, b: compose(a, b, tau), lambda l: l.length)


def product(laws: list[Law], tau: arb | None = None, *, trim_each: bool = True) -> Law:
    """The composition of several laws, smallest first (a balanced product keeps the cost low).

    ``trim_each=False`` truncates only the result (for windowed laws, whose products stay small).
    """
    items = sorted(laws, key=lambda l: l.span)
    while len(items) > 1:
        progress.tick(f"composing {len(items)} laws")
        nxt = []
        for i in range(0, len(items) - 1, 2):
            nxt.append(compose(items[i], items[i + 1], tau if trim_each else None))
        if len(items) % 2:
            nxt.append(items[-1])
        items = sorted(nxt, key=lambda l: l.span)
    out = _dense(items[0])
    return out if trim_each or tau is None else trim(out, tau)
