"""Adapters: how each peer library is asked a :class:`~exactdp.crosscheck.cases.Case`.

An adapter's API turns a case into the library's own calls and returns a :class:`Reported`: the
library's claimed upper bound (a float, taken at its exact binary value) together with the exact
composition and query point the library was *actually* given.  Floats handed to a library are
converted back exactly (``Fraction(float)``), so a value rounded on the way in is judged against
the mechanism the library really saw, never blamed on our rounding.  A randomized-response event
with parameter p is the exact pair of a log(...)-DP mechanism (e.g. dp_accounting's
``RandomizedResponseDpEvent(p, 2)`` is eps = log(2/p - 1) exactly), so its eps is an exact
``ExactReal.log``.  Peer libraries are imported only inside the adapters.

The rooms: :mod:`~exactdp.crosscheck.adapters.base` (the types), :mod:`~exactdp.crosscheck.adapters.given`
(what a library is given, exactly), one module per peer library, and here the registry :data:`ADAPTERS`.
"""

from __future__ import annotations

from exactdp.crosscheck.adapters import autodp, dp_accounting, jax_privacy, opacus, opendp, prv_accountant, tf_privacy
from exactdp.crosscheck.adapters.base import (
    Adapter,
    Api,
    CurveApi,
    NotApplicable,
    Reported,
    ReportedCurve,
    Skipped,
    Unsupported,
)
from exactdp.crosscheck.adapters.given import Part

__all__ = ["ADAPTERS", "Adapter", "Api", "CurveApi", "NotApplicable", "Part", "Reported", "ReportedCurve", "Skipped",
           "Unsupported", "adapter_names", "get_adapter"]

ADAPTERS: dict[str, Adapter] = {
    a.library: a
    for a in [
        Adapter("dp_accounting", "dp_accounting", dp_accounting.apis, "dp-accounting", curves=dp_accounting.curves),
        Adapter("prv_accountant", "prv_accountant", prv_accountant.apis, "prv-accountant"),
        Adapter("autodp", "autodp", autodp.apis, "autodp", curves=autodp.curves),
        Adapter("opendp", "opendp", opendp.apis, "opendp"),
        Adapter("opacus", "opacus", opacus.apis, "opacus",
                install="pip install 'torch==2.13.0+cpu' && pip install 'exactdp[opacus]' (the CPU build of torch first)",
                curves=opacus.curves),
        Adapter("tf_privacy", "tensorflow_privacy", tf_privacy.apis, "tensorflow-privacy",
                install="not a dependency of exactdp: tensorflow-privacy 0.9.0 installs on Python 3.11 but pulls "
                        "TensorFlow (a 2.4 GB environment) and pins dp-accounting 0.4.3 and numpy < 2, which "
                        "conflicts with the other peers; pip install tensorflow-privacy in an environment of its own",
                curves=tf_privacy.curves),
        Adapter("jax_privacy", "jax_privacy.accounting", jax_privacy.apis, "jax-privacy",
                install="pip install 'exactdp[jax-privacy]' (pulls JAX, a large download; not installed by CI)"),
    ]
}


def adapter_names() -> list[str]:
    """The names of the peer libraries, in the order the cross-check runs them."""
    return list(ADAPTERS)


def get_adapter(name: str) -> Adapter:
    """The adapter of library ``name`` (``-`` and ``_`` alike, any case); a KeyError names the choices."""
    key = name.replace("-", "_").lower()
    if key not in ADAPTERS:
        raise KeyError(f"library={name!r} must be one of {', '.join(ADAPTERS)}")
    return ADAPTERS[key]
