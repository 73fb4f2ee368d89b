"""kabe's own pre-route timing report (written by kabe.timing.report) -> metrics.json's `timing`.

The open flow archives that text report as its raw timing file and takes the record from it
through this parser, exactly as the Vivado flow takes its record from Vivado's report: what the
archive holds is what the gate saw. A report without its end marker is truncated: ReportError.
A report whose Clock Summary lists NOT-FOUND rows (a create_clock on an object the top lacks,
registers no clock reaches) reads as the estimate's own failing record (kabe.timing.report.
timing_record): `error` gives the build's reason, and the gate fails on it.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from kabe.parsers import ReportError
from kabe.parsers import report_file
from kabe.parsers.report_file import find_lines

from kabe.timing.report import (BAND_SECTION, FILL_SECTION, FILL_SET, FILL_WNS, CLOCK_INPUTS_PREFIX, END_MARKER, HEADER_PREFIX,  # the writer
                                MARGINAL, NO_CLOCK_ROW, NO_RTL, NOT_FOUND, RTL_LINES, RTL_SEP,  # defines
                                UNTIMED_PREFIX, clocks_message, not_timed_record)  # the format

_NUM = r"(-?\d+(?:\.\d+)?|NA)"
_STEP = re.compile(r"^\s+(-?\d+\.\d+)\s+(-?\d+\.\d+)\s+(-?\d+\.\d+)\s+(\S+)\s+(.*) \((\S+) -> (\S+)\)\s*$")


def _num(s: str):
    return None if s == "NA" else float(s)


_NOT_FOUND_ROW = re.compile(rf"^({re.escape(NO_CLOCK_ROW)}|\S+)\s+{re.escape(NOT_FOUND)} (.*)$")
_MISSING = re.compile(r"^(\S+) (.+?) not found in top (\S+) \((.*)\)$")
_UNCLOCKED = re.compile(r"^(\d+) register clock pin\(s\) clocked from (.+)$")


class _NotFound:
    """The Clock Summary's NOT-FOUND rows (kabe.timing.report.render): create_clock objects the
    netlist lacks, registers no clock reaches, and the ports the registers are clocked from. Read
    back into the estimate's own failing record (kabe.timing.report.timing_record): the gate fails
    with the build's reason, never with "cannot read"."""

    def __init__(self):
        self.missing: list[dict] = []
        self.top = ""
        self.unclocked_pins, self.unclocked_from = 0, []
        self.clock_inputs: list[str] = []  # reports from before this line: the message has no hint

    def __bool__(self) -> bool:
        return bool(self.missing or self.unclocked_pins)

    def read(self, line: str, origin: str) -> bool:
        """Whether `line` is one of these rows (taken in); a NOT-FOUND row that says nothing readable
        is a damaged report (ReportError), never a timed clock."""
        if line.startswith(CLOCK_INPUTS_PREFIX):
            body = line[len(CLOCK_INPUTS_PREFIX):].strip()
            self.clock_inputs = [] if body == "none" else body.split(", ")
            return True
        row = _NOT_FOUND_ROW.match(line)
        if row is None:
            return False
        name, body = row.group(1), row.group(2).strip()
        m = _UNCLOCKED.match(body) if name == NO_CLOCK_ROW else _MISSING.match(body)
        if m is None or (name == NO_CLOCK_ROW and int(m.group(1)) == 0):
            raise ReportError(f"{origin}: cannot read clock line {line!r}")
        if name == NO_CLOCK_ROW:
            self.unclocked_pins += int(m.group(1))
            self.unclocked_from += m.group(2).split(", ")
        else:
            self.top = self.top or m.group(3)
            self.missing.append({"clock": name, "kind": m.group(1), "target": m.group(2), "source": m.group(4)})
        return True

    def message(self, created: list[str]) -> str:
        """kabe.timing.report.missing_clocks_message, from the rows."""
        return clocks_message(created, self.missing, self.top, self.clock_inputs, self.unclocked_pins,
                              self.unclocked_from)


def _untimed_cells(lines: list[str], origin: str) -> dict[str, int]:
    """{cell type: count} the estimator had no delay model for. The line must be there: without it
    nobody can tell whether paths were cut, and a cut path makes the estimate optimistic."""
    at = find_lines(lines, re.compile("^" + re.escape(UNTIMED_PREFIX), re.M), literal=UNTIMED_PREFIX)
    line = lines[at[0]] if at else None
    if line is None:
        raise ReportError(f"{origin}: no {UNTIMED_PREFIX.strip()!r} line; cannot tell whether every cell was timed")
    body = line[len(UNTIMED_PREFIX):].strip()
    if body == "none":
        return {}
    out = {}
    for item in body.split(", "):
        m = re.match(r"^(\S+) x(\d+)$", item)
        if not m:
            raise ReportError(f"{origin}: cannot read untimed cell entry {item!r}")
        out[m.group(1)] = int(m.group(2))
    return out


_RANGE = r"(-?\d+\.\d+) \.\. (-?\d+\.\d+)"


def _band(body: list[str], origin: str) -> dict | None:
    """The Uncertainty section -> the record's `band` (None: the model had none). A section that
    is there but unreadable is an error: the band is what says "marginal"."""
    lines = [l for l in body if l.strip()]
    if lines == ["Band: none"]:
        return None
    try:
        head = re.match(rf"^Band: p(\d+)\.\.p(\d+) of routed / estimated route delay x {_RANGE} ", lines[0])
        wns = re.match(rf"^WNS band \(ns\): {_RANGE}$", lines[1])
        cpd = re.match(rf"^Critical path delay band \(ns\): {_RANGE}$", lines[2])
        mar = re.match(r"^Marginal: (yes|no)\b", lines[3])
        if not (head and wns and cpd and mar):
            raise ValueError
    except (IndexError, ValueError):
        raise ReportError(f"{origin}: the '{BAND_SECTION}' section is incomplete or unreadable") from None
    marginal = mar.group(1) == "yes"
    return {"quantiles": [int(head.group(1)) / 100, int(head.group(2)) / 100],
            "route_factor": [float(head.group(3)), float(head.group(4))],
            "wns_ns": [float(wns.group(1)), float(wns.group(2))],
            "critical_path_delay_ns": [float(cpd.group(1)), float(cpd.group(2))],
            "marginal": marginal, "note": MARGINAL if marginal else None}


def _fill(body: list[str], wns, origin: str) -> dict:
    """The High-Fanout Fill section -> wns_uncapped_ns, high_fanout_fill. The fill only ever takes slack
    away, so an uncapped WNS under the WNS, or a fill said to set a WNS other than 0, is a damaged report."""
    lines = [l for l in body if l.strip()]
    m = re.match(rf"^{re.escape(FILL_WNS)}{_NUM}$", lines[0]) if lines else None
    said = lines[1][len(FILL_SET):] if len(lines) > 1 and lines[1].startswith(FILL_SET) else None
    if m is None or said is None or not (said == "no" or said.startswith("yes")):
        raise ReportError(f"{origin}: the '{FILL_SECTION}' section is incomplete or unreadable")
    uncapped, filled = _num(m.group(1)), said.startswith("yes")
    if uncapped is None or (wns is not None and uncapped < wns) or (filled and wns != 0):
        raise ReportError(f"{origin}: the '{FILL_SECTION}' section contradicts the summary (WNS {wns}, without the "
                          f"fill {uncapped}, fill set it: {'yes' if filled else 'no'}): a damaged or edited report; "
                          f"regenerate it")
    return {"wns_uncapped_ns": uncapped, "high_fanout_fill": filled}


def parse_text(text: str, origin: str = "<kabe timing report>") -> dict:
    if not text.strip():
        raise ReportError(f"{origin}: empty timing report")
    return parse_report(report_file.from_text(text, origin))


def parse_report(rep: report_file.Report) -> dict:
    origin = rep.source
    lines = rep.lines[:rep.text.rstrip().count("\n") + 1]  # without the trailing blank lines
    if not lines[0].startswith(HEADER_PREFIX):
        raise ReportError(f"{origin}: not a kabe timing estimate (first line {lines[0][:60]!r})")
    if END_MARKER not in (l.strip() for l in lines[-3:]):
        raise ReportError(f"{origin}: truncated timing report (no {END_MARKER!r} line at the end)")
    titles = find_lines(lines, re.compile(r"^== ", re.M), literal="== ")
    # one report per file: a second header, section or untimed line (two reports joined, a section
    # pasted in) would leave the reader judging whichever came first
    repeated = sorted(t for t, n in Counter(lines[i] for i in titles).items() if n > 1)
    repeated += [p.strip() for p in (HEADER_PREFIX, UNTIMED_PREFIX)
                 if sum(l.startswith(p) for l in lines) > 1]
    if repeated:
        raise ReportError(f"{origin}: {repeated[0]!r} appears more than once: two timing reports in one file, "
                          f"or a damaged one; regenerate it")

    def section(title: str) -> list[str]:
        """The non-blank lines under `== title ==`, up to the next `== ` line."""
        try:
            k = next(k for k, i in enumerate(titles) if lines[i] == f"== {title} ==")
        except StopIteration:
            raise ReportError(f"{origin}: no '== {title} ==' section") from None
        end = titles[k + 1] if k + 1 < len(titles) else len(lines)
        return list(filter(str.strip, lines[titles[k] + 1:end]))

    summ = section("Design Timing Summary")
    if len(summ) < 2:
        raise ReportError(f"{origin}: Design Timing Summary has no values")
    if len(summ) > 2:  # the estimator writes one title line and one row: another row was pasted in
        raise ReportError(f"{origin}: Design Timing Summary has {len(summ) - 1} rows, the estimator writes one: "
                          f"a damaged or edited report; regenerate it")
    m = re.match(rf"^\s*{_NUM}\s+{_NUM}\s+(\d+)\s+(\d+)\s+(\d+)\s*$", summ[1])
    if not m:
        raise ReportError(f"{origin}: cannot read the Design Timing Summary line {summ[1]!r}")
    wns, tns = _num(m.group(1)), _num(m.group(2))
    rec = {"estimated": True, "wns_ns": wns, "tns_ns": tns,
           "failing_endpoints": int(m.group(3)), "total_endpoints": int(m.group(4)),
           "whs_ns": None, "ths_ns": None, "wpws_ns": None, "tpws_ns": None,
           "verdict_line": None, "unconstrained_endpoints": int(m.group(5))}

    clocks = []
    not_found = _NotFound()
    for l in section("Clock Summary")[1:]:
        if not l.strip():
            continue
        if not_found.read(l, origin):
            continue
        cm = re.match(rf"^(\S+)\s+(\d+\.\d+)\s+{_NUM}\s+{_NUM}\s+(\d+)\s+(\d+)\s*$", l)
        if not cm:
            raise ReportError(f"{origin}: cannot read clock line {l!r}")
        clocks.append({"name": cm.group(1), "period_ns": float(cm.group(2)), "wns_ns": _num(cm.group(3)),
                       "tns_ns": _num(cm.group(4)), "whs_ns": None, "wpws_ns": None,
                       # kept so the gate's consistency check sees a failing count under a passing WNS
                       "failing_endpoints": int(cm.group(5)), "total_endpoints": int(cm.group(6))})
    if not_found:  # a clock the XDC asks for that was never created, or registers no clock reaches
        return not_timed_record(not_found.message([c["name"] for c in clocks]))
    if not clocks:
        raise ReportError(f"{origin}: no clock in the Clock Summary (no clock constrained?)")
    rec["clocks"] = clocks
    rec["untimed_cells"] = _untimed_cells(lines, origin)

    inter = []
    for l in section("Clock Interaction"):
        im = re.match(r"^(\S+) -> (\S+): (.*)$", l)
        if im:
            undeclared = "undeclared" in im.group(3)  # kabe.timing.report.UNDECLARED: the gate fails it
            inter.append({"from": im.group(1), "to": im.group(2),
                          "type": "Not timed (cross-clock, undeclared)" if undeclared else "Not timed (cross-clock)"})
    rec["clock_interaction"] = inter
    # reports written before the estimator had a band have no such section: no band, not an error
    rec["band"] = _band(section(BAND_SECTION), origin) if f"== {BAND_SECTION} ==" in lines else None
    # reports written before issue 44 have no fill section: no uncapped WNS (regressions then compare wns_ns)
    if f"== {FILL_SECTION} ==" in lines:
        rec.update(_fill(section(FILL_SECTION), wns, origin))

    rec["critical_path"] = None
    if any(lines[i] == "== Path 1 ==" for i in titles):
        body = section("Path 1")
        kv = {}
        steps = []
        for l in body:
            sm = _STEP.match(l)
            if sm:
                steps.append({"name": sm.group(5), "type": sm.group(4), "delay_ns": float(sm.group(1))})
            elif ": " in l and not l.startswith(" "):
                k, v = l.split(": ", 1)
                kv[k.strip()] = v.strip()
        try:
            slack = float(re.match(r"(-?\d+\.\d+) ns", kv[next(k for k in kv if k.startswith("Slack"))]).group(1))
            dm = re.match(r"(-?\d+\.\d+) ns \(logic (-?\d+\.\d+) ns, route (-?\d+\.\d+) ns\)", kv["Data path delay"])
            cp = {"clock": kv["Clock"], "slack_ns": slack, "delay_ns": float(dm.group(1)),
                  "logic_delay_ns": float(dm.group(2)), "route_delay_ns": float(dm.group(3)),
                  "logic_levels": int(kv["Logic levels"]), "startpoint": kv["Startpoint"],
                  "endpoint": kv["Endpoint"], "cells": steps}
        except (KeyError, StopIteration, AttributeError, ValueError) as e:
            raise ReportError(f"{origin}: Path 1 is incomplete or unreadable ({e})") from None
        if len(steps) < 2:
            raise ReportError(f"{origin}: Path 1 lists {len(steps)} cells: truncated")
        for key, title in RTL_LINES.items():  # reports from before these lines have none: no RTL names
            if title in kv:
                cp[key] = _rtl(kv[title], title, origin)
        rec["critical_path"] = cp
    elif rec["total_endpoints"]:
        raise ReportError(f"{origin}: {rec['total_endpoints']} endpoints but no Path 1: truncated report")
    return rec


# file:line, split at the last ':' before the line number: the file name is whatever precedes it,
# spaces ("sp top.v:17") and a drive letter ("C:\\rtl\\top.v:17") included; it only has to be there
_FILE_LINE = re.compile(r"(?!\s)(.*\S):(\d+)")


def _rtl(value: str, title: str, origin: str) -> dict:
    """A Startpoint RTL / Endpoint RTL value (kabe.timing.report.rtl_line) -> {name, source[, note]}."""
    parts = value.split(RTL_SEP, 2)
    if len(parts) < 2 or not all(p.strip() for p in parts):
        raise ReportError(f"{origin}: Path 1's {title!r} line is not 'name{RTL_SEP}file:line[{RTL_SEP}note]': {value[:120]!r}")
    name, source = (None if p == NO_RTL else p for p in parts[:2])
    if source is not None and not _FILE_LINE.fullmatch(source):
        raise ReportError(f"{origin}: Path 1's {title!r} source {source[:80]!r} is not file:line")
    out = {"name": name, "source": source}
    if len(parts) == 3:
        out["note"] = parts[2]
    return out


def parse(path: str | Path) -> dict:
    return parse_report(report_file.read(path))
