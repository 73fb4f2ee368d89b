"""Timing pressure: Vivado shortens the routing of a path that does not fit its clock.

Vivado's placer and router are timing-driven: a path that would miss its requirement gets its
cells pulled together and its nets onto faster wires, until it fits or until nothing more is
gained. In the calibration corpus this shows within designs (docs/timing_model.md): paths the
model estimates over their budget came out with less routing than estimated (LiteX: x1.05 ->
0.90, x1.4 -> 0.55; AES at 7 ns: x1.1 -> 0.83), while paths with slack to spare did not.

The model, per path, with x = estimated data path delay / budget (budget = requirement - setup
+ clock, i.e. the delay at which the slack is zero):

    routing x g(x),   g(x) = 1                      x <= 1 (nothing to gain)
                      g(x) = max(floor, x ** -k)    x > 1

k is how hard Vivado pushes, floor how far it can get. Both are fitted (`fit`) on routed paths,
within designs (each design at its own pace, kabe.timing.fit), by a plain grid search: two
numbers, no solver. A k above 1 lets a path estimated a little over its budget come out just
inside it (what Vivado does to designs that close timing); the floor keeps a path far over its
budget failing (a 9-level path 0.5 ns short after Vivado's best stays a failure).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

K_GRID = tuple(round(0.1 * i, 1) for i in range(0, 11))          # 0 .. 1: never turns a failing path into a passing one
FLOOR_GRID = tuple(round(0.4 + 0.02 * i, 2) for i in range(0, 31))  # 0.40 .. 1.00


@dataclass(frozen=True)
class Pressure:
    k: float
    floor: float
    paths: int = 0     # paths of the fit that were over their budget (x > 1)
    designs: int = 0   # ... and the designs they came from

    def factor(self, x: float) -> float:
        """What routing on a path `x` times its budget comes out at, as a share of the estimate."""
        if x <= 1.0:
            return 1.0
        return max(self.floor, x ** -self.k)

    def to_json(self) -> dict:
        return {"k": self.k, "floor": self.floor, "paths_over_budget": self.paths, "designs": self.designs,
                "meaning": "routing x max(floor, x ** -k) on a path estimated at x > 1 times its budget "
                           "(requirement - setup + clock); 1 at x <= 1"}

    @classmethod
    def from_json(cls, d: dict | None) -> Pressure | None:
        if not d:
            return None
        return cls(float(d["k"]), float(d["floor"]), int(d.get("paths_over_budget", 0)), int(d.get("designs", 0)))


NONE = Pressure(0.0, 1.0)  # no pressure: routing as estimated


def fit(points: list[tuple[float, float, float, float, str]]) -> Pressure:
    """(x, logic, route, routed delay, design) per path -> the (k, floor) whose delays
    logic + route x g(x) are closest to the routed ones in log terms, each design weighing the
    same. Paths at x <= 1 do not depend on (k, floor); they are left to the net fit."""
    over = [p for p in points if p[0] > 1.0 and p[2] > 0]
    if len({p[4] for p in over}) < 2:
        return NONE  # one design cannot tell pressure from its own pace
    x = np.array([p[0] for p in over])
    logic = np.array([p[1] for p in over])
    route = np.array([p[2] for p in over])
    routed = np.array([p[3] for p in over])
    n: dict[str, int] = {}
    for p in over:
        n[p[4]] = n.get(p[4], 0) + 1
    w = np.array([1.0 / n[p[4]] for p in over])
    best = None
    for k in K_GRID:
        g_k = x ** -k
        for floor in FLOOR_GRID:
            pred = logic + route * np.maximum(floor, g_k)
            loss = float((w * np.log(pred / routed) ** 2).sum())
            if best is None or loss < best[0] - 1e-12:
                best = (loss, k, floor)
    return Pressure(best[1], best[2], len(over), len(n))
