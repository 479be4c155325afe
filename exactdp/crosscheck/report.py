"""Run the sweep through the adapters, judge every answer exactly, write JSON and Markdown.

Each finding gets a verdict: ``sound`` (the library's claim is >= the certified optimum),
``unsound`` (below it; ``relative_shortfall`` says how far, and ``severity`` tells a
floating-point-level slip, < 1e-9 relative, from a ``material`` error), or ``error`` (the
library raised).  The optimum is KOV15 Thm 3.3 / Murtagh-Vadhan Thm 1.5, decided exactly by
:mod:`exactdp.testing.oracle`.
"""

from __future__ import annotations

import json
import sys
import time
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, TextIO

from ..composition import Composition
from ..numbers import INF, Enclosure, ExactReal, format_fraction
from ..testing.oracle import FP_LEVEL, Oracle, judge_delta, judge_epsilon
from .adapters import Adapter, NotApplicable
from .cases import Case

__all__ = ["Finding", "Report", "CachedOracle", "run_crosscheck", "to_json", "to_markdown"]


@dataclass
class Finding:
    """One library answer and its exact verdict (the keys of the JSON report)."""

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
    relative_shortfall: str | None = None
    severity: str | None = None
    note: str = ""
    error: str | None = None
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class Report:
    """All findings, and which libraries ran (with their versions) or were skipped (why)."""

    findings: list[Finding] = field(default_factory=list)
    libraries: list[dict[str, Any]] = field(default_factory=list)
    not_applicable: int = 0

    def count(self, verdict: str, library: str | None = None) -> int:
        return sum(1 for f in self.findings if f.verdict == verdict and (library is None or f.library == library))


class CachedOracle(Oracle):
    """An :class:`Oracle` that remembers enclosures (several APIs ask about the same input)."""

    def __init__(self, digits: int = 20, base: Oracle | None = None) -> None:
        super().__init__(digits=digits)
        self._base = base or Oracle(digits=digits)
        self._cache: dict[tuple[Any, ...], Any] = {}

    def _memo(self, key: tuple[Any, ...], fn: Any) -> Any:
        if key not in self._cache:
            self._cache[key] = fn()
        return self._cache[key]

    def epsilon(self, composition: Any, delta_g: Any, *, digits: int | None = None) -> Enclosure:
        return self._memo(("e", composition, delta_g, digits),
                          lambda: self._base.epsilon(composition, delta_g, digits=digits or self.digits))

    def delta(self, composition: Any, eps_g: Any, *, digits: int | None = None) -> Enclosure:
        return self._memo(("d", composition, eps_g, digits),
                          lambda: self._base.delta(composition, eps_g, digits=digits or self.digits))

    def is_private(self, composition: Any, eps_g: Any, delta_g: Any) -> bool:
        return self._memo(("p", composition, eps_g, delta_g),
                          lambda: self._base.is_private(composition, eps_g, delta_g))


def _reported_str(x: Any) -> str | None:
    if x is None:
        return None
    if isinstance(x, Fraction):
        return format_fraction(x)
    try:
        return repr(float(x))  # float ok: the library's own float, printed round-trip exactly
    except (TypeError, ValueError):
        return str(x)


def _judge(case: Case, value: Any, comp: Composition, at: Fraction, oracle: Oracle) -> Any:
    if value is None:  # a library's None means "no eps" (e.g. advanced_composition): it claims nothing
        value = INF
    if case.query == "epsilon":
        return judge_epsilon(value, comp, at, oracle=oracle)
    return judge_delta(value, comp, ExactReal.rational(at), oracle=oracle)


def run_api(api: Any, case: Case, oracle: Oracle) -> Finding | None:
    """Ask one API one case and judge the answer; None when the API cannot express the case."""
    t0 = time.perf_counter()
    base = dict(library=api.library, api=api.name, case=case.name, query=case.query,
                at=format_fraction(case.at), inputs=case.composition().to_inputs())
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # peers' RuntimeWarnings would drown the progress lines
            rep = api.run(case)
    except NotApplicable:
        return None
    except Exception as exc:  # the library raised: an `error` finding, the sweep goes on
        return Finding(**base, reported=None, exact_lower=None, exact_upper=None, verdict="error",
                       error=f"{type(exc).__name__}: {exc}"[:500], seconds=round(time.perf_counter() - t0, 3))
    secs = time.perf_counter() - t0
    base["inputs"] = rep.composition.to_inputs()
    base["at"] = format_fraction(rep.at)
    try:
        v = _judge(case, rep.value, rep.composition, rep.at, oracle)
    except ValueError as exc:  # NaN and the like: the library's answer is not a number
        return Finding(**base, reported=_reported_str(rep.value), exact_lower=None, exact_upper=None,
                       verdict="error", error=f"reported value is not a number: {exc}", note=rep.note,
                       seconds=round(secs, 3))
    except Exception as exc:  # the oracle could not answer this input: say so, do not guess
        return Finding(**base, reported=_reported_str(rep.value), exact_lower=None, exact_upper=None,
                       verdict="skipped", note=f"oracle: {type(exc).__name__}: {exc}"[:300], seconds=round(secs, 3))
    rel = sev = None
    if not v.sound:
        if v.relative_shortfall is None:
            sev = "material"
            rel = "inf" if v.optimum.is_infinite else None
        else:
            rel = f"{float(v.relative_shortfall):.3e}"  # float ok: display of a certified bound
            sev = "fp-level" if v.relative_shortfall < FP_LEVEL else "material"
    return Finding(**base, reported=_reported_str(rep.value), exact_lower=v.optimum.lower_str(),
                   exact_upper=v.optimum.upper_str(), verdict=v.label, relative_shortfall=rel, severity=sev,
                   note=rep.note, seconds=round(secs, 3))


def run_crosscheck(adapters: Iterable[Adapter], cases: Sequence[Case], *, oracle: Oracle | None = None,
                   progress: TextIO | None = sys.stderr) -> Report:
    """Run every case through every API of every available adapter; judge each answer exactly."""
    oracle = oracle or CachedOracle()
    report = Report()

    def say(msg: str) -> None:
        if progress is not None:
            print(msg, file=progress, flush=True)

    for ad in adapters:
        ok, note = ad.available()
        if not ok:
            report.libraries.append({"library": ad.library, "available": False, "note": note})
            say(f"[crosscheck] {ad.library}: skipped, {note}")
            continue
        try:
            apis = ad.apis()
        except Exception as exc:
            report.libraries.append({"library": ad.library, "available": False,
                                     "note": f"adapter failed to load: {type(exc).__name__}: {exc}"})
            say(f"[crosscheck] {ad.library}: adapter failed to load: {exc}")
            continue
        report.libraries.append({"library": ad.library, "available": True, "version": note})
        say(f"[crosscheck] {ad.library} {note}: {len(apis)} APIs x {len(cases)} cases")
        for api in apis:
            for case in cases:
                f = run_api(api, case, oracle)
                if f is None:
                    report.not_applicable += 1
                    continue
                report.findings.append(f)
                extra = f" ({f.severity}, {f.relative_shortfall} below)" if f.verdict == "unsound" else ""
                extra += f" [{f.error}]" if f.error else ""
                say(f"[crosscheck]   {f.verdict:8s} {api.name} | {case.name}: reported {f.reported}, "
                    f"optimum [{f.exact_lower}, {f.exact_upper}]{extra}")
    return report


def to_json(report: Report) -> dict[str, Any]:
    """The JSON report: ``{"findings": [...], "libraries": [...], "summary": {...}}``."""
    return {
        "findings": [f.to_json() for f in report.findings],
        "libraries": report.libraries,
        "summary": {v: report.count(v) for v in ("sound", "unsound", "error", "skipped")}
        | {"not_applicable": report.not_applicable},
    }


def _short(s: str | None, n: int = 14) -> str:
    if s is None:
        return ""
    return s if len(s) <= n else s[:n] + "..."


def to_markdown(report: Report) -> str:
    """A Markdown summary: per-API counts, then every unsound or error finding."""
    lines = ["# exactdp cross-check", "",
             "Each peer answer is judged against the certified optimum (KOV15 Thm 3.3 / Murtagh-Vadhan Thm 1.5). "
             "`unsound`: the claimed eps (or delta) is below the optimum; `fp-level` means less than 1e-9 relative.", ""]
    for lib in report.libraries:
        state = lib.get("version", "") if lib["available"] else "skipped: " + lib["note"]
        lines.append(f"- **{lib['library']}**: {state}")
    lines += ["", "| library | api | sound | unsound (material) | unsound (fp-level) | error |", "|---|---|---|---|---|---|"]
    keys: dict[tuple[str, str], list[Finding]] = {}
    for f in report.findings:
        keys.setdefault((f.library, f.api), []).append(f)
    for (lib, api), fs in keys.items():
        n = lambda pred: sum(1 for f in fs if pred(f))  # noqa: E731
        lines.append(f"| {lib} | `{api}` | {n(lambda f: f.verdict == 'sound')} | "
                     f"{n(lambda f: f.verdict == 'unsound' and f.severity == 'material')} | "
                     f"{n(lambda f: f.verdict == 'unsound' and f.severity == 'fp-level')} | "
                     f"{n(lambda f: f.verdict == 'error')} |")
    bad = [f for f in report.findings if f.verdict in ("unsound", "error")]
    if bad:
        lines += ["", "## Unsound and error findings", "",
                  "| library | api | case | reported | optimum lower | optimum upper | verdict | below optimum |",
                  "|---|---|---|---|---|---|---|---|"]
        for f in bad:
            verdict = f.verdict + (f" ({f.severity})" if f.severity else "")
            rep = f.reported if f.verdict != "error" else _short(f.error, 60)
            lines.append(f"| {f.library} | `{f.api}` | {f.case} | {rep} | {f.exact_lower or ''} | "
                         f"{f.exact_upper or ''} | {verdict} | {f.relative_shortfall or ''} |")
    return "\n".join(lines) + "\n"


def write_json(report: Report, path: str) -> None:
    text = json.dumps(to_json(report), indent=2, sort_keys=False) + "\n"
    if path == "-":
        sys.stdout.write(text)
    else:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
