"""The one input reader: mechanism arguments, mechanism files and JSON mechanism lists -> Composition.

Every way a user names mechanisms outside Python values comes through here (docs/contracts.md §2):

* a ``--mechanism`` value: ``'E[,D[,COUNT]]'`` (COUNT generic (E, D)-DP mechanisms) or a spec such
  as ``'gaussian:sigma=1,count=10'`` (:mod:`exactdp.model.spec`); :func:`mechanism_args` reads a
  repeated option, the same way for every command;
* a mechanisms file (``--mechanisms FILE``, ``-`` for standard input): CSV lines
  ``eps,delta[,count]`` or spec lines, or a JSON list (:func:`read_mechanisms_file`);
* the ``mechanisms`` (and ``after``) list of a batch object (:func:`mechanisms_from_json`);
* one mechanism without a count, where the count is what is calibrated (:func:`single_mechanism`).

One syntax for every command's ``--mechanism``:

>>> str(mechanism_args(["0.1", "0.2,1e-6"]))
'(0.1, 0) + (0.2, 0.000001)'
>>> str(mechanism_args(["0.1,0,3"]))
'3 x (0.1, 0)-DP'
>>> mechanism_args(["0.1,0,3,4"])
Traceback (most recent call last):
...
exactdp.core.errors.InvalidParameterError: mechanism='0.1,0,3,4' must be 'E[,D[,COUNT]]' (for example '0.1,1e-6' or '0.1,0,10') or a spec such as 'gaussian:sigma=1,count=10'
>>> str(mechanisms_from_json([["0.1", "0", 2], {"mechanism": "gaussian", "sigma": "2"}], "mechanisms"))
'2 x (0.1, 0) + gaussian:sigma=2'
"""

from __future__ import annotations

import csv
import functools
import io
import json
from collections.abc import Callable, Sequence
from decimal import Decimal
from typing import Any

from exactdp.core import progress
from exactdp.core.errors import ExactDPError, InvalidParameterError, MemoryBoundError, TimeBudgetError
from exactdp.core.files import read_text
from exactdp.core.numbers import format_fraction
from exactdp.model.composition import Composition
from exactdp.model.generic import Mechanism
from exactdp.model.mechanisms import SpecificMechanism, normalise_mechanism
from exactdp.model.spec import parse_mechanism_spec

__all__ = [
    "MechanismInput",
    "composition_from_args",
    "load_json_exact",
    "mechanism_args",
    "mechanism_text",
    "mechanisms_from_json",
    "read_mechanisms_file",
    "single_mechanism",
]

#: what :func:`single_mechanism` reads: a mechanism value, a spec or 'E[,D]' string, an (eps[, delta]) pair
MechanismInput = Mechanism | SpecificMechanism | str | tuple[Any, ...] | list[Any]


def _err_line(e: BaseException) -> str:
    return " ".join(str(e).split())


def _reject_json_constant(name: str) -> Any:
    raise InvalidParameterError(f"value={name} must be a finite number (JSON {name} is not one)")


def load_json_exact(text: str) -> Any:
    """JSON text with every number exact: a JSON number is read as the decimal it is written as
    (``0.1`` is exactly 1/10); ``NaN`` and ``Infinity`` are refused with one line.

    >>> load_json_exact('[0.1, 2]')
    [Decimal('0.1'), 2]
    >>> load_json_exact("[" * 100000 + "]" * 100000)
    Traceback (most recent call last):
    ...
    exactdp.core.errors.InvalidParameterError: the JSON is nested too deeply (more levels of brackets than the reader takes)
    """
    try:
        return json.loads(text, parse_float=Decimal, parse_int=int, parse_constant=_reject_json_constant)
    except RecursionError:  # the decoder recurses once per level of brackets
        raise InvalidParameterError("the JSON is nested too deeply (more levels of brackets than the reader "
                                    "takes)") from None


#: the most distinct mechanisms one input holds (equal lines are one; about 1 KB of memory each)
MAX_DISTINCT_MECHANISMS = 10**6


class _Groups:
    """Mechanisms as they are read: equal ones merged in order of first appearance, each distinct
    text parsed once, the count of distinct ones bounded (:data:`MAX_DISTINCT_MECHANISMS`)."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.counts: dict[Any, int] = {}
        self.parsed: dict[Any, tuple[Any, int]] = {}

    def add(self, key: Any, entry: Any, at: Callable[[str], str]) -> None:
        """Add ``entry`` (an entry of :meth:`Composition.heterogeneous`), parsed the first time its
        hashable ``key`` is seen; a parse error is re-raised with its message passed through ``at``."""
        got = self.parsed.get(key)
        if got is None:
            try:
                got = Composition.heterogeneous([entry]).groups[0]
            except (TimeBudgetError, MemoryBoundError):
                raise  # the budget ran out during the parse (a tick): not a fault of this line
            except ExactDPError as e:
                raise InvalidParameterError(at(_err_line(e))) from None
            if len(self.parsed) < MAX_DISTINCT_MECHANISMS:
                self.parsed[key] = got
        mech, count = got
        if mech not in self.counts and len(self.counts) >= MAX_DISTINCT_MECHANISMS:
            raise InvalidParameterError(
                f"{self.where} has more than {MAX_DISTINCT_MECHANISMS:,} distinct mechanisms, the most one input "
                "may hold; merge equal ones with a count (E,D,COUNT or count=N)")
        self.counts[mech] = self.counts.get(mech, 0) + count

    def composition(self) -> Composition:
        return Composition(tuple(self.counts.items()))


def read_mechanisms_file(path: str) -> Composition:
    """The composition of a mechanisms file (``-``: standard input): a JSON list (or an object with
    a ``mechanisms`` key) as :func:`mechanisms_from_json`, else CSV lines ``eps[,delta[,count]]`` or
    spec lines; blank lines, ``#`` comments and an ``eps,...`` header line are skipped.

    The file is bounded (:data:`~exactdp.core.files.MAX_INPUT_BYTES`, and at most
    :data:`MAX_DISTINCT_MECHANISMS` distinct mechanisms); equal lines are parsed once and merged,
    and the reading counts against the current time budget (docs/contracts.md §2.1)."""
    text = read_text(path, "mechanisms")
    where = "standard input" if path == "-" else repr(path)
    stripped = text.strip()
    if not stripped:
        raise InvalidParameterError(f"mechanisms file {where} is empty")
    if stripped[0] in "[{":
        try:
            data = load_json_exact(stripped)
        except json.JSONDecodeError as e:
            raise InvalidParameterError(f"mechanisms file {where} is not valid JSON: {e}") from None
        if isinstance(data, dict):
            data = data.get("mechanisms")
        return mechanisms_from_json(data, f"mechanisms file {where}")
    del stripped
    groups = _Groups(f"mechanisms file {where}")
    header_allowed = True
    for lineno, line in enumerate(io.StringIO(text), 1):
        if lineno % 4096 == 0:
            progress.tick(f"reading the mechanisms, line {lineno:,}")
        key = line.strip()
        if not key or key.startswith("#"):
            continue
        at = functools.partial("mechanisms file {} line {}: {}".format, where, lineno)
        if ":" in key:  # a mechanism spec: the whole line, commas included
            groups.add(key, key, at)
            header_allowed = False
            continue
        try:
            row = next(csv.reader([line], strict=True), [])
        except csv.Error as e:
            raise InvalidParameterError(f"mechanisms file {where} line {lineno}: not CSV ({e})") from None
        cells = [c.strip() for c in row]
        if not cells or not any(cells) or cells[0].startswith("#"):
            continue
        if header_allowed and cells[0].lower() in ("eps", "epsilon"):
            header_allowed = False
            continue  # header
        header_allowed = False
        if not 1 <= len(cells) <= 3:
            raise InvalidParameterError(
                f"mechanisms file {where} line {lineno}: {key!r} must be 'eps[,delta[,count]]'")
        groups.add(tuple(cells), cells, at)
    if not groups.counts:
        raise InvalidParameterError(f"mechanisms file {where} has no mechanism lines")
    return groups.composition()


def mechanisms_from_json(data: Any, what: str) -> Composition:
    """The composition of a JSON mechanism list (JSON numbers as :class:`~decimal.Decimal`): each
    entry ``[eps, delta(, count)]``, a spec string, ``{"eps", "delta", "count"}`` or
    ``{"mechanism": KIND, key: value, ...}``; ``what`` names the list in error messages."""
    if not isinstance(data, list):
        raise InvalidParameterError(f"{what} must be a list of [eps, delta(, count)] entries")
    groups = _Groups(what)
    for i, m in enumerate(data):
        if i % 4096 == 4095:
            progress.tick(f"reading the mechanisms, entry {i + 1:,}")
        if isinstance(m, dict) and "mechanism" in m:
            m = _spec_of_dict(m, f"{what}[{i}]")
        elif isinstance(m, dict):
            unknown = sorted(set(m) - {"eps", "delta", "count"})
            if unknown:
                raise InvalidParameterError(f"{what}[{i}] has unknown keys {unknown}; known: eps, delta, count "
                                            "(or 'mechanism' with its parameters)")
            m = [m.get("eps"), m.get("delta", 0)] + ([m["count"]] if "count" in m else [])
        if isinstance(m, list):
            m = [str(v) if isinstance(v, Decimal) else v for v in m]
        elif not isinstance(m, (str, int)) or isinstance(m, bool):
            raise InvalidParameterError(f"{what}[{i}]={m!r} must be [eps, delta(, count)] or a mechanism spec")
        groups.add(tuple(m) if isinstance(m, list) else (m,), m,
                   functools.partial(_renumbered, f"{what}[{i}]"))
    if not groups.counts:
        raise InvalidParameterError(f"{what}=[] must be a non-empty list")
    return groups.composition()


def _renumbered(name: str, message: str) -> str:
    """An error about the one entry ``mechanisms[0]`` said of the entry ``name``."""
    return name + message.removeprefix("mechanisms[0]") if message.startswith("mechanisms[0]") else message


def _spec_of_dict(m: dict[str, Any], what: str) -> str:
    """{"mechanism": "gaussian", "sigma": "1.1", "count": 10} -> "gaussian:sigma=1.1,count=10"; a list
    value (a mixture's sensitivities or probs) is written ``a/b/c``, a fraction in parentheses.

    >>> _spec_of_dict({"mechanism": "mog", "sigma": 1, "sensitivities": [0, 1], "probs": ["1/3", "2/3"]}, "m")
    'mog:sigma=1,sensitivities=0/1,probs=(1/3)/(2/3)'
    """
    kind = m["mechanism"]
    if not isinstance(kind, str) or ":" in kind:
        raise InvalidParameterError(f"{what}.mechanism={kind!r} must be a kind such as 'gaussian'")
    items = []
    for key, v in m.items():
        if key == "mechanism":
            continue
        if isinstance(v, list) and v and all(isinstance(x, (str, int, Decimal)) and not isinstance(x, bool) for x in v):
            v = "/".join(f"({x})" if "/" in str(x) else str(x) for x in v)
        if isinstance(v, bool) and key in ("bounded", "with-replacement"):  # the flags: JSON true/false too
            v = "true" if v else "false"
        if isinstance(v, bool) or not isinstance(v, (str, int, Decimal)):
            raise InvalidParameterError(f"{what}.{key}={v!r} must be a number (a string or a JSON number)")
        items.append(f"{key}={v}")
    return f"{kind}:" + ",".join(items)


def _mechanism_arg(s: str, specs: bool) -> list[str] | str:
    """One ``--mechanism`` value: ``'E[,D[,COUNT]]'`` (its cells as written) or a SPEC."""
    if ":" in s:
        if not specs:
            raise InvalidParameterError(f"mechanism={s!r}: this command scales generic mechanisms, give "
                                        "'E[,D[,COUNT]]' (for example '0.1,1e-6,10')")
        return s.strip()  # a mechanism spec, parsed by Composition
    parts = [p.strip() for p in s.split(",")]
    if not 1 <= len(parts) <= 3 or not all(parts):
        raise InvalidParameterError(f"mechanism={s!r} must be 'E[,D[,COUNT]]' (for example '0.1,1e-6' or "
                                    "'0.1,0,10') or a spec such as 'gaussian:sigma=1,count=10'")
    return parts


def mechanism_args(texts: Sequence[str], *, specs: bool = True) -> Composition:
    """The composition of repeated ``--mechanism`` values, one syntax for every command
    (docs/contracts.md §2.1): ``'E'``, ``'E,D'``, ``'E,D,COUNT'`` or a SPEC (``specs=False``:
    generic mechanisms only, as ``exactdp calibrate scale`` needs)."""
    return Composition.heterogeneous([_mechanism_arg(s, specs) for s in texts])


def composition_from_args(eps: Any, delta: Any, k: Any, mechanism: list[str] | None,
                          mechanisms_file: str | None) -> Composition:
    """The composition from the --eps/--delta/--k or --mechanism/--mechanisms arguments."""
    hetero = bool(mechanism) or mechanisms_file is not None
    if hetero and (eps is not None or k is not None or delta is not None):
        raise InvalidParameterError("give either --eps/--delta/--k or --mechanism/--mechanisms, not both")
    if mechanism and mechanisms_file is not None:
        raise InvalidParameterError("give either --mechanism (repeated) or --mechanisms FILE, not both")
    if mechanisms_file is not None:
        return read_mechanisms_file(mechanisms_file)
    if mechanism:
        return mechanism_args(mechanism)
    if eps is None:
        raise InvalidParameterError("eps=None: a composition needs --eps E --k K, or --mechanism E[,D]")
    if k is None:
        raise InvalidParameterError("k=None: --eps needs --k K, the number of mechanisms")
    return Composition.homogeneous(eps, "0" if delta is None else delta, k)


def single_mechanism(m: object) -> Mechanism | SpecificMechanism:
    """A mechanism from a value, a spec string ('gaussian:sigma=1,q=0.01', 'approx:eps=0.1',
    '0.1,1e-6') or an (eps, delta) pair; a count in a spec is refused (k is what is calibrated).

    >>> single_mechanism("0.1,1e-6")
    Mechanism(eps=ExactReal.parse('0.1'), delta=Fraction(1, 1000000))
    >>> single_mechanism("gaussian:sigma=1,count=2")
    Traceback (most recent call last):
    ...
    exactdp.core.errors.InvalidParameterError: mechanism='gaussian:sigma=1,count=2': leave out count=..., the number of runs is what calibrate k finds
    """
    mech: Mechanism | SpecificMechanism
    if isinstance(m, (Mechanism, SpecificMechanism)):
        mech = normalise_mechanism(m)
        return mech
    if isinstance(m, str):
        if ":" in m:
            mech, count = parse_mechanism_spec(m)
            if count != 1:
                raise InvalidParameterError(f"mechanism={m!r}: leave out count=..., the number of runs is what "
                                            "calibrate k finds")
            return mech
        parts = _mechanism_arg(m, specs=False)
        if len(parts) == 3:
            raise InvalidParameterError(f"mechanism={m!r}: leave out COUNT, the number of runs is what "
                                        "calibrate k finds")
        return Mechanism.of(parts[0], parts[1] if len(parts) > 1 else 0)
    if isinstance(m, (tuple, list)) and 1 <= len(m) <= 2:
        return Mechanism.of(m[0], m[1] if len(m) > 1 else 0)
    raise InvalidParameterError(f"mechanism={m!r} must be a mechanism, a spec string or an (eps, delta) pair")


def mechanism_text(m: Mechanism | SpecificMechanism) -> str:
    """A mechanism as the text the JSON inputs show: its spec, or ``(eps, delta)-DP``.

    >>> mechanism_text(single_mechanism("0.1,1e-6"))
    '(0.1, 0.000001)-DP'
    """
    return m.spec() if isinstance(m, SpecificMechanism) else f"({m.eps}, {format_fraction(m.delta)})-DP"
