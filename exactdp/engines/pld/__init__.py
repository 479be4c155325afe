"""The certified PLD engine (docs/pld.md): loss models, discretised laws and their discretisation, queries,
fixed-point composition, the plan, the builds, the refinement loops, the single-step shortcuts, and its
public API (:mod:`exactdp.engines.pld.engine`)."""
