"""Calibration under a neighbouring relation (issue 27 §1): ``relation=`` / ``bounded=`` of the
Python calibration functions and ``--relation`` / ``--bounded`` of ``exactdp calibrate``.

Each answer is judged independently: the composition is rebuilt from a spec string (the spec
parser, not the calibration's own ``comp_of``) and decided by :func:`exactdp.is_private` (the
routed exact decision of the api, not the calibration's probe): true at ``value``, false at
``fails_at``.
"""

from __future__ import annotations

import enum
import json
from fractions import Fraction

import pytest

from exactdp import is_private
from exactdp.calibrate import calibrate_k, calibrate_laplace_scale, calibrate_q, calibrate_sigma, get_noise_multiplier
from exactdp.cli.calibrate import main
from exactdp.core.errors import InvalidParameterError
from exactdp.core.numbers import format_fraction
from exactdp.query import run_calibrate_query

EPS, DELTA = "1", "1e-5"
DG = Fraction(1, 10**5)


def _spec(sigma: Fraction, q: Fraction, relation: str, bounded: bool = False, k: int = 100) -> str:
    s = f"gaussian:sigma={format_fraction(sigma)},q={format_fraction(q)},count={k}"
    if relation != "add-remove":
        s += f",relation={relation}"
    return s + (",bounded=true" if bounded else "")


def _judged(value_spec: str, fails_spec: str) -> None:
    assert is_private([value_spec], EPS, DG), value_spec
    assert not is_private([fails_spec], EPS, DG), fails_spec


@pytest.mark.parametrize("relation,bounded", [("replace-one", False), ("replace-one", True), ("add-remove", False)])
def test_sigma_under_a_relation_meets_at_value_and_misses_at_fails_at(relation: str, bounded: bool) -> None:
    r = calibrate_sigma(100, EPS, DELTA, q="0.05", relation=relation, bounded=bounded)
    q = Fraction(1, 20)
    _judged(_spec(r.value, q, relation, bounded), _spec(r.fails_at, q, relation, bounded))
    assert r.inputs.get("relation", "add-remove") == relation and r.inputs.get("bounded", False) == bounded


def test_replace_one_needs_a_larger_sigma_than_add_remove() -> None:
    """The property: the replace-one pair of a subsampled Gaussian (Theorem 9.2, the diluted pair) is
    less private than the add/remove one, so its certified sigma lies above add/remove's fails_at, and
    without subsampling the relation changes nothing (the pair is the same; sensitivity is stated for
    the relation in use)."""
    for q, k in (("0.05", 100), ("0.01", 1000), ("0.2", 10)):
        ar = calibrate_sigma(k, EPS, DELTA, q=q)
        ro = calibrate_sigma(k, EPS, DELTA, q=q, relation="replace-one")
        assert ro.fails_at > ar.value, (q, k, ar.value, ro.fails_at)  # the optimum of replace-one is larger
        assert ro.value > ar.value
    assert calibrate_sigma(100, EPS, DELTA, relation="replace-one").value == calibrate_sigma(100, EPS, DELTA).value


def test_q_under_replace_one() -> None:
    r = calibrate_q("5", 10, EPS, DELTA, relation="replace-one")
    sig = Fraction(5)
    _judged(_spec(sig, r.value, "replace-one", k=10), _spec(sig, r.fails_at, "replace-one", k=10))
    # add/remove at replace-one's failing rate still meets the target: replace-one's q is smaller
    assert is_private([_spec(sig, r.fails_at, "add-remove", k=10)], EPS, DG)


def test_q_bounded() -> None:
    r = calibrate_q("2", 10, EPS, DELTA, relation="replace-one", bounded=True)
    sig = Fraction(2)
    _judged(_spec(sig, r.value, "replace-one", True, k=10), _spec(sig, r.fails_at, "replace-one", True, k=10))


def test_get_noise_multiplier_takes_dp_accountings_relation_enum() -> None:
    class NeighboringRelation(enum.Enum):  # dp_accounting's enum, as its members read
        ADD_OR_REMOVE_ONE = 1
        REPLACE_ONE = 2

    r = get_noise_multiplier(target_epsilon=1, target_delta="1e-5", sample_rate="0.05", steps=100,
                             relation=NeighboringRelation.REPLACE_ONE)
    _judged(_spec(r.value, Fraction(1, 20), "replace-one"), _spec(r.fails_at, Fraction(1, 20), "replace-one"))
    ar = get_noise_multiplier(target_epsilon=1, target_delta="1e-5", sample_rate="0.05", steps=100,
                              relation=NeighboringRelation.ADD_OR_REMOVE_ONE)
    assert ar.value == calibrate_sigma(100, EPS, DELTA, q="0.05").value < r.value


def test_laplace_scale_records_the_relation_and_is_the_same() -> None:
    a = calibrate_laplace_scale(10, "1", "0", sensitivity=2)
    b = calibrate_laplace_scale(10, "1", "0", sensitivity=2, relation="replace-one")
    assert a.value == b.value == 20 and b.inputs["relation"] == "replace-one" and "relation" not in a.inputs


def test_calibrate_k_reads_the_specs_relation() -> None:
    """``calibrate k`` takes the relation in the mechanism's spec."""
    spec = "gaussian:sigma=10,q=0.05,relation=replace-one"
    r = calibrate_k(spec, EPS, DELTA)
    _judged(f"{spec},count={r.value}", f"{spec},count={r.fails_at}")
    assert r.value < calibrate_k("gaussian:sigma=10,q=0.05", EPS, DELTA).value


@pytest.mark.parametrize("kw", [{"relation": "replace-all"}, {"relation": 3}, {"bounded": True},
                                {"relation": "replace-one", "bounded": "yes"},
                                {"relation": "replace-special"}])
def test_refusals(kw: dict[str, object]) -> None:
    with pytest.raises(InvalidParameterError):
        calibrate_sigma(10, EPS, DELTA, q="0.1", **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize("argv", [
    ["sigma", "--k", "10", "--q", "0.1", "--relation", "replace-all", "--target-eps", "1", "--target-delta", "1e-5"],
    ["sigma", "--k", "10", "--q", "0.1", "--bounded", "--target-eps", "1", "--target-delta", "1e-5"],
    ["q", "--sigma", "2", "--k", "10", "--relation", "nope", "--target-eps", "1", "--target-delta", "1e-5"],
    ["laplace-scale", "--k", "10", "--relation", "x", "--target-eps", "1", "--target-delta", "1e-5"],
])
def test_cli_bad_relation_is_one_line_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and err.startswith("exactdp calibrate: error:")


def test_cli_and_batch_relation(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sigma", "--k", "100", "--q", "0.05", "--relation", "replace-one", "--target-eps", "1",
                 "--target-delta", "1e-5", "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["inputs"]["relation"] == "replace-one"
    q = Fraction(1, 20)
    _judged(_spec(Fraction(r["value"]), q, "replace-one"), _spec(Fraction(r["fails_at"]), q, "replace-one"))
    b = run_calibrate_query({"query": "calibrate", "calibrate": "sigma", "k": 100, "q": "0.05",
                             "relation": "REPLACE_ONE", "bounded": True, "target_eps": "1", "target_delta": "1e-5"})
    q = Fraction(1, 20)
    _judged(_spec(Fraction(b["value"]), q, "replace-one", True), _spec(Fraction(b["fails_at"]), q, "replace-one", True))
