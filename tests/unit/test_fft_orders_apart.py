"""The FFT path composes on its fine grid only the orders that can matter (issue 26, docs/pld.md §12.7).

A Poisson-subsampled Gaussian has two orders ("remove" and "add"); the composition's eps is the larger
of theirs.  The path first brackets both on a coarse grid; an order whose delta at the composition's
certified lower end is certified <= delta_g there has its eps below that end, so the fine grid composes
the other order alone.  The references are independent: the exact-product engine (``fft_path(False)``)
and each direction composed on its own (``direction=add|remove``).
"""

from __future__ import annotations

import time
from fractions import Fraction

import pytest

import exactdp.engines.pld.fftcompose as fc
from exactdp import Composition
from exactdp.core import progress
from exactdp.engines.pld.engine import pld_delta, pld_epsilon
from exactdp.engines.pld.fftquery import _orders, fft_groups, fft_path, float_tight, retire  # noqa: PLC2701
from exactdp.engines.pld.plan import prec_for, tau_for

DG = Fraction(1, 10**5)
SPEC = "gaussian:sigma=1,q=0.01,count=1000"


def _record(monkeypatch) -> list[tuple[Fraction, str]]:
    seen: list[tuple[Fraction, str]] = []
    orig = fc.step_laws

    def counting(model, h, tau, prec, tight=0):
        seen.append((h, model.key()[0]))
        return orig(model, h, tau, prec, tight)

    monkeypatch.setattr(fc, "step_laws", counting)
    return seen


def _exact_eps(spec: str, digits: int = 4):
    with fft_path(False), progress.task("t", max_seconds=300, stream=None):
        return pld_epsilon(Composition.of([spec]), DG, digits=digits)


def test_the_fine_grid_composes_the_remove_order_alone(monkeypatch) -> None:
    seen = _record(monkeypatch)
    with progress.task("t", max_seconds=120, stream=None):
        e = pld_epsilon(Composition.of([SPEC]), DG, digits=8, rel_width=Fraction("1e-5"))
    assert e.algorithm == "pld-fft"
    finest = min(h for h, _ in seen)
    assert [kind for h, kind in seen if h == finest] == ["poisson"]  # the remove order alone
    assert {kind for h, kind in seen if h != finest} == {"poisson", "reversed"}  # both on the coarse grid
    ref = _exact_eps(SPEC)
    assert e.lower <= ref.upper and ref.lower <= e.upper
    assert e.upper - e.lower <= Fraction("1e-5") * e.lower


def test_the_answer_is_the_larger_order_and_holds_the_add_order_below_it() -> None:
    with progress.task("t", max_seconds=120, stream=None):
        e = pld_epsilon(Composition.of([SPEC]), DG, digits=8, rel_width=Fraction("1e-5"))
        add = pld_epsilon(Composition.of([SPEC + ",direction=add"]), DG, digits=6)
        rem = pld_epsilon(Composition.of([SPEC + ",direction=remove"]), DG, digits=6)
    assert add.upper < rem.lower  # the add order is certified below: it was right to drop it
    assert e.lower <= rem.upper and rem.lower <= e.upper


def test_retire_keeps_an_order_that_can_still_exceed_delta() -> None:
    """``retire`` drops the add order at the remove order's lower end, never at its own."""
    comp = Composition.of([SPEC])
    groups = fft_groups(comp)
    assert groups is not None and len(groups) == 2
    h = Fraction(1, 800)
    prec = prec_for(8, DG)
    tau = tau_for(8, DG, 8)
    laws = [fc.step_laws(m, h, tau, prec) for m, _ in groups]
    with progress.task("t", max_seconds=120, stream=None):
        add = pld_epsilon(Composition.of([SPEC + ",direction=add"]), DG, digits=6)
        rem = pld_epsilon(Composition.of([SPEC + ",direction=remove"]), DG, digits=6)
        orders = _orders(laws, groups, h, Fraction(rem.lower), 1e-3)
    kinds = [m.key()[0] for m, _ in groups]
    add_i = kinds.index("reversed")
    assert retire(orders, [0, 1], Fraction(rem.lower), DG) == [1 - add_i]
    assert retire(orders, [0, 1], Fraction(add.lower), DG) == [0, 1]  # delta_add(lo) > delta_g there


@pytest.mark.slow  # about 15 s (CI time: the main step)
def test_delta_drops_the_smaller_order_too(monkeypatch) -> None:
    seen = _record(monkeypatch)
    comp = Composition.of([SPEC])
    t = time.monotonic()
    with progress.task("t", max_seconds=120, stream=None):
        d = pld_delta(comp, Fraction(2), digits=6)
    assert time.monotonic() - t < 120
    assert d.algorithm == "pld-fft"
    finest = min(h for h, _ in seen)
    assert [kind for h, kind in seen if h == finest] == ["poisson"]
    with fft_path(False), progress.task("t", max_seconds=300, stream=None):
        ref = pld_delta(comp, Fraction(2), digits=4)
    assert d.lower <= ref.upper and ref.lower <= d.upper


@pytest.mark.slow
def test_the_fine_grid_fits_its_window_under_the_power_of_2(monkeypatch) -> None:
    """10^5 steps at width 1e-6: the grid predicted for the width needs a window of about 2.11 million
    points, just past 2^21; the pre-pass's window scaled to the fine grid predicts it, and a grid 0.5 %
    coarser fits 2^21 (``fit_window``), at a width still below the target."""
    import exactdp.engines.pld.fftreal as fr

    sizes: list[int] = []
    orig = fr.real_power

    def recording(t, k, n, start, **kw):
        sizes.append(n)
        return orig(t, k, n, start, **kw)

    monkeypatch.setattr(fc, "real_power", recording)
    with progress.task("t", max_seconds=300, stream=None):
        e = pld_epsilon(Composition.of(["gaussian:sigma=1,q=0.01,count=100000"]), DG, digits=8,
                        rel_width=Fraction("1e-6"))
    assert e.upper - e.lower <= Fraction("1e-6") * e.lower
    assert max(sizes) == 1 << 21, sizes
    # inside the 4-digit bracket of `exactdp epsilon --digits 4` (a coarser grid): [25.5726, 25.5741]
    assert Fraction("25.5726") <= e.lower < e.upper <= Fraction("25.5741")


def test_the_next_grids_memory_is_predicted_for_the_live_orders_alone(monkeypatch) -> None:
    """After the pre-pass drops the add order, every finer grid composes the remove order alone, and its
    memory is predicted for that one order (``grid_cost(..., n_orders)``).  Before, the refinement's next
    grid was predicted for both orders, twice the bytes: here (width 1e-7), under a bound 1 GB above what the process holds, the first fine grid
    (1/40802, width 3.5e-7) was the last (the next, 1/89872, predicted 1.3 GB instead of 0.66 GB); 10^5
    steps at a width of 2e-8 stopped at a 14 GB bound with the bracket 1.48e-7 wide (the next grid
    predicted 25.6 GB; for one order 12.8 GB, and it ran in 9.2 GB)."""
    import exactdp.engines.pld.fftquery as fq
    from exactdp.core import memory
    from exactdp.engines.pld.refine import STOPPED_BY

    seen = _record(monkeypatch)
    asked: list[tuple[Fraction, int | None]] = []
    orig = fq.grid_cost

    def recording(pl, h, prec, aim=1e-6, last=None, n_orders=None):
        if last is not None:  # the grids predicted from a measured window: after the pre-pass
            asked.append((h, n_orders))
        return orig(pl, h, prec, aim, last, n_orders)

    monkeypatch.setattr(fq, "grid_cost", recording)
    # the first fine grid aimed at 4 times the target's width (the pre-pass predicts the target's grid
    # well, issue 26): a refinement must follow it
    monkeypatch.setattr(fq, "PRE_WIDTH_SHARE", 4.0)
    width = Fraction("1e-7")
    STOPPED_BY.set("time")
    bound = memory.resident() + 1000 * 2**20  # past one order's next grid (0.66 GB), short of two (1.3 GB)
    with memory.bounded(bound), progress.task("t", max_seconds=120, stream=None):
        e = pld_epsilon(Composition.of([SPEC]), DG, digits=8, rel_width=width)
    assert STOPPED_BY.get() != "memory"
    fine = sorted({h for h, kind in seen if kind == "poisson"})
    assert len(fine) >= 3, fine  # the pre-pass, the first fine grid, and at least one refinement
    assert all(kind == "poisson" for h, kind in seen if h < fine[-1])  # the remove order alone
    assert len(asked) >= 2 and all(n == 1 for _, n in asked), asked
    assert e.upper - e.lower <= width * e.lower
    ref = _exact_eps(SPEC)
    assert e.lower <= ref.upper and ref.lower <= e.upper


def test_the_pre_pass_cuts_its_tails_shorter_and_still_retires_the_add_order(monkeypatch) -> None:
    """The pre-pass's single-step laws are truncated at ``pre_tau`` (delta_g 10^-6 / (k n)), far coarser
    than the query's tau, and their float blocks taken at a remainder of 2^-40 (``float_tight``): a shorter loss
    range and wider blocks (fewer Taylor blocks), docs/pld.md §12.7.  The add order is
    still retired there, and the bracket holds the exact-product engine's (an independent route)."""
    seen: list[tuple[Fraction, Fraction, str, int]] = []
    tights: list[tuple[Fraction, int]] = []
    orig = fc.step_laws

    def recording(model, h, tau, prec, tight=0):
        up, low = orig(model, h, tau, prec, tight)
        seen.append((h, tau, model.key()[0], up.length))
        tights.append((h, tight))
        return up, low

    monkeypatch.setattr(fc, "step_laws", recording)
    with progress.task("t", max_seconds=120, stream=None):
        e = pld_epsilon(Composition.of([SPEC]), DG, digits=8, rel_width=Fraction("1e-5"))
    finest = min(h for h, *_ in seen)
    pre = [(h, tau, kind, n) for h, tau, kind, n in seen if h != finest]
    fine = [(h, tau, kind, n) for h, tau, kind, n in seen if h == finest]
    assert {kind for _, _, kind, _ in pre} == {"poisson", "reversed"} and [x[2] for x in fine] == ["poisson"]
    tau_fine, tau_pre = fine[0][1], pre[0][1]
    # q k = 10, fewer than ``MANY_SAMPLED``: the query's tau is its 8 digits' (not its width's, ``aim_digits``)
    assert tau_fine == tau_for(8, DG, 8)
    assert tau_pre == DG / 10**6 / (1000 * 2) and tau_pre >= 10**4 * tau_fine
    # and its float blocks at the pre-pass's remainder rule (2^-40), the fine grid's at its aim's (also
    # 2^-40 at 1000 steps and 1e-5: log2(1000 / 1e-5) + 11 < 40)
    assert {t for h, t in tights} == {40} == {float_tight(1000, 1e-3), float_tight(1000, 1e-5)}
    # the remove order's law on the pre-pass grid: about 30 % shorter than at the query's tau
    h_pre = pre[0][0]
    with progress.task("t", max_seconds=120, stream=None):
        model = fft_groups(Composition.of([SPEC]))[0][0]
        full, _ = orig(model, h_pre, tau_fine, prec_for(8, DG))
    n_pre = next(n for _, _, kind, n in pre if kind == "poisson")
    assert n_pre <= 0.8 * full.length, (n_pre, full.length)
    ref = _exact_eps(SPEC)
    assert e.lower <= ref.upper and ref.lower <= e.upper
    assert e.upper - e.lower <= Fraction("1e-5") * e.lower


def test_the_aims_float_blocks_move_the_delta_bounds_by_at_most_k_2_to_the_1_minus_t() -> None:
    """The 1000-step row's fine grid with its float blocks at the aim's rule (``float_tight``: 2^-40)
    and at the default 2^-64: the certified delta bounds at eps 1.8282 (near the answer) differ by at
    most ``k 2^-(T-1)`` of themselves (the enclosures' share, docs/pld.md §12.7), and both brackets
    hold the delta of the exact products (an independent route)."""
    groups = fft_groups(Composition.of([SPEC]))
    assert groups is not None
    model, k = groups[0]
    h, eps = Fraction(1, 13416), Fraction(18282, 10000)
    prec, tau = prec_for(8, DG), tau_for(8, DG, 8)
    t = float_tight(k, 3.7e-6)
    assert t == 40
    with progress.task("t", max_seconds=120, stream=None):
        bounds = []
        for tight in (t, 64):
            up, low = fc.step_laws(model, h, tau, prec, tight)
            bounds.append(fc.order_delta_bounds(fc.order_of_laws(up, low, k, h, eps), eps))
        with fft_path(False):
            ref = pld_delta(Composition.of([SPEC]), eps, digits=2)
    (lo_a, hi_a), (lo_b, hi_b) = bounds
    share = Fraction(k, 2 ** (t - 1))
    assert abs(hi_a - hi_b) <= share * hi_b and abs(lo_a - lo_b) <= share * lo_b, (bounds, float(share))
    for lo, hi in bounds:
        assert lo <= ref.upper and ref.lower <= hi


def _record_sides(monkeypatch) -> list[tuple[Fraction, str]]:
    """(h, side) of every order powered one side at a time (``order_of_side``, the pre-pass)."""
    seen: list[tuple[Fraction, str]] = []
    orig = fc.order_of_side

    def recording(up, low, k, h, hint, side, log_target=-23.0):
        seen.append((h, side))
        return orig(up, low, k, h, hint, side, log_target)

    monkeypatch.setattr(fc, "order_of_side", recording)
    return seen


def test_the_pre_pass_powers_one_lower_side(monkeypatch) -> None:
    """The pre-pass powers both orders' upper sides and the binned pair of the order whose float upper
    delta at the hint is the larger only (the remove order): three powers instead of four.  The add
    order is still retired, and the bracket holds the exact products' (an independent route)."""
    sides = _record_sides(monkeypatch)
    seen = _record(monkeypatch)
    with progress.task("t", max_seconds=120, stream=None):
        e = pld_epsilon(Composition.of([SPEC]), DG, digits=8, rel_width=Fraction("1e-5"))
    coarse = max(h for h, _ in seen)
    pre = [side for h, side in sides if h == coarse]
    assert pre.count("upper") == 2 * pre.count("lower") and pre.count("lower") >= 1, pre
    finest = min(h for h, _ in seen)
    assert [kind for h, kind in seen if h == finest] == ["poisson"]  # the add order retired
    ref = _exact_eps(SPEC)
    assert e.lower <= ref.upper and ref.lower <= e.upper


def test_a_pre_pass_that_powers_the_wrong_lower_side_stays_sound(monkeypatch) -> None:
    """The choice of the lower side is a float one: when it picks the add order (the smaller eps), the
    pre-pass's lower end comes from that order (still below the composition's eps), the remove order
    cannot be retired on it, and the bracket still holds the exact products'."""
    import exactdp.engines.pld.fftquery as fq

    orig = fc.delta_curves

    def reversed_choice(fo, lo_eps, hi_eps):
        up, low = orig(fo, lo_eps, hi_eps)
        return (lambda eps: -up(eps)), low  # the order with the smaller upper delta is chosen

    monkeypatch.setattr(fc, "delta_curves", reversed_choice)
    seen = _record(monkeypatch)
    calls: list[int] = []
    orig_pre = fq._pre_orders

    def pre(laws, groups, h, hint, aim):
        got = orig_pre(laws, groups, h, hint, aim)
        monkeypatch.setattr(fc, "delta_curves", orig)  # the pre-pass's choice only
        calls.append(len(got))
        return got

    monkeypatch.setattr(fq, "_pre_orders", pre)
    with progress.task("t", max_seconds=120, stream=None):
        e = pld_epsilon(Composition.of([SPEC]), DG, digits=8, rel_width=Fraction("1e-5"))
    assert calls
    finest = min(h for h, _ in seen)
    assert sorted(kind for h, kind in seen if h == finest) == ["poisson", "reversed"]  # none retired
    ref = _exact_eps(SPEC)
    assert e.lower <= ref.upper and ref.lower <= e.upper
    assert e.upper - e.lower <= Fraction("1e-5") * e.lower


SMALL_Q = "gaussian:sigma=2,q=0.001,count=100000"


def test_every_grid_with_two_live_orders_powers_one_lower_side_and_a_wrong_one_stays_sound(monkeypatch) -> None:
    """Not only the pre-pass: every grid on which both orders are live powers both upper sides and the
    binned pair of one order (the one whose float upper delta at the hint is the larger; the lower end
    needs one order's lower side).  sigma 2, q 0.001 x 10^5 at a width of 3e-3 takes one grid and no
    pre-pass: three powers, not four.  With the choice reversed (the add order's lower side, whose eps is
    the smaller) the lower end is lower but still below the composition's eps.  Both brackets hold the
    exact products' (an independent route)."""
    import exactdp.engines.pld.fftquery as fq

    sides = _record_sides(monkeypatch)
    with progress.task("t", max_seconds=120, stream=None):
        e = pld_epsilon(Composition.of([SMALL_Q]), DG, digits=8, rel_width=Fraction("3e-3"))
    assert sorted(s for _, s in sides) == ["lower", "upper", "upper"], sides
    assert e.upper - e.lower <= Fraction("3e-3") * e.lower

    orig, orig_pre = fc.delta_curves, fq._pre_orders

    def reversed_choice(fo, lo_eps, hi_eps):
        up, low = orig(fo, lo_eps, hi_eps)
        return (lambda eps: -up(eps)), low

    def pre(laws, groups, h, hint, aim):
        monkeypatch.setattr(fc, "delta_curves", reversed_choice)  # the choice only, not the bracket's curves
        try:
            return orig_pre(laws, groups, h, hint, aim)
        finally:
            monkeypatch.setattr(fc, "delta_curves", orig)

    monkeypatch.setattr(fq, "_pre_orders", pre)
    monkeypatch.setattr(fq, "_next_grid", lambda *a, **kw: None)  # one grid: its width cannot reach the aim
    with progress.task("t", max_seconds=120, stream=None):
        wrong = pld_epsilon(Composition.of([SMALL_Q]), DG, digits=8, rel_width=Fraction("3e-3"))
    assert wrong.algorithm == "pld-fft" and wrong.lower < e.lower  # the add order's lower end
    ref = _exact_eps(SMALL_Q, digits=3)
    for got in (e, wrong):
        assert got.lower <= ref.upper and ref.lower <= got.upper, (got, ref)
