"""The truncated subsampled Gaussian: Poisson sampling, the batch cut to at most B records.

dp_accounting's ``TruncatedSubsampledGaussianDpEvent``: every record of a dataset of ``of`` records
is sampled independently with probability ``q``, a batch of more than ``truncate`` = B records is
cut to a uniformly random subset of B, and N(0, sigma^2 I) noise is added to the sum of the batch's
contributions, each of norm at most 1 (``sigma`` is the noise multiplier).  With K ~ Bin(of - 1, q)
the number of other records sampled, two exact rationals describe it (docs/mathematics.md §9,
Theorem 9.4):

* ``t = P(K >= B)``, the chance that the batch is full whether or not the record is in it;
* ``g = E[q B/(K + 1) | K >= B] = B P(Bin(of, q) >= B + 1) / (of t)``, the chance that the record
  is in a full batch.

Under add/remove its pair is *labelled*: with probability 1 - t the Poisson-subsampled Gaussian of
sensitivity 1 at rate q, with probability t the one of sensitivity 2 at rate g (the label known to
the observer), both orders composed; under replace-one the diluted pair of sensitivity 2 at rate
(1 - t) q + t g.  Both are certified upper bounds of the mechanism (not claimed tight).

>>> m = TruncatedSubsampledGaussian(1, "1/2", 1, 3)
>>> (str(m), truncation_weights(m.q, m.truncate, m.of))
('gaussian:sigma=1,q=0.5,truncate=1,of=3', (Fraction(3, 4), Fraction(2, 9)))
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

import gmpy2

from exactdp.core.errors import InvalidParameterError
from exactdp.core.numbers import CountInput, ExactInput, format_fraction, parse_k, parse_rational
from exactdp.model.generic import PureDP
from exactdp.model.mechanisms import Gaussian, PoissonSampled, SpecificMechanism, parse_direction, parse_relation

__all__ = ["MAX_WEIGHT_WORK", "TruncatedSubsampledGaussian", "normal_form", "truncation_weight_ints", "truncation_weights"]

#: the most (terms x bits) the exact binomial sums of :func:`truncation_weight_ints` may cost
MAX_WEIGHT_WORK = 2 * 10**11


def _tail_int(n: int, c: int, a: int, b: int) -> int:
    """``b^n P(Bin(n, a/b) >= c)`` as an exact integer: the sum of C(n, k) a^k (b - a)^(n - k), the shorter side.

    >>> _tail_int(2, 1, 1, 2), _tail_int(3, 0, 1, 3), _tail_int(3, 4, 1, 3)
    (3, 27, 0)
    """
    if c <= 0:
        return int(gmpy2.mpz(b) ** n)
    if c > n:
        return 0
    if a == b:
        return int(gmpy2.mpz(b) ** n)  # q = 1: K = n >= c
    lo, hi = (c, n) if n - c + 1 <= c else (0, c - 1)  # the sum runs over lo..hi
    a_, r = gmpy2.mpz(a), gmpy2.mpz(b - a)
    term = gmpy2.comb(n, lo) * a_ ** lo * r ** (n - lo)
    s = gmpy2.mpz(0)
    for k in range(lo, hi + 1):
        s += term
        if k < hi:
            term = term * (n - k) * a_ // ((k + 1) * r)  # exact: the next term is an integer
    return int(s) if lo == c else int(gmpy2.mpz(b) ** n - s)


@lru_cache(maxsize=64)  # a float q and a large dataset cost seconds; every query of the mechanism asks again
def truncation_weight_ints(q: Fraction, batch: int, of: int) -> tuple[tuple[int, int], tuple[int, int]]:
    """``(t, g)`` of the module docstring, each as a reduced ``(numerator, denominator)`` of integers
    (huge ones stay cheap: reduced by GMP); t = 0 gives g = (0, 1).

    >>> truncation_weight_ints(Fraction(1, 2), 1, 3)
    ((3, 4), (2, 9))
    """
    a, b = q.numerator, q.denominator
    work = min(batch + 1, of - batch + 1) * of * max(b.bit_length(), 1)
    if work > MAX_WEIGHT_WORK:
        raise InvalidParameterError(f"of={of}, truncate={batch}, q={format_fraction(q)}: the exact truncation "
                                    "weights would cost too much (binomial sums of huge rationals); give a smaller "
                                    "dataset or a q with a smaller denominator")
    t_num, t_den = _tail_int(of - 1, batch, a, b), int(gmpy2.mpz(b) ** (of - 1))
    if t_num == 0:
        return (0, 1), (0, 1)
    s_num = _tail_int(of, batch + 1, a, b)  # b^of P(Bin(of, q) >= B + 1)
    t = gmpy2.mpq(t_num, t_den)
    g = gmpy2.mpq(batch * s_num, of * b * t_num)
    return (int(t.numerator), int(t.denominator)), (int(g.numerator), int(g.denominator))


def truncation_weights(q: Fraction, batch: int, of: int) -> tuple[Fraction, Fraction]:
    """``(t, g)`` as Fractions (for tests and small datasets; :func:`truncation_weight_ints` for huge ones)."""
    (tn, td), (gn, gd) = truncation_weight_ints(q, batch, of)
    return Fraction(tn, td), Fraction(gn, gd)


@dataclass(frozen=True, init=False)
class TruncatedSubsampledGaussian(SpecificMechanism):
    """N(0, sigma^2 I) noise on the sum of a Poisson batch (rate ``q``) of a dataset of ``of`` records,
    cut to at most ``truncate`` records (each record's contribution of norm at most 1).

    ``relation``: ``add-remove`` (``of`` the size of the dataset that holds the record; both orders,
    or one by ``direction``) or ``replace-one``.  The pairs and why they dominate: the module
    docstring and docs/mathematics.md §9, Theorem 9.4.  :func:`normal_form` writes the cases without
    truncation (``truncate >= of``) and with a full batch always (``q = 1``) as Poisson subsamples.

    >>> str(TruncatedSubsampledGaussian("0.8", "0.01", 600, 60000, relation="replace-one"))
    'gaussian:sigma=0.8,q=0.01,truncate=600,of=60000,relation=replace-one'
    """

    sigma: Fraction
    q: Fraction
    truncate: int
    of: int
    relation: str = "add-remove"
    direction: str = "max"
    kind = "truncated"

    def __init__(self, sigma: ExactInput, q: ExactInput, truncate: CountInput, of: CountInput,
                 relation: str = "add-remove", direction: str = "max") -> None:
        s = parse_rational(sigma, "sigma")
        if s <= 0:
            raise InvalidParameterError(f"sigma={sigma!r} must be > 0 (a truncated subsampled Gaussian without noise "
                                        "is not modelled)")
        rate = parse_rational(q, "q")
        if not 0 <= rate <= 1:
            raise InvalidParameterError(f"q={q!r} must satisfy 0 <= q <= 1")
        b, n = parse_k(truncate, "truncate"), parse_k(of, "of")
        if n < 1:
            raise InvalidParameterError(f"of={of!r} must be at least 1 (the dataset holds the record)")
        rel = parse_relation(relation)
        object.__setattr__(self, "sigma", s)
        object.__setattr__(self, "q", rate)
        object.__setattr__(self, "truncate", b)
        object.__setattr__(self, "of", n)
        object.__setattr__(self, "relation", rel)
        object.__setattr__(self, "direction", parse_direction(direction) if rel == "add-remove" else "max")

    @property
    def is_symmetric(self) -> bool:
        return self.relation == "replace-one" or self.direction != "max"

    def normal(self) -> object:
        return normal_form(self)

    def oriented(self, direction: str) -> TruncatedSubsampledGaussian:
        """The same mechanism with its profile taken in ``direction`` (add/remove only)."""
        d = parse_direction(direction)
        if self.relation != "add-remove" or d in ("max", self.direction):
            return self
        return TruncatedSubsampledGaussian(self.sigma, self.q, self.truncate, self.of, self.relation, d)

    def spec(self) -> str:
        rel = ",relation=replace-one" if self.relation == "replace-one" else ""
        rel += f",direction={self.direction}" if self.direction != "max" else ""
        return (f"gaussian:sigma={format_fraction(self.sigma)},q={format_fraction(self.q)},truncate={self.truncate}"
                f",of={self.of}{rel}")


def normal_form(m: TruncatedSubsampledGaussian) -> object:
    """The cases that are plain Poisson subsamples (docs/mathematics.md §9, Theorem 9.4): nothing sampled
    (``q = 0`` or ``truncate = 0``: the (0, 0) pair), never cut (``truncate >= of``: rate q,
    sensitivity 1, or 2 under replace-one), always a full batch of the others (``q = 1``: rate
    truncate/of, sensitivity 2); else ``m`` itself.

    >>> str(normal_form(TruncatedSubsampledGaussian(1, "0.1", 5, 5)))
    'gaussian:sigma=1,q=0.1'
    >>> str(normal_form(TruncatedSubsampledGaussian(1, 1, 2, 5)))
    'gaussian:sigma=1,sensitivity=2,q=0.4'
    """
    if m.q == 0 or m.truncate == 0:
        return PureDP(0)
    if m.truncate >= m.of:
        sens = 2 if m.relation == "replace-one" else 1
        return PoissonSampled(Gaussian(m.sigma, sens), m.q, m.relation, m.direction)
    if m.q == 1:
        return PoissonSampled(Gaussian(m.sigma, 2), Fraction(m.truncate, m.of), m.relation, m.direction)
    return m
