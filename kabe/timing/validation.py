"""How far to trust the fitted estimate: leave-one-design-out validation, the uncertainty band,
and the validation table `scripts/calibrate_timing.py` prints.

Validation is split by design, never by row: a design's paths share its placement, congestion
and tool version, so rows of one design on both sides of a split would flatter the model.
`leave_one_design_out` fits on every design but one and predicts that one, in turn. The band a
held-out design gets is calibrated on its training designs only (kabe.timing.fit.fit_calibrated:
design-level conformal on the training designs' own held-out scores), so its coverage on the
held-out design is an honest test of the band's promise about a new design.

Errors are signed as estimate - Vivado: negative means kabe is too low (optimistic, the side on
which a gate passes a design that fails).
"""

from __future__ import annotations

import dataclasses
import re
from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from kabe.timing.calibration_data import MODEL_SCOPE, PathSample
from kabe.timing.conformal import calibrate, sample_features
from kabe.timing.delay_classes import cell_class, pin_base
from kabe.timing.fit import Prediction, Unmodelled, calibrate_routing, fit_plain, points, predict
from kabe.timing.fitted import Band, FittedModel

COVERAGE = 0.8  # the default of [tool.kabe] timing_band_coverage


@dataclass
class Outcome:
    sample: PathSample
    pred: Prediction
    band: Band | None

    @property
    def delay_ns(self) -> float:
        return self.pred.delay_ns

    @property
    def slack_ns(self) -> float:
        return self.pred.slack_ns

    @property
    def error(self) -> float:
        return (self.pred.delay_ns - self.sample.delay_ns) / self.sample.delay_ns

    @property
    def limits(self) -> tuple[float, float] | None:
        if self.band is None:
            return None
        return self.band.delay_ns(self.pred.logic_ns, self.pred.route_ns, sample_features(self.sample))

    @property
    def inside(self) -> bool | None:
        if self.band is None:
            return None
        lo, hi = self.limits
        return lo - 5e-4 <= self.sample.delay_ns <= hi + 5e-4


def evaluate(model: FittedModel, samples: list[PathSample], band: Band | None = None) -> tuple[list[Outcome], int]:
    """Predict every sample with one model; (outcomes, paths through an arc the model cannot time)."""
    out, skipped = [], 0
    for s in samples:
        try:
            pred = predict(model, s)
        except Unmodelled:
            skipped += 1
            continue
        out.append(Outcome(s, pred, band if band is not None else model.band))
    return out, skipped


def leave_one_design_out(samples: list[PathSample], *, nested_band: bool = True,
                         extra: list[PathSample] = (), coverage: float = COVERAGE) -> list[Outcome]:
    """Every design held out in turn. `samples` are the point model's data: each of their designs
    is left out of the fit that predicts it. `extra` are designs the net and cell fit never takes
    (more routed data than that fit needs): they calibrate timing pressure and the clock law
    (kabe.timing.fit.fit), and each is predicted by the model whose calibration did not see it.
    With `nested_band`, every held-out design's band is calibrated (kabe.timing.conformal) on the
    held-out scores of the *other* designs only, each scored by the whole fit (nets, pressure, law)
    done without it and without the design being judged; without it, the outcomes carry no band."""
    return validate(samples, extra=extra, coverage=coverage, nested_band=nested_band)[0]


class _Folds:
    """The fit of kabe.timing.fit.fit on every subset of designs left out, sharing its parts: a
    net/cell fit depends only on which of the samples' designs are out, a held-out estimate only
    on that fit, so each is computed once (a nested validation asks for thousands of them)."""

    def __init__(self, samples: list[PathSample], extra: list[PathSample]):
        self.samples, self.extra = samples, extra
        self.base = frozenset(s.design for s in samples)
        self.by_design: dict[str, list[PathSample]] = defaultdict(list)
        for s in list(samples) + list(extra):
            self.by_design[s.design].append(s)
        self._plain: dict[frozenset, FittedModel] = {}
        self._points: dict[tuple, list] = {}
        self._models: dict[frozenset, FittedModel] = {}

    def plain(self, out: frozenset) -> FittedModel:
        key = out & self.base
        if key not in self._plain:
            self._plain[key] = fit_plain([s for s in self.samples if s.design not in key], MODEL_SCOPE)
        return self._plain[key]

    def held_points(self, design: str, out: frozenset) -> list:
        """`design` as estimated by the net/cell fit without it and without `out`."""
        key = (design, (out | {design}) & self.base)
        if key not in self._points:
            self._points[key] = points(self.plain(key[1]), self.by_design[design])
        return self._points[key]

    def model(self, out: frozenset) -> FittedModel:
        """fit(samples - out, extra=extra - out): nets and cells, then pressure and the law."""
        if out not in self._models:
            m = dataclasses.replace(self.plain(out))
            pts = [p for d in sorted(self.by_design) if d not in out for p in self.held_points(d, out)]
            self._models[out] = calibrate_routing(m, pts)
        return self._models[out]


def validate(samples: list[PathSample], *, extra: list[PathSample] = (), coverage: float = COVERAGE,
             nested_band: bool = True) -> tuple[list[Outcome], Band | None]:
    """(held-out outcomes, the band for the model fitted on every sample): the band is calibrated on
    the held-out scores of every design, each predicted by the fit that did not see it."""
    designs = sorted({s.design for s in samples})
    extra = [s for s in extra if s.design not in set(designs)]
    every = designs + sorted({s.design for s in extra})
    folds = _Folds(samples, extra)
    held: dict[str, list[Outcome]] = {}
    for d in every:
        if d in designs and len(designs) < 2:
            continue
        held[d] = evaluate(folds.model(frozenset({d})), folds.by_design[d])[0]
    out: list[Outcome] = []
    for d in held:
        band = None
        if nested_band:
            rows = []
            for e in held:
                if e != d:
                    rows += score_rows(evaluate(folds.model(frozenset({d, e})), folds.by_design[e])[0])
            band = _band(rows, coverage)
        out += [Outcome(o.sample, o.pred, band) for o in held[d]]
    return out, _band([r for d in held for r in score_rows(held[d])], coverage)


def score_rows(outcomes: list[Outcome]) -> list[tuple]:
    """(route factor, design, features) of every outcome with routing: the band's scores."""
    return [((o.sample.delay_ns - o.pred.logic_ns) / o.pred.route_ns, o.sample.design, sample_features(o.sample))
            for o in outcomes if o.pred.route_ns > 0]


def _band(rows: list[tuple], coverage: float) -> Band | None:
    b = calibrate(rows, coverage)
    return Band.from_json(b) if b else None


def metrics(outcomes: list[Outcome]) -> dict:
    if not outcomes:
        return {"paths": 0}
    e = np.array([o.error for o in outcomes])
    dns = np.array([o.delay_ns - o.sample.delay_ns for o in outcomes])
    inside = [o.inside for o in outcomes if o.inside is not None]
    per_design: dict[str, list[bool]] = defaultdict(list)
    for o in outcomes:
        if o.inside is not None:
            per_design[o.sample.design].append(o.inside)
    widths = [o.limits[1] - o.limits[0] for o in outcomes if o.band is not None]
    sign = [(o.slack_ns >= 0) == (o.sample.slack_ns >= 0) for o in outcomes]
    return {
        "designs": len({o.sample.design for o in outcomes}),
        "paths": len(outcomes),
        "median_error_pct": round(float(np.median(e)) * 100, 1),
        "median_abs_error_pct": round(float(np.median(np.abs(e))) * 100, 1),
        "p90_abs_error_pct": round(float(np.quantile(np.abs(e), 0.9)) * 100, 1),
        "median_abs_error_ns": round(float(np.median(np.abs(dns))), 3),
        "p90_abs_error_ns": round(float(np.quantile(np.abs(dns), 0.9)), 3),
        "too_low_pct": round(float(np.mean(e < 0)) * 100, 1),
        "band_contains_pct": round(float(np.mean(inside)) * 100, 1) if inside else None,
        "band_design_mean_pct": round(float(np.mean([np.mean(v) for v in per_design.values()])) * 100, 1)
        if per_design else None,
        "band_median_width_ns": round(float(np.median(widths)), 3) if widths else None,
        "slack_sign_right_pct": round(float(np.mean(sign)) * 100, 1),
    }


COLUMNS = (("designs", "designs", "{}"), ("paths", "paths", "{}"),
           ("median_error_pct", "median error", "{:+.1f} %"),
           ("median_abs_error_pct", "median |error|", "{:.1f} %"),
           ("p90_abs_error_pct", "p90 |error|", "{:.1f} %"),
           ("median_abs_error_ns", "median |error| ns", "{:.3f}"),
           ("p90_abs_error_ns", "p90 |error| ns", "{:.3f}"),
           ("too_low_pct", "kabe too low", "{:.0f} %"),
           ("band_contains_pct", "band contains Vivado", "{:.0f} %"),
           ("band_design_mean_pct", "... design mean", "{:.0f} %"),
           ("band_median_width_ns", "band median width ns", "{:.3f}"),
           ("slack_sign_right_pct", "slack sign right", "{:.0f} %"))


def table(rows: list[tuple[str, dict]]) -> str:
    """A Markdown table, one row per (label, metrics)."""
    head = "| set | " + " | ".join(c[1] for c in COLUMNS) + " |"
    lines = [head, "|" + "---|" * (len(COLUMNS) + 1)]
    for label, m in rows:
        cells = []
        for key, _, fmt in COLUMNS:
            v = m.get(key)
            cells.append("-" if v is None else fmt.format(v))
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


_BINS = {  # axis: (upper edges, class names), in the order the breakdown prints them
    "logic levels": ((2, 4, 7, 12), ("0-2", "3-4", "5-7", "8-12", "13+")),
    "largest fanout": ((8, 64, 255), ("1-8", "9-64", "65-255", "256+")),
    "CARRY4s": ((0, 2, 6), ("0", "1-2", "3-6", "7+")),
    "requirement ns": ((4.999, 10.0, 19.999), ("< 5", "5-10", "10-20", ">= 20")),
}


def _bin(axis: str, v: float) -> str:
    edges, names = _BINS[axis]
    return next((n for e, n in zip(edges, names) if v <= e), names[-1])


def device_family(device: str) -> str:
    """`xc7z020clg400-1` -> `Zynq-7000 7z020`: the fabric family and part, for the breakdown."""
    d = (device or "").lower().removeprefix("xc")
    m = re.match(r"7([azsk])(\d+)", d)
    if not m:
        return device or "?"
    fam = {"a": "Artix-7", "z": "Zynq-7000", "s": "Spartan-7", "k": "Kintex-7"}[m.group(1)]
    return f"{fam} {m.group(0)}"


def path_classes(s: PathSample) -> dict[str, str]:
    """The class a path falls in on each axis of the error breakdown (where the misses come from):
    logic levels, its largest fanout, CARRY4s on it, its startpoint and endpoint, the
    requirement, and the device."""
    types = [c[0] for c in s.cells]
    end = cell_class(s.end[0])
    if end == "FF":
        end = "FF D" if pin_base(s.end[1]) == "D" else "FF CE/R/S"
    return {
        "logic levels": _bin("logic levels", len(s.cells) - 1),
        "largest fanout": _bin("largest fanout", max((n[4] for n in s.nets), default=0)),
        "CARRY4s": _bin("CARRY4s", sum(cell_class(t) == "CARRY4" for t in types)),
        "startpoint": cell_class(types[0]),
        "endpoint": end,
        "BRAM/DSP inside": "yes" if any(cell_class(t) in ("BRAM", "DSP") for t in types[1:]) else "no",
        "requirement ns": _bin("requirement ns", s.requirement_ns),
        "device": device_family(s.device),
    }


def by_class(outcomes: list[Outcome]) -> list[tuple[str, dict]]:
    """metrics() of the outcomes grouped on every axis of path_classes, one row per class."""
    groups: dict[tuple[str, str], list[Outcome]] = defaultdict(list)
    for o in outcomes:
        for axis, c in path_classes(o.sample).items():
            groups[(axis, c)].append(o)
    axes = list(path_classes(outcomes[0].sample)) if outcomes else []

    def order(key):
        axis, c = key
        names = _BINS.get(axis, ((), ()))[1]
        return axes.index(axis), names.index(c) if c in names else 0, c
    return [(f"{axis}: {c}", metrics(groups[(axis, c)])) for axis, c in sorted(groups, key=order)]


def by_design(outcomes: list[Outcome]) -> list[tuple[str, dict]]:
    groups: dict[str, list[Outcome]] = defaultdict(list)
    for o in outcomes:
        groups[o.sample.design].append(o)
    return [(d, metrics(v)) for d, v in sorted(groups.items())]
