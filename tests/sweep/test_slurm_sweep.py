"""A sweep on a real Slurm cluster through dask-jobqueue: Debian's slurm-wlm as a one-node cluster
(munged, slurmctld and slurmd started here, configured in a temp folder), the sweep's workers
submitted as Slurm jobs by SLURMCluster, two stage2 variants built in them."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import kabe_cmd, kabe_env

DAEMONS = ("munged", "slurmctld", "slurmd", "sbatch", "sinfo")
WHY_NOT = None
if any(shutil.which(d) is None and not Path("/usr/sbin", d).exists() for d in DAEMONS):
    WHY_NOT = "Debian's slurm-wlm and munge are not installed (.ci/run installs them)"
elif os.geteuid() != 0:
    WHY_NOT = "a one-node Slurm cluster is started as root here (slurmd runs the jobs)"
pytestmark = [pytest.mark.e2e, pytest.mark.skipif(WHY_NOT is not None, reason=WHY_NOT or "")]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run(*cmd, env=None, check=True):
    return subprocess.run(list(cmd), env=env, capture_output=True, text=True, check=check, timeout=60)


def _munged_answers() -> bool:
    return _run("munge", "-n", check=False).returncode == 0


def _ensure_munged() -> None:
    """munge authenticates slurm's messages. A socket file is no proof that munged runs: a machine
    restored from an image (CI's, for one) keeps /run/munge/munge.socket.2 of a daemon that is gone,
    and every slurm message is then refused. So ask munged itself, and start it when it does not answer
    (--force: take over the stale socket)."""
    if _munged_answers():
        return
    Path("/run/munge").mkdir(parents=True, exist_ok=True)
    started = _run("munged", "--force", check=False)
    t0 = time.monotonic()
    while not _munged_answers():
        assert time.monotonic() - t0 < 20, f"munged does not answer after starting it: {started.stderr}"
        time.sleep(0.2)


@pytest.fixture(scope="module")
def slurm(tmp_path_factory):
    d = tmp_path_factory.mktemp("slurm")
    for sub in ("state", "spool", "log", "run"):
        (d / sub).mkdir()
    host = socket.gethostname()
    conf = d / "slurm.conf"
    conf.write_text(f"""ClusterName=kabetest
SlurmctldHost={host}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool
SlurmctldPidFile={d}/run/slurmctld.pid
SlurmdPidFile={d}/run/slurmd.pid
SlurmctldLogFile={d}/log/slurmctld.log
SlurmdLogFile={d}/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
ReturnToService=2
MpiDefault=none
SlurmctldPort={_free_port()}
SlurmdPort={_free_port()}
NodeName={host} CPUs={os.cpu_count()} RealMemory=8000 State=UNKNOWN
PartitionName=kabe Nodes={host} Default=YES MaxTime=INFINITE State=UP
""")
    env = {**os.environ, "SLURM_CONF": str(conf)}
    _ensure_munged()
    _run("slurmctld", "-c", env=env)
    _run("slurmd", env=env)
    t0 = time.monotonic()
    while "idle" not in _run("sinfo", "-h", "-o", "%t", env=env, check=False).stdout:
        assert time.monotonic() - t0 < 60, (d / "log" / "slurmctld.log").read_text()[-2000:]
        time.sleep(0.5)
    yield env, d
    _run("scancel", "--partition", "kabe", env=env, check=False)
    for pidfile in ("slurmd.pid", "slurmctld.pid"):
        try:
            os.kill(int((d / "run" / pidfile).read_text()), 15)
        except (OSError, ValueError):
            pass


def test_sweep_workers_run_as_slurm_jobs(repo, slurm, tmp_path):
    env_slurm, d = slurm
    py = repo / "pyproject.toml"
    py.write_text(py.read_text() + f"""
[tool.kabe.sweep]
cluster = "slurm"
jobs = 1
[tool.kabe.sweep.slurm]
cores = 2
memory = "4GB"
walltime = "00:30:00"
queue = "kabe"
python = "{sys.executable}"
log_directory = "{d}/log"
scheduler_options = {{host = "127.0.0.1"}}
""")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t.invalid"]
    subprocess.run(git + ["commit", "-qam", "sweep on slurm"], cwd=repo, check=True)
    sweep_file = tmp_path / "sweep.yaml"
    sweep_file.write_text("flow: open\ngrid:\n  clock_period_ns: [7.0, 8.0]\n")
    env = kabe_env(repo, SLURM_CONF=env_slurm["SLURM_CONF"], KABE_SWEEP_CACHE=str(tmp_path / "cache"))
    r = subprocess.run(kabe_cmd("sweep", "stage2", "--file", str(sweep_file)), cwd=repo, env=env,
                       capture_output=True, text=True, timeout=1500)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "SLURMCluster (1 jobs)" in r.stdout
    (sweep_dir,) = list((repo / "reports").glob("*/stage2/sweep-open"))
    summary = json.loads((sweep_dir / "sweep.json").read_text())
    assert [v["status"] for v in summary["variants"]] == ["passed", "passed"]
    # the builds ran inside a Slurm job: the worker that built them is the one the job's log started
    logs = "".join(p.read_text(errors="replace") for p in (d / "log").glob("*.err"))
    workers = {v["worker"] for v in summary["variants"]}
    assert workers and all("Start worker at:" in logs and w in logs for w in workers), logs[-2000:]
