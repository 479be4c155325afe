"""Cross-check of other libraries' DP accountants against exactdp's certified optimum.

``exactdp crosscheck`` (see :mod:`exactdp.cli.crosscheck`) runs the sweep of
:mod:`exactdp.crosscheck.cases` through the adapters of :mod:`exactdp.crosscheck.adapters`
(dp_accounting, prv_accountant, autodp, OpenDP; each skipped when not installed) and reports
each answer as ``sound``, ``unsound`` or ``error`` (:mod:`exactdp.crosscheck.report`).
Peer libraries are imported only when their adapter runs.
"""

from __future__ import annotations

__all__: list[str] = []
