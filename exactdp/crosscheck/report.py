"""Run the sweep through the adapters, judge every answer exactly, write JSON, Markdown and HTML.

Each finding gets a verdict of :mod:`exactdp.testing.judge`: ``sound``, ``loose``, ``unsound-fp``
(at most 4 ulps below), ``unsound`` (material, with the certified relative gap), ``undecided``
(inside the bracket, budget spent; never counted as sound), ``lower-estimate`` (a documented
under-estimate), or ``error`` (the library raised) / ``skipped`` (with why).  The optimum is
KOV15 Thm 3.3 / Murtagh-Vadhan Thm 1.5 for generic mechanisms, the Gaussian closed form, and the
certified PLD bracket of docs/pld.md otherwise (docs/peers/README.md).
"""

from __future__ import annotations

import json
import sys
import time
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, TextIO

from exactdp.core.enclosure import Enclosure
from exactdp.core.errors import PrecisionError
from exactdp.core.executor import ExecutorSpec
from exactdp.core.numbers import INF, ExactReal, format_fraction
from exactdp.crosscheck.adapters import Adapter, NotApplicable, Skipped, Unsupported
from exactdp.crosscheck.cases import Case, is_tight
from exactdp.crosscheck.curves import CurveFinding, run_curves
from exactdp.crosscheck.isolate import Limits, PeerLimitError, call_isolated
from exactdp.model.attained import attained
from exactdp.testing.judge import FP_ULPS, LOOSE_REL, VERDICTS, judge
from exactdp.testing.oracle import InvalidClaimError, Oracle

__all__ = [
    "COUNTED",
    "CachedOracle",
    "Finding",
    "Report",
    "check_remote",
    "curves_markdown",
    "run_crosscheck",
    "summary",
    "to_html",
    "to_json",
    "to_markdown",
    "write_json",
    "write_text",
]


@dataclass
class Finding:
    """One library answer and its exact verdict (the keys of the JSON report, docs/peers/README.md).

    ``relative_gap`` is the certified relative gap: the shortfall below the optimum for
    ``unsound``/``unsound-fp``, the excess above it for ``sound``/``loose`` (one number, or a
    certified range ``[lo, hi]``).
    """

    library: str
    api: str
    case: str
    query: str
    at: str
    inputs: dict[str, Any]
    reported: str | None
    exact_lower: str | None
    exact_upper: str | None
    verdict: str
    relative_gap: str | None = None
    note: str = ""
    error: str | None = None
    seconds: float = 0.0
    digits: int | None = None
    curve: str = ""

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class Report:
    """All findings, and which libraries ran (with their versions) or were skipped (why)."""

    findings: list[Finding] = field(default_factory=list)
    libraries: list[dict[str, Any]] = field(default_factory=list)
    not_applicable: int = 0
    seconds: float = 0.0
    curves: list[CurveFinding] = field(default_factory=list)

    def count(self, verdict: str, library: str | None = None) -> int:
        return sum(1 for f in self.findings if f.verdict == verdict and (library is None or f.library == library))

    @property
    def unsound(self) -> bool:
        """Whether anything is ``unsound`` (material), an answer or an order of an RDP curve: the
        cross-check's exit status 1."""
        return self.count("unsound") > 0 or any(c.material for c in self.curves)


class CachedOracle(Oracle):
    """An :class:`Oracle` that remembers enclosures and decisions (several APIs ask about the same
    input); a decision the budget could not settle is remembered too, and raised again."""

    def __init__(self, digits: int = 20, base: Oracle | None = None, max_seconds: Any = None) -> None:
        super().__init__(digits=digits, max_seconds=max_seconds)
        self._base = base or Oracle(digits=digits, max_seconds=max_seconds)
        self._cache: dict[tuple[Any, ...], Any] = {}

    def _memo(self, key: tuple[Any, ...], fn: Any) -> Any:
        if key not in self._cache:
            try:
                self._cache[key] = (True, fn())
            except PrecisionError as exc:
                self._cache[key] = (False, exc)
        ok, val = self._cache[key]
        if not ok:
            raise val
        return val

    def epsilon(self, composition: Any, delta_g: Any, *, digits: int | None = None) -> Enclosure:
        return self._memo(("e", composition, delta_g, digits),
                          lambda: self._base.epsilon(composition, delta_g, digits=digits or self.digits))

    def delta(self, composition: Any, eps_g: Any, *, digits: int | None = None) -> Enclosure:
        return self._memo(("d", composition, eps_g, digits),
                          lambda: self._base.delta(composition, eps_g, digits=digits or self.digits))

    def is_private(self, composition: Any, eps_g: Any, delta_g: Any, *, max_seconds: float | None = None) -> bool:  # float ok: seconds
        return self._memo(("p", composition, eps_g, delta_g, max_seconds),
                          lambda: self._base.is_private(composition, eps_g, delta_g, max_seconds=max_seconds))


def _reported_str(x: Any) -> str | None:
    if x is None:
        return None
    if isinstance(x, Fraction):
        return format_fraction(x)
    try:
        return repr(float(x))  # float ok: the library's own float, printed round-trip exactly
    except (TypeError, ValueError):
        return str(x)[:200]


def run_api(api: Any, case: Case, oracle: Oracle, limits: Limits | None = None) -> Finding | None:
    """Ask one API one case and judge the answer; None when the API cannot express the case.

    With ``limits`` the library is called in a child process under them (:mod:`exactdp.crosscheck.isolate`):
    a call past its memory or time limit is an ``error`` finding (``out of memory: ...``, ``timeout: ...``)."""
    import logging

    logging.getLogger("absl").setLevel(logging.ERROR)  # dp_accounting's per-order warnings
    t0 = time.perf_counter()
    base = {"library": api.library, "api": api.name, "case": case.name, "query": case.query,
            "at": format_fraction(case.at), "inputs": case.composition().to_inputs(), "curve": case.curve}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # peers' RuntimeWarnings would drown the progress lines
            logging.disable(logging.WARNING)  # and so would their logging warnings
            try:
                rep = api.run(case) if limits is None else call_isolated(api.run, case, limits)
            finally:
                logging.disable(logging.NOTSET)
    except NotApplicable:
        return None
    except Unsupported as exc:
        return Finding(**base, reported=None, exact_lower=None, exact_upper=None, verdict="unsupported",
                       note=str(exc)[:300], seconds=round(time.perf_counter() - t0, 3))
    except Skipped as exc:
        return Finding(**base, reported=None, exact_lower=None, exact_upper=None, verdict="skipped",
                       note=str(exc)[:300], seconds=round(time.perf_counter() - t0, 3))
    except PeerLimitError as exc:  # past its memory or time limit: recorded, the sweep goes on
        return Finding(**base, reported=None, exact_lower=None, exact_upper=None, verdict="error",
                       error=str(exc)[:500], seconds=round(time.perf_counter() - t0, 3))
    except Exception as exc:  # noqa: BLE001 - a peer may raise anything; recorded as its error, the sweep goes on
        return Finding(**base, reported=None, exact_lower=None, exact_upper=None, verdict="error",
                       error=f"{type(exc).__name__}: {exc}"[:500], seconds=round(time.perf_counter() - t0, 3))
    secs = time.perf_counter() - t0
    base["inputs"] = rep.composition.to_inputs()
    base["at"] = format_fraction(rep.at)
    value = INF if rep.value is None else rep.value  # a library's None means "no eps": it claims nothing
    kw = {"delta_g": rep.at} if case.query == "epsilon" else {"eps_g": ExactReal.rational(rep.at)}
    try:
        v = judge(value, rep.composition, oracle=oracle, side="lower" if rep.side == "lower" else "upper", **kw)
    except InvalidClaimError as exc:  # NaN and the like: the library's answer is not a number
        return Finding(**base, reported=_reported_str(rep.value), exact_lower=None, exact_upper=None,
                       verdict="error", error=f"reported value is not a number: {exc}"[:500], note=rep.note,
                       seconds=round(secs, 3))
    except Exception as exc:  # noqa: BLE001 - the oracle could not answer in its budget: say so, do not guess
        return Finding(**base, reported=_reported_str(rep.value), exact_lower=None, exact_upper=None,
                       verdict="skipped", note=f"oracle: {type(exc).__name__}: {exc}"[:300], seconds=round(secs, 3))
    note = rep.note + (f"; {v.note}" if v.note else "")
    verdict = v.verdict
    if verdict in ("unsound", "unsound-fp") and not is_tight(rep.composition) and attained(rep.composition) is None:
        verdict = "undecided"  # below exactdp's upper bound, which is not the optimum: nothing is proven
        note += ("; the certified value is an upper bound with no attained pair modelled, not the optimum "
                 "(docs/mathematics.md §9, Thms 9.4, 9.6): an answer below it is not proven unsound")
    elif verdict == "unsound" and case.query == "epsilon" and not isinstance(v.claim, float) and v.claim <= 0:
        at = format_fraction(rep.at)
        note += (f"; eps <= 0 at delta_g={at} where the certified optimum is above 0" if v.optimum.lower > 0 else
                 f"; a negative eps at delta_g={at}: the certified delta at that eps (below 0, "
                 "docs/mathematics.md §9) is above delta_g")
    return Finding(**base, reported=_reported_str(rep.value), exact_lower=v.optimum.lower_str(),
                   exact_upper=v.optimum.upper_str(), verdict=verdict, relative_gap=v.relative_gap,
                   note=note, seconds=round(secs, 3), digits=v.optimum.certified_digits())


_ORACLES: dict[tuple[int, Any], Oracle] = {}  # a worker process's oracles, by (digits, max_seconds)


def check_remote(item: tuple[Adapter, str, Case, int, Any, Limits | None]) -> Finding | None:
    """One (API, case) of the sweep in a worker process (local or Dask): :func:`run_api` with
    the worker's own cached oracle of those digits and that budget."""
    adapter, api_name, case, digits, max_seconds, limits = item
    api = next(a for a in adapter.apis() if a.name == api_name)
    oracle = _ORACLES.setdefault((digits, max_seconds), CachedOracle(digits, max_seconds=max_seconds))
    return run_api(api, case, oracle, limits)


def run_crosscheck(adapters: Iterable[Adapter], cases: Sequence[Case], *, oracle: Oracle | None = None,
                   progress: TextIO | None | str = "auto", limits: Limits | None = None,
                   executor: ExecutorSpec | None = None, shard: tuple[int, int] | None = None,
                   on_finding: Callable[[Report], None] | None = None, curves: bool = True) -> Report:
    """Run every case through every API of every available adapter; judge each answer exactly.

    ``limits`` runs each library call in a child process under them (:mod:`exactdp.crosscheck.isolate`);
    ``executor`` (:func:`exactdp.core.executor.parse_executor`) spreads the (API, case) pairs over
    processes or a Dask cluster, the findings kept in sweep order; ``shard`` (I, N) keeps the I-th of
    N round-robin slices of those pairs; ``on_finding`` is called with the report after each
    finding (an incremental report).  With ``curves`` (the default) the RDP curves of the libraries
    that compute one are then judged order by order (:mod:`exactdp.crosscheck.curves`), in this
    process.  Progress lines go to ``progress`` (by default standard error when it is a terminal)."""
    from exactdp.core.executor import map_ordered, open_executor
    from exactdp.core.executor import shard as take_shard
    from exactdp.core.progress import stderr_if_terminal

    out = stderr_if_terminal() if progress == "auto" else progress
    oracle = oracle or CachedOracle()
    report = Report()
    start = time.perf_counter()

    def say(msg: str) -> None:
        if out is not None:
            print(msg, file=out, flush=True)  # type: ignore[arg-type]

    work: list[tuple[Adapter, Any, Case]] = []
    loaded: list[Adapter] = []
    for ad in adapters:
        ok, note = ad.available()
        if not ok:
            report.libraries.append({"library": ad.library, "available": False, "note": note})
            say(f"[crosscheck] {ad.library}: skipped, {note}")
            continue
        try:
            apis = ad.apis()
        except Exception as exc:  # noqa: BLE001 - a peer's import may raise anything; recorded, the sweep goes on
            report.libraries.append({"library": ad.library, "available": False,
                                     "note": f"adapter failed to load: {type(exc).__name__}: {exc}"})
            say(f"[crosscheck] {ad.library}: adapter failed to load: {exc}")
            continue
        report.libraries.append({"library": ad.library, "available": True, "version": note})
        loaded.append(ad)
        say(f"[crosscheck] {ad.library} {note}: {len(apis)} APIs x {len(cases)} cases")
        work += [(ad, api, case) for api in apis for case in cases]
    work = list(take_shard(work, shard))
    with open_executor(executor or ExecutorSpec()) as ex:
        if ex is None:
            found = map_ordered(lambda w: run_api(w[1], w[2], oracle, limits), work, None)
        else:
            items = [(ad, api.name, case, oracle.digits, oracle.max_seconds, limits) for ad, api, case in work]
            found = map_ordered(check_remote, items, ex, chunk_size=1)
        for (_, api, case), f in zip(work, found):
            if f is None:
                report.not_applicable += 1
                continue
            report.findings.append(f)
            if on_finding is not None:
                on_finding(report)
            extra = f" ({f.relative_gap})" if f.relative_gap and f.verdict != "sound" else ""
            extra += f" [{f.error}]" if f.error else ""
            say(f"[crosscheck]   {f.verdict:14s} {api.name} | {case.name}: reported {f.reported}, "
                f"optimum [{f.exact_lower}, {f.exact_upper}]{extra}")
    if curves:
        report.curves = run_curves(loaded, cases, digits=oracle.digits, max_seconds=oracle.budget, limits=limits,
                                   say=say, shard=shard)
    report.seconds = round(time.perf_counter() - start, 1)
    return report


COUNTED = ("sound", "loose", "unsound-fp", "unsound", "undecided", "lower-estimate", "error", "skipped", "unsupported")


def summary(report: Report) -> dict[str, Any]:
    """Counts of each verdict (each separately), findings that were not applicable, skipped libraries."""
    out: dict[str, Any] = {v: report.count(v) for v in COUNTED}
    out["not_applicable"] = report.not_applicable
    out["libraries_skipped"] = [lib["library"] for lib in report.libraries if not lib["available"]]
    out["checked"] = sum(out[v] for v in ("sound", "loose", "unsound-fp", "unsound"))
    out["rdp_curves"] = len(report.curves)
    out["rdp_orders_checked"] = sum(c.checked for c in report.curves)
    out["rdp_orders_unsound"] = sum(len(c.material) for c in report.curves)
    out["rdp_orders_unsound_fp"] = sum(len(c.unsound) - len(c.material) for c in report.curves)
    out["rdp_orders_undecided"] = sum(len(c.undecided) for c in report.curves)
    out["rdp_conversions_unsupported"] = sum(1 for c in report.curves
                                             if c.conversion and c.conversion.get("verdict") == "unsupported")
    return out


def to_json(report: Report, *, complete: bool = True) -> dict[str, Any]:
    """The JSON report: ``{"findings": [...], "libraries": [...], "summary": {...}, "rules": {...},
    "complete": ...}`` (``complete`` false in a report written while the run goes on)."""
    return {
        "findings": [f.to_json() for f in report.findings],
        "rdp_curves": [c.to_json() for c in report.curves],
        "libraries": report.libraries,
        "summary": summary(report),
        "rules": {"fp_ulps": FP_ULPS, "loose_relative": format_fraction(LOOSE_REL), "verdicts": list(VERDICTS),
                  "seconds": report.seconds},
        "complete": complete,
    }


RULES = (f"Verdicts (docs/peers/README.md): `sound` (>= the certified optimum), `loose` (sound and more than "
         f"{float(LOOSE_REL):.0%} above it), `unsound-fp` (below it by at most {FP_ULPS} ulps of the claimed float), "
         "`unsound` (below it by more: material, with the certified relative gap), `undecided` (inside the certified "
         "bracket and not settled within the budget: never counted as sound), `lower-estimate` (a documented "
         "under-estimate, not judged), `error` (the library raised), `skipped` (with why).")


def _short(s: str | None, n: int = 14) -> str:
    if s is None:
        return ""
    return s if len(s) <= n else s[:n] + "..."


def _by_api(report: Report) -> dict[tuple[str, str], list[Finding]]:
    keys: dict[tuple[str, str], list[Finding]] = {}
    for f in report.findings:
        keys.setdefault((f.library, f.api), []).append(f)
    return keys


def to_markdown(report: Report) -> str:
    """A Markdown summary: counts, per-API counts, then every unsound, undecided or error finding."""
    sm = summary(report)
    lines = ["# exactdp cross-check", "", RULES, "",
             "**Summary:** " + ", ".join(f"{sm[v]} {v}" for v in COUNTED)
             + f"; {sm['not_applicable']} not applicable; {report.seconds} s", ""]
    for lib in report.libraries:
        state = lib.get("version", "") if lib["available"] else "skipped: " + lib["note"]
        lines.append(f"- **{lib['library']}**: {state}")
    head = " | ".join(COUNTED)
    lines += ["", f"| library | api | {head} |", "|---|---|" + "---|" * len(COUNTED)]
    for (library, api), fs in _by_api(report).items():
        cells = " | ".join(str(sum(1 for f in fs if f.verdict == v)) for v in COUNTED)
        lines.append(f"| {library} | `{api}` | {cells} |")
    bad = [f for f in report.findings if f.verdict in ("unsound", "unsound-fp", "error", "undecided")]
    if bad:
        lines += ["", "## Unsound, error and undecided findings", "",
                  "| library | api | case | reported | optimum lower | optimum upper | verdict | relative gap |",
                  "|---|---|---|---|---|---|---|---|"]
        for f in bad:
            rep = f.reported if f.verdict != "error" else _short(f.error, 80)
            lines.append(f"| {f.library} | `{f.api}` | {f.case} | {rep} | {f.exact_lower or ''} | "
                         f"{f.exact_upper or ''} | {f.verdict} | {f.relative_gap or ''} |")
    return "\n".join(lines + curves_markdown(report)) + "\n"


CURVE_RULES = ("Each order of a library's RDP curve is judged against the certified Rényi divergence (docs/rdp.md): "
               "`unsound` below it, `unsound-fp` within 4 ulps below, `undecided` inside the certified enclosure or, "
               "at a fractional order of a subsampled Gaussian, above the certified lower bound (the divergence at "
               "floor(order)).  The library's own eps is judged apart against the certified conversion of its own "
               "curve (CKS20 Prop. 12 / Balle et al. 2020; Mironov 2017 Prop. 3 beside it): `supported` at or above "
               "it, `unsupported` below it.  `fault` says which step is wrong: the curve, the conversion, or none.")


def curves_markdown(report: Report) -> list[str]:
    """The RDP-curve section of the Markdown report: per library and case, then every unsound order."""
    if not report.curves:
        return []
    lines = ["", "## RDP curves", "", CURVE_RULES, "",
             ("| library | api | case | orders | decided | unsound | undecided | eps (own conversion) | "
             "certified conversion of its curve | conversion | fault |"),
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for c in report.curves:
        cv = c.conversion or {}
        conv = f"[{cv['lower']}, {cv['upper']}]" if "lower" in cv else ""
        lines.append(f"| {c.library} | `{c.api}` | {c.case} | {c.orders} | {c.checked} | {len(c.unsound)} | "
                     f"{len(c.undecided)} | {cv.get('reported_eps', '')} | {conv} | {cv.get('verdict', '')} | "
                     f"{c.fault if not c.error else 'error: ' + _short(c.error, 60)} |")
    bad = [(c, u) for c in report.curves for u in c.unsound]
    if bad:
        lines += ["", "### Unsound orders", "",
                  "| library | api | case | order | reported | certified lower | certified upper | verdict |",
                  "|---|---|---|---|---|---|---|---|"]
        for c, u in bad:
            lines.append(f"| {c.library} | `{c.api}` | {c.case} | {u['order']} | {u['reported']} | {u['lower']} | "
                         f"{u['upper']} | {u['verdict']} |")
    return lines


def _esc(x: Any) -> str:
    import html

    return html.escape("" if x is None else str(x))


_COLORS = {"sound": "#1a7f37", "loose": "#8250df", "unsound-fp": "#bf8700", "unsound": "#cf222e",
           "undecided": "#57606a", "lower-estimate": "#0969da", "error": "#953800", "skipped": "#8c959f",
           "unsupported": "#8c959f"}


def _figure(report: Report, library: str) -> str | None:
    """An inline SVG: per curve family, the certified bracket against the library's answers."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    import io

    fams: dict[str, list[Finding]] = {}
    for f in report.findings:
        if f.library == library and f.curve and f.query == "epsilon" and f.exact_lower and f.reported:
            fams.setdefault(f.curve, []).append(f)
    if not fams:
        return None
    n = len(fams)
    fig, axes = plt.subplots(1, n, figsize=(5.2 * n, 4.0), squeeze=False)
    for ax, (fam, fs) in zip(axes[0], sorted(fams.items())):
        brackets = {}
        for f in fs:
            x = float(Fraction(f.at))  # float ok: a plot coordinate
            assert f.exact_lower is not None  # fams holds only findings with an optimum
            if x > 0 and f.exact_upper is not None and f.exact_upper != "inf":
                brackets[x] = (float(Fraction(f.exact_lower)), float(Fraction(f.exact_upper)))  # float ok: plot
        if brackets:
            xs = sorted(brackets)
            ax.fill_between(xs, [brackets[x][0] for x in xs], [brackets[x][1] for x in xs], color="#999", alpha=0.35,
                            label="certified bracket")
            ax.plot(xs, [brackets[x][1] for x in xs], color="#333", lw=1)
        apis = sorted({f.api for f in fs})
        for i, api in enumerate(apis):
            pts = [(float(Fraction(f.at)), float(f.reported), f.verdict) for f in fs  # float ok: plot
                   if f.reported is not None and f.api == api and Fraction(f.at) > 0
                   and f.reported not in ("inf", "nan")]
            if not pts:
                continue
            pts.sort()
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", ms=3, lw=0.8, label=_short(api, 40))
            for x, y, vd in pts:
                if vd in ("unsound", "unsound-fp"):
                    ax.plot([x], [y], marker="x", ms=9, color=_COLORS[vd])
        ax.set_xscale("log")
        ax.set_xlabel("delta_g")
        ax.set_ylabel("eps")
        ax.set_title(fam, fontsize=9)
        ax.legend(fontsize=6)
    fig.tight_layout()
    buf = io.StringIO()
    fig.savefig(buf, format="svg")
    plt.close(fig)
    svg = buf.getvalue()
    return svg[svg.find("<svg"):]


def to_html(report: Report) -> str:
    """A self-contained HTML page: the summary, a figure per library, every finding."""
    sm = summary(report)
    parts = ["<!doctype html><html><head><meta charset='utf-8'><title>exactdp cross-check</title><style>",
             ("body{font-family:sans-serif;margin:1.5em;max-width:1400px}table{border-collapse:collapse;font-size:12px}"
              "td,th{border:1px solid #ccc;padding:2px 6px}th{background:#f6f8fa}.v{font-weight:bold}"),
             "</style></head><body><h1>exactdp cross-check</h1>", f"<p>{_esc(RULES)}</p>",
             "<p><b>Summary:</b> " + ", ".join(f"<span style='color:{_COLORS[v]}'>{sm[v]} {v}</span>" for v in COUNTED)
             + f"; {sm['not_applicable']} not applicable; {report.seconds} s</p><ul>"]
    for lib in report.libraries:
        state = lib.get("version", "") if lib["available"] else "skipped: " + lib["note"]
        parts.append(f"<li><b>{_esc(lib['library'])}</b>: {_esc(state)}</li>")
    parts.append("</ul>")
    for lib in report.libraries:
        if not lib["available"]:
            continue
        name = lib["library"]
        parts.append(f"<h2>{_esc(name)}</h2>")
        svg = _figure(report, name)
        if svg:
            parts.append(f"<figure>{svg}<figcaption>Certified bracket (grey) against {_esc(name)}'s answers; "
                         "a cross marks an unsound answer.</figcaption></figure>")
        else:
            parts.append("<p>(no figure: no curve case answered, or matplotlib is not installed)</p>")
        parts.append("<table><tr><th>api</th><th>case</th><th>reported</th><th>optimum lower</th>"
                     "<th>optimum upper</th><th>verdict</th><th>relative gap</th><th>note / error</th></tr>")
        for f in report.findings:
            if f.library != name:
                continue
            parts.append(f"<tr><td>{_esc(f.api)}</td><td>{_esc(f.case)}</td><td>{_esc(f.reported)}</td>"
                         f"<td>{_esc(f.exact_lower)}</td><td>{_esc(f.exact_upper)}</td>"
                         f"<td class='v' style='color:{_COLORS.get(f.verdict, '#000')}'>{_esc(f.verdict)}</td>"
                         f"<td>{_esc(f.relative_gap)}</td><td>{_esc(f.error or f.note)}</td></tr>")
        parts.append("</table>")
    parts += _curves_html(report)
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def _curves_html(report: Report) -> list[str]:
    if not report.curves:
        return []
    out = ["<h2>RDP curves</h2>", f"<p>{_esc(CURVE_RULES)}</p>",
           ("<table><tr><th>library</th><th>api</th><th>case</th><th>orders</th><th>decided</th><th>unsound orders "
           "(order: reported &lt; certified)</th><th>undecided</th><th>conversion</th><th>fault</th></tr>")]
    for c in report.curves:
        bad = "; ".join(f"{u['order']}: {u['reported']} < [{u['lower']}, {u['upper']}]" for u in c.unsound)
        cv = c.conversion or {}
        out.append(f"<tr><td>{_esc(c.library)}</td><td>{_esc(c.api)}</td><td>{_esc(c.case)}</td><td>{c.orders}</td>"
                   f"<td>{c.checked}</td><td>{_esc(bad)}</td><td>{len(c.undecided)}</td>"
                   f"<td>{_esc(cv.get('verdict', ''))}</td><td>{_esc(c.error or c.fault)}</td></tr>")
    out.append("</table>")
    return out


def write_text(text: str, path: str) -> None:
    """``text`` into the file ``path`` (``-``: standard output), atomically: a reader (or a run
    killed meanwhile) sees the old file or the new one, never half of one."""
    if path == "-":
        sys.stdout.write(text)
        return
    import os
    import tempfile

    fd, tmp = tempfile.mkstemp(prefix=".exactdp-", suffix=".tmp", dir=os.path.dirname(os.path.abspath(path)))
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def write_json(report: Report, path: str, *, complete: bool = True) -> None:
    write_text(json.dumps(to_json(report, complete=complete), indent=2, sort_keys=False) + "\n", path)
