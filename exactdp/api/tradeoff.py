"""The certified trade-off curve (f-DP) of a composition and its Gaussian-DP mu (docs/tradeoff.md).

beta(alpha) is the type II error at type I error alpha of the optimal test between the outputs on
two neighbouring datasets, for the tightest trade-off function f the composition satisfies (both
orders of the pair, docs/tradeoff.md §1-§2); ``gdp_mu`` is the smallest mu with f >= G_mu, +inf
when there is none.  A composition of Gaussian mechanisms is answered by the closed form
(mu^2 adds, beta = Phi(Phi^-1(1 - alpha) - mu), docs/tradeoff.md §6); any other by the certified
PLD engine (:mod:`exactdp.engines.pld.tradeoff`), whose mu bracket is ``[lower, +inf]`` unless the
+inf mass is certainly positive (then +inf exactly, §5).

>>> t = tradeoff("gaussian:sigma=1,count=4", ["0.05"], digits=8)
>>> str(t.gdp_mu), str(t.betas[0])
('2', '[0.361239968, 0.361239969]')
>>> [str(x) for x in true_positive_rates("gaussian:sigma=1,count=4", ["0.05"], digits=8)]
['[0.638760031, 0.638760032]']
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from exactdp.core import progress
from exactdp.core.enclosure import Enclosure
from exactdp.core.errors import InvalidParameterError
from exactdp.core.numbers import DEFAULT_DIGITS, CountInput, ExactInput, format_fraction, parse_digits, parse_rational
from exactdp.engines.gaussian import gaussian_mu, gaussian_mu2, gaussian_tradeoff
from exactdp.engines.pld.tradeoff import pld_tradeoff
from exactdp.model.composition import Composition, CompositionInput

__all__ = ["MAX_ALPHAS", "Tradeoff", "parse_alpha", "tradeoff", "true_positive_rates"]

#: the most alpha values one curve takes
MAX_ALPHAS = 10_000


def parse_alpha(x: ExactInput, name: str = "alpha") -> Fraction:
    """A type I error: an exact number strictly between 0 and 1.

    >>> parse_alpha("1e-3")
    Fraction(1, 1000)
    >>> parse_alpha("1")
    Traceback (most recent call last):
    ...
    exactdp.core.errors.InvalidParameterError: alpha='1' must be in (0, 1) (a type I error; beta is 1 - alpha at 0 and 0 at 1 for every mechanism)
    """
    a = parse_rational(x, name)
    if not 0 < a < 1:
        raise InvalidParameterError(f"{name}={x!r} must be in (0, 1) (a type I error; beta is 1 - alpha at 0 "
                                    "and 0 at 1 for every mechanism)")
    return a


@dataclass(frozen=True)
class Tradeoff:
    """A certified trade-off curve: ``betas[i]`` encloses beta(``alphas[i]``); ``gdp_mu`` the smallest
    mu for which the composition is mu-GDP (its upper end +inf when none is certified)."""

    alphas: tuple[Fraction, ...]
    betas: tuple[Enclosure, ...]
    gdp_mu: Enclosure

    def __post_init__(self) -> None:
        if len(self.alphas) != len(self.betas) or not self.alphas:
            raise InvalidParameterError("a Tradeoff needs one beta per alpha, at least one")
        if not all(isinstance(b, Enclosure) for b in (*self.betas, self.gdp_mu)):
            raise InvalidParameterError("betas and gdp_mu must be Enclosures")

    def to_json(self, digits: CountInput | None = None) -> dict[str, Any]:
        """``{"query": "tradeoff", "points": [{"alpha", "lower", "upper", ...}], "gdp_mu": {...}}``."""
        points = []
        for a, b in zip(self.alphas, self.betas):
            j = b.to_json(digits)
            points.append({"alpha": format_fraction(a), **{k: j[k] for k in _KEYS if k in j}})
        m = self.gdp_mu.to_json(digits)
        return {"query": "tradeoff", "points": points, "gdp_mu": {k: m[k] for k in _KEYS if k in m}}


_KEYS = ("lower", "upper", "exact", "float_lower", "float_upper", "digits", "digits_requested", "algorithm")


def tradeoff(composition: CompositionInput, alphas: Sequence[ExactInput], *, digits: CountInput = DEFAULT_DIGITS,
             max_seconds: ExactInput | float | None = None) -> Tradeoff:
    """The certified trade-off curve beta(alpha) at each alpha in (0, 1), and the GDP mu (docs/tradeoff.md).

    ``max_seconds`` bounds the whole curve as ``--max-seconds`` does: the PLD engine returns the
    brackets it certified by then (each says its digits).
    """
    comp = Composition.of(composition)
    d = parse_digits(digits)
    if isinstance(alphas, (str, bytes)) or not isinstance(alphas, Sequence):
        raise InvalidParameterError(f"alphas={alphas!r} must be a list of numbers in (0, 1)")
    al = [parse_alpha(a) for a in alphas]
    if not al:
        raise InvalidParameterError("alphas=[] must name at least one alpha in (0, 1)")
    if len(al) > MAX_ALPHAS:
        raise InvalidParameterError(f"{len(al)} alphas: at most {MAX_ALPHAS}")
    budget = progress.parse_seconds(max_seconds)
    with progress.budgeted("tradeoff", budget):
        mu2 = gaussian_mu2(comp)
        if mu2 is not None and mu2 > 0:
            betas = [gaussian_tradeoff(mu2, a, digits=d) for a in al]
            return Tradeoff(tuple(al), tuple(betas), gaussian_mu(mu2, digits=d))
        if mu2 == 0:  # no information: beta = 1 - alpha, mu = 0
            return Tradeoff(tuple(al), tuple(Enclosure.exact_value(1 - a, d, "gaussian-closed-form") for a in al),
                            Enclosure.exact_value(Fraction(0), d, "gaussian-closed-form"))
        betas, mu = pld_tradeoff(comp, al, digits=d, max_seconds=budget)
        return Tradeoff(tuple(al), tuple(betas), mu)


def true_positive_rates(composition: CompositionInput, fprs: Sequence[ExactInput], *,
                        digits: CountInput = DEFAULT_DIGITS, max_seconds: ExactInput | float | None = None,
                        ) -> list[Enclosure]:
    """The largest true positive rate 1 - beta(alpha) of a test at each false positive rate alpha
    (dp_accounting's ``get_true_positive_rates``), certified: the enclosures of :func:`tradeoff`
    reflected."""
    t = tradeoff(composition, fprs, digits=digits, max_seconds=max_seconds)
    out: list[Enclosure] = []
    for b in t.betas:
        lo, hi = 1 - b.upper, 1 - b.lower
        assert isinstance(lo, Fraction) and isinstance(hi, Fraction)  # beta is finite
        out.append(Enclosure.exact_value(lo, b.digits, b.algorithm) if lo == hi
                   else Enclosure(lo, hi, b.digits, algorithm=b.algorithm))
    return out
