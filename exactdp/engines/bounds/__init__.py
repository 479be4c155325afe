"""The closed-form composition bounds of docs/mathematics.md §4, each as a certified enclosure.

Every method has two directions, in the terms of :mod:`exactdp.api.methods`:

* ``<name>_delta(comp, eps_g, *, digits)`` -- the smallest **total** delta the bound certifies at
  ``eps_g``.  Every mechanism is (eps, 1)-DP, so the answer is capped at 1, and **1 means
  nothing certified** (no parameter value of the bound reaches ``eps_g``).
* ``<name>_epsilon(comp, delta_g, *, digits)`` -- the eps the bound certifies at total
  ``delta_g``; ``Enclosure.infinite()`` when the bound certifies none (e.g. the delta budget left
  after the bookkeeping, ``delta' = delta_g - sum delta_i``, is <= 0).

Each function evaluates its formula exactly as published (no minimum with another bound beyond
the minimum the formula itself contains).  Rational answers are exact; everything else is an Arb
ball turned into exact rational endpoints at rising precision.  Comparisons that decide a branch
(``sum eps_i <= eps_g``, ``delta~ <= 0``) are made exactly: a number ``r + sum c_j log q_j`` is
zero only if ``r == 0`` and ``prod q_j^c_j == 1`` (Lindemann: ``e^r`` is transcendental for a
rational ``r != 0``), which is checked in integers.  Elsewhere the formulas are continuous, and
``max(0, .)`` / ``min(1, .)`` are applied to balls, so an input exactly at a threshold is handled
without deciding it.

Every method accepts every composition; k equal mechanisms are one group with a count, so
``k = 10**15`` costs nothing (the mechanisms are never expanded).

One module per shape of bound: :mod:`~exactdp.engines.bounds.basic` (basic composition),
:mod:`~exactdp.engines.bounds.advanced` (the advanced-composition shape: DRV10, Steinke, the zCDP
route), :mod:`~exactdp.engines.bounds.kov15` (KOV15 Thm 3.4 / 3.5 closed forms) and
:mod:`~exactdp.engines.bounds.zcdp_tight` (the zCDP route with the tight conversion); the pieces
they share are in :mod:`~exactdp.engines.bounds.sums` (exact signs and Arb sums over a
composition's groups) and :mod:`~exactdp.engines.bounds.certified` (the clamped precision loop).
"""
