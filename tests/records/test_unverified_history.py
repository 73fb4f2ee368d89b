"""Units `kabe archive pull` kept apart (reports/.unverified/) are shown as unverified history,
labelled with why they are not trusted, on the page and in `kabe diff`, and never mixed with the
trusted builds. Real git (a bare remote, two clones), real ssh-keygen keys, a real pull.

The clone `dev` builds both commits and pushes them: commit 0's build is also this clone's own
(built here), commit 1's open build is pushed unsigned and its vivado build signed by a key that is
not in the puller's allowed signers. The puller keeps both of commit 1's apart."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from kabe.records import diff, history
from kabe.page import report
from kabe.store import store

from records_fixtures import make_cores, record, two_commit_repo, write_archive

ID = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@kabe", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@kabe"}


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True,
                          env={**os.environ, **ID}).stdout.strip()


def _key(where: Path, name: str) -> Path:
    key = where / name
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(key)], check=True)
    return key


@pytest.fixture()
def pulled(tmp_path, monkeypatch):
    """(puller checkout, its reports/, cores, [sha0, sha1], the pull's report)."""
    monkeypatch.delenv("KABE_SIGNING_KEY", raising=False)
    dev, shas = two_commit_repo(tmp_path)
    remote = tmp_path / "remote.git"
    _git(tmp_path, "init", "-q", "--bare", str(remote))
    _git(dev, "remote", "add", "origin", str(remote))
    _git(dev, "push", "-q", "origin", "HEAD:refs/heads/main")
    cores = make_cores(tmp_path)
    ci, other = _key(tmp_path, "ci"), _key(tmp_path, "other")
    dev_reports = dev / "reports"
    write_archive(dev_reports, record(shas[1], lut=9700, wns=0.4, flow="vivado"))
    monkeypatch.setenv("KABE_SIGNING_KEY", str(other))  # signed, but by a key the puller does not allow
    assert store.push("origin", dev, dev_reports).added == [f"{shas[1]}/stage4/vivado"]
    monkeypatch.delenv("KABE_SIGNING_KEY")
    write_archive(dev_reports, record(shas[1], lut=9300, wns=0.25))  # open, pushed unsigned
    assert store.push("origin", dev, dev_reports).added == [f"{shas[1]}/stage4/open"]

    puller = tmp_path / "puller"
    _git(tmp_path, "clone", "-q", "-b", "main", str(remote), str(puller))
    (puller / ".kabe").mkdir()
    (puller / ".kabe" / "allowed_signers").write_text(f'ci@kabe namespaces="kabe-archive" {ci.with_suffix(".pub").read_text()}')
    reports = puller / "reports"
    write_archive(reports, record(shas[0], lut=9000, wns=0.25))  # built here
    pull = store.pull("origin", puller, reports)
    assert not pull.added and sorted(u for u, _ in pull.unverified) == [f"{shas[1]}/stage4/open",
                                                                          f"{shas[1]}/stage4/vivado"]
    return puller, reports, cores, shas, pull


def test_the_kept_apart_units_are_unverified_history_with_the_pulls_reasons(pulled):
    puller, reports, cores, shas, pull = pulled
    assert [e.commit for e in history.load(reports, puller, cores)] == [shas[0]]  # never a trusted entry
    apart = history.scan_unverified(reports, puller, cores)
    assert {u.unit: u.reason for u in apart} == dict(pull.unverified)  # the same words as the pull said
    by_kind = {u.kind: u for u in apart}
    assert by_kind["open"].reason == "unsigned"
    assert by_kind["vivado"].reason.startswith("signed by a key not in")
    assert by_kind["open"].entry.value("lut") == 9300 and by_kind["open"].entry.passed  # judged on its numbers


def test_a_unit_that_verifies_after_its_pull_is_still_not_trusted_until_pulled_again(pulled, tmp_path):
    """The puller trusts dev's key afterwards: the unit is still apart (only a pull moves it) and says
    what to do; the pull then takes it into reports/."""
    puller, reports, cores, shas, _ = pulled
    unit = f"{shas[1]}/stage4/vivado"
    allowed = puller / ".kabe" / "allowed_signers"
    allowed.write_text(allowed.read_text() + f'dev@kabe namespaces="kabe-archive" {(tmp_path / "other.pub").read_text()}')
    (u,) = [u for u in history.scan_unverified(reports, puller, cores) if u.unit == unit]
    assert u.reason.startswith("it verifies now, but was pulled before it did: run `kabe archive pull` again")
    assert [e.commit for e in history.load(reports, puller, cores)] == [shas[0]]
    assert store.pull("origin", puller, reports).added == [unit]
    assert [(e.commit, e.flow) for e in history.load(reports, puller, cores)] == [(shas[0], "open"), (shas[1], "vivado")]


def test_the_page_shows_them_apart_labelled_and_greyed_never_in_the_trusted_tables(pulled):
    puller, reports, cores, shas, _ = pulled
    page = report.build_report(reports, puller, cores).read_text()
    section = page[page.index('<h2 id="unverified">'):]
    assert section.startswith('<h2 id="unverified">Unverified history: pulled, not trusted (2)</h2>')
    row = re.search(rf'<tr class="unverified" data-unit="{shas[1]}/stage4/open">(.*?)</tr>', section).group(1)
    assert '<td class="unverified-why">unverified: unsigned</td>' in row and "<td>9300</td>" in row
    assert '<code class="raw">metrics.json</code>' in row and "href" not in row  # named, never linked
    viv = re.search(rf'<tr class="unverified" data-unit="{shas[1]}/stage4/vivado">(.*?)</tr>', section).group(1)
    assert '<td class="unverified-why">unverified: signed by a key not in ' in viv
    assert "2 pulled unit(s) that did not verify are kept apart" in page
    trusted = page[page.index("<h2>Latest build per design</h2>"):page.index("<h2>Latest simulation")]
    assert shas[0][:12] in trusted and shas[1][:12] not in trusted  # the unsigned 9,300 is not "latest"
    commits = page[page.index("<h3>Archived commits (git order)</h3>"):page.index('<h2 id="unverified">')]
    assert shas[1][:12] not in commits
    # the plot: grey hollow diamonds of their own, beside (not in) the open flow's line
    assert 'id="stage4-unverified-lut"' in page and 'id="stage4-series-lut-open"' in page
    assert "unverified: pulled, not trusted" in page  # ... named in the legend (text as paths: the gid says it)


def test_the_page_without_unverified_units_has_no_such_section(pulled):
    puller, reports, cores, shas, _ = pulled
    store_dir = reports / store.UNVERIFIED
    for p in sorted(store_dir.rglob("*"), reverse=True):
        p.unlink() if p.is_file() else p.rmdir()
    page = report.build_report(reports, puller, cores).read_text()
    assert 'id="unverified"' not in page and 'stage4-unverified-' not in page and "kept apart" not in page


def test_diff_shows_an_unverified_side_only_labelled(pulled):
    puller, reports, cores, shas, _ = pulled
    md = diff.render(shas[0], shas[1], reports, puller, cores)
    assert "| stage4 | open | LUT | 9,000 | 9,300 (unverified) | +300 (+3.3%) |  |" in md
    assert "| stage4 | open | gate | pass | pass (unverified: unsigned) |  |  |" in md
    assert "| stage4 | vivado | LUT | - | 9,700 (unverified) | - |  |" in md
    assert re.search(r"\| stage4 \| vivado \| gate \| - \| pass \(unverified: signed by a key not in .*\) \|  \|  \|", md)
    assert f"- `{shas[1]}/stage4/open`: unverified: unsigned" in md
    # every cell of the unverified side says so: no bare number of it
    for line in md.splitlines():
        if line.startswith("| stage4 |") and "| gate |" not in line:
            after = line.split(" | ")[4]
            assert after == "-" or after.endswith("(unverified)"), line


def test_diff_of_a_head_with_only_unverified_builds_says_so_and_compares_with_a_trusted_base(pulled):
    puller, reports, cores, shas, _ = pulled
    md = diff.render(None, None, reports, puller, cores)  # the puller's HEAD is commit 1
    assert f"After: {shas[1][:12]} (HEAD, which has only unverified builds)." in md
    assert "| stage4 | open | LUT | 9,000 | 9,300 (unverified) | +300 (+3.3%) |  |" in md
    assert f"stage4 open {shas[0][:12]} (1 commit before)" in md


def test_diff_never_takes_an_unverified_build_as_the_default_base(pulled):
    """HEAD (commit 1) has a trusted open build; its parent only an unverified vivado one and a
    trusted open one: the default A is the trusted build, and the vivado row has no base."""
    puller, reports, cores, shas, _ = pulled
    write_archive(reports, record(shas[1], lut=9100, wns=0.3))  # HEAD's own open build, built here
    _git(puller, "checkout", "-q", shas[1])
    md = diff.render(None, None, reports, puller, cores)
    assert "| stage4 | open | LUT | 9,000 | 9,100 | +100 (+1.1%) |  |" in md  # the trusted one wins over 9,300
    assert "9,300" not in md
    assert "| stage4 | vivado | LUT | - | 9,700 (unverified) | - |  |" in md
    assert "No clean archive on any ancestor: stage4 vivado" in md


def test_diff_of_a_commit_with_only_unverified_builds_as_a(pulled):
    puller, reports, cores, shas, _ = pulled
    write_archive(reports, record(shas[1], lut=9100, wns=0.3))
    md = diff.render(shas[1], shas[0], reports, puller, cores)  # A: the unverified side of the open flow? no:
    assert "| stage4 | open | LUT | 9,100 | 9,000 | -100 (-1.1%) |  |" in md  # a trusted build is preferred
    write_archive(reports, record(shas[0], lut=9000, wns=0.25, flow="vivado"))  # commit 0's vivado, built here
    md = diff.render(shas[1], shas[0], reports, puller, cores)
    assert "| stage4 | vivado | LUT | 9,700 (unverified) | 9,000 | -700 (-7.2%) |  |" in md
    assert re.search(r"\| stage4 \| vivado \| gate \| pass \(unverified: signed by a key not in .*\) \| pass \|", md)
    assert f"- `{shas[1]}/stage4/vivado`: unverified: signed by a key not in" in md


def test_the_unverified_history_in_headless_chromium(pulled, tmp_path):
    """The page as a browser draws it: the unverified rows are there, labelled, and the grey diamonds
    are drawn in the LUT panel (paths with coordinates), beside the trusted series."""
    from tests.page.test_report import CHROMIUM, _console_errors, _load_in_chromium

    if CHROMIUM is None:
        pytest.skip("Debian's chromium is not installed (.ci/run installs it)")
    puller, reports, cores, shas, _ = pulled
    dom, log = _load_in_chromium(report.build_report(reports, puller, cores), tmp_path)
    assert 'data-plots-ok="yes"' in dom and _console_errors(log) == [], log[-2000:]
    rows = re.findall(r'<tr class="unverified" data-unit="([^"]+)">.*?<td class="unverified-why">([^<]*)</td>', dom, re.S)
    assert [(u, why.split(" /")[0]) for u, why in rows] == [
        (f"{shas[1]}/stage4/open", "unverified: unsigned"), (f"{shas[1]}/stage4/vivado", "unverified: signed by a key not in")]
    lut = dom[dom.index('id="stage4-panel-lut"'):dom.index('id="stage4-panel-ff"')]
    dots = re.search(r'<g id="stage4-unverified-lut">(.*?)</g>', lut, re.S)
    drawn = re.findall(r'<path d="M [-\d.]+ [-\d.]+\s+L [^"]*"[^>]*style="fill: none; stroke: #808080', dots.group(1)) \
        if dots else []
    assert len(drawn) == 2, lut[:3000]  # two hollow grey diamonds: the unsigned open and the badly signed vivado
