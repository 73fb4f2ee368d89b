"""Two builds of the same design and flow at once (issue 16): both finish, the second waits for the
scratch folder build/<design>/<flow>/ instead of running Yosys in it beside the first, and one
consistent archive results (its record agrees with the raw reports archived beside it).
Real Verilator and Yosys on stage4, in a copy of this checkout (tests/repo_copy.py)."""

from __future__ import annotations

import pytest
import json
import subprocess
import sys

import repo_copy
from kabe.parsers import kabe_timing
from kabe.records import metrics

pytestmark = pytest.mark.e2e  # end to end: real tools, minutes (the fast tier leaves it out: -m 'not e2e')


def test_two_concurrent_stage4_builds(tmp_path):
    copy = repo_copy.make(tmp_path / "repo")
    cmd = [sys.executable, "-m", "kabe.cli", "build", "stage4", "--flow", "open"]
    procs = [subprocess.Popen(cmd, cwd=copy, env=repo_copy.env(copy), stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=1800)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    waited = [o for o in outs if "is in use by another build" in o and "waiting for it to finish" in o]
    assert len(waited) == 1, outs  # the one that came second said so, and then built
    assert "build/stage4/open is free after" in waited[0]

    sha = repo_copy.git(copy, "rev-parse", "HEAD")
    commit_dir = copy / "reports" / sha
    assert sorted(p.name for p in commit_dir.iterdir()) == ["stage4"]
    assert sorted(p.name for p in (commit_dir / "stage4").iterdir()) == ["open"]  # no temp or old copies
    archive = commit_dir / "stage4" / "open"
    record = metrics.load(archive / "metrics.json")  # complete and valid against the schema
    manifest = json.loads((archive / "manifest.json").read_text())
    assert record["gate"]["passed"] and manifest["commit"] == record["commit"] == sha
    on_disk = sorted(p.name for p in archive.iterdir())
    assert on_disk == sorted({"metrics.json", "manifest.json", "cache_key.json", *manifest["raw_files"]})
    # the record is the one these raw files produced, not the other build's
    timing = kabe_timing.parse(archive / "timing_estimate.rpt")
    assert timing["wns_ns"] == record["timing"]["wns_ns"]
