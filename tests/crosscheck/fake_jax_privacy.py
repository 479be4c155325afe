"""A stand-in for ``jax_privacy.accounting`` (its names and call signatures as in jax-privacy 2.0.0), whose
answers a test chooses: the cross-check's jax-privacy adapter runs against it where JAX is not installed.

:func:`install` puts the modules ``jax_privacy`` and ``jax_privacy.accounting`` in ``sys.modules`` (through
pytest's ``monkeypatch``, undone after the test) and returns the :class:`Fake` that records every call.
"""

from __future__ import annotations

import dataclasses
import enum
import sys
import types
from collections.abc import Callable
from typing import Any


class SamplingMethod(enum.Enum):
    POISSON = enum.auto()
    FIXED_BATCH_SIZE = enum.auto()


@dataclasses.dataclass(kw_only=True, slots=True)
class PldAccountantConfig:
    value_discretization_interval: float = 1e-4


@dataclasses.dataclass(kw_only=True, slots=True)
class RdpAccountantConfig:
    orders: Any = None


@dataclasses.dataclass(frozen=True, kw_only=True)
class DpParams:
    noise_multipliers: Any
    num_samples: int
    delta: float
    batch_size: int
    sampling_method: SamplingMethod = SamplingMethod.POISSON


@dataclasses.dataclass
class Fake:
    """What the stand-in answers: ``epsilon(num_updates, params)`` for ``compute_epsilon``, and the values
    the three calibrators return (a callable of their keyword arguments); ``calls`` records each call
    as (name, arguments)."""

    epsilon: Callable[[int, DpParams], float] = lambda t, p: float("inf")
    noise_multiplier: Callable[..., Any] = lambda **kw: 1.0
    num_updates: Callable[..., Any] = lambda **kw: 1
    batch_size: Callable[..., Any] = lambda **kw: 1
    calls: list[tuple[str, dict[str, Any]]] = dataclasses.field(default_factory=list)

    def module(self) -> types.ModuleType:
        fake = self

        class DpsgdTrainingAccountant:
            def __init__(self, dp_accountant_config: Any) -> None:
                self.config = dp_accountant_config

            def compute_epsilon(self, num_updates: int, dp_params: DpParams, allow_approximate_cache: bool = False
                                ) -> float:
                fake.calls.append(("compute_epsilon", {"num_updates": num_updates, "params": dp_params,
                                                       "config": type(self.config).__name__}))
                return fake.epsilon(num_updates, dp_params)

        def calibrator(name: str, answer: Callable[..., Any]) -> Callable[..., Any]:
            def run(**kw: Any) -> Any:
                fake.calls.append((name, kw))
                return answer(**kw)
            return run

        mod = types.ModuleType("jax_privacy.accounting")
        for obj in (SamplingMethod, PldAccountantConfig, RdpAccountantConfig, DpParams, DpsgdTrainingAccountant):
            setattr(mod, obj.__name__, obj)
        mod.calibrate_noise_multiplier = calibrator("calibrate_noise_multiplier",  # type: ignore[attr-defined]
                                                    lambda **kw: fake.noise_multiplier(**kw))
        mod.calibrate_num_updates = calibrator("calibrate_num_updates",  # type: ignore[attr-defined]
                                               lambda **kw: fake.num_updates(**kw))
        mod.calibrate_batch_size = calibrator("calibrate_batch_size",  # type: ignore[attr-defined]
                                              lambda **kw: fake.batch_size(**kw))
        return mod


def install(monkeypatch: Any, fake: Fake) -> Fake:
    """Put the stand-in in ``sys.modules`` for the test (monkeypatch undoes it)."""
    acc = fake.module()
    root = types.ModuleType("jax_privacy")
    root.accounting = acc  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "jax_privacy", root)
    monkeypatch.setitem(sys.modules, "jax_privacy.accounting", acc)
    return fake
