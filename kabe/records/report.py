"""`doit report`: reports/index.html, one self-contained page (images inlined, no network) with
every design's metrics over commits, the bandwidth wall, the token budget and the V80 what-if."""

from __future__ import annotations

import base64
import datetime as dt
import html
import tempfile
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from kabe.records import history  # noqa: E402
from kabe.records.archive import write_atomic, write_text_atomic  # noqa: E402
from kabe.records.load import Invalid  # noqa: E402
from kabe.paths import CORES, REPORTS, ROOT  # noqa: E402

_PANELS = (("lut", "LUT"), ("ff", "FF"), ("dsp", "DSP48E1"), ("bram36_equiv", "BRAM36 eq."), ("wns_ns", "WNS (ns)"))
_FLOW_STYLE = {"open": dict(marker="o", ls="--", label="open flow (WNS: pre-route estimate)"),
               "vivado": dict(marker="s", ls="-", label="vivado (sign-off)")}


def plot_design(design: str, entries: list[history.Entry], path: Path) -> Path:
    """Metrics over commits in git order; estimated and sign-off timing drawn as different series;
    a failing gate (the verdict recomputed from the numbers, kabe.records.load) is a red cross."""
    commits = list(dict.fromkeys(e.commit for e in entries))
    x_of = {c: i for i, c in enumerate(commits)}
    fig, axes = plt.subplots(1, len(_PANELS), figsize=(3.2 * len(_PANELS), 3.0))
    for ax, (key, label) in zip(axes, _PANELS):
        for flow in sorted({e.flow for e in entries}):
            pts = [(x_of[e.commit], e.value(key), e.passed) for e in entries if e.flow == flow]
            pts = [p for p in pts if p[1] is not None]
            if not pts:
                continue
            ax.plot([p[0] for p in pts], [p[1] for p in pts], **_FLOW_STYLE.get(flow, {"marker": "o"}))
            bad = [p for p in pts if not p[2]]
            if bad:
                ax.scatter([p[0] for p in bad], [p[1] for p in bad], marker="x", s=80, color="red", zorder=5,
                           label="gate failed")
        if key == "wns_ns":
            ax.axhline(0, color="red", lw=0.8)
        ax.set_title(label, fontsize=10)
        ax.set_xticks(range(len(commits)), [c[:7] + ("*" if c.endswith("-dirty") else "") for c in commits],
                      rotation=45, fontsize=7)
    handles, labels = axes[-1].get_legend_handles_labels()
    if handles:
        fig.legend(handles, labels, loc="lower center", ncol=3, fontsize=8, frameon=False)
    # A '$' would start matplotlib's math text (history only passes valid design names; this is for any caller).
    fig.suptitle(f"{design.replace('$', chr(92) + '$')}: metrics over commits (git order; * = dirty tree)", fontsize=11)
    fig.tight_layout(rect=(0, 0.08, 1, 0.95))
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def _img(path: Path, alt: str) -> str:
    data = base64.b64encode(path.read_bytes()).decode()
    return f'<img class="plot" alt="{html.escape(alt)}" src="data:image/png;base64,{data}">'


def markdown_table_to_html(md: str) -> str:
    """The models render pipe tables for terminals and PR comments; the page shows the same tables."""
    out, rows = [], []

    def flush():
        if rows:
            head, *body = rows
            out.append("<table><tr>" + "".join(f"<th>{html.escape(c)}</th>" for c in head) + "</tr>"
                       + "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>" for r in body)
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
                out.append(f"<p>{html.escape(s.lstrip('#').strip())}</p>")
    flush()
    return "\n".join(out)


def _latest_table(entries: list[history.Entry]) -> str:
    latest: dict[tuple[str, str], history.Entry] = {}
    for e in entries:
        latest[(e.design, e.flow)] = e
    md = ["| design | flow | commit | LUT | FF | DSP | BRAM36 | WNS ns | timing | gate |", "|---|---|---|---|---|---|---|---|---|---|"]
    for (design, flow), e in sorted(latest.items()):
        t = e.record["timing"]
        wns = t.get("wns_ns")
        md.append(f"| {design} | {flow} | {e.commit[:12]} | {e.value('lut')} | {e.value('ff')} | {e.value('dsp')} | "
                  f"{e.value('bram36_equiv')} | {'-' if wns is None else f'{wns:+.3f}'} | "
                  f"{'pre-route estimate' if t.get('estimated') else 'sign-off'} | "
                  f"{'pass' if e.passed else 'FAIL'} |")
    return markdown_table_to_html("\n".join(md))


def _invalid_section(invalid: list[Invalid], reports_root: Path) -> str:
    """Records that failed validation: named, with the reason, never plotted or given a verdict."""
    if not invalid:
        return ""
    items = "".join(f"<li><code>{html.escape(str(i.path.relative_to(reports_root)))}</code>: {html.escape(i.reason)}</li>"
                    for i in invalid)
    return (f'<h2>Archived records that failed validation ({len(invalid)})</h2><p class="note">Not plotted and '
            f"given no verdict: kabe shows only what it can check.</p><ul class=\"invalid\">{items}</ul>")


_STYLE = """body{font-family:sans-serif;max-width:1300px;margin:1em auto;color:#222}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:2px 8px;font-size:13px}
th{background:#f0f0f0}img.plot{max-width:100%;display:block;margin:.5em 0}.note{color:#666;font-size:13px}"""

# The page checks itself: every plot must have decoded. The browser test reads the result from the DOM.
_SELF_CHECK = """<script>
window.addEventListener('load', function () {
  var imgs = Array.prototype.slice.call(document.querySelectorAll('img.plot'));
  var ok = imgs.length > 0 && imgs.every(function (i) { return i.complete && i.naturalWidth > 0; });
  document.body.setAttribute('data-plots', imgs.length);
  document.body.setAttribute('data-plots-ok', ok ? 'yes' : 'no');
});
</script>"""


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


def build_report(reports_root: Path = REPORTS, root: Path = ROOT, cores_root: Path = CORES) -> Path:
    with tempfile.TemporaryDirectory(prefix="kabe-report-") as work:  # private and fresh: no fixed name to plant a link at
        return _build_report(Path(reports_root), root, cores_root, Path(work))


def _build_report(reports_root: Path, root: Path, cores_root: Path, work: Path) -> Path:
    from kabe.perf import plots, token_budget, wall, whatif_v80

    scanned = history.scan(reports_root, root, cores_root)
    entries = scanned.entries
    files: dict[str, Path | str] = {}
    sections = []
    for design in sorted({e.design for e in entries}):
        png = plot_design(design, [e for e in entries if e.design == design], work / f"history_{design}.png")
        files[png.name] = png
        sections.append(f"<h3>{html.escape(design)}</h3>{_img(png, design + ' metrics over commits')}")
    wall_png = plots.plot_wall(work / "wall.png")
    budget_png = plots.plot_token_budget(work / "token_budget.png")
    files.update({"wall.png": wall_png, "token_budget.png": budget_png})
    stamp = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    page = f"""<!doctype html><html><head><meta charset="utf-8"><title>kabe report</title><style>{_STYLE}</style></head>
<body><h1>kabe: builds, the wall and the token budget</h1>
<p class="note">Generated by kabe/records/report.py at {stamp} from {len(entries)} archived builds; every verdict
is recomputed from the numbers. Open-flow timing is a
pre-route estimate (Yosys netlist + kabe's routing model); Vivado timing is sign-off.</p>
<h2>Latest build per design</h2>{_latest_table(entries) if entries else '<p>No builds archived yet.</p>'}
<h2>Metrics over commits</h2>{''.join(sections) or '<p>No builds archived yet.</p>'}
{_sweeps_section(Path(reports_root))}
{_invalid_section(scanned.invalid, reports_root)}
<h2>The bandwidth wall (Figure 1)</h2>{_img(wall_png, 'bandwidth wall per stage')}
{markdown_table_to_html(wall.render_markdown(wall.figure1()))}
<h2>Token budget, SmolLM2-135M (Figure 6)</h2>{_img(budget_png, 'token budget per context')}
{markdown_table_to_html(token_budget.render_markdown())}
<h2>Alveo V80 what-if (the forum post's arithmetic)</h2>{markdown_table_to_html(whatif_v80.render_markdown())}
{_SELF_CHECK}</body></html>
"""
    files["index.html"] = page
    write_atomic(reports_root / "site", files, root=reports_root)  # the PNGs as files too, for people who want them
    return write_text_atomic(reports_root / "index.html", page, root=reports_root)
