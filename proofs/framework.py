"""A small derivation framework: named sequences of steps that sympy checks one by one.

A :class:`Derivation` is a statement, its source and a list of steps.  Every step is checked by
a machine and a step that cannot be settled is a FAILURE, never a skip:

- :class:`Equal` -- ``lhs == rhs``: sympy must reduce ``lhs - rhs`` to exactly 0 (expand,
  cancel, together, powsimp, simplify, in that order of cost);
- :class:`NonNegative` -- ``expr >= 0`` for positive symbols, proved by a certificate: after an
  optional substitution (e.g. ``x -> 1 + u`` for ``x >= 1``) the expression is a quotient of
  polynomials with non-negative coefficients in positive quantities (positive symbols and
  ``exp(...)`` atoms);
- :class:`SumOfSquares` -- ``expr == sum c_i b_i^2`` with constants ``c_i >= 0``;
- :class:`ByDerivative` -- ``f(x) >= 0`` for ``x >= a`` from ``f(a) >= 0`` and a proof that
  ``f'(x) >= 0`` for ``x >= a`` (itself a step, so proofs nest);
- :class:`Implementation` -- evaluates exactdp's own function at exact points and compares with
  the derived expression, so a wrong formula in the package fails the proof.
"""

from __future__ import annotations

import re
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import sympy as sp

__all__ = [
    "Step",
    "Equal",
    "NonNegative",
    "SumOfSquares",
    "ByDerivative",
    "Implementation",
    "Unequal",
    "Computed",
    "Derivation",
    "Outcome",
    "run_derivation",
    "is_zero",
    "nonneg_certificate",
    "enclosure_contains",
    "exact_equals",
    "to_fraction",
    "pos",
]


def pos(names: str) -> Any:
    """Positive real symbols (``sympy.symbols(names, positive=True)``)."""
    return sp.symbols(names, positive=True)


# -- the checks -------------------------------------------------------------------------------

def is_zero(expr: sp.Expr) -> bool:
    """Whether sympy reduces ``expr`` to exactly 0 (cheap rewrites first, simplify last)."""
    expr = sp.sympify(expr)
    if isinstance(expr, sp.MatrixBase):
        return all(is_zero(e) for e in expr)
    if expr == 0:
        return True
    # powsimp(force=True) combines powers regardless of signs: sound only for positive symbols
    force = all(bool(s.is_positive) for s in expr.free_symbols)
    rewrites = [sp.expand, sp.cancel, lambda e: sp.cancel(sp.together(sp.expand(e)))]
    if force:
        rewrites += [lambda e: sp.expand(sp.powsimp(sp.expand(e), force=True)),
                     lambda e: sp.cancel(sp.expand(sp.powsimp(sp.expand_power_exp(sp.expand(e)), force=True)))]
    rewrites += [sp.simplify, lambda e: sp.simplify(sp.expand(e.rewrite(sp.exp)))]
    for f in rewrites:
        try:
            if f(expr) == 0:
                return True
        except Exception:  # a rewrite that sympy cannot do settles nothing
            continue
    return False


def _positive_atom(a: sp.Expr) -> bool:
    if a.is_Symbol:
        return bool(a.is_positive)
    if isinstance(a, sp.exp):
        return bool(a.args[0].is_real)
    return False


def _poly_nonneg_coeffs(p: sp.Expr) -> tuple[bool, str]:
    """A polynomial in positive atoms with non-negative rational coefficients, not identically 0."""
    p = sp.expand(p)
    if p == 0:
        return True, "zero"
    gens = sorted(p.atoms(sp.Symbol) | p.atoms(sp.exp), key=sp.default_sort_key)
    # exp atoms are generators of their own; symbols that occur only inside them are not generators
    inner = set()
    for e in p.atoms(sp.exp):
        inner |= e.free_symbols
    gens = [g for g in gens if isinstance(g, sp.exp) or g not in inner or _occurs_outside_exp(p, g)]
    for g in gens:
        if not _positive_atom(g):
            return False, f"{g} is not known to be positive"
    try:
        poly = sp.Poly(p, *gens) if gens else sp.Poly(p, sp.Dummy())
    except sp.PolynomialError as exc:
        return False, f"not a polynomial in positive quantities: {exc}"
    for c in poly.coeffs():
        if not (c.is_Rational and c >= 0):
            return False, f"coefficient {c} is not a non-negative rational"
    return True, "ok"


def _occurs_outside_exp(p: sp.Expr, s: sp.Symbol) -> bool:
    q = p.replace(lambda a: isinstance(a, sp.exp), lambda a: sp.Integer(1))
    return s in q.free_symbols


def nonneg_certificate(expr: sp.Expr, subs: dict | None = None) -> str | None:
    """None if ``expr`` (after ``subs``) is a ratio of non-negative-coefficient polynomials in
    positive quantities with a non-zero denominator; otherwise the reason it is not."""
    e = sp.sympify(expr)
    if subs:
        e = e.subs(subs)
    e = sp.together(sp.expand(e))
    num, den = sp.fraction(sp.cancel(e))
    if den == 0:
        return "denominator is 0"
    for part, name in ((num, "numerator"), (den, "denominator")):
        # split off positive factors (powers of exp, positive symbols) and check each factor
        for fac in sp.Mul.make_args(sp.factor_terms(part)):
            base, ex = fac.as_base_exp()
            if ex.is_Integer and ex % 2 == 0 and base.is_real is True:
                continue  # an even power is >= 0
            ok, why = _poly_nonneg_coeffs(fac)
            if not ok:
                return f"{name} factor {fac}: {why}"
    if sp.expand(den) == 0:
        return "denominator is 0"
    return None


# -- steps ------------------------------------------------------------------------------------

@dataclass
class Step:
    """One checked step; ``check()`` returns None when settled, else why not."""

    text: str

    def check(self) -> str | None:  # pragma: no cover - abstract
        raise NotImplementedError

    def show(self) -> str:
        return self.text

    def latex(self) -> str:
        return _tex_text(self.text)


@dataclass
class Equal(Step):
    """``lhs == rhs``, settled when sympy reduces ``lhs - rhs`` to 0."""

    lhs: Any = None
    rhs: Any = None

    def check(self) -> str | None:
        if is_zero(sp.sympify(self.lhs) - sp.sympify(self.rhs)):
            return None
        return f"sympy does not reduce lhs - rhs to 0: {self.lhs} - ({self.rhs})"

    def show(self) -> str:
        return f"{self.text}: {self.lhs} = {self.rhs}"

    def latex(self) -> str:
        return (_tex_text(self.text) + r": \[" + sp.latex(sp.sympify(self.lhs)) + " = "
                + sp.latex(sp.sympify(self.rhs)) + r"\]")


@dataclass
class NonNegative(Step):
    """``expr >= 0`` (all symbols positive), by a non-negative-coefficient certificate after ``subs``."""

    expr: Any = None
    subs: dict | None = None

    def check(self) -> str | None:
        why = nonneg_certificate(self.expr, self.subs)
        return None if why is None else f"no non-negativity certificate for {self.expr}: {why}"

    def show(self) -> str:
        s = f" [with {', '.join(f'{k} = {v}' for k, v in self.subs.items())}]" if self.subs else ""
        return f"{self.text}: {self.expr} >= 0{s}"

    def latex(self) -> str:
        s = ""
        if self.subs:
            s = r"\quad(\text{with } " + ", ".join(f"{sp.latex(k)} = {sp.latex(v)}" for k, v in self.subs.items()) + ")"
        return _tex_text(self.text) + r": \[" + sp.latex(sp.sympify(self.expr)) + r" \ge 0" + s + r"\]"


@dataclass
class SumOfSquares(Step):
    """``expr == sum c_i * b_i**2`` with constants ``c_i >= 0``, hence ``expr >= 0``."""

    expr: Any = None
    terms: Sequence[tuple[Any, Any]] = ()

    def check(self) -> str | None:
        for c, _ in self.terms:
            c = sp.sympify(c)
            if not (c.is_number and c.is_nonnegative):
                return f"coefficient {c} is not a non-negative constant"
        total = sum((sp.sympify(c) * sp.sympify(b) ** 2 for c, b in self.terms), sp.Integer(0))
        if not is_zero(sp.sympify(self.expr) - total):
            return f"{self.expr} is not the sum of squares {total}"
        return None

    def show(self) -> str:
        total = " + ".join(f"{c}*({b})^2" for c, b in self.terms)
        return f"{self.text}: {self.expr} = {total} >= 0"

    def latex(self) -> str:
        total = " + ".join(f"{sp.latex(sp.sympify(c))}\\left({sp.latex(sp.sympify(b))}\\right)^2" for c, b in self.terms)
        return _tex_text(self.text) + r": \[" + sp.latex(sp.sympify(self.expr)) + " = " + total + r" \ge 0\]"


@dataclass
class ByDerivative(Step):
    """``f(x) >= 0`` on ``x >= a``: ``f(a) >= 0`` exactly, and ``derivative`` proves ``f'(x) >= 0``.

    ``derivative`` must be a :class:`NonNegative`, :class:`SumOfSquares` or :class:`ByDerivative`
    step whose expression equals ``f'(x)`` (checked).
    """

    expr: Any = None
    var: Any = None
    lower: Any = 0
    derivative: Step | None = None

    def check(self) -> str | None:
        f = sp.sympify(self.expr)
        if not (self.var.is_positive and sp.sympify(self.lower).is_nonnegative):
            return "the variable must be a positive symbol and the boundary >= 0 (the derivative's proof covers x > 0)"
        at = sp.simplify(f.subs(self.var, self.lower))
        if not (at.is_number and at.is_nonnegative):
            why = nonneg_certificate(at) if not at.is_number else "negative"
            if why is not None:
                return f"boundary value f({self.lower}) = {at} is not shown >= 0"
        d = self.derivative
        if d is None:
            return "no proof of the derivative's sign"
        dexpr = getattr(d, "expr", None)
        if dexpr is None or not is_zero(sp.diff(f, self.var) - sp.sympify(dexpr)):
            return f"the derivative of {f} is not {dexpr}"
        why = d.check()
        return None if why is None else f"derivative step: {why}"

    def show(self) -> str:
        inner = self.derivative.show() if self.derivative else "?"
        return (f"{self.text}: {self.expr} >= 0 for {self.var} >= {self.lower} "
                f"(value {sp.simplify(sp.sympify(self.expr).subs(self.var, self.lower))} at {self.lower}; "
                f"derivative: {inner})")

    def latex(self) -> str:
        inner = self.derivative.latex() if self.derivative else "?"
        return (_tex_text(self.text) + r": \[" + sp.latex(sp.sympify(self.expr)) + r" \ge 0 \quad (" +
                sp.latex(self.var) + r" \ge " + sp.latex(sp.sympify(self.lower)) + r")\]"
                + r" since its value at the boundary is " + "$" +
                sp.latex(sp.simplify(sp.sympify(self.expr).subs(self.var, self.lower))) + "$ and the derivative is non-negative: " + inner)


@dataclass
class Implementation(Step):
    """Evaluate exactdp at exact points: ``fn()`` returns None when it agrees, else the disagreement."""

    fn: Callable[[], str | None] | None = None

    def check(self) -> str | None:
        assert self.fn is not None
        try:
            return self.fn()
        except Exception as exc:
            tb = traceback.extract_tb(exc.__traceback__)
            where = f" at {tb[-1].filename.rsplit('/', 1)[-1]}:{tb[-1].lineno}" if tb else ""
            return f"exactdp raised {type(exc).__name__}: {exc}{where}"

    def show(self) -> str:
        return f"{self.text} [checked against exactdp]"

    def latex(self) -> str:
        return _tex_text(self.text) + r" \emph{(checked against exactdp)}"


# -- comparisons with the package ----------------------------------------------------------------

def to_fraction(x: Any) -> Fraction:
    """An exact sympy Rational (or int) as a Fraction."""
    r = sp.Rational(x)
    return Fraction(int(r.p), int(r.q))


def enclosure_contains(enc: Any, expr: Any, *, digits: int = 50, min_digits: int = 20) -> str | None:
    """None when the exactdp Enclosure ``enc`` contains the value of the sympy constant ``expr``.

    ``expr`` is evaluated by sympy at ``digits`` significant digits, i.e. to an interval
    ``v (1 +- 10^-(digits-2))``; the enclosure must meet that interval and be at most
    ``10^-min_digits`` wide (relative), so a loose enclosure cannot pass.
    """
    expr = sp.sympify(expr)
    if getattr(enc, "is_infinite", False):
        return f"exactdp returned +inf, the derived value is {sp.N(expr, 20)}"
    v = sp.N(expr, digits + 5)
    if not v.is_number or v.is_infinite:
        return f"the derived expression {expr} is not a finite number"
    vq = to_fraction(sp.Rational(v))
    err = abs(vq) * Fraction(1, 10 ** (digits - 2)) + Fraction(1, 10 ** (digits + 10))
    lo, hi = Fraction(enc.lower), Fraction(enc.upper)
    if hi < vq - err or lo > vq + err:
        return f"exactdp gives [{enc.lower_str()}, {enc.upper_str()}], the derivation gives {sp.N(expr, 35)}"
    if vq != 0 and (hi - lo) > abs(vq) * Fraction(1, 10 ** min_digits):
        return f"exactdp's enclosure [{enc.lower_str()}, {enc.upper_str()}] is too wide to check"
    return None


def exact_equals(enc: Any, expr: Any) -> str | None:
    """None when the Enclosure is exact and equals the sympy rational ``expr``."""
    expr = sp.sympify(expr)
    if not expr.is_Rational:
        expr = sp.simplify(expr)
    if not expr.is_Rational:
        return f"the derived value {expr} is not rational"
    q = to_fraction(expr)
    if getattr(enc, "exact", None) is None:
        if enc.lower <= q <= enc.upper:
            return f"exactdp returns an enclosure [{enc.lower_str()}, {enc.upper_str()}] for the rational {q}, not the exact value"
        return f"exactdp gives [{enc.lower_str()}, {enc.upper_str()}], the derivation gives exactly {q}"
    if enc.exact != q:
        return f"exactdp gives exactly {enc.exact}, the derivation gives {q}"
    return None


# -- derivations ------------------------------------------------------------------------------

@dataclass
class Derivation:
    """A named statement, its source, and the steps that prove it (and tie it to exactdp)."""

    name: str
    statement: str
    source: str
    steps: list[Step] = field(default_factory=list)


@dataclass
class Outcome:
    name: str
    statement: str
    ok: bool
    failed_step: str | None = None
    reason: str | None = None
    results: list[tuple[Step, str | None]] = field(default_factory=list)

    def line(self) -> str:
        if self.ok:
            return f"PASS {self.name}: {self.statement}"
        return f"FAIL {self.name}: {self.failed_step}: {self.reason}"


def run_derivation(build: Callable[[], Derivation] | Derivation) -> Outcome:
    """Check every step of a derivation (all of them: a failing step does not hide later ones)."""
    try:
        d = build() if callable(build) else build
    except Exception as exc:
        name = getattr(build, "__name__", "?")
        return Outcome(name, "?", False, "building the derivation", f"{type(exc).__name__}: {exc}")
    out = Outcome(d.name, d.statement, True)
    if not d.steps:
        out.ok, out.failed_step, out.reason = False, "(no steps)", "a derivation must have steps"
        return out
    for step in d.steps:
        try:
            why = step.check()
        except Exception as exc:
            why = f"checking raised {type(exc).__name__}: {exc}"
        out.results.append((step, why))
        if why is not None and out.ok:
            out.ok, out.failed_step, out.reason = False, step.text, why
    return out


def _tex_text(s: str) -> str:
    """Plain text for LaTeX: special characters escaped, <=, >=, !=, <, > as math symbols."""
    for a, b in (("\\", r"\textbackslash{}"), ("&", r"\&"), ("%", r"\%"), ("$", r"\$"), ("#", r"\#"),
                 ("_", r"\_"), ("{", r"\{"), ("}", r"\}"), ("~", r"\~{}"), ("^", r"\^{}")):
        s = s.replace(a, b)
    return re.sub(r"<=|>=|!=|<|>", lambda m: _TEX_REL[m.group(0)], s)


_TEX_REL = {"<=": r"$\le$", ">=": r"$\ge$", "!=": r"$\ne$", "<": "$<$", ">": "$>$"}


@dataclass
class Unequal(Step):
    """``lhs != rhs``: sympy reduces ``lhs - rhs`` to a non-zero number (a counterexample)."""

    lhs: Any = None
    rhs: Any = None

    def check(self) -> str | None:
        d = sp.simplify(sp.sympify(self.lhs) - sp.sympify(self.rhs))
        if (d.is_Rational and d != 0) or (d.is_number and d.is_zero is False):
            return None
        return f"cannot show {self.lhs} != {self.rhs} (difference {d})"

    def show(self) -> str:
        return f"{self.text}: {self.lhs} != {self.rhs}"

    def latex(self) -> str:
        return (_tex_text(self.text) + r": \[" + sp.latex(sp.sympify(self.lhs)) + r" \ne "
                + sp.latex(sp.sympify(self.rhs)) + r"\]")


@dataclass
class Computed(Step):
    """A finite symbolic computation (e.g. a sum over all outputs, each term's sign certified);
    ``fn()`` returns None when every part of it is settled, else the first part that is not."""

    fn: Callable[[], str | None] | None = None

    def check(self) -> str | None:
        assert self.fn is not None
        return self.fn()
