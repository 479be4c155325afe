"""The kit on mechanism compositions, exact floats, the new assertions, strategies and options.

Reference values: DP-SGD sigma 1, q 0.01, 1000 steps at delta 1e-5 has eps in [1.8277, 1.8292]
(docs/pld.md §6); 100 Gaussians sigma 2 at 1e-5 is 33.1037323359224651622... (closed form,
docs/mathematics.md §7.2); 30 x (0.1, 0) at 1e-3 is 1.4811439805399072046... (§6).
"""

from __future__ import annotations

import subprocess
import sys
from fractions import Fraction

import pytest
from hypothesis import given, settings

from exactdp.core.errors import InexactInputError, InvalidParameterError
from exactdp.model.mechanisms import Gaussian, Laplace, PoissonSampled
from exactdp.testing import (
    Oracle,
    SearchStats,
    TooLooseError,
    UndecidedClaimError,
    UnsoundClaimError,
    assert_sound,
    assert_sound_curve,
    assert_sound_delta,
    assert_sound_pair,
    assert_tight,
    exact_floats,
    find_delta_counterexample,
    judge,
    looseness_report,
)
from exactdp.testing import strategies as S

SGD = [(PoissonSampled(Gaussian("1"), "0.01"), 1000)]
GAUSS = [(Gaussian("2"), 100)]


def test_floats_are_refused_unless_asked_for() -> None:
    with pytest.raises(InexactInputError):
        Gaussian(1.1)
    with exact_floats():
        assert Gaussian(1.1).sigma == Fraction(1.1)  # the float's exact binary value, not 11/10
    with pytest.raises(InexactInputError):
        assert_sound(3, composition=(0.1, 0, 30), delta_g="1e-3")
    v = assert_sound(3, composition=(0.1, 0, 30), delta_g=1e-3, exact_floats=True)
    assert v.composition.groups[0][0].eps.value == Fraction(0.1)
    with exact_floats(), pytest.raises(InvalidParameterError):
        Gaussian(float("nan"))


def test_dpsgd_claims_above_below_and_inside_the_bracket() -> None:
    assert assert_sound(1.9, composition=SGD, delta_g="1e-5").verdict == "loose"
    with pytest.raises(UnsoundClaimError, match="UNSOUND"):
        assert_sound(1.8, composition=SGD, delta_g="1e-5")
    # inside the bracket with a tiny budget: undecided, and the assertion fails (never a vacuous pass);
    # 7e-6 above the optimum: the float-FFT decision at the claim (docs/pld.md §12.7) needs a grid of
    # about 1/8000 there, more than half a second (1.8285 is now decided in well under it)
    v = judge(1.82825, SGD, delta_g="1e-5", oracle=Oracle(max_seconds=0.5))
    assert v.verdict in ("undecided", "sound")
    if v.verdict == "undecided":
        # the second call may start from the first one's powered grids and decide (the claim is 7e-6
        # above the optimum: sound); it never passes without a verdict
        try:
            r = assert_sound(1.82825, composition=SGD, delta_g="1e-5", max_seconds=0.5)
        except UndecidedClaimError:
            pass
        else:
            assert r.verdict in ("sound", "loose")


def test_gaussian_is_exact_and_laplace_bracketed() -> None:
    assert judge(33.11, GAUSS, delta_g="1e-5").verdict == "sound"
    with pytest.raises(UnsoundClaimError):
        assert_sound(33.1037323359224, composition=GAUSS, delta_g="1e-5")
    assert judge(33.10373233592247, GAUSS, delta_g="1e-5").verdict == "sound"
    assert judge(4.7, [(Laplace("10"), 100)], delta_g="1e-6").verdict == "sound"  # optimum 4.69267
    with pytest.raises(UnsoundClaimError):
        assert_sound_delta("1e-7", composition=[(Laplace("10"), 100)], eps_g="4")


def test_pairs_curves_tightness_and_looseness() -> None:
    assert assert_sound_pair(1.5, 1e-3, composition=("0.1", 0, 30)).sound
    with pytest.raises(UnsoundClaimError):
        assert_sound((1.4, 1e-3), composition=("0.1", 0, 30))
    with pytest.raises(UnsoundClaimError, match="1 of 2 points"):
        assert_sound_curve({"1e-3": 1.49, "1e-6": 1.0}, composition=("0.1", 0, 30))
    with pytest.raises(InvalidParameterError):
        assert_sound_curve({}, composition=("0.1", 0, 30))  # an empty curve checks nothing
    assert_tight(1.4811439805399075, composition=("0.1", 0, 30), delta_g="1e-3", rel="1e-12")
    with pytest.raises(TooLooseError):
        assert_tight(1.6, composition=("0.1", 0, 30), delta_g="1e-3", rel="0.01")
    with pytest.raises(UnsoundClaimError):
        assert_tight(1.4, composition=("0.1", 0, 30), delta_g="1e-3", rel="0.5")
    with pytest.raises(TooLooseError):
        assert_tight(float("inf"), composition=("0.1", 0, 30), delta_g="1e-3", rel="0.5")
    rep = looseness_report({"1e-3": 2.0957506835726821, "1e-6": 3}, composition=("0.1", 0, 30))
    assert rep.all_sound and rep.worst is not None and "loose" in str(rep)


def test_delta_direction_search() -> None:
    stats = SearchStats()
    cx = find_delta_counterexample(lambda eps, delta, k, eps_g: delta, stats=stats)  # forgets the composition
    assert cx is not None and stats.checked >= 1


@settings(max_examples=5, deadline=None)
@given(S.dpsgd_compositions(), S.tiny_delta_gs())
def test_dpsgd_strategy_is_judged_in_bounded_time(comp, dg) -> None:  # noqa: ANN001
    v = judge(10**6, comp, delta_g=dg, oracle=Oracle(max_seconds=2))
    assert v.sound  # a huge eps is sound (or claims nothing); the bracket came within the budget


@settings(max_examples=5, deadline=None)
@given(S.large_k_compositions(pure=True), S.tiny_delta_gs())
def test_large_k_strategy(comp, dg) -> None:  # noqa: ANN001
    assert comp.k > 1025
    eps = comp.groups[0][0].eps.value * comp.k
    assert judge(eps, comp, delta_g=dg).sound  # basic composition is sound


@settings(max_examples=3, deadline=None)
@given(S.many_distinct_compositions())
def test_many_distinct_strategy(comp) -> None:  # noqa: ANN001
    assert len(comp.groups) >= 5


def test_plugin_options_in_help_and_exact_floats_option(tmp_path) -> None:  # noqa: ANN001
    out = subprocess.run([sys.executable, "-m", "pytest", "--help"], capture_output=True, text=True, cwd=tmp_path)
    for opt in ("--exactdp-digits", "--exactdp-max-seconds", "--exactdp-exact-floats"):
        assert opt in out.stdout
    (tmp_path / "test_x.py").write_text(
        "from exactdp.model.mechanisms import Gaussian\n"
        "from exactdp.testing import assert_sound\n"
        "def test_floats(exactdp_oracle):\n"
        "    assert exactdp_oracle.exact_floats and exactdp_oracle.digits == 12\n"
        "    assert_sound(33.2, composition=[(Gaussian(2.0), 100)], delta_g=1e-5)\n")
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--exactdp-exact-floats",
                          "--exactdp-digits=12", "test_x.py"], capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_x.py"],
                         capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 1  # without the option a float is refused: the test fails, never passes
