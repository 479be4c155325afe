"""Rényi divergences of Poisson-subsampled mechanisms, in Arb, at every order and in each direction
(docs/rdp.md §5).

With (A, B) a mechanism's pair and q the rate, removing a record gives P = (1-q) B + q A against
Q = B; the likelihood ratio is r = P/Q = 1 + w with w = q (A/B - 1) >= -q.  Both directions are one
moment of r under Q (docs/rdp.md §5.1):

* ``remove``: D_alpha(P || Q) = 1/(alpha-1) log E_Q[r^alpha];
* ``add``:    D_alpha(Q || P) = 1/(alpha-1) log E_Q[r^(1-alpha)].

Since E_Q[r] = 1, E_Q[r^beta] = 1 + I(beta) with I(beta) = E_Q[g_beta(w)] and
``g_beta(w) = (1+w)^beta - 1 - beta w >= 0`` (beta > 1 or beta < 0: the gap between a convex power and
its tangent at 1), so D = log1p(I)/(alpha - 1) from a sum or an integral of non-negative terms, with
no cancellation near q = 0.  Each mechanism:

* Gaussian (mu = D/sigma): an integer order in the remove direction is the finite binomial sum of
  Mironov-Talwar-Zhang 2019 (§3.2); every other case is Arb's rigorous integrator over a finite
  interval plus the proved tail bounds of §3.3;
* Laplace (eps = D/b): the ratio is constant on x <= 0 and x >= D (exact terms) and the middle piece
  is one integral over a finite interval (§3.4);
* randomized response and the generic (eps, delta) pair: a finite sum over the outputs (§3.5; with
  delta > 0 the remove direction is +inf, the add direction finite).

A mixture of Gaussians P = sum_i p_i N(s_i, S^2) against Q = N(0, S^2) (the subsampled Gaussian is the
mixture of 0 and D) has the same form, r = 1 + w with w = sum_i p_i expm1(mu_i t - mu_i^2/2): Arb's
integrator with the proved tails of docs/rdp.md §5.6, in both directions and at every order.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from itertools import pairwise
from typing import TypeVar

from flint import acb, arb, ctx, fmpz

from exactdp.core import progress
from exactdp.core.numbers import ExactReal, arb_of_fraction

__all__ = [
    "g_beta",
    "gaussian_add_upper",
    "gaussian_moment",
    "gaussian_tail_bound",
    "generic_moment",
    "laplace_moment",
    "mixture_moment",
    "mixture_tail_bound",
    "moment_divergence",
    "pure_moment",
    "subsampled_gaussian_binomial",
]

#: an Arb real or complex ball
_Ball = TypeVar("_Ball", arb, acb)

#: how many times the integration interval of the Gaussian is widened before its tails' bound is
#: left as it is (the bound is always added to the ball, so stopping early only widens it)
MAX_WIDENINGS = 8


def g_beta(w: _Ball, beta: arb) -> _Ball:
    """``(1+w)^beta - 1 - beta w`` (docs/rdp.md §5.1), evaluated as expm1(beta log1p(w)) - beta w.

    >>> g_beta(arb(1), arb(2)).contains(1)   # 2^2 - 1 - 2
    True
    """
    return (beta * w.log1p()).expm1() - beta * w


def moment_divergence(i: arb, alpha: arb) -> arb:
    """D_alpha = log1p(I)/(alpha - 1) from I = E_Q[r^beta] - 1 (docs/rdp.md §5.1)."""
    return i.log1p() / (alpha - 1)


def subsampled_gaussian_binomial(mu: Fraction, q: Fraction, n: int) -> arb:
    """I = E_Q[r^n] - 1 of the subsampled Gaussian at an integer order n >= 2, remove direction:
    ``sum_{k=2}^{n} C(n, k) (1-q)^(n-k) q^k expm1((k^2 - k) mu^2 / 2)`` (docs/rdp.md §5.2), positive terms.

    >>> subsampled_gaussian_binomial(Fraction(1), Fraction(1, 2), 2).overlaps((arb.const_e() - 1) / 4)
    True
    """
    qa = arb_of_fraction(q)
    c = arb_of_fraction(mu * mu / 2)
    s = arb(0)
    binom = fmpz(n * (n - 1) // 2)
    for k in range(2, n + 1):
        s += arb(binom) * (1 - qa) ** (n - k) * qa ** k * (c * (k * k - k)).expm1()
        binom = binom * (n - k) // (k + 1)
    return s


def gaussian_add_upper(mu: Fraction, q: Fraction, alpha: Fraction) -> arb:
    """An upper bound on the subsampled Gaussian's add-direction divergence by Taylor's theorem to the
    fourth order (docs/rdp.md §5.1): with k = alpha - 1 and m_j = E_Q[w^j] (exact finite sums),
    ``E_Q[r^-k] <= 1 + C(k+1,2) m_2 - C(k+2,3) m_3 + C(k+3,4) (1-q)^(-k-4) m_4``.

    >>> gaussian_add_upper(Fraction(1, 4), Fraction(1, 1000), Fraction(256)) < -(1 - arb("0.001")).log()
    True
    """
    qa, k = arb_of_fraction(q), arb_of_fraction(alpha - 1)
    c = arb_of_fraction(mu * mu / 2)
    e = [(c * (i * i - i)).exp() for i in range(5)]  # E_Q[e^{i u}], u = mu t - mu^2/2
    m2 = qa ** 2 * (e[2] - 2 * e[1] + e[0])
    m3 = qa ** 3 * (e[3] - 3 * e[2] + 3 * e[1] - e[0])
    m4 = qa ** 4 * (e[4] - 4 * e[3] + 6 * e[2] - 4 * e[1] + e[0])
    i = (k * (k + 1) / 2 * m2 - k * (k + 1) * (k + 2) / 6 * m3
         + k * (k + 1) * (k + 2) * (k + 3) / 24 * (1 - qa) ** (-k - 4) * m4)
    return moment_divergence(i, k + 1)


def _upper_tail(x: arb) -> arb:
    """P(N(0,1) > x) = erfc(x / sqrt 2) / 2."""
    return (x / arb(2).sqrt()).erfc() / 2


def _gaussian_integrand(mu: arb, q: arb, beta: arb) -> Callable[[acb, bool], acb]:
    """t -> g_beta(q expm1(mu t - mu^2/2)) phi(t), with the analyticity check of docs/rdp.md §5.3:
    log1p is taken only where Re(1 + w) > 0 on the whole ball."""
    half = mu * mu / 2
    norm = 1 / (2 * arb.pi()).sqrt()

    def f(t: acb, analytic: bool) -> acb:
        w = q * (mu * t - half).expm1()
        if analytic and not (1 + w).real > 0:
            return acb(arb("nan"))
        return g_beta(w, beta) * norm * (-t * t / 2).exp()

    return f


def gaussian_tail_bound(mu: arb, q: arb, beta: arb, left: arb, right: arb) -> arb:
    """An upper bound on the integral of g_beta phi over t <= -left and t >= right (docs/rdp.md §5.3),
    for left > 0 and right >= max(beta mu, mu)."""
    if beta > 1:
        lo = beta * q * _upper_tail(left)
        hi = arb(2) ** (beta - 1) * (_upper_tail(right) + q ** beta * (beta * (beta - 1) * mu * mu / 2).exp()
                                     * _upper_tail(right - beta * mu))
        return lo + hi
    k = -beta
    c = (1 - q) ** (-k) - 1
    return c * (_upper_tail(left) + _upper_tail(right)) + k * q * (_upper_tail(left + mu) + _upper_tail(right - mu))


def _integral(f: Callable[[acb, bool], acb], a: arb, b: arb, piece: int = 0) -> arb:
    """The real integral of f over [a, b] by Arb's integrator (the ball encloses it), relative goal a
    quarter of the working precision below it; with ``piece`` > 0 and no finite ball at once, the sum
    over pieces of at most that length (a wide interval whose integrand spans many orders of magnitude
    can exhaust the integrator's evaluation limit at once, but not piece by piece)."""
    progress.tick(f"integrating at {ctx.prec} bits")
    tol = arb(2) ** (-(ctx.prec * 3 // 4))
    whole = acb.integral(f, a, b, rel_tol=tol).real
    if piece <= 0 or whole.is_finite():
        return whole
    n = int(float((b - a).upper())) // piece + 1  # float ok: how many pieces only
    ends = [a + (b - a) * i / n for i in range(n)] + [b]
    return sum((acb.integral(f, lo, hi, rel_tol=tol).real for lo, hi in pairwise(ends)), arb(0))


def _start_cut() -> int:
    """The first cut T of the line: sqrt(2 log 2 (prec + 10)), where phi(T) is about 2^-prec."""
    return int((2 * 0.7 * (ctx.prec + 10)) ** 0.5) + 1  # float ok: only picks the cut; the tails are bounded in Arb


def _line_integral(f: Callable[[acb, bool], acb], tail: Callable[[arb, arb], arb], t: arb, shift: arb,
                   piece: int = 0) -> arb:
    """The integral over the line of a non-negative f: over [-T, T + shift] by Arb's integrator plus
    [0, tail(T, T + shift)], a proved bound on the two tails; T grows (x 3/2) until the bound is below
    the integral times 2^-prec, or MAX_WIDENINGS times (docs/rdp.md §5.3); ``piece`` as for
    :func:`_integral`."""
    left, right = -t, t + shift
    total = _integral(f, left, right, piece)
    bound = tail(-left, right)
    for _ in range(MAX_WIDENINGS):
        if bound.upper() < total.lower() * arb(2) ** (-ctx.prec):
            break
        t = t * 3 / 2
        new_left, new_right = -t, t + shift
        total += _integral(f, new_left, left, piece) + _integral(f, right, new_right, piece)
        left, right = new_left, new_right
        bound = tail(-left, right)
    return total + arb(0).union(bound.upper())


def gaussian_moment(mu: Fraction, q: Fraction, beta: Fraction) -> arb:
    """I = E_Q[r^beta] - 1 of the subsampled Gaussian (mu = D/sigma, 0 < q < 1, beta > 1 or beta < 0)
    at the current precision: the integral over [-T, T + max(beta mu, mu)] plus [0, the tails' bound]
    (docs/rdp.md §5.3); T grows until the bound is below the integral times 2^-prec.

    >>> gaussian_moment(Fraction(1), Fraction(1, 2), Fraction(2)).overlaps((arb.const_e() - 1) / 4)  # the binomial sum
    True
    """
    m, qa, b = arb_of_fraction(mu), arb_of_fraction(q), arb_of_fraction(beta)
    return _line_integral(_gaussian_integrand(m, qa, b), lambda lo, hi: gaussian_tail_bound(m, qa, b, lo, hi),
                          arb(_start_cut()), arb_of_fraction(max(beta * mu, mu)))


Components = list[tuple[arb, arb]]

#: the longest piece of the line Arb's integrator is given at once for a mixture (see :func:`_integral`)
MIXTURE_PIECE = 32


def _mixture_integrand(comps: Components, beta: arb) -> Callable[[acb, bool], acb]:
    """t -> g_beta(w(t)) phi(t) for the mixture, w = sum_i p_i expm1(mu_i t - mu_i^2/2) (docs/rdp.md §5.6),
    with the analyticity check of §5.3 on r = 1 + w = sum_i p_i e^{mu_i t - mu_i^2/2}; log r is taken
    as log1p(w) where |w| < 1/2 and as log(r) elsewhere (r may be tiny when no sensitivity is 0)."""
    norm = 1 / (2 * arb.pi()).sqrt()
    moving = [(mu, p, mu * mu / 2) for mu, p in comps if not mu.is_zero()]
    still = sum((p for mu, p in comps if mu.is_zero()), arb(0))

    def f(t: acb, analytic: bool) -> acb:
        w, r = acb(0), acb(still)
        for mu, p, h in moving:
            u = mu * t - h
            w += p * u.expm1()
            r += p * u.exp()
        if analytic and not r.real > 0:
            return acb(arb("nan"))
        lr = w.log1p() if abs(w) < arb(1) / 2 else r.log()
        return ((beta * lr).expm1() - beta * w) * norm * (-t * t / 2).exp()

    return f


def mixture_tail_bound(comps: Components, beta: arb, left: arb, right: arb) -> arb:
    """An upper bound on the integral of g_beta phi of the mixture over t <= -left and t >= right
    (docs/rdp.md §5.6), for left > 0 and right >= max(beta, 1) max_i mu_i."""
    p0 = sum((p for mu, p in comps if mu.is_zero()), arb(0))
    moving = [(mu, p) for mu, p in comps if not mu.is_zero()]
    if beta > 1:
        hi = p0 * _upper_tail(right)
        for mu, p in moving:
            hi += p * (beta * (beta - 1) * mu * mu / 2).exp() * _upper_tail(right - beta * mu)
        return beta * (1 - p0) * _upper_tail(left) + hi
    k = -beta
    m1 = sum((p * mu for mu, p in moving), arb(0))
    m2 = sum((p * mu * mu for mu, p in moving), arb(0))
    lo = (k * m2 / 2 + k * k * m1 * m1 / 2).exp() * _upper_tail(left - k * m1)
    for mu, p in moving:  # r >= p_j e^{u_j}: r^(-k) <= p_j^(-k) e^{-k u_j}
        lo = lo.min(p ** (-k) * (k * mu * mu / 2 + k * k * mu * mu / 2).exp() * _upper_tail(left - k * mu))
    if p0 > 0:
        lo = lo.min((p0 ** (-k) - 1) * _upper_tail(left))
    return lo + k * sum((p * _upper_tail(right - mu) for mu, p in moving), arb(0))


def mixture_moment(sigma: Fraction, sens: tuple[Fraction, ...], probs: tuple[Fraction, ...], beta: Fraction) -> arb:
    """I = E_Q[r^beta] - 1 for P = sum_i p_i N(s_i, sigma^2) against Q = N(0, sigma^2) (s_i >= 0, beta > 1
    or beta < 0) at the current precision: the integral over [-T, T + max(beta, 1) max mu_i] plus [0, the
    tails' bound] (docs/rdp.md §5.6); with no sensitivity 0 and beta < 0 the cut starts about
    -beta mu_min further left, where r^beta phi peaks.

    >>> half = (Fraction(1, 2), Fraction(1, 2))
    >>> mixture_moment(Fraction(1), (Fraction(0), Fraction(1)), half, Fraction(2)).overlaps((arb.const_e() - 1) / 4)
    True
    """
    comps = [(arb_of_fraction(s / sigma), arb_of_fraction(p)) for s, p in zip(sens, probs)]
    b = arb_of_fraction(beta)
    top = max(sens) / sigma
    t = _start_cut()
    if beta < 0 and min(sens) > 0:  # the peak of r^beta phi is near -k mu_min, the tail p_min^(-k) times larger
        k, low = -beta, min(sens) / sigma
        p_low = probs[sens.index(min(sens))]
        t += math.ceil(k * low + math.sqrt(2 * float(k) * (math.log(p_low.denominator) - math.log(p_low.numerator))))  # float ok: the cut only
    return _line_integral(_mixture_integrand(comps, b), lambda lo, hi: mixture_tail_bound(comps, b, lo, hi),
                          arb(t), arb_of_fraction(max(beta * top, top)), piece=MIXTURE_PIECE)


def laplace_moment(eps: Fraction, q: Fraction, beta: Fraction) -> arb:
    """I = E_Q[r^beta] - 1 of the subsampled Laplace (eps = D/b, 0 < q < 1): the two constant pieces
    exactly and the middle one, y = x/b in (0, eps), by Arb's integrator (docs/rdp.md §5.4).

    >>> print(laplace_moment(Fraction(1), Fraction(1, 2), Fraction(2)).str(10))   # mpmath.quad: 0.2143249116795...
    [0.2143249117 +/- 2.05e-11]
    """
    e, qa, b = arb_of_fraction(eps), arb_of_fraction(q), arb_of_fraction(beta)

    def f(y: acb, analytic: bool) -> acb:
        w = qa * (2 * y - e).expm1()
        if analytic and not (1 + w).real > 0:
            return acb(arb("nan"))
        return g_beta(w, b) * (-y).exp() / 2

    ends = (g_beta(qa * (-e).expm1(), b) + (-e).exp() * g_beta(qa * e.expm1(), b)) / 2
    return ends + _integral(f, arb(0), e)


def pure_moment(eps: ExactReal, categories: int, q: Fraction, beta: Fraction) -> arb:
    """I = E_Q[r^beta] - 1 of subsampled k-ary randomized response (k = 2: the generic (eps, 0) pair):
    the outputs x and x' (the others have r = 1), a finite sum (docs/rdp.md §5.5).

    >>> pure_moment(ExactReal.parse("log(3)"), 2, Fraction(1, 2), Fraction(2)).contains(arb(1) / 3)  # (1 + 3/9)/4
    True
    """
    x, qa, b = eps.exp_arb(), arb_of_fraction(q), arb_of_fraction(beta)
    z = x + (categories - 1)
    return (g_beta(qa * (x - 1), b) + x * g_beta(qa * (1 / x - 1), b)) / z



def generic_moment(eps: ExactReal, delta: Fraction, q: Fraction, beta: Fraction) -> arb:
    """I = E_Q[r^beta] - 1 of a subsampled generic (eps, delta) pair, for delta = 0 or beta < 0 (the add
    direction; the remove one is +inf when delta > 0): over the outputs where B > 0,
    ``sum B g_beta(w) - beta q delta`` (docs/rdp.md §5.5).

    >>> generic_moment(ExactReal.parse("log(3)"), Fraction(0), Fraction(1, 2), Fraction(2)).contains(arb(1) / 3)
    True
    """
    x, qa, b, d = eps.exp_arb(), arb_of_fraction(q), arb_of_fraction(beta), arb_of_fraction(delta)
    z = (1 - d) / (x + 1)
    s = z * (g_beta(qa * (x - 1), b) + x * g_beta(qa * (1 / x - 1), b))
    return s + d * g_beta(-qa, b) - b * qa * d if delta > 0 else s
