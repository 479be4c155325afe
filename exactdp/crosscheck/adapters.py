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

from ..composition import Composition
from ..numbers import ExactReal
from .cases import Case

__all__ = ["Reported", "NotApplicable", "Api", "Adapter", "ADAPTERS", "adapter_names", "get_adapter"]


@dataclass(frozen=True)
class Reported:
    """A library's answer: ``value`` (its claimed upper bound) for ``composition`` at ``at``."""

    value: Any
    composition: Composition
    at: Fraction
    note: str = ""


class NotApplicable(Exception):
    """The API cannot express this case (e.g. an approximate-DP mechanism in a pure-DP API)."""


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

    def available(self) -> tuple[bool, str]:
        """(importable, version or the reason it is not)."""
        try:
            importlib.import_module(self.module)
        except Exception as exc:  # ImportError, or a broken install
            return False, f"not installed ({type(exc).__name__}: {exc}); pip install '{self.distribution or self.library}'"
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


# -- dp_accounting ---------------------------------------------------------------------------------

def _dp_accounting_apis() -> list[Api]:
    import dp_accounting
    from dp_accounting.pld import accountant as pld_closed_forms
    from dp_accounting.pld import common, privacy_loss_distribution as pldlib
    from dp_accounting.rdp import rdp_privacy_accountant as rdplib

    NR = dp_accounting.NeighboringRelation

    def vdi(case: Case) -> float:
        # 1e-4 (the library default) unless the loss range would need millions of bins.
        tot = _max_total_eps(case)
        return 1e-4 if tot <= 40 else 10.0 ** math.ceil(math.log10(_fl(tot) / 4e5))  # float ok: a grid size

    def pld_params(case: Case) -> Reported:
        comp, at, groups = _as_given(case)
        h = vdi(case)
        pld = None
        for e, d, c in groups:
            one = pldlib.from_privacy_parameters(common.DifferentialPrivacyParameters(e, d),
                                                 value_discretization_interval=h)
            part = one.self_compose(c) if c > 1 else one
            pld = part if pld is None else pld.compose(part)
        assert pld is not None
        val = pld.get_epsilon_for_delta(_fl(at)) if case.query == "epsilon" else pld.get_delta_for_epsilon(_fl(at))
        return Reported(val, comp, at, f"value_discretization_interval={h:g}")

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

    def pld_accountant(case: Case) -> Reported:
        from dp_accounting.pld import pld_privacy_accountant

        event, comp = rr_events(case)
        h = vdi(case)
        acc = pld_privacy_accountant.PLDAccountant(NR.REPLACE_ONE, value_discretization_interval=h)
        acc.compose(event)
        at = _back(_fl(case.at))
        val = acc.get_epsilon(_fl(at)) if case.query == "epsilon" else acc.get_delta(_fl(at))
        return Reported(val, comp, at, f"SelfComposedDpEvent(RandomizedResponseDpEvent(p, 2), k), REPLACE_ONE, vdi={h:g}")

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
        val = acc.get_epsilon(_fl(at)) if case.query == "epsilon" else acc.get_delta(_fl(at))
        return Reported(val, Composition.heterogeneous(mechs), at, f"ComposedDpEvent([RR(p, 2)] * k), vdi={h:g}")

    def rdp_accountant(case: Case) -> Reported:
        event, comp = rr_events(case)
        acc = rdplib.RdpAccountant(neighboring_relation=NR.REPLACE_ONE)
        acc.compose(event)
        at = _back(_fl(case.at))
        val = acc.get_epsilon(_fl(at)) if case.query == "epsilon" else acc.get_delta(_fl(at))
        return Reported(val, comp, at, "RandomizedResponseDpEvent(p, 2), REPLACE_ONE, default orders")

    def advanced(case: Case) -> Reported:
        if not case.is_homogeneous or case.query != "epsilon":
            raise NotApplicable("advanced_composition answers eps for k equal mechanisms")
        comp, at, groups = _as_given(case)
        (e, d, k), = groups
        val = pld_closed_forms.advanced_composition(common.DifferentialPrivacyParameters(e, d), k, _fl(at))
        return Reported(val, comp, at, "None means no eps (reported as inf)")

    def calibrate(case: Case) -> Reported:
        # Calibration: the per-mechanism eps for a total (eps_g, delta_g), eps_g = 3/4 k eps.  The
        # claim "k-fold composition of (eps_ret, delta) is (eps_g, delta_g)-DP" is judged as an eps
        # claim of value eps_g on the composition the library returned.
        if not case.is_homogeneous or case.query != "epsilon":
            raise NotApplicable("calibration is run on the homogeneous eps cases")
        (e, d, k), = case.groups
        target = _back(_fl(Fraction(3, 4) * e * k))
        at = _back(_fl(case.at))
        per = pld_closed_forms.get_smallest_epsilon_from_advanced_composition(
            common.DifferentialPrivacyParameters(_fl(target), _fl(at)), k, _fl(d))
        if per is None:
            raise NotApplicable("no per-mechanism eps (delta_g below 1 - (1-delta)^k)")
        comp = Composition.homogeneous(_back(per), _back(_fl(d)), k)
        return Reported(_fl(target), comp, at, f"returned per-mechanism eps {per!r} for total eps_g {_fl(target)!r}; "
                                               "reported = eps_g, judged on the returned composition")

    return [
        Api("dp_accounting", "pld.from_privacy_parameters+compose", pld_params),
        Api("dp_accounting", "PLDAccountant(SelfComposedDpEvent(RandomizedResponseDpEvent))", pld_accountant),
        Api("dp_accounting", "PLDAccountant(ComposedDpEvent([RR]*k))", pld_accountant_list),
        Api("dp_accounting", "RdpAccountant(RandomizedResponseDpEvent)", rdp_accountant),
        Api("dp_accounting", "pld.accountant.advanced_composition", advanced),
        Api("dp_accounting", "pld.accountant.get_smallest_epsilon_from_advanced_composition", calibrate),
    ]


# -- prv_accountant --------------------------------------------------------------------------------

def _prv_apis() -> list[Api]:
    from prv_accountant import ApproximateDPMechanism, PRVAccountant, PureDPMechanism

    def prv(case: Case) -> Reported:
        comp, at, groups = _as_given(case)
        prvs = [ApproximateDPMechanism(e, d) if d > 0 else PureDPMechanism(e) for e, d, _ in groups]
        counts = [c for _, _, c in groups]
        delta_error = _fl(at) * 1e-3 if case.query == "epsilon" else 1e-10
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            acc = PRVAccountant(prvs=prvs, max_self_compositions=counts, eps_error=0.01, delta_error=delta_error)
            if case.query == "epsilon":
                lo, est, up = acc.compute_epsilon(_fl(at), counts)
            else:
                lo, est, up = acc.compute_delta(_fl(at), counts)
        return Reported(up, comp, at, f"upper of (lower, estimate, upper) = ({lo!r}, {est!r}, {up!r}); "
                                      f"eps_error=0.01, delta_error={delta_error:g}")

    return [Api("prv_accountant", "PRVAccountant(Pure/ApproximateDPMechanism).upper", prv)]


# -- autodp ----------------------------------------------------------------------------------------

def _autodp_apis() -> list[Api]:
    from autodp import mechanism_zoo, transformer_zoo

    def pure(case: Case) -> Reported:
        _pure_only(case)
        if case.query != "epsilon":
            raise NotApplicable("autodp answers get_approxDP(delta)")
        comp, at, groups = _as_given(case)
        mechs = [mechanism_zoo.PureDP_Mechanism(e, name=f"PureDP{i}") for i, (e, _, _) in enumerate(groups)]
        composed = transformer_zoo.Composition()(mechs, [c for _, _, c in groups])
        return Reported(composed.get_approxDP(_fl(at)), comp, at, "Composition()(PureDP_Mechanism...).get_approxDP")

    def rr(case: Case) -> Reported:
        _pure_only(case)
        if case.query != "epsilon":
            raise NotApplicable("autodp answers get_approxDP(delta)")
        at = _back(_fl(case.at))
        mechs, exact = [], []
        for i, (e, _, c) in enumerate(case.groups):
            p = 1.0 - _rr_p(e) / 2.0  # probability of the truth  # float ok: exact eps recomputed from p
            mechs.append(mechanism_zoo.RandresponseMechanism(p=p, name=f"RR{i}"))
            exact.append((ExactReal.log(_back(p) / (1 - _back(p))), 0, c))
        composed = transformer_zoo.Composition()(mechs, [c for _, _, c in case.groups])
        return Reported(composed.get_approxDP(_fl(at)), Composition.heterogeneous(exact), at,
                        "Composition()(RandresponseMechanism...).get_approxDP")

    return [
        Api("autodp", "Composition(PureDP_Mechanism).get_approxDP", pure),
        Api("autodp", "Composition(RandresponseMechanism).get_approxDP", rr),
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
        if case.query != "epsilon":
            raise NotApplicable("the privacy profile is queried for eps at delta")
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

    return [
        Api("opendp", "make_composition(make_randomized_response_bool)", basic),
        Api("opendp", "zCDP route: make_zCDP_to_approxDP(make_composition(make_pureDP_to_zCDP(RR)))", zcdp_route),
    ]


ADAPTERS: dict[str, Adapter] = {
    a.library: a
    for a in [
        Adapter("dp_accounting", "dp_accounting", _dp_accounting_apis, "dp-accounting"),
        Adapter("prv_accountant", "prv_accountant", _prv_apis, "prv-accountant"),
        Adapter("autodp", "autodp", _autodp_apis, "autodp"),
        Adapter("opendp", "opendp", _opendp_apis, "opendp"),
    ]
}


def adapter_names() -> list[str]:
    return list(ADAPTERS)


def get_adapter(name: str) -> Adapter:
    key = name.replace("-", "_").lower()
    if key not in ADAPTERS:
        raise KeyError(f"library={name!r} must be one of {', '.join(ADAPTERS)}")
    return ADAPTERS[key]
