"""OpenDP: compositions of measurements, the zCDP route and the privacy profile.

See docs/peers/opendp.md.  OpenDP is imported only when :func:`apis` runs.
"""

from __future__ import annotations

from typing import Any

from exactdp.core.numbers import ExactReal
from exactdp.crosscheck.adapters.base import Api, NotApplicable, Reported, Unsupported
from exactdp.crosscheck.adapters.given import (
    Part,
    exact_value,
    given_composition,
    parts_of,
    require_events,
    require_mechanisms,
    require_pure,
    rr_noise,
    to_float,
)
from exactdp.crosscheck.cases import Case
from exactdp.model.composition import Composition

__all__ = ["apis"]


def apis() -> list[Api]:
    """The APIs under test (imports the library)."""
    import opendp.prelude as dp

    dp.enable_features("contrib")

    def rr_measurements(case: Case) -> tuple[list[Any], Composition]:
        require_pure(case)
        ms, exact = [], []
        for e, _, c in case.groups:
            p = 1.0 - rr_noise(e) / 2.0  # float ok: exact eps recomputed from p
            m = dp.m.make_randomized_response_bool(prob=p)
            ms.extend([m] * c)
            exact.append((ExactReal.log(exact_value(p) / (1 - exact_value(p))), 0, c))
        return ms, Composition.heterogeneous(exact)

    def zcdp_route(case: Case) -> Reported:
        if case.query != "epsilon" or case.at == 0:
            raise NotApplicable("the privacy profile is queried for eps at delta > 0")
        if case.k > 2000:
            raise NotApplicable("too many measurements")
        ms, comp = rr_measurements(case)
        zs = [dp.c.make_pureDP_to_zCDP(m) for m in ms]
        profile = dp.c.make_zCDP_to_approxDP(dp.c.make_composition(zs)).map(1)
        at = exact_value(to_float(case.at))
        return Reported(profile.epsilon(to_float(at)), comp, at,
                        "make_randomized_response_bool -> make_pureDP_to_zCDP -> make_composition -> make_zCDP_to_approxDP")

    def basic(case: Case) -> Reported:
        if case.query != "epsilon":
            raise NotApplicable("basic composition reports eps")
        if case.k > 2000:
            raise NotApplicable("too many measurements")
        ms, comp = rr_measurements(case)
        at = exact_value(to_float(case.at))
        return Reported(dp.c.make_composition(ms).map(1), comp, at, "make_composition of pure-DP RR (eps at any delta)")

    # -- Gaussian (zCDP) and Laplace (pure DP) measurements, sensitivity d_in = 1 ---------------------
    def measurements(case: Case) -> tuple[list[Any], list[Part], str]:
        require_mechanisms(case)
        parts = parts_of(case)
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
        at = exact_value(to_float(case.at))
        val = prof.epsilon(to_float(at)) if case.query == "epsilon" else prof.delta(to_float(at))
        return Reported(val, given_composition(parts), at,
                        "make_composition -> make_zCDP_to_approxDP -> map(1.0) privacy profile "
                        "(Laplace through make_pureDP_to_zCDP)")

    def fix_delta(case: Case) -> Reported:
        if case.query != "epsilon" or case.at == 0:
            raise NotApplicable("make_fix_delta takes delta > 0")
        meas, parts = profile_of(case)
        eps, delta = dp.c.make_fix_delta(meas, to_float(case.at)).map(1.0)
        return Reported(eps, given_composition(parts), exact_value(float(delta)),  # float ok: the library's own delta
                        f"make_fix_delta(..., delta).map(1.0) = ({eps!r}, {delta!r}): the pair is judged")

    def pure_laplace(case: Case) -> Reported:
        ms, parts, kind = measurements(case)
        if kind != "pure" or case.query != "epsilon":
            raise NotApplicable("pure-DP composition of Laplace measurements reports eps")
        return Reported(dp.c.make_composition(ms).map(1.0), given_composition(parts), exact_value(to_float(case.at)),
                        "make_composition of make_laplace (MaxDivergence): eps at any delta")

    # -- the events-and-relations cases (issue 27 §6): integer measurements, sensitivity d_in -------------
    def integer_measurement(case: Case) -> tuple[Any, Composition, Any, str]:
        """(measurement, the exact composition it stands for, d_in, its output measure) of a one-group
        events case: the discrete Laplace and Gaussian on integers, and a Gaussian of any sensitivity
        (a relation's sensitivity is d_in; OpenDP has no subsampling); Unsupported otherwise."""
        from exactdp.model.mechanisms import DiscreteGaussian, DiscreteLaplace, Gaussian

        require_events(case)
        if len(case.mechanisms) != 1:
            raise Unsupported("one measurement, composed k times")
        m, count = case.mechanisms[0]
        if count > 2000:
            raise NotApplicable("too many measurements")
        ints = (dp.vector_domain(dp.atom_domain(T=int)),)
        if isinstance(m, DiscreteLaplace):
            scale = to_float(1 / m.noise)  # OpenDP's discrete Laplace has pmf proportional to e^{-|x|/scale}
            meas = dp.m.make_laplace(*ints, dp.l1_distance(T=int), scale=scale)
            exact: Any = DiscreteLaplace(1 / exact_value(scale), m.sensitivity)
            return meas, Composition(((exact, count),)), m.sensitivity, "pure"
        if isinstance(m, DiscreteGaussian):
            scale = to_float(m.sigma)
            meas = dp.m.make_gaussian(*ints, dp.l2_distance(T=int), scale=scale)
            return meas, Composition(((DiscreteGaussian(exact_value(scale), m.sensitivity), count),)), m.sensitivity, "zcdp"
        if isinstance(m, Gaussian) and m.sigma is not None and m.sensitivity.denominator == 1:
            scale = to_float(m.sigma)
            meas = dp.m.make_gaussian(dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.l2_distance(T=float),
                                      scale=scale)
            d_in: Any = float(m.sensitivity)  # float ok: an integral sensitivity, exactly a float
            return meas, Composition(((Gaussian(exact_value(scale), m.sensitivity), count),)), d_in, "zcdp"
        raise Unsupported(f"OpenDP has no measurement for {m} (no subsampling, no mixtures)")

    def events(case: Case) -> Reported:
        meas, comp, d_in, kind = integer_measurement(case)
        count = comp.groups[0][1]
        at = exact_value(to_float(case.at))
        if kind == "pure":
            eps = dp.c.make_composition([meas] * count).map(d_in)
            return Reported(eps, comp, at, f"make_composition of make_laplace on integers (MaxDivergence), map({d_in})")
        prof = dp.c.make_zCDP_to_approxDP(dp.c.make_composition([meas] * count)).map(d_in)
        return Reported(prof.epsilon(to_float(at)), comp, at,
                        f"make_zCDP_to_approxDP(make_composition(make_gaussian)) profile at map({d_in}); "
                        "integer domain for the discrete Gaussian")

    return [
        Api("opendp", "make_laplace/make_gaussian on integers [events and relations]", events),
        Api("opendp", "make_composition(make_randomized_response_bool)", basic),
        Api("opendp", "zCDP route: make_zCDP_to_approxDP(make_composition(make_pureDP_to_zCDP(RR)))", zcdp_route),
        Api("opendp", "make_zCDP_to_approxDP(make_composition(make_gaussian/make_laplace)) profile", profile),
        Api("opendp", "make_fix_delta(make_zCDP_to_approxDP(...)) (eps, delta) pair", fix_delta),
        Api("opendp", "make_composition(make_laplace) pure DP", pure_laplace),
    ]
