"""Hypothesis strategies for exact DP inputs: eps, delta, compositions and queries.

Every value is exact (Fractions, or ``ExactReal`` ``log(p/q)`` eps), and every strategy is built
from integers and ``sampled_from`` lists with the simplest element first, so hypothesis shrinks
a failure toward k = 1 and short decimals such as 1, 0.1, 0.001.  Importing this module imports
hypothesis (``import exactdp.testing`` does not).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from hypothesis import strategies as st

from exactdp.core.numbers import ExactReal, format_fraction
from exactdp.model.composition import Composition

__all__ = [
    "compositions",
    "decimals",
    "delta_gs",
    "deltas",
    "dp_events",
    "dpsgd_compositions",
    "eps_values",
    "exact_eps",
    "heterogeneous_compositions",
    "homogeneous_compositions",
    "ks",
    "large_k_compositions",
    "large_ks",
    "log_eps_values",
    "many_distinct_compositions",
    "mechanism_compositions",
    "queries",
    "rdp_orders",
    "subsampled_gaussian_params",
    "tiny_delta_gs",
]


@st.composite
def decimals(draw: Any, min_value: Fraction = Fraction(0), max_value: Fraction = Fraction(10),
             max_places: int = 3) -> Fraction:
    """A short decimal ``n / 10**p`` in [min_value, max_value]; shrinks to few places, small n."""
    lo, hi = Fraction(min_value), Fraction(max_value)
    p = draw(st.integers(0, max_places))
    scale = 10**p
    n_lo = -((-lo.numerator * scale) // lo.denominator)  # ceil(lo * 10^p)
    n_hi = (hi.numerator * scale) // hi.denominator  # floor(hi * 10^p)
    if n_lo > n_hi:
        p = max_places
        scale = 10**p
        n_lo = -((-lo.numerator * scale) // lo.denominator)
        n_hi = (hi.numerator * scale) // hi.denominator
    return Fraction(draw(st.integers(n_lo, n_hi)), scale)


def eps_values(min_value: Any = Fraction(1, 1000), max_value: Any = Fraction(10), max_places: int = 3) -> Any:
    """A rational eps (a short decimal) in [min_value, max_value]."""
    return decimals(Fraction(min_value), Fraction(max_value), max_places)


@st.composite
def log_eps_values(draw: Any, max_denominator: int = 20, max_ratio: Fraction = Fraction(20)) -> ExactReal:
    """An eps ``log(p/q)`` with 1 < p/q <= max_ratio: e^eps is rational, so answers can be exact."""
    q = draw(st.integers(1, max_denominator))
    p = draw(st.integers(q + 1, max(q + 1, int(q * max_ratio))))
    return ExactReal.log(Fraction(p, q))


def exact_eps(allow_log: bool = True, **kw: Any) -> Any:
    """An eps as an :class:`ExactReal`: a short decimal, or (if allowed) ``log(p/q)``."""
    rat = eps_values(**kw).map(ExactReal.rational)
    return st.one_of(rat, log_eps_values()) if allow_log else rat


@st.composite
def deltas(draw: Any, allow_zero: bool = True, min_exponent: int = 9, max_value: Fraction = Fraction(1, 10)) -> Fraction:
    """A delta: 0 (first), or m * 10**-j with 1 <= m <= 9, 1 <= j <= min_exponent, <= max_value."""
    if allow_zero and draw(st.booleans()) is False:
        return Fraction(0)
    j = draw(st.integers(1, min_exponent))
    m = draw(st.integers(1, 9))
    return min(Fraction(m, 10**j), Fraction(max_value))


def delta_gs(min_exponent: int = 12) -> Any:
    """A total delta_g in (0, 1): m * 10**-j, shrinking toward 0.1."""
    return deltas(allow_zero=False, min_exponent=min_exponent, max_value=Fraction(9, 10))


def ks(max_value: int = 100) -> Any:
    """A number of mechanisms, shrinking toward 1."""
    return st.integers(1, max_value)


@st.composite
def homogeneous_compositions(draw: Any, max_k: int = 100, allow_log: bool = True,
                             pure: bool | None = None) -> Composition:
    """k equal (eps, delta)-DP mechanisms."""
    eps = draw(exact_eps(allow_log=allow_log))
    delta = Fraction(0) if pure else draw(deltas(allow_zero=pure is None))
    return Composition.homogeneous(eps, delta, draw(ks(max_k)))


@st.composite
def heterogeneous_compositions(draw: Any, max_size: int = 6, max_count: int = 3, allow_log: bool = False,
                               pure: bool | None = None) -> Composition:
    """A list of 1..max_size distinct-or-not mechanisms, each repeated 1..max_count times.

    ``allow_log`` defaults to False: a mix of log(p/q) and decimal eps has no common grid, so the
    exact heterogeneous optimum of such a list costs more to compute.
    """
    n = draw(st.integers(1, max_size))
    mechs = []
    for _ in range(n):
        eps = draw(exact_eps(allow_log=allow_log, max_places=2))
        delta = Fraction(0) if pure else draw(deltas(allow_zero=pure is None, min_exponent=6))
        mechs.append((eps, delta, draw(st.integers(1, max_count))))
    return Composition.heterogeneous(mechs)


def compositions(**kw: Any) -> Any:
    """A homogeneous or heterogeneous composition (homogeneous first when shrinking)."""
    return st.one_of(homogeneous_compositions(), heterogeneous_compositions(**kw))


@st.composite
def queries(draw: Any, kinds: tuple[str, ...] = ("epsilon", "delta", "check"),
            composition: Any = None) -> dict[str, Any]:
    """A query object in the batch format of ``exactdp batch`` / :func:`exactdp.cli.run_query`.

    e.g. ``{"query": "epsilon", "eps": "0.1", "delta": "0.001", "k": 30, "at_delta": "0.05"}``.
    """
    comp = draw(composition if composition is not None else compositions())
    kind = draw(st.sampled_from(kinds))
    obj: dict[str, Any] = {"query": kind, **comp.to_inputs()}
    if kind == "epsilon":
        obj["at_delta"] = format_fraction(draw(delta_gs()))
    elif kind == "delta":
        obj["at_eps"] = str(draw(exact_eps(allow_log=False, max_value=Fraction(20))))
    else:
        obj["eps_g"] = str(draw(exact_eps(allow_log=False, max_value=Fraction(20))))
        obj["delta_g"] = format_fraction(draw(delta_gs()))
    return obj


# -- realistic compositions (docs/kit.md §6) ------------------------------------------------------

def large_ks() -> Any:
    """k from the regimes where accountants break: beyond 1025, up to 10^6 (shrinks toward 1026)."""
    return st.sampled_from([1026, 2000, 10**4, 10**5, 10**6])


def tiny_delta_gs() -> Any:
    """A total delta_g from 1e-3 down to 1e-30: 10**-j (shrinks toward 1e-3)."""
    return st.integers(3, 30).map(lambda j: Fraction(1, 10**j))


@st.composite
def large_k_compositions(draw: Any, pure: bool | None = None) -> Composition:
    """k equal generic mechanisms with k beyond 1025 (KOV15 answers in constant time)."""
    eps = draw(eps_values(Fraction(1, 1000), Fraction(1), max_places=3))
    delta = Fraction(0) if pure else draw(deltas(allow_zero=pure is None, min_exponent=12,
                                                 max_value=Fraction(1, 10**9)))
    return Composition.homogeneous(eps, delta, draw(large_ks()))


@st.composite
def many_distinct_compositions(draw: Any, min_size: int = 5, max_size: int = 12) -> Composition:
    """Many distinct pure mechanisms on a 1/100 grid (exact counting answers them)."""
    n = draw(st.integers(min_size, max_size))
    eps = draw(st.lists(st.integers(1, 100), min_size=n, max_size=n, unique=True))
    return Composition.heterogeneous([(Fraction(e, 100), 0, draw(st.integers(1, 5))) for e in eps])


_SIGMAS = [Fraction(1), Fraction(1, 2), Fraction(4, 5), Fraction(2), Fraction(5)]
_QS = [Fraction(1, 100), Fraction(1, 10**4), Fraction(1, 1000), Fraction(1, 8), Fraction(1, 2)]
_STEPS = [1000, 10, 100, 10**4, 10**5]


@st.composite
def dpsgd_compositions(draw: Any) -> Composition:
    """DP-SGD: a Poisson-subsampled Gaussian (sigma 0.5..5, q 1e-4..0.5) run 10..10^5 steps."""
    from exactdp.model.mechanisms import Gaussian, PoissonSampled

    m = PoissonSampled(Gaussian(draw(st.sampled_from(_SIGMAS))), draw(st.sampled_from(_QS)))
    return Composition(((m, draw(st.sampled_from(_STEPS))),))


@st.composite
def mechanism_compositions(draw: Any, max_groups: int = 2) -> Composition:
    """Gaussian, Laplace and subsampled mechanisms, each repeated, 1..max_groups groups."""
    from exactdp.model.mechanisms import Gaussian, Laplace, PoissonSampled

    groups = []
    for _ in range(draw(st.integers(1, max_groups))):
        kind = draw(st.sampled_from(["gaussian", "laplace", "subsampled"]))
        if kind == "gaussian":
            m: Any = Gaussian(draw(st.sampled_from(_SIGMAS)))
        elif kind == "laplace":
            m = Laplace(draw(st.sampled_from([Fraction(10), Fraction(1), Fraction(100)])))
        else:
            m = PoissonSampled(Gaussian(draw(st.sampled_from(_SIGMAS))), draw(st.sampled_from(_QS)))
        groups.append((m, draw(st.sampled_from([1, 10, 100, 1000]))))
    return Composition(tuple(groups))


# -- RDP accountants (docs/kit.md §7) ---------------------------------------------------------------

#: the integer orders of the usual RDP accountants' grids (dp_accounting, Opacus, TF Privacy: 2..63 and
#: a few powers of 2 beyond), simplest first
RDP_INTEGER_ORDERS = (2, 3, 4, 5, 8, 10, 16, 20, 32, 50, 63, 64, 128, 256)
#: fractional orders of those grids (1 + x/10 and the quarter steps below 5), simplest first
RDP_FRACTIONAL_ORDERS = tuple(Fraction(n, 10) for n in (15, 11, 12, 25, 35, 45, 19, 105)) + \
    (Fraction(5, 4), Fraction(7, 4), Fraction(9, 4))


def rdp_orders(integer: bool | None = None, max_order: int = 256) -> Any:
    """A Rényi order > 1 as an exact Fraction, drawn from the usual accountants' grids or between them.

    ``integer=True``: integer orders only (what the subsampled Gaussian's certified divergence
    needs, docs/rdp.md §2); ``False``: fractional only; None (default): either.  Shrinks toward 2.
    """
    ints = st.one_of(st.sampled_from([o for o in RDP_INTEGER_ORDERS if o <= max_order]),
                     st.integers(2, max_order)).map(Fraction)
    fracs = st.one_of(st.sampled_from([o for o in RDP_FRACTIONAL_ORDERS if o <= max_order]),
                      st.tuples(st.integers(1, max_order - 1), st.integers(1, 99))
                      .map(lambda t: t[0] + Fraction(t[1], 100)).filter(lambda a: a > 1 and a.denominator != 1))
    if integer is True:
        return ints
    if integer is False:
        return fracs
    return st.one_of(ints, fracs)


@st.composite
def subsampled_gaussian_params(draw: Any, max_count: int = 1000) -> tuple[Fraction, Fraction, int]:
    """``(sigma, q, count)`` of a Poisson-subsampled Gaussian run ``count`` times (DP-SGD), exact.

    sigma from 0.5 to 8 and q from 1e-4 to 0.5 (short decimals, the usual grids first), count from
    1 to ``max_count``.  ``PoissonSampled(Gaussian(sigma), q)`` with the count is the composition an
    RDP accountant is given; its certified curve is :func:`exactdp.api.rdp.rdp_curve` at integer
    orders, direction ``"remove"``.
    """
    sigma = draw(st.one_of(st.sampled_from(_SIGMAS), decimals(Fraction(1, 2), Fraction(8), 2)))
    q = draw(st.one_of(st.sampled_from(_QS), decimals(Fraction(1, 10**4), Fraction(1, 2), 4)))
    return sigma, q, draw(st.integers(1, max_count))


# -- dp_accounting DpEvents (docs/kit.md §6) ----------------------------------------------------------------

#: floats that are short binary fractions first (exact round trips), then common decimals
_EVENT_NOISE = (1.0, 2.0, 0.5, 1.5, 4.0, 1.1, 0.8, 3.0)
_EVENT_Q = (0.5, 0.25, 0.01, 0.1, 0.001)
#: mixture probabilities whose binary values sum to exactly 1
_MOG = (((0.0, 1.0), (0.5, 0.5)), ((0.0, 1.0, 2.0), (0.5, 0.25, 0.25)), ((1.0, 2.0), (0.75, 0.25)))


def dp_events(max_depth: int = 2, max_count: int = 5, mixtures: bool = True) -> Any:
    """dp_accounting ``DpEvent`` objects of the kinds :func:`exactdp.from_dp_event` reads, small sizes.

    Leaves: Gaussian, Laplace, discrete Laplace, randomized response, a mixture of Gaussians
    (``mixtures=False`` leaves them out: dp_accounting's own PLD of one is slow), and
    ``EpsilonDeltaDpEvent`` where the installed dp_accounting has it; around them
    ``PoissonSampledDpEvent`` (around one leaf), ``SelfComposedDpEvent`` (count 1..``max_count``) and
    ``ComposedDpEvent`` (1..3 events), nested up to ``max_depth``.  Shrinks toward one Gaussian of
    noise 1.  Needs dp_accounting: without it, :class:`~exactdp.core.errors.MissingExtraError` names it.
    """
    from exactdp.core.files import require_extra

    dp = require_extra("dp_accounting", "the dp_events() strategy")
    de = dp.dp_event
    noise = st.sampled_from(_EVENT_NOISE)
    leaves = [
        noise.map(dp.GaussianDpEvent),
        noise.map(dp.LaplaceDpEvent),
        st.builds(de.DiscreteLaplaceDpEvent, noise, st.integers(1, 3)),
        st.builds(de.RandomizedResponseDpEvent, st.sampled_from((0.5, 0.25, 0.75, 0.1)), st.integers(2, 4)),
    ]
    if mixtures:
        leaves.append(st.builds(lambda s, m: de.MixtureOfGaussiansDpEvent(s, list(m[0]), list(m[1])),
                                noise, st.sampled_from(_MOG)))
    eps_delta = getattr(de, "EpsilonDeltaDpEvent", None)
    if eps_delta is not None:
        leaves.append(st.builds(eps_delta, st.sampled_from((1.0, 0.5, 0.1)), st.sampled_from((0.0, 1e-6, 0.001))))
    leaf = st.one_of(*leaves)
    sampled = st.builds(dp.PoissonSampledDpEvent, st.sampled_from(_EVENT_Q), leaf)
    base = st.one_of(leaf, sampled)

    def extend(inner: Any) -> Any:
        return st.one_of(
            st.builds(dp.SelfComposedDpEvent, inner, st.integers(1, max_count)),
            st.lists(inner, min_size=1, max_size=3).map(dp.ComposedDpEvent),
        )

    return st.recursive(base, extend, max_leaves=2 ** max_depth + 1)
