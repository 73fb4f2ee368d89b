"""The estimator's delay model fitted on real routed Vivado paths, and its uncertainty.

The constants live in `fitted_constants.py` beside this file (a generated module, so it is part of
the code a build's cache key covers), written by `python scripts/calibrate_timing.py --write` from
../shared/fixtures/vivado-routed-paths/; each one carries how many rows and designs it rests on,
and the module names the corpus files, the command and the validation. Nothing in it is set by
hand. What the model says (docs/timing_model.md):

    cell arc   = fitted mean Vivado delay of the arc       LUTs, flip-flops, MUXF, SRL, LUTRAM
               = prjxray arc (kabe.timing.cells) x ratio    CARRY4, DSP48E1, BRAM (keeps the
                                                            per-bit / per-configuration shape)
    net        = 0                                          dedicated (kabe.timing.delay_classes)
               = fitted mean                                slice logic -> FF D, fanout 1
               = intercept + per_doubling x log2(fanout)                every other net
                 + driver[class] + sink[group]
    setup      = fitted mean per endpoint pin group (else prjxray)
    clock      = fitted median of (clock skew - clock uncertainty) Vivado books on a path
    pressure   = a path estimated over its budget keeps max(floor, x^-k) of its routing
                 (kabe.timing.pressure: Vivado's timing-driven placement and routing)
    clock law  = at a budget B under the corpus's typical one, routing x min(1, e^a B^b), at least
                 the pressure floor (ClockLaw: placement pulls nets in harder for a tight clock)
    high fanout = a net of more than `knee` sinks takes per_doubling more per doubling above it,
                 up to its path's budget (HighFanout: Vivado leaves such a net long until it is critical)

and the band: a routed path's delay lies within logic + route x [lo, hi] for the nominal coverage
(`[tool.kabe] timing_band_coverage`, 80 %) of the paths of a new design: design-level conformal
calibration on held-out scores, one set of factors per path class and a wider one for a path
outside the data (kabe.timing.conformal; validated leaving whole designs out, kabe.timing.validation).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from kabe.timing.conformal import PathFeatures, path_class
from kabe.timing.delay_classes import arc_key, cell_class, fanout_law_net, net_class, setup_key
from kabe.timing.pressure import Pressure


@dataclass(frozen=True)
class Band:
    """Routing factors: a path's routed delay lies in logic + route x [lo, hi] (logic and route as
    estimated) for `coverage` of the paths of a new design (kabe.timing.conformal: design-level
    conformal, one set of factors per path class, a wider one for a path outside the data).
    Without classes (a band built by hand) every path gets [lo, hi]."""
    lo: float
    hi: float
    quantiles: tuple[float, float] = (0.10, 0.90)
    classes: dict = field(default_factory=dict, compare=False)
    outside: tuple[float, float] | None = None
    data: dict = field(default_factory=dict, compare=False)

    @property
    def coverage(self) -> float:
        return round(self.quantiles[1] - self.quantiles[0], 4)

    @classmethod
    def from_json(cls, b: dict) -> Band:
        out = b.get("outside")
        return cls(b["lo"], b["hi"], tuple(b.get("quantiles", (0.1, 0.9))), b.get("classes") or {},
                   (out["lo"], out["hi"]) if out else None, b.get("data") or {})

    def factors(self, f: PathFeatures | None = None) -> tuple[float, float, str, str]:
        """(lo, hi, class, why) for a path with features f (None: the pooled band)."""
        if f is None or not self.classes:
            return self.lo, self.hi, "pooled", "every path alike"
        why_out = self.outside_data(f)
        if why_out and self.outside is not None:
            return self.outside[0], self.outside[1], "outside-data", why_out
        name = path_class(f)
        c = self.classes.get(name)
        if c is None:
            return self.lo, self.hi, "pooled", "every path alike"
        return c["lo"], c["hi"], name, c["why"]

    def outside_data(self, f: PathFeatures) -> str | None:
        """Why a path lies outside what the band was calibrated on (None: inside)."""
        d = self.data
        if not d:
            return None
        why = []
        if f.levels > d.get("max_levels", 10 ** 9):
            why.append(f"{f.levels} logic levels, the calibration designs' paths had at most {d['max_levels']}")
        lo_req, hi_req = d.get("requirement_ns", (0.0, float("inf")))
        if not lo_req <= f.requirement_ns <= hi_req:
            why.append(f"a requirement of {f.requirement_ns:.3f} ns, the calibration designs' ran "
                       f"{lo_req:g} .. {hi_req:g} ns")
        return "; ".join(why) or None

    def delay_ns(self, logic_ns: float, route_ns: float, f: PathFeatures | None = None) -> tuple[float, float]:
        lo, hi, _, _ = self.factors(f)
        return logic_ns + route_ns * lo, logic_ns + route_ns * hi

    def to_json(self) -> dict:
        return {"lo": self.lo, "hi": self.hi, "quantiles": list(self.quantiles), "coverage": self.coverage,
                "classes": self.classes, "data": self.data,
                "outside": None if self.outside is None else {"lo": self.outside[0], "hi": self.outside[1]}}


@dataclass(frozen=True)
class ClockLaw:
    """How much shorter Vivado routes the nets of a design at a tight clock: routing x
    min(1, e^a x B^b) at a budget of B ns (requirement - setup + clock), b > 0. Fitted
    (kabe.timing.fit.fit_clock_law) across designs, one point per design: the log of the median
    held-out route factor of its paths within their budget against the log of their median budget,
    by Theil-Sen (the median of the pairwise slopes: one odd design does not tilt it). Capped at 1:
    a slow clock's longer nets are the band's (its slow-clock class), not the point estimate's,
    since the estimator's routing weights never exceed 1 (kabe.timing.sta.pressure_levels)."""
    a: float
    b: float
    designs: int = 0

    def factor(self, budget_ns: float) -> float:
        if budget_ns <= 0:
            return 1.0
        return min(1.0, math.exp(self.a + self.b * math.log(budget_ns)))

    @property
    def full_at_ns(self) -> float:
        """The budget from which routing is as the net model has it (factor 1)."""
        return math.exp(-self.a / self.b)

    def to_json(self) -> dict:
        return {"a": round(self.a, 4), "b": round(self.b, 4), "designs": self.designs,
                "full_at_ns": round(self.full_at_ns, 3),
                "meaning": "routing x min(1, e^a * budget_ns^b), at least the pressure floor "
                           "(budget = requirement - setup + clock)"}

    @classmethod
    def from_json(cls, d: dict | None) -> ClockLaw | None:
        if not d:
            return None
        return cls(float(d["a"]), float(d["b"]), int(d.get("designs", 0)))


@dataclass(frozen=True)
class HighFanout:
    """The fanout law's top end: a net of fanout F > knee takes per_doubling_ps x log2(F / knee)
    more, but only up to its path's budget. The net fit's data (the worst paths of 11 designs) has
    few nets of many sinks, so its log-linear law runs short there: Vivado spreads such a net's
    sinks over the die (reset and enable trees, 6-15 ns at fanout 400-2600 in the corpora). It
    does so while the path meets its budget; once the net is critical it replicates the driver and
    pulls the net in (on the held-out paths estimated over budget the term comes out near 0), so
    the term fills a path's slack at most (fill): it never turns a passing estimate into a failing
    one, nor moves a failing one. Fitted (kabe.timing.fit.fit_high_fanout) on held-out estimates
    of every calibration design, after pressure and the clock law, each design one unit: a
    calibration of the net model like those two."""
    knee: int
    per_doubling_ps: float
    paths: int = 0
    designs: int = 0

    def excess(self, fanout: int) -> float:
        """Doublings of fanout above the knee (0 at or below it)."""
        return max(0.0, math.log2(fanout / self.knee)) if fanout > self.knee else 0.0

    def ps(self, fanout: int) -> float:
        return self.per_doubling_ps * self.excess(fanout)

    @staticmethod
    def fill(without, with_term, budget):
        """A path's delay with the term: it lengthens the path up to its budget and no further, and
        a path already over its budget keeps its delay without it (scalars or numpy arrays)."""
        return np.maximum(without, np.minimum(with_term, budget))

    def to_json(self) -> dict:
        return {"knee": self.knee, "per_doubling_ps": round(self.per_doubling_ps, 1), "paths": self.paths,
                "designs": self.designs,
                "meaning": "a net of fanout F > knee: + per_doubling_ps x log2(F / knee) on top of the fanout law, "
                           "weighted as its path's routing, lengthening the path up to its budget and no further"}

    @classmethod
    def from_json(cls, d: dict | None) -> HighFanout | None:
        if not d:
            return None
        return cls(int(d["knee"]), float(d["per_doubling_ps"]), int(d.get("paths", 0)), int(d.get("designs", 0)))


@dataclass
class FittedModel:
    """The same interface as RoutingModel (net_ps, cell_ps, setup_ps, clock_ps, band,
    describe), so kabe.timing.sta takes either."""
    cells: dict = field(default_factory=dict)
    nets: dict = field(default_factory=dict)
    setup: dict = field(default_factory=dict)
    clock_ps_value: float = 0.0
    band: Band | None = None
    provenance: dict = field(default_factory=dict)
    pressure: Pressure | None = None
    clock_law: ClockLaw | None = None
    high_fanout: HighFanout | None = None

    @classmethod
    def from_json(cls, data: dict) -> FittedModel:
        b = data.get("band")
        return cls(cells=data["cells"], nets=data["nets"], setup=data.get("setup", {}),
                   clock_ps_value=float(data.get("clock", {}).get("value", 0.0)),
                   band=Band.from_json(b) if b else None,
                   provenance=data.get("provenance", {}), pressure=Pressure.from_json(data.get("pressure")),
                   clock_law=ClockLaw.from_json(data.get("clock_law")),
                   high_fanout=HighFanout.from_json(data.get("high_fanout")))

    # --- cells
    def cell_ps(self, cell_type: str, in_pin: str | None, out_pin: str | None, prjxray_ps: float) -> float:
        """The calibrated delay of one arc, given the prjxray value kabe.timing.cells has for it."""
        key = arc_key(cell_type, in_pin, out_pin)
        e = self.cells.get(key) or self.cells.get(f"{cell_class(cell_type)}:*")
        if e is None and key in ("LUTRAM:ADDR->O", "SRL:A->Q"):
            e = self.cells.get("LUT6:I->O")  # the address read of a LUTRAM/SRL is a LUT6's read path
        if e is None:
            return prjxray_ps
        return e["value"] if e["mode"] == "mean" else prjxray_ps * e["value"]

    # --- nets
    def net_ps(self, drv_type: str | None, drv_pin: str | None, sink_type: str | None, sink_pin: str | None,
               fanout: int) -> float:
        nc = net_class(drv_type, drv_pin, sink_type, sink_pin, fanout)
        if nc is None:
            return 0.0
        drv, snk, _bucket = nc
        n = self.nets
        if drv == "SLICE->FF":
            return n["slice_packed"]["value"]
        law = n["fanout_law"]
        d = law["intercept"]["value"] + law["per_doubling"]["value"] * math.log2(max(fanout, 1)) \
            + n["driver"].get(drv, {}).get("value", 0.0) \
            + n["sink"].get(snk, {}).get("value", 0.0)
        return max(d, 0.0)

    def high_fanout_ps(self, drv_type: str | None, drv_pin: str | None, sink_type: str | None,
                       sink_pin: str | None, fanout: int) -> float:
        """The high-fanout term of one net (HighFanout): 0 without one, at or below its knee, and
        on a dedicated or slice-packed connection (the nets the fanout law does not time)."""
        if self.high_fanout is None or fanout <= self.high_fanout.knee:
            return 0.0
        return self.high_fanout.ps(fanout) if fanout_law_net(drv_type, drv_pin, sink_type, sink_pin, fanout) else 0.0

    # --- timing pressure (kabe.timing.pressure)
    def pressure_factor(self, delay_ps: float, budget_ps: float) -> float:
        """The share of its estimated routing a path of `delay_ps` against a budget of
        `budget_ps` (requirement - setup + clock) comes out at after Vivado's timing-driven
        placement and routing: 1 for a path that fits, times the clock law's factor for its
        budget, never under the pressure floor (the lowest weight kabe.timing.sta times a net at)."""
        if self.pressure is None:
            return 1.0
        g = self.pressure.factor(delay_ps / budget_ps if budget_ps > 0 else float("inf"))
        if self.clock_law is not None:
            g = max(self.pressure.floor, g * self.clock_law.factor(budget_ps / 1000.0))
        return g

    # --- endpoint and clock
    def setup_ps(self, cell_type: str, pin: str, prjxray_ps: float) -> float:
        e = self.setup.get(setup_key(cell_type, pin))
        return prjxray_ps if e is None else e["value"]

    @property
    def clock_ps(self) -> float:
        """What the clock adds to the required time (skew - uncertainty; negative: it takes)."""
        return self.clock_ps_value

    @property
    def clock_uncertainty_ps(self) -> float:  # the name the text report and RoutingModel use
        return -self.clock_ps_value

    def describe(self) -> str:
        """One line for the text report: which model, fitted on what."""
        b = "" if self.band is None else (f"; {self.band.coverage:.0%} band (design-level conformal): "
                                          f"route x {self.band.lo:.3f} .. {self.band.hi:.3f} pooled")
        if self.pressure is not None:
            b += f"; timing pressure: route x max({self.pressure.floor:g}, x^-{self.pressure.k:g}) over budget"
            if self.clock_law is not None:
                b += f"; clock law: route x min(1, {math.exp(self.clock_law.a):.3f} B^{self.clock_law.b:.3f})"
        if self.high_fanout is not None:
            b += (f"; a net over {self.high_fanout.knee} sinks: +{self.high_fanout.per_doubling_ps:.0f} ps "
                  f"per doubling above it, up to the path's budget")
        return (f"fitted on routed Vivado paths ({self.provenance.get('summary', 'no provenance')}; "
                f"kabe/timing/fitted_constants.py){b}")


@lru_cache(maxsize=1)
def load() -> FittedModel:
    """The committed model (cached)."""
    from kabe.timing.fitted_constants import MODEL
    return FittedModel.from_json(MODEL)
