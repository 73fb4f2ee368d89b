#!/usr/bin/env python3
"""Build benchmark: per design, the cold build time (every step re-run), the no-op `doit build`
time, and how much of a build is spent outside the tools (kabe's orchestration overhead).

    python scripts/bench_build.py [design ...]

"Tools" = Yosys (tool_seconds in metrics.json) + the simulation check's Verilator compile and
run; everything else (FuseSoC resolution, frame building, parsing, STA, gate, archive) is kabe.
Cold builds write to a temp archive root, so the real reports/ is left alone.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from kabe import build  # noqa: E402
from kabe.project import designs  # noqa: E402


def cold(design: str, reports: Path) -> dict:
    quiet = Console(file=open(os.devnull, "w"))
    t0 = time.monotonic()
    record = build.build(design, "open", console=quiet, reports_root=reports)
    total = time.monotonic() - t0
    sim = record.get("sim") or {}
    tools = (record.get("tool_seconds") or 0.0) + sim.get("compile_seconds", 0.0) + sim.get("simulate_seconds", 0.0)
    return {"total": total, "yosys": record.get("tool_seconds") or 0.0,
            "verilator": sim.get("compile_seconds", 0.0) + sim.get("simulate_seconds", 0.0), "tools": tools,
            "passed": record["gate"]["passed"]}


def noop(design: str) -> float:
    cmd = [sys.executable, "-m", "doit", f"build:{design}", "flow=open"]
    subprocess.run(cmd, cwd=ROOT, capture_output=True)  # make it up to date first (may build)
    t0 = time.monotonic()
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    elapsed = time.monotonic() - t0
    if not out.stdout.lstrip().startswith("--"):  # doit prints "-- build:x" for an up-to-date task
        print(f"warning: the second doit build:{design} was not a no-op:\n{out.stdout[-500:]}", file=sys.stderr)
    return elapsed


def main(argv: list[str]) -> int:
    names = argv or list(designs.all_designs())
    table = Table(title=f"kabe build benchmark (open flow; load average {os.getloadavg()[0]:.2f})")
    for col in ("design", "cold build s", "Yosys s", "Verilator s", "kabe s", "kabe share", "no-op doit s", "gate"):
        table.add_column(col, justify="right")
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            c = cold(name, Path(tmp))
            kabe_s = c["total"] - c["tools"]
            table.add_row(name, f"{c['total']:.2f}", f"{c['yosys']:.2f}", f"{c['verilator']:.2f}", f"{kabe_s:.2f}",
                          f"{kabe_s / c['total']:.0%}", f"{noop(name):.2f}", "pass" if c["passed"] else "FAIL")
    Console(width=130).print(table)
    print("A build whose gate verdict differs from design.yaml's expect_gate is never up to date in doit (it is re-checked every run): its no-op time is a rebuild.")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
