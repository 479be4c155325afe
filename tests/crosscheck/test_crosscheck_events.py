"""The cross-check of the new events and relations (issue 27 §6), with fake peers whose answers are
known, independent references (mpmath closed forms), and one or two smoke tests per real peer
(skipped where it is not installed).

The references: the Gaussian's privacy profile in closed form (Balle and Wang 2018, Thm 8),
delta(eps) = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu) with mu = sensitivity * sqrt(k) / sigma,
solved for eps by mpmath at 40 digits; and the total variation of a fixed-size batch of one
Gaussian, g (2 Phi(1/(2 sigma)) - 1), g = m/n, which is its delta at eps = 0.
"""

from __future__ import annotations

import importlib.util
import sys
import types
from fractions import Fraction

import mpmath
import pytest

from exactdp.crosscheck.adapters import Adapter, Api, NotApplicable, Reported, Unsupported, get_adapter
from exactdp.crosscheck.adapters.given import parts_of
from exactdp.crosscheck.cases import DELTA_SWEEP, SWEEP, Case, NoPeerForm, is_tight, mechanism_parts, sweep
from exactdp.crosscheck.report import run_crosscheck, summary, to_markdown
from exactdp.model.mechanisms import (
    DiscreteGaussian,
    Gaussian,
    PoissonSampled,
    SampledWithoutReplacement,
)

F = Fraction


def _gauss_eps(mu: mpmath.mpf, delta: mpmath.mpf) -> mpmath.mpf:
    """eps of a Gaussian of mu = sensitivity/sigma at delta, closed form (mpmath, 40 digits)."""
    with mpmath.workdps(40):
        def d(e: mpmath.mpf) -> mpmath.mpf:
            return mpmath.ncdf(mu / 2 - e / mu) - mpmath.exp(e) * mpmath.ncdf(-mu / 2 - e / mu) - delta
        if d(0) <= 0:
            return mpmath.mpf(0)
        return mpmath.findroot(d, (mpmath.mpf(0), mu * mu / 2 + 10 * mu), solver="bisect")


def _fake(name: str, answer) -> Adapter:  # noqa: ANN001
    def build() -> list[Api]:
        def run(case: Case) -> Reported:
            return Reported(answer(case), case.composition(), case.at, "fake")
        return [Api(name, "fake.api", run)]
    return Adapter(name, "json", build)  # 'json' is always importable


def _case(name: str, m, k: int, at: str, relation: str = "add-remove") -> Case:  # noqa: ANN001
    return Case(name, (), "epsilon", F(at), ("events", relation), False, ((m, k),), relation=relation)


def test_the_sweep_covers_every_new_event_from_tiny_to_large_delta() -> None:
    events = [c for c in SWEEP if "events" in c.tags]
    kinds = {type(m).__name__ for c in events for m, _ in c.mechanisms}
    assert {"DiscreteLaplace", "DiscreteGaussian", "MixtureOfGaussians", "PoissonSampled",
            "SampledWithoutReplacement", "Gaussian"} <= kinds
    assert F(DELTA_SWEEP[0]) == F(1, 10**30) and F(DELTA_SWEEP[-1]) == F(1, 2)
    for label in {c.name.split("@")[0] for c in events}:  # every event case at every delta_g of the sweep
        assert {c.at for c in events if c.name.split("@")[0] == label} == {F(d) for d in DELTA_SWEEP}
    assert {c.relation for c in events} == {"add-remove", "replace-one", "replace-special"}
    assert any(c.relation == "replace-one" and isinstance(c.mechanisms[0][0], PoissonSampled) for c in events)
    quick = sweep(quick=True)
    assert any("events" in c.tags for c in quick) and any(c.at == F(1, 2) for c in quick if c.tags[0] != "events")
    targets = {c.target for c in SWEEP if c.is_calibration and c.at == F(1, 10**5)}
    assert {F(1), F(3), F(8)} <= targets


def test_classic_peer_forms_refuse_the_new_events() -> None:
    """The classic forms (Gaussian or Laplace, Poisson under add/remove) never take a replace-one
    sample as if it were add/remove (it was taken as the add/remove subsampled Gaussian before)."""
    ro = _case("ro", PoissonSampled(Gaussian(1), F(1, 100), relation="replace-one"), 10, "1e-5", "replace-one")
    with pytest.raises(NoPeerForm):
        mechanism_parts(ro)
    with pytest.raises(NotApplicable):  # a classic API declines an events case
        parts_of(ro)
    with pytest.raises(Unsupported):  # the library's event API says it is unsupported
        parts_of(ro, events=True)
    with pytest.raises(Unsupported):
        parts_of(_case("dg", DiscreteGaussian(2), 10, "1e-5"), events=True)
    with pytest.raises(Unsupported):  # a plain Gaussian, but under replace-one
        parts_of(_case("g", Gaussian(2, 1), 10, "1e-5", "replace-one"), events=True)
    assert [p.kind for p in parts_of(_case("g", Gaussian(2), 10, "1e-5"), events=True)] == ["gaussian"]


def test_unsupported_is_a_finding_and_never_a_crash() -> None:
    def refuse(case: Case):  # noqa: ANN202
        raise Unsupported("no DiscreteGaussianDpEvent")

    case = _case("dg", DiscreteGaussian(2), 10, "1e-5")
    rep = run_crosscheck([_fake("fk", refuse)], [case], progress=None, curves=False)
    (f,) = rep.findings
    assert f.verdict == "unsupported" and "DiscreteGaussianDpEvent" in f.note and f.reported is None
    sm = summary(rep)
    assert sm["unsupported"] == 1 and sm["checked"] == 0 and not rep.unsound
    assert "unsupported" in to_markdown(rep)


def test_zero_or_negative_eps_at_large_delta_is_unsound() -> None:
    """At delta_g = 0.5 the optimum of 4 x Gaussian(sigma=1) is > 0 (closed form): an answer of 0 or
    below is unsound and says so; one just above the closed form is sound."""
    ref = _gauss_eps(mpmath.sqrt(4) / 1, mpmath.mpf("0.5"))  # mu = sqrt(k)/sigma = 2
    assert ref > 0.2
    above = float(mpmath.nstr(ref * (1 + mpmath.mpf("1e-9")), 17))
    answers = {"zero": 0.0, "neg": -0.25, "ok": above}
    cases = [Case(n, (), "epsilon", F(1, 2), ("gaussian",), False, ((Gaussian(1), 4),)) for n in answers]
    rep = run_crosscheck([_fake("fk", lambda c: answers[c.name])], cases, progress=None, curves=False)
    by = {f.case: f for f in rep.findings}
    assert by["zero"].verdict == "unsound" and "eps <= 0" in by["zero"].note
    assert by["neg"].verdict == "unsound" and "eps <= 0" in by["neg"].note
    assert by["ok"].verdict == "sound"
    lo, hi = F(by["ok"].exact_lower), F(by["ok"].exact_upper)
    assert abs(float(lo) - float(ref)) < 1e-12 and abs(float(hi) - float(ref)) < 1e-12


@pytest.mark.slow  # about 33 s: in the slow step (CI time)
def test_k_fixed_batches_are_judged_against_both_ends() -> None:
    """One fixed-size batch is tight (Thm 9.3): 0 at delta_g = 1e-5 is unsound, since its delta at
    eps = 0 is its total variation g (2 Phi(1/(2 sigma)) - 1) > 1e-5.  For k > 1 batches the optimum lies
    between the pair one dataset pair attains and the symmetrised pair (Thm 9.7): 0 is below the attained
    end (two runs are at least one), so unsound; an answer between the ends is undecided and says why."""
    from exactdp.api.optimal import optimal_epsilon
    from exactdp.model.attained import attained

    g = mpmath.mpf(60) / 6000
    assert g * (2 * mpmath.ncdf(mpmath.mpf(1) / 2) - 1) > mpmath.mpf("1e-5")
    one = _case("one", SampledWithoutReplacement(Gaussian(1), 60, 6000), 1, "1e-5", "replace-one")
    two = _case("two", SampledWithoutReplacement(Gaussian(1), 60, 6000), 2, "1e-5", "replace-one")
    mid = _case("mid", SampledWithoutReplacement(Gaussian(1), 60, 6000), 2, "1e-5", "replace-one")
    assert is_tight(one.composition()) and not is_tight(two.composition())
    low = optimal_epsilon(attained(two.composition()), "1e-5", digits=6)  # type: ignore[arg-type]
    sym = optimal_epsilon(two.composition(), "1e-5", digits=6)
    assert low.upper < sym.upper
    between = float((low.upper + sym.upper) / 2)  # float ok: the fake peer's answer
    rep = run_crosscheck([_fake("fk", lambda c: between if c.name == "mid" else 0.0)], [one, two, mid], progress=None,
                         curves=False)
    by = {f.case: f for f in rep.findings}
    assert by["one"].verdict == "unsound"
    assert by["two"].verdict == "unsound"
    assert by["mid"].verdict == "undecided" and "Theorem 9.7" in by["mid"].note
    assert F(by["mid"].exact_lower) <= low.upper and F(by["mid"].exact_lower) < F(between) < F(by["mid"].exact_upper)


def _bw_sigma(eps: float, delta: float) -> mpmath.mpf:  # float ok: the target, exactly a float
    """The analytic Gaussian's sigma for (eps, delta) (Balle and Wang 2018), mpmath at 40 digits."""
    with mpmath.workdps(40):
        e, d = mpmath.mpf(eps), mpmath.mpf(delta)

        def f(s: mpmath.mpf) -> mpmath.mpf:
            return mpmath.ncdf(1 / (2 * s) - e * s) - mpmath.exp(e) * mpmath.ncdf(-1 / (2 * s) - e * s) - d
        return mpmath.findroot(f, (mpmath.mpf("0.1"), mpmath.mpf(100)), solver="bisect")


def test_opacus_get_noise_multiplier_stand_in(monkeypatch) -> None:  # noqa: ANN001
    """Opacus is not installed here: a stand-in module with its names checks the adapter's calibration
    path; the returned sigma is judged against the analytic Gaussian (closed form, mpmath)."""
    bw = _bw_sigma(1.0, 1e-5)
    answers = {"rdp": float(bw * (1 - mpmath.mpf("1e-6"))), "prv": float(bw * (1 + mpmath.mpf("1e-6"))),
               "gdp": float(bw * 2)}
    calls = []

    def get_noise_multiplier(*, target_epsilon, target_delta, sample_rate, steps, accountant):  # noqa: ANN001, ANN202
        calls.append((target_epsilon, target_delta, sample_rate, steps, accountant))
        return answers[accountant]

    acc = types.ModuleType("opacus.accountants")
    for name in ("GaussianAccountant", "PRVAccountant", "RDPAccountant"):
        setattr(acc, name, type(name, (), {}))
    utils = types.ModuleType("opacus.accountants.utils")
    utils.get_noise_multiplier = get_noise_multiplier  # type: ignore[attr-defined]
    root = types.ModuleType("opacus")
    root.accountants = acc  # type: ignore[attr-defined]
    acc.utils = utils  # type: ignore[attr-defined]
    for name, mod in (("opacus", root), ("opacus.accountants", acc), ("opacus.accountants.utils", utils)):
        monkeypatch.setitem(sys.modules, name, mod)
    ad = get_adapter("opacus")
    ad = Adapter(ad.library, ad.module, ad.build, ad.distribution)  # a fresh cache: the stand-in's APIs
    cal = [c for c in SWEEP if c.name == "calib(gaussian,k=1)@dg=1e-5,target=1"]
    rep = run_crosscheck([ad], cal, progress=None, curves=False)
    by = {f.api: f.verdict for f in rep.findings}
    assert by == {"get_noise_multiplier(accountant='rdp')": "unsound", "get_noise_multiplier(accountant='prv')": "sound",
                  "get_noise_multiplier(accountant='gdp')": "loose"}
    assert all(c[:4] == (1.0, 1e-5, 1.0, 1) for c in calls)


def _installed(name: str) -> bool:
    return importlib.util.find_spec(name) is not None


@pytest.mark.peers
@pytest.mark.skipif(not _installed("dp_accounting"), reason="dp_accounting is not installed")
def test_dp_accounting_events_each_accountant_under_its_relation() -> None:
    """PLDAccountant takes the discrete Laplace; RdpAccountant does not (unsupported), and reads a replace-one
    Gaussian's noise multiplier against sensitivity 1: judged on that reading its eps is sound, and the
    certified value is the closed form of sigma = 2, sensitivity 1 (not the PLD reading, sensitivity 2)."""
    cases = [c for c in SWEEP if c.name in ("100xdlaplace(noise=0.1)@dg=1e-5",
                                            "100xgaussian(sigma=2,sensitivity=2),replace-one@dg=1e-5")]
    assert len(cases) == 2
    ad = get_adapter("dp_accounting")
    rep = run_crosscheck([ad], cases, progress=None, curves=False)
    by = {(f.api, f.case.split("@")[0]): f for f in rep.findings}
    pld = by[("PLDAccountant(DpEvent, the case's relation)", "100xdlaplace(noise=0.1)")]
    assert pld.verdict in ("sound", "loose", "unsound-fp", "unsound", "undecided") and pld.reported is not None
    assert by[("RdpAccountant(DpEvent, the case's relation)", "100xdlaplace(noise=0.1)")].verdict == "unsupported"
    rdp = by[("RdpAccountant(DpEvent, the case's relation)", "100xgaussian(sigma=2,sensitivity=2),replace-one")]
    ref = _gauss_eps(mpmath.sqrt(100) / 2, mpmath.mpf("1e-5"))
    assert rdp.verdict in ("sound", "loose") and abs(float(F(rdp.exact_upper)) - float(ref)) < 1e-9
    plda = by[("PLDAccountant(DpEvent, the case's relation)", "100xgaussian(sigma=2,sensitivity=2),replace-one")]
    ref2 = _gauss_eps(2 * mpmath.sqrt(100) / 2, mpmath.mpf("1e-5"))
    assert abs(float(F(plda.exact_upper)) - float(ref2)) < 1e-9


@pytest.mark.peers
@pytest.mark.skipif(not (_installed("autodp") and _installed("opendp") and _installed("prv_accountant")),
                    reason="autodp, OpenDP or prv_accountant is not installed")
def test_autodp_opendp_prv_on_the_discrete_gaussian() -> None:
    """autodp and OpenDP account the discrete Gaussian by zCDP (a valid upper bound: sound or loose);
    prv_accountant has no form for it (unsupported)."""
    case = [c for c in SWEEP if c.name == "100xdgaussian(sigma=2)@dg=1e-5"]
    rep = run_crosscheck([get_adapter("autodp"), get_adapter("opendp"), get_adapter("prv_accountant")], case,
                         progress=None, curves=False)
    by = {f.library: f.verdict for f in rep.findings}
    assert by == {"autodp": by["autodp"], "opendp": by["opendp"], "prv_accountant": "unsupported"}
    assert by["autodp"] in ("sound", "loose") and by["opendp"] in ("sound", "loose")


@pytest.mark.peers
@pytest.mark.skipif(not _installed("autodp"), reason="autodp is not installed")
def test_autodp_calibrators_judged_against_the_closed_form() -> None:
    """ana_gaussian_calibrator's sigma for (1, 1e-5): sound exactly when it is at least the analytic
    Gaussian's sigma (mpmath)."""
    cal = [c for c in SWEEP if c.name == "calib(gaussian,k=1)@dg=1e-5,target=1"]
    rep = run_crosscheck([get_adapter("autodp")], cal, progress=None, curves=False)
    by = {f.api: f for f in rep.findings}
    f = by["calibrator_zoo.ana_gaussian_calibrator"]
    sigma = F(f.inputs["mechanisms"][0].split("sigma=")[1].split(",")[0])  # the exact value autodp returned
    assert f.verdict in ("sound", "loose", "unsound", "unsound-fp")
    assert (f.verdict in ("sound", "loose")) == (sigma >= F(mpmath.nstr(_bw_sigma(1.0, 1e-5), 30)))
    assert by["calibrator_zoo.eps_delta_calibrator"].verdict in ("sound", "loose", "unsound", "unsound-fp")


@pytest.mark.slow  # 8-12 s (CI time: the main step)
@pytest.mark.peers
@pytest.mark.skipif(not _installed("dp_accounting"), reason="dp_accounting is not installed")
def test_dp_accounting_on_the_last_mechanisms_and_relations() -> None:
    """Issue 27: the truncated subsampled Gaussian is read by PLDAccountant (judged against exactdp's upper
    bound: never called unsound, docs/mathematics.md §9, Thm 9.4) and not by RdpAccountant; randomized
    response under REPLACE_SPECIAL (exact, Thm 9.5): RdpAccountant's eps is sound, PLDAccountant's is below
    the certified optimum (it composes the event once whatever its count); a batch drawn with replacement
    is read by neither."""
    names = ("100xgaussian(sigma=1,q=0.01,truncate=115,of=10000)@dg=1e-5", "3xrr(p=0.5,k=4),replace-special@dg=1e-5",
             "10xgaussian(sigma=1,sensitivity=2,sample=256,of=60000,with-replacement),replace-one@dg=1e-5")
    cases = [c for c in SWEEP if c.name in names]
    assert len(cases) == 3
    rep = run_crosscheck([get_adapter("dp_accounting")], cases, progress=None, curves=False)
    by = {(f.api.split("(")[0], f.case.split("@")[0]): f for f in rep.findings}
    trunc = "100xgaussian(sigma=1,q=0.01,truncate=115,of=10000)"
    assert by[("PLDAccountant", trunc)].verdict in ("sound", "loose", "undecided") and by[("PLDAccountant", trunc)].reported
    assert by[("RdpAccountant", trunc)].verdict == "unsupported"
    rr = "3xrr(p=0.5,k=4),replace-special"
    assert by[("RdpAccountant", rr)].verdict in ("sound", "loose")
    assert by[("PLDAccountant", rr)].verdict in ("unsound", "unsound-fp")
    wr = "10xgaussian(sigma=1,sensitivity=2,sample=256,of=60000,with-replacement),replace-one"
    assert by[("PLDAccountant", wr)].verdict == by[("RdpAccountant", wr)].verdict == "unsupported"
