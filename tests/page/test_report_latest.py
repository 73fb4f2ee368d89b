"""The page's "Latest build per design" is the newest clean build of the checked-out branch: a dirty
(uncommitted) build is shown apart as the working tree's, never as the latest, however recent.
Issue 44 item 3: after a dirty FAIL, the revert and a clean PASS of the same design, the page shows PASS."""

from __future__ import annotations

import re

import pytest

from kabe.page import report

from records_fixtures import git, make_cores, record, two_commit_repo, write_archive


@pytest.fixture()
def dirty_fail_then_clean_pass(tmp_path):
    repo, shas = two_commit_repo(tmp_path)
    reports = tmp_path / "reports"
    head = shas[1]
    write_archive(reports, record(shas[0], lut=9000, wns=0.3))
    # the broken edit, built uncommitted: a FAIL at HEAD-dirty (sorts after HEAD's clean build in git order)
    write_archive(reports, dict(record(head, lut=9100, wns=-0.4), dirty=True), commit=f"{head}-dirty")
    write_archive(reports, record(head, lut=9050, wns=0.2))  # reverted, rebuilt clean: PASS
    return repo, reports, shas, make_cores(tmp_path)


def _row(page: str, attr: str) -> str:
    m = re.search(rf'<tr {attr}="stage4" data-flow="open">(.*?)</tr>', page, re.S)
    assert m, page[:3000]
    return m.group(1)


def test_a_clean_pass_after_a_dirty_fail_is_the_latest_and_the_dirty_build_is_apart(dirty_fail_then_clean_pass):
    repo, reports, shas, cores = dirty_fail_then_clean_pass
    page = report.build_report(reports, repo, cores, sections=()).read_text()
    latest = _row(page, "data-design")
    assert '<td class="pass">pass</td>' in latest and "FAIL" not in latest
    assert f"<code>{shas[1][:12]}</code> (HEAD)" in latest and "-dirty" not in latest
    assert f"Every row comes from commit <code>{shas[1][:12]}</code> (HEAD)" in page
    work = _row(page, "data-worktree-design")  # the dirty build: shown, apart, labelled as the working tree's
    assert '<td class="fail">FAIL</td>' in work and "(HEAD + uncommitted changes)" in work
    assert page.index("Latest build per design") < page.index('id="worktree"') < page.index("Latest simulation")


def test_a_build_of_a_commit_off_the_checked_out_branch_is_not_its_latest(dirty_fail_then_clean_pass, tmp_path):
    repo, reports, shas, cores = dirty_fail_then_clean_pass
    git(repo, "checkout", "-q", "-b", "side", shas[0])
    (repo / "f").write_text("side")
    git(repo, "commit", "-qam", "side")
    side = git(repo, "rev-parse", "HEAD")
    page = report.build_report(reports, repo, cores, sections=()).read_text()
    latest = _row(page, "data-design")  # commit 1 is not on `side`: its builds are not this branch's latest
    assert f"<code>{shas[0][:12]}</code>" in latest and shas[1][:12] not in latest
    assert "on side" in page and side[:12] not in latest
    assert 'data-worktree-design="stage4"' not in page  # the dirty build is commit 1's, not this tree's


def test_only_a_dirty_build_is_shown_apart_never_as_latest(tmp_path):
    repo, shas = two_commit_repo(tmp_path)
    reports = tmp_path / "reports"
    write_archive(reports, dict(record(shas[1], wns=-0.4), dirty=True), commit=f"{shas[1]}-dirty")
    page = report.build_report(reports, repo, make_cores(tmp_path), sections=()).read_text()
    assert 'data-design="stage4"' not in page.split("Latest simulation")[0].split("working tree")[0]
    assert "No clean build of a commit" in page and '<td class="fail">FAIL</td>' in _row(page, "data-worktree-design")


def test_the_page_in_headless_chromium_shows_the_clean_pass_as_latest(dirty_fail_then_clean_pass, tmp_path):
    """The rendered page (Chromium's DOM after load), and a screenshot of it that must be drawn."""
    from test_report import CHROMIUM, _console_errors, _load_in_chromium

    if CHROMIUM is None:
        pytest.skip("Debian's chromium is not installed (.ci/run installs it)")
    repo, reports, shas, cores = dirty_fail_then_clean_pass
    index = report.build_report(reports, repo, cores, sections=())
    dom, log = _load_in_chromium(index, tmp_path)
    assert 'data-plots-ok="yes"' in dom, log[-2000:]
    assert _console_errors(log) == []
    assert '<td class="pass">pass</td>' in _row(dom, "data-design")
    assert '<td class="fail">FAIL</td>' in _row(dom, "data-worktree-design")


# Only the verdict cells of the page's rows painted, in colours nothing else on the page uses: the
# "Latest build per design" rows (data-design) green for a pass, red for a FAIL; the working tree's rows
# (data-worktree-design) blue for a FAIL. The screenshot then says which verdict the reader sees as latest.
_PAINT = ("<style>body *{visibility:hidden!important}svg,img{display:none!important}"
          "tr[data-design] td.pass{visibility:visible!important;background:#00ff00!important}"
          "tr[data-design] td.fail{visibility:visible!important;background:#ff0000!important}"
          "tr[data-worktree-design] td.fail{visibility:visible!important;background:#0000ff!important}</style>")


def _painted(png) -> dict[str, int]:
    import matplotlib.image as mpimg

    px = (mpimg.imread(str(png))[..., :3] * 255).round().astype(int)
    count = lambda rgb: int(((px[..., 0] == rgb[0]) & (px[..., 1] == rgb[1]) & (px[..., 2] == rgb[2])).sum())
    return {"pass": count((0, 255, 0)), "fail": count((255, 0, 0)), "worktree fail": count((0, 0, 255))}


def test_a_screenshot_shows_pass_as_latest_and_the_dirty_fail_apart(dirty_fail_then_clean_pass, tmp_path):
    import subprocess

    from test_report import CHROMIUM

    if CHROMIUM is None:
        pytest.skip("Debian's chromium is not installed (.ci/run installs it)")
    repo, reports, shas, cores = dirty_fail_then_clean_pass
    page = report.build_report(reports, repo, cores, sections=()).read_text()

    def shot(html_text: str, name: str) -> dict[str, int]:
        src, png = tmp_path / f"{name}.html", tmp_path / f"{name}.png"
        src.write_text(html_text.replace("</head>", _PAINT + "</head>", 1))
        subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                        "--disable-background-networking", "--disable-component-update", "--disable-sync",
                        f"--user-data-dir={tmp_path / 'profile'}", "--hide-scrollbars", "--window-size=1400,1600",
                        f"--screenshot={png}", src.as_uri()], capture_output=True, timeout=120)
        assert png.is_file()
        return _painted(png)

    seen = shot(page, "page")
    assert seen["pass"] > 200 and seen["fail"] == 0 and seen["worktree fail"] > 200, seen
    # the check can fail: the same page with the dirty FAIL drawn as latest (as it was) shows red
    stale = page.replace("data-worktree-design=", "data-design=")
    seen = shot(stale, "stale")
    assert seen["fail"] > 200, seen
