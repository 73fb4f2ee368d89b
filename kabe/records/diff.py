"""`kabe diff [A] [B]`: what one commit changed in every design's metrics, as a Markdown table
ready for a pull-request comment. B defaults to the newest archived commit, A to B's parent."""

from __future__ import annotations

from pathlib import Path

from kabe.records import history
from kabe.records.load import Invalid
from kabe.paths import CORES, REPORTS, ROOT

_MAX_LISTED_INVALID = 20


def _fmt(v, metric: str = "") -> str:
    if v is None:
        return "-"
    if metric.endswith("_ns"):
        return f"{v:+.3f}"
    return f"{v:,}" if isinstance(v, int) else f"{v:,g}"


def _delta(a, b) -> str:
    if a is None or b is None:
        return "-"
    d = b - a
    if d == 0:
        return "0"
    pct = f" ({d / abs(a):+.1%})" if a else ""
    return (f"{d:+.3f}" if isinstance(d, float) else f"{d:+,}") + pct


def _short(archive_name: str) -> str:
    """sha or sha-dirty, shortened; a dirty build is never shown as its clean commit."""
    return archive_name[:12] + ("-dirty" if archive_name.endswith("-dirty") else "")


def resolve(commit: str | None, entries: list[history.Entry]) -> str | None:
    if commit is None:
        return entries[-1].commit if entries else None
    matches = sorted({e.commit for e in entries if e.commit.startswith(commit) or e.sha.startswith(commit)})
    return matches[0] if matches else commit


def _md(text: str, limit: int = 200) -> str:
    """Text from disk (folder names, reasons) made safe for one Markdown table-free line."""
    text = "".join(c if c.isprintable() else "?" for c in text).replace("`", "'").replace("|", "\\|")
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _invalid_lines(invalid: list[Invalid], commits: set[str], reports_root: Path) -> list[str]:
    """The records of the compared commits that failed validation (never silently left out), and a
    count of the others."""
    shown = [i for i in invalid if not commits or i.path.relative_to(reports_root).parts[0] in commits]
    others = len(invalid) - len(shown)
    if not shown and not others:
        return []
    lines = ["", "Archived records that failed validation (not compared; the verdict of a record kabe cannot "
                 "check is never shown):"]
    lines += [f"- `{_md(str(i.path.relative_to(reports_root)))}`: {_md(i.reason, 300)}"
              for i in shown[:_MAX_LISTED_INVALID]]
    if len(shown) > _MAX_LISTED_INVALID:
        lines.append(f"- ... and {len(shown) - _MAX_LISTED_INVALID} more")
    if others:
        lines.append(f"- {others} record(s) of other commits failed validation too (`doit report` lists them)")
    return lines


def render(a: str | None, b: str | None, reports_root: Path = REPORTS, root: Path = ROOT,
           cores_root: Path = CORES) -> str:
    """B defaults to the newest archived commit. A defaults, per design and flow, to the nearest
    earlier archived build in git order (usually B's parent; further back when the parent was not built).
    Every record is validated and its verdict recomputed (kabe.records.load); the invalid ones are listed."""
    scanned = history.scan(reports_root, root, cores_root)
    entries = scanned.entries
    b = resolve(b, entries)
    if b is None:
        return "\n".join(["kabe diff: no valid archived builds under reports/ yet; run `doit build:<design>` first",
                          *_invalid_lines(scanned.invalid, set(), Path(reports_root))]) + "\n"
    after = {(e.design, e.flow): e for e in entries if e.commit == b}
    if a is not None:
        a = resolve(a, entries)
        before = {(e.design, e.flow): e for e in entries if e.commit == a}
        title = _short(a)
    else:
        position = {id(e): i for i, e in enumerate(entries)}
        before = {}
        for key, new in after.items():
            earlier = [e for e in entries[: position[id(new)]] if (e.design, e.flow) == key and e.commit != b]
            if earlier:
                before[key] = earlier[-1]
        title = "the previous archived build of each design"
    lines = [f"### kabe: {_short(b)} vs {title}", ""]
    if not after:
        return "\n".join(lines + [f"No valid archived builds for {_md(b)}.",
                                   *_invalid_lines(scanned.invalid, {b}, Path(reports_root)), ""])
    lines += ["| design | flow | metric | before | after | delta | |", "|---|---|---|---|---|---|---|"]
    for key in sorted(after):
        new, old = after[key], before.get(key)
        failed_budgets = {c["name"].split(".", 1)[1] for c in new.verdict.checks  # recomputed, not recorded
                          if not c["passed"] and c["name"].startswith("budget.")}
        for metric, label in history.METRICS:
            nv, ov = new.value(metric), old.value(metric) if old else None
            flag = ""
            if metric in failed_budgets:
                flag = "**budget breached**"
            elif metric == "wns_ns" and nv is not None and nv < 0:
                flag = "**timing fails**"
            if metric == "wns_ns" and new.record["timing"].get("estimated"):
                label = "WNS ns (estimate)"
            cells = [key[0], key[1], label, _fmt(ov, metric), _fmt(nv, metric), _delta(ov, nv), flag]
            lines.append("| " + " | ".join(cells) + " |")
        verdict = "pass" if new.passed else "FAIL"
        was = ("pass" if old.passed else "FAIL") if old else "-"
        lines.append(f"| {key[0]} | {key[1]} | gate | {was} | {verdict} |  | {'**gate fails**' if verdict == 'FAIL' else ''} |")
    if a is None and before:
        lines += ["", "Compared with: " + ", ".join(f"{k[0]} {_short(e.commit)}" for k, e in sorted(before.items()))]
    compared = {b} | ({a} if a else set()) | {e.commit for e in before.values()}
    lines += _invalid_lines(scanned.invalid, compared, Path(reports_root))
    return "\n".join(lines) + "\n"
