"""The arguments of a calibration, parsed exactly: the target, the gap, rounding, the time budget,
rates and positive parameters, the mechanisms already spent, and the ``inputs`` record of the result.

Every value is exact (docs/contracts.md §1); a bad one raises
:class:`~exactdp.core.errors.InvalidParameterError` with one line that names it.

>>> parse_gap(None, Fraction(1, 1000)), parse_rate("0.01")
(Fraction(1, 1000), Fraction(1, 100))
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from exactdp.core.errors import InvalidParameterError
from exactdp.core.numbers import ExactReal, format_fraction, parse_delta, parse_eps, parse_rational
from exactdp.model.composition import Composition, CompositionInput
from exactdp.model.mechanisms import parse_relation

__all__ = [
    "inputs_record",
    "parse_base",
    "parse_gap",
    "parse_positive",
    "parse_rate",
    "parse_relation_reading",
    "parse_round_to",
    "parse_target",
    "relation_record",
    "with_base",
]

def parse_target(eps_g: object, delta_g: object) -> tuple[ExactReal, Fraction]:
    """The target (eps_g, delta_g), exact."""
    return parse_eps(eps_g, "target_eps"), parse_delta(delta_g, "target_delta")


def parse_gap(gap: object, default: Fraction) -> Fraction:
    """The relative gap wanted between value and fails_at (0 < gap < 1), or ``default``."""
    if gap is None:
        return default
    g = parse_rational(gap, "gap")
    if not 0 < g < 1:
        raise InvalidParameterError(f"gap={gap!r} must satisfy 0 < gap < 1 (a relative distance, e.g. 1e-4)")
    return g


def parse_round_to(r: object) -> Fraction | None:
    """The step the value is rounded to (> 0), or None."""
    if r is None:
        return None
    v = parse_rational(r, "round_to")
    if v <= 0:
        raise InvalidParameterError(f"round_to={r!r} must be > 0 (e.g. 1e-6)")
    return v


def parse_base(base: CompositionInput | None) -> Composition | None:
    """The mechanisms already spent (anything :meth:`Composition.of` accepts), or None."""
    if base is None:
        return None
    return Composition.of(base)


def with_base(base: Composition | None, groups: tuple[tuple[Any, int], ...]) -> Composition:
    """The composition of ``base`` (if any) followed by ``groups``."""
    return Composition((base.groups if base is not None else ()) + groups)


def parse_positive(x: object, name: str) -> Fraction:
    """A rational > 0 (a noise scale, a sensitivity)."""
    v = parse_rational(x, name)
    if v <= 0:
        raise InvalidParameterError(f"{name}={x!r} must be > 0")
    return v


def parse_rate(x: object, name: str = "q", *, zero: bool = False) -> Fraction:
    """A sampling rate 0 < q <= 1 (0 <= q <= 1 with ``zero``: a calibration that answers q = 0)."""
    v = parse_rational(x, name)
    if not (0 <= v <= 1 if zero else 0 < v <= 1):
        raise InvalidParameterError(f"{name}={x!r} must satisfy {'0 <=' if zero else '0 <'} {name} <= 1")
    return v


def inputs_record(eps_g: ExactReal, delta_g: Fraction, **kw: Any) -> dict[str, Any]:
    """The ``inputs`` object of a result: the given keys (None ones left out, fractions as exact
    strings), then ``target_eps`` and ``target_delta``."""
    out: dict[str, Any] = {}
    for key, v in kw.items():
        if v is None:
            continue
        out[key] = format_fraction(v) if isinstance(v, Fraction) else v
    out["target_eps"], out["target_delta"] = str(eps_g), format_fraction(delta_g)
    return out


def parse_relation_reading(relation: object, bounded: object) -> tuple[str, bool]:
    """The neighbouring relation (``add-remove`` or ``replace-one``; dp_accounting's
    ``NeighboringRelation`` members and names read the same) and the bounded-records reading
    (``True`` only under replace-one: docs/mathematics.md §9, Theorem 9.8).

    >>> parse_relation_reading("REPLACE_ONE", True)
    ('replace-one', True)
    >>> parse_relation_reading("add-remove", True)
    Traceback (most recent call last):
    ...
    exactdp.core.errors.InvalidParameterError: bounded=True (records within half the replace-one sensitivity, dp_accounting's reading: docs/mathematics.md §9, Theorem 9.8) applies under relation=replace-one only, not add-remove
    """
    rel = parse_relation(relation)
    if not isinstance(bounded, bool):
        raise InvalidParameterError(f"bounded={bounded!r} must be True or False")
    if bounded and rel != "replace-one":
        raise InvalidParameterError(f"bounded={bounded!r} (records within half the replace-one sensitivity, "
                                    "dp_accounting's reading: docs/mathematics.md §9, Theorem 9.8) applies under "
                                    f"relation=replace-one only, not {rel}")
    return rel, bounded


def relation_record(relation: str, bounded: bool) -> dict[str, Any]:
    """The relation's keys of an ``inputs`` record: none for the default add/remove (the record
    reads as before), ``relation`` for replace-one and ``bounded`` when it is set."""
    out: dict[str, Any] = {}
    if relation != "add-remove":
        out["relation"] = relation
    if bounded:
        out["bounded"] = True
    return out
