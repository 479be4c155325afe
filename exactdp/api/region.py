"""The privacy region (hypothesis-testing tradeoff curve) of k equal (eps, delta)-DP mechanisms.

KOV15 section 2 / Thm 3.3 (and Dong-Roth-Su f-DP): the tradeoff curve of the k-fold composition
is piecewise linear.  With x = e^eps, q = (1-delta)^k,

    w0_j = q C(k,j) x^{k-j}/(1+x)^k,    w1_j = q C(k,j) x^j/(1+x)^k,

its lower-left vertices (P_FA, P_MD) are (0, 1), (0, q), (sum_{j>=m} w0_j, sum_{j<m} w1_j) for
m = k..0, and (1, 0) (docs/mathematics.md §3).  A vertex is exact when e^eps is rational and k
moderate, otherwise a pair of certified enclosures.

The KOV15 grid is recovered from the vertices: delta(eps_g) = max over vertices of
1 - P_MD - e^{eps_g} P_FA, since the DP constraint is P_FA + e^{eps_g} P_MD >= 1 - delta
for the pair in both orders and the curve is symmetric.

The command line (``exactdp region --eps E [--delta D] --k K [--json] [--grid] [--plot FILE]
[--digits N]``) is :mod:`exactdp.cli.region`.
"""

from __future__ import annotations

from fractions import Fraction

from flint import arb, ctx

from exactdp.core.enclosure import Enclosure
from exactdp.core.errors import InvalidParameterError, PrecisionError
from exactdp.core.numbers import DEFAULT_DIGITS, fraction_of_arb_endpoints
from exactdp.engines.kov15 import Homogeneous, c_arb, exact_ok, exact_prefix
from exactdp.model.composition import Composition

__all__ = ["REGION_K_MAX", "Vertex", "privacy_region"]

#: the largest k whose region (k + 4 vertices) is computed.
REGION_K_MAX = 20_000

#: a vertex (P_FA, P_MD) of the tradeoff curve
Vertex = tuple[Enclosure, Enclosure]


def privacy_region(comp: Composition, *, digits: int = DEFAULT_DIGITS) -> list[Vertex]:
    """The exact vertices (P_FA, P_MD) of the tradeoff curve of k equal mechanisms (KOV15 Thm 3.3).

    >>> v = privacy_region(Composition.homogeneous("log(3/2)", 0, 2))
    >>> [(str(a), str(b)) for a, b in v]
    [('0', '1'), ('0', '1'), ('0.16', '0.64'), ('0.64', '0.16'), ('1', '0'), ('1', '0')]
    """
    if not isinstance(comp, Composition) or not comp.is_homogeneous:
        raise InvalidParameterError("comp must be a homogeneous Composition (k equal mechanisms)")
    h = Homogeneous(comp)
    k = h.k
    if k > REGION_K_MAX:
        raise InvalidParameterError(f"k={k} must be at most {REGION_K_MAX} for the privacy region (it has k+4 vertices)")
    zero = Enclosure.exact_value(Fraction(0), digits)
    one = Enclosure.exact_value(Fraction(1), digits)
    if h.exact_with(Fraction(1)):
        # exact: U[m] = sum_{j<m} C(k,j) x^j/(1+x)^k from the exact prefix sums
        tot, pre = exact_prefix(h.x.numerator, h.x.denominator, k)  # type: ignore[union-attr]
        q = h.c_exact()
        U = [Fraction(s, tot) for s in pre]
        pts = [(q * U[k - m + 1], q * U[m]) for m in range(k, -1, -1)]
        return [(zero, one), (zero, Enclosure.exact_value(q, digits))] + [
            (Enclosure.exact_value(a, digits), Enclosure.exact_value(b, digits)) for a, b in pts
        ] + [(one, zero)]
    return [(zero, one)] + _region_arb(h, digits) + [(one, zero)]


def _region_arb(h: Homogeneous, digits: int) -> list[Vertex]:
    """The vertices (0, q), then m = k..0, as enclosures: prefix sums of positive terms in Arb."""
    eps, delta, k = h.eps, h.delta, h.k
    target = Fraction(1, 10 ** (digits + 2))
    prec = int(digits * 3.33) + 64 + k.bit_length()
    while prec <= (1 << 17):
        with ctx.workprec(prec):
            x = eps.exp_arb()
            q = c_arb(delta, k)
            u = 1 / (1 + x) ** k     # u_j = C(k,j) x^j/(1+x)^k
            U = [arb(0)]             # U[m] = sum_{j<m} u_j
            for j in range(k + 1):
                U.append(U[-1] + u)
                if j < k:
                    u = u * x * (k - j) / (j + 1)
            balls = [(arb(0), q)] + [(q * U[k - m + 1], q * U[m]) for m in range(k, -1, -1)]
        out: list[Vertex] = []
        ok = True
        for pair in balls:
            encs = []
            for b in pair:
                if b.is_exact() and b == 0:
                    encs.append(Enclosure.exact_value(Fraction(0), digits))
                    continue
                if not b.is_finite() or b.contains(0):
                    ok = False
                    break
                lo, hi = fraction_of_arb_endpoints(b)
                if hi - lo > target * min(abs(lo), abs(hi)):
                    ok = False
                    break
                encs.append(Enclosure(lo, hi, digits, algorithm="kov15-region"))
            if not ok:
                break
            out.append((encs[0], encs[1]))
        if ok:
            # the endpoints m = 0 (P_MD = 0) and (0, q) are exact when q is
            if exact_ok(k, 1 - delta):
                out[0] = (out[0][0], Enclosure.exact_value(h.c_exact(), digits))
            out[-1] = (out[-1][0], Enclosure.exact_value(Fraction(0), digits))
            return out
        prec *= 2
    raise PrecisionError(f"could not certify the privacy region to {digits=} digits")
