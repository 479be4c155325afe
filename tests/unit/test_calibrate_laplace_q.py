"""``calibrate laplace-scale --q`` (issue 27 §5/§6): the smallest Laplace scale for k Poisson-subsampled
Laplace queries, under add/remove, replace-one and dp_accounting's bounded reading.

Every answer is judged by an INDEPENDENT reference:

* at delta_g = 0 the closed forms of the largest privacy loss, k times, evaluated with mpmath at 60
  digits: add/remove ``k log(1 + q (e^{S/b} - 1))`` (docs/mathematics.md §5 item 11, the largest loss of
  §9's pair ``((1-q)B + qA, B)``); replace-one ``k S/b`` (the diluted pair's losses are 0 and the
  Laplace's, Theorem 9.2); bounded ``k log((1-q + q e^c)/(1-q + q e^{-c}))``, ``c = S/(2b)`` (the atoms
  of Theorem 9.9's pair): ``value`` must satisfy it, ``fails_at`` must not;
* at delta_g > 0 the composition rebuilt from a spec string (the spec parser, not the calibration's
  ``comp_of``) and decided by :func:`exactdp.is_private`: true at ``value``, false at ``fails_at``;
* the order of the certified ends (q = 1 is the plain answer, smaller q a smaller b, replace-one a
  larger b than add/remove).
"""

from __future__ import annotations

import json
from fractions import Fraction

import mpmath
import pytest

from exactdp import is_private, optimal_epsilon
from exactdp.calibrate import calibrate_laplace_scale
from exactdp.cli.calibrate import main
from exactdp.core.errors import InvalidParameterError
from exactdp.core.numbers import format_fraction
from exactdp.query import run_calibrate_query


def _mp(x: Fraction | int | str) -> mpmath.mpf:
    x = Fraction(x)
    return mpmath.mpf(x.numerator) / x.denominator


def _pure_eps(b: Fraction, k: int, q: Fraction, s: Fraction, relation: str = "add-remove",
              bounded: bool = False) -> mpmath.mpf:
    """The pure-DP eps of k subsampled Laplace(b) steps, the closed form of the largest loss (60 digits)."""
    with mpmath.workdps(60):
        t = _mp(s) / _mp(b)
        qq = _mp(q)
        if bounded:
            c = t / 2
            return k * mpmath.log((1 - qq + qq * mpmath.exp(c)) / (1 - qq + qq * mpmath.exp(-c)))
        if relation == "replace-one":
            return k * t
        return k * mpmath.log(1 + qq * mpmath.expm1(t))


CASES = [(10, "0.5", "1", "1"), (100, "0.01", "1", "1"), (5, "0.2", "0.5", "2"), (1000, "0.001", "2", "1")]


@pytest.mark.parametrize("k,q,e,s", CASES)
def test_pure_dp_add_remove_against_the_closed_form(k: int, q: str, e: str, s: str) -> None:
    r = calibrate_laplace_scale(k, e, "0", q=q, sensitivity=s)
    qq, ss, ee = Fraction(q), Fraction(s), _mp(e)
    assert r.fails_at is not None and r.fails_at < r.value
    assert _pure_eps(Fraction(r.value), k, qq, ss) <= ee < _pure_eps(Fraction(r.fails_at), k, qq, ss)
    assert r.relative_gap is not None and r.relative_gap <= Fraction(1, 10**6)  # exact decisions: a fine gap
    assert r.inputs["q"] == format_fraction(qq)


@pytest.mark.parametrize("k,q,e,s", CASES[:3])
def test_pure_dp_replace_one_is_the_plain_answer(k: int, q: str, e: str, s: str) -> None:
    """The diluted pair's largest loss is the Laplace's own, S/b: at delta 0 the scale is k S / eps_g."""
    r = calibrate_laplace_scale(k, e, "0", q=q, sensitivity=s, relation="replace-one")
    qq, ss, ee = Fraction(q), Fraction(s), _mp(e)
    assert r.fails_at is not None
    assert _pure_eps(Fraction(r.value), k, qq, ss, "replace-one") <= ee
    assert _pure_eps(Fraction(r.fails_at), k, qq, ss, "replace-one") > ee
    assert r.value == k * ss / Fraction(e)  # the optimum is rational, and the shortest decimal is found


@pytest.mark.parametrize("k,q,e,s", [(10, "0.1", "1", "1"), (20, "0.05", "0.5", "2")])
def test_pure_dp_bounded_against_the_closed_form(k: int, q: str, e: str, s: str) -> None:
    r = calibrate_laplace_scale(k, e, "0", q=q, sensitivity=s, relation="replace-one", bounded=True)
    qq, ss, ee = Fraction(q), Fraction(s), _mp(e)
    assert r.fails_at is not None and r.inputs["bounded"] is True
    assert _pure_eps(Fraction(r.value), k, qq, ss, bounded=True) <= ee
    assert _pure_eps(Fraction(r.fails_at), k, qq, ss, bounded=True) > ee


@pytest.mark.parametrize("spec,b,k,q,relation,bounded", [
    ("laplace:scale=20,q=0.5,relation=replace-one,count=10", 20, 10, "0.5", "replace-one", False),
    ("laplace:scale=3,q=0.1,relation=replace-one,bounded=true,count=7", 3, 7, "0.1", "replace-one", True),
    ("laplace:scale=3,sensitivity=2,q=0.1,count=7", 3, 7, "0.1", "add-remove", False),
])
def test_the_engines_eps_at_delta_0_is_the_largest_loss(spec: str, b: int, k: int, q: str, relation: str,
                                                       bounded: bool) -> None:
    """The exact ends of the replace-one pairs (docs/pld.md §11): eps(0) is k times the largest loss."""
    s = Fraction(2) if "sensitivity=2" in spec else Fraction(1)
    enc = optimal_epsilon([spec], 0, digits=20, max_seconds=30)
    ref = _pure_eps(Fraction(b), k, Fraction(q), s, relation, bounded)
    with mpmath.workdps(60):
        assert _mp(enc.lower) <= ref <= _mp(enc.upper)  # type: ignore[arg-type]
        assert enc.upper - enc.lower < Fraction(1, 10**18)  # type: ignore[operator]


def _spec(b: Fraction | int, q: str, k: int, relation: str, bounded: bool) -> str:
    out = f"laplace:scale={format_fraction(Fraction(b))},q={q},count={k}"
    if relation != "add-remove":
        out += f",relation={relation}"
    return out + (",bounded=true" if bounded else "")


@pytest.mark.parametrize("relation,bounded", [("add-remove", False), ("replace-one", False), ("replace-one", True)])
def test_delta_positive_judged_by_is_private(relation: str, bounded: bool) -> None:
    k, q, e, d = 20, "0.05", "1", Fraction(1, 10**5)
    r = calibrate_laplace_scale(k, e, d, q=q, relation=relation, bounded=bounded)
    assert r.fails_at is not None and r.fails_at < r.value
    assert is_private([_spec(r.value, q, k, relation, bounded)], e, d, max_seconds=60)
    assert not is_private([_spec(r.fails_at, q, k, relation, bounded)], e, d, max_seconds=60)


def test_q_1_is_the_plain_answer() -> None:
    plain = calibrate_laplace_scale(10, "1", "1e-6")
    one = calibrate_laplace_scale(10, "1", "1e-6", q=1)
    assert (one.value, one.fails_at) == (plain.value, plain.fails_at) and "q" not in one.inputs
    assert calibrate_laplace_scale(10, "1", "1e-6", q="1", relation="replace-one").value == plain.value


def test_smaller_q_needs_less_noise() -> None:
    """Certified order of the optima: b*(q') <= value(q') < fails_at(q) < b*(q) for q' < q."""
    rs = [calibrate_laplace_scale(10, "1", "1e-6", q=q) for q in ("1", "0.5", "0.1", "0.01")]
    for big, small in zip(rs, rs[1:]):
        assert big.fails_at is not None and small.value < big.fails_at


def test_replace_one_needs_at_least_the_add_remove_scale() -> None:
    for q, k in (("0.05", 20), ("0.01", 100)):
        ar = calibrate_laplace_scale(k, "1", "1e-5", q=q)
        ro = calibrate_laplace_scale(k, "1", "1e-5", q=q, relation="replace-one")
        assert ro.fails_at is not None and ro.fails_at > ar.value, (q, k)  # the replace-one optimum is larger
        assert ro.inputs["relation"] == "replace-one" and "relation" not in ar.inputs


@pytest.mark.parametrize("kw", [{"q": "1.5"}, {"q": "-0.1"}, {"q": "0.1", "bounded": True},
                                {"relation": "replace-one", "bounded": True},
                                {"q": "1", "relation": "replace-one", "bounded": True},
                                {"q": "0.1", "relation": "replace-one", "bounded": "yes"}])
def test_refusals(kw: dict[str, object]) -> None:
    with pytest.raises(InvalidParameterError):
        calibrate_laplace_scale(10, "1", "1e-5", **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize("extra", [["--q", "1.5"], ["--q", "x"], ["--q", "0.1", "--bounded"],
                                   ["--relation", "replace-one", "--bounded"],
                                   ["--q", "0.1", "--relation", "replace-all"]])
def test_cli_bad_input_is_one_line_exit_2(extra: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["laplace-scale", "--k", "10", *extra, "--target-eps", "1", "--target-delta", "1e-5"]
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and err.startswith("exactdp calibrate: error:")


@pytest.mark.parametrize("q", ["1", "0.1"])
def test_an_infeasible_pure_target_is_exit_2(q: str, capsys: pytest.CaptureFixture[str]) -> None:
    """eps_g = 0 at delta_g = 0: every scale's largest loss (the closed forms above) is positive, so no
    scale meets it: one line, exit 2 (it searched toward 0 and ended in exit 3 before)."""
    assert _pure_eps(Fraction(10**9), 10, Fraction(q), Fraction(1)) > 0
    assert main(["laplace-scale", "--k", "10", "--q", q, "--target-eps", "0", "--target-delta", "0"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "no Laplace scale meets" in err


def test_cli_and_batch(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["laplace-scale", "--k", "10", "--q", "0.5", "--target-eps", "1", "--target-delta", "0", "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["inputs"]["q"] == "0.5" and r["calibrate"] == "laplace-scale"
    assert _pure_eps(Fraction(r["value"]), 10, Fraction(1, 2), Fraction(1)) <= 1 < \
        _pure_eps(Fraction(r["fails_at"]), 10, Fraction(1, 2), Fraction(1))
    b = run_calibrate_query({"query": "calibrate", "calibrate": "laplace-scale", "k": 10, "q": "0.1",
                             "relation": "REPLACE_ONE", "bounded": True, "target_eps": "1", "target_delta": "0"})
    assert b["inputs"]["bounded"] is True and b["inputs"]["relation"] == "replace-one"
    q = Fraction(1, 10)
    assert _pure_eps(Fraction(b["value"]), 10, q, Fraction(1), bounded=True) <= 1 < \
        _pure_eps(Fraction(b["fails_at"]), 10, q, Fraction(1), bounded=True)


def test_the_text_names_the_rate(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["laplace-scale", "--k", "10", "--q", "0.5", "--target-eps", "1", "--target-delta", "0"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("smallest Laplace scale b for 10 Laplace queries at q = 0.5 within")
    assert "[0, 1] >" not in out  # a failure decided by the exact ends is not printed as a bracket above 0


def test_bounded_at_q_one_half_is_exact() -> None:
    """At q = 1/2 the bounded pair's largest loss is c = S/(2b) itself ((1 + e^c)/(1 + e^{-c}) = e^c), a
    rational: the optimum b = k S / (2 eps_g) is a tie the Arb comparison could not settle (the grid
    then raised a precision error and the calibration stopped); now exact."""
    with mpmath.workdps(60):
        c = mpmath.mpf(1) / 7
        assert abs((1 + mpmath.exp(c)) / (1 + mpmath.exp(-c)) - mpmath.exp(c)) < mpmath.mpf(10) ** -55
    r = calibrate_laplace_scale(10, "1", "0", q="0.5", relation="replace-one", bounded=True)
    assert r.value == 5 and r.fails_at is not None and r.fails_at < 5
    enc = optimal_epsilon(["laplace:scale=20,q=0.5,relation=replace-one,bounded=true,count=10"], 0, digits=20)
    assert enc.lower == enc.upper == Fraction(1, 4)


def test_a_probe_the_grid_cannot_place_is_undecided(monkeypatch: pytest.MonkeyPatch) -> None:
    """A precision error of the PLD engine at one point is an undecided probe (the search looks
    elsewhere), not the end of the calibration."""
    from exactdp.calibrate.probes import pld_probe
    from exactdp.core.errors import PrecisionError
    from exactdp.core.numbers import ExactReal
    from exactdp.engines.pld import engine
    from exactdp.model.composition import Composition

    def boom(*a: object, **k: object) -> object:
        raise PrecisionError("an atom of the privacy loss sits at 1/10 to 2^14 bits")

    monkeypatch.setattr(engine, "pld_decision", boom)
    probe = pld_probe(lambda x: Composition.of([f"laplace:scale={x},q=0.5,count=10"]), ExactReal.parse("1"),
                      Fraction(0), lambda: None)
    out = probe(Fraction(5))
    assert out.verdict == "undecided" and "atom" in out.proof.how
