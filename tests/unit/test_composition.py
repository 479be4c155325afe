"""exactdp.model.composition: validation, merging of equal mechanisms, immutability, the inputs object."""

from __future__ import annotations

import dataclasses
import re
from decimal import Decimal
from fractions import Fraction

import gmpy2
import pytest

from exactdp.model.composition import Composition
from exactdp.model.generic import Mechanism
from exactdp.core.errors import InexactInputError, InvalidParameterError
from exactdp.core.numbers import ExactReal


@pytest.mark.parametrize("eps", ["-0.1", "-1/3", "nan", "NaN", "inf", "-inf", "Infinity", "log(1/2)", "log(0)",
                                 Decimal("NaN"), Decimal("Infinity"), Fraction(-1, 2), "abc", ""])
def test_bad_eps(eps: object) -> None:
    with pytest.raises(InvalidParameterError, match="eps"):
        Composition.homogeneous(eps, 0, 3)


@pytest.mark.parametrize("delta", ["1", "1.5", "-1e-9", "nan", "inf", Fraction(3, 2), Decimal("NaN"), "x"])
def test_bad_delta(delta: object) -> None:
    with pytest.raises(InvalidParameterError, match="delta"):
        Composition.homogeneous("0.1", delta, 3)


@pytest.mark.parametrize("k", [0, -1, 1.5, "1.5", True, False, "abc", Fraction(1, 2), None])
def test_bad_k(k: object) -> None:
    with pytest.raises(InvalidParameterError, match="k="):
        Composition.homogeneous("0.1", 0, k)


@pytest.mark.parametrize("x", [0.1, float("nan"), float("inf")])
def test_float_inputs_refused(x: float) -> None:
    with pytest.raises(InexactInputError):
        Composition.homogeneous(x, 0, 3)
    with pytest.raises(InexactInputError):
        Composition.homogeneous("0.1", x, 3)
    with pytest.raises(InexactInputError):
        Composition.heterogeneous([(x, 0)])


@pytest.mark.parametrize("mechs", [[], (), "0.1", b"0.1", [("0.1", 0, 1, 2)], [()], [("0.1", 0, 0)],
                                   [("0.1", 0, -1)], [("0.1", 0, True)], [("0.1", "1")]])
def test_bad_lists(mechs: object) -> None:
    with pytest.raises(InvalidParameterError):
        Composition.heterogeneous(mechs)  # type: ignore[arg-type]


def test_bad_raw_groups() -> None:
    with pytest.raises(InvalidParameterError):
        Composition(())
    with pytest.raises(InvalidParameterError):
        Composition(((Mechanism.of("0.1"), 0),))
    with pytest.raises(InvalidParameterError):
        Composition((("0.1", 1),))  # type: ignore[arg-type]
    with pytest.raises(InvalidParameterError):
        Composition([(Mechanism.of("0.1"), 1)])  # type: ignore[arg-type]


def test_error_names_the_entry() -> None:
    with pytest.raises(InvalidParameterError, match=r"mechanisms\[1\]\.delta"):
        Composition.heterogeneous([("0.1", 0), ("0.2", "2")])


def test_homogeneous() -> None:
    c = Composition.homogeneous("0.1", "1e-3", 30)
    eps, delta, k = c.homogeneous_params()
    assert eps == ExactReal.rational(Fraction(1, 10)) and delta == Fraction(1, 1000) and k == 30
    assert c.k == 30 and c.is_homogeneous and not c.is_pure
    assert c.to_inputs() == {"eps": "0.1", "delta": "0.001", "k": 30}
    assert Composition.homogeneous("log(3/2)", k=4).to_inputs() == {"eps": "log(1.5)", "delta": "0", "k": 4}


def test_inputs_of_every_exact_type_agree() -> None:
    cs = [Composition.homogeneous(x, y, k) for x, y, k in [
        ("0.1", "0.001", 30), (Fraction(1, 10), Fraction(1, 1000), 30), (Decimal("0.1"), Decimal("0.001"), "30"),
        (gmpy2.mpq(1, 10), gmpy2.mpq(1, 1000), 30), ("1/10", "1e-3", Fraction(30))]]
    assert all(c == cs[0] for c in cs)


def test_heterogeneous_merges_equal_mechanisms() -> None:
    c = Composition.heterogeneous([("0.1", 0), ("0.2", "1e-6"), ("1/10", "0"), ("0.2", "0.000001", 3)])
    assert [(str(m.eps), m.delta, n) for m, n in c.groups] == [("0.1", 0, 2), ("0.2", Fraction(1, 10**6), 4)]
    assert c.k == 6 and not c.is_homogeneous
    assert c.to_inputs() == {"mechanisms": [["0.1", "0", "2"], ["0.2", "0.000001", "4"]]}
    assert len(list(c.mechanisms())) == 6
    with pytest.raises(InvalidParameterError):
        c.homogeneous_params()
    # all equal: homogeneous
    assert Composition.heterogeneous(["0.5", "1/2", ("0.5", 0)]).homogeneous_params()[2] == 3


def test_log_and_rational_eps_are_different_mechanisms() -> None:
    c = Composition.heterogeneous(["log(2)", "0.6931471805599453"])
    assert c.k == 2 and not c.is_homogeneous


def test_huge_k_is_one_group() -> None:
    c = Composition.homogeneous("1e-9", 0, 10**15)
    assert c.k == 10**15 and len(c.groups) == 1 and c.is_pure


def test_immutable() -> None:
    c = Composition.homogeneous("0.1", 0, 3)
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.groups = ()  # type: ignore[misc]
    m = c.groups[0][0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        m.eps = ExactReal.parse("1")  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        m.eps.value = Fraction(1)  # type: ignore[misc]
    assert isinstance(c.groups, tuple)
    # hashable and equal by value
    assert hash(c) == hash(Composition.homogeneous("1/10", "0", 3))


def test_str() -> None:
    assert str(Composition.homogeneous("0.1", "0.001", 30)) == "30 x (0.1, 0.001)-DP"
    assert str(Composition.heterogeneous([("1", "0.1"), ("2", "0.2")])) == "(1, 0.1) + (2, 0.2)"


# -- Composition.of: the one parser of shorthands ----------------------------------------------------

HOM = Composition.homogeneous("0.1", "0.001", 30)


@pytest.mark.parametrize("obj", [HOM, ("0.1", "0.001", 30), ["0.1", "0.001", 30], ("1/10", "1e-3", "30"),
                                 (Fraction(1, 10), Fraction(1, 1000), Fraction(30)), (Decimal("0.1"), "0.001", 30),
                                 {"eps": "0.1", "delta": "0.001", "k": 30}, [("0.1", "0.001", 30)],
                                 [(Mechanism.of("0.1", "0.001"), 30)], [Mechanism.of("0.1", "0.001")] * 30,
                                 {"mechanisms": [["0.1", "0.001", "30"]]}, HOM.to_inputs()])
def test_of_homogeneous_forms(obj: object) -> None:
    assert Composition.of(obj) == HOM


def test_of_returns_a_composition_as_is_and_round_trips_inputs() -> None:
    assert Composition.of(HOM) is HOM
    het = Composition.heterogeneous([("1", "0.1"), ("2", "0.2", 3)])
    assert Composition.of(het.to_inputs()) == het
    assert Composition.of([("1", "0.1"), ["2", "0.2", 3]]) == het
    assert Composition.of([(Mechanism.of("1", "0.1"), 1), (Mechanism.of("2", "0.2"), 3)]) == het
    assert Composition.of({"eps": "0.1", "k": 3}) == Composition.homogeneous("0.1", 0, 3)


def test_of_takes_numpy_integers_for_k_and_counts() -> None:
    np = pytest.importorskip("numpy")
    assert Composition.of(("0.1", "0.001", np.int64(30))) == HOM
    assert Composition.of({"eps": "0.1", "delta": "0.001", "k": np.uint16(30)}) == HOM
    assert Composition.of([("0.1", "0.001", np.int32(30))]) == HOM
    assert Composition.of([(Mechanism.of("0.1", "0.001"), np.int8(30))]) == HOM
    assert Composition.homogeneous("0.1", "0.001", np.int64(30)) == HOM
    with pytest.raises(InvalidParameterError, match="integer k"):
        Composition.of(("0.1", "0.001", np.float64(30)))
    with pytest.raises(InvalidParameterError):
        Composition.of(("0.1", "0.001", np.True_))


@pytest.mark.parametrize("flat", [("0.1", 30), ["0.1", 30], ("0.1", "0.2"), ["0.1", "0.2", "0.3"],
                                  ("0.1", 0, "1.5"), ("1", "2", "3", "4"), ["0.5"]])
def test_flat_lists_of_numbers_are_refused_with_both_unambiguous_forms(flat: object) -> None:
    with pytest.raises(InvalidParameterError) as err:
        Composition.of(flat)
    msg = str(err.value)
    assert "\n" not in msg and "ambiguous" in msg
    assert "Composition.homogeneous(" in msg and f"[({flat[0]!r}, 0)" in msg


def test_flat_pair_message_shows_the_two_readings() -> None:
    with pytest.raises(InvalidParameterError, match=re.escape(
            "write Composition.homogeneous('0.1', 0, 30) for 30 equal mechanisms, "
            "or [('0.1', 0), (30, 0)] for a list of (eps, delta) mechanisms")):
        Composition.of(("0.1", 30))


@pytest.mark.parametrize("obj", [None, "0.1", b"0.1", 0.1, 3, True, object(), Mechanism.of("0.1"), (), [],
                                 {}, {"eps": "0.1"}, {"k": 3}, {"eps": "0.1", "k": 3, "extra": 1},
                                 {"mechanisms": [("0.1", 0)], "k": 3}, [("0.1", 0), "0.2"], [("0.1",)],
                                 [("0.1", 0, 1, 2)], (("0.1", 0), 30), iter([("0.1", 0)]), {"x"}])
def test_of_refuses_everything_else_with_a_typed_one_line_error(obj: object) -> None:
    with pytest.raises(InvalidParameterError) as err:
        Composition.of(obj)
    assert "\n" not in str(err.value)


def test_flat_triple_with_a_bad_integer_k_names_k() -> None:
    with pytest.raises(InvalidParameterError, match="k=0 must be a positive integer"):
        Composition.of(("0.1", 0, 0))


@pytest.mark.parametrize("obj", [None, 3, object(), {"eps": "0.1"}, HOM, "0.1"])
def test_heterogeneous_refuses_non_lists_with_a_typed_error(obj: object) -> None:
    with pytest.raises(InvalidParameterError):
        Composition.heterogeneous(obj)  # type: ignore[arg-type]


def test_heterogeneous_keeps_bare_eps_entries() -> None:
    c = Composition.heterogeneous(["0.1", ("0.2",), ("0.3", "0"), (Mechanism.of("0.4"), 2)])
    assert [str(m.eps) for m, _ in c.groups] == ["0.1", "0.2", "0.3", "0.4"] and c.k == 5
    assert Composition.heterogeneous(m for m in [("0.1", 0)]).k == 1  # any iterable


def test_one_spec_string_is_a_composition() -> None:
    # docs/kit.md passes a spec string where a composition goes (issue 25 §4)
    from exactdp import optimal_epsilon

    c = Composition.of("gaussian:sigma=1,q=0.01,count=1000")
    assert c == Composition.of(["gaussian:sigma=1,q=0.01,count=1000"]) and c.k == 1000
    one = optimal_epsilon("gaussian:sigma=2,count=10", "1e-5", digits=10)
    assert one == optimal_epsilon(["gaussian:sigma=2,count=10"], "1e-5", digits=10)
    with pytest.raises(InvalidParameterError, match="or a mechanism spec"):
        Composition.of("0.1")


@pytest.mark.parametrize("spec", ["approx:eps=1,delta=0.1,q=0.5", "approx:eps=log(3/2),q=0.01",
                                  "gaussian:sigma=1,q=0.01", "laplace:scale=10,q=1/8", "rr:eps=1,categories=4,q=0.3"])
def test_every_mechanism_spec_reads_back(spec: str) -> None:
    # issue 25 §3: a subsampled approx mechanism printed as '1,0.1,q=0.5', which no reader takes
    # (the CLI re-reads the normalised specs it builds, so the command refused its own input)
    from exactdp.model.spec import parse_mechanism_spec

    m, count = parse_mechanism_spec(spec)
    assert parse_mechanism_spec(str(m)) == (m, 1) and count == 1
    comp = Composition.of([(m, 3)])
    assert Composition.of(comp.to_inputs()["mechanisms"]) == comp
