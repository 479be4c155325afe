"""A reported Gaussian-DP mu judged against the certified GDP mu of the composition (docs/kit.md §8).

An accountant that reports "mu-GDP" claims f >= G_mu for the tightest trade-off function f of the
composition; the smallest such mu is ``gdp_mu`` of :func:`exactdp.api.tradeoff.tradeoff`
(docs/tradeoff.md §5), so a reported mu is **sound iff mu >= gdp_mu**.  For DP-SGD (a composition of
Gaussian shifts) gdp_mu is sqrt(k)/sigma exactly, so the central-limit mu of Dong, Roth and Su (an
approximation) is certified unsound.

Verdicts, decided exactly against the enclosure of gdp_mu: ``sound`` (mu >= its upper end, not more
than :data:`~exactdp.testing.judge.LOOSE_REL` above it), ``loose`` (certified more than 1 % above it),
``unsound-fp`` (below its lower end by at most :data:`~exactdp.testing.judge.FP_ULPS` ulps of the
reported float), ``unsound`` (below it by more), ``undecided`` (inside the enclosure; never counted as
sound: where some step has no Gaussian bound, the upper end is +inf and every finite claim above the
lower end is undecided).

>>> judge_gdp_mu(0.41, composition="gaussian:sigma=1,q=0.01,count=1000").verdict
'unsound'
>>> judge_gdp_mu("31.63", composition="gaussian:sigma=1,q=0.01,count=1000").verdict
'sound'
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from exactdp.core.enclosure import Enclosure
from exactdp.core.numbers import INF, format_fraction
from exactdp.engines.gdp import gdp_mu, shifts
from exactdp.model.composition import Composition
from exactdp.testing.assertions import UndecidedClaimError, UnsoundClaimError
from exactdp.testing.judge import FP_ULPS, LOOSE_REL, ulp_of_claim
from exactdp.testing.oracle import InvalidClaimError, exact_of_reported, kit_composition, kit_seconds, short_repr

__all__ = ["GDP_VERDICTS", "GdpJudgement", "assert_gdp_mu_sound", "judge_gdp_mu"]

#: every verdict a GDP judgement carries
GDP_VERDICTS = ("sound", "loose", "unsound-fp", "unsound", "undecided")
#: the digits gdp_mu is computed to
_DIGITS = 20


@dataclass(frozen=True)
class GdpJudgement:
    """The exact verdict on one reported mu (module docstring); ``mu`` the certified enclosure of gdp_mu."""

    verdict: str
    composition: Composition
    claim: Fraction
    mu: Enclosure

    @property
    def sound(self) -> bool:
        """True for ``sound`` and ``loose``."""
        return self.verdict in ("sound", "loose")

    def describe(self) -> str:
        """One line: the composition, the reported mu, the certified gdp_mu, the verdict."""
        c = format_fraction(self.claim)
        c = c if len(c) <= 30 else f"~{float(self.claim)!r}"  # float ok: display only
        s = f"composition {self.composition}: reported mu = {c}, certified GDP mu in {self.mu} ({self.mu.algorithm})"
        return s + {
            "unsound": " -> UNSOUND: below the certified GDP mu (a test beats G_mu at some alpha)",
            "unsound-fp": f" -> UNSOUND at floating-point level (within {FP_ULPS} ulps of the reported value)",
            "loose": " -> sound but LOOSE, more than 1% above the certified GDP mu",
            "undecided": " -> UNDECIDED: inside the certified enclosure of the GDP mu",
        }.get(self.verdict, " -> sound")


def judge_gdp_mu(reported_mu: Any, *, composition: Any, max_seconds: Any = None, exact_floats: bool | None = None,
                 relation: Any = None) -> GdpJudgement:
    """The exact verdict on a reported mu as a GDP mu of ``composition`` (anything the kit reads,
    docs/kit.md §1); ``max_seconds`` bounds the PLD engine where it gives the lower end (default 10 s)."""
    claim = exact_of_reported(reported_mu, "reported mu")
    if isinstance(claim, float) or claim < 0:  # +inf claims nothing; a negative mu is no GDP parameter
        raise InvalidClaimError(f"reported mu={short_repr(reported_mu)} must be a finite number >= 0", reported_mu)
    comp = kit_composition(composition, exact_floats, relation)
    s = shifts(comp)
    if s.tight:  # Theorem 5.1: no engine needed
        mu = gdp_mu(s, Fraction(0), _DIGITS)
    else:
        from exactdp.api.tradeoff import tradeoff

        # the PLD engine gives the lower end: beta itself is not needed to many digits
        mu = tradeoff(comp, [Fraction(1, 2)], digits=4, max_seconds=kit_seconds(max_seconds)).gdp_mu
    lo, hi = mu.lower, mu.upper
    if claim < lo:
        fp = isinstance(reported_mu, float) and lo != INF and claim >= lo - FP_ULPS * ulp_of_claim(claim)
        verdict = "unsound-fp" if fp else "unsound"
    elif hi != INF and claim >= hi:
        verdict = "loose" if claim > hi * (1 + LOOSE_REL) else "sound"
    else:
        verdict = "undecided"
    return GdpJudgement(verdict, comp, claim, mu)


def assert_gdp_mu_sound(reported_mu: Any, *, composition: Any, max_seconds: Any = None,
                        exact_floats: bool | None = None, relation: Any = None) -> GdpJudgement:
    """Assert that ``composition`` is ``reported_mu``-GDP (docs/kit.md §8): fails with
    :class:`~exactdp.testing.assertions.UnsoundClaimError` below the certified GDP mu, with
    :class:`~exactdp.testing.assertions.UndecidedClaimError` inside its enclosure.

    >>> assert_gdp_mu_sound(2, composition="gaussian:sigma=1/2,q=0.1").verdict
    'sound'
    """
    v = judge_gdp_mu(reported_mu, composition=composition, max_seconds=max_seconds, exact_floats=exact_floats,
                     relation=relation)
    if v.sound:
        return v
    if v.verdict == "undecided":
        raise UndecidedClaimError(v)
    raise UnsoundClaimError(v)
