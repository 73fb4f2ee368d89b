#!/usr/bin/env python3
"""Untrusted-input benchmark (issue 18): what hostile input costs kabe now.

    python scripts/bench_trust.py [--archives N]

1. The YAML alias bomb in a design.yaml (the ~500-byte "billion laughs", 9 levels of 9 aliases):
   seconds until kabe.project.designs refuses it, as `doit list` reads every design (acceptance: < 1 s).
   For scale, what the same file costs the way design.yaml was read before (yaml.safe_load, then
   the error message's repr of the value), at 5-7 levels, where it still finishes.
2. Reading archives as untrusted input (kabe.records.history.scan: strict JSON, the schema, the
   re-gate): milliseconds per record, over N good records plus as many malformed ones.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import yaml  # noqa: E402

from kabe.project import designs  # noqa: E402
from kabe.records import history  # noqa: E402
from records_fixtures import make_cores, record, write_archive  # noqa: E402

GOOD = """core: kabe:design:bomb:0.1.0
kind: ternary
ports: 2
"""
CORE = "CAPI=2:\nname: kabe:design:bomb:0.1.0\ntargets:\n  default: {}\n"


def billion_laughs(levels: int) -> str:
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def bomb_refusal(tmp: Path, runs: int = 20) -> tuple[int, list[float], str]:
    d = tmp / "cores" / "bomb"
    d.mkdir(parents=True)
    text = billion_laughs(9)
    (d / "design.yaml").write_text(text)
    (d / "bomb.core").write_text(CORE)
    times, message = [], ""
    for _ in range(runs):
        t0 = time.perf_counter()
        try:
            designs.all_designs(tmp / "cores")
        except designs.DesignError as e:
            message = str(e)
        times.append(time.perf_counter() - t0)
    return len(text.encode()), times, message


def old_way(levels: int) -> tuple[float, int]:
    """yaml.safe_load, then repr of the value as the old error message did ({budgets!r})."""
    t0 = time.perf_counter()
    value = yaml.safe_load(billion_laughs(levels))
    n = len(repr(value))
    return time.perf_counter() - t0, n


def scan_archives(tmp: Path, n: int) -> tuple[float, int, int]:
    cores = make_cores(tmp)
    reports = tmp / "reports"
    for i in range(n):
        sha = f"{i + 1:040x}"
        write_archive(reports, record(sha, lut=9000 + i, wns=0.25 if i % 3 else -5.0, passed=True))
        bad = record(sha)
        bad["timing"]["wns_ns"] = "x"
        write_archive(reports, None, commit=sha, design="stage4", flow="vivado", text=json.dumps(bad))
    t0 = time.perf_counter()
    scanned = history.scan(reports, tmp, cores)
    return time.perf_counter() - t0, len(scanned.entries), len(scanned.invalid)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--archives", type=int, default=200)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as t:
        size, times, message = bomb_refusal(Path(t))
    print(f"YAML alias bomb ({size} bytes, 9 levels x 9 aliases = 9**9 leaves when expanded):")
    print(f"  refused in median {statistics.median(times) * 1e3:.2f} ms, max {max(times) * 1e3:.2f} ms "
          f"over {len(times)} runs (acceptance: < 1000 ms)")
    print(f"  message ({len(message)} chars): {message}")
    print("the old way (yaml.safe_load, then repr of the value for the error message), smaller bombs:")
    for levels in (5, 6, 7):
        seconds, chars = old_way(levels)
        print(f"  {levels} levels: {seconds:8.3f} s, repr {chars:,} chars")
    print("  (x9 per level: 9 levels would take ~81x the 7-level time and as many times the memory)")
    with tempfile.TemporaryDirectory() as t:
        seconds, good, bad = scan_archives(Path(t), args.archives)
    total = good + bad
    print(f"history.scan over {total} archived records ({good} valid, {bad} invalid): {seconds:.3f} s, "
          f"{seconds / total * 1e3:.2f} ms per record (read, schema, re-gate)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
