"""exactdp: exact and certified composition of differential-privacy guarantees.

>>> from exactdp import Composition
>>> c = Composition.homogeneous("0.1", "0.001", 30)
>>> c.k, str(c)
(30, '30 x (0.1, 0.001)-DP')
"""

from __future__ import annotations

from exactdp.core.version import __version__
from exactdp.model.composition import Composition
from exactdp.model.generic import Mechanism
from exactdp.core.errors import ExactDPError, InexactInputError, InvalidParameterError, PrecisionError
from exactdp.api.methods import METHODS, delta, epsilon, method_names
from exactdp.core.numbers import DEFAULT_DIGITS, INF, ExactReal, from_float, parse_delta, parse_eps
from exactdp.core.enclosure import Enclosure
from exactdp.api.optimal import is_private, optimal_delta, optimal_epsilon
from exactdp.calibrate import (Calibration, calibrate_eps, calibrate_k, calibrate_laplace_scale, calibrate_q,
                        calibrate_scale, calibrate_sigma)

__all__ = [
    "__version__",
    "Composition",
    "Mechanism",
    "ExactReal",
    "Enclosure",
    "INF",
    "DEFAULT_DIGITS",
    "from_float",
    "parse_eps",
    "parse_delta",
    "delta",
    "epsilon",
    "optimal_delta",
    "optimal_epsilon",
    "is_private",
    "calibrate_eps",
    "calibrate_scale",
    "calibrate_k",
    "calibrate_sigma",
    "calibrate_q",
    "calibrate_laplace_scale",
    "Calibration",
    "METHODS",
    "method_names",
    "ExactDPError",
    "InvalidParameterError",
    "InexactInputError",
    "PrecisionError",
]
