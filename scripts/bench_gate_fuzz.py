#!/usr/bin/env python3
"""A longer fuzz of the gate than the suite's (tests/parsers/test_gate_fuzz.py): seeded, structured
damage (tests/parsers/gate_fuzz.py) to every shared report_timing_summary, and the counts.

Two families of mutants: one-line damage (gate_fuzz.OPS: a mutant of a report that fails must not
pass) and whole-report damage (gate_fuzz.WHOLE_OPS, issue 37: a verdict line added, a section deleted
or duplicated, a failing run joined on with damaged titles, Unicode spaces in a structural line,
a Timer Settings corner switched off, a stray negative slack line: no such mutant may pass at all).

Prints the mutants tried, how each ended (refused by the parser, failed, passed, false pass,
excused, crash) per kind, the false passes and crashes themselves (at most --show of each), and the
run time. Exit 1 when there is a false pass or a crash.

    python scripts/bench_gate_fuzz.py [--count 20000] [--whole 20000] [--seed 22] [--shared DIR] [--show 10]
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "parsers"))

import gate_fuzz as gf  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--count", type=int, default=20000, help="one-line mutants to try (default 20000)")
    ap.add_argument("--whole", type=int, default=20000, help="whole-report mutants to try (default 20000)")
    ap.add_argument("--seed", type=int, default=22)
    ap.add_argument("--shared", default=os.environ.get("KABE_SHARED_DIR") or str(ROOT.parent / "shared"))
    ap.add_argument("--show", type=int, default=10, help="false passes / crashes to print (default 10)")
    args = ap.parse_args()
    paths = gf.timing_summaries(Path(args.shared))
    if not paths:
        print(f"no timing summaries under {args.shared}/fixtures (pass --shared DIR)", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    subjects = [gf.Subject.load(p, str(p.relative_to(Path(args.shared) / "fixtures"))) for p in paths]
    rng = random.Random(args.seed)
    counts: Counter[str] = Counter()
    by_op: dict[str, Counter[str]] = {op: Counter() for op in gf.OPS + gf.WHOLE_OPS}
    shown: dict[str, list[str]] = {"false_pass": [], "crash": []}

    def tally(op, out):
        counts[out.kind] += 1
        by_op[op][out.kind] += 1
        if out.kind in shown and len(shown[out.kind]) < args.show:
            shown[out.kind].append(out.detail)

    for _ in range(args.count):
        s = rng.choice(subjects)
        op = rng.choice(gf.OPS)
        line = gf.line_for(s, op, rng.random() < 0.75, rng.randrange(1 << 30))
        tally(op, gf.judge(s, gf.Mutation(op, line, rng.randrange(1 << 16))))
    for _ in range(args.whole):
        s = rng.choice(subjects)
        op = rng.choice(gf.WHOLE_OPS)
        tally(op, gf.judge_whole(s, gf.WholeMutation(op, rng.randrange(1 << 16), rng.randrange(1 << 30)), subjects))
    dt = time.perf_counter() - t0
    failing = sum(not s.passed for s in subjects)
    total = args.count + args.whole
    print(f"{len(subjects)} timing summaries ({failing} fail the gate, {len(subjects) - failing} pass), "
          f"seed {args.seed}")
    print(f"mutants: {total} ({args.count} one-line, {args.whole} whole-report); refused {counts['refused']}, "
          f"failed {counts['failed']}, passed {counts['passed']} (allowed: one-line damage to a report that "
          f"passes), excused {counts['excused']}")
    print("| op | mutants | refused | failed | passed | excused | false passes | crashes |\n|---|---|---|---|---|---|---|---|")
    for op, c in by_op.items():
        print(f"| {op} | {sum(c.values())} | {c['refused']} | {c['failed']} | {c['passed']} | {c['excused']} | "
              f"{c['false_pass']} | {c['crash']} |")
    for kind in ("false_pass", "crash"):
        for d in shown[kind]:
            print(f"{kind}: {d}")
    print(f"false passes: {counts['false_pass']}")
    print(f"crashes: {counts['crash']}")
    print(f"time: {dt:.1f} s ({dt / max(1, total) * 1000:.1f} ms a mutant)")
    return 1 if counts["false_pass"] or counts["crash"] else 0


if __name__ == "__main__":
    sys.exit(main())
