"""kabe.base.tool_group with real processes: a tool and its children die with the kabe process that
started them, even after kill -9 of that process alone, and hold its build lock until they are gone.
(The whole chain with a real `doit build` and Yosys is tests/test_build_kill.py.)"""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kabe.base import scratch, tool_group

ROOT = Path(__file__).resolve().parents[2]


def _group_members(pgid: int) -> list[int]:
    """Live processes (not zombies) whose process group is pgid, read from /proc."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z" and int(fields[2]) == pgid:
            found.append(int(entry.name))
    return found


def _wait_gone(pgid: int, limit_s: float) -> float:
    t0 = time.monotonic()
    while _group_members(pgid) and time.monotonic() - t0 < limit_s:
        time.sleep(0.02)
    return time.monotonic() - t0


# A kabe stand-in: takes the build lock on a folder, starts a tool with a grandchild under it, prints
# the tool group's id, and sleeps until it is killed.
KABE = """
import sys, time
from pathlib import Path
from kabe.base import scratch, tool_group
with scratch.exclusive(Path(sys.argv[1]), say=lambda m: None):
    p = tool_group.popen(["sh", "-c", sys.argv[2]])
    print(p.pid, flush=True)
    time.sleep(600)
"""


@pytest.fixture(autouse=True)
def _no_leftovers():
    """Whatever a failing test leaves behind is killed, by its group id, at teardown."""
    started.clear()
    yield
    for pgid in started:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except ProcessLookupError:
            pass


started: list[int] = []


def _start_kabe(folder: Path, tool: str) -> tuple[subprocess.Popen, int]:
    proc = subprocess.Popen([sys.executable, "-c", KABE, str(folder), tool], stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    pgid = int(proc.stdout.readline())
    started.append(pgid)
    deadline = time.monotonic() + 10
    while len(_group_members(pgid)) < 3 and time.monotonic() < deadline:  # guard shell, sh, sleep
        time.sleep(0.02)
    assert len(_group_members(pgid)) >= 3
    return proc, pgid


def test_kill_9_of_kabe_alone_takes_the_tool_and_its_children(tmp_path):
    proc, pgid = _start_kabe(tmp_path / "build", "sleep 300 & sleep 300")
    os.kill(proc.pid, signal.SIGKILL)  # kabe alone, not its group: the tools get no signal from this
    proc.wait()
    took = _wait_gone(pgid, 5)
    assert not _group_members(pgid), f"left running: {_group_members(pgid)}"
    print(f"tool group gone {took:.2f} s after kill -9 of its kabe")
    assert took < 3


def test_the_build_lock_is_held_until_the_last_tool_exits(tmp_path):
    """A tool that ignores SIGTERM outlives its killed kabe by ~2 s; the build folder's lock is its
    too, so another build cannot take the folder until it has exited."""
    folder = tmp_path / "build"
    proc, pgid = _start_kabe(folder, "trap '' TERM; sleep 2; sleep 0.1")
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    with open(scratch.lock_file(folder), "a+") as f:
        with pytest.raises(BlockingIOError):  # kabe is dead, its tool is not: the folder is still taken
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        assert _group_members(pgid)
        t0 = time.monotonic()
        fcntl.flock(f, fcntl.LOCK_EX)  # what the rerun's scratch.exclusive does: wait
        waited = time.monotonic() - t0
        assert not _group_members(pgid), "the lock was free while a tool of the old build still ran"
    assert 0.5 < waited < 5, waited


def test_without_the_lock_inherited_the_folder_is_free_at_once(tmp_path, monkeypatch):
    """The guard above can fail: when the tools do not hold the lock, it is free as soon as kabe dies."""
    monkeypatch.setattr(tool_group, "held_fds", lambda: ())
    with scratch.exclusive(tmp_path / "b", say=lambda m: None):
        p = tool_group.popen(["sleep", "5"])
    try:
        with open(scratch.lock_file(tmp_path / "b"), "a+") as f:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)  # free although `sleep` still runs
    finally:
        tool_group.stop(p)


def test_a_timeout_stops_the_whole_group(tmp_path):
    marker = tmp_path / "grandchild.pid"
    with pytest.raises(subprocess.TimeoutExpired):
        tool_group.run(["sh", "-c", f"sleep 300 & echo $! > {marker}; wait"], timeout=0.5)
    pid = int(marker.read_text())
    deadline = time.monotonic() + 3
    while Path(f"/proc/{pid}").exists() and "Z" not in Path(f"/proc/{pid}/stat").read_text().split()[2] \
            and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not Path(f"/proc/{pid}").exists() or Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"


def test_a_tool_that_exits_leaves_nothing_behind(tmp_path):
    marker = tmp_path / "left.pid"
    done = tool_group.run(["sh", "-c", f"sleep 300 & echo $! > {marker}; exit 3"], capture_output=True, text=True)
    assert done.returncode == 3  # the tool's own status, through the guard shell
    pid = int(marker.read_text())
    deadline = time.monotonic() + 3
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not Path(f"/proc/{pid}").exists()


def test_output_and_status_pass_through():
    done = tool_group.run(["sh", "-c", "echo out; echo err >&2; exit 7"], capture_output=True, text=True)
    assert (done.returncode, done.stdout, done.stderr) == (7, "out\n", "err\n")


def test_a_missing_tool_is_file_not_found():
    with pytest.raises(FileNotFoundError):
        tool_group.run(["kabe-no-such-tool"])


def test_ctrl_c_in_kabe_stops_the_tool_it_waits_for(tmp_path):
    """The tool's own session never sees the terminal's Ctrl-C: kabe's KeyboardInterrupt stops its group."""
    marker = tmp_path / "tool.pid"
    # kabe lives on after the interrupt (doit reports, the build says "interrupted"): the tool must not
    script = ("import time\nfrom kabe.base import tool_group\ntry:\n"
              f"    tool_group.run(['sh', '-c', 'echo $$ > {marker}; sleep 300 & wait'])\n"
              "except KeyboardInterrupt:\n    print('interrupted', flush=True)\n    time.sleep(30)\n")
    kabe = subprocess.Popen([sys.executable, "-c", script], env={**os.environ, "PYTHONPATH": str(ROOT)},
                            stdout=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 10
    while not marker.exists() or not marker.read_text().strip():
        assert time.monotonic() < deadline
        time.sleep(0.02)
    pgid = os.getpgid(int(marker.read_text()))
    started.append(pgid)
    kabe.send_signal(signal.SIGINT)  # what the terminal sends kabe's own process group
    try:
        assert kabe.stdout.readline() == "interrupted\n"
        assert _wait_gone(pgid, 3) < 3 and not _group_members(pgid)
        assert kabe.poll() is None  # gone while kabe still runs: stopped by kabe, not by its death
    finally:
        kabe.kill()
        kabe.wait()


# `kabe repro` stand-in: its child build (repro._build_in) is a script that records its pid and
# starts a grandchild, in place of `python -m kabe.cli build`.
REPRO = """
import sys
from pathlib import Path
from rich.console import Console
from kabe.build import repro
sys.executable = sys.argv[1]  # the child build repro starts: the stand-in below
repro._build_in(Path(sys.argv[2]), "stage2", "open", Console(file=open("/dev/null", "w")))
"""


def test_kill_9_of_kabe_repro_takes_its_child_build_too(tmp_path):
    child = tmp_path / "fake_build.sh"
    pids = tmp_path / "pids"
    child.write_text(f"#!/bin/sh\nsleep 300 &\necho $$ $! > {pids}\nwait\n")
    child.chmod(0o755)
    proc = subprocess.Popen([sys.executable, "-c", REPRO, str(child), str(tmp_path)],
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    deadline = time.monotonic() + 20
    while not (pids.exists() and pids.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.02)
    build_pid = int(pids.read_text().split()[0])
    pgid = os.getpgid(build_pid)
    started.append(pgid)
    assert pgid != os.getpgid(proc.pid)  # the child build leads a group of its own
    os.kill(proc.pid, signal.SIGKILL)  # repro alone: its child build gets no signal from this
    proc.wait()
    _wait_gone(pgid, 5)
    assert not _group_members(pgid), f"repro's child build left running: {_group_members(pgid)}"
