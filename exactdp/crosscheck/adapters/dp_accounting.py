"""dp_accounting (Google): its PLD and RDP accountants, advanced composition and calibration.

See docs/peers/dp_accounting.md.  dp_accounting is imported only when :func:`apis` runs.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from exactdp.crosscheck.adapters.base import Api, CurveApi, NotApplicable, Reported, ReportedCurve, Skipped, Unsupported
from exactdp.crosscheck.adapters.given import (
    Part,
    as_given,
    as_number,
    calibrated_claim,
    curve_direction,
    curve_parts,
    dpsgd_parameters,
    exact_value,
    given_composition,
    max_total_eps,
    parts_of,
    require_events,
    require_generic,
    require_mechanisms,
    require_pure,
    rr_exact_eps,
    rr_noise,
    to_float,
)
from exactdp.crosscheck.cases import Case
from exactdp.model.composition import Composition

__all__ = ["apis", "curves", "dp_event_of", "event_apis", "rdp_reading"]


def dp_event_of(parts: list[Part]) -> Any:
    """The dp_accounting DpEvent of a mechanism case's parts (imports dp_accounting)."""
    import dp_accounting

    evs = []
    for p in parts:
        ev: Any = dp_accounting.GaussianDpEvent(p.param) if p.kind == "gaussian" else \
            dp_accounting.LaplaceDpEvent(p.param)
        if p.q is not None:
            ev = dp_accounting.PoissonSampledDpEvent(p.q, ev)
        evs.append(dp_accounting.SelfComposedDpEvent(ev, p.count) if p.count > 1 else ev)
    return evs[0] if len(evs) == 1 else dp_accounting.ComposedDpEvent(evs)


def apis() -> list[Api]:
    """The APIs under test (imports the library)."""
    import dp_accounting
    from dp_accounting.pld import accountant as pld_closed_forms
    from dp_accounting.pld import common
    from dp_accounting.pld import privacy_loss_distribution as pldlib
    from dp_accounting.rdp import rdp_privacy_accountant as rdplib

    NR = dp_accounting.NeighboringRelation

    def vdi(case: Case) -> float:  # float ok: a grid size
        # 1e-4 (the library default) unless the loss range would need millions of bins.
        tot = max_total_eps(case)
        return 1e-4 if tot <= 100 else 10.0 ** math.ceil(math.log10(to_float(tot) / 1e6))  # float ok: a grid size

    def answer(obj: Any, case: Case, at: Fraction) -> Any:
        return obj.get_epsilon_for_delta(to_float(at)) if case.query == "epsilon" else obj.get_delta_for_epsilon(to_float(at))

    def pld_params_with(h_of: Callable[[Case], float], tmt: float | None, label: str) -> Callable[[Case], Reported]:
        def run(case: Case) -> Reported:
            require_generic(case)
            comp, at, groups = as_given(case)
            h = h_of(case)
            kw = {} if tmt is None else {"tail_mass_truncation": tmt}
            pld = None
            for e, d, c in groups:
                one = pldlib.from_privacy_parameters(common.DifferentialPrivacyParameters(e, d),
                                                     value_discretization_interval=h)
                part = one.self_compose(c, **kw) if c > 1 else one
                pld = part if pld is None else pld.compose(part, **kw)
            assert pld is not None
            return Reported(answer(pld, case, at), comp, at, f"value_discretization_interval={h:g}{label}")
        return run

    def rr_events(case: Case) -> tuple[Any, Composition]:
        require_pure(case)
        events, mechs = [], []
        for e, _, c in case.groups:
            p = rr_noise(e)
            ev = dp_accounting.RandomizedResponseDpEvent(noise_parameter=p, num_buckets=2)
            events.append(dp_accounting.SelfComposedDpEvent(ev, c) if c > 1 else ev)
            mechs.append((rr_exact_eps(p), 0, c))
        event = events[0] if len(events) == 1 else dp_accounting.ComposedDpEvent(events)
        return event, Composition.heterogeneous(mechs)

    def acc_answer(acc: Any, case: Case, at: Fraction) -> Any:
        return acc.get_epsilon(to_float(at)) if case.query == "epsilon" else acc.get_delta(to_float(at))

    def pld_accountant(case: Case) -> Reported:
        from dp_accounting.pld import pld_privacy_accountant

        event, comp = rr_events(case)
        h = vdi(case)
        acc = pld_privacy_accountant.PLDAccountant(NR.REPLACE_ONE, value_discretization_interval=h)
        acc.compose(event)
        at = exact_value(to_float(case.at))
        return Reported(acc_answer(acc, case, at), comp, at,
                        f"SelfComposedDpEvent(RandomizedResponseDpEvent(p, 2), k), REPLACE_ONE, vdi={h:g}")

    def pld_accountant_list(case: Case) -> Reported:
        # The same mechanisms as an explicit ComposedDpEvent list (no SelfComposedDpEvent).
        from dp_accounting.pld import pld_privacy_accountant

        require_pure(case)
        if case.k > 100 or all(c == 1 for _, _, c in case.groups):
            raise NotApplicable("explicit lists are run for repeated events with k <= 100")
        events, mechs = [], []
        for e, _, c in case.groups:
            p = rr_noise(e)
            events.extend([dp_accounting.RandomizedResponseDpEvent(noise_parameter=p, num_buckets=2)] * c)
            mechs.append((rr_exact_eps(p), 0, c))
        h = vdi(case)
        acc = pld_privacy_accountant.PLDAccountant(NR.REPLACE_ONE, value_discretization_interval=h)
        acc.compose(dp_accounting.ComposedDpEvent(events))
        at = exact_value(to_float(case.at))
        return Reported(acc_answer(acc, case, at), Composition.heterogeneous(mechs), at,
                        f"ComposedDpEvent([RR(p, 2)] * k), vdi={h:g}")

    def rdp_accountant(case: Case) -> Reported:
        event, comp = rr_events(case)
        acc = rdplib.RdpAccountant(neighboring_relation=NR.REPLACE_ONE)
        acc.compose(event)
        at = exact_value(to_float(case.at))
        return Reported(acc_answer(acc, case, at), comp, at, "RandomizedResponseDpEvent(p, 2), REPLACE_ONE, default orders")

    def advanced_with(ints: bool) -> Callable[[Case], Reported]:
        def run(case: Case) -> Reported:
            require_generic(case)
            if not case.is_homogeneous or case.query != "epsilon":
                raise NotApplicable("advanced_composition answers eps for k equal mechanisms")
            (e, d, k), = case.groups
            if ints and not (e.denominator == 1 or d.denominator == 1 or case.at.denominator == 1):
                raise NotApplicable("no integral input")
            ge, gd, gat = as_number(e, ints), as_number(d, ints), as_number(case.at, ints)
            comp = Composition.homogeneous(exact_value(float(ge)), exact_value(float(gd)), k)  # float ok: exact ints/floats
            val = pld_closed_forms.advanced_composition(common.DifferentialPrivacyParameters(ge, gd), k, gat)
            return Reported(val, comp, exact_value(float(gat)), "None means no eps (reported as inf)"  # float ok: exact
                            + ("; integral inputs passed as int" if ints else ""))
        return run

    def calibrate(case: Case) -> Reported:
        # Calibration: the per-mechanism eps for a total (eps_g, delta_g), eps_g = 3/4 k eps.  The
        # claim "k-fold composition of (eps_ret, delta) is (eps_g, delta_g)-DP" is judged as an eps
        # claim of value eps_g on the composition the library returned.
        require_generic(case)
        if not case.is_homogeneous or case.query != "epsilon":
            raise NotApplicable("calibration is run on the homogeneous eps cases")
        (e, d, k), = case.groups
        if case.at == 0:
            raise NotApplicable("calibration needs delta_g > 0")
        target = exact_value(to_float(Fraction(3, 4) * e * k))
        at = exact_value(to_float(case.at))
        per = pld_closed_forms.get_smallest_epsilon_from_advanced_composition(
            common.DifferentialPrivacyParameters(to_float(target), to_float(at)), k, to_float(d))
        if per is None:
            raise NotApplicable("no per-mechanism eps (delta_g below 1 - (1-delta)^k)")
        comp = Composition.homogeneous(exact_value(per), exact_value(to_float(d)), k)
        return Reported(to_float(target), comp, at,
                        f"returned per-mechanism eps {per!r} for total eps_g {to_float(target)!r}; "
                        "reported = eps_g, judged on the returned composition")

    # -- the mechanism accountants (docs/peers/dp_accounting.md) --------------------------------------
    event_of = dp_event_of

    def pld_event_with(h: float) -> Callable[[Case], Reported]:
        def run(case: Case) -> Reported:
            from dp_accounting.pld import pld_privacy_accountant

            require_mechanisms(case)
            parts = parts_of(case)
            acc = pld_privacy_accountant.PLDAccountant(value_discretization_interval=h)
            acc.compose(event_of(parts))
            at = exact_value(to_float(case.at))
            return Reported(acc_answer(acc, case, at), given_composition(parts), at,
                            f"PLDAccountant(ADD_OR_REMOVE_ONE, value_discretization_interval={h:g})")
        return run

    def rdp_event(case: Case) -> Reported:
        require_mechanisms(case)
        parts = parts_of(case)
        acc = rdplib.RdpAccountant()
        acc.compose(event_of(parts))
        at = exact_value(to_float(case.at))
        return Reported(acc_answer(acc, case, at), given_composition(parts), at, "RdpAccountant(ADD_OR_REMOVE_ONE, default orders)")

    def pld_lib_with(label: str, tmt: float | None = None, **opts: Any) -> Callable[[Case], Reported]:
        def run(case: Case) -> Reported:
            require_mechanisms(case)
            parts = parts_of(case)
            if tmt == 0 and case.k > 100:
                raise NotApplicable("without truncation the PMF grows with k: run for k <= 100 (gigabytes beyond)")
            kw = {} if tmt is None else {"tail_mass_truncation": tmt}
            pld = None
            for p in parts:
                extra = {"sampling_prob": p.q} if p.q is not None else {}
                one = (pldlib.from_gaussian_mechanism(p.param, **opts, **extra) if p.kind == "gaussian" else
                       pldlib.from_laplace_mechanism(p.param, **opts, **extra))
                part = one.self_compose(p.count, **kw) if p.count > 1 else one
                pld = part if pld is None else pld.compose(part, **kw)
            assert pld is not None
            at = exact_value(to_float(case.at))
            side = "lower" if opts.get("pessimistic_estimate") is False else "upper"
            return Reported(answer(pld, case, at), given_composition(parts), at, label, side)
        return run

    def calibrate_sgd_with(make: str) -> Callable[[Case], Reported]:
        def run(case: Case) -> Reported:
            from dp_accounting import mechanism_calibration
            from dp_accounting.pld import pld_privacy_accountant

            if not case.is_calibration:
                raise NotApplicable("calibration cases only")
            if make == "pld" and case.quick:
                raise NotApplicable("a PLD calibration takes about 90 s: run in the full sweep only")
            _, q, steps = dpsgd_parameters(case)
            fresh = pld_privacy_accountant.PLDAccountant if make == "pld" else rdplib.RdpAccountant

            def event(s: float) -> Any:  # float ok: the library's parameter
                return dp_accounting.SelfComposedDpEvent(
                    dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(s)), steps)

            assert case.target is not None
            sigma = mechanism_calibration.calibrate_dp_mechanism(
                fresh, event, to_float(case.target), to_float(case.at),
                mechanism_calibration.LowerEndpointAndGuess(0.1, 1.0))
            return calibrated_claim(sigma, q, steps, case, f"calibrate_dp_mechanism({fresh.__name__})")
        return run

    return event_apis() + [
        Api("dp_accounting", "pld.from_privacy_parameters+compose", pld_params_with(vdi, None, "")),
        Api("dp_accounting", "pld.from_privacy_parameters+compose(tail_mass_truncation=0)",
            pld_params_with(vdi, 0, ", tail_mass_truncation=0")),
        Api("dp_accounting", "pld.from_privacy_parameters(value_discretization_interval=0.01)",
            pld_params_with(lambda c: max(vdi(c), 0.01), None, "")),
        Api("dp_accounting", "PLDAccountant(SelfComposedDpEvent(RandomizedResponseDpEvent))", pld_accountant),
        Api("dp_accounting", "PLDAccountant(ComposedDpEvent([RR]*k))", pld_accountant_list),
        Api("dp_accounting", "RdpAccountant(RandomizedResponseDpEvent)", rdp_accountant),
        Api("dp_accounting", "pld.accountant.advanced_composition", advanced_with(False)),
        Api("dp_accounting", "pld.accountant.advanced_composition(ints)", advanced_with(True)),
        Api("dp_accounting", "pld.accountant.get_smallest_epsilon_from_advanced_composition", calibrate),
        Api("dp_accounting", "PLDAccountant(Gaussian/Laplace/PoissonSampled events)", pld_event_with(1e-4)),
        Api("dp_accounting", "PLDAccountant(events, value_discretization_interval=0.01)", pld_event_with(1e-2)),
        Api("dp_accounting", "RdpAccountant(Gaussian/Laplace/PoissonSampled events)", rdp_event),
        Api("dp_accounting", "pld.from_gaussian/laplace_mechanism+self_compose",
            pld_lib_with("connect-the-dots, pessimistic, tail_mass_truncation=1e-15 (defaults)")),
        Api("dp_accounting", "pld.from_gaussian/laplace_mechanism(use_connect_dots=False)",
            pld_lib_with("use_connect_dots=False, pessimistic", use_connect_dots=False)),
        Api("dp_accounting", "pld.from_gaussian/laplace_mechanism+self_compose(tail_mass_truncation=0)",
            pld_lib_with("tail_mass_truncation=0", tmt=0)),
        Api("dp_accounting", "pld.from_gaussian/laplace_mechanism(pessimistic_estimate=False) [lower estimate]",
            pld_lib_with("pessimistic_estimate=False: an optimistic (lower) estimate by design",
                         pessimistic_estimate=False)),
        Api("dp_accounting", "mechanism_calibration.calibrate_dp_mechanism(PLDAccountant)", calibrate_sgd_with("pld")),
        Api("dp_accounting", "mechanism_calibration.calibrate_dp_mechanism(RdpAccountant)", calibrate_sgd_with("rdp")),
    ]


def rdp_reading(comp: Composition) -> Composition:
    """The composition dp_accounting's ``RdpAccountant`` accounts under ``REPLACE_ONE`` for the events
    that :func:`exactdp.to_dp_event` writes and :func:`exactdp.from_dp_event` reads back under replace-one:
    the RDP accountant reads a ``GaussianDpEvent``'s noise multiplier against replace-one sensitivity 1
    (its Gaussian RDP alpha/(2 s^2), also inside ``SampledWithoutReplacementDpEvent``), where the PLD
    accountant and ``from_dp_event`` read sensitivity 2 (docs/interop.md).

    >>> from exactdp.model.mechanisms import Gaussian, SampledWithoutReplacement
    >>> str(rdp_reading(Composition(((SampledWithoutReplacement(Gaussian(1, 2), 6, 600), 3),))))
    '3 x gaussian:sigma=1,sample=6,of=600'
    """
    from exactdp.model.mechanisms import Gaussian, SampledWithoutReplacement

    def one(m: Any) -> Any:
        if isinstance(m, SampledWithoutReplacement):
            return SampledWithoutReplacement(one(m.mechanism), m.sample, m.of)
        if isinstance(m, Gaussian) and m.sigma is not None and m.sensitivity == 2:
            return Gaussian(m.sigma, 1)
        return m

    return Composition(tuple((one(m), c) for m, c in comp.groups))


def event_apis() -> list[Api]:
    """The accountants on the new events and relations (issue 27 §6; docs/peers/dp_accounting.md):
    ``PLDAccountant`` and ``RdpAccountant`` each under the case's relation, and the PLD module's
    discrete Laplace, discrete Gaussian and mixture-of-Gaussians constructors (imports the library)."""
    import dp_accounting
    from dp_accounting.pld import pld_privacy_accountant
    from dp_accounting.pld import privacy_loss_distribution as pldlib
    from dp_accounting.rdp import rdp_privacy_accountant as rdplib

    from exactdp.core.errors import InvalidParameterError
    from exactdp.model.dp_event import from_dp_event, to_dp_event
    from exactdp.model.mechanisms import PoissonSampled

    NR = dp_accounting.NeighboringRelation

    def event_of(case: Case) -> Any:
        require_events(case)
        try:
            return to_dp_event(case.composition(), case.relation)
        except InvalidParameterError as exc:
            raise Unsupported(f"no DpEvent in this dp_accounting: {exc}") from None

    def relation(case: Case) -> Any:
        if case.relation == "replace-special":
            return NR.REPLACE_SPECIAL
        return NR.REPLACE_ONE if case.relation == "replace-one" else NR.ADD_OR_REMOVE_ONE

    def accountant_with(make: str) -> Callable[[Case], Reported]:
        def run(case: Case) -> Reported:
            event = event_of(case)
            rel = relation(case)
            acc = (pld_privacy_accountant.PLDAccountant(rel, value_discretization_interval=1e-4) if make == "pld"
                   else rdplib.RdpAccountant(neighboring_relation=rel))
            if not acc.supports(event):
                raise Unsupported(f"{type(acc).__name__}({rel.name}) does not support {event}")
            # PLDAccountant(REPLACE_ONE) reads a Poisson-sampled Gaussian as ((1-q)N(0) + qN(-1), (1-q)N(0) + qN(1)):
            # records within half the replace-one sensitivity, exactdp's bounded=True (docs/mathematics.md §9, Thm 9.8)
            bounded = make == "pld" and case.relation == "replace-one"
            given = from_dp_event(event, case.relation, bounded=bounded)
            if bounded and any(isinstance(m, PoissonSampled) and not m.bounded for m, _ in given.groups):
                raise Skipped("PLDAccountant(REPLACE_ONE) models a Poisson-sampled mechanism as ((1-q)B + qA_-, "
                              "(1-q)B + qA_+), which assumes a record's contribution is at most half the replace-one "
                              "sensitivity; exactdp models that reading for a Gaussian or Laplace mechanism only "
                              "(docs/mathematics.md §9, Thms 9.8-9.9) and certifies the diluted pair without it "
                              "(Thm 9.2): not the same mechanism")
            reading = (", read with bounded records: ((1-q)N(0) + qN(-1), (1-q)N(0) + qN(1)), docs/mathematics.md "
                       "§9 Thm 9.8") if bounded and any(isinstance(m, PoissonSampled) for m, _ in given.groups) else ""
            if make == "rdp" and case.relation == "replace-one":
                given = rdp_reading(given)
            acc.compose(event)
            at = exact_value(to_float(case.at))
            return Reported(acc.get_epsilon(to_float(at)), given, at,
                            (f"{type(acc).__name__}({rel.name}) of to_dp_event(..., relation={case.relation!r}): "
                             f"{event}")[:300 - len(reading)] + reading)
        return run

    def pld_module(case: Case) -> Reported:
        event = event_of(case)
        if case.relation != "add-remove":
            raise Unsupported("the PLD module's discrete and mixture constructors are add/remove")
        inner, count = event, 1
        if type(inner).__name__ == "SelfComposedDpEvent":
            inner, count = inner.event, inner.count
        name = type(inner).__name__
        if name == "DiscreteLaplaceDpEvent":
            one = pldlib.from_discrete_laplace_mechanism(inner.noise_parameter, sensitivity=inner.sensitivity)
        elif name == "MixtureOfGaussiansDpEvent":
            if case.quick:
                raise NotApplicable("the mixture's PLD takes about 17 s, PLDAccountant's in the quick run: run in the full sweep")
            one = pldlib.from_mixture_gaussian_mechanism(inner.standard_deviation, inner.sensitivities,
                                                         inner.sampling_probs)
        else:
            raise Unsupported(f"the PLD module's discrete and mixture constructors do not take {name}")
        pld = one.self_compose(count) if count > 1 else one
        at = exact_value(to_float(case.at))
        return Reported(pld.get_epsilon_for_delta(to_float(at)), from_dp_event(event), at,
                        f"pld.from_{'discrete_laplace' if 'Laplace' in name else 'mixture_gaussian'}_mechanism "
                        "(defaults) + self_compose")

    def discrete_gaussian(case: Case) -> Reported:
        # dp_accounting 0.6.0 has no DiscreteGaussianDpEvent; its PLD module has the mechanism
        require_events(case)
        from exactdp.model.mechanisms import DiscreteGaussian

        if case.relation != "add-remove" or len(case.mechanisms) != 1 or \
                not isinstance(case.mechanisms[0][0], DiscreteGaussian):
            raise Unsupported("pld.from_discrete_gaussian_mechanism takes one discrete Gaussian under add/remove")
        m, count = case.mechanisms[0]
        sigma = to_float(m.sigma)
        one = pldlib.from_discrete_gaussian_mechanism(sigma, sensitivity=m.sensitivity)
        pld = one.self_compose(count) if count > 1 else one
        at = exact_value(to_float(case.at))
        given = Composition(((DiscreteGaussian(exact_value(sigma), m.sensitivity), count),))
        return Reported(pld.get_epsilon_for_delta(to_float(at)), given, at,
                        "pld.from_discrete_gaussian_mechanism (defaults: noise truncated at mass 1e-30) + self_compose")

    def sigma_gaussian(case: Case) -> Reported:
        # gaussian_mechanism.get_sigma_gaussian: the analytic Gaussian (Balle and Wang 2018) for one run
        from dp_accounting import gaussian_mechanism

        if not case.is_calibration:
            raise NotApplicable("calibration cases only")
        _, q, steps = dpsgd_parameters(case)
        if q != 1.0 or steps != 1:
            raise NotApplicable("get_sigma_gaussian calibrates one Gaussian (no composition, no sampling)")
        assert case.target is not None
        sigma = gaussian_mechanism.get_sigma_gaussian(to_float(case.target), to_float(case.at))
        return calibrated_claim(sigma, q, steps, case, "gaussian_mechanism.get_sigma_gaussian(eps, delta)")

    return [
        Api("dp_accounting", "gaussian_mechanism.get_sigma_gaussian", sigma_gaussian),
        Api("dp_accounting", "PLDAccountant(DpEvent, the case's relation)", accountant_with("pld")),
        Api("dp_accounting", "RdpAccountant(DpEvent, the case's relation)", accountant_with("rdp")),
        Api("dp_accounting", "pld.from_discrete_laplace/mixture_gaussian_mechanism+self_compose", pld_module),
        Api("dp_accounting", "pld.from_discrete_gaussian_mechanism+self_compose", discrete_gaussian),
    ]


def curves() -> list[CurveApi]:
    """The RDP-curve entry points (imports the library): the accountant's curve and the module-level
    function for DP-SGD, each at the library's own orders, with its own eps from that curve, and the
    accountant's curve of a fixed batch without replacement (the events cases under replace-one)."""
    from dp_accounting.rdp import rdp_privacy_accountant as rdplib

    def converted(orders: Any, rdp: Any, case: Case) -> tuple[Any, Fraction | None]:
        if case.query != "epsilon" or case.at == 0:
            return None, None
        at = exact_value(to_float(case.at))
        return rdplib.compute_epsilon(orders, rdp, to_float(at))[0], at

    def accountant(case: Case) -> ReportedCurve:
        parts = curve_parts(case)
        acc = rdplib.RdpAccountant()
        acc.compose(dp_event_of(parts))
        orders, rdp = list(acc._orders), list(acc._rdp)  # the accountant's own curve, as get_epsilon reads it
        eps, at = converted(orders, rdp, case)
        return ReportedCurve(tuple(orders), tuple(rdp), given_composition(parts), curve_direction(parts), eps, at,
                             "RdpAccountant(ADD_OR_REMOVE_ONE, default orders): _orders, _rdp; compute_epsilon")

    def module_function(case: Case) -> ReportedCurve:
        parts = curve_parts(case)
        sigma, q, steps = dpsgd_parameters(case)
        if q == 1.0:
            raise NotApplicable("the module-level function is for Poisson-subsampled Gaussians")
        orders = list(rdplib.DEFAULT_RDP_ORDERS)
        rdp = [steps * float(r) for r in rdplib._compute_rdp_poisson_subsampled_gaussian(q, sigma, orders)]  # float ok
        eps, at = converted(orders, rdp, case)
        return ReportedCurve(tuple(orders), tuple(rdp), given_composition(parts), curve_direction(parts), eps, at,
                             "_compute_rdp_poisson_subsampled_gaussian(q, sigma, DEFAULT_RDP_ORDERS) x steps; "
                             "compute_epsilon")

    def fixed_batch(case: Case) -> ReportedCurve:
        """The accountant's curve of a fixed batch without replacement under REPLACE_ONE: its
        ``_compute_rdp_sample_wor_gaussian``, the bound of WBK19 Thm 27 up to order 256 (Thm 9 past
        it), judged against exactdp's bracket (docs/rdp.md §6: sound at or above its upper end)."""
        import dp_accounting

        from exactdp.model.dp_event import from_dp_event, to_dp_event
        from exactdp.model.mechanisms import SampledWithoutReplacement

        require_events(case)
        comp = case.composition()
        if case.relation != "replace-one" or not any(isinstance(m, SampledWithoutReplacement) and m.gamma < 1
                                                     for m, _ in comp.groups):
            raise NotApplicable("this curve is the one of a fixed batch without replacement (replace-one)")
        event = to_dp_event(comp, "replace-one")
        acc = rdplib.RdpAccountant(neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_ONE)
        if not acc.supports(event):
            raise NotApplicable(f"RdpAccountant(REPLACE_ONE) does not support {event}")
        acc.compose(event)
        orders, rdp = list(acc._orders), list(acc._rdp)
        eps, at = converted(orders, rdp, case)
        return ReportedCurve(tuple(orders), tuple(rdp), rdp_reading(from_dp_event(event, "replace-one")), "max",
                             eps, at, "RdpAccountant(REPLACE_ONE, default orders) of a SampledWithoutReplacementDpEvent: "
                             "_orders, _rdp (WBK19 Thm 27 up to order 256, Thm 9 past it); compute_epsilon")

    return [CurveApi("dp_accounting", "RdpAccountant(events) curve", accountant),
            CurveApi("dp_accounting", "rdp_privacy_accountant._compute_rdp_poisson_subsampled_gaussian", module_function),
            CurveApi("dp_accounting", "RdpAccountant(REPLACE_ONE) fixed-batch curve", fixed_batch)]
