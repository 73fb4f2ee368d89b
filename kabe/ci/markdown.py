"""The Markdown `kabe ci` writes for a pull request: the verdict per design, the deltas against the
base commit with every breach marked, and what could not be judged (a missing baseline), said plainly."""

from __future__ import annotations

from kabe.records.history import METRICS
from kabe.records.numbers import delta as _delta, value as _fmt
from kabe.rules.regressions import metric_value

from kabe.ci.design_result import DesignOutcome


def _metrics_of(o: DesignOutcome) -> list[tuple[str, str]]:
    """The usual table rows, then any metric a regression rule names that the table lacks."""
    rows = list(METRICS)
    known = {m for m, _ in rows}
    for check in o.judgement.checks:
        metric = check.name.split(".")[1]
        if metric not in known:
            rows.append((metric, metric))
            known.add(metric)
    return rows


def _flags(o: DesignOutcome, metric: str) -> str:
    flags = []
    checks = o.verdict.checks if o.verdict else []
    if any(not c["passed"] and c["name"] == f"budget.{metric}" for c in checks):
        flags.append("**budget breached**")
    if any(not c.passed and c.name.split(".")[1] == metric for c in o.judgement.checks):
        flags.append("**regression**")
    value = metric_value(o.record, metric)
    if metric == "wns_ns" and (value is None or value < 0):
        flags.append("**timing fails**")
    return " ".join(flags)


def _rules(o: DesignOutcome, metric: str) -> str:
    return "; ".join(c.expected.split(" vs base")[0] for c in o.judgement.checks if c.name.split(".")[1] == metric)


def render(outcomes: list[DesignOutcome], head: str, branch: str | None, base: str | None, base_how: str) -> str:
    title = f"## kabe ci: {head[:12]}" + (f" on {branch}" if branch else "")
    lines = [title, ""]
    if base:
        lines.append(f"Base: `{base[:12]}`, {base_how}.")
    else:
        lines.append(f"**No base commit** ({base_how}): regressions were not judged.")
    failed = [o for o in outcomes if not o.ok]
    lines += ["", f"**{len(failed)} of {len(outcomes)} design(s) failed**" if failed
              else f"All {len(outcomes)} design(s) "
                   f"{'did what design.yaml expects' if any(o.not_estimated for o in outcomes) else 'passed'}.", "",
              "| design | flow | result | WNS ns | why |", "|---|---|---|---|---|"]
    for o in outcomes:
        result = o.status if o.ok else f"**{o.status}**"
        why = "<br>".join(r.replace("|", "\\|") for r in o.reasons()) or ("archived build reused" if o.reused else "")
        lines.append(f"| {o.design} | {o.flow} | {result} | {_fmt(o.wns(), 'wns_ns')} | {why} |")

    lines += ["", "### Against the base", "",
              "| design | flow | metric | base | this | delta | regression rule | |", "|---|---|---|---|---|---|---|---|"]
    for o in outcomes:
        if o.record is None:
            continue
        for metric, label in _metrics_of(o):
            if metric == "wns_ns" and o.record["timing"].get("estimated"):
                label = "WNS ns (estimate)"
            old = metric_value(o.base_record, metric) if o.base_record else None
            new = metric_value(o.record, metric)
            lines.append(f"| {o.design} | {o.flow} | {label} | {_fmt(old, metric)} | {_fmt(new, metric)} | "
                         f"{_delta(old, new, metric)} | {_rules(o, metric)} | {_flags(o, metric)} |")
    notes = [n for o in outcomes for n in o.judgement.notes]
    if notes:
        lines += ["", "### Not judged", ""] + [f"- {n}" for n in notes]
    return "\n".join(lines) + "\n"
