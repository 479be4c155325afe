"""The Rényi divergence of a fixed batch drawn without replacement (replace-one): a certified bracket.

A mechanism M run on a batch of m records drawn uniformly without replacement from n (``sample=M,of=N``,
gamma = m/n, the replace-one relation; docs/mathematics.md §9, Theorem 9.3) has no closed-form Rényi
divergence.  exactdp brackets it (docs/rdp.md §6):

* **upper end**: the general upper bound of Wang, Balle and Kasiviswanathan (AISTATS 2019, Thm 9),
  at an integer order n >= 2, from the base mechanism's own certified divergences eps(j) (j = 2..n) and
  its max-divergence eps(inf):

      (n-1) eps'(n) <= log(1 + gamma^2 C(n,2) min{4 (e^{eps(2)} - 1), e^{eps(2)} min{2, (e^{eps(inf)} - 1)^2}}
                         + sum_{j=3}^{n} gamma^j C(n,j) e^{(j-1) eps(j)} min{2, (e^{eps(inf)} - 1)^j}),

  and for the Gaussian its strengthening (Thm 27 of the same paper, the bound dp_accounting's
  ``RdpAccountant`` computes): each term j >= 3 is the smaller of the above and
  ``gamma^j C(n,j) 4 sqrt(chi(2 floor(j/2)) chi(2 ceil(j/2)))``, with ``chi(k) = E_Q[(P/Q - 1)^k]`` the
  Pearson-Vajda moment of the Gaussian pair (:func:`gaussian_pearson_vajda`; at j = 2 it is the
  ``4 (e^{eps(2)} - 1)`` already there);
  at a fractional order the linear interpolation of that cumulant bound K(n) = (n-1) eps'(n) between
  the neighbouring integers (K(1) = 0): the cumulant of every pair, ``log E_Q[(P/Q)^alpha]``, is convex
  in alpha (Hölder), so is their supremum over neighbouring datasets, and a convex function lies below
  its chords (docs/rdp.md §6);
* **lower end**: the divergence of one neighbouring pair the batch attains, ((1-gamma) B + gamma A, B)
  and its reverse, with (A, B) the mechanism's pair: the Poisson-subsample pair of rate gamma
  (:func:`attained_groups`; docs/rdp.md §5), which a dataset attains (the other records at the value
  that gives B, the changed record at the value that gives A).

The bound is an upper bound, not the divergence: the enclosure names it (:data:`WBK_BOUND` where
Thm 9 gives it, :data:`WBK27_BOUND` where a Thm 27 term is smaller; :func:`is_wbk_bound`), and a value
between the two ends cannot be called sound or unsound.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fractions import Fraction
from functools import lru_cache
from math import comb

from flint import arb, ctx

from exactdp.core.errors import InvalidParameterError
from exactdp.core.numbers import arb_of_fraction
from exactdp.model.generic import Mechanism
from exactdp.model.mechanisms import (
    DiscreteGaussian,
    DiscreteLaplace,
    Gaussian,
    Laplace,
    PoissonSampled,
    RandomizedResponse,
    SampledWithoutReplacement,
)

__all__ = [
    "THM27_MAX_TERM",
    "WBK27_BOUND",
    "WBK_BOUND",
    "WBK_BOUNDS",
    "WBK_MIXED_BOUND",
    "attained_groups",
    "bound_name",
    "gaussian_pearson_vajda",
    "is_wbk_bound",
    "max_divergence",
    "wbk_bound",
    "wbk_cumulant_upper",
    "wbk_divergence_upper",
]

#: the name of the bound in an answer's ``algorithm`` and ``bound`` keys: the general bound (Thm 9)
WBK_BOUND = "wbk19-thm9"
#: ... where the Gaussian's strengthening (Thm 27) is smaller in at least one term
WBK27_BOUND = "wbk19-thm27"
#: ... a composition with batches of both kinds (a Gaussian's beside another mechanism's)
WBK_MIXED_BOUND = "wbk19-thm9+thm27"
#: every name an upper end of a bracket may carry
WBK_BOUNDS = (WBK_BOUND, WBK27_BOUND, WBK_MIXED_BOUND)

#: the largest term j given its Thm 27 form (the Pearson-Vajda table costs O(j^2) at a few thousand bits);
#: past it the Thm 9 term, the other side of the same min, so still the bound of Thm 27, only looser
THM27_MAX_TERM = 1024

#: the most bits the Pearson-Vajda moments are computed at (the alternating sum cancels)
_MAX_PV_PREC = 1 << 17


def is_wbk_bound(algorithm: str | None) -> bool:
    """Whether an enclosure's ``algorithm`` names a bracket whose upper end is a WBK19 bound.

    >>> is_wbk_bound(WBK27_BOUND), is_wbk_bound("rdp")
    (True, False)
    """
    return algorithm in WBK_BOUNDS


def bound_name(names: Sequence[str]) -> str:
    """The name of a composition's bound from its batches' own (each :data:`WBK_BOUND` or
    :data:`WBK27_BOUND`): Thm 27 where every batch's is, Thm 9 where none is, else both.

    >>> bound_name([WBK27_BOUND, WBK27_BOUND]), bound_name([WBK_BOUND]), bound_name([WBK_BOUND, WBK27_BOUND])
    ('wbk19-thm27', 'wbk19-thm9', 'wbk19-thm9+thm27')
    """
    kinds = set(names)
    if kinds == {WBK27_BOUND}:
        return WBK27_BOUND
    return WBK_MIXED_BOUND if WBK27_BOUND in kinds else WBK_BOUND


def gaussian_pearson_vajda(mu2: Fraction, k: int) -> arb:
    """The Pearson-Vajda moment ``chi(k) = E_Q[(P/Q - 1)^k]`` of the Gaussian pair P = N(mu, 1),
    Q = N(0, 1), mu^2 = ``mu2``, an even k >= 2: the k-th forward difference at 0 of
    ``g(i) = E_Q[(P/Q)^i] = e^{i (i-1) mu^2 / 2}``, ``sum_i C(k,i) (-1)^{k-i} g(i)`` (docs/rdp.md §6).

    The sum cancels (its terms are far larger than it when mu is small), so it is evaluated at the
    working precision plus as many bits as the cancellation takes (doubling until the ball is positive
    and as accurate as the working precision asks, at most 2^17 bits; past that the ball [0, its upper
    end], still an enclosure of a positive number).

    >>> print(gaussian_pearson_vajda(Fraction(1), 2).mid().str(12, radius=False))   # e - 1
    1.71828182846
    """
    if k < 2 or k % 2:
        raise InvalidParameterError(f"k={k}: the Pearson-Vajda moment is used at even k >= 2")
    if mu2 <= 0:
        raise InvalidParameterError(f"mu2={mu2}: the Gaussian pair's Pearson-Vajda moments are taken for mu2 > 0")
    size = max(64, 1 << (k - 1).bit_length())  # one table for every k up to a power of two
    return _pearson_vajda_table(mu2, size, ctx.prec)[k // 2 - 1]


@lru_cache(maxsize=64)
def _pearson_vajda_table(mu2: Fraction, k_max: int, target: int) -> tuple[arb, ...]:
    """``chi(2), chi(4), ..., chi(2 floor(k_max/2))`` of :func:`gaussian_pearson_vajda`, each to about
    ``target`` bits (the forward differences of g by repeated differencing, one table for every k)."""
    prec = target + k_max + 64
    while True:
        with ctx.workprec(prec):
            step = arb_of_fraction(mu2).exp()  # g(i+1) / g(i) = e^{i mu^2} = step^i
            ratio, g, vals = arb(1), arb(1), [arb(1)]
            for _ in range(k_max):
                g *= ratio
                vals.append(g)
                ratio *= step
            out: list[arb] = []
            for k in range(1, k_max + 1):  # after k passes vals[0] is the k-th forward difference at 0
                vals = [vals[i + 1] - vals[i] for i in range(len(vals) - 1)]
                if k % 2 == 0:
                    out.append(vals[0])
        if all(x > 0 and x.rel_accuracy_bits() >= target for x in out) or prec >= _MAX_PV_PREC:
            return tuple(x if x > 0 else x.nonnegative_part() for x in out)
        prec *= 2


def max_divergence(m: object) -> arb | None:
    """The max-divergence eps(inf) of a symmetric mechanism's pair (its pure-DP eps), or None for +inf
    (a Gaussian or discrete Gaussian: the likelihood ratio is unbounded).

    >>> print(max_divergence(Laplace(2)), max_divergence(Gaussian(1)))
    0.500000000000000 None
    """
    if isinstance(m, (Gaussian, DiscreteGaussian)):
        return None
    if isinstance(m, (Laplace, DiscreteLaplace)):
        return arb_of_fraction(m.eps)
    if isinstance(m, RandomizedResponse) or (isinstance(m, Mechanism) and m.delta == 0):
        return m.eps.arb()
    raise InvalidParameterError(f"mechanism {m!r}: the Rényi divergence of a fixed batch without replacement is bounded "
                                "for the Gaussian, Laplace, discrete Laplace, discrete Gaussian, randomized response "
                                "and pure pairs")


def wbk_cumulant_upper(gamma: Fraction, n: int, eps_of: Callable[[int], arb], eps_inf: arb | None,
                       pearson: Callable[[int], arb] | None = None) -> arb:
    """The bound of Wang-Balle-Kasiviswanathan 2019, Thm 9, on ``(n-1) eps'(n)`` (the log of the module
    docstring's sum), an integer order n >= 2; ``eps_of(j)`` the base mechanism's divergence at order j,
    ``eps_inf`` its max-divergence (None: +inf, so every ``min{2, .}`` is 2); with ``pearson(k)`` the
    pair's Pearson-Vajda moment at even k (a Gaussian's, :func:`gaussian_pearson_vajda`), the bound of
    Thm 27: each term j >= 3 the smaller of Thm 9's and ``4 sqrt(pearson(2 floor(j/2)) pearson(2 ceil(j/2)))``
    times ``gamma^j C(n,j)`` (up to j = :data:`THM27_MAX_TERM`, past it Thm 9's).

    >>> x = wbk_cumulant_upper(Fraction(1, 2), 2, lambda j: arb(j) / 2, None)   # Gaussian mu = 1
    >>> print(x.mid().str(10, radius=False))   # log(1 + min{4 (e - 1), 2e} / 4) = log(1 + e/2)
    0.8582975334
    """
    return _cumulant(gamma, n, eps_of, eps_inf, pearson)[0]


def _cumulant(gamma: Fraction, n: int, eps_of: Callable[[int], arb], eps_inf: arb | None,
              pearson: Callable[[int], arb] | None) -> tuple[arb, bool]:
    """:func:`wbk_cumulant_upper` and whether a Thm 27 term is below its Thm 9 term (a ball below)."""
    if n < 2:
        raise InvalidParameterError(f"order={n}: the bound is stated for integer orders >= 2")
    g = arb_of_fraction(gamma)
    big = None if eps_inf is None else eps_inf.expm1()

    def cap(j: int) -> arb:
        return arb(2) if big is None else arb(2).min(big ** j)

    e2 = eps_of(2)
    s = g ** 2 * comb(n, 2) * (4 * e2.expm1()).min(e2.exp() * cap(2))
    gj, won = g ** 2, False
    for j in range(3, n + 1):
        gj *= g
        term = ((j - 1) * eps_of(j)).exp() * cap(j)
        if pearson is not None and j <= THM27_MAX_TERM:
            pv = 4 * (pearson(2 * (j // 2)) * pearson(2 * ((j + 1) // 2))).sqrt()
            won = won or bool(pv < term)
            term = term.min(pv)
        s += gj * comb(n, j) * term
    return s.log1p(), won


def wbk_divergence_upper(gamma: Fraction, alpha: Fraction, eps_of: Callable[[int], arb],
                         eps_inf: arb | None, pearson: Callable[[int], arb] | None = None) -> arb:
    """An upper bound on the divergence at order ``alpha > 1``: :func:`wbk_cumulant_upper` over
    ``alpha - 1`` at an integer order, else the chord of the cumulant bound between ``floor(alpha)`` and
    ``ceil(alpha)`` (K(1) = 0) over ``alpha - 1`` (module docstring; docs/rdp.md §6).

    >>> one = lambda j: arb(j) / 2
    >>> k2 = wbk_cumulant_upper(Fraction(1, 2), 2, one, None)
    >>> (wbk_divergence_upper(Fraction(1, 2), Fraction(3, 2), one, None) - k2).contains(0)   # (K(2)/2)/(1/2)
    True
    """
    return wbk_bound(gamma, alpha, eps_of, eps_inf, pearson)[0]


def wbk_bound(gamma: Fraction, alpha: Fraction, eps_of: Callable[[int], arb], eps_inf: arb | None,
              pearson: Callable[[int], arb] | None = None) -> tuple[arb, str]:
    """:func:`wbk_divergence_upper` and the name of the bound that gives it: :data:`WBK27_BOUND` where a
    Thm 27 term is smaller than its Thm 9 term at ``floor(alpha)`` or ``ceil(alpha)``, else :data:`WBK_BOUND`.

    >>> pv = lambda k: gaussian_pearson_vajda(Fraction(1, 4), k)   # sigma = 2
    >>> eps = lambda j: arb(j) / 8
    >>> [wbk_bound(Fraction(1, 10), a, eps, None, pv)[1] for a in (Fraction(2), Fraction(5, 2), Fraction(8))]
    ['wbk19-thm9', 'wbk19-thm27', 'wbk19-thm27']
    """
    cache: dict[int, arb] = {}

    def eps(j: int) -> arb:
        if j not in cache:
            cache[j] = eps_of(j)
        return cache[j]

    def cumulant(n: int) -> tuple[arb, bool]:
        return (arb(0), False) if n == 1 else _cumulant(gamma, n, eps, eps_inf, pearson)

    lo, t = alpha.numerator // alpha.denominator, alpha - alpha.numerator // alpha.denominator
    a = arb_of_fraction(alpha)
    if t == 0:
        k, won = cumulant(lo)
        return k / (a - 1), WBK27_BOUND if won else WBK_BOUND
    tt = arb_of_fraction(t)
    (k_lo, won_lo), (k_hi, won_hi) = cumulant(lo), cumulant(lo + 1)
    return ((1 - tt) * k_lo + tt * k_hi) / (a - 1), WBK27_BOUND if won_lo or won_hi else WBK_BOUND


def attained_groups(groups: Sequence[tuple[object, int]]) -> list[tuple[object, int]]:
    """The composition's groups with each fixed batch (gamma < 1) replaced by the pair a dataset attains,
    ((1-gamma) B + gamma A, B) and its reverse: the Poisson-subsample pair of rate gamma (module docstring);
    their divergence is a lower end of the composition's.

    >>> [(str(m), n) for m, n in attained_groups([(SampledWithoutReplacement(Gaussian(1), 6, 600), 3)])]
    [('gaussian:sigma=1,q=0.01', 3)]
    """
    return [(PoissonSampled(m.mechanism, m.gamma) if isinstance(m, SampledWithoutReplacement) else m, n)
            for m, n in groups]
