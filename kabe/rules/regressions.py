"""Regressions: how much worse than its base commit a design may get, as data beside the design.

    regressions:                      # design.yaml
      lut: {max_increase_pct: 5}      # at most 5 % more LUTs than the base commit's build
      wns_ns: {max_decrease: 0.2}     # WNS may drop by at most 0.2 ns
      dsp: {max_increase: 0}          # not one DSP48E1 more

Budgets are absolute (kabe.rules.gate); regressions are relative to the base commit's archived metrics
of the same design and flow, so an estimate is never compared with a sign-off number. Every rule
yields a kabe.rules.gate.Check, so a regression sits in the same verdict as the gate's own checks.

A base with no archived build is no baseline: compare() then returns no check and a note that says
so. It is neither a pass nor a failure, and the caller must show the note. A value missing from
*this* build fails its rule (it cannot be judged, and the gate never passes what it cannot judge).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping

from kabe.project.designs import REGRESSION_OPS
from kabe.rules.gate import Check

# Float noise (0.1 + 0.2 style) must not turn an allowed 0.2 ns drop into a failure.
_EPS = 1e-9


# An estimate's WNS is held at 0 where the high-fanout term fills a path's slack (kabe.timing.report.fill_fields),
# so a change that eats slack under the fill moves nothing there: a wns_ns rule also compares the WNS
# without the fill, when both builds have it (issue 44), and fails when either drops past its limit (the
# reported one still catches a new fill). One build without it (archived before it was recorded, or
# sign-off timing) is compared as before, wns_ns with wns_ns, never one kind with the other.
UNCAPPED = {"wns_ns": "wns_uncapped_ns"}


def compared_metric(metric: str, record: Mapping[str, Any], base_record: Mapping[str, Any]) -> str:
    """The key a rule on `metric` also compares: its uncapped twin when both records have it, else itself."""
    twin = UNCAPPED.get(metric)
    if twin is not None and all(isinstance((r.get("timing") or {}).get(twin), (int, float)) for r in (record, base_record)):
        return twin
    return metric


def metric_value(record: Mapping[str, Any], metric: str):
    """A metric by name from a metrics record: timing keys (wns_ns, whs_ns, ...) or utilization keys."""
    timing, utilization = record.get("timing") or {}, record.get("utilization") or {}
    if metric in timing:
        return timing.get(metric)
    return utilization.get(metric)


def _num(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, float) and not v.is_integer():
        return f"{v:.3f}"
    return f"{int(v):,}" if isinstance(v, (int, float)) else str(v)


@dataclass(frozen=True)
class Regression:
    """One rule, e.g. Regression("lut", "max_increase_pct", 5)."""

    metric: str
    op: str
    limit: float

    def __post_init__(self):
        if self.op not in REGRESSION_OPS:
            raise ValueError(f"regression rule {self.op!r} for {self.metric} unknown; use one of {', '.join(REGRESSION_OPS)}")

    @property
    def worse_is_up(self) -> bool:
        return self.op.startswith("max_increase")

    @property
    def in_percent(self) -> bool:
        return self.op.endswith("_pct")

    def describe(self) -> str:
        return f"{'increase' if self.worse_is_up else 'decrease'} <= {self.limit:g}{'%' if self.in_percent else ''}"

    def change(self, base: float, value: float) -> float:
        """How much worse `value` is than `base`, in the rule's unit (absolute or percent)."""
        worse = (value - base) if self.worse_is_up else (base - value)
        if not self.in_percent:
            return worse
        if base == 0:
            return 0.0 if worse <= 0 else math.inf
        return worse / abs(base) * 100.0

    def check(self, design: str, base_commit: str, base_value, value, compared: str | None = None) -> Check:
        """`compared`: the record key the values come from when it is not the rule's metric (UNCAPPED)."""
        name = f"regression.{self.metric}.{self.op}" + ("" if compared in (None, self.metric) else f".{compared}")
        short = base_commit[:12]
        what = "" if compared in (None, self.metric) else f" without the high-fanout fill ({compared})"
        expected = f"{self.describe()} vs base {short}{what} ({_num(base_value)})"
        if value is None:
            return Check(name, expected, None, False,
                         f"regression {design} {self.metric}: this build has no {self.metric}, so the rule "
                         f"'{self.describe()}' vs base {short} cannot be judged")
        change = self.change(base_value, value)
        ok = change <= self.limit + _EPS
        if ok:
            return Check(name, expected, value, True)
        pct = f", {(value - base_value) / abs(base_value):+.1%}" if base_value else " (base was 0)"
        delta = value - base_value
        return Check(name, expected, value, False,
                     f"regression: {design} {self.metric}{what} {_num(base_value)} at base {short} -> {_num(value)} here "
                     f"({'+' if delta >= 0 else ''}{_num(delta)}{pct}); allowed: {self.describe()}")


def rules_from_mapping(spec: Mapping[str, Mapping[str, float]] | None) -> list[Regression]:
    """design.yaml's `regressions:` as Regression rules (kabe.project.designs has validated the shape)."""
    return [Regression(str(metric), op, float(limit)) for metric, rules in (spec or {}).items()
            for op, limit in rules.items()]


@dataclass
class Judgement:
    """The regression checks for one build, and what could not be judged (said, never hidden)."""

    checks: list[Check] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    baseline: bool = False  # True when a base build was found and compared

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.checks)


def compare(design: str, rules: list[Regression], record: Mapping[str, Any], base_commit: str | None,
          base_record: Mapping[str, Any] | None) -> Judgement:
    """Every rule against the base build. No base commit or no base build: no checks, one note."""
    out = Judgement()
    if not rules:
        return out
    flow = record.get("flow", "?")
    if base_commit is None:
        out.notes.append(f"{design} ({flow}): no base commit to compare with, so its regression rules were not judged")
        return out
    if base_record is None:
        out.notes.append(f"{design} ({flow}): no archived build at base {base_commit[:12]}, so its regression rules "
                         f"were not judged (neither pass nor fail); a build pushed from the base branch makes one")
        return out
    out.baseline = True
    for rule in rules:
        base_value = metric_value(base_record, rule.metric)
        if base_value is None:
            out.notes.append(f"{design} ({flow}): the base build at {base_commit[:12]} has no {rule.metric}, so "
                             f"'{rule.metric}: {rule.describe()}' was not judged")
            continue
        out.checks.append(rule.check(design, base_commit, base_value, metric_value(record, rule.metric)))
        key = compared_metric(rule.metric, record, base_record)
        if key != rule.metric:
            out.checks.append(rule.check(design, base_commit, metric_value(base_record, key),
                                         metric_value(record, key), key))
    return out


def combined_verdict(gate_verdict: Mapping[str, Any], judgement: Judgement) -> dict:
    """The build's gate verdict (as archived) with the regression checks added, in the same shape."""
    checks = list(gate_verdict.get("checks", [])) + [
        {"name": c.name, "expected": c.expected, "got": c.got, "passed": c.passed} for c in judgement.checks]
    failures = list(gate_verdict.get("failures", [])) + [c.message or c.line() for c in judgement.checks if not c.passed]
    passed = gate_verdict.get("passed") is True and judgement.passed
    # "not estimated" (no timing number, kabe.rules.gate) survives only where nothing failed, the regressions included
    not_estimated = gate_verdict.get("status") == "not_estimated" and not failures and not passed
    return {"passed": passed, "failures": failures, "checks": checks,
            "status": "pass" if passed else "not_estimated" if not_estimated else "fail",
            "not_estimated": gate_verdict.get("not_estimated") if not_estimated else None,
            "unverified": gate_verdict.get("unverified")}  # shown beside the verdict (kabe.rules.verdict)
