"""The FFT path's aiming steps (docs/pld.md §12.10): the faster ``choose_theta``, ``eps_hint`` and
``fftpower.window_for`` choose what the earlier scalar versions chose.  The earlier versions are kept
HERE (reference copies, not in the package).  Aiming is never a soundness matter (every bound is
certified afterwards); these tests keep the benchmark rows' grids, tilts and windows unchanged."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from flint import ctx

from exactdp import Composition
from exactdp.engines.pld import fftcompose as C
from exactdp.engines.pld.fftpower import window_for
from exactdp.engines.pld.plan import plan as plan_of


def _old_choose_theta(p: np.ndarray, k: int, h: Fraction, target: float) -> Fraction:
    hf = float(h)
    i = np.arange(p.shape[0], dtype=np.float64)

    def mean(theta: float) -> float:
        z = np.log(np.maximum(p, 1e-320)) + theta * hf * i
        w = np.exp(z - z.max())
        return float(k * hf * (w * i).sum() / w.sum())

    if not target > mean(0.0):
        return Fraction(0)
    lo, hi = 0.0, 1.0
    while mean(hi) < target and hi < 1e4:
        lo, hi = hi, hi * 2
    for _ in range(32):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if mean(mid) < target else (lo, mid)
    return Fraction(lo).limit_denominator(1 << 20)


def _old_eps_hint(up, k: int, delta_g: Fraction) -> float | None:
    hf = float(up.h)
    with ctx.workprec(64):
        p = np.maximum(np.array([float(x.mid()) for x in up.P.coeffs()]), 0.0)
    nz = np.nonzero(p > 0)[0]
    if nz.shape[0] < 2:
        return None
    lp = np.log(p[nz])
    i = nz.astype(np.float64)
    target = math.log(float(delta_g))

    def at(theta: float) -> tuple[float, float]:
        z = lp + theta * hf * i
        zm = z.max()
        w = np.exp(z - zm)
        sw = w.sum()
        mean = float((w * i).sum() / sw)
        var = float((w * (i - mean) ** 2).sum() / sw)
        log_m = zm + math.log(sw)
        s = math.sqrt(max(k * var, 1e-300)) * hf
        log_d = (k * log_m - theta * k * mean * hf + math.log(1 / theta - 1 / (theta + 1))
                 - math.log(s * math.sqrt(2 * math.pi)))
        return (up.offset + mean) * k * hf, log_d

    lo, hi = 1e-6, 1.0
    while at(hi)[1] > target and hi < 1e6:
        lo, hi = hi, hi * 2
    for _ in range(32):
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if at(mid)[1] > target else (lo, mid)
    return at(hi)[0]


def _old_window_for(t: np.ndarray, k: int, log_target: float, rate: float) -> tuple[int, int]:
    """The earlier ``fftpower.window_for`` (its ``_NEEDS`` bookkeeping left out)."""
    top = k * (t.shape[0] - 1)
    nz = np.nonzero(t > 0)[0]
    lt = np.log(t[nz])
    j = nz.astype(np.float64)

    def at(lam: float) -> tuple[float, float]:
        z = lt + lam * j
        zm = z.max()
        w = np.exp(z - zm)
        sw = w.sum()
        mean = float((w * j).sum() / sw)
        return k * mean, k * (zm + math.log(sw)) - lam * k * mean

    ends = []
    for sign in (-1.0, 1.0):
        lo, hi = 0.0, 1e-6
        while at(sign * hi)[1] > log_target and hi < 1e6:
            lo, hi = hi, hi * 2
        for _ in range(14):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if at(sign * mid)[1] > log_target else (lo, mid)
        ends.append(at(sign * hi)[0])
    a_lo = max(math.floor(ends[0]) - 1, 0)
    a_hi = min(math.ceil(ends[1]) + 1, top)
    need = a_hi - a_lo
    weighted = False
    if rate > 0:
        w = t / t.sum()
        jj = np.arange(t.shape[0], dtype=np.float64)
        mean = float((w * jj).sum())
        var = max(float((w * (jj - mean) ** 2).sum()), 1e-300)
        i_ref = max(int(k * mean - math.sqrt(k * var) / 2), 0)
        # the wrapped bottom's reach (issue 26, stop 40): e^{-rate n + rate i_ref} T(e^-rate)^k <= e^{log_target}
        terms = [math.log(float(t[i])) - rate * i for i in range(t.shape[0]) if t[i] > 0]
        top_term = max(terms)
        log_w = k * (top_term + math.log(math.fsum(math.exp(x - top_term) for x in terms))) + rate * i_ref
        n_wrap = math.ceil((-log_target + max(log_w, 0.0)) / rate)
        if max(a_hi - i_ref, n_wrap) < need and a_lo <= i_ref:
            need, weighted = max(a_hi - i_ref, n_wrap), True
    n = 1 << max(need, t.shape[0] - 1, 1).bit_length()
    if weighted:
        start = (max(a_hi - n, 0) + i_ref) // 2
    else:
        start = a_lo - (n - (a_hi - a_lo)) // 2
    return n, int(min(max(start, 0), max(top - n + 1, 0)))


def _laws() -> list[np.ndarray]:
    """Probability vectors of several shapes: binomial, skewed geometric, a two-point mixture."""
    from math import comb
    out = [np.array([comb(40, i) * 0.3 ** i * 0.7 ** (40 - i) for i in range(41)])]
    g = 0.9 ** np.arange(300)
    out.append(g / g.sum())
    x = np.arange(2000, dtype=np.float64)
    m = 0.99 * np.exp(-((x - 500) / 40) ** 2) + 0.01 * np.exp(-((x - 900) / 40) ** 2)
    out.append(m / m.sum())
    return out


@pytest.mark.parametrize("idx", range(3))
@pytest.mark.parametrize("k", [1, 10, 1000])
def test_choose_theta_chooses_as_the_scalar_version(idx: int, k: int) -> None:
    p = _laws()[idx]
    h = Fraction(1, 64)
    i = np.arange(p.shape[0])
    mean0 = k * float(h) * float((p * i).sum())
    hf = float(h)
    for target in (0.5 * mean0, mean0 * 1.01 + 0.1, mean0 * 1.5 + 1, mean0 * 3 + 5):
        got, old = C.choose_theta(p, k, h, target), _old_choose_theta(p, k, h, target)
        if old == 0:
            assert got == 0
            continue
        reachable = target < 0.99 * k * hf * int(np.nonzero(p > 1e-200)[0].max())
        if not reachable:  # beyond the entries of any weight: the old search leaned on its 1e-320 floor
            # for exact zeros and subnormals (their weight); since stop 43 a zero weighs 0 and a
            # subnormal its own value, so the two aim elsewhere (any theta is sound)
            continue
        # stop 42: Newton steps in a bracket, not 32 bisections: the same root, to the rounding of both
        # (limit_denominator(2^20)); the tilted mean at it is the target (the scalar mean, independent)
        assert abs(got - old) <= Fraction(1, 10**6) * old
        with np.errstate(divide="ignore"):
            z = np.log(p) + float(got) * hf * i
        w = np.exp(z - z.max())
        assert abs(k * hf * float((w * i).sum() / w.sum()) - target) <= 1e-5 * max(target, k * hf)


@pytest.mark.parametrize("idx", range(3))
@pytest.mark.parametrize("k", [1, 64, 10**5])
def test_window_for_chooses_as_the_scalar_version(idx: int, k: int) -> None:
    t = _laws()[idx]
    for lt in (-23.0, -40.0):
        for rate in (0.0, 0.01, 0.5):
            assert window_for(t, k, lt, rate) == _old_window_for(t, k, lt, rate)


@pytest.mark.parametrize("spec,k_scale", [("gaussian:sigma=1,q=0.01,count=1000", 1),
                                          ("gaussian:sigma=4,count=64", 1),
                                          ("gaussian:sigma=2,q=0.001,count=100000", 1)])
def test_eps_hint_aims_as_the_scalar_version(spec: str, k_scale: int) -> None:
    model, k = plan_of(Composition.of([spec])).orders[0][0]
    h = Fraction(1, 512)
    up, _ = C.step_laws(model, h, Fraction(1, 10**30), 128)
    for delta in (Fraction(1, 10**5), Fraction(1, 10**9)):
        new, old = C.eps_hint(up, k, delta), _old_eps_hint(up, k, delta)
        assert (new is None) == (old is None)
        if new is not None:
            assert old is not None
            # stop 44: Newton steps to 1e-9 in log delta, not the 32 bisections' own float: the same
            # root to about 1e-10 (the hint aims within a few %; fft_epsilon aims again beyond 2 %)
            assert abs(new - old) <= 1e-8 * max(abs(old), 1.0), (new, old)


class _CountingNumpy:
    """numpy with its ``log`` calls counted (stands in for ``fftcompose.np``)."""

    def __init__(self) -> None:
        self.logs = 0

    def __getattr__(self, name: str):
        return getattr(np, name)

    def log(self, *args, **kwargs):
        self.logs += 1
        return np.log(*args, **kwargs)


def test_choose_theta_takes_the_log_of_the_law_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The bisection reads log p from one evaluation (it took it at each of its ~35 steps before)."""
    counting = _CountingNumpy()
    monkeypatch.setattr(C, "np", counting)
    p = _laws()[2]
    theta = C.choose_theta(p, 1000, Fraction(1, 64), 3 * 1000 * float((p * np.arange(p.shape[0])).sum()) / 64)
    assert theta > 0
    assert counting.logs == 1


def _wrapped_relative(spec: str, h: Fraction, hint: Fraction) -> list[float]:
    """Each powered vector's four wrapped parts (``fftwrap.wrap_terms``, relative to the weight at the
    query's first index) summed, for the windows ``order_of_laws`` picks with the tilt aimed at ``hint``:
    the upper law, the binned P and the tilted Q (its queries weigh at (theta + 1) h)."""
    from exactdp.engines.pld.fftwrap import wrap_terms

    model, k = plan_of(Composition.of([spec])).orders[0][0]
    with ctx.workprec(128):
        up, low = C.step_laws(model, h, Fraction(1, 10**20), 128)
        fo = C.order_of_laws(up, low, k, h, hint)
    out = []
    for tl, extra, i0 in ((fo.up, 0, C._first_index(fo.up, hint, True)),
                          (fo.low_p, 0, C._crossing(fo, hint)), (fo.low_q, 1, C._crossing(fo, hint))):
        pw = tl.power
        parts = wrap_terms(pw.t, pw.k, pw.start, pw.v.shape[0], i0, (tl.theta + extra) * tl.h)
        out.append(float(sum(parts, Fraction(0))))
    return out


@pytest.mark.parametrize("spec,h,hint", [("gaussian:sigma=1,q=0.01,count=1000", Fraction(1, 512), Fraction(183, 100)),
                                         ("gaussian:sigma=1,q=0.01,count=100000", Fraction(1, 512), Fraction(2557, 100)),
                                         ("gaussian:sigma=1,q=0.01,count=1000000", Fraction(1, 1300), Fraction(13903, 100))])
def test_the_windows_keep_the_wrapped_mass_at_the_target(spec: str, h: Fraction, hint: Fraction) -> None:
    """The windows need not hold the lower tail (docs/pld.md §12.4, issue 26): the wrapped bottom is
    charged with weights ``e^{-rate (n + J - i0)}``, at most ``e^{-23}`` in all from ``_wrap_reach``'s
    n on, for each law at the rate its queries weigh at.  Every wrapped part, bounded in Arb by
    Chernoff at the query's own index, is then a few ``e^{-23}`` at most."""
    for rel in _wrapped_relative(spec, h, hint):
        assert rel <= 4 * math.exp(-23.0), rel


def test_a_window_short_of_the_wrap_reach_wraps_too_much(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same windows without the reach of the wrapped bottom (the upper tail's alone): the tilted Q,
    whose queries weigh at (theta + 1) h, gets far more than e^-23 of wrapped mass.  The rule is needed."""
    import exactdp.engines.pld.fftpower as fp

    monkeypatch.setattr(fp, "_wrap_reach", lambda *a, **k: 0)
    rel = _wrapped_relative("gaussian:sigma=1,q=0.01,count=1000000", Fraction(1, 1300), Fraction(13903, 100))
    assert rel[2] > 1e3 * math.exp(-23.0), rel  # measured 7.9e9 e^-23 (0.8 e^-23 with the rule)


def _scanned_crossing(fo, eps_f: Fraction) -> int:
    """The crossing as it was found before (issue 26, stop 40): a scan of the k + 4 candidate indices."""
    tp = fo.low_p
    i_eps = C._first_index(tp, eps_f, False)
    ratio = C._log_ratio(fo)
    lo = max(i_eps - fo.k - 2 - tp.power.start, 0)
    hi = max(min(i_eps + 2 - tp.power.start, ratio.shape[0]), lo)
    pos = np.nonzero(ratio[lo:hi] >= float(eps_f))[0]
    return int(tp.power.start + lo + pos[0]) if pos.shape[0] else i_eps


def test_the_crossing_is_the_scanned_one() -> None:
    """``_crossing`` finds the first index at or above eps through the running maximum of the log-ratio
    (a binary search) where that index lies in the candidates' range, and scans otherwise: the same cut
    as the scan, at many eps, and with a spike planted before the range (the scan's branch)."""
    model, k = plan_of(Composition.of(["gaussian:sigma=1,q=0.01,count=1000"])).orders[0][0]
    h = Fraction(1, 512)
    with ctx.workprec(128):
        up, low = C.step_laws(model, h, Fraction(1, 10**20), 128)
        fo = C.order_of_laws(up, low, k, h, Fraction(183, 100))
    eps = [Fraction(x, 1000) for x in range(-500, 6000, 37)]
    assert [C._crossing(fo, e) for e in eps] == [_scanned_crossing(fo, e) for e in eps]
    ratio = C._log_ratio(fo)  # the cached array: a spike at its start moves the running maximum up
    i = int(np.nonzero(np.isfinite(ratio))[0][0])
    ratio[i] = 50.0
    C._RUNS.clear()
    assert [C._crossing(fo, e) for e in eps] == [_scanned_crossing(fo, e) for e in eps]
    C._RUNS.clear()
    C._RATIOS.clear()


def test_the_log_ratio_in_place_is_the_earlier_one() -> None:
    """``_log_ratio`` computed in place (three vectors of the window instead of a dozen): the same floats,
    byte for byte, as the earlier masked expression (kept here)."""
    model, k = plan_of(Composition.of(["gaussian:sigma=1,q=0.01,count=1000"])).orders[0][0]
    h = Fraction(1, 512)
    with ctx.workprec(128):
        up, low = C.step_laws(model, h, Fraction(1, 10**20), 128)
        fo = C.order_of_laws(up, low, k, h, Fraction(183, 100))
        tp, tq = fo.low_p, fo.low_q
        i = tp.power.start + np.arange(tp.power.v.shape[0], dtype=np.float64)
        c = float((tp.log_mk - tq.log_mk).mid()) + tq.offset * float(fo.h)
    vp, vq = tp.power.v, tq.power.v
    ok = (vp > 1e-11 * vp.max()) & (vq > 1e-11 * vq.max())
    want = np.full(vp.shape, -np.inf)
    want[ok] = np.log(vp[ok]) - np.log(vq[ok]) + c + float(fo.h) * i[ok]
    C._RATIOS.clear()
    assert C._log_ratio(fo).tobytes() == want.tobytes()
