"""The board's result is evidence, not a verdict (issue 18): a FORGED runner (tests/deploy/forged_runner.py)
on the loopback board prints what each test tells it to, and the host must fail every lie, say
which field and both values, and archive the run as failed. The board's fields reach the terminal
as plain text: a value of the wrong type or holding Rich markup crashes nothing."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest
from rich.console import Console

from kabe.project import designs
from kabe.base import provenance
from kabe.base import bitfile
from kabe.deploy import cli as deploy_cli, host, ssh, verdict
from kabe.deploy.host import DeployRun, DeploySettings, deploy

from . import forged_runner
from .loopback_host import sshd_available

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(not sshd_available(), reason="OpenSSH server not installed (.ci/run installs openssh-server)")]

ROWS = 128


def settings(board, tmp_path, **kw) -> DeploySettings:
    return board.deploy_settings(tmp_path, **{"timeout_s": 120, **kw})


def board_archive(reports: Path) -> Path:
    return reports / provenance.current_commit().archive_name / "stage4" / "board"


@pytest.fixture()
def forge(tmp_path, monkeypatch, reports):
    """forge(overrides, exit_code): the host pushes a forged runner instead of kabe's."""
    shutil.rmtree(board_archive(reports), ignore_errors=True)

    def make(overrides=None, exit_code=0, **kw):
        monkeypatch.setattr(host, "RUNNER", forged_runner.write(tmp_path / "forged", overrides, exit_code, **kw))

    yield make
    shutil.rmtree(board_archive(reports), ignore_errors=True)


def run(board, reports, tmp_path) -> dict:
    return deploy("stage4", settings(board, tmp_path), DeployRun(rows=ROWS, backend="sim", reports_root=reports))


def archived(reports: Path) -> dict:
    return json.loads((board_archive(reports) / "result.json").read_text())


def test_an_honest_result_passes(board, reports, tmp_path, forge):
    """The baseline every forgery below starts from: unchanged, the host agrees with it."""
    forge()
    result = run(board, reports, tmp_path)
    assert result["passed"] and result["failures"] == [], result["failures"]
    assert archived(reports)["passed"] is True


# The board table of issue 18, asked for rows=128: each row must fail the deploy and archive as failed.
TABLE = [
    pytest.param({"passed": True, "rows_checked": 1, "vectors_sha256": "0" * 64}, 0,
                 ["rows_checked: the board says 1, expected 128",
                  f"vectors_sha256: the board says '{'0' * 64}'"], id="1-row-and-a-zero-digest"),
    pytest.param({"passed": True}, 1,
                 ["exit code: the board runner exited 1", "passed: the board says True but its runner exited 1"],
                 id="exit-1-with-passed-true"),
    pytest.param({"passed": True, "mismatches": 999}, 0,
                 ["mismatches: the board reports 999 beats that differ"], id="999-mismatches-with-passed-true"),
]


@pytest.mark.parametrize("overrides,exit_code,reasons", TABLE)
def test_the_board_table_fails_the_deploy(board, reports, tmp_path, forge, overrides, exit_code, reasons):
    forge(overrides, exit_code)
    result = run(board, reports, tmp_path)
    assert result["passed"] is False and result["board_passed"] is True
    for reason in reasons:
        assert any(reason in f for f in result["failures"]), (reason, result["failures"])
    on_disk = archived(reports)
    assert on_disk["passed"] is False and on_disk["failures"] == result["failures"]
    assert on_disk["expected"]["rows_checked"] == ROWS


@pytest.mark.parametrize("overrides,reason", [
    ({"bit_commit": "fffffff-dirty"}, "bit_commit: the board says 'fffffff-dirty', expected"),
    ({"pl_commit": "0000000"}, "pl_commit: the board says '0000000', expected"),
    ({"seed": 2}, "seed: the board says 2, expected 1"),
    ({"model": "llm_accel.model.frames:int8_stimulus"}, "model: the board says 'llm_accel.model.frames:int8_stimulus', expected 'llm_accel.model.frames:ternary_stimulus'"),
    ({"problems": ["port 0: stat_overflow is set"]}, "problem on the board"),
    ({"status": {"stat0_overflow": 0, "stat1_overflow": 1}}, "status: stat1_overflow = 1 on the board, the host's model says 0"),
    ({"status": {"stat0_invalid": "many"}}, "status: the board sent {'stat0_invalid': 'many'}, expected an object"),
    ({"rows_checked": "lots"}, "rows_checked: the board sent 'lots', expected an integer"),
    ({"rows_checked": True}, "rows_checked: the board sent True, expected an integer"),
    ({"mismatches": -1}, "mismatches: the board sent -1, expected an integer >= 0"),
    ({"passed": "yes"}, "passed: the board sent 'yes', expected true or false"),
    ({"vectors_sha256": None}, "vectors_sha256: the board sent None, expected 64 hex digits"),
])
def test_each_field_is_checked(board, reports, tmp_path, forge, overrides, reason):
    forge(overrides)
    result = run(board, reports, tmp_path)
    assert not result["passed"] and any(reason in f for f in result["failures"]), result["failures"]
    assert archived(reports)["passed"] is False


def test_the_host_counts_invalid_bytes_itself(board, reports, tmp_path, forge):
    """The status outputs are held against the host's own model, not the board's."""
    forge({"status": {"stat0_invalid": 0, "stat0_overflow": 0, "stat1_invalid": 0, "stat1_overflow": 0}})
    result = run(board, reports, tmp_path)
    assert not result["passed"]
    want = result["expected"]["model_status"]["stat0_invalid"]
    assert want > 0 and f"status: stat0_invalid = 0 on the board, the host's model says {want}" in result["failures"]


def test_a_missing_field_and_a_non_object_fail(board, reports, tmp_path, forge):
    forge(drop=("vectors_sha256",))
    assert "vectors_sha256: the board sent none" in " ".join(run(board, reports, tmp_path)["failures"])
    forge(raw_stdout="[1, 2, 3]")
    assert run(board, reports, tmp_path)["failures"] == ["the board's result is list [1, 2, 3], expected a JSON object"]
    forge(raw_stdout="garbage")
    result = run(board, reports, tmp_path)
    assert not result["passed"] and "last line is not JSON" in result["failures"][0]
    assert archived(reports)["passed"] is False


@pytest.mark.parametrize("overrides,shown", [
    ({"rows_checked": "lots"}, "'lots' rows"),
    ({"bit_commit": "[/][bold red]0123456[/"}, "[/][bold red]0123456[/"),
    ({"bit_commit": "\x1b[2J"}, "'\\x1b[2J'"),
])
def test_the_deploy_cli_prints_what_the_board_sent_without_crashing(board, reports, tmp_path, forge, monkeypatch,
                                                                    overrides, shown):
    """issue 18: `rows_checked: "lots"` and a bit_commit holding Rich markup crashed the CLI after
    archiving. Now: FAIL, exit 1, the value shown as text, no traceback."""
    forge(overrides)
    s = settings(board, tmp_path)
    monkeypatch.setattr(deploy_cli, "settings_from_config", lambda _board: s)
    out = io.StringIO()
    rc = deploy_cli.main("stage4", None, ROWS, 1, console=Console(file=out, width=300, color_system=None),
                         backend="sim", reports_root=reports)
    text = out.getvalue()
    assert rc == 1, text
    assert text.startswith("FAIL stage4 on") and shown in text and "Traceback" not in text, text
    assert archived(reports)["passed"] is False


# ------------------------------------------------------------------------------------------------
# the judgement alone (no board): one Expected, one honest result


def _honest() -> tuple[dict, verdict.Expected]:
    e = verdict.Expected(model="llm_accel.model.frames:ternary_stimulus", rows=128, seed=1, vectors_sha256="a" * 64,
                         commit="0123456", model_status={"stat0_invalid": 5, "stat1_invalid": 7, "stat0_overflow": 0})
    b = {"passed": True, "rows_checked": 128, "mismatches": 0, "first_mismatches": [], "problems": [],
         "status": {"stat0_invalid": 5, "stat1_invalid": 7, "stat0_overflow": 0}, "vectors_sha256": "a" * 64,
         "bit_commit": "0123456", "pl_commit": "0123456", "model": "llm_accel.model.frames:ternary_stimulus", "seed": 1, "seconds": 1.0,
         "gb_per_s": 0.5}
    return b, e


def test_board_failures_pass_only_the_honest_result():
    b, e = _honest()
    assert verdict.board_failures(0, b, e) == []
    assert verdict.board_failures(1, b, e) != []
    for key in b:
        broken = {k: v for k, v in b.items() if k != key}
        assert verdict.board_failures(0, broken, e), f"dropping {key} must fail"
    assert verdict.board_failures(0, {**b, "seconds": float("nan")}, e)
    assert verdict.board_failures(0, {**b, "gb_per_s": "fast"}, e)


def test_a_long_board_value_is_cut_in_the_message():
    b, e = _honest()
    failures = verdict.board_failures(0, {**b, "bit_commit": "x" * 10_000}, e)
    assert failures and all(len(f) < 300 for f in failures)


# ------------------------------------------------------------------------------------------------
# hints name the right command and setting (issue 16, item 6)


def test_no_vivado_build_names_the_vivado_command(board, tmp_path):
    empty = tmp_path / "reports"
    commit = provenance.current_commit()
    (empty / commit.archive_name / "stage4" / "open").mkdir(parents=True)
    (empty / commit.archive_name / "stage4" / "open" / "metrics.json").write_text("{}")
    with pytest.raises(ssh.DeployError) as e:
        deploy("stage4", settings(board, tmp_path), DeployRun(rows=ROWS, reports_root=empty))
    msg = str(e.value)
    assert "`doit build:stage4 flow=vivado`" in msg and "holds only the open-flow build" in msg, msg


def test_unreachable_board_names_the_setting(board, tmp_path):
    from .loopback_host import _free_port

    t = ssh.Target("127.0.0.1", user=board.user, port=_free_port(), identity=board.client_key,
                   options=board.target_options(), connect_timeout_s=3)
    with pytest.raises(ssh.HostUnreachable) as e:
        ssh.run(t, ["true"])
    assert "[tool.kabe.board] host" in str(e.value) and "[tool.kabe] board" not in str(e.value)


def test_rows_that_do_not_split_over_the_ports_are_refused_before_pushing(board, reports, tmp_path):
    with pytest.raises(ssh.DeployError, match="rows=127 must be a positive multiple of stage4's 2 port"):
        deploy("stage4", settings(board, tmp_path), DeployRun(rows=127, backend="sim", reports_root=reports))
    assert not (tmp_path / "on-board").exists()


def test_expected_commit_matches_the_archive(reports):
    """The host's expectation is the archive's own word (the one embed_commit.tcl stamped)."""
    commit = provenance.current_commit()
    record = json.loads((reports / commit.archive_name / "stage4" / "vivado" / "metrics.json").read_text())
    bit = next((reports / commit.archive_name / "stage4" / "vivado").glob("*.bit"))
    word = bitfile.read_usr_access(bit.read_bytes())
    assert bitfile.describe_word(word) == bitfile.describe_word(bitfile.commit_word(record["commit"], record["dirty"]))
    assert designs.get("stage4").ports == 2
