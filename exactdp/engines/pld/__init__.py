"""The certified PLD engine: loss models, discretised laws, fixed-point composition, queries (docs/pld.md)."""
