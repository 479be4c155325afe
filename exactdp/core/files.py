"""Reading the user's input files and writing the outputs the user asked for, with one-line errors.

Every failure a user can cause with a path or a file's bytes (missing, a directory, unreadable,
not UTF-8, binary, UTF-16, an output folder that does not exist or cannot be written, an optional
extra not installed) becomes a typed error with one line naming the path and the fix, raised
*before* any expensive work (docs/contracts.md §1.6 and §3).  Nothing here deletes a file.

>>> import tempfile, os
>>> d = tempfile.mkdtemp()
>>> p = os.path.join(d, "m.csv")
>>> _ = open(p, "wb").write(b"\\xef\\xbb\\xbf0.1,0\\n")   # a UTF-8 BOM is accepted
>>> read_text(p, "mechanisms")
'0.1,0\\n'
>>> _ = open(p, "wb").write("0.1,0".encode("utf-16"))
>>> read_text(p, "mechanisms")
Traceback (most recent call last):
...
exactdp.core.errors.InvalidParameterError: mechanisms=... is UTF-16 text; save it as UTF-8 (or ASCII) and try again
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from exactdp.core.errors import InvalidParameterError, MissingExtraError

__all__ = ["EXTRAS", "MAX_INPUT_BYTES", "MAX_LINE_BYTES", "bounded_lines", "check_output_path", "decode_text", "read_text", "require_extra"]

_BOMS = (
    (b"\xff\xfe\x00\x00", "UTF-32"),
    (b"\x00\x00\xfe\xff", "UTF-32"),
    (b"\xff\xfe", "UTF-16"),
    (b"\xfe\xff", "UTF-16"),
)

#: optional dependencies: import name -> the extra of exactdp that installs it
EXTRAS: dict[str, str] = {
    "matplotlib": "plot",
    "sympy": "proofs",
    "hypothesis": "test",
    "dp_accounting": "peers",
    "prv_accountant": "peers",
    "autodp": "peers",
    "opendp": "peers",
    "opacus": "opacus",
}


def decode_text(data: bytes, what: str) -> str:
    """``data`` as text: UTF-8, with an optional UTF-8 byte-order mark removed.

    UTF-16/32 text, NUL bytes and bytes that are not UTF-8 are refused with one line that says
    where the first bad byte is.
    """
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    for bom, name in _BOMS:
        if data.startswith(bom):
            raise InvalidParameterError(f"{what} is {name} text; save it as UTF-8 (or ASCII) and try again")
    nul = data.find(b"\x00")
    if nul >= 0:
        raise InvalidParameterError(f"{what} is not text (a NUL byte at offset {nul}); expected UTF-8 text")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        bad = data[e.start:e.start + 1].hex()
        raise InvalidParameterError(
            f"{what} is not UTF-8 text (byte 0x{bad} at offset {e.start}); save it as UTF-8 and try again"
        ) from None


#: the most bytes exactdp reads from one input file or standard input (docs/contracts.md §2.1)
MAX_INPUT_BYTES = 64 * 2**20


#: the longest line exactdp reads from a line-by-line input (``exactdp batch``)
MAX_LINE_BYTES = 8 * 2**20


def bounded_lines(stream: Any, limit: int = MAX_LINE_BYTES) -> Iterator[tuple[Any, bool]]:
    """The lines of ``stream`` (bytes or text), each at most ``limit`` long: ``(line, True)``, or
    ``(head, False)`` for a longer line, whose rest is read and dropped in pieces (memory stays
    bounded on ``/dev/zero`` or an endless line; a line that runs past :data:`MAX_INPUT_BYTES`
    ends the reading with an error).

    >>> import io
    >>> [(x, ok) for x, ok in bounded_lines(io.BytesIO(b"ab\\n" + b"x" * 10 + b"\\ncd"), limit=4)]
    [(b'ab\\n', True), (b'xxxx', False), (b'cd', True)]
    """
    while True:
        line = stream.readline(limit + 1)
        if not line:
            return
        if len(line) <= limit:
            yield line, True
            continue
        end, dropped = line[-1:], 0
        while end not in ("\n", b"\n"):
            piece = stream.readline(limit)
            if not piece:
                break
            dropped += len(piece)
            if dropped > MAX_INPUT_BYTES:
                raise InvalidParameterError(f"a line of the input runs past {MAX_INPUT_BYTES >> 20} MiB with no end; "
                                            "the rest of the input is not read (is it a text file of lines?)")
            end = piece[-1:]
        yield line[:limit], False


def _read_bounded(stream: BinaryIO, label: str, limit: int) -> bytes:
    """At most ``limit`` bytes of ``stream``; more is refused by name (memory stays bounded on
    ``/dev/zero`` or an endless pipe)."""
    data = stream.read(limit + 1)
    if data is None:
        data = b""
    if len(data) > limit:
        raise InvalidParameterError(
            f"{label} holds more than {f'{limit >> 20} MiB' if limit % 2**20 == 0 else f'{limit:,} bytes'}, the most exactdp reads from one input; merge equal "
            "mechanisms with a count (E,D,COUNT or count=N)")
    return data


def read_text(path: str | os.PathLike[str], what: str, *, stdin: BinaryIO | None = None,
              limit: int = MAX_INPUT_BYTES) -> str:
    """The text of an input file (``"-"`` reads standard input), decoded by :func:`decode_text`;
    at most ``limit`` bytes (:data:`MAX_INPUT_BYTES`), more is refused with one line.

    >>> read_text("/dev/zero", "mechanisms", limit=1000)
    Traceback (most recent call last):
    ...
    exactdp.core.errors.InvalidParameterError: mechanisms='/dev/zero' holds more than 1,000 bytes, the most exactdp reads from one input; merge equal mechanisms with a count (E,D,COUNT or count=N)
    """
    label = f"{what}={_elided(str(path))}"
    if str(path) == "-":
        if stdin is None and sys.stdin is None:
            raise InvalidParameterError(f"{what}='-' reads standard input, which is closed; pipe the data in "
                                        "or give a file name")
        stream = stdin if stdin is not None else sys.stdin.buffer
        try:
            data = _read_bounded(stream, f"{what}='-' (standard input)", limit)
        except OSError as e:
            raise InvalidParameterError(f"{what}='-': standard input cannot be read: {e.strerror or e}") from None
        return decode_text(data, f"{what} (standard input)")
    p = Path(path)
    try:
        if p.is_dir():
            raise InvalidParameterError(f"{label} is a directory, not a file")
        with p.open("rb") as f:
            data = _read_bounded(f, label, limit)
    except FileNotFoundError:
        raise InvalidParameterError(f"{label} does not exist{_data_hint(str(path))}") from None
    except PermissionError:
        raise InvalidParameterError(f"{label} cannot be read (permission denied)") from None
    except OSError as e:
        raise InvalidParameterError(f"{label} cannot be read: {e.strerror or e}{_data_hint(str(path))}") from None
    return decode_text(data, label)


def _elided(text: str, keep: int = 60) -> str:
    """``repr(text)``, its middle elided when long, so that an error stays one readable line.

    >>> _elided("0.1,0\\n" * 100)
    "'0.1,0\\\\n0.1,0\\\\n0.1,0\\\\n0.1,0\\\\n0...n0.1,0\\\\n0.1,0\\\\n0.1,0\\\\n0.1,0\\\\n' (600 characters)"
    """
    r = repr(text)
    if len(r) <= 2 * keep + 10:
        return r
    return f"{r[:keep // 2]}...{r[-(keep // 2):]} ({len(text)} characters)"


def _data_hint(path: str) -> str:
    """A hint when a file name looks like the data itself (the values typed where a file goes)."""
    if "," in path or "\n" in path:
        return "; it looks like the values themselves: pass them with --mechanism, or pipe them in with '-'"
    return ""


def check_output_path(path: str | os.PathLike[str], what: str) -> Path:
    """Check, before any work, that the file ``path`` can be written; returns it as a Path.

    Refuses a directory, a path inside a folder that does not exist (the folder is not created:
    the user may have mistyped it), and a file or folder that cannot be written.

    >>> check_output_path("/proc/x.csv", "--csv")
    Traceback (most recent call last):
    ...
    exactdp.core.errors.InvalidParameterError: --csv='/proc/x.csv' cannot be written: No such file or directory
    """
    p = Path(path)
    label = f"{what}={str(path)!r}"
    if p.is_dir():
        raise InvalidParameterError(f"{label} is a directory; give a file name")
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.exists():
        raise InvalidParameterError(f"{label}: the folder {str(parent)!r} does not exist")
    if not parent.is_dir():
        raise InvalidParameterError(f"{label}: {str(parent)!r} is not a folder")
    if p.exists():
        if not os.access(p, os.W_OK):
            raise InvalidParameterError(f"{label} cannot be written (permission denied)")
    elif not os.access(parent, os.W_OK | os.X_OK):
        raise InvalidParameterError(f"{label}: the folder {str(parent)!r} cannot be written (permission denied)")
    else:
        # the last word is the system's: a folder such as /proc refuses a new file that os.access allows.
        # The probe creates the file and removes it again (it did not exist: nothing of the user's is touched).
        try:
            os.close(os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
        except OSError as e:
            raise InvalidParameterError(f"{label} cannot be written: {e.strerror or e}") from None
        os.unlink(p)
    return p


def require_extra(module: str, purpose: str) -> Any:
    """Import an optional dependency, or raise :class:`MissingExtraError` naming the extra to install."""
    try:
        return importlib.import_module(module)
    except ImportError:
        extra = EXTRAS.get(module.split(".")[0], "")
        fix = f"pip install 'exactdp[{extra}]'" if extra else f"pip install {module.split('.')[0]}"
        raise MissingExtraError(f"{purpose} needs {module.split('.')[0]}, which is not installed: {fix}") from None
