"""Binomial tails and probabilities in Arb, shared by the exact engines and the PLD engine.

P[Bin(k, p) >= m] is the regularized incomplete beta I_p(m, k - m + 1) (DLMF 8.17.5, 8.17.4), and
P[Bin(n, p) = j] is evaluated through log-gamma, so no huge integer is formed.
"""

from __future__ import annotations

from flint import arb, fmpz

__all__ = ["binomial_pmf", "binomial_upper_tail"]


def binomial_upper_tail(k: int, m: int, p: arb) -> arb:
    """P[Bin(k, p) >= m] in Arb, via the regularized incomplete beta of the smaller side.

    >>> from flint import ctx
    >>> with ctx.workprec(64):
    ...     print(binomial_upper_tail(2, 1, arb(1) / 2).contains(arb(3) / 4))
    True
    """
    if m <= 0:
        return arb(1)
    if m > k:
        return arb(0)
    # P[Bin(k,p) >= m] = I_p(m, k-m+1) = 1 - I_{1-p}(k-m+1, m); evaluate the side that is a
    # tail (Arb's bounds are tight there), DLMF 8.17.5 and 8.17.4.
    if arb(fmpz(m)) > arb(fmpz(k)) * p:
        return p.beta_lower(arb(fmpz(m)), arb(fmpz(k - m + 1)), regularized=True)
    return 1 - (1 - p).beta_lower(arb(fmpz(k - m + 1)), arb(fmpz(m)), regularized=True)


def binomial_pmf(n: int, j: int, p: arb) -> arb:
    """P[Bin(n, p) = j] in Arb (log-gamma form: no huge integers).

    >>> from flint import ctx
    >>> with ctx.workprec(64):
    ...     print(binomial_pmf(2, 1, arb(1) / 2).contains(arb(1) / 2))
    True
    """
    if j < 0 or j > n:
        return arb(0)
    N, J = arb(fmpz(n)), arb(fmpz(j))
    lg = (N + 1).lgamma() - (J + 1).lgamma() - (N - J + 1).lgamma()
    return (lg + J * p.log() + (N - J) * (1 - p).log()).exp()
