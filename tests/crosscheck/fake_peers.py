"""Fake peer libraries for the tests of the cross-check's limits and executors (module-level, so
they pickle into worker processes and Dask workers).  Their answers are known exactly: ``ok``
answers the KOV15 optimum of CASE_E rounded up (sound), ``hog`` allocates without bound, ``sleepy``
never returns in time, ``crash`` dies without an answer, ``boom`` raises."""

from __future__ import annotations

import os
import time
from fractions import Fraction

from exactdp.crosscheck.adapters import Adapter, Api, NotApplicable, Reported
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
