"""Issue 29 §1: the memory bound (``--max-memory``, exactdp/core/memory.py).

Every large step predicts its bytes before it allocates: a PLD refinement stops at the finest grid
that fits and says so (``"stopped_by": "memory"``), the process's peak stays under the bound, and an
exact route predicted past it hands the query to the certified PLD bracket, whose answer is checked
here against the independent mpmath oracle of the list family (exactdp/testing/families.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from fractions import Fraction

import mpmath
import pytest

from exactdp.api.optimal import routed_delta
from exactdp.cli import main
from exactdp.core import memory
from exactdp.core.errors import InvalidParameterError
from exactdp.engines import mv_atoms
from exactdp.model.composition import Composition
from exactdp.route import route
from exactdp.testing.families import mv_delta

DPSGD = ["epsilon", "--mechanism", "gaussian:sigma=1,q=0.01,count=1000", "--at-delta", "1e-5", "--digits", "8",
         "--max-seconds", "20", "--json"]


def _peak_run(args: list[str]) -> tuple[int, dict, int]:
    """(exit status, JSON printed, peak resident bytes) of ``exactdp ARGS`` in a fresh interpreter."""
    # VmHWM: the peak of this process image (ru_maxrss would keep the forking parent's peak across exec)
    code = ("import sys, json; from exactdp.cli import main; rc = main(sys.argv[1:]); "
            "hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM:')][0].split()[1]; "
            "print(json.dumps({'rc': rc, 'peak': int(hwm) * 1024}))")
    r = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120, check=False)
    lines = r.stdout.strip().splitlines()
    tail = json.loads(lines[-1])
    return tail["rc"], json.loads(lines[0]), tail["peak"]


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads the peak from /proc")
def test_a_refinement_stops_at_the_memory_bound_and_says_so() -> None:
    rc, js, peak = _peak_run([*DPSGD, "--max-memory", "100M"])
    assert rc == 0, js
    assert peak <= 100 << 20, peak
    assert js["stopped_by"] == "memory" and js["digits"] < js["digits_requested"] == 8, js


def test_the_text_output_names_the_memory_bound() -> None:
    r = subprocess.run([sys.executable, "-m", "exactdp", *DPSGD[:-1], "--max-memory", "70M"], capture_output=True,
                       text=True, timeout=120, check=False)
    assert r.returncode == 0 and "within the memory bound; --max-memory gives it more" in r.stdout, (r.stdout, r.stderr)


@pytest.mark.parametrize("bad", ["10k", "lots", "2X", "-1G", "1e400"])
def test_a_bad_size_is_one_line_exit_2(bad: str, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["epsilon", "--eps", "0.1", "--k", "10", "--at-delta", "1e-5", f"--max-memory={bad}"])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and "--max-memory" in err, err
    with pytest.raises(InvalidParameterError):
        memory.parse_bytes(bad)


def test_an_exact_route_past_the_bound_hands_the_query_to_the_pld_bracket(monkeypatch: pytest.MonkeyPatch) -> None:
    groups = [(Fraction(1, 100), Fraction(0), 40), (Fraction(1, 20), Fraction(0), 40), (Fraction(1, 10), Fraction(0), 40)]
    comp = Composition.heterogeneous([(str(e), "0", n) for e, _, n in groups])
    assert route(comp).engine.name == "mv"
    # an exact profile that predicts far more memory than the bound leaves
    monkeypatch.setattr(mv_atoms, "PRODUCT_BYTES_FACTOR", 10**9)
    eps_g = Fraction(1, 2)
    enc, r = routed_delta(comp, eps_g, digits=6)
    assert (r.row, r.engine.name) == ("otherwise", "pld") and "memory bound" in r.reason, r
    want = mv_delta(groups, eps_g, dps=50)
    with mpmath.workdps(50):
        assert mpmath.mpf(enc.lower.numerator) / enc.lower.denominator <= want
        assert want <= mpmath.mpf(enc.upper.numerator) / enc.upper.denominator
    assert enc.digits >= 6 or enc.upper - enc.lower < Fraction(1, 10**5)
