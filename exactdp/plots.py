"""Figures: the golden tables' (matplotlib, Agg, byte-deterministic) and a certified curve's.

:func:`plot_curve` draws what :func:`exactdp.api.curve.delta_curve` or
:func:`~exactdp.api.curve.epsilon_curve` returned, in a notebook or into a file (``exactdp curve
--plot`` draws with it): the band between the directed floats of each enclosure, so the true curve
lies inside what is drawn.

Every figure is drawn from the rows of its table (the directed float bounds, which is all a plot
needs) with matplotlib's object API (no pyplot state), default rcParams plus a fixed set
(:data:`FIXED_RC`, including ``svg.hashsalt``), and the date/software metadata removed, so the
same rows give the same bytes.  ``render(name, rows, "png" | "svg") -> bytes``.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from exactdp.api.optimal import signed_eps
from exactdp.core.enclosure import Enclosure
from exactdp.core.errors import InvalidParameterError
from exactdp.core.files import require_extra
from exactdp.core.numbers import ExactReal, parse_delta

if TYPE_CHECKING:
    from matplotlib.typing import RcKeyType

__all__ = ["FIGURES", "FIXED_RC", "plot_curve", "plot_tradeoff", "render"]

#: rcParams fixed for every figure (on top of matplotlib's defaults, not the user's matplotlibrc).
FIXED_RC: dict[RcKeyType, Any] = {
    "svg.hashsalt": "exactdp-golden-tables",
    "svg.fonttype": "path",
    "font.family": "DejaVu Sans",
    "font.size": 9.0,
    "figure.figsize": (6.0, 4.0),
    "figure.dpi": 100,
    "savefig.dpi": 100,
    "path.simplify": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "legend.fontsize": 8.0,
}

_METADATA = {"png": {"Software": None}, "svg": {"Date": None, "Creator": None}}

Rows = Sequence[dict[str, str]]


def _f(row: dict[str, str]) -> float:
    """A float to plot (the upper directed bound; plotting only)."""
    return float(row["float_upper"])  # float ok: plotting only


def _kov15_comparison(ax: Any, rows: Rows) -> None:
    k, delta = None, None
    series: dict[str, list[tuple[float, float]]] = {}
    for r in rows:
        k, delta = int(r["k"]), Fraction(r["delta"])
        slack = Fraction(r["at"]) - k * delta
        series.setdefault(r["method"], []).append((float(slack), _f(r)))  # float ok: plotting only
    styles = {"optimal": "-", "kov15-3.4": "--", "drv10": "-.", "basic": ":"}
    for m in ("basic", "drv10", "kov15-3.4", "optimal"):
        if m in series:
            xs, ys = zip(*sorted(series[m]))
            ax.plot(xs, ys, styles[m], marker="o", markersize=2.5, label=m)
    ax.set_xscale("log")
    ax.set_xlabel("delta~ (total delta_g = k delta + delta~)")
    ax.set_ylabel("eps_g")
    ax.set_title(f"{k}-fold composition of (0.1, {delta})-DP")
    ax.legend()


def _privacy_region(ax: Any, rows: Rows) -> None:
    fa: dict[int, float] = {}
    md: dict[int, float] = {}
    title = ""
    for r in rows:
        if r["query"] == "region_fa":
            fa[int(r["at"])] = _f(r)
        elif r["query"] == "region_md":
            md[int(r["at"])] = _f(r)
        title = f"{r['k']}-fold composition of ({r['eps']}, {r['delta']})-DP"
    ms = sorted(fa, reverse=True)
    xs = [0.0] + [fa[m] for m in ms] + [1.0]
    ys = [1.0] + [md[m] for m in ms] + [0.0]
    # The privacy region is symmetric under (P_FA, P_MD) -> (1 - P_FA, 1 - P_MD) (KOV15 section 2):
    # it lies between the tradeoff curve and its point reflection.
    ax.fill(xs + [1.0 - x for x in xs], ys + [1.0 - y for y in ys], alpha=0.2, label="privacy region")
    ax.plot(xs, ys, "-", marker="o", markersize=3, label="tradeoff curve (exact vertices)")
    ax.plot([1.0 - x for x in xs], [1.0 - y for y in ys], "-", marker="o", markersize=3, color="C0")
    ax.plot([0.0, 1.0], [1.0, 0.0], ":", color="gray", label="no privacy loss (P_FA + P_MD = 1)")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_aspect("equal")
    ax.set_xlabel("P_FA")
    ax.set_ylabel("P_MD")
    ax.set_title(title)
    ax.legend()


def _mv_approx(ax: Any, rows: Rows) -> None:
    cases: list[str] = []
    vals: dict[str, dict[str, float]] = {}
    for r in rows:
        case = r["mechanisms"] + " @ " + r["at"]
        if case not in vals:
            cases.append(case)
            vals[case] = {}
        label = r["method"] + (f" ({r['options']})" if r["options"] else "")
        vals[case][label] = _f(r)
    labels = sorted({lab for v in vals.values() for lab in v})
    width = 0.8 / max(len(labels), 1)
    for j, lab in enumerate(labels):
        xs = [i + j * width for i in range(len(cases))]
        ax.bar(xs, [vals[c].get(lab, 0.0) for c in cases], width, label=lab)
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(cases))])
    ax.set_xticklabels([f"{i // 2 + 1}: {c.split(' @ ')[1]}" for i, c in enumerate(cases)], fontsize=7, rotation=30)
    ax.set_xlabel("case: delta_g (the lists are in the table)")
    ax.set_ylabel("eps_g at delta_g")
    ax.set_title("Murtagh-Vadhan approximation vs KOV15 Thm 3.5 vs optimum")
    ax.legend()


def _steinke_noise(ax: Any, rows: Rows) -> None:
    series: dict[tuple[str, str], list[tuple[int, float]]] = {}
    for r in rows:
        series.setdefault((r["method"], r["eps"]), []).append((int(r["k"]), _f(r)))
    for (m, e), pts in sorted(series.items()):
        xs, ys = zip(*sorted(pts))
        style = {"basic-laplace": "--", "steinke-advanced": "-", "optimal-laplace": ":"}.get(m, "-")
        ax.plot(xs, ys, style, marker="o", markersize=2.5, label=f"{m}, eps={e}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("k (sensitivity-1 queries)")
    ax.set_ylabel("Laplace scale per query")
    ax.set_title("basic Theta(k) vs advanced Theta(sqrt k), delta = 1e-6")
    ax.legend(ncol=2, fontsize=7)


def _bounds_looseness(ax: Any, rows: Rows) -> None:
    series: dict[str, dict[int, float]] = {}
    for r in rows:
        if r["eps"] == "0.1" and r["delta"] == "0" and r["at"] == "0.000001" and r["float_upper"] != "inf":
            series.setdefault(r["method"], {})[int(r["k"])] = _f(r)
    opt = series.get("optimal", {})
    for m, pts in sorted(series.items()):
        ks = sorted(k for k in pts if k in opt and opt[k] > 0)
        ax.plot(ks, [pts[k] / opt[k] for k in ks], "-" if m == "optimal" else "--", marker="o", markersize=2.5,
                label=m, linewidth=2.0 if m == "optimal" else 1.0)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("k")
    ax.set_ylabel("bound / optimum (eps_g at delta_g = 1e-6)")
    ax.set_title("k-fold composition of 0.1-DP: how loose each bound is")
    ax.legend(ncol=2)


def _dpsgd_brackets(ax: Any, rows: Rows) -> None:
    import json

    series: dict[tuple[str, int], list[tuple[float, float, float]]] = {}
    for r in rows:
        spec = json.loads(r["mechanisms"])[0]
        spec = spec[0] if isinstance(spec, list) else spec
        kv = dict(x.split("=") for x in spec.split(":", 1)[1].split(","))
        key = (kv["sigma"], int(kv["count"]))
        series.setdefault(key, []).append((float(Fraction(kv["q"])), float(r["float_lower"]),  # float ok: plotting
                                           _f(r)))
    for (sigma, k), pts in sorted(series.items()):
        pts.sort()
        xs = [p[0] for p in pts]
        ax.fill_between(xs, [p[1] for p in pts], [p[2] for p in pts], alpha=0.5)
        ax.plot(xs, [p[2] for p in pts], marker="o", markersize=2.5, label=f"sigma={sigma}, {k} steps")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("sampling rate q")
    ax.set_ylabel("eps at delta = 1e-5 (certified bracket)")
    ax.set_title("DP-SGD (Poisson-subsampled Gaussian)")
    ax.legend()


FIGURES: dict[str, Callable[[Any, Rows], None]] = {
    "dpsgd_brackets": _dpsgd_brackets,
    "repro_kov15_comparison": _kov15_comparison,
    "repro_privacy_region": _privacy_region,
    "repro_mv_approx": _mv_approx,
    "repro_steinke_noise": _steinke_noise,
    "bounds_looseness": _bounds_looseness,
}


def render(name: str, rows: Rows, fmt: str) -> bytes:
    """The bytes of figure ``name`` drawn from ``rows`` as ``fmt`` ("png" or "svg")."""
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    if fmt not in _METADATA:
        raise ValueError(f"fmt={fmt!r} must be 'png' or 'svg'")
    with matplotlib.rc_context():
        matplotlib.rcdefaults()
        matplotlib.rcParams.update(FIXED_RC)
        fig = Figure()
        FigureCanvasAgg(fig)
        ax = fig.add_subplot(1, 1, 1)
        FIGURES[name](ax, rows)
        fig.tight_layout()
        buf = io.BytesIO()
        fig.savefig(buf, format=fmt, metadata=_METADATA[fmt])
    return buf.getvalue()


# -- a certified curve, for notebooks and ``exactdp curve --plot`` ---------------------------------

def _x(p: ExactReal | Fraction) -> float:
    """A point's coordinate (an eps_g, possibly log(q), or a delta_g); plotting only."""
    if isinstance(p, Fraction):
        return float(p)  # float ok: plotting only
    q = p.rational_value()
    if q is not None:
        return float(q)  # float ok: plotting only
    return float(p.arb().mid())  # float ok: plotting only


def plot_curve(points: Sequence[Any], enclosures: Sequence[Enclosure], *, direction: str = "delta",
               ax: Any = None, label: str | None = None) -> Any:
    """Draw a certified privacy curve and return the matplotlib ``Axes`` (needs the ``plot`` extra).

    ``points`` are the eps_g of a :func:`~exactdp.api.curve.delta_curve` (``direction="delta"``:
    delta against eps_g, log scale) or the delta_g of an :func:`~exactdp.api.curve.epsilon_curve`
    (``direction="epsilon"``: eps_g against delta_g, log scale), and ``enclosures`` what it
    returned.  The band is ``[float_lower, float_upper]`` of each point (directed floats: the true
    curve lies inside it, docs/contracts.md §1.3), the line its upper side.  ``ax``: draw there
    (default: a new pyplot figure, which a notebook shows).

    >>> from matplotlib.figure import Figure
    >>> from exactdp import Composition
    >>> from exactdp.api.curve import delta_curve
    >>> pts = ["1", "2", "3"]
    >>> ax = plot_curve(pts, delta_curve(Composition.homogeneous("1", 0, 5), pts, digits=6), ax=Figure().add_subplot())
    >>> ax.get_xlabel(), ax.get_ylabel()
    ('eps_g', 'delta')
    """
    if direction not in ("delta", "epsilon"):
        raise InvalidParameterError(f"direction={direction!r} must be 'delta' or 'epsilon'")
    if len(points) != len(enclosures) or not points:
        raise InvalidParameterError(f"{len(points)} points and {len(enclosures)} enclosures: give one of each, "
                                    "at least one")
    if not all(isinstance(e, Enclosure) for e in enclosures):
        raise InvalidParameterError("enclosures must be the Enclosure objects a curve returned")
    if ax is None:
        plt = require_extra("matplotlib.pyplot", "plot_curve")
        _, ax = plt.subplots(figsize=(6, 4))
    else:
        require_extra("matplotlib", "plot_curve")
    parse = signed_eps if direction == "delta" else parse_delta  # an eps_g below 0 too (docs/mathematics.md §9)
    xs = [_x(parse(p, "eps_g" if direction == "delta" else "delta_g")) for p in points]
    lo = [e.float_lower() for e in enclosures]
    hi = [e.float_upper() for e in enclosures]
    band = label or "certified [lower, upper]"
    if direction == "delta":
        ax.fill_between(xs, lo, hi, alpha=0.4, label=band)
        ax.plot(xs, hi, lw=1)
        ax.set_xlabel("eps_g")
        ax.set_ylabel("delta")
    else:
        ax.fill_betweenx(xs, lo, hi, alpha=0.4, label=band)
        ax.plot(hi, xs, lw=1)
        ax.set_ylabel("delta_g")
        ax.set_xlabel("eps_g")
    if direction == "epsilon" or any(y > 0 for y in hi):
        ax.set_yscale("log")
    ax.legend(fontsize=8)
    return ax


def plot_tradeoff(alphas: Sequence[Fraction], betas: Sequence[Enclosure], *, ax: Any = None,
                  label: str | None = None) -> Any:
    """Draw a certified trade-off curve beta(alpha) (:func:`exactdp.api.tradeoff.tradeoff`) and return
    the matplotlib ``Axes`` (needs the ``plot`` extra).

    The band is ``[float_lower, float_upper]`` of each point (directed floats: the true curve lies
    inside it, docs/contracts.md §1.3), with the diagonal beta = 1 - alpha (no privacy) dashed.

    >>> from matplotlib.figure import Figure
    >>> from exactdp.api.tradeoff import tradeoff
    >>> t = tradeoff("gaussian:sigma=1", ["0.1", "0.5"], digits=6)
    >>> ax = plot_tradeoff(t.alphas, t.betas, ax=Figure().add_subplot())
    >>> ax.get_xlabel(), ax.get_ylabel()
    ('alpha (type I error)', 'beta (type II error)')
    """
    if len(alphas) != len(betas) or not alphas:
        raise InvalidParameterError(f"{len(alphas)} alphas and {len(betas)} enclosures: give one of each, at least one")
    if not all(isinstance(e, Enclosure) for e in betas):
        raise InvalidParameterError("betas must be the Enclosure objects a trade-off curve returned")
    if ax is None:
        plt = require_extra("matplotlib.pyplot", "plot_tradeoff")
        _, ax = plt.subplots(figsize=(5, 5))
    else:
        require_extra("matplotlib", "plot_tradeoff")
    xs = [float(a) for a in alphas]  # float ok: plotting only
    lo = [e.float_lower() for e in betas]
    hi = [e.float_upper() for e in betas]
    ax.fill_between(xs, lo, hi, alpha=0.4, label=label or "certified [lower, upper]")
    ax.plot(xs, lo, lw=1)
    ax.plot([0, 1], [1, 0], ls="--", lw=0.8, color="grey", label="no privacy (1 - alpha)")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("alpha (type I error)")
    ax.set_ylabel("beta (type II error)")
    ax.legend(fontsize=8)
    return ax
