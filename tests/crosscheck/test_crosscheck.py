"""The cross-check machinery, with fake adapters whose answers are known exactly.

The fake libraries answer with docs/mathematics.md §6 values (sound), the same values nudged
below by a known relative amount (unsound: fp-level or material), or raise (error).  One test
runs a real adapter when its library is importable.
"""

from __future__ import annotations

import importlib.util
import json
from fractions import Fraction

import pytest

from exactdp.crosscheck.adapters import ADAPTERS, Adapter, Api, NotApplicable, Reported
from exactdp.crosscheck.cases import Case, sweep
from exactdp.crosscheck.cli import main
from exactdp.crosscheck.report import run_crosscheck, to_json, to_markdown

F = Fraction
CASE_E = Case("ref-eps", ((F(1, 10), F(0), 30),), "epsilon", F(1, 1000))  # optimum 1.4811439805399072046...
CASE_D = Case("ref-delta", ((F(1, 10), F(1, 1000), 30),), "delta", F(1))  # optimum 0.039818410522130575...
CASE_HET = Case("ref-het", ((F(1), F(1, 10), 1), (F(2), F(2, 10), 1)), "delta", F(3))  # exactly 0.28
OPT_E = F("1.4811439805399072046")


def _fake(name: str, answer) -> Adapter:  # noqa: ANN001
    def build() -> list[Api]:
        def run(case: Case) -> Reported:
            return Reported(answer(case), case.composition(), case.at, "fake")

        return [Api(name, "fake.api", run)]

    return Adapter(name, "json", build)  # 'json' is always importable


def _answers(case: Case):  # noqa: ANN001, ANN202
    if case.name == "ref-eps":
        return 1.5  # sound
    if case.name == "ref-delta":
        return 0.0398  # unsound, material: 4.6e-4 below
    if case.name == "ref-het":
        return F(28, 100) * (1 - F(1, 10**12))  # unsound, fp-level
    raise NotApplicable


def test_verdicts_of_a_fake_library() -> None:
    rep = run_crosscheck([_fake("fakelib", _answers)], [CASE_E, CASE_D, CASE_HET], progress=None)
    by = {f.case: f for f in rep.findings}
    assert by["ref-eps"].verdict == "sound"
    assert F(by["ref-eps"].exact_lower) <= OPT_E + F(1, 10**18) and F(by["ref-eps"].exact_upper) >= OPT_E - F(1, 10**18)
    d = by["ref-delta"]
    assert d.verdict == "unsound" and d.severity == "material"
    assert abs(float(d.relative_shortfall) - (1 - 0.0398 / 0.039818410522130575)) < 1e-6
    h = by["ref-het"]
    assert h.verdict == "unsound" and h.severity == "fp-level" and float(h.relative_shortfall) < 1e-9
    assert h.exact_lower == h.exact_upper == "0.28"


def test_errors_do_not_stop_the_sweep_and_missing_libraries_are_skipped() -> None:
    def boom(case: Case):  # noqa: ANN202
        if case.name == "ref-eps":
            raise OverflowError("math range error")
        return _answers(case)

    missing = Adapter("nolib", "exactdp_no_such_module_xyz", lambda: [])
    rep = run_crosscheck([missing, _fake("boomlib", boom)], [CASE_E, CASE_D], progress=None)
    assert rep.libraries[0] == {"library": "nolib", "available": False, "note": rep.libraries[0]["note"]}
    assert "not installed" in rep.libraries[0]["note"]
    verdicts = [(f.case, f.verdict) for f in rep.findings]
    assert verdicts == [("ref-eps", "error"), ("ref-delta", "unsound")]
    assert "OverflowError" in rep.findings[0].error


def test_nan_answer_is_an_error_and_none_is_no_claim() -> None:
    rep = run_crosscheck([_fake("nanlib", lambda c: float("nan"))], [CASE_E], progress=None)
    assert rep.findings[0].verdict == "error"
    rep = run_crosscheck([_fake("nonelib", lambda c: None)], [CASE_E], progress=None)
    assert rep.findings[0].verdict == "sound"  # None = "no eps": claims nothing


def test_json_and_markdown_reports() -> None:
    rep = run_crosscheck([_fake("fakelib", _answers)], [CASE_E, CASE_D, CASE_HET], progress=None)
    obj = json.loads(json.dumps(to_json(rep)))
    keys = {"library", "api", "case", "query", "reported", "exact_lower", "exact_upper", "verdict"}
    assert all(keys <= set(f) for f in obj["findings"])
    assert obj["summary"]["unsound"] == 2 and obj["summary"]["sound"] == 1
    md = to_markdown(rep)
    assert "| fakelib | `fake.api` | 1 | 1 | 1 | 0 |" in md and "ref-delta" in md


def test_sweep_covers_the_extreme_regimes() -> None:
    full, quick = sweep(), sweep(quick=True)
    assert set(quick) < set(full)
    tags = {t for c in full for t in c.tags}
    assert {"large-k-eps", "tiny-delta", "heterogeneous", "repeated", "infeasible"} <= tags
    assert any(c.k >= 1000 for c in full) and any(c.at <= F(1, 10**10) for c in full if c.query == "epsilon")


def test_cli_runs_and_writes_reports(tmp_path, capsys) -> None:  # noqa: ANN001
    assert main(["no_such_library"]) == 2
    assert main(["--list", "dp_accounting"]) == 0
    # a library that is not installed here still lets the run succeed (exit 0, skipped with a note)
    ADAPTERS["zz_fake_missing"] = Adapter("zz_fake_missing", "exactdp_no_such_module_xyz", lambda: [])
    try:
        js, md = tmp_path / "r.json", tmp_path / "r.md"
        assert main(["zz_fake_missing", "--quick", "--json", str(js), "--markdown", str(md)]) == 0
        obj = json.loads(js.read_text())
        assert obj["findings"] == [] and obj["libraries"][0]["available"] is False
        assert "zz_fake_missing" in md.read_text()
    finally:
        del ADAPTERS["zz_fake_missing"]


@pytest.mark.peers
@pytest.mark.skipif(importlib.util.find_spec("dp_accounting") is None, reason="dp_accounting not installed")
def test_real_dp_accounting_adapter() -> None:
    """dp_accounting's RandomizedResponseDpEvent self-composition (0.6.0 ignores the count) and
    its PLD from privacy parameters, on the docs/mathematics.md anchor 30 x (0.1, 0) at delta_g = 1e-3."""
    rep = run_crosscheck([ADAPTERS["dp_accounting"]], [CASE_E], progress=None)
    by = {f.api: f for f in rep.findings}
    rdp = by["RdpAccountant(RandomizedResponseDpEvent)"]
    assert rdp.verdict == "sound" and float(rdp.reported) > float(OPT_E)  # RDP is loose, never below
    pld = by["pld.from_privacy_parameters+compose"]
    assert pld.verdict in ("sound", "unsound") and abs(float(pld.reported) - float(OPT_E)) < 1e-6
    if pld.verdict == "unsound":
        assert pld.severity == "fp-level"
    selfc = by["PLDAccountant(SelfComposedDpEvent(RandomizedResponseDpEvent))"]
    assert selfc.verdict in ("sound", "unsound")
    if float(selfc.reported) < 0.5:  # the count is dropped: the answer of ONE mechanism
        assert selfc.verdict == "unsound" and selfc.severity == "material"
