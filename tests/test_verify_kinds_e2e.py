"""The three `verify:` kinds end to end (issue 23), as a user meets them: in a throwaway project
(tests/repo_copy.py) three designs that are not kabe's go through `kabe ci` and `doit build` with the
real tools (Yosys, Verilator, cocotb): one checked by its own golden model at 500,000 beats, one by a
cocotb testbench whose JUnit is archived, one `verify: {none: reason}` that every verdict labels
"unverified: <reason>" (the build summary, metrics.json, kabe ci's lines, its JUnit and summary)."""

from __future__ import annotations

import pytest
import json
import xml.etree.ElementTree as ET

import repo_copy
from sim import user_designs as u

pytestmark = pytest.mark.e2e  # end to end: real tools, minutes (the fast tier leaves it out: -m 'not e2e')


def test_model_cocotb_and_none_designs_through_kabe_ci(tmp_path):
    copy = repo_copy.make(tmp_path / "project")
    u.write_width(copy)
    u.write_acc(copy)
    u.write_counter(copy)
    repo_copy.git(copy, "add", "-A")
    repo_copy.git(copy, "commit", "-qm", "three designs of a user")
    commit = repo_copy.git(copy, "rev-parse", "HEAD")

    rc, out = repo_copy.run(copy, "kabe.cli", "ci", "--no-pull", "--no-push", "width", "acc", "counter", timeout=1800)
    assert rc == 0, out[-4000:]
    reason = u.NONE_REASON
    assert f"kabe ci: counter (open) passed its gate, unverified: {reason}" in out, out[-3000:]
    assert "kabe ci: all 3 design(s) passed (1 unverified: counter)" in out, out[-3000:]

    unit = copy / "reports" / commit
    counter = json.loads((unit / "counter" / "open" / "metrics.json").read_text())
    assert counter["verification"] == {"kind": "none", "reason": reason}
    assert counter["sim"] is None and counter["gate"]["passed"] and counter["gate"]["unverified"] == reason

    width = json.loads((unit / "width" / "open" / "metrics.json").read_text())
    assert width["verification"] == {"kind": "model", "model": "width_model:stimulus"}
    assert width["sim"]["passed"] and width["sim"]["mismatches"] == 0 and width["sim"]["words_checked"] == 500_000
    assert width["gate"]["unverified"] is None

    acc = json.loads((unit / "acc" / "open" / "metrics.json").read_text())
    assert acc["sim"]["passed"] and acc["sim"]["tests"] == 2 and acc["sim"]["simulator"] == "cocotb"
    archived = ET.fromstring((unit / "acc" / "sim" / "junit.xml").read_text())
    assert len(list(archived.iter("testcase"))) == 2  # cocotb's own JUnit, beside the sim result
    assert (unit / "acc" / "open" / "junit.xml").read_text() == (unit / "acc" / "sim" / "junit.xml").read_text()

    ci_junit = ET.fromstring((copy / "reports" / "ci-junit.xml").read_text())
    suites = {s.get("name"): s for s in ci_junit.iter("testsuite")}
    skipped = [c for c in suites["counter (open)"].iter("testcase") if c.get("name") == "sim.verification"]
    assert len(skipped) == 1 and skipped[0].find("skipped").get("message") == f"unverified: {reason}"
    width_sim = [c for c in suites["width (open)"].iter("testcase") if c.get("name") == "sim.verification"]
    assert len(width_sim) == 1 and width_sim[0].find("skipped") is None and width_sim[0].find("failure") is None
    assert f"pass (unverified: {reason})" in (copy / "reports" / "ci-summary.md").read_text()

    # doit build: the archived build is reused; its summary and verdict line say unverified too
    rc, out = repo_copy.run(copy, "doit", "build:counter", timeout=900)
    assert rc == 0, out[-3000:]
    assert f"unverified: {reason}" in out.split("simulation check", 1)[1].splitlines()[0], out[-3000:]
    assert f"gate PASS (unverified: {reason})" in out, out[-3000:]
