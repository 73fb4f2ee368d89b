"""Writes and deletes stay inside reports/ and build/ (issue 18): a symlink on the way is refused with a
clear error, the folder it points to is left untouched, and archives get the user's umask."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from kabe.project import designs
from kabe.base import provenance
from kabe.flows.vivado import project
from kabe.page import report
from kabe.store import safe_fs
from kabe.store.archive import archive_dir, write_atomic, write_text_atomic

from records_fixtures import make_cores, record, write_archive


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture()
def elsewhere(tmp_path):
    """A folder outside reports/ and build/ that a planted link points to, with files kabe must not touch,
    laid out like an archive so the old code would have moved them aside and deleted them."""
    target = tmp_path / "someone-elses"
    (target / "stage2" / "open").mkdir(parents=True)
    (target / "stage2" / "open" / "metrics.json").write_text("precious")
    (target / "notes.txt").write_text("do not delete")
    return target


def test_symlinked_commit_folder_is_refused(tmp_path, elsewhere):
    reports = tmp_path / "reports"
    commit = provenance.Commit("ab" * 20, False)
    reports.mkdir()
    (reports / commit.archive_name).symlink_to(elsewhere)
    before = _snapshot(elsewhere)
    with pytest.raises(safe_fs.UnsafePathError, match=r"is a symbolic link .*remove the link"):
        write_atomic(archive_dir(commit, "stage2", "open", reports), {"metrics.json": "{}"}, root=reports)
    assert _snapshot(elsewhere) == before
    assert sorted(p.name for p in elsewhere.iterdir()) == ["notes.txt", "stage2"]  # no temp or .old debris


def test_symlinked_archive_folder_itself_is_refused(tmp_path, elsewhere):
    reports = tmp_path / "reports"
    dest = reports / ("ab" * 20) / "stage2" / "open"
    dest.parent.mkdir(parents=True)
    dest.symlink_to(elsewhere / "stage2" / "open")
    before = _snapshot(elsewhere)
    with pytest.raises(safe_fs.UnsafePathError, match="is a symbolic link"):
        write_atomic(dest, {"metrics.json": "{}"}, root=reports)
    assert _snapshot(elsewhere) == before and dest.is_symlink()


def test_the_default_root_is_the_checkouts_reports(tmp_path, elsewhere, monkeypatch):
    """Callers that pass no root (deploy's board archive, the sim result) are still confined to reports/."""
    reports = tmp_path / "reports"
    reports.mkdir()
    monkeypatch.setattr(safe_fs, "REPORTS", reports)
    (reports / ("ab" * 20)).symlink_to(elsewhere)
    before = _snapshot(elsewhere)
    with pytest.raises(safe_fs.UnsafePathError):
        write_atomic(reports / ("ab" * 20) / "stage2" / "board", {"result.json": "{}"})
    with pytest.raises(safe_fs.UnsafePathError):
        write_text_atomic(reports / ("ab" * 20) / "stage2" / "sim" / "result.json", "{}")
    assert _snapshot(elsewhere) == before


def test_a_name_cannot_climb_out_of_the_archive(tmp_path):
    with pytest.raises(safe_fs.UnsafePathError, match="is not inside"):
        write_atomic(tmp_path / "reports" / "a", {"../../escaped.txt": "x"}, root=tmp_path / "reports")
    assert not (tmp_path / "escaped.txt").exists()


def test_report_site_through_a_link_is_refused(tmp_path, elsewhere):
    reports = tmp_path / "reports"
    write_archive(reports, record("ab" * 20))
    (reports / "site").symlink_to(elsewhere)
    before = _snapshot(elsewhere)
    with pytest.raises(safe_fs.UnsafePathError, match="site is a symbolic link"):
        report.build_report(reports, tmp_path, make_cores(tmp_path))
    assert _snapshot(elsewhere) == before
    assert not (reports / ".report-work").exists()  # the PNGs are drawn in a private temp folder


def _vivado_workdir(tmp_path: Path) -> Path:
    return tmp_path / "build" / "stage4" / "vivado" / "edalize"


def test_symlinked_edalize_folder_is_refused(tmp_path, elsewhere):
    work = _vivado_workdir(tmp_path)
    work.parent.mkdir(parents=True)
    work.symlink_to(elsewhere)
    before = _snapshot(elsewhere)
    with pytest.raises(safe_fs.UnsafePathError, match="edalize is a symbolic link"):
        project.generate_project(designs.get("stage4"), work, commit=provenance.Commit("ab" * 20, False),
                                 flow_settings={"vivado_version": "", "vivado_version_mismatch": "warn",
                                                "vivado_timeout_s": 60, "vivado_jobs": 1})
    assert _snapshot(elsewhere) == before and work.is_symlink()


def test_symlinked_design_build_folder_is_refused(tmp_path, elsewhere, monkeypatch):
    """A link higher up (build/<design>) is caught too: under the checkout's build/ every component is checked."""
    build = tmp_path / "build"
    build.mkdir()
    monkeypatch.setattr(safe_fs, "BUILD", build)
    (build / "stage4").symlink_to(elsewhere)
    before = _snapshot(elsewhere)
    with pytest.raises(safe_fs.UnsafePathError, match="stage4 is a symbolic link"):
        project.generate_project(designs.get("stage4"), _vivado_workdir(tmp_path),
                                 commit=provenance.Commit("ab" * 20, False),
                                 flow_settings={"vivado_version": "", "vivado_version_mismatch": "warn",
                                                "vivado_timeout_s": 60, "vivado_jobs": 1})
    assert _snapshot(elsewhere) == before


def test_remove_tree_deletes_links_not_their_targets(tmp_path, elsewhere):
    """Inside a folder kabe owns, a link is removed as a link: rmtree never descends into it."""
    root = tmp_path / "build"
    own = root / "sim" / "stage4" / "old"
    own.mkdir(parents=True)
    (own / "link").symlink_to(elsewhere)
    before = _snapshot(elsewhere)
    safe_fs.remove_tree(own, root)
    assert not own.exists() and _snapshot(elsewhere) == before


@pytest.mark.parametrize("umask, dir_mode, file_mode", [(0o022, 0o755, 0o644), (0o027, 0o750, 0o640)])
def test_archives_follow_the_umask(tmp_path, umask, dir_mode, file_mode):
    source = tmp_path / "tool_output.rpt"  # a tool may leave its report 0600: the archive follows the umask
    source.write_text("report")
    source.chmod(0o600)
    old = os.umask(umask)
    try:
        dest = write_atomic(tmp_path / "reports" / "a" / "stage4" / "open",
                            {"metrics.json": "{}", "raw/t.rpt": source, "x.bin": b"\0"}, root=tmp_path / "reports")
        page = write_text_atomic(tmp_path / "reports" / "index.html", "<html>", root=tmp_path / "reports")
    finally:
        os.umask(old)
    assert stat.S_IMODE(dest.stat().st_mode) == dir_mode
    assert stat.S_IMODE((dest / "raw").stat().st_mode) == dir_mode
    for f in ("metrics.json", "raw/t.rpt", "x.bin"):
        assert stat.S_IMODE((dest / f).stat().st_mode) == file_mode, f
    assert stat.S_IMODE(page.stat().st_mode) == file_mode


def test_a_symlinked_compile_lock_is_refused_not_truncated(tmp_path, elsewhere):
    from kabe.sim import verilator_build

    lock = tmp_path / "build" / "sim" / ".compile.lock"
    lock.parent.mkdir(parents=True)
    lock.symlink_to(elsewhere / "notes.txt")
    with pytest.raises(safe_fs.UnsafePathError, match="compile.lock is a symbolic link"):
        verilator_build._open_lock(lock)
    assert (elsewhere / "notes.txt").read_text() == "do not delete"
