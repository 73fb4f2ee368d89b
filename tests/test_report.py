"""`doit report` and `kabe diff` over two builds on two commits, and the page in a real headless Chromium."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from kabe.records import diff
from kabe.records import history
from kabe.records import metrics
from kabe.records import report

from records_fixtures import make_cores, record, write_archive


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True,
                          env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                               "GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin"}).stdout.strip()


@pytest.fixture()
def two_commits(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    shas = []
    for i in range(2):
        (repo / "f").write_text(str(i))
        _git(repo, "add", "f")
        _git(repo, "commit", "-qm", f"c{i}")
        shas.append(_git(repo, "rev-parse", "HEAD"))
    reports = tmp_path / "reports"
    for sha, lut, wns, dsp in ((shas[0], 9000, 0.25, 0), (shas[1], 9300, -0.1, 8)):
        rec = record(sha, lut=lut, wns=wns, dsp=dsp)
        metrics.validate(rec)
        write_archive(reports, rec)
    return repo, reports, shas, make_cores(tmp_path)


def test_history_is_in_git_order(two_commits):
    repo, reports, shas, cores = two_commits
    assert [e.commit for e in history.load(reports, repo, cores)] == shas


def test_diff_table_shows_deltas_and_breaches(two_commits):
    repo, reports, shas, cores = two_commits
    md = diff.render(None, None, reports, repo, cores)
    assert f"{shas[1][:12]} vs the previous archived build" in md and f"stage4 {shas[0][:12]}" in md
    assert f"{shas[1][:12]} vs {shas[0][:12]}" in diff.render(shas[0], shas[1], reports, repo, cores)
    assert "| stage4 | open | LUT | 9,000 | 9,300 | +300 (+3.3%) |  |" in md
    assert "| stage4 | open | DSP48E1 | 0 | 8 | +8 | **budget breached** |" in md
    assert "WNS ns (estimate)" in md and "**timing fails**" in md
    assert "| stage4 | open | gate | pass | FAIL |" in md


def test_report_page_plots_both_commits(two_commits):
    repo, reports, shas, cores = two_commits
    index = report.build_report(reports, repo, cores)
    page = index.read_text()
    assert page.count('class="plot"') == 3  # history of stage4, the wall, the token budget
    assert "pre-route estimate" in page and shas[1][:12] in page
    assert (reports / "site" / "history_stage4.png").stat().st_size > 5000


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def _load_in_chromium(page: Path, tmp_path: Path) -> tuple[str, str]:
    """(DOM after load, browser log). Flags keep a headless Chromium off this closed network."""
    proc = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         f"--user-data-dir={tmp_path / 'profile'}", "--enable-logging=stderr", "--v=0",
         "--virtual-time-budget=5000", "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=120)
    return proc.stdout, proc.stderr


def _console_errors(log: str) -> list[str]:
    return [line for line in log.splitlines() if "CONSOLE" in line and ("rror" in line or "Uncaught" in line)]


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (.ci/run installs it)")
def test_page_in_headless_chromium(two_commits, tmp_path):
    repo, reports, _, cores = two_commits
    dom, log = _load_in_chromium(report.build_report(reports, repo, cores), tmp_path)
    assert 'data-plots-ok="yes"' in dom and 'data-plots="3"' in dom, log[-2000:]
    assert _console_errors(log) == []
    # the check itself can fail: a page with a script error and a broken image is caught
    bad = tmp_path / "bad.html"
    bad.write_text(report._SELF_CHECK.join(["<html><body><img class='plot' src='data:image/png;base64,AAAA'>",
                                             "<script>undefined_function()</script></body></html>"]))
    dom, log = _load_in_chromium(bad, tmp_path)
    assert 'data-plots-ok="no"' in dom
    assert _console_errors(log), log[-2000:]
