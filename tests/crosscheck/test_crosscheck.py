"""The cross-check machinery, with fake adapters whose answers are known exactly.

The fake libraries answer with docs/mathematics.md §6 values (sound), the same values nudged
below by a known relative amount (unsound: fp-level or material), or raise (error).  One test
runs a real adapter when its library is importable.
"""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

from exactdp.crosscheck.adapters import ADAPTERS, Adapter, Api, NotApplicable, Reported
from exactdp.crosscheck.cases import Case, sweep
from exactdp.cli.crosscheck import main
from exactdp.crosscheck.report import run_crosscheck, to_html, to_json, to_markdown

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


def _answers(case: Case):  # noqa: ANN202
    if case.name == "ref-eps":
        return 1.49  # sound (0.6 % above)
    if case.name == "ref-delta":
        return 0.0398  # unsound, material: 4.6e-4 below
    if case.name == "ref-het":
        return F(28, 100) * (1 - F(1, 10**12))  # unsound: 1e-12 relative is thousands of ulps
    raise NotApplicable


def test_verdicts_of_a_fake_library() -> None:
    rep = run_crosscheck([_fake("fakelib", _answers)], [CASE_E, CASE_D, CASE_HET], progress=None)
    by = {f.case: f for f in rep.findings}
    assert by["ref-eps"].verdict == "sound"
    assert F(by["ref-eps"].exact_lower) <= OPT_E + F(1, 10**18) and F(by["ref-eps"].exact_upper) >= OPT_E - F(1, 10**18)
    d = by["ref-delta"]
    assert d.verdict == "unsound"
    assert abs(float(d.relative_gap) - (1 - 0.0398 / 0.039818410522130575)) < 1e-3
    h = by["ref-het"]
    assert h.verdict == "unsound" and float(h.relative_gap) < 1e-9
    assert h.exact_lower == h.exact_upper == "0.28"
    assert rep.unsound


def test_fp_loose_and_lower_verdicts() -> None:
    """Within 4 ulps below: unsound-fp; > 1 % above: loose; a lower estimate is never unsound."""
    def ans(case: Case):  # noqa: ANN202
        return {"fp": 1.481143980539907, "loose": 1.6, "low": 1.2}[case.name]

    cases = [Case(n, CASE_E.groups, "epsilon", CASE_E.at) for n in ("fp", "loose", "low")]

    def build() -> list[Api]:
        def run(case: Case) -> Reported:
            return Reported(ans(case), case.composition(), case.at, "fake", "lower" if case.name == "low" else "upper")
        return [Api("fk", "fake.api", run)]

    rep = run_crosscheck([Adapter("fk", "json", build)], cases, progress=None)
    by = {f.case: f.verdict for f in rep.findings}
    assert by == {"fp": "unsound-fp", "loose": "loose", "low": "lower-estimate"}
    assert not rep.unsound  # unsound-fp does not gate


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


def test_json_markdown_and_html_reports() -> None:
    rep = run_crosscheck([_fake("fakelib", _answers)], [CASE_E, CASE_D, CASE_HET], progress=None)
    obj = json.loads(json.dumps(to_json(rep)))
    keys = {"library", "api", "case", "query", "reported", "exact_lower", "exact_upper", "verdict", "relative_gap"}
    assert all(keys <= set(f) for f in obj["findings"])
    assert obj["summary"]["unsound"] == 2 and obj["summary"]["sound"] == 1 and obj["summary"]["undecided"] == 0
    assert obj["rules"]["fp_ulps"] == 4
    md = to_markdown(rep)
    assert "| fakelib | `fake.api` | 1 | 0 | 0 | 2 | 0 | 0 | 0 | 0 |" in md and "ref-delta" in md
    page = to_html(rep)
    assert page.startswith("<!doctype html>") and "fakelib" in page and "unsound" in page


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
        assert obj["summary"]["libraries_skipped"] == ["zz_fake_missing"]
        assert "zz_fake_missing" in md.read_text()
    finally:
        del ADAPTERS["zz_fake_missing"]
    # exit 1 when anything is unsound (a fake library that halves every eps), 2 on an unwritable path
    def halves(case: Case):  # noqa: ANN202
        if case.query != "epsilon" or not case.is_generic or case.at == 0:
            raise NotApplicable
        from exactdp import optimal_epsilon

        e = optimal_epsilon(case.composition(), case.at, digits=5)
        return None if e.is_infinite else float(e.lower) / 2

    ADAPTERS["zz_fake_halves"] = _fake("zz_fake_halves", halves)
    try:
        assert main(["zz_fake_halves", "--quick", "--html", str(tmp_path / "r.html")]) == 1
        assert "<svg" in (tmp_path / "r.html").read_text() or "no figure" in (tmp_path / "r.html").read_text()
        assert main(["zz_fake_halves", "--quick", "--html", str(tmp_path / "no" / "such" / "r.html")]) == 2
        assert "exactdp crosscheck: error:" in capsys.readouterr().err
    finally:
        del ADAPTERS["zz_fake_halves"]


def _one(library: str, api: str, case: Case, seconds: float = 3.0):  # noqa: ANN202
    """One real API on one case, judged as ``exactdp crosscheck`` does."""
    from exactdp.crosscheck.report import CachedOracle, run_api

    ad = ADAPTERS[library]
    if not ad.available()[0]:
        pytest.skip(f"{library} is not installed")
    (a,) = [x for x in ad.apis() if x.name == api]
    f = run_api(a, case, CachedOracle(20, max_seconds=seconds))
    assert f is not None, f"{api} does not apply to {case.name}"
    return f


def _case(name: str):  # noqa: ANN202
    (c,) = [c for c in sweep() if c.name == name]
    return c


# The peers' real bugs (issue 13): each must be `unsound` or `error` from the cross-check alone.
REAL_BUGS = [
    ("autodp", "dp_acct.DP_acct.get_eps(ints)", "30x(0.1,0)@dg=0", "unsound"),
    ("autodp", "ComposeAFA(RandresponseMechanism(phi_off=False)).get_approxDP", "30x(0.1,0)@dg=0.001", "unsound"),
    ("autodp", "ComposeAFA(Gaussian/LaplaceMechanism(phi_off=False)).get_approxDP",
     "100xGaussian(sigma=2)@dg=1e-5", "unsound"),
    ("dp_accounting", "pld.from_privacy_parameters+compose(tail_mass_truncation=0)", "100x(0.5,0)@dg=1e-15",
     "unsound"),
    ("dp_accounting", "pld.from_privacy_parameters+compose", "1000x(0.01,0)@dg=1e-9", "unsound"),
    ("dp_accounting", "pld.accountant.advanced_composition", "2000x(0.1,0)@dg=1e-6", "error"),
    ("dp_accounting", "PLDAccountant(SelfComposedDpEvent(RandomizedResponseDpEvent))", "30x(0.1,0)@dg=0.001",
     "unsound"),
    ("prv_accountant", "PRVAccountant(Gaussian/Laplace/PoissonSubsampledGaussianMechanism).upper",
     "dpsgd(sigma=0.8,q=0.125,steps=1000)@dg=1e-6", "error"),
    ("prv_accountant", "PRVAccountant(Pure/ApproximateDPMechanism).upper", "100x(1,0)@dg=1e-10", "unsound"),
    ("opacus", "GaussianAccountant.get_epsilon", "dpsgd(sigma=1,q=0.01,steps=1000)@dg=1e-5", "unsound"),
    ("opacus", "get_noise_multiplier(accountant='gdp')", "calib(sigma=1,q=0.01,steps=1000)@dg=1e-5,target=1",
     "unsound"),
]

# Configurations where the peers are sound: no false alarm (sound or loose; RDP is loose by design).
SOUND = [
    ("dp_accounting", "RdpAccountant(Gaussian/Laplace/PoissonSampled events)",
     "dpsgd(sigma=1,q=0.01,steps=1000)@dg=1e-5"),
    ("dp_accounting", "PLDAccountant(Gaussian/Laplace/PoissonSampled events)", "100xGaussian(sigma=2)@dg=1e-5"),
    ("dp_accounting", "pld.accountant.advanced_composition", "100x(0.5,0)@dg=1e-15"),
    ("opendp", "make_zCDP_to_approxDP(make_composition(make_gaussian/make_laplace)) profile",
     "100xGaussian(sigma=2)@dg=1e-5"),
    ("opendp", "make_fix_delta(make_zCDP_to_approxDP(...)) (eps, delta) pair", "100xLaplace(b=10)@dg=1e-6"),
    ("autodp", "Composition(Gaussian/Laplace/SubsampleGaussianMechanism).get_approxDP",
     "dpsgd(sigma=1,q=0.01,steps=1000)@dg=1e-5"),
    ("prv_accountant", "PRVAccountant(Gaussian/Laplace/PoissonSubsampledGaussianMechanism).upper",
     "100xGaussian(sigma=2)@dg=1e-5"),
    ("opacus", "RDPAccountant.get_epsilon", "dpsgd(sigma=1,q=0.01,steps=1000)@dg=1e-5"),
    ("opacus", "get_noise_multiplier(accountant='rdp')", "calib(sigma=1,q=0.01,steps=1000)@dg=1e-5,target=1"),
]


def _mark(lib: str) -> list:  # noqa: ANN202
    return [pytest.mark.opacus] if lib == "opacus" else [pytest.mark.peers]


@pytest.mark.parametrize("lib, api, case, verdict",
                         [pytest.param(*b, marks=_mark(b[0]), id=f"{b[0]}:{b[2]}") for b in REAL_BUGS])
def test_real_peer_bugs_are_flagged(lib: str, api: str, case: str, verdict: str) -> None:
    f = _one(lib, api, _case(case))
    assert f.verdict == verdict, (f.verdict, f.reported, f.exact_lower, f.exact_upper, f.error)


@pytest.mark.parametrize("lib, api, case",
                         [pytest.param(*b, marks=_mark(b[0]), id=f"{b[0]}:{b[2]}") for b in SOUND])
def test_sound_peer_configurations_are_not_flagged(lib: str, api: str, case: str) -> None:
    f = _one(lib, api, _case(case))
    assert f.verdict in ("sound", "loose"), (f.verdict, f.reported, f.exact_lower, f.exact_upper, f.error)


@pytest.mark.peers
def test_an_optimistic_estimate_is_labelled_not_judged() -> None:
    f = _one("dp_accounting", "pld.from_gaussian/laplace_mechanism(pessimistic_estimate=False) [lower estimate]",
             _case("100xGaussian(sigma=2)@dg=1e-5"))
    assert f.verdict == "lower-estimate"


def test_tf_privacy_is_skipped_with_the_reason() -> None:
    ok, note = ADAPTERS["tf_privacy"].available()
    if not ok:
        assert "not a dependency" in note


def test_no_peer_library_is_imported_until_its_adapter_runs() -> None:
    import subprocess
    import sys

    code = ("import sys, exactdp.crosscheck.report, exactdp.crosscheck.adapters as a; "
            "from exactdp.crosscheck.adapters import Adapter, NotApplicable, Skipped, adapter_names, get_adapter; "
            "peers = {'dp_accounting', 'prv_accountant', 'autodp', 'opendp', 'opacus', 'tensorflow_privacy', "
            "'torch', 'tensorflow', 'jax_privacy', 'jax', 'optax'}; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in peers), adapter_names())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == ("[] ['dp_accounting', 'prv_accountant', 'autodp', 'opendp', 'opacus', 'tf_privacy', "
                           "'jax_privacy']")
