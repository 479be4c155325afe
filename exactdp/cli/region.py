"""``exactdp region``: the privacy region (tradeoff curve) of k equal (eps, delta)-DP mechanisms.

    exactdp region --eps E [--delta D] --k K [--json] [--grid] [--plot FILE] [--digits N]

The vertices are computed by :func:`exactdp.api.region.privacy_region` (KOV15 Thm 3.3) and the
grid by :func:`exactdp.engines.kov15.kov15_grid`; this module reads the options and prints them
(text or JSON), or draws the region.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from exactdp.api.region import Vertex, privacy_region
from exactdp.core.enclosure import Enclosure
from exactdp.core.errors import ExactDPError, PrecisionError
from exactdp.core.numbers import DEFAULT_DIGITS, parse_digits
from exactdp.engines.kov15 import kov15_grid
from exactdp.model.composition import Composition

__all__ = ["build_parser", "main"]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line on stderr, exit status 2
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
            out["grid"] = [{"i": i, "eps": str(eps_i), "delta": _enc_json(d)} for i, eps_i, d in grid]
        if args.plot:
            out["plot"] = args.plot
        print(json.dumps(out))
        return 0
    print(f"privacy region of {comp}: {len(vertices)} vertices (P_FA, P_MD)")
    for a, b in vertices:
        print(f"  {_show(a):>34}  {_show(b):>34}")
    if grid is not None:
        print("KOV15 grid: the composition is (eps_i, delta_i)-DP, tightly")
        for i, eps_i, d in grid:
            print(f"  i={i:<4} eps_i={eps_i!s:<24} delta_i={_show(d)}")
    if args.plot:
        print(f"plot written to {args.plot}")
    return 0


def _show(e: Enclosure) -> str:
    if e.exact is not None:
        s = str(e)
        return s if len(s) <= 40 else f"[{e.lower_str()}, {e.upper_str()}] (exact: {len(s)} chars)"
    return f"[{e.lower_str()}, {e.upper_str()}]"

