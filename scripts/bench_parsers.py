#!/usr/bin/env python3
"""Benchmark: how long `kabe parse` / `kabe gate` take to answer on pathological input (issue 18:
a 40 k-space header line took 14.5 s, detection 30 s on 40 k newlines, 10 MB never finished).

Every input goes through the file door (kabe.parsers.detect.parse_file: open, detect, parse) and,
where it names a report kind, straight into that parser too. Each must be answered (a record or a
clear refusal) in under 2 s; the script prints the time and the answer of each, and exits 1 if any
took longer. A benchmark, not a test: it prints numbers (scripts/bench_*.py).

    python scripts/bench_parsers.py            # all cases
    python scripts/bench_parsers.py --limit 2  # the bound it checks (seconds)
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kabe.parsers import ReportError  # noqa: E402
from kabe.parsers import (  # noqa: E402
    kabe_timing, vivado_clock_interaction, vivado_logic_levels, vivado_timing_paths, vivado_timing_summary,
    vivado_utilization, yosys_stat,
)
from kabe.parsers.detect import parse_file  # noqa: E402
from kabe.timing.report import END_MARKER, HEADER  # noqa: E402

K40 = 40_000
MB10 = 10 * 1024 * 1024
SP = " " * K40


def _fill(line: str, size: int = MB10) -> str:
    return line * max(1, size // len(line))


HEAD = "| Tool Version : Vivado v.2023.2\n| Command      : report_timing_summary -file x.rpt\n"
MET = (Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "vivado" / "flow_timing_summary_met.rpt").read_text()
_TD = MET.index("| Timing Details")
CASES = {
    # issue 18's three, and their 10 MB versions
    "header line, 40k spaces (_HEADER_RE)": "|" + SP + "x\n",
    "header key then 40k spaces": "| Tool" + SP + "x\n",
    "header value of 40k spaces": "| Command :" + SP + "x\n",
    "box title, 40k spaces (_BOX_TITLE_RE)": HEAD + "| x" + SP + "y\n| ---\n",
    "detect: 40k newlines": "\n" * K40 + "x\n",
    "detect: 40k blank lines of spaces": "   \n" * K40 + "x\n",
    "10 MB of 40k-space header lines": _fill("|" + SP + "x\n"),
    "10 MB of box titles": HEAD + _fill("| x" + SP + "y\n| ---\n"),
    "10 MB of newlines": "\n" * MB10 + "x\n",
    # other shapes every parser meets
    "one 10 MB line": "x" * MB10 + "\n",
    "10 MB of 'Slack' lines": HEAD + _fill("Slack (MET) :" + " " * 5000 + "x\n"),
    "10 MB of path fields": HEAD + "| Design Timing Summary\n| ---\n" + _fill("  Source:" + " " * 5000 + "x\n"),
    "10 MB of clock rows": HEAD + "| Clock Summary\n| ---\n" + _fill("clk {" + " " * 5000 + "\n"),
    "10 MB of check_timing heads": HEAD + _fill("1. checking" + " " * 5000 + "x\n"),
    "10 MB of yosys cell lines": "=== top ===\n" + _fill(" " * 5000 + "1" + " " * 5000 + "cells x\n"),
    "10 MB table row of spaces": HEAD + "| Design Timing Summary\n| ---\n\n  WNS(ns)\n  -------\n" + _fill(" " * 5000 + "\n"),
    "5.9 M newlines (under the line bound)": "\n" * 5_900_000 + "x\n",
    # a real report with the junk inside it: it has to be read past, not just refused up front
    "met report, 5.9 M blank lines in Timing Details": MET[:_TD] + "\n" * 5_900_000 + MET[_TD:],
    "met report, 10 MB of 40k-space lines appended": MET + _fill(SP + "\n"),
    "kabe estimate, 5.9 M blank lines in a section": HEADER + "\nUnknown cell types (untimed): none\n"
    "== Design Timing Summary ==\n" + "\n" * 5_900_000 + "== Clock Summary ==\n\n" + END_MARKER + "\n",
    "met report, 10 MB of indented lines in a path": MET.replace("  Source:", "  Source:" + "\n   x" * 2_000_000, 1),
}
# the parsers themselves, handed the text directly (no detection first)
PARSERS = {
    "timing summary": vivado_timing_summary.parse, "report_timing": vivado_timing_paths.parse,
    "utilization": vivado_utilization.parse, "clock interaction": vivado_clock_interaction.parse,
    "logic levels": vivado_logic_levels.parse, "kabe timing": kabe_timing.parse_text,
}


def answer(fn, *args) -> tuple[float, str]:
    t0 = time.perf_counter()
    try:
        out = fn(*args)
        what = f"parsed ({out['kind']})" if isinstance(out, dict) and "kind" in out else "parsed"
    except ReportError as e:
        what = "refused: " + str(e).split(": ", 1)[-1][:70]
    return time.perf_counter() - t0, what


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--limit", type=float, default=2.0, help="seconds each answer must take at most")
    args = ap.parse_args()
    worst = 0.0
    print(f"{'input':42} {'size':>10} {'door s':>8}  {'slowest parser s':>17}  answer at the door")
    with tempfile.TemporaryDirectory() as tmp:
        for name, text in CASES.items():
            f = Path(tmp) / "bench.rpt"
            f.write_text(text)
            t_door, what = answer(parse_file, f)
            t_parsers = max(answer(fn, text, "bench")[0] for fn in PARSERS.values())
            t_stat = answer(yosys_stat.parse_stat_text, text, "bench")[0]
            slowest = max(t_parsers, t_stat)
            worst = max(worst, t_door, slowest)
            print(f"{name:42} {len(text):>10,} {t_door:8.3f}  {slowest:17.3f}  {what}")
    print(f"worst: {worst:.3f} s (bound {args.limit:g} s): {'OK' if worst < args.limit else 'TOO SLOW'}")
    return 0 if worst < args.limit else 1


if __name__ == "__main__":
    sys.exit(main())
