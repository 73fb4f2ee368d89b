"""The hand-set routing model the estimator used before its calibration on routed paths, kept as the
small, fully predictable model the estimator's unit tests (tests/timing/test_estimator.py) check
exact answers against. The open flow uses the fitted model (kabe.timing.fitted).

    route(net -> sink) = 0                                  dedicated path (kabe.timing.delay_classes)
                       = BASE + FANOUT * log2(fanout)       general fabric net
                         (+ HARD_BLOCK if the driver or the sink is a BRAM/DSP site)

Cell arcs and setup times pass through unchanged (the prjxray numbers of kabe.timing.cells).
The numbers (350 ps, 150 ps per fanout doubling, 300 ps) were set by hand against one measured
path; docs/timing_model.md keeps their history and how they compare with the fitted model.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from kabe.timing.delay_classes import dedicated, slice_packed

HARD_BLOCKS = ("RAMB18E1", "RAMB36E1", "DSP48E1")


@dataclass(frozen=True)
class RoutingModel:
    base_ps: float = 350.0
    fanout_ps_per_doubling: float = 150.0
    hard_block_ps: float = 300.0
    clock_uncertainty_ps: float = 0.0  # pre-route: skew and jitter unknown; Vivado adds ~0.1 ns

    def net_ps(self, drv_type: str, drv_port: str, sink_type: str, sink_port: str, fanout: int) -> float:
        if dedicated(drv_type, drv_port, sink_type, sink_port, fanout):
            return 0.0
        if slice_packed(drv_type, sink_type, sink_port, fanout):
            return 0.0
        d = self.base_ps + self.fanout_ps_per_doubling * math.log2(max(fanout, 1))
        if drv_type in HARD_BLOCKS or sink_type in HARD_BLOCKS:
            d += self.hard_block_ps
        return d

    def cell_ps(self, cell_type: str, in_pin: str | None, out_pin: str | None, prjxray_ps: float) -> float:
        return prjxray_ps

    def setup_ps(self, cell_type: str, pin: str, prjxray_ps: float) -> float:
        return prjxray_ps

    band = None

    def pressure_factor(self, delay_ps: float, budget_ps: float) -> float:  # no timing pressure
        return 1.0

    @property
    def clock_ps(self) -> float:  # what the clock adds to the required time (kabe.timing.fitted's name)
        return -self.clock_uncertainty_ps

    def describe(self) -> str:
        return (f"hand-set: base_ps={self.base_ps:g} fanout_ps_per_doubling={self.fanout_ps_per_doubling:g} "
                f"hard_block_ps={self.hard_block_ps:g} clock_uncertainty_ps={self.clock_uncertainty_ps:g}")

    def to_json(self) -> dict:
        return asdict(self)
