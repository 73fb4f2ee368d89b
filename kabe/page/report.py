"""`doit report`: reports/index.html, one self-contained page (plots inlined, no network) with every
design's metrics over commits, the latest build and simulation of each design, the bandwidth wall,
the token budget and the V80 what-if.

Files: reports/index.html (links to each archive's raw reports, relative to reports/) and
reports/site/ (the page's figures as files: history_<design>.svg, wall.png, token_budget.png).
Figures are drawn in a temporary folder under reports/ that is removed when the page is written.
"""

from __future__ import annotations

import base64
import datetime as dt
import html
import re
import tempfile
from pathlib import Path
from typing import Iterable

from kabe.project import config, designs
from kabe.base import rtl_path
from kabe.base.paths import CORES, REPORTS, ROOT
from kabe.records import could_not_run, history, lineage, sim_results, verdict_kind
from kabe.page import page_hooks
from kabe.base import git
from kabe.store.archive import write_atomic, write_text_atomic
from kabe.records.band_advice import filled, fill_note, marginal_advice
from kabe.records.load import Invalid
from kabe.page.report_plot import inline_svg, plot_design

# CJK text (the V80 what-if quotes its Japanese source) is wrapped in <span class="cjk" lang="ja">, a
# whole quotation at a time, and drawn as HTML text in a font the page carries (CJK_FONT: the glyphs of
# kabe's Japanese characters, cut from Droid Sans Fallback by scripts/make_cjk_font.py), so it reads
# on a machine with no CJK font at all: never glyph boxes, never a placeholder.
_CJK_CHARS = "\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef"
_CJK_QUOTE = re.compile(f"(['\"])([^'\"]*[{_CJK_CHARS}][^'\"]*)\\1")
_CJK_RUN = re.compile(f"[{_CJK_CHARS}]+")
CJK_FONT = Path(__file__).with_name("fonts") / "kabe-cjk-quotes.ttf"
CJK_FONT_FAMILY = "kabe CJK quotes"


def _img(path: Path, alt: str) -> str:
    data = base64.b64encode(path.read_bytes()).decode()
    return f'<img class="plot" alt="{html.escape(alt)}" src="data:image/png;base64,{data}">'


def _text(s: str) -> str:
    """Escaped text with CJK marked for the page's font check: a quotation as one unit, else each run."""
    def runs(t: str) -> str:
        out, pos = [], 0
        for m in _CJK_RUN.finditer(t):
            out += [html.escape(t[pos:m.start()]), f'<span class="cjk" lang="ja">{html.escape(m.group())}</span>']
            pos = m.end()
        return "".join(out) + html.escape(t[pos:])

    out, pos = [], 0
    for m in _CJK_QUOTE.finditer(s):
        q = html.escape(m.group(1))
        out += [runs(s[pos:m.start()]), f'{q}<span class="cjk" lang="ja">{html.escape(m.group(2))}</span>{q}']
        pos = m.end()
    return "".join(out) + runs(s[pos:])


def markdown_table_to_html(md: str) -> str:
    """The models render pipe tables for terminals and PR comments; the page shows the same tables."""
    out, rows = [], []

    def flush():
        if rows:
            head, *body = rows
            out.append("<table><tr>" + "".join(f"<th>{_text(c)}</th>" for c in head) + "</tr>"
                       + "".join("<tr>" + "".join(f"<td>{_text(c)}</td>" for c in r) + "</tr>" for r in body)
                       + "</table>")
            rows.clear()

    for line in md.splitlines():
        s = line.strip()
        if s.startswith("|"):
            cells = [c.strip() for c in s.strip("|").split("|")]
            if not all(set(c) <= set("-: ") for c in cells):
                rows.append(cells)
        else:
            flush()
            if s:
                out.append(f"<p>{_text(s.lstrip('#').strip())}</p>")
    flush()
    return "\n".join(out)


def _commit_cell(commit: str, head: str | None) -> str:
    short = commit[:12] + ("-dirty" if commit.endswith("-dirty") else "")
    tag = " (HEAD)" if head and commit == head else " (HEAD + uncommitted changes)" if head and commit == f"{head}-dirty" else ""
    return f"<code>{html.escape(short)}</code>{tag}"


def _raw_links(e: history.Entry, reports_root: Path) -> str:
    folder = Path(reports_root) / e.commit / e.design / e.flow
    names = sorted(p.name for p in folder.iterdir() if p.is_file()) if folder.is_dir() else []
    return " ".join(f'<a class="raw" href="{html.escape(f"{e.commit}/{e.design}/{e.flow}/{n}")}">{html.escape(n)}</a>'
                    for n in names)


def _gate_cells(e: history.Entry, expected: str = "pass") -> str:
    """The verdict's kind as the console says it (kabe.records.verdict_kind) and its reason beside it: pass;
    FAIL with the reason (every reason on hover); a negative example's failing gate (design.yaml expect_gate:
    fail) "FAIL (expected)", its passing gate the surprise; "not estimated", neither pass nor fail; a pass with
    no simulation verdict behind it "pass (unverified)", never a bare pass."""
    kind = verdict_kind.kind(e, expected)  # the verdict recomputed from the numbers, never the record's own
    failures = list(e.verdict.failures)
    if kind == verdict_kind.NOT_ESTIMATED:  # no timing number on this board: neither verdict
        return (f'<td class="notest">not estimated</td><td class="why">timing not '
                f'estimated: {html.escape(e.verdict.not_estimated or "")}; neither pass nor fail (a routed Vivado '
                f'build gives the sign-off)</td>')
    if expected == "fail" and kind == verdict_kind.FAIL:
        return ('<td class="fail">PASS (expected FAIL)</td><td class="why">a negative example '
                "(expect_gate: fail) passed its gate: the gate no longer catches its known problem</td>")
    if kind == verdict_kind.EXPECTED_FAIL:
        first = failures[0] if failures else "the gate failed (no reason recorded)"
        return (f'<td class="xfail">FAIL (expected)</td><td class="why" '
                f'title="{html.escape(chr(10).join(failures))}">a negative example (design.yaml expect_gate: fail): '
                f"{html.escape(first)}</td>")
    if kind == verdict_kind.UNVERIFIED:
        return (f'<td class="pass">pass (unverified)</td><td class="why">unverified: '
                f'{html.escape(e.verdict.unverified)}</td>')
    if kind == verdict_kind.PASS:
        return '<td class="pass">pass</td><td></td>'
    failures = failures or ["the gate failed (no reason recorded)"]
    more = f" (and {len(failures) - 1} more)" if len(failures) > 1 else ""
    return (f'<td class="fail">FAIL</td><td class="why" title="{html.escape(chr(10).join(failures))}">'
            f'{html.escape(failures[0])}{more}</td>')


def _timing_kind(timing: dict, design: str | None = None) -> str:
    """sign-off, or pre-route estimate with its band; what a marginal band or the high-fanout fill means is
    one click away (<details>), not a sentence repeated in every row. The sentences are the ones the console
    and JUnit print (kabe.records.band_advice)."""
    if not timing.get("estimated"):
        return "sign-off"
    band = timing.get("band") or {}
    lo_hi = band.get("wns_ns") or []
    text = "pre-route estimate"
    if len(lo_hi) == 2 and all(isinstance(x, (int, float)) for x in lo_hi):
        text += f" (band {lo_hi[0]:+.3f} .. {lo_hi[1]:+.3f} ns)"
    advice = marginal_advice(timing, design)
    if advice:  # the short word ("marginal PASS") shown, the whole line behind it
        word = advice.split(":", 1)[0] if ":" in advice[:20] else "marginal"
        text += (f'<details class="marginal"><summary>{html.escape(word)}</summary>'
                 f'<span class="marginal">{html.escape(advice)}</span></details>')
    note = fill_note(timing)
    if note:
        text += (f'<details class="fill"><summary>fill set the WNS</summary>'
                 f'<span class="fill-note">{html.escape(note)}</span></details>')
    return text


def _wns_cell(timing: dict) -> str:
    """The WNS; when the high-fanout fill set it, the WNS without the fill beside it and a short "fill"
    marker (the sentence is in the timing cell's details)."""
    wns = timing.get("wns_ns")
    if wns is None:
        return "-"
    uncapped = filled(timing)
    if uncapped is None:
        return f"{wns:+.3f}"
    return (f'{wns:+.3f} <span class="uncapped" title="WNS without the high-fanout fill (what regressions '
            f'compare)">(uncapped {uncapped:+.3f})</span> <span class="fill">fill</span>')


def latest_builds(entries: list[history.Entry], head: str | None, on_branch: set[str] | None
                  ) -> tuple[dict[tuple[str, str], history.Entry], dict[tuple[str, str], history.Entry]]:
    """(latest, working tree): per design and flow, the newest CLEAN build of a commit on the checked-out
    branch (on_branch: `git rev-list HEAD`; None: no git, every commit counts), and apart from it the builds
    of uncommitted changes: HEAD's dirty tree, or the newest dirty build of a design with no clean one. A
    dirty build is never "latest": after reverting a broken edit and rebuilding clean, the clean build is."""
    latest: dict[tuple[str, str], history.Entry] = {}
    dirty: dict[tuple[str, str], history.Entry] = {}
    for e in entries:  # git order: the last one wins
        key = (e.design, e.flow)
        if e.commit.endswith("-dirty"):
            dirty[key] = e
        elif on_branch is None or e.commit in on_branch:
            latest[key] = e
    worktree = {k: e for k, e in dirty.items() if (head and e.sha == head) or k not in latest}
    return latest, worktree


def _build_row(e: history.Entry, head: str | None, reports_root: Path, expected: str, attr: str) -> str:
    cells = [html.escape(e.design), html.escape(e.flow), _commit_cell(e.commit, head)]
    cells += [html.escape(str(e.value(k))) for k in ("lut", "ff", "dsp", "bram36_equiv")]
    cells += [_wns_cell(e.record["timing"]), _timing_kind(e.record["timing"], e.design)]
    return (f'<tr {attr}="{html.escape(e.design)}" data-flow="{html.escape(e.flow)}">'
            + "".join(f"<td>{c}</td>" for c in cells) + _gate_cells(e, expected)
            + f"<td>{_raw_links(e, reports_root)}</td></tr>")


_BUILD_HEAD = ("<tr><th>design</th><th>flow</th><th>commit</th><th>LUT</th><th>FF</th><th>DSP</th><th>BRAM36</th>"
               "<th>WNS ns</th><th>timing</th><th>gate</th><th>why it failed</th><th>raw reports</th></tr>")


def _latest_table(entries: list[history.Entry], head: str | None, reports_root: Path,
                  expected: dict[str, str] | None = None, on_branch: set[str] | None = None,
                  branch: str | None = None) -> str:
    expected = expected or {}
    latest, worktree = latest_builds(entries, head, on_branch)
    commits = {e.commit for e in latest.values()}
    where = f" on {html.escape(branch)}" if branch else ""
    if not latest:
        note = f'<p class="note">No clean build of a commit{where} yet: only uncommitted changes were built (below).</p>'
    elif len(commits) > 1:
        note = (f'<p class="note">Each row is the newest clean build{where} of that design and flow, so rows come '
                f'from {len(commits)} different commits: read the commit column.</p>')
    else:
        note = f'<p class="note">Every row comes from commit {_commit_cell(next(iter(commits)), head)}{where}.</p>'
    rows = "".join(_build_row(e, head, reports_root, expected.get(d, "pass"), "data-design")
                   for (d, _f), e in sorted(latest.items()))
    table = note + ("<table>" + _BUILD_HEAD + rows + "</table>" if latest else "")
    if worktree:
        table += ('<h3 id="worktree">The working tree\'s builds (uncommitted changes: not the latest build)</h3>'
                  '<p class="note">Built from a tree with uncommitted changes (commit <code>&lt;sha&gt;-dirty</code>): '
                  'what the edit in progress gives, never a commit\'s verdict. Commit and rebuild, or revert and '
                  'rebuild, for a clean build.</p><table class="worktree">' + _BUILD_HEAD
                  + "".join(_build_row(e, head, reports_root, expected.get(d, "pass"), "data-worktree-design")
                            for (d, _f), e in sorted(worktree.items())) + "</table>")
    return table + _critical_paths(latest)


def _critical_paths(latest: dict[tuple[str, str], history.Entry]) -> str:
    """Each latest build's critical path in RTL terms (kabe.base.rtl_path): registers by RTL name and
    file:line, the logic levels and cell types between; the raw netlist names are in its timing report."""
    items = []
    for (design, flow), e in sorted(latest.items()):
        line = rtl_path.line(e.record["timing"].get("critical_path"))
        if line:
            items.append(f'<li data-design="{html.escape(design)}" data-flow="{html.escape(flow)}">'
                         f"<b>{html.escape(design)}</b> ({html.escape(flow)}): {html.escape(line)}</li>")
    return ('<p class="note">Critical paths (RTL names and source lines; the raw netlist names are in each '
            f'build\'s timing report):</p><ul class="critical-paths">{"".join(items)}</ul>' if items else "")


def _beats_per_cycle(r) -> str:
    """A cycle-accurate run's beats per cycle; an HLS design's C-simulation has no cycles, a cocotb run
    counts tests, not beats."""
    if r.get("simulator") == "cocotb":
        return "-"
    if r.get("simulator") == "csim":
        return "- (C-simulation: untimed)"
    bpc = r.get("beats_per_cycle")
    return f"{bpc:.3f}" if isinstance(bpc, (int, float)) and not isinstance(bpc, bool) else "-"


def _count(x) -> str:
    return f"{x:,}" if isinstance(x, int) and not isinstance(x, bool) else html.escape(str(x))


def _checked(r) -> str:
    """What the run checked: a cocotb run its tests (passed, failed, skipped), any other run its rows."""
    if r.get("simulator") == "cocotb":
        tests, failed, skipped = r.get("tests", r["rows"]), r.get("failed", 0), r.get("skipped", 0)
        counts = [tests - failed - skipped, failed, skipped] if all(
            isinstance(n, int) and not isinstance(n, bool) for n in (tests, failed, skipped)) else None
        if counts is None:
            return f"{_count(tests)} cocotb test(s)"
        return (f"{counts[0]:,} of {tests:,} cocotb test(s) passed, {failed:,} failed"
                + (f", {skipped:,} skipped" if skipped else ""))
    return _count(r["rows"])


def _latest_sims(entries, on_branch: set[str] | None):
    """Per design, the newest simulation of a clean commit on the checked-out branch, as for builds; a design
    simulated only with uncommitted changes shows that run (its commit cell says -dirty)."""
    clean, dirty = {}, {}
    for e in entries:  # git order: the last one wins
        if e.commit.endswith("-dirty"):
            dirty[e.design] = e
        elif on_branch is None or e.commit in on_branch:
            clean[e.design] = e
    return dict(sorted({**dirty, **clean}.items()))


def _sim_table(reports_root: Path, root: Path, head: str | None, on_branch: set[str] | None = None) -> str:
    entries, unreadable = sim_results.load(reports_root, root)
    latest = _latest_sims(entries, on_branch)
    skipped = (f'<p class="note">{len(unreadable)} result.json file(s) could not be read and are left out: '
               f'{html.escape(", ".join(str(p) for p in unreadable))}</p>') if unreadable else ""
    if not latest:
        return "<p>No simulation archived yet: <code>doit sim:&lt;design&gt;</code> writes one.</p>" + skipped
    rows = []
    for design, e in latest.items():
        r = e.result
        verdict = "pass" if r["passed"] else "FAIL"
        why = "; ".join(map(str, r["problems"])) if r["problems"] else ""
        cocotb = r.get("simulator") == "cocotb"
        link = f'<a class="raw" href="{html.escape(f"{e.commit}/{design}/sim/result.json")}">result.json</a>'
        rows.append(f"<tr data-sim=\"{html.escape(design)}\"><td>{html.escape(design)}</td><td>{_commit_cell(e.commit, head)}</td>"
                    f"<td>{html.escape(str(r.get('simulator') or '-'))}</td>"
                    f"<td>{_checked(r)}</td><td>{html.escape(str(r['seed']))}</td>"
                    f"<td>{'-' if cocotb else _count(r['mismatches'])}</td>"
                    f"<td>{_beats_per_cycle(r)}</td><td class=\"{verdict.lower()}\">{verdict}</td>"
                    f"<td>{html.escape(why)}</td><td>{link}</td></tr>")
    return ("<table><tr><th>design</th><th>commit</th><th>simulator</th><th>checked (rows, or tests)</th><th>seed</th>"
            "<th>mismatches</th><th>beats/clk</th><th>verdict</th><th>problems</th><th>raw</th></tr>" + "".join(rows)
            + "</table>" + skipped)


_STYLE = """body{font-family:sans-serif;max-width:1300px;margin:1em auto;color:#222}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:2px 8px;font-size:13px}
th{background:#f0f0f0}img.plot,svg.plot{max-width:100%;height:auto;display:block;margin:.5em 0}
.note{color:#666;font-size:13px}td.fail{color:#b00;font-weight:bold}td.xfail{color:#a60;font-weight:bold}td.notest{color:#666;font-weight:bold}td.why{max-width:40em}a.raw{margin-right:.5em}
details.marginal,details.fill{font-size:12px}details summary{cursor:pointer;color:#a60}
span.fill{color:#a60;font-size:11px;border:1px solid #a60;border-radius:3px;padding:0 2px}span.uncapped{color:#666}
tr.unverified td{color:#888;background:#f7f7f7;font-style:italic}td.unverified-why{max-width:40em}
.cjk{font-family:"Noto Sans CJK JP","Noto Sans JP","Source Han Sans","Hiragino Sans","Yu Gothic",Meiryo,"IPAGothic",
"kabe CJK quotes",sans-serif}"""


def font_face(page_body: str) -> str:
    """The @font-face rule of the page's own CJK font, inlined, when the page has CJK text; else ""."""
    if 'class="cjk"' not in page_body or not CJK_FONT.is_file():
        return ""
    data = base64.b64encode(CJK_FONT.read_bytes()).decode()
    return f'@font-face{{font-family:"{CJK_FONT_FAMILY}";src:url(data:font/ttf;base64,{data}) format("truetype")}}'


# The page checks itself: every plot must have drawn, and its CJK text must be drawn by a font (the
# page's own, once loaded), never as boxes. The browser test reads the result from the DOM.
_SELF_CHECK = """<script>
function kabeInk(text, family) {
  var canvas = document.createElement('canvas');
  canvas.width = 200; canvas.height = 48;
  var c = canvas.getContext('2d');
  c.font = '32px ' + family;
  c.fillText(text, 4, 36);
  return Array.prototype.join.call(c.getImageData(0, 0, 200, 48).data, ',');
}
function kabeCjkDrawable(sample) {
  // With no font for them, CJK characters are drawn as the same "missing glyph" boxes as private-use
  // ones: the pixels tell a drawn quote from boxes, whatever the boxes' width.
  var family = getComputedStyle(document.querySelector('.cjk')).fontFamily;
  return kabeInk(sample, family) !== kabeInk(sample.replace(/./g, '\\ue000'), family);
}
window.addEventListener('load', function () {
  var plots = Array.prototype.slice.call(document.querySelectorAll('img.plot, svg.plot'));
  var ok = plots.length > 0 && plots.every(function (p) {
    return p.tagName.toLowerCase() === 'img' ? (p.complete && p.naturalWidth > 0) : p.getBoundingClientRect().width > 0;
  });
  document.body.setAttribute('data-plots', plots.length);
  document.body.setAttribute('data-plots-ok', ok ? 'yes' : 'no');
  var cjk = Array.prototype.slice.call(document.querySelectorAll('.cjk'));
  if (cjk.length === 0) { document.body.setAttribute('data-cjk', 'none'); return; }
  var text = cjk.map(function (s) { return s.textContent; }).join('').replace(/[\\s\\x00-\\x7f]/g, '');
  var sample = text.slice(0, 4);
  document.fonts.load('32px "' + '""" + CJK_FONT_FAMILY + """' + '"', text).then(function () { return document.fonts.ready; })
    .then(function () { document.body.setAttribute('data-cjk', kabeCjkDrawable(sample) ? 'font' : 'missing'); });
});
</script>"""


def ref_label(ref: str | None, branch: str | None) -> str:
    """The base branch as a reader knows it: origin/main for the remote's copy, main for a local branch."""
    if not ref:
        return branch or "the base branch"
    return ref.removeprefix("refs/remotes/").removeprefix("refs/heads/")


def off_base_reason(commit: str, on_branch: set[str] | None, current: str | None, base: str) -> str:
    """Why a commit not on the base branch (base: its label, origin/main) is there at all, truthfully: a dirty
    tree; a commit of the checked-out branch (and, when that branch is the base's own name, not pushed);
    or another branch's commit (a pulled archive)."""
    if commit.endswith("-dirty"):
        return "a dirty tree"
    if on_branch is not None and commit in on_branch and current:
        if base != current and base.endswith("/" + current):
            return f"on {current} here only, not on {base}: not pushed"
        return f"on {current}, not on {base}"
    return "another branch"


def branch_note(entries: list[history.Entry], on_base: set[str] | None, branch: str | None,
                on_branch: set[str] | None = None, current: str | None = None) -> str:
    """One sentence under the page title: how many archived commits lie on the base branch (lines) and
    how many not (hollow points), and why those are not."""
    commits = list(dict.fromkeys(e.commit for e in entries))
    if on_base is None:
        return f"{len(commits)} archived commit(s) in git order; no base branch found, so all are drawn as one line."
    others = [c for c in commits if c not in on_base]
    why: dict[str, int] = {}
    for c in others:
        reason = off_base_reason(c, on_branch, current, branch or "the base branch")
        why[reason] = why.get(reason, 0) + 1
    said = "; ".join(f"{n} {r}" for r, n in why.items())
    return (f"{len(commits)} archived commit(s) in git order: {len(commits) - len(others)} on {branch} (lines), "
            f"{len(others)} not on it" + (f" (hollow points: {said})." if others else "."))


def commits_table(entries: list[history.Entry], on_base: set[str] | None, branch: str | None,
                  expected: dict[str, str] | None = None, on_branch: set[str] | None = None,
                  current: str | None = None) -> str:
    """Every archived commit in git order, oldest first, whether it lies on the base branch (branch: its
    label) and, when not, why (off_base_reason); each verdict other than a plain pass by its kind."""
    expected = expected or {}
    md = [f"| commit | on {branch or 'the base branch'} | builds | verdicts other than pass |", "|---|---|---|---|"]
    for commit in dict.fromkeys(e.commit for e in entries):
        builds = [e for e in entries if e.commit == commit]
        kinds = [(e, verdict_kind.kind(e, expected.get(e.design, "pass"))) for e in builds]  # the recomputed verdict
        others = [f"{e.design} ({e.flow}: {verdict_kind.WORDS[k]})" for e, k in kinds if k != verdict_kind.PASS]
        where = "-" if on_base is None else ("yes" if commit in on_base else
                                             f"no ({off_base_reason(commit, on_branch, current, branch or 'the base branch')})")
        md.append(f"| {commit[:12]}{'-dirty' if commit.endswith('-dirty') else ''} | {where} | {len(builds)} | "
                  f"{', '.join(others) or '-'} |")
    return markdown_table_to_html("\n".join(md))


def _invalid_section(invalid: list[Invalid], reports_root: Path) -> str:
    """Records that failed validation: named, with the reason, never plotted or given a verdict."""
    if not invalid:
        return ""
    items = "".join(f"<li><code>{html.escape(str(i.path.relative_to(reports_root)))}</code>: {html.escape(i.reason)}</li>"
                    for i in invalid)
    return (f'<h2>Archived records that failed validation ({len(invalid)})</h2><p class="note">Not plotted and '
            f"given no verdict: kabe shows only what it can check.</p><ul class=\"invalid\">{items}</ul>")


UNVERIFIED_NOTE = ("Kept apart in reports/.unverified/ by <code>kabe archive pull</code>: not signed by a key in the "
                   "project's allowed signers, or naming a commit this clone lacks, or with a cache key not its own. "
                   "Shown for reference only: in no table, line or verdict above, never a cache entry, never a "
                   "regression base, never deployable. Grey hollow diamonds in the plots.")


def _unverified_links(u: history.Unverified) -> str:
    """The unit's file names, without links: a unit nobody trusted may carry an .html or .svg that would
    run on the page's origin (and the published site serves none of its files: kabe.page.site)."""
    names = sorted(p.name for p in u.path.iterdir() if p.is_file() and not p.is_symlink())
    return " ".join(f'<code class="raw">{html.escape(n)}</code>' for n in names)


def unverified_section(unverified: list[history.Unverified], head: str | None) -> str:
    """Units the pull did not trust, apart from the verified history: each labelled "unverified:
    <reason>", its numbers greyed, its gate only what its numbers would say."""
    if not unverified:
        return ""
    rows = []
    for u in unverified:
        commit, design, kind = u.unit.split("/")
        e = u.entry
        if e is not None:
            wns = e.record["timing"].get("wns_ns")
            nums = [html.escape(str(e.value(k))) for k in ("lut", "ff", "dsp", "bram36_equiv")]
            nums += ["-" if wns is None else f"{wns:+.3f}", "pass" if e.passed else "FAIL"]
        else:
            nums = ["-"] * 5 + [html.escape(f"no record: {u.invalid}") if u.invalid else "no metrics record"]
        cells = [html.escape(design), html.escape(kind), _commit_cell(commit, head), *nums]
        rows.append(f'<tr class="unverified" data-unit="{html.escape(u.unit)}">' + "".join(f"<td>{c}</td>" for c in cells)
                    + f'<td class="unverified-why">unverified: {html.escape(u.reason)}</td>'
                    + f"<td>{_unverified_links(u)}</td></tr>")
    return (f'<h2 id="unverified">Unverified history: pulled, not trusted ({len(unverified)})</h2>'
            f'<p class="note">{UNVERIFIED_NOTE}</p><table class="unverified"><tr><th>design</th><th>kind</th>'
            "<th>commit</th><th>LUT</th><th>FF</th><th>DSP</th><th>BRAM36</th><th>WNS ns</th>"
            "<th>gate on its numbers (not trusted)</th><th>why it is not trusted</th><th>raw reports</th></tr>"
            + "".join(rows) + "</table>")


def could_not_run_section(reports_root: Path, head: str | None) -> str:
    """The designs whose last build could not run (kabe.records.could_not_run), each with its reason: no
    build was archived, so no table above has a row for that attempt."""
    notes = could_not_run.load(reports_root)
    if not notes:
        return ""
    rows = "".join(
        f'<tr class="could-not-run"><td>{html.escape(n.design)}</td><td>{html.escape(n.flow)}</td>'
        f"<td>{_commit_cell(n.commit.removesuffix('-dirty'), head) if n.commit else '-'}"
        f"{' (dirty)' if n.commit.endswith('-dirty') else ''}</td><td>{html.escape(n.when)}</td>"
        f'<td class="fail">could not run</td><td class="why">{html.escape(n.reason)}</td></tr>' for n in notes)
    return (f'<h2 id="could-not-run">Could not run ({len(notes)})</h2><p class="note">The last build of each of these '
            f"designs stopped before its gate (exit 2: a missing tool, a file or setting to fix, or a bug in kabe), "
            f"so nothing was archived for it; the tables above show its last build that ran, if any. The line goes "
            f"away when a build of the design runs to its gate.</p><table class=\"could-not-run\"><tr><th>design</th>"
            f"<th>flow</th><th>commit</th><th>when (UTC)</th><th>verdict</th><th>why</th></tr>{rows}</table>")


def _sweeps_section(reports_root: Path) -> str:
    """The newest sweep of each design and flow (kabe.sweep writes sweep.json and pareto.png beside its
    variants): its Pareto plot and its best variant. Read as files: records never import the sweep."""
    import json

    newest: dict[tuple[str, str], Path] = {}
    for f in sorted(reports_root.glob("*/*/sweep-*/sweep.json"), key=lambda p: p.stat().st_mtime):
        newest[(f.parent.parent.name, f.parent.name)] = f
    parts = []
    for (design, kind), f in sorted(newest.items()):
        png = f.parent / "pareto.png"
        try:
            summary = json.loads(f.read_text())
            n, best = len(summary["variants"]), summary.get("best")
        except (OSError, ValueError, KeyError, TypeError):
            continue  # a sweep.json kabe did not write is not shown
        caption = (f"{n} variants at {str(summary.get('commit', ''))[:12]}; best passing: {best}" if best
                   else f"{n} variants; none passed the gate")
        parts.append(f"<h3>{html.escape(design)} ({html.escape(kind)})</h3><p class=\"note\">{html.escape(caption)}</p>"
                     + (_img(png, f"{design} sweep: LUT against WNS") if png.is_file() else ""))
    return "<h2>Sweeps (LUT against WNS, coloured by DSP)</h2>" + "".join(parts) if parts else ""


def _project_sections(specs, root: Path, work: Path, files: dict, entries=()) -> str:
    """The sections the project adds ([tool.kabe] page_sections, kabe.page.page_hooks): none unless named."""
    if not specs:
        return ""

    def figure(path: Path, alt: str) -> str:
        path = Path(path)
        files[path.name] = path.read_bytes()
        return _img(path, alt)

    page = page_hooks.PageContext(work=work, records=[e.record for e in entries], figure=figure,
                                  table=markdown_table_to_html)
    return page_hooks.render(specs, Path(root), page)


def build_report(reports_root: Path = REPORTS, root: Path = ROOT, cores_root: Path = CORES,
                 sections: Iterable[str] | None = None) -> Path:
    """sections: the project's page sections to show ("module:function", kabe.page.page_hooks); None: the
    project's [tool.kabe] page_sections (read from root's pyproject.toml; none when it names none)."""
    if sections is None:
        sections = config.value(config.load(Path(root) / "pyproject.toml"), "page_sections")
    shown = list(sections)

    reports_root = Path(reports_root)
    scanned = history.scan(reports_root, root, cores_root)  # validated, verdicts recomputed
    entries = scanned.entries
    unverified = history.scan_unverified(reports_root, root, cores_root)  # shown apart, labelled, never trusted
    head = git.head(root)
    base_branch = lineage.base_branch(root)
    base_ref = lineage.base_branch_ref(root, branch=base_branch)
    on_base = lineage.commits_on(base_ref, root) if base_ref else None
    on_branch = lineage.commits_on("HEAD", root) or None  # the checked-out branch's commits; None: no git
    branch = lineage.current_branch(root)
    base_label = ref_label(base_ref, base_branch)  # origin/main: local commits of main it lacks are said so
    files: dict[str, Path | str] = {}
    expected = history.expected_gates({e.design for e in entries}, cores_root)
    # The figures are drawn in a private, fresh temp folder: no fixed name under reports/ to plant a link at.
    with tempfile.TemporaryDirectory(prefix="kabe-report-") as work:
        work = Path(work)
        sections = []
        for design in sorted({e.design for e in entries}):
            apart = [u.entry for u in unverified if u.entry and u.entry.design == design]
            svg = plot_design(design, [e for e in entries if e.design == design], work / f"history_{design}.svg",
                              cores_root, on_base, unverified=apart, order_key=history.order_key(root),
                              off_base=f"not on {base_label}")
            files[svg.name] = svg.read_text()
            sections.append(f"<h3>{html.escape(design)}</h3>{inline_svg(svg)}")
        research = _project_sections(shown, root, work, files, entries)
        stamp = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
        apart_note = (f'; {len(unverified)} pulled unit(s) that did not verify are kept apart as '
                      f'<a href="#unverified">unverified history</a>' if unverified else "")
        body = f"""<body><h1>kabe: builds</h1>
<p class="note">Generated by kabe/page/report.py at {stamp} from {len(entries)} archived builds; every verdict
is recomputed from the numbers{apart_note}. Open-flow timing is a
pre-route estimate (Yosys netlist + kabe's routing model); Vivado timing is sign-off.</p>
<p class="note" id="lineage">{html.escape(branch_note(entries, on_base, base_label, on_branch, branch))}</p>
<h2>Latest build per design</h2>{_latest_table(entries, head, reports_root, expected, on_branch, branch) if entries else '<p>No builds archived yet.</p>'}
{could_not_run_section(reports_root, head)}
<h2>Latest simulation per design</h2>{_sim_table(reports_root, root, head, on_branch)}
<h2>Metrics over commits</h2>{''.join(sections) or '<p>No builds archived yet.</p>'}
<h3>Archived commits (git order)</h3>{commits_table(entries, on_base, base_label, expected, on_branch, branch) if entries else ''}
{_sweeps_section(reports_root)}
{unverified_section(unverified, head)}
{_invalid_section(scanned.invalid, reports_root)}
{research}
{_SELF_CHECK}</body></html>
"""
        page = (f'<!doctype html><html><head><meta charset="utf-8"><title>kabe report</title>'
                f"<style>{_STYLE}\n{font_face(body)}</style></head>\n{body}")
    write_atomic(reports_root / "site", files, root=reports_root)  # the figures as files, for people who want them
    return write_text_atomic(reports_root / "index.html", page, root=reports_root)
