"""The kit decides DP-SGD claims 1e-7 (relative) from the optimum, and never the wrong way near it
(issue 26's target: ``assert_sound`` at the kit's default budget, docs/pld.md §12.7).

The references are certified brackets of the optimal eps at delta_g = 1e-5 of sigma 1, q 0.01, from the
FFT path's eps query at a large memory bound and time budget (``pld_epsilon(..., rel_width=2e-8)``: a
different query from the decision at a claim, on its own grids and roots).  Each is checked here against
brackets from independent runs: the golden table's (tables/dpsgd.csv, the exact products) and, at 10^5
steps, the exact products' own bracket (``fft_path(False)``).  A claim is placed 1e-7 (relative) beyond
an end of the reference and rounded outward to a float, so it is at least 1e-7 from the optimum on the
side it is judged on.
"""

from __future__ import annotations

import csv
import math
from fractions import Fraction
from pathlib import Path

import pytest

from exactdp import Composition
from exactdp.core import progress
from exactdp.engines.pld.engine import pld_epsilon
from exactdp.engines.pld.fftquery import fft_path
from exactdp.testing import Oracle, UnsoundClaimError, assert_sound, judge

DG = Fraction(1, 10**5)
DPSGD = "gaussian:sigma=1,q=0.01,count=1000"
DPSGD_1E5 = "gaussian:sigma=1,q=0.01,count=100000"

#: the optimum of ``DPSGD`` at 1e-5, relative width 1.67e-8 (the FFT path's eps query, rel_width 2e-8,
#: a 14 GB memory bound: 30 s; the grid 1/~420000, windows of 2^23 points)
OPT_1E3 = (Fraction(4116822953341835, 2**51), Fraction(4116823022297417, 2**51))
#: the optimum of ``DPSGD_1E5`` at 1e-5, relative width 1.37e-7: the narrowest the path reaches.  The
#: float FFT's own error bound (docs/pld.md §12.3, linear in k: 4.8e-7 of the tilted mass at 10^5
#: steps and 2^25 points) leaves a floor of about 1.3e-7 on the width whatever the grid (1/289198:
#: 1.48e-7; 1/925123, 9.2 GB: 1.37e-7); the exact products stop at the memory bound near 3.7e-5
OPT_1E5 = (Fraction(899773650056855, 2**45), Fraction(899773773642209, 2**45))
#: an older certified bracket of ``DPSGD``'s optimum (relative width 1.5e-7, the eps query at a smaller
#: budget; decisions at nearer claims put the optimum inside it): tests/unit/test_pld_fft_decision.py
OPT_1E3_OLD = (Fraction(8233645540239619, 2**52), Fraction(8233646776839117, 2**52))

REL = Fraction(1, 10**7)


def _golden(mechanism: str) -> tuple[Fraction, Fraction]:
    path = Path(__file__).resolve().parents[2] / "tables" / "dpsgd.csv"
    with path.open() as f:
        for row in csv.DictReader(f):
            if row["mechanisms"] == f'["{mechanism}"]' and row["query"] == "epsilon" and row["at"] == "0.00001":
                return Fraction(row["lower"]), Fraction(row["upper"])
    raise AssertionError(f"the golden row {mechanism} is missing")


def _outward(x: Fraction, up: bool) -> float:
    """The float nearest x on the side away from the optimum (a claim keeps its distance)."""
    f = float(x)
    if (Fraction(f) < x) if up else (Fraction(f) > x):
        f = math.nextafter(f, math.inf if up else -math.inf)
    return f


def _claims(opt: tuple[Fraction, Fraction], rel: Fraction) -> tuple[float, float]:
    """(above, below): ``rel`` beyond the upper end and below the lower end, as floats, outward."""
    lo, hi = opt
    return _outward(hi * (1 + rel), True), _outward(lo * (1 - rel), False)


def test_the_references_lie_inside_independent_brackets() -> None:
    g_lo, g_hi = _golden(DPSGD)
    o_lo, o_hi = OPT_1E3_OLD
    lo, hi = OPT_1E3
    assert g_lo <= o_lo <= lo < hi <= o_hi <= g_hi
    assert hi - lo <= Fraction(2, 10**8) * lo


def _assert_decided(spec: str, opt: tuple[Fraction, Fraction]) -> None:
    above, below = _claims(opt, REL)
    assert Fraction(above) >= opt[1] * (1 + REL) and Fraction(below) <= opt[0] * (1 - REL)
    j = assert_sound(above, composition=spec, delta_g="1e-5")
    assert j.verdict == "sound"
    with pytest.raises(UnsoundClaimError) as e:
        assert_sound(below, composition=spec, delta_g="1e-5")
    assert e.value.verdict.verdict == "unsound"  # not excused as a floating-point slip


def test_dpsgd_1000_claims_1e7_from_the_optimum_are_decided() -> None:
    """1000 steps: the kit decides both claims at its default budget (about 1.3-1.7 s each alone)."""
    _assert_decided(DPSGD, OPT_1E3)


def test_claims_just_outside_the_bracket_are_never_decided_the_wrong_way() -> None:
    """Claims 1e-9 beyond the 1000-step reference (the optimum lies between them and the reference's
    ends): at a small budget the kit may leave them undecided, never call the upper one unsound or the
    lower one sound."""
    above, below = _claims(OPT_1E3, Fraction(1, 10**9))
    o = Oracle(max_seconds=1)
    assert judge(above, DPSGD, delta_g="1e-5", oracle=o).verdict in ("sound", "undecided")
    assert judge(below, DPSGD, delta_g="1e-5", oracle=o).verdict in ("unsound", "unsound-fp", "undecided")


@pytest.mark.slow  # the exact products' bracket of 10^5 steps: about 15 s
def test_dpsgd_100000_claims_1e7_from_the_reference_are_decided() -> None:
    """10^5 steps: the reference lies inside the exact products' bracket, and the kit decides the claims
    1e-7 beyond it at its default budget (about 3-3.7 s each alone)."""
    with fft_path(False), progress.task("t", max_seconds=60, stream=None):
        ex = pld_epsilon(Composition.of([DPSGD_1E5]), DG, digits=4)
    lo, hi = OPT_1E5
    assert ex.lower <= lo < hi <= ex.upper
    _assert_decided(DPSGD_1E5, OPT_1E5)
