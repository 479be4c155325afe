"""A composition given as positional SPECs (``exactdp rdp SPEC --orders 2``, the form of issue 28's
interface) reads the same as ``--mechanism SPEC``, in every command that takes a composition."""

from __future__ import annotations

import json

import mpmath
import pytest

from exactdp.cli import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        rc = main(list(argv))
    except SystemExit as e:  # argparse errors
        rc = int(e.code or 0)
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.mark.parametrize("argv", [
    ("rdp", "--orders", "2,8", "--json"),
    ("tradeoff", "--alpha", "0.05", "--json"),
    ("epsilon", "--at-delta", "1e-5", "--json"),
    ("delta", "--at-eps", "1", "--json"),
])
def test_a_positional_spec_is_a_mechanism(capsys: pytest.CaptureFixture[str], argv: tuple[str, ...]) -> None:
    spec = "gaussian:sigma=2,count=4"
    rc1, out1, err1 = run(capsys, argv[0], spec, *argv[1:])
    rc2, out2, _ = run(capsys, argv[0], "--mechanism", spec, *argv[1:])
    assert rc1 == rc2 == 0, err1
    assert json.loads(out1) == json.loads(out2)


def test_positional_and_repeated_specs_compose(capsys: pytest.CaptureFixture[str]) -> None:
    """Two positional SPECs and a --mechanism: mu^2 adds (Gaussians), checked against the closed form
    delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) in mpmath."""
    rc, out, err = run(capsys, "delta", "gaussian:sigma=1", "gaussian:sigma=2", "--mechanism", "gaussian:sigma=2",
                       "--at-eps", "1", "--json", "--digits", "12")
    assert rc == 0, err
    r = json.loads(out)
    with mpmath.workdps(40):
        mu = mpmath.sqrt(1 + mpmath.mpf(1) / 4 + mpmath.mpf(1) / 4)
        true = mpmath.ncdf(-1 / mu + mu / 2) - mpmath.e * mpmath.ncdf(-1 / mu - mu / 2)
        assert mpmath.mpf(r["lower"]) <= true <= mpmath.mpf(r["upper"])


def test_no_composition_is_still_refused(capsys: pytest.CaptureFixture[str]) -> None:
    rc, _, err = run(capsys, "rdp", "--orders", "2")
    assert rc == 2 and err.count("\n") == 1 and "composition" in err
