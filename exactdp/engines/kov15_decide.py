"""Exact decision "is this composition (eps_g, delta_g)-DP?" (docs/contracts.md §1.5).

For k equal mechanisms (KOV15 Thm 3.3 / MV Thm 1.4) the composition is (eps_g, delta_g)-DP iff

    delta_pure(eps_g) <= t,   t = 1 - (1 - delta_g)/(1 - delta)^k,

with delta_pure(eps_g) = (1+x)^{-k} sum_{l >= m} C(k,l) (x^l - r x^{k-l}), x = e^eps, r = e^{eps_g}.
Why the answer is never a guess:

* t < 0 (delta_g < 1 - (1-delta)^k) is decided exactly: not private.
* delta_pure = 0 exactly when eps = 0 or eps_g >= k eps (the threshold m is computed with exact
  signs): then private iff t >= 0, decided exactly.
* x and r rational: an exact comparison of rationals (moderate k).
* Otherwise delta_pure > 0 and, multiplied by (1+x)^k, the difference
  sum_{l>=m} C(k,l) (x^l - r x^{k-l}) - t (1+x)^k is a finite sum of exponentials of rationals
  (or a polynomial in x or in r with rational coefficients).  Its term with the lowest exponent
  (l = k in the second sum, coefficient -1, together with -t from (1+x)^k) does not vanish after
  collecting equal exponents, so by Lindemann-Weierstrass it is not 0: the Arb enclosure is
  refined until its sign is certain, which terminates.
* x and r rational but k too large for exact rationals: the enclosure is refined; if the two values
  still agree to 2^17 bits an exact computation is attempted, and if even that is out of reach a
  PrecisionError is raised (never a guess).

A heterogeneous composition is routed elsewhere (:mod:`exactdp.route`; MV Thm 1.5).
"""

from __future__ import annotations

from fractions import Fraction

from exactdp.core.errors import PrecisionError
from exactdp.core.numbers import ExactReal
from exactdp.engines.kov15 import Homogeneous, check_k_max, cmp_pow, exact_AB, exact_sign, sign_dp_minus_t, threshold
from exactdp.model.composition import Composition

__all__ = ["kov15_decide"]

_EXACT_FALLBACK_BITS = 4_000_000


def kov15_decide(comp: Composition, eps_g: ExactReal, delta_g: Fraction) -> bool:
    """Exactly whether ``comp`` is (eps_g, delta_g)-DP (KOV15 Thm 3.3 / MV Thm 1.5), never a guess.

    >>> c = Composition.homogeneous("0.1", "0.001", 30)
    >>> kov15_decide(c, ExactReal.parse("3"), 1 - Fraction(999, 1000) ** 30)
    True
    >>> kov15_decide(c, ExactReal.parse("3"), 1 - Fraction(999, 1000) ** 30 - Fraction(1, 10**40))
    False
    """
    eps_g = ExactReal.parse(eps_g, "eps_g")
    delta_g = Fraction(delta_g)
    check_k_max(comp.k)
    h = Homogeneous(comp)
    if cmp_pow(h.delta, h.k, delta_g) < 0:  # t < 0 <= delta_pure
        return False
    m = threshold(h.eps, eps_g, h.k)
    if m > h.k:  # delta_pure = 0 <= t
        return True
    t_exact = 1 - (1 - delta_g) / h.c_exact() if h.exact_with(Fraction(1)) else None
    s = sign_dp_minus_t(h, eps_g, m, t_exact, delta_g, max_prec=1 << 17)
    if s is None:
        r = eps_g.exp_exact()
        x = h.x
        bits = h.k * (max(x.numerator.bit_length(), x.denominator.bit_length()) + 1) if x is not None else 0
        if x is None or r is None or bits > _EXACT_FALLBACK_BITS:
            raise PrecisionError(
                "delta_opt(eps_g) and delta_g agree to 2^17 bits and the exact rationals are too large "
                f"(k={h.k}) to compare: no decision rather than a guess"
            )
        A, B = exact_AB(x, h.k, m)
        t = 1 - (1 - delta_g) / (1 - h.delta) ** h.k
        s = exact_sign(A - r * B - t)
    return s <= 0
