"""The band's calibration: design-level split conformal prediction.

A path's score is its route factor, (Vivado's delay - estimated logic) / estimated route: cells are
near-exact at a known grade, routing is the part placement decides. The band of a path is
logic + route x [lo, hi]. lo and hi are conformal quantiles of the scores of *held-out* paths (each
scored by a model fitted without its design), where **each design is one exchangeable unit**: every
design weighs the same whatever its number of paths (the score |log(factor / median factor)| at level
`coverage` of the design-weighted distribution, interpolated between designs' weights). So the promise
is about a *new design*: on average over designs drawn like the calibration designs, the band holds
the nominal share (`coverage`) of that design's paths.

The band is calibrated to that share, not above it (issue 44). It once took the level
coverage x (1 + 1/K) over K designs without interpolation (split conformal's guarantee of *at least*
the coverage) and gave a class of fewer than MIN_DESIGNS designs the pooled band at (1 + coverage) / 2.
Leave one design out on the shared corpus (11 designs, `python scripts/band_lodo.py`), that held 95 %
of the held-out paths (96 % design mean) where it claimed 80 %, at a median width of 20.7 ns: with few
designs both rules push every band to the widest scores. At the bare level, interpolated, with a thin
class on the pooled band at the same coverage, the held-out designs hold about their 80 % (the numbers
are in tests/timing/test_band_claim.py and docs/timing_model.md). The band says nothing about one
design that is unlike all of them, which is why it also knows where its data ends (below).

Where the misses cluster (docs/timing_model.md) the band is calibrated apart (Mondrian conformal:
one set of quantiles per class, each from that class's paths only, each design one unit), so a
class that misses more gets a wider band instead of widening everyone's:

    high-fanout  a net of fanout >= 256 on the path: Vivado spreads its sinks over the device, and
                 the nets come out several ns long (6-15 ns in the corpora), past any fanout bucket
    slow-clock   requirement >= 20 ns: nothing pushed the nets short (cs202-CPU at 100 ns)
    bram-dsp     a BRAM or DSP48E1 on the path: their sites are far apart, the nets to them long
    long-chain   >= 8 logic levels: a chain of short nets, the fanout model's weakest case
    default      everything else

A class with fewer than MIN_DESIGNS designs takes the pooled band instead (at the same coverage: a
wider one would claim 80 % and hold more): too few designs cannot calibrate a band of their own. A
path outside the data (more logic levels or a requirement outside what the calibration designs had)
gets the widest band of any class or of the pooled one at a higher level (halfway from the coverage
to 1), and says why: no design vouches for it.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from kabe.timing.delay_classes import cell_class

SLOW_CLOCK_NS = 20.0
HIGH_FANOUT = 256
LONG_CHAIN_LEVELS = 8
MIN_DESIGNS = 8
CLASSES = {
    "high-fanout": f"a net of fanout {HIGH_FANOUT} or more on the path: its sinks lie spread over the device",
    "slow-clock": f"a requirement of {SLOW_CLOCK_NS:g} ns or more: placement never pulled its nets in",
    "bram-dsp": "a BRAM or DSP48E1 on the path: their sites lie far apart",
    "long-chain": f"{LONG_CHAIN_LEVELS} or more logic levels: a long chain of short nets",
    "default": "a register-to-register path like most of the calibration data",
}


@dataclass(frozen=True)
class PathFeatures:
    levels: int          # logic levels (combinational cells, as Vivado counts them)
    bram_dsp: int        # BRAM / DSP48E1 cells on the path, start and end included
    requirement_ns: float
    max_fanout: int = 0  # the largest fanout of a net on the path


def path_class(f: PathFeatures) -> str:
    if f.max_fanout >= HIGH_FANOUT:
        return "high-fanout"
    if f.requirement_ns >= SLOW_CLOCK_NS:
        return "slow-clock"
    if f.bram_dsp:
        return "bram-dsp"
    if f.levels >= LONG_CHAIN_LEVELS:
        return "long-chain"
    return "default"


def sample_features(s) -> PathFeatures:
    """A calibration sample's features (kabe.timing.calibration_data.PathSample)."""
    types = [c[0] for c in s.cells] + [s.end[0]]
    return PathFeatures(max(0, len(s.cells) - 1), sum(cell_class(t) in ("BRAM", "DSP") for t in types),
                        float(s.requirement_ns), max((n[4] for n in s.nets), default=0))


def steps_features(types: list[str], requirement_ns: float, fanouts: list[int] = ()) -> PathFeatures:
    """An estimated path's features: the cell types from startpoint to endpoint and the fanouts of
    the nets between them (kabe.timing.sta)."""
    return PathFeatures(max(0, len(types) - 2), sum(cell_class(t) in ("BRAM", "DSP") for t in types),
                        float(requirement_ns), max(fanouts, default=0))


def conformal_quantiles(scores: np.ndarray, designs: list[str], coverage: float) -> tuple[float, float] | None:
    """(lo, hi) holding `coverage` of a new design's scores, each design one unit (see the module
    docstring): the score is |log(route factor / its design-weighted median)|, its design-weighted
    quantile q at level `coverage` (interpolated), and the band median x e^-q .. median x e^q.
    None when there are fewer than 2 designs."""
    per: dict[str, int] = defaultdict(int)
    for d in designs:
        per[d] += 1
    k = len(per)
    if k < 2:
        return None
    w = np.array([1.0 / (per[d] * k) for d in designs])
    logs = np.log(np.maximum(scores, 1e-3))
    centre = _weighted_level(logs, w, 0.5)
    q = _weighted_quantile(np.abs(logs - centre), w, coverage)
    return float(np.exp(centre - q)), float(np.exp(centre + q))


def _weighted_level(values: np.ndarray, w: np.ndarray, level: float) -> float:
    """The smallest value whose weight at or below it reaches `level` of the total (no interpolation)."""
    i = np.argsort(values, kind="stable")
    v, cw = values[i], np.cumsum(w[i]) / w.sum()
    return float(v[min(len(v) - 1, int(np.searchsorted(cw, level - 1e-12)))])


def _weighted_quantile(values: np.ndarray, w: np.ndarray, level: float) -> float:
    """The value at `level` of the weighted distribution, each value at the middle of its own weight
    (Hazen's plotting position, weighted): linear between neighbours, so a share of 80 % falls between
    two designs' scores rather than on the larger one, which with ten designs is a step of 10 %."""
    i = np.argsort(values, kind="stable")
    v, wi = values[i], w[i] / w.sum()
    mid = np.cumsum(wi) - wi / 2
    return float(np.interp(level, mid, v))


def calibrate(rows: list[tuple[float, str, PathFeatures]], coverage: float) -> dict | None:
    """The band from held-out scores: rows of (route factor, design, features). A dict for
    fitted_constants.py (kabe.timing.fitted.Band reads it); None with fewer than 10 scores."""
    if len(rows) < 10:
        return None
    wide = (1.0 + coverage) / 2.0
    r = np.array([x for x, _, _ in rows])
    ds = [d for _, d, _ in rows]
    lo, hi = conformal_quantiles(r, ds, coverage)
    wlo, whi = conformal_quantiles(r, ds, wide)
    classes = {}
    for name, why in CLASSES.items():
        idx = [k for k, (_, _, f) in enumerate(rows) if path_class(f) == name]
        n_designs = len({ds[k] for k in idx})
        if n_designs >= MIN_DESIGNS:
            q = conformal_quantiles(r[idx], [ds[k] for k in idx], coverage)
            classes[name] = {"lo": round(q[0], 4), "hi": round(q[1], 4), "designs": n_designs, "paths": len(idx),
                             "why": why}
        else:
            classes[name] = {"lo": round(lo, 4), "hi": round(hi, 4), "designs": n_designs, "paths": len(idx),
                             "why": f"{why}; {n_designs} designs, fewer than {MIN_DESIGNS}: the pooled band"}
    feats = [f for _, _, f in rows]
    return {
        "coverage": coverage,
        "quantiles": [round((1 - coverage) / 2, 4), round((1 + coverage) / 2, 4)],
        "lo": round(lo, 4), "hi": round(hi, 4),
        "outside": {"lo": round(min(wlo, *(c["lo"] for c in classes.values())), 4),
                    "hi": round(max(whi, *(c["hi"] for c in classes.values())), 4)},
        "classes": classes,
        "data": {"designs": len(set(ds)), "paths": len(rows), "max_levels": max(f.levels for f in feats),
                 "requirement_ns": [round(min(f.requirement_ns for f in feats), 3),
                                    round(max(f.requirement_ns for f in feats), 3)]},
    }
