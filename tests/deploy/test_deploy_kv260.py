"""The KV260 deployed through PYNQ 4 (issue 43 item 4), on the loopback board.

kv260_ternary (stage 4's ternary engine on the KV260's four 128-bit HP ports) is built on the vivado flow
with the STAND-IN vivado (its PS8 block design; .bit + .hwh + .xsa archived), pushed to a real sshd on
loopback, and run there by kabe's board runner on its `pynq` backend: the PYNQ 4 code path (Overlay,
allocate, the DMAs' send/recv channels, the GPIOs), with the board's Python answering as a KV260's
PYNQ 4 image would. That board is a STAND-IN, named as such:

* its `pynq` is tests/standin/pynq4 (PYNQ 4's API; its Overlay parses the .hwh with pynqmetadata, as PYNQ
  4's does; its PL is the design's Verilator model),
* its Python reports machine aarch64 (the K26's Cortex-A53 image; tests/standin/pynq4/sitecustomize.py),
* it is reached through a wrapper named as the board's python ([tool.kabe.board] python).

The verdict is the host's, re-derived from the board's rows (kabe.deploy.verdict): rows, mismatches, the
vectors' digest, the commit in the .bit and in the running PL, the status counters, and now the board's
PYNQ and machine against the profile's deploy.pynq (a PYNQ 3 board, or a 32-bit one, fails the KV260;
kabe doctor --deploy accepts PYNQ 4 for the KV260 and refuses it for the PYNQ-Z1).
"""

from __future__ import annotations

from kabe.project.design_context import DesignContext
from kabe.project import designs
import json
import os
import sys
from pathlib import Path

import pytest

from kabe import build
from kabe.base import provenance
from kabe.deploy import board_software
from kabe.deploy.host import DeployRun, deploy
from kabe.sim import verilator_build

from .loopback_host import sshd_available

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(not sshd_available(), reason="OpenSSH server not installed (.ci/run installs openssh-server)")]

STANDIN = Path(__file__).resolve().parent.parent / "standin"
PYNQ4 = STANDIN / "pynq4"
DESIGN = "kv260_ternary"
ROWS = 4 * 2_048  # over the 4 HP ports; several transfers a port with transfer_mb=1


@pytest.fixture(scope="module")
def kv260_reports(tmp_path_factory):
    """kv260_ternary on the vivado flow (STAND-IN vivado), archived under this commit."""
    root = tmp_path_factory.mktemp("kv260_reports")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PATH", f"{STANDIN}{os.pathsep}{os.environ['PATH']}")
        mp.setenv("KABE_STANDIN_SCENARIO", "met")
        record = build.build(designs.get(DESIGN), "vivado", sim_check=False, reports_root=root)
    assert record["gate"]["passed"], record["gate"]["failures"]
    return root


@pytest.fixture(scope="module")
def harness():
    return verilator_build.build(DesignContext(designs.get(DESIGN)), None).exe


def board_python(folder: Path, harness: Path, *, pynq: str = "4.0.0", machine: str = "aarch64",
                 pl_harness: Path | None = None) -> Path:
    """The board's `python3`: STAND-IN, a wrapper putting the PYNQ 4 stand-in first on the path."""
    folder.mkdir(parents=True, exist_ok=True)
    py = folder / "python3-kv260-standin"
    py.write_text("#!/bin/sh\n# STAND-IN for a KV260's PYNQ 4 Python (kabe tests): pynq is tests/standin/pynq4\n"
                  f"export PYTHONPATH='{PYNQ4}'\nexport KABE_STANDIN_PYNQ_VERSION='{pynq}'\n"
                  f"export KABE_STANDIN_MACHINE='{machine}'\nexport KABE_STANDIN_PL_HARNESS='{pl_harness or harness}'\n"
                  f"exec '{sys.executable}' \"$@\"\n")
    py.chmod(0o755)
    return py


def _deploy(board, tmp_path, reports, python: Path, rows: int = ROWS):
    s = board.deploy_settings(tmp_path, python=str(python), transfer_mb=1, profile="kv260")
    return deploy(DESIGN, s, DeployRun(rows=rows, backend="pynq", reports_root=reports))


def test_the_archive_holds_what_pynq_4_loads(kv260_reports):
    unit = kv260_reports / provenance.current_commit().archive_name / DESIGN / "vivado"
    manifest = json.loads((unit / "manifest.json").read_text())
    assert {"bit", "hwh", "xsa", "cells"} <= set(manifest["artifacts"])
    assert (unit / f"kabe_{DESIGN}.bit").read_bytes()[:200].find(b"k26-sfvc784") > 0  # the .bit's part
    assert b'MODTYPE="zynq_ultra_ps_e"' in (unit / f"kabe_{DESIGN}.hwh").read_bytes()


def test_deploy_through_pynq_4_checks_every_row(board, kv260_reports, harness, tmp_path):
    result = _deploy(board, tmp_path, kv260_reports, board_python(tmp_path / "bin", harness))
    assert result["passed"] and result["failures"] == [], result["failures"]
    assert result["backend"] == "pynq" and result["pynq_version"] == "4.0.0" and result["machine"] == "aarch64"
    assert result["rows_checked"] == ROWS == result["expected"]["rows_checked"] and result["mismatches"] == 0
    status = result["status"]
    assert [status[f"stat{p}_overflow"] for p in range(4)] == [0, 0, 0, 0]
    assert all(status[f"stat{p}_invalid"] > 0 for p in range(4))  # invalid bytes mixed in, counted as the model says
    assert status == {k: result["expected"]["model_status"][k] for k in status}
    assert result["pl_commit"] == result["bit_commit"] == result["expected"]["bit_commit"]
    archived = json.loads((Path(result["_archive"]) / "result.json").read_text())
    assert archived["passed"] and archived["rows_checked"] == ROWS


def test_a_broken_pl_is_reported_from_the_rows(board, kv260_reports, harness, tmp_path):
    """The adder tree one stage off: the board's rows differ from the model and the host says how many."""
    broken = verilator_build.build(DesignContext(designs.get(DESIGN)), {"LATENCY_ADJUST": 1}).exe
    result = _deploy(board, tmp_path, kv260_reports, board_python(tmp_path / "bin", harness, pl_harness=broken),
                     rows=4 * 256)
    assert not result["passed"] and result["mismatches"] > 0 and result["first_mismatches"]
    assert any(f.startswith("mismatches:") for f in result["failures"]), result["failures"]


@pytest.mark.parametrize("pynq, machine, why", [("3.0.1", "aarch64", "pynq_version"), ("4.0.0", "armv7l", "machine")])
def test_the_wrong_image_fails_the_kv260(board, kv260_reports, harness, tmp_path, pynq, machine, why):
    """Every row may match, but a run on a PYNQ 3 image (or a 32-bit one) is not a run on the KV260's."""
    result = _deploy(board, tmp_path, kv260_reports, board_python(tmp_path / "bin", harness, pynq=pynq, machine=machine),
                     rows=4 * 256)
    assert result["mismatches"] == 0 and result["board_passed"] is True
    assert not result["passed"] and [f for f in result["failures"] if f.startswith(why + ":")], result["failures"]


@pytest.mark.parametrize("profile, ok", [("kv260", True), ("pynq-z1", False)])
def test_doctor_takes_pynq_4_for_the_kv260_and_not_for_the_pynq_z1(board, harness, tmp_path, profile, ok):
    python = board_python(tmp_path / "bin", harness)
    cfg = {"profile": profile, "python": str(python), "port": board.port, "identity": str(board.client_key),
           "ssh_options": board.target_options()}
    found = board_software.check(f"{board.user}@127.0.0.1", cfg)
    assert found is not None and found.have == "pynq 4.0.0" and found.ok is ok, found
    assert ("pynq >=4" if ok else "pynq >=3,<4") in found.want


def test_the_hosts_profile_is_a_setting_deploy_takes_and_holds_against_the_design(kv260_reports, tmp_path, monkeypatch):
    """[tool.kabe.board] profile (docs/deploy.md) reaches DeploySettings (it was a TypeError there), and a
    host that is a PYNQ-Z1 is not sent the KV260's bitstream: refused before anything is pushed."""
    from kabe.project import config
    from kabe.deploy import cli, ssh

    monkeypatch.setattr(config, "load", lambda: {"board": {"host": "xilinx@pynq", "profile": "pynq-z1", "sudo": False,
                                                           "remote_dir": str(tmp_path / "on-board")}})
    s = cli.settings_from_config(None)
    assert s.profile == "pynq-z1"
    with pytest.raises(ssh.DeployError, match=r"the board is a PYNQ-Z1 .*profile = 'pynq-z1'.*kv260_ternary is built for the "
                                              r"Kria KV260"):
        deploy(DESIGN, s, DeployRun(rows=4 * 256, backend="pynq", reports_root=kv260_reports))
    assert not (tmp_path / "on-board").exists()
    with pytest.raises(ssh.DeployError, match=r"\[tool.kabe.board\] profile: unknown board 'kv999'"):
        deploy(DESIGN, cli.DeploySettings(board="xilinx@pynq", profile="kv999"), DeployRun(rows=1024,
                                                                                           reports_root=kv260_reports))
