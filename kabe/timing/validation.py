"""How far to trust the fitted estimate: leave-one-design-out validation, the uncertainty band,
and the validation table `scripts/calibrate_timing.py` prints (issue 14).

Validation is split by design, never by row: a design's paths share its placement, congestion
and tool version, so rows of one design on both sides of a split would flatter the model.
`leave_one_design_out` fits on every design but one and predicts that one, in turn. The band a
held-out design gets is itself computed from its training designs only (a nested run), so its
coverage on the held-out design is an honest test of the band.

Errors are signed as estimate - Vivado: negative means kabe is too low (optimistic, the side on
which a gate passes a design that fails).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from kabe.timing.calibration_data import PathSample
from kabe.timing.fit import Prediction, Unmodelled, fit, predict
from kabe.timing.fitted import Band, FittedModel

QUANTILES = (0.10, 0.90)


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
    def inside(self) -> bool | None:
        if self.band is None:
            return None
        lo, hi = self.band.delay_ns(self.pred.logic_ns, self.pred.route_ns)
        return lo - 5e-4 <= self.sample.delay_ns <= hi + 5e-4


def band_from(outcomes: list[Outcome], quantiles=QUANTILES) -> Band | None:
    """The band: quantiles, across held-out paths, of what routing turned out to cost over what
    the model estimated for it, (Vivado's delay - estimated logic) / estimated route. Cells are
    near-exact at a known grade; routing is the placement-dependent part, so a path's band is
    as wide as its routing: long, route-heavy paths get wide bands. Each design weighs the same
    (as in the fit): pooled, the one design with 75 paths would set the quantiles, and the band
    would describe that design rather than the next one (nested coverage 70 % pooled, 81 %
    weighted; docs/timing_model.md)."""
    rows = [((o.sample.delay_ns - o.pred.logic_ns) / o.pred.route_ns, o.sample.design)
            for o in outcomes if o.pred.route_ns > 0]
    if len(rows) < 10:
        return None
    n: dict[str, int] = defaultdict(int)
    for _, d in rows:
        n[d] += 1
    r = np.array([x for x, _ in rows])
    w = np.array([1.0 / n[d] for _, d in rows])
    lo, hi = (weighted_quantile(r, w, q) for q in quantiles)
    return Band(round(lo, 4), round(hi, 4), tuple(quantiles))


def weighted_quantile(values: np.ndarray, weights: np.ndarray, q: float) -> float:
    """The q-quantile of values, each counted with its weight (midpoints of the weight steps,
    so equal weights give the usual interpolated quantile)."""
    i = np.argsort(values)
    v, w = values[i], weights[i]
    cum = (np.cumsum(w) - 0.5 * w) / w.sum()
    return float(np.interp(q, cum, v))


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


def leave_one_design_out(samples: list[PathSample], *, nested_band: bool = True) -> list[Outcome]:
    designs = sorted({s.design for s in samples})
    out: list[Outcome] = []
    for d in designs:
        train = [s for s in samples if s.design != d]
        test = [s for s in samples if s.design == d]
        if not train:
            continue
        band = band_from(leave_one_design_out(train, nested_band=False)) if nested_band else None
        out += evaluate(fit(train), test, band)[0]
    return out


def metrics(outcomes: list[Outcome]) -> dict:
    if not outcomes:
        return {"paths": 0}
    e = np.array([o.error for o in outcomes])
    dns = np.array([o.delay_ns - o.sample.delay_ns for o in outcomes])
    inside = [o.inside for o in outcomes if o.inside is not None]
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


def by_design(outcomes: list[Outcome]) -> list[tuple[str, dict]]:
    groups: dict[str, list[Outcome]] = defaultdict(list)
    for o in outcomes:
        groups[o.sample.design].append(o)
    return [(d, metrics(v)) for d, v in sorted(groups.items())]
