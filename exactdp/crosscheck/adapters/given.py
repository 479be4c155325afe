"""What a peer library is given: the floats handed over and the exact values they denote.

Floats handed to a library are converted back exactly (``Fraction(float)``), so a value rounded on
the way in is judged against the mechanism the library really saw, never blamed on our rounding
(docs/peers/README.md).  Also here: the guards an API uses to decline a case it cannot express
(:class:`~exactdp.crosscheck.adapters.base.NotApplicable`), and the claim of a calibration.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from exactdp.core.numbers import ExactReal
from exactdp.crosscheck.adapters.base import NotApplicable, Reported, Unsupported
from exactdp.crosscheck.cases import Case, NoPeerForm, mechanism_parts
from exactdp.model.composition import Composition
from exactdp.model.mechanisms import Gaussian, Laplace, PoissonSampled

__all__ = [
    "Part",
    "as_given",
    "as_number",
    "calibrated_claim",
    "curve_direction",
    "curve_parts",
    "dpsgd_parameters",
    "exact_value",
    "given_composition",
    "max_total_eps",
    "parts_of",
    "require_events",
    "require_generic",
    "require_mechanisms",
    "require_mechanisms_or_calibration",
    "require_pure",
    "rr_exact_eps",
    "rr_noise",
    "to_float",
]


def to_float(q: Fraction) -> float:
    """The float handed to a library for the exact ``q`` (read back exactly by :func:`exact_value`)."""
    return float(q)  # float ok: the value handed to a float library; read back exactly by exact_value


def exact_value(x: float) -> Fraction:
    """The exact binary value of a float a library received or answered."""
    return Fraction(x)  # exact binary value of the float the library received


def as_given(case: Case) -> tuple[Composition, Fraction, list[tuple[float, float, int]]]:
    """The floats handed over, and the exact composition / query point they denote."""
    groups = [(to_float(e), to_float(d), c) for e, d, c in case.groups]
    comp = Composition.heterogeneous([(exact_value(e), exact_value(d), c) for e, d, c in groups])
    return comp, exact_value(to_float(case.at)), groups


def rr_noise(eps: Fraction) -> float:
    """The randomized-response noise parameter p = 2/(1+e^eps) (dp_accounting, 2 buckets)."""
    return 2.0 / (1.0 + math.exp(to_float(eps)))  # float ok: whatever p is, its exact eps is log(2/p - 1)


def rr_exact_eps(p: float) -> ExactReal:
    """RR over 2 buckets with noise p: P = (1 - p/2, p/2), Q = (p/2, 1 - p/2), eps = log(2/p - 1)."""
    q = exact_value(p)
    return ExactReal.log(2 / q - 1)


def require_pure(case: Case) -> None:
    """Decline (NotApplicable) a case that is not a composition of pure eps-DP mechanisms."""
    if not case.is_pure:
        raise NotApplicable("this API models pure eps-DP mechanisms only")


def max_total_eps(case: Case) -> Fraction:
    """The basic-composition total eps of a generic case, sum of count x eps."""
    return sum((e * c for e, _, c in case.groups), Fraction(0))


def require_generic(case: Case) -> None:
    """Decline (NotApplicable) a case that is not a composition of generic (eps, delta)-DP mechanisms."""
    if not case.is_generic:
        raise NotApplicable("this API models generic (eps, delta)-DP mechanisms only")


def require_events(case: Case) -> None:
    """Decline (NotApplicable) a case that is not one of the new events and relations (the ``events``
    cases of the sweep, issue 27 §6): the APIs built for those run on them only."""
    if "events" not in case.tags:
        raise NotApplicable("this API is run on the events-and-relations cases")


def require_mechanisms(case: Case) -> None:
    """Decline (NotApplicable) a generic case or a calibration: the API models specific mechanisms."""
    if case.is_generic or case.is_calibration:
        raise NotApplicable("this API models specific mechanisms")


def as_number(q: Fraction, ints: bool) -> float | int:
    """The number as handed to a library: an int when it is integral and ``ints`` is set."""
    if ints and q.denominator == 1:
        return int(q)
    return to_float(q)


@dataclass(frozen=True)
class Part:
    """One mechanism of a mechanism case as the library gets it (floats), and its exact value."""

    kind: str          # "gaussian" (param = sigma) or "laplace" (param = scale b)
    param: float       # float ok: the value handed to the library
    q: float | None    # float ok: the sampling rate handed to the library (None: no sampling)
    count: int

    def exact(self) -> Any:
        """The exact mechanism the library was given (its floats at their exact binary values)."""
        m: Any = Gaussian(exact_value(self.param)) if self.kind == "gaussian" else Laplace(exact_value(self.param))
        return PoissonSampled(m, exact_value(self.q)) if self.q is not None and self.q != 1.0 else m


def parts_of(case: Case, events: bool = False) -> list[Part]:
    """The mechanisms of a mechanism case as handed to a library (floats).

    An events-and-relations case (issue 27 §6) is declined (NotApplicable) unless ``events`` is set:
    one API per library (``events=True``) answers it, or says :class:`Unsupported` for a mechanism,
    sampling scheme or relation the classic forms do not express."""
    if "events" in case.tags and not events:
        raise NotApplicable("the events-and-relations cases are run by the library's event API")
    try:
        rows = mechanism_parts(case)
    except NoPeerForm as exc:
        raise Unsupported(str(exc)) from None
    if case.relation != "add-remove":
        raise Unsupported(f"the classic forms are accounted under add/remove, the case under {case.relation}")
    return [Part(k, to_float(p), None if q is None else to_float(q), c) for k, p, q, c in rows]


def given_composition(parts: list[Part]) -> Composition:
    """The exact composition of the floats handed over (docs/peers/README.md: judged as given)."""
    return Composition(tuple((p.exact(), p.count) for p in parts))


def dpsgd_parameters(case: Case) -> tuple[float, float, int]:
    """(sigma, q, steps) of a one-group subsampled-Gaussian case (q = 1.0 for plain Gaussian noise)."""
    require_mechanisms_or_calibration(case)
    ps = parts_of(case)
    if len(ps) != 1 or ps[0].kind != "gaussian":
        raise NotApplicable("this API models DP-SGD (one subsampled Gaussian, repeated)")
    p = ps[0]
    return p.param, (p.q if p.q is not None else 1.0), p.count


def require_mechanisms_or_calibration(case: Case) -> None:
    """Decline (NotApplicable) a generic case: the API models specific mechanisms (or calibrates one)."""
    if case.is_generic:
        raise NotApplicable("this API models specific mechanisms")


def calibrated_claim(sigma: float, q: float, steps: int, case: Case, note: str) -> Reported:
    """The claim of a calibration: (target, delta_g)-DP with the returned noise multiplier."""
    if not isinstance(sigma, (float, int)) or not math.isfinite(sigma) or sigma <= 0:
        raise ValueError(f"returned noise multiplier {sigma!r} is not a positive number")
    m: Any = Gaussian(exact_value(float(sigma)))  # float ok: the library's own float
    if q != 1.0:
        m = PoissonSampled(m, exact_value(q))
    assert case.target is not None
    return Reported(to_float(case.target), Composition(((m, steps),)), exact_value(to_float(case.at)),
                    f"returned noise multiplier {sigma!r}; the claim is (target eps, delta_g)-DP with it; {note}")


def curve_parts(case: Case) -> list[Part]:
    """The mechanisms of a case whose RDP curve is certified (docs/rdp.md §2): Gaussian, Laplace and
    the Poisson-subsampled Gaussian (NotApplicable otherwise, or on a calibration case)."""
    require_mechanisms(case)
    if case.is_calibration:
        raise NotApplicable("calibration cases are not curve cases")
    parts = parts_of(case)
    if any(p.kind == "laplace" and p.q is not None for p in parts):
        raise NotApplicable("the subsampled Laplace's RDP curve is not certified")
    return parts


def curve_direction(parts: list[Part]) -> str:
    """``"remove"`` when a mechanism is subsampled (the direction of its certified divergence), else ``"max"``."""
    return "remove" if any(p.q is not None and p.q != 1.0 for p in parts) else "max"
