"""The result of a calibration: :class:`Calibration`, its JSON form and its text for people.

``value`` is certified safe and ``fails_at`` certified to miss (docs/calibration.md §1); the
text (:func:`human`) states the question, the answer and both certificates.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from exactdp.calibrate.certsearch import Proof
from exactdp.core.numbers import ExactReal, decimal_string, directed_float, format_fraction

__all__ = ["Calibration", "gap_text", "human", "value_text"]


@dataclass(frozen=True)
class Calibration:
    """A certified calibration (docs/calibration.md §1).

    ``value``: the answer, proved to meet the target (``value_proof`` says how); ``fails_at``: a
    point just beyond it (larger for eps, k, q, c; smaller for sigma and scales), proved to miss
    (``fails_proof``); None only when ``value`` is the end of the domain (q = 1, k = 10^15).
    ``relative_gap = |fails_at - value| / value``; ``exact`` is True for an integer answer with
    ``fails_at = value + 1`` (and for a domain end).  ``inputs`` is the question in normal form,
    ``engine`` the certificate's kind (``exact``, ``gaussian-closed-form``, ``pld`` or a method),
    ``comparison`` classical recipes' values for the same question, ``note`` why the requested
    gap was not reached, if it was not.
    """

    parameter: str
    direction: str  # "largest" or "smallest"
    value: Fraction | int
    fails_at: Fraction | int | None
    value_proof: Proof
    fails_proof: Proof | None
    relative_gap: Fraction | None
    exact: bool
    inputs: dict[str, Any]
    engine: str
    probes: int
    seconds: float  # float ok: a timing
    gap_requested: Fraction | None = None
    note: str = ""
    comparison: tuple[tuple[str, str], ...] = field(default=())

    @property
    def value_str(self) -> str:
        """``value`` as an exact string (a decimal, ``p/q``, or the integer)."""
        return value_text(self.value)

    @property
    def fails_at_str(self) -> str | None:
        """``fails_at`` as an exact string, or None."""
        return None if self.fails_at is None else value_text(self.fails_at)

    @property
    def gap_reached(self) -> bool:
        """Whether the requested relative gap (or, for an integer, k + 1) was certified."""
        if self.fails_at is None:
            return self.exact
        if isinstance(self.value, int) and not isinstance(self.value, bool) and self.gap_requested is None:
            return self.exact
        return self.relative_gap is not None and self.gap_requested is not None and \
            self.relative_gap <= self.gap_requested

    def __float__(self) -> float:
        """The certified-safe value as a float, rounded toward safety: up for a "smallest" answer
        (a sigma or scale: anything larger also meets the target), down for a "largest" one (an
        eps, k or q: anything smaller also does).

        >>> from fractions import Fraction
        >>> from exactdp.calibrate.noise import calibrate_sigma
        >>> r = calibrate_sigma(100, "1", "1e-5")
        >>> float(r) >= r.value and Fraction(float(r)) - r.value < Fraction(1, 10**14)  # float ok: a doctest of the float rounding
        True
        """
        return directed_float(Fraction(self.value), "up" if self.direction == "smallest" else "down")

    def to_json(self) -> dict[str, Any]:
        """The JSON result (docs/calibration.md §4)."""
        def s(x: Fraction | int | None) -> Any:
            if x is None or isinstance(x, int):
                return x
            return format_fraction(x)

        out: dict[str, Any] = {
            "query": "calibrate", "calibrate": self.parameter, "direction": self.direction,
            "inputs": dict(self.inputs), "value": s(self.value), "fails_at": s(self.fails_at),
            "relative_gap": gap_text(self.relative_gap), "exact": self.exact,
            "gap_requested": format_fraction(self.gap_requested) if self.gap_requested is not None else None,
            "gap_reached": self.gap_reached,
            "certificate": {"value": self.value_proof.to_json(),
                            "fails_at": self.fails_proof.to_json() if self.fails_proof else None},
            "engine": self.engine, "probes": self.probes, "seconds": round(self.seconds, 3),
        }
        if self.note:
            out["note"] = self.note
        if self.comparison:
            out["comparison"] = dict(self.comparison)
        return out

    def __str__(self) -> str:
        return human(self)


def gap_text(g: Fraction | None) -> str | None:
    """A relative gap as the text the results show: ``"0"``, or 3 significant digits rounded up."""
    if g is None:
        return None
    return "0" if g == 0 else decimal_string(g, 3, "up")


_NAMES = {"eps": "per-mechanism eps", "scale": "scale factor c", "k": "number of runs k", "sigma": "sigma",
          "q": "sampling rate q", "laplace-scale": "Laplace scale b"}


def human(r: Calibration) -> str:
    """The result for people: the question, the answer and both certificates."""
    i = r.inputs
    tgt = f"(eps_g, delta_g) = ({i['target_eps']}, {i['target_delta']})"
    what = {
        "eps": lambda: f"{_n(i['k'], 'mechanism')}, each (eps, {i.get('delta', '0')})-DP" + _base_text(i),
        "scale": lambda: "the mechanisms (c eps_i, delta_i) of " + str(i.get("mechanisms")),
        "k": lambda: f"runs of {i['mechanism']}" + _base_text(i),
        "sigma": lambda: f"{_n(i['k'], 'Gaussian step')}" + (f" at q = {i['q']}" if i.get("q", "1") != "1" else "")
        + (f", sensitivity {i['sensitivity']}" if i.get("sensitivity", "1") != "1" else ""),
        "q": lambda: f"{_n(i['k'], 'Poisson-subsampled Gaussian step')} with sigma = {i['sigma']}",
        "laplace-scale": lambda: f"{_n(i['k'], 'Laplace query', 'Laplace queries')}" + (f" at q = {i['q']}" if i.get("q", "1") != "1" else "")
        + (f" of sensitivity {i['sensitivity']}" if i.get("sensitivity", "1") != "1" else ""),
    }[r.parameter]()
    if i.get("relation"):  # the relation the steps are judged under (add/remove, the default, is not shown)
        what += f" under {i['relation']}" + (" with bounded records (dp_accounting's reading)" if i.get("bounded") else "")
    method = f" ({i['method']} composition)" if i.get("method", "optimal") != "optimal" else ""
    name = r.parameter if r.parameter != "laplace-scale" else "b"
    lines = [f"{r.direction} {_NAMES[r.parameter]} for {what} within {tgt}{method}"]

    def v(x: Fraction | int) -> str:
        return str(x) if isinstance(x, int) else format_fraction(x)

    lines.append(f"  {name} = {v(r.value)}    certified safe: {r.value_proof.describe(*_bound(r.value_proof, i))}")
    if r.fails_at is not None and r.fails_proof is not None:
        lines.append(f"  {name} = {v(r.fails_at)}    certified to miss: {r.fails_proof.describe(*_bound(r.fails_proof, i))}")
        if r.exact:
            lines.append(f"  exact: {v(r.value)} meets the target and {v(r.fails_at)} does not")
        else:
            lines.append(f"  nearly optimal: the optimum lies between them, a relative distance of at most "
                         f"{gap_text(r.relative_gap)} ({r.probes} probes, {r.seconds:.1f} s)")
    elif r.exact:
        lines.append(f"  ({v(r.value)} is the end of the range searched: every value "
                     f"{'up to' if r.direction == 'largest' else 'from'} it {'' if r.direction == 'largest' else 'up '}"
                     "meets the target)")
    else:
        lines.append("  (no value beyond it was certified to miss the target within the budget)")
    for label, val in r.comparison:
        lines.append(f"  for comparison, {label}: {val}")
    if r.note:
        lines.append(f"  note: {r.note}")
    return "\n".join(lines)


def _n(k: int, word: str, plural: str | None = None) -> str:
    return f"{k} {word if k == 1 else (plural or word + 's')}"


def _bound(p: Proof, i: dict[str, Any]) -> tuple[str, Fraction | None]:
    if p.quantity.startswith("eps"):
        e = ExactReal.parse(i["target_eps"])
        return f"eps_g = {i['target_eps']}", e.rational_value()
    return f"delta_g = {i['target_delta']}", Fraction(i["target_delta"])


def _base_text(i: dict[str, Any]) -> str:
    return f", after {i['after']}" if i.get("after") else ""



def value_text(x: Fraction | int | None) -> str:
    """A calibrated value as an exact string: the integer, a decimal or ``p/q`` (``"None"`` for None)."""
    return str(x) if isinstance(x, int) or x is None else format_fraction(x)
