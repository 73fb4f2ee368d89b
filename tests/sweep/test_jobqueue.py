"""The job scripts dask-jobqueue writes for a farm, from [tool.kabe.sweep.<kind>] settings: the
resources each build asks for, the walltime, and the worker command with its one build slot and its
TLS certificates. No Slurm or LSF runs here: the scripts are what a farm would be given, checked line by line."""

from __future__ import annotations

import pytest

from kabe.sweep import cluster
from kabe.sweep.spec import SweepError


@pytest.fixture
def close():
    made = []
    yield made.append
    for c in made:
        c.close()


def test_slurm_job_script_for_vivado_builds(close):
    c = cluster.jobqueue_cluster("slurm", {"cores": 8, "memory": "32GB", "walltime": "04:00:00", "queue": "fpga",
                                           "account": "hw", "scheduler_options": {"host": "127.0.0.1"}}, "vivado")
    close(c)
    script = c.job_script()
    assert "#SBATCH -p fpga" in script and "#SBATCH -A hw" in script
    assert "#SBATCH -t 04:00:00" in script
    assert "#SBATCH --mem=30G" in script and "#SBATCH --cpus-per-task=8" in script
    worker = next(ln for ln in script.splitlines() if "distributed.cli.dask_worker" in ln)
    assert "--resources build=1,memory=32000000000,vivado=1" in worker
    assert "--nworkers" not in worker and "tls://127.0.0.1:" in worker  # one worker process per job, one build slot


def test_lsf_job_script_for_open_flow_builds(close):
    c = cluster.jobqueue_cluster("lsf", {"cores": 2, "memory": "4GB", "walltime": "01:30", "queue": "short",
                                         "scheduler_options": {"host": "127.0.0.1"}}, "open")
    close(c)
    script = c.job_script()
    assert "#BSUB -q short" in script and "#BSUB -W 01:30" in script and "#BSUB -n 2" in script
    worker = next(ln for ln in script.splitlines() if "distributed.cli.dask_worker" in ln)
    assert "--resources build=1,memory=4000000000" in worker and "vivado" not in worker


def test_farm_settings_without_memory_or_an_unknown_kind_are_refused():
    with pytest.raises(SweepError, match="needs memory"):
        cluster.jobqueue_cluster("slurm", {"cores": 2}, "open")
    with pytest.raises(SweepError, match="use local, slurm, lsf, sge"):
        cluster.jobqueue_cluster("pbs", {"memory": "1GB"}, "open")


def test_vivado_builds_ask_for_a_vivado_slot_and_its_memory():
    assert cluster.task_resources("open") == {"build": 1}
    r = cluster.task_resources("vivado")
    assert r["vivado"] == 1 and r["memory"] >= 16 * 1024**3
