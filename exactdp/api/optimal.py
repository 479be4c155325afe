"""Optimal composition: the exact privacy profile of a composition, certified.

Which engine answers is the dispatch table of :mod:`exactdp.route` (KOV15 Thm 3.3 for k equal
generic mechanisms, Murtagh-Vadhan Thm 1.5 for any list, the Gaussian closed form, the certified
PLD engine for everything else); these functions parse the inputs, route, and ask the engine.

``max_seconds=`` bounds the time as the command line's ``--max-seconds`` does (read by
:func:`exactdp.core.progress.parse_seconds`): an exact engine raises
:class:`~exactdp.core.errors.TimeBudgetError` past it, the PLD engine returns the bracket it
certified by then (``certified_digits()`` says how many digits it holds).
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

from flint import ctx

from exactdp.core import progress
from exactdp.core.enclosure import Enclosure
from exactdp.core.errors import InvalidParameterError, PrecisionError
from exactdp.core.numbers import (
    DEFAULT_DIGITS,
    CountInput,
    ExactInput,
    ExactReal,
    arb_of_fraction,
    fraction_of_arb_endpoints,
    parse_delta,
    parse_digits,
    parse_eps,
)
from exactdp.model.attained import attained, between, is_tight
from exactdp.model.composition import Composition, CompositionInput, directed
from exactdp.model.mechanisms import (
    MixtureOfGaussians,
    PoissonSampled,
    SpecificMechanism,
    parse_direction,
    with_direction,
)
from exactdp.route import Route, answer

__all__ = ["is_private", "optimal_delta", "optimal_epsilon", "routed_delta", "routed_epsilon", "signed_eps"]


def optimal_delta(comp: CompositionInput, eps_g: ExactInput, *, digits: CountInput = DEFAULT_DIGITS,
                  max_seconds: ExactInput | float | None = None, direction: str = "max") -> Enclosure:
    """The optimal total delta at eps_g (KOV15 Thm 3.3 / MV Thm 1.5), certified or exact.

    ``comp`` is anything :meth:`Composition.of` accepts; ``direction``: ``max`` (both orders of a
    neighbouring pair, the larger), ``remove`` or ``add`` (that order only; symmetric mechanisms
    answer the same in all three; :func:`exactdp.model.composition.directed`).

    >>> print(optimal_delta([("1", "0.1"), ("2", "0.2")], 3))
    0.28
    """
    return routed_delta(comp, eps_g, digits=digits, max_seconds=max_seconds, direction=direction)[0]


def routed_delta(comp: CompositionInput, eps_g: ExactInput, *, digits: CountInput = DEFAULT_DIGITS,
                 max_seconds: ExactInput | float | None = None, direction: str = "max") -> tuple[Enclosure, Route]:
    """:func:`optimal_delta` and the row of the dispatch table that answered (its name and reason).

    ``eps_g`` may be negative (the hockey-stick divergence below 0, at least 1 - e^eps_g): it is
    answered from the reversed order at -eps_g, ``H_a(P || Q) = 1 - a + a H_{1/a}(Q || P)``
    (docs/mathematics.md §9; proofs/ ``replace_one_sampling``), by whichever engine answers that.

    >>> enc, r = routed_delta([("1", "0.1"), ("2", "0.2")], 3)
    >>> str(enc), r.row
    ('0.28', 'exact-profile')
    >>> print(routed_delta([("log(3)", "0")], "-log(3)")[0])   # 1 - 1/3 + (1/3) delta(log 3) = 2/3
    2/3
    """
    x_signed = signed_eps(eps_g, "eps_g")
    if x_signed.sign() < 0:
        return _below_zero(comp, x_signed, digits, max_seconds, parse_direction(direction))
    c = directed(comp, direction)
    x = parse_eps(eps_g, "eps_g")
    d = parse_digits(digits)
    with progress.budgeted("delta", max_seconds):
        enc, r = answer(c, lambda r: r.engine.delta(c, x, d, r.payload))
        low = _attained_end(c, lambda a: answer(a, lambda r: r.engine.delta(a, x, d, r.payload))[0])
        if low is not None:
            enc = between(low, enc)
    # a probability: the generic engines' brackets are clamped to [0, 1] here
    return (enc.clamped(Fraction(0), Fraction(1)) if c.is_generic else enc), r


def _negated(x: ExactReal) -> ExactReal:
    return ExactReal.rational(-x.value) if x.kind == "rational" else ExactReal.log(1 / x.value)


def signed_eps(x: object, name: str = "eps_g") -> ExactReal:
    """An eps that may be negative (``"-0.5"``, ``"-log(3)"``, ``"log(1/3)"``), exact; a value >= 0
    is read as :func:`exactdp.core.numbers.parse_eps` reads it.

    >>> str(signed_eps("-log(3)"))
    'log(1/3)'
    """
    if isinstance(x, str) and x.strip().startswith("-"):
        r = ExactReal.parse(x.strip()[1:], name)
        if r.sign() < 0:
            raise InvalidParameterError(f"{name}={x!r} must be an eps such as '-0.5' or '-log(3)'")
        parse_eps(r, name)  # the same bound on its size
        return _negated(r)
    r = ExactReal.parse(x, name)
    return r if r.sign() < 0 else parse_eps(r, name)


def _reversed_order(m: object) -> object:
    """A mechanism with its one order reversed (remove <-> add); symmetric ones and ``max`` unchanged."""
    if isinstance(m, PoissonSampled) and m.direction in ("remove", "add"):
        return PoissonSampled(m.mechanism, m.q, m.relation, "add" if m.direction == "remove" else "remove")
    if isinstance(m, MixtureOfGaussians) and m.direction in ("remove", "add"):
        return with_direction(m, "add" if m.direction == "remove" else "remove")
    d = getattr(m, "direction", "max")  # also the two-order classes of exactdp.model.truncation, .special
    if isinstance(m, SpecificMechanism) and d in ("remove", "add"):
        return m.oriented("add" if d == "remove" else "remove")
    return m


def _below_zero(comp: CompositionInput, eps_g: ExactReal, digits: CountInput, max_seconds: ExactInput | float | None,
                direction: str) -> tuple[Enclosure, Route]:
    """delta at eps_g < 0: 1 - a + a delta_rev(-eps_g), a = e^eps_g, delta_rev the reversed orders' profile
    (for ``max`` the larger of the two orders either way).  The map is increasing in delta_rev and
    shrinks widths by a < 1, so the enclosure's ends map to ends and its digits stay certified."""
    c = directed(comp, direction)
    rev = Composition(tuple((_reversed_order(m), n) for m, n in c.groups))  # type: ignore[misc]
    neg = _negated(eps_g)
    enc, r = routed_delta(rev, neg, digits=digits, max_seconds=max_seconds, direction="max")
    if enc.lower == enc.upper == 1:  # delta_rev = 1 (no noise): 1 - a + a = 1 exactly, whatever a is
        return Enclosure.exact_value(Fraction(1), enc.digits, enc.algorithm), r
    a = eps_g.exp_exact()
    if a is not None:  # e^eps_g rational: the map is exact
        lo, hi = 1 - a + a * Fraction(enc.lower), 1 - a + a * Fraction(enc.upper)
        if enc.exact is not None:
            return Enclosure.exact_value(lo, enc.digits, enc.algorithm), r
        return Enclosure(lo, hi, enc.digits, algorithm=enc.algorithm), r
    with ctx.workprec(256 + 4 * parse_digits(digits)):
        ab = eps_g.exp_arb()
        lo = fraction_of_arb_endpoints(1 - ab + ab * arb_of_fraction(Fraction(enc.lower)))[0]
        hi = fraction_of_arb_endpoints(1 - ab + ab * arb_of_fraction(Fraction(enc.upper)))[1]
    return Enclosure(max(lo, Fraction(0)), min(hi, Fraction(1)), enc.digits, algorithm=enc.algorithm), r


def optimal_epsilon(comp: CompositionInput, delta_g: ExactInput, *, digits: CountInput = DEFAULT_DIGITS,
                    max_seconds: ExactInput | float | None = None, direction: str = "max") -> Enclosure:
    """The optimal eps at total delta_g (+inf exactly when delta_g < 1 - prod(1 - delta_i)).

    KOV15 Thm 3.3 / MV Thm 1.5; ``comp`` is anything :meth:`Composition.of` accepts; ``direction``
    as for :func:`optimal_delta`.

    >>> print(optimal_epsilon(("0.1", "0.001", 30), "0.05", digits=10))
    [0.84630263447, 0.84630263448]
    """
    return routed_epsilon(comp, delta_g, digits=digits, max_seconds=max_seconds, direction=direction)[0]


def routed_epsilon(comp: CompositionInput, delta_g: ExactInput, *, digits: CountInput = DEFAULT_DIGITS,
                   max_seconds: ExactInput | float | None = None, direction: str = "max") -> tuple[Enclosure, Route]:
    """:func:`optimal_epsilon` and the row of the dispatch table that answered (its name and reason).

    >>> enc, r = routed_epsilon([("0.1", "0", 10**4), ("0.2", "0", 5)], "1e-6", digits=5)
    >>> r.row, r.engine.name, enc.algorithm
    ('small-lattice', 'pld', 'pld-lattice')
    """
    c = directed(comp, direction)
    d_g = parse_delta(delta_g, "delta_g")
    d = parse_digits(digits)
    with progress.budgeted("epsilon", max_seconds):
        enc, r = answer(c, lambda r: r.engine.epsilon(c, d_g, d, r.payload))
        low = _attained_end(c, lambda a: answer(a, lambda r: r.engine.epsilon(a, d_g, d, r.payload))[0])
        return (enc, r) if low is None else (between(low, enc), r)


def _attained_end(c: Composition, ask: Callable[[Composition], Enclosure]) -> Enclosure | None:
    """The answer for the pair one dataset pair attains when ``c`` is answered by a dominating pair that is
    not its optimum and such a pair is modelled (k runs of a fixed batch: docs/mathematics.md §9, Theorem
    9.7), else None (the answer is the optimum, or an upper bound named so)."""
    if is_tight(c):
        return None
    a = attained(c)
    return None if a is None else ask(a)


def is_private(comp: CompositionInput, eps_g: ExactInput, delta_g: ExactInput, *,
               max_seconds: ExactInput | float | None = None) -> bool:
    """Exactly whether ``comp`` is (eps_g, delta_g)-DP (never a guess; docs/contracts.md §1.5).

    ``eps_g`` may be below 0: whether delta(eps_g) <= delta_g (docs/mathematics.md §9, "Below zero").

    >>> is_private(("0.1", "0.001", 30), "0.85", "0.05")
    True
    >>> is_private(("log(2)", 0, 1), "-log(2)", "1/2")   # 1 - 1/2 + (1/2) delta(log 2) = 1/2
    True
    """
    c = Composition.of(comp)
    eps_g_s: ExactReal = signed_eps(eps_g, "eps_g")
    delta_g_q: Fraction = parse_delta(delta_g, "delta_g")
    if eps_g_s.sign() < 0:
        with progress.budgeted("check", max_seconds):
            return _private_below_zero(c, eps_g_s, delta_g_q)
    eps_g_r: ExactReal = parse_eps(eps_g_s, "eps_g")
    with progress.budgeted("check", max_seconds):
        ok = answer(c, lambda r: r.engine.decide(c, eps_g_r, delta_g_q, r.payload))[0]
        if ok or is_tight(c):
            return ok
        a = attained(c)
        if a is None:  # an upper bound only (Theorems 9.4, 9.6): "not private" is not proven
            raise PrecisionError(f"{c} is certified (eps_g, delta_g)-DP only when its dominating pair is "
                                 "(docs/mathematics.md §9), and that pair is not: undecided")
        if not answer(a, lambda r: r.engine.decide(a, eps_g_r, delta_g_q, r.payload))[0]:
            return False  # one dataset pair already breaks it (Theorem 9.7)
        raise PrecisionError(f"{c} at eps_g={eps_g_r}, delta_g={delta_g_q}: the pair one dataset pair attains "
                             "is private there and the dominating pair is not; the optimum lies between them "
                             "(docs/mathematics.md §9, Theorem 9.7): undecided")


#: the digits :func:`_private_below_zero` asks for, in turn, when e^eps_g is irrational
_BELOW_ZERO_DIGITS = (10, 20, 40)


def _private_below_zero(c: Composition, eps_g: ExactReal, delta_g: Fraction) -> bool:
    """Whether delta(eps_g) <= delta_g for an eps_g < 0 (the hockey-stick divergence below 0).

    With a = e^eps_g, delta(eps_g) = 1 - a + a delta_rev(-eps_g) (:func:`_below_zero`), so the
    question is delta_rev(-eps_g) <= t, t = 1 - (1 - delta_g)/a: an exact decision of the reversed
    orders when a is rational (t < 0 is never met: delta_rev >= 0); otherwise enclosures of
    delta(eps_g) at more and more digits, and undecided (:class:`PrecisionError`) when none
    separates it from delta_g, or when only an upper bound is known and it misses.
    """
    a = eps_g.exp_exact()
    if a is not None:
        t = 1 - (1 - delta_g) / a
        if t < 0:
            return False
        rev = Composition(tuple((_reversed_order(m), n) for m, n in c.groups))  # type: ignore[misc]
        return is_private(rev, _negated(eps_g), t)
    upper_only = not is_tight(c) and attained(c) is None
    for d in _BELOW_ZERO_DIGITS:
        enc = optimal_delta(c, eps_g, digits=d)
        if Fraction(enc.upper) <= delta_g:
            return True
        if Fraction(enc.lower) > delta_g:
            if upper_only:  # as is_private says it: "not private" is not proven by an upper bound
                raise PrecisionError(f"{c} is certified (eps_g, delta_g)-DP only when its dominating pair is "
                                     "(docs/mathematics.md §9), and that pair is not: undecided")
            return False
    raise PrecisionError(f"{c} at eps_g={eps_g}, delta_g={delta_g}: delta(eps_g) could not be separated from delta_g "
                         f"at {_BELOW_ZERO_DIGITS[-1]} digits: undecided")
