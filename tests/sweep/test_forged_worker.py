"""A malicious worker's results are data, checked and re-gated, never believed or run.

Real Dask, TLS throughout: `dask scheduler` with certificates, one `dask worker` with the same
certificates and tests/sweep/forged_worker.py preloaded (it swaps kabe's build for forgeries), and
`kabe sweep --scheduler tls://...` with [tool.kabe.sweep] tls_* in the committed settings. Ten variants,
one per forgery (no build runs): each forged unit must be a failed row naming its reason, with nothing
archived and never "best"; the object whose unpickling runs a shell must not run it (a marker file);
the two honest answers must be taken, so the refusals are not a client that refuses everything."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import dask_env, dask_scheduler_cmd, dask_worker_cmd, kabe_cmd, kabe_env, write_certificates
from .forged_worker import FORGERIES

pytestmark = pytest.mark.e2e  # end to end: real tools, minutes (the fast tier leaves it out: -m 'not e2e')

FORGED = Path(__file__).with_name("forged_worker.py")

# what each forged variant's row must say (its first failure), by the forgery's clock_period_ns
REASONS = {
    7.2: "rejected: metrics.json: metrics record invalid at utilization/lut: expected integer",
    7.3: "rejected: the unit holds run_me.sh, which its manifest does not list",
    7.4: "rejected: metrics.json says its gate passed, but its numbers fail it here: timing gate: estimated "
         "(pre-route) setup slack WNS -5.000 ns",
    7.5: "rejected: the worker's result is not data kabe reads (TypeError: Could not serialize object of type RunsCode",
    7.6: "rejected: the worker's log_tail is not a list of at most 40 strings",
    7.7: "rejected: the unit's notes.txt is a symbolic link (to '/etc/passwd'); a unit holds regular files only",
    7.8: "rejected: the unit holds '../../outside.txt', not a plain file name",
    7.9: "rejected: the unit's notes.txt is a hard link (to 'metrics.json'); a unit holds regular files only",
    8.0: "rejected: its cache_key.json is not this checkout's key",
}


def _start(cmd: list[str], env: dict, log: Path, cwd: Path) -> subprocess.Popen:
    return subprocess.Popen(cmd, env=env, cwd=cwd, stdout=open(log, "w"), stderr=subprocess.STDOUT)


def _wait(predicate, what: str, timeout: float = 60) -> None:
    t0 = time.monotonic()
    while not predicate():
        assert time.monotonic() - t0 < timeout, what
        time.sleep(0.2)


@pytest.fixture(scope="module")
def tls_repo(repo, tmp_path_factory):
    """The snapshot with the cluster's certificates in its committed [tool.kabe.sweep] settings."""
    certs = write_certificates(tmp_path_factory.mktemp("certs"))
    py = repo / "pyproject.toml"
    py.write_text(py.read_text() + "\n[tool.kabe.sweep]\n" + "".join(f'{k} = "{v}"\n' for k, v in certs.items()))
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t.invalid", "-c", "commit.gpgsign=false"]
    subprocess.run(git + ["commit", "-qam", "the sweep cluster's certificates"], cwd=repo, check=True)
    return repo, certs


def test_forged_units_are_failed_rows_never_archived_never_best(tls_repo, tmp_path):
    repo, certs = tls_repo
    tls = ["--tls-ca-file", certs["tls_ca_file"], "--tls-cert", certs["tls_cert"], "--tls-key", certs["tls_key"]]
    marker = tmp_path / "unpickled-in-the-client"
    sched_file = tmp_path / "scheduler.json"
    env = kabe_env(repo, KABE_FORGE_MARKER=str(marker))
    procs = [_start(dask_scheduler_cmd(tmp_path / "dask-scheduler", "--protocol", "tls", *tls, "--scheduler-file",
                                       str(sched_file), "--no-dashboard"),
                    dask_env(env, tmp_path / "dask-scheduler"), tmp_path / "scheduler.log", tmp_path)]
    try:
        _wait(lambda: sched_file.is_file() and sched_file.read_text().strip(), "the scheduler did not start")
        address = json.loads(sched_file.read_text())["address"]
        assert address.startswith("tls://127.0.0.1:")
        procs.append(_start(dask_worker_cmd(address, tmp_path / "dask-forger", "--name", "forger", "--nthreads", "1",
                                            "--no-nanny", "--resources", "build=1", "--no-dashboard", *tls,
                                            "--preload", str(FORGED)),
                            dask_env(env, tmp_path / "dask-forger"), tmp_path / "worker.log", tmp_path))
        _wait(lambda: "Starting established connection" in (tmp_path / "worker.log").read_text(),
              "the forged worker did not join")
        sweep_file = tmp_path / "sweep.yaml"
        sweep_file.write_text("flow: open\nvariants:\n" + "".join(f"  - {{clock_period_ns: {p}}}\n" for p in FORGERIES))
        r = subprocess.run(kabe_cmd("sweep", "stage2", "--file", str(sweep_file), "--scheduler", address), cwd=repo,
                           env=kabe_env(repo), capture_output=True, text=True, timeout=300)
    finally:
        for p in procs:
            p.kill()
            p.wait()
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-4000:]  # the honest pass is a passing variant
    assert "Traceback" not in out and "internal error" not in out  # Dask's refusal is logged in one line
    assert "refused data from the cluster (TypeError: Could not serialize object of type RunsCode)" in r.stderr
    assert not marker.exists(), "the client unpickled the forged object: its shell command ran"

    (sweep_dir,) = list((repo / "reports").glob("*/stage2/sweep-open"))
    summary = json.loads((sweep_dir / "sweep.json").read_text())
    rows = {v["settings"]["clock_period_ns"]: v for v in summary["variants"]}
    assert sorted(rows) == sorted(FORGERIES)
    honest, failing = rows[7.0], rows[7.1]
    assert honest["status"] == "passed" and summary["best"] == honest["id"] and honest["lut"] == 300
    assert failing["status"] == "failed" and not failing.get("rejected")
    assert failing["wns_ns"] == -0.4 and any("WNS -0.400" in f for f in failing["failures"])
    for v in (honest, failing):  # taken, re-gated, archived as sent
        assert (sweep_dir / v["id"] / "metrics.json").is_file() and (sweep_dir / v["id"] / "yosys.log").is_file()
    for period, reason in REASONS.items():
        v = rows[period]
        assert v["status"] == "failed" and v.get("rejected") is True, (FORGERIES[period], v)
        assert v["failures"][0].startswith(reason), (FORGERIES[period], v["failures"])
        assert v["archive"] is None and not (sweep_dir / v["id"]).exists(), FORGERIES[period]
        assert v.get("lut") is None and v.get("wns_ns") is None  # no forged number reaches the table or the plot
        assert f"{v['id']}: rejected:" in r.stdout
    assert summary["pareto"] == sorted([honest["id"], failing["id"]])  # fewer LUTs or more slack: both on the front
    assert sorted(p.name for p in sweep_dir.iterdir()) == sorted([honest["id"], failing["id"], "sweep.json",
                                                                  "pareto.png"])
    assert not (repo / "outside.txt").exists() and not (sweep_dir.parent / "outside.txt").exists()


def test_plain_tcp_to_another_machine_is_refused_in_one_line(tls_repo):
    repo, _ = tls_repo
    env = kabe_env(repo)
    env.pop("COLUMNS")  # a log's console: one line per message, however long
    r = subprocess.run(kabe_cmd("sweep", "stage2", "clock_period_ns=7", "--scheduler", "tcp://10.255.0.1:8786"),
                       cwd=repo, env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "Traceback" not in r.stdout + r.stderr
    lines = [ln for ln in r.stdout.splitlines() if "plain TCP" in ln]
    assert len(lines) == 1 and "--insecure-scheduler" in lines[0] and "tls://10.255.0.1" in lines[0], r.stdout
