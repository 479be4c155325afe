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

Command line (``exactdp region``)::

    exactdp region --eps E [--delta D] --k K [--json] [--grid] [--plot FILE] [--digits N]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from flint import arb, ctx

from exactdp.core.enclosure import Enclosure
from exactdp.core.errors import ExactDPError, InvalidParameterError, PrecisionError
from exactdp.core.numbers import DEFAULT_DIGITS, fraction_of_arb_endpoints, parse_digits
from exactdp.engines.kov15 import Homogeneous, c_arb, exact_ok, exact_prefix, kov15_grid
from exactdp.model.composition import Composition

__all__ = ["REGION_K_MAX", "main", "privacy_region"]

#: the largest k whose region (k + 4 vertices) is computed.
REGION_K_MAX = 20_000

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


# -- command line ---------------------------------------------------------------------------------

class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line on stderr, exit status 2
        print(f"exactdp region: error: {message}", file=sys.stderr)
        raise SystemExit(2)


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser of ``exactdp region``."""
    p = _Parser(
        prog="exactdp region",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=(
            "The privacy region of k mechanisms that are each (eps, delta)-DP: the exact vertices\n"
            "(P_FA, P_MD) of the hypothesis-testing tradeoff curve (KOV15 Thm 3.3).  An adversary\n"
            "testing which neighbour produced the output cannot do better than this curve."
        ),
        epilog=(
            "examples:\n"
            "  exactdp region --eps 'log(3/2)' --k 10            # exact fractions\n"
            "  exactdp region --eps 0.1 --delta 0.001 --k 30 --json --grid\n"
            "  exactdp region --eps 0.5 --k 20 --plot region.png\n\n"
            "numbers are exact: '0.1' is exactly 1/10; 'log(3/2)' means eps = log(3/2) exactly.\n"
            "--grid also lists the KOV15 grid points ((k-2i) eps, delta_i), i = 0..floor(k/2)."
        ),
    )
    p.add_argument("--eps", metavar="E", required=True, help="eps of each mechanism")
    p.add_argument("--delta", metavar="D", default="0", help="delta of each mechanism (default 0)")
    p.add_argument("--k", metavar="K", required=True, help="number of mechanisms")
    p.add_argument("--digits", metavar="N", default=str(DEFAULT_DIGITS),
                   help=f"significant digits certified (default {DEFAULT_DIGITS})")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--grid", action="store_true", help="also give the KOV15 grid (eps_i, delta_i)")
    p.add_argument("--plot", metavar="FILE", help="draw the region with matplotlib into FILE (png, pdf, svg)")
    return p


def _enc_json(e: Enclosure) -> dict[str, Any]:
    d = e.to_json()
    d.pop("digits", None)
    d.pop("algorithm", None)
    return d


def _plot(vertices: list[Vertex], comp: Composition, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    # float ok: drawing only; each point is the midpoint of a certified enclosure
    xs = [float((a.lower + a.upper) / 2) for a, _ in vertices]  # float ok: plot coordinates only
    ys = [float((b.lower + b.upper) / 2) for _, b in vertices]  # float ok: plot coordinates only
    fig, ax = plt.subplots(figsize=(5, 5))
    ax.fill(xs + [1, 1], ys + [0, 1], alpha=0.25, label="achievable (P_FA, P_MD)")
    ax.plot(xs, ys, "o-", ms=3, label="tradeoff curve (certified vertices)")
    ax.plot(ys, xs, "--", lw=0.8, label="symmetric side")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("P_FA (false alarm)")
    ax.set_ylabel("P_MD (missed detection)")
    ax.set_title(f"privacy region: {comp}")
    ax.legend(loc="upper right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def main(argv: Sequence[str] | None = None) -> int:
    """``exactdp region``: print (or plot) the privacy region; returns the exit status."""
    args = build_parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    try:
        comp = Composition.homogeneous(args.eps, args.delta, args.k)
        digits = parse_digits(args.digits)
        if args.plot:  # before the work: the folder must exist and matplotlib be installed
            from exactdp.core.files import check_output_path, require_extra

            check_output_path(args.plot, "plot")
            require_extra("matplotlib", "--plot")
        vertices = privacy_region(comp, digits=digits)
        grid = kov15_grid(comp, digits=digits) if args.grid else None
        if args.plot:
            _plot(vertices, comp, args.plot)
    except PrecisionError as e:
        print(f"exactdp region: precision: {e}", file=sys.stderr)
        return 3
    except (ExactDPError, ValueError) as e:
        print(f"exactdp region: error: {e}", file=sys.stderr)
        return 2
    except (ImportError, OSError) as e:
        print(f"exactdp region: error: --plot: {' '.join(str(e).split())}", file=sys.stderr)
        return 2
    if args.json:
        out: dict[str, Any] = {
            "query": "region",
            "inputs": comp.to_inputs(),
            "vertices": [{"p_fa": _enc_json(a), "p_md": _enc_json(b)} for a, b in vertices],
            "digits": digits,
        }
        if grid is not None:
            out["grid"] = [{"i": i, "eps": str(e), "delta": _enc_json(d)} for i, e, d in grid]
        if args.plot:
            out["plot"] = args.plot
        print(json.dumps(out))
        return 0
    print(f"privacy region of {comp}: {len(vertices)} vertices (P_FA, P_MD)")
    for a, b in vertices:
        print(f"  {_show(a):>34}  {_show(b):>34}")
    if grid is not None:
        print("KOV15 grid: the composition is (eps_i, delta_i)-DP, tightly")
        for i, e, d in grid:
            print(f"  i={i:<4} eps_i={e!s:<24} delta_i={_show(d)}")
    if args.plot:
        print(f"plot written to {args.plot}")
    return 0


def _show(e: Enclosure) -> str:
    if e.exact is not None:
        s = str(e)
        return s if len(s) <= 40 else f"[{e.lower_str()}, {e.upper_str()}] (exact: {len(s)} chars)"
    return f"[{e.lower_str()}, {e.upper_str()}]"

