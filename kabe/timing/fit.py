"""Fit the estimator's delay model (kabe.timing.fitted) on calibration samples, and predict a
sample's delay with a model: the two halves of the calibration, with no file I/O.

The model form is fixed and small (kabe/timing/fitted.py); the fit computes means and one small
least-squares problem, each constant with the number of rows and designs behind it:

* cell arcs: the mean of Vivado's delay per arc key (LUT, FF, MUXF, SRL, LUTRAM), or the ratio
  sum(Vivado) / sum(prjxray) per arc key (CARRY4, DSP48E1, BRAM), which keeps the per-bit and
  per-configuration shape of the prjxray arcs. A key with fewer than MIN_ROWS rows falls back to
  its class (`LUT:*`), a class with too few to the prjxray value.
* nets, one row per distinct net (a report's ten worst paths of a group share most nets): 0 for
  dedicated connections; the mean of slice-packed ones; the rest
  (intercept + per_doubling x log2(fanout) + driver[class] + sink[group]) x pace[design] by
  alternating least squares. The fanout law has two numbers where the first fit had one per fanout
  bucket (seven): the buckets, made non-decreasing by pooling, came out flat over 3-8 and over
  9-64 sinks (the pooled 9-16 bucket 1.16 ns), which the 70 designs the net fit never sees read
  as 13 % too short at 5-8 sinks and 24-31 % too long at 9-16 (docs/timing_model.md);
  the slope is kept >= 0 (a net with more sinks is never faster). The driver and sink terms are pulled towards 0
  (ridge worth RIDGE rows) so a class seen a few times moves the estimate only a little; a
  design's pace is pulled towards 1 (PACE_PRIOR_ROWS rows), and the paces average 1.
* Every design weighs the same in every mean and in the least squares (a 3,000-row report must
  not become the model): a constant describes designs, not one design's rows.
* timing pressure (kabe.timing.pressure): a calibration of that model on its own held-out
  estimates (each design's paths estimated by the model fitted without it): how far Vivado's
  routing came out under the estimate on paths over their budget. k is kept <= 1, so pressure
  never turns an estimated failure into a pass.
* the clock law (fit_clock_law, kabe.timing.fitted.ClockLaw): on the same held-out estimates, how
  much shorter Vivado routes a design at a tight clock, one point per design, by Theil-Sen. The
  designs of the other corpora (`extra`), which the net fit does not take, count here too.
* the high-fanout term (fit_high_fanout, kabe.timing.fitted.HighFanout): on the same held-out
  estimates, how much longer than the fanout law a net of many sinks comes out.

RIDGE = 5 rows, the pace, and pressure fitted held out with k <= 1 were chosen on the
leave-one-design-out validation (docs/timing_model.md lists the alternatives tried and what they
gave); nothing else was tuned.
"""

from __future__ import annotations

import math
import re
import statistics
from collections import defaultdict
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from kabe.timing.calibration_data import MODEL_SCOPE, PathSample
from kabe.timing.cells import FF_SETUP_PS, cell_timing
from kabe.timing.delay_classes import (arc_key, cell_class, fanout_law_net, net_class, pin_base,
                                      pin_bit, setup_key)
from kabe.timing.fitted import Band, ClockLaw, FittedModel, HighFanout
from kabe.timing.pressure import fit as fit_pressure

MIN_ROWS = 5
RIDGE = 5.0
PACE_ITERATIONS = 10
PACE_PRIOR_ROWS = 20.0
RATIO_CLASSES = ("CARRY4", "DSP", "BRAM")
FANOUT_LAW = ("intercept", "per_doubling")  # base = intercept + per_doubling x log2(fanout)

# Register configurations tried when the prjxray clock-to-output arc of a DSP/BRAM depends on
# how the cell is configured (Vivado's arc name does not say; the netlist would): the one nearest
# Vivado's value is taken. The delays of the configurations lie far apart (BRAM 882 / 2454 ps).
_VARIANTS = {
    "DSP48E1": [{r: 1} for r in ("PREG", "MREG", "AREG", "BREG", "CREG", "DREG", "ADREG")],
    "RAMB18E1": [{"DOA_REG": 0, "DOB_REG": 0}, {"DOA_REG": 1, "DOB_REG": 1}],
    "RAMB36E1": [{"DOA_REG": 0, "DOB_REG": 0}, {"DOA_REG": 1, "DOB_REG": 1}],
}


_LUTRAM_LEAVES = {"RAMD32": "RAM32M", "RAMS32": "RAM32M", "RAMD64E": "RAM64M", "RAMS64E": "RAM64M"}


@lru_cache(maxsize=None)
def _arcs(cell_type: str) -> tuple:
    """The prjxray arcs of a type: combinational arcs of its default configuration (a DSP48E1
    multiplying, no pre-adder), clock-to-output arcs over every register configuration, each
    as (in pin, in bit, out pin, out bit, ps)."""
    out = [(ip, ib, op, ob, ps) for ip, ib, op, ob, ps in cell_timing(cell_type, {}).comb]
    for params in _VARIANTS.get(cell_type, [{}]):
        out += [(cp, None, op, ob, ps) for op, ob, cp, ps in cell_timing(cell_type, params).launch]
    return tuple(dict.fromkeys(out))


def prjxray_ps(cell_type: str, in_pin: str, out_pin: str, observed_ps: float | None = None) -> float | None:
    """kabe.timing.cells's arc for one of Vivado's (`S[0]`, `CO[3]`); where several configurations
    fit, the one nearest Vivado's value (the configuration the netlist would tell)."""
    ib, ob, ip, op = pin_bit(in_pin), pin_bit(out_pin), pin_base(in_pin), pin_base(out_pin)
    if cell_type in _LUTRAM_LEAVES:  # Vivado's LUTRAM leaf -> the Yosys macro kabe.timing.cells has
        cell_type = _LUTRAM_LEAVES[cell_type]
        m = re.fullmatch(r"R?ADR(\d)", ip)
        ip, ib = ("ADDRA", int(m.group(1))) if m else ("WCLK" if ip == "CLK" else ip, ib)
        op, ob = "DOA", None
    cands = [ps for aip, aib, aop, aob, ps in _arcs(cell_type)
             if aip == ip and aop == op and aib in (None, ib) and aob in (None, ob)]
    if not cands:
        return None
    if observed_ps is None or len(cands) == 1:
        return float(max(cands))
    return float(min(cands, key=lambda c: abs(c - observed_ps)))


def _design_weights(samples: list[PathSample], count) -> dict[str, float]:
    """1 / (rows of that design), so each design adds up to the same weight."""
    n: dict[str, int] = defaultdict(int)
    for s in samples:
        n[s.design] += count(s)
    return {d: 1.0 / k for d, k in n.items() if k}


def _entry(value: float, rows: list, designs: set, **extra) -> dict:
    return {"value": round(float(value), 4), "rows": len(rows), "designs": len(designs), **extra}


def fit_cells(samples: list[PathSample]) -> dict:
    w = _design_weights(samples, lambda s: len(s.cells))
    by_key: dict[str, list] = defaultdict(list)
    for s in samples:
        for t, i, o, ns in s.cells:
            cls = cell_class(t)
            base = prjxray_ps(t, i, o, ns * 1000) if cls in RATIO_CLASSES else None
            if cls in RATIO_CLASSES and not base:
                continue  # no prjxray arc to scale (e.g. an output kabe's cell model lacks)
            row = (ns * 1000, base, w[s.design], s.design)
            by_key[arc_key(t, i, o)].append(row)
            by_key[f"{cls}:*"].append(row)
    out = {}
    for key, rows in sorted(by_key.items()):
        if len(rows) < MIN_ROWS:
            continue
        ratio = any(r[1] is not None for r in rows)
        vw = np.array([r[2] for r in rows])
        viv = np.array([r[0] for r in rows])
        if ratio:
            value = float((viv * vw).sum() / (np.array([r[1] for r in rows]) * vw).sum())
        else:
            value = float((viv * vw).sum() / vw.sum())
        out[key] = _entry(value, rows, {r[3] for r in rows}, mode="ratio" if ratio else "mean")
    return out


def fit_nets(samples: list[PathSample], reference_scope: str = MODEL_SCOPE) -> dict:
    """Nets: (intercept + per_doubling x log2(fanout) + driver[class] + sink[group]) x pace[design],
    by alternating least squares.

    pace is each design's own routing speed (congestion, device size, tool version, speed grade:
    what no netlist tells), so the shape of the model is learned within designs and the designs
    of every grade and family in the corpus can teach it. The paces of the reference scope's
    designs average 1: the constants describe a typical -1 Artix-class design, and the spread of
    the paces is part of what the band has to cover.
    """
    # one row per distinct net: a report's 10 worst paths of a group share most of their nets,
    # and one net seen ten times is still one net (same design, cells, pins, fanout and delay)
    nets = {(s.design, *n) for s in samples for n in s.nets}
    per_design: dict[str, int] = defaultdict(int)
    for n in nets:
        per_design[n[0]] += 1
    general, packed, dedicated = [], [], [0, 0]  # dedicated: (nets, nets Vivado routed at 0.000)
    for design, dt, dp, st, sp, fo, ns in sorted(nets, key=str):
        nc = net_class(dt, dp, st, sp, fo)
        w = 1.0 / per_design[design]
        if nc is None:
            dedicated[0] += 1
            dedicated[1] += ns == 0.0
        elif nc[0] == "SLICE->FF":
            packed.append((ns * 1000, w, design))
        else:
            general.append((nc, ns * 1000, w, design, fo))
    drivers = sorted({r[0][0] for r in general} - {"LUT"})
    sinks = sorted({r[0][1] for r in general} - {"LUT"})
    cols = [("fanout_law", c) for c in FANOUT_LAW] + [("driver", d) for d in drivers] + [("sink", s) for s in sinks]
    idx = {c: k for k, c in enumerate(cols)}
    X = np.zeros((len(general), len(cols)))
    for k, (nc, _ns, _w, _d, fo) in enumerate(general):
        X[k, 0], X[k, 1] = 1.0, math.log2(max(fo, 1))
        if nc[0] != "LUT":
            X[k, idx[("driver", nc[0])]] = 1
        if nc[1] != "LUT":
            X[k, idx[("sink", nc[1])]] = 1
    y = np.array([r[1] for r in general])
    wt = np.array([r[2] for r in general])
    wt = wt * len(wt) / wt.sum()  # weights average 1, so RIDGE is in rows
    designs = sorted({r[3] for r in general})
    di = np.array([designs.index(r[3]) for r in general])
    ref = [k for k, d in enumerate(designs) if any(s.design == d and s.scope == reference_scope for s in samples)]
    pen = np.diag([0.0 if c[0] == "fanout_law" else RIDGE for c in cols]) + np.diag((X.sum(axis=0) == 0) * 1.0)
    pace = np.ones(len(designs))
    for _ in range(PACE_ITERATIONS):
        beta = _solve(X * pace[di][:, None], y, wt, pen)
        pred = X @ beta
        for k in range(len(designs)):
            m = di == k
            prior = PACE_PRIOR_ROWS * float(np.mean(pred[m] ** 2))  # pulls a design with few nets to 1
            pace[k] = (float((y[m] * pred[m]).sum()) + prior) / (float((pred[m] ** 2).sum()) + prior)
        if ref:
            pace /= float(np.mean(pace[ref]))
    beta = _solve(X * pace[di][:, None], y, wt, pen)
    out: dict = {"fanout_law": {}, "driver": {"LUT": {"value": 0.0, "reference": True}},
                 "sink": {"LUT": {"value": 0.0, "reference": True}}}
    for c, k in idx.items():
        rows = [r for r in general if c[0] == "fanout_law" or
                (c[0] == "driver" and r[0][0] == c[1]) or (c[0] == "sink" and r[0][1] == c[1])]
        out[c[0]][c[1]] = _entry(beta[k], rows, {r[3] for r in rows})
    pw = np.array([r[1] for r in packed])
    out["slice_packed"] = _entry(float((np.array([r[0] for r in packed]) * pw).sum() / pw.sum()) if packed else 0.0,
                                 packed, {r[2] for r in packed})
    out["pace"] = {d: round(float(pace[k]), 3) for k, d in enumerate(designs)}
    out["dedicated_check"] = {"rows": dedicated[0], "zero_in_vivado": dedicated[1]}
    return out


def _solve(X: np.ndarray, y: np.ndarray, wt: np.ndarray, pen: np.ndarray) -> np.ndarray:
    """Weighted ridge least squares; columns 0 and 1 are the fanout law's intercept and slope. A
    slope that comes out negative is set to 0 and the rest solved again (a net with more sinks is
    never faster)."""
    beta = np.linalg.solve(X.T @ (X * wt[:, None]) + pen, X.T @ (y * wt))
    if beta[1] >= 0:
        return beta
    keep = [k for k in range(X.shape[1]) if k != 1]
    Xr = X[:, keep]
    rest = np.linalg.solve(Xr.T @ (Xr * wt[:, None]) + pen[np.ix_(keep, keep)], Xr.T @ (y * wt))
    return np.insert(rest, 1, 0.0)


def fit_setup(samples: list[PathSample]) -> dict:
    by: dict[str, list] = defaultdict(list)
    for s in samples:
        by[setup_key(*s.end)].append((s.setup_ns * 1000, s.design))
    return {k: _entry(np.mean([r[0] for r in rows]), rows, {r[1] for r in rows})
            for k, rows in sorted(by.items()) if len(rows) >= MIN_ROWS}


def fit(samples: list[PathSample], band: Band | None = None, scope: str = MODEL_SCOPE,
        pressure: bool = True, extra: list[PathSample] = ()) -> FittedModel:
    """A model from samples (band given separately: it comes from held-out scores,
    kabe.timing.validation). Cells, setup and clock come from the model's scope only (a -2 LUT is
    not a -1 LUT); nets from every scope, each design at its own pace (fit_nets). Timing pressure
    (kabe.timing.pressure) and the clock law (fit_clock_law) are a calibration of that model: how
    far Vivado's routing came out from the model's estimate, on designs the model was not fitted
    on: the samples' designs each held out in turn (held_out_points) and `extra`, designs the
    net and cell fit never sees (more routed data than that fit takes: docs/timing_model.md)."""
    model = fit_plain(samples, scope)
    if pressure:
        calibrate_routing(model, held_out_points(samples, scope) + points(model, extra, scope))
    model.band = band
    return model


CALIBRATION_ROUNDS = 6  # the alternation below settles in 2-3 rounds on the corpora


def calibrate_routing(model: FittedModel, pts: list[tuple]) -> FittedModel:
    """Set the model's clock law, timing pressure and high-fanout term from held-out points
    (points()): the law from paths within their budget; pressure on every point with the law
    applied; the high-fanout term on what both leave (it only fills a path's slack:
    kabe.timing.fitted.HighFanout). The three describe one thing, how Vivado's routing departs
    from the net model, so they are fitted in turn until they agree: the law and pressure of the
    next round see each path with the high-fanout term in it (with_high_fanout), so the slow
    routing of a path with a net of many sinks is booked once, to that net, and not a second time
    as the whole design's slower clock law (fitted once, the law and pressure carried part of it:
    docs/timing_model.md has the numbers). Without pressure (too few designs over budget) the law is
    dropped too: the estimator times a net at no weight under the pressure floor
    (kabe.timing.sta.pressure_levels)."""
    seen, last = pts, None
    for _ in range(CALIBRATION_ROUNDS):
        law = fit_clock_law(seen)
        pr = fit_pressure([(x, lg, r * (law.factor(b) if law else 1.0), v, d, b) for x, lg, r, v, d, b, *_ in seen])
        model.pressure = pr if pr.floor < 1.0 else None
        model.clock_law = law if model.pressure is not None else None
        model.high_fanout = fit_high_fanout(pts, model)
        state = (model.clock_law, model.pressure, model.high_fanout)
        if model.high_fanout is None or state == last:
            break
        last, seen = state, with_high_fanout(pts, model.high_fanout)
    return model


def with_high_fanout(pts: list[tuple], term: HighFanout) -> list[tuple]:
    """points() with the high-fanout term in each path's routing, as the estimator adds it to a path
    whose routing is not yet scaled (filling its slack at most), the fanouts spent."""
    out = []
    for x, lg, r, v, d, b, fanouts in pts:
        extra = _doublings(term.knee, fanouts) * term.per_doubling_ps / 1000.0
        delay = float(HighFanout.fill(lg + r, lg + r + extra, b)) if extra > 0 and b > 0 else lg + r
        out.append((delay / b if b > 0 else x, lg, delay - lg, v, d, b, ()))
    return out


@lru_cache(maxsize=65536)
def _doublings(knee: int, fanouts: tuple[int, ...]) -> float:
    """The doublings above `knee` of a path's routed nets, summed (HighFanout.excess): computed once
    per path, though every round and fold of the calibration asks again."""
    probe = HighFanout(knee, 1.0)
    return sum(probe.excess(f) for f in fanouts)


HIGH_FANOUT_KNEE = 40            # sinks: chosen on the leave-one-design-out validation (docs/timing_model.md)
HIGH_FANOUT_GRID = tuple(range(0, 3001, 25))  # ps per doubling above the knee
MIN_HIGH_FANOUT_DESIGNS = 8


def fit_high_fanout(pts: list[tuple], model: FittedModel, knee: int = HIGH_FANOUT_KNEE) -> HighFanout | None:
    """HighFanout from held-out points: the per-doubling delay above `knee` whose estimates (the
    model's, pressure and law applied, the term filling at most the path's slack) are nearest
    Vivado's on the paths with such a net, in |log| (the median, not the mean: a few 15 ns nets
    must not set it for every net), each design the same weight. None with fewer than
    MIN_HIGH_FANOUT_DESIGNS designs having such paths."""
    rows = []
    for x, lg, r, v, d, b, fanouts in pts:
        e = _doublings(knee, fanouts)
        if e > 0 and r > 0 and b > 0:
            g = model.pressure_factor((lg + r) * 1000.0, b * 1000.0)
            rows.append((lg + r * g, e * g, b, v, d))
    n: dict[str, int] = defaultdict(int)
    for row in rows:
        n[row[4]] += 1
    if len(n) < MIN_HIGH_FANOUT_DESIGNS:
        return None
    d0, eg, b, v = (np.array([row[k] for row in rows]) for k in range(4))
    w = np.array([1.0 / n[row[4]] for row in rows])
    loss = [float((w * np.abs(np.log(HighFanout.fill(d0, d0 + h / 1000.0 * eg, b) / v))).sum())
            for h in HIGH_FANOUT_GRID]
    best = HIGH_FANOUT_GRID[int(np.argmin(loss))]
    return HighFanout(knee, float(best), len(rows), len(n)) if best > 0 else None


MIN_LAW_DESIGNS = 20  # a slope across designs from fewer is noise (11 designs gave -0.03)


def fit_clock_law(pts: list[tuple]) -> ClockLaw | None:
    """ClockLaw from held-out points: per design, the median route factor (Vivado - logic) / route
    of its paths within their budget (x <= 1: pressure did not act) and their median budget; the
    Theil-Sen line of log factor on log budget over those designs. None with fewer than
    MIN_LAW_DESIGNS designs, or when routing does not come out shorter at tighter clocks (b <= 0)."""
    by: dict[str, list] = defaultdict(list)
    for x, lg, r, v, d, b, *_ in pts:
        if x <= 1.0 and r > 0 and b > 0:
            by[d].append(((v - lg) / r, b))
    if len(by) < MIN_LAW_DESIGNS:
        return None
    # statistics.median: numpy's costs more than the sort on a design's few paths, thousands of times a run
    xs = np.array([np.log(statistics.median([q[1] for q in rows])) for _, rows in sorted(by.items())])
    ys = np.array([np.log(max(float(statistics.median([q[0] for q in rows])), 1e-3)) for _, rows in sorted(by.items())])
    i, j = np.triu_indices(len(xs), 1)
    dx = xs[j] - xs[i]
    keep = np.abs(dx) > 1e-9
    if not keep.any():
        return None
    b = float(np.median((ys[j] - ys[i])[keep] / dx[keep]))
    if b <= 0:
        return None
    a = float(np.median(ys - b * xs))
    return ClockLaw(a, b, len(by))


def fit_plain(samples: list[PathSample], scope: str) -> FittedModel:
    own = [s for s in samples if s.scope == scope]
    clock = [s.clock_ns * 1000 for s in own]
    return FittedModel(cells=fit_cells(own), nets=fit_nets(samples, scope), setup=fit_setup(own),
                       clock_ps_value=float(np.median(clock)) if clock else 0.0)


def points(model: FittedModel, samples: list[PathSample], scope: str = MODEL_SCOPE) -> list[tuple]:
    """(x, logic, route, Vivado's delay, design, budget ns, fanouts of its routed nets) of every
    in-scope sample as `model` estimates it; x = estimated delay / budget (budget = requirement -
    setup + clock)."""
    out = []
    for s in samples:
        if s.scope != scope:
            continue
        try:
            p = predict(model, s)
        except Unmodelled:
            continue
        budget = p.delay_ns + p.slack_ns
        out.append((p.delay_ns / budget if budget > 0 else float("inf"), p.logic_ns, p.route_ns,
                    s.delay_ns, s.design, budget, _routed_fanouts(s)))
    return out


def _routed_fanouts(s: PathSample) -> tuple[int, ...]:
    """The fanouts of the path's nets the fanout law times (not dedicated, not slice-packed)."""
    return tuple(n[4] for n in s.nets if fanout_law_net(*n[:5]))


def held_out_points(samples: list[PathSample], scope: str = MODEL_SCOPE) -> list[tuple]:
    """points() of every in-scope design, each estimated by the model without pressure fitted on
    the other designs (what the estimator sees in a netlist it was not fitted on)."""
    designs = sorted({s.design for s in samples if s.scope == scope})
    out = []
    for d in designs:
        m = fit_plain([s for s in samples if s.design != d], scope)
        out += points(m, [s for s in samples if s.design == d], scope)
    return out


class Unmodelled(ValueError):
    """A path through an arc the estimator has no delay for (no prjxray arc, nothing fitted)."""


@dataclass(frozen=True)
class Prediction:
    delay_ns: float   # estimated data path delay
    slack_ns: float   # estimated slack against the path's own requirement
    logic_ns: float   # the cells' part of delay_ns
    route_ns: float   # the nets' part (after timing pressure)
    pressure: float = 1.0  # the routing factor timing pressure applied (kabe.timing.pressure)


def predict(model: FittedModel, s: PathSample) -> Prediction:
    """One sample's estimate from its own cells and nets and its requirement, as the estimator
    would see that path in a netlist (the high-fanout term filling at most its slack)."""
    logic = 0.0
    for t, i, o, ns in s.cells:
        base = prjxray_ps(t, i, o, ns * 1000)
        v = model.cell_ps(t, i, o, base if base is not None else float("nan"))
        if v != v:
            raise Unmodelled(f"{t} {i}->{o}")
        logic += v
    route = sum(model.net_ps(dt, dp, st, sp, fo) for dt, dp, st, sp, fo, _ in s.nets)
    end_t, end_p = s.end
    setup = model.setup_ps(end_t, end_p, _prjxray_setup(end_t, end_p))
    budget = s.requirement_ns * 1000 - setup + model.clock_ps
    g = model.pressure_factor(logic + route, budget)
    d = logic + route * g
    if getattr(model, "high_fanout", None) is not None:  # the hand-set RoutingModel has none
        extra = sum(model.high_fanout_ps(*n[:5]) for n in s.nets) * g
        d = float(model.high_fanout.fill(d, d + extra, budget))
    return Prediction(d / 1000, (budget - d) / 1000, logic / 1000, (d - logic) / 1000, g)


def _prjxray_setup(cell_type: str, pin: str) -> float:
    if cell_class(cell_type) == "FF":
        return float(FF_SETUP_PS.get(pin_base(pin), 0))
    for pin_name, _, _, ps in cell_timing(cell_type, {}).setup:
        if pin_name == pin_base(pin):
            return float(ps)
    return 0.0
