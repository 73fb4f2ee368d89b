"""`doit report` and `kabe diff` over two builds on two commits, and the page in a real headless Chromium."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from kabe.project import config
from kabe.records import diff
from kabe.base import git as kabe_git
from kabe.records import history
from kabe.records import metrics
from kabe.page import report

from records_fixtures import git as _git, make_cores, record, two_commit_repo, write_archive

# this project's study on the page, through the page-section hook (pyproject.toml's page_sections)
STUDY_SECTIONS = ("llm_accel.page:wall", "llm_accel.page:token_budget", "llm_accel.page:v80")


@pytest.fixture()
def two_commits(tmp_path):
    repo, shas = two_commit_repo(tmp_path)
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
    assert f"{shas[1][:12]} vs the nearest ancestor with a clean archive" in md
    assert f"After: {shas[1][:12]} (HEAD)" in md and f"stage4 open {shas[0][:12]} (1 commit before)" in md
    assert f"{shas[1][:12]} vs {shas[0][:12]}" in diff.render(shas[0], shas[1], reports, repo, cores)
    assert "| stage4 | open | LUT | 9,000 | 9,300 | +300 (+3.3%) |  |" in md
    assert "| stage4 | open | DSP48E1 | 0 | 8 | +8 | **budget breached** |" in md
    assert "WNS ns (estimate)" in md and "**timing fails**" in md
    assert "| stage4 | open | gate | pass | FAIL |" in md


def test_diff_takes_git_refs(two_commits):
    repo, reports, shas, cores = two_commits
    _git(repo, "tag", "v0", shas[0])
    _git(repo, "branch", "topic", shas[1])
    by_ref = diff.render("HEAD~1", "HEAD", reports, repo, cores)
    assert by_ref.startswith(f"### kabe: {shas[1][:12]} vs {shas[0][:12]}")
    assert diff.render("v0", "topic", reports, repo, cores) == by_ref.replace("(HEAD)", "(topic)")
    assert diff.render(shas[0][:8], None, reports, repo, cores).startswith(f"### kabe: {shas[1][:12]} vs {shas[0][:12]}")


def test_diff_refuses_unknown_refs_and_unbuilt_commits(two_commits):
    repo, reports, shas, cores = two_commits
    with pytest.raises(kabe_git.RefError, match="'nosuch'"):
        diff.render("deadbeef", "nosuch", reports, repo, cores)
    with pytest.raises(kabe_git.RefError, match="'deadbeef'"):
        diff.render("deadbeef", None, reports, repo, cores)
    (repo / "f").write_text("2")
    _git(repo, "commit", "-qam", "c2")  # a commit with no archive
    with pytest.raises(diff.DiffError, match=r"no archived builds for HEAD \("):
        diff.render(None, "HEAD", reports, repo, cores)


def _archive(reports: Path, name: str, rec: dict) -> None:
    d = reports / name / rec["design"] / rec["flow"]
    d.mkdir(parents=True)
    (d / "metrics.json").write_text(metrics.json.dumps(rec))


def test_diff_default_is_the_nearest_clean_ancestor_never_a_dirty_build(two_commits):
    """HEAD's parent has only a dirty build: the default compares with the grandparent and says so; the
    dirty build is used only when named."""
    repo, reports, shas, cores = two_commits
    (repo / "f").write_text("2")
    _git(repo, "commit", "-qam", "c2")
    head = _git(repo, "rev-parse", "HEAD")
    dirty = dict(record(shas[1], lut=1, wns=0.5), dirty=True)
    shutil.rmtree(reports / shas[1])
    _archive(reports, f"{shas[1]}-dirty", dirty)
    _archive(reports, head, record(head, lut=9100, wns=0.3))
    md = diff.render(None, None, reports, repo, cores)
    assert f"### kabe: {head[:12]} vs the nearest ancestor with a clean archive" in md
    assert f"stage4 open {shas[0][:12]} (2 commits before)" in md
    assert "| stage4 | open | LUT | 9,000 | 9,100 | +100 (+1.1%) |  |" in md
    named = diff.render(f"{shas[1][:10]}-dirty", None, reports, repo, cores)
    assert named.startswith(f"### kabe: {head[:12]} vs {shas[1][:12]}-dirty") and "| 1 | 9,100 |" in named
    with pytest.raises(diff.DiffError, match="only a dirty build exists"):
        diff.render("HEAD~1", None, reports, repo, cores)


def _sim_result(reports: Path, sha: str, passed: bool) -> None:
    d = reports / sha / "stage4" / "sim"
    d.mkdir(parents=True)
    (d / "result.json").write_text(metrics.json.dumps({
        "design": "stage4", "rows": 131_070, "seed": 3, "mismatches": 0 if passed else 2, "passed": passed,
        "problems": [] if passed else ["port 1: 2 of 65535 result words never came out"], "beats_per_cycle": 0.998}))


def test_report_page_plots_both_commits(two_commits):
    repo, reports, shas, cores = two_commits
    _sim_result(reports, shas[0], True)
    _sim_result(reports, shas[1], False)
    index = report.build_report(reports, repo, cores, sections=STUDY_SECTIONS)  # kabe's own page
    page = index.read_text()
    assert page.count('class="plot"') == 3  # history of stage4, the wall, the token budget
    assert "pre-route estimate" in page and shas[1][:12] in page
    # the FAIL says why, beside it; the commit and the raw reports are named
    # the verdict is recomputed from the numbers: WNS -0.1 first, the DSP budget among the reasons on hover
    fail = re.search(r'<td class="fail">FAIL</td><td class="why" title="([^"]*)">', page)
    assert fail and "budget exceeded: dsp = 8 (must be == 0)" in fail.group(1) and "WNS -0.100" in fail.group(1)
    assert f'<code>{shas[1][:12]}</code> (HEAD)' in page
    assert f'href="{shas[1]}/stage4/open/metrics.json"' in page
    # the latest simulation of each design: rows, mismatches, beats per clock, and its problem
    assert "<td>131,070</td><td>3</td><td>2</td><td>0.998</td><td class=\"fail\">FAIL</td>" in page
    assert "2 of 65535 result words never came out" in page
    # the LUT panel carries the open flow's budget from cores/stage4/design.yaml
    assert 'id="stage4-budget-lut-open-lt"' in page and 'id="stage4-budget-wns_ns-zero"' in page
    assert (reports / "site" / "history_stage4.svg").stat().st_size > 5000
    assert not (reports / "site" / "index.html").exists()  # its links would point nowhere from site/
    assert [p.name for p in reports.iterdir() if p.name.startswith(".")] == []  # no work folder left behind


def test_one_commit_panels_are_readable(tmp_path):
    """One point: axes from zero past the budget, not matplotlib's +-0.05 around the dot."""
    import matplotlib.pyplot as plt
    from kabe.page import report_plot

    rec = record("a" * 40, lut=3647, wns=0.4)
    from kabe.rules import gate

    entry = history.Entry("a" * 40, "stage4", "open", rec, gate.Verdict(True))
    captured = {}
    real_close = plt.close
    plt.close = lambda fig: captured.setdefault("fig", fig)
    try:
        report_plot.plot_design("stage4", [entry], tmp_path / "one.svg")
    finally:
        plt.close = real_close
    axes = {ax.get_title(): ax for ax in captured["fig"].axes}
    lo, hi = axes["LUT"].get_ylim()
    assert lo <= 0 and hi > 4500  # zero and the 4,500 budget in view around 3,647
    wlo, whi = axes["WNS (ns)"].get_ylim()
    assert wlo < 0 < 0.4 < whi and whi - wlo > 0.5
    assert axes["LUT"].get_xlim() == (-1, 1)


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def latin_fonts_only(tmp_path: Path) -> dict[str, str]:
    """An environment whose fontconfig knows only DejaVu (no CJK font), so a check of the page's own
    CJK font means the same on every machine, whatever fonts it has installed."""
    conf = tmp_path / "fonts.conf"
    conf.write_text('<?xml version="1.0"?><!DOCTYPE fontconfig SYSTEM "fonts.dtd"><fontconfig>'
                    f"<dir>{DEJAVU}</dir><cachedir>{tmp_path / 'fontcache'}</cachedir></fontconfig>\n")
    return {**os.environ, "FONTCONFIG_FILE": str(conf)}


DEJAVU = "/usr/share/fonts/truetype/dejavu"


def _load_in_chromium(page: Path, tmp_path: Path, env: dict[str, str] | None = None) -> tuple[str, str]:
    """(DOM after load, browser log). Flags keep a headless Chromium off this closed network."""
    proc = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         f"--user-data-dir={tmp_path / 'profile'}", "--enable-logging=stderr", "--v=0",
         "--virtual-time-budget=5000", "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=120, env=env)
    return proc.stdout, proc.stderr


def _console_errors(log: str) -> list[str]:
    return [line for line in log.splitlines() if "CONSOLE" in line and ("rror" in line or "Uncaught" in line)]


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (.ci/run installs it)")
def test_page_in_headless_chromium(two_commits, tmp_path):
    repo, reports, shas, cores = two_commits
    no_cjk = latin_fonts_only(tmp_path) if Path(DEJAVU).is_dir() else None  # else: the machine's own fonts
    dom, log = _load_in_chromium(report.build_report(reports, repo, cores, sections=STUDY_SECTIONS), tmp_path,
                                 no_cjk)
    assert 'data-plots-ok="yes"' in dom and 'data-plots="3"' in dom, log[-2000:]
    assert _console_errors(log) == []
    # a FAIL shows its reason in the rendered table
    row = re.search(r'<tr data-design="stage4" data-flow="open">(.*?)</tr>', dom, re.S).group(1)
    assert '<td class="fail">FAIL</td>' in row and "budget exceeded: dsp = 8 (must be == 0)" in row  # in the hover
    # the LUT panel of the drawn figure holds the budget line, drawn (a path with coordinates)
    lut = dom[dom.index('id="stage4-panel-lut"'):dom.index('id="stage4-panel-ff"')]
    line = re.search(r'<g id="stage4-budget-lut-open-lt">\s*<path [^>]*d="M [-\d.]+ [-\d.]+\s+L ', lut)
    assert line, lut[:2000]
    # the Japanese quotes are HTML text drawn by the page's own font (this machine has no CJK font):
    # never glyph boxes, never a placeholder
    assert 'data-cjk="font"' in dom, re.search(r'data-cjk="\w+"', dom)
    assert re.search(r'<span class="cjk" lang="ja">[^<]*\u5e2f\u57df', dom)  # 帯域, as the post writes it
    assert "no CJK font" not in dom and "[Japanese text" not in dom
    # the font check can fail: the same page without its font draws boxes where no CJK font is, and says so
    if no_cjk:
        page = (reports / "index.html").read_text()
        bare = tmp_path / "no_font.html"
        bare.write_text(re.sub(r"@font-face\{[^}]*\}", "", page))
        dom, _ = _load_in_chromium(bare, tmp_path, no_cjk)
        assert 'data-cjk="missing"' in dom
    # the checks themselves can fail: a page with a script error and a broken image is caught
    bad = tmp_path / "bad.html"
    bad.write_text(report._SELF_CHECK.join(["<html><body><img class='plot' src='data:image/png;base64,AAAA'>",
                                             "<script>undefined_function()</script></body></html>"]))
    dom, log = _load_in_chromium(bad, tmp_path)
    assert 'data-plots-ok="no"' in dom
    assert _console_errors(log), log[-2000:]
