"""`kabe report --site DIR` (kabe.page.site): the page and exactly the files it links to; a folder
kabe did not write is never replaced; a raw report reached through a symlink is never published. The
published site in a browser: tests/ci/test_pages_site.py."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kabe.store import safe_fs
from kabe.page import site
from records_fixtures import make_cores, record, two_commit_repo, write_archive


@pytest.fixture()
def archive(tmp_path):
    repo, shas = two_commit_repo(tmp_path)
    reports = tmp_path / "reports"
    path = write_archive(reports, record(shas[1]))
    (path.parent / "timing_estimate.rpt").write_text("WNS +0.250 ns\n")
    (reports / "stray.bit").write_bytes(b"not linked from the page")
    return repo, reports, make_cores(tmp_path), shas


def _files(folder):
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


def test_the_site_is_the_page_and_what_it_links_to(archive, tmp_path):
    repo, reports, cores, shas = archive
    out = site.build_site(tmp_path / "public", reports, repo, cores, sections=())
    unit = f"{shas[1]}/stage4/open"
    assert _files(out.folder) == sorted([".kabe-site", "index.html", f"{unit}/metrics.json",
                                         f"{unit}/timing_estimate.rpt"])
    assert out.files[0] == "index.html" and len(out.files) == 3
    assert out.line() == f"site: {out.folder} (index.html and the 2 raw file(s) it links to; publish the folder as it is)"
    # run again: the site kabe wrote is replaced whole, nothing left beside it
    again = site.build_site(tmp_path / "public", reports, repo, cores, sections=())
    assert _files(again.folder) == _files(out.folder)
    assert not [n for n in os.listdir(tmp_path) if n.startswith(".public")]  # no .public.tmp-* or .old-* left


def test_a_folder_kabe_did_not_write_is_not_replaced(archive, tmp_path):
    repo, reports, cores, _ = archive
    mine = tmp_path / "public"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine")
    with pytest.raises(site.SiteError, match=r"exists and is not a site kabe wrote \(no \.kabe-site in it\)"):
        site.build_site(mine, reports, repo, cores, sections=())
    assert (mine / "notes.txt").read_text() == "mine" and _files(mine) == ["notes.txt"]
    with pytest.raises(site.SiteError, match="must lie outside"):
        site.build_site(reports / "public", reports, repo, cores, sections=())


def test_a_raw_report_behind_a_symlink_is_not_published(archive, tmp_path):
    repo, reports, cores, shas = archive
    secret = tmp_path / "secret.txt"
    secret.write_text("someone's file")
    (reports / shas[1] / "stage4" / "open" / "timing_estimate.rpt").unlink()
    os.symlink(secret, reports / shas[1] / "stage4" / "open" / "timing_estimate.rpt")
    with pytest.raises(safe_fs.UnsafePathError, match="is a symbolic link"):
        site.build_site(tmp_path / "public", reports, repo, cores, sections=())
    assert not (tmp_path / "public").exists() and not [n for n in os.listdir(tmp_path) if n.startswith(".public")]


def test_links_off_the_site_are_not_files_to_copy():
    page = ('<a href="#unverified">x</a><a href="https://example.invalid/x">y</a><img src="data:image/png;base64,AA">'
            '<a href="abc/stage4/open/metrics.json">m</a><a href="abc/stage4/open/metrics.json">again</a>'
            '<a href="a%20b/x.rpt">space</a>')
    assert site.local_links(page) == ["abc/stage4/open/metrics.json", "a b/x.rpt"]
    with pytest.raises(site.SiteError, match="is not a path inside"):
        site._source(Path("/tmp/reports"), "../etc/passwd")
