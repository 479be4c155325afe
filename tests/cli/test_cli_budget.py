"""``exactdp budget``: the spent and remaining budget of a plan, every --help example, the plot."""

from __future__ import annotations

import io
import json
import os
import shlex
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from exactdp import is_private
from exactdp.calibrate.budget import budget
from exactdp.cli import main as cli_main
from exactdp.cli.budget import EXAMPLES


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = cli_main(argv)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("example", EXAMPLES)
def test_every_help_example_runs_as_shown(example: str, tmp_path: Path) -> None:
    if "|" in example:  # a shell pipeline: run it as shown, in a shell, in an empty folder
        pytest.importorskip("matplotlib")
        env = {**os.environ, "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")}
        p = subprocess.run(["bash", "-c", example], cwd=tmp_path, capture_output=True, text=True, timeout=300, env=env)
        assert p.returncode == 0 and p.stdout.strip() and not p.stderr, p.stderr
        assert (tmp_path / "spend.png").read_bytes()[:4] == b"\x89PNG"
        return
    code, out, err = run(shlex.split(example)[1:])
    assert code == 0 and out.strip() and not err
    if "--json" in example:
        assert json.loads(out)["query"] == "budget"


def test_help_shows_the_examples() -> None:
    out = io.StringIO()
    with redirect_stdout(out):
        code = cli_main(["budget", "--help"])
    assert code == 0
    for e in EXAMPLES:
        assert e in out.getvalue()


def test_remaining_is_certified() -> None:
    plan = [("0.1", "0", 10), ("0.5", "0.000001")]
    r = budget(plan, "2", "1e-5", next_mechanism="0.2")
    assert r.within
    rem = r.rows[0].remaining
    assert is_private(plan + [(rem.value, "0")], "2", "1e-5")
    assert not is_private(plan + [(rem.fails_at, "0")], "2", "1e-5")
    k = r.next_count
    assert k.exact and is_private(plan + [("0.2", "0", k.value)], "2", "1e-5")
    assert not is_private(plan + [("0.2", "0", k.value + 1)], "2", "1e-5")
    basic = next(x for x in r.rows if x.method == "basic")
    assert basic.remaining.value == 0.5  # 2 - 1.5 exactly
    # every bound leaves at most what the optimum leaves
    for x in r.rows[1:]:
        assert x.remaining is None or x.remaining.value < rem.fails_at


def test_over_budget_exits_1() -> None:
    code, out, err = run(["budget", "--mechanism", "1,0,5", "--target-eps", "2", "--target-delta", "1e-5"])
    assert code == 1 and "MISSES" in out and not err


def test_plot_is_written(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    f = tmp_path / "spend.png"
    code, out, err = run(["budget", "--mechanism", "0.1,0,10", "--target-eps", "2", "--target-delta", "1e-5",
                          "--plot", str(f)])
    assert code == 0 and f.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("argv", [
    ["budget", "--target-eps", "2", "--target-delta", "1e-5"],
    ["budget", "--mechanism", "0.1", "--target-eps", "x", "--target-delta", "1e-5"],
    ["budget", "--mechanism", "0.1", "--target-eps", "2"],
    ["budget", "--mechanism", "0.1", "--target-eps", "2", "--target-delta", "1e-5", "--next", "nope:x=1"],
])
def test_bad_input(argv: list[str]) -> None:
    code, out, err = run(argv)
    assert code == 2 and out == "" and err.count("\n") == 1 and "Traceback" not in err


def test_bad_plot_path_is_refused_before_any_work(tmp_path: Path) -> None:
    bad = tmp_path / "missing-folder" / "x.png"
    code, out, err = run(["budget", "--mechanism", "0.1", "--target-eps", "2", "--target-delta", "1e-5",
                          "--plot", str(bad)])
    assert code == 2 and out == "" and not bad.parent.exists()
