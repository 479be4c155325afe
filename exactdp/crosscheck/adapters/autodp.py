"""autodp: RDP composition, the Fourier accountant (``ComposeAFA``), ``ComposeGaussian`` and ``DP_acct``.

See docs/peers/autodp.md.  autodp is imported only when :func:`apis` runs.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from exactdp.core.numbers import ExactReal
from exactdp.crosscheck.adapters.base import Api, CurveApi, NotApplicable, Reported, ReportedCurve, Unsupported
from exactdp.crosscheck.adapters.given import (
    as_given,
    as_number,
    calibrated_claim,
    curve_direction,
    curve_parts,
    dpsgd_parameters,
    exact_value,
    given_composition,
    parts_of,
    require_events,
    require_generic,
    require_mechanisms,
    require_pure,
    rr_noise,
    to_float,
)
from exactdp.crosscheck.cases import Case
from exactdp.model.composition import Composition

__all__ = ["AUTODP_ORDERS", "apis", "curves"]

#: the orders at which autodp's RDP functions are read (autodp converts over continuous orders, so its
#: eps is not judged against this grid: only its curve is)
AUTODP_ORDERS = (1.5, 2, 2.5, 3, 4, 5, 8, 10, 16, 20, 32, 48, 64, 128, 256)


def _quiet(fn: Callable[[], Any]) -> Any:
    """Run a library call with its prints ("Binary search epsilon ...") kept off our stdout."""
    import contextlib
    import io

    with contextlib.redirect_stdout(io.StringIO()):
        return fn()


def apis() -> list[Api]:
    """The APIs under test (imports the library)."""
    from autodp import mechanism_zoo, transformer_zoo
    from autodp.dp_acct import DP_acct

    def pure(case: Case) -> Reported:
        require_pure(case)
        if case.query != "epsilon" or case.at == 0:
            raise NotApplicable("autodp answers get_approxDP(delta) for delta > 0")
        comp, at, groups = as_given(case)
        mechs = [mechanism_zoo.PureDP_Mechanism(e, name=f"PureDP{i}") for i, (e, _, _) in enumerate(groups)]
        composed = transformer_zoo.Composition()(mechs, [c for _, _, c in groups])
        return Reported(_quiet(lambda: composed.get_approxDP(to_float(at))), comp, at,
                        "Composition()(PureDP_Mechanism...).get_approxDP")

    def rr_mechs(case: Case, phi_off: bool) -> tuple[list[Any], Composition]:
        require_pure(case)
        mechs, exact = [], []
        for i, (e, _, c) in enumerate(case.groups):
            p = 1.0 - rr_noise(e) / 2.0  # probability of the truth  # float ok: exact eps recomputed from p
            mechs.append(mechanism_zoo.RandresponseMechanism(p=p, phi_off=phi_off, name=f"RR{i}"))
            exact.append((ExactReal.log(exact_value(p) / (1 - exact_value(p))), 0, c))
        return mechs, Composition.heterogeneous(exact)

    def rr(case: Case) -> Reported:
        if case.query != "epsilon" or case.at == 0:
            raise NotApplicable("autodp answers get_approxDP(delta) for delta > 0")
        mechs, comp = rr_mechs(case, True)
        at = exact_value(to_float(case.at))
        composed = transformer_zoo.Composition()(mechs, [c for _, _, c in case.groups])
        return Reported(_quiet(lambda: composed.get_approxDP(to_float(at))), comp, at,
                        "Composition()(RandresponseMechanism...).get_approxDP")

    def rr_afa(case: Case) -> Reported:
        if case.query != "epsilon" or case.at == 0:
            raise NotApplicable("autodp answers get_approxDP(delta) for delta > 0")
        if case.k > 1000:
            raise NotApplicable("the Fourier accountant is run for k <= 1000")
        mechs, comp = rr_mechs(case, False)
        at = exact_value(to_float(case.at))
        composed = transformer_zoo.ComposeAFA()(mechs, [c for _, _, c in case.groups])
        return Reported(_quiet(lambda: composed.get_approxDP(to_float(at))), comp, at,
                        "ComposeAFA()(RandresponseMechanism(p, phi_off=False)...).get_approxDP")

    def dp_acct_with(ints: bool) -> Callable[[Case], Reported]:
        def run(case: Case) -> Reported:
            require_generic(case)
            if case.query != "epsilon" or case.k > 10000:
                raise NotApplicable("DP_acct answers get_eps(delta), run for k <= 10000")
            acc = DP_acct()
            exact = []
            for e, d, c in case.groups:
                ge, gd = as_number(e, ints), as_number(d, ints)
                for _ in range(c):
                    acc.update_DPlosses(ge, gd)
                exact.append((exact_value(float(ge)), exact_value(float(gd)), c))  # float ok: exact ints/floats
            gat = as_number(case.at, ints)
            return Reported(acc.get_eps(gat), Composition.heterogeneous(exact), exact_value(float(gat)),  # float ok
                            "DP_acct: update_DPlosses(eps, delta) per mechanism, get_eps(delta)"
                            + ("; integral inputs (delta 0) passed as int" if ints else ""))
        return run

    def mech(case: Case) -> Reported:
        require_mechanisms(case)
        if case.query != "epsilon":
            raise NotApplicable("autodp answers get_approxDP(delta)")
        parts = parts_of(case)
        ms, counts = [], []
        for i, p in enumerate(parts):
            if p.kind == "gaussian" and p.q is None:
                ms.append(mechanism_zoo.GaussianMechanism(sigma=p.param, name=f"G{i}"))
            elif p.kind == "laplace" and p.q is None:
                ms.append(mechanism_zoo.LaplaceMechanism(b=p.param, name=f"L{i}"))
            elif p.kind == "gaussian":
                ms.append(mechanism_zoo.SubsampleGaussianMechanism(
                    {"prob": p.q, "sigma": p.param, "coeff": p.count}, neighboring="add_remove", name=f"S{i}"))
                counts.append(1)
                continue
            else:
                raise NotApplicable("autodp's subsampled Laplace is not run")
            counts.append(p.count)
        at = exact_value(to_float(case.at))
        composed = ms[0] if counts == [1] and len(ms) == 1 else transformer_zoo.Composition()(ms, counts)
        return Reported(_quiet(lambda: composed.get_approxDP(to_float(at))), given_composition(parts), at,
                        "GaussianMechanism / LaplaceMechanism / SubsampleGaussianMechanism(neighboring='add_remove'), "
                        "Composition (RDP)")

    def exact_gaussian(case: Case) -> Reported:
        require_mechanisms(case)
        parts = parts_of(case)
        if case.query != "epsilon" or any(p.kind != "gaussian" or p.q is not None for p in parts):
            raise NotApplicable("ComposeGaussian answers Gaussian mechanisms")
        ms = [mechanism_zoo.ExactGaussianMechanism(sigma=p.param, name=f"G{i}") for i, p in enumerate(parts)]
        composed = transformer_zoo.ComposeGaussian()(ms, [p.count for p in parts])
        at = exact_value(to_float(case.at))
        return Reported(_quiet(lambda: composed.get_approxDP(to_float(at))), given_composition(parts), at,
                        "ComposeGaussian()(ExactGaussianMechanism...).get_approxDP")

    def afa(case: Case) -> Reported:
        require_mechanisms(case)
        parts = parts_of(case)
        if case.query != "epsilon" or any(p.q is not None for p in parts):
            raise NotApplicable("the Fourier accountant is run on Gaussian and Laplace mechanisms")
        ms = [mechanism_zoo.GaussianMechanism(sigma=p.param, phi_off=False, name=f"G{i}") if p.kind == "gaussian"
              else mechanism_zoo.LaplaceMechanism(b=p.param, phi_off=False, name=f"L{i}") for i, p in enumerate(parts)]
        composed = transformer_zoo.ComposeAFA()(ms, [p.count for p in parts])
        at = exact_value(to_float(case.at))
        return Reported(_quiet(lambda: composed.get_approxDP(to_float(at))), given_composition(parts), at,
                        "ComposeAFA()(Gaussian/LaplaceMechanism(phi_off=False)...).get_approxDP")

    def discrete_gaussian(case: Case) -> Reported:
        # the events-and-relations cases (issue 27 §6): autodp has a discrete Gaussian (as rho-zCDP), nothing else new
        require_events(case)
        from exactdp.model.mechanisms import DiscreteGaussian

        if len(case.mechanisms) != 1 or not isinstance(case.mechanisms[0][0], DiscreteGaussian) or \
                case.mechanisms[0][0].sensitivity != 1:
            raise Unsupported(f"autodp has no mechanism for {case.composition()} (its new-vocabulary mechanism is "
                              "DiscreteGaussianMechanism, sensitivity 1)")
        m, count = case.mechanisms[0]
        sigma = to_float(m.sigma)
        mech = mechanism_zoo.DiscreteGaussianMechanism(sigma)
        composed = mech if count == 1 else transformer_zoo.Composition()([mech], [count])
        at = exact_value(to_float(case.at))
        return Reported(_quiet(lambda: composed.get_approxDP(to_float(at))),
                        Composition(((DiscreteGaussian(exact_value(sigma)), count),)), at,
                        "DiscreteGaussianMechanism(sigma) (rho = 1/(2 sigma^2) zCDP), Composition, get_approxDP")

    def calibrate_with(which: str) -> Callable[[Case], Reported]:
        # autodp's calibrators (calibrator_zoo): the noise for a target (eps, delta); the claim is judged
        def run(case: Case) -> Reported:
            from autodp import calibrator_zoo

            if not case.is_calibration:
                raise NotApplicable("calibration cases only")
            _, q, steps = dpsgd_parameters(case)
            assert case.target is not None
            eps, delta = to_float(case.target), to_float(case.at)
            if which == "ana":
                if q != 1.0 or steps != 1:
                    raise NotApplicable("ana_gaussian_calibrator calibrates one Gaussian (no composition, no sampling)")
                mech = calibrator_zoo.ana_gaussian_calibrator()(mechanism_zoo.ExactGaussianMechanism, eps, delta)
                label = "calibrator_zoo.ana_gaussian_calibrator()(ExactGaussianMechanism, eps, delta)"
            else:
                made: list[float] = []  # float ok: the sigmas autodp tried; the last is the one it returns

                def make(sigma: float) -> Any:  # float ok: the library's parameter
                    made.append(sigma)
                    if q == 1.0:
                        return transformer_zoo.Composition()([mechanism_zoo.GaussianMechanism(sigma=sigma)], [steps])
                    return mechanism_zoo.SubsampleGaussianMechanism({"prob": q, "sigma": sigma, "coeff": steps},
                                                                    neighboring="add_remove")
                mech = _quiet(lambda: calibrator_zoo.eps_delta_calibrator()(make, eps, delta, [0.05, 100]))
                label = ("calibrator_zoo.eps_delta_calibrator()(SubsampleGaussianMechanism(neighboring='add_remove'), "
                         "eps, delta, bounds=[0.05, 100])")
            sigma = mech.params["sigma"] if which == "ana" else made[-1]
            return calibrated_claim(sigma, q, steps, case, label)
        return run

    return [
        Api("autodp", "DiscreteGaussianMechanism (zCDP) [events and relations]", discrete_gaussian),
        Api("autodp", "calibrator_zoo.eps_delta_calibrator", calibrate_with("eps_delta")),
        Api("autodp", "calibrator_zoo.ana_gaussian_calibrator", calibrate_with("ana")),
        Api("autodp", "Composition(PureDP_Mechanism).get_approxDP", pure),
        Api("autodp", "Composition(RandresponseMechanism).get_approxDP", rr),
        Api("autodp", "ComposeAFA(RandresponseMechanism(phi_off=False)).get_approxDP", rr_afa),
        Api("autodp", "dp_acct.DP_acct.get_eps", dp_acct_with(False)),
        Api("autodp", "dp_acct.DP_acct.get_eps(ints)", dp_acct_with(True)),
        Api("autodp", "Composition(Gaussian/Laplace/SubsampleGaussianMechanism).get_approxDP", mech),
        Api("autodp", "ComposeGaussian(ExactGaussianMechanism).get_approxDP", exact_gaussian),
        Api("autodp", "ComposeAFA(Gaussian/LaplaceMechanism(phi_off=False)).get_approxDP", afa),
    ]


def curves() -> list[CurveApi]:
    """autodp's RDP functions (``mechanism.RenyiDP``, from its rdp_bank) at :data:`AUTODP_ORDERS` (imports the library)."""
    from autodp import mechanism_zoo, transformer_zoo

    def run(case: Case) -> ReportedCurve:
        parts = curve_parts(case)
        ms, counts = [], []
        for i, p in enumerate(parts):
            if p.q is not None:
                ms.append(mechanism_zoo.SubsampleGaussianMechanism(
                    {"prob": p.q, "sigma": p.param, "coeff": p.count}, neighboring="add_remove", name=f"S{i}"))
                counts.append(1)
                continue
            ms.append(mechanism_zoo.GaussianMechanism(sigma=p.param, name=f"G{i}") if p.kind == "gaussian" else
                      mechanism_zoo.LaplaceMechanism(b=p.param, name=f"L{i}"))
            counts.append(p.count)
        mech = ms[0] if counts == [1] and len(ms) == 1 else transformer_zoo.Composition()(ms, counts)
        values = tuple(_quiet(partial(mech.RenyiDP, a)) for a in AUTODP_ORDERS)
        return ReportedCurve(AUTODP_ORDERS, values, given_composition(parts), curve_direction(parts), None, None,
                             "GaussianMechanism / LaplaceMechanism / SubsampleGaussianMechanism(neighboring="
                             "'add_remove'), Composition: RenyiDP(order)")

    return [CurveApi("autodp", "mechanism.RenyiDP (rdp_bank)", run)]
