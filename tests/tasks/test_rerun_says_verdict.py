"""A no-op rerun says what it found: an up-to-date `doit build:<design>` prints the verdict line
recomputed from its archive (kabe.tasks.verdict_reporter), never the record's own `passed`."""

from __future__ import annotations

import io
from types import SimpleNamespace

from kabe.tasks.verdict_reporter import ARCHIVED, VerdictReporter, archived_line
from records_fixtures import make_cores, record, write_archive

SHA = "ab" * 20


def _task(target):
    return SimpleNamespace(name="build:stage4", targets=[str(target)], title=lambda: "build:stage4")


def test_up_to_date_build_prints_its_archived_verdict(tmp_path):
    cores = make_cores(tmp_path)
    path = write_archive(tmp_path / "reports", record(SHA))
    line = archived_line(path, cores)
    assert line == f"kabe build stage4 (open flow, {SHA[:12]}): gate PASS {ARCHIVED}"


def test_a_forged_pass_in_the_archive_is_said_as_the_fail_it_is(tmp_path):
    cores = make_cores(tmp_path)
    path = write_archive(tmp_path / "reports", record(SHA, dsp=8, passed=True))
    line = archived_line(path, cores)
    assert line.startswith(f"kabe build stage4 (open flow, {SHA[:12]}): gate FAIL: ") and "dsp" in line


def test_an_unreadable_archive_says_so(tmp_path):
    cores = make_cores(tmp_path)
    path = write_archive(tmp_path / "reports", None, commit=SHA, design="stage4", flow="open", text="{")
    assert "the archive cannot be read again" in archived_line(path, cores)


def test_the_reporter_writes_it_under_doits_up_to_date_marker(tmp_path, monkeypatch):
    path = write_archive(tmp_path / "reports", record(SHA))
    monkeypatch.setattr("kabe.tasks.verdict_reporter.archived_line", lambda target: f"LINE for {target}")
    out = io.StringIO()
    rep = VerdictReporter(out, {"show_out": False, "show_err": False, "failure_verbosity": 0})
    rep.skip_uptodate(_task(path))
    assert out.getvalue() == f"-- build:stage4\nLINE for {path}\n"
