"""The exact oracle as the testing kit hands it out, and the one-sided comparison of a claim.

A DP accountant *claims an upper bound*: "the composition is (eps, delta_g)-DP with this eps"
(or "with this delta at eps_g").  The claim is sound iff the claimed value is >= the optimum
(KOV15 Thm 3.3 / Murtagh-Vadhan Thm 1.5).  :func:`judge_epsilon` / :func:`judge_delta` decide
that exactly: first by the certified enclosure of the optimum, and when the claim falls inside
the enclosure, by the exact decision ``is_private`` (docs/contracts.md §1.5), which is never wrong.

Nothing here imports hypothesis, pytest or a peer library.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from contextlib import nullcontext as _nullcontext
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Any, Literal

from exactdp.core.enclosure import Enclosure
from exactdp.core.errors import ExactDPError, InvalidParameterError, PrecisionError
from exactdp.core.numbers import (
    INF,
    ExactReal,
    exact_floats,
    format_fraction,
    parse_delta,
    parse_digits,
    parse_eps,
    parse_rational,
)
from exactdp.model.attained import attained, between, is_tight
from exactdp.model.composition import Composition

__all__ = [
    "FP_LEVEL",
    "MECHANISM_DIGITS",
    "MECHANISM_REFINE",
    "MECHANISM_SECONDS",
    "InvalidClaimError",
    "Oracle",
    "Verdict",
    "as_composition",
    "curve_points",
    "exact_of_reported",
    "judge_delta",
    "judge_epsilon",
    "kit_composition",
    "kit_seconds",
    "needs_pld",
    "oracle_or_default",
    "parse_rel_tol",
    "read_composition",
    "short_repr",
]

#: A shortfall below this relative size is a floating-point-level slip, not a material error.
FP_LEVEL = Fraction(1, 10**9)


class InvalidClaimError(AssertionError, ValueError):
    """A reported value is not a number (None, NaN, -inf, a bool, a non-numeric string or object).

    It claims nothing, so it is not a sound claim: the kit's assertions fail with this error.
    (It is also a ValueError, which callers catching "not a number" already handle.)
    """

    def __init__(self, message: str, reported: Any = None) -> None:
        super().__init__(message)
        self.reported = reported


def as_composition(composition: Any, relation: Any = None) -> Composition:
    """A :class:`Composition` from any shorthand, exactly as :meth:`Composition.of` reads it, or from
    a dp_accounting ``DpEvent`` or accountant, an Opacus accountant or an :class:`exactdp.Accountant`
    (:func:`exactdp.model.dp_event.from_accountant`: floats at their exact binary values).

    ``relation`` (add-remove or replace-one) is that of a DpEvent (default add-remove); an
    accountant's own relation is used, and a ``relation`` that disagrees with it is refused.  With
    a plain composition (which carries its own relations) ``relation`` is refused.

    >>> str(as_composition(("0.1", "0.001", 30)))
    '30 x (0.1, 0.001)-DP'
    >>> str(as_composition([("1", "0.1"), ("2", "0.2")]))
    '(1, 0.1) + (2, 0.2)'
    >>> class RDPAccountant:  # Opacus's, duck-typed: (noise_multiplier, sample_rate, steps)
    ...     history = [(2.0, 0.5, 100)]
    >>> str(as_composition(RDPAccountant()))
    '100 x gaussian:sigma=2,q=0.5'
    """
    from exactdp.model.dp_event import from_accountant, is_accountant

    if is_accountant(composition):
        return from_accountant(composition, relation)
    if relation is not None:
        raise InvalidParameterError(f"relation={short_repr(relation)} applies to a DpEvent or an accountant; composition="
                                    f"{short_repr(composition)} is neither (a mechanism carries its own relation)")
    return Composition.of(composition)


def read_composition(composition: Any, relation: Any = None) -> Any:
    """``composition`` itself, or the :class:`Composition` of a DpEvent or accountant under ``relation``
    (:func:`as_composition`): what every assertion of the kit does first with its ``composition=``."""
    from exactdp.model.dp_event import is_accountant

    if relation is None and not is_accountant(composition):
        return composition
    return as_composition(composition, relation)


def kit_composition(composition: Any, exact: Any = None, relation: Any = None) -> Composition:
    """The composition a kit function was handed (spec, list, DpEvent, accountant: docs/kit.md §1), its
    floats read exactly when ``exact`` (the ``exact_floats=`` argument) is True.

    >>> str(kit_composition("gaussian:sigma=1,count=2"))
    '2 x gaussian:sigma=1'
    """
    composition = read_composition(composition, relation)
    if isinstance(composition, Composition):
        return composition
    if exact is not None and not isinstance(exact, bool):
        raise InvalidParameterError(f"exact_floats={short_repr(exact)} must be True, False or None")
    if exact:
        with exact_floats(True):
            return Composition.of(composition)
    return Composition.of(composition)


def kit_seconds(max_seconds: Any) -> float:  # float ok: seconds
    """A kit function's ``max_seconds=`` (default :data:`MECHANISM_SECONDS`), checked.

    >>> kit_seconds(None) == MECHANISM_SECONDS, kit_seconds(2)
    (True, 2.0)
    """
    b = MECHANISM_SECONDS if max_seconds is None else max_seconds
    if isinstance(b, bool) or not isinstance(b, (int, float)) or not 0 < b < math.inf:
        raise InvalidParameterError(f"max_seconds={short_repr(max_seconds)} must be a number of seconds > 0")
    return float(b)  # float ok: seconds


def short_repr(x: Any, limit: int = 60) -> str:
    """``repr(x)`` on one line, cut to ``limit`` characters: how the kit's messages show a value.

    >>> short_repr(list(range(30)), 20)
    '[0, 1, 2, 3, 4, 5...'
    """
    try:
        r = repr(x)
    except Exception:  # noqa: BLE001 - a broken __repr__ may raise anything; it must not hide the real problem
        r = f"<{type(x).__name__} object>"
    r = " ".join(r.split())
    return r if len(r) <= limit else r[: limit - 3] + "..."


def _not_a_number(x: Any, name: str, why: str = "") -> InvalidClaimError:
    return InvalidClaimError(
        f"{name}={short_repr(x)} is not a number{why}; a claim must be a finite number or +inf", x)


def exact_of_reported(x: Any, name: str = "reported") -> Fraction | float:
    """The exact value of a number some library reported: a Fraction, or ``INF`` for +inf.

    A float is taken at its exact binary value (that *is* what the library claimed); +inf
    claims nothing and is ``INF`` (a trivially sound claim).  Anything that is not a number --
    None, NaN, -inf, a bool, a non-numeric string or object -- raises
    :class:`InvalidClaimError`: a claim that is not a number is not sound.

    >>> exact_of_reported(0.5), exact_of_reported(float("inf")), exact_of_reported("1/3")
    (Fraction(1, 2), inf, Fraction(1, 3))
    >>> exact_of_reported(None)
    Traceback (most recent call last):
    ...
    exactdp.testing.oracle.InvalidClaimError: reported=None is not a number; a claim must be a finite number or +inf
    """
    if x is None or isinstance(x, bool):
        raise _not_a_number(x, name)
    if isinstance(x, Enclosure):
        return x.upper
    if isinstance(x, (Fraction, int)):
        return Fraction(x)
    if isinstance(x, (str, Decimal)):
        if isinstance(x, str) and x.strip().lower() in ("inf", "+inf", "infinity", "+infinity"):
            return INF
        if isinstance(x, Decimal) and x.is_infinite() and x > 0:
            return INF
        try:
            return parse_rational(x, name)
        except ExactDPError:
            raise _not_a_number(x, name) from None
    if hasattr(x, "_mpf_"):  # mpmath mpf: exact mantissa and exponent
        import mpmath

        if mpmath.isinf(x) and x > 0:
            return INF
        if not mpmath.isfinite(x):
            raise _not_a_number(x, name, " (NaN or -inf)")
        man, exp = mpmath.mpf(x).man_exp
        return Fraction(int(man) * 2**int(exp)) if exp >= 0 else Fraction(int(man), 2 ** int(-exp))
    if hasattr(x, "as_integer_ratio") or isinstance(x, float):  # float, numpy floats
        try:
            f = float(x)  # float ok: only to classify NaN / +-inf; the value is read exactly below
            if math.isnan(f) or f == -math.inf:
                raise _not_a_number(x, name, " (NaN or -inf)")
            if f == math.inf:
                return INF
            n, d = x.as_integer_ratio()  # exact, also for numpy's longdouble
            return Fraction(int(n), int(d))
        except InvalidClaimError:
            raise
        except Exception:  # noqa: BLE001 - a float-like object may fail any way: then it is not a number
            raise _not_a_number(x, name) from None
    try:
        return parse_rational(x, name)  # gmpy2, flint, numpy integers (__index__), ...
    except ExactDPError:
        pass
    try:
        return Fraction(str(x))  # e.g. sympy's Rational and Integer
    except Exception:  # noqa: BLE001 - any object's __str__ may raise anything: then it is not a number
        raise _not_a_number(x, name, f" (type {type(x).__name__})") from None


def _claim(reported: Any, what: str, comp: Composition, at_name: str, at: Any) -> Fraction | float:
    """The exact claim, or an InvalidClaimError naming the value and the query it answered."""
    try:
        return exact_of_reported(reported, f"reported {what}")
    except InvalidClaimError as e:
        raise InvalidClaimError(f"{e} (composition {comp}, {at_name}={at})", reported) from None


def parse_rel_tol(x: Any, name: str = "rel_tol") -> Fraction:
    """A relative tolerance: an exact rational >= 0 (a float is accepted at its exact value).

    >>> parse_rel_tol("1e-12"), parse_rel_tol(0)
    (Fraction(1, 1000000000000), Fraction(0, 1))
    """
    if isinstance(x, float):  # float ok: a tolerance, not a certified value
        if not math.isfinite(x):
            raise InvalidParameterError(f"{name}={x!r} must be a finite number >= 0")
        t = Fraction(x)
    else:
        t = parse_rational(x, name)
    if t < 0:
        raise InvalidParameterError(f"{name}={x!r} must be >= 0")
    return t


def oracle_or_default(oracle: Any) -> Oracle:
    """``oracle`` itself, or a fresh :class:`Oracle` for None; anything else is refused."""
    if oracle is None:
        return Oracle()
    if not isinstance(oracle, Oracle):
        raise InvalidParameterError(f"oracle={short_repr(oracle)} must be an exactdp.testing.Oracle or None")
    return oracle


def _show(x: Fraction | float) -> str:
    if isinstance(x, float):
        return "inf"
    if x.denominator == 1 or len(format_fraction(x)) <= 30:
        return format_fraction(x)
    return f"{x.numerator}/{x.denominator} (~{float(x)!r})"  # float ok: display only


@dataclass(frozen=True)
class Verdict:
    """The exact verdict on one claimed upper bound.

    ``sound`` is True iff the claim is >= the optimum (decided exactly).  ``relative_shortfall``
    is (optimum - claim)/optimum for an unsound claim (a certified lower bound of it when the
    claim lies below the enclosure; ``None`` when the optimum is +inf or 0), and
    ``fp_level`` says whether it is below :data:`FP_LEVEL` (a floating-point-level slip).
    """

    query: Literal["epsilon", "delta"]
    composition: Composition
    at: Fraction | ExactReal
    reported: Fraction | float
    optimum: Enclosure
    sound: bool
    relative_shortfall: Fraction | None = None

    @property
    def fp_level(self) -> bool:
        return (not self.sound) and self.relative_shortfall is not None and self.relative_shortfall < FP_LEVEL

    @property
    def label(self) -> str:
        """``sound`` or ``unsound``."""
        return "sound" if self.sound else "unsound"

    def describe(self) -> str:
        at_name = "delta_g" if self.query == "epsilon" else "eps_g"
        at = format_fraction(self.at) if isinstance(self.at, Fraction) else str(self.at)
        what = "eps" if self.query == "epsilon" else "delta"
        s = (
            f"composition {self.composition}, {at_name}={at}: reported {what} = {_show(self.reported)}, "
            f"certified optimum in {self.optimum}"
        )
        if not self.sound:
            if self.relative_shortfall is None:
                s += " -> UNSOUND (the optimum is +inf: no finite eps is private here)" \
                    if self.optimum.is_infinite else " -> UNSOUND"
            else:
                rel = float(self.relative_shortfall)  # float ok: display only
                s += f" -> UNSOUND, {rel:.3g} relative below the optimum" + (
                    " (floating-point level)" if self.fp_level else "")
        return s


#: Default time budget (seconds) of one bracket or one decision on a mechanism composition.
MECHANISM_SECONDS = 10.0
#: Digits asked of the PLD engine for the first bracket of a mechanism composition (about a second
#: for DP-SGD, 1000 steps); a claim inside it is refined with more (:data:`MECHANISM_REFINE`).
MECHANISM_DIGITS = 3
#: Digits asked in turn when a claim lies inside the first bracket (each within the budget).
MECHANISM_REFINE = (4, 5, 6)


def needs_pld(comp: Composition) -> bool:
    """Whether a composition is answered by the certified PLD engine (a bracket, in bounded time).

    Generic (eps, delta) compositions are exact (KOV15 / Murtagh-Vadhan) and Gaussian-only ones
    have a closed form; everything else (Laplace, subsampling, mixtures) is a PLD bracket.
    """
    if comp.is_generic:
        return False
    from exactdp.engines.gaussian import gaussian_mu2

    return gaussian_mu2(comp) is None


def _pld_digits(digits: Any) -> int:
    """Digits asked of the PLD engine: :data:`MECHANISM_DIGITS` unless given (at most 8)."""
    return MECHANISM_DIGITS if digits is None else min(parse_digits(digits), 8)


@dataclass
class Oracle:
    """The exact oracle: optimal eps / delta enclosures and the exact privacy decision.

    ``digits`` is the certified precision of the enclosures of generic and Gaussian compositions.
    Other mechanism compositions (Laplace, Poisson subsampling, mixtures) are answered by the
    certified PLD engine (docs/pld.md): a bracket refined for at most ``max_seconds`` (default
    :data:`MECHANISM_SECONDS`), whose ``digits`` says how many digits it certifies; a decision on
    them that the budget cannot settle raises :class:`~exactdp.core.errors.TimeBudgetError` (never a
    guess).  ``exact_floats=True`` reads every float input (in compositions, delta_g, eps_g) at its
    exact binary value (docs/kit.md §2).  The three functions default to
    :func:`exactdp.optimal_epsilon`, :func:`exactdp.optimal_delta`, :func:`exactdp.is_private`
    (looked up at call time) and may be replaced, e.g. to test a candidate oracle.
    """

    digits: int = 20
    epsilon_fn: Callable[..., Enclosure] | None = None
    delta_fn: Callable[..., Enclosure] | None = None
    decide_fn: Callable[..., bool] | None = None
    max_seconds: Any = None
    exact_floats: bool = False

    def __post_init__(self) -> None:
        self.digits = parse_digits(self.digits)
        for name in ("epsilon_fn", "delta_fn", "decide_fn"):
            fn = getattr(self, name)
            if fn is not None and not callable(fn):
                raise InvalidParameterError(f"{name}={short_repr(fn)} must be callable or None")
        if self.max_seconds is not None:
            ok = isinstance(self.max_seconds, (int, float)) and not isinstance(self.max_seconds, bool)
            if not ok or not math.isfinite(self.max_seconds) or self.max_seconds <= 0:
                raise InvalidParameterError(f"max_seconds={short_repr(self.max_seconds)} must be a number of seconds > 0")
        if not isinstance(self.exact_floats, bool):
            raise InvalidParameterError(f"exact_floats={short_repr(self.exact_floats)} must be True or False")

    @property
    def budget(self) -> float:  # float ok: seconds
        """The time budget (seconds) of one mechanism bracket or decision."""
        return float(self.max_seconds) if self.max_seconds is not None else MECHANISM_SECONDS  # float ok

    def _digits(self, digits: Any) -> int:
        return self.digits if digits is None else parse_digits(digits)

    def floats(self) -> Any:
        """The context in which this oracle reads inputs (exact floats when asked for)."""
        from exactdp.core.numbers import exact_floats

        return exact_floats(True) if self.exact_floats else _nullcontext()

    def composition(self, composition: Any) -> Composition:
        """``composition`` read as :meth:`Composition.of` does (floats exact if ``exact_floats``)."""
        with self.floats():
            return as_composition(composition)

    def epsilon(self, composition: Any, delta_g: Any, *, digits: int | None = None) -> Enclosure:
        """The optimal eps of ``composition`` at total ``delta_g`` (KOV15 Thm 3.3 / MV Thm 1.5;
        a certified PLD bracket for mechanisms, docs/pld.md)."""
        comp = self.composition(composition)
        with self.floats():
            dg = parse_delta(delta_g, "delta_g")
        if self.epsilon_fn is not None:
            return self.epsilon_fn(comp, dg, digits=self._digits(digits))
        if needs_pld(comp):
            from exactdp.engines.pld.engine import pld_epsilon

            return _two_sided(comp, lambda c: pld_epsilon(c, dg, digits=_pld_digits(digits), max_seconds=self.budget))
        from exactdp.api.optimal import optimal_epsilon

        return optimal_epsilon(comp, dg, digits=self._digits(digits))

    def delta(self, composition: Any, eps_g: Any, *, digits: int | None = None) -> Enclosure:
        """The optimal total delta of ``composition`` at ``eps_g`` (KOV15 Thm 3.3 / MV Thm 1.5;
        a certified PLD bracket for mechanisms, docs/pld.md)."""
        comp = self.composition(composition)
        with self.floats():
            eg = parse_eps(eps_g, "eps_g")
        if self.delta_fn is not None:
            return self.delta_fn(comp, eg, digits=self._digits(digits))
        if needs_pld(comp):
            from exactdp.engines.pld.engine import pld_delta

            return _two_sided(comp, lambda c: pld_delta(c, eg, digits=_pld_digits(digits), max_seconds=self.budget))
        from exactdp.api.optimal import optimal_delta

        return optimal_delta(comp, eg, digits=self._digits(digits))

    def is_private(self, composition: Any, eps_g: Any, delta_g: Any, *, max_seconds: float | None = None) -> bool:  # float ok: seconds
        """Exactly whether ``composition`` is (eps_g, delta_g)-DP (docs/contracts.md §1.5).

        For a PLD-engine composition the bracket is refined for at most the budget (``max_seconds``
        when given, else the oracle's); a tie raises
        :class:`~exactdp.core.errors.TimeBudgetError` with the bracket reached (``.best``)."""
        comp = self.composition(composition)
        with self.floats():
            eg = parse_eps(eps_g, "eps_g")
            dg = parse_delta(delta_g, "delta_g")
        if self.decide_fn is not None:
            return self.decide_fn(comp, eg, dg)
        if needs_pld(comp):
            from exactdp.engines.pld.engine import pld_decide

            budget = self.budget if max_seconds is None else max_seconds
            if is_tight(comp):
                return pld_decide(comp, eg, dg, max_seconds=budget)
            if pld_decide(comp, eg, dg, max_seconds=budget):
                return True  # its dominating pair is private
            low = attained(comp)
            if low is not None and not pld_decide(low, eg, dg, max_seconds=budget):
                return False  # one dataset pair is not (eps_g, delta_g)-DP (docs/mathematics.md §9, Theorem 9.7)
            raise PrecisionError(f"{comp} at eps_g={eg}, delta_g={format_fraction(dg)}: the dominating pair is not "
                                 "private there and " + ("no attained pair is modelled" if low is None else
                                                         "the pair one dataset pair attains is") +
                                 " (docs/mathematics.md §9): undecided")
        from exactdp.api.optimal import is_private

        return is_private(comp, eg, dg)

    # -- one-sided verdicts -----------------------------------------------------------------
    def judge_epsilon(self, reported: Any, composition: Any, delta_g: Any) -> Verdict:
        return judge_epsilon(reported, composition, delta_g, oracle=self)

    def judge_delta(self, reported: Any, composition: Any, eps_g: Any) -> Verdict:
        return judge_delta(reported, composition, eps_g, oracle=self)


def _two_sided(comp: Composition, ask: Callable[[Composition], Enclosure]) -> Enclosure:
    """``ask(comp)``, the certified answer of ``comp``'s pair, when that is the optimum; else the
    enclosure from the pair one dataset pair attains (its lower end; 0 when none is modelled) to the
    dominating pair's upper end (docs/mathematics.md §9, Theorem 9.7), so that a claim below the
    dominating pair's answer is called unsound only when it is below the attained one."""
    up = ask(comp)
    if is_tight(comp):
        return up
    low = attained(comp)
    return between(None if low is None else ask(low), up)


def _relative(opt_end: Fraction | float, reported: Fraction) -> Fraction | None:
    if isinstance(opt_end, float) or opt_end <= 0:
        return None
    return (opt_end - reported) / opt_end


def judge_epsilon(reported: Any, composition: Any, delta_g: Any, *, oracle: Oracle | None = None) -> Verdict:
    """Whether a reported eps at total ``delta_g`` is >= the optimum, decided exactly.

    The optimum is OptComp(delta_g) (KOV15 Thm 3.3 / MV Thm 1.5).  A claim that lands inside
    the certified enclosure is settled by the exact decision: eps is sound iff the composition
    is (eps, delta_g)-DP, since privacy is monotone in eps_g and the optimum is attained.
    A claim that is not a number raises :class:`InvalidClaimError`; +inf is trivially sound.

    >>> judge_epsilon("1.5", ("0.1", 0, 30), "1e-3").sound
    True
    """
    oracle = oracle_or_default(oracle)
    comp = as_composition(composition)
    dg = parse_delta(delta_g, "delta_g")
    rep = _claim(reported, "eps", comp, "delta_g", format_fraction(dg))
    opt = oracle.epsilon(comp, dg)
    if isinstance(rep, float):  # +inf claims nothing
        return Verdict("epsilon", comp, dg, rep, opt, True)
    if opt.is_infinite:
        return Verdict("epsilon", comp, dg, rep, opt, False, None)
    if rep >= opt.upper:
        return Verdict("epsilon", comp, dg, rep, opt, True)
    if rep < opt.lower or rep < 0:
        return Verdict("epsilon", comp, dg, rep, opt, False, _relative(opt.lower, rep))
    ok = oracle.is_private(comp, rep, dg)
    return Verdict("epsilon", comp, dg, rep, opt, ok, None if ok else _relative(opt.upper, rep))


def judge_delta(reported: Any, composition: Any, eps_g: Any, *, oracle: Oracle | None = None) -> Verdict:
    """Whether a reported total delta at ``eps_g`` is >= the optimal delta, decided exactly.

    The optimum is delta_opt(eps_g) = 1 - prod(1-delta_i)(1 - delta_pure(eps_g)) (MV Thm 1.5);
    a claim inside the enclosure is settled by ``is_private(comp, eps_g, claim)``.  A claim that
    is not a number raises :class:`InvalidClaimError`; +inf (or any delta >= 1) is trivially sound.

    >>> judge_delta("0.28", [("1", "0.1"), ("2", "0.2")], 3).sound
    True
    """
    oracle = oracle_or_default(oracle)
    comp = as_composition(composition)
    eg = parse_eps(eps_g, "eps_g")
    rep = _claim(reported, "delta", comp, "eps_g", eg)
    opt = oracle.delta(comp, eg)
    if isinstance(rep, float) or rep >= 1 or rep >= opt.upper:
        return Verdict("delta", comp, eg, rep, opt, True)
    if rep < opt.lower or rep < 0:
        return Verdict("delta", comp, eg, rep, opt, False, _relative(opt.lower, rep))
    ok = oracle.is_private(comp, eg, rep)
    return Verdict("delta", comp, eg, rep, opt, ok, None if ok else _relative(opt.upper, rep))


def curve_points(reported: Any, values: Any, key: str) -> list[tuple[Any, Any]]:
    """The ``(key, value)`` points of a reported curve: a mapping ``{key: value}``, a list of pairs, or the
    keys with ``values=`` (the RDP and trade-off curve assertions; ``key`` names the abscissa in messages).

    >>> curve_points({2: 0.5}, None, "order"), curve_points([2, 3], [0.5, 0.7], "order")
    ([(2, 0.5)], [(2, 0.5), (3, 0.7)])
    """
    if values is not None:
        if isinstance(reported, (str, bytes, Mapping)) or not isinstance(reported, Iterable) \
                or isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
            raise InvalidParameterError(f"with values=, the first argument must be the sequence of {key}s")
        keys, vals = list(reported), list(values)
        if len(keys) != len(vals):
            raise InvalidParameterError(f"{len(keys)} {key}s but {len(vals)} values: each {key} needs its value")
        pts = list(zip(keys, vals))
    elif isinstance(reported, Mapping):
        pts = list(reported.items())
    elif isinstance(reported, (str, bytes)) or not isinstance(reported, Iterable):
        raise InvalidParameterError(f"curve={short_repr(reported)} must be a mapping {{{key}: value}}, a list of "
                                    f"({key}, value) pairs, or the {key}s with values=")
    else:
        pts = list(reported)
        for p in pts:
            if not (isinstance(p, (tuple, list)) and len(p) == 2):
                raise InvalidParameterError(f"curve point {short_repr(p)} must be an ({key}, value) pair")
    if not pts:
        raise InvalidParameterError(f"an empty curve checks nothing: give at least one {key}")
    return pts
