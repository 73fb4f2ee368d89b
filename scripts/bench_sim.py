#!/usr/bin/env python3
"""Benchmark kabe's streaming simulation at full scale, per design.

    python scripts/bench_sim.py                 # every design, full scale
    python scripts/bench_sim.py stage4 stage3   # some designs
    python scripts/bench_sim.py --rows 2000     # a quick look (rows: total over ports)

Prints rows/s, beats/s and M cycles/s, with the wall time split into compile (0 when the
harness is already built), frame build (numpy; a model that gives its inputs as Chunks builds them
during the simulation), simulate (the harness process) and compare; and the run's cost beside its
simulation: whole (the wall time without compiling) / simulate (issue 40's target: at most 1.2).
Full scale: stage 3 and the probes 2 x 65,535 rows (65,535 on one-port designs), stage 4
2 x 262,139 = 524,278 rows.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from kabe.project import designs  # noqa: E402
from kabe.project import design_context  # noqa: E402
from kabe.sim import runner  # noqa: E402
from kabe.sim.ask import SimAsk  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("designs", nargs="*", help="design names (default: all)")
    ap.add_argument("--rows", type=int, default=None, help="total rows over ports (default: full scale)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", type=Path, help="also write the results to this file")
    args = ap.parse_args(argv)

    console = Console()
    if not console.is_terminal:
        console = Console(width=160)  # a log file or pipe: do not squeeze the table to 80 columns
    names = args.designs or list(designs.all_designs())
    load = os.getloadavg()[0]
    console.print(f"[dim]{os.cpu_count()} cores, load average {load:.2f} at start"
                  f"{' (machine busy: numbers are pessimistic)' if load > (os.cpu_count() or 1) else ''}[/]")
    table = Table(title="kabe streaming simulation (Verilator)")
    for col in ("design", "rows", "beats", "mismatch", "beats/cyc", "compile s", "frames s", "simulate s",
                "compare s", "wall s", "whole s", "whole/sim", "rows/s", "Mbeats/s", "Mcyc/s"):
        table.add_column(col, justify="left" if col == "design" else "right")
    results = []
    status = 0
    for name in names:
        t0 = time.monotonic()
        # the sim verb's own steps: resolve the design once (FuseSoC's sim target, the XDC), then simulate
        ctx = design_context.make(designs.get(name), console=console)
        resolved = time.monotonic() - t0
        r = runner.run_sim(ctx, SimAsk(args.rows, seed=args.seed))
        r = {**r, "seconds": time.monotonic() - t0, "resolve_seconds": resolved + r.get("resolve_seconds", 0.0)}
        results.append(r)
        status |= 0 if r["passed"] else 1
        console.print(f"{name}: whole {r['seconds'] - r['compile_seconds']:.2f} s (compile "
                      f"{r['compile_seconds']:.1f} s not counted), simulate {r['simulate_seconds']:.2f} s "
                      f"(harness loop {r['sim_seconds']:.2f} s, of which {r.get('stream_wait_seconds', 0.0):.2f} s "
                      f"waiting for streamed input), frames {r['frame_seconds']:.2f} s "
                      f"(of which {r['model_seconds']:.2f} s during the simulation), whole / simulate "
                      f"{(r['seconds'] - r['compile_seconds']) / max(r['simulate_seconds'], 1e-9):.3f}; "
                      f"of the whole, {r.get('resolve_seconds', 0.0):.2f} s resolving the sim target (FuseSoC) and its key "
                      f"(without it: {(r['seconds'] - r['compile_seconds'] - r.get('resolve_seconds', 0.0)) / max(r['simulate_seconds'], 1e-9):.3f}), "
                      f"load {os.getloadavg()[0]:.2f}")
        sim = max(r["simulate_seconds"], 1e-9)
        whole = r["seconds"] - r["compile_seconds"]  # a harness built this run: its compile is not the check's
        table.add_row(
            name, f"{r['rows']:,}", f"{r['beats']:,}", str(r["mismatches"]), f"{r['beats_per_cycle']:.3f}",
            f"{r['compile_seconds']:.1f}", f"{r['frame_seconds']:.1f}", f"{r['simulate_seconds']:.1f}",
            f"{r['compare_seconds']:.2f}", f"{r['seconds']:.1f}", f"{whole:.1f}", f"{whole / sim:.2f}",
            f"{r['rows'] / sim:,.0f}", f"{r['beats'] / sim / 1e6:.2f}", f"{r['total_cycles'] / sim / 1e6:.2f}",
        )
    console.print(table)
    console.print("[dim]rows/s, Mbeats/s and Mcyc/s are over the simulate step (the harness process, "
                  "including its file I/O); beats count both ports.[/]")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    return status


if __name__ == "__main__":
    sys.exit(main())
