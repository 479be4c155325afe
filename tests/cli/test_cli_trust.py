"""Issue 10: every user-caused failure is one line and exit 2; nothing is lost; statuses say why.

Each test covers a class of inputs (docs/contracts.md §3), not one instance: bad bytes and
encodings of every input path, outputs into places that cannot be written, missing extras, batch
line numbers / ids / statuses, the printed width promise at several digits, probabilities never
printed above 1, and the documented statuses for undecided checks and internal errors.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import pytest

import exactdp.query as query
from exactdp.cli import main
from exactdp.core.errors import PrecisionError

HEAD = ["delta", "--at-eps", "0.1", "--method", "basic"]


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        code = main(argv)
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 2
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(code: int, err: str, status: int = 2) -> None:
    assert code == status, err
    assert err.count("\n") == 1 and err.startswith("exactdp"), err
    assert "Traceback" not in err


# -- input files: bytes and encodings -------------------------------------------------------------

BAD_FILES = {
    "utf16": "0.1,0\n0.2,0\n".encode("utf-16"),
    "utf16be": b"\xfe\xff" + "0.1,0\n".encode("utf-16-be"),
    "utf32": "0.1,0\n".encode("utf-32"),
    "binary": bytes(range(256)),
    "nul": b"0.1,0\n\x00\x00\n",
    "latin1": "0.1,0 # caf\xe9\n".encode("latin-1"),
    "empty": b"",
    "blank": b"\n\n  \n",
    "header-only": b"eps,delta,count\n",
    "bad-csv": b'0.1,"0\n',
    "too-many-cells": b"0.1,0,1,2\n",
    "bad-number": b"0.1,0\nzero,0\n",
    "bad-json": b"[[0.1, 0],",
    "json-not-list": b'{"mechanisms": 3}',
    "json-dict-keys": b'[{"eps": "0.1", "nope": 1}]',
}


@pytest.mark.parametrize("name", sorted(BAD_FILES))
def test_bad_mechanisms_files_are_one_line_exit_2(name: str, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "m.csv"
    f.write_bytes(BAD_FILES[name])
    code, out, err = run([*HEAD, "--mechanisms", str(f)], capsys)
    one_line_error(code, err)
    assert out == ""
    assert f.read_bytes() == BAD_FILES[name]


@pytest.mark.parametrize("name", ["utf16", "binary", "bad-csv"])
def test_bad_files_in_a_real_process(name: str, tmp_path: Path) -> None:
    f = tmp_path / "m.csv"
    f.write_bytes(BAD_FILES[name])
    p = subprocess.run([sys.executable, "-m", "exactdp", *HEAD, "--mechanisms", str(f)],
                       capture_output=True, timeout=60)
    assert p.returncode == 2 and b"Traceback" not in p.stderr and p.stderr.count(b"\n") == 1


def test_binary_on_stdin_is_one_line_exit_2() -> None:
    p = subprocess.run([sys.executable, "-m", "exactdp", *HEAD, "--mechanisms", "-"],
                       input=bytes(range(256)) * 4, capture_output=True, timeout=60)
    assert p.returncode == 2 and b"Traceback" not in p.stderr and p.stderr.count(b"\n") == 1


@pytest.mark.parametrize("path", ["DIR", "MISSING", "MISSING/x.csv"])
def test_unusable_input_paths(path: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "DIR").mkdir()
    code, _, err = run([*HEAD, "--mechanisms", str(tmp_path / path)], capsys)
    one_line_error(code, err)


def test_utf8_bom_is_accepted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plain, bom = tmp_path / "a.csv", tmp_path / "b.csv"
    plain.write_bytes(b"eps,delta\n0.1,0\n0.2,0.001\n")
    bom.write_bytes(b"\xef\xbb\xbf" + plain.read_bytes())
    answers = []
    for f in (plain, bom):
        code, out, err = run([*HEAD, "--mechanisms", str(f), "--json"], capsys)
        assert code == 0, err
        answers.append(json.loads(out))
    assert answers[0] == answers[1]


def test_line_numbers_in_file_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "m.csv"
    f.write_text("# a comment\n\n0.1,0\n0.2,2\n")
    code, _, err = run([*HEAD, "--mechanisms", str(f)], capsys)
    one_line_error(code, err)
    assert "line 4" in err


# -- outputs --------------------------------------------------------------------------------------

@pytest.mark.parametrize("target", ["missing/region.png", "adir", "adir/"])
def test_region_plot_into_unusable_place(target: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "adir").mkdir()
    monkeypatch.chdir(tmp_path)
    before = sorted(p.name for p in tmp_path.rglob("*"))
    code, out, err = run(["region", "--eps", "0.4", "--k", "3", "--plot", target], capsys)
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err and out == ""
    assert sorted(p.name for p in tmp_path.rglob("*")) == before


def test_region_plot_without_matplotlib_names_the_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    code, _, err = run(["region", "--eps", "0.4", "--k", "3", "--plot", str(tmp_path / "r.png")], capsys)
    assert code == 2 and "pip install 'exactdp[plot]'" in err and err.count("\n") == 1
    assert not (tmp_path / "r.png").exists()


@pytest.mark.parametrize("opt", ["--json", "--markdown"])
def test_crosscheck_report_into_missing_folder_fails_before_the_sweep(opt: str, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    import exactdp.crosscheck.report as report

    def no_sweep(*a: object, **k: object) -> None:
        raise AssertionError("the sweep ran before the output path was checked")

    monkeypatch.setattr(report, "run_crosscheck", no_sweep)
    code, _, err = run(["crosscheck", "--quick", opt, str(tmp_path / "nope" / "r.out")], capsys)
    assert code == 2 and err.count("\n") == 1 and "does not exist" in err


# -- statuses -------------------------------------------------------------------------------------

def test_k_beyond_the_engine_is_refused_up_front(capsys: pytest.CaptureFixture[str]) -> None:
    for k in ("100000000000000000", "100000000000000000000"):
        code, _, err = run(["epsilon", "--eps", "0.01", "--k", k, "--at-delta", "1e-6"], capsys)
        one_line_error(code, err)
        assert "10^15" in err


def test_check_that_cannot_decide_says_so_with_status_4(monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    import exactdp.api.optimal as optimal

    def stuck(*a: object, **k: object) -> bool:
        raise PrecisionError("the two sides agree to 2^17 bits")

    monkeypatch.setattr(optimal, "is_private", stuck)
    code, out, err = run(["check", "--eps", "0.1", "--k", "3", "--eps-g", "0.2", "--delta-g", "0.1"], capsys)
    one_line_error(code, err, status=4)
    assert err.startswith("exactdp: undecided after ") and " s: " in err and out == ""


def test_time_budget_of_a_slow_check_is_status_4(capsys: pytest.CaptureFixture[str]) -> None:
    # 4 seven-digit values x 45: eps at delta_g = 1e-6 lies in [17.35481, 17.35482] (20 s of refinement);
    # deciding at a point inside that bracket needs a far finer grid than half a second allows
    mechs = []
    for v in ("0.1234567", "0.2345671", "0.0456712", "0.3567124"):
        mechs += ["--mechanism", v] * 45
    code, _, err = run(["check", *mechs, "--eps-g", "17.354815", "--delta-g", "1e-6", "--max-seconds", "0.5"], capsys)
    one_line_error(code, err, status=4)
    assert "time budget" in err and "certified in [" in err


def test_internal_errors_are_status_5_without_traceback(monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    def broken(*a: object, **k: object) -> None:
        raise TypeError("unexpected")

    monkeypatch.setattr(query, "run_query", broken)  # what the delta command calls
    code, _, err = run(["delta", "--eps", "0.1", "--k", "3", "--at-eps", "1"], capsys)
    one_line_error(code, err, status=5)
    assert "internal error" in err and "TypeError" in err


def test_required_options_show_as_required(capsys: pytest.CaptureFixture[str]) -> None:
    for cmd, opts in (("delta", ["--at-eps EPS_G"]), ("epsilon", ["--at-delta DELTA_G"]),
                      ("check", ["--eps-g EPS_G", "--delta-g DELTA_G"])):
        code, out, _ = run([cmd, "--help"], capsys)
        usage = out.split("\n\n")[0]
        assert code == 0
        for o in opts:
            assert o in usage and f"[{o}]" not in usage


# -- batch ----------------------------------------------------------------------------------------

def _batch_bytes(data: bytes, *extra: str) -> tuple[int, list[dict], str]:
    p = subprocess.run([sys.executable, "-m", "exactdp", "batch", *extra], input=data, capture_output=True,
                       timeout=120)
    return p.returncode, [json.loads(x) for x in p.stdout.decode().splitlines()], p.stderr.decode()


GOOD = '{"query": "delta", "eps": "0.1", "k": 30, "at_eps": "3", "method": "basic", "id": "a"}'
BAD = '{"query": "delta", "eps": "x", "k": 30, "at_eps": "3", "id": 7}'


def test_batch_line_numbers_ids_and_status() -> None:
    data = ("\ufeff" + GOOD + "\n\n" + BAD + "\n" + "{nope\n" + GOOD.replace('"a"', '"b"') + "\n").encode()
    code, res, err = _batch_bytes(data)
    assert code == 2 and "Traceback" not in err
    assert [r.get("id") for r in res] == ["a", 7, None, "b"]
    assert res[0]["exact"] == "0" and res[3]["exact"] == "0"
    assert res[1]["error"].startswith("line 3:") and res[2]["error"].startswith("line 4:")


def test_batch_binary_lines_are_errors_with_line_numbers() -> None:
    data = GOOD.encode() + b"\n" + b"\xff\xfe\x00garbage\n" + GOOD.encode() + b"\n"
    code, res, _ = _batch_bytes(data)
    assert code == 2 and len(res) == 3 and res[1]["error"].startswith("line 2") and res[2]["id"] == "a"


def test_batch_all_good_exits_0_and_not_private_is_an_answer() -> None:
    check = '{"query": "check", "eps": "1", "k": 10, "eps_g": "1", "delta_g": "0.01"}'
    code, res, _ = _batch_bytes((GOOD + "\n" + check + "\n").encode())
    assert code == 0 and res[1]["private"] is False


def test_batch_jobs_keep_the_order() -> None:
    lines = [f'{{"query": "epsilon", "eps": "0.{i + 1}", "k": {10 + i}, "at_delta": "1e-3", "id": {i}}}'
             for i in range(8)]
    data = ("\n".join(lines) + "\n").encode()
    code1, res1, _ = _batch_bytes(data)
    code2, res2, _ = _batch_bytes(data, "--jobs", "2")
    assert code1 == code2 == 0 and res1 == res2 and [r["id"] for r in res2] == list(range(8))


# -- what is printed keeps the promise ------------------------------------------------------------

REF = Fraction(Decimal("0.03981841052213057502284336"))  # docs/mathematics.md §6: KOV grid at eps_g = 1


@pytest.mark.parametrize("digits", [2, 3, 6, 10, 17, 22])
@pytest.mark.parametrize("as_json", [False, True])
def test_printed_interval_meets_the_requested_width(digits: int, as_json: bool,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["delta", "--eps", "0.1", "--delta", "0.001", "--k", "30", "--at-eps", "1", "--digits", str(digits)]
    code, out, _ = run(argv + (["--json"] if as_json else []), capsys)
    assert code == 0
    if as_json:
        obj = json.loads(out)
        lo, hi = obj["lower"], obj["upper"]
        assert Fraction(obj["float_lower"]) <= REF <= Fraction(obj["float_upper"])
    else:
        line = [x for x in out.splitlines() if "<= delta <=" in x][0]
        lo, hi = line.split(" <= delta <= ")
    a, b = Fraction(Decimal(lo.strip())), Fraction(Decimal(hi.strip()))
    assert (b - a) / a <= Fraction(1, 10**digits)
    if digits <= 22:
        assert a <= REF <= b


PROBABILITY_CASES = [
    ["delta", "--eps", "0.1", "--delta", "0.99", "--k", "30", "--at-eps", "0.01"],
    ["delta", "--eps", "5", "--delta", "0.5", "--k", "50", "--at-eps", "0", "--method", "drv10"],
    ["delta", "--eps", "5", "--delta", "0.5", "--k", "50", "--at-eps", "0", "--method", "basic"],
    ["delta", "--eps", "5", "--k", "50", "--at-eps", "0.5", "--method", "steinke"],
    ["delta", "--eps", "5", "--k", "50", "--at-eps", "0.5", "--method", "zcdp"],
    ["delta", "--eps", "5", "--k", "50", "--at-eps", "0.5", "--method", "kov15-3.4"],
    ["delta", "--mechanism", "3,0.9", "--mechanism", "2,0.9", "--at-eps", "0.1"],
]


@pytest.mark.parametrize("argv", PROBABILITY_CASES)
@pytest.mark.parametrize("digits", ["3", "10"])
def test_a_delta_is_never_printed_above_1(argv: list[str], digits: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run([*argv, "--digits", digits, "--json"], capsys)
    assert code == 0, err
    obj = json.loads(out)
    assert Fraction(Decimal(obj["upper"])) <= 1 and obj["float_upper"] <= 1.0
    assert Fraction(Decimal(obj["lower"])) >= 0 and obj["float_lower"] >= 0.0
    if obj["exact"] is not None:
        assert Fraction(obj["exact"]) == Fraction(Decimal(obj["lower"]))


def test_values_typed_where_the_file_goes_get_one_short_line_and_a_hint(capsys: pytest.CaptureFixture[str]) -> None:
    for typed in ("0.1,0,5", "0.0112648,0\n" * 1000):
        code, out, err = run(["epsilon", "--mechanisms", typed, "--at-delta", "1e-6"], capsys)
        assert code == 2 and out == "" and err.count("\n") == 1, err
        assert len(err) < 400 and "pipe them in with '-'" in err, err
    code, _, err = run(["epsilon", "--mechanisms", "no_such_file.csv", "--at-delta", "1e-6"], capsys)
    assert code == 2 and "does not exist" in err and "pipe them" not in err
