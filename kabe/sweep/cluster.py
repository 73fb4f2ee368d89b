"""Which Dask runs the sweep: a LocalCluster sized to this machine (the default, no set-up), a
scheduler already running (`--scheduler tls://host:8786`), or a dask-jobqueue cluster on a farm.

Settings (pyproject.toml; kabe.project.config.SWEEP_SETTINGS checks them):

    [tool.kabe.sweep]
    cluster = "slurm"          # local (default) | slurm | lsf | sge
    jobs = 4                   # farm jobs to start (one worker each)
    tls_ca_file = "/shared/kabe-ca.pem"   # the farm's certificates (paths relative to the checkout)
    tls_cert = "/shared/kabe-dask.pem"
    tls_key = "/shared/kabe-dask.key"
    [tool.kabe.sweep.slurm]    # passed to dask_jobqueue.SLURMCluster as they are
    cores = 8
    memory = "32GB"
    walltime = "04:00:00"
    queue = "fpga"

A Dask scheduler runs whatever code its clients send, on itself and on every worker, so nobody may
reach one without a certificate (docs/sweeps.md). Every cluster kabe starts speaks TLS: the
LocalCluster and a farm scheduler bound to loopback with a throwaway CA (Security.temporary()), a
farm scheduler on the network only with the tls_* certificates. A running scheduler is reached as
tls://, with the same certificates; tcp:// only on loopback, or with --insecure-scheduler, said loudly.

Dask's scratch space: every Dask server (scheduler, nanny, worker) makes `dask-scratch-space` with lock
files under `temporary-directory`, by default the shared /tmp, where another account can make it first
(with symlinked lock files that truncate this user's files). kabe points it, for its own process and
the LocalCluster's workers, at a folder made fresh for this process by mkdtemp (mode 0700, a name
nobody can guess or make first), removed at exit: private_scratch().

One build per worker slot: every worker offers the resource `build=1` (and `vivado=1`, `memory=<bytes>`
where Vivado can run), and every build asks for it, so a 16 GB Vivado run never shares a small worker.
"""

from __future__ import annotations

import atexit
import ipaddress
import logging
import os
import shutil
import tempfile
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from kabe.project import flows as flow_registry
from kabe.base.paths import ROOT
from kabe.sweep.spec import SweepError

JOBQUEUE = {"slurm": "SLURMCluster", "lsf": "LSFCluster", "sge": "SGECluster"}
LOOPBACK = "127.0.0.1"
TLS_KEYS = ("tls_ca_file", "tls_cert", "tls_key")
# What the client deserialises from the cluster's data: msgpack (bytes, str, numbers, lists) and Dask's
# "could not serialise" note. Not "pickle", and not "dask" either (its header carries a pickled type):
# a worker's result is data, so a result object whose unpickling would run code is refused, not run.
RESULT_DESERIALIZERS = ("msgpack", "error")
# Set by kabe from the tls_* settings; a farm table that set them would turn TLS off behind kabe's back.
_KABE_OWNS = ("protocol", "security")


@dataclass
class Connection:
    client: Any
    description: str
    dashboard: str | None
    close: Callable[[], None] = field(default=lambda: None)
    warnings: list[str] = field(default_factory=list)  # said to the user before the sweep starts


def task_resources(flow: str) -> dict[str, float]:
    """A build of `flow` needs a build slot; a flow whose tool only some machines have (Vivado) also
    needs that tool's resource and its memory."""
    facts = flow_registry.facts(flow)
    if facts.sweep_resource:
        return {"build": 1, facts.sweep_resource: 1, "memory": facts.build_bytes}
    return {"build": 1}


def _total_memory() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return 8 * 1024**3


def local_workers(flow: str) -> int:
    """As many single-build workers as cores, and no more than memory allows."""
    per_build = flow_registry.facts(flow).build_bytes
    return max(1, min(os.cpu_count() or 1, _total_memory() // per_build))


def worker_resources(flow: str, memory: int) -> dict[str, float]:
    res = {"build": 1, "memory": memory}
    for f in flow_registry.FLOWS.values():  # a tool's resource: offered unless this sweep needs it and it is missing
        if f.sweep_resource and (f.name != flow or shutil.which(f.executable)):
            res[f.sweep_resource] = 1
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


_SCRATCH: list[str] = []  # this process's private scratch folder, once made


def private_scratch() -> str:
    """This process's Dask scratch folder: made fresh by mkdtemp (0700, unguessable), set as Dask's
    temporary-directory for every server this process starts, removed at exit."""
    import dask

    if not _SCRATCH or not os.path.isdir(_SCRATCH[0]):
        _SCRATCH[:] = [tempfile.mkdtemp(prefix="kabe-dask-")]
        atexit.register(shutil.rmtree, _SCRATCH[0], True)
    dask.config.set({"temporary-directory": _SCRATCH[0]})
    return _SCRATCH[0]


def _closer(client, cluster) -> Callable[[], None]:
    def close():
        client.close()
        cluster.close()

    return close


def is_loopback(host: str | None) -> bool:
    """An address only this machine can reach: 127.0.0.0/8, ::1 or "localhost". A host name is not
    resolved here: it is taken as reachable from the network (the safe answer)."""
    if not host:
        return False  # nothing given: Dask listens on every interface
    host = host.strip().strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def tls_security(settings: dict[str, Any], root: Path = ROOT):
    """Security from [tool.kabe.sweep] tls_ca_file, tls_cert, tls_key (one certificate for every role:
    scheduler, workers, client), or None when none is set. Some but not all, or a file that is not
    there, is refused naming the key."""
    given = {k: settings.get(k) for k in TLS_KEYS if settings.get(k)}
    if not given:
        return None
    missing = [k for k in TLS_KEYS if k not in given]
    if missing:
        raise SweepError(f"[tool.kabe.sweep] sets {', '.join(given)} but not {', '.join(missing)}: a TLS cluster "
                         f"needs all three (docs/sweeps.md)")
    paths = {}
    for key, value in given.items():
        path = Path(str(value)).expanduser()
        path = path if path.is_absolute() else Path(root) / path
        if not path.is_file():
            raise SweepError(f"[tool.kabe.sweep] {key} = {str(value)[:120]}: no such file ({path})")
        paths[key] = str(path)
    from distributed.security import Security

    cert, key = paths["tls_cert"], paths["tls_key"]
    return Security(tls_ca_file=paths["tls_ca_file"], tls_scheduler_cert=cert, tls_scheduler_key=key,
                    tls_worker_cert=cert, tls_worker_key=key, tls_client_cert=cert, tls_client_key=key,
                    require_encryption=True)


def _temporary_security():
    """A throwaway CA and certificate, in memory: for clusters that live on this machine only."""
    from distributed.security import Security

    try:
        return Security.temporary()
    except ImportError:
        raise SweepError("Dask's TLS needs the cryptography package (a kabe dependency): "
                         "pip install -e . again") from None


def _farm_bind(kind: str, opts: dict[str, Any]) -> str | None:
    """Where the farm scheduler will listen: its host, or "lo" for the loopback interface, or None (every
    interface, Dask's default)."""
    sched = opts.get("scheduler_options") or {}
    if not isinstance(sched, dict):
        raise SweepError(f"[tool.kabe.sweep.{kind}] scheduler_options must be a table")
    for table, where in ((opts, f"[tool.kabe.sweep.{kind}]"), (sched, f"[tool.kabe.sweep.{kind}] scheduler_options")):
        for key in _KABE_OWNS:
            if key in table:
                raise SweepError(f"{where} sets {key}: kabe sets it (TLS, from [tool.kabe.sweep] tls_*); remove it")
    host = sched.get("host")
    interface = sched.get("interface") or opts.get("interface")
    if host:
        return str(host)
    if interface:
        return "lo" if interface == "lo" else f"interface {interface}"
    return None


def jobqueue_cluster(kind: str, options: dict[str, Any], flow: str, settings: dict[str, Any] | None = None,
                     root: Path = ROOT):
    """A dask-jobqueue cluster (not yet scaled) whose workers each offer one build slot, speaking TLS:
    with the tls_* certificates of `settings` ([tool.kabe.sweep]), or, for a scheduler bound to loopback,
    a throwaway CA whose worker files are written to a private folder. A scheduler reachable from the
    network without certificates is refused: it would run code for anyone who reaches it."""
    import dask_jobqueue

    try:
        cls = getattr(dask_jobqueue, JOBQUEUE[kind])
    except KeyError:
        raise SweepError(f"[tool.kabe.sweep] cluster = {kind[:20]}: use local, {', '.join(JOBQUEUE)}") from None
    opts = dict(options)
    memory = opts.get("memory")
    if not memory:
        raise SweepError(f"[tool.kabe.sweep.{kind}] needs memory (e.g. \"32GB\"): the farm schedules on it")
    bind = _farm_bind(kind, opts)
    private_scratch()  # the scheduler runs in this process (the farm's workers use the farm's folders)
    security = tls_security(settings or {}, root)
    private_dir = None
    if security is None:
        if not (bind == "lo" or is_loopback(bind)):
            where = f"on {bind}" if bind else "on every interface (no scheduler_options host)"
            raise SweepError(f"the {kind} cluster's Dask scheduler would listen {where} without TLS, and a scheduler "
                             f"runs any code its clients send, on itself and on every worker: set "
                             f"[tool.kabe.sweep] tls_ca_file, tls_cert and tls_key (docs/sweeps.md), or bind it to "
                             f"this machine with scheduler_options = {{host = \"{LOOPBACK}\"}}")
        # Loopback: the jobs run on this machine, so the throwaway CA's files can stay in a folder of ours.
        security = _temporary_security()
        private_dir = tempfile.mkdtemp(prefix="kabe-dask-tls-")  # mode 0700: this user only
        opts["shared_temp_directory"] = private_dir
    sched = dict(opts.get("scheduler_options") or {})
    sched.setdefault("dashboard_address", f"{LOOPBACK}:0")  # plain HTTP: on loopback, reach it by ssh -L
    opts["scheduler_options"] = sched
    from dask.utils import parse_bytes

    # Farm jobs for the vivado flow are expected to load Vivado themselves (job_script_prologue).
    resource = flow_registry.facts(flow).sweep_resource
    offered = {"build": 1, "memory": parse_bytes(memory), **({resource: 1} if resource else {})}
    res = ",".join(f"{k}={int(v)}" for k, v in offered.items())
    opts["worker_extra_args"] = list(opts.get("worker_extra_args") or []) + ["--resources", res]
    opts.setdefault("processes", 1)  # one worker process per job: one build slot
    try:
        cluster = cls(**opts, security=security, protocol="tls://")
    except BaseException:
        if private_dir:
            shutil.rmtree(private_dir, ignore_errors=True)
        raise
    if private_dir:  # jobqueue keeps the worker's key files open as temp files on the cluster; then the folder
        held = [getattr(cluster, f"_job_{k}") for k in ("ca_file", "cert", "key") if hasattr(cluster, f"_job_{k}")]
        weakref.finalize(cluster, _remove_private, held, private_dir)
    return cluster


def _remove_private(files: list, folder: str) -> None:
    for f in files:
        f.close()  # a NamedTemporaryFile: closing deletes it
    shutil.rmtree(folder, ignore_errors=True)


class _RefusalInOneLine(logging.Filter):
    """Dask logs data it refuses or cannot load from the cluster (a worker's result that is not msgpack,
    the type a worker reports for one) with a traceback and the raw bytes; the sweep says it as the
    variant's rejected row. The log keeps one line, without the worker's bytes."""

    def filter(self, record: logging.LogRecord) -> bool:
        if str(record.msg).startswith("Failed to deserialize") and record.exc_info and record.exc_info[1] is not None:
            e = record.exc_info[1]
            record.msg, record.args = "refused data from the cluster (%s: %s)", (
                type(e).__name__, (str(e).strip().splitlines() or [""])[0][:200])
            record.exc_info = record.exc_text = None
        return True


def _client(address_or_cluster, **kwargs):
    from distributed import Client

    for name in ("distributed.protocol.core", "distributed.protocol.pickle"):
        log = logging.getLogger(name)
        if not any(isinstance(f, _RefusalInOneLine) for f in log.filters):
            log.addFilter(_RefusalInOneLine())
    return Client(address_or_cluster, deserializers=list(RESULT_DESERIALIZERS), **kwargs)


def scheduler_address(address: str) -> tuple[str, str]:
    """(scheme, host) of a scheduler address; a bare host:port is tcp, as Dask takes it."""
    from distributed.comm.addressing import parse_address, parse_host_port

    try:
        scheme, loc = parse_address(address)
        host = parse_host_port(loc)[0] if loc else ""
    except ValueError:
        raise SweepError(f"--scheduler {address[:80]} is not a Dask address; give tls://host:port") from None
    return scheme, host


def scheduler_security(address: str, settings: dict[str, Any], insecure: bool = False) -> tuple[Any, list[str]]:
    """(Security or None, warnings) for reaching the running scheduler at `address`: tls:// with the
    tls_* certificates; tcp:// on loopback; tcp:// to another machine only when `insecure` (and said
    loudly); anything else refused."""
    scheme, host = scheduler_address(address)
    if scheme == "tls":
        security = tls_security(settings)
        if security is None:
            raise SweepError(f"--scheduler {address[:80]} speaks TLS: set [tool.kabe.sweep] tls_ca_file, tls_cert and "
                             f"tls_key to the cluster's certificates (docs/sweeps.md)")
        return security, []
    if scheme != "tcp":
        raise SweepError(f"--scheduler {address[:80]}: kabe speaks tls:// (or tcp:// on loopback) to a scheduler, "
                         f"not {scheme}://")
    if is_loopback(host):
        return None, []
    if not insecure:
        raise SweepError(f"--scheduler {address[:80]} is plain TCP to another machine: anyone who can reach it "
                         f"can run code on its workers and on it. Use tls://{host}:<port> with [tool.kabe.sweep] "
                         f"tls_* certificates (docs/sweeps.md), or --insecure-scheduler if you accept that")
    return None, [f"INSECURE SCHEDULER: {address[:80]} is plain TCP (--insecure-scheduler). Anyone who can "
                  f"reach it can run any code on every worker and on the scheduler, and read what kabe "
                  f"sends (the commit's source). Use tls:// (docs/sweeps.md)."]


def _running_scheduler(address: str, settings: dict[str, Any], insecure: bool) -> Connection:
    security, warnings = scheduler_security(address, settings, insecure)
    scheme = "tls" if security is not None else "tcp"
    try:
        client = _client(address, timeout="20s", security=security)
    except (OSError, TimeoutError) as e:
        hint = "; are [tool.kabe.sweep] tls_* the certificates its CA signed?" if scheme == "tls" else ""
        raise SweepError(f"cannot reach the Dask scheduler at {address[:80]} ({e}){hint}; start one with "
                         f"`dask scheduler` (docs/sweeps.md), or drop --scheduler to use this machine") from None
    return Connection(client, f"scheduler {address}", _dashboard(client), client.close, warnings)


def local_cluster(flow: str, workers: int | None = None):
    """A LocalCluster on this machine: TLS with a throwaway in-memory CA, scheduler, workers and
    dashboard bound to loopback, so no other account and no other machine can submit work to it."""
    from distributed import LocalCluster

    n = workers or local_workers(flow)
    scratch = private_scratch()  # the scheduler here and every worker: never /tmp/dask-scratch-space
    return LocalCluster(n_workers=n, threads_per_worker=1, processes=True, host=LOOPBACK, local_directory=scratch,
                        security=_temporary_security(), protocol="tls://",
                        resources=worker_resources(flow, _total_memory() // n),
                        dashboard_address=f"{LOOPBACK}:0" if _dashboard_possible() else None)


def connect(flow: str, scheduler: str | None = None, workers: int | None = None,
            settings: dict[str, Any] | None = None, *, insecure_scheduler: bool = False) -> Connection:
    s = settings or {}
    if scheduler:
        return _running_scheduler(scheduler, s, insecure_scheduler)
    kind = str(s.get("cluster", "local"))
    if kind != "local":
        cluster = jobqueue_cluster(kind, s.get(kind) or {}, flow, s)
        jobs = int(s.get("jobs", workers or 2))
        cluster.scale(jobs=jobs)
        client = _client(cluster)
        return Connection(client, f"{JOBQUEUE[kind]} ({jobs} jobs)", _dashboard(client), _closer(client, cluster))
    cluster = local_cluster(flow, workers)
    client = _client(cluster)
    n = len(cluster.workers)
    return Connection(client, f"LocalCluster, {n} worker(s) on this machine", _dashboard(client),
                      _closer(client, cluster))
