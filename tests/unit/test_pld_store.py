"""The persistent cache of PLD builds (exactdp/engines/pld/store.py, docs/cluster.md "A persistent
cache of PLD builds", issue 25 §6).

A build stored by one process is loaded by another, which then answers byte for byte the same
without building; without ``EXACTDP_CACHE_DIR`` nothing is written; the folder stays under its
bound, least recently used first; a file that is corrupt, truncated, of another version or of
another key is never trusted; a folder that cannot be written costs one warning line, never the
answer.  The reference of every answer is the same query with the cache off.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from flint import arb, arb_poly

from exactdp.engines.pld import build as pld_build
from exactdp.engines.pld import store
from exactdp.engines.pld.laws import Built, Law
from exactdp.query import run_query

#: a child process that answers one command line and says on stderr how many builds it made
CHILD = """
import sys
from exactdp.engines.pld import build
made = [0]
orig = build.build
def counting(*a, **k):
    made[0] += 1
    return orig(*a, **k)
build.build = counting
from exactdp.cli import main
status = main(sys.argv[1:])
print(f"builds={made[0]}", file=sys.stderr)
sys.exit(status)
"""

#: an off-lattice query (binned lower laws with their Q, and an upper law), decided within its digits;
#: 15 copies, below the float-FFT path (docs/pld.md §12), so the exact products build and store
QUERY = ["epsilon", "--mechanism", "gaussian:sigma=1,q=0.01,count=15", "--at-delta", "1e-5", "--digits", "4",
         "--json"]
QUERY_OBJ: dict[str, Any] = {"query": "epsilon", "mechanisms": ["gaussian:sigma=1,q=0.01,count=15"],
                             "at_delta": "1e-5", "digits": 4}
#: a query on the exact lattice (an exact chain, upper = lower with the missing mass at +inf)
LATTICE_OBJ: dict[str, Any] = {"query": "delta", "mechanisms": [["0.01", "0", 3000], ["0.02", "0", 3]],
                               "at_eps": "1", "digits": 8}


def _child(args: list[str], env_extra: dict[str, str], cwd: Path) -> tuple[int, str, list[str], int]:
    """(status, stdout, the other stderr lines, builds made) of ``exactdp ARGS`` in a fresh process."""
    env = {k: v for k, v in os.environ.items() if k not in (store.ENV_DIR, store.ENV_MAX_MB)}
    env.update(env_extra)
    r = subprocess.run([sys.executable, "-c", CHILD, *args], capture_output=True, text=True, env=env,
                       cwd=cwd, timeout=300)
    lines = r.stderr.splitlines()
    made = [int(x.split("=")[1]) for x in lines if x.startswith("builds=")]
    assert made, r.stderr
    return r.returncode, r.stdout, [x for x in lines if not x.startswith("builds=")], made[0]


def _same_ball(a: arb, b: arb) -> bool:
    return bool(a.repr() == b.repr())


def _same_poly(a: arb_poly | None, b: arb_poly | None) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return [c.repr() for c in a.coeffs()] == [c.repr() for c in b.coeffs()]


def _same_law(a: Law, b: Law) -> bool:
    return (a.h == b.h and a.offset == b.offset and a.upper == b.upper and a.exact == b.exact
            and a.stride == b.stride and a.qshift == b.qshift and _same_poly(a.P, b.P) and _same_poly(a.Q, b.Q)
            and _same_ball(a.p_inf, b.p_inf) and _same_ball(a.moved, b.moved))


def _same_built(a: Built, b: Built, *, timing: bool = True) -> bool:
    """Equal field by field (the laws exactly; ``timing``: the build's seconds too)."""
    return ((a.h, a.prec, a.tau, a.exact, a.floor) == (b.h, b.prec, b.tau, b.exact, b.floor)
            and (not timing or a.seconds == b.seconds)
            and len(a.laws) == len(b.laws)
            and all(_same_law(x, y) and _same_law(u, v) for (x, u), (y, v) in zip(a.laws, b.laws)))


def _builds(obj: dict[str, Any]) -> tuple[dict[str, Any], dict[tuple, Built]]:
    """The answer of ``obj`` from an empty memory cache, and the builds it made or loaded."""
    pld_build._CACHE.clear()
    result = run_query(obj)
    return result, dict(pld_build._CACHE)


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A counter of the builds made (not loaded) in this process."""
    made = [0]
    orig = pld_build.build

    def counting(*a: Any, **k: Any) -> Built:
        made[0] += 1
        return orig(*a, **k)

    monkeypatch.setattr(pld_build, "build", counting)
    return made


@pytest.fixture(autouse=True)
def _fresh(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.delenv(store.ENV_DIR, raising=False)
    monkeypatch.delenv(store.ENV_MAX_MB, raising=False)
    store._OFF.clear()
    pld_build._CACHE.clear()
    yield
    pld_build._CACHE.clear()
    store._OFF.clear()


def test_a_build_stored_by_one_process_is_loaded_by_another(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    status0, ref, err0, made0 = _child(QUERY, {}, tmp_path)
    assert status0 == 0 and made0 >= 1 and not err0
    status1, out1, err1, made1 = _child(QUERY, {store.ENV_DIR: str(cache)}, tmp_path)
    assert status1 == 0 and made1 == made0 and not err1
    assert out1 == ref                                   # the cache changes no answer
    assert len(list(cache.glob("*.pld"))) == made1       # one file per build
    status2, out2, err2, made2 = _child(QUERY, {store.ENV_DIR: str(cache)}, tmp_path)
    assert status2 == 0 and not err2
    assert made2 == 0                                    # every build loaded, none made
    assert out2 == ref                                   # byte for byte


def test_without_the_variable_nothing_is_written(tmp_path: Path) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    env = {"HOME": str(home), "XDG_CACHE_HOME": str(home / ".cache"), "TMPDIR": str(home / "tmp")}
    status, _, err, made = _child(QUERY, env, work)
    assert status == 0 and made >= 1 and not err
    assert list(home.iterdir()) == [] and list(work.iterdir()) == []
    # and in this process: the store is off, a save writes nothing
    _, builds = _builds(QUERY_OBJ)
    key, b = next(iter(builds.items()))
    assert store.cache_dir() is None and store.save(key, b) is False and store.load(key) is None


def test_round_trip_is_exact_field_by_field(tmp_path: Path) -> None:
    for obj in (QUERY_OBJ, LATTICE_OBJ):
        _, builds = _builds(obj)
        assert builds
        for key, b in builds.items():
            assert store.save(key, b, str(tmp_path))
            c = store.load(key, str(tmp_path))
            assert c is not None and c is not b
            assert _same_built(b, c), key
            # the loaded balls are the stored ones, exact where they were exact
            for u, low in c.laws:
                assert all(x.is_exact() for x in u.P.coeffs())
                assert low.Q is None or all(x.is_exact() for x in low.Q.coeffs())
    # a law with balls that are not exact, a stride and a centred tilt goes through the general form
    third = arb(1) / 3
    law = Law(Fraction(1, 7), -3, arb_poly([third, arb(0), third * 2]), arb_poly([third]), third / 5, False, False,
              third / 11, stride=2, qshift=Fraction(-5, 3))
    b = Built(Fraction(1, 7), 80, Fraction(1, 10**30), [(law, law)], False, 1.25, Fraction(2, 7))
    assert store.save(("odd",), b, str(tmp_path))
    c = store.load(("odd",), str(tmp_path))
    assert c is not None and c.laws[0][0].stride == 2 and c.laws[0][0].qshift == Fraction(-5, 3)
    # a radius of 30 significant bits comes back at most one unit of its last bit larger (outward:
    # the ball only grows); every midpoint, and every other radius, is the same
    for x, y in [(law.P, c.laws[0][0].P), (law.Q, c.laws[0][1].Q)]:
        assert x is not None and y is not None
        for s_, t in zip(x.coeffs() + [law.p_inf, law.moved], y.coeffs() + [c.laws[0][0].p_inf, c.laws[0][0].moved]):
            assert s_.mid().man_exp() == t.mid().man_exp()
            r, f = (int(v) for v in s_.rad().man_exp())
            r2, f2 = (int(v) for v in t.rad().man_exp())
            exact = Fraction(r) * Fraction(2) ** f
            back = Fraction(r2) * Fraction(2) ** f2
            assert exact <= back <= exact * (1 + Fraction(1, 2**29)), (s_.repr(), t.repr())
            assert back == exact or r.bit_length() == 30


def test_a_hit_answers_the_same_without_building(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                 counted: list[int]) -> None:
    monkeypatch.setenv(store.ENV_DIR, str(tmp_path))
    for obj in (QUERY_OBJ, LATTICE_OBJ):
        ref, _ = _builds(obj)
        made = counted[0]
        assert made >= 1
        again, _ = _builds(obj)
        assert again == ref and counted[0] == made


def _rewrite(path: Path, change: Any) -> None:
    """Rewrite a cache file with ``change`` applied to its JSON, and a checksum that matches."""
    data = path.read_bytes()
    magic, digest, payload = data.split(b"\n", 2)
    d = json.loads(payload)
    change(d)
    payload = json.dumps(d).encode()
    path.write_bytes(magic + b"\n" + hashlib.sha256(payload).hexdigest().encode() + b"\n" + payload)


def _flip(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))


def _truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 3])


def _other_version(path: Path) -> None:
    _rewrite(path, lambda d: d.update(version="0.0.0-other"))


def _other_format(path: Path) -> None:
    _rewrite(path, lambda d: d.update(format=store.FORMAT + 1))


def _bad_numbers(path: Path) -> None:
    # a valid checksum over a payload whose exact data is not what it claims (a float where an integer goes)
    _rewrite(path, lambda d: d["laws"][0][0].update(offset=0.5))


@pytest.mark.parametrize("spoil", [_flip, _truncate, _other_version, _other_format, _bad_numbers])
def test_a_spoiled_file_is_ignored_and_rebuilt(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                               counted: list[int], spoil: Any) -> None:
    ref, builds = _builds(QUERY_OBJ)                          # the cache off: the reference
    monkeypatch.setenv(store.ENV_DIR, str(tmp_path))
    _builds(QUERY_OBJ)
    files = sorted(tmp_path.glob("*.pld"))
    assert len(files) == len(builds)
    for f in files:
        spoil(f)
    made = counted[0]
    again, rebuilt = _builds(QUERY_OBJ)
    assert again == ref
    assert counted[0] - made == len(builds)                   # every spoiled file was rebuilt
    for key, b in rebuilt.items():
        assert _same_built(b, builds[key], timing=False)       # the same exact laws as the first build
        c = store.load(key)                                   # and the file is whole again
        assert c is not None and _same_built(c, b)


def test_a_file_of_another_key_is_not_trusted(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                              counted: list[int]) -> None:
    ref, builds = _builds(QUERY_OBJ)
    (key_a, b_a), = list(builds.items())[:1]
    other = {**QUERY_OBJ, "mechanisms": ["gaussian:sigma=1.25,q=0.01,count=15"]}
    ref_b, builds_b = _builds(other)
    monkeypatch.setenv(store.ENV_DIR, str(tmp_path))
    # the file of each build of the second query holds the first query's build
    for key_b in builds_b:
        assert store.save(key_a, b_a)
        store.file_of(key_a, tmp_path).replace(store.file_of(key_b, tmp_path))
        assert store.load(key_b) is None and not store.file_of(key_b, tmp_path).exists()
        assert store.save(key_a, b_a)
        store.file_of(key_a, tmp_path).replace(store.file_of(key_b, tmp_path))
    made = counted[0]
    again, _ = _builds(other)
    assert again == ref_b and again != ref and counted[0] - made == len(builds_b)


def _synthetic(n: int) -> Built:
    law = Law(Fraction(1, 8), 0, arb_poly([arb(i + 1) / 2**40 for i in range(n)]), None, arb(0), True, True, arb(0))
    return Built(Fraction(1, 8), 64, Fraction(1, 10**20), [(law, law)], True, 0.0)


def test_the_folder_stays_under_its_bound_least_recently_used_first(monkeypatch: pytest.MonkeyPatch,
                                                                    tmp_path: Path) -> None:
    b = _synthetic(500)
    one = len(store.encode(("k", 10), b))
    assert all(len(store.encode(("k", i), b)) == one for i in range(10, 40))
    bound = int(3.5 * one)
    monkeypatch.setenv(store.ENV_DIR, str(tmp_path))
    monkeypatch.setenv(store.ENV_MAX_MB, str(Fraction(bound, 2**20)))
    assert store.max_bytes() == bound
    now = time.time()
    for i in range(10, 40):
        assert store.save(("k", i), b)
        os.utime(store.file_of(("k", i), tmp_path), (now - 1000 + i, now - 1000 + i))  # distinct mtimes
        sizes = [f.stat().st_size for f in tmp_path.iterdir()]
        assert sum(sizes) <= bound and len(sizes) == min(i - 9, 3)
    # the three newest remain; a hit on the oldest makes it the most recently used
    assert {f.name for f in tmp_path.iterdir()} == {store.file_of(("k", i), tmp_path).name for i in (37, 38, 39)}
    assert store.load(("k", 37)) is not None
    assert store.save(("k", 40), b)
    names = {f.name for f in tmp_path.iterdir()}
    assert names == {store.file_of(("k", i), tmp_path).name for i in (37, 39, 40)}
    # a build larger than the whole bound is not stored (and evicts nothing)
    assert store.save(("big",), _synthetic(5000)) is False
    assert {f.name for f in tmp_path.iterdir()} == names


def test_many_real_builds_stay_under_the_bound(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(store.ENV_DIR, str(tmp_path))
    monkeypatch.setenv(store.ENV_MAX_MB, "0.125")   # about two and a half of these builds
    for k in range(3000, 3012):
        ref = run_query({**LATTICE_OBJ, "mechanisms": [["0.01", "0", k], ["0.02", "0", 3]]})
        assert ref["algorithm"] == "pld-lattice"
        assert sum(f.stat().st_size for f in tmp_path.iterdir()) <= store.max_bytes()
        assert Fraction(ref["lower"]) <= Fraction(ref["upper"])
    assert 1 <= len(list(tmp_path.glob("*.pld"))) <= 2     # the older builds went


def test_an_unwritable_folder_costs_one_warning_line_not_the_answer(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    status0, ref, _, made0 = _child(QUERY, {}, tmp_path)
    status, out, err, made = _child(QUERY, {store.ENV_DIR: str(blocker / "cache")}, tmp_path)
    assert status == status0 == 0 and out == ref and made == made0 >= 1
    assert len(err) <= 1 and all("warning" in line and "cache" in line for line in err), err
    # a size bound that is not a number: one warning line, the default bound, the answer
    status, out, err, _ = _child(QUERY, {store.ENV_DIR: str(tmp_path / "c"), store.ENV_MAX_MB: "lots"}, tmp_path)
    assert status == 0 and out == ref and len(err) == 1 and "EXACTDP_CACHE_MAX_MB" in err[0]
    assert list((tmp_path / "c").glob("*.pld"))
