"""Issue 29 §1-§2: routes chosen by predicted cost, and the exact lattice sized by its own memory.

- A list with one huge group and few joint outcomes of the others can be answered by binomial tails
  or by the exact lattice; the row is the one predicted faster (exactdp.route: ``lattice_seconds``
  against ``tails_seconds``), and the JSON's reason names both predictions.  The shape rule before
  (a lattice of at most 50,000 points) sent the list below, a lattice of about 70,000 points
  composed in 0.6 s, to the tails (5.6 s).
- The exact lattice is composed in fixed point (docs/pld.md §7.1): its memory is predicted per
  lattice point from the fixed-point build (``lattice_bytes``), not from the ball-arithmetic grids
  (``build_bytes``, about ten times more).  Under ``--max-memory 250M`` a lattice of 1.3 x 10^5
  points was refused before (grids, 5 digits, "stopped_by": "memory") and is now composed: all
  10 digits, the process's peak under the bound.

Every answer is checked against the independent grouped binomial sum of exactdp.testing.families
(mpmath, up to three groups): delta(upper) <= delta_g <= delta(lower).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import mpmath
import pytest

from exactdp import Composition, optimal_epsilon
from exactdp.engines import tails
from exactdp.engines.pld.plan import build_bytes, lattice_bytes, lattice_seconds, plan, prec_for
from exactdp.engines.pld.refine import fits, grid_seconds, lattice_fits
from exactdp.route import route
from exactdp.testing.families import mv_delta

F = Fraction
#: one huge group, 201 x 21 joint outcomes of the others, on the lattice 1/1000 (about 7 x 10^4 points)
FAST_LATTICE = [(F(13, 1000), F(0), 30000), (F(27, 1000), F(0), 200), (F(1, 10), F(0), 20)]
#: three values on 1/1000, no tails (301 x 301 outcomes), no affordable exact profile: the PLD lattice
#: of about 1.3 x 10^5 points
MEMORY_LATTICE = [(F(13, 1000), F(0), 100000), (F(27, 1000), F(0), 300), (F(71, 1000), F(0), 300)]


def _contains(groups: list[tuple[Fraction, Fraction, int]], delta_g: Fraction, lo: Fraction, hi: Fraction) -> None:
    """The bracket [lo, hi] of eps at delta_g holds the true eps: delta(hi) <= delta_g <= delta(lo)."""
    with mpmath.workdps(60):
        dg = mpmath.mpf(delta_g.numerator) / delta_g.denominator
        assert mv_delta(groups, hi) <= dg <= mv_delta(groups, lo), (lo, hi)


def test_the_route_is_the_one_predicted_faster_and_the_reason_says_so() -> None:
    comp = Composition.heterogeneous(FAST_LATTICE)
    assert tails.tails_applies(comp)  # both routes can answer
    lat, tl = lattice_seconds(plan(comp), 10), tails.tails_seconds(comp)
    assert lat < tl
    r = route(comp)
    assert r.row == "small-lattice", r
    assert "predicted" in r.reason and f"{tl:.2g} s" in r.reason and f"{lat:.2g} s" in r.reason
    delta_g = F(1, 10**6)
    enc = optimal_epsilon(comp, delta_g, digits=10)
    assert enc.algorithm == "pld-lattice" and enc.digits == 10
    _contains(FAST_LATTICE, delta_g, enc.lower, enc.upper)


def test_a_list_predicted_faster_by_tails_stays_with_the_tails() -> None:
    # off every small grid there is no lattice: the tails (predicted finite) answer
    groups = [(F(1234567, 10**7), F(0), 5000), (F(2345671, 10**7), F(0), 3)]
    comp = Composition.heterogeneous(groups)
    r = route(comp)
    assert r.row == "tails" and "predicted" in r.reason and "binomial tails over 4 outcomes" in r.reason, r
    delta_g = F(1, 10**5)
    enc = optimal_epsilon(comp, delta_g, digits=12)
    assert enc.algorithm == "binomial-tails"
    _contains(groups, delta_g, enc.lower, enc.upper)


def test_the_lattice_memory_is_predicted_in_fixed_point() -> None:
    pl = plan(Composition.heterogeneous(MEMORY_LATTICE))
    assert pl.lattice == F(1, 1000)
    prec = prec_for(10, F(1))
    assert 5 * lattice_bytes(pl, prec) < build_bytes(pl, pl.lattice, prec)
    assert 10 << 20 < lattice_bytes(pl, prec) < 100 << 20


@pytest.mark.slow  # 8-12 s (CI time: the main step)
@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads the peak from /proc")
def test_a_lattice_that_fits_in_fixed_point_is_composed_under_the_memory_bound(tmp_path: Path) -> None:
    (tmp_path / "l.csv").write_text("".join(f"{e.numerator / e.denominator},0,{c}\n" for e, _, c in MEMORY_LATTICE))
    code = ("import sys, json; from exactdp.cli import main; rc = main(sys.argv[1:]); "
            "hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM:')][0].split()[1]; "
            "print(json.dumps({'rc': rc, 'peak': int(hwm) * 1024}))")
    args = ["epsilon", "--mechanisms", "l.csv", "--at-delta", "1e-6", "--digits", "10", "--json",
            "--max-memory", "250M", "--max-seconds", "60"]
    r = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=180,
                       cwd=tmp_path, check=False)
    lines = r.stdout.strip().splitlines()
    out, tail = json.loads(lines[0]), json.loads(lines[-1])
    assert tail["rc"] == 0 and tail["peak"] <= 250 << 20, (tail, r.stderr[-300:])
    assert out["algorithm"] == "pld-lattice" and out["digits"] == 10 and "stopped_by" not in out, out
    _contains(MEMORY_LATTICE, F(1, 10**6), F(out["lower"]), F(out["upper"]))


def test_the_whole_lattice_only_when_it_beats_the_grids_for_the_width_asked() -> None:
    # 5 values on 1/1000 with 10^4 .. 10^6 copies: about 1.9 x 10^6 lattice points, past the grids'
    # memory prediction (build_bytes) but not the fixed-point one
    comp = Composition.heterogeneous([(F(v, 1000), F(0), c) for v, c in
                                      zip((13, 27, 41, 66, 100), (10**4, 10**5, 10**6, 3 * 10**4, 2 * 10**5))])
    pl = plan(comp)
    prec = prec_for(10, F(1))
    assert not fits(pl, pl.lattice, prec) and lattice_bytes(pl, prec) < 1 << 30
    assert grid_seconds(pl, 1e-10) > lattice_seconds(pl, 10) > grid_seconds(pl, 1e-5)
    assert lattice_fits(pl, prec, 10, 108.0, 1e-10)       # 10 digits: the lattice, in one pass
    assert not lattice_fits(pl, prec, 10, 108.0, 1e-5)    # a loose width: a coarse grid is faster
    assert not lattice_fits(pl, prec, 10, 5.0, 1e-10)     # a short budget: the grids, whatever they reach
