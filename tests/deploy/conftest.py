"""Shared by the deploy tests: the loopback board (a real sshd) and vivado-flow archives built with
the STAND-IN vivado (tests/standin/vivado), made once per session."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kabe import build
from kabe.project import designs

from .loopback_host import sshd_available, start

STANDIN = Path(__file__).resolve().parent.parent / "standin"


@pytest.fixture(scope="session")
def board(tmp_path_factory):
    if not sshd_available():
        pytest.skip("OpenSSH server not installed (.ci/run installs openssh-server)")
    host = start(tmp_path_factory.mktemp("board"))
    yield host
    host.stop()


@pytest.fixture(scope="session")
def reports(tmp_path_factory):
    """stage3 and stage4 built on the vivado flow with the STAND-IN vivado, archived under this commit."""
    root = tmp_path_factory.mktemp("reports")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PATH", f"{STANDIN}{os.pathsep}{os.environ['PATH']}")
        mp.setenv("KABE_STANDIN_SCENARIO", "met")
        for design in ("stage3", "stage4"):
            record = build.build(designs.get(design), "vivado", sim_check=False, reports_root=root)
            assert record["gate"]["passed"], record["gate"]["failures"]
    return root
