"""A persistent, opt-in cache of PLD builds on disk, keyed by their plan (docs/cluster.md, "A
persistent cache of PLD builds"; docs/pld.md §7.4).

Off unless the environment variable ``EXACTDP_CACHE_DIR`` names a folder; then :func:`exactdp.engines.pld.build.build_cached` looks here after its
in-memory cache and before building, and stores what it builds.  ``EXACTDP_CACHE_MAX_MB`` bounds
the folder (default 1024 MiB): past it, the least recently used files go (a hit touches its file).

A file holds exact data only: every mass is a ball written as the integers of its midpoint and
radius (a polynomial of exact balls as integers over one power of two), every grid step and
truncation a fraction; the one float is the build's timing, which only sizes the next grid.  What
is loaded is what was stored, but for a radius of 30 significant bits, which python-flint reads
back rounded up by one unit of its last bit (a ball only grows: outward, so still sound; the
polynomials of a build are exact balls and come back identical).  The
file starts with a magic line, the SHA-256 of the rest, and the rest is JSON naming the format,
the package version and the full key.  A file that is truncated, corrupt, of another format or
version, or of another key is never trusted: it is removed and the build is made again.  Nothing
is ever unpickled or evaluated.  Writes go to a temporary file in the same folder, are synced
and renamed over the target, so concurrent processes (``batch --jobs``, Dask workers, array
jobs on a shared disk) read a whole file or none.

>>> import tempfile
>>> from flint import arb, arb_poly
>>> from exactdp.engines.pld.laws import Law
>>> law = Law(Fraction(1, 8), -2, arb_poly([arb(3) / 8, arb(1) / 4]), None, arb(0), True, True, arb(0))
>>> b = Built(Fraction(1, 8), 64, Fraction(1, 10**20), [(law, law)], True, 0.5)
>>> d = tempfile.mkdtemp()
>>> save(("key",), b, d)
True
>>> c = load(("key",), d)
>>> [x.repr() for x in c.laws[0][0].P.coeffs()], c.h, c.tau == b.tau
(['arb((0x3, -0x3))', 'arb((0x1, -0x2))'], Fraction(1, 8), True)
>>> load(("another key",), d) is None
True
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
import tempfile
import time
from fractions import Fraction
from pathlib import Path
from typing import Any

from flint import arb, arb_poly, ctx, fmpz_poly

from exactdp.core.version import __version__
from exactdp.engines.pld.laws import Built, Law

__all__ = ["DEFAULT_MAX_MB", "ENV_DIR", "ENV_MAX_MB", "FORMAT", "cache_dir", "decode", "encode", "file_of",
           "load", "max_bytes", "save"]

#: the environment variable that turns the cache on, naming its folder
ENV_DIR = "EXACTDP_CACHE_DIR"
#: the environment variable that bounds the folder's size, in MiB
ENV_MAX_MB = "EXACTDP_CACHE_MAX_MB"
#: the bound when ``EXACTDP_CACHE_MAX_MB`` is not set
DEFAULT_MAX_MB = 1024
#: the file format (a file of any other format is ignored and replaced)
FORMAT = 1
_MAGIC = b"exactdp-pld-cache\n"
_SUFFIX = ".pld"
#: a temporary file older than this (a writer that was killed) is removed when the folder is trimmed
_STALE_SECONDS = 3600
#: the folders this process warned about (one warning line each, then the cache is off for them)
_OFF: set[str] = set()


def cache_dir() -> str | None:
    """The cache's folder (``EXACTDP_CACHE_DIR``), or None when the cache is off."""
    d = os.environ.get(ENV_DIR, "").strip()
    return d or None


def max_bytes() -> int:
    """The size bound of the folder in bytes (``EXACTDP_CACHE_MAX_MB``, a decimal number of MiB).

    >>> os.environ[ENV_MAX_MB] = "0.5"; max_bytes(); del os.environ[ENV_MAX_MB]
    524288
    """
    raw = os.environ.get(ENV_MAX_MB, "").strip()
    try:
        mb = Fraction(raw) if raw else Fraction(DEFAULT_MAX_MB)
    except (ValueError, ZeroDivisionError):
        _warn(f"{ENV_MAX_MB}={raw!r} is not a number of MiB; the default {DEFAULT_MAX_MB} is used", raw)
        mb = Fraction(DEFAULT_MAX_MB)
    return max(int(mb * 2**20), 0)


def file_of(key: tuple, folder: str | os.PathLike[str]) -> Path:
    """The file of ``key``: the SHA-256 of its canonical text (``repr``), in ``folder``."""
    return Path(folder) / (hashlib.sha256(repr(key).encode()).hexdigest() + _SUFFIX)


# -- exact encoding ------------------------------------------------------------------------------------

def _hex(n: Any) -> str:
    return format(int(n), "x")


def _int(s: Any) -> int:
    if not isinstance(s, str):
        raise TypeError("an integer is written as a hex string")
    return int(s, 16)


def _frac(x: Fraction | None) -> str | None:
    return None if x is None else f"{x.numerator}/{x.denominator}"


def _unfrac(s: Any, *, none: bool = False) -> Fraction | None:
    if s is None and none:
        return None
    if not isinstance(s, str) or "/" not in s:
        raise ValueError("a fraction is written as 'p/q'")
    p, q = s.split("/")
    return Fraction(int(p), int(q))


def _ball(x: arb) -> list[str]:
    """A finite ball as [midpoint mantissa, exponent, radius mantissa, exponent] (exact)."""
    if not x.is_finite():
        raise ValueError("a ball that is not finite is not stored")
    m, e = x.mid().man_exp()
    r, f = x.rad().man_exp()
    return [_hex(m), _hex(e), _hex(r), _hex(f)]


def _unball(v: Any) -> arb:
    if not isinstance(v, list) or len(v) != 4:
        raise ValueError("a ball is four integers")
    m, e, r, f = (_int(s) for s in v)
    if r < 0:
        raise ValueError("a negative radius")
    # the midpoint comes back exactly; a radius of 30 significant bits (a full mag) one unit of its
    # last bit larger (python-flint rounds it up): the ball can only grow, so it stays sound
    return arb((m, e), (r, f))


def _poly(p: arb_poly) -> dict[str, Any]:
    """An exact polynomial as integers N over 2^bits; any other as a list of balls."""
    cs = p.coeffs()
    if all(c.is_exact() and c.is_finite() for c in cs):
        me = [c.mid().man_exp() for c in cs]
        bits = max([-int(e) for m, e in me if m != 0], default=0)
        return {"bits": bits, "N": [_hex(int(m) << (int(e) + bits)) if m != 0 else "0" for m, e in me]}
    return {"balls": [_ball(c) for c in cs]}


def _unpoly(d: Any) -> arb_poly:
    if not isinstance(d, dict):
        raise TypeError("a polynomial is an object")
    if set(d) == {"balls"} and isinstance(d["balls"], list):
        return arb_poly([_unball(v) for v in d["balls"]])
    if set(d) != {"bits", "N"} or type(d["bits"]) is not int or not isinstance(d["N"], list):
        raise ValueError("a polynomial is {bits, N} or {balls}")
    N = fmpz_poly([_int(s) for s in d["N"]])
    with ctx.workprec(max(N.height_bits() if N.length() else 1, 1) + 16):  # the integers fit: exact balls
        return arb_poly(N) * (arb(2) ** (-d["bits"]))


_LAW_FIELDS = {"h", "offset", "P", "Q", "p_inf", "upper", "exact", "moved", "stride", "qshift"}


def _law(law: Law) -> dict[str, Any]:
    return {"h": _frac(law.h), "offset": law.offset, "P": _poly(law.P),
            "Q": _poly(law.Q) if law.Q is not None else None, "p_inf": _ball(law.p_inf),
            "upper": law.upper, "exact": law.exact, "moved": _ball(law.moved), "stride": law.stride,
            "qshift": _frac(law.qshift)}


def _flag(v: Any) -> bool:
    if type(v) is not bool:
        raise ValueError("a flag is true or false")
    return v


def _count(v: Any) -> int:
    if type(v) is not int:
        raise ValueError("an integer field")
    return v


def _unlaw(d: Any) -> Law:
    if not isinstance(d, dict) or set(d) != _LAW_FIELDS:
        raise ValueError("a law has the fields " + ", ".join(sorted(_LAW_FIELDS)))
    h, qshift = _unfrac(d["h"]), _unfrac(d["qshift"])
    assert h is not None and qshift is not None
    return Law(h, _count(d["offset"]), _unpoly(d["P"]), _unpoly(d["Q"]) if d["Q"] is not None else None,
               _unball(d["p_inf"]), _flag(d["upper"]), _flag(d["exact"]), _unball(d["moved"]),
               _count(d["stride"]), qshift)


def encode(key: tuple, b: Built) -> bytes:
    """The bytes of the file of build ``b`` under ``key`` (raises ValueError for a ball that is not
    finite, which is not stored)."""
    payload = json.dumps({
        "format": FORMAT, "version": __version__, "key": repr(key),
        "h": _frac(b.h), "prec": b.prec, "tau": _frac(b.tau), "exact": b.exact,
        "seconds": repr(b.seconds), "floor": _frac(b.floor),
        "laws": [[_law(u), _law(low)] for u, low in b.laws],
    }, separators=(",", ":")).encode()
    return _MAGIC + hashlib.sha256(payload).hexdigest().encode() + b"\n" + payload


def decode(key: tuple, data: bytes) -> Built:
    """The build in ``data``, checked: magic line, checksum, format, version and key must all match
    (ValueError otherwise)."""
    if not data.startswith(_MAGIC):
        raise ValueError("not a cache file")
    rest = data[len(_MAGIC):]
    digest, sep, payload = rest.partition(b"\n")
    if not sep or hashlib.sha256(payload).hexdigest().encode() != digest:
        raise ValueError("the checksum does not match (a truncated or corrupt file)")
    d = json.loads(payload)
    if not isinstance(d, dict):
        raise TypeError("not a cache file")
    if d.get("format") != FORMAT or d.get("version") != __version__:
        raise ValueError("a file of another format or version")
    if d.get("key") != repr(key):
        raise ValueError("a file of another key")
    laws = d["laws"]
    if not isinstance(laws, list) or not all(isinstance(x, list) and len(x) == 2 for x in laws):
        raise ValueError("the laws are (upper, lower) pairs")
    h, tau = _unfrac(d["h"]), _unfrac(d["tau"])
    assert h is not None and tau is not None
    seconds = d["seconds"]
    if not isinstance(seconds, str) or not 0 <= float(seconds) < 1e9:  # float ok: a timing
        raise ValueError("a timing is a number of seconds")
    return Built(h, _count(d["prec"]), tau, [(_unlaw(u), _unlaw(low)) for u, low in laws], _flag(d["exact"]),
                 float(seconds),  # float ok: the timing only sizes the next grid
                 _unfrac(d["floor"], none=True))


# -- the folder ----------------------------------------------------------------------------------------

def _warn(what: str, folder: str) -> None:
    """One warning line on stderr per folder and process."""
    if folder not in _OFF:
        _OFF.add(folder)
        print(f"exactdp: warning: {what}", file=sys.stderr)


def load(key: tuple, folder: str | None = None) -> Built | None:
    """The stored build of ``key``, or None (cache off, no file, or a file not to be trusted, which
    is removed).  A hit touches the file (least recently used goes first)."""
    folder = folder if folder is not None else cache_dir()
    if folder is None:
        return None
    try:
        path = file_of(key, folder)
        data = path.read_bytes()
    except (OSError, ValueError):
        return None
    try:
        b = decode(key, data)
    except (ValueError, TypeError, KeyError, OverflowError, RecursionError, AssertionError, ZeroDivisionError):
        with contextlib.suppress(OSError):
            path.unlink()
        return None
    with contextlib.suppress(OSError):
        os.utime(path)
    return b


def save(key: tuple, b: Built, folder: str | None = None) -> bool:
    """Store build ``b`` under ``key`` atomically, then trim the folder to its bound; True when the
    file was written.  A folder that cannot be written turns the cache off with one warning line."""
    folder = folder if folder is not None else cache_dir()
    if folder is None or folder in _OFF:
        return False
    try:
        data = encode(key, b)
    except ValueError:
        return False
    bound = max_bytes()
    if len(data) > bound:
        return False
    tmp = None
    try:
        os.makedirs(folder, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=_SUFFIX)
        os.fchmod(fd, 0o644)  # readable by the other users of a shared cache (mkstemp makes it private)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, file_of(key, folder))
        tmp = None
    except OSError as e:
        _warn(f"the PLD cache folder {folder!r} cannot be written ({e.strerror or e}); "
              "the cache is off for this run", folder)
        return False
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
    _trim(Path(folder), bound)
    return True


def _trim(folder: Path, bound: int) -> None:
    """Remove the least recently used files (by modification time) until the folder's cache files
    total at most ``bound`` bytes; temporary files of killed writers go too."""
    files = []
    now = time.time()
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for e in entries:
        try:
            if not e.is_file(follow_symlinks=False) or not e.name.endswith(_SUFFIX):
                continue
            st = e.stat(follow_symlinks=False)
        except OSError:
            continue
        if e.name.startswith(".tmp-"):
            if now - st.st_mtime > _STALE_SECONDS:
                with contextlib.suppress(OSError):
                    os.unlink(e.path)
            continue
        files.append((st.st_mtime_ns, e.name, st.st_size, e.path))
    total = sum(f[2] for f in files)
    for _, _, size, path in sorted(files):
        if total <= bound:
            break
        with contextlib.suppress(OSError):
            os.unlink(path)
            total -= size
