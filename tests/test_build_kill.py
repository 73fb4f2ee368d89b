"""kill -9 of `doit` alone (not its group) during Yosys: within 3 s no process of that build is left,
and the rerun's metrics are those of an uninterrupted build (issue 22). Real doit, FuseSoC,
Verilator and Yosys on stage2 (the smallest design), in a copy of this checkout (tests/repo_copy.py).

Before kabe.base.tool_group, Yosys (and make/cc1plus when the kill came during the simulation model's
compile) kept running in build/stage2/open after doit was gone, and the rerun built beside them."""

from __future__ import annotations

import pytest
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import repo_copy

pytestmark = pytest.mark.e2e  # end to end: real tools, minutes (the fast tier leaves it out: -m 'not e2e')

DESIGN = "stage2"
# what must not differ between an uninterrupted build and the rerun after a kill (the rest is time)
SAME = ("design", "flow", "part", "clock_period_ns", "timing", "utilization", "gate", "tools", "inputs", "cache_key")


def _processes_under(folder: Path) -> dict[int, str]:
    """Live processes whose working folder or command line is under `folder`, read from /proc."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if (entry / "stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                continue
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            cwd = os.readlink(entry / "cwd")
        except OSError:  # gone meanwhile, or not ours to read
            continue
        if str(folder) in cmd or cwd == str(folder) or cwd.startswith(f"{folder}/"):
            found[int(entry.name)] = cmd[:160]
    return found


def _doit(copy: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "doit", "-f", str(copy / "dodo.py"), "--dir", str(copy), f"build:{DESIGN}",
            "flow=open", *extra]


def _archive(reports: Path) -> Path:
    """The one archived open-flow build of DESIGN under reports/ (<sha> or <sha>-dirty)."""
    (unit,) = reports.glob(f"*/{DESIGN}/open/metrics.json")
    return unit.parent


def test_kill_9_of_doit_during_yosys_leaves_no_tool_and_the_rerun_matches(tmp_path):
    copy = repo_copy.make(tmp_path / "repo")
    env = repo_copy.env(copy)
    # the uninterrupted build: the reference (and the simulation model, compiled once, stays warm)
    ref = subprocess.run(_doit(copy), cwd=copy, env=env, capture_output=True, text=True, timeout=1200)
    assert ref.returncode == 0, ref.stdout + ref.stderr
    reference_unit = _archive(copy / "reports")
    reference_unit.parents[1].rename(tmp_path / "reference")  # the rerun must build, not reuse this
    reference_unit = _archive(tmp_path)
    reference = json.loads((reference_unit / "metrics.json").read_text())

    # the killed build, in its own session so that nothing but the test's signal reaches it
    build_dir = copy / "build" / DESIGN / "open"
    doit = subprocess.Popen(_doit(copy, "cache=off"), cwd=copy, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 900
        while not any("yosys" in c for c in _processes_under(build_dir).values()):
            assert doit.poll() is None, f"doit exited ({doit.returncode}) before Yosys ran"
            assert time.monotonic() < deadline, "Yosys never started"
            time.sleep(0.05)
        before = _processes_under(copy)
        os.kill(doit.pid, signal.SIGKILL)  # doit alone: not its group, not its session
        t0 = time.monotonic()
        doit.wait()
        left = _processes_under(copy)
        while left and time.monotonic() - t0 < 10:
            time.sleep(0.02)
            left = _processes_under(copy)
        gone_s = time.monotonic() - t0
    finally:
        for pid in _processes_under(copy):  # a failing run leaves nothing behind for the next test
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    print(f"{len(before)} processes of the build when doit was killed; none left after {gone_s:.2f} s")
    assert not left, f"left running after kill -9 of doit: {left}"
    assert gone_s < 3, gone_s
    assert len(before) >= 3, before  # doit, the guard shell and Yosys at least: the scan saw the build

    rerun = subprocess.run(_doit(copy, "cache=off"), cwd=copy, env=env, capture_output=True, text=True, timeout=1200)
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    unit = _archive(copy / "reports")
    again = json.loads((unit / "metrics.json").read_text())
    assert {k: again[k] for k in SAME} == {k: reference[k] for k in SAME}
    for name in ("timing_estimate.rpt", "yosys_stat.txt"):
        assert (unit / name).read_bytes() == (reference_unit / name).read_bytes(), name
