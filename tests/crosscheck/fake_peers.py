"""Fake peer libraries for the tests of the cross-check's limits and executors (module-level, so
they pickle into worker processes and Dask workers).  Their answers are known exactly: ``ok``
answers the KOV15 optimum of CASE_E rounded up (sound), ``hog`` allocates without bound, ``sleepy``
never returns in time, ``crash`` dies without an answer, ``boom`` raises."""

from __future__ import annotations

import math
import os
import time
from fractions import Fraction

from exactdp import Gaussian
from exactdp.crosscheck.adapters import Adapter, Api, CurveApi, NotApplicable, Reported, ReportedCurve
from exactdp.crosscheck.cases import Case

F = Fraction
CASE_E = Case("ref-eps", ((F(1, 10), F(0), 30),), "epsilon", F(1, 1000))  # optimum 1.48114398053990720...
CASE_D = Case("ref-delta", ((F(1, 10), F(1, 1000), 30),), "delta", F(1))  # optimum 0.0398184105221305750...
CASES = [CASE_E, CASE_D, Case("ref-pure", ((F(1, 2), F(0), 4),), "delta", F(2))]  # pure: delta = 0 at eps_g = 2


def ok(case: Case) -> Reported:
    if case.name == "ref-pure":
        raise NotApplicable
    value = 1.4811439805399073 if case.query == "epsilon" else 0.039818410522130578
    return Reported(value, case.composition(), case.at, "fake")


def hog(case: Case) -> Reported:
    blocks = [bytearray(2**28) for _ in range(64)]  # 16 GiB, a page at a time would be slow: whole blocks
    return Reported(float(len(blocks)), case.composition(), case.at)


def sleepy(case: Case) -> Reported:
    time.sleep(60)
    return ok(case)


def crash(case: Case) -> Reported:
    os._exit(3)  # dies at once, no answer


def boom(case: Case) -> Reported:
    raise OverflowError("math range error")


def build() -> list[Api]:
    return [Api("fakepeer", "fake.ok", ok), Api("fakepeer", "fake.hog", hog), Api("fakepeer", "fake.sleepy", sleepy),
            Api("fakepeer", "fake.crash", crash), Api("fakepeer", "fake.boom", boom)]


def build_fast() -> list[Api]:
    return [Api("fastpeer", "fast.ok", ok), Api("fastpeer", "fast.boom", boom)]


FAKE = Adapter("fakepeer", "json", build)  # 'json' is always importable
FAST = Adapter("fastpeer", "json", build_fast)


# -- fake RDP curves (the cross-check at the curve level, issue 28 §4) ------------------------------
# On CASE_G (100 x Gaussian(sigma=2), delta_g = 1e-5) the divergence is exactly 100 alpha / 8 at every
# order.  ``badcurve`` reports it correctly except at order 4, where it reports 10 % less, and converts
# its own curve correctly (so the fault is the curve's); ``badconv`` reports the curve correctly and
# converts it to half the eps its curve supports (so the fault is the conversion's).
CASE_G = Case("ref-gauss", (), "epsilon", F(1, 10**5), ("gaussian",), False, ((Gaussian(F(2)), 100),))
CURVE_ORDERS = (1.5, 2, 3, 4, 8, 16, 32)
WRONG_ORDER = 4


def exact_curve(orders: tuple[float, ...] = CURVE_ORDERS) -> list[float]:
    return [float(100 * F(a) / 8) for a in orders]  # exact: 100 a/8 is a dyadic rational for these orders


def cks_eps(orders: tuple[float, ...], rdp: list[float], delta: float) -> float:
    """The CKS20 conversion as dp_accounting computes it (floats), rounded up a little."""
    return min(r + math.log1p(-1 / a) - math.log(delta * a) / (a - 1) for a, r in zip(orders, rdp)) * (1 + 1e-9)


def bad_curve(case: Case) -> ReportedCurve:
    if case.name != "ref-gauss":
        raise NotApplicable
    rdp = exact_curve()
    rdp[CURVE_ORDERS.index(WRONG_ORDER)] *= 0.9
    return ReportedCurve(CURVE_ORDERS, tuple(rdp), case.composition(), "max",
                         cks_eps(CURVE_ORDERS, rdp, 1e-5), case.at, "fake: wrong at order 4")


def bad_conversion(case: Case) -> ReportedCurve:
    if case.name != "ref-gauss":
        raise NotApplicable
    rdp = exact_curve()
    return ReportedCurve(CURVE_ORDERS, tuple(rdp), case.composition(), "max",
                         cks_eps(CURVE_ORDERS, rdp, 1e-5) / 2, case.at, "fake: halves its eps")


def build_curves() -> list[CurveApi]:
    return [CurveApi("curvepeer", "fake.bad_curve", bad_curve), CurveApi("curvepeer", "fake.bad_conversion",
                                                                         bad_conversion)]


CURVES = Adapter("curvepeer", "json", list, curves=build_curves)
