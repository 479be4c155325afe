"""Benchmark: certified RDP curves of the Poisson-subsampled Gaussian (issue 28 §1), exactdp beside
dp_accounting's float ``_compute_rdp_poisson_subsampled_gaussian`` and Opacus's ``compute_rdp`` when
they are installed, in the same run.

    python benchmarks/bench_rdp.py [--quick]

For each (sigma, q) it times exactdp's whole curve (``rdp_curve``, in process) at
* the integer orders 2..256 to 30 digits (remove: the binomial sums; max: the larger direction), and
* the 65 fractional orders 1.25, 1.5, ..., 10.5, 12, 14, ..., 64 to 20 digits (remove and max),
then the peers' float curves at the same orders (the remove direction), and how far each peer's
float lies from the certified enclosure: ``inside``, ``+x`` (above by x relative) or ``-x`` (below
the certified lower end by x relative).  ``--quick``: sigma = 1, q = 0.01 only.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from fractions import Fraction

from exactdp.api.rdp import rdp_curve
from exactdp.core.enclosure import Enclosure

INTEGER_ORDERS = [Fraction(a) for a in range(2, 257)]
FRACTIONAL_ORDERS = [Fraction(5, 4) + Fraction(k, 4) for k in range(38)] + [Fraction(a) for a in range(12, 65, 2)]
CASES = [("1", "0.01"), ("0.5", "0.01"), ("4", "0.001"), ("0.8", "0.125")]


def _peers() -> list[tuple[str, Callable[[float, float, Sequence[float]], Sequence[float]]]]:
    out = []
    try:
        from dp_accounting.rdp import rdp_privacy_accountant as dpa

        out.append(("dp_accounting", lambda q, s, orders: list(dpa._compute_rdp_poisson_subsampled_gaussian(q, s, orders))))
    except ImportError:
        print("dp_accounting: not installed")
    try:
        from opacus.accountants.analysis import rdp as opacus_rdp

        out.append(("opacus", lambda q, s, orders: list(opacus_rdp.compute_rdp(q=q, noise_multiplier=s, steps=1,
                                                                               orders=orders))))
    except ImportError:
        print("opacus: not installed")
    return out


def _judge(x: float, e: Enclosure) -> str:
    if x != x or x in (float("inf"), float("-inf")):  # float ok: a peer's non-finite answer
        return f"non-finite ({x})"
    v = Fraction(x)
    if e.lower <= v <= e.upper:
        return "inside"
    if v > e.upper:
        return f"+{float((v - e.upper) / e.upper):.1e}"
    return f"-{float((e.lower - v) / e.lower):.1e}"


def _worst(values: Sequence[float], curve: Sequence[Enclosure]) -> str:
    """The peer's farthest order from the certified curve (below the lower end first)."""
    verdicts = [_judge(x, e) for x, e in zip(values, curve)]
    below = [v for v in verdicts if v.startswith("-")]
    above = [v for v in verdicts if v.startswith("+")]
    bad = sum(v.startswith("non-finite") for v in verdicts)
    if bad:
        return f"{bad} non-finite; " + _worst([x for x, v in zip(values, verdicts) if not v.startswith("non")],
                                               [e for e, v in zip(curve, verdicts) if not v.startswith("non")])
    if below:
        return f"{len(below)} below, worst {max(below, key=lambda s: float(s[1:]))}"
    if above:
        return f"{len(above)} above, worst {max(above, key=lambda s: float(s[1:]))}"
    return "all inside"


def main(argv: Sequence[str]) -> int:
    cases = CASES[:1] if "--quick" in argv else CASES
    peers = _peers()
    for sigma, q in cases:
        spec = f"gaussian:sigma={sigma},q={q}"
        print(f"\n{spec}")
        for name, orders, digits in (("integer 2..256", INTEGER_ORDERS, 30), ("fractional x65", FRACTIONAL_ORDERS, 20)):
            curves = {}
            for direction in ("remove", "max"):
                t = time.perf_counter()
                curves[direction] = rdp_curve(spec, orders, digits=digits, direction=direction)
                print(f"  exactdp {name:15} {digits} digits {direction:6}: {time.perf_counter() - t:7.3f} s   "
                      f"order {orders[-1]}: {curves[direction][-1]}")
            for peer, f in peers:
                floats = [float(a) for a in orders]  # float ok: the peers' own inputs
                t = time.perf_counter()
                try:
                    values = f(float(q), float(sigma), floats)  # float ok: the peers' own inputs
                except Exception as e:  # a peer's failure is reported, not raised
                    print(f"  {peer:7} {name:15}: raised {type(e).__name__}: {e}")
                    continue
                print(f"  {peer:7} {name:15} float  remove: {time.perf_counter() - t:7.3f} s   "
                      f"{_worst(values, curves['remove'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
