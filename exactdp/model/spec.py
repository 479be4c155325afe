"""The mechanism spec syntax of the command line and the JSON lists: ``KIND:key=value,...``.

>>> parse_mechanism_spec("gaussian:sigma=0.8,q=0.125,count=1000")
(PoissonSampled(mechanism=Gaussian(sigma=Fraction(4, 5), sensitivity=Fraction(1, 1)), q=Fraction(1, 8)), 1000)
"""

from __future__ import annotations

import re

from exactdp.core.errors import InvalidParameterError
from exactdp.core.numbers import parse_k
from exactdp.model.generic import ApproxDP
from exactdp.model.mechanisms import (
    AnyMechanism,
    Gaussian,
    Laplace,
    PoissonSampled,
    RandomizedResponse,
    SampledWithoutReplacement,
    normalise_mechanism,
    parse_direction,
    parse_relation,
)

__all__ = ["MECHANISM_KINDS", "SYNONYMS", "parse_mechanism_spec"]


MECHANISM_KINDS: dict[str, tuple[str, ...]] = {
    "gaussian": ("sigma", "sensitivity", "q", "count", "relation", "sample", "of", "with-replacement", "direction"),
    "laplace": ("scale", "sensitivity", "q", "count", "relation", "sample", "of", "with-replacement", "direction"),
    "rr": ("eps", "categories", "q", "count", "relation", "sample", "of", "with-replacement", "direction"),
    "approx": ("eps", "delta", "q", "count", "relation", "sample", "of", "with-replacement", "direction"),
}

#: Opacus's and dp_accounting's names, read as exactdp's (docs/interop.md): ``noise_multiplier`` is
#: sigma (scale for a Laplace: dp_accounting's LaplaceDpEvent), ``sample_rate`` and
#: ``sampling_probability`` are q, ``steps`` is count
SYNONYMS: dict[str, dict[str, str]] = {
    "gaussian": {"noise_multiplier": "sigma"},
    "laplace": {"noise_multiplier": "scale"},
    "*": {"sample_rate": "q", "sampling_probability": "q", "steps": "count", "sample_size": "sample",
          "source_dataset_size": "of", "neighboring_relation": "relation"},
}

_SPEC_RE = re.compile(r"^\s*(?P<kind>[A-Za-z][A-Za-z_-]*)\s*:(?P<rest>.*)$")


def parse_mechanism_spec(spec: str) -> tuple[AnyMechanism, int]:
    """``(mechanism, count)`` from a spec such as ``gaussian:sigma=1.1,q=0.01,count=1000``.

    Kinds: ``gaussian:sigma=S[,sensitivity=D][,q=Q][,count=N]``,
    ``laplace:scale=B[,sensitivity=D][,q=Q][,count=N]``, ``rr:eps=E[,categories=K][,q=Q][,count=N]``,
    ``approx:eps=E[,delta=D][,q=Q][,count=N]``.  Defaults: sensitivity 1, q 1, count 1.
    On any kind: ``relation=add-remove|replace-one`` (default add-remove; a mechanism's own pair is
    the same under both, its sensitivity stated for the relation in use), ``sample=M,of=N`` (a
    fixed batch of M out of N records without replacement: replace-one), ``with-replacement=true``
    (refused: no published pair is modelled), ``direction=max|remove|add`` (one order of a Poisson
    subsample under add/remove; symmetric mechanisms ignore it); docs/mathematics.md §9.

    >>> parse_mechanism_spec("laplace:scale=10,count=100")
    (Laplace(scale=Fraction(10, 1), sensitivity=Fraction(1, 1)), 100)
    >>> parse_mechanism_spec("gaussian:noise_multiplier=1.1,sample_rate=0.01,steps=1000")  # Opacus's names
    (PoissonSampled(mechanism=Gaussian(sigma=Fraction(11, 10), sensitivity=Fraction(1, 1)), q=Fraction(1, 100)), 1000)
    >>> parse_mechanism_spec("gaussian:sigma=1,sample=600,of=60000,relation=replace-one")[0].gamma
    Fraction(1, 100)
    >>> parse_mechanism_spec("gaussian:sigma=1,foo=2")
    Traceback (most recent call last):
    ...
    exactdp.core.errors.InvalidParameterError: mechanism='gaussian:sigma=1,foo=2': unknown key 'foo'; gaussian takes sigma, sensitivity, q, count, relation, sample, of, with-replacement, direction
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
    required = allowed[0]
    if required not in vals:
        raise InvalidParameterError(f"mechanism={spec!r}: {kind} needs {required}=...")
    count = parse_k(vals.pop("count", "1"), "count")
    q = vals.pop("q", None)
    rel_given = "relation" in vals
    relation = parse_relation(vals.pop("relation", "add-remove"), f"mechanism={spec!r}: relation")
    sample, of = vals.pop("sample", None), vals.pop("of", None)
    wr = vals.pop("with-replacement", None)
    if wr is not None and wr.strip().lower() not in ("false", "0", "no"):
        raise InvalidParameterError(f"mechanism={spec!r}: with-replacement=true is not modelled (no dominating pair "
                                    "of sampling with replacement is implemented); use sample=M,of=N without "
                                    "replacement or q=Q")
    if (sample is None) != (of is None):
        raise InvalidParameterError(f"mechanism={spec!r}: a fixed-size batch needs both sample=M and of=N")
    if sample is not None and q is not None:
        raise InvalidParameterError(f"mechanism={spec!r}: give one sampling scheme, q=Q (Poisson) or sample=M,of=N")
    if sample is not None and relation != "replace-one" and rel_given:
        raise InvalidParameterError(f"mechanism={spec!r}: a fixed-size batch (sample=M,of=N) is accounted for under "
                                    "relation=replace-one only (add/remove changes the dataset size)")
    mech: AnyMechanism
    if kind == "gaussian":
        mech = Gaussian(vals["sigma"], vals.get("sensitivity", "1"))
    elif kind == "laplace":
        mech = Laplace(vals["scale"], vals.get("sensitivity", "1"))
    elif kind == "rr":
        mech = normalise_mechanism(RandomizedResponse(vals["eps"], vals.get("categories", "2")))
    else:
        mech = ApproxDP(vals["eps"], vals.get("delta", "0"))
    direction = parse_direction(vals.pop("direction", "max"), f"mechanism={spec!r}: direction")
    if q is not None:
        mech = normalise_mechanism(PoissonSampled(mech, q, relation, direction))
    if sample is not None and of is not None:
        mech = normalise_mechanism(SampledWithoutReplacement(mech, sample, of))
    return mech, count
