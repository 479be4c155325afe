"""TensorFlow Privacy: ``compute_dp_sgd_privacy``.

See docs/peers/tf_privacy.md.  tensorflow_privacy is imported only when :func:`apis` runs.
"""

from __future__ import annotations

from exactdp.crosscheck.adapters.base import Api, NotApplicable, Reported
from exactdp.crosscheck.adapters.given import (
    dpsgd_parameters,
    exact_value,
    given_composition,
    parts_of,
    require_mechanisms,
    to_float,
)
from exactdp.crosscheck.cases import Case

__all__ = ["apis"]


def apis() -> list[Api]:
    """The APIs under test (imports the library)."""
    from tensorflow_privacy.privacy.analysis import compute_dp_sgd_privacy_lib as lib

    def run(case: Case) -> Reported:
        require_mechanisms(case)
        sigma, q, steps = dpsgd_parameters(case)
        if case.query != "epsilon" or case.at == 0 or q >= 1.0:
            raise NotApplicable("compute_dp_sgd_privacy answers eps of DP-SGD at delta > 0")
        # n examples, batch size q n, epochs = steps q: the library's own parameterisation
        n = 10**6
        batch = round(q * n)
        if batch < 1 or batch / n != q or (steps * batch) % n:
            raise NotApplicable("the sampling rate and steps are not a whole batch size and number of epochs here")
        epochs = steps * batch // n
        eps, _ = lib.compute_dp_sgd_privacy(n, batch, sigma, epochs, to_float(case.at))
        at = exact_value(to_float(case.at))
        return Reported(eps, given_composition(parts_of(case)), at,
                        f"compute_dp_sgd_privacy(n={n}, batch_size={batch}, "
                        f"noise_multiplier={sigma!r}, epochs={epochs}, delta)")

    return [Api("tf_privacy", "compute_dp_sgd_privacy_lib.compute_dp_sgd_privacy", run)]
