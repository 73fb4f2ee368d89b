"""The gate for Vitis HLS and v++ link records: the HLS form of a timing failure, and a link that
lowered the kernel clock. Rules as data, each yielding a Check (expected, got, message) like
kabe.rules.gate; the result is the same gate.Verdict every consumer reads.

HLS (a csynth.xml / csynth.rpt record, kabe.parsers.vitis_hls_csynth):
- hls.clock: the estimated clock plus the clock uncertainty must fit the target (estimate <=
  target - uncertainty). A csynth.rpt summary prints no clock, only a Slack, whose sign Vitis HLS
  2020.2 printed inverted: the parser gives slack_ns = budget - estimate for every version; it must
  be >= 0. Neither an estimate nor a slack: FAIL (nothing to judge is no pass). Every number here
  is the HLS tool's *estimate* (the record's `estimated: True`), and the check names it so.
- hls.issue: a row the tool itself marks with Issue Type Timing (or any issue but II) fails.
- hls.ii: a pipelined loop whose achieved II is over its target II fails; a loop the tool marks
  with Issue Type II fails (the summary layout prints no target).
- budgets (design.yaml `budgets:`): latency (worst case, cycles), interval (worst case),
  ii (the largest achieved II of a pipelined loop), ii.<loop>, estimated_clock_ns, bram_18k, dsp,
  ff, lut, uram. An "undef" latency never meets a latency budget.
HLS log (kabe.parsers.vitis_hls_log): its last csynth run's HLS 200-871 (estimate over target),
  II violations (HLS 200-880/885), a pipelined loop whose final II is over its target (Target II =
  NA: over 1, the tool's default), and ERROR lines each fail.
Cosim (kabe.parsers.vitis_cosim): a failed language fails; no language simulated fails.
Link (kabe.parsers.vitis_link_log): a kernel clock scaled down (VPL 60-732, "automatically changed
  to") fails, unless `accept_min_clock_mhz` (design.yaml: the lowest kernel clock the design
  accepts, written on purpose) is given and the clock it got is at least that: then it passes and
  the verdict's check records the clock. VPL 101-2 (an unscalable clock missed timing) and any
  ERROR fail.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from kabe.rules.gate import Budget, Check, Verdict, _as_dict

UNDEF = "undef"
# said beside every HLS verdict, as the open flow's estimate is labelled: C synthesis estimates the
# clock and latency; the routed design (Vivado after export, or the v++ link) is what runs
ESTIMATE_NOTE = "HLS estimate: the clock, latency and II are C synthesis's estimates, not a routed result"
HLS_METRICS = ("latency", "interval", "ii", "estimated_clock_ns", "bram_18k", "dsp", "ff", "lut", "uram")


@dataclass(frozen=True)
class LinkRules:
    """accept_min_clock_mhz: design.yaml's explicit acceptance of a lower kernel clock (None: a
    scaled clock always fails)."""

    accept_min_clock_mhz: float | None = None


def _num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def hls_values(rec: Mapping[str, Any]) -> dict[str, Any]:
    """The budgetable numbers of a csynth record (kabe.parsers.vitis_hls_csynth)."""
    vals: dict[str, Any] = {"latency": rec.get("latency_max"), "interval": rec.get("interval_max"),
                            "estimated_clock_ns": rec.get("estimated_clock_ns")}
    vals.update(rec.get("resources") or {})
    iis = []
    for lp in rec.get("loops") or []:
        if lp.get("pipelined") not in (None, "no") and lp.get("ii") is not None:
            vals[f"ii.{lp['name']}"] = lp["ii"]
            iis.append(lp["ii"])
    vals["ii"] = (UNDEF if any(not _num(v) for v in iis) else max(iis)) if iis else None
    return vals


def csynth_checks(rec: Mapping[str, Any], budgets: Iterable[Budget] = ()) -> list[Check]:
    checks: list[Check] = []
    est, tgt, unc, slack = (rec.get("estimated_clock_ns"), rec.get("target_clock_ns"), rec.get("uncertainty_ns"),
                            rec.get("slack_ns"))
    if _num(est) and _num(tgt):
        u = unc if _num(unc) else 0.0
        ok = est + u <= tgt + 1e-9
        checks.append(Check("hls.clock", f"estimate + uncertainty <= target {tgt:g} ns (HLS estimate)",
                            f"{est:g} + {u:g} = {est + u:.3f} ns", ok,
                            "" if ok else f"HLS estimated clock {est:g} ns + uncertainty {u:g} ns = {est + u:.3f} ns is "
                                          f"over the target {tgt:g} ns (an estimate: the routed design may differ)"))
    elif _num(slack):
        ok = slack >= 0
        how = f"printed {rec.get('slack_printed'):g}" if _num(rec.get("slack_printed")) else "from the report"
        checks.append(Check("hls.clock", "HLS estimated slack >= 0 ns (estimate)", f"{slack:g} ns ({how})", ok,
                            "" if ok else f"HLS estimated slack {slack:g} ns: the estimated clock is over the target "
                                          f"less its uncertainty (an estimate)"))
    else:
        checks.append(Check("hls.clock", "an estimated clock or slack", None, False,
                            "the HLS report gives no estimated clock and no slack: timing cannot be judged"))
    for mod in (rec.get("modules") or [])[1:]:  # a sub-module over its budget, whatever the top's slack says
        if _num(mod.get("slack_ns")) and mod["slack_ns"] < 0:
            checks.append(Check(f"hls.clock.{mod['name']}", "HLS estimated slack >= 0 ns (estimate)",
                                f"{mod['slack_ns']:g} ns", False,
                                f"HLS estimated slack of module {mod['name']} is {mod['slack_ns']:g} ns (an estimate)"))
    loop_ii_issues = {lp["name"] for lp in rec.get("loops") or [] if (lp.get("issue_type") or "").strip().lower() == "ii"}
    for issue in rec.get("issues") or []:
        if issue["issue_type"].strip().lower() == "ii" and issue["row"] in loop_ii_issues:
            continue  # judged with the loops below (a module's own II issue, a pipelined function, is judged here)
        checks.append(Check("hls.issue", "no Issue Type", f"{issue['issue_type']} on {issue['row']}", False,
                            f"HLS marks '{issue['row']}' with Issue Type {issue['issue_type']}"))
    for lp in rec.get("loops") or []:
        name, ii, tgt_ii = lp["name"], lp.get("ii"), lp.get("ii_target")
        if _num(ii) and _num(tgt_ii) and ii > tgt_ii:
            checks.append(Check(f"hls.ii.{name}", f"II <= target {tgt_ii}", ii, False,
                                f"pipelined loop {name} achieved II {ii}, over its target {tgt_ii}"))
        elif (lp.get("issue_type") or "").strip().lower() == "ii":
            checks.append(Check(f"hls.ii.{name}", "no II violation", f"II {ii} (Issue Type II)", False,
                                f"HLS marks loop {name} with an II violation (achieved II {ii})"))
        elif rec.get("layout") == "csynth.xml" and lp.get("pipelined") not in (None, "no") and _num(ii) and ii > 1 \
                and tgt_ii is None and not rec.get("issues_known"):
            # csynth.xml carries no target II; a pipeline pragma without II= aims at 1, so an achieved II
            # over 1 cannot be shown to meet its target: fail rather than pass unseen (the rpt has the target)
            checks.append(Check(f"hls.ii.{name}", "II <= 1 (csynth.xml gives no target II)", ii, False,
                                f"pipelined loop {name} achieved II {ii}; csynth.xml gives no target II (the default "
                                f"is 1): judge the csynth.rpt, which prints the target"))
    vals = hls_values(rec)
    for b in budgets:
        checks.append(b.check(vals))
    return checks


def log_checks(rec: Mapping[str, Any]) -> list[Check]:
    run = rec["last_run"]
    where = f"csynth run at line {run.get('start_line')}"
    checks = []
    for v in run["timing_violations"]:
        if v["estimated_ns"] is None:
            checks.append(Check("hls.log.clock", "no estimated clock over target", v.get("text", "")[:120], False,
                                f"line {v['line']}: {v.get('text', 'HLS 200-871')[:200]}"))
            continue
        checks.append(Check("hls.log.clock", f"estimate <= budget {v['budget_ns']:g} ns", f"{v['estimated_ns']:g} ns",
                            False, f"line {v['line']}: HLS estimated clock {v['estimated_ns']:g} ns exceeds the budget "
                                   f"{v['budget_ns']:g} ns (target {v['target_ns']:g} - uncertainty "
                                   f"{v['uncertainty_ns']:g}; an estimate)"))
    for v in run["ii_violations"]:
        checks.append(Check("hls.log.ii_violation", "no II violation", f"{v['id']} in {v['module']}", False,
                            f"line {v['line']}: {v['id']} II violation in module {v['module'] or '?'}"
                            + (f" (loop {v['loop']})" if v["loop"] else "")))
    for v in run["ii_worse_than_target"]:
        checks.append(Check(f"hls.ii.{v['loop']}", f"II <= target {v['target_ii']}", v["final_ii"], False,
                            f"line {v['line']}: loop {v['loop']} final II {v['final_ii']} over its target {v['target_ii']}"))
    for v in run.get("ii_over_default", []):
        checks.append(Check(f"hls.ii.{v['loop']}", "II <= 1 (no target given: the tool's default)", v["final_ii"],
                            False, f"line {v['line']}: loop {v['loop']} final II {v['final_ii']}, over the default "
                                   f"target 1 (Target II = NA)"))
    if run.get("loop_constraints_met") is False:
        checks.append(Check("hls.log.loop_constraints", "All loop constraints were satisfied",
                            run.get("loop_constraint_status"), False,
                            f"{where}: HLS 200-790 {run.get('loop_constraint_status')}"))
    for e in run["errors"]:
        checks.append(Check("hls.log.error", "no ERROR", e[:120], False, f"{where}: {e[:200]}"))
    if not checks:
        checks.append(Check("hls.log", "no timing or II violation in the last csynth run", "none", True))
    return checks


def cosim_checks(rec: Mapping[str, Any]) -> list[Check]:
    if not rec["simulated"]:
        return [Check("hls.cosim", "an RTL language simulated", "every status NA", False,
                      "co-simulation ran no RTL (every status NA): nothing verified")]
    return [Check(f"hls.cosim.{lang}", "Pass", rec["rtl"][lang]["status"], rec["rtl"][lang]["status"] == "Pass",
                  "" if rec["rtl"][lang]["status"] == "Pass" else f"C/RTL co-simulation ({lang}) failed")
            for lang in rec["simulated"]]


def link_checks(rec: Mapping[str, Any], rules: LinkRules = LinkRules()) -> list[Check]:
    checks = []
    accept = rules.accept_min_clock_mhz
    for s in rec["scaled_clocks"]:
        clk = s.get("clock") or "kernel clock"
        got = f"{clk}: {s['from_mhz'] if s['from_mhz'] is not None else '?'} -> " \
              f"{s['to_mhz'] if s['to_mhz'] is not None else '?'} MHz"
        if accept is None:
            checks.append(Check("link.kernel_clock", "not scaled", got, False,
                                f"line {s['line']}: v++ lowered {clk} from {s['from_mhz'] or '?'} MHz to "
                                f"{s['to_mhz'] or '?'} MHz (VPL 60-732); accept a lower clock in design.yaml only on purpose"))
        elif s["to_mhz"] is None:
            checks.append(Check("link.kernel_clock", f">= {accept:g} MHz (accepted)", got, False,
                                f"line {s['line']}: the kernel clock was scaled but the log gives no new frequency"))
        else:
            ok = s["to_mhz"] >= accept
            checks.append(Check("link.kernel_clock", f">= {accept:g} MHz (accepted in design.yaml)", got, ok,
                                "" if ok else f"line {s['line']}: {clk} scaled to {s['to_mhz']:g} MHz, below the "
                                              f"accepted {accept:g} MHz"))
    for u in rec["unscalable_clock_failures"]:
        checks.append(Check("link.system_clock", "met", "VPL 101-2", False, f"line {u['line']}: {u['text'][:200]}"))
    for e in rec["error_lines"]:
        checks.append(Check("link.error", "no ERROR", e[:120], False, e[:200]))
    if not checks:
        checks.append(Check("link.kernel_clock", "not scaled", "not scaled", True))
    return checks


def metrics_checks(record: Mapping[str, Any], budgets: Iterable[Budget] = (),
                   link_rules: LinkRules = LinkRules()) -> list[Check]:
    """The HLS and link checks re-derived from a metrics.json record's `hls` and `vitis_link` objects
    (kabe.parsers.vitis_hls_csynth.metrics, kabe.parsers.xclbin.metrics): a verdict recomputed from
    numbers, never believed. [] when the record has neither."""
    checks: list[Check] = []
    hls = record.get("hls")
    if isinstance(hls, Mapping):
        checks += csynth_checks(hls, budgets)
        cosim = hls.get("cosim")
        if isinstance(cosim, Mapping) and cosim.get("passed") is not True:
            checks.append(Check("hls.cosim", "Pass", cosim.get("passed"), False,
                                "C/RTL co-simulation did not pass" if cosim.get("passed") is False
                                else "C/RTL co-simulation ran no RTL"))
    link = record.get("vitis_link")
    if isinstance(link, Mapping):
        clock, accept = link.get("kernel_clock_mhz"), link_rules.accept_min_clock_mhz
        if link.get("scaled"):
            ok = accept is not None and _num(clock) and clock >= accept
            checks.append(Check("link.kernel_clock", f">= {accept:g} MHz (accepted)" if accept is not None else "not scaled",
                                f"{clock} MHz (scaled from {link.get('requested_clock_mhz')})", bool(ok),
                                "" if ok else f"v++ lowered the kernel clock to {clock} MHz "
                                              f"(asked {link.get('requested_clock_mhz')} MHz)"))
    return checks


def evaluate(kind: str, record: Mapping[str, Any], budgets: Iterable[Budget] = (),
             link_rules: LinkRules = LinkRules()) -> Verdict:
    """The verdict on one Vitis record of `kind` (kabe.parsers.vitis_detect.GATED)."""
    if kind in ("vitis_hls_csynth_xml", "vitis_hls_csynth_rpt"):
        checks = csynth_checks(record, budgets)
    elif kind == "vitis_hls_log":
        checks = log_checks(record)
    elif kind == "vitis_cosim":
        checks = cosim_checks(record)
    elif kind == "vitis_link_log":
        checks = link_checks(record, link_rules)
    else:
        raise ValueError(f"the gate does not judge a {kind} record")
    failures = [c.message or c.line() for c in checks if not c.passed]
    warnings = [ESTIMATE_NOTE] if kind in ("vitis_hls_csynth_xml", "vitis_hls_csynth_rpt", "vitis_hls_log") else []
    return Verdict(passed=not failures, failures=failures, checks=[_as_dict(c) for c in checks], warnings=warnings)
