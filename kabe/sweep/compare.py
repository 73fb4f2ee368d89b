"""`kabe sweep <design> --diff A B`: metric deltas between two archived variants, as Markdown.

A and B are variant ids (or unique prefixes) under reports/<commit>/<design>/sweep-<flow>/; the newest
commit's sweep that holds them is used. Every record is validated and re-gated the way the report page
and `kabe diff` do it (kabe.records.load): the verdict shown is recomputed, never read.
"""

from __future__ import annotations

import json
from pathlib import Path

from kabe.base.paths import CORES, REPORTS, ROOT
from kabe.records import history, load, numbers, verdict_kind
from kabe.sweep.spec import SweepError
from kabe.project import designs, flows as flow_registry


def _find(design: str, flow: str, prefix: str, reports_root: Path, root: Path) -> Path:
    order = {sha: i for i, sha in enumerate(history.git_order(root))}
    hits = [p for p in Path(reports_root).glob(f"*/{design}/sweep-{flow}/*/metrics.json")
            if p.parent.name.startswith(prefix)]
    if not hits:
        raise SweepError(f"no archived variant {prefix[:20]} of {design} ({flow} flow) under {reports_root}; "
                         f"`kabe sweep {design}` archives them")
    ids = {p.parent.name for p in hits}
    if len(ids) > 1:
        raise SweepError(f"variant prefix {prefix[:20]} is ambiguous: {', '.join(sorted(ids))}")
    # newest commit first: git order where known, else the folder's time
    return max(hits, key=lambda p: (order.get(p.parents[3].name.removesuffix("-dirty"), -1), p.stat().st_mtime))


def render(design: str, a: str, b: str, flow: str = flow_registry.DEFAULT, reports_root: Path = REPORTS, root: Path = ROOT,
           cores_root: Path = CORES) -> str:
    rows = []
    for prefix in (a, b):
        path = _find(design, flow, prefix, reports_root, root)
        where = (path.parents[3].name, design, flow)  # the variant's record belongs to this commit, design, flow
        c = load.checked(path, cores_root=cores_root, where=where)
        if isinstance(c, load.Invalid):
            raise SweepError(f"{path}: not a valid record ({c.reason})")
        rows.append(c)
    (ca, cb) = rows
    va, vb = ca.record.get("variant") or {}, cb.record.get("variant") or {}
    lines = [f"### kabe: {design} variant {vb.get('id')} vs {va.get('id')} ({flow} flow)", "",
             f"- A `{va.get('id')}`: {json.dumps(va.get('settings'), sort_keys=True)}",
             f"- B `{vb.get('id')}`: {json.dumps(vb.get('settings'), sort_keys=True)}", "",
             "| metric | A | B | delta |", "|---|---|---|---|"]
    ea, eb = (history.Entry(c.path.parents[3].name, design, flow, c.record, c.verdict) for c in (ca, cb))
    for metric, label in history.METRICS:
        x, y = ea.value(metric), eb.value(metric)
        lines.append(f"| {label} | {numbers.value(x, metric)} | {numbers.value(y, metric)} | {numbers.delta(x, y, metric)} |")
    # the page's and kabe diff's words for the verdict (a variant not estimated is neither pass nor fail)
    expect = designs.get(design, cores_root).expect_gate
    words = [verdict_kind.WORDS[verdict_kind.kind(e, expect)] for e in (ea, eb)]
    lines.append(f"| gate | {words[0]} | {words[1]} | |")
    return "\n".join(lines) + "\n"
