"""The jax-privacy adapter (issue 27 §6): what it hands the library, and that its answers are judged.

Against a stand-in ``jax_privacy.accounting`` (fake_jax_privacy.py) whose answers are set from closed
forms (the Gaussian's eps and the analytic Gaussian's sigma, mpmath at 40 digits), and, where
jax-privacy is installed, against the real library (skipped when it is absent).
"""

from __future__ import annotations

import dataclasses
import importlib.util
from decimal import Decimal
from fractions import Fraction

import mpmath
import pytest
from fake_jax_privacy import Fake, install

from exactdp.crosscheck.adapters import Adapter, get_adapter
from exactdp.crosscheck.adapters.jax_privacy import batch_of
from exactdp.crosscheck.cases import SWEEP, Case
from exactdp.crosscheck.report import run_crosscheck
from exactdp.model.mechanisms import (
    DiscreteGaussian,
    Gaussian,
    PoissonSampled,
    SampledWithoutReplacement,
)

F = Fraction
EPS_API = "DpsgdTrainingAccountant(PldAccountantConfig).compute_epsilon"


def _gauss_eps(mu: mpmath.mpf, delta: mpmath.mpf) -> mpmath.mpf:
    """eps of a Gaussian of mu = sensitivity/sigma at delta, closed form (mpmath, 40 digits)."""
    with mpmath.workdps(40):
        mu, delta = mpmath.mpf(mu), mpmath.mpf(delta)

        def d(e: mpmath.mpf) -> mpmath.mpf:
            return mpmath.ncdf(mu / 2 - e / mu) - mpmath.exp(e) * mpmath.ncdf(-mu / 2 - e / mu) - delta
        if d(0) <= 0:
            return mpmath.mpf(0)
        return mpmath.findroot(d, (mpmath.mpf(0), mu * mu / 2 + 10 * mu), solver="bisect")


def _bw_sigma(eps: float, delta: float) -> mpmath.mpf:  # float ok: the target, exactly a float
    """The analytic Gaussian's sigma for (eps, delta) (Balle and Wang 2018), mpmath at 40 digits."""
    with mpmath.workdps(40):
        e, d = mpmath.mpf(eps), mpmath.mpf(delta)

        def f(s: mpmath.mpf) -> mpmath.mpf:
            return mpmath.ncdf(1 / (2 * s) - e * s) - mpmath.exp(e) * mpmath.ncdf(-1 / (2 * s) - e * s) - d
        return mpmath.findroot(f, (mpmath.mpf("0.1"), mpmath.mpf(100)), solver="bisect")


def _adapter() -> Adapter:
    return dataclasses.replace(get_adapter("jax_privacy"), apis_cache=None)  # a fresh cache: the stand-in's APIs


def _event(name: str, m, k: int, at: str, relation: str) -> Case:
    return Case(name, (), "epsilon", F(at), ("events", relation), False, ((m, k),), relation=relation)


def _run(cases: list[Case]) -> dict[tuple[str, str], object]:
    rep = run_crosscheck([_adapter()], cases, progress=None, curves=False)
    return {(f.api, f.case): f for f in rep.findings}


def test_batch_of_is_the_rate_exactly() -> None:
    for q in (F(1, 100), F(1, 8), F(1, 3), F(1), F(1, 10**4), F(7, 12345)):
        bs, n = batch_of(q)
        assert F(bs, n) == q and 1 <= bs <= n and bs / float(n) == float(q)


def test_a_full_batch_run_sound_and_unsound(monkeypatch) -> None:
    """4 x Gaussian(sigma=1) is DP-SGD with the full batch: an eps just above the closed form (mu = 2) is
    sound, one 1e-6 below it unsound; the run is handed over as noise 1.0, batch = dataset, 4 updates."""
    ref = _gauss_eps(2, mpmath.mpf("1e-5"))
    factor = {"up": 1 + mpmath.mpf("1e-9"), "down": 1 - mpmath.mpf("1e-6")}
    mode = ["up"]
    fake = install(monkeypatch, Fake(epsilon=lambda t, p: float(ref * factor[mode[0]])))
    case = Case("g4", (), "epsilon", F(1, 10**5), ("gaussian",), False, ((Gaussian(1), 4),))
    assert _run([case])[(EPS_API, "g4")].verdict == "sound"
    mode[0] = "down"
    by = _run([case])
    assert by[(EPS_API, "g4")].verdict == "unsound"
    call = next(c[1] for c in fake.calls if c[0] == "compute_epsilon")
    p = call["params"]
    assert (call["num_updates"], p.noise_multipliers, p.delta, p.sampling_method.name) == (4, 1.0, 1e-5, "POISSON")
    assert p.batch_size == p.num_samples
    assert {c[1]["config"] for c in fake.calls} == {"PldAccountantConfig", "RdpAccountantConfig"}


def test_poisson_dpsgd_is_handed_over_as_a_training_run(monkeypatch) -> None:
    fake = install(monkeypatch, Fake(epsilon=lambda t, p: 1e9))
    case = next(c for c in SWEEP if c.name == "dpsgd(sigma=1,q=0.01,steps=1000)@dg=1e-5")
    f = _run([case])[(EPS_API, case.name)]
    q = Decimal(10**4 / float(10**6))  # the exact binary value of the float rate the library computes
    assert f.verdict == "loose" and f.inputs == {"mechanisms": [f"gaussian:sigma=1,q={q},count=1000"]}
    p = fake.calls[0][1]["params"]
    assert (p.noise_multipliers, p.batch_size, p.num_samples, p.sampling_method.name) == (1.0, 10**4, 10**6, "POISSON")
    assert fake.calls[0][1]["num_updates"] == 1000


@pytest.mark.slow  # about 18 s: in the slow step (CI time)
def test_fixed_batches_under_replace_one(monkeypatch) -> None:
    """A batch of 60 of 6000 (replace-one) is FIXED_BATCH_SIZE with noise multiplier 2 (the replace-one
    sensitivity is two clipping norms): one run is tight, so 0 at delta_g = 1e-5 is unsound (its delta
    at eps = 0 is g (2 Phi(1/2) - 1) > 1e-5); for 2 runs 0 is below the attained lower end (Theorem 9.7)
    and unsound too.  A replace-one Gaussian is the whole dataset as the batch: the closed form is sound."""
    g = mpmath.mpf(60) / 6000
    assert g * (2 * mpmath.ncdf(mpmath.mpf(1) / 2) - 1) > mpmath.mpf("1e-5")
    ref = _gauss_eps(mpmath.mpf(1), mpmath.mpf("1e-5"))  # Gaussian(sigma=2, sensitivity 2), once

    def eps(t: int, p) -> float:
        return float(ref * (1 + mpmath.mpf("1e-9"))) if p.batch_size == p.num_samples else 0.0

    fake = install(monkeypatch, Fake(epsilon=eps))
    wor = SampledWithoutReplacement(Gaussian(1), 60, 6000)
    cases = [_event("one", wor, 1, "1e-5", "replace-one"), _event("two", wor, 2, "1e-5", "replace-one"),
             _event("g", Gaussian(2, 2), 1, "1e-5", "replace-one")]
    by = _run(cases)
    assert by[(EPS_API, "one")].verdict == "unsound"
    # two runs: 0 is below the end one dataset pair attains (Theorem 9.7), so unsound too
    assert by[(EPS_API, "two")].verdict == "unsound"
    assert by[(EPS_API, "g")].verdict == "sound" and by[(EPS_API, "g")].inputs == {"mechanisms": ["gaussian:sigma=2,sensitivity=2"]}
    p = fake.calls[0][1]["params"]
    assert (p.noise_multipliers, p.batch_size, p.num_samples, p.sampling_method.name) == (2.0, 60, 6000,
                                                                                          "FIXED_BATCH_SIZE")


def test_events_without_a_form_are_unsupported(monkeypatch) -> None:
    fake = install(monkeypatch, Fake(epsilon=lambda t, p: 1.0))
    cases = [_event("dg", DiscreteGaussian(2), 10, "1e-5", "add-remove"),
             _event("pr", PoissonSampled(Gaussian(1), F(1, 100), relation="replace-one"), 10, "1e-5", "replace-one")]
    by = _run(cases)
    assert by[(EPS_API, "dg")].verdict == "unsupported"
    assert by[(EPS_API, "pr")].verdict == "unsupported" and "POISSON" in by[(EPS_API, "pr")].note
    assert not fake.calls


def test_the_three_calibrators_are_judged_against_closed_forms(monkeypatch) -> None:
    """On one Gaussian at delta 1e-5: a noise multiplier 1e-6 below the analytic Gaussian's is unsound,
    1e-6 above sound; T updates at noise 1 (the full batch; mu = sqrt(T)) for eps 8: the largest T the
    closed form allows is sound, one more unsound; a batch size of the whole dataset (eps about 4.4)
    for eps 1 is unsound; a refusal is skipped, not judged."""
    bw = _bw_sigma(1.0, 1e-5)
    t_max = 1  # the largest T with eps(mu = sqrt(T)) <= 8 (eps grows with T)
    while _gauss_eps(mpmath.sqrt(t_max + 1), mpmath.mpf("1e-5")) <= 8:
        t_max += 1
    assert _gauss_eps(mpmath.sqrt(t_max), mpmath.mpf("1e-5")) <= 8 < _gauss_eps(mpmath.sqrt(t_max + 1),
                                                                                  mpmath.mpf("1e-5"))
    assert _gauss_eps(1, mpmath.mpf("1e-5")) > 1
    mode = ["good"]

    def refuse(**kw):
        raise ValueError("Epsilon at batch size 1 is too large. Try increasing `target_epsilon`.")

    fake = install(monkeypatch, Fake(
        noise_multiplier=lambda **kw: float(bw * (1 + mpmath.mpf("1e-6") * (1 if mode[0] == "good" else -1))),
        num_updates=lambda **kw: t_max if mode[0] == "good" else t_max + 1,
        batch_size=lambda **kw: refuse() if mode[0] == "good" else kw["num_samples"]))
    cal1 = next(c for c in SWEEP if c.name == "calib(gaussian,k=1)@dg=1e-5,target=1")
    cal8 = Case("cal8", (), "epsilon", F(1, 10**5), ("gaussian", "calibration"), False, ((Gaussian(1), 1),), F(8))
    names = {k: f"calibrate_{k}(RdpAccountantConfig)" for k in ("noise_multiplier", "num_updates", "batch_size")}
    good = _run([cal1, cal8])
    mode[0] = "bad"
    bad = _run([cal1, cal8])
    assert good[(names["noise_multiplier"], cal1.name)].verdict == "sound"
    assert bad[(names["noise_multiplier"], cal1.name)].verdict == "unsound"
    assert good[(names["num_updates"], "cal8")].verdict in ("sound", "loose")  # T_max is not exactly at eps 8
    assert bad[(names["num_updates"], "cal8")].verdict == "unsound"
    assert good[(names["batch_size"], cal1.name)].verdict == "skipped"
    assert bad[(names["batch_size"], cal1.name)].verdict == "unsound"
    kw = next(c[1] for c in fake.calls if c[0] == "calibrate_num_updates")
    assert (kw["target_epsilon"], kw["target_delta"], kw["noise_multipliers"]) == (8.0, 1e-5, 1.0)
    assert kw["batch_sizes"] == kw["num_samples"]


def test_a_calibrator_answer_that_is_not_a_parameter_is_an_error(monkeypatch) -> None:
    install(monkeypatch, Fake(noise_multiplier=lambda **kw: float("nan"), num_updates=lambda **kw: 2.5,
                              batch_size=lambda **kw: 10**7))
    cal = next(c for c in SWEEP if c.name == "calib(sigma=1,q=0.01,steps=1000)@dg=1e-5,target=1")
    by = _run([cal])
    for k in ("noise_multiplier", "num_updates", "batch_size"):
        assert by[(f"calibrate_{k}(RdpAccountantConfig)", cal.name)].verdict == "error"


def test_absent_library_is_skipped_with_how_to_install(monkeypatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "jax_privacy", None)  # import fails as if not installed
    monkeypatch.setitem(sys.modules, "jax_privacy.accounting", None)
    rep = run_crosscheck([_adapter()], list(SWEEP[:2]), progress=None, curves=False)
    (lib,) = rep.libraries
    assert lib["available"] is False and "exactdp[jax-privacy]" in lib["note"] and not rep.findings


def _installed() -> bool:
    try:
        return importlib.util.find_spec("jax_privacy") is not None
    except (ImportError, ValueError):
        return False


@pytest.mark.peers
@pytest.mark.jax_privacy
@pytest.mark.skipif(not _installed(), reason="jax-privacy is not installed (pip install 'exactdp[jax-privacy]')")
def test_real_jax_privacy_full_batch_against_the_closed_form() -> None:
    """The real library's PLD eps of 100 x Gaussian(sigma=2) at 1e-5 is sound and within 1e-3 of the
    closed form (mu = 5); its RDP eps is sound; the one-run fixed batch is sound."""
    ref = _gauss_eps(5, mpmath.mpf("1e-5"))
    g = next(c for c in SWEEP if c.name == "100xGaussian(sigma=2)@dg=1e-5")
    one = next(c for c in SWEEP if c.name == "1xgaussian(sigma=1,sample=60,of=6000),replace-one@dg=1e-5")
    rep = run_crosscheck([get_adapter("jax_privacy")], [g, one], progress=None, curves=False)
    by = {(f.api, f.case): f for f in rep.findings}
    pld = by[(EPS_API, g.name)]
    assert pld.verdict == "sound" and abs(float(pld.reported) / float(ref) - 1) < 1e-3
    assert by[("DpsgdTrainingAccountant(RdpAccountantConfig).compute_epsilon", g.name)].verdict in ("sound", "loose")
    assert by[(EPS_API, one.name)].verdict in ("sound", "loose")
    assert not rep.unsound
