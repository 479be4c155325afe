"""The cross-check at the RDP-curve level (issue 28 §4): each peer's curve judged order by order,
its conversion apart, with fake peers whose curves are known exactly (tests/crosscheck/fake_peers.py)
and, where installed, the real dp_accounting and autodp.

The references are independent of the engine: 100 alpha / 8 for 100 x Gaussian(sigma=2) in exact
arithmetic, the CKS20 conversion written here in mpmath, and the subsampled Gaussian's binomial
sum in mpmath.
"""

from __future__ import annotations

import json
from fractions import Fraction
from math import comb

import mpmath
import pytest
from fake_peers import CASE_E, CASE_G, CURVE_ORDERS, CURVES, WRONG_ORDER

from exactdp.crosscheck.adapters import ADAPTERS
from exactdp.crosscheck.cases import sweep
from exactdp.crosscheck.curves import check_curve, cks_conversion, mironov_conversion, run_curves
from exactdp.crosscheck.report import run_crosscheck, to_html, to_json, to_markdown

F = Fraction


def test_a_curve_wrong_at_one_order_names_the_peer_the_order_and_both_values() -> None:
    rep = run_crosscheck([CURVES], [CASE_G, CASE_E], progress=None)
    by = {c.api: c for c in rep.curves}
    bad = by["fake.bad_curve"]
    assert bad.library == "curvepeer" and bad.case == "ref-gauss"
    assert bad.orders == len(CURVE_ORDERS) and bad.checked == len(CURVE_ORDERS)
    (u,) = bad.unsound
    exact = F(100 * WRONG_ORDER, 8)
    assert u["order"] == str(WRONG_ORDER) and u["verdict"] == "unsound"
    assert float(u["reported"]) == float(exact) * 0.9  # the peer's value, round-trip exact
    assert u["lower"] == u["upper"] == "50"  # the certified divergence 100 * 4 / 8, exact
    assert bad.fault == "curve" and bad.conversion is not None and bad.conversion["verdict"] == "supported"
    assert rep.unsound  # an unsound order gates the run, as an unsound answer does
    # JSON, Markdown and HTML carry the section
    obj = to_json(rep)
    (cj,) = [c for c in obj["rdp_curves"] if c["api"] == "fake.bad_curve"]
    assert cj["unsound"][0]["order"] == "4" and cj["unsound"][0]["lower"] == "50"
    assert obj["summary"]["rdp_orders_unsound"] == 1 and obj["summary"]["rdp_curves"] == 2
    json.dumps(obj)
    md = to_markdown(rep)
    assert "## RDP curves" in md and "| curvepeer | `fake.bad_curve` | ref-gauss | 4 | 45.0 | 50 | 50 | unsound |" in md
    assert "RDP curves" in to_html(rep)


def test_a_wrong_conversion_of_a_right_curve_is_the_conversions_fault() -> None:
    rep = run_crosscheck([CURVES], [CASE_G], progress=None)
    conv = next(c for c in rep.curves if c.api == "fake.bad_conversion")
    assert conv.unsound == [] and conv.checked == len(CURVE_ORDERS)
    assert conv.conversion is not None and conv.conversion["verdict"] == "unsupported"
    assert conv.fault == "conversion"
    # the certified conversion of its own curve, against an independent mpmath evaluation
    with mpmath.workdps(40):
        d = mpmath.mpf(1) / 10**5
        ref = min(mpmath.mpf(100) * mpmath.mpf(a) / 8 + mpmath.log(1 - 1 / mpmath.mpf(a))
                  - mpmath.log(d * mpmath.mpf(a)) / (mpmath.mpf(a) - 1) for a in CURVE_ORDERS)
        assert mpmath.mpf(F(conv.conversion["lower"]).numerator) / F(conv.conversion["lower"]).denominator <= ref
        assert ref <= mpmath.mpf(F(conv.conversion["upper"]).numerator) / F(conv.conversion["upper"]).denominator
    assert "conversion" in to_markdown(rep)


def test_certified_conversions_against_mpmath() -> None:
    orders = [F(3, 2), F(2), F(5), F(32)]
    values = [F(1, 10), F(3, 10), F(2), F(40)]
    delta = F(1, 10**6)
    with mpmath.workdps(50):
        m = lambda q: mpmath.mpf(q.numerator) / q.denominator
        cks = min(m(r) + mpmath.log(1 - 1 / m(a)) - mpmath.log(m(delta) * m(a)) / (m(a) - 1) for a, r in zip(orders, values))
        mir = min(m(r) + mpmath.log(1 / m(delta)) / (m(a) - 1) for a, r in zip(orders, values))
        for enc, ref in ((cks_conversion(orders, values, delta), cks), (mironov_conversion(orders, values, delta), mir)):
            assert m(enc.lower) <= ref <= m(enc.upper)
            assert (m(enc.upper) - m(enc.lower)) / ref < mpmath.mpf(10) ** -20
    assert cks < mir
    # the Bretagnolle-Huber case: a tiny divergence at a large delta converts to eps = 0
    assert cks_conversion([F(2)], [F(1, 10**6)], F(1, 10)).upper == 0


def test_generic_cases_are_not_curve_cases() -> None:
    rep = run_crosscheck([CURVES], [CASE_E], progress=None)
    assert rep.curves == [] and not rep.unsound
    assert run_crosscheck([CURVES], [CASE_G], progress=None, curves=False).curves == []


# -- the real peers (skipped where not installed) ---------------------------------------------------

def _mp_sg(sigma: float, q: float, alpha: int, count: int) -> mpmath.mpf:
    with mpmath.workdps(40):
        s2, qq = mpmath.mpf(sigma) ** 2, mpmath.mpf(q)
        tot = mpmath.fsum(comb(alpha, k) * (1 - qq) ** (alpha - k) * qq ** k * mpmath.exp((k * k - k) / (2 * s2))
                          for k in range(alpha + 1))
        return count * mpmath.log(tot) / (alpha - 1)


@pytest.mark.parametrize("library", ["dp_accounting", "autodp"])
def test_real_peer_curves_are_judged_order_by_order(library: str) -> None:
    ad = ADAPTERS[library]
    if not ad.available()[0]:
        pytest.skip(f"{library} is not installed")
    (case,) = [c for c in sweep() if c.name == "dpsgd(sigma=1,q=0.01,steps=1000)@dg=1e-5"]
    for api in ad.curve_apis():
        f = check_curve(api, case)
        if f is None:
            continue
        assert f.error is None, f.error
        assert f.checked >= 5 and f.direction == "remove"
        # every decided order's verdict agrees with the independent mpmath binomial sum
        for u in f.unsound:
            a = F(float(u["order"]))
            assert a.denominator == 1  # fractional orders are only bounded below: never unsound here
            ref = _mp_sg(float(F(case.mechanisms[0][0].mechanism.sigma)), float(case.mechanisms[0][0].q), int(a), 1000)
            assert mpmath.mpf(float(u["reported"])) < ref
        if library == "dp_accounting":
            assert f.conversion is not None and f.conversion["verdict"] in ("supported", "unsupported-fp")
            assert f.fault in ("none", "curve")


def test_run_curves_on_the_quick_sweep_with_installed_peers() -> None:
    ads = [ADAPTERS[n] for n in ("dp_accounting", "autodp") if ADAPTERS[n].available()[0]]
    if not ads:
        pytest.skip("neither dp_accounting nor autodp is installed")
    fs = run_curves(ads, sweep(quick=True))
    assert fs and all(f.error is None for f in fs)
    assert all(f.checked > 0 for f in fs)
