"""A hostile board's output (issue 36): a runner on the loopback board that prints a non-UTF-8 byte,
terminal escape sequences (a fake green PASS, a screen clear, a terminal reset, a window title) on
stdout or stderr, or 600 MB. Each deploy ends in one clear line about it, exit 1 or 2, no traceback;
nothing the board sent reaches the console or the archived record unescaped; and the host's memory
stays bounded (the deploy runs in its own process, whose peak RSS is measured and printed)."""

from __future__ import annotations

import json
import pickle
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kabe.base import provenance
from kabe.deploy import board_output

from .loopback_host import sshd_available

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(not sshd_available(), reason="OpenSSH server not installed (.ci/run installs openssh-server)")]

REPO = Path(__file__).resolve().parents[2]
ESC = "\x1b[2J\x1b[32mPASS stage4 on the board\x1b[0m\x1bc\x1b]0;owned\x07\u202e"  # no \r: it ends a line
_RUNNER = '''#!/usr/bin/env python3
"""HOSTILE board runner (tests/deploy/test_board_output.py): prints what the test says, checks nothing."""
import sys
out = sys.stdout.buffer
MODE = %(mode)r
if MODE == "ff":
    out.write(b"\\xff\\xfe\\x80 not utf-8 \\xc3\\n")
    sys.exit(0)
if MODE == "esc-stderr":
    sys.stderr.write(%(esc)r + "\\n")
    sys.exit(2)
if MODE == "esc-stdout":
    out.write((%(esc)r + "\\n").encode())
    sys.stderr.write(%(esc)r + "\\n")
    sys.exit(1)
if MODE == "esc-crash":
    sys.stderr.write("board crashed\\n" + %(esc)r + "\\n")
    sys.exit(3)
if MODE == "flood":
    block = (b"x" * 1023 + b"\\n") * 1024  # 1 MiB
    for _ in range(600):
        out.write(block)
    out.write(b"\\x1b[32mPASS\\x1b[0m\\n")
    sys.exit(0)
'''
_DRIVER = '''
import json, pickle, resource, sys
from pathlib import Path
from rich.console import Console
from kabe.deploy import cli as deploy_cli, host
settings, runner, reports = pickle.loads(Path(sys.argv[1]).read_bytes())
host.RUNNER = runner
deploy_cli.settings_from_config = lambda _board: settings
rc = deploy_cli.main("stage4", None, 128, 1, console=Console(file=sys.stdout, width=400, color_system=None),
                     backend="sim", reports_root=reports)
sys.stderr.write(json.dumps({"rc": rc, "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}) + "\\n")
'''


def _board_archive(reports: Path) -> Path:
    return reports / provenance.current_commit().archive_name / "stage4" / "board"


def _deploy(board, reports, tmp_path, mode: str) -> tuple[int, str, float, Path]:
    shutil.rmtree(_board_archive(reports), ignore_errors=True)
    runner = tmp_path / mode / "board_runner.py"
    runner.parent.mkdir(parents=True)
    runner.write_text(_RUNNER % {"mode": mode, "esc": ESC})
    job = tmp_path / mode / "job.pickle"
    job.write_bytes(pickle.dumps((board.deploy_settings(tmp_path / mode, timeout_s=300), runner, reports)))
    proc = subprocess.run([sys.executable, "-c", _DRIVER, str(job)], capture_output=True, text=True, cwd=REPO,
                          timeout=600)
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    said = json.loads(proc.stderr.strip().splitlines()[-1])
    print(f"{mode}: exit {said['rc']}, peak RSS {said['peak_rss_mb']:.0f} MB")  # the number the issue asks for
    return said["rc"], proc.stdout, said["peak_rss_mb"], _board_archive(reports)


def _no_control(text: str) -> bool:
    return not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]", text)


@pytest.mark.parametrize("mode, rc, line", [
    ("ff", 1, "the board runner's last line is not JSON: '\ufffd\ufffd\ufffd not utf-8 \ufffd'"),  # U+FFFD: replaced
    ("esc-stdout", 1, "the board runner's last line is not JSON: '\\x1b[2J\\x1b[32mPASS stage4 on the board"),
    ("esc-stderr", 2, "\\x1b[2J\\x1b[32mPASS stage4 on the board\\x1b[0m\\x1bc\\x1b]0;owned\\x07\\u202e"),
    ("esc-crash", 2, "the board runner exited 3 (board crashed | \\x1b[2J\\x1b[32mPASS"),
])
def test_a_hostile_board_is_one_escaped_line_and_exit_1_or_2(board, reports, tmp_path, mode, rc, line):
    got, out, _, archive = _deploy(board, reports, tmp_path, mode)
    assert got == rc, out
    assert _no_control(out), repr(out)
    said = [ln for ln in out.splitlines() if line in ln]
    assert len(said) == 1, out  # one line says it, escaped
    if rc == 2:
        assert out.strip().splitlines() == [out.strip()] and out.startswith("kabe deploy stage4: ")
        assert not archive.exists()  # could not run: nothing archived
    else:
        assert out.startswith("FAIL stage4 on ") and "PASS" not in out.splitlines()[0]
        for f in archive.iterdir():  # the archived record: nothing the board sent is unescaped
            assert _no_control(f.read_text()), f


def test_600_mb_from_the_board_is_bounded(board, reports, tmp_path):
    rc, out, peak, archive = _deploy(board, reports, tmp_path, "flood")
    assert rc == 1 and _no_control(out), out
    assert any("the board runner's last line is not JSON: '\\x1b[32mPASS\\x1b[0m'" in ln for ln in out.splitlines()), out
    kept = (archive / "runner.stdout").read_text()
    assert kept.startswith("[kabe: the first ") and len(kept) < 2 * board_output.KEEP_BYTES and _no_control(kept)
    assert peak < 250, f"peak RSS {peak:.0f} MB"  # 600 MB read whole was 1.8 GB


def test_escaping_is_one_rule_and_idempotent():
    s = board_output.shown(ESC + "\r\\x1b")
    assert _no_control(s) and board_output.shown(s) == s and s.endswith("\\u202e\\r\\x1b")
    assert board_output.log_text("a\x1b[0m\n\tb") == "a\\x1b[0m\n\tb"
    assert len(board_output.shown("x" * 10_000, 400)) == 403
