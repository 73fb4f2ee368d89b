#!/usr/bin/env python3
"""Does the timing band hold what it claims on designs the fit never saw? (issue 44)

    python scripts/band_lodo.py                      leave one design out on the shared routed corpus
                                                     (../shared/fixtures/vivado-routed-paths, what CI has)
    python scripts/band_lodo.py --corpus DIR         ... with DIR's reports too (repeatable), e.g.
                                                     ../shared/routed-more (scripts/gather_routed_corpus.py)
    python scripts/band_lodo.py --plot FILE.png      ... and draw each held-out design's coverage

Each design (repository) is held out in turn: the point model is fitted without it, and its band is
calibrated (kabe.timing.conformal) on the held-out scores of the *other* designs only, each scored by
a fit that saw neither them nor it (kabe.timing.validation.validate, the nested band). Printed: per
held-out design, its paths, the share of them whose routed Vivado delay lies inside their band, and
the band's median width in ns; then overall, pooled over paths and averaged over designs (what the
band promises: `[tool.kabe] timing_band_coverage` of a new design's paths, on average). The same
numbers as scripts/calibrate_timing.py's table, without the point-model columns. Writes nothing
unless --plot. Without the shared corpus it says so and exits 0.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from kabe.timing import validation as V  # noqa: E402
from kabe.timing.calibration_data import MODEL_SCOPE  # noqa: E402

_spec = importlib.util.spec_from_file_location("calibrate_timing", REPO / "scripts" / "calibrate_timing.py")
CT = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(CT)


def held_out(corpora: list[Path], coverage: float) -> list[V.Outcome]:
    """Every in-scope path of every design, estimated and banded without its design. The first
    corpus is the point model's data, the others calibrate pressure, the clock law and the band
    (as scripts/calibrate_timing.py fits them)."""
    samples, _, _, _ = CT.read_corpora(corpora)
    own = [s for s in samples if s.scope == MODEL_SCOPE]
    first = CT._files_of(corpora[0])
    base = [s for s in own if s.file in first]
    base_designs = {s.design for s in base}
    extra = [s for s in own if s.file not in first and s.design not in base_designs]
    if len({s.design for s in own}) < 3:
        raise ValueError(f"{', '.join(map(str, corpora))}: fewer than 3 designs in scope ({MODEL_SCOPE})")
    return V.validate(base, extra=extra, coverage=coverage)[0]


def summary(outcomes: list[V.Outcome]) -> dict:
    """Coverage pooled over paths, averaged over designs, and the median width (ns)."""
    m = V.metrics(outcomes)
    return {"designs": m["designs"], "paths": m["paths"], "pooled_pct": m["band_contains_pct"],
            "design_mean_pct": m["band_design_mean_pct"], "median_width_ns": m["band_median_width_ns"]}


def _f(v, fmt: str) -> str:
    """A number, or "-" where no band could be calibrated (fewer than 10 held-out scores in a fold)."""
    return "-" if v is None else fmt.format(v)


def report(outcomes: list[V.Outcome], coverage: float) -> str:
    rows = ["| held-out design | paths | inside the band | median width ns |", "|---|---|---|---|"]
    for design, m in V.by_design(outcomes):
        rows.append(f"| {design} | {m['paths']} | {_f(m['band_contains_pct'], '{:.0f} %')} | "
                    f"{_f(m['band_median_width_ns'], '{:.3f}')} |")
    s = summary(outcomes)
    rows.append(f"| **all: {s['designs']} designs** | {s['paths']} | {_f(s['pooled_pct'], '{:.1f} %')} of paths, "
                f"{_f(s['design_mean_pct'], '{:.1f} %')} design mean | {_f(s['median_width_ns'], '{:.3f}')} |")
    return "\n".join(rows) + f"\n\nclaimed: {coverage:.0%} of a new design's paths"


def plot(outcomes: list[V.Outcome], path: Path, coverage: float) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    per = [(d, m) for d, m in V.by_design(outcomes) if m["band_contains_pct"] is not None]
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    ax.scatter([m["paths"] for _, m in per], [m["band_contains_pct"] for _, m in per],
               s=[12 + 4 * m["band_median_width_ns"] for _, m in per], alpha=0.6)
    s = summary(outcomes)
    ax.axhline(coverage * 100, color="k", lw=0.8, label=f"claimed {coverage:.0%}")
    if s["pooled_pct"] is not None:
        ax.axhline(s["design_mean_pct"], color="C1", lw=0.8, ls="--", label=f"design mean {s['design_mean_pct']:.1f} %")
        ax.axhline(s["pooled_pct"], color="C2", lw=0.8, ls=":", label=f"pooled {s['pooled_pct']:.1f} %")
    ax.set_xscale("log")
    ax.set_xlabel("paths of the held-out design")
    ax.set_ylabel("paths inside their band (%)")
    ax.set_title(f"Band, leave one design out: {s['designs']} designs, median width "
                 f"{_f(s['median_width_ns'], '{:.2f}')} ns (marker size)", fontsize=9)
    ax.legend(fontsize=7, loc="lower right")
    fig.text(0.01, 0.005, "generated by python scripts/band_lodo.py --plot", fontsize=6, color="gray")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", type=Path, action="append", default=[], help="another folder of routed Vivado reports")
    ap.add_argument("--plot", type=Path, metavar="FILE", help="draw each held-out design's coverage to FILE (.png)")
    a = ap.parse_args(argv)
    for c in a.corpus:
        if not c.is_dir():
            print(f"--corpus {c}: not a folder; give a folder of routed Vivado .rpt files", file=sys.stderr)
            return 2
    if not CT.DEFAULT_CORPUS.is_dir():
        print(f"calibration corpus not found at {CT.DEFAULT_CORPUS}: nothing to evaluate")
        return 0
    corpora = [CT.DEFAULT_CORPUS] + [c for c in a.corpus if c.resolve() != CT.DEFAULT_CORPUS.resolve()]
    coverage = CT.coverage_setting()
    try:
        outcomes = held_out(corpora, coverage)
    except ValueError as e:
        print(str(e), file=sys.stderr)
        return 2
    print(f"corpora: {', '.join(CT._corpus_name(c) for c in corpora)}")
    print(report(outcomes, coverage))
    if a.plot and summary(outcomes)["pooled_pct"] is None:
        print(f"no band could be calibrated (too few held-out scores): {a.plot} not drawn")
    elif a.plot:
        plot(outcomes, a.plot, coverage)
        print(f"wrote {a.plot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
