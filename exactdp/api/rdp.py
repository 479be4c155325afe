"""The certified RDP curve of a composition: its Rényi divergence at each order (docs/rdp.md).

RDP composes by adding at each order (Mironov 2017, Prop. 1), so the divergence of a composition in
one direction is the sum over its mechanisms of count x each one's divergence
(:func:`exactdp.engines.rdp.divergence_arb`), certified to ``digits`` as one Arb sum.

>>> [str(e) for e in rdp_curve("gaussian:sigma=2,count=10", [2, "3.5"])]
['2.5', '4.375']
>>> print(rdp_curve("laplace:scale=1", [2], digits=10)[0])
[0.61912362999, 0.61912363]
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

from flint import arb

from exactdp.core.enclosure import Enclosure, certify
from exactdp.core.errors import InvalidParameterError
from exactdp.core.numbers import DEFAULT_DIGITS, INF, CountInput, ExactInput, parse_digits, parse_rational
from exactdp.engines.rdp import (
    DIRECTIONS,
    composition_bound_name,
    composition_divergence_arb,
    is_bounded_group,
    is_infinite,
)
from exactdp.engines.rdp_labelled import attained, bound_of
from exactdp.engines.rdp_wor import attained_groups
from exactdp.model.composition import Composition, CompositionInput
from exactdp.model.mechanisms import Gaussian, PoissonSampled, SampledWithoutReplacement
from exactdp.model.replacement import SampledWithReplacement
from exactdp.model.truncation import TruncatedSubsampledGaussian

__all__ = ["parse_order", "rdp_curve"]

#: the largest order taken (orders past it are refused by name: the sums grow with the order)
MAX_ORDER = 10**4


def parse_order(x: ExactInput) -> Fraction:
    """A Rényi order: an exact number > 1 (at most :data:`MAX_ORDER`).

    >>> parse_order("1")
    Traceback (most recent call last):
    ...
    exactdp.core.errors.InvalidParameterError: order='1' must be > 1 (the Rényi divergence of order 1 is the KL divergence, not an RDP order)
    """
    a = parse_rational(x, "order")
    if a <= 1:
        raise InvalidParameterError(f"order={x!r} must be > 1 (the Rényi divergence of order 1 is the KL divergence, "
                                    "not an RDP order)")
    if a > MAX_ORDER:
        raise InvalidParameterError(f"order={x!r} must be at most {MAX_ORDER}")
    return a


def rdp_curve(comp: CompositionInput, orders: Sequence[ExactInput], *, digits: CountInput = DEFAULT_DIGITS,
              direction: str = "max") -> list[Enclosure]:
    """The Rényi divergence of the composition at each order, certified (exact when rational).

    ``direction``: ``"remove"`` (the neighbour holding the record first), ``"add"`` or ``"max"`` (the
    larger of the composition's two sums, each certified); the mechanisms whose divergence does not
    depend on it (Gaussian, Laplace, the discrete Laplace and Gaussian, randomized response, generic pure
    pairs) answer the same in all three, their Poisson subsamples differ (docs/rdp.md §5).  A generic
    pair with delta > 0 makes every order +inf exactly.

    A composition with a fixed batch without replacement (``sample=M,of=N``, M < N) is bracketed, not
    computed (docs/rdp.md §6): the lower end is the divergence of a pair a dataset attains, the upper end
    the bound of Wang-Balle-Kasiviswanathan 2019, Thm 9 (``algorithm`` ``"wbk19-thm9"``), for a Gaussian
    its strengthening Thm 27 where that is smaller (``"wbk19-thm27"``; ``"wbk19-thm9+thm27"`` for batches of
    both kinds); its ``digits`` what the bracket certifies (usually 0 or 1).  So is a composition with a
    batch drawn with replacement or a truncated subsampled Gaussian (docs/rdp.md §7): the upper end the
    divergence of the labelled pair that dominates it (``"labelled-thm9.6"``, ``"labelled-thm9.4"``; names
    of several kinds joined by ``+``).
    """
    c = Composition.of(comp)
    d = parse_digits(digits)
    if not isinstance(direction, str) or direction not in DIRECTIONS:
        raise InvalidParameterError(f"direction={direction!r} must be one of {', '.join(DIRECTIONS)}")
    if isinstance(orders, (str, bytes)) or not isinstance(orders, Sequence):
        raise InvalidParameterError(f"orders={orders!r} must be a list of orders > 1")
    alphas = [parse_order(a) for a in orders]
    if not alphas:
        raise InvalidParameterError("orders=[] must name at least one order")
    if any(is_infinite(m, direction) for m, _ in c.groups):
        return [Enclosure.infinite(d, "rdp") for _ in alphas]
    out = []
    for a in alphas:
        if all(isinstance(m, Gaussian) for m, _ in c.groups):  # alpha D^2/(2 sigma^2) adds: exact
            out.append(Enclosure.exact_value(sum((n * a * m.mu2 / 2
                                                  for m, n in c.groups), Fraction(0)), d, "rdp-closed-form"))
            continue

        def total(a: Fraction = a) -> arb:
            return composition_divergence_arb(c.groups, a, direction)

        out.append(_bracket(c, a, d, direction) if is_bounded(c) else certify(total, d, algorithm="rdp"))
    return out


def is_bounded(comp: Composition) -> bool:
    """Whether the composition's divergence is bracketed by an upper bound rather than computed: it
    holds a fixed batch without replacement smaller than the dataset (docs/rdp.md §6), a batch drawn with
    replacement or a truncated subsampled Gaussian (docs/rdp.md §7)."""
    return any(is_bounded_group(m) for m, _ in comp.groups)


def _relation(m: object) -> str | None:
    """The relation a group's pair of datasets must be neighbouring under (None: either)."""
    if isinstance(m, (SampledWithoutReplacement, SampledWithReplacement)):
        return "replace-one"
    if isinstance(m, (PoissonSampled, TruncatedSubsampledGaussian)):
        return m.relation
    return None


def _attained(groups: tuple[tuple[object, int], ...]) -> list[tuple[object, int]] | None:
    """The groups with each bounded one replaced by the pair a dataset attains (docs/rdp.md §6, §7), or
    None where one has none computed."""
    out = []
    for m, n in attained_groups(groups):
        if bound_of(m) is not None:
            a = attained(m)
            if a is None:
                return None
            m = a
        out.append((m, n))
    return out


def _bracket(c: Composition, a: Fraction, d: int, direction: str) -> Enclosure:
    """[the divergence of a pair the batches attain, the bound (WBK19's, a labelled pair's)] at order a."""
    names: list[str] = []

    def bound() -> arb:
        v = composition_divergence_arb(c.groups, a, direction)
        names.append(composition_bound_name(c.groups, a) or "")  # remembered at this precision: no second evaluation
        return v

    upper = certify(bound, d)
    name = names[-1]
    pairs = _attained(c.groups)
    lower: Fraction | float  # INF where the attained pair's divergence is infinite
    if len({r for r in (_relation(m) for m, _ in c.groups) if r is not None}) > 1 or pairs is None:
        # a Poisson subsample under add/remove beside a batch (replace-one): no one pair of datasets is
        # neighbouring under both, so the sum of the attained divergences is attained by none (docs/rdp.md §6);
        # or a bounded group whose attained pair's divergence is not computed (docs/rdp.md §7)
        lower = Fraction(0)
    else:
        try:
            lower = certify(lambda: composition_divergence_arb(pairs, a, direction), d).lower
        except InvalidParameterError:  # the attained pair's divergence is not computed (a discrete mechanism's)
            lower = Fraction(0)
    if isinstance(upper.upper, float) or lower == INF:
        return Enclosure.infinite(d, name)
    if lower > upper.upper:
        raise AssertionError(f"order {a}: the attained divergence {lower} lies above the bound {upper.upper}")
    return Enclosure(lower, upper.upper, d, algorithm=name)
