"""Vitis HLS / Vivado HLS C-synthesis reports: csynth.xml (preferred) and csynth.rpt.

Three layouts, one record:
- csynth.xml (every version): target clock, uncertainty, estimated clock, latency and interval,
  loops (nested elements named after the loop; trip count, latency, iteration latency, achieved
  II), resources and what the part has. A loop's *target* II is not in the xml.
- csynth.rpt "Vivado HLS Report for" / "Vitis HLS Report for" (Vivado HLS 2015-2020, Vitis HLS
  2020.1; and every per-function <f>_csynth.rpt): the same facts as tables, plus each loop's
  achieved *and target* II.
- csynth.rpt "Synthesis Summary Report of" (Vitis HLS 2020.2 on): one table of modules and loops
  with an Issue Type, a Slack and no clock at all. Vitis HLS 2020.2 prints Slack with the sign
  opposite to 2021.1 on (estimate - budget, not budget - estimate); `slack_ns` here is always
  budget - estimate (negative = over), `slack_printed` what the file says.

Record (every key present; None = the file does not print it; "undef" = printed as ?/undef):
  layout            "csynth.xml" | "csynth.rpt" | "csynth.rpt summary"
  tool, version     "Vitis HLS"/"Vivado HLS" (None when the file does not say), "2023.2"
  top, part, flow_target
  estimated         True: every number is the HLS tool's estimate, not a routed result
  target_clock_ns, uncertainty_ns, estimated_clock_ns, budget_ns (target - uncertainty)
  slack_ns          budget - estimated (csynth.rpt summary: the printed slack, sign made right)
  slack_printed     the summary table's top Slack as printed (summary layout only)
  issue_type        the top row's Issue Type (summary layout), None for "-"
  issues            [{"row", "issue_type"}] every row of the summary table with an Issue Type
  latency_min, latency_max, interval_min, interval_max   cycles | "undef" | None
  pipeline_type     "none" | "no" | "yes" | "dataflow" | ...
  resources         {"bram_18k", "dsp", "ff", "lut", "uram"} int | None
  available         the same keys for the part (None when not printed)
  loops             [{"name", "parent", "module", "latency_min", "latency_max",
                      "iteration_latency", "ii", "ii_target", "trip_count", "pipelined",
                      "issue_type"}]
  targets_from      csynth.xml read with the rpt beside it (kabe.parsers.vitis_detect): that rpt's name
  issues_known      the file carries the tool's Issue Types (summary rpt; csynth.xml from 2021.1)
  modules           summary layout: [{"name", "parent", "dataflow", "issue_type", "slack_ns",
                      "latency", "interval", "pipelined"}], else []

A truncated or damaged file is refused (ReportError: one line naming the file and what is wrong):
an xml that does not parse or lacks the clock or latency, a rpt whose tables do not close, that
lacks its timing, latency or utilization section, or that does not end with a table's border.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from kabe.parsers import ReportError
from kabe.parsers.vitis_common import (UNDEF, cell_float, cell_int, column_names, ends_with_border, is_border,
                                       split_row, table_at)

RESOURCE_KEYS = ("bram_18k", "dsp", "ff", "lut", "uram")
_RES_COLUMN = {"BRAM_18K": "bram_18k", "BRAM": "bram_18k", "DSP48E": "dsp", "DSP48": "dsp", "DSP": "dsp",
               "DSP58E": "dsp", "FF": "ff", "LUT": "lut", "URAM": "uram"}


def _empty(layout: str) -> dict:
    return {"layout": layout, "tool": None, "version": None, "top": None, "part": None, "flow_target": None,
            "estimated": True, "target_clock_ns": None, "uncertainty_ns": None, "estimated_clock_ns": None,
            "budget_ns": None, "slack_ns": None, "slack_printed": None, "issue_type": None, "issues": [],
            "latency_min": None, "latency_max": None, "interval_min": None, "interval_max": None,
            "pipeline_type": None, "resources": dict.fromkeys(RESOURCE_KEYS), "available": None,
            "loops": [], "modules": [], "issues_known": False, "targets_from": None}


def _finish_clock(rec: dict) -> dict:
    t, u, e = rec["target_clock_ns"], rec["uncertainty_ns"], rec["estimated_clock_ns"]
    if isinstance(t, float) and isinstance(u, float):
        rec["budget_ns"] = round(t - u, 6)
        if isinstance(e, float):
            rec["slack_ns"] = round(t - u - e, 6)
    return rec


# ---------------------------------------------------------------- csynth.xml

def parse_xml(text: str, source: str) -> dict:
    """The record of a csynth.xml text."""
    head = text[:4096]
    if "<!DOCTYPE" in head or "<!ENTITY" in text:
        raise ReportError(f"{source}: csynth.xml with a DOCTYPE or ENTITY declaration; HLS never writes one, "
                          f"kabe does not expand them")
    try:
        root = ET.fromstring(text)
    except ET.ParseError as e:
        raise ReportError(f"{source}: csynth.xml does not parse ({e}); the file is cut or damaged: "
                          f"regenerate it with csynth_design") from None
    if root.tag != "profile":
        raise ReportError(f"{source}: xml root is <{root.tag[:40]}>, not the <profile> of a csynth.xml")
    rec = _empty("csynth.xml")
    rec["version"] = _txt(root, "ReportVersion/Version")
    rec["tool"] = None
    ua = root.find("UserAssignments")
    pe = root.find("PerformanceEstimates")
    if ua is None or pe is None:
        raise ReportError(f"{source}: csynth.xml has no <UserAssignments> or <PerformanceEstimates>; "
                          f"not a complete synthesis report")
    rec["part"] = _txt(ua, "Part")
    rec["top"] = _txt(ua, "TopModelName")
    rec["flow_target"] = _txt(ua, "FlowTarget")
    rec["target_clock_ns"] = _xfloat(ua, "TargetClockPeriod", source)
    rec["uncertainty_ns"] = _xfloat(ua, "ClockUncertainty", source)
    rec["estimated_clock_ns"] = _xfloat(pe, "SummaryOfTimingAnalysis/EstimatedClockPeriod", source)
    if rec["top"] is None or rec["target_clock_ns"] is None or rec["estimated_clock_ns"] is None:
        raise ReportError(f"{source}: csynth.xml lacks the top, the target clock or the estimated clock; "
                          f"not a complete synthesis report")
    rec["pipeline_type"] = _txt(pe, "PipelineType")
    lat = pe.find("SummaryOfOverallLatency")
    if lat is None:
        raise ReportError(f"{source}: csynth.xml has no <SummaryOfOverallLatency>; not a complete synthesis report")
    rec["latency_min"] = _xrange(lat, "Best-caseLatency", source)[0]
    rec["latency_max"] = _xrange(lat, "Worst-caseLatency", source)[1]
    rec["interval_min"] = _xrange(lat, "Interval-min", source)[0]
    rec["interval_max"] = _xrange(lat, "Interval-max", source)[1]
    if rec["pipeline_type"] is None:
        rec["pipeline_type"] = _txt(lat, "PipelineType")
    loops = pe.find("SummaryOfLoopLatency")
    if loops is not None:
        _xml_loops(loops, None, rec["top"], rec["loops"], source)
    viol = pe.find("SummaryOfViolations")  # Vitis HLS 2021.1 on: the Issue Type of every loop
    rec["issues_known"] = viol is not None
    if viol is not None:
        top_issue = _txt(viol, "IssueType")
        rec["issue_type"] = None if top_issue in (None, "-") else top_issue
        if rec["issue_type"]:
            rec["issues"].append({"row": rec["top"], "issue_type": rec["issue_type"]})
        by_name = {}
        for el in viol.iter():
            nm, it = _txt(el, "Name"), _txt(el, "IssueType")
            if nm and it and it != "-" and el is not viol:
                by_name.setdefault(nm, it)
        for lp in rec["loops"]:
            lp["issue_type"] = by_name.get(lp["name"])
            if lp["issue_type"]:
                rec["issues"].append({"row": lp["name"], "issue_type": lp["issue_type"]})
    area = root.find("AreaEstimates")
    if area is None or area.find("Resources") is None:
        raise ReportError(f"{source}: csynth.xml has no <AreaEstimates><Resources>; not a complete synthesis report")
    rec["resources"] = _xres(area.find("Resources"), source)
    avail = area.find("AvailableResources")
    rec["available"] = _xres(avail, source) if avail is not None else None
    return _finish_clock(rec)


_LOOP_FIELDS = {"TripCount", "Latency", "AbsoluteTimeLatency", "IterationLatency", "PipelineII", "PipelineDepth",
                "Slack", "InstanceList", "Name", "PipelineType", "range", "unit"}


def _xml_loops(node, parent: str | None, module: str | None, out: list, source: str) -> None:
    for child in node:
        if child.tag in _LOOP_FIELDS or len(child) == 0 and child.tag != "Loop":
            continue
        name = _txt(child, "Name") or child.tag
        lmin, lmax = _xrange(child, "Latency", source)
        tmin, tmax = _xrange(child, "TripCount", source)
        ii = _xrange(child, "PipelineII", source)[1]
        ptype = _txt(child, "PipelineType")
        pipelined = ptype if ptype is not None else ("yes" if ii not in (None, UNDEF) else None)
        out.append({"name": name, "parent": parent, "module": module, "latency_min": lmin, "latency_max": lmax,
                    "iteration_latency": _xrange(child, "IterationLatency", source)[1], "ii": ii,
                    "ii_target": None, "trip_count": tmax if tmin == tmax else {"min": tmin, "max": tmax},
                    "pipelined": pipelined, "issue_type": None, "pipeline_depth": _xrange(child, "PipelineDepth", source)[1]})
        _xml_loops(child, name, module, out, source)


def _txt(node, path: str) -> str | None:
    el = node.find(path)
    if el is None or el.text is None:
        return None
    return el.text.strip() or None


def _xfloat(node, path: str, source: str):
    v = cell_float(_txt(node, path), source, f"<{path}>")
    return v


_TILDE = re.compile(r"^\s*(\S+)\s*~\s*(\S+)\s*$")


def _xrange(node, tag: str, source: str) -> tuple:
    """(min, max) of an element that is a number, '?'/undef, 'a ~ b' or <range><min/><max/></range>."""
    el = node.find(tag)
    if el is None:
        return None, None
    rng = el.find("range")
    if rng is not None:
        return cell_int(_txt(rng, "min"), source, f"<{tag}> min"), cell_int(_txt(rng, "max"), source, f"<{tag}> max")
    t = (el.text or "").strip()
    m = _TILDE.match(t)
    if m:
        return cell_int(m.group(1), source, f"<{tag}>"), cell_int(m.group(2), source, f"<{tag}>")
    v = cell_int(t, source, f"<{tag}>")
    return v, v


def _xres(node, source: str) -> dict:
    out = dict.fromkeys(RESOURCE_KEYS)
    for child in node:
        key = _RES_COLUMN.get(child.tag)
        if key and out[key] is None:
            out[key] = cell_int((child.text or "").strip(), source, f"<{child.tag}>")
    return out


# ---------------------------------------------------------------- csynth.rpt

# the last section of a 2021.1+ summary report may be empty: "== Pragma Report" then "  No pragmas found"
_EMPTY_SECTION_END = re.compile(r"^[ \t]*No [\w /-]+ (?:found|in design)\.?[ \t]*$")
_SUMMARY_TITLE = re.compile(r"^== Synthesis Summary Report of '([^']*)'", re.M)
_OLD_TITLE = re.compile(r"^== (Vivado HLS|Vitis HLS) Report for '([^']*)'", re.M)
_BULLET = re.compile(r"^[ \t]*\*[ \t]*([A-Za-z][A-Za-z ]*?):[ \t]*(.*?)[ \t]*$", re.M)


def parse(text: str, source: str) -> dict:
    """The record of a csynth.rpt text (either layout)."""
    if not ends_with_border(text) and not _EMPTY_SECTION_END.search(text.rstrip().split("\n")[-1]):
        raise ReportError(f"{source}: csynth.rpt does not end with a table's closing border (or an empty section's "
                          f"'No ... found' line); the report is cut: regenerate it")
    lines = text.split("\n")
    m = _SUMMARY_TITLE.search(text)
    if m:
        return _parse_summary(text, lines, m.group(1), source)
    m = _OLD_TITLE.search(text)
    if m:
        return _parse_old(text, lines, m.group(1), m.group(2), source)
    raise ReportError(f"{source}: no '== Synthesis Summary Report of' or '== Vivado/Vitis HLS Report for' title; "
                      f"not a csynth.rpt")


def _bullets(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for m in _BULLET.finditer(text[:8000]):
        out.setdefault(m.group(1).strip().lower(), m.group(2).strip())
    return out


def _general(rec: dict, text: str) -> None:
    b = _bullets(text)
    ver = b.get("version")
    rec["version"] = ver.split()[0] if ver else None
    rec["part"] = b.get("target device") or None
    sol = b.get("solution") or ""
    m = re.search(r"\(([^)]*)\)", sol)
    rec["flow_target"] = m.group(1) if m else None


def _line_index(lines: list[str], pattern: re.Pattern, start: int = 0) -> int | None:
    for i in range(start, len(lines)):
        if pattern.search(lines[i]):
            return i
    return None


def _col(names: list[str], *want: str, exclude: tuple[str, ...] = ()) -> int | None:
    """The first column whose (lower-cased) name contains every word in `want` and none in `exclude`."""
    for k, n in enumerate(names):
        low = n.lower()
        if all(w in low for w in want) and not any(x in low for x in exclude):
            return k
    return None


def _cell(row: list[str], k: int | None) -> str | None:
    return row[k] if k is not None and k < len(row) else None


def _parse_old(text: str, lines: list[str], tool: str, top: str, source: str) -> dict:
    rec = _empty("csynth.rpt")
    rec["tool"], rec["top"] = tool, top
    _general(rec, text)
    # timing: | Clock | Target | Estimated | Uncertainty |
    i = _line_index(lines, re.compile(r"^\+ Timing"))
    if i is None:
        raise ReportError(f"{source}: csynth.rpt has no '+ Timing' section; the report is cut or not a synthesis report")
    head, body, end = table_at(lines, i + 2, source, "timing summary")
    names = column_names(head)
    kt, ke, ku = _col(names, "target"), _col(names, "estimated"), _col(names, "uncertainty")
    if kt is None or ke is None or not body:
        raise ReportError(f"{source}: the timing summary has no Target/Estimated columns or no clock row")
    row = body[0]
    rec["target_clock_ns"] = cell_float(_cell(row, kt), source, "Target")
    rec["estimated_clock_ns"] = cell_float(_cell(row, ke), source, "Estimated")
    rec["uncertainty_ns"] = cell_float(_cell(row, ku), source, "Uncertainty") if ku is not None else None
    # latency summary
    i = _line_index(lines, re.compile(r"^\+ Latency"), end)
    if i is None:
        raise ReportError(f"{source}: csynth.rpt has no '+ Latency' section; the report is cut")
    head, body, end = table_at(lines, i + 2, source, "latency summary")
    names = column_names(head)
    if not body:
        raise ReportError(f"{source}: the latency summary has no row; the report is cut")
    row = body[0]
    cyc = ("absolute",)
    rec["latency_min"] = cell_int(_cell(row, _col(names, "latency", "min", exclude=cyc)), source, "Latency min")
    rec["latency_max"] = cell_int(_cell(row, _col(names, "latency", "max", exclude=cyc)), source, "Latency max")
    rec["interval_min"] = cell_int(_cell(row, _col(names, "interval", "min")), source, "Interval min")
    rec["interval_max"] = cell_int(_cell(row, _col(names, "interval", "max")), source, "Interval max")
    pk = _col(names, "pipeline")
    rec["pipeline_type"] = (_cell(row, pk) or "").strip() or None
    # loops of this function
    utl = _line_index(lines, re.compile(r"^== Utilization Estimates"), end)
    if utl is None:
        raise ReportError(f"{source}: csynth.rpt has no '== Utilization Estimates' section; the report is cut")
    li = _line_index(lines[:utl], re.compile(r"^[ \t]*\* Loop:"), end)
    if li is not None and not lines[li + 1].strip().upper().startswith("N/A"):
        head, body, _ = table_at(lines, li + 1, source, "loop")
        rec["loops"] = _old_loops(column_names(head), body, top, source)
    # utilization summary: Total / Available rows
    head, body, _ = table_at(lines, utl + 2, source, "utilization summary")
    names = [n.strip() for n in column_names(head)]
    total = next((r for r in body if r and r[0].strip() == "Total"), None)
    if total is None:
        raise ReportError(f"{source}: the utilization summary has no Total row; the report is cut")
    rec["resources"] = _res_row(names, total, source)
    avail = next((r for r in body if r and r[0].strip() == "Available"), None)
    rec["available"] = _res_row(names, avail, source) if avail else None
    if _line_index(lines, re.compile(r"^== Interface"), utl) is None:
        # every report of this layout ends with its Interface section (the RTL ports)
        raise ReportError(f"{source}: csynth.rpt has no '== Interface' section after its utilization; the report "
                          f"is cut: regenerate it")
    return _finish_clock(rec)


def _res_row(names: list[str], row: list[str], source: str) -> dict:
    out = dict.fromkeys(RESOURCE_KEYS)
    for k, n in enumerate(names):
        key = _RES_COLUMN.get(n.upper().replace(" ", ""))
        if key and out[key] is None:
            out[key] = cell_int(_cell(row, k), source, f"{n} ({row[0].strip()})")
    return out


_MARK = re.compile(r"^( *)([-+o]+) ?(.*)$")


def _old_loops(names: list[str], body: list[list[str]], top: str, source: str) -> list[dict]:
    k_lmin = _col(names, "latency", "min")
    k_lmax = _col(names, "latency", "max")
    k_it = _col(names, "iteration")
    k_ii = _col(names, "achieved")
    k_iit = _col(names, "target")
    k_trip = _col(names, "trip")
    k_pipe = _col(names, "pipelined")
    out, stack = [], []
    for row in body:
        raw = row[0].rstrip()
        m = _MARK.match(raw)
        depth = len(m.group(1)) if m else 0
        name = (m.group(3) if m else raw).strip()
        if not name:
            continue
        stack = stack[:depth]
        out.append({"name": name, "parent": stack[-1] if stack else None, "module": top,
                    "latency_min": cell_int(_cell(row, k_lmin), source, f"loop {name} latency"),
                    "latency_max": cell_int(_cell(row, k_lmax), source, f"loop {name} latency"),
                    "iteration_latency": cell_int(_cell(row, k_it), source, f"loop {name} iteration latency"),
                    "ii": cell_int(_cell(row, k_ii), source, f"loop {name} achieved II"),
                    "ii_target": cell_int(_cell(row, k_iit), source, f"loop {name} target II"),
                    "trip_count": _trip(_cell(row, k_trip), source, name),
                    "pipelined": (_cell(row, k_pipe) or "").strip() or None, "issue_type": None,
                    "pipeline_depth": None})
        stack.append(name)
    return out


def _trip(cell: str | None, source: str, name: str):
    c = (cell or "").strip()
    m = _TILDE.match(c)
    if m:
        return {"min": cell_int(m.group(1), source, f"loop {name} trip count"),
                "max": cell_int(m.group(2), source, f"loop {name} trip count")}
    return cell_int(c, source, f"loop {name} trip count")


_SUMMARY_ROW = re.compile(r"^( *)([+o]) (.*?)(\*?)$")


def _parse_summary(text: str, lines: list[str], top: str, source: str) -> dict:
    rec = _empty("csynth.rpt summary")
    rec["tool"], rec["top"], rec["issues_known"] = "Vitis HLS", top, True
    _general(rec, text)
    i = _line_index(lines, re.compile(r"^\+ Performance & Resource Estimates"))
    if i is None:
        raise ReportError(f"{source}: csynth.rpt has no '+ Performance & Resource Estimates' table; the report is cut")
    j = _line_index(lines, re.compile(r"^[ \t]*\+-"), i)
    if j is None or j > i + 6:
        raise ReportError(f"{source}: the Performance & Resource Estimates table is missing; the report is cut")
    head, body, _ = table_at(lines, j, source, "Performance & Resource Estimates")
    names = column_names(head)
    k = {key: _col(names, *words) for key, words in {
        "issue": ("issue",), "slack": ("slack",), "lat": ("latency", "cycles"), "iter": ("iteration",),
        "interval": ("interval",), "trip": ("trip",), "pipe": ("pipelined",), "bram": ("bram",), "dsp": ("dsp",),
        "ff": ("ff",), "lut": ("lut",), "uram": ("uram",)}.items()}
    if k["slack"] is None or k["lat"] is None or k["interval"] is None or not body:
        raise ReportError(f"{source}: the Performance & Resource Estimates table lacks Slack, Latency or Interval "
                          f"columns, or has no rows")
    if rec["version"] is None:
        raise ReportError(f"{source}: no '* Version:' line, so the sign of the Slack column cannot be told "
                          f"(Vitis HLS 2020.2 prints it inverted); give kabe the csynth.xml or the whole report")
    inverted = rec["version"].startswith("2020.")  # 2020.2 prints estimate - budget
    stack: list[tuple[str, str]] = []  # (kind, name) per depth
    for row in body:
        m = _SUMMARY_ROW.match(row[0].rstrip())
        if not m:
            raise ReportError(f"{source}: a Performance & Resource Estimates row starts '{row[0].strip()[:40]}', "
                              f"not '+ module' or 'o loop'; damaged report")
        depth, kind, name, star = len(m.group(1)), m.group(2), m.group(3).strip(), m.group(4)
        stack = stack[:depth]
        parent = stack[-1][1] if stack else None
        module = next((n for kd, n in reversed(stack) if kd == "+"), None)
        issue = (_cell(row, k["issue"]) or "").strip()
        issue = None if issue in ("", "-") else issue
        printed = cell_float(_cell(row, k["slack"]), source, f"Slack of {name}", unit="")
        slack = None if not isinstance(printed, float) else (-printed if inverted else printed)
        pipe = (_cell(row, k["pipe"]) or "").strip() or None
        # In this table a latency, trip count or module interval is always defined, so '-' there is
        # the tool's "undef"; a loop's Interval is its II, which a loop that is not pipelined has none of
        lat = _dash_undef(cell_int(_cell(row, k["lat"]), source, f"Latency of {name}"))
        interval = cell_int(_cell(row, k["interval"]), source, f"Interval of {name}")
        if kind == "+" or pipe not in (None, "no"):
            interval = _dash_undef(interval)
        if issue:
            rec["issues"].append({"row": name, "issue_type": issue})
        if kind == "o":
            rec["loops"].append({"name": name, "parent": parent, "module": module, "latency_min": None,
                                 "latency_max": lat, "iteration_latency": cell_int(_cell(row, k["iter"]), source,
                                                                                   f"Iteration Latency of {name}"),
                                 "ii": interval, "ii_target": None,
                                 "trip_count": _dash_undef(_trip(_cell(row, k["trip"]), source, name)), "pipelined": pipe,
                                 "issue_type": issue, "pipeline_depth": None})
        else:
            mod = {"name": name, "parent": parent, "dataflow": bool(star), "issue_type": issue, "slack_ns": slack,
                   "latency": lat, "interval": interval, "pipelined": pipe}
            rec["modules"].append(mod)
            if depth == 0 and rec["slack_printed"] is None and name == top:
                rec["slack_printed"] = printed if isinstance(printed, float) else None
                rec["slack_ns"] = slack
                rec["issue_type"] = issue
                rec["latency_max"], rec["interval_max"] = lat, interval
                rec["pipeline_type"] = pipe
                rec["resources"] = {key: cell_int(_cell(row, k[c]), source, f"{c.upper()} of {name}")
                                    for key, c in zip(RESOURCE_KEYS, ("bram", "dsp", "ff", "lut", "uram"))}
        stack.append((kind, name))
    if not rec["modules"] or rec["modules"][0]["name"] != top:
        raise ReportError(f"{source}: the first row of the estimates table is not the top '{top}'; damaged report")
    return rec


def _dash_undef(v):
    return UNDEF if v is None else v


def parse_report(rep) -> dict:
    """For kabe.parsers.detect: a Report (text already opened) of kind vitis_hls_csynth_rpt."""
    return parse(rep.text, rep.source)


def with_rpt_targets(xml_rec: dict, rpt_rec: dict, rpt_source: str) -> dict:
    """`xml_rec` with each loop's target II (and Issue Type) taken from the csynth.rpt HLS wrote beside
    it: csynth.xml has no target II, the rpt does. Loops matched by name within the same top."""
    if rpt_rec.get("top") != xml_rec.get("top"):
        return xml_rec
    # the rpt's "Loop 1" is the xml's <Loop1> (an element name has no space)
    by_name = {lp["name"].replace(" ", ""): lp for lp in rpt_rec["loops"]}
    for lp in xml_rec["loops"]:
        other = by_name.get(lp["name"].replace(" ", ""))
        if other is not None:
            lp["ii_target"] = other["ii_target"] if lp["ii_target"] is None else lp["ii_target"]
            lp["issue_type"] = lp["issue_type"] or other["issue_type"]
    if rpt_rec["issues_known"] and not xml_rec["issues_known"]:
        xml_rec["issues_known"] = True
        xml_rec["issues"] += [i for i in rpt_rec["issues"] if i not in xml_rec["issues"]]
    xml_rec["targets_from"] = rpt_source
    return xml_rec


def metrics(rec: dict, cosim: dict | None = None) -> dict:
    """metrics.json's `hls` object (metrics.schema.json) from a csynth record and, when it ran, the
    cosim record (kabe.parsers.vitis_cosim): latency and II per loop, over commits."""
    out = {"estimated": True, "source": rec["layout"], "tool": rec["tool"], "version": rec["version"], "top": rec["top"]}
    # with these, kabe.rules.hls_gate.csynth_checks re-derives the verdict from metrics.json alone
    for k in ("layout", "target_clock_ns", "uncertainty_ns", "estimated_clock_ns", "slack_ns", "slack_printed",
              "latency_min", "latency_max", "interval_min", "interval_max", "issues_known"):
        out[k] = rec[k]
    out["issues"] = [dict(i) for i in rec["issues"]]
    out["resources"] = dict(rec["resources"])
    out["loops"] = [{"name": lp["name"], "module": lp["module"], "ii": lp["ii"], "ii_target": lp["ii_target"],
                     "latency_max": lp["latency_max"], "pipelined": lp["pipelined"], "trip_count": lp["trip_count"],
                     "issue_type": lp["issue_type"]}
                    for lp in rec["loops"]]
    if cosim is not None:
        ran = [cosim["rtl"][lang] for lang in cosim["simulated"]]
        out["cosim"] = {"passed": cosim["passed"],
                        "latency_max": ran[0]["latency_max"] if ran else None,
                        "interval_max": ran[0]["interval_max"] if ran else None}
    else:
        out["cosim"] = None
    return out
