#!/usr/bin/env python3
"""kabe gating its own designs: build every design on the open flow and check each gate verdict.

A design whose design.yaml says `expect_gate: fail` (stage3_naive, the document's failing first
build) must FAIL its gate; every other design must pass. Exit 1 if any verdict is not the expected
one, so CI fails both when a good design breaks and when the gate stops catching the bad one.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kabe import designs, provenance  # noqa: E402
from kabe.records import metrics  # noqa: E402
from kabe.records.archive import archive_dir  # noqa: E402


def verdict(design: designs.Design) -> str:
    """pass | fail from the archived metrics.json; a build that crashed before archiving is an error."""
    rc = subprocess.run([sys.executable, "-m", "doit", f"build:{design.name}", "flow=open"]).returncode
    path = archive_dir(provenance.current_commit(), design.name, "open") / "metrics.json"
    if not path.exists():
        return f"error (doit exit {rc}, no {path})"
    record = metrics.load(path)
    got = "pass" if record["gate"]["passed"] else "fail"
    if (rc == 0) != (got == design.expect_gate):  # doit exits 0 when the verdict is the expected one
        return f"error (doit exit {rc} disagrees with the archived gate verdict {got}, expected {design.expect_gate})"
    if got == "fail" and not any(c["name"] == "timing.wns" and not c["passed"] for c in record["gate"]["checks"]):
        return "fail, but not on timing: " + "; ".join(record["gate"]["failures"])
    return got


def main() -> int:
    wrong, could_not_run = [], False
    for design in designs.all_designs().values():
        got = verdict(design)
        print(f"ci_gates: {design.name}: gate {got} (expected {design.expect_gate})", flush=True)
        if got != design.expect_gate:
            wrong.append(design.name)
            could_not_run |= got.startswith("error")
    if wrong:
        print(f"ci_gates: unexpected gate verdicts for {', '.join(wrong)}", file=sys.stderr)
        return 2 if could_not_run else 1  # the README's exit codes: 2 could not run, 1 a gate failed
    print(f"ci_gates: all {len(designs.all_designs())} designs gave their expected verdict")
    return 0


if __name__ == "__main__":
    sys.exit(main())
