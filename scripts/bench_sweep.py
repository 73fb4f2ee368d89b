"""Benchmark: six stage4 variants (cores/stage4/sweep.yaml) on a two-worker LocalCluster, against
the same six builds run one after another with no Dask (the worker's build function called in this
process). Prints the wall times, their ratio, and the overhead per variant: the time a variant spends
outside its own build (shipping and unpacking the tree, the scratch copy, Dask), from each task's
time against the build's own `seconds` in its metrics.json.

    python scripts/bench_sweep.py          (commit first: a sweep builds a commit)
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rich.console import Console  # noqa: E402

from kabe.project import designs  # noqa: E402
from kabe.base import provenance  # noqa: E402
from kabe.base.paths import ROOT  # noqa: E402
from kabe.sweep import run, source, spec, unit, worker  # noqa: E402


def serial(design, variants, shipped) -> float:
    t0 = time.monotonic()
    for v in variants:
        job = unit.Job(shipped.identity(), design.name, run._rel(design.core_file), run._rel(design.constraints),
                       "open", v.id, v.settings)
        tar, report = worker.build_variant(job, shipped.archive)
        assert tar, f"variant {v.id} produced no archive: {json.loads(report)['log_tail'][-3:]}"
    return time.monotonic() - t0


def main() -> int:
    commit = provenance.current_commit()
    if commit.dirty:
        print("commit first: a sweep builds a commit", file=sys.stderr)
        return 2
    design = designs.get("stage4")
    variants = spec.load(design).variants
    os.environ["KABE_SWEEP_CACHE"] = tempfile.mkdtemp(prefix="kabe-bench-sweep-")
    shipped = source.pack(ROOT, commit.sha)
    t_serial = serial(design, variants, shipped)
    with tempfile.TemporaryDirectory() as reports:
        t0 = time.monotonic()
        summary = run.run_sweep("stage4", run.SweepOptions(flow="open", workers=2, reports_root=Path(reports)),
                                console=Console(quiet=True))
        t_dask = time.monotonic() - t0
        overheads = []
        for v in summary["variants"]:
            if v.get("archive"):  # an absolute path here: the reports root is a temp folder
                m = json.loads((Path(v["archive"]) / "metrics.json").read_text())
                overheads.append(v["seconds"] - m["seconds"])
    print(f"6 stage4 variants (cores/stage4/sweep.yaml), open flow, {os.cpu_count()} cores")
    print(f"  one after another, no Dask:   {t_serial:7.1f} s")
    print(f"  Dask LocalCluster, 2 workers: {t_dask:7.1f} s")
    print(f"  ratio (Dask / serial):        {t_dask / t_serial:7.2f}")
    if overheads:
        print(f"  overhead per variant (task time minus the build's own time): median {statistics.median(overheads):.2f} s, "
              f"max {max(overheads):.2f} s")
    client_side = t_dask - sum(v["seconds"] for v in summary["variants"]) / 2
    print(f"  client-side time not covered by the two workers' tasks: {client_side:.1f} s "
          f"({client_side / len(variants):.2f} s per variant: cluster start, tree shipping, archive writes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
