"""Every example in ``--help`` and in README.md runs as shown (issue 10.8).

Examples are extracted, not copied: a help text's lines under ``examples:`` that start with
``exactdp`` or feed it (``printf ... | exactdp``), and the README's shell and Python code blocks.
Each runs in a fresh temporary folder (so files an example writes land there); a shell example
must exit 0 (a ``check`` example may exit 1: "not private" is its answer), a Python block must
not raise.  Examples that take more than a few seconds are marked slow and run in CI's slow step.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from exactdp.cli import FORWARDED_COMMANDS, build_parser

ROOT = Path(__file__).resolve().parents[2]
EXE = str(Path(sys.executable).parent / "exactdp")

#: examples that need more than a few seconds (the full cross-check, building every table, ...)
SLOW = ("crosscheck dp_accounting", "crosscheck --quick", "tables build", "tables verify", "--k 10000",
        "count=10000", "proofs", "benchmarks/", "calibrate sigma", "calibrate k", "budget")
#: examples that need a source checkout or an extra that CI may not have
NEEDS = {"--plot": "matplotlib", "crosscheck": "dp_accounting"}


def _help_text(cmd: list[str]) -> str:
    p = subprocess.run([EXE, *cmd, "--help"], capture_output=True, text=True, timeout=120)
    return p.stdout


def help_examples() -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    cmds: list[list[str]] = [[], ["delta"], ["epsilon"], ["check"], ["batch"]]
    cmds += [[name] for name in FORWARDED_COMMANDS]
    for cmd in cmds:
        text = _help_text(cmd)
        take = False
        for line in text.splitlines():
            s = line.strip()
            if s.lower().startswith("example"):
                take = True
                continue
            if take and s and not line.startswith(" "):
                take = False
            if take and (s.startswith("exactdp ") or (s.startswith("printf ") and "| exactdp" in s)):
                out.append((" ".join(cmd) or "exactdp", s))
    return out


def readme_examples() -> list[tuple[str, str]]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    out = []
    for lang, body in re.findall(r"```(\w*)\n(.*?)```", text, flags=re.S):
        if lang in ("bash", "sh", ""):
            # one case per block: its lines run in order in one folder (a line may use a file an
            # earlier line wrote); the set-up commands of the first block (pip, pytest) are skipped
            lines = [s for s in (x.strip() for x in body.splitlines())
                     if s.startswith("exactdp ") or s.startswith("printf ")]
            if lines:
                out.append(("README shell", "\n".join(lines)))
        elif lang == "python":
            out.append(("README python", body))
    for line in text.splitlines():  # indented shell lines (four spaces) outside fences
        if line.startswith("    exactdp ") or line.startswith("    printf "):
            out.append(("README shell", line.strip()))
    return out


def _strip_comment(cmd: str) -> str:
    # drop a trailing "# ..." comment (not inside quotes)
    lex = shlex.shlex(cmd, posix=True, punctuation_chars=False)
    lex.whitespace_split = True
    lex.commenters = "#"
    try:
        list(lex)
    except ValueError:
        return cmd
    i = cmd.find(" #")
    while i != -1:
        head = cmd[:i]
        if head.count("'") % 2 == 0 and head.count('"') % 2 == 0:
            return head.rstrip()
        i = cmd.find(" #", i + 1)
    return cmd


CASES = help_examples() + readme_examples()


def _marks(src: str, cmd: str) -> list[pytest.MarkDecorator]:
    marks = []
    if any(s in cmd for s in SLOW):
        marks.append(pytest.mark.slow)
    return marks


@pytest.mark.parametrize("src,cmd", [pytest.param(s, c, marks=_marks(s, c), id=f"{s}: {c[:60]}")
                                     for s, c in CASES])
def test_example_runs_as_shown(src: str, cmd: str, tmp_path: Path) -> None:
    for flag, module in NEEDS.items():
        if flag in cmd:
            pytest.importorskip(module)
    env = dict(os.environ, PATH=str(Path(EXE).parent) + os.pathsep + os.environ.get("PATH", ""))
    if src == "README python":
        p = subprocess.run([sys.executable, "-c", cmd], cwd=tmp_path, capture_output=True, text=True,
                           timeout=600, env=env)
        assert p.returncode == 0, p.stderr[-2000:]
        return
    for raw in cmd.splitlines():
        line = _strip_comment(raw)
        if "tables build" in line and "--out" not in line:
            line += f" --out {tmp_path / 'tables'}"  # never rebuild the checkout's tables from a test
        p = subprocess.run(["bash", "-o", "pipefail", "-c", line], cwd=tmp_path, capture_output=True, text=True,
                           timeout=900, env=env)
        # status 1 is an answer for `check` (not private) and `crosscheck` (a peer answered unsound)
        ok = {0, 1} if (" check " in f" {line} " or " crosscheck " in f" {line} ") else {0}
        assert p.returncode in ok, f"{line!r} exited {p.returncode}: {p.stderr[-1000:]}"
        assert "Traceback" not in p.stderr


def test_there_are_examples_everywhere() -> None:
    srcs = {s for s, _ in CASES}
    for cmd in ("exactdp", "delta", "epsilon", "check", "batch", "curve", "region"):
        assert cmd in srcs, f"{cmd} --help has no runnable example"
    assert "README shell" in srcs and "README python" in srcs
