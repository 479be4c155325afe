"""TensorFlow Privacy: ``compute_dp_sgd_privacy``.

See docs/peers/tf_privacy.md.  tensorflow_privacy is imported only when :func:`apis` runs.
"""

from __future__ import annotations

from exactdp.crosscheck.adapters.base import Api, CurveApi, NotApplicable, Reported, ReportedCurve
from exactdp.crosscheck.adapters.given import (
    curve_direction,
    curve_parts,
    dpsgd_parameters,
    exact_value,
    given_composition,
    parts_of,
    require_mechanisms,
    to_float,
)
from exactdp.crosscheck.cases import Case

__all__ = ["apis", "curves"]


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


#: the orders TF Privacy's DP-SGD analysis uses (compute_dp_sgd_privacy_lib)
TF_ORDERS = [1 + x / 10.0 for x in range(1, 100)] + list(range(11, 64)) + [128, 256, 512]  # float ok: its grid


def curves() -> list[CurveApi]:
    """The RDP curve of TF Privacy's ``rdp_accountant.compute_rdp`` and its ``get_privacy_spent`` (the
    module exists in the releases before the move to dp_accounting; imports the library)."""
    from tensorflow_privacy.privacy.analysis import rdp_accountant

    def run(case: Case) -> ReportedCurve:
        parts = curve_parts(case)
        sigma, q, steps = dpsgd_parameters(case)
        rdp = rdp_accountant.compute_rdp(q, sigma, steps, TF_ORDERS)
        eps, at = None, None
        if case.query == "epsilon" and case.at != 0:
            at = exact_value(to_float(case.at))
            eps = rdp_accountant.get_privacy_spent(TF_ORDERS, rdp, target_delta=to_float(at))[0]
        return ReportedCurve(tuple(TF_ORDERS), tuple(rdp), given_composition(parts), curve_direction(parts), eps, at,
                             "rdp_accountant.compute_rdp(q, noise_multiplier, steps, orders); get_privacy_spent")

    return [CurveApi("tf_privacy", "rdp_accountant.compute_rdp", run)]
