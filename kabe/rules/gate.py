"""The gate: the one rules module. Pass/fail conditions as data, checked against records only.

Every way kabe judges a build or a report goes through `evaluate` here: `doit build`, `kabe gate
metrics.json`, `kabe gate <timing report>` and its JUnit output. The rules are the tables below
(SLACK_RULES, CHECK_KIND_RULES, the verdict table, budgets from design.yaml, waivers); each
yields Checks that say what was checked, what was expected and what was found, so a failing
build prints one clear sentence per reason.

Anything the gate cannot verify counts as a failure: a missing timing record, no clock, a slack
that is absent where the flow must report it, a verdict line that is missing or disagrees with
the numbers, registers with no clock (unless design.yaml waives it with a written reason), a
second source that disagrees with the report. Never a silent pass.

A verdict has three outcomes (Verdict.status): pass, fail, and "not_estimated": the open flow on a
board whose fabric kabe's pre-route model was not fitted on (its profile's `open_flow.timing:
not_estimated`, the V80) gives no timing number, so the gate cannot say pass; every other check
still holds, and any failure makes it a fail. `passed` is True for a pass only: a reader that
knows two outcomes sees "not passed", never a pass without a timing number (docs/boards.md).
"""

from __future__ import annotations

import operator
import re
from dataclasses import asdict, dataclass, field
from typing import Any, Iterable, Mapping

from kabe.base import rtl_path
from kabe.project.designs import WAIVABLE

_OPS = {"eq": (operator.eq, "=="), "lt": (operator.lt, "<"), "le": (operator.le, "<="),
        "gt": (operator.gt, ">"), "ge": (operator.ge, ">=")}
_UPPER_BOUNDS = ("eq", "lt", "le")  # the budgets an undercount could pass falsely

# The verdict lines a report_timing_summary prints under its Design Timing Summary, and what each
# means; any other line is "unknown" and fails. (kabe.parsers.vivado_timing_summary reads them from here.)
VERDICT_MET = "All user specified timing constraints are met."
VERDICT_NOT_MET = "Timing constraints are not met."
VERDICT_NONE = "There are no user specified timing constraints."
VERDICTS = {VERDICT_MET: "met", VERDICT_NOT_MET: "not_met", VERDICT_NONE: "unconstrained"}

# Verdict.status values; designs.GATE_EXPECTATIONS names the same three
PASS, FAIL, NOT_ESTIMATED = "pass", "fail", "not_estimated"
# what only a timed record carries (slacks, paths, a report's verdict and findings): a record that
# says it is not estimated has none of them, else it contradicts itself (and would skip their checks)
_TIMING_NUMBERS = ("wns_ns", "tns_ns", "whs_ns", "ths_ns", "wpws_ns", "tpws_ns", "critical_path",
                   "failing_endpoints", "worst_slack_by_check", "verdict_line", "untimed_cells", "no_clock",
                   "unconstrained_endpoints", "clock_interaction", "second_source", "check_timing")

MIN_SLACK_NS = 0.0  # a slack passes when >= this, compared exactly as the report states it
AGREE_NS = 0.0015  # the report prints 3 decimals; the second source carries Vivado's own value


@dataclass(frozen=True)
class SlackRule:
    """A slack in the timing record that must be >= MIN_SLACK_NS."""

    name: str  # check name
    key: str  # timing record key
    abbr: str  # Vivado's name for it
    what: str  # the check it sums up
    signoff_only: bool  # the open flow's estimate cannot know it (hold, pulse width)


SLACK_RULES = (
    SlackRule("timing.wns", "wns_ns", "WNS", "setup", False),
    SlackRule("timing.whs", "whs_ns", "WHS", "hold", True),
    SlackRule("timing.wpws", "wpws_ns", "WPWS", "pulse width", True),
)
# Asynchronous set/reset checks, read from the report's paths as their own kinds
CHECK_KIND_RULES = (("timing.recovery", "recovery"), ("timing.removal", "removal"))
# budget metrics read from the timing record rather than the utilization record
TIMING_METRICS = ("logic_levels",)


@dataclass(frozen=True)
class Check:
    name: str
    expected: str
    got: Any
    passed: bool
    message: str = ""  # the sentence printed when it fails

    def line(self) -> str:
        mark = "PASS" if self.passed else "FAIL"
        return f"{mark} {self.name}: expected {self.expected}, got {self.got}"


@dataclass(frozen=True)
class Budget:
    """A limit declared beside its design, e.g. Budget("dsp", "eq", 0), Budget("logic_levels", "le", 9)."""

    metric: str
    op: str
    limit: float

    def __post_init__(self):
        if self.op not in _OPS:
            raise ValueError(f"budget op {self.op!r} for {self.metric} unknown; use one of {', '.join(_OPS)}")

    def check(self, values: Mapping[str, Any], uncounted_waiver: str | None = None) -> Check:
        """values: the utilization record and timing_metrics. Its `uncounted` cells (a black box,
        logic Yosys left unmapped: kabe.parsers.yosys_stat) may hold any resource, so a count is a
        lower bound: an upper bound (==, <, <=) on it cannot be checked, and fails unless the
        design waives `uncounted_cells` with a reason; a lower bound (>, >=) still can."""
        fn, sym = _OPS[self.op]
        name = f"budget.{self.metric}"
        got = values.get(self.metric)
        if got is None:
            return Check(name, f"{sym} {self.limit:g}", None, False,
                         f"budget {self.metric} {sym} {self.limit:g} cannot be checked: the reports give no '{self.metric}'")
        if not _is_number(got):  # a table or a sentence (uncounted, proxy)
            return Check(name, f"{sym} {self.limit:g}", None, False,
                         f"budget {self.metric} {sym} {self.limit:g} cannot be checked: the reports give no number for "
                         f"'{self.metric}'")
        ok = bool(fn(got, self.limit))
        unc = values.get("uncounted") if self.metric not in TIMING_METRICS and self.op in _UPPER_BOUNDS else None
        if ok and isinstance(unc, Mapping) and unc:
            cells = ", ".join(f"{str(n)[:12]} x {str(t)[:60]}" for t, n in list(unc.items())[:5]) \
                + (", ..." if len(unc) > 5 else "")
            if uncounted_waiver:
                return Check(name, f"{sym} {self.limit:g}", f"{got} + uncounted cells (waived: {uncounted_waiver})", True)
            return Check(name, f"{sym} {self.limit:g}", f"{got} + uncounted cells", False,
                         f"budget {self.metric} {sym} {self.limit:g} cannot be checked: {got} counted, but the netlist "
                         f"also has cells kabe does not count ({cells}): a black box or logic synthesis left "
                         f"unmapped may use {self.metric} too; map them, or waive it in design.yaml: "
                         f"waivers: {{uncounted_cells: \"<why>\"}}")
        return Check(name, f"{sym} {self.limit:g}", got, ok,
                     "" if ok else f"budget exceeded: {self.metric} = {got} (must be {sym} {self.limit:g})")


def budgets_from_mapping(spec: Mapping[str, Mapping[str, float]] | None) -> list[Budget]:
    """design.yaml's `budgets: {dsp: {eq: 0}, lut: {lt: 12000}, logic_levels: {le: 9}}` as Budget rules."""
    out = []
    for metric, conds in (spec or {}).items():
        if not isinstance(conds, Mapping):
            raise ValueError(f"budget for {metric!r} must be a mapping like {{lt: 12000}}, got {conds!r}")
        for op, limit in conds.items():
            out.append(Budget(metric, op, float(limit)))
    return out


def timing_metrics(timing: Mapping[str, Any] | None) -> dict[str, Any]:
    """Budgetable numbers from the timing record. logic_levels: Vivado's logic-level
    distribution (deepest level with a path in it) when the flow collected it, else the critical
    path's logic levels (the open flow's estimate). A distribution whose deepest bin is open
    ("16+") gives no number: the budget then fails as uncheckable."""
    t = timing or {}
    dist = t.get("logic_level_distribution")
    if dist:
        levels = dist.get("max_logic_levels") if dist.get("max_exact", True) else None
    else:
        levels = (t.get("critical_path") or {}).get("logic_levels")
    return {"logic_levels": levels}


@dataclass(frozen=True)
class TimingRules:
    """Timing conditions. Hold and pulse width are required from sign-off flows (not estimates).

    Unconstrained endpoints are reported but do not fail by default: a Zynq design always has
    some (PS7 pins, asynchronous resets), and Vivado itself calls the design met. Set
    [tool.kabe] fail_on_unconstrained = true to make them fail. Registers with no clock fail
    unless waived (design.yaml `waivers: {no_clock: "why"}`).
    """

    fail_on_unconstrained: bool = False

    @classmethod
    def from_config(cls) -> "TimingRules":
        from kabe.project import config

        return cls(fail_on_unconstrained=config.value(config.load(), "fail_on_unconstrained"))  # typed there

    def check(self, timing: Mapping[str, Any] | None, waivers: Mapping[str, str] | None = None) -> list[Check]:
        if not timing:
            return [Check("timing.report", "a parsed timing report", None, False,
                          "timing gate: no timing report was produced or it could not be read")]
        if timing.get("error"):  # the flow could not produce or read its report: say why, nothing else
            return [Check("timing.report", "a timing record without an error", str(timing["error"])[:120], False,
                          f"timing gate: {timing['error']}")]
        estimated = bool(timing.get("estimated"))
        clocks = timing.get("clocks") or []
        checks = [Check("timing.clocks", ">= 1 constrained clock", len(clocks), bool(clocks),
                        "timing gate: no clock is constrained, so no path was timed; add create_clock to the design's XDC")]
        if "not_estimated" in timing:  # no timing number by design: only what such a record must be is checked
            return checks + _not_estimated_checks(timing)
        checks += _slacks(timing, estimated)
        if all(c.passed for c in checks):  # a failing slack already fails; else nothing may contradict it
            checks += _contradictions(timing)
        worst = timing.get("worst_slack_by_check") or {}
        for name, kind in CHECK_KIND_RULES:
            if worst.get(kind) is not None:
                v = worst[kind]
                checks.append(Check(name, f">= {MIN_SLACK_NS:g} ns", v, v >= MIN_SLACK_NS,
                                    f"timing gate: {kind} violation (asynchronous set/reset), worst slack {v:+.3f} ns"))
        untimed = timing.get("untimed_cells") or {}
        if untimed:  # a path through a cell without a delay model is cut: the estimate is optimistic
            kinds = ", ".join(f"{t} x{n}" for t, n in sorted(untimed.items()))
            latches = sorted(t for t in untimed if t in _LATCH_CELLS)
            fix = (f"{'/'.join(latches)} is a latch Yosys inferred from a combinational always block that does "
                   f"not assign a signal in every branch: assign it in every branch (or a default first), or "
                   f"clock it" if latches else "the open flow's estimate has no model of them (a dividing BUFR, an MMCM, "
                   f"a SERDES): build with flow=vivado, which times every cell, or give the design a version "
                   f"without them for the open flow")
            checks.append(Check("timing.untimed_cells", "every cell timed", kinds, False,
                                f"timing gate: the estimate has no delay model for {kinds}, so paths through them "
                                f"were not timed; {fix}"))
        if timing.get("verdict_line") is not None or not estimated:
            checks.append(_verdict_check(timing))
        checks += _whole_file(timing)
        checks += _unclocked(timing, estimated, waivers or {})
        unconstrained = timing.get("unconstrained_endpoints")
        if unconstrained:
            fail = self.fail_on_unconstrained
            fix = ("the open flow's estimate times register to register only (it reads no set_input_delay or "
                   "set_output_delay): time them with flow=vivado" if estimated else "constrain them")
            checks.append(Check("timing.unconstrained", "0 unconstrained endpoints" if fail else "reported only",
                                unconstrained, not fail,
                                f"timing gate: {unconstrained} endpoints are unconstrained (not timed); {fix}, "
                                f"or set [tool.kabe] fail_on_unconstrained = false"))
        undeclared = [c for c in timing.get("clock_interaction") or []
                      if isinstance(c, Mapping) and "undeclared" in str(c.get("type", "")).lower()]
        if undeclared:
            pairs = ", ".join(f"{c.get('from')} -> {c.get('to')}" for c in undeclared[:4]) + (
                f" and {len(undeclared) - 4} more" if len(undeclared) > 4 else "")
            checks.append(Check(
                "timing.clock_crossings", "every clock crossing declared in the XDC", pairs, False,
                f"timing gate: clock crossing(s) {pairs} are not timed by the estimate, and the XDC declares "
                f"none (no set_clock_groups, set_false_path or set_max_delay): Vivado would time them as unsafe "
                f"crossings of unrelated clocks. Fix: cross through a synchronizer and declare it "
                f"(set_clock_groups -asynchronous -group <clock> -group <clock>), or time it with flow=vivado"))
        unsafe = [c for c in timing.get("clock_interaction") or []
                  if c.get("unsafe") or "unsafe" in str(c.get("type", "")).lower()]
        if unsafe:
            pairs = ", ".join(f"{c.get('from')} -> {c.get('to')}" for c in unsafe)
            checks.append(Check("timing.clock_interaction", "no unsafe clock crossings", pairs, False,
                                f"timing gate: unsafe clock interaction {pairs}"))
        if "second_source" in timing:
            checks.append(_second_source(timing))
        return checks


# Xilinx latch primitives (an inferred latch is almost always a missing else/default, not intent)
_LATCH_CELLS = frozenset({"LDCE", "LDPE", "LDC", "LDP", "$_DLATCH_P_", "$_DLATCH_N_", "$dlatch"})

# What a clock table or a path shows when a kind of check was timed: a summary row without a slack
# over any of these numbers (a slack, or a count of endpoints above 0) contradicts itself.
_TIMED_BY_KEY = {
    "wns_ns": ("wns_ns", "whs_ns", "total_endpoints", "hold_total_endpoints"),
    "whs_ns": ("wns_ns", "whs_ns", "total_endpoints", "hold_total_endpoints"),
    "wpws_ns": ("wpws_ns", "pw_total_endpoints"),
}
# The summary's companions of a slack that has no number: Vivado prints them NA (with an NA slack) or
# 0 / 0.000 (with an inf slack, 2023.2 and later); either way they say "no endpoint", and any other
# number beside a missing slack is a report that contradicts itself.
_EMPTY_WITH = {
    "wns_ns": ("tns_ns", "failing_endpoints", "total_endpoints", "ths_ns", "hold_failing_endpoints",
               "hold_total_endpoints"),
    "wpws_ns": ("tpws_ns", "pw_failing_endpoints", "pw_total_endpoints"),
}
_EMPTY_WITH["whs_ns"] = _EMPTY_WITH["wns_ns"]
_EMPTY_WITH["wpws_ns"] = _EMPTY_WITH["wns_ns"] + _EMPTY_WITH["wpws_ns"]
# Those companions as the Design Timing Summary's columns name them, and the ones of each slack's own
# check (a missing WHS is said beside THS Total Endpoints before TNS's)
_OWN_COLUMNS = {"wns_ns": ("tns", "failing", "total"), "whs_ns": ("ths", "hold_"), "wpws_ns": ("tpws", "pw_")}
_COLUMN = {"tns_ns": "TNS", "failing_endpoints": "TNS Failing Endpoints", "total_endpoints": "TNS Total Endpoints",
           "ths_ns": "THS", "hold_failing_endpoints": "THS Failing Endpoints", "hold_total_endpoints": "THS Total Endpoints",
           "tpws_ns": "TPWS", "pw_failing_endpoints": "TPWS Failing Endpoints", "pw_total_endpoints": "TPWS Total Endpoints"}


def _has_number(row: Mapping[str, Any], key: str) -> bool:
    v = row.get(key)
    return v is not None and (key.endswith("_ns") or v != 0)


def _no_endpoints(timing: Mapping[str, Any], key: str) -> tuple[bool, str]:
    """(nothing to time, why) for a sign-off report whose `key` slack has no number (NA, or inf
    over 0 endpoints: one fact, one rule) for want of endpoints under Vivado's verdict "met": setup
    and hold in a PS-only block design (whose PS clock still has a pulse width), all three where a
    clock drives nothing. That passes only when check_timing shows no register without a clock and
    no unconstrained endpoint, and no clock table or path has a number the summary row lacks;
    otherwise a missing slack means "not timed"."""
    if timing.get("estimated") and timing.get("clocks") and timing.get("total_endpoints") == 0:
        return False, ("the open flow's estimate found no register-to-register path on any clock: it times "
                       "nothing else (no path from an input port or to an output port), so nothing was timed; "
                       "time the design's I/O paths with flow=vivado")
    counted = [(k, timing.get(k)) for k in _EMPTY_WITH[key] if timing.get(k) not in (None, 0)]
    if counted and not timing.get("estimated"):
        # a whole report can say so: inf over endpoints no timed path reaches (a switch-to-LED design
        # with a clock and no I/O delays); a cut or garbled one is refused by the parser before this
        k, v = min(counted, key=lambda kv: not kv[0].startswith(_OWN_COLUMNS[key]))  # its own columns first
        return False, (f"the Design Timing Summary prints {key.removesuffix('_ns').upper()} "
                       f"{_printed_as(timing, key)} (no number) but counts {_COLUMN.get(k, k)} {v}: Vivado has "
                       f"endpoints it timed no path to, so they were not timed ({_check_timing_says(timing)})")
    if (timing.get("estimated") or counted
            or not timing.get("clocks") or VERDICTS.get(timing.get("verdict_line") or "") != "met"):
        return False, ""
    if any(timing.get(k) is not None for k in _TIMED_BY_KEY[key] if k.endswith("_ns")):  # WNS without WHS
        other = next(k for k in _TIMED_BY_KEY[key] if k.endswith("_ns") and timing.get(k) is not None)
        return False, (f"the Design Timing Summary has {other.removesuffix('_ns').upper()} but no "
                       f"{key.removesuffix('_ns').upper()}: where one was timed so was the other")
    timed = [c.get("name") for c in timing.get("clocks") or []
             if any(_has_number(c, k) for k in _TIMED_BY_KEY[key])]
    paths = timing.get("worst_slack_by_check") if key != "wpws_ns" else None
    if timed or paths:
        return False, (f"the Design Timing Summary says {_printed_as(timing, key)} but "
                       f"{'clock ' + timed[0] if timed else 'a timing path'} has slacks: the report contradicts itself")
    ct = timing.get("check_timing") or {}
    clean = ct.get("no_clock") == 0 and ct.get("unconstrained_internal_endpoints") == 0
    why = ("no endpoints to time (check_timing: 0 unclocked, 0 unconstrained)" if clean else
           f"Vivado timed no endpoint, and check_timing reports {ct.get('no_clock', 'an unknown number of')} "
           f"unclocked and {ct.get('unconstrained_internal_endpoints', 'an unknown number of')} unconstrained "
           f"pins: nothing was timed")
    return clean, why


def _check_timing_says(timing: Mapping[str, Any]) -> str:
    """What the report's check_timing says about endpoints without a timed path, as it says it."""
    ct = timing.get("check_timing")
    if not isinstance(ct, Mapping):
        return "the report has no check_timing to name them"
    n = ct.get("unconstrained_internal_endpoints")
    if not _is_number(n):
        return "check_timing gives no count of unconstrained endpoints"
    if n == 0:
        return "check_timing counts 0 unconstrained internal endpoints, so it does not name them"
    return f"check_timing counts {n} unconstrained internal endpoints and names them"


def _printed_as(timing: Mapping[str, Any], key: str) -> str:
    """How the summary printed a slack without a number: as the reader saw it (`no_number`), else
    inf where it sits over 0 endpoints, NA over NA."""
    seen = timing.get("no_number")
    if isinstance(seen, Mapping) and isinstance(seen.get(key), str) and seen[key]:
        return seen[key][:12]
    return "inf" if any(timing.get(k) == 0 for k in _EMPTY_WITH[key]) else "NA"


def _slacks(timing: Mapping[str, Any], estimated: bool) -> list[Check]:
    out = []
    path = timing.get("critical_path") or {}
    kind = "estimated (pre-route) " if estimated else ""
    for r in SLACK_RULES:
        v = timing.get(r.key)
        expected = f">= {MIN_SLACK_NS:g} ns"
        if v is None:
            if r.signoff_only and estimated:
                continue  # the open flow cannot know hold or pulse width
            empty, why = _no_endpoints(timing, r.key)
            if empty:
                out.append(Check(r.name, expected, f"{_printed_as(timing, r.key)}: {why}", True))
                continue
            out.append(Check(r.name, expected, None, False,
                             f"timing gate: the report has no {r.abbr} ({r.what} slack): " + (why or
                             "a missing, truncated or unparsable report, or nothing constrained")))
            continue
        ok = v >= MIN_SLACK_NS
        msg = ""
        if not ok and r.key == "wns_ns":
            msg = (f"timing gate: {kind}setup slack WNS {v:+.3f} ns {_where_wns(timing, v)}"
                   f" (TNS {_fmt(timing.get('tns_ns'))} ns, {_fmt(timing.get('failing_endpoints'))} failing endpoints);"
                   f" worst path {_worst_path(path)}")
        elif not ok:
            msg = f"timing gate: {r.what} violation, {r.abbr} {v:+.3f} ns"
        out.append(Check(r.name, expected, v, ok, msg))
    return out


# Every other place a timing record carries a slack, a total or a count of failing endpoints. In a
# report that is whole these agree with the summary's WNS/WHS/WPWS (which sum them up), so they only
# ever add a failure when the summary row was edited, mis-read or cut: any one of them below 0 (a
# total or slack) or above 0 (a failing count) fails, and a negative count is no count at all.
_ROW_SLACKS = ("wns_ns", "whs_ns", "wpws_ns", "tns_ns", "ths_ns", "tpws_ns")
_ROW_FAILING = ("failing_endpoints", "hold_failing_endpoints", "pw_failing_endpoints")
_ROW_COUNTS = _ROW_FAILING + ("total_endpoints", "hold_total_endpoints", "pw_total_endpoints")
_ROW_TABLES = (("clocks", "clock {name}"), ("clock_interaction", "inter-clock paths {from} -> {to}"),
               ("other_path_groups", "path group {path_group}"))


# report_clock_interaction's pairs whose paths Vivado does not time: a number there is no slack
_UNTIMED_PAIR = re.compile(r"^(false path|(asynchronous|(logically |physically )?exclusive) groups|not timed\b)", re.I)


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _row_findings(row: Mapping[str, Any], where: str) -> list[str]:
    out = []
    for k in _ROW_SLACKS:
        v = row.get(k)
        if _is_number(v) and v < MIN_SLACK_NS:
            out.append(f"{where}: {k.removesuffix('_ns').upper()} {v:+.3f} ns")
    for k in _ROW_COUNTS:
        v = row.get(k)
        if _is_number(v) and (v < 0 or (k in _ROW_FAILING and v > 0)):
            out.append(f"{where}: {k.replace('_', ' ')} {v}")
    return out


def _contradictions(timing: Mapping[str, Any]) -> list[Check]:
    """One failing check when any slack, total or failing count outside the summary's WNS/WHS/WPWS
    says the design fails (or is no number it could be): a clock, inter-clock or path-group row,
    the summary's own TNS/THS/TPWS and failing counts, the worst path's slack, the worst slack of
    each check kind. Also for estimates: their record has no verdict line to cross-check."""
    found = _row_findings(timing, "the summary")
    for key, label in _ROW_TABLES:
        rows = timing.get(key)
        for row in rows if isinstance(rows, list) else []:
            if isinstance(row, Mapping) and not _UNTIMED_PAIR.match(str(row.get("type") or "")):
                found += _row_findings(row, label.format_map({k: row.get(k, "?") for k in
                                                               ("name", "from", "to", "path_group")}))
    path = timing.get("critical_path")
    if isinstance(path, Mapping) and _is_number(path.get("slack_ns")) and path["slack_ns"] < MIN_SLACK_NS:
        found.append(f"the worst path: slack {path['slack_ns']:+.3f} ns")
    worst = timing.get("worst_slack_by_check")
    for kind, v in (worst.items() if isinstance(worst, Mapping) else ()):
        if _is_number(v) and v < MIN_SLACK_NS:
            found.append(f"the worst {kind} path: slack {v:+.3f} ns")
    if not found:
        return []
    shown = "; ".join(found[:4]) + (f"; and {len(found) - 4} more" if len(found) > 4 else "")
    return [Check("timing.consistency", "no slack, total or failing count anywhere says the design fails",
                  shown, False,
                  f"timing gate: the summary's slacks are >= 0 but {shown}: the report contradicts itself "
                  f"(edited, mis-read or cut), and a negative slack anywhere fails")]


def _worst_path(path: Mapping[str, Any]) -> str:
    """The worst path in RTL terms (kabe.base.rtl_path: registers by RTL name and file:line, the levels and
    cell types between) and its delay; a path without names as before."""
    if path.get("startpoint") or path.get("startpoint_rtl"):
        return f"{rtl_path.line(path)}, {_fmt(path.get('delay_ns'))} ns"
    return (f"{path.get('startpoint', '?')} -> {path.get('endpoint', '?')}, {_fmt(path.get('delay_ns'))} ns, "
            f"{_fmt(path.get('logic_levels'))} logic levels")


def _where_wns(timing: Mapping[str, Any], wns: float) -> str:
    """Where the worst setup slack lies: the inter-clock pair or path group whose table row carries it
    (Vivado names the capture clock as the path's group, which would blame a clock whose own paths
    meet timing), else the clock of the worst path. A clock whose own table row carries it comes first."""
    for clock in timing.get("clocks") or []:
        if clock.get("wns_ns") is not None and abs(clock["wns_ns"] - wns) < 5e-4:
            return f"on clock {clock.get('name')}"
    for row in timing.get("clock_interaction") or []:
        if row.get("from") != row.get("to") and row.get("wns_ns") is not None and abs(row["wns_ns"] - wns) < 5e-4:
            return f"on inter-clock paths {row['from']} -> {row['to']}"
    for row in timing.get("other_path_groups") or []:
        if row.get("wns_ns") is not None and abs(row["wns_ns"] - wns) < 5e-4:
            pair = f" ({row['from']} -> {row['to']})" if row.get("from") else ""
            return f"in path group {row.get('path_group')}{pair}"
    path = timing.get("critical_path") or {}
    return f"on clock {path.get('clock') or (timing.get('clocks') or [{}])[0].get('name', '?')}"


def not_estimated_reason(timing: Mapping[str, Any] | None) -> str | None:
    """Why the record has no timing number (the open flow on a board kabe cannot time), or None."""
    if not isinstance(timing, Mapping) or timing.get("error") or "not_estimated" not in timing:
        return None
    reason = timing.get("not_estimated")
    return " ".join(reason.split())[:300] if isinstance(reason, str) and reason.strip() else "no reason given"


def _not_estimated_checks(timing: Mapping[str, Any]) -> list[Check]:
    """A record without a timing number must say why, come from an estimating (open) flow, and carry
    no slack: a sign-off report always has timing, and a slack beside "not estimated" contradicts it.
    Each is a failing check when broken; when all hold there is nothing to pass: the verdict is
    "not_estimated" (Verdict.status), never a pass."""
    out = []
    reason = timing.get("not_estimated")
    if not isinstance(reason, str) or not reason.strip():
        out.append(Check("timing.not_estimated", "the reason no timing was estimated", reason, False,
                         "timing gate: the record says its timing is not estimated but gives no reason"))
    if timing.get("estimated") is not True:
        out.append(Check("timing.not_estimated", "a pre-route (open-flow) record", "a sign-off record", False,
                         "timing gate: a sign-off timing report always has timing; a sign-off record without "
                         "a timing number fails"))
    numbers = [k for k in _TIMING_NUMBERS if timing.get(k) not in (None, {}, [])]
    if numbers:
        out.append(Check("timing.not_estimated", "no timing number beside 'not estimated'", ", ".join(numbers),
                         False, f"timing gate: the record says its timing is not estimated but carries "
                                f"{', '.join(numbers)}: it contradicts itself"))
    return out


def _verdict_check(timing: Mapping[str, Any]) -> Check:
    name, expected = "timing.verdict", "the report's verdict agrees with its numbers"
    line = timing.get("verdict_line")
    if line is None:
        return Check(name, expected, None, False,
                     "timing gate: the report has no verdict line; it is truncated or not a full report_timing_summary")
    kind = VERDICTS.get(line, "unknown")
    slacks = [timing.get(r.key) for r in SLACK_RULES if timing.get(r.key) is not None]
    failing = sum(timing.get(k) or 0 for k in ("failing_endpoints", "hold_failing_endpoints", "pw_failing_endpoints"))
    bad = any(s < MIN_SLACK_NS for s in slacks) or failing > 0
    if kind == "unknown":
        return Check(name, expected, line, False, f"timing gate: verdict line '{line[:80]}' is not one Vivado prints")
    if kind == "unconstrained":
        return Check(name, "timing constraints met", line, False,
                     f"timing gate: the report says '{line}': nothing is timed; add create_clock to the XDC")
    if kind == "met" and bad:
        return Check(name, expected, line, False,
                     "timing gate: the report says the constraints are met but a slack is negative or an endpoint "
                     "fails; the numbers and the verdict disagree")
    if kind == "not_met" and not bad:
        return Check(name, expected, line, False,
                     f"timing gate: the report says '{line}' although WNS/WHS/WPWS are all >= 0 with no failing "
                     f"endpoint; the numbers and the verdict disagree")
    if kind == "not_met":
        return Check(name, "timing constraints met", line, False, f"timing gate: the report says '{line}'")
    return Check(name, expected, line, True)


def _whole_file(timing: Mapping[str, Any]) -> list[Check]:
    """What a report reader found anywhere in the file (kabe.parsers.vivado_timing_whole), not only in
    the sections it read: a second verdict line, a negative slack line, a corner Vivado did not analyse.
    A whole report has none of them, so each fails naming the lines."""
    out = []
    lines = timing.get("verdict_lines")
    if isinstance(lines, list) and len(lines) > 1:
        shown = "; ".join(f"'{str(x)[:90]}'" for x in lines[:4])
        out.append(Check("timing.verdict_lines", "one verdict line", shown, False,
                         f"timing gate: the report has {len(lines)} verdict lines ({shown}): Vivado prints one; "
                         f"the report is joined, edited or damaged, and the gate believes none of them"))
    slack = timing.get("negative_slack_lines")
    if isinstance(slack, list) and slack:
        shown = "; ".join(str(x)[:120] for x in slack[:3]) + (f"; and {len(slack) - 3} more" if len(slack) > 3 else "")
        out.append(Check("timing.every_slack", "no negative slack anywhere in the report", shown, False,
                         f"timing gate: negative slack in the report ({shown}); a negative slack anywhere fails"))
    corners = timing.get("unanalysed_corners")
    if isinstance(corners, list) and corners:
        shown = "; ".join(str(x)[:100] for x in corners[:4])
        out.append(Check("timing.corners", "every corner analysed for setup and hold (Timer Settings)", shown, False,
                         f"timing gate: Timer Settings says a corner was not analysed ({shown}): its slacks were "
                         f"never computed; analyse every corner (config_timing_corners) and report again"))
    return out


def _unclocked(timing: Mapping[str, Any], estimated: bool, waivers: Mapping[str, str]) -> list[Check]:
    n = timing.get("no_clock")
    reason = waivers.get("no_clock")
    ct = timing.get("check_timing")
    counted = ct.get("no_clock") if isinstance(ct, Mapping) else None
    if _is_number(counted) and counted != n:  # the record's two copies of one count: edited, not read
        return [Check("timing.no_clock", "no_clock as check_timing counts it", f"{n} (check_timing: {counted})",
                      False, f"timing gate: the record says {n} register/latch pins have no clock but its "
                             f"check_timing counts {counted}: it contradicts itself; regenerate it from the report")]
    if n is None and not estimated and timing.get("check_timing") is None:
        # a summary written with -no_check_timing (check_timing None), or a sign-off record that has no
        # check_timing at all: it cannot say whether a register has no clock, and an unclocked register
        # is never timed, so a met WNS over the rest proves nothing about it
        if reason:
            return [Check("timing.no_clock", "0 register/latch pins without a clock",
                          f"not reported (waived: {reason})", True)]
        why, fix = (("the report was written with -no_check_timing", "write it without -no_check_timing")
                    if "check_timing" in timing else
                    ("the sign-off record has no check_timing", "take the record from a whole report_timing_summary"))
        return [Check("timing.no_clock", "0 register/latch pins without a clock", "not reported", False,
                      f"timing gate: {why}, so it does not say whether every register/latch pin has a clock (an "
                      f"unclocked one is never timed); {fix}, or waive it in design.yaml: "
                      f"waivers: {{no_clock: \"<why>\"}}")]
    if n is None:
        return []
    if n > 0 and reason:
        return [Check("timing.no_clock", "0 register/latch pins without a clock", f"{n} (waived: {reason})", True)]
    return [Check("timing.no_clock", "0 register/latch pins without a clock", n, n == 0,
                  f"timing gate: {n} register/latch pins have no clock (check_timing no_clock), so they are never "
                  f"timed; constrain their clock, or waive it in design.yaml: waivers: {{no_clock: \"<why>\"}}")]


def _second_source(timing: Mapping[str, Any]) -> Check:
    """Vivado's own answer (scripts/vivado/timing_verdict.tcl) against kabe's reading of the report."""
    name = "timing.second_source"
    src = timing.get("second_source") or {}
    if not src or src.get("error"):
        return Check(name, "Vivado's own timing verdict (timing_verdict.json)", None, False,
                     f"timing gate: no second-source verdict from Vivado ({src.get('error', 'missing')}); "
                     f"the parsed report cannot be cross-checked")
    diffs = []
    for key, label in (("wns_ns", "WNS"), ("whs_ns", "WHS")):
        a, b = timing.get(key), src.get(key)
        if (a is None) != (b is None) or (a is not None and abs(a - b) > AGREE_NS):
            diffs.append(f"{label}: report {_fmt(a)}, Vivado {_fmt(b)}")
    pw_report = (timing.get("wpws_ns") is not None and timing["wpws_ns"] < MIN_SLACK_NS) or \
        (timing.get("pw_failing_endpoints") or 0) > 0
    if pw_report != bool(src.get("pulse_width_violated")):
        diffs.append(f"pulse width violated: report {pw_report}, Vivado {bool(src.get('pulse_width_violated'))}")
    unsafe_report = any(c.get("unsafe") or "unsafe" in str(c.get("type", "")).lower()
                        for c in timing.get("clock_interaction") or [])
    if unsafe_report != bool(src.get("unsafe_clock_interactions")):
        diffs.append(f"unsafe crossings: report {unsafe_report}, Vivado {src.get('unsafe_clock_interactions')}")
    negative = [f"{k} {src[k]:+.3f} ns" for k in ("setup_ns", "hold_ns", "recovery_ns", "removal_ns")
                if src.get(k) is not None and src[k] < MIN_SLACK_NS]
    got = "; ".join(diffs + negative) or "agrees"
    if diffs:
        return Check(name, "agrees with the parsed report", got, False,
                     f"timing gate: the report and Vivado's own verdict disagree ({'; '.join(diffs)})")
    if negative:
        return Check(name, "agrees, all slacks >= 0", got, False,
                     f"timing gate: Vivado's own verdict has negative slack ({', '.join(negative)})")
    return Check(name, "agrees with the parsed report", got, True)


def _fmt(v) -> str:
    if v is None:
        return "?"
    return f"{v:.3f}" if isinstance(v, float) else str(v)


@dataclass
class Verdict:
    passed: bool
    failures: list[str] = field(default_factory=list)
    checks: list[dict] = field(default_factory=list)
    waivers: dict[str, str] = field(default_factory=dict)  # the waivers that were applied, with their reasons
    warnings: list[str] = field(default_factory=list)  # unreadable path details etc.: shown, never a pass/fail
    # Why no simulation verdict stands behind this gate (design.yaml's `verify: {none: reason}`, or no
    # simulation result in the record): every place that shows the verdict says "unverified: <reason>".
    unverified: str | None = None
    # Why no timing number stands behind this gate (the open flow on a board kabe cannot time):
    # with no failure the verdict is "not_estimated", neither pass nor fail, and `passed` is False.
    not_estimated: str | None = None

    @property
    def status(self) -> str:
        """pass | fail | not_estimated: a failure wins; without one, no timing number is no pass."""
        if self.failures or (not self.passed and not self.not_estimated):
            return FAIL
        return NOT_ESTIMATED if self.not_estimated else PASS

    def why_not_passed(self) -> str:
        """One line saying why this verdict is no pass, for every consumer that refuses on it (deploy's
        two paths had each derived it, and one raised IndexError on a not-estimated verdict)."""
        if self.failures:
            return self.failures[0]
        if self.not_estimated:
            return f"timing not estimated: {self.not_estimated}"
        return "" if self.passed else "no pass (no timing number and no failure recorded)"

    def as_expected(self, expect_gate: str) -> bool:
        """Whether this verdict is what design.yaml's expect_gate (pass | fail | not_estimated) asks: a negative
        example failing is as expected; a design expecting not_estimated may also pass (a flow that times it:
        Vivado), never fail."""
        if expect_gate == NOT_ESTIMATED:
            return self.status in (NOT_ESTIMATED, PASS)
        return self.status == expect_gate

    def reason(self) -> str:
        """The first failure, with how many more there are: the one line a verdict line or a refusal quotes."""
        if not self.failures:
            return ""
        more = len(self.failures) - 1
        return self.failures[0] + (f" (and {more} more)" if more else "")

    def as_dict(self) -> dict:
        return {**asdict(self), "status": self.status}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Verdict":
        """The verdict as_dict() wrote (a record's `gate`, kabe.rules.regressions.combined_verdict), for the
        consumers that hold the dict. Never more of a pass than the dict says: `passed` counts only beside a
        status that does not contradict it and no failure, and a status the fields do not give is a failure."""
        status = d.get("status", PASS)
        failures = [str(f) for f in d.get("failures") or []]
        v = cls(d.get("passed") is True and status == PASS and not failures, failures, [dict(c) for c in d.get("checks") or []],
                dict(d.get("waivers") or {}), list(d.get("warnings") or []), d.get("unverified"),
                d.get("not_estimated") or ("no timing number" if status == NOT_ESTIMATED else None))
        # words that contradict each other (`passed: true` beside another status, "fail" beside no failure and a
        # not-estimated reason) are a fail
        said = PASS if d.get("passed") is True else status
        if said != status or (status != v.status and v.status != FAIL):
            v.passed = False
            v.failures.append(f"the verdict says passed: {str(d.get('passed')).lower()}, status {status!r}, where its "
                              f"fields say {v.status!r}: no pass")
        return v


def evaluate(timing: Mapping[str, Any] | None, utilization: Mapping[str, Any] | None,
             budgets: Iterable[Budget] = (), rules: TimingRules = TimingRules(),
             waivers: Mapping[str, str] | None = None) -> Verdict:
    waivers = dict(waivers or {})
    unknown = sorted(set(waivers) - set(WAIVABLE))
    if unknown:
        raise ValueError(f"waiver(s) {', '.join(unknown)} unknown; kabe waives only {', '.join(WAIVABLE)}")
    checks = rules.check(timing, waivers)
    values = {**(utilization or {}), **timing_metrics(timing)}
    for b in budgets:
        if not utilization and b.metric not in TIMING_METRICS:
            checks.append(Check(f"budget.{b.metric}", "a utilization report", None, False,
                                "budget gate: no utilization report was produced or it could not be read"))
            continue
        checks.append(b.check(values, waivers.get("uncounted_cells")))
    failures = [c.message or c.line() for c in checks if not c.passed]
    applied = {k: v for k, v in waivers.items()
               if any("waived" in str(c.got) and (c.name == f"timing.{k}" or
                                                  (k == "uncounted_cells" and c.name.startswith("budget.")))
                      for c in checks)}
    not_estimated = not_estimated_reason(timing)
    return Verdict(not failures and not not_estimated, failures, [_as_dict(c) for c in checks], applied,
                   list((timing or {}).get("warnings") or []) + _untimed_crossings(timing),
                   not_estimated=not_estimated)


def _untimed_crossings(timing: Mapping[str, Any] | None) -> list[str]:
    """The open flow times each clock's own paths only: the clock pairs it listed and did not time are
    said beside the verdict (a warning, never a pass or fail: asynchronous clocks are crossed by
    synchronizers, which no setup check covers), so they are not found only in timing_estimate.rpt."""
    if not isinstance(timing, Mapping) or not timing.get("estimated"):
        return []
    rows = timing.get("clock_interaction")
    pairs = [f"{r.get('from')} -> {r.get('to')}" for r in rows if isinstance(r, Mapping)
             and str(r.get("type", "")).lower().startswith("not timed")
             and "undeclared" not in str(r.get("type", "")).lower()] if isinstance(rows, list) else []
    if not pairs:
        return []
    return [f"{len(pairs)} clock crossing(s) the open flow does not time: {', '.join(pairs[:4])}"
            f"{', ...' if len(pairs) > 4 else ''} (synchronized, or time them with flow=vivado)"]


def _as_dict(c: Check) -> dict:
    d = {"name": c.name, "expected": c.expected, "got": c.got, "passed": c.passed}
    if not c.passed:
        d["message"] = c.message or c.line()
    return d
