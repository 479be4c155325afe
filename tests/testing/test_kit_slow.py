"""Slow kit checks (CI runs them in their own step: python -m pytest -m slow).

A claim inside the first certified bracket of a DP-SGD composition is settled by refining it with
a longer budget (docs/kit.md §3): prv_accountant's 0.2.0 upper bound 1.8383716712398843 for
sigma 1, q 0.01, 1000 steps at delta 1e-5 (eps in [1.8277, 1.8292], docs/pld.md §6) is sound.
"""

from __future__ import annotations

import pytest

from exactdp.model.mechanisms import Gaussian, PoissonSampled
from exactdp.testing import Oracle, judge

SGD = [(PoissonSampled(Gaussian("1"), "0.01"), 1000)]


@pytest.mark.slow
def test_a_claim_near_the_optimum_is_decided_with_a_longer_budget() -> None:
    v = judge(1.8383716712398843, SGD, delta_g="1e-5", oracle=Oracle(max_seconds=20))
    assert v.verdict == "sound"
    w = judge(1.8270, SGD, delta_g="1e-5", oracle=Oracle(max_seconds=20))
    assert w.verdict == "unsound"
