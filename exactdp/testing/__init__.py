"""Testing kit: exactdp as the oracle in another DP library's tests.

- :func:`assert_sound` / :func:`assert_sound_delta` / :func:`assert_sound_pair` /
  :func:`assert_sound_curve`: one-sided checks of a reported eps, delta, (eps, delta) pair or
  curve against the certified optimum (KOV15 Thm 3.3 / Murtagh-Vadhan Thm 1.5; the certified PLD
  bracket for Gaussian, Laplace and subsampled mechanisms), :func:`assert_tight` (two-sided) and
  :func:`looseness_report`; :func:`judge` gives the verdict itself (docs/kit.md);
- :func:`assert_rdp_sound` / :func:`assert_rdp_curve_sound` / :func:`judge_rdp`: a reported RDP
  value (or curve) against the certified Rényi divergence at each order (docs/kit.md §7);
- :func:`assert_tradeoff_sound` / :func:`assert_tradeoff_curve_sound` / :func:`judge_tradeoff`: a reported
  trade-off function f(alpha) against the certified beta(alpha) (docs/kit.md §8);
- :func:`assert_gdp_mu_sound` / :func:`judge_gdp_mu`: a reported Gaussian-DP mu against the certified
  GDP mu (docs/kit.md §8, docs/tradeoff.md §5);
- every assertion's ``composition=`` also takes a dp_accounting ``DpEvent`` or accountant, an Opacus
  accountant or an :class:`exactdp.Accountant` (:func:`exactdp.from_accountant`, ``relation=``);
- :func:`exact_floats`: floats as inputs, at their exact binary value;
- :func:`find_counterexample` / :func:`find_counterexample_heterogeneous`: search for an exact
  counterexample to a claimed composition bound, never passing vacuously (:class:`SearchStats`,
  :class:`VacuousSearchError`);
- :class:`Oracle`: the object the pytest fixture ``exactdp_oracle`` hands out;
- :mod:`exactdp.testing.strategies`: hypothesis strategies (imports hypothesis);
- :mod:`exactdp.testing.families`: a seeded family of heterogeneous lists (issue 29) and an
  independent mpmath oracle of their optimum (grouped binomial sums);
- :mod:`exactdp.testing.plugin`: the pytest fixtures (``exactdp_oracle``, ``exactdp_golden``).

Importing this package imports neither hypothesis nor pytest.
"""

from __future__ import annotations

from exactdp.core.numbers import exact_floats
from exactdp.testing.assertions import (
    LoosenessReport,
    TooLooseError,
    UndecidedClaimError,
    UnsoundClaimError,
    assert_sound,
    assert_sound_curve,
    assert_sound_delta,
    assert_sound_pair,
    assert_tight,
    looseness_report,
)
from exactdp.testing.counterexample import (
    DECLINES,
    MIN_CHECKED,
    Counterexample,
    SearchStats,
    VacuousSearchError,
    covers_basic_delta,
    find_counterexample,
    find_counterexample_heterogeneous,
    find_delta_counterexample,
)
from exactdp.testing.gdp import GDP_VERDICTS, GdpJudgement, assert_gdp_mu_sound, judge_gdp_mu
from exactdp.testing.judge import FP_ULPS, LOOSE_REL, VERDICTS, Judgement, judge
from exactdp.testing.oracle import (
    FP_LEVEL,
    InvalidClaimError,
    Oracle,
    Verdict,
    as_composition,
    exact_of_reported,
    judge_delta,
    judge_epsilon,
)
from exactdp.testing.rdp import (
    RDP_VERDICTS,
    RdpJudgement,
    assert_rdp_curve_sound,
    assert_rdp_sound,
    judge_rdp,
)
from exactdp.testing.tradeoff import (
    TRADEOFF_VERDICTS,
    TradeoffJudgement,
    assert_tradeoff_curve_sound,
    assert_tradeoff_sound,
    judge_tradeoff,
)

__all__ = [
    "DECLINES",
    "FP_LEVEL",
    "FP_ULPS",
    "GDP_VERDICTS",
    "LOOSE_REL",
    "MIN_CHECKED",
    "RDP_VERDICTS",
    "TRADEOFF_VERDICTS",
    "VERDICTS",
    "Counterexample",
    "GdpJudgement",
    "InvalidClaimError",
    "Judgement",
    "LoosenessReport",
    "Oracle",
    "RdpJudgement",
    "SearchStats",
    "TooLooseError",
    "TradeoffJudgement",
    "UndecidedClaimError",
    "UnsoundClaimError",
    "VacuousSearchError",
    "Verdict",
    "as_composition",
    "assert_gdp_mu_sound",
    "assert_rdp_curve_sound",
    "assert_rdp_sound",
    "assert_sound",
    "assert_sound_curve",
    "assert_sound_delta",
    "assert_sound_pair",
    "assert_tight",
    "assert_tradeoff_curve_sound",
    "assert_tradeoff_sound",
    "covers_basic_delta",
    "exact_floats",
    "exact_of_reported",
    "find_counterexample",
    "find_counterexample_heterogeneous",
    "find_delta_counterexample",
    "judge",
    "judge_delta",
    "judge_epsilon",
    "judge_gdp_mu",
    "judge_rdp",
    "judge_tradeoff",
    "looseness_report",
]
