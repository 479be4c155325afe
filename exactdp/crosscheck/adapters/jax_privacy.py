"""jax-privacy (Google DeepMind): the DP-SGD accounting of ``jax_privacy.accounting`` and its three calibrators.

See docs/peers/jax_privacy.md.  ``DpsgdTrainingAccountant(dp_accountant_config=PldAccountantConfig() or
RdpAccountantConfig()).compute_epsilon(num_updates, DpParams(...))`` wraps dp_accounting: under
``SamplingMethod.POISSON`` it composes ``PoissonSampledDpEvent(batch_size / float(num_samples),
GaussianDpEvent(noise_multiplier))`` (add/remove), under ``FIXED_BATCH_SIZE`` the same event of half the
noise multiplier, its stated reduction of a batch of ``batch_size`` of ``num_samples`` drawn without
replacement under replace-one, whose sensitivity is 2 clipping norms (docs/mathematics.md §9, Thm 9.3).
A case is handed over as a training run: ``num_samples`` and ``batch_size`` whose ratio is the case's q
exactly (:func:`batch_of`).  The calibrators ``calibrate_noise_multiplier``, ``calibrate_num_updates``
and ``calibrate_batch_size`` are judged by the claim "with the returned parameter the run is
(target eps, delta_g)-DP".  jax_privacy is imported only when :func:`apis` runs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from exactdp.crosscheck.adapters.base import Api, NotApplicable, Reported, Skipped, Unsupported
from exactdp.crosscheck.adapters.given import exact_value, require_mechanisms_or_calibration, to_float
from exactdp.crosscheck.cases import Case, NoPeerForm, mechanism_parts
from exactdp.model.composition import Composition
from exactdp.model.mechanisms import Gaussian, PoissonSampled, SampledWithoutReplacement

__all__ = ["Run", "apis", "batch_of", "run_of"]

#: the dataset size a case is handed over with when its sampling rate allows it (else q's denominator)
NUM_SAMPLES = 10**6


def batch_of(q: Fraction) -> tuple[int, int]:
    """(batch_size, num_samples) whose ratio is exactly ``q``: ``num_samples`` 10^6 where q 10^6 is whole,
    else q's denominator.

    >>> batch_of(Fraction(1, 100)), batch_of(Fraction(1)), batch_of(Fraction(1, 3))
    ((10000, 1000000), (1000000, 1000000), (1, 3))
    """
    n = NUM_SAMPLES if (q * NUM_SAMPLES).denominator == 1 else q.denominator
    return int(q * n), n


@dataclass(frozen=True)
class Run:
    """A case as a jax-privacy training run: ``noise_multiplier`` (the float handed over), ``batch_size``,
    ``num_samples``, ``num_updates``, and ``fixed`` (``SamplingMethod.FIXED_BATCH_SIZE``, replace-one)
    or Poisson sampling (add/remove)."""

    noise_multiplier: float  # float ok: the value handed to the library
    batch_size: int
    num_samples: int
    num_updates: int
    fixed: bool

    def __post_init__(self) -> None:
        if not 1 <= self.batch_size <= self.num_samples or self.num_updates < 1:
            raise NotApplicable(f"no training run: batch_size={self.batch_size}, num_samples={self.num_samples}, "
                                f"num_updates={self.num_updates}")

    def composition(self, noise_multiplier: float | None = None, batch_size: int | None = None,  # float ok
                    num_updates: int | None = None) -> Composition:
        """The exact composition the library accounts for this run (or with a calibrated parameter
        in place): its floats at their exact binary values, the sampling rate the float
        ``batch_size / float(num_samples)`` it computes."""
        nm = exact_value(float(self.noise_multiplier if noise_multiplier is None else noise_multiplier))  # float ok
        bs = self.batch_size if batch_size is None else batch_size
        t = self.num_updates if num_updates is None else num_updates
        m: Any
        if self.fixed:  # noise nm clipping norms, replace-one sensitivity 2 clipping norms
            m = Gaussian(nm, 2) if bs == self.num_samples else SampledWithoutReplacement(Gaussian(nm, 2), bs,
                                                                                          self.num_samples)
        else:
            q = exact_value(bs / float(self.num_samples))  # float ok: the library's own sampling rate
            m = Gaussian(nm) if q == 1 else PoissonSampled(Gaussian(nm), q)
        return Composition(((m, t),))


def run_of(case: Case) -> Run:
    """The training run of a case: a DP-SGD case (Poisson, add/remove; a plain Gaussian is the full
    batch), or an events case of a Gaussian in fixed batches (or the whole dataset) under replace-one.
    NotApplicable for a generic case or one of several mechanisms; Unsupported for an event
    jax-privacy has no form for.

    >>> wor = SampledWithoutReplacement(Gaussian(1), 60, 6000)
    >>> r = run_of(Case("c", (), "epsilon", Fraction(1, 10**5), (), False, ((wor, 3),), relation="replace-one"))
    >>> (r.noise_multiplier, r.batch_size, r.num_samples, r.fixed, str(r.composition()))
    (2.0, 60, 6000, True, '3 x gaussian:sigma=2,sensitivity=2,sample=60,of=6000')
    >>> r = run_of(Case("c", (), "epsilon", Fraction(1, 10**5), (), False,
    ...                 ((PoissonSampled(Gaussian(1), Fraction(1, 8)), 3),)))
    >>> (r.batch_size, r.num_samples, str(r.composition(num_updates=5)), str(r.composition(batch_size=10**6)))
    (125000, 1000000, '5 x gaussian:sigma=1,q=0.125', '3 x gaussian:sigma=1')
    """
    require_mechanisms_or_calibration(case)
    if len(case.mechanisms) != 1:
        raise NotApplicable("jax-privacy accounts one DP-SGD run (one subsampled Gaussian, repeated)")
    (m, k), = case.mechanisms
    if isinstance(m, SampledWithoutReplacement) or case.relation == "replace-one":
        inner = m.mechanism if isinstance(m, SampledWithoutReplacement) else m
        if type(inner) is Gaussian and inner.sigma is not None:  # noise nm, replace-one sensitivity 2 norms
            bs, n = (m.sample, m.of) if isinstance(m, SampledWithoutReplacement) else (NUM_SAMPLES, NUM_SAMPLES)
            return Run(to_float(2 * inner.sigma / inner.sensitivity), bs, n, k, True)
        if isinstance(m, PoissonSampled):
            raise Unsupported("SamplingMethod.POISSON is stated for add-or-remove and zero-out adjacency, "
                              "not replace-one")
        raise Unsupported(f"DpsgdTrainingAccountant accounts the subsampled Gaussian of DP-SGD only, not {m} "
                          f"under {case.relation}")
    try:
        (kind, sigma, q, count), = mechanism_parts(case)
    except NoPeerForm as exc:
        raise Unsupported(f"DpsgdTrainingAccountant accounts the subsampled Gaussian of DP-SGD only: {exc}") from None
    if kind != "gaussian":
        if "events" in case.tags:
            raise Unsupported(f"DpsgdTrainingAccountant accounts the subsampled Gaussian of DP-SGD only, not {m}")
        raise NotApplicable("jax-privacy accounts DP-SGD (a subsampled Gaussian)")
    bs, n = batch_of(Fraction(1) if q is None else q)
    return Run(to_float(sigma), bs, n, count, False)


def apis() -> list[Api]:
    """The APIs under test (imports the library)."""
    from jax_privacy import accounting as jpa

    def accountant(config: str) -> Any:
        cfg = jpa.PldAccountantConfig() if config == "pld" else jpa.RdpAccountantConfig()
        return jpa.DpsgdTrainingAccountant(dp_accountant_config=cfg)

    def method(run: Run) -> Any:
        return jpa.SamplingMethod.FIXED_BATCH_SIZE if run.fixed else jpa.SamplingMethod.POISSON

    def epsilon_with(config: str) -> Callable[[Case], Reported]:
        def run(case: Case) -> Reported:
            if case.is_calibration:
                raise NotApplicable("the calibration cases are the calibrators'")
            r = run_of(case)
            if case.query != "epsilon" or case.at == 0:
                raise NotApplicable("compute_epsilon answers eps at delta > 0")
            at = exact_value(to_float(case.at))
            params = jpa.DpParams(noise_multipliers=r.noise_multiplier, batch_size=r.batch_size,
                                  num_samples=r.num_samples, delta=to_float(at), sampling_method=method(r))
            eps = accountant(config).compute_epsilon(r.num_updates, params)  # a fresh accountant per call
            return Reported(eps, r.composition(), at,
                            f"DpsgdTrainingAccountant({type(params).__name__}(noise_multipliers={r.noise_multiplier!r}, "
                            f"batch_size={r.batch_size}, num_samples={r.num_samples}, sampling_method="
                            f"{method(r).name}), {config.upper()}).compute_epsilon({r.num_updates})")
        return run

    def calibration(case: Case, config: str, slow: bool) -> tuple[Run, float, float]:  # float ok: the library's
        if not case.is_calibration:
            raise NotApplicable("calibration cases only")
        if slow and config == "pld" and case.quick:
            raise NotApplicable("a PLD calibration of the steps or the batch size takes about 30 s: run in the "
                                "full sweep only")
        r = run_of(case)
        assert case.target is not None
        return r, to_float(case.target), to_float(case.at)

    def refusal(exc: ValueError) -> Skipped:
        # calibrate_num_updates / calibrate_batch_size refuse when one update or a batch of one is already
        # above the target: a refusal claims no privacy, so it is reported apart, never judged
        return Skipped(f"the calibrator refuses: {exc}")

    def claim(case: Case, comp: Composition, note: str) -> Reported:
        assert case.target is not None
        return Reported(to_float(case.target), comp, exact_value(to_float(case.at)),
                        f"{note}; the claim is (target eps, delta_g)-DP with it")

    def noise_with(config: str) -> Callable[[Case], Reported]:
        def run(case: Case) -> Reported:
            r, target, delta = calibration(case, config, False)
            nm = jpa.calibrate_noise_multiplier(target_epsilon=target, accountant=accountant(config),
                                                batch_sizes=r.batch_size, num_updates=r.num_updates,
                                                num_samples=r.num_samples, target_delta=delta)
            positive(nm, "noise multiplier")
            return claim(case, r.composition(noise_multiplier=nm),
                         f"returned noise multiplier {nm!r} (batch_size={r.batch_size}, num_samples={r.num_samples}, "
                         f"num_updates={r.num_updates}, {config.upper()})")
        return run

    def refused_if_too_large(call: Callable[[], Any]) -> Any:
        """The calibrator's answer; its "too large" ValueError (no parameter reaches the target) is a
        refusal, any other error stays an error."""
        try:
            return call()
        except ValueError as exc:
            if "too large" not in str(exc):
                raise
            raise refusal(exc) from None

    def updates_with(config: str) -> Callable[[Case], Reported]:
        def run(case: Case) -> Reported:
            r, target, delta = calibration(case, config, True)
            t = refused_if_too_large(lambda: jpa.calibrate_num_updates(
                target_epsilon=target, accountant=accountant(config), noise_multipliers=r.noise_multiplier,
                batch_sizes=r.batch_size, num_samples=r.num_samples, target_delta=delta))
            positive(t, "number of updates", whole=True)
            return claim(case, r.composition(num_updates=int(t)),
                         f"returned num_updates {t!r} (noise_multipliers={r.noise_multiplier!r}, "
                         f"batch_size={r.batch_size}, num_samples={r.num_samples}, {config.upper()})")
        return run

    def batch_with(config: str) -> Callable[[Case], Reported]:
        def run(case: Case) -> Reported:
            r, target, delta = calibration(case, config, True)
            bs = refused_if_too_large(lambda: jpa.calibrate_batch_size(
                target_epsilon=target, accountant=accountant(config), noise_multipliers=r.noise_multiplier,
                num_updates=r.num_updates, num_samples=r.num_samples, target_delta=delta))
            positive(bs, "batch size", whole=True)
            if bs > r.num_samples:
                raise ValueError(f"returned batch size {bs!r} is above num_samples={r.num_samples}")
            return claim(case, r.composition(batch_size=int(bs)),
                         f"returned batch_size {bs!r} (noise_multipliers={r.noise_multiplier!r}, "
                         f"num_updates={r.num_updates}, num_samples={r.num_samples}, {config.upper()})")
        return run

    out = []
    for config, label in (("pld", "PldAccountantConfig"), ("rdp", "RdpAccountantConfig")):
        out += [Api("jax_privacy", f"DpsgdTrainingAccountant({label}).compute_epsilon", epsilon_with(config)),
                Api("jax_privacy", f"calibrate_noise_multiplier({label})", noise_with(config)),
                Api("jax_privacy", f"calibrate_num_updates({label})", updates_with(config)),
                Api("jax_privacy", f"calibrate_batch_size({label})", batch_with(config))]
    return out


def positive(x: Any, what: str, whole: bool = False) -> None:
    """Raise ValueError (an ``error`` finding) unless ``x`` is a positive finite number (a whole one if
    ``whole``): a calibrator's answer that is not a parameter claims nothing."""
    import math

    ok = isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and x > 0  # float ok
    if not ok or (whole and int(x) != x):
        raise ValueError(f"returned {what} {x!r} is not a positive {'whole ' if whole else ''}number")
