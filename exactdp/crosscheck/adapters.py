"""Adapters: how each peer library is asked a :class:`~exactdp.crosscheck.cases.Case`.

An adapter's API turns a case into the library's own calls and returns a :class:`Reported`: the
library's claimed upper bound (a float, taken at its exact binary value) together with the exact
composition and query point the library was *actually* given.  Floats handed to a library are
converted back exactly (``Fraction(float)``), so a value rounded on the way in is judged against
the mechanism the library really saw, never blamed on our rounding.  A randomized-response event
with parameter p is the exact pair of a log(...)-DP mechanism (e.g. dp_accounting's
``RandomizedResponseDpEvent(p, 2)`` is eps = log(2/p - 1) exactly), so its eps is an exact
``ExactReal.log``.  Peer libraries are imported only inside the adapters.
"""

from __future__ import annotations

import importlib
import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from exactdp.core.numbers import ExactReal
from exactdp.crosscheck.cases import Case
from exactdp.model.composition import Composition

__all__ = ["ADAPTERS", "Adapter", "Api", "NotApplicable", "Part", "Reported", "Skipped", "adapter_names", "get_adapter"]


@dataclass(frozen=True)
class Reported:
    """A library's answer: ``value`` (its claim) for ``composition`` at ``at``.

    ``side`` is ``"upper"`` for a claimed upper bound (judged) or ``"lower"`` for a documented
    under-estimate (an optimistic PLD, prv_accountant's lower value), which is labelled
    ``lower-estimate`` and never called unsound.
    """

    value: Any
    composition: Composition
    at: Fraction
    note: str = ""
    side: str = "upper"


class NotApplicable(Exception):
    """The API cannot express this case (e.g. an approximate-DP mechanism in a pure-DP API)."""


class Skipped(Exception):
    """The API could express the case but it is out of scope (e.g. a replace-one relation).

    Reported as a ``skipped`` finding with the reason, never counted as checked.
    """


@dataclass(frozen=True)
class Api:
    """One library entry point under test."""

    library: str
    name: str
    run: Callable[[Case], Reported]


@dataclass
class Adapter:
    """A peer library: its import name, and the APIs the cross-check calls."""

    library: str
    module: str
    build: Callable[[], list[Api]]
    distribution: str = ""
    apis_cache: list[Api] | None = field(default=None, repr=False)
    install: str = ""

    def available(self) -> tuple[bool, str]:
        """(importable, version or the reason it is not)."""
        try:
            importlib.import_module(self.module)
        except Exception as exc:  # ImportError, or a broken install
            how = self.install or f"pip install '{self.distribution or self.library}'"
            return False, f"not installed ({type(exc).__name__}: {exc}); {how}"
        try:
            from importlib.metadata import version

            return True, version(self.distribution or self.library)
        except Exception:
            return True, "unknown version"

    def apis(self) -> list[Api]:
        if self.apis_cache is None:
            self.apis_cache = self.build()
        return self.apis_cache


# -- exact conversions -----------------------------------------------------------------------------

def _fl(q: Fraction) -> float:
    return float(q)  # float ok: the value handed to a float library; read back exactly by _back


def _back(x: float) -> Fraction:
    return Fraction(x)  # exact binary value of the float the library received


def _as_given(case: Case) -> tuple[Composition, Fraction, list[tuple[float, float, int]]]:
    """The floats handed over, and the exact composition / query point they denote."""
    groups = [(_fl(e), _fl(d), c) for e, d, c in case.groups]
    comp = Composition.heterogeneous([(_back(e), _back(d), c) for e, d, c in groups])
    return comp, _back(_fl(case.at)), groups


def _rr_p(eps: Fraction) -> float:
    """The randomized-response noise parameter p = 2/(1+e^eps) (dp_accounting, 2 buckets)."""
    return 2.0 / (1.0 + math.exp(_fl(eps)))  # float ok: whatever p is, its exact eps is log(2/p - 1)


def _rr_exact_eps(p: float) -> ExactReal:
    """RR over 2 buckets with noise p: P = (1 - p/2, p/2), Q = (p/2, 1 - p/2), eps = log(2/p - 1)."""
    q = _back(p)
    return ExactReal.log(2 / q - 1)


def _pure_only(case: Case) -> None:
    if not case.is_pure:
        raise NotApplicable("this API models pure eps-DP mechanisms only")


def _max_total_eps(case: Case) -> Fraction:
    return sum((e * c for e, _, c in case.groups), Fraction(0))


def _generic_only(case: Case) -> None:
    if not case.is_generic:
        raise NotApplicable("this API models generic (eps, delta)-DP mechanisms only")


def _mechanisms_only(case: Case) -> None:
    if case.is_generic or case.is_calibration:
        raise NotApplicable("this API models specific mechanisms")


def _num(q: Fraction, ints: bool) -> float | int:
    """The number as handed to a library: an int when it is integral and ``ints`` is set."""
    if ints and q.denominator == 1:
        return int(q)
    return _fl(q)


@dataclass(frozen=True)
class Part:
    """One mechanism of a mechanism case as the library gets it (floats), and its exact value."""

    kind: str          # "gaussian" (param = sigma) or "laplace" (param = scale b)
    param: float       # float ok: the value handed to the library
    q: float | None    # float ok: the sampling rate handed to the library (None: no sampling)
    count: int

    def exact(self) -> Any:
        from exactdp.model.mechanisms import Gaussian, Laplace, PoissonSampled

        m: Any = Gaussian(_back(self.param)) if self.kind == "gaussian" else Laplace(_back(self.param))
        return PoissonSampled(m, _back(self.q)) if self.q is not None and self.q != 1.0 else m


def _parts(case: Case) -> list[Part]:
    from exactdp.crosscheck.cases import mechanism_parts

    return [Part(k, _fl(p), None if q is None else _fl(q), c) for k, p, q, c in mechanism_parts(case)]


def _given(parts: list[Part]) -> Composition:
    """The exact composition of the floats handed over (docs/peers/README.md: judged as given)."""
    return Composition(tuple((p.exact(), p.count) for p in parts))


def _dpsgd(case: Case) -> tuple[float, float, int]:
    """(sigma, q, steps) of a one-group subsampled-Gaussian case (q = 1.0 for plain Gaussian noise)."""
    _mechanisms_only_or_calibration(case)
    ps = _parts(case)
    if len(ps) != 1 or ps[0].kind != "gaussian":
        raise NotApplicable("this API models DP-SGD (one subsampled Gaussian, repeated)")
    p = ps[0]
    return p.param, (p.q if p.q is not None else 1.0), p.count


def _mechanisms_only_or_calibration(case: Case) -> None:
    if case.is_generic:
        raise NotApplicable("this API models specific mechanisms")


def _calibrated(sigma: float, q: float, steps: int, case: Case, note: str) -> Reported:
    """The claim of a calibration: (target, delta_g)-DP with the returned noise multiplier."""
    from exactdp.model.mechanisms import Gaussian, PoissonSampled

    if not (isinstance(sigma, float) or isinstance(sigma, int)) or not math.isfinite(sigma) or sigma <= 0:
        raise ValueError(f"returned noise multiplier {sigma!r} is not a positive number")
    m: Any = Gaussian(_back(float(sigma)))  # float ok: the library's own float
    if q != 1.0:
        m = PoissonSampled(m, _back(q))
    assert case.target is not None
    return Reported(_fl(case.target), Composition(((m, steps),)), _back(_fl(case.at)),
                    f"returned noise multiplier {sigma!r}; the claim is (target eps, delta_g)-DP with it; {note}")


# -- dp_accounting ---------------------------------------------------------------------------------

def _dp_accounting_apis() -> list[Api]:
    import dp_accounting
    from dp_accounting.pld import accountant as pld_closed_forms
    from dp_accounting.pld import common
    from dp_accounting.pld import privacy_loss_distribution as pldlib
    from dp_accounting.rdp import rdp_privacy_accountant as rdplib

    NR = dp_accounting.NeighboringRelation

    def vdi(case: Case) -> float:  # float ok: a grid size
        # 1e-4 (the library default) unless the loss range would need millions of bins.
        tot = _max_total_eps(case)
        return 1e-4 if tot <= 100 else 10.0 ** math.ceil(math.log10(_fl(tot) / 1e6))  # float ok: a grid size

    def answer(obj: Any, case: Case, at: Fraction) -> Any:
        return obj.get_epsilon_for_delta(_fl(at)) if case.query == "epsilon" else obj.get_delta_for_epsilon(_fl(at))

    def pld_params_with(h_of: Callable[[Case], float], tmt: float | None, label: str) -> Callable[[Case], Reported]:
        def run(case: Case) -> Reported:
            _generic_only(case)
            comp, at, groups = _as_given(case)
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
        _pure_only(case)
        events, mechs = [], []
        for e, _, c in case.groups:
            p = _rr_p(e)
            ev = dp_accounting.RandomizedResponseDpEvent(noise_parameter=p, num_buckets=2)
            events.append(dp_accounting.SelfComposedDpEvent(ev, c) if c > 1 else ev)
            mechs.append((_rr_exact_eps(p), 0, c))
        event = events[0] if len(events) == 1 else dp_accounting.ComposedDpEvent(events)
        return event, Composition.heterogeneous(mechs)

    def acc_answer(acc: Any, case: Case, at: Fraction) -> Any:
        return acc.get_epsilon(_fl(at)) if case.query == "epsilon" else acc.get_delta(_fl(at))

    def pld_accountant(case: Case) -> Reported:
        from dp_accounting.pld import pld_privacy_accountant

        event, comp = rr_events(case)
        h = vdi(case)
        acc = pld_privacy_accountant.PLDAccountant(NR.REPLACE_ONE, value_discretization_interval=h)
        acc.compose(event)
        at = _back(_fl(case.at))
        return Reported(acc_answer(acc, case, at), comp, at,
                        f"SelfComposedDpEvent(RandomizedResponseDpEvent(p, 2), k), REPLACE_ONE, vdi={h:g}")

    def pld_accountant_list(case: Case) -> Reported:
        # The same mechanisms as an explicit ComposedDpEvent list (no SelfComposedDpEvent).
        from dp_accounting.pld import pld_privacy_accountant

        _pure_only(case)
        if case.k > 100 or all(c == 1 for _, _, c in case.groups):
            raise NotApplicable("explicit lists are run for repeated events with k <= 100")
        events, mechs = [], []
        for e, _, c in case.groups:
            p = _rr_p(e)
            events.extend([dp_accounting.RandomizedResponseDpEvent(noise_parameter=p, num_buckets=2)] * c)
            mechs.append((_rr_exact_eps(p), 0, c))
        h = vdi(case)
        acc = pld_privacy_accountant.PLDAccountant(NR.REPLACE_ONE, value_discretization_interval=h)
        acc.compose(dp_accounting.ComposedDpEvent(events))
        at = _back(_fl(case.at))
        return Reported(acc_answer(acc, case, at), Composition.heterogeneous(mechs), at,
                        f"ComposedDpEvent([RR(p, 2)] * k), vdi={h:g}")

    def rdp_accountant(case: Case) -> Reported:
        event, comp = rr_events(case)
        acc = rdplib.RdpAccountant(neighboring_relation=NR.REPLACE_ONE)
        acc.compose(event)
        at = _back(_fl(case.at))
        return Reported(acc_answer(acc, case, at), comp, at, "RandomizedResponseDpEvent(p, 2), REPLACE_ONE, default orders")

    def advanced_with(ints: bool) -> Callable[[Case], Reported]:
        def run(case: Case) -> Reported:
            _generic_only(case)
            if not case.is_homogeneous or case.query != "epsilon":
                raise NotApplicable("advanced_composition answers eps for k equal mechanisms")
            (e, d, k), = case.groups
            if ints and not (e.denominator == 1 or d.denominator == 1 or case.at.denominator == 1):
                raise NotApplicable("no integral input")
            ge, gd, gat = _num(e, ints), _num(d, ints), _num(case.at, ints)
            comp = Composition.homogeneous(_back(float(ge)), _back(float(gd)), k)  # float ok: exact ints/floats
            val = pld_closed_forms.advanced_composition(common.DifferentialPrivacyParameters(ge, gd), k, gat)
            return Reported(val, comp, _back(float(gat)), "None means no eps (reported as inf)"  # float ok: exact
                            + ("; integral inputs passed as int" if ints else ""))
        return run

    def calibrate(case: Case) -> Reported:
        # Calibration: the per-mechanism eps for a total (eps_g, delta_g), eps_g = 3/4 k eps.  The
        # claim "k-fold composition of (eps_ret, delta) is (eps_g, delta_g)-DP" is judged as an eps
        # claim of value eps_g on the composition the library returned.
        _generic_only(case)
        if not case.is_homogeneous or case.query != "epsilon":
            raise NotApplicable("calibration is run on the homogeneous eps cases")
        (e, d, k), = case.groups
        if case.at == 0:
            raise NotApplicable("calibration needs delta_g > 0")
        target = _back(_fl(Fraction(3, 4) * e * k))
        at = _back(_fl(case.at))
        per = pld_closed_forms.get_smallest_epsilon_from_advanced_composition(
            common.DifferentialPrivacyParameters(_fl(target), _fl(at)), k, _fl(d))
        if per is None:
            raise NotApplicable("no per-mechanism eps (delta_g below 1 - (1-delta)^k)")
        comp = Composition.homogeneous(_back(per), _back(_fl(d)), k)
        return Reported(_fl(target), comp, at, f"returned per-mechanism eps {per!r} for total eps_g {_fl(target)!r}; "
                                               "reported = eps_g, judged on the returned composition")

    # -- the mechanism accountants (docs/peers/dp_accounting.md) --------------------------------------
    def event_of(parts: list[Part]) -> Any:
        evs = []
        for p in parts:
            ev: Any = dp_accounting.GaussianDpEvent(p.param) if p.kind == "gaussian" else \
                dp_accounting.LaplaceDpEvent(p.param)
            if p.q is not None:
                ev = dp_accounting.PoissonSampledDpEvent(p.q, ev)
            evs.append(dp_accounting.SelfComposedDpEvent(ev, p.count) if p.count > 1 else ev)
        return evs[0] if len(evs) == 1 else dp_accounting.ComposedDpEvent(evs)

    def pld_event_with(h: float) -> Callable[[Case], Reported]:
        def run(case: Case) -> Reported:
            from dp_accounting.pld import pld_privacy_accountant

            _mechanisms_only(case)
            parts = _parts(case)
            acc = pld_privacy_accountant.PLDAccountant(value_discretization_interval=h)
            acc.compose(event_of(parts))
            at = _back(_fl(case.at))
            return Reported(acc_answer(acc, case, at), _given(parts), at,
                            f"PLDAccountant(ADD_OR_REMOVE_ONE, value_discretization_interval={h:g})")
        return run

    def rdp_event(case: Case) -> Reported:
        _mechanisms_only(case)
        parts = _parts(case)
        acc = rdplib.RdpAccountant()
        acc.compose(event_of(parts))
        at = _back(_fl(case.at))
        return Reported(acc_answer(acc, case, at), _given(parts), at, "RdpAccountant(ADD_OR_REMOVE_ONE, default orders)")

    def pld_lib_with(label: str, tmt: float | None = None, **opts: Any) -> Callable[[Case], Reported]:
        def run(case: Case) -> Reported:
            _mechanisms_only(case)
            parts = _parts(case)
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
            at = _back(_fl(case.at))
            side = "lower" if opts.get("pessimistic_estimate") is False else "upper"
            return Reported(answer(pld, case, at), _given(parts), at, label, side)
        return run

    def calibrate_sgd_with(make: str) -> Callable[[Case], Reported]:
        def run(case: Case) -> Reported:
            from dp_accounting import mechanism_calibration
            from dp_accounting.pld import pld_privacy_accountant

            if not case.is_calibration:
                raise NotApplicable("calibration cases only")
            if make == "pld" and case.quick:
                raise NotApplicable("a PLD calibration takes about 90 s: run in the full sweep only")
            _, q, steps = _dpsgd(case)
            fresh = pld_privacy_accountant.PLDAccountant if make == "pld" else rdplib.RdpAccountant

            def event(s: float) -> Any:  # float ok: the library's parameter
                return dp_accounting.SelfComposedDpEvent(
                    dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(s)), steps)

            assert case.target is not None
            sigma = mechanism_calibration.calibrate_dp_mechanism(
                fresh, event, _fl(case.target), _fl(case.at),
                mechanism_calibration.LowerEndpointAndGuess(0.1, 1.0))
            return _calibrated(sigma, q, steps, case, f"calibrate_dp_mechanism({fresh.__name__})")
        return run

    return [
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


# -- prv_accountant --------------------------------------------------------------------------------

def _prv_apis() -> list[Api]:
    from prv_accountant import (
        ApproximateDPMechanism,
        GaussianMechanism,
        LaplaceMechanism,
        PoissonSubsampledGaussianMechanism,
        PRVAccountant,
        PureDPMechanism,
    )

    def run_prv(case: Case, prvs: list[Any], counts: list[int], at: Fraction) -> tuple[float, float, float]:
        delta_error = _fl(at) * 1e-3 if case.query == "epsilon" else 1e-10
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            acc = PRVAccountant(prvs=prvs, max_self_compositions=counts, eps_error=0.01, delta_error=delta_error)
            if case.query == "epsilon":
                return acc.compute_epsilon(_fl(at), counts)
            return acc.compute_delta(_fl(at), counts)

    def generic(case: Case) -> Reported:
        _generic_only(case)
        if case.query == "epsilon" and case.at == 0:
            raise NotApplicable("PRVAccountant needs delta > 0")
        comp, at, groups = _as_given(case)
        prvs = [ApproximateDPMechanism(e, d) if d > 0 else PureDPMechanism(e) for e, d, _ in groups]
        counts = [c for _, _, c in groups]
        lo, est, up = run_prv(case, prvs, counts, at)
        return Reported(up, comp, at, f"upper of (lower, estimate, upper) = ({lo!r}, {est!r}, {up!r}); eps_error=0.01")

    def mech_with(pick: int) -> Callable[[Case], Reported]:
        def run(case: Case) -> Reported:
            _mechanisms_only(case)
            parts = _parts(case)
            prvs = []
            for p in parts:
                if p.kind == "gaussian":
                    prvs.append(GaussianMechanism(p.param) if p.q is None else
                                PoissonSubsampledGaussianMechanism(p.q, p.param))
                elif p.q is None:
                    prvs.append(LaplaceMechanism(1.0 / p.param))  # mu = sensitivity / scale
                else:
                    raise NotApplicable("prv_accountant has no subsampled Laplace")
            lap = [p for p in parts if p.kind == "laplace"]
            given = _given(parts)
            if lap:  # the library got mu = 1/b as a float: the Laplace it judged has scale 1/mu exactly
                from exactdp.model.mechanisms import Laplace

                given = Composition(tuple((Laplace(1 / _back(1.0 / p.param)) if p.kind == "laplace" else p.exact(),
                                           p.count) for p in parts))
            at = _back(_fl(case.at))
            lo, est, up = run_prv(case, prvs, [p.count for p in parts], at)
            vals = (lo, est, up)
            note = f"(lower, estimate, upper) = ({lo!r}, {est!r}, {up!r}); eps_error=0.01; " \
                   "PoissonSubsampledGaussianMechanism is the remove direction, judged under add/remove"
            return Reported(vals[pick], given, at, note, "lower" if pick == 0 else "upper")
        return run

    return [
        Api("prv_accountant", "PRVAccountant(Pure/ApproximateDPMechanism).upper", generic),
        Api("prv_accountant", "PRVAccountant(Gaussian/Laplace/PoissonSubsampledGaussianMechanism).upper",
            mech_with(2)),
        Api("prv_accountant", "PRVAccountant(Gaussian/Laplace/PoissonSubsampledGaussianMechanism).lower [lower estimate]",
            mech_with(0)),
    ]


# -- autodp ----------------------------------------------------------------------------------------

def _quiet(fn: Callable[[], Any]) -> Any:
    """Run a library call with its prints ("Binary search epsilon ...") kept off our stdout."""
    import contextlib
    import io

    with contextlib.redirect_stdout(io.StringIO()):
        return fn()


def _autodp_apis() -> list[Api]:
    from autodp import mechanism_zoo, transformer_zoo
    from autodp.dp_acct import DP_acct

    def pure(case: Case) -> Reported:
        _pure_only(case)
        if case.query != "epsilon" or case.at == 0:
            raise NotApplicable("autodp answers get_approxDP(delta) for delta > 0")
        comp, at, groups = _as_given(case)
        mechs = [mechanism_zoo.PureDP_Mechanism(e, name=f"PureDP{i}") for i, (e, _, _) in enumerate(groups)]
        composed = transformer_zoo.Composition()(mechs, [c for _, _, c in groups])
        return Reported(_quiet(lambda: composed.get_approxDP(_fl(at))), comp, at,
                        "Composition()(PureDP_Mechanism...).get_approxDP")

    def rr_mechs(case: Case, phi_off: bool) -> tuple[list[Any], Composition]:
        _pure_only(case)
        mechs, exact = [], []
        for i, (e, _, c) in enumerate(case.groups):
            p = 1.0 - _rr_p(e) / 2.0  # probability of the truth  # float ok: exact eps recomputed from p
            mechs.append(mechanism_zoo.RandresponseMechanism(p=p, phi_off=phi_off, name=f"RR{i}"))
            exact.append((ExactReal.log(_back(p) / (1 - _back(p))), 0, c))
        return mechs, Composition.heterogeneous(exact)

    def rr(case: Case) -> Reported:
        if case.query != "epsilon" or case.at == 0:
            raise NotApplicable("autodp answers get_approxDP(delta) for delta > 0")
        mechs, comp = rr_mechs(case, True)
        at = _back(_fl(case.at))
        composed = transformer_zoo.Composition()(mechs, [c for _, _, c in case.groups])
        return Reported(_quiet(lambda: composed.get_approxDP(_fl(at))), comp, at,
                        "Composition()(RandresponseMechanism...).get_approxDP")

    def rr_afa(case: Case) -> Reported:
        if case.query != "epsilon" or case.at == 0:
            raise NotApplicable("autodp answers get_approxDP(delta) for delta > 0")
        if case.k > 1000:
            raise NotApplicable("the Fourier accountant is run for k <= 1000")
        mechs, comp = rr_mechs(case, False)
        at = _back(_fl(case.at))
        composed = transformer_zoo.ComposeAFA()(mechs, [c for _, _, c in case.groups])
        return Reported(_quiet(lambda: composed.get_approxDP(_fl(at))), comp, at,
                        "ComposeAFA()(RandresponseMechanism(p, phi_off=False)...).get_approxDP")

    def dp_acct_with(ints: bool) -> Callable[[Case], Reported]:
        def run(case: Case) -> Reported:
            _generic_only(case)
            if case.query != "epsilon" or case.k > 10000:
                raise NotApplicable("DP_acct answers get_eps(delta), run for k <= 10000")
            acc = DP_acct()
            exact = []
            for e, d, c in case.groups:
                ge, gd = _num(e, ints), _num(d, ints)
                for _ in range(c):
                    acc.update_DPlosses(ge, gd)
                exact.append((_back(float(ge)), _back(float(gd)), c))  # float ok: exact ints/floats
            gat = _num(case.at, ints)
            return Reported(acc.get_eps(gat), Composition.heterogeneous(exact), _back(float(gat)),  # float ok
                            "DP_acct: update_DPlosses(eps, delta) per mechanism, get_eps(delta)"
                            + ("; integral inputs (delta 0) passed as int" if ints else ""))
        return run

    def mech(case: Case) -> Reported:
        _mechanisms_only(case)
        if case.query != "epsilon":
            raise NotApplicable("autodp answers get_approxDP(delta)")
        parts = _parts(case)
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
        at = _back(_fl(case.at))
        composed = ms[0] if counts == [1] and len(ms) == 1 else transformer_zoo.Composition()(ms, counts)
        return Reported(_quiet(lambda: composed.get_approxDP(_fl(at))), _given(parts), at,
                        "GaussianMechanism / LaplaceMechanism / SubsampleGaussianMechanism(neighboring='add_remove'), "
                        "Composition (RDP)")

    def exact_gaussian(case: Case) -> Reported:
        _mechanisms_only(case)
        parts = _parts(case)
        if case.query != "epsilon" or any(p.kind != "gaussian" or p.q is not None for p in parts):
            raise NotApplicable("ComposeGaussian answers Gaussian mechanisms")
        ms = [mechanism_zoo.ExactGaussianMechanism(sigma=p.param, name=f"G{i}") for i, p in enumerate(parts)]
        composed = transformer_zoo.ComposeGaussian()(ms, [p.count for p in parts])
        at = _back(_fl(case.at))
        return Reported(_quiet(lambda: composed.get_approxDP(_fl(at))), _given(parts), at,
                        "ComposeGaussian()(ExactGaussianMechanism...).get_approxDP")

    def afa(case: Case) -> Reported:
        _mechanisms_only(case)
        parts = _parts(case)
        if case.query != "epsilon" or any(p.q is not None for p in parts):
            raise NotApplicable("the Fourier accountant is run on Gaussian and Laplace mechanisms")
        ms = [mechanism_zoo.GaussianMechanism(sigma=p.param, phi_off=False, name=f"G{i}") if p.kind == "gaussian"
              else mechanism_zoo.LaplaceMechanism(b=p.param, phi_off=False, name=f"L{i}") for i, p in enumerate(parts)]
        composed = transformer_zoo.ComposeAFA()(ms, [p.count for p in parts])
        at = _back(_fl(case.at))
        return Reported(_quiet(lambda: composed.get_approxDP(_fl(at))), _given(parts), at,
                        "ComposeAFA()(Gaussian/LaplaceMechanism(phi_off=False)...).get_approxDP")

    return [
        Api("autodp", "Composition(PureDP_Mechanism).get_approxDP", pure),
        Api("autodp", "Composition(RandresponseMechanism).get_approxDP", rr),
        Api("autodp", "ComposeAFA(RandresponseMechanism(phi_off=False)).get_approxDP", rr_afa),
        Api("autodp", "dp_acct.DP_acct.get_eps", dp_acct_with(False)),
        Api("autodp", "dp_acct.DP_acct.get_eps(ints)", dp_acct_with(True)),
        Api("autodp", "Composition(Gaussian/Laplace/SubsampleGaussianMechanism).get_approxDP", mech),
        Api("autodp", "ComposeGaussian(ExactGaussianMechanism).get_approxDP", exact_gaussian),
        Api("autodp", "ComposeAFA(Gaussian/LaplaceMechanism(phi_off=False)).get_approxDP", afa),
    ]


# -- OpenDP ----------------------------------------------------------------------------------------

def _opendp_apis() -> list[Api]:
    import opendp.prelude as dp

    dp.enable_features("contrib")

    def rr_measurements(case: Case) -> tuple[list[Any], Composition]:
        _pure_only(case)
        ms, exact = [], []
        for e, _, c in case.groups:
            p = 1.0 - _rr_p(e) / 2.0  # float ok: exact eps recomputed from p
            m = dp.m.make_randomized_response_bool(prob=p)
            ms.extend([m] * c)
            exact.append((ExactReal.log(_back(p) / (1 - _back(p))), 0, c))
        return ms, Composition.heterogeneous(exact)

    def zcdp_route(case: Case) -> Reported:
        if case.query != "epsilon" or case.at == 0:
            raise NotApplicable("the privacy profile is queried for eps at delta > 0")
        if case.k > 2000:
            raise NotApplicable("too many measurements")
        ms, comp = rr_measurements(case)
        zs = [dp.c.make_pureDP_to_zCDP(m) for m in ms]
        profile = dp.c.make_zCDP_to_approxDP(dp.c.make_composition(zs)).map(1)
        at = _back(_fl(case.at))
        return Reported(profile.epsilon(_fl(at)), comp, at,
                        "make_randomized_response_bool -> make_pureDP_to_zCDP -> make_composition -> make_zCDP_to_approxDP")

    def basic(case: Case) -> Reported:
        if case.query != "epsilon":
            raise NotApplicable("basic composition reports eps")
        if case.k > 2000:
            raise NotApplicable("too many measurements")
        ms, comp = rr_measurements(case)
        at = _back(_fl(case.at))
        return Reported(dp.c.make_composition(ms).map(1), comp, at, "make_composition of pure-DP RR (eps at any delta)")

    # -- Gaussian (zCDP) and Laplace (pure DP) measurements, sensitivity d_in = 1 ---------------------
    def measurements(case: Case) -> tuple[list[Any], list[Part], str]:
        _mechanisms_only(case)
        parts = _parts(case)
        if any(p.q is not None for p in parts):
            raise NotApplicable("OpenDP has no Poisson-subsampling amplification for these measurements")
        if case.k > 2000:
            raise NotApplicable("too many measurements")
        kinds = {p.kind for p in parts}
        ms = []
        for p in parts:
            if p.kind == "gaussian":
                space = (dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.l2_distance(T=float))
                m = dp.m.make_gaussian(*space, scale=p.param)
            else:
                space = (dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.l1_distance(T=float))
                m = dp.m.make_laplace(*space, scale=p.param)
                if "gaussian" in kinds:
                    m = dp.c.make_pureDP_to_zCDP(m)
            ms.extend([m] * p.count)
        return ms, parts, "zcdp" if "gaussian" in kinds else "pure"

    def profile_of(case: Case) -> tuple[Any, list[Part]]:
        ms, parts, kind = measurements(case)
        if kind == "pure":
            ms = [dp.c.make_pureDP_to_zCDP(m) for m in ms]
        return dp.c.make_zCDP_to_approxDP(dp.c.make_composition(ms)), parts

    def profile(case: Case) -> Reported:
        if case.query == "epsilon" and case.at == 0:
            raise NotApplicable("the privacy profile is queried at delta > 0")
        meas, parts = profile_of(case)
        prof = meas.map(1.0)
        at = _back(_fl(case.at))
        val = prof.epsilon(_fl(at)) if case.query == "epsilon" else prof.delta(_fl(at))
        return Reported(val, _given(parts), at, "make_composition -> make_zCDP_to_approxDP -> map(1.0) privacy profile "
                                                "(Laplace through make_pureDP_to_zCDP)")

    def fix_delta(case: Case) -> Reported:
        if case.query != "epsilon" or case.at == 0:
            raise NotApplicable("make_fix_delta takes delta > 0")
        meas, parts = profile_of(case)
        eps, delta = dp.c.make_fix_delta(meas, _fl(case.at)).map(1.0)
        return Reported(eps, _given(parts), _back(float(delta)),  # float ok: the library's own delta
                        f"make_fix_delta(..., delta).map(1.0) = ({eps!r}, {delta!r}): the pair is judged")

    def pure_laplace(case: Case) -> Reported:
        ms, parts, kind = measurements(case)
        if kind != "pure" or case.query != "epsilon":
            raise NotApplicable("pure-DP composition of Laplace measurements reports eps")
        return Reported(dp.c.make_composition(ms).map(1.0), _given(parts), _back(_fl(case.at)),
                        "make_composition of make_laplace (MaxDivergence): eps at any delta")

    return [
        Api("opendp", "make_composition(make_randomized_response_bool)", basic),
        Api("opendp", "zCDP route: make_zCDP_to_approxDP(make_composition(make_pureDP_to_zCDP(RR)))", zcdp_route),
        Api("opendp", "make_zCDP_to_approxDP(make_composition(make_gaussian/make_laplace)) profile", profile),
        Api("opendp", "make_fix_delta(make_zCDP_to_approxDP(...)) (eps, delta) pair", fix_delta),
        Api("opendp", "make_composition(make_laplace) pure DP", pure_laplace),
    ]


# -- Opacus ----------------------------------------------------------------------------------------

def _opacus_apis() -> list[Api]:
    from opacus.accountants import GaussianAccountant, PRVAccountant, RDPAccountant
    from opacus.accountants.utils import get_noise_multiplier

    def accountant_with(cls: Any, label: str) -> Callable[[Case], Reported]:
        def run(case: Case) -> Reported:
            _mechanisms_only(case)
            sigma, q, steps = _dpsgd(case)
            if case.query != "epsilon" or case.at == 0:
                raise NotApplicable("Opacus accountants answer get_epsilon(delta > 0)")
            acc = cls()
            for _ in range(steps):  # as a training loop does: one step() per optimizer step
                acc.step(noise_multiplier=sigma, sample_rate=q)
            at = _back(_fl(case.at))
            return Reported(acc.get_epsilon(delta=_fl(at)), _given(_parts(case)), at,
                            f"{label}: step(noise_multiplier, sample_rate) x {steps}, get_epsilon(delta); add/remove")
        return run

    def noise_with(kind: str) -> Callable[[Case], Reported]:
        def run(case: Case) -> Reported:
            if not case.is_calibration:
                raise NotApplicable("calibration cases only")
            _, q, steps = _dpsgd(case)
            assert case.target is not None
            sigma = get_noise_multiplier(target_epsilon=_fl(case.target), target_delta=_fl(case.at), sample_rate=q,
                                         steps=steps, accountant=kind)
            return _calibrated(sigma, q, steps, case, f"get_noise_multiplier(accountant={kind!r})")
        return run

    return [
        Api("opacus", "RDPAccountant.get_epsilon", accountant_with(RDPAccountant, "RDPAccountant")),
        Api("opacus", "PRVAccountant.get_epsilon", accountant_with(PRVAccountant, "PRVAccountant")),
        Api("opacus", "GaussianAccountant.get_epsilon", accountant_with(GaussianAccountant, "GaussianAccountant")),
        Api("opacus", "get_noise_multiplier(accountant='rdp')", noise_with("rdp")),
        Api("opacus", "get_noise_multiplier(accountant='prv')", noise_with("prv")),
        Api("opacus", "get_noise_multiplier(accountant='gdp')", noise_with("gdp")),
    ]


# -- TensorFlow Privacy ----------------------------------------------------------------------------

def _tf_privacy_apis() -> list[Api]:
    from tensorflow_privacy.privacy.analysis import compute_dp_sgd_privacy_lib as lib

    def run(case: Case) -> Reported:
        _mechanisms_only(case)
        sigma, q, steps = _dpsgd(case)
        if case.query != "epsilon" or case.at == 0 or q >= 1.0:
            raise NotApplicable("compute_dp_sgd_privacy answers eps of DP-SGD at delta > 0")
        # n examples, batch size q n, epochs = steps q: the library's own parameterisation
        n = 10**6
        batch = round(q * n)
        if batch < 1 or batch / n != q or (steps * batch) % n:
            raise NotApplicable("the sampling rate and steps are not a whole batch size and number of epochs here")
        epochs = steps * batch // n
        eps, _ = lib.compute_dp_sgd_privacy(n, batch, sigma, epochs, _fl(case.at))
        at = _back(_fl(case.at))
        return Reported(eps, _given(_parts(case)), at, f"compute_dp_sgd_privacy(n={n}, batch_size={batch}, "
                                                       f"noise_multiplier={sigma!r}, epochs={epochs}, delta)")

    return [Api("tf_privacy", "compute_dp_sgd_privacy_lib.compute_dp_sgd_privacy", run)]


ADAPTERS: dict[str, Adapter] = {
    a.library: a
    for a in [
        Adapter("dp_accounting", "dp_accounting", _dp_accounting_apis, "dp-accounting"),
        Adapter("prv_accountant", "prv_accountant", _prv_apis, "prv-accountant"),
        Adapter("autodp", "autodp", _autodp_apis, "autodp"),
        Adapter("opendp", "opendp", _opendp_apis, "opendp"),
        Adapter("opacus", "opacus", _opacus_apis, "opacus",
                install="pip install 'torch==2.13.0+cpu' && pip install 'exactdp[opacus]' (the CPU build of torch first)"),
        Adapter("tf_privacy", "tensorflow_privacy", _tf_privacy_apis, "tensorflow-privacy",
                install="not a dependency of exactdp: tensorflow-privacy 0.9.0 installs on Python 3.11 but pulls "
                        "TensorFlow (a 2.4 GB environment) and pins dp-accounting 0.4.3 and numpy < 2, which "
                        "conflicts with the other peers; pip install tensorflow-privacy in an environment of its own"),
    ]
}


def adapter_names() -> list[str]:
    return list(ADAPTERS)


def get_adapter(name: str) -> Adapter:
    key = name.replace("-", "_").lower()
    if key not in ADAPTERS:
        raise KeyError(f"library={name!r} must be one of {', '.join(ADAPTERS)}")
    return ADAPTERS[key]
