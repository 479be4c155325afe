"""The mechanism spec syntax of the command line and the JSON lists: ``KIND:key=value,...``.

>>> parse_mechanism_spec("gaussian:sigma=0.8,q=0.125,count=1000")
(PoissonSampled(mechanism=Gaussian(sigma=Fraction(4, 5), sensitivity=Fraction(1, 1)), q=Fraction(1, 8)), 1000)
"""

from __future__ import annotations

import re

from exactdp.core.errors import InvalidParameterError
from exactdp.core.numbers import parse_eps, parse_k, parse_rational
from exactdp.model.generic import ApproxDP
from exactdp.model.mechanisms import (
    AnyMechanism,
    DiscreteGaussian,
    DiscreteLaplace,
    Gaussian,
    Laplace,
    MixtureOfGaussians,
    NonPrivate,
    PoissonSampled,
    RandomizedResponse,
    SampledWithoutReplacement,
    normalise_mechanism,
    parse_direction,
    parse_relation,
    with_direction,
)
from exactdp.model.replacement import SampledWithReplacement
from exactdp.model.special import SpecialRandomizedResponse
from exactdp.model.truncation import TruncatedSubsampledGaussian

__all__ = ["MECHANISM_KINDS", "ONE_OF", "SYNONYMS", "WITH_REPLACEMENT_KINDS", "parse_mechanism_spec", "split_list"]


#: the sampling and relation keys every kind takes (docs/mathematics.md §9)
_SAMPLING = ("relation", "sample", "of", "with-replacement", "direction")

MECHANISM_KINDS: dict[str, tuple[str, ...]] = {
    "gaussian": ("sigma", "sensitivity", "q", "count", "mu2", "rho") + _SAMPLING,
    "laplace": ("scale", "sensitivity", "q", "count") + _SAMPLING,
    "rr": ("eps", "categories", "q", "count") + _SAMPLING,
    "approx": ("eps", "delta", "q", "count") + _SAMPLING,
    "dlaplace": ("noise", "sensitivity", "q", "count") + _SAMPLING,
    "dgaussian": ("sigma", "sensitivity", "q", "count") + _SAMPLING,
    "mog": ("sigma", "sensitivities", "probs", "q", "count") + _SAMPLING,
}
MECHANISM_KINDS["gaussian"] += ("truncate",)  # the truncated subsampled Gaussian (docs/mathematics.md §9)
for _kind in MECHANISM_KINDS:  # dp_accounting's bounded-records reading (a Gaussian's only: others refused by name)
    MECHANISM_KINDS[_kind] += ("bounded",)

#: the keys of which a kind needs exactly one (every other kind needs its first key)
ONE_OF: dict[str, tuple[str, ...]] = {"gaussian": ("sigma", "mu2", "rho"), "mog": ("sigma",)}

#: Opacus's and dp_accounting's names, read as exactdp's (docs/interop.md): ``noise_multiplier`` is
#: sigma (scale for a Laplace: dp_accounting's LaplaceDpEvent; a discrete Gaussian's sigma), ``sample_rate`` and
#: ``sampling_probability`` are q, ``steps`` is count
SYNONYMS: dict[str, dict[str, str]] = {
    "gaussian": {"noise_multiplier": "sigma"},
    "mog": {"noise_multiplier": "sigma", "standard_deviation": "sigma", "sampling_probs": "probs"},
    "laplace": {"noise_multiplier": "scale"},
    "dlaplace": {"noise_parameter": "noise"},
    "dgaussian": {"noise_multiplier": "sigma"},
    "*": {"sample_rate": "q", "sampling_probability": "q", "steps": "count", "sample_size": "sample",
          "source_dataset_size": "of", "neighboring_relation": "relation", "with_replacement": "with-replacement"},
}
SYNONYMS["gaussian"].update({"truncated_batch_size": "truncate", "dataset_size": "of"})  # dp_accounting's names

#: the kinds that take ``with-replacement=true`` (noisy sums: docs/mathematics.md §9, Theorem 9.6)
WITH_REPLACEMENT_KINDS = ("gaussian", "laplace", "dlaplace", "dgaussian")

_SPEC_RE = re.compile(r"^\s*(?P<kind>[A-Za-z][A-Za-z_-]*)\s*:(?P<rest>.*)$")


_ITEM_RE = re.compile(r"\s*(?:\(([^()]*)\)|([^/()]*?))\s*(?:/|$)")


def split_list(text: str, spec: str = "") -> list[str]:
    """The items of a ``/``-separated list; an item that is itself a fraction is written in parentheses.

    >>> split_list("0/0.5/1"), split_list("(1/3)/(2/3)")
    (['0', '0.5', '1'], ['1/3', '2/3'])
    """
    out, pos = [], 0
    while pos < len(text):
        m = _ITEM_RE.match(text, pos)
        item = None if m is None else (m.group(1) if m.group(1) is not None else m.group(2))
        if m is None or not item or m.end() == pos:
            raise InvalidParameterError(f"mechanism={spec!r}: {text!r} must be a list such as 0/0.5/1 (a fraction "
                                        "in parentheses: (1/3)/(2/3))")
        out.append(item.strip())
        pos = m.end()
        if text.endswith("/") and pos == len(text):
            raise InvalidParameterError(f"mechanism={spec!r}: {text!r} ends with '/'")
    return out


def parse_mechanism_spec(spec: str) -> tuple[AnyMechanism, int]:
    """``(mechanism, count)`` from a spec such as ``gaussian:sigma=1.1,q=0.01,count=1000``.

    Kinds: ``gaussian:sigma=S[,sensitivity=D][,q=Q][,count=N]``,
    ``laplace:scale=B[,sensitivity=D][,q=Q][,count=N]``, ``rr:eps=E[,categories=K][,q=Q][,count=N]``,
    ``approx:eps=E[,delta=D][,q=Q][,count=N]``, ``dlaplace:noise=A[,sensitivity=D][,q=Q][,count=N]``
    (pmf proportional to e^{-A|x|} on the integers; ``noise_parameter`` is dp_accounting's name),
    ``dgaussian:sigma=S[,sensitivity=D][,q=Q][,count=N]`` (pmf proportional to e^{-x^2/(2 S^2)}),
    ``mog:sigma=S,sensitivities=S1/S2/...,probs=P1/P2/...[,q=Q][,count=N]`` (an item that is a
    fraction in parentheses: ``probs=(1/3)/(2/3)``); a Gaussian may be given
    by ``mu2=M`` or the zCDP ``rho=R`` instead of sigma (mu^2 = 2 rho).  Defaults: sensitivity 1,
    q 1, count 1.  Degenerate values are answered in their normal form (``sigma=0``: no noise,
    ``approx:eps=0,delta=1``; ``q=0``: ``(0, 0)``), docs/mathematics.md §7.13.
    On any kind: ``relation=add-remove|replace-one`` (default add-remove; a mechanism's own pair is
    the same under both, its sensitivity stated for the relation in use), ``sample=M,of=N`` (a
    fixed batch of M out of N records without replacement: replace-one), ``with-replacement=true``
    (a Gaussian, Laplace, discrete Laplace or discrete Gaussian sum's batch of M draws with replacement:
    Theorem 9.6), ``direction=max|remove|add`` (one order of a Poisson
    subsample under add/remove or of a mixture of Gaussians; symmetric mechanisms ignore it); docs/mathematics.md §9.  A Gaussian
    also takes ``q=Q,truncate=B,of=N`` (dp_accounting's truncated subsampled Gaussian, sigma the noise
    multiplier: Theorem 9.4; ``truncated_batch_size`` and ``dataset_size`` are its names), and ``rr``
    takes ``relation=replace-special`` (dp_accounting's special record: Theorem 9.5).

    >>> parse_mechanism_spec("laplace:scale=10,count=100")
    (Laplace(scale=Fraction(10, 1), sensitivity=Fraction(1, 1)), 100)
    >>> parse_mechanism_spec("gaussian:noise_multiplier=1.1,sample_rate=0.01,steps=1000")  # Opacus's names
    (PoissonSampled(mechanism=Gaussian(sigma=Fraction(11, 10), sensitivity=Fraction(1, 1)), q=Fraction(1, 100)), 1000)
    >>> parse_mechanism_spec("dlaplace:noise_parameter=0.5,sensitivity=2,count=3")
    (DiscreteLaplace(noise=Fraction(1, 2), sensitivity=2), 3)
    >>> parse_mechanism_spec("gaussian:rho=1/8,count=4")
    (Gaussian(sigma=Fraction(2, 1), sensitivity=Fraction(1, 1)), 4)
    >>> str(parse_mechanism_spec("mog:sigma=2,sensitivities=1/2,probs=0.9/0.1")[0])
    'mog:sigma=2,sensitivities=1/2,probs=0.9/0.1'
    >>> parse_mechanism_spec("gaussian:sigma=1,sample=600,of=60000,relation=replace-one")[0].gamma
    Fraction(1, 100)
    >>> parse_mechanism_spec("gaussian:sigma=1,foo=2")
    Traceback (most recent call last):
    ...
    exactdp.core.errors.InvalidParameterError: mechanism='gaussian:sigma=1,foo=2': unknown key 'foo'; gaussian takes sigma, sensitivity, q, count, mu2, rho, relation, sample, of, with-replacement, direction, truncate, bounded
    """
    if not isinstance(spec, str):
        raise InvalidParameterError(f"mechanism={spec!r} must be a string such as 'gaussian:sigma=1'")
    m = _SPEC_RE.match(spec)
    if m is None:
        raise InvalidParameterError(f"mechanism={spec!r} must look like 'KIND:key=value,...' (kinds: "
                                    f"{', '.join(MECHANISM_KINDS)})")
    kind = m.group("kind").lower()
    if kind not in MECHANISM_KINDS:
        raise InvalidParameterError(f"mechanism={spec!r}: kind {kind!r} must be one of {', '.join(MECHANISM_KINDS)}")
    allowed = MECHANISM_KINDS[kind]
    vals: dict[str, str] = {}
    for part in m.group("rest").split(","):
        part = part.strip()
        if not part:
            raise InvalidParameterError(f"mechanism={spec!r}: an empty 'key=value' item")
        if "=" not in part:
            raise InvalidParameterError(f"mechanism={spec!r}: {part!r} must be 'key=value'")
        key, _, value = (s.strip() for s in part.partition("="))
        key = key.lower()
        key = SYNONYMS.get(kind, {}).get(key, SYNONYMS["*"].get(key, key))
        if key not in allowed:
            raise InvalidParameterError(f"mechanism={spec!r}: unknown key {key!r}; {kind} takes {', '.join(allowed)}")
        if key in vals:
            raise InvalidParameterError(f"mechanism={spec!r}: {key!r} given twice")
        if not value:
            raise InvalidParameterError(f"mechanism={spec!r}: {key!r} has no value")
        vals[key] = value
    one_of = ONE_OF.get(kind, allowed[:1])
    given = [k for k in one_of if k in vals]
    if len(given) != 1:
        need = " or ".join(f"{k}=..." for k in one_of)
        raise InvalidParameterError(f"mechanism={spec!r}: {kind} needs {'exactly one of ' if given else ''}{need}")
    if kind == "mog" and not {"sensitivities", "probs"} <= set(vals):
        raise InvalidParameterError(f"mechanism={spec!r}: mog needs sensitivities=S1/S2/... and probs=P1/P2/...")
    count = parse_k(vals.pop("count", "1"), "count")
    bounded = _bounded(spec, kind, vals)
    if "truncate" in vals:
        return _truncated(spec, vals), count
    q = vals.pop("q", None)
    rel_given = "relation" in vals
    relation = parse_relation(vals.pop("relation", "add-remove"), f"mechanism={spec!r}: relation",
                              special=kind == "rr" and q is None and "sample" not in vals)
    if relation == "replace-special":  # randomized response against the special record's uniform output
        if "with-replacement" in vals:
            raise InvalidParameterError(f"mechanism={spec!r}: relation=replace-special takes no sampling")
        mech0 = SpecialRandomizedResponse(vals["eps"], vals.get("categories", "2"),
                                          parse_direction(vals.pop("direction", "max"), f"mechanism={spec!r}: direction"))
        return normalise_mechanism(mech0), count
    sample, of = vals.pop("sample", None), vals.pop("of", None)
    wr = vals.pop("with-replacement", None)
    if wr is not None and wr.strip().lower() not in ("true", "1", "yes", "false", "0", "no"):
        raise InvalidParameterError(f"mechanism={spec!r}: with-replacement={wr!r} must be true or false")
    with_repl = wr is not None and wr.strip().lower() not in ("false", "0", "no")
    if with_repl and (kind not in WITH_REPLACEMENT_KINDS or sample is None or q is not None):
        raise InvalidParameterError(f"mechanism={spec!r}: with-replacement=true is modelled for a Gaussian, Laplace, "
                                    "discrete Laplace or discrete Gaussian sum on a batch of sample=M draws from of=N "
                                    "records (no q=), under relation=replace-one (docs/mathematics.md §9, Theorem "
                                    "9.6; for any other mechanism a record drawn j times is a group of j); use "
                                    "sample=M,of=N without replacement or q=Q otherwise")
    if (sample is None) != (of is None):
        raise InvalidParameterError(f"mechanism={spec!r}: a fixed-size batch needs both sample=M and of=N")
    if sample is not None and q is not None:
        raise InvalidParameterError(f"mechanism={spec!r}: give one sampling scheme, q=Q (Poisson) or sample=M,of=N")
    if sample is not None and relation != "replace-one" and rel_given:
        raise InvalidParameterError(f"mechanism={spec!r}: a fixed-size batch (sample=M,of=N) is accounted for under "
                                    "relation=replace-one only (add/remove changes the dataset size)")
    mech: AnyMechanism
    if kind == "gaussian":
        if "sigma" in vals:
            mech = Gaussian(vals["sigma"], vals.get("sensitivity", "1"))
        elif "sensitivity" in vals:
            raise InvalidParameterError(f"mechanism={spec!r}: a Gaussian given by {given[0]} takes no sensitivity")
        else:
            mech = Gaussian(mu2=vals.get("mu2"), rho=vals.get("rho"))
    elif kind == "mog":
        mech = MixtureOfGaussians(vals["sigma"], split_list(vals["sensitivities"], spec),
                                  split_list(vals["probs"], spec))
    elif kind == "laplace":
        mech = Laplace(vals["scale"], vals.get("sensitivity", "1"))
    elif kind == "rr":
        mech = normalise_mechanism(RandomizedResponse(vals["eps"], vals.get("categories", "2")))
    elif kind == "dlaplace":
        mech = DiscreteLaplace(vals["noise"], vals.get("sensitivity", "1"))
    elif kind == "dgaussian":
        mech = DiscreteGaussian(vals["sigma"], vals.get("sensitivity", "1"))
    elif parse_rational(vals.get("delta", "0"), "delta") == 1:
        parse_eps(vals["eps"], "eps")
        mech = NonPrivate()  # delta = 1: the pair without noise
    else:
        mech = ApproxDP(vals["eps"], vals.get("delta", "0"))
    direction = parse_direction(vals.pop("direction", "max"), f"mechanism={spec!r}: direction")
    if q is not None:
        mech = PoissonSampled(mech, q, relation, direction, bounded)
    if sample is not None and of is not None:
        if with_repl:  # a symmetric pair: no direction applies
            return normalise_mechanism(SampledWithReplacement(mech, sample, of)), count
        mech = SampledWithoutReplacement(normalise_mechanism(mech), sample, of)
    if q is None and direction != "max":
        mech = with_direction(normalise_mechanism(mech), direction)  # a mixture's one order, or unchanged
    return normalise_mechanism(mech), count


def _bounded(spec: str, kind: str, vals: dict[str, str]) -> bool:
    """``bounded=true``: records within half the replace-one sensitivity (dp_accounting's reading of a
    Poisson-subsampled Gaussian or Laplace mechanism under replace-one, docs/mathematics.md §9, Theorems
    9.8-9.9); refused by name on any other mechanism, relation or sampling scheme."""
    text = vals.pop("bounded", None)
    if text is None:
        return False
    t = text.strip().lower()
    if t in ("false", "0", "no"):
        return False
    if t not in ("true", "1", "yes"):
        raise InvalidParameterError(f"mechanism={spec!r}: bounded={text!r} must be true or false")
    rel = parse_relation(vals.get("relation", "add-remove"), f"mechanism={spec!r}: relation", special=True)
    if (kind not in ("gaussian", "laplace") or "q" not in vals or rel != "replace-one"
            or {"truncate", "sample", "with-replacement"} & set(vals)):
        raise InvalidParameterError(f"mechanism={spec!r}: bounded=true (records within half the replace-one "
                                    "sensitivity, dp_accounting's reading: docs/mathematics.md §9, Theorems 9.8-9.9) "
                                    "is modelled for a Poisson-subsampled Gaussian or Laplace mechanism only: "
                                    "gaussian:sigma=S,q=Q,relation=replace-one,bounded=true or laplace:scale=B,q=Q,"
                                    "relation=replace-one,bounded=true")
    return True


def _truncated(spec: str, vals: dict[str, str]) -> AnyMechanism:
    """``gaussian:sigma=S,q=Q,truncate=B,of=N[,relation=R][,direction=D]``: the truncated subsampled
    Gaussian (:mod:`exactdp.model.truncation`); the keys it cannot take are named."""
    for bad, why in (("sample", "a fixed batch (sample=M) and a truncated Poisson batch are two sampling schemes"),
                     ("with-replacement", "a truncated Poisson batch is drawn without replacement"),
                     ("sensitivity", "its sensitivity is one record's bound, 1 (sigma is the noise multiplier)"),
                     ("mu2", "it is given by sigma=S"), ("rho", "it is given by sigma=S")):
        if bad in vals:
            raise InvalidParameterError(f"mechanism={spec!r}: truncate=B takes no {bad}= ({why})")
    for need in ("q", "of"):
        if need not in vals:
            raise InvalidParameterError(f"mechanism={spec!r}: truncate=B needs {need}=... (a Poisson rate q and the "
                                        "dataset size of)")
    relation = parse_relation(vals.get("relation", "add-remove"), f"mechanism={spec!r}: relation")
    direction = parse_direction(vals.get("direction", "max"), f"mechanism={spec!r}: direction")
    return normalise_mechanism(TruncatedSubsampledGaussian(vals["sigma"], vals["q"], vals["truncate"], vals["of"],
                                                           relation, direction))
