"""dp_accounting's RDP curve of a fixed batch without replacement, judged order by order against
exactdp's bracket (issue 28, docs/rdp.md §6): its floats are WBK19 Thm 27 (Thm 9 past order 256),
sound where they land at or above the certified upper end, undecided a few ulps below it, never unsound."""

from __future__ import annotations

import pytest

from exactdp.crosscheck.cases import EVENTS
from exactdp.crosscheck.curves import check_curve

pytest.importorskip("dp_accounting")


def fixed_batch_api():
    from exactdp.crosscheck.adapters.dp_accounting import curves

    (api,) = [a for a in curves() if "fixed-batch" in a.name]
    return api


def case(name: str):
    (c,) = [c for group in EVENTS for c in group if c.name == name]
    return c


@pytest.mark.parametrize("name,noise,decided", [
    ("1000xgaussian(sigma=1,sample=60,of=6000),replace-one@dg=1e-5", "sigma=2", 120),
    ("100xgaussian(sigma=2,sample=60,of=6000),replace-one@dg=1e-5", "sigma=4", 95),
])
def test_the_fixed_batch_curve_is_decided_at_most_orders_and_never_unsound(name, noise, decided):
    """The accountant reads the case's Gaussian against replace-one sensitivity 1 (rdp_reading: sigma 1 and 2
    are its noise multipliers 2 and 4), where the Thm 27 terms are the smaller from order 3.  With the Thm 9
    upper end (before) only 32 and 13 of its 156 orders were at or above the upper end; the rest are a
    float of the same bound a few ulps below the certified one: undecided, never unsound."""
    f = check_curve(fixed_batch_api(), case(name))
    assert f is not None and f.error is None and f.orders == 156
    assert noise in f.inputs["mechanisms"][0]
    assert not f.unsound and f.sound == f.checked >= decided
    assert all(u["verdict"] == "undecided" for u in f.undecided)


def test_other_cases_are_not_this_apis():
    assert check_curve(fixed_batch_api(), case("100xdgaussian(sigma=2)@dg=1e-5")) is None
