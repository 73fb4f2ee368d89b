"""Deploy end to end: a real sshd on loopback plays the board, the design's Verilator model plays
its PL (the runner's `--backend sim`; STAND-IN for the PYNQ-Z1), and the bitstream comes from a
vivado-flow archive built with the STAND-IN vivado (tests/standin/vivado). Everything else is the
code a user runs: OpenSSH client, push, board runner, numpy check, atomic archive."""

from __future__ import annotations

from kabe.project.design_context import DesignContext
from kabe.project import designs
import json
import shutil
import subprocess
import threading
import time
from pathlib import Path

import pytest

from kabe.base import provenance
from kabe.base import bitfile
from kabe.deploy import ssh
from kabe.deploy.host import DeployRun, DeploySettings, deploy
from kabe.sim import verilator_build

from . import runner_copy
from .loopback_host import _free_port, sshd_available

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(not sshd_available(), reason="OpenSSH server not installed (.ci/run installs openssh-server)")]


def settings(board, tmp_path, **kw) -> DeploySettings:
    return board.deploy_settings(tmp_path, **kw)


def harness(design: str, **params) -> Path:
    return verilator_build.build(DesignContext(designs.get(design)), params or None).exe


def board_archive(reports: Path, design: str) -> Path:
    return reports / provenance.current_commit().archive_name / design / "board"


@pytest.mark.parametrize("design,rows", [("stage4", 524_278), ("stage3", 131_070)])
def test_deploy_checks_every_row_and_archives(board, reports, tmp_path, design, rows):
    """The document's full scale: every row it checked on the board, checked here. Each port's frame
    (134 MB for stage 4) goes as 32 MB DMA transfers with x at each head, as on the board."""
    result = deploy(design, settings(board, tmp_path), DeployRun(backend="sim", sim_harness=harness(design),
                                                                 reports_root=reports))
    assert result["rows_checked"] == rows and result["mismatches"] == 0, result["first_mismatches"]
    status = result["status"]
    assert result["passed"] and result["problems"] == [] and status["stat0_overflow"] == status["stat1_overflow"] == 0
    if design == "stage4":  # invalid weight bytes are mixed in: decoded as zero and counted, as the model says
        assert status["stat0_invalid"] > 0 and status["stat1_invalid"] > 0
    commit = provenance.current_commit()
    assert result["bit_commit"] == bitfile.describe_word(bitfile.commit_word(commit.sha, commit.dirty))
    assert result["pl_commit"] == result["bit_commit"]  # read back from the (simulated) PL after programming
    assert result["backend"] == "sim" and result["gb_per_s"] > 0
    on_disk = json.loads((board_archive(reports, design) / "result.json").read_text())
    assert on_disk["mismatches"] == 0 and on_disk["commit"] == commit.sha
    assert on_disk["bit_sha256"] == provenance.sha256_file(next((reports / commit.archive_name / design / "vivado").glob("*.bit")))


def test_a_broken_pl_is_reported_not_hidden(board, reports, tmp_path):
    """The adder tree one stage off (the document's bug): deploy says how many rows are wrong."""
    result = deploy("stage4", settings(board, tmp_path), DeployRun(rows=2 * 256, backend="sim",
                                                                   sim_harness=harness("stage4", LATENCY_ADJUST=1),
                                                                   reports_root=reports))
    assert result["mismatches"] > 0 and result["first_mismatches"] and not result["passed"]


@pytest.fixture()
def clean_board_archive(reports):
    shutil.rmtree(board_archive(reports, "stage4"), ignore_errors=True)
    yield
    shutil.rmtree(board_archive(reports, "stage4"), ignore_errors=True)


def test_unreachable_board(board, reports, tmp_path, clean_board_archive):
    s = settings(board, tmp_path, port=_free_port())
    with pytest.raises(ssh.HostUnreachable, match="cannot reach the board"):
        deploy("stage4", s, DeployRun(rows=16, backend="sim", sim_harness=harness("stage4"), reports_root=reports))
    assert not board_archive(reports, "stage4").exists()


def test_authentication_failure(board, reports, tmp_path, clean_board_archive):
    stranger = tmp_path / "stranger"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(stranger)], check=True)
    with pytest.raises(ssh.AuthenticationFailed, match="authentication failed"):
        deploy("stage4", settings(board, tmp_path, identity=stranger), DeployRun(rows=16, backend="sim",
                                                                                 sim_harness=harness("stage4"),
                                                                                 reports_root=reports))
    assert not board_archive(reports, "stage4").exists()


def test_unknown_host_key(board, reports, tmp_path, clean_board_archive):
    empty = tmp_path / "known_hosts"
    empty.write_text("")
    opts = {**board.target_options(), "UserKnownHostsFile": str(empty)}
    with pytest.raises(ssh.UnknownHostKey, match="host key is unknown"):
        deploy("stage4", settings(board, tmp_path, ssh_options=opts), DeployRun(rows=16, backend="sim",
                                                                                sim_harness=harness("stage4"),
                                                                                reports_root=reports))
    assert not board_archive(reports, "stage4").exists()


def test_pynq_missing_on_the_board(board, reports, tmp_path, clean_board_archive):
    with pytest.raises(ssh.DeployError, match="pynq is not installed on the board"):
        deploy("stage4", settings(board, tmp_path), DeployRun(rows=16, backend="pynq", reports_root=reports))
    assert not board_archive(reports, "stage4").exists()


def _tamper(reports: Path, design: str, edit) -> None:
    """Rewrite the archived .bit as a different build would have written it, and its recorded hash
    with it (so the archive's own integrity check passes and the board-side check must catch it)."""
    src = reports / provenance.current_commit().archive_name / design / "vivado"
    bit = next(src.glob("*.bit"))
    bit.write_bytes(edit(bit.read_bytes()))
    manifest = json.loads((src / "manifest.json").read_text())
    manifest["artifacts"]["bit"] = provenance.sha256_file(bit)
    (src / "manifest.json").write_text(json.dumps(manifest))


@pytest.fixture()
def restore_stage4_archive(reports):
    src = reports / provenance.current_commit().archive_name / "stage4" / "vivado"
    saved = {p: p.read_bytes() for p in (next(src.glob("*.bit")), src / "manifest.json")}
    yield
    for p, data in saved.items():
        p.write_bytes(data)


def test_commit_mismatch_is_refused(board, reports, tmp_path, clean_board_archive, restore_stage4_archive):
    def other_commit(data: bytes) -> bytes:
        word = bitfile.read_usr_access(data)
        at = data.find(bytes.fromhex("3001a001"), data.find(bytes.fromhex("aa995566")))
        return data[:at + 4] + (word ^ 0x1).to_bytes(4, "big") + data[at + 8:]

    _tamper(reports, "stage4", other_commit)
    with pytest.raises(ssh.DeployError, match="carries commit .* but the archive it came from is"):
        deploy("stage4", settings(board, tmp_path), DeployRun(rows=16, backend="sim", sim_harness=harness("stage4"),
                                                              reports_root=reports))
    assert not board_archive(reports, "stage4").exists()


def test_part_mismatch_is_refused(board, reports, tmp_path, clean_board_archive, restore_stage4_archive):
    _tamper(reports, "stage4", lambda data: data.replace(b"7z020clg400", b"7a035cpg236", 1))
    with pytest.raises(ssh.DeployError, match="built for part 7a035cpg236"):
        deploy("stage4", settings(board, tmp_path), DeployRun(rows=16, backend="sim", sim_harness=harness("stage4"),
                                                              reports_root=reports))
    assert not board_archive(reports, "stage4").exists()


def test_runner_killed_mid_run_leaves_no_result(board, reports, tmp_path, clean_board_archive):
    """SIGKILL the board runner while it works: deploy fails, and neither the board nor the archive
    holds a result claiming anything."""
    s = settings(board, tmp_path)
    errors: list[BaseException] = []

    def run():
        try:
            deploy("stage4", s, DeployRun(rows=2 * 60_000, backend="sim", sim_harness=harness("stage4"),
                                          reports_root=reports))
        except BaseException as e:  # noqa: BLE001 - handed to the test thread
            errors.append(e)

    t = threading.Thread(target=run)
    t.start()
    deadline = time.monotonic() + 60
    killed = False
    while time.monotonic() < deadline and not killed:
        out = subprocess.run(["pgrep", "-f", f"{s.remote_dir}/.*board_runner.py"], capture_output=True, text=True).stdout
        if out.split():
            time.sleep(0.5)  # let it get into its work
            subprocess.run(["pkill", "-9", "-f", f"{s.remote_dir}/.*board_runner.py"])
            killed = True
        time.sleep(0.05)
    t.join(timeout=120)
    assert killed, "the runner never started"
    assert errors and isinstance(errors[0], ssh.RemoteCommandFailed), errors
    assert "no result was recorded" in str(errors[0])
    assert not board_archive(reports, "stage4").exists()
    assert not list(Path(s.remote_dir).glob("*/result.json"))


# ------------------------------------------------------------------------------------------------
# the commit read back from the running PL (issue 13): the simulated PL's USR_ACCESS register is a
# parameter of the harness; the runner reads it after "programming" and before any row


def _archive_word() -> int:
    commit = provenance.current_commit()
    return bitfile.commit_word(commit.sha, commit.dirty)


def test_a_pl_running_another_commit_is_refused_showing_both(board, reports, tmp_path, clean_board_archive):
    other = _archive_word() ^ 0x0000_0001  # another commit's digits, same dirtiness
    with pytest.raises(ssh.DeployError) as e:
        deploy("stage4", settings(board, tmp_path), DeployRun(rows=16, backend="sim", sim_harness=harness("stage4"),
                                                              sim_pl_usr_access=other, reports_root=reports))
    msg = str(e.value)
    assert f"the running PL reports commit {bitfile.describe_word(other)} (USR_ACCESS 0x{other:08X})" in msg, msg
    assert f"but the archive is {bitfile.describe_word(_archive_word())} (0x{_archive_word():08X})" in msg, msg
    assert not board_archive(reports, "stage4").exists()  # nothing verified, nothing archived


def test_the_pl_running_the_archives_commit_verifies(board, reports, tmp_path, clean_board_archive):
    result = deploy("stage4", settings(board, tmp_path), DeployRun(rows=16, backend="sim",
                                                                   sim_harness=harness("stage4"),
                                                                   sim_pl_usr_access=_archive_word(),
                                                                   reports_root=reports))
    assert result["passed"], result["failures"]
    assert result["pl_commit"] == bitfile.describe_word(_archive_word())


def test_a_dirty_archive_is_refused_before_anything_is_pushed(board, reports, tmp_path):
    commit = provenance.current_commit()
    dirty = provenance.Commit(commit.sha, True)
    src = reports / commit.archive_name / "stage4" / "vivado"
    dst = tmp_path / "reports" / dirty.archive_name / "stage4" / "vivado"
    shutil.copytree(src, dst)
    record = json.loads((dst / "metrics.json").read_text())
    record["dirty"] = True
    (dst / "metrics.json").write_text(json.dumps(record))
    with pytest.raises(ssh.DeployError, match="uncommitted changes.*allow_dirty = true"):
        deploy("stage4", settings(board, tmp_path, allow_dirty=False), DeployRun(rows=16, backend="sim",
                                                                                 sim_harness=harness("stage4"),
                                                                                 reports_root=tmp_path / "reports",
                                                                                 commit=dirty))
    assert not (tmp_path / "on-board").exists()


def test_the_runner_checks_the_running_commit(tmp_path):
    """The board side of the check, on the runner as it is pushed (bitfile, pl_names, model beside it)."""
    runner = runner_copy.load(tmp_path)
    sha = "0123456" + "0" * 33
    clean, dirty = bitfile.commit_word(sha, False), bitfile.commit_word(sha, True)
    assert runner.check_running_commit(clean, sha, False, allow_dirty=False) == "0123456"
    with pytest.raises(runner.Refused, match=r"reports commit 0123457 \(USR_ACCESS 0x00123457\), but the archive is "
                                             r"0123456 \(0x00123456\)"):
        runner.check_running_commit(clean + 1, sha, False, allow_dirty=False)
    with pytest.raises(runner.Refused, match="is a dirty build"):
        runner.check_running_commit(dirty, sha, True, allow_dirty=False)
    assert runner.check_running_commit(dirty, sha, True, allow_dirty=True) == "0123456-dirty"
    with pytest.raises(runner.Refused, match="reports no USR_ACCESS word"):
        runner.check_running_commit(None, sha, False, allow_dirty=False)
