"""`doit report`: reports/index.html, one self-contained page (images inlined, no network) with
every design's metrics over commits, the bandwidth wall, the token budget and the V80 what-if."""

from __future__ import annotations

import base64
import datetime as dt
import html
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from kabe.records import history, lineage  # noqa: E402
from kabe.records.archive import write_atomic, write_text_atomic  # noqa: E402
from kabe.paths import REPORTS, ROOT  # noqa: E402

_PANELS = (("lut", "LUT"), ("ff", "FF"), ("dsp", "DSP48E1"), ("bram36_equiv", "BRAM36 eq."), ("wns_ns", "WNS (ns)"))
_FLOW_STYLE = {"open": dict(marker="o", ls="--", label="open flow (WNS: pre-route estimate)"),
               "vivado": dict(marker="s", ls="-", label="vivado (sign-off)")}


def _plot_series(ax, pts: list[tuple], commits: list[str], flow: str, on_base: set[str] | None) -> None:
    """The base branch's builds as the flow's line; builds not on the base branch (this branch, a dirty
    tree) as hollow points beside it, so a branch's numbers are never read as the base's trend."""
    style = _FLOW_STYLE.get(flow, {"marker": "o"})
    base = [p for p in pts if on_base is None or commits[p[0]] in on_base]
    branch = [p for p in pts if p not in base]
    if base:
        ax.plot([p[0] for p in base], [p[1] for p in base], **style)
    if branch:
        ax.scatter([p[0] for p in branch], [p[1] for p in branch], marker=style.get("marker", "o"), s=60, zorder=4,
                   facecolors="none", edgecolors="tab:orange", label="not on the base branch (this branch)")


def branch_note(entries: list[history.Entry], on_base: set[str] | None, branch: str | None) -> str:
    """One sentence under the page title: how many archived commits lie on the base branch (lines) and
    how many only on this branch (hollow points)."""
    commits = list(dict.fromkeys(e.commit for e in entries))
    if on_base is None:
        return f"{len(commits)} archived commit(s) in git order; no base branch found, so all are drawn as one line."
    others = [c for c in commits if c not in on_base]
    return (f"{len(commits)} archived commit(s) in git order: {len(commits) - len(others)} on {branch} (lines), "
            f"{len(others)} not on it (hollow points: this branch or a dirty tree).")


def commits_table(entries: list[history.Entry], on_base: set[str] | None, branch: str | None) -> str:
    """Every archived commit in git order, oldest first, and whether it lies on the base branch."""
    md = [f"| commit | on {branch or 'the base branch'} | builds | gates failed |", "|---|---|---|---|"]
    for commit in dict.fromkeys(e.commit for e in entries):
        builds = [e for e in entries if e.commit == commit]
        failed = [f"{e.design} ({e.flow})" for e in builds if not e.record["gate"]["passed"]]
        where = "-" if on_base is None else ("yes" if commit in on_base else "no (this branch)")
        md.append(f"| {commit[:12]}{'-dirty' if commit.endswith('-dirty') else ''} | {where} | {len(builds)} | "
                  f"{', '.join(failed) or '-'} |")
    return markdown_table_to_html("\n".join(md))


def plot_design(design: str, entries: list[history.Entry], path: Path, on_base: set[str] | None = None) -> Path:
    """Metrics over commits in git order; estimated and sign-off timing drawn as different series;
    the base branch as lines, other commits as hollow points; a failing gate is a red cross."""
    commits = list(dict.fromkeys(e.commit for e in entries))
    x_of = {c: i for i, c in enumerate(commits)}
    fig, axes = plt.subplots(1, len(_PANELS), figsize=(3.2 * len(_PANELS), 3.0))
    for ax, (key, label) in zip(axes, _PANELS):
        for flow in sorted({e.flow for e in entries}):
            pts = [(x_of[e.commit], e.value(key), e.record["gate"]["passed"]) for e in entries if e.flow == flow]
            pts = [p for p in pts if p[1] is not None]
            if not pts:
                continue
            _plot_series(ax, pts, commits, flow, on_base)
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
    fig.suptitle(f"{design}: metrics over commits (git order; * = dirty tree)", fontsize=11)
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
                  f"{'pass' if e.record['gate']['passed'] else 'FAIL'} |")
    return markdown_table_to_html("\n".join(md))


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


def build_report(reports_root: Path = REPORTS, root: Path = ROOT) -> Path:
    from kabe.perf import plots, token_budget, wall, whatif_v80

    entries = history.load(reports_root, root)
    base_branch = lineage.base_branch(root)
    base_ref = lineage.base_branch_ref(root, branch=base_branch)
    on_base = lineage.commits_on(base_ref, root) if base_ref else None
    files: dict[str, Path] = {}
    work = Path(reports_root) / ".report-work"
    work.mkdir(parents=True, exist_ok=True)
    sections = []
    for design in sorted({e.design for e in entries}):
        png = plot_design(design, [e for e in entries if e.design == design], work / f"history_{design}.png", on_base)
        files[png.name] = png
        sections.append(f"<h3>{html.escape(design)}</h3>{_img(png, design + ' metrics over commits')}")
    wall_png = plots.plot_wall(work / "wall.png")
    budget_png = plots.plot_token_budget(work / "token_budget.png")
    files.update({"wall.png": wall_png, "token_budget.png": budget_png})
    stamp = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    page = f"""<!doctype html><html><head><meta charset="utf-8"><title>kabe report</title><style>{_STYLE}</style></head>
<body><h1>kabe: builds, the wall and the token budget</h1>
<p class="note">Generated by kabe/report.py at {stamp} from {len(entries)} archived builds. Open-flow timing is a
pre-route estimate (Yosys netlist + kabe's routing model); Vivado timing is sign-off.</p>
<p class="note" id="lineage">{html.escape(branch_note(entries, on_base, base_branch))}</p>
<h2>Latest build per design</h2>{_latest_table(entries) if entries else '<p>No builds archived yet.</p>'}
<h2>Metrics over commits</h2>{''.join(sections) or '<p>No builds archived yet.</p>'}
<h3>Archived commits (git order)</h3>{commits_table(entries, on_base, base_branch) if entries else ''}
<h2>The bandwidth wall (Figure 1)</h2>{_img(wall_png, 'bandwidth wall per stage')}
{markdown_table_to_html(wall.render_markdown(wall.figure1()))}
<h2>Token budget, SmolLM2-135M (Figure 6)</h2>{_img(budget_png, 'token budget per context')}
{markdown_table_to_html(token_budget.render_markdown())}
<h2>Alveo V80 what-if (the forum post's arithmetic)</h2>{markdown_table_to_html(whatif_v80.render_markdown())}
{_SELF_CHECK}</body></html>
"""
    files["index.html"] = page
    write_atomic(Path(reports_root) / "site", files)  # the PNGs as files too, for people who want them
    return write_text_atomic(Path(reports_root) / "index.html", page)
