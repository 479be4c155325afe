"""Issue 25 §2: lists on a common lattice with many copies answer in bounded memory and time.

(0.01, 0.05, 0.1, 0.2, 0.3) x 10^4 at delta_g 1e-6 took past 21 GB and 150 s: its Murtagh-Vadhan
profile was built in fixed point over 660,001 atoms at ever higher precision.  Such lists now go to
the PLD lattice (route.MV_FIXED_POINT_ATOMS), and a fixed-point profile build refuses, by name and
before it allocates, to pass the memory bound (exactdp.core.memory).  A family of lists is tested, not one row:
each runs as a user would, under a 3 GB address-space limit, and small members are checked against
the Murtagh-Vadhan engine (an independent computation: exact counting on the profile).
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path

import pytest

from exactdp.core import memory
from exactdp.core.errors import MemoryBoundError
from exactdp.engines import mv
from exactdp.engines.pld import engine as pld
from exactdp.model.composition import Composition
from exactdp.route import MV_FIXED_POINT_ATOMS, route

EXE = str(Path(sys.executable).parent / "exactdp")
RNG = random.Random(2025)
FAMILY = [("0.01", "0.05", "0.1", "0.2", "0.3")] + [
    tuple(str(Fraction(a, 100)) for a in sorted(RNG.sample(range(1, 51), 5))) for _ in range(4)]


@pytest.mark.parametrize("values", FAMILY)
@pytest.mark.parametrize("digits", [10, 25])
def test_five_lattice_values_times_ten_thousand_answer_in_bounded_memory(values: tuple[str, ...], digits: int,
                                                                        tmp_path: Path) -> None:
    args = " ".join(f"--mechanism {v},0,10000" for v in values)
    start = time.monotonic()
    r = subprocess.run(["bash", "-c", f"ulimit -v 3000000; {EXE} epsilon {args} --at-delta 1e-6 --digits {digits} "
                        "--json"], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    wall = time.monotonic() - start
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["digits"] == digits and wall < 30, (out, wall)
    lo, hi = Fraction(out["lower"]), Fraction(out["upper"])
    assert 0 < lo <= hi <= sum(Fraction(v) * 10000 for v in values)  # within basic composition


@pytest.mark.parametrize("values", FAMILY)
def test_the_lattice_route_agrees_with_the_exact_profile_where_both_are_cheap(values: tuple[str, ...]) -> None:
    comp = Composition.heterogeneous([(v, "0", 200) for v in values])
    a = mv.mv_epsilon(comp, Fraction(1, 10**6), digits=12)
    b = pld.pld_epsilon(comp, Fraction(1, 10**6), digits=12)
    assert max(a.lower, b.lower) <= min(a.upper, b.upper), (a, b)  # both contain the one true value


def test_large_fixed_point_lattices_route_to_the_pld_lattice() -> None:
    big = Composition.heterogeneous([(v, "0", 10**4) for v in FAMILY[0]])
    assert route(big).engine.name == "pld"
    small = Composition.heterogeneous([(v, "0", 10) for v in FAMILY[0]])
    prof = route(small).payload
    assert route(small).engine.name == "mv" and prof.n <= MV_FIXED_POINT_ATOMS


def test_a_fixed_point_profile_refuses_to_pass_its_memory_bound() -> None:
    comp = Composition.heterogeneous([(v, "0", 57) for v in FAMILY[0]])  # a count no other test builds
    with memory.bounded("64M"), pytest.raises(MemoryBoundError, match="atoms at .* bits would take about .* "
                                               "past the memory bound"):
        mv.mv_epsilon(comp, Fraction(1, 10**6), digits=10)
