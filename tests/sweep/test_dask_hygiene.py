"""Every Dask process kabe or its tests start listens on loopback only (unless a farm is configured),
and Dask's scratch space is a private folder made fresh, never the shared /tmp/dask-scratch-space that
another account can make first (issue 36: a pre-made folder with symlinked lock files truncated two
of the user's files)."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import time
from pathlib import Path

import psutil

from kabe.sweep import cluster

from .conftest import dask_env, dask_scheduler_cmd, dask_worker_cmd

TESTS = Path(__file__).resolve().parent.parent


def _listening(procs) -> list[tuple[str, int]]:
    out = []
    for p in procs:
        for q in [p, *p.children(recursive=True)]:
            try:
                out += [(c.laddr.ip, c.laddr.port) for c in q.net_connections(kind="tcp") if c.status == psutil.CONN_LISTEN]
            except psutil.Error:
                continue
    return out


def test_the_local_clusters_scratch_is_private_fresh_and_not_in_tmp(tmp_path, monkeypatch):
    """Another account's /tmp/dask-scratch-space (here: a folder of that name with a symlinked lock file
    pointing at one of this user's files) is never used: kabe's scratch is a fresh 0700 folder."""
    import dask

    monkeypatch.setenv("TMPDIR", str(tmp_path))  # where Dask's default would be: tmp_path/dask-scratch-space
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    trap = tmp_path / "dask-scratch-space"
    trap.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("the user's file\n")
    (trap / "global.lock").symlink_to(victim)
    (trap / "purge.lock").symlink_to(victim)
    before = dask.config.get("temporary-directory", None)
    conn = cluster.connect("open", workers=1)
    try:
        scratch = Path(dask.config.get("temporary-directory"))
        assert scratch != Path(before or "/nonexistent") and scratch.name.startswith("kabe-dask-")
        assert stat.S_IMODE(scratch.stat().st_mode) == 0o700 and scratch.stat().st_uid == os.getuid()
        dirs = conn.client.run(lambda dask_worker: dask_worker.local_directory)
        assert dirs and all(Path(d).is_relative_to(scratch) for d in dirs.values()), dirs
    finally:
        conn.close()
    assert victim.read_text() == "the user's file\n"  # nothing truncated through the trap
    assert sorted(p.name for p in trap.iterdir()) == ["global.lock", "purge.lock"]  # the trap never entered


def test_the_dask_processes_the_tests_start_listen_on_loopback_only(tmp_path):
    sched_file = tmp_path / "scheduler.json"
    env = {**os.environ, "PYTHONPATH": str(TESTS.parent)}
    started = []
    try:
        started.append(subprocess.Popen(dask_scheduler_cmd(tmp_path / "s", "--scheduler-file", str(sched_file)),
                                        env=dask_env(env, tmp_path / "s"), stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL))
        deadline = time.monotonic() + 60
        while not (sched_file.is_file() and sched_file.read_text().strip()):
            assert time.monotonic() < deadline, "the scheduler did not start"
            time.sleep(0.2)
        address = json.loads(sched_file.read_text())["address"]
        log = tmp_path / "worker.log"
        with open(log, "w") as lf:
            started.append(subprocess.Popen(dask_worker_cmd(address, tmp_path / "w", "--nthreads", "1"),
                                            env=dask_env(env, tmp_path / "w"), stdout=lf, stderr=subprocess.STDOUT))
        while "Starting established connection" not in log.read_text():
            assert time.monotonic() < deadline, log.read_text()[-2000:]
            time.sleep(0.2)
        listening = _listening([psutil.Process(p.pid) for p in started])
        assert len(listening) >= 3 and all(ip == "127.0.0.1" for ip, _ in listening), listening  # incl. dashboards
        assert not Path("/tmp/dask-scratch-space").is_symlink()
        assert list((tmp_path / "w").glob("dask-scratch-space*"))  # the worker's scratch is the test's own folder
    finally:
        for p in started:
            p.terminate()
            p.wait(timeout=20)


def test_every_dask_process_in_the_tests_is_started_through_the_loopback_helpers():
    """A new test that starts `dask scheduler`/`dask worker` by hand would listen on every interface."""
    offenders = []
    for path in TESTS.rglob("*.py"):
        if path.name == "conftest.py" and path.parent.name == "sweep":
            continue
        text = path.read_text(errors="replace")
        for m in re.finditer(r"\"-m\",\s*\"distributed\.cli\.dask_(scheduler|worker)\"", text):  # a command being started
            offenders.append(f"{path.relative_to(TESTS)}:{text[:m.start()].count(chr(10)) + 1}")
    assert offenders == [], offenders
