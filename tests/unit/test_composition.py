"""exactdp.composition: validation, merging of equal mechanisms, immutability, the inputs object."""

from __future__ import annotations

import dataclasses
from decimal import Decimal
from fractions import Fraction

import gmpy2
import pytest

from exactdp.composition import Composition, Mechanism
from exactdp.errors import InexactInputError, InvalidParameterError
from exactdp.numbers import ExactReal


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
