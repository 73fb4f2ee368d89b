#!/usr/bin/env python3
"""Print kabe's models as Markdown tables: the wall per stage, the token budget at contexts
128 / 512 / 2048 (attention on the CPU vs in the PL), and the V80 what-if.

    python scripts/print_models.py                  # tables only
    python scripts/print_models.py --plots out/     # also write wall.png and token_budget.png
    python scripts/print_models.py --clock-ns 6.5   # the wall at another clock period
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kabe import token_budget, wall, whatif_v80  # noqa: E402


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
    if args.plots:
        from kabe import plots

        print()
        print(f"wrote {plots.plot_wall(args.plots / 'wall.png', rows=wall.figure1(clock_period_ns=args.clock_ns))}")
        print(f"wrote {plots.plot_token_budget(args.plots / 'token_budget.png')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
