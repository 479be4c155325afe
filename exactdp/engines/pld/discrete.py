"""Discretised privacy-loss laws on a grid, their composition, and the two certified bounds.

Everything here is a ball computation (Arb, python-flint ``arb_poly``): a coefficient is a ball
that contains the exact value of the law being represented, so no rounding direction has to be
tracked by hand.  Two laws are built from one single-step model on the grid ``j h`` (docs/pld.md):

* the **upper** law is the connect-the-dots pair of Doroshenko, Ghazi, Kamath, Kumar and
  Manurangsi (PETS 2022): every likelihood ratio R = e^L under Q is split between the two grid
  points around it, keeping its Q-mean (a mean-preserving spread), so the pair *dominates* the
  true one (docs/pld.md §2); its law is a P-law on the grid, Q = P e^{-jh};
* the **lower** law is the binning post-processing: outputs whose loss lies in (jh, (j+1)h] are
  merged (docs/pld.md §3); it is *dominated* by the true pair, and it keeps both its P- and
  Q-masses, because the merged likelihood ratio is not e^{jh}.

Composition multiplies generating polynomials: the product of upper laws is the law of the
product of dominating pairs; summing the bin indices of lower laws is a further post-processing
of the product of binned pairs (docs/pld.md §4).  Truncation only moves mass in the safe
direction: on the upper side, mass below the window moves up to its edge and mass above it
moves to +inf; on the lower side, truncated outcomes are dropped, which can only lower the
bound (docs/pld.md §5).  A law is *exact* when the model's losses all lie on the grid and it has
no continuous part: then the upper, the lower and the true pair coincide and Q is P e^{-jh}.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import TypeVar

from flint import arb, arb_poly, ctx

from exactdp.core import progress
from exactdp.core.binomial import binomial_pmf, binomial_upper_tail
from exactdp.core.numbers import arb_of_fraction
from exactdp.engines.pld.models import LossModel, Position

T = TypeVar("T")

__all__ = [
    "Law",
    "atom_bin",
    "compose",
    "delta_lower",
    "delta_upper",
    "discretize",
    "discretize_binomial",
    "epsilon_lower",
    "epsilon_upper",
    "power",
    "product",
    "tail_range",
]


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
    #: P this way, docs/pld.md §7.2); 0 for a law discretised here
    qshift: Fraction = Fraction(0)

    @property
    def length(self) -> int:
        return self.P.length()

    @property
    def span(self) -> int:
        """The number of grid points the law covers."""
        return self.stride * (self.P.length() - 1) + 1 if self.P.length() else 0


# -- single-step discretisation --------------------------------------------------------------------

def atom_bin(pos: Position, h: Fraction) -> tuple[int, bool]:
    """(j, on_edge): the bin (jh, (j+1)h] that holds the atom, and whether it sits at (j+1)h exactly."""
    r = pos.rational()
    if r is not None:
        t = r / h
        j = math.ceil(t) - 1
        return j, t.denominator == 1
    with ctx.workprec(96):
        est = (pos.arb() / arb_of_fraction(h)).mid()
    j = int(est.floor().unique_fmpz()) if est.is_finite() else 0
    # correct with exact comparisons: want j h < x <= (j+1) h
    while pos.cmp(j * h) <= 0:
        j -= 1
    while pos.cmp((j + 1) * h) > 0:
        j += 1
    return j, pos.cmp((j + 1) * h) == 0


def tail_range(model: LossModel, h: Fraction, tau: Fraction) -> tuple[int, int]:
    """Grid indices [jmin, jmax] outside which the continuous part has P-mass at most tau each side.

    The atoms are always inside.  Only the *tightness* depends on this choice: mass outside is
    moved (upper) or dropped (lower) by the discretisation, safely either way.
    """
    lo_f, hi_f = model.support()
    with ctx.workprec(64):
        atoms = [a for a in model.atoms()]
    idx = [atom_bin(pos, h) for pos, _, _ in atoms]
    lo_j = min((j for j, _ in idx), default=None)
    hi_j = max((j + 1 for j, _ in idx), default=None)
    if model.has_continuous():
        t = arb_of_fraction(tau)

        prec = 64 + max(0, -math.frexp(float(tau))[1])  # float ok: a working precision only

        def edge_ok(j: int, side: str) -> bool:
            with ctx.workprec(prec):
                pf, ps, _, _ = model.cdf(arb_of_fraction(j * h))
                return bool((pf if side == "lo" else ps) < t)

        hf = float(h)  # float ok: only the search start for the grid range
        # search outward from a point inside the bulk
        start_lo = math.floor(max(lo_f, -1.0) / hf) if math.isfinite(lo_f) else -1
        start_hi = math.ceil(min(hi_f, 1.0) / hf) if math.isfinite(hi_f) else 1
        j = start_lo
        step = max(1, int(0.5 / hf))
        for _ in range(200):
            if edge_ok(j, "lo"):
                break
            j -= step
            step *= 2
        else:
            raise ArithmeticError(f"no left tail below {float(tau):.1e} found for {model!r}")  # float ok: message
        lo_c = j
        j = start_hi
        step = max(1, int(0.5 / hf))
        for _ in range(200):
            if edge_ok(j, "hi"):
                break
            j += step
            step *= 2
        else:
            raise ArithmeticError(f"no right tail below {float(tau):.1e} found for {model!r}")  # float ok: message
        hi_c = j
        # tighten by bisection toward the bulk (a coarse search overshoots by up to a factor 2)
        lo_c = _bisect_edge(edge_ok, lo_c, start_lo, "lo")
        hi_c = _bisect_edge(edge_ok, hi_c, start_hi, "hi")
        if math.isfinite(lo_f):
            lo_c = max(lo_c, math.floor(lo_f / hf) - 1)
        if math.isfinite(hi_f):
            hi_c = min(hi_c, math.ceil(hi_f / hf) + 1)
        lo_j = lo_c if lo_j is None else min(lo_j, lo_c)
        hi_j = hi_c if hi_j is None else max(hi_j, hi_c)
    if lo_j is None or hi_j is None:
        return 0, 1
    return lo_j, max(hi_j, lo_j + 1)


def _bisect_edge(ok: object, far: int, near: int, side: str) -> int:
    """The index nearest to ``near`` that still satisfies ``ok`` (which holds at ``far``)."""
    f = ok  # type: ignore[assignment]
    a, b = (far, near) if side == "lo" else (near, far)
    if side == "lo":
        # ok(a) true; find the largest j in [a, b] with ok(j)
        if f(b, "lo"):  # type: ignore[operator]
            return b
        while b - a > 1:
            m = (a + b) // 2
            if f(m, "lo"):  # type: ignore[operator]
                a = m
            else:
                b = m
        return a
    if f(a, "hi"):  # type: ignore[operator]
        return a
    while b - a > 1:
        m = (a + b) // 2
        if f(m, "hi"):  # type: ignore[operator]
            b = m
        else:
            a = m
    return b


def discretize(model: LossModel, h: Fraction, jmin: int, jmax: int, *, prec: int) -> tuple[Law, Law]:
    """(upper, lower) laws of ``model`` on the grid ``h``, indices [jmin, jmax] (docs/pld.md §2-§3).

    Upper, connect-the-dots, with B_j = (jh, (j+1)h], G_j = P(B_j) - e^{jh} Q(B_j) >= 0 and
    D_j = e^{(j+1)h} - e^{jh}:

        p_jmin = P(L <= jmin h) + e^{jmin h} (Q(B_jmin) - G_jmin/D_jmin)
        p_j    = e^{jh} (G_{j-1}/D_{j-1} + Q(B_j) - G_j/D_j)          jmin < j < jmax
        p_jmax = e^{jmax h} (G_{jmax-1}/D_{jmax-1} + Q(L > jmax h))
        p_inf  = P(L = +inf) + P(jmax h < L < inf) - e^{jmax h} Q(L > jmax h)

    Lower, binning: bin j holds (P(B_j), Q(B_j)); mass outside [jmin, jmax] is dropped.
    """
    with ctx.workprec(prec):
        hb = arb_of_fraction(h)
        n_bins = jmax - jmin  # bins jmin .. jmax-1
        zero = arb(0)
        Pb = [zero] * n_bins
        Qb = [zero] * n_bins
        PL = zero                  # P(L <= jmin h), finite part
        PR = zero                  # P(jmax h < L < inf)
        QR = zero                  # Q(L > jmax h)
        on_grid = True
        for pos, pm, qm in model.atoms():
            j, edge = atom_bin(pos, h)
            on_grid = on_grid and edge
            if j < jmin:  # x <= jmin h
                PL += pm
            elif j >= jmax:
                PR += pm
                QR += qm
            else:
                Pb[j - jmin] += pm
                Qb[j - jmin] += qm
        cont = model.has_continuous()
        if cont:
            quads = []
            for j in range(jmin, jmax + 1):
                if (j - jmin) % 2048 == 0:
                    progress.tick(f"discretising {model.name} ({j - jmin}/{n_bins} bins)")
                quads.append(model.cdf(hb * j))
            half = arb(1) / 2
            for i in range(n_bins):
                pf0, ps0, qf0, qs0 = quads[i]
                pf1, ps1, qf1, qs1 = quads[i + 1]
                # difference on the small side of the law: no tail is 1 minus a probability
                dp = (pf1 - pf0) if pf1 < half else (ps0 - ps1)
                dq = (qf1 - qf0) if qf1 < half else (qs0 - qs1)
                Pb[i] += dp.nonnegative_part() if hasattr(dp, "nonnegative_part") else dp
                Qb[i] += dq.nonnegative_part() if hasattr(dq, "nonnegative_part") else dq
            PL += quads[0][0]
            PR += quads[-1][1]
            QR += quads[-1][3]
        p_inf = model.p_inf()
        exact = on_grid and not cont
        if exact:
            # atoms at grid points: bin j's atom sits at (j+1) h; shift the index by one
            P = arb_poly([zero] + Pb)
            law = Law(h, jmin, P, None, p_inf, upper=False, exact=True, moved=arb(0))
            return replace(law, upper=True), law
        # lower: the bins as they are (Q tilted by e^{jh})
        alpha = _grid_exps(h, jmin, jmax)
        Qt = [q * a for q, a in zip(Qb, alpha)]
        lower = Law(h, jmin, arb_poly(Pb if n_bins else [zero]), arb_poly(Qt or [zero]),
                    p_inf, upper=False, exact=False, moved=PL + PR)
        return _connect_the_dots(h, jmin, Pb, Qt, PL, PR, QR * alpha[-1], p_inf, alpha), lower


_EXPS: dict[tuple[Fraction, int], dict[int, arb]] = {}


def _grid_exps(h: Fraction, jmin: int, jmax: int) -> list[arb]:
    """[e^{jh} for jmin <= j <= jmax] at the working precision, remembered for the last grid (every
    mechanism discretised on one grid needs the same powers)."""
    key = (h, ctx.prec)
    if key not in _EXPS:
        _EXPS.clear()
        _EXPS[key] = {}
    memo = _EXPS[key]
    hb = None
    out = []
    for j in range(jmin, jmax + 1):
        v = memo.get(j)
        if v is None:
            if hb is None:
                hb = arb_of_fraction(h)
            v = memo[j] = (hb * j).exp()
        out.append(v)
    return out


def _connect_the_dots(h: Fraction, jmin: int, Pb: list[arb], Qt: list[arb], PL: arb, PR: arb, QRt: arb,
                      p_inf: arb, alpha: list[arb] | None = None) -> Law:
    """The upper (connect-the-dots) law from the bin masses of bins jmin .. jmin + len(Pb) - 1
    (formulas in :func:`discretize`, docs/pld.md §2); at the working precision.

    Q enters tilted: ``Qt[i] = e^{jh} Q(B_j)`` and ``QRt = e^{jmax h} Q(L > jmax h)``, so with
    a_j = e^{jh}: G_j = P(B_j) - Qt_j and p_j = a_j t_{j-1} + Qt_j - a_j t_j, t_j = G_j / D_j.
    """
    hb = arb_of_fraction(h)
    n_bins = len(Pb)
    zero = arb(0)
    if alpha is None:
        alpha = _grid_exps(h, jmin, jmin + n_bins)
    t = []
    for i in range(n_bins):
        if Pb[i].is_zero() and Qt[i].is_zero():  # an empty bin (most bins of a pair of atoms)
            t.append(zero)
            continue
        d = alpha[i + 1] - alpha[i]
        g = Pb[i] - Qt[i]
        t.append(g / d)
    p = [zero] * (n_bins + 1)
    if n_bins == 0:
        p[0] = PL
    else:
        p[0] = PL + Qt[0] - alpha[0] * t[0]
        for i in range(1, n_bins):
            if t[i - 1].is_zero() and t[i].is_zero() and Qt[i].is_zero():
                continue  # nothing spread to this grid point
            p[i] = alpha[i] * (t[i - 1] - t[i]) + Qt[i]
        p[n_bins] = alpha[n_bins] * t[n_bins - 1] + QRt
    p_inf_up = p_inf + PR - QRt
    p = [_nonneg(x) for x in p]
    return Law(h, jmin, arb_poly(p), None, _nonneg(p_inf_up), upper=True, exact=False, moved=arb(0))


def _nonneg(x: arb) -> arb:
    """x intersected with [0, inf) (for a quantity known to be >= 0)."""
    if x >= 0:
        return x
    lo, hi = x.lower(), x.upper()
    if hi < 0:
        raise ArithmeticError("a mass known to be >= 0 came out negative")
    return arb(0).union(hi)


# -- composition -------------------------------------------------------------------------------------

def _poly_sum(p: arb_poly) -> arb:
    return p(arb(1)) if p.length() else arb(0)


def _dense(law: Law) -> Law:
    """The same law with stride 1 (zeros between the coefficients of a strided law)."""
    if law.stride == 1:
        return law
    s = law.stride

    def spread(p: arb_poly | None) -> arb_poly | None:
        if p is None:
            return None
        c = p.coeffs()
        out = [arb(0)] * ((len(c) - 1) * s + 1 if c else 1)
        out[::s] = c
        return arb_poly(out)

    return replace(law, P=spread(law.P), Q=spread(law.Q), stride=1)


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
            a = _dense(a if a.span <= b.span else a)
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


def _binomial_window(p: arb, n: int, tau: arb, tails: bool = True) -> tuple[int, list[arb], arb]:
    """(j_lo, [Bin(n, p)(j) for j_lo <= j <= j_hi], mass of Bin(n, p) outside the window).

    The window is chosen from float estimates (about tau beyond each side); the masses inside are
    balls, and the mass outside is an exact incomplete-beta enclosure (docs/pld.md §5).  With
    ``tails=False`` the mass outside is only enclosed as ``1 - sum`` of the masses inside (no
    incomplete betas; a wide ball, for a caller that recomputes what it drops anyway).
    """

    pf = float(p.mid())  # float ok: only chooses the window; its tails are then bounded exactly
    mean = n * pf
    sd = math.sqrt(max(n * pf * (1 - pf), 1e-300))  # float ok: window or cut selection only; the result is bounded in balls
    tf = max(float(tau.mid()), 1e-300)  # float ok: window choice only
    z = math.sqrt(2 * math.log(1 / tf)) + 2  # float ok: window or cut selection only; the result is bounded in balls
    j_lo = max(0, math.floor(mean - z * sd) - 1)
    j_hi = min(n, math.ceil(mean + z * sd) + 1)
    mode = min(max(int(mean), j_lo), j_hi)
    vals: dict[int, arb] = {}
    v = binomial_pmf(n, mode, p)
    vals[mode] = v
    r = p / (1 - p)
    for j in range(mode, j_hi):
        if (j - mode) % 4096 == 0:
            progress.tick(f"binomial law of {n} steps")
        v = v * (n - j) / (j + 1) * r
        vals[j + 1] = v
    v = vals[mode]
    for j in range(mode, j_lo, -1):
        v = v * j / (n - j + 1) / r
        vals[j - 1] = v
    inside = [vals[j] for j in range(j_lo, j_hi + 1)]
    if not tails:
        rest = 1 - sum(inside, arb(0))  # the pmf sums to 1: an enclosure of the mass outside
        return j_lo, inside, arb(0).union(rest.upper()) if rest.upper() >= 0 else arb(0)
    below = (1 - binomial_upper_tail(n, j_lo, p)) if j_lo > 0 else arb(0)
    above = binomial_upper_tail(n, j_hi + 1, p) if j_hi < n else arb(0)
    return j_lo, inside, below + above


def discretize_binomial(eps: Fraction, delta: Fraction, n: int, h: Fraction, tau: arb) -> tuple[Law, Law]:
    """(upper, lower) laws on the grid h of n generic (eps, delta) pairs composed *before* discretising.

    The n-fold composition is the binomial pair: j of n "up" has loss (2j - n) eps, P-mass
    Bin(n, p)(j) (1-delta)^n and Q-mass P e^{-(2j - n) eps} (docs/mathematics.md §1-§3); its window
    (:func:`_binomial_window`) is one pair with finitely many atoms, discretised once as in
    :func:`discretize`: binned below (the window's tails dropped), connect-the-dots above (the
    dropped tails put at +inf, the largest loss).  One discretisation instead of n compositions of
    discretised steps: the width no longer grows with n (docs/pld.md §6).
    """
    hb = arb_of_fraction(h)
    e = arb_of_fraction(eps)
    y = e.exp()
    p = y / (1 + y)
    keep = ((-arb_of_fraction(delta)).log1p() * n).exp() if delta else arb(1)  # (1 - delta)^n
    j_lo, vals, outside = _binomial_window(p, n, tau)
    # bins: atom (2j - n) eps lies in (g h, (g+1) h] with g = ceil(x/h) - 1, in integers
    num, den = eps.numerator * h.denominator, eps.denominator * h.numerator  # x/h = (2j - n) num/den

    def bin_of(j: int) -> int:
        return -((-(2 * j - n) * num) // den) - 1

    jmin, jmax = bin_of(j_lo), bin_of(j_lo + len(vals) - 1) + 1
    zero = arb(0)
    Pb = [zero] * (jmax - jmin)
    Qt = [zero] * (jmax - jmin)  # tilted: e^{gh} Q = P e^{gh - x}, the exponent in [-h, 0)
    for i, v in enumerate(vals):
        if i % 4096 == 0:
            progress.tick(f"binning a binomial law of {n} steps")
        pm = v * keep
        j = j_lo + i
        g = bin_of(j)
        Pb[g - jmin] += pm
        Qt[g - jmin] += pm * arb_of_fraction(g * h - (2 * j - n) * eps).exp()
    p_inf = -(((-arb_of_fraction(delta)).log1p() * n).expm1()) if delta else arb(0)
    dropped = outside * keep
    lower = Law(h, jmin, arb_poly(Pb), arb_poly(Qt), p_inf, upper=False, exact=False, moved=dropped)
    upper = _connect_the_dots(h, jmin, Pb, Qt, zero, zero, zero, p_inf + dropped)
    return upper, lower


def binomial_law(eps_units: int, delta: Fraction, n: int, h: Fraction, tau: arb) -> Law:
    """The exact n-fold composition of the generic (eps, delta) pair with eps = eps_units * h.

    j of the n mechanisms answering "up" has loss (2j - n) eps and P-mass C(n, j) p^j (1-p)^{n-j}
    (1-delta)^n, p = e^eps/(1+e^eps); the +inf mass is 1 - (1-delta)^n (docs/mathematics.md §1-§3).
    Only the window of j where the binomial has mass is kept; the two tails beyond it are dropped
    (docs/pld.md §5) and ``moved`` encloses them as 1 minus the window's mass, a wide ball: the
    fixed-point chain that composes this law recomputes its missing mass exactly (docs/pld.md §7.1).
    The law is strided: consecutive j are 2 eps_units grid points apart.
    """
    a = eps_units
    hb = arb_of_fraction(h)
    y = (hb * a).exp()
    p = y / (1 + y)
    keep = ((-arb_of_fraction(delta)).log1p() * n).exp() if delta else arb(1)  # (1 - delta)^n
    j_lo, vals, outside = _binomial_window(p, n, tau, tails=False)
    coeffs = [v * keep for v in vals]
    moved = outside * keep
    p_inf = -(((-arb_of_fraction(delta)).log1p() * n).expm1()) if delta else arb(0)
    return Law(h, (2 * j_lo - n) * a, arb_poly(coeffs), None, p_inf, upper=False, exact=True, moved=moved,
               stride=2 * a)


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


# -- queries --------------------------------------------------------------------------------------------

def _tail_sums(P: arb_poly, start: int, x: arb) -> tuple[arb, arb]:
    """(sum_{i >= start} c_i, sum_{i >= start} c_i x^i) of a polynomial's coefficients.

    The queries of one law ask for the same or neighbouring starts several times: the last few
    answers are kept (for the same polynomial, point and precision), and a start a little below a
    kept one adds the few terms between (ball sums: the result is the same enclosure, or narrower).
    """
    n = P.length()
    if start >= n:
        return arb(0), arb(0)
    if start <= 0:
        return P(arb(1)), P(x)
    best = None
    for q, xm, xr, prec, s0, A0, B0 in _TAILS:
        if q is P and prec == ctx.prec and xm == x.mid() and xr == x.rad() and start <= s0 <= start + 64:
            if best is None or s0 < best[0]:
                best = (s0, A0, B0)
    if best is not None:
        s0, A, B = best
        if s0 > start:
            xi = x ** start
            for i in range(start, s0):
                c = P[i]
                A += c
                B += c * xi
                xi *= x
    else:
        tail = P.right_shift(start)
        A, B = tail(arb(1)), tail(x) * x ** start
    # only the current polynomial's sums are kept (a law no longer queried is not kept alive)
    _TAILS[:] = [e for e in _TAILS if e[0] is P][-7:] + [(P, x.mid(), x.rad(), ctx.prec, start, A, B)]
    return A, B


#: the last few tail sums (polynomial, point, precision, start, sums): see :func:`_tail_sums`
_TAILS: list[tuple[arb_poly, arb, arb, int, int, arb, arb]] = []


def delta_upper(law: Law, eps: arb) -> arb:
    """delta(eps) of the law's pair: p_inf + sum_{jh > eps} P_j (1 - e^{eps - jh}), as a ball.

    When eps cannot be placed between grid points at the working precision, both placements are
    evaluated and the union returned, so the ball still contains the value.
    """
    hb = arb_of_fraction(law.h)
    out: arb | None = None
    for m in _first_above(law, eps):  # first index i with (offset + i) h > eps
        A, B = _tail_sums(law.P, m, (-hb).exp())
        B = B * (-hb * law.offset).exp()
        v = law.p_inf + A - eps.exp() * B
        out = v if out is None else out.union(v)
    assert out is not None
    return out


#: the float midpoints of the last few polynomials queried (the same law is queried from both sides)
_MIDS: list[tuple[arb_poly, list[float]]] = []  # float ok: cut selection only


def remember_mids(p: arb_poly, mids: list[float]) -> None:  # float ok: cut selection only
    """Record float midpoints of ``p`` already known to the caller (they only choose where to look)."""
    _MIDS[:] = [(q, m) for q, m in _MIDS if q is not p][-2:] + [(p, mids)]


def _float_mids(p: arb_poly, n: int) -> list[float]:  # float ok: only chooses cuts
    """Coefficient midpoints as floats, padded to n (they only choose where to cut; every bound
    is then evaluated in balls)."""
    for q, m in _MIDS:
        if q is p:
            out = m
            break
    else:
        out = [float(c.mid()) for c in p.coeffs()]  # float ok: cut selection only
        remember_mids(p, out)
    return out + [0.0] * (n - len(out)) if len(out) < n else out


def _best_cuts(law: Law, score: object, count: int = 3, shift: arb | None = None) -> list[int]:
    """The cut indices j0 with the largest ``score(SP, SQ)`` over suffix sums (float scan).

    ``shift``: the Q-masses are scanned as Q e^{shift} (SQ is scaled alike), so that a law far out
    (losses in the thousands, Q-masses below the float range) still ranks its cuts.
    """
    assert law.Q is not None
    n = max(law.P.length(), law.Q.length())
    P, Qt = _float_mids(law.P, n), _float_mids(law.Q, n)
    # untilt in floats: Q_j e^{shift} = Qt_j e^{shift - jh}; beyond the float range a term is 0 or
    # huge, which only ranks that cut last
    hf = float(law.h)  # float ok: cut selection only
    sf = (float(shift.mid()) if shift is not None else 0.0) - float(law.qshift)  # float ok: cut selection only
    Q = [q * math.exp(min(sf - (law.offset + j) * hf, 700.0)) if q else 0.0  # float ok: cut selection only
         for j, q in enumerate(Qt)]
    sp = sq = 0.0
    best: list[tuple[float, int]] = []  # float ok: cut selection only
    for j in range(n - 1, -1, -1):
        sp += P[j]
        sq += Q[j]
        v = score(sp, sq)  # type: ignore[operator]
        if v is not None:
            best.append((v, j))
            if len(best) > 4 * count:
                best.sort(reverse=True)
                del best[count:]
    best.sort(reverse=True)
    return [j for _, j in best[:count]] or [0]


def delta_lower(law: Law, eps: arb) -> arb:
    """A certified lower bound of delta(eps) from a dominated (binned) law: the best cut j0.

    For any set T of outcomes, sum_{T} (P - e^eps Q) <= sum (P - e^eps Q)_+ = delta of the binned
    pair <= the true delta (docs/pld.md §3).  A float scan over every cut T = {j >= j0} picks the
    best few; each is evaluated in balls, and the best certified value is returned.
    """
    if law.Q is None:  # exact law: Q = P e^{-jh}, the exact profile itself
        return delta_upper(replace(law, upper=True), eps)
    a = eps.exp()
    cuts = _best_cuts(law, lambda sp, sq: sp - sq, shift=eps)  # sq scaled by e^eps: SP - e^eps SQ
    best: arb | None = None
    for j0 in cuts:
        SP, _ = _tail_sums(law.P, j0, arb(1))
        SQ = _q_tail(law, j0)
        v = law.p_inf + SP - a * SQ
        if best is None or v.lower() > best.lower():
            best = v
    assert best is not None
    return best


def _q_tail(law: Law, start: int) -> arb:
    """sum_{i >= start} Q_i of a lower law (untilting its Q: Q_i = Qt_i e^{-(offset + i) h - qshift})."""
    assert law.Q is not None
    hb = arb_of_fraction(law.h)
    _, B = _tail_sums(law.Q, start, (-hb).exp())
    return B * (-(hb * law.offset) - arb_of_fraction(law.qshift)).exp()


def _first_above(law: Law, eps: arb) -> list[int]:
    """The first coefficient index i with (offset + i) h > eps: one index, or the two candidates when
    eps lies within its ball's width of a grid point."""
    t = eps / arb_of_fraction(law.h) - law.offset
    lo = int(t.lower().floor().unique_fmpz()) + 1
    hi = int(t.upper().floor().unique_fmpz()) + 1
    return sorted({max(i, 0) for i in range(lo, hi + 1)})


def epsilon_upper(law: Law, delta_g: arb) -> arb | None:
    """The least eps >= 0 with delta_upper(eps) <= delta_g (a ball), or None when even eps = +inf fails.

    On the segment between grid points m h and (m+1) h, delta_upper(eps) = A - e^eps B with
    A = p_inf + sum_{j > m} P_j, B = sum_{j > m} P_j e^{-jh}, so eps = log((A - delta_g)/B).
    """
    if not law.p_inf < delta_g:
        if law.p_inf.lower() >= delta_g.upper():
            return None
    hb = arb_of_fraction(law.h)
    n = law.P.length()
    zero = arb(0)
    lo = _float_crossing(law, delta_g)
    # eps = 0 is tried first unless the float scan puts the crossing a few cells above 0 (skipping
    # it then only risks a looser answer, never a wrong one: every answer below is certified)
    if law.offset + lo <= 3 and delta_upper(law, zero).upper() <= delta_g.lower():
        return zero
    # the crossing is in ((lo-1) h, lo h], where delta_upper is the line A - e^eps B of the terms
    # j >= lo; the line's root is a candidate, *certified* by evaluating delta_upper there (every
    # line lies below the convex curve, so a root alone would only be a lower bound)
    i = lo
    A, B = _tail_sums(law.P, i, (-hb).exp())
    B = B * (-hb * law.offset).exp()
    A = A + law.p_inf
    r = (A - delta_g) / B
    cands = []
    if r > 0:
        e = r.log()
        u = e.upper()
        cands += [u, u + u.abs_upper() * arb(2) ** (-ctx.prec // 2) + arb(2) ** (-ctx.prec // 2)]
    seg_hi = hb * (law.offset + i)
    cands += [seg_hi, seg_hi + hb, hb * (law.offset + n)]
    for c in cands:
        c = c.max(zero)
        if delta_upper(law, c).upper() <= delta_g.lower():
            return c
    from exactdp.core.errors import PrecisionError

    raise PrecisionError("could not certify a point of the upper curve below delta_g at this precision")


def _float_crossing(law: Law, delta_g: arb) -> int:
    """The index i whose segment ((i-1) h, i h] holds the crossing delta_upper = delta_g, located by
    a scan of float midpoints from the top (a guess only: the caller certifies the point it returns).

    At the grid point g = offset + i - 1, delta_upper = p_inf + sum_{j >= i} P_j (1 - e^{-(j - g) h});
    T = sum_{j >= i} P_j e^{-(j-g) h} is kept by the recurrence T <- e^{-h} (P_i + T), so nothing
    overflows even far out.
    """
    c = _float_mids(law.P, law.P.length())
    n = len(c)
    eh = math.exp(-float(law.h))  # float ok: locating only
    pinf = float(law.p_inf.mid())  # float ok: locating only
    dg = float(delta_g.mid())  # float ok: locating only
    A = T = 0.0
    start = max(0, -law.offset)
    for i in range(n - 1, start - 1, -1):
        A += c[i]
        T = eh * (c[i] + T)
        if pinf + A - T > dg:  # delta_upper at grid point offset + i - 1 exceeds delta_g
            return i
    return start


def epsilon_lower(law: Law, delta_g: arb, hint: arb | None = None) -> arb:
    """A certified lower bound of the optimal eps: max over cuts j0 of the crossing of its line.

    For a cut j0, f(eps) = p_inf + S_P(j0) - e^eps S_Q(j0) <= delta_true(eps) (docs/pld.md §8), so
    delta_true > delta_g at every eps < log((p_inf + S_P - delta_g)/S_Q): the optimal eps is at least
    that.  A float scan picks the best cuts; each is evaluated in balls.
    """
    if law.Q is None:
        e = epsilon_upper(replace(law, upper=True), delta_g)
        if e is None:
            return arb(0)
        # the exact profile's crossing is certified from above by epsilon_upper; from below, the
        # line of the crossing segment is a lower bound (every line lies below the curve)
        return _exact_crossing_lower(law, delta_g, e)
    pinf = float(law.p_inf.mid())  # float ok: cut selection only
    dg = float(delta_g.mid())  # float ok: cut selection only
    import math

    def score(sp: float, sq: float) -> float | None:  # float ok: cut selection only
        num = pinf + sp - dg
        if num <= 0 or sq <= 0:
            return None
        return math.log(num) - math.log(sq)  # float ok: window or cut selection only; the result is bounded in balls

    # near the answer Q-masses are about P-masses e^{-eps}: scanning Q e^{hint} keeps them in the
    # float range however large eps is (the score only shifts by the constant hint)
    shift = hint if hint is not None and hint.is_finite() else None
    best = arb(0)
    for j0 in _best_cuts(law, score, shift=shift):
        SP, _ = _tail_sums(law.P, j0, arb(1))
        SQ = _q_tail(law, j0)
        num = law.p_inf + SP - delta_g
        if not num > 0 or not SQ > 0:
            continue
        e = (num / SQ).log()
        if e.lower() > best.lower():
            best = e
    return best


def _exact_crossing_lower(law: Law, delta_g: arb, e_up: arb) -> arb:
    """A lower bound of the crossing of an exact law's profile: the best line root below e_up."""
    hb = arb_of_fraction(law.h)
    n = law.P.length()
    best = arb(0)
    t = (e_up / hb - law.offset).upper()
    i0 = int(t.floor().unique_fmpz()) if t.is_finite() else n
    for i in reversed(range(max(0, i0 - 2), min(n, i0 + 3))):  # downwards: each sum extends the last
        A, B = _tail_sums(law.P, i, (-hb).exp())
        B = B * (-hb * law.offset).exp()
        num = law.p_inf + A - delta_g
        if num > 0 and B > 0:
            v = (num / B).log()
            if v.lower() > best.lower():
                best = v
    return best
