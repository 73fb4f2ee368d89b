#!/usr/bin/env python3
"""Print this project's study as Markdown tables: the wall per stage, the token budget at contexts
128 / 512 / 2048 (attention on the CPU vs in the PL), the V80 what-if, and the V80 numbers for the
ternary engine this project builds, each next to its source (llm_accel.figures).

    python scripts/print_models.py                  # tables only
    python scripts/print_models.py --plots out/     # also write wall.png and token_budget.png
    python scripts/print_models.py --clock-ns 6.5   # the wall at another clock period
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kabe.project import designs  # noqa: E402
from llm_accel import figures  # noqa: E402
from llm_accel.perf import token_budget, wall, whatif_v80  # noqa: E402


def v80_numbers() -> str:
    """The V80's figures and the ternary engine's tokens/s, each next to where it comes from."""
    built = designs.get("v80_ternary").ports
    lane = whatif_v80.channel_gbps()
    rows = {(r.model, r.bandwidth_label): r for r in whatif_v80.ternary_table(built)}
    peak, four = rows[("Qwen 4B", "peak")], rows[("Qwen 4B", f"{built} channels")]
    lanes = whatif_v80.V80.memory_ports
    return "\n".join([
        f"- peak: {figures.V80_PEAK.cited()}",
        f"- the post's claim: {figures.V80_POST.cited()}",
        f"- 460: {figures.AMR_460.cited()}",
        f"- channels: {whatif_v80.channels_for_peak()} channels take in the peak ({float(figures.V80_PEAK):g} GB/s / "
        f"{lane:g} GB/s a channel: {lanes.beat_bytes} B x {lanes.clock_mhz:g} MHz, kabe's v80 board profile)",
        f"- Qwen 4B ternary: {peak.bytes_per_token_gb:g} GB a token (4.0e9 weights / {whatif_v80.TERNARY_WEIGHTS_PER_BYTE} "
        f"a byte, the engine's packing: llm_accel.model.ternary) -> {peak.tok_s:,.0f} tok/s at the peak",
        f"- Qwen 4B ternary on the {built} channels built (cores/v80_ternary/design.yaml: ports {built}): "
        f"{four.bandwidth_gbps:g} GB/s -> {four.tok_s:,.0f} tok/s",
        f"- capacity: {figures.V80_HBM_BYTES.cited()}",
    ])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--clock-ns", type=float, default=wall.DOC_CLOCK_PERIOD_NS,
                    help="clock period for the wall table (default: the documents' 7.00 ns)")
    ap.add_argument("--plots", type=Path, help="directory to write wall.png and token_budget.png into")
    args = ap.parse_args(argv)

    rows = wall.figure1(clock_period_ns=args.clock_ns, include_one_port_probe=True)
    print(f"## The wall per stage (PYNQ-Z1, clock {args.clock_ns:.2f} ns; bound = model, measured = document)\n")
    print(wall.render_markdown(rows))
    print("\n## Token budget, SmolLM2-135M (matmul in the PL at the measured 9.16 G weights/s)\n")
    print(token_budget.render_markdown())
    print("\n### What is counted, and the document's derived figures\n")
    print(token_budget.reconciliation())
    print("\n## What if: Alveo V80 (the forum post's arithmetic)\n")
    print(whatif_v80.render_markdown())
    print("\n## The V80 for the ternary engine built here\n")
    print(v80_numbers())
    if args.plots:
        from llm_accel.perf import plots

        print()
        print(f"wrote {plots.plot_wall(args.plots / 'wall.png', rows=wall.figure1(clock_period_ns=args.clock_ns))}")
        print(f"wrote {plots.plot_token_budget(args.plots / 'token_budget.png')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
