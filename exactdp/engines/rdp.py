"""Rényi divergences of the mechanisms, in Arb: the RDP view of a composition (docs/rdp.md).

``D_alpha(P || Q) = 1/(alpha - 1) log E_Q[(P/Q)^alpha]`` for an order alpha > 1; the RDP curve of a
composition is the sum over its mechanisms (Mironov 2017, Prop. 1: RDP composes by adding at each
order).  Each mechanism's divergence is a closed form or a finite sum of positive terms, evaluated
in Arb from exact inputs, so every ball contains the true value (docs/rdp.md §2 has each formula):

* Gaussian (sigma, sensitivity D): alpha mu^2 / 2, mu^2 = D^2 / sigma^2 (or as given), both directions
  (Mironov 2017, Prop. 7);
* Laplace (eps = D/b): 1/(alpha-1) log(alpha/(2 alpha - 1) e^{(alpha-1) eps} + (alpha-1)/(2 alpha - 1)
  e^{-alpha eps}), both directions (Mironov 2017, Table II);
* discrete Laplace (noise a, sensitivity D): the finite sum over its D + 1 loss values, both
  directions (the pair is symmetric: y -> D - y swaps P and Q), docs/mathematics.md §7.10;
* discrete Gaussian (sigma, D): alpha D^2/(2 sigma^2) + log(theta((alpha-1) D)/theta(0))/(alpha-1), an
  infinite sum enclosed with a proved tail bound, both directions (docs/mathematics.md §7.11);
* k-ary randomized response and the generic (eps, 0) pair (RR with k = 2): the finite sum over the
  outputs; a generic pair with delta > 0 has a point of P-mass where Q has none: +inf;
* a Poisson subsample of any of these (q < 1), in each direction and at every order
  (:mod:`exactdp.engines.rdp_subsampled`, docs/rdp.md §5): the Gaussian by the binomial sum of
  Mironov-Talwar-Zhang 2019 (integer orders, remove) or Arb's rigorous integrator with proved tail
  bounds, the Laplace by its three pieces, randomized response by a finite sum; ``max`` is the larger
  of the two certified directions;
* a fixed batch without replacement (``sample=M,of=N``, replace-one, gamma < 1): an UPPER BOUND, the one of
  Wang-Balle-Kasiviswanathan 2019, Thm 9, for a Gaussian its strengthening Thm 27, in every direction
  (:mod:`exactdp.engines.rdp_wor`, docs/rdp.md §6; :func:`bound_name` names the one that gives it); :func:`exactdp.api.rdp.rdp_curve` brackets the divergence between the pair a
  dataset attains and this bound.

* a mixture of Gaussians at an integer order alpha, direction ``remove``: E_Q[(P/Q)^alpha] is the
  polynomial (sum_i p_i e^{-s_i^2/(2 S^2)} z^{s_i})^alpha with each z^T read as e^{T^2/(2 S^2)}
  (docs/rdp.md §2), expanded exactly by its exponents T (up to :data:`MAX_MIXTURE_TERMS` of them);
  every other order, and the add direction, by Arb's integrator with proved tails (docs/rdp.md §5.6);
* the mechanism without noise: +inf (``add`` of a subsampled one is refused);
* k-ary randomized response under replace-special (against the special record's uniform output):
  the finite sum over its k outputs, each direction (:func:`_special_rr`);
* a batch drawn with replacement and the truncated subsampled Gaussian: an UPPER BOUND, the divergence of
  the labelled pair that dominates each (docs/mathematics.md §9, Theorems 9.4 and 9.6;
  :mod:`exactdp.engines.rdp_labelled`, docs/rdp.md §7), named by :func:`bound_name`.

A mechanism whose divergence is not computed is refused by name, never approximated.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fractions import Fraction
from functools import lru_cache

from flint import arb, ctx

from exactdp.core.errors import InvalidParameterError
from exactdp.core.numbers import arb_of_fraction
from exactdp.engines.discrete_noise import dgauss_rdp, dlaplace_atoms
from exactdp.engines.rdp_labelled import (
    bound_of,
    compose_names,
    truncated_add_upper,
    truncated_divergence,
    with_replacement_divergence,
)
from exactdp.engines.rdp_subsampled import (
    gaussian_add_upper,
    gaussian_moment,
    generic_moment,
    laplace_moment,
    mixture_moment,
    moment_divergence,
    pure_moment,
    subsampled_gaussian_binomial,
)
from exactdp.engines.rdp_wor import (
    bound_name,
    gaussian_pearson_vajda,
    max_divergence,
    wbk_bound,
)
from exactdp.model.generic import Mechanism
from exactdp.model.mechanisms import (
    DiscreteGaussian,
    DiscreteLaplace,
    Gaussian,
    Laplace,
    MixtureOfGaussians,
    NonPrivate,
    PoissonSampled,
    RandomizedResponse,
    SampledWithoutReplacement,
)
from exactdp.model.replacement import SampledWithReplacement
from exactdp.model.special import SpecialRandomizedResponse
from exactdp.model.truncation import TruncatedSubsampledGaussian

__all__ = ["DIRECTIONS", "MAX_MIXTURE_TERMS", "add_upper_arb", "composition_bound_name", "composition_divergence_arb",
           "divergence_arb", "is_bounded_group", "is_infinite", "without_replacement_bound", "wor_bound_name"]

#: ``remove``: D(P || Q) with P the neighbour holding the record (the mixture, when subsampled);
#: ``add``: D(Q || P); ``max``: the larger of the two
DIRECTIONS = ("max", "remove", "add")


def is_infinite(m: object, direction: str = "max") -> bool:
    """Whether every order's divergence in ``direction`` is +inf: a generic pair with delta > 0 (P has
    an atom Q lacks) or the mechanism without noise, except a Poisson subsample of a generic pair (q < 1)
    in the add direction: there Q/P <= 1/(1-q) (docs/rdp.md §5.5)."""
    if isinstance(m, PoissonSampled):
        if isinstance(m.mechanism, NonPrivate) and direction == "add":
            raise InvalidParameterError("direction='add': the Rényi divergence of a subsampled mechanism without "
                                        "noise is not computed (it is +inf in the remove direction)")
        return not (direction == "add" and m.q < 1) and is_infinite(m.mechanism)
    if isinstance(m, SampledWithoutReplacement):  # P charges the batch's gamma delta where Q has nothing
        return is_infinite(m.mechanism)
    return isinstance(m, NonPrivate) or (isinstance(m, Mechanism) and m.delta > 0)


#: the most distinct exponents T the mixture's moment polynomial may hold before the integral answers
MAX_MIXTURE_TERMS = 200_000


def _mixture_moment(m: MixtureOfGaussians, n: int) -> arb | None:
    """E_Q[(P/Q)^n] for P = sum_i p_i N(s_i, S^2), Q = N(0, S^2), an integer n >= 2: with
    c_i = p_i e^{-s_i^2/(2 S^2)}, (P/Q)(x)^n = sum over T of [z^T](sum_i c_i z^{s_i})^n e^{T x/S^2},
    and E_Q[e^{T x/S^2}] = e^{T^2/(2 S^2)}: a finite sum of positive terms, T exact; None past
    :data:`MAX_MIXTURE_TERMS` distinct exponents (the integral answers then)."""
    s2 = arb_of_fraction(m.sigma) ** 2
    base = {s: arb_of_fraction(p) * (-arb_of_fraction(s) ** 2 / (2 * s2)).exp() for s, p in zip(m.sensitivities, m.probs)}
    poly: dict[Fraction, arb] = {Fraction(0): arb(1)}
    for _ in range(n):
        nxt: dict[Fraction, arb] = {}
        for t, c in poly.items():
            for s, b in base.items():
                nxt[t + s] = nxt.get(t + s, arb(0)) + c * b
        if len(nxt) > MAX_MIXTURE_TERMS:
            return None
        poly = nxt
    return sum((c * (arb_of_fraction(t) ** 2 / (2 * s2)).exp() for t, c in poly.items()), arb(0))


def _mixture(m: MixtureOfGaussians, alpha: Fraction, direction: str) -> arb:
    """D_alpha of a mixture of Gaussians in ``direction``: remove at an integer order by the exact
    polynomial sum, every other order and the add direction by the certified integral of
    docs/rdp.md §5.6, max the larger of the two (the add one skipped under -log p_0)."""
    if m.direction not in ("max", direction):
        raise InvalidParameterError(f"direction={direction!r}: the mechanism {m} is taken in its {m.direction} "
                                    "direction only")
    a = arb_of_fraction(alpha)
    if direction == "max":
        remove = _mixture(m, alpha, "remove")
        if remove.lower() >= add_upper_arb(m, alpha).upper():
            return remove
        return remove.max(_mixture(m, alpha, "add"))
    if direction == "remove" and alpha.denominator == 1:
        mom = _mixture_moment(m, alpha.numerator)
        if mom is not None:
            return mom.log() / (a - 1)
    beta = alpha if direction == "remove" else 1 - alpha
    return moment_divergence(mixture_moment(m.sigma, m.sensitivities, m.probs, beta), a)


def _log_ratio_sum(terms: list[tuple[int, arb, arb]], alpha: arb) -> arb:
    """1/(alpha-1) log sum_y P(y)^alpha Q(y)^(1-alpha) over outputs y, each term (how many outputs
    have these masses, P(y), Q(y)), every mass > 0."""
    s = arb(0)
    for n, p, q in terms:
        s += n * (alpha * p.log() + (1 - alpha) * q.log()).exp()
    return s.log() / (alpha - 1)


def _rr_terms(eps_exp: arb, k: int) -> list[tuple[int, arb, arb]]:
    """The outputs of k-ary RR on neighbours x != x' (the true value w.p. e^eps/Z, each other 1/Z):
    x (P = e^eps/Z, Q = 1/Z), x' (the reverse), and k - 2 others (1/Z on both sides)."""
    z = eps_exp + (k - 1)
    a, b = eps_exp / z, 1 / z
    return [(1, a, b), (1, b, a)] + ([(k - 2, b, b)] if k > 2 else [])


def divergence_arb(m: object, alpha: Fraction, direction: str) -> arb:
    """D_alpha of one mechanism in ``direction`` (``remove``, ``add`` or ``max``) as an Arb ball at the
    current precision (module docstring: the formulas and what is refused)."""
    if not isinstance(direction, str) or direction not in DIRECTIONS:
        raise InvalidParameterError(f"direction={direction!r} must be one of {', '.join(DIRECTIONS)}")
    a = arb_of_fraction(alpha)
    if isinstance(m, Gaussian):
        return a * arb_of_fraction(m.mu2) / 2
    if isinstance(m, MixtureOfGaussians):
        return _mixture(m, alpha, direction)
    if isinstance(m, Laplace):
        e = arb_of_fraction(m.eps)
        return (a / (2 * a - 1) * ((a - 1) * e).exp() + (a - 1) / (2 * a - 1) * (-a * e).exp()).log() / (a - 1)
    if isinstance(m, DiscreteLaplace):
        return _log_ratio_sum([(1, pm, pm * (-arb_of_fraction(x)).exp()) for x, pm in dlaplace_atoms(m.noise, m.sensitivity)],
                              a)
    if isinstance(m, DiscreteGaussian):
        return dgauss_rdp(alpha, m.sigma, m.sensitivity)
    if isinstance(m, RandomizedResponse):
        return _log_ratio_sum(_rr_terms(m.eps.exp_arb(), m.categories), a)
    if isinstance(m, Mechanism):
        if m.delta > 0:
            raise InvalidParameterError("a generic (eps, delta) pair with delta > 0 has infinite Rényi divergence")
        return _log_ratio_sum(_rr_terms(m.eps.exp_arb(), 2), a)
    if isinstance(m, SpecialRandomizedResponse):
        return _special_rr(m, a, direction)
    if isinstance(m, PoissonSampled) and m.relation != "add-remove":
        raise InvalidParameterError(f"mechanism {m}: the Rényi divergence of a Poisson subsample under the "
                                    f"{m.relation} relation is not computed yet (add-remove is)")
    if isinstance(m, PoissonSampled) and m.direction not in ("max", direction):
        raise InvalidParameterError(f"direction={direction!r}: the mechanism {m} is taken in its {m.direction} "
                                    "direction only")
    if isinstance(m, PoissonSampled):
        return _subsampled(m, alpha, direction)
    if isinstance(m, SampledWithoutReplacement):
        return _without_replacement(m, alpha)
    if isinstance(m, SampledWithReplacement):  # an upper bound: Theorem 9.6's labelled pair (docs/rdp.md §7)
        return with_replacement_divergence(m, alpha)
    if isinstance(m, TruncatedSubsampledGaussian):  # an upper bound: Theorem 9.4's pair (docs/rdp.md §7)
        return truncated_divergence(m, alpha, direction, _subsampled)
    raise InvalidParameterError(f"mechanism {m!r}: its Rényi divergence is not computed yet (Gaussian, Laplace, "
                                "discrete Laplace, discrete Gaussian, randomized response, generic pure pairs and their Poisson "
                                "subsamples and fixed batches, batches with replacement, the truncated subsampled Gaussian, and mixtures of "
                                "Gaussians are)")


def _special_rr(m: SpecialRandomizedResponse, a: arb, direction: str) -> arb:
    """D_alpha of k-ary randomized response against the special record's uniform output (dp_accounting's
    replace-special, docs/mathematics.md §9, Theorem 9.5): ``remove`` is D_alpha(R(x) || U), ``add``
    D_alpha(U || R(x)), the finite sums over the k outputs (R(x): e^eps/Z on x, 1/Z on each other,
    Z = e^eps + k - 1; U: 1/k each), docs/rdp.md §2."""
    if m.direction not in ("max", direction):
        raise InvalidParameterError(f"direction={direction!r}: the mechanism {m} is taken in its {m.direction} "
                                    "direction only")
    if direction == "max":
        return _special_rr(m, a, "remove").max(_special_rr(m, a, "add"))
    e = m.eps.exp_arb()
    z = e + (m.categories - 1)
    u = arb(1) / m.categories
    terms = [(1, e / z, u), (m.categories - 1, 1 / z, u)]
    if direction == "add":
        terms = [(n, q, p) for n, p, q in terms]
    return _log_ratio_sum(terms, a)


def composition_divergence_arb(groups: Sequence[tuple[object, int]], alpha: Fraction, direction: str) -> arb:
    """D_alpha of a composition's groups ``(mechanism, count)`` in ``direction``, at the current precision.

    For one neighbouring pair every mechanism is in the same direction, so a direction's divergence is
    the sum of count x each one's (Mironov 2017, Prop. 1), and ``max`` is the larger of the two SUMS
    (not the sum of each term's larger), both certified; the add sum is skipped when its cheap upper
    bound (:func:`add_upper_arb`) is already below the remove sum (docs/rdp.md §5.1).
    """
    def one(way: str) -> arb:
        s = arb(0)
        for m, n in groups:
            s += n * (add_upper_arb(m, alpha) if way == "add-bound" else divergence_arb(m, alpha, way))
        return s

    if direction != "max":
        return one(direction)
    remove = one("remove")
    if remove.lower() >= one("add-bound").upper():
        return remove
    try:
        add = one("add")
    except InvalidParameterError as e:
        raise InvalidParameterError(f"direction='max' needs both directions, and the add one is not computed here "
                                    f"({e}); direction='remove' answers the remove one") from None
    return remove.max(add)


def add_upper_arb(m: object, alpha: Fraction) -> arb:
    """An upper bound on D_alpha in the ``add`` direction, cheap: -log(1-q) for a Poisson subsample
    with q < 1 (Q/P <= 1/(1-q)), or for the Gaussian's the smaller of that and its fourth-order Taylor
    bound (docs/rdp.md §5.1); -log p_0 for a mixture of Gaussians with weight p_0 on sensitivity 0;
    the divergence itself for any other mechanism."""
    if isinstance(m, PoissonSampled) and m.q < 1:
        bound = -(1 - arb_of_fraction(m.q)).log()
        if isinstance(m.mechanism, Gaussian) and m.mechanism.sigma is not None:
            bound = bound.min(gaussian_add_upper(m.mechanism.mu, m.q, alpha))
        return bound
    if isinstance(m, TruncatedSubsampledGaussian) and m.relation == "add-remove":
        return truncated_add_upper(m)
    if isinstance(m, MixtureOfGaussians) and m.sensitivities[0] == 0 and m.probs[0] < 1:
        # P = p_0 Q + (the other components) >= p_0 Q, so Q/P <= 1/p_0 and D_alpha(Q || P) <= -log p_0
        # (docs/rdp.md §2: the same argument as the subsample's -log(1-q))
        return -arb_of_fraction(m.probs[0]).log()
    return divergence_arb(m, alpha, "add")


def _subsampled(m: PoissonSampled, alpha: Fraction, direction: str) -> arb:
    """D_alpha of a Poisson-subsampled mechanism in ``direction``: remove, add (one moment of the
    likelihood ratio each, docs/rdp.md §5) or the larger of the two (both certified: their max)."""
    if m.q == 1:
        return divergence_arb(m.mechanism, alpha, direction)
    if direction == "max":
        remove = _subsampled(m, alpha, "remove")
        if remove.lower() >= add_upper_arb(m, alpha).upper():  # add <= -log(1-q) <= remove (docs/rdp.md §5.1)
            return remove
        return remove.max(_subsampled(m, alpha, "add"))
    inner, q = m.mechanism, m.q
    beta = alpha if direction == "remove" else 1 - alpha
    if isinstance(inner, Gaussian):
        if inner.sigma is None:
            raise InvalidParameterError(f"{m.spec()}: the Rényi divergence of a Poisson subsample of a Gaussian whose "
                                        "mu = sqrt(mu2) is irrational is not computed yet; give it by sigma")
        mu = inner.mu
        if direction == "remove" and alpha.denominator == 1:
            i = subsampled_gaussian_binomial(mu, q, alpha.numerator)
        else:
            i = gaussian_moment(mu, q, beta)
    elif isinstance(inner, Laplace):
        i = laplace_moment(inner.eps, q, beta)
    elif isinstance(inner, RandomizedResponse):
        i = pure_moment(inner.eps, inner.categories, q, beta)
    elif isinstance(inner, Mechanism):
        if inner.delta > 0 and direction != "add":
            raise InvalidParameterError("a subsampled generic pair with delta > 0 has infinite Rényi divergence "
                                        "in the remove direction")
        i = generic_moment(inner.eps, inner.delta, q, beta)
    else:
        raise InvalidParameterError(f"mechanism {m!r}: its Rényi divergence is not computed yet")
    return moment_divergence(i, arb_of_fraction(alpha))


def _without_replacement(m: SampledWithoutReplacement, alpha: Fraction) -> arb:
    """An upper bound on D_alpha of a fixed batch without replacement (replace-one: both orders of a
    neighbouring pair), :func:`without_replacement_bound`'s ball."""
    return without_replacement_bound(m, alpha)[0]


def without_replacement_bound(m: SampledWithoutReplacement, alpha: Fraction) -> tuple[arb, str]:
    """An upper bound on D_alpha of a fixed batch without replacement and the name of the bound: that of
    Wang-Balle-Kasiviswanathan 2019, Thm 9, from the base mechanism's certified divergences, for a
    Gaussian the smaller terms of Thm 27 from its Pearson-Vajda moments (docs/rdp.md §6); the mechanism
    itself when the batch is the whole dataset (named ``"rdp"``).  At the current precision, remembered
    per precision (a bracket names the bound after computing it).

    >>> wbk = SampledWithoutReplacement(Gaussian(2), 6, 60)
    >>> [without_replacement_bound(wbk, Fraction(a))[1] for a in (2, 3)]
    ['wbk19-thm9', 'wbk19-thm27']
    """
    return _bound_at(m, alpha, ctx.prec)


@lru_cache(maxsize=1024)
def _bound_at(m: SampledWithoutReplacement, alpha: Fraction, prec: int) -> tuple[arb, str]:
    inner = m.mechanism
    if m.gamma == 1:
        return divergence_arb(inner, alpha, "max"), "rdp"
    eps_inf = max_divergence(inner)
    pearson: Callable[[int], arb] | None = None
    if isinstance(inner, Gaussian) and inner.mu2:  # Thm 27's condition (docs/rdp.md §6); mu2 = 0: all 0
        mu2 = inner.mu2

        def pearson(k: int) -> arb:
            return gaussian_pearson_vajda(mu2, k)

    return wbk_bound(m.gamma, alpha, lambda j: divergence_arb(inner, Fraction(j), "max"), eps_inf, pearson)


def wor_bound_name(groups: Sequence[tuple[object, int]], alpha: Fraction) -> str:
    """The name of the bound that is the upper end of a composition's bracket at order ``alpha``
    (:func:`exactdp.engines.rdp_wor.bound_name` of its fixed batches'), at the current precision.

    >>> wor_bound_name([(SampledWithoutReplacement(Gaussian(2), 6, 60), 3), (Gaussian(1), 2)], Fraction(4))
    'wbk19-thm27'
    """
    return bound_name([without_replacement_bound(m, alpha)[1] for m, _ in groups
                       if isinstance(m, SampledWithoutReplacement) and m.gamma < 1])


def is_bounded_group(m: object) -> bool:
    """Whether a mechanism's divergence is answered by an upper bound (a named bound, not the divergence):
    a fixed batch without replacement smaller than the dataset (docs/rdp.md §6), a batch drawn with
    replacement or the truncated subsampled Gaussian (docs/rdp.md §7)."""
    return (isinstance(m, SampledWithoutReplacement) and m.gamma < 1) or bound_of(m) is not None


def composition_bound_name(groups: Sequence[tuple[object, int]], alpha: Fraction) -> str | None:
    """The name of the bounds that make the upper end of a composition's divergence at order ``alpha`` (the
    WBK19 name of its fixed batches, then the labelled pairs', ``+``-joined), or None when it has none.

    >>> composition_bound_name([(SampledWithoutReplacement(Gaussian(2), 6, 60), 3), (Gaussian(1), 2)], Fraction(4))
    'wbk19-thm27'
    >>> composition_bound_name([(Gaussian(1), 2)], Fraction(4)) is None
    True
    """
    names = [wor_bound_name(groups, alpha)] if any(isinstance(m, SampledWithoutReplacement) and m.gamma < 1
                                                   for m, _ in groups) else []
    names += [n for n in (bound_of(m) for m, _ in groups) if n is not None]
    return compose_names(names) if names else None
