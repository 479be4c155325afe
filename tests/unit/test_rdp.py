"""Issue 28 §1 (a first slice): certified Rényi divergences, checked against mpmath quadrature and
direct sums (never against the engine's own formulas), and the refusals by name."""

from __future__ import annotations

from fractions import Fraction

import mpmath
import pytest

from exactdp.api.rdp import rdp_curve
from exactdp.core.errors import InvalidParameterError

from mpref import inside, mp, renyi  # tests/unit/mpref.py


@pytest.fixture(autouse=True)
def _forty_digits() -> object:
    """mpmath at 40 digits inside each test of this module only (the global precision is left alone)."""
    with mpmath.workdps(40):
        yield


@pytest.mark.parametrize(("sigma", "alpha"), [("1", "2"), ("0.7", "3.5"), ("3", "1.25")])
def test_gaussian_against_quadrature(sigma: str, alpha: str) -> None:
    s, a = mp(sigma), mp(alpha)
    truth = renyi(lambda x: mpmath.npdf(x, 1, s), lambda x: mpmath.npdf(x, 0, s), a)
    (e,) = rdp_curve(f"gaussian:sigma={sigma}", [alpha], digits=10)
    assert e.exact is not None and inside(e, truth)


@pytest.mark.parametrize(("scale", "alpha"), [("1", "2"), ("0.5", "3.5"), ("4", "1.5")])
def test_laplace_against_quadrature(scale: str, alpha: str) -> None:
    b, a = mp(scale), mp(alpha)
    lap = lambda x, mu: mpmath.exp(-abs(x - mu) / b) / (2 * b)  # noqa: E731
    truth = renyi(lambda x: lap(x, 1), lambda x: lap(x, 0), a)
    (e,) = rdp_curve(f"laplace:scale={scale}", [alpha], digits=10)
    assert inside(e, truth)


@pytest.mark.parametrize(("eps", "k", "alpha"), [("1", 2, "2"), ("log(3)", 4, "3"), ("0.5", 10, "1.5")])
def test_randomized_response_against_the_sum_over_outputs(eps: str, k: int, alpha: str) -> None:
    x = mpmath.e ** (mp(eps) if not eps.startswith("log") else mpmath.log(3))
    z = x + k - 1
    p = [x / z] + [1 / z] * (k - 1)           # the output distribution on x: the true value first
    q = [1 / z, x / z] + [1 / z] * (k - 2)    # on x' (the second output is x')
    a = mp(alpha)
    truth = mpmath.log(mpmath.fsum(pi ** a * qi ** (1 - a) for pi, qi in zip(p, q))) / (a - 1)
    (e,) = rdp_curve(f"rr:eps={eps},categories={k}", [alpha], digits=10)
    assert inside(e, truth)


@pytest.mark.parametrize(("eps", "k", "alpha", "count"), [("1", 2, "2", 1), ("log(3)", 4, "3.5", 3), ("0.5", 10, "1.5", 2)])
def test_replace_special_randomized_response_against_the_sum_over_outputs(eps: str, k: int, alpha: str,
                                                                          count: int) -> None:
    """dp_accounting's replace-special RR: R(x) against the uniform output, each direction, the max of the
    two sums, and count copies adding (mpmath sums over the k outputs)."""
    x = mpmath.e ** (mp(eps) if not eps.startswith("log") else mpmath.log(3))
    z = x + k - 1
    p = [x / z] + [1 / z] * (k - 1)
    u = [mpmath.mpf(1) / k] * k
    a = mp(alpha)

    def div(left: list, right: list) -> object:
        return mpmath.log(mpmath.fsum(pi ** a * qi ** (1 - a) for pi, qi in zip(left, right))) / (a - 1)

    spec = f"rr:eps={eps},categories={k},relation=replace-special,count={count}"
    want = {"remove": count * div(p, u), "add": count * div(u, p)}
    want["max"] = max(want["remove"], want["add"])
    for direction, truth in want.items():
        (e,) = rdp_curve(spec, [alpha], digits=10, direction=direction)
        assert inside(e, truth) and e.digits >= 10, (direction, e)
    assert want["remove"] != want["add"]  # the two orders differ: a swapped pair would be caught


def test_replace_special_randomized_response_oriented_refuses_the_other_direction() -> None:
    with pytest.raises(InvalidParameterError, match="add direction only"):
        rdp_curve("rr:eps=1,relation=replace-special,direction=add", ["2"], direction="remove")


@pytest.mark.parametrize(("sigma", "q", "alpha"), [("1", "0.01", 2), ("0.8", "0.125", 8), ("2", "0.5", 3)])
def test_subsampled_gaussian_remove_direction_against_quadrature(sigma: str, q: str, alpha: int) -> None:
    s, qq, a = mp(sigma), mp(q), mpmath.mpf(alpha)
    mix = lambda x: (1 - qq) * mpmath.npdf(x, 0, s) + qq * mpmath.npdf(x, 1, s)  # noqa: E731
    truth = renyi(mix, lambda x: mpmath.npdf(x, 0, s), a)
    (e,) = rdp_curve(f"gaussian:sigma={sigma},q={q}", [alpha], digits=10, direction="remove")
    assert inside(e, truth)


def test_composition_adds_at_each_order() -> None:
    comp = ["gaussian:sigma=2,count=3", "laplace:scale=1,count=2", "rr:eps=1,categories=3"]
    for a in ("2", "5.5"):
        (whole,) = rdp_curve(comp, [a], digits=12)
        parts = [rdp_curve(c, [a], digits=20)[0] for c in ("gaussian:sigma=2", "laplace:scale=1", "rr:eps=1,categories=3")]
        mid = 3 * mp(parts[0].lower) + 2 * mp(parts[1].lower) + mp(parts[2].lower)
        assert inside(whole, mid)


def test_infinite_and_refused() -> None:
    assert all(e.is_infinite for e in rdp_curve([("1", "0.1")], [2, 3]))
    with pytest.raises(InvalidParameterError, match="direction='both' must be one of"):
        rdp_curve("gaussian:sigma=1,q=0.1", [2], direction="both")
    with pytest.raises(InvalidParameterError, match="must be > 1"):
        rdp_curve("gaussian:sigma=1", ["1"])


def test_the_command_and_the_batch_line_print_the_interface(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from exactdp.cli import main
    from exactdp.query import run_query

    assert main(["rdp", "--mechanism", "gaussian:sigma=2,count=10", "--orders", "2,3.5,64", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["query"] == "rdp" and [o["order"] for o in out["orders"]] == ["2", "3.5", "64"]
    assert [o["lower"] for o in out["orders"]] == ["2.5", "4.375", "80"] == [o["upper"] for o in out["orders"]]
    assert all(set(o) >= {"order", "lower", "upper", "digits"} for o in out["orders"])
    line = run_query({"query": "rdp", "mechanisms": ["gaussian:sigma=2,count=10"], "orders": ["2", "3.5", "64"], "digits": 10,
                      "id": 7})
    assert line["orders"] == out["orders"] and line["id"] == 7
    assert main(["rdp", "--mechanism", "gaussian:sigma=1", "--orders", "0.5"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "must be > 1" in err
