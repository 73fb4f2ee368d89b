"""Deploy for the Alveo V80 (board program: ami_tool) end to end: a real sshd on loopback plays the
card's host, a STAND-IN ami_tool on that host's PATH plays AMD's (tests/standin/ami_tool, after
AVED's cmd_cfgmem_program.c), and the image comes from a vivado-flow archive of a small V80 design
built with the STAND-IN vivado and bootgen on AVED's STAND-IN folder. Everything else is the code a
user runs: OpenSSH client, push, the host-side sha256, ami_tool's command line, the verdict from
ami_tool's own words, the atomic archive."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from kabe import build
from kabe.project import designs
from kabe.base import provenance
from kabe.deploy import ami, cli, ssh
from kabe.deploy.host import DeploySettings
from kabe.flows.vivado import tool

from .loopback_host import sshd_available, start

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(not sshd_available(), reason="OpenSSH server not installed (.ci/run installs openssh-server)")]

STANDIN = Path(__file__).resolve().parent.parent / "standin"
BDF = "21:00.0"


def _probe():
    spec = importlib.util.spec_from_file_location("kabe_tests_v80_probe", STANDIN / "v80_probe.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def card_host(tmp_path_factory):
    """sshd whose sessions find the STAND-IN ami_tool (a copy in its own bin/) first on PATH."""
    root = tmp_path_factory.mktemp("v80host")
    bin_dir = root / "bin"
    bin_dir.mkdir()
    shutil.copy(STANDIN / "ami_tool", bin_dir / "ami_tool")
    path = f"{bin_dir}:{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin"
    host = start(root / "sshd", extra_config=f"SetEnv PATH={path}\n")
    host.bin = bin_dir
    yield host
    host.stop()


@pytest.fixture(scope="module")
def v80_archive(tmp_path_factory):
    """The V80 probe design built on the vivado flow with the stand-ins, archived under this commit."""
    root = tmp_path_factory.mktemp("v80reports")
    design = _probe().make(tmp_path_factory.mktemp("v80cores"))
    real = tool.settings
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PATH", f"{STANDIN}{os.pathsep}{os.environ['PATH']}")
        mp.setenv("KABE_STANDIN_SCENARIO", "met")
        mp.setenv("KABE_STANDIN_VERSION", "2025.1")  # AVED amd_v80_gen5x8_25.1's Vivado (the V80 profile)
        mp.setattr(tool, "settings",
                   lambda overrides=None: real({**(overrides or {}), "vivado_aved_dir": str(STANDIN / "aved")}))
        # one reading of the commit for the build and every deploy (other edits to the tree would move a dirty one)
        commit = provenance.current_commit()
        record = build.build(designs.get(design), "vivado", sim_check=False, reports_root=root, use_cache=False, commit=commit)
    assert record["gate"]["passed"], record["gate"]["failures"]
    return design, root, Path(record["_archive"]), commit


def _settings(host, tmp_path, **kw) -> DeploySettings:
    return host.deploy_settings(tmp_path, **{"bdf": BDF, **kw})


def _calls(host) -> list[list[str]]:
    f = host.bin / "ami_tool.calls"
    return [json.loads(ln) for ln in f.read_text().splitlines()] if f.is_file() else []


@pytest.fixture()
def scenario(card_host):
    def set_(name: str) -> None:
        (card_host.bin / "ami_tool.scenario").write_text(name)
    (card_host.bin / "ami_tool.calls").unlink(missing_ok=True)
    set_("ok")
    yield set_
    set_("ok")


def test_deploy_programs_the_archived_image_with_ami_tool(card_host, v80_archive, tmp_path, scenario):
    design, reports, src, commit = v80_archive
    result = ami.deploy(design, _settings(card_host, tmp_path), reports_root=reports, commit=commit)
    image = next(src.glob("*_nofpt.pdi"))
    assert result["passed"] and result["failures"] == []
    assert result["verification"] == "programmed; on-card verification not implemented for the V80 yet"
    assert result["image"] == image.name and result["bdf"] == BDF and result["partition"] == 0
    manifest = json.loads((src / "manifest.json").read_text())
    assert result["image_sha256"] == result["remote_image_sha256"] == manifest["artifacts"]["pdi_nofpt"]
    assert result["logic_uuid"] == manifest["artifacts"]["pdi_nofpt"][:32]  # what the stand-in shows as Incoming UUID
    # exactly AVED's documented command, with -y (no terminal over SSH to answer its prompt)
    remote = f"{tmp_path / 'on-board'}/{commit.sha[:12]}-{design.name}/{image.name}"
    assert _calls(card_host) == [["cfgmem_program", "-d", BDF, "-t", "primary", "-i", remote, "-p", "0", "-y"]]
    dest = Path(result["_archive"])
    on_disk = json.loads((dest / "result.json").read_text())
    assert on_disk["passed"] and on_disk["verification"].startswith("programmed; on-card verification not implemented")
    assert "Hot reset has been performed into partition 0." in (dest / "ami_tool.stdout").read_text()
    assert (dest / "command.txt").read_text().split()[:2] == ["ami_tool", "cfgmem_program"]


@pytest.mark.parametrize("name,said", [("program_fails", "did not program the card"),
                                       ("no_hot_reset", "did not say it hot-reset the card into partition 0"),
                                       ("no_device", "ami_tool exited 1")])
def test_ami_tool_failures_are_failures(card_host, v80_archive, tmp_path, scenario, name, said):
    design, reports, _, commit = v80_archive
    scenario(name)
    result = ami.deploy(design, _settings(card_host, tmp_path), reports_root=reports, commit=commit)
    assert not result["passed"] and any(said in f for f in result["failures"]), result["failures"]
    assert result["verification"] == "not programmed"
    assert not json.loads((Path(result["_archive"]) / "result.json").read_text())["passed"]


def test_aborting_with_exit_zero_is_not_programmed():
    """ami_tool exits 0 after 'Aborting...' (cmd_cfgmem_program.c): its output decides, not its exit."""
    out = "UUID      | 1234\r\nAre you sure you wish to proceed? [Y/n]: \r\nAborting...\r\n"
    failures = ami.programming_failures(0, out)
    assert failures and "it aborted" in failures[0]
    ok = ("\r\nImage programming complete.\r\nOK. Image has been programmed successfully.\r\n"
          "Hot reset has been performed into partition 0.\r\n")
    assert ami.programming_failures(0, ok) == [] and ami.programming_failures(0, ok.replace("partition 0", "partition 1"))


def test_an_altered_image_is_never_pushed(card_host, v80_archive, tmp_path, scenario):
    design, reports, src, commit = v80_archive
    image = next(src.glob("*_nofpt.pdi"))
    saved = image.read_bytes()
    try:
        image.write_bytes(saved + b"x")
        with pytest.raises(ssh.DeployError, match="does not match the sha256 its build recorded"):
            ami.deploy(design, _settings(card_host, tmp_path), reports_root=reports, commit=commit)
    finally:
        image.write_bytes(saved)
    assert _calls(card_host) == []


def test_a_bad_bdf_or_none_is_one_clear_error(card_host, v80_archive, tmp_path):
    design, reports, _, commit = v80_archive
    with pytest.raises(ssh.BadTarget, match="bdf='21:00.0 -y; reboot' is not a PCIe address"):
        _settings(card_host, tmp_path, bdf="21:00.0 -y; reboot")
    with pytest.raises(ssh.DeployError, match=r"set \[tool.kabe.board\] bdf"):
        ami.deploy(design, card_host.deploy_settings(tmp_path), reports_root=reports, commit=commit)


def test_the_cli_says_programmed_and_not_verified(card_host, v80_archive, tmp_path, scenario, monkeypatch, capsys):
    design, reports, _, commit = v80_archive
    monkeypatch.setattr(cli, "settings_from_config", lambda board: _settings(card_host, tmp_path))
    real_get = cli.designs.get
    monkeypatch.setattr(cli.designs, "get", lambda name, *a, **kw: design if name == design.name else real_get(name, *a, **kw))
    from rich.console import Console

    console = Console(force_terminal=False, width=400)
    code = cli.main(design.name, None, None, 1, console=console, reports_root=reports, commit=commit)
    out = capsys.readouterr().out
    assert code == 0 and f"PROGRAMMED {design.name}" in out and "on-card verification not implemented" in out, out


def test_a_signed_image_must_verify_and_be_the_one_signed(card_host, v80_archive, tmp_path, scenario, monkeypatch):
    """As for the .bit (test_signed_bitstream.py): a signed V80 unit is deployed only when its signature
    verifies against the allowed signers and lists the .pdi with the sha256 it has now; a manifest
    and metrics rewritten beside another image do not vouch for it."""
    import subprocess

    from kabe.store import signing

    design, reports, src, commit = v80_archive
    copy_root = tmp_path / "reports"
    unit = copy_root / src.relative_to(reports)
    shutil.copytree(src, unit)
    keys = {}
    for name in ("ci", "other"):
        keys[name] = tmp_path / f"{name}_key"
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(keys[name])], check=True)
    allowed = tmp_path / "allowed_signers"
    allowed.write_text(f"ci@kabe {keys['ci'].with_suffix('.pub').read_text()}")
    monkeypatch.setattr(signing, "allowed_signers_file", lambda settings=None: allowed)
    name = f"{commit.archive_name}/{design.name}/vivado"

    def sign(key):
        (unit / signing.SIGNATURE_FILE).unlink(missing_ok=True)
        (unit / signing.SIGNATURE_FILE).write_bytes(signing.sign_unit(name, signing.hash_dir(unit), key))

    sign(keys["other"])
    with pytest.raises(ssh.DeployError, match="its signature does not verify"):
        ami.deploy(design, _settings(card_host, tmp_path), reports_root=copy_root, commit=commit)
    sign(keys["ci"])
    assert ami.deploy(design, _settings(card_host, tmp_path), reports_root=copy_root, commit=commit)["passed"]
    # another image, with manifest and metrics rewritten to match it: the signature still lists the old one
    image = next(unit.glob("*_nofpt.pdi"))
    image.write_bytes(image.read_bytes() + b" trojan")
    for f in ("manifest.json", "metrics.json"):
        data = json.loads((unit / f).read_text())
        data["artifacts"]["pdi_nofpt"] = provenance.sha256_file(image)
        (unit / f).write_text(json.dumps(data))
    (card_host.bin / "ami_tool.calls").unlink(missing_ok=True)
    with pytest.raises(ssh.DeployError, match="signature does not verify|sha256 is not the one the signed unit lists"):
        ami.deploy(design, _settings(card_host, tmp_path), reports_root=copy_root, commit=commit)
    assert _calls(card_host) == []
