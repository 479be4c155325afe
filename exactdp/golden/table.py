"""What a golden table is: a :class:`TableSpec` (name, title, description, source) and its :class:`RowSpec` s.

A RowSpec is one query of a table, plain frozen data, so ``--jobs N`` can farm rows out to
processes and put the results back in order; :func:`exactdp.golden.specs.compute_row` evaluates
one, and :data:`exactdp.golden.specs.TABLES` lists the tables.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from exactdp.model.composition import Composition

__all__ = ["DIGITS", "RowSpec", "TableSpec"]

#: The certified digits of a row unless its spec asks for others.
DIGITS = 30


@dataclass(frozen=True)
class RowSpec:
    """One query of a table: the composition, the query point, the method, and where it is from.

    ``kind`` selects the evaluator: ``"method"`` (the method registry), ``"claim"`` (an erratum
    of :mod:`exactdp.golden.errata`), ``"noise"`` (Steinke's noise scales), ``"region"``
    (a vertex of the privacy region), ``"calibrate"`` (a calibration, :mod:`exactdp.golden.calibration`),
    ``"rdp"`` (a Rényi divergence at order ``at``, :func:`exactdp.api.rdp.rdp_curve`), ``"convert"``
    and ``"tradeoff"`` (:mod:`exactdp.golden.mechanism_tables`).
    """

    table: str
    query: str
    method: str
    eps: str = ""
    delta: str = ""
    k: str = ""
    mechanisms: tuple[tuple[str, ...], ...] = ()
    at: str = ""
    options: tuple[tuple[str, str], ...] = ()
    note: str = ""
    source: str = ""
    kind: str = "method"
    digits: int = DIGITS

    def composition(self) -> Composition:
        if self.mechanisms:
            # an entry is (eps, delta[, count]) or a one-element (spec,) such as ("gaussian:sigma=1,count=10",)
            return Composition.heterogeneous([m[0] if len(m) == 1 and ":" in m[0] else list(m)
                                              for m in self.mechanisms])
        return Composition.homogeneous(self.eps, self.delta or "0", self.k)


@dataclass(frozen=True)
class TableSpec:
    """A golden table: its name (file stem), title, description, and its rows in order."""

    name: str
    title: str
    description: str
    source: str
    rows: Callable[[], list[RowSpec]] = field(repr=False)
    figure: str | None = None

    def meta(self) -> dict[str, str]:
        return {"table": self.name, "title": self.title, "description": self.description, "source": self.source}
