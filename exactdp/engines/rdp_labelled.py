"""Rényi divergence bounds from labelled dominating pairs: a batch drawn with replacement and the truncated
subsampled Gaussian (docs/rdp.md §7).

Neither mechanism has a computed Rényi divergence; each is dominated (in the hockey-stick sense, at every
``a >= 0``) by a *labelled* pair ``P* = sum_j w_j (j, P_j)``, ``Q* = sum_j w_j (j, Q_j)`` (docs/mathematics.md
§9, Theorems 9.4 and 9.6).  Two facts make that pair an RDP bound (docs/rdp.md §7):

* **the labelled pair's divergence** is exact: the label is seen, so
  ``e^{(alpha-1) D_alpha(P* || Q*)} = sum_j w_j e^{(alpha-1) D_alpha(P_j || Q_j)}``;
* **hockey-stick dominance implies Rényi dominance**: every f-divergence is an integral of the hockey-stick
  divergences with a non-negative weight (``D_f(P || Q) = int_0^inf (H_g(P || Q) - (1-g)_+) f''(g) dg``, derived
  in docs/rdp.md §7; for ``f(t) = t^alpha`` the weight is ``alpha (alpha-1) g^(alpha-2)``), so a pair
  whose ``H_g`` is at least the mechanism's at every ``g`` has at least its Rényi divergence at every order.

The answer is an enclosure of the BOUND, named :data:`WR_BOUND` or :data:`TRUNC_BOUND` (the ``bound`` key of
an RDP row, as the WBK19 bounds of :mod:`exactdp.engines.rdp_wor`); :func:`attained` gives the pair a
dataset attains, the lower end of the bracket.

>>> from flint import ctx
>>> from exactdp.model.replacement import SampledWithReplacement
>>> with ctx.workprec(64):   # M = N = 2: b = (1/4, 1/2, 1/4), (alpha-1) D_alpha(N(j) || N(0)) = j^2 at alpha = 2
...     x = with_replacement_divergence(SampledWithReplacement(Gaussian(1), 2, 2), Fraction(2))
>>> print(x.mid().str(12, radius=False))   # log(1/4 + e/2 + e^4/4)
2.72514841808
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fractions import Fraction
from math import comb

from flint import arb, fmpq

from exactdp.core.errors import InvalidParameterError
from exactdp.core.numbers import arb_of_fraction
from exactdp.engines.discrete_noise import dgauss_rdp, dlaplace_atoms
from exactdp.engines.rdp_wor import WBK27_BOUND, WBK_BOUND
from exactdp.model.mechanisms import (
    DiscreteGaussian,
    DiscreteLaplace,
    Gaussian,
    Laplace,
    MixtureOfGaussians,
    PoissonSampled,
)
from exactdp.model.replacement import SampledWithReplacement
from exactdp.model.truncation import TruncatedSubsampledGaussian, truncation_weight_ints

__all__ = ["ATTAINED_MAX_DRAWS", "DISCRETE_EXACT_WORK", "LABELLED_BOUNDS", "TRUNC_BOUND", "WR_BOUND", "attained",
           "bound_of", "compose_names", "is_rdp_bound", "truncated_add_upper", "truncated_divergence",
           "with_replacement_divergence"]

#: the name of the bound of a batch drawn with replacement (Theorem 9.6's labelled pair)
WR_BOUND = "labelled-thm9.6"
#: the name of the bound of the truncated subsampled Gaussian (Theorem 9.4's labelled or diluted pair)
TRUNC_BOUND = "labelled-thm9.4"
LABELLED_BOUNDS = (WR_BOUND, TRUNC_BOUND)
_TOKENS = frozenset((WBK_BOUND, WBK27_BOUND, "thm27", WR_BOUND, TRUNC_BOUND))

#: the most atoms (sum over the labels j of j D + 1) the discrete Laplace's exact moments may cost, and
#: the most labels whose discrete Gaussian moment is computed exactly; past them each label's moment
#: takes its upper bound (the pure bound e^{(alpha-1) j eps}, the continuous Gaussian's), docs/rdp.md §7
DISCRETE_EXACT_WORK = 200_000
_DGAUSS_EXACT_LABELS = 64
#: the most draws whose attained pair (a mixture of M + 1 Gaussians) is computed for the lower end
ATTAINED_MAX_DRAWS = 32

#: a rate whose exact fraction has more bits than this is rounded to a multiple of 2^-_RATE_BITS
_RATE_BITS = 256
_MAX_EXACT_BITS = 1 << 17


def is_rdp_bound(algorithm: str | None) -> bool:
    """Whether an RDP enclosure's ``algorithm`` names a bracket whose upper end is a bound (WBK19's or a
    labelled pair's): every ``+``-separated part a bound's name.

    >>> is_rdp_bound("wbk19-thm9+thm27"), is_rdp_bound("wbk19-thm9+labelled-thm9.6"), is_rdp_bound("rdp")
    (True, True, False)
    """
    return isinstance(algorithm, str) and all(p in _TOKENS for p in algorithm.split("+"))


def compose_names(names: Sequence[str]) -> str:
    """One name for a composition's bounds, each named once in the order first met.

    >>> compose_names(["wbk19-thm27", WR_BOUND, WR_BOUND, TRUNC_BOUND])
    'wbk19-thm27+labelled-thm9.6+labelled-thm9.4'
    """
    return "+".join(dict.fromkeys(names))


def bound_of(m: object) -> str | None:
    """The name of the labelled bound that answers ``m``'s divergence, or None (not one of them)."""
    if isinstance(m, SampledWithReplacement):
        return WR_BOUND
    if isinstance(m, TruncatedSubsampledGaussian):
        return TRUNC_BOUND
    return None


def _rate(num: int, den: int, up: bool) -> Fraction:
    """``num/den``, or rounded up (``up``) or down to a multiple of 2^-_RATE_BITS when its fraction is huge.

    >>> _rate(1, 3, True), _rate(1, 3 << (1 << 17), False)
    (Fraction(1, 3), Fraction(0, 1))
    """
    if den.bit_length() <= _MAX_EXACT_BITS:
        return Fraction(num, den)
    return Fraction(-((-num << _RATE_BITS) // den) if up else (num << _RATE_BITS) // den, 1 << _RATE_BITS)


def _mixed_rate(m: TruncatedSubsampledGaussian, up: bool) -> Fraction:
    """r = (1 - t) q + t g, the chance that the record is in the batch (Theorem 9.4)."""
    (tn, td), (gn, gd) = truncation_weight_ints(m.q, m.truncate, m.of)
    a, b = m.q.numerator, m.q.denominator
    return _rate((td - tn) * a * gd + tn * gn * b, td * b * gd, up)


def _labelled(parts: Sequence[tuple[arb, arb]], a: arb) -> arb:
    """D_alpha of a labelled pair from its parts ``(weight, (alpha-1) D_alpha of the part)``:
    log(sum_j w_j e^{(alpha-1) D_j}) / (alpha - 1)."""
    return sum((w * k.exp() for w, k in parts), arb(0)).log() / (a - 1)


def with_replacement_divergence(m: SampledWithReplacement, alpha: Fraction) -> arb:
    """An upper bound on D_alpha of a batch drawn with replacement (either direction: the pair is
    symmetric): the labelled pair of Theorem 9.6, ``log(sum_{j=0}^{M} b_j e^{(alpha-1) D_alpha(A_{jD} || B)})/(alpha-1)``,
    b_j = C(M, j) (1/N)^j (1 - 1/N)^(M-j), every label to j = M (no tail cut: the pair without noise has an
    infinite divergence); each label's moment in closed form (Gaussian, Laplace) or exact (the discrete ones, up
    to :data:`DISCRETE_EXACT_WORK`; past it its upper bound), docs/rdp.md §7."""
    a = arb_of_fraction(alpha)
    am1 = a - 1
    inner, big_m, n = m.mechanism, m.sample, m.of
    moment = _label_moments(inner, alpha, big_m)
    if n == 1:  # every draw is the record
        return moment(big_m) / am1
    b = arb_of_fraction(Fraction(n - 1, n)) ** big_m
    s = b  # j = 0: the pair (B, B)
    for j in range(1, big_m + 1):
        b *= arb(fmpq(big_m - j + 1, j * (n - 1)))
        s += b * moment(j).exp()
    return s.log() / am1


def _label_moments(inner: object, alpha: Fraction, big_m: int) -> Callable[[int], arb]:
    """j -> (alpha-1) D_alpha of the inner mechanism's pair at j times its sensitivity, or an upper bound."""
    a = arb_of_fraction(alpha)
    am1 = a - 1
    if isinstance(inner, Gaussian):
        c = am1 * a * arb_of_fraction(inner.mu2) / 2
        return lambda j: c * (j * j)
    if isinstance(inner, Laplace):
        e = arb_of_fraction(inner.eps)
        u, v = a / (2 * a - 1), am1 / (2 * a - 1)
        return lambda j: (u * (am1 * e * j).exp() + v * (-a * e * j).exp()).log()
    if isinstance(inner, DiscreteLaplace):
        d, eps = inner.sensitivity, arb_of_fraction(inner.eps)
        exact, work = 0, 0
        while exact < big_m and work + (exact + 1) * d + 1 <= DISCRETE_EXACT_WORK:
            exact += 1
            work += exact * d + 1

        def dlap(j: int) -> arb:
            if j > exact:  # D_alpha <= D_inf = j eps (docs/rdp.md §7)
                return am1 * eps * j
            return sum((pm * (am1 * arb_of_fraction(x)).exp() for x, pm in dlaplace_atoms(inner.noise, j * d)),
                       arb(0)).log()
        return dlap
    if isinstance(inner, DiscreteGaussian):
        d, sg = inner.sensitivity, inner.sigma
        g = am1 * a * d * d / (2 * arb_of_fraction(sg) ** 2)

        def dgauss(j: int) -> arb:
            if j > _DGAUSS_EXACT_LABELS:  # at most the continuous Gaussian's (docs/rdp.md §2)
                return g * (j * j)
            return am1 * dgauss_rdp(alpha, sg, j * d)
        return dgauss
    raise InvalidParameterError(f"mechanism {inner!r}: not a sum a batch with replacement takes")


def truncated_divergence(m: TruncatedSubsampledGaussian, alpha: Fraction, direction: str,
                         subsampled: Callable[[PoissonSampled, Fraction, str], arb]) -> arb:
    """An upper bound on D_alpha of the truncated subsampled Gaussian in ``direction``: Theorem 9.4's pair.
    Under add/remove the labelled pair, ``(1-t) e^{(alpha-1) D_q,1} + t e^{(alpha-1) D_g,2}`` with D the
    Poisson-subsampled Gaussians' divergences in that direction (``subsampled``, docs/rdp.md §5), ``max`` the
    larger of the two directions; under replace-one the diluted pair of (N(2), N(0)) at rate r = (1-t) q + t g,
    ``(1 - r) + r e^{2 alpha (alpha-1)/sigma^2}`` (either direction); docs/rdp.md §7."""
    a = arb_of_fraction(alpha)
    if m.relation == "replace-one":
        r = arb_of_fraction(_mixed_rate(m, up=True))
        return ((1 - r) + r * (2 * a * (a - 1) / arb_of_fraction(m.sigma) ** 2).exp()).log() / (a - 1)
    if m.direction not in ("max", direction):
        raise InvalidParameterError(f"direction={direction!r}: the mechanism {m} is taken in its {m.direction} "
                                    "direction only")
    if direction == "max":
        remove = truncated_divergence(m, alpha, "remove", subsampled)
        if remove.lower() >= truncated_add_upper(m).upper():
            return remove
        return remove.max(truncated_divergence(m, alpha, "add", subsampled))
    (tn, td), (gn, gd) = truncation_weight_ints(m.q, m.truncate, m.of)
    t = arb(fmpq(tn, td))
    parts: list[tuple[arb, arb]] = []
    if tn < td:
        parts.append((1 - t, (a - 1) * subsampled(PoissonSampled(Gaussian(m.sigma, 1), m.q), alpha, direction)))
    if tn:
        g = _rate(gn, gd, up=True)  # a larger rate dominates (Theorem 9.4), so the bound stays one
        parts.append((t, (a - 1) * subsampled(PoissonSampled(Gaussian(m.sigma, 2), g), alpha, direction)))
    return _labelled(parts, a)


def truncated_add_upper(m: TruncatedSubsampledGaussian) -> arb:
    """A cheap upper bound on the add direction's labelled divergence (add/remove): each part's Q/P is at most
    1/(1 - rate), so the labelled pair's is at most -log(1 - max(q, g)) (docs/rdp.md §5.1); +inf at rate 1."""
    (_, _), (gn, gd) = truncation_weight_ints(m.q, m.truncate, m.of)
    top = max(m.q, _rate(gn, gd, up=True))
    if top >= 1:
        return arb("+inf")
    return -(1 - arb_of_fraction(top)).log()


def attained(m: object) -> object | None:
    """A pair one neighbouring pair of datasets attains, whose divergence is the lower end of the bracket
    (docs/rdp.md §7), as a mechanism; None where none is computed.

    * a Gaussian batch with replacement of at most :data:`ATTAINED_MAX_DRAWS` draws: the other records at 0,
      the changed one at D against 0: ``sum_j b_j N(jD)`` against ``N(0)``, a mixture of Gaussians (its
      reverse by swapping the two records); the Laplace and discrete sums: None (a mixture of those is not
      computed);
    * the truncated subsampled Gaussian: the other records at 0, the record at 1 (against its absence, or
      against 0 under replace-one): the Poisson-subsampled Gaussian at the rate r = (1-t) q + t g at which
      the record is in the batch (rounded down when huge).

    >>> from exactdp.model.replacement import SampledWithReplacement
    >>> print(attained(SampledWithReplacement(Gaussian(1), 2, 2)))
    mog:sigma=1,sensitivities=0/1/2,probs=0.25/0.5/0.25
    >>> print(attained(TruncatedSubsampledGaussian(1, "1/2", 1, 3)))
    gaussian:sigma=1,q=7/24
    """
    if isinstance(m, SampledWithReplacement):
        g = m.mechanism
        if not isinstance(g, Gaussian) or g.sigma is None or m.sample > ATTAINED_MAX_DRAWS:
            return None
        big_m, n = m.sample, m.of
        probs = [Fraction(comb(big_m, j) * (n - 1) ** (big_m - j), n ** big_m) for j in range(big_m + 1)]
        return MixtureOfGaussians(g.sigma, [j * g.sensitivity for j in range(big_m + 1)], probs)
    if isinstance(m, TruncatedSubsampledGaussian):
        direction = m.direction if m.relation == "add-remove" else "max"
        return PoissonSampled(Gaussian(m.sigma, 1), _mixed_rate(m, up=False), "add-remove", direction)
    return None
