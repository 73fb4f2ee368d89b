"""The site the CI templates publish (GitHub Pages, GitLab Pages: `kabe archive pull origin` then `kabe
report --site public`), built as the job builds it: a project whose CI pushed a signed archive of three
commits to a bare remote on this file system, a fresh clone pulling it with the real kabe CLI, and the
site served over HTTP as Pages serves it, loaded in a real headless Chromium.

In the browser: every link of the page is followed and resolves (HTTP 200, or an anchor whose target is
on the page); the WNS plot draws the estimate's band (its boxes have a size on screen); stage3_naive's
row says "FAIL (expected)"; the Japanese quotes are drawn by a font (the page's own: the browser is given
no CJK font) and no placeholder text is anywhere on the page."""

from __future__ import annotations

import functools
import html
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml

from kabe.base.paths import PACKAGE, ROOT
from kabe.store import store
from records_fixtures import record
from tests.page.test_report import CHROMIUM, DEJAVU, _console_errors, _load_in_chromium, latin_fonts_only

from .conftest import clone, env_without_ci, git

KABE = shutil.which("kabe", path=str(Path(sys.executable).parent))
TEMPLATES = PACKAGE / "setup" / "project_templates" / "init"

PYPROJECT = """\
[project]
name = "pages-demo"
version = "0.1.0"

[tool.kabe]
default_board = "pynq-z1"
page_sections = ["llm_accel.page:v80"]  # the V80 what-if: the page's Japanese quotes
"""
DESIGN = """\
core: kabe:design:{name}:0.1.0
verify: {{none: "the Pages test draws archived builds only"}}
ports: 2
row_bytes: 512
constraints: pynq_z1.xdc
expect_gate: {expect}
budgets: {{dsp: {{eq: 0}}, lut: {{lt: 12000}}}}
budgets_vivado: {{lut: {{lt: 20000}}}}
"""
# Per commit: stage4's open-flow estimate and its band (the newest one marginal), stage3_naive failing.
STAGE4 = ((0.412, [0.105, 0.93]), (0.233, [0.021, 0.702]), (0.768, [-2.318, 1.691]))


def _project(repo: Path, key: Path) -> None:
    (repo / "pyproject.toml").write_text(PYPROJECT)
    # The page section is the project's own code (this repository's study), committed with the project:
    # kabe imports it from the project root, so the Pages job's fresh checkout must carry it.
    shutil.copytree(ROOT / "llm_accel", repo / "llm_accel", ignore=shutil.ignore_patterns("__pycache__"))
    for name, expect in (("stage4", "pass"), ("stage3_naive", "fail")):
        d = repo / "cores" / name
        d.mkdir(parents=True)
        (d / "design.yaml").write_text(DESIGN.format(name=name, expect=expect))
        (d / f"{name}.core").write_text(f"CAPI=2:\nname: kabe:design:{name}:0.1.0\ntargets:\n  default: {{}}\n")
        (d / "pynq_z1.xdc").write_text("create_clock -period 7.000 -name clk [get_ports clk]\n")
    (repo / ".kabe").mkdir()
    (repo / ".kabe" / "allowed_signers").write_text(f'ci@kabe namespaces="kabe-archive" {key.with_suffix(".pub").read_text()}')


def _archive(reports: Path, rec: dict, rpt: str) -> None:
    d = reports / rec["commit"] / rec["design"] / rec["flow"]
    d.mkdir(parents=True)
    (d / "metrics.json").write_text(json.dumps(rec, indent=2) + "\n")
    (d / "manifest.json").write_text(json.dumps({"commit": rec["commit"], "design": rec["design"], "flow": rec["flow"]}) + "\n")
    (d / ("timing_summary.rpt" if rec["flow"] == "vivado" else "timing_estimate.rpt")).write_text(rpt)


@pytest.fixture()
def published(remote, tmp_path, monkeypatch):
    """(the clone that built the site, the site folder, the three commits)."""
    key = tmp_path / "keys" / "ci"
    key.parent.mkdir()
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "ci", "-f", str(key)], check=True)
    ci = clone(remote, tmp_path / "ci")
    _project(ci, key)
    git(ci, "add", "-A")
    shas = []
    for i, (wns, band) in enumerate(STAGE4):
        (ci / "README").write_text(f"code {i}\n")
        git(ci, "add", "-A")
        git(ci, "commit", "-qm", f"change {i}")
        sha = git(ci, "rev-parse", "HEAD")
        shas.append(sha)
        four = record(sha, lut=9000 + 100 * i, wns=wns)
        four["timing"]["band"] = {"quantiles": [0.1, 0.9], "wns_ns": band, "marginal": band[0] < 0 <= band[1]}
        _archive(ci / "reports", four, f"kabe timing estimate, commit {sha}\nWNS {wns:+.3f} ns\n")
        naive = record(sha, lut=7000, wns=-0.449, design="stage3_naive")
        _archive(ci / "reports", naive, f"kabe timing estimate, commit {sha}\nWNS -0.449 ns\n")
    _archive(ci / "reports", record(shas[-1], lut=15000, wns=0.31, flow="vivado"), "Vivado timing summary (stand-in)\n")
    git(ci, "push", "-q", "origin", "main")
    monkeypatch.setenv("KABE_SIGNING_KEY", str(key))  # CI's secret: the archive it pushes is signed
    pushed = store.push("origin", ci, ci / "reports")
    assert len(pushed.added) == 7, pushed.lines()

    pages = clone(remote, tmp_path / "pages")  # the Pages job: a fresh checkout of main, then its two commands
    env = {k: v for k, v in env_without_ci().items() if k not in ("KABE_SIGNING_KEY", "KABE_PROJECT")}
    said = []
    for cmd in pages_job_commands():  # the commands the templates' Pages jobs run, read from the templates
        proc = subprocess.run([KABE, *cmd[1:]], cwd=pages, env=env, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        said.append(proc.stdout)
    assert "7 build(s) added" in said[0] and "unverified" not in said[0], said[0]  # signed, so all trusted
    assert said[1].startswith(f"site: {pages / 'public'} (index.html and the "), said[1]
    return pages, pages / "public", shas


def pages_job_commands() -> list[list[str]]:
    """The kabe commands of the Pages job, the same in the GitLab and GitHub templates kabe init writes
    and in this repository's own CI files: the test builds the site with exactly these."""
    gitlab = yaml.safe_load((TEMPLATES / "gitlab-ci.yml").read_text())["pages"]["script"]
    commands = [shlex.split(c) for c in gitlab]
    for workflow in (TEMPLATES / "github-workflow.yml", ROOT / ".github" / "workflows" / "kabe.yml"):
        steps = yaml.safe_load(workflow.read_text())["jobs"]["pages"]["steps"]
        assert [shlex.split(s["run"]) for s in steps if s.get("run", "").startswith("kabe ")] == commands, workflow
    assert yaml.safe_load((ROOT / ".gitlab-ci.yml").read_text())["pages"]["script"] == gitlab
    assert commands == [["kabe", "archive", "pull", "origin"], ["kabe", "report", "--site", "public"]]
    return commands


def _serve(folder: Path):
    handler = functools.partial(SimpleHTTPRequestHandler, directory=str(folder))
    handler.log_message = lambda *a, **k: None
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


# Loads the published page in a frame of the same origin, waits for its self-check, then follows every
# link and reads what the browser drew; the findings are written into this page's DOM as JSON.
CRAWLER = """<!doctype html><html><body><iframe id="site" src="public/index.html" style="width:1400px;height:1000px"></iframe>
<script>
var frame = document.getElementById('site');
frame.addEventListener('load', function () {
  var d = frame.contentDocument, tries = 0;
  (function wait() {
    if (!d.body.getAttribute('data-cjk') && tries++ < 200) { setTimeout(wait, 50); return; }
    var hrefs = Array.prototype.map.call(d.querySelectorAll('a[href]'), function (a) { return a.getAttribute('href'); });
    var anchors = hrefs.filter(function (h) { return h[0] === '#'; }).map(function (h) { return [h, !!d.getElementById(h.slice(1))]; });
    var files = hrefs.filter(function (h) { return h[0] !== '#'; });
    var band = Array.prototype.map.call(d.querySelectorAll('#stage4-band-wns_ns-open path'), function (p) {
      var r = p.getBoundingClientRect(); return [r.width, r.height]; });
    var naive = d.querySelector('tr[data-design="stage3_naive"][data-flow="open"]');
    Promise.all(files.map(function (h) {
      return fetch(new URL(h, d.baseURI)).then(function (r) { return [h, r.status]; }, function () { return [h, 0]; });
    })).then(function (statuses) {
      var out = document.createElement('pre');
      out.id = 'result';
      var closed = d.body.innerText;  // as first shown; then every <details> opened, as a click opens one
      Array.prototype.forEach.call(d.querySelectorAll('details'), function (x) { x.open = true; });
      out.textContent = JSON.stringify({files: statuses, anchors: anchors, band: band, naive: naive && naive.innerText,
        plotsOk: d.body.getAttribute('data-plots-ok'), cjk: d.body.getAttribute('data-cjk'), text: d.body.innerText,
        closed: closed});
      document.body.appendChild(out);
    });
  })();
});
</script></body></html>
"""


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (.ci/run installs it)")
@pytest.mark.skipif(not Path(DEJAVU).is_dir(), reason="no DejaVu fonts to give Chromium a font set without CJK")
def test_the_published_site_loads_in_chromium_with_every_link_resolving(published, tmp_path):
    pages, site, shas = published
    page = (site / "index.html").read_text()
    # the site is the page and what it links to, nothing else from reports/
    linked = {html.unescape(h) for h in re.findall(r'href="([^"#][^"]*)"', page)}
    on_disk = {p.relative_to(site).as_posix() for p in site.rglob("*") if p.is_file()}
    assert on_disk == {"index.html", ".kabe-site"} | linked
    assert len(linked) >= 8 and all(s in page for s in (shas[0][:12], shas[1][:12], shas[2][:12]))

    (pages / "crawler.html").write_text(CRAWLER)  # beside the site, not in it
    server = _serve(pages)
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/crawler.html"
        dom, log = _load_in_chromium(_Url(url), tmp_path, latin_fonts_only(tmp_path))
    finally:
        server.shutdown()
    found = re.search(r'<pre id="result">(.*?)</pre>', dom, re.S)
    assert found, log[-3000:]
    seen = json.loads(html.unescape(found.group(1)))
    assert _console_errors(log) == []
    # every link resolves
    assert {h for h, _ in seen["files"]} == linked
    assert [f for f in seen["files"] if f[1] != 200] == []
    assert all(ok for _, ok in seen["anchors"]), seen["anchors"]
    # the plots drew; the band is drawn behind each of stage4's three open-flow points, with a size on screen
    assert seen["plotsOk"] == "yes"
    assert len(seen["band"]) == 3 and all(w > 2 and h > 2 for w, h in seen["band"]), seen["band"]
    assert 'id="stage4-band-wns_ns-vivado"' not in page  # sign-off timing has no band
    # the negative example's failure reads as expected; the marginal estimate says what to do, one click away
    assert "FAIL (expected)" in seen["naive"] and "expect_gate: fail" in seen["naive"]
    assert "marginal PASS" in seen["closed"] and "gain 2.318 ns of slack" not in seen["closed"]
    assert ("marginal PASS: the estimate +0.768 ns passes, but its 80 % band (-2.318 .. +1.691 ns) crosses 0 ns"
            in seen["text"]) and "gain 2.318 ns of slack to leave the band" in seen["text"]
    # no placeholder anywhere; the Japanese quotes drawn by the page's own font
    assert seen["cjk"] == "font"
    assert "[Japanese text" not in seen["text"] and "no CJK font" not in seen["text"]
    assert re.search(r"[\u3040-\u30ff\u4e00-\u9fff]", seen["text"])  # the quotes are there, as text


class _Url:
    """What _load_in_chromium takes (a path's as_uri()) for a page served over HTTP."""

    def __init__(self, url: str):
        self.url = url

    def as_uri(self) -> str:
        return self.url


def test_the_site_publishes_no_file_of_an_unverified_unit_and_no_html_or_svg_of_any_unit(tmp_path):
    """The Pages XSS unit (issue 36): a pulled unit nobody trusted carries an .html and an .svg with a
    script. On the published site it appears by name, without a link, and none of its files is there;
    a trusted unit's .html/.svg (no flow writes one) is not published either, only its reports."""
    from kabe.page import site as site_mod
    from records_fixtures import make_cores, two_commit_repo, write_archive

    repo, shas = two_commit_repo(tmp_path)
    cores, reports = make_cores(tmp_path), repo / "reports"
    xss = '<script>document.title="pwned"</script>'
    trusted = write_archive(reports, record(shas[0], lut=9000, wns=0.25)).parent  # built here: trusted
    (trusted / "timing_estimate.rpt").write_text("WNS +0.250 ns\n")
    (trusted / "notes.html").write_text(xss)
    (trusted / "plot.svg").write_text(f'<svg xmlns="http://www.w3.org/2000/svg">{xss}</svg>')
    unit = reports / store.UNVERIFIED / shas[1] / "stage4" / "open"
    unit.mkdir(parents=True)
    (unit / "metrics.json").write_text(json.dumps(record(shas[1], lut=9300, wns=0.3)))
    (unit / "report.html").write_text(xss)
    (unit / "evil.svg").write_text(f'<svg xmlns="http://www.w3.org/2000/svg">{xss}</svg>')
    (unit / "yosys.log").write_text("an unverified log\n")

    built = site_mod.build_site(tmp_path / "public", reports, repo, cores)
    files = {p.relative_to(built.folder).as_posix() for p in built.folder.rglob("*") if p.is_file()}
    assert not [f for f in files if f.startswith(".unverified") or shas[1] in f], files
    assert not [f for f in files if f.endswith((".html", ".svg")) and f != "index.html"], files
    assert f"{shas[0]}/stage4/open/timing_estimate.rpt" in files and f"{shas[0]}/stage4/open/metrics.json" in files
    page = (built.folder / "index.html").read_text()
    row = re.search(rf'<tr class="unverified" data-unit="{shas[1]}/stage4/open">(.*?)</tr>', page, re.S).group(1)
    assert "href" not in row and "report.html" in row and "evil.svg" in row  # by name, no link
    assert "pwned" not in page and "notes.html" in page and 'href="' + f"{shas[0]}/stage4/open/notes.html" not in page
    linked = {html.unescape(h) for h in re.findall(r'href="([^"#][^"]*)"', page)}
    assert linked and linked <= files  # every link the site keeps resolves in it


def test_published_takes_only_trusted_kinds_kabe_writes():
    from kabe.page.site import published

    assert published("abc/stage4/open/timing_estimate.rpt") and published("abc/stage4/sim/result.json")
    for bad in (".unverified/abc/stage4/open/metrics.json", "abc/stage4/open/x.html", "abc/stage4/open/x.SVG",
                "abc/stage4/open/results.xml", "abc/.stage/open/x.rpt", "abc/stage4/open/noext"):
        assert not published(bad), bad
