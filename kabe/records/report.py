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

from kabe import config, designs, rtl_path
from kabe.paths import CORES, REPORTS, ROOT
from kabe.records import page_hooks, revisions, history, lineage, sim_results
from kabe.records.archive import write_atomic, write_text_atomic
from kabe.records.band_advice import marginal_advice
from kabe.records.load import Invalid
from kabe.records.report_plot import inline_svg, plot_design

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
    """pass, or FAIL with the reason beside it (every reason on hover); a negative example's failing
    gate (design.yaml expect_gate: fail) is "FAIL (expected)", its passing gate the surprise."""
    if expected == "fail":
        failures = list(e.verdict.failures)
        if e.passed:
            return ('<td class="fail">PASS (expected FAIL)</td><td class="why">a negative example (expect_gate: fail) '
                    "passed its gate: the gate no longer catches its known problem</td>")
        first = failures[0] if failures else "the gate failed (no reason recorded)"
        return (f'<td class="xfail">FAIL (expected)</td><td class="why" title="{html.escape(chr(10).join(failures))}">'
                f"a negative example (design.yaml expect_gate: fail): {html.escape(first)}</td>")
    if e.passed:  # the verdict recomputed from the numbers (kabe.records.load), never the record's own
        why = getattr(e.verdict, "unverified", None)
        if why:  # no simulation verdict behind the gate (verify: {none: ...}): never a bare pass
            return f'<td class="pass">pass</td><td class="why">unverified: {html.escape(why)}</td>'
        return '<td class="pass">pass</td><td></td>'
    if getattr(e.verdict, "status", None) == "not_estimated":  # no timing number on this board: neither verdict
        return (f'<td class="xfail">not estimated</td><td class="why">timing not estimated: '
                f'{html.escape(e.verdict.not_estimated or "")}; every other check passed (a routed Vivado build '
                f'gives the sign-off)</td>')
    failures = list(e.verdict.failures) or ["the gate failed (no reason recorded)"]
    more = f" (and {len(failures) - 1} more)" if len(failures) > 1 else ""
    return (f'<td class="fail">FAIL</td><td class="why" title="{html.escape(chr(10).join(failures))}">'
            f'{html.escape(failures[0])}{more}</td>')


def _timing_kind(timing: dict, design: str | None = None) -> str:
    """sign-off, or pre-route estimate with its band; a band across zero says "marginal: run Vivado"."""
    if not timing.get("estimated"):
        return "sign-off"
    band = timing.get("band") or {}
    lo_hi = band.get("wns_ns") or []
    text = "pre-route estimate"
    if len(lo_hi) == 2 and all(isinstance(x, (int, float)) for x in lo_hi):
        text += f" (band {lo_hi[0]:+.3f} .. {lo_hi[1]:+.3f} ns)"
    advice = marginal_advice(timing, design)
    if advice:  # what the band means and the next step, in the one line the summary and JUnit print too
        text += f'; <span class="marginal">{html.escape(advice)}</span>'
    return text


def _latest_table(entries: list[history.Entry], head: str | None, reports_root: Path,
                  expected: dict[str, str] | None = None) -> str:
    latest: dict[tuple[str, str], history.Entry] = {}
    for e in entries:  # git order: the last one wins
        latest[(e.design, e.flow)] = e
    commits = {e.commit for e in latest.values()}
    note = (f'<p class="note">Each row is the latest archived build of that design and flow, so rows come '
            f'from {len(commits)} different commits: read the commit column.</p>' if len(commits) > 1 else
            f'<p class="note">Every row comes from commit {_commit_cell(next(iter(commits)), head)}.</p>')
    head_row = ("<tr><th>design</th><th>flow</th><th>commit</th><th>LUT</th><th>FF</th><th>DSP</th><th>BRAM36</th>"
                "<th>WNS ns</th><th>timing</th><th>gate</th><th>why it failed</th><th>raw reports</th></tr>")
    rows = []
    for (design, flow), e in sorted(latest.items()):
        wns = e.record["timing"].get("wns_ns")
        cells = [html.escape(design), html.escape(flow), _commit_cell(e.commit, head)]
        cells += [html.escape(str(e.value(k))) for k in ("lut", "ff", "dsp", "bram36_equiv")]
        cells += ["-" if wns is None else f"{wns:+.3f}",
                  _timing_kind(e.record["timing"], design)]
        rows.append(f'<tr data-design="{html.escape(design)}" data-flow="{html.escape(flow)}">'
                    + "".join(f"<td>{c}</td>" for c in cells) + _gate_cells(e, (expected or {}).get(design, "pass"))
                    + f"<td>{_raw_links(e, reports_root)}</td></tr>")
    return note + "<table>" + head_row + "".join(rows) + "</table>" + _critical_paths(latest)


def _critical_paths(latest: dict[tuple[str, str], history.Entry]) -> str:
    """Each latest build's critical path in RTL terms (kabe.rtl_path): registers by RTL name and
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
    """A cycle-accurate run's beats per cycle; an HLS design's C-simulation has no cycles."""
    bpc = r.get("beats_per_cycle")
    return f"{bpc:.3f}" if isinstance(bpc, (int, float)) else "- (C-simulation: untimed)" if r.get("simulator") == "csim" else "-"


def _sim_table(reports_root: Path, root: Path, head: str | None) -> str:
    entries, unreadable = sim_results.load(reports_root, root)
    latest = sim_results.latest_per_design(entries)
    skipped = (f'<p class="note">{len(unreadable)} result.json file(s) could not be read and are left out: '
               f'{html.escape(", ".join(str(p) for p in unreadable))}</p>') if unreadable else ""
    if not latest:
        return "<p>No simulation archived yet: <code>doit sim:&lt;design&gt;</code> writes one.</p>" + skipped
    rows = []
    for design, e in latest.items():
        r = e.result
        verdict = "pass" if r["passed"] else "FAIL"
        why = "; ".join(r["problems"]) if r["problems"] else ""
        link = f'<a class="raw" href="{html.escape(f"{e.commit}/{design}/sim/result.json")}">result.json</a>'
        rows.append(f"<tr><td>{html.escape(design)}</td><td>{_commit_cell(e.commit, head)}</td>"
                    f"<td>{r['rows']:,}</td><td>{r['seed']}</td><td>{r['mismatches']:,}</td>"
                    f"<td>{_beats_per_cycle(r)}</td><td class=\"{verdict.lower()}\">{verdict}</td>"
                    f"<td>{html.escape(why)}</td><td>{link}</td></tr>")
    return ("<table><tr><th>design</th><th>commit</th><th>rows</th><th>seed</th><th>mismatches</th>"
            "<th>beats/clk</th><th>verdict</th><th>problems</th><th>raw</th></tr>" + "".join(rows) + "</table>"
            + skipped)


_STYLE = """body{font-family:sans-serif;max-width:1300px;margin:1em auto;color:#222}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:2px 8px;font-size:13px}
th{background:#f0f0f0}img.plot,svg.plot{max-width:100%;height:auto;display:block;margin:.5em 0}
.note{color:#666;font-size:13px}td.fail{color:#b00;font-weight:bold}td.xfail{color:#a60;font-weight:bold}td.why{max-width:40em}a.raw{margin-right:.5em}
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


def branch_note(entries: list[history.Entry], on_base: set[str] | None, branch: str | None) -> str:
    """One sentence under the page title: how many archived commits lie on the base branch (lines) and
    how many only on this branch (hollow points)."""
    commits = list(dict.fromkeys(e.commit for e in entries))
    if on_base is None:
        return f"{len(commits)} archived commit(s) in git order; no base branch found, so all are drawn as one line."
    others = [c for c in commits if c not in on_base]
    return (f"{len(commits)} archived commit(s) in git order: {len(commits) - len(others)} on {branch} (lines), "
            f"{len(others)} not on it (hollow points: this branch or a dirty tree).")


def commits_table(entries: list[history.Entry], on_base: set[str] | None, branch: str | None,
                  expected: dict[str, str] | None = None) -> str:
    """Every archived commit in git order, oldest first, and whether it lies on the base branch; a
    negative example's failed gate is named as expected."""
    expected = expected or {}
    md = [f"| commit | on {branch or 'the base branch'} | builds | gates failed |", "|---|---|---|---|"]
    for commit in dict.fromkeys(e.commit for e in entries):
        builds = [e for e in entries if e.commit == commit]
        failed = [f"{e.design} ({e.flow}{': FAIL (expected)' if expected.get(e.design) == 'fail' else ''})"
                  for e in builds if not e.passed]  # the recomputed verdict
        where = "-" if on_base is None else ("yes" if commit in on_base else "no (this branch)")
        md.append(f"| {commit[:12]}{'-dirty' if commit.endswith('-dirty') else ''} | {where} | {len(builds)} | "
                  f"{', '.join(failed) or '-'} |")
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
    run on the page's origin (and the published site serves none of its files: kabe.records.site)."""
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
    """The sections the project adds ([tool.kabe] page_sections, kabe.records.page_hooks): none unless named."""
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
    """sections: the project's page sections to show ("module:function", kabe.records.page_hooks); None: the
    project's [tool.kabe] page_sections (read from root's pyproject.toml; none when it names none)."""
    if sections is None:
        sections = config.value(config.load(Path(root) / "pyproject.toml"), "page_sections")
    shown = list(sections)

    reports_root = Path(reports_root)
    scanned = history.scan(reports_root, root, cores_root)  # validated, verdicts recomputed
    entries = scanned.entries
    unverified = history.scan_unverified(reports_root, root, cores_root)  # shown apart, labelled, never trusted
    head = revisions.head(root)
    base_branch = lineage.base_branch(root)
    base_ref = lineage.base_branch_ref(root, branch=base_branch)
    on_base = lineage.commits_on(base_ref, root) if base_ref else None
    files: dict[str, Path | str] = {}
    expected = history.expected_gates({e.design for e in entries}, cores_root)
    # The figures are drawn in a private, fresh temp folder: no fixed name under reports/ to plant a link at.
    with tempfile.TemporaryDirectory(prefix="kabe-report-") as work:
        work = Path(work)
        sections = []
        for design in sorted({e.design for e in entries}):
            apart = [u.entry for u in unverified if u.entry and u.entry.design == design]
            svg = plot_design(design, [e for e in entries if e.design == design], work / f"history_{design}.svg",
                              cores_root, on_base, unverified=apart, order_key=history.order_key(root))
            files[svg.name] = svg.read_text()
            sections.append(f"<h3>{html.escape(design)}</h3>{inline_svg(svg)}")
        research = _project_sections(shown, root, work, files, entries)
        stamp = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
        apart_note = (f'; {len(unverified)} pulled unit(s) that did not verify are kept apart as '
                      f'<a href="#unverified">unverified history</a>' if unverified else "")
        body = f"""<body><h1>kabe: builds</h1>
<p class="note">Generated by kabe/records/report.py at {stamp} from {len(entries)} archived builds; every verdict
is recomputed from the numbers{apart_note}. Open-flow timing is a
pre-route estimate (Yosys netlist + kabe's routing model); Vivado timing is sign-off.</p>
<p class="note" id="lineage">{html.escape(branch_note(entries, on_base, base_branch))}</p>
<h2>Latest build per design</h2>{_latest_table(entries, head, reports_root, expected) if entries else '<p>No builds archived yet.</p>'}
<h2>Latest simulation per design</h2>{_sim_table(reports_root, root, head)}
<h2>Metrics over commits</h2>{''.join(sections) or '<p>No builds archived yet.</p>'}
<h3>Archived commits (git order)</h3>{commits_table(entries, on_base, base_branch, expected) if entries else ''}
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
