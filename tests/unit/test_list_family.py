"""Issue 29: a family of lists, not a row.  Every member answers (certified, "digits" truthful) or
refuses by name within its time budget, under a 3 GB address-space limit, as a user runs it.

The lists come from exactdp.testing.families (seeded: 1 to 10 distinct values on grids 1/10 to
1/1000 or off-grid, counts 10^2 to 10^7, delta_i zero or not, delta_g 1e-3 to 1e-12).  Where the
mpmath oracle of that module is affordable (a grouped binomial sum, checked here against brute
force over subsets), the printed ends are checked against it: delta(upper) <= delta_g <= delta(lower).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path
from typing import Any

import mpmath
import pytest

from exactdp.route import ROUTES
from exactdp.testing.families import GRIDS, FamilyList, brute_force_delta, family, family_list, mv_delta, oracle_cost

EXE = str(Path(sys.executable).parent / "exactdp")
BUDGET, MARGIN = 30, 15  # --max-seconds, and the slack of a loaded two-core machine
MEMORY_KB = 3_000_000
ORACLE_COST = 250_000  # terms: a few seconds of mpmath
N = 50
#: the members run by default (under ~60 s in all on the development machine); the rest are slow
DEFAULT = (1, 5, 6, 8, 10, 11, 12, 14, 17, 18, 19, 20, 21, 23, 24, 26, 27, 28, 29, 31, 32, 35, 37, 40, 42, 45, 46,
           47, 49)
#: the members run in CI's slow step (every other one of the rest: CI stays under its 30 minutes);
#: EXACTDP_FULL_FAMILY=1 runs all of them (benchmarks/bench_list_family.py runs all 50 too)
_REST = tuple(s for s in range(N) if s not in DEFAULT)
SLOW = _REST if os.environ.get("EXACTDP_FULL_FAMILY") else _REST[::2]

F = Fraction
ROWS = {row.name: row.reason for row in ROUTES}


def _q(x: Fraction) -> mpmath.mpf:
    return mpmath.mpf(x.numerator) / x.denominator


# -- the oracle and the generator ----------------------------------------------------------------

@pytest.mark.parametrize("seed", range(6))
def test_the_grouped_oracle_is_the_sum_over_subsets(seed: int) -> None:
    rng = random.Random(seed)
    grid = rng.choice((10, 100, 10**7))
    groups = [(F(rng.randint(1, grid // 2), grid), F(rng.choice((0, 0, 1)), 1000), rng.randint(1, 4))
              for _ in range(rng.randint(1, 3))]
    mechs = [(e, d) for e, d, c in groups for _ in range(c)]
    for eps_g in (F(0), F(1, 7), F(rng.randint(0, 20), 10)):
        a, b = mv_delta(groups, eps_g), brute_force_delta(mechs, eps_g)
        assert abs(a - b) <= mpmath.mpf(10) ** -50, (groups, eps_g, a, b)


def test_the_family_is_seeded_and_spans_the_issue_ranges() -> None:
    members = family(N)
    assert members == family(N) and family_list(7) == members[7]
    assert {m.grid for m in members} == set(GRIDS)
    assert {len(m.groups) for m in members} >= {1, 2, 3, 5, 10}
    counts = [c for m in members for _, _, c in m.groups]
    assert min(counts) >= 100 and max(counts) <= 10**7 and min(counts) < 10**3 and max(counts) > 10**6
    assert F(1, 10**12) <= min(m.delta_g for m in members) < F(1, 10**10)
    assert F(1, 10**4) < max(m.delta_g for m in members) <= F(5, 10**3)
    assert any(d != 0 for m in members for _, d, _ in m.groups)
    assert any(all(d == 0 for _, d, _ in m.groups) for m in members)
    for m in members:
        assert all(0 < e <= F(1, 2) and (m.grid == 0 or (e * m.grid).denominator == 1) for e, _, _ in m.groups)
        assert len({e for e, _, _ in m.groups}) == len(m.groups)
    assert sum(oracle_cost(m.groups) <= ORACLE_COST for m in members) >= 8  # the oracle checks a fair share


def test_the_json_says_which_route_answered_and_why(tmp_path: Path) -> None:
    # issue 29 §1: "say in the JSON which route and why"; one list per row the generic lists reach
    cases = {"homogeneous": "0.1,0,30\n", "small-lattice": "0.1,0,10000\n0.2,0,5\n",
             "exact-profile": "0.1,0,20\n0.5,1e-6,3\n", "otherwise": "0.01,0,10000\n0.05,0,10000\n"
             "0.1,0,10000\n0.2,0,10000\n0.3,0,10000\n"}
    for row, text in cases.items():
        (tmp_path / "l.csv").write_text(text)
        r = subprocess.run([EXE, "epsilon", "--mechanisms", "l.csv", "--at-delta", "1e-6", "--digits", "6", "--json"],
                           capture_output=True, text=True, timeout=120, cwd=tmp_path, check=False)
        out = json.loads(r.stdout)
        # the rows chosen by a prediction name it after the row's reason (issue 29 §1)
        assert r.returncode == 0 and out["route"] == row and out["reason"].startswith(ROWS[row]), (row, out)
        assert ("predicted" in out["reason"]) == (row in ("small-lattice", "tails")), out
    r = subprocess.run([EXE, "delta", "--mechanisms", "l.csv", "--at-eps", "900", "--digits", "6", "--json"],
                       capture_output=True, text=True, timeout=120, cwd=tmp_path, check=False)
    assert json.loads(r.stdout)["route"] == "otherwise"
    r = subprocess.run([EXE, "epsilon", "--mechanisms", "l.csv", "--at-delta", "1e-6", "--method", "basic", "--json"],
                       capture_output=True, text=True, timeout=120, cwd=tmp_path, check=False)
    assert "route" not in json.loads(r.stdout)  # a bound, not a route of the optimum


# -- every member, as a user runs it ---------------------------------------------------------------

def _run(seed: int, tmp_path: Path) -> tuple[subprocess.CompletedProcess[str], float]:
    fl = family_list(seed)
    path = tmp_path / f"list{seed}.csv"
    path.write_text(fl.csv())
    dg = f"{fl.delta_g.numerator}/{fl.delta_g.denominator}"
    cmd = (f"ulimit -v {MEMORY_KB}; {EXE} epsilon --mechanisms {path} --at-delta {dg} --digits 10 --json "
           f"--max-seconds {BUDGET}")
    start = time.monotonic()
    r = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, timeout=BUDGET * 4,
                       cwd=tmp_path, check=False)
    return r, time.monotonic() - start


def _check(seed: int, tmp_path: Path) -> None:
    fl = family_list(seed)
    r, wall = _run(seed, tmp_path)
    assert wall < BUDGET + MARGIN, (fl.name, wall)
    if r.returncode in (2, 3):  # a refusal by name: one line on stderr, nothing on stdout
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("exactdp") and r.stdout == "", (fl.name, r.stderr)
        return
    assert r.returncode == 0, (fl.name, r.returncode, r.stderr)
    out = json.loads(r.stdout)
    assert out["route"] in ROWS and out["reason"].startswith(ROWS[out["route"]]), (fl.name, out)
    with mpmath.workdps(60):
        _against_the_oracle(fl, out)


def _against_the_oracle(fl: FamilyList, out: dict[str, Any]) -> None:
    pd = mpmath.fprod((1 - _q(d)) ** c for _, d, c in fl.groups)
    if out["upper"] == "inf":  # +inf is exact only when the delta_i alone pass delta_g (§1.3)
        assert out["lower"] == "inf" and 1 - pd > _q(fl.delta_g), fl.name
        return
    assert 1 - pd <= _q(fl.delta_g), fl.name  # finite exactly when the delta_i leave room
    lo, hi, digits = F(out["lower"]), F(out["upper"]), out["digits"]
    assert 0 <= lo <= hi <= sum(e * c for e, _, c in fl.groups), (fl.name, out)
    if digits > 0:  # "digits" is truthful on the printed ends
        assert hi - lo <= F(1, 10**digits) * lo, (fl.name, out)
    if oracle_cost(fl.groups) <= ORACLE_COST:
        tol = _q(fl.delta_g) * mpmath.mpf(10) ** -30
        assert mv_delta(fl.groups, hi) <= _q(fl.delta_g) + tol, (fl.name, out)
        if lo > 0:
            assert mv_delta(fl.groups, lo) >= _q(fl.delta_g) - tol, (fl.name, out)


@pytest.mark.parametrize("seed", DEFAULT)
def test_a_family_member_answers_or_refuses_by_name_within_its_budget(seed: int, tmp_path: Path) -> None:
    _check(seed, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("seed", SLOW)
def test_a_heavier_family_member_answers_or_refuses_by_name_within_its_budget(seed: int, tmp_path: Path) -> None:
    _check(seed, tmp_path)


def test_the_oracle_check_rejects_ends_moved_inward(tmp_path: Path) -> None:
    # the check has teeth: a point 10^-8 below the lower end or above the upper end of member 8
    # (one group, oracle-checked) is not the optimum
    r, _ = _run(8, tmp_path)
    out = json.loads(r.stdout)
    fl = family_list(8)
    lo, hi = F(out["lower"]), F(out["upper"])
    with mpmath.workdps(60):
        _against_the_oracle(fl, out)
        for wrong in (lo * (1 - F(1, 10**8)), hi * (1 + F(1, 10**8))):  # below the optimum, above it
            with pytest.raises(AssertionError, match="#8"):
                _against_the_oracle(fl, {**out, "lower": str(wrong), "upper": str(wrong)})


def test_the_default_and_slow_members_cover_the_family() -> None:
    assert sorted(DEFAULT + _REST) == list(range(N)) and set(SLOW) <= set(_REST) and len(DEFAULT) >= 24
    default = [family_list(s) for s in DEFAULT]
    assert {m.grid for m in default} == set(GRIDS) and max(len(m.groups) for m in default) >= 9
    assert sum(oracle_cost(m.groups) <= ORACLE_COST for m in default) >= 6
