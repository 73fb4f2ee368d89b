"""Vivado `report_timing_summary` -> the metrics `timing` record (docs/metrics.md).

Read: Design Timing Summary (WNS/TNS/WHS/THS/WPWS/TPWS with failing/total endpoints), the
verdict line under it, Clock Summary, Intra Clock Table, Inter Clock Table, Other Path Groups
Table, Unconstrained Path Table, check_timing counts, and the worst "Max Delay Paths" path of
Timing Details as `critical_path`.

A report kabe cannot fully trust raises ReportError; there is no partial result:
  * empty text, a header naming another command, no "Design Timing Summary" table;
  * a summary row with a missing or non-numeric value, a table row that does not line up;
  * a file cut short: the sections every report_timing_summary prints (Design Timing Summary,
    Clock Summary, Intra Clock Table, Inter Clock Table, Other Path Groups Table, Timing Details)
    must all be present, in order, so a cut anywhere before Timing Details is caught; a cut
    inside Timing Details is caught by the path parser (incomplete path) or by the rule that the
    worst max-delay path printed there must carry exactly the Design Timing Summary's WNS.
Tolerated: any column spacing, "inf"/"NA" values (-> null), optional sections absent.

"inf"/"NA" become None: a null WNS/WHS/WPWS means "no number" and the gate must treat it as a
failure, never as a pass. `verdict_agrees(record)` cross-checks the verdict line against the
numbers; `must_fail_reasons(record)` lists every reason such a record can not pass.
"""

from __future__ import annotations

import re

from kabe.parsers import ReportError
from kabe.parsers._vivado_common import (
    command_name, dash_spans, header_names, integer, number, parse_header, read_report,
    require_text, split_aligned_row,
)
from kabe.parsers.vivado_timing_paths import parse_path_blocks

REQUIRED_SECTIONS = ("Design Timing Summary", "Clock Summary", "Intra Clock Table",
                     "Inter Clock Table", "Other Path Groups Table", "Timing Details")

VERDICT_MET = "All user specified timing constraints are met."
VERDICT_NOT_MET = "Timing constraints are not met."
VERDICT_NONE = "There are no user specified timing constraints."
_VERDICTS = {VERDICT_MET: "met", VERDICT_NOT_MET: "not_met", VERDICT_NONE: "unconstrained"}

# Design Timing Summary / Intra Clock Table column title -> record key
_SUMMARY_COLS = {
    "WNS(ns)": "wns_ns", "TNS(ns)": "tns_ns",
    "TNS Failing Endpoints": "failing_endpoints", "TNS Total Endpoints": "total_endpoints",
    "WHS(ns)": "whs_ns", "THS(ns)": "ths_ns",
    "THS Failing Endpoints": "hold_failing_endpoints", "THS Total Endpoints": "hold_total_endpoints",
    "WPWS(ns)": "wpws_ns", "TPWS(ns)": "tpws_ns",
    "TPWS Failing Endpoints": "pw_failing_endpoints", "TPWS Total Endpoints": "pw_total_endpoints",
}
_BOX_TITLE_RE = re.compile(r"^\| (\S.*?)\s*$")
_BOX_UNDER_RE = re.compile(r"^\| -+\s*$")
_CHECK_HEAD_RE = re.compile(r"^(\d+)\.\s+checking\s+(\w+)(?:\s+\((\d+)\))?\s*$")
_THERE_ARE_RE = re.compile(r"^\s*There (?:are|is) (\d+) (.*)$")
_CLOCK_ROW_RE = re.compile(r"^(\s*)(\S+)\s+\{\s*([^}]*?)\s*\}\s+(\S+)\s+(\S+)\s*$")


def _sections(lines: list[str]) -> list[tuple[str, int, int]]:
    """(title, first body line, end line) of each `| Title` / `| -----` boxed section."""
    heads = []
    for i in range(len(lines) - 1):
        m = _BOX_TITLE_RE.match(lines[i])
        if m and _BOX_UNDER_RE.match(lines[i + 1]) and not lines[i].startswith("| -"):
            heads.append((m.group(1), i))
    out = []
    for k, (title, i) in enumerate(heads):
        body_start = i + 2
        if body_start < len(lines) and lines[body_start].startswith("----"):
            body_start += 1
        end = heads[k + 1][1] - 1 if k + 1 < len(heads) else len(lines)
        # the dashed rule line above the next box belongs to it, not to this body
        while end > body_start and lines[end - 1].startswith("----"):
            end -= 1
        out.append((title, body_start, end))
    return out


def _aligned_table(body: list[str], n_left: int, *, what: str, source: str,
                   first_line: int) -> tuple[list[str], list[list[str]], int]:
    """A space-aligned table at the top of `body`: (column titles, rows, index after table)."""
    i = 0
    while i < len(body) and not body[i].strip():
        i += 1
    if i + 1 >= len(body) or not re.fullmatch(r"[\s-]+", body[i + 1]) or "-" not in body[i + 1]:
        raise ReportError(f"{source}: {what} (line {first_line + i}): no table header followed "
                          f"by a row of dashes (report cut short or malformed)")
    spans = dash_spans(body[i + 1])
    names = header_names(body[i], spans)
    rows = []
    j = i + 2
    while j < len(body) and body[j].strip():
        rows.append(split_aligned_row(body[j], spans, n_left, what=what, source=source))
        j += 1
    return names, rows, j


def _summary_values(names, cells, *, what: str, source: str, allow_blank: bool) -> dict:
    out = {}
    for name, cell in zip(names, cells):
        key = _SUMMARY_COLS.get(name)
        if key is None:
            continue
        if not cell and not allow_blank:
            raise ReportError(f"{source}: {what}: column '{name}' has no value (row cut short)")
        if key.endswith("_ns"):
            out[key] = number(cell, what=f"{what} {name}", source=source)
        else:
            out[key] = integer(cell, what=f"{what} {name}", source=source)
    return out


def _parse_check_timing(lines: list[str], start: int, end: int, source: str) -> dict:
    counts: dict[str, int] = {}
    items = []
    for i in range(start, end):
        m = _CHECK_HEAD_RE.match(lines[i])
        if m and i + 1 < end and lines[i + 1].startswith("---"):
            items.append((i, m.group(2), m.group(3)))
    for k, (i, name, cnt) in enumerate(items):
        if cnt is not None:
            counts[name] = int(cnt)
            continue
        stop = items[k + 1][0] if k + 1 < len(items) else end
        total, seen = 0, False
        for ln in lines[i + 2:stop]:
            tm = _THERE_ARE_RE.match(ln)
            if tm and " but " not in tm.group(2) and "due to constant clock" not in tm.group(2):
                total += int(tm.group(1))
                seen = True
        if not seen:
            raise ReportError(f"{source}: check_timing item '{name}' (line {i + 1}) has no count")
        counts[name] = total
    return counts


def parse(text: str, source: str = "<report_timing_summary>") -> dict:
    text = require_text(text, source)
    header = parse_header(text)
    cmd = command_name(header)
    if cmd is not None and cmd != "report_timing_summary":
        raise ReportError(f"{source}: header says Command {cmd}, not report_timing_summary")
    lines = text.split("\n")
    secs = _sections(lines)
    titles = [t for t, _, _ in secs]
    if "Design Timing Summary" not in titles:
        raise ReportError(f"{source}: no 'Design Timing Summary' table; not a complete "
                          f"report_timing_summary (empty, cut short, or another report)")
    missing = [t for t in REQUIRED_SECTIONS if t not in titles]
    if missing:
        raise ReportError(f"{source}: section(s) {', '.join(repr(t) for t in missing)} missing; "
                          f"the report is cut short (last section present: {titles[-1]!r})")
    pos = [titles.index(t) for t in REQUIRED_SECTIONS]
    if pos != sorted(pos):
        raise ReportError(f"{source}: sections out of order; not a report_timing_summary layout")
    sec = {t: (s, e) for t, s, e in secs}

    def body(title):
        s, e = sec[title]
        return lines[s:e], s + 1

    rec: dict = {"estimated": False, "source": "vivado report_timing_summary",
                 "tool_version": header.get("tool_version"), "design": header.get("design"),
                 "device": header.get("device")}

    # --- Design Timing Summary + verdict line
    b, ln0 = body("Design Timing Summary")
    names, rows, after = _aligned_table(b, 0, what="Design Timing Summary", source=source,
                                        first_line=ln0)
    if len(rows) != 1:
        raise ReportError(f"{source}: Design Timing Summary has {len(rows)} value rows, expected 1")
    absent = [c for c in ("WNS(ns)", "TNS(ns)", "TNS Failing Endpoints", "TNS Total Endpoints")
              if c not in names]
    if absent:
        raise ReportError(f"{source}: Design Timing Summary lacks column(s) {', '.join(absent)}")
    vals = _summary_values(names, rows[0], what="Design Timing Summary", source=source,
                           allow_blank=False)
    for key in _SUMMARY_COLS.values():
        rec[key] = vals.get(key)
    verdict = next((x.strip() for x in b[after:] if x.strip()), None)
    if verdict is None:
        raise ReportError(f"{source}: no verdict line after the Design Timing Summary table")
    rec["verdict_line"] = verdict
    rec["verdict"] = _VERDICTS.get(verdict, "unknown")

    # --- Clock Summary
    b, ln0 = body("Clock Summary")
    i = 0
    while i < len(b) and not b[i].strip():
        i += 1
    clocks = []
    if i < len(b):
        if not (b[i].lstrip().startswith("Clock") and i + 1 < len(b) and b[i + 1].strip().startswith("-")):
            raise ReportError(f"{source}: Clock Summary (line {ln0 + i}): no 'Clock  Waveform(ns)' "
                              f"table header")
        j = i + 2
        while j < len(b) and b[j].strip():
            m = _CLOCK_ROW_RE.match(b[j])
            if not m:
                raise ReportError(f"{source}: Clock Summary line {ln0 + j}: {b[j].strip()!r} is "
                                  f"not 'name {{waveform}} period frequency'")
            clocks.append({
                "name": m.group(2),
                "waveform": [float(x) for x in m.group(3).split()],
                "period_ns": number(m.group(4), what=f"clock {m.group(2)} period", source=source),
                "frequency_mhz": number(m.group(5), what=f"clock {m.group(2)} frequency", source=source),
                "generated": len(m.group(1)) > 0,
            })
            j += 1
    by_name = {c["name"]: c for c in clocks}

    # --- Intra Clock Table: per-clock numbers merged into the clock entries
    b, ln0 = body("Intra Clock Table")
    if any(x.strip() for x in b):
        names, rows, _ = _aligned_table(b, 1, what="Intra Clock Table", source=source, first_line=ln0)
        for cells in rows:
            name = cells[0]
            vals = _summary_values(names[1:], cells[1:], what=f"Intra Clock Table {name}",
                                   source=source, allow_blank=True)
            entry = by_name.get(name)
            if entry is None:
                raise ReportError(f"{source}: Intra Clock Table names clock {name!r} that the "
                                  f"Clock Summary does not list")
            entry.update(vals)
    for c in clocks:
        for key in ("wns_ns", "tns_ns", "whs_ns", "ths_ns", "wpws_ns", "tpws_ns"):
            c.setdefault(key, None)
    rec["clocks"] = clocks

    # --- Inter Clock Table / Other Path Groups Table
    inter = []
    b, ln0 = body("Inter Clock Table")
    if any(x.strip() for x in b):
        names, rows, _ = _aligned_table(b, 2, what="Inter Clock Table", source=source, first_line=ln0)
        for cells in rows:
            vals = _summary_values(names[2:], cells[2:], what="Inter Clock Table", source=source,
                                   allow_blank=True)
            inter.append({"from": cells[0], "to": cells[1], "type": "inter-clock", **vals})
    rec["clock_interaction"] = inter
    groups = []
    b, ln0 = body("Other Path Groups Table")
    if any(x.strip() for x in b):
        names, rows, _ = _aligned_table(b, 3, what="Other Path Groups Table", source=source,
                                        first_line=ln0)
        for cells in rows:
            vals = _summary_values(names[3:], cells[3:], what="Other Path Groups Table",
                                   source=source, allow_blank=True)
            groups.append({"path_group": cells[0], "from": cells[1] or None, "to": cells[2] or None,
                           **vals})
    rec["other_path_groups"] = groups

    # --- optional: Unconstrained Path Table, User Ignored Path Table
    for title, key in (("Unconstrained Path Table", "unconstrained_paths"),
                       ("User Ignored Path Table", "ignored_paths")):
        if title not in sec:
            rec[key] = None
            continue
        b, ln0 = body(title)
        entries = []
        if any(x.strip() for x in b):
            names, rows, _ = _aligned_table(b, 3, what=title, source=source, first_line=ln0)
            for cells in rows:
                entries.append({"path_group": cells[0], "from": cells[1] or None,
                                "to": cells[2] or None})
        rec[key] = entries

    # --- optional: check_timing
    ct_at = next((i for i, x in enumerate(lines) if x.strip() == "check_timing report"), None)
    if ct_at is not None:
        ct_end = min(s for t, s, _ in secs if t == "Design Timing Summary") - 3
        rec["check_timing"] = _parse_check_timing(lines, ct_at, ct_end, source)
    else:
        rec["check_timing"] = None
    ct = rec["check_timing"] or {}
    rec["unconstrained_endpoints"] = ct.get("unconstrained_internal_endpoints")
    rec["no_clock"] = ct.get("no_clock")

    # --- Timing Details: worst max-delay path
    s, e = sec["Timing Details"]
    paths = parse_path_blocks(lines[s:e], source=source, first_line=s + 1)
    worst = None
    for p in paths:
        if p["delay_type"] == "max" and p["slack_ns"] is not None:
            if worst is None or p["slack_ns"] < worst["slack_ns"]:
                worst = p
    if rec["wns_ns"] is not None:
        if worst is None:
            raise ReportError(f"{source}: WNS is {rec['wns_ns']} but Timing Details prints no "
                              f"constrained max-delay path (report cut short?)")
        if abs(worst["slack_ns"] - rec["wns_ns"]) > 0.0015:
            raise ReportError(f"{source}: worst max-delay path in Timing Details has slack "
                              f"{worst['slack_ns']}, Design Timing Summary WNS is {rec['wns_ns']} "
                              f"(report cut short inside Timing Details?)")
    rec["critical_path"] = None if worst is None else {
        "clock": worst["destination_clock"] or worst["path_group"],
        "slack_ns": worst["slack_ns"],
        "delay_ns": worst["data_path_delay_ns"],
        "logic_delay_ns": worst["logic_delay_ns"],
        "route_delay_ns": worst["route_delay_ns"],
        "logic_levels": worst["logic_levels"],
        "startpoint": worst["source"],
        "endpoint": worst["destination"],
        "path_group": worst["path_group"],
        "requirement_ns": worst["requirement_ns"],
        "clock_path_skew_ns": worst["clock_path_skew_ns"],
        "clock_uncertainty_ns": worst["clock_uncertainty_ns"],
        "cells": worst["cells"],
    }
    return rec


def parse_file(path) -> dict:
    return parse(read_report(path), str(path))


def verdict_agrees(rec: dict) -> tuple[bool, str]:
    """Does the verdict line agree with the numbers? (False, why) when it does not."""
    line = rec.get("verdict_line")
    kind = _VERDICTS.get(line or "", "unknown")
    nums = {k: rec.get(k) for k in ("wns_ns", "whs_ns", "wpws_ns")}
    negative = [f"{k[:-3].upper()} {v}" for k, v in nums.items() if v is not None and v < 0]
    failing = [f"{k} {rec.get(k)}" for k in ("failing_endpoints", "hold_failing_endpoints",
                                             "pw_failing_endpoints") if (rec.get(k) or 0) > 0]
    if kind == "unknown":
        return False, f"verdict line {line!r} is not one Vivado prints"
    if kind == "met":
        if negative or failing:
            return False, f"verdict says met but {', '.join(negative + failing)}"
        if nums["wns_ns"] is None:
            return False, "verdict says met but WNS is not a number (no constrained paths)"
        return True, "met, and WNS/WHS/WPWS are all >= 0"
    if kind == "not_met":
        if not negative and not failing:
            return False, ("verdict says not met but WNS/WHS/WPWS are all >= 0 (or null) with "
                           "no failing endpoints")
        return True, f"not met: {', '.join(negative + failing)}"
    # unconstrained
    if nums["wns_ns"] is not None or rec.get("clocks"):
        return False, "verdict says no timing constraints but a WNS or clocks are reported"
    return True, "no user specified timing constraints (this can never pass)"


def must_fail_reasons(rec: dict) -> list[str]:
    """Every reason this timing record can not pass a timing gate (empty list: nothing found).
    Conservative by design: a missing number is a reason, never an excuse."""
    r = []
    ok, why = verdict_agrees(rec)
    if not ok:
        r.append(f"verdict disagrees with numbers: {why}")
    if rec.get("verdict_line") != VERDICT_MET:
        r.append(f"verdict line is {rec.get('verdict_line')!r}, not {VERDICT_MET!r}")
    for key, label in (("wns_ns", "WNS (setup)"), ("whs_ns", "WHS (hold)"),
                       ("wpws_ns", "WPWS (pulse width)")):
        v = rec.get(key)
        if v is None:
            r.append(f"{label} is not a number (inf/NA: nothing constrained)")
        elif v < 0:
            r.append(f"{label} is {v} ns")
    for key in ("failing_endpoints", "hold_failing_endpoints", "pw_failing_endpoints"):
        if (rec.get(key) or 0) > 0:
            r.append(f"{key} is {rec[key]}")
    if not rec.get("clocks"):
        r.append("no clocks are defined (Clock Summary is empty)")
    if (rec.get("no_clock") or 0) > 0:
        r.append(f"check_timing no_clock: {rec['no_clock']} register/latch pins have no clock")
    if (rec.get("unconstrained_endpoints") or 0) > 0:
        r.append(f"check_timing unconstrained_internal_endpoints: {rec['unconstrained_endpoints']} "
                 f"pins are not constrained for maximum delay")
    for c in rec.get("clocks") or []:
        for key in ("wns_ns", "whs_ns", "wpws_ns"):
            v = c.get(key)
            if v is not None and v < 0:
                r.append(f"clock {c['name']}: {key} {v}")
    for c in rec.get("clock_interaction") or []:
        for key in ("wns_ns", "whs_ns"):
            v = c.get(key)
            if v is not None and v < 0:
                r.append(f"{c['from']} -> {c['to']}: {key} {v}")
    return r
