"""One design's metrics over commits, as the SVG the report page inlines.

Each panel draws the design.yaml budget for its metric (per flow: the open flow gates the engine
alone, Vivado the whole block design) and WNS its zero line, so a point is read against its limit.
A panel with one commit, or with one value throughout, gets axes from zero to past its budget and
the value written beside the point, instead of matplotlib's meaningless ±0.05 around a single dot.
SVG, not PNG: the page stays sharp, and the budget lines are elements a browser test can find
(ids `<design>-panel-<metric>`, `<design>-budget-<metric>-<flow>-<op>`, the WNS band
`<design>-band-wns_ns-<flow>` and a negative example's expected failures `<design>-expected-fail-<metric>-<flow>`). Text is drawn as paths, so
no font is needed to view it. Names and labels are ASCII: no glyph boxes on machines without CJK fonts.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.collections import PolyCollection  # noqa: E402

from kabe.project import designs  # noqa: E402
from kabe.base.paths import CORES  # noqa: E402
from kabe.project import flows as flow_registry  # noqa: E402
from kabe.records import history  # noqa: E402
from kabe.records import verdict_kind  # noqa: E402
from kabe.records.band_advice import band_of  # noqa: E402

PANELS = (("lut", "LUT"), ("ff", "FF"), ("dsp", "DSP48E1"), ("bram36_equiv", "BRAM36 eq."), ("wns_ns", "WNS (ns)"))
# by what a flow's timing is (kabe.project.flows), not by its name: estimates dashed, sign-off solid
_ESTIMATE_STYLE = dict(marker="o", ls="--", color="C0")
_SIGNOFF_STYLE = dict(marker="s", ls="-", color="C1")


def legend_entries(axes) -> tuple[list, list[str]]:
    """One legend for several panels: each label once, in the order the panels first use it."""
    handles, labels = [], []
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    return handles, labels


def _flow_style(flow: str) -> dict:
    known = flow_registry.FLOWS.get(flow)
    if known is None:
        return {"marker": "o", "label": flow}
    if known.estimated:
        return {**_ESTIMATE_STYLE, "label": f"{flow} flow (WNS: pre-route estimate)"}
    return {**_SIGNOFF_STYLE, "label": f"{flow} (sign-off)"}
_OP_TEXT = {"lt": "<", "le": "<=", "eq": "==", "ge": ">=", "gt": ">"}


def budgets_by_flow(design: str, flows, cores_root: Path = CORES) -> dict[str, dict[str, dict[str, float]]]:
    """{flow: {metric: {op: limit}}} from design.yaml; {} for a design no longer in cores/."""
    try:
        d = designs.get(design, cores_root)
    except designs.DesignError:
        return {}
    return {flow: d.budgets_for(flow) for flow in flows}


def _expects_failure(design: str, cores_root: Path) -> bool:
    """design.yaml says expect_gate: fail (a negative example, a design built to fail its gate)."""
    try:
        return designs.get(design, cores_root).expect_gate == "fail"
    except designs.DesignError:
        return False


def _limits(values: list[float], marks: list[float], key: str) -> tuple[float, float] | None:
    """Readable y limits when matplotlib's own would be a sliver around one value; else None."""
    if len(set(values)) > 1:
        return None
    every = values + marks + [0.0]
    lo, hi = min(every), max(every)
    if key == "wns_ns":
        pad = max(0.25, 0.2 * (hi - lo))
        return lo - pad, hi + pad
    return lo, (hi * 1.2 if hi > 0 else 1.0)


def plot_series(ax, pts: list[tuple], commits: list[str], style: dict, on_base: set[str] | None,
                off_base: str = "not on the base branch"):
    """The base branch's builds as the flow's line; builds not on the base branch (this branch, a dirty
    tree) as hollow points beside it, so a branch's numbers are never read as the base's trend.
    off_base: their legend label, naming the base branch. Returns the line (None when none lies on it)."""
    base = [p for p in pts if on_base is None or commits[p[0]] in on_base]
    branch = [p for p in pts if p not in base]
    line = None
    if base:
        line, = ax.plot([p[0] for p in base], [p[1] for p in base], **style)
    if branch:
        ax.scatter([p[0] for p in branch], [p[1] for p in branch], marker=style.get("marker", "o"), s=60, zorder=4,
                   facecolors="none", edgecolors="tab:orange", label=off_base)
    return line


def plot_band(ax, bands: list[tuple[int, float, float]], style: dict, gid: str):
    """The estimate's WNS band (lo .. hi: where the routed WNS may land) behind each point, as a
    translucent bar in the flow's colour; the group's id lets a browser test find it drawn."""
    half = 0.18
    boxes = PolyCollection([[(x - half, lo), (x + half, lo), (x + half, hi), (x - half, hi)] for x, lo, hi in bands],
                           facecolors=style.get("color", "gray"), edgecolors=style.get("color", "gray"), alpha=0.25,
                           linewidths=0.8, zorder=1, label=BAND_LABEL)
    boxes.set_gid(gid)  # one <g id=...> holding a path per commit's band
    ax.add_collection(boxes)
    ax.update_datalim([(x, v) for x, lo, hi in bands for v in (lo, hi)])
    return boxes


BAND_LABEL = "WNS band of the estimate (where routing may land)"
EXPECTED_FAIL_LABEL = "gate failed, as expected (expect_gate: fail)"
# how each verdict kind other than a plain pass is marked on a point (kabe.records.verdict_kind), so the plot
# says what the console says: "not estimated" is neither pass nor fail, an unverified pass is no bare pass
_MARKS = {
    verdict_kind.FAIL: ("fail", dict(marker="x", s=80, color="red"), "gate failed"),
    verdict_kind.EXPECTED_FAIL: ("expected-fail", dict(marker="x", s=80, color="darkorange"), EXPECTED_FAIL_LABEL),
    verdict_kind.NOT_ESTIMATED: ("not-estimated", dict(marker="^", s=70, facecolors="none", edgecolors="grey",
                                                       linewidths=1.2), "timing not estimated: neither pass nor fail"),
    verdict_kind.UNVERIFIED: ("unverified-pass", dict(marker="o", s=90, facecolors="none", edgecolors="purple",
                                                      linewidths=1.2), "pass, unverified (no simulation verdict)"),
}


def plot_unverified(ax, pts: list[tuple], gid: str) -> None:
    """Units `kabe archive pull` did not trust, as grey hollow diamonds: never joined to a flow's line,
    never marked with a verdict, named in the legend as unverified."""
    dots = ax.scatter([p[0] for p in pts], [p[1] for p in pts], marker="D", s=50, zorder=3, facecolors="none",
                      edgecolors="grey", linewidths=1.2, label=UNVERIFIED_LABEL)
    dots.set_gid(gid)


UNVERIFIED_LABEL = "unverified: pulled, not trusted (see the unverified table)"


# resources a design may use none of: their panels are drawn only when a build (or a budget above zero) uses them
_OPTIONAL = ("dsp", "bram36_equiv")


def used_panels(entries, unverified=()) -> list[tuple[str, str]]:
    """PANELS without the resources no build of the design uses (every value 0 or absent): an empty DSP
    or BRAM panel says nothing."""
    def used(key):
        return any((e.value(key) or 0) != 0 for e in [*entries, *unverified])
    return [(k, label) for k, label in PANELS if k not in _OPTIONAL or used(k)]


def plot_design(design: str, entries: list[history.Entry], path: Path, cores_root: Path = CORES,
                on_base: set[str] | None = None, unverified: list[history.Entry] = (), order_key=None,
                off_base: str = "not on the base branch") -> Path:
    """Metrics over commits in git order; estimated and sign-off timing as different series; a failing
    gate is a red cross; budgets dashed. Units kept apart as unverified (history.scan_unverified) are
    grey hollow diamonds beside the series, their commits marked '?' when no trusted build has them;
    order_key (history.order_key) places them in git order. Writes SVG (or PNG if path says so)."""
    trusted_commits = {e.commit for e in entries}
    both = [*entries, *unverified]
    if order_key is not None:
        both.sort(key=order_key)
    commits = list(dict.fromkeys(e.commit for e in both))
    x_of = {c: i for i, c in enumerate(commits)}
    flows = sorted({e.flow for e in entries})
    budgets = budgets_by_flow(design, flows, cores_root)
    expect_fail = _expects_failure(design, cores_root)
    panels = used_panels(entries, unverified)
    fig, axes = plt.subplots(1, len(panels), figsize=(3.2 * len(panels), 3.2), squeeze=False)
    axes = list(axes[0])
    for ax, (key, label) in zip(axes, panels):
        ax.set_gid(f"{design}-panel-{key}")
        values, marks = [], []
        for flow in flows:
            style = _flow_style(flow)
            pts = [(x_of[e.commit], e.value(key), verdict_kind.kind(e, "fail" if expect_fail else "pass"))
                   for e in entries if e.flow == flow]  # the recomputed verdict's kind
            pts = [p for p in pts if p[1] is not None]
            if pts:
                line = plot_series(ax, pts, commits, style, on_base, off_base)
                if line is not None:
                    line.set_gid(f"{design}-series-{key}-{flow}")
                values += [p[1] for p in pts]
                for kind, (slug, look, text) in _MARKS.items():
                    marked = [p for p in pts if p[2] == kind]
                    if marked:  # a negative example's failure is its point: marked apart from a real one
                        dots = ax.scatter([p[0] for p in marked], [p[1] for p in marked], zorder=5, label=text, **look)
                        dots.set_gid(f"{design}-{slug}-{key}-{flow}")
                if key == "wns_ns":
                    bands = [(x_of[e.commit], *lo_hi) for e in entries if e.flow == flow
                             for lo_hi in [band_of(e.record.get("timing"))] if lo_hi]
                    if bands:  # the open flow's estimate has a band; sign-off timing has none
                        plot_band(ax, bands, style, f"{design}-band-wns_ns-{flow}")
                        values += [v for b in bands for v in b[1:]]
                last = pts[-1]
                # the label on the side of the point with room (left of a point at the right end), so the
                # panel's edge or its neighbour never cuts it
                right_end = len(commits) > 1 and last[0] >= (len(commits) - 1) / 2
                ax.annotate(f"{last[1]:+.3f}" if key == "wns_ns" else f"{last[1]:,g}", (last[0], last[1]),
                            textcoords="offset points", xytext=(-6, 4) if right_end else (6, 4),
                            ha="right" if right_end else "left", va="bottom", fontsize=8, color=style.get("color"),
                            annotation_clip=False).set_gid(f"{design}-value-{key}-{flow}")
            for op, limit in budgets.get(flow, {}).get(key, {}).items():
                b = ax.axhline(limit, color=style.get("color", "gray"), ls=":", lw=1.2,
                               label=f"budget, {flow} flow (design.yaml)")
                b.set_gid(f"{design}-budget-{key}-{flow}-{op}")
                ax.annotate(f"{flow} budget {_OP_TEXT.get(op, op)} {limit:,g}", (0, limit),
                            xycoords=("axes fraction", "data"), textcoords="offset points", xytext=(2, 2),
                            fontsize=7, color=style.get("color", "gray"))
                marks.append(float(limit))
        apart = [(x_of[e.commit], e.value(key)) for e in unverified if e.value(key) is not None]
        if apart:
            plot_unverified(ax, apart, f"{design}-unverified-{key}")
            values += [p[1] for p in apart]
        if key == "wns_ns":
            z = ax.axhline(0, color="red", lw=0.8, label="WNS 0: timing fails below")
            z.set_gid(f"{design}-budget-wns_ns-zero")
            marks.append(0.0)
        ylim = _limits(values, marks, key) if values else None
        if ylim:
            ax.set_ylim(*ylim)
        if len(commits) == 1:
            ax.set_xlim(-1, 1)
        else:  # room beside the end points for their labels
            ax.set_xlim(-0.5, len(commits) - 0.5)
        lo, hi = ax.get_ylim()  # room above the top point for its label
        ax.set_ylim(lo, hi + 0.12 * (hi - lo))
        ax.set_title(label, fontsize=10)
        ax.set_xticks(range(len(commits)), [c[:7] + ("*" if c.endswith("-dirty") else "")
                                            + ("" if c in trusted_commits else "?") for c in commits],
                      rotation=45, fontsize=7)
    handles, labels = legend_entries(axes)
    if handles:
        fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 4), fontsize=8, frameon=False)
    # A '$' would start matplotlib's math text (history passes valid design names only; this is for any caller).
    marks = "* = dirty tree; ? = unverified only; " if unverified else "* = dirty tree; "
    negative = " - a negative example: its gate is expected to FAIL" if expect_fail else ""
    fig.suptitle(f"{design.replace('$', chr(92) + '$')}: metrics over commits (git order; {marks}dotted: budgets)"
                 f"{negative}", fontsize=11)
    fig.tight_layout(rect=(0, 0.12, 1, 0.95))
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def inline_svg(path: Path, css_class: str = "plot") -> str:
    """The SVG file as an element to put in HTML (XML prolog and DOCTYPE dropped)."""
    text = Path(path).read_text()
    start = text.index("<svg")
    return f'<svg class="{css_class}" ' + text[start + len("<svg "):]

