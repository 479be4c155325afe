"""The Rényi divergence of a fixed batch drawn without replacement (replace-one): a certified bracket.

A mechanism M run on a batch of m records drawn uniformly without replacement from n (``sample=M,of=N``,
gamma = m/n, the replace-one relation; docs/mathematics.md §9, Theorem 9.3) has no closed-form Rényi
divergence.  exactdp brackets it (docs/rdp.md §6):

* **upper end**: the general upper bound of Wang, Balle and Kasiviswanathan (AISTATS 2019, Thm 9),
  at an integer order n >= 2, from the base mechanism's own certified divergences eps(j) (j = 2..n) and
  its max-divergence eps(inf):

      (n-1) eps'(n) <= log(1 + gamma^2 C(n,2) min{4 (e^{eps(2)} - 1), e^{eps(2)} min{2, (e^{eps(inf)} - 1)^2}}
                         + sum_{j=3}^{n} gamma^j C(n,j) e^{(j-1) eps(j)} min{2, (e^{eps(inf)} - 1)^j}),

  and at a fractional order the linear interpolation of that cumulant bound K(n) = (n-1) eps'(n) between
  the neighbouring integers (K(1) = 0): the cumulant of every pair, ``log E_Q[(P/Q)^alpha]``, is convex
  in alpha (Hölder), so is their supremum over neighbouring datasets, and a convex function lies below
  its chords (docs/rdp.md §6);
* **lower end**: the divergence of one neighbouring pair the batch attains, ((1-gamma) B + gamma A, B)
  and its reverse, with (A, B) the mechanism's pair: the Poisson-subsample pair of rate gamma
  (:func:`attained_groups`; docs/rdp.md §5), which a dataset attains (the other records at the value
  that gives B, the changed record at the value that gives A).

The bound is an upper bound, not the divergence: the enclosure names it (:data:`WBK_BOUND`), and a
value between the two ends cannot be called sound or unsound.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fractions import Fraction
from math import comb

from flint import arb

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

__all__ = ["WBK_BOUND", "attained_groups", "max_divergence", "wbk_cumulant_upper", "wbk_divergence_upper"]

#: the name of the bound in an answer's ``algorithm`` and ``bound`` keys
WBK_BOUND = "wbk19-thm9"


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


def wbk_cumulant_upper(gamma: Fraction, n: int, eps_of: Callable[[int], arb], eps_inf: arb | None) -> arb:
    """The bound of Wang-Balle-Kasiviswanathan 2019, Thm 9, on ``(n-1) eps'(n)`` (the log of the module
    docstring's sum), an integer order n >= 2; ``eps_of(j)`` the base mechanism's divergence at order j,
    ``eps_inf`` its max-divergence (None: +inf, so every ``min{2, .}`` is 2).

    >>> x = wbk_cumulant_upper(Fraction(1, 2), 2, lambda j: arb(j) / 2, None)   # Gaussian mu = 1
    >>> print(x.mid().str(10, radius=False))   # log(1 + min{4 (e - 1), 2e} / 4) = log(1 + e/2)
    0.8582975334
    """
    if n < 2:
        raise InvalidParameterError(f"order={n}: the bound is stated for integer orders >= 2")
    g = arb_of_fraction(gamma)
    big = None if eps_inf is None else eps_inf.expm1()

    def cap(j: int) -> arb:
        return arb(2) if big is None else arb(2).min(big ** j)

    e2 = eps_of(2)
    s = g ** 2 * comb(n, 2) * (4 * e2.expm1()).min(e2.exp() * cap(2))
    gj = g ** 2
    for j in range(3, n + 1):
        gj *= g
        s += gj * comb(n, j) * ((j - 1) * eps_of(j)).exp() * cap(j)
    return s.log1p()


def wbk_divergence_upper(gamma: Fraction, alpha: Fraction, eps_of: Callable[[int], arb],
                         eps_inf: arb | None) -> arb:
    """An upper bound on the divergence at order ``alpha > 1``: :func:`wbk_cumulant_upper` over
    ``alpha - 1`` at an integer order, else the chord of the cumulant bound between ``floor(alpha)`` and
    ``ceil(alpha)`` (K(1) = 0) over ``alpha - 1`` (module docstring; docs/rdp.md §6).

    >>> one = lambda j: arb(j) / 2
    >>> k2 = wbk_cumulant_upper(Fraction(1, 2), 2, one, None)
    >>> (wbk_divergence_upper(Fraction(1, 2), Fraction(3, 2), one, None) - k2).contains(0)   # (K(2)/2)/(1/2)
    True
    """
    cache: dict[int, arb] = {}

    def eps(j: int) -> arb:
        if j not in cache:
            cache[j] = eps_of(j)
        return cache[j]

    def cumulant(n: int) -> arb:
        return arb(0) if n == 1 else wbk_cumulant_upper(gamma, n, eps, eps_inf)

    lo, t = alpha.numerator // alpha.denominator, alpha - alpha.numerator // alpha.denominator
    a = arb_of_fraction(alpha)
    if t == 0:
        return cumulant(lo) / (a - 1)
    tt = arb_of_fraction(t)
    return ((1 - tt) * cumulant(lo) + tt * cumulant(lo + 1)) / (a - 1)


def attained_groups(groups: Sequence[tuple[object, int]]) -> list[tuple[object, int]]:
    """The composition's groups with each fixed batch (gamma < 1) replaced by the pair a dataset attains,
    ((1-gamma) B + gamma A, B) and its reverse: the Poisson-subsample pair of rate gamma (module docstring);
    their divergence is a lower end of the composition's.

    >>> [(str(m), n) for m, n in attained_groups([(SampledWithoutReplacement(Gaussian(1), 6, 600), 3)])]
    [('gaussian:sigma=1,q=0.01', 3)]
    """
    return [(PoissonSampled(m.mechanism, m.gamma) if isinstance(m, SampledWithoutReplacement) else m, n)
            for m, n in groups]
