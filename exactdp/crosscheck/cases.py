"""The sweep of cases the cross-check runs through every peer library (docs/peers/README.md).

A case is exact: either a list of generic (eps, delta, count) groups, or a composition of
*mechanisms* (Gaussian, Laplace, Poisson-subsampled Gaussian or Laplace, each with a count), and a
query: ``epsilon`` at total delta_g, or ``delta`` at eps_g.  A *calibration* case also carries a
``target`` eps: the library returns a noise scale for (target, delta_g), and the claim "the
composition with that noise is (target, delta_g)-DP" is judged.

The sweep reaches the regimes where accountants fail: k beyond 1025 (advanced composition
overflows), delta_g from 1e-3 down to 1e-30, large k*eps, delta_g = 0 (pure DP, asked with the
int 0 where an API takes numbers), DP-SGD grids (sigma 0.5..5, q 1e-4..0.5, steps 10..10^5),
and the accountant options that change soundness (run by the adapters on every case).  ``quick``
marks the subset CI runs; ``curve`` names the families drawn in the HTML report.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Literal

from exactdp.core.numbers import format_fraction
from exactdp.model.attained import is_tight  # re-exported: the cross-check's name for it
from exactdp.model.composition import Composition
from exactdp.model.mechanisms import (
    DiscreteGaussian,
    DiscreteLaplace,
    Gaussian,
    Laplace,
    MixtureOfGaussians,
    PoissonSampled,
    SampledWithoutReplacement,
)
from exactdp.model.replacement import SampledWithReplacement
from exactdp.model.special import SpecialRandomizedResponse
from exactdp.model.truncation import TruncatedSubsampledGaussian

__all__ = ["DELTA_SWEEP", "SWEEP", "Case", "NoPeerForm", "is_tight", "mechanism_parts", "sweep"]

F = Fraction


@dataclass(frozen=True)
class Case:
    """One exact composition and query.

    ``groups`` of generic (eps, delta, count), or ``mechanisms`` of (mechanism value, count);
    ``query`` at ``at``; ``target`` for a calibration case (the eps the noise is calibrated for).
    """

    name: str
    groups: tuple[tuple[Fraction, Fraction, int], ...]
    query: Literal["epsilon", "delta"]
    at: Fraction
    tags: tuple[str, ...] = field(default=())
    quick: bool = False
    mechanisms: tuple[tuple[Any, int], ...] = field(default=())
    target: Fraction | None = None
    curve: str = ""
    relation: str = "add-remove"

    @property
    def is_generic(self) -> bool:
        return not self.mechanisms

    @property
    def is_calibration(self) -> bool:
        return self.target is not None

    @property
    def k(self) -> int:
        if self.mechanisms:
            return sum(c for _, c in self.mechanisms)
        return sum(c for _, _, c in self.groups)

    @property
    def is_homogeneous(self) -> bool:
        return self.is_generic and len(self.groups) == 1

    @property
    def is_pure(self) -> bool:
        return self.is_generic and all(d == 0 for _, d, _ in self.groups)

    def composition(self) -> Composition:
        if self.mechanisms:
            return Composition(tuple(self.mechanisms))
        return Composition.heterogeneous([(e, d, c) for e, d, c in self.groups])

    def describe(self) -> str:
        at = ("delta_g=" if self.query == "epsilon" else "eps_g=") + format_fraction(self.at)
        tail = f", calibrated for eps={format_fraction(self.target)}" if self.target is not None else ""
        tail += f", relation {self.relation}" if self.relation != "add-remove" else ""
        return f"{self.name}: {self.composition()}, {self.query} at {at}{tail}"


class NoPeerForm(ValueError):
    """A mechanism of a case that the classic peer forms (Gaussian, Laplace, each maybe Poisson-subsampled
    under add/remove) do not express: an adapter reports it ``unsupported``, never a crash."""


def mechanism_parts(case: Case) -> list[tuple[str, Fraction, Fraction | None, int]]:
    """The mechanism case as ``(kind, parameter, q or None, count)`` rows.

    ``kind`` is ``"gaussian"`` (parameter sigma, sensitivity 1) or ``"laplace"`` (parameter the
    scale b, sensitivity 1); any other mechanism (the discrete ones, mixtures, replace-one sampling,
    fixed-size batches) raises :class:`NoPeerForm`.
    """
    out = []
    for m, c in case.mechanisms:
        q = None
        if isinstance(m, PoissonSampled):
            if m.relation != "add-remove" or m.direction != "max":
                raise NoPeerForm(f"no classic peer form for {m} (Poisson subsampling under {m.relation}, "
                                 f"direction {m.direction})")
            q, m = m.q, m.mechanism
        if isinstance(m, Gaussian) and m.sigma is not None and m.sensitivity == 1:
            out.append(("gaussian", m.sigma, q, c))
        elif isinstance(m, Laplace) and m.sensitivity == 1:
            out.append(("laplace", m.scale, q, c))
        else:
            raise NoPeerForm(f"no classic peer form for {m} (a {type(m).__name__})")
    return out


def _h(eps: str, delta: str, k: int, query: Literal["epsilon", "delta"], at: str, tags: tuple[str, ...] = (),
       quick: bool = False, curve: str = "") -> Case:
    e, d = F(eps), F(delta)
    name = f"{k}x({eps},{delta})@{'dg' if query == 'epsilon' else 'eg'}={at}"
    return Case(name, ((e, d, k),), query, F(at), ("homogeneous",) + tags, quick, curve=curve)


def _l(name: str, groups: list[tuple[str, str, int]], query: Literal["epsilon", "delta"], at: str,
       tags: tuple[str, ...] = (), quick: bool = False) -> Case:
    return Case(name, tuple((F(e), F(d), c) for e, d, c in groups), query, F(at), ("heterogeneous",) + tags, quick)


def _g(sigma: str, k: int, query: Literal["epsilon", "delta"], at: str, tags: tuple[str, ...] = (),
       quick: bool = False, curve: str = "") -> Case:
    name = f"{k}xGaussian(sigma={sigma})@{'dg' if query == 'epsilon' else 'eg'}={at}"
    return Case(name, (), query, F(at), ("gaussian",) + tags, quick, ((Gaussian(F(sigma)), k),), curve=curve)


def _lap(b: str, k: int, query: Literal["epsilon", "delta"], at: str, tags: tuple[str, ...] = (),
         quick: bool = False, curve: str = "", q: str | None = None) -> Case:
    m: Any = Laplace(F(b)) if q is None else PoissonSampled(Laplace(F(b)), F(q))
    qs = f",q={q}" if q else ""
    name = f"{k}xLaplace(b={b}{qs})@{'dg' if query == 'epsilon' else 'eg'}={at}"
    return Case(name, (), query, F(at), ("laplace",) + (("subsampled",) if q else ()) + tags, quick, ((m, k),),
                curve=curve)


def _sgd(sigma: str, q: str, steps: int, query: Literal["epsilon", "delta"], at: str, tags: tuple[str, ...] = (),
         quick: bool = False, curve: str = "", target: str | None = None) -> Case:
    kind = "calib" if target else "dpsgd"
    name = f"{kind}(sigma={sigma},q={q},steps={steps})@{'dg' if query == 'epsilon' else 'eg'}={at}"
    if target:
        name += f",target={target}"
    return Case(name, (), query, F(at), ("dpsgd",) + (("calibration",) if target else ()) + tags, quick,
                ((PoissonSampled(Gaussian(F(sigma)), F(q)), steps),), F(target) if target else None, curve)


#: the delta_g of the sweep of every new-vocabulary case, from 1e-30 up to 0.5 (at large delta_g
#: accountants return zero or negative eps: judged like any other answer, docs/peers/README.md)
DELTA_SWEEP = ("1e-30", "1e-10", "1e-5", "1e-3", "0.1", "0.5")


def _ev(label: str, m: Any, k: int, relation: str = "add-remove", quick: tuple[str, ...] = ("1e-5", "0.5"),
        curve: str = "") -> tuple[Case, ...]:
    """A new-vocabulary event case (docs/peers/README.md, "Events and relations") at every delta_g of
    :data:`DELTA_SWEEP`, those in ``quick`` in the CI subset; the relation is named in the case."""
    rel = "" if relation == "add-remove" else f",{relation}"
    return tuple(Case(f"{k}x{label}{rel}@dg={d}", (), "epsilon", F(d), ("events", relation), d in quick, ((m, k),),
                      curve=curve or f"{label}{rel}", relation=relation) for d in DELTA_SWEEP)


def _cal_gauss(target: str, delta: str, quick: bool = False) -> Case:
    """A calibration of one Gaussian (sensitivity 1) for (target, delta): the noise the library returns is judged."""
    return Case(f"calib(gaussian,k=1)@dg={delta},target={target}", (), "epsilon", F(delta), ("gaussian", "calibration"),
                quick, ((Gaussian(F(1)), 1),), F(target))


EVENTS: tuple[tuple[Case, ...], ...] = (
    _ev("dlaplace(noise=0.1)", DiscreteLaplace(F(1, 10)), 100),
    _ev("dgaussian(sigma=2)", DiscreteGaussian(F(2)), 100),
    _ev("mog(sigma=2,sens=0/1/2,probs=0.5/0.25/0.25)", MixtureOfGaussians(F(2), [F(0), F(1), F(2)],
                                                                          [F(1, 2), F(1, 4), F(1, 4)]), 100,
        quick=("1e-5",)),  # dp_accounting takes about 17 s per mixture PLD: one in the quick run
    _ev("gaussian(sigma=2,sensitivity=2)", Gaussian(F(2), 2), 100, "replace-one"),
    _ev("gaussian(sigma=1,q=0.01)", PoissonSampled(Gaussian(F(1)), F(1, 100), relation="replace-one"), 1000,
        "replace-one", ("1e-5",)),
    _ev("gaussian(sigma=1,sample=60,of=6000)", SampledWithoutReplacement(Gaussian(F(1)), 60, 6000), 1000,
        "replace-one"),
    _ev("gaussian(sigma=1,sample=60,of=6000)", SampledWithoutReplacement(Gaussian(F(1)), 60, 6000), 1,
        "replace-one", ("1e-5",)),
    # sigma 2: where dp_accounting's fixed-batch bound (WBK19 Thm 27) is below Thm 9 (docs/rdp.md §6)
    _ev("gaussian(sigma=2,sample=60,of=6000)", SampledWithoutReplacement(Gaussian(F(2)), 60, 6000), 100,
        "replace-one", ("1e-5",)),
    # issue 27 (the last mechanisms and relations): docs/mathematics.md §9, Theorems 9.4-9.6
    _ev("gaussian(sigma=1,q=0.01,truncate=115,of=10000)", TruncatedSubsampledGaussian(F(1), F(1, 100), 115, 10000),
        100, quick=("1e-5",)),
    _ev("rr(p=0.5,k=4)", SpecialRandomizedResponse("log(5)", 4), 3, "replace-special", ("1e-5",)),
    _ev("gaussian(sigma=1,sensitivity=2,sample=256,of=60000,with-replacement)",
        SampledWithReplacement(Gaussian(F(1), 2), 256, 60000), 10, "replace-one", ("1e-5",)),
)

SWEEP: tuple[Case, ...] = (
    # -- generic (eps, delta)-DP mechanisms ------------------------------------------------------
    # docs/mathematics.md §6 anchors
    _h("0.1", "0.001", 30, "epsilon", "0.05", quick=True),
    _h("0.1", "0", 30, "epsilon", "0.001", quick=True, curve="generic 30x(0.1,0)"),
    _h("1", "0.001", 30, "epsilon", "0.06", ("grid",), quick=True),
    _h("1", "0.001", 30, "epsilon", "0.1", ("grid",)),
    _h("0.4", "0.1", 10, "epsilon", "0.7"),
    _h("0.1", "0.001", 30, "delta", "1", quick=True),
    _h("1", "0", 30, "delta", "3"),
    # pure DP at delta_g = 0 (the optimum is the sum of the eps); APIs that take numbers get the int 0
    _h("0.1", "0", 30, "epsilon", "0", ("pure-at-zero", "ints"), quick=True, curve="generic 30x(0.1,0)"),
    _h("1", "0", 10, "epsilon", "0", ("pure-at-zero", "ints")),
    # the 30 x 0.1 curve down to 1e-30
    _h("0.1", "0", 30, "epsilon", "1e-6", ("tiny-delta",), curve="generic 30x(0.1,0)"),
    _h("0.1", "0", 30, "epsilon", "1e-10", ("tiny-delta",), curve="generic 30x(0.1,0)"),
    _h("0.1", "0", 30, "epsilon", "1e-15", ("tiny-delta",), curve="generic 30x(0.1,0)"),
    _h("0.1", "0", 30, "epsilon", "1e-30", ("tiny-delta",), curve="generic 30x(0.1,0)"),
    # large k * eps, and k beyond 1025 (advanced composition overflows there)
    _h("1", "0", 100, "epsilon", "1e-10", ("large-k-eps", "tiny-delta"), quick=True),
    _h("2", "0", 300, "epsilon", "1e-6", ("large-k-eps",)),
    _h("3", "0", 30, "epsilon", "1e-3", ("large-eps",)),
    _h("0.5", "0", 1000, "epsilon", "1e-6", ("large-k",)),
    _h("0.1", "0", 2000, "epsilon", "1e-6", ("large-k", "k>1025"), quick=True),
    _h("1", "0", 2000, "epsilon", "1e-10", ("large-k", "k>1025", "large-k-eps")),
    _h("0.01", "0", 100000, "epsilon", "1e-12", ("large-k", "k>1025", "tiny-delta")),
    _h("0.05", "0.000000001", 5000, "epsilon", "0.00001", ("large-k", "k>1025")),
    _h("1", "0", 100, "delta", "60", ("large-k-eps",)),
    # tiny delta
    _h("0.5", "0", 10, "epsilon", "1e-12", ("tiny-delta",), quick=True),
    _h("0.1", "0", 100, "epsilon", "1e-9", ("tiny-delta",)),
    _h("0.01", "0", 1000, "epsilon", "1e-6", ("small-eps", "large-k")),
    _h("0.01", "0", 1000, "epsilon", "1e-9", ("small-eps", "large-k", "tiny-delta"), quick=True),
    _h("0.5", "0", 100, "epsilon", "1e-15", ("tiny-delta",), quick=True),
    _h("0.1", "0", 100, "epsilon", "1e-15", ("tiny-delta",)),
    _h("0.2", "0", 300, "epsilon", "1e-15", ("tiny-delta",)),
    _h("0.5", "0", 100, "epsilon", "1e-20", ("tiny-delta",)),
    # approximate DP, near the feasibility threshold
    _h("0.1", "1e-6", 100, "epsilon", "1e-3"),
    _h("0.5", "1e-4", 50, "epsilon", "0.006", ("near-threshold",)),
    _h("0.1", "0.001", 30, "epsilon", "0.02", ("infeasible",), quick=True),
    # heterogeneous and repeated events
    _l("mv-5", [("0.1", "0", 1), ("0.2", "0", 1), ("0.3", "0", 1), ("0.5", "0", 1), ("0.7", "0", 1)],
       "epsilon", "0.01", quick=True),
    _l("dpacc-1-2", [("1", "0.1", 1), ("2", "0.2", 1)], "delta", "3", quick=True),
    _l("dpacc-1-2-eps", [("1", "0.1", 1), ("2", "0.2", 1)], "epsilon", "0.3"),
    _l("mixed-small-large", [("0.1", "0", 20), ("2", "0", 3)], "epsilon", "1e-6", ("repeated",)),
    _l("mixed-approx", [("0.5", "1e-6", 20), ("0.1", "0", 50)], "epsilon", "1e-4", ("repeated",)),
    _l("mixed-delta", [("0.2", "0", 10), ("1", "0", 5)], "delta", "2", ("repeated",)),
    # -- Gaussian mechanisms (closed form: 20+ certified digits) ----------------------------------
    _g("2", 100, "epsilon", "1e-3", curve="gaussian 100xsigma=2"),
    _g("2", 100, "epsilon", "1e-5", quick=True, curve="gaussian 100xsigma=2"),
    _g("2", 100, "epsilon", "1e-10", ("tiny-delta",), curve="gaussian 100xsigma=2"),
    _g("2", 100, "epsilon", "1e-15", ("tiny-delta",), curve="gaussian 100xsigma=2"),
    _g("2", 100, "epsilon", "1e-20", ("tiny-delta",), curve="gaussian 100xsigma=2"),
    _g("2", 100, "epsilon", "1e-30", ("tiny-delta",), curve="gaussian 100xsigma=2"),
    _g("2", 100, "delta", "30", quick=True),
    _g("1", 1, "epsilon", "1e-5"),
    _g("5", 10000, "epsilon", "1e-6", ("large-k", "k>1025")),
    _g("0.5", 1000, "epsilon", "1e-10", ("large-k-eps",)),
    # -- Laplace mechanisms (certified PLD bracket) ---------------------------------------------------
    _lap("10", 100, "epsilon", "1e-3", curve="laplace 100xb=10"),
    _lap("10", 100, "epsilon", "1e-6", quick=True, curve="laplace 100xb=10"),
    _lap("10", 100, "epsilon", "1e-10", ("tiny-delta",), curve="laplace 100xb=10"),
    _lap("10", 100, "epsilon", "1e-15", ("tiny-delta",), curve="laplace 100xb=10"),
    _lap("10", 100, "delta", "1"),
    _lap("1", 10, "epsilon", "1e-15", ("tiny-delta",)),
    _lap("100", 2000, "epsilon", "1e-10", ("large-k", "k>1025")),
    _lap("1", 100, "epsilon", "1e-6", ("subsampled",), q="0.1"),
    # -- DP-SGD: Poisson-subsampled Gaussian, add/remove (certified PLD bracket) ----------------------
    _sgd("1", "0.01", 1000, "epsilon", "1e-3", curve="dpsgd sigma=1,q=0.01,1000 steps"),
    _sgd("1", "0.01", 1000, "epsilon", "1e-5", quick=True, curve="dpsgd sigma=1,q=0.01,1000 steps"),
    _sgd("1", "0.01", 1000, "epsilon", "1e-10", ("tiny-delta",), curve="dpsgd sigma=1,q=0.01,1000 steps"),
    _sgd("1", "0.01", 1000, "epsilon", "1e-18", ("tiny-delta",), quick=True,
         curve="dpsgd sigma=1,q=0.01,1000 steps"),
    _sgd("1", "0.01", 1000, "epsilon", "1e-30", ("tiny-delta",), curve="dpsgd sigma=1,q=0.01,1000 steps"),
    _sgd("1", "0.01", 1000, "delta", "2"),
    _sgd("0.8", "0.125", 1000, "epsilon", "1e-6", ("large-k-eps",), quick=True),
    _sgd("0.5", "0.5", 10, "epsilon", "1e-5", ("large-q",)),
    _sgd("0.5", "0.01", 1000, "epsilon", "1e-5"),
    _sgd("1", "0.5", 100, "epsilon", "1e-5", ("large-q",)),
    _sgd("2", "0.001", 100000, "epsilon", "1e-5", ("large-k", "k>1025")),
    _sgd("5", "0.0001", 100000, "epsilon", "1e-10", ("large-k", "k>1025", "small-q")),
    _sgd("2", "0.125", 10000, "epsilon", "1e-6", ("large-k", "k>1025")),
    _sgd("5", "0.5", 1000, "epsilon", "1e-8"),
    _sgd("1", "0.001", 10000, "epsilon", "1e-5", ("large-k", "k>1025")),
    # -- calibration: the noise for a target (eps, delta) ---------------------------------------------
    _sgd("1", "0.01", 1000, "epsilon", "1e-5", quick=True, target="1"),
    _sgd("1", "0.01", 1000, "epsilon", "1e-5", target="3"),
    _sgd("1", "0.01", 1000, "epsilon", "1e-5", target="8"),
    _sgd("1", "0.001", 10000, "epsilon", "1e-6", target="2"),
    # -- issue 27 §6: large delta_g (where accountants return zero or negative eps) on the classic families,
    # the calibration of one Gaussian, and the new events and relations (EVENTS, delta_g 1e-30 .. 0.5)
    _h("0.1", "0", 30, "epsilon", "0.1", ("large-delta",), curve="generic 30x(0.1,0)"),
    _h("0.1", "0", 30, "epsilon", "0.5", ("large-delta",), quick=True, curve="generic 30x(0.1,0)"),
    _g("2", 100, "epsilon", "0.1", ("large-delta",), curve="gaussian 100xsigma=2"),
    _g("2", 100, "epsilon", "0.5", ("large-delta",), quick=True, curve="gaussian 100xsigma=2"),
    _lap("10", 100, "epsilon", "0.1", ("large-delta",), curve="laplace 100xb=10"),
    _lap("10", 100, "epsilon", "0.5", ("large-delta",), curve="laplace 100xb=10"),
    _sgd("1", "0.01", 1000, "epsilon", "0.1", ("large-delta",), curve="dpsgd sigma=1,q=0.01,1000 steps"),
    _sgd("1", "0.01", 1000, "epsilon", "0.5", ("large-delta",), quick=True, curve="dpsgd sigma=1,q=0.01,1000 steps"),
    _cal_gauss("1", "1e-5", quick=True),
    _cal_gauss("3", "1e-5"),
    _cal_gauss("8", "1e-5"),
) + tuple(c for group in EVENTS for c in group)


def sweep(*, quick: bool = False) -> list[Case]:
    """The cases to run (the ``quick`` subset for CI)."""
    return [c for c in SWEEP if c.quick or not quick]
