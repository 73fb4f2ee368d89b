#!/usr/bin/env python3
"""kabe gating its own designs: build every design on the open flow and check each gate verdict.
A design that builds only with its own AMD flow (an HLS kernel) is C-simulated when that tool is absent.

Each design must give the verdict its design.yaml expects: `expect_gate: fail` (stage3_naive, the
document's failing first build) must FAIL on timing, `not_estimated` (the V80 on the open flow: no
timing number) must be neither pass nor fail, every other design must pass. Exit 1 if any verdict is
not the expected one, so CI fails both when a good design breaks and when the gate stops catching the
bad one. The commit is read once, before any build: a commit made meanwhile does not move the archive.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kabe.project import designs  # noqa: E402
from kabe.base import provenance  # noqa: E402
from kabe.project import flows as registry  # noqa: E402
from kabe.records import metrics  # noqa: E402
from kabe.store.archive import archive_dir  # noqa: E402


def verdict(design: designs.Design, commit: provenance.Commit) -> str:
    """pass | fail | not_estimated from the archived metrics.json (its gate's status, kabe.rules.gate);
    a build that crashed before archiving is an error."""
    rc = subprocess.run([sys.executable, "-m", "doit", f"build:{design.name}", "flow=open"]).returncode
    path = archive_dir(commit, design.name, "open") / "metrics.json"
    if not path.exists():
        return f"error (doit exit {rc}, no {path})"
    record = metrics.load(path)
    got = record["gate"].get("status") or ("pass" if record["gate"]["passed"] else "fail")
    if (rc == 0) != (got == design.expect_gate):  # doit exits 0 when the verdict is the expected one
        return f"error (doit exit {rc} disagrees with the archived gate verdict {got}, expected {design.expect_gate})"
    if got == "fail" and not any(c["name"] == "timing.wns" and not c["passed"] for c in record["gate"]["checks"]):
        return "fail, but not on timing: " + "; ".join(record["gate"]["failures"])
    return got


def csim_verdict(design: designs.Design) -> str:
    """A design that builds only with its own AMD flow (an HLS kernel: flow=vitis_hls), on a machine without
    that tool: its C-simulation against the model is what can run here, and it must pass."""
    rc = subprocess.run([sys.executable, "-m", "doit", f"sim:{design.name}"]).returncode
    return "pass" if rc == 0 else f"fail (doit sim exit {rc})"


def main() -> int:
    wrong, could_not_run = [], False
    commit = provenance.current_commit()
    for design in designs.all_designs().values():
        own = design.own_flow
        if own and shutil.which(registry.facts(own).executable) is None:
            got = csim_verdict(design)
            print(f"ci_gates: {design.name}: C-simulation {got} (flow={own} needs "
                  f"{registry.facts(own).executable}, not here: synthesis not run)", flush=True)
        else:
            got = verdict(design, commit)
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
