"""The composition value object: which mechanisms run on the same data, each with its count.

A mechanism is either a generic (eps, delta)-DP :class:`~exactdp.model.generic.Mechanism` (the worst case of its class,
answered exactly by KOV15 / Murtagh-Vadhan) or a specific mechanism of :mod:`exactdp.model.mechanisms`
(Gaussian, Laplace, k-ary randomized response, Poisson subsampling), answered by the Gaussian
closed form or the certified PLD engine.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, TypeGuard, Union

from exactdp.core.errors import ExactDPError, InvalidParameterError
from exactdp.core.numbers import (
    CountInput,
    ExactInput,
    ExactReal,
    format_fraction,
    parse_delta,
    parse_eps,
    parse_k,
    parse_rational,
)
from exactdp.model.generic import Mechanism
from exactdp.model.mechanisms import SpecificMechanism, normalise_mechanism, with_direction
from exactdp.model.spec import parse_mechanism_spec

__all__ = ["Composition", "CompositionInput", "directed"]

#: What :meth:`Composition.of` reads (and so every query's ``comp``): a Composition, a mapping
#: ``{"eps", "delta", "k"}`` or ``{"mechanisms": [...]}``, a list or tuple of entries (or a flat
#: ``(eps, delta, k)`` triple), or one mechanism spec string; the entries are checked at run time.
CompositionInput = Union["Composition", Mapping[str, Any], list[Any], tuple[Any, ...], str]


@dataclass(frozen=True)
class Composition:
    """The k-fold (adaptive) composition of (eps_i, delta_i)-DP mechanisms.

    Stored as ``groups``: ``(mechanism, count)`` pairs, equal mechanisms merged, in order of first
    appearance, so a homogeneous composition with k = 10**15 is one group.  Immutable; every
    parameter is validated at construction.

    >>> c = Composition.homogeneous("0.1", "0.001", 30)
    >>> c.k, c.is_homogeneous, str(c.homogeneous_params()[0])
    (30, True, '0.1')
    >>> Composition.heterogeneous([("0.1", 0), ("0.2", "1e-6"), ("0.1", 0)]).groups[0][1]
    2
    """

    groups: tuple[tuple[Any, int], ...]

    def __post_init__(self) -> None:
        if not isinstance(self.groups, tuple) or not self.groups:
            raise InvalidParameterError(f"mechanisms={list(self.groups) if isinstance(self.groups, (list, tuple)) else self.groups!r} must be a non-empty list")
        merged: dict[Any, int] = {}
        for g in self.groups:
            if not (isinstance(g, tuple) and len(g) == 2 and _is_mechanism(g[0])):
                raise InvalidParameterError(f"group={_short(g)} must be a (mechanism, count) pair")
            m = normalise_mechanism(g[0])
            merged[m] = merged.get(m, 0) + parse_k(g[1], "count")
        object.__setattr__(self, "groups", tuple(merged.items()))

    # -- constructors -----------------------------------------------------------------------
    @classmethod
    def homogeneous(cls, eps: ExactInput, delta: ExactInput = 0, k: CountInput = 1) -> Composition:
        """k mechanisms, each (eps, delta)-DP."""
        return cls(((Mechanism.of(eps, delta), parse_k(k, "k")),))

    @classmethod
    def heterogeneous(cls, mechanisms: Iterable[object]) -> Composition:
        """A list of mechanisms: each a Mechanism, a (Mechanism, count) pair, an eps, or a
        tuple (eps[, delta[, count]]).  (A bare eps is fine here: the name says it is a list.)

        >>> str(Composition.heterogeneous(["0.1", ("0.2", "1e-6", 2)]))
        '(0.1, 0) + 2 x (0.2, 0.000001)'
        """
        if isinstance(mechanisms, (str, bytes, Mapping)) or not isinstance(mechanisms, Iterable):
            raise InvalidParameterError(f"mechanisms={_short(mechanisms)} must be a list of (eps, delta) pairs")
        groups = tuple(_parse_entry(m, i, bare_eps=True) for i, m in enumerate(mechanisms))
        if not groups:
            raise InvalidParameterError("mechanisms=[] must be a non-empty list")
        return cls(groups)

    @classmethod
    def of(cls, obj: CompositionInput) -> Composition:
        """The one parser of composition shorthands, each form unambiguous.

        Accepted: a Composition (returned as is); a dict ``{"eps", "delta", "k"}`` (delta
        optional) or ``{"mechanisms": [...]}`` (as :meth:`heterogeneous`); a flat triple
        ``(eps, delta, k)`` with an integer k, meaning k equal mechanisms; a list or tuple of
        entries, each a Mechanism, a ``(Mechanism, count)`` pair, or an ``(eps, delta)`` /
        ``(eps, delta, count)`` tuple; one mechanism spec string such as
        ``"gaussian:sigma=1,count=10"`` (docs/kit.md).  Anything else, in particular a flat pair such
        as ``("0.1", 30)``, raises :class:`InvalidParameterError` showing the unambiguous forms.

        >>> str(Composition.of("gaussian:sigma=1,q=0.01,count=1000"))
        '1000 x gaussian:sigma=1,q=0.01'
        >>> str(Composition.of(("0.1", "0.001", 30)))
        '30 x (0.1, 0.001)-DP'
        >>> str(Composition.of([("1", "0.1"), ("2", "0.2", 3)]))
        '(1, 0.1) + 3 x (2, 0.2)'
        >>> Composition.of(("0.1", 30))
        Traceback (most recent call last):
        ...
        exactdp.core.errors.InvalidParameterError: composition=('0.1', 30) is a flat list of numbers, which is ambiguous; write Composition.homogeneous('0.1', 0, 30) for 30 equal mechanisms, or [('0.1', 0), (30, 0)] for a list of (eps, delta) mechanisms
        """
        if isinstance(obj, Composition):
            return obj
        for x in (obj, *(obj if isinstance(obj, (list, tuple)) else ())):
            hint = _foreign_hint(x)
            if hint is not None:
                raise InvalidParameterError(f"composition={_short(obj)}: {hint}")
        if _is_spec(obj):
            return cls((parse_mechanism_spec(obj),))
        if isinstance(obj, Mapping):
            return cls._of_mapping(obj)
        if isinstance(obj, (list, tuple)):
            if not obj:
                raise InvalidParameterError(f"composition={obj!r} must be a non-empty list of mechanisms")
            if all(_is_scalar(x) for x in obj) and all(_is_number_like(x) for x in obj):
                if len(obj) == 3 and _is_integral(obj[2]):
                    return cls.homogeneous(*obj)
                raise InvalidParameterError(_flat_message(obj))
            if all(_is_scalar(x) for x in obj):  # objects that are neither numbers nor mechanisms
                raise InvalidParameterError(f"composition={_short(obj)} holds {type(obj[0]).__name__} objects, which "
                                            "are neither numbers nor mechanisms")
            return cls(tuple(_parse_entry(m, i, bare_eps=False) for i, m in enumerate(obj)))
        raise InvalidParameterError(
            f"composition={_short(obj)} must be a Composition, an (eps, delta, k) triple, a list of "
            "(eps, delta[, count]) entries, a dict with keys eps, delta, k or mechanisms, or a mechanism spec; "
            "for example Composition.homogeneous('0.1', 0, 30) or [('0.1', 0), ('0.2', 0)]")

    @classmethod
    def _of_mapping(cls, obj: Mapping[Any, Any]) -> Composition:
        keys = set(obj)
        if keys == {"mechanisms"}:
            return cls.heterogeneous(obj["mechanisms"])
        if {"eps", "k"} <= keys <= {"eps", "delta", "k"}:
            return cls.homogeneous(obj["eps"], obj.get("delta", 0), obj["k"])
        raise InvalidParameterError(
            f"composition={_short(obj)} must have the keys eps, delta, k (delta optional) or mechanisms, "
            f"got {', '.join(sorted(map(repr, keys))) or 'no keys'}")

    # -- views ------------------------------------------------------------------------------
    @property
    def k(self) -> int:
        """The number of mechanisms."""
        return sum(c for _, c in self.groups)

    @property
    def is_generic(self) -> bool:
        """Whether every mechanism is a generic (eps, delta)-DP one (the KOV15 / MV setting)."""
        return all(isinstance(m, Mechanism) for m, _ in self.groups)

    @property
    def is_homogeneous(self) -> bool:
        """k equal generic (eps, delta)-DP mechanisms (the KOV15 setting)."""
        return len(self.groups) == 1 and self.is_generic

    def homogeneous_params(self) -> tuple[ExactReal, Fraction, int]:
        """(eps, delta, k) of a homogeneous composition."""
        if not self.is_homogeneous:
            raise InvalidParameterError("composition must be homogeneous (k equal (eps, delta)-DP mechanisms)")
        (m, c), = self.groups
        return m.eps, m.delta, c

    def require_generic(self, what: str) -> None:
        """Refuse, with one line, a composition of specific mechanisms where only (eps, delta) ones make sense."""
        if not self.is_generic:
            kinds = sorted({m.kind for m, _ in self.groups if not isinstance(m, Mechanism)})
            raise InvalidParameterError(
                f"{what} needs (eps, delta)-DP mechanisms; this composition has {', '.join(kinds)} mechanisms, "
                "which the optimal method answers (--method optimal)")

    def mechanisms(self) -> Iterator[Mechanism]:
        """Every mechanism, expanded (k of them: mind a huge k)."""
        for m, c in self.groups:
            for _ in range(c):
                yield m

    @property
    def is_pure(self) -> bool:
        return self.is_generic and all(m.delta == 0 for m, _ in self.groups)

    def to_inputs(self) -> dict[str, Any]:
        """The ``inputs`` object of the JSON contract (a specific mechanism is its spec string)."""
        if self.is_homogeneous:
            eps, delta, k = self.homogeneous_params()
            return {"eps": str(eps), "delta": format_fraction(delta), "k": k}
        out: list[Any] = []
        for m, c in self.groups:
            if isinstance(m, Mechanism):
                out.append(m.to_strings() + ([str(c)] if c != 1 else []))
            else:
                out.append(m.spec() + (f",count={c}" if c != 1 else ""))
        return {"mechanisms": out}

    def __str__(self) -> str:
        if self.is_homogeneous:
            eps, delta, k = self.homogeneous_params()
            return f"{k} x ({eps}, {format_fraction(delta)})-DP"
        return " + ".join(
            (f"{c} x " if c != 1 else "")
            + (f"({m.eps}, {format_fraction(m.delta)})" if isinstance(m, Mechanism) else m.spec())
            for m, c in self.groups
        )


def _is_mechanism(x: object) -> TypeGuard[Mechanism | SpecificMechanism]:
    return isinstance(x, (Mechanism, SpecificMechanism))


def _is_scalar(x: object) -> bool:
    """Not a container, a mechanism or a composition: what a flat list of numbers is made of."""
    return not isinstance(x, (list, tuple, Mapping, Composition)) and not _is_mechanism(x) and not _is_spec(x)


def _is_number_like(x: object) -> bool:
    """A value a flat list of numbers could hold (a number, or its text)."""
    return isinstance(x, (str, Fraction, ExactReal)) or hasattr(x, "__float__") or hasattr(x, "__index__")


def _foreign_hint(x: object) -> str | None:
    """What to do with a dp_accounting event or an accountant given where a composition belongs
    (duck-typed, no import: they are read by :mod:`exactdp.model.dp_event`), else None."""
    name = type(x).__name__
    if name.endswith("DpEvent"):
        return f"{name} is a dp_accounting event: read it with exactdp.from_dp_event(event) (or Accountant().compose(event))"
    if hasattr(x, "ledger") or hasattr(x, "history") or (hasattr(x, "composition") and hasattr(x, "relation")):
        return f"{name} is an accountant: read it with exactdp.from_accountant(acc) (or Accountant().compose(acc))"
    return None


def _is_spec(x: object) -> TypeGuard[str]:
    """A mechanism spec string such as 'gaussian:sigma=1.1,count=100'."""
    return isinstance(x, str) and ":" in x


def _is_integral(x: object) -> bool:
    """Whether x is an integer (of any sign: a flat triple with k = 0 is still a triple)."""
    try:
        parse_k(x)
        return True
    except ExactDPError:
        pass
    try:
        return parse_rational(x).denominator == 1
    except ExactDPError:
        return False


def _short(x: object, limit: int = 80) -> str:
    r = repr(x)
    return r if len(r) <= limit else r[: limit - 3] + "..."


def _flat_message(obj: list[Any] | tuple[Any, ...]) -> str:
    """A flat list of numbers: say why it is refused and show both unambiguous ways to write it."""
    if len(obj) == 2 and _is_integral(obj[1]):
        hom = f"Composition.homogeneous({obj[0]!r}, 0, {obj[1]!r}) for {obj[1]} equal mechanisms"
    elif len(obj) in (2, 3):
        hom = f"Composition.homogeneous({obj[0]!r}, {obj[1]!r}, k) with an integer k for k equal mechanisms"
    else:
        hom = "Composition.homogeneous(eps, delta, k) for k equal mechanisms"
    lst = ", ".join(f"({x!r}, 0)" for x in obj[:3]) + (", ..." if len(obj) > 3 else "")
    return (f"composition={_short(obj)} is a flat list of numbers, which is ambiguous; write {hom}, "
            f"or [{lst}] for a list of (eps, delta) mechanisms")


def _parse_entry(m: object, i: int, *, bare_eps: bool) -> tuple[Mechanism | SpecificMechanism, int]:
    """One entry of a mechanism list -> (mechanism, count).

    One branch per entry type: a new kind of mechanism (e.g. Gaussian) is one more branch here.
    ``bare_eps`` (for :meth:`Composition.heterogeneous`) also takes an eps alone or ``(eps,)``.
    """
    where = f"mechanisms[{i}]"
    if _is_mechanism(m):
        return m, 1
    if _is_spec(m):
        return parse_mechanism_spec(m)
    if isinstance(m, (list, tuple)) and len(m) == 2 and _is_mechanism(m[0]):
        return m[0], parse_k(m[1], f"{where}.count")
    if isinstance(m, (list, tuple)) and (2 <= len(m) <= 3 or (bare_eps and len(m) == 1)):
        eps = parse_eps(m[0], f"{where}.eps")
        delta = parse_delta(m[1], f"{where}.delta") if len(m) > 1 else Fraction(0)
        count = parse_k(m[2], f"{where}.count") if len(m) > 2 else 1
        return Mechanism(eps, delta), count
    if bare_eps and _is_scalar(m):
        return Mechanism(parse_eps(m, f"{where}.eps")), 1
    shape = "an (eps[, delta[, count]]) tuple or an eps" if bare_eps else "an (eps, delta[, count]) tuple"
    raise InvalidParameterError(f"{where}={_short(m)} must be a mechanism, a (mechanism, count) pair, a spec such "
                                f"as 'gaussian:sigma=1,count=10', or {shape}")


def directed(comp: CompositionInput, direction: str = "max") -> Composition:
    """The composition with every profile taken in ``direction`` (``max``, ``remove`` or ``add``): a
    Poisson subsample under add/remove composes that order only (docs/mathematics.md §9); symmetric
    mechanisms are unchanged, so they answer the same in all three.

    >>> str(directed("gaussian:sigma=1,q=0.1,count=10", "remove"))
    '10 x gaussian:sigma=1,q=0.1,direction=remove'
    """
    c = Composition.of(comp)
    return Composition(tuple((with_direction(m, direction), n) for m, n in c.groups))  # type: ignore[arg-type]
