"""A committed snapshot of this checkout (sweeps build commits), and helpers to run kabe in it."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
import repo_copy  # tests/repo_copy.py


def snapshot(dest: Path) -> Path:
    """The working tree as it is, committed in a fresh repository: the code under test, not whatever
    HEAD happens to be (a sweep builds a commit)."""
    return repo_copy.make(dest)


def kabe_env(repo: Path, **extra: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(repo), "COLUMNS": "200", **extra}


# Every Dask process a test starts listens on loopback only and keeps its scratch space in the test's own
# folder (never the shared /tmp/dask-scratch-space): tests/sweep/test_dask_hygiene.py checks both.
def _dashboard(extra: tuple[str, ...]) -> list[str]:
    return [] if "--no-dashboard" in extra else ["--dashboard-address", "127.0.0.1:0"]  # else 0.0.0.0:8787


def dask_scheduler_cmd(scratch: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", "0",
            *_dashboard(extra), *extra]


def dask_worker_cmd(address: str, scratch: Path, *extra: str) -> list[str]:
    scratch.mkdir(mode=0o700, parents=True, exist_ok=True)
    return [sys.executable, "-m", "distributed.cli.dask_worker", address, "--host", "127.0.0.1",
            "--local-directory", str(scratch), *_dashboard(extra), *extra]


def dask_env(env: dict[str, str], scratch: Path) -> dict[str, str]:
    """env with Dask's temporary-directory in scratch (the scheduler has no --local-directory)."""
    scratch.mkdir(mode=0o700, parents=True, exist_ok=True)
    return {**env, "DASK_TEMPORARY_DIRECTORY": str(scratch)}


def kabe_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "kabe.cli", *args]


def write_certificates(folder: Path, security=None) -> dict[str, str]:
    """A Security's CA, certificate and key as PEM files (a fresh throwaway CA when none is given): the
    form [tool.kabe.sweep] tls_ca_file / tls_cert / tls_key and `dask scheduler --tls-*` take."""
    from distributed.security import Security

    sec = security or Security.temporary()
    folder.mkdir(parents=True, exist_ok=True)
    paths = {}
    for key, pem in (("tls_ca_file", sec.tls_ca_file), ("tls_cert", sec.tls_client_cert),
                     ("tls_key", sec.tls_client_key)):
        path = folder / f"{key}.pem"
        path.write_text(pem)
        path.chmod(0o600)
        paths[key] = str(path)
    return paths


OUTSIDER = Path(__file__).with_name("outsider.py")


def outsider(address: str, marker: Path, certificates: dict[str, str] | None = None, timeout: float = 60) -> dict:
    """tests/sweep/outsider.py in a process of its own: what a stranger on this machine gets when it
    tries the scheduler at `address` (with `certificates`, when given: the control that it would work)."""
    import json
    import subprocess

    cmd = [sys.executable, str(OUTSIDER), address, str(marker)] + (
        [certificates["tls_ca_file"], certificates["tls_cert"], certificates["tls_key"]] if certificates else [])
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=marker.parent)
    assert r.returncode == 0, r.stdout + r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    return snapshot(tmp_path_factory.mktemp("sweep") / "repo")
