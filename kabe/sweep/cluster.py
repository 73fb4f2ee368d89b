"""Which Dask runs the sweep: a LocalCluster sized to this machine (the default, no set-up), a
scheduler already running (`scheduler=tcp://host:8786`), or a dask-jobqueue cluster on a farm.

Settings (pyproject.toml):

    [tool.kabe.sweep]
    cluster = "slurm"          # local (default) | slurm | lsf | sge
    jobs = 4                   # farm jobs to start (one worker each)
    [tool.kabe.sweep.slurm]    # passed to dask_jobqueue.SLURMCluster as they are
    cores = 8
    memory = "32GB"
    walltime = "04:00:00"
    queue = "fpga"

One build per worker slot: every worker offers the resource `build=1` (and `vivado=1`, `memory=<bytes>`
where Vivado can run), and every build asks for it, so a 16 GB Vivado run never shares a small worker.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from typing import Any, Callable

from kabe.sweep.spec import SweepError

OPEN_BUILD_BYTES = 2 * 1024**3  # Yosys + Verilator on the largest design here: well under 2 GB
VIVADO_BUILD_BYTES = 16 * 1024**3  # AMD's guidance for a Zynq-7020 implementation run, with headroom
JOBQUEUE = {"slurm": "SLURMCluster", "lsf": "LSFCluster", "sge": "SGECluster"}


@dataclass
class Connection:
    client: Any
    description: str
    dashboard: str | None
    close: Callable[[], None] = field(default=lambda: None)


def task_resources(flow: str) -> dict[str, float]:
    if flow == "vivado":
        return {"build": 1, "vivado": 1, "memory": VIVADO_BUILD_BYTES}
    return {"build": 1}


def _total_memory() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return 8 * 1024**3


def local_workers(flow: str) -> int:
    """As many single-build workers as cores, and no more than memory allows."""
    per_build = VIVADO_BUILD_BYTES if flow == "vivado" else OPEN_BUILD_BYTES
    return max(1, min(os.cpu_count() or 1, _total_memory() // per_build))


def worker_resources(flow: str, memory: int) -> dict[str, float]:
    res = {"build": 1, "memory": memory}
    if flow != "vivado" or shutil.which("vivado"):
        res["vivado"] = 1
    return res


def _dashboard_possible() -> bool:
    """Dask's dashboard needs bokeh; without it a dashboard link leads nowhere."""
    try:
        import bokeh  # noqa: F401
        return True
    except ImportError:
        return False


def _dashboard(client) -> str | None:
    return getattr(client, "dashboard_link", None) if _dashboard_possible() else None


def _closer(client, cluster) -> Callable[[], None]:
    def close():
        client.close()
        cluster.close()

    return close


def jobqueue_cluster(kind: str, options: dict[str, Any], flow: str):
    """A dask-jobqueue cluster (not yet scaled) whose workers each offer one build slot."""
    import dask_jobqueue

    try:
        cls = getattr(dask_jobqueue, JOBQUEUE[kind])
    except KeyError:
        raise SweepError(f"[tool.kabe.sweep] cluster = {kind[:20]}: use local, {', '.join(JOBQUEUE)}") from None
    opts = dict(options)
    memory = opts.get("memory")
    if not memory:
        raise SweepError(f"[tool.kabe.sweep.{kind}] needs memory (e.g. \"32GB\"): the farm schedules on it")
    from dask.utils import parse_bytes

    # Farm jobs for the vivado flow are expected to load Vivado themselves (job_script_prologue).
    offered = {"build": 1, "memory": parse_bytes(memory), **({"vivado": 1} if flow == "vivado" else {})}
    res = ",".join(f"{k}={int(v)}" for k, v in offered.items())
    opts["worker_extra_args"] = list(opts.get("worker_extra_args") or []) + ["--resources", res]
    opts.setdefault("processes", 1)  # one worker process per job: one build slot
    return cls(**opts)


def connect(flow: str, scheduler: str | None = None, workers: int | None = None,
            settings: dict[str, Any] | None = None) -> Connection:
    from distributed import Client, LocalCluster

    s = settings or {}
    if scheduler:
        try:
            client = Client(scheduler, timeout="20s")
        except (OSError, TimeoutError) as e:
            raise SweepError(f"cannot reach the Dask scheduler at {scheduler[:80]} ({e}); start one with "
                             f"`dask scheduler`, or drop scheduler= to use this machine") from None
        return Connection(client, f"scheduler {scheduler}", _dashboard(client), client.close)
    kind = str(s.get("cluster", "local"))
    if kind != "local":
        cluster = jobqueue_cluster(kind, s.get(kind) or {}, flow)
        cluster.scale(jobs=int(s.get("jobs", workers or 2)))
        client = Client(cluster)
        return Connection(client, f"{JOBQUEUE[kind]} ({s.get('jobs', workers or 2)} jobs)", _dashboard(client),
                          _closer(client, cluster))
    n = workers or local_workers(flow)
    cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                           resources=worker_resources(flow, _total_memory() // n),
                           dashboard_address=":0" if _dashboard_possible() else None)
    client = Client(cluster)
    return Connection(client, f"LocalCluster, {n} worker(s) on this machine", _dashboard(client),
                      _closer(client, cluster))
