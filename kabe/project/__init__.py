"""The project's facts: its settings ([tool.kabe]), designs, constraints, HLS specs, cores
(FuseSoC resolution, core files, targets) and the flows as data."""
