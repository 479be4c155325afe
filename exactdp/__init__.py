"""exactdp: exact and certified composition of differential-privacy guarantees.

>>> from exactdp import Composition
>>> c = Composition.homogeneous("0.1", "0.001", 30)
>>> c.k, str(c)
(30, '30 x (0.1, 0.001)-DP')
"""

from __future__ import annotations

from exactdp.api.accountant import Accountant
from exactdp.api.methods import METHODS, delta, epsilon, method_names
from exactdp.api.optimal import is_private, optimal_delta, optimal_epsilon
from exactdp.api.rdp import rdp_curve
from exactdp.api.tradeoff import Tradeoff, tradeoff, true_positive_rates
from exactdp.calibrate import (
    Calibration,
    calibrate_eps,
    calibrate_k,
    calibrate_laplace_scale,
    calibrate_q,
    calibrate_scale,
    calibrate_sigma,
    get_noise_multiplier,
)
from exactdp.calibrate.certsearch import InfeasibleTargetError
from exactdp.core.enclosure import Enclosure
from exactdp.core.errors import (
    ExactDPError,
    InexactInputError,
    InvalidParameterError,
    MemoryBoundError,
    MissingExtraError,
    PrecisionError,
    TimeBudgetError,
)
from exactdp.core.numbers import DEFAULT_DIGITS, INF, ExactReal, from_float, parse_delta, parse_eps
from exactdp.core.version import __version__
from exactdp.model.composition import Composition
from exactdp.model.dp_event import from_accountant, from_dp_event, to_dp_event
from exactdp.model.generic import ApproxDP, Mechanism, PureDP
from exactdp.model.mechanisms import (
    DiscreteGaussian,
    DiscreteLaplace,
    Gaussian,
    Laplace,
    MixtureOfGaussians,
    NonPrivate,
    PoissonSampled,
    RandomizedResponse,
    SampledWithoutReplacement,
)
from exactdp.model.replacement import SampledWithReplacement
from exactdp.model.special import SpecialRandomizedResponse
from exactdp.model.truncation import TruncatedSubsampledGaussian

__all__ = [
    "DEFAULT_DIGITS",
    "INF",
    "METHODS",
    "Accountant",
    "ApproxDP",
    "Calibration",
    "Composition",
    "DiscreteGaussian",
    "DiscreteLaplace",
    "Enclosure",
    "ExactDPError",
    "ExactReal",
    "Gaussian",
    "InexactInputError",
    "InfeasibleTargetError",
    "InvalidParameterError",
    "Laplace",
    "Mechanism",
    "MemoryBoundError",
    "MissingExtraError",
    "MixtureOfGaussians",
    "NonPrivate",
    "PoissonSampled",
    "PrecisionError",
    "PureDP",
    "RandomizedResponse",
    "SampledWithReplacement",
    "SampledWithoutReplacement",
    "SpecialRandomizedResponse",
    "TimeBudgetError",
    "Tradeoff",
    "TruncatedSubsampledGaussian",
    "__version__",
    "calibrate_eps",
    "calibrate_k",
    "calibrate_laplace_scale",
    "calibrate_q",
    "calibrate_scale",
    "calibrate_sigma",
    "delta",
    "epsilon",
    "from_accountant",
    "from_dp_event",
    "from_float",
    "get_noise_multiplier",
    "is_private",
    "method_names",
    "optimal_delta",
    "optimal_epsilon",
    "parse_delta",
    "parse_eps",
    "rdp_curve",
    "to_dp_event",
    "tradeoff",
    "true_positive_rates",
]
