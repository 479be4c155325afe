"""Binomial tails and probabilities in Arb, shared by the exact engines and the PLD engine.

P[Bin(k, p) >= m] is the regularized incomplete beta I_p(m, k - m + 1) (DLMF 8.17.5, 8.17.4), and
P[Bin(n, p) = j] is evaluated through log-gamma, so no huge integer is formed.
"""

from __future__ import annotations

from flint import arb, ctx, fmpz

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
    # a tail whose terms fall fast: summed term by term, with a geometric bound on the rest
    s = _falling_tail(k, m, p)
    if s is not None:
        return s
    s = _falling_tail(k, k - m + 1, 1 - p)  # P[Bin(k,p) <= m-1] = P[Bin(k,1-p) >= k-m+1]
    if s is not None:
        return 1 - s
    # P[Bin(k,p) >= m] = I_p(m, k-m+1) = 1 - I_{1-p}(k-m+1, m); evaluate the side that is a
    # tail (Arb's bounds are tight there), DLMF 8.17.5 and 8.17.4.
    if arb(fmpz(m)) > arb(fmpz(k)) * p:
        return p.beta_lower(arb(fmpz(m)), arb(fmpz(k - m + 1)), regularized=True)
    return 1 - (1 - p).beta_lower(arb(fmpz(k - m + 1)), arb(fmpz(m)), regularized=True)


#: the most terms :func:`_falling_tail` sums before it leaves the tail to the incomplete beta
_MAX_TAIL_TERMS = 4096


def _falling_tail(k: int, m: int, p: arb) -> arb | None:
    """P[Bin(k, p) >= m] summed from t_m = P[Bin = m] up, when the terms fall fast; None otherwise.

    The ratio t_{l+1}/t_l = rho_l = (k-l)/(l+1) * p/(1-p) decreases in l, so once rho_l < 1 the
    rest is at most t_l rho_l/(1 - rho_l) (a geometric series), which is added as the interval
    [0, that bound]: sound at every step (docs/mathematics.md §2).  Arb's incomplete beta takes
    seconds at k in the tens of thousands and a deep tail; this takes a few hundred terms.
    """
    if not (1 - p > 0 and p > 0):
        return None
    odds = p / (1 - p)
    if not (arb(fmpz(k - m)) * odds < arb(fmpz(m + 1))):  # rho_m < 1, certainly
        return None
    prec = ctx.prec
    t = binomial_pmf(k, m, p)
    total = arb(0)
    for l in range(m, min(k, m + _MAX_TAIL_TERMS) + 1):
        total += t
        if l == k:
            return total
        rho = arb(fmpz(k - l)) / arb(fmpz(l + 1)) * odds
        rest = t * rho / (1 - rho)  # sum over j > l of t_j is at most this (rho_j <= rho_l < 1)
        if rest < total * arb(2) ** (-prec - 4):
            return total + arb(0).union(rest)
        t *= rho
    return None


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
