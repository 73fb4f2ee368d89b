#!/usr/bin/env python3
"""STAND-IN for AVED's hw/amd_v80_gen5x8_25.1/fpt/fpt_pdi_gen.py (kabe tests only; NOT AMD's script).

Takes the same arguments (--fpt <fpt.bin> --pdi <design>_nofpt.pdi --output <design>.pdi) and writes
the layout AVED's script documents: the flash partition table padded with 0xFF to 32 KiB (the PMC's
boot search step), then the _nofpt image. It prints STAND-IN; the FPT it is given is a stand-in too.
"""

import argparse
import sys
from pathlib import Path

FPT_PAD = 0x8000  # 32 KiB


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description="STAND-IN for AVED's fpt_pdi_gen.py")
    ap.add_argument("--fpt")
    ap.add_argument("--pdi")
    ap.add_argument("--output", default="-")
    a = ap.parse_args(argv)
    if not a.fpt or not a.pdi:
        print("ERROR: FPT Setup PDI Generation requires --fpt and --pdi to be specified")
        return 1
    if not a.fpt.endswith(".bin") or not a.output.lower().endswith(".pdi"):
        print("ERROR: --fpt must be a .bin and --output a .pdi")
        return 1
    fpt = Path(a.fpt).read_bytes()
    if len(fpt) > FPT_PAD:
        print(f"ERROR: {a.fpt} is larger than {FPT_PAD} bytes")
        return 1
    Path(a.output).write_bytes(fpt.ljust(FPT_PAD, b"\xff") + Path(a.pdi).read_bytes())
    print(f"STAND-IN fpt_pdi_gen.py (kabe tests; not AVED's): {a.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
