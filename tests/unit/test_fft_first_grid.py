"""The FFT path's first grid answers in one grid where the plan's sd overstates the step's (issue 26).

The plan's moments come from a coarse quadrature; for sigma 2, q 0.001 its sd is about 3.6 times the
true loss sd, and the first grid used to miss the target (two grids: h = 1/4971 then 1/14351).  The
reference for the correction is independent: the chi-square divergence of the Gaussian base pair,
e^{mu^2} - 1, in closed form (mpmath), against the plan's quadrature.
"""

from __future__ import annotations

from fractions import Fraction

import mpmath

import exactdp.engines.pld.fftcompose as fc
from exactdp import Composition
from exactdp.core import progress
from exactdp.engines.pld.engine import pld_epsilon


def test_sigma2_row_takes_one_grid(monkeypatch) -> None:
    grids: set[Fraction] = set()
    orig = fc.discretize

    def counting(model, h, jmin, jmax, **kw):
        grids.add(h)
        return orig(model, h, jmin, jmax, **kw)

    monkeypatch.setattr(fc, "discretize", counting)
    comp = Composition.of(["gaussian:sigma=2,q=0.001,count=100000"])
    with progress.task("t", max_seconds=120, stream=None):
        e = pld_epsilon(comp, Fraction("1e-5"), digits=8, rel_width=Fraction("3.2e-3"))
    assert e.upper - e.lower <= Fraction("3.2e-3") * e.lower
    assert len(grids) == 1, sorted(grids)
    # the bracket holds the optimum's independent small-q estimate's neighbourhood: a sanity check
    # that the one grid answers about the right eps (GDP mu = q sqrt(k (e^{1/sigma^2} - 1)))
    mu = 0.001 * mpmath.sqrt(100000 * mpmath.expm1(mpmath.mpf(1) / 4))
    assert 0.3 < float(e.lower) < 1.5 and 0.1 < float(mu) < 0.2  # float ok: a test


def test_sd_correction_against_chi_square() -> None:
    from exactdp.engines.pld.fftcost import sd_correction
    from exactdp.engines.pld.plan import plan

    pl = plan(Composition.of(["gaussian:sigma=2,q=0.001,count=100000"]))
    sd = mpmath.sqrt(100000 * mpmath.mpf("1e-6") * mpmath.expm1(mpmath.mpf(1) / 4))
    assert abs(sd_correction(pl) - float(sd) / pl.sd) < 1e-9
    assert sd_correction(plan(Composition.of(["gaussian:sigma=1,q=0.01,count=1000"]))) == 1.0
