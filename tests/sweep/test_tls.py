"""Dask with security on: every scheduler kabe starts speaks TLS, and a stranger cannot use it.

Real schedulers started by kabe's own cluster code (the LocalCluster, and a SLURMCluster's scheduler
with the certificates from [tool.kabe.sweep] tls_*), probed from another process (tests/sweep/outsider.py):
without the certificates it cannot connect, so its run_on_scheduler and client.run never run; with
them (the control) the same script gets in. No Slurm job is submitted here (test_slurm_sweep does)."""

from __future__ import annotations

import stat
from pathlib import Path

import psutil
import pytest

from kabe.sweep import cluster
from kabe.sweep.spec import SweepError

from .conftest import outsider, write_certificates

FARM = {"cores": 1, "memory": "1GB", "walltime": "00:10:00"}


def _listening(proc) -> list[tuple[str, int]]:
    """(address, port) of every listening TCP socket of proc and its descendants."""
    out = []
    for p in [proc, *proc.children(recursive=True)]:
        try:
            out += [(c.laddr.ip, c.laddr.port) for c in p.net_connections(kind="tcp") if c.status == psutil.CONN_LISTEN]
        except psutil.Error:
            continue
    return out


def _refused(outcome: dict, marker: Path) -> None:
    assert set(outcome) == {"no certificate", "plain tcp", "another CA"}
    for way, said in outcome.items():
        assert said != "ran", f"{way}: a stranger ran code"
        assert said.split(":")[0].endswith("Error"), (way, said)  # refused by TLS, e.g. FatalCommClosedError
    assert not Path(f"{marker}.scheduler").exists() and not Path(f"{marker}.worker").exists()


def test_the_local_cluster_is_tls_on_loopback_and_refuses_a_stranger(tmp_path):
    conn = cluster.connect("open", workers=1)
    try:
        client = conn.client
        address = client.scheduler.address
        workers = list(client.scheduler_info()["workers"])
        assert address.startswith("tls://127.0.0.1:"), address
        assert workers and all(w.startswith("tls://127.0.0.1:") for w in workers), workers
        # every socket the cluster listens on (scheduler, dashboard, nannies, workers) is on loopback
        listening = _listening(psutil.Process())
        assert listening and all(ip == "127.0.0.1" for ip, _ in listening), listening
        assert len(listening) >= 3  # the scheduler, a nanny and its worker at least
        marker = tmp_path / "stranger"
        _refused(outsider(address, marker), marker)
        # the control: the same script with this cluster's (in-memory) certificates gets in and runs code
        certs = write_certificates(tmp_path / "certs", client.security)
        ok = tmp_path / "insider"
        assert outsider(address, ok, certs) == {"with the certificates": "ran"}
        assert Path(f"{ok}.scheduler").read_text() == "ran" and Path(f"{ok}.worker").read_text() == "ran"
    finally:
        conn.close()


def test_a_farm_scheduler_takes_its_certificates_from_the_settings(tmp_path):
    certs = write_certificates(tmp_path / "certs")
    c = cluster.jobqueue_cluster("slurm", {**FARM, "scheduler_options": {"host": "127.0.0.1"}}, "open", certs)
    try:
        address = c.scheduler_address
        assert address.startswith("tls://127.0.0.1:"), address
        listening = _listening(psutil.Process())  # the scheduler and its HTTP server, nothing on 0.0.0.0
        assert listening and all(ip == "127.0.0.1" for ip, _ in listening), listening
        worker = next(ln for ln in c.job_script().splitlines() if "distributed.cli.dask_worker" in ln)
        assert address in worker
        for flag, key in (("--tls-ca-file", "tls_ca_file"), ("--tls-cert", "tls_cert"), ("--tls-key", "tls_key")):
            assert f"{flag} {certs[key]}" in worker, worker  # the job's worker presents the same certificates
        marker = tmp_path / "stranger"
        _refused(outsider(address, marker), marker)
        ok = tmp_path / "insider"
        assert outsider(address, ok, certs) == {"with the certificates": "ran"}  # no worker yet: the scheduler ran it
        assert Path(f"{ok}.scheduler").read_text() == "ran"
    finally:
        c.close()


def test_a_loopback_farm_without_certificates_gets_a_throwaway_ca_in_a_private_folder():
    c = cluster.jobqueue_cluster("slurm", {**FARM, "scheduler_options": {"host": "127.0.0.1"}}, "open", {})
    try:
        worker = next(ln for ln in c.job_script().splitlines() if "distributed.cli.dask_worker" in ln)
        assert c.scheduler_address.startswith("tls://127.0.0.1:") and "--tls-key" in worker
        key = Path(worker.split("--tls-key ")[1].split()[0])
        assert key.is_file() and stat.S_IMODE(key.parent.stat().st_mode) == 0o700
        assert "PRIVATE KEY" in key.read_text()
    finally:
        c.close()


@pytest.mark.parametrize("options, says", [
    ({}, "on every interface"),
    ({"scheduler_options": {"host": "0.0.0.0"}}, "listen on 0.0.0.0 without TLS"),
    ({"scheduler_options": {"host": "10.1.2.3"}}, "listen on 10.1.2.3 without TLS"),
    ({"interface": "eth0"}, "listen on interface eth0 without TLS"),
    ({"scheduler_options": {"host": "fpga-login.example"}}, "fpga-login.example without TLS"),
])
def test_a_farm_scheduler_on_the_network_without_certificates_is_refused(options, says):
    with pytest.raises(SweepError, match=says) as e:
        cluster.jobqueue_cluster("slurm", {**FARM, **options}, "open", {})
    assert "runs any code" in str(e.value) and "tls_ca_file" in str(e.value)


@pytest.mark.parametrize("options", [{"protocol": "tcp://"}, {"security": False},
                                     {"scheduler_options": {"host": "127.0.0.1", "protocol": "tcp"}}])
def test_a_farm_table_cannot_turn_tls_off(options):
    with pytest.raises(SweepError, match="kabe sets it"):
        cluster.jobqueue_cluster("slurm", {**FARM, **options}, "open", {})


def test_certificate_settings_are_all_three_and_exist(tmp_path):
    certs = write_certificates(tmp_path)
    with pytest.raises(SweepError, match="but not tls_key"):
        cluster.tls_security({"tls_ca_file": certs["tls_ca_file"], "tls_cert": certs["tls_cert"]})
    with pytest.raises(SweepError, match="tls_cert = .*no such file"):
        cluster.tls_security({**certs, "tls_cert": str(tmp_path / "gone.pem")})
    assert cluster.tls_security({}) is None
    sec = cluster.tls_security({k: Path(v).name for k, v in certs.items()}, root=tmp_path)  # relative: to the checkout
    assert sec.require_encryption and sec.tls_client_key == certs["tls_key"]


@pytest.mark.parametrize("address, says", [
    ("tcp://10.0.0.7:8786", "plain TCP to another machine"),
    ("10.0.0.7:8786", "plain TCP to another machine"),  # Dask's default scheme is tcp
    ("tcp://fpga-login.example:8786", "plain TCP to another machine"),
    ("tls://10.0.0.7:8786", "set \\[tool.kabe.sweep\\] tls_ca_file"),
    ("ws://10.0.0.7:8786", "not ws://"),
])
def test_a_running_scheduler_is_tls_unless_loopback_or_said_insecure(address, says):
    with pytest.raises(SweepError, match=says):
        cluster.scheduler_security(address, {}, insecure=False)


def test_the_insecure_opt_in_is_said_loudly_and_loopback_tcp_needs_none(tmp_path):
    security, warnings = cluster.scheduler_security("tcp://10.0.0.7:8786", {}, insecure=True)
    assert security is None and len(warnings) == 1
    assert warnings[0].startswith("INSECURE SCHEDULER") and "run any code on every worker" in warnings[0]
    for local in ("tcp://127.0.0.1:8786", "tcp://[::1]:8786", "localhost:8786"):
        assert cluster.scheduler_security(local, {}, insecure=False) == (None, [])
    certs = write_certificates(tmp_path)
    security, warnings = cluster.scheduler_security("tls://10.0.0.7:8786", certs, insecure=False)
    assert security.require_encryption and warnings == []


@pytest.mark.parametrize("sweep, says", [
    ({"tls_crt": "x.pem"}, r"\[tool.kabe.sweep\] has an unknown key 'tls_crt'"),
    ({"tls_key": ["k.pem"]}, r"\[tool.kabe.sweep\] tls_key = \[\"k.pem\"\]: expected the path of the private key"),
    ({"cluster": "pbs"}, r"cluster = \"pbs\": expected \"local\", \"slurm\", \"lsf\" or \"sge\""),
    ({"jobs": 0}, "jobs = 0: expected a positive integer"),
    ({"slurm": "big"}, r"slurm = \"big\": expected a table"),
])
def test_sweep_settings_are_checked_key_by_key(sweep, says):
    from kabe.project import config

    with pytest.raises(config.ConfigError, match=says):
        config.validate({"sweep": sweep})
    assert config.validate({"sweep": {"cluster": "slurm", "jobs": 2, "slurm": {"memory": "1GB"},
                                      "tls_ca_file": "ca.pem", "tls_cert": "c.pem", "tls_key": "k.pem"}})
