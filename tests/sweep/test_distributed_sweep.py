"""A stage4 sweep on a real Dask cluster: `dask scheduler` and two `dask worker` processes on loopback
(separate processes, TCP, no shared cache directory), six open-flow variants, one worker killed with
SIGKILL while it builds. Every variant must still be archived exactly once, sweep.json must be
complete, and the Pareto plot drawn."""

from __future__ import annotations

import pytest
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import distributed

from .conftest import dask_env, dask_scheduler_cmd, dask_worker_cmd, kabe_cmd, kabe_env

pytestmark = pytest.mark.e2e  # end to end: real tools, minutes (the fast tier leaves it out: -m 'not e2e')


def _start(cmd: list[str], env: dict, log: Path, cwd: Path) -> subprocess.Popen:
    # cwd matters: `python -m` puts it first on sys.path, ahead of PYTHONPATH's snapshot
    return subprocess.Popen(cmd, env=env, cwd=cwd, stdout=open(log, "w"), stderr=subprocess.STDOUT)


def _wait_file(path: Path, timeout: float = 60) -> None:
    t0 = time.monotonic()
    while not path.is_file() or not path.read_text().strip():
        if time.monotonic() - t0 > timeout:
            raise AssertionError(f"{path} did not appear")
        time.sleep(0.2)


def _processes_in(folder: Path) -> list[str]:
    """The command lines of processes whose working directory lies under folder."""
    out = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.readlink(f"/proc/{pid}/cwd").startswith(str(folder)):
                out.append(Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()[:120])
        except OSError:
            continue
    return out


def _yosys_in(folder: Path) -> list[str]:
    """Yosys working under folder. It is the tool an orphan would be seen of: it runs for tens of
    seconds and writes to its log file, while Verilator's make and the simulation write to a pipe and
    die of SIGPIPE soon after their parent."""
    return [c for c in _processes_in(folder) if "yosys" in c]


def test_six_variants_survive_a_killed_worker(repo, tmp_path):
    sched_file = tmp_path / "scheduler.json"
    env = kabe_env(repo)
    procs = [_start(dask_scheduler_cmd(tmp_path / "dask-scheduler", "--scheduler-file", str(sched_file), "--no-dashboard"),
                    dask_env(env, tmp_path / "dask-scheduler"), tmp_path / "scheduler.log", tmp_path)]
    try:
        _wait_file(sched_file)
        address = json.loads(sched_file.read_text())["address"]
        workers = []
        for name in ("w1", "w2"):
            wenv = kabe_env(repo, KABE_SWEEP_CACHE=str(tmp_path / f"cache-{name}"))  # no shared filesystem
            workers.append(_start(dask_worker_cmd(address, tmp_path / f"dask-{name}", "--name", name, "--nthreads", "1",
                                                  "--no-nanny", "--resources", "build=1", "--no-dashboard"),
                                  dask_env(wenv, tmp_path / f"dask-{name}"), tmp_path / f"{name}.log", tmp_path))
        procs += workers
        client = distributed.Client(address, timeout="30s")
        client.wait_for_workers(2, timeout=60)
        sweep_log = tmp_path / "sweep.log"
        sweep = _start(kabe_cmd("sweep", "stage4", "--scheduler", address), kabe_env(repo), sweep_log, repo)
        procs.append(sweep)

        # kill w1 while it is building (a task of ours in its processing list)
        w1_addr = next(a for a, w in client.scheduler_info()["workers"].items() if w["name"] == "w1")
        t0 = time.monotonic()
        while not client.processing().get(w1_addr):
            assert sweep.poll() is None, sweep_log.read_text()
            assert time.monotonic() - t0 < 300, "w1 never got a build"
            time.sleep(0.2)
        # ... and has started Yosys (a grandchild of w1: worker -> build -> Yosys)
        w1_cache = tmp_path / "cache-w1"
        while not _yosys_in(w1_cache):
            assert time.monotonic() - t0 < 300, f"w1 never started Yosys: {_processes_in(w1_cache)}"
            time.sleep(0.2)
        workers[0].send_signal(signal.SIGKILL)
        client.close()
        # the killed worker's build and every tool it started die with it, not minutes later
        t0 = time.monotonic()
        while _processes_in(w1_cache) and time.monotonic() - t0 < 3:  # a signal, not a finished run
            time.sleep(0.2)
        assert not _processes_in(w1_cache), f"outlived the killed worker: {_processes_in(w1_cache)}"

        assert sweep.wait(timeout=1500) == 0, sweep_log.read_text()[-3000:]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()

    (sweep_dir,) = list((repo / "reports").glob("*/stage4/sweep-open"))
    summary = json.loads((sweep_dir / "sweep.json").read_text())
    assert len(summary["variants"]) == 6 and summary["best"]
    ids = {v["id"] for v in summary["variants"]}
    # exactly once: one complete folder per variant, nothing half-written or moved aside beside them
    assert sorted(p.name for p in sweep_dir.iterdir()) == sorted(ids | {"sweep.json", "pareto.png"})
    for v in summary["variants"]:
        assert v["status"] in ("passed", "failed"), v  # built and gated, never lost
        metrics = json.loads((sweep_dir / v["id"] / "metrics.json").read_text())
        assert metrics["variant"] == {"id": v["id"], "settings": v["settings"]}
        assert metrics["commit"] == summary["commit"] and metrics["sim"]["passed"]
        assert (sweep_dir / v["id"] / "manifest.json").is_file()
    assert sum(v["worker"] != w1_addr for v in summary["variants"]) >= 5  # w1's build ran again elsewhere
    png = (sweep_dir / "pareto.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000
    assert "best passing variant" in sweep_log.read_text()
