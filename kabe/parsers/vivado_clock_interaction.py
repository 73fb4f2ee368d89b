"""report_clock_interaction -> the clock pairs and how each crossing is constrained.

Column sets differ by version and options, and all are read by their titles:
  * 2014-2018: "Edges (WNS)", "WNS (ns)", "Failing Endpoints (TNS)", "Path Req (WNS)",
    "Clock Pair Classification", "Inter-Clock Constraints"; with -delay_type min_max the same
    again for hold: "Edges (WHS)", "WHS (ns)", "THS (ns)", ...;
  * 2019 and later: titles stacked on two lines, "WNS / Clock Edges", "TNS Failing /
    Endpoints", "WNS Path / Requirement(ns)", "Clock-Pair / Classification", "Inter-Clock /
    Constraints", and the WHS/THS group with -delay_type min_max;
  * Ignored pairs (False Path, Asynchronous Groups) print blank edges, slacks and requirement.

The gate fails on any pair marked unsafe ("Timed (unsafe)", "Partial False Path (unsafe)"):
report_timing_summary times such paths but cannot say they are safe. Each row becomes
{"from", "to", "classification", "type" (the Inter-Clock Constraints text), "unsafe" (the word
"unsafe" anywhere in the row), "wns_ns", "tns_ns", "failing_endpoints", "total_endpoints",
"whs_ns", "ths_ns", "hold_failing_endpoints", "hold_total_endpoints", "edges",
"requirement_ns"}; a column the report does not print is None.

Refused: no table, no From/To/Constraints columns, a row without its pair or its constraint, a
value that is not a number, and a table not closed by a blank line: cut there, a last row "Timed
(unsafe)" could read as "Timed".
"""

from __future__ import annotations

import re

from kabe.parsers import ReportError
from kabe.parsers import report_file
from kabe.parsers.report_file import find_lines
from kabe.parsers._vivado_common import aligned_table, integer, number

_TITLE = "Clock Interaction Table"


def _norm(title: str) -> str:
    return title.lower().replace(" ", "").replace("-", "")


def _numeric(title: str) -> bool:
    t = _norm(title)
    return "(ns)" in t or "endpoints" in t or "req" in t


def _key(title: str) -> str | None:
    """Record key of a column title, whatever the version's spelling."""
    t = _norm(title)
    hold = "whs" in t or "ths" in t
    if t in ("fromclock", "sourceclock"):
        return "from"
    if t in ("toclock", "destinationclock"):
        return "to"
    if "classification" in t:
        return "classification"
    if "constraint" in t:
        return "type"
    if "edge" in t:
        return "hold_edges" if hold else "edges"
    if "req" in t:
        return "hold_requirement_ns" if hold else "requirement_ns"
    if "failing" in t:
        return "hold_failing_endpoints" if hold else "failing_endpoints"
    if "total" in t:
        return "hold_total_endpoints" if hold else "total_endpoints"
    for name in ("wns", "tns", "whs", "ths"):
        if t.startswith(name) and "(ns)" in t:
            return f"{name}_ns"
    return None


_ALL_KEYS = ("wns_ns", "tns_ns", "failing_endpoints", "total_endpoints", "whs_ns", "ths_ns",
             "hold_failing_endpoints", "hold_total_endpoints", "edges", "requirement_ns",
             "hold_edges", "hold_requirement_ns")


def parse(text: str, source: str = "<report_clock_interaction>") -> list[dict]:
    return parse_report(report_file.from_text(text, source))


def parse_file(path) -> list[dict]:
    return parse_report(report_file.read(path))


def parse_report(rep: report_file.Report) -> list[dict]:
    report_file.expect_command(rep, "report_clock_interaction")
    source, lines = rep.source, rep.lines
    start = next(iter(find_lines(lines, re.compile(rf"^[ \t]*{_TITLE}[ \t]*$", re.M), literal=_TITLE)), None)
    if start is None:
        raise ReportError(f"{source}: no '{_TITLE}'; not a complete report_clock_interaction")
    body = lines[start + 2:] if start + 1 < len(lines) and lines[start + 1].startswith("---") else []
    try:
        cols, rows, end = aligned_table(body, numeric=_numeric, what=_TITLE, source=source,
                                        first_line=start + 3)
    except ReportError as e:
        raise ReportError(f"{source}: the {_TITLE} has no column header (cut short?): {e}") from None
    keys = [_key(c.title) for c in cols]
    need = {"from", "to", "type"} - set(keys)
    if need:
        raise ReportError(f"{source}: the {_TITLE} has no column for {', '.join(sorted(need))} "
                          f"(columns: {', '.join(c.title for c in cols)})")
    if end >= len(body):
        # Vivado ends the table with a blank line; without it the last row may be cut mid-word
        raise ReportError(f"{source}: the {_TITLE} does not end (no blank line after it): the report "
                          f"is cut short")
    pairs = []
    for cells in rows:
        cell = {k: v for k, v in zip(keys, cells) if k}
        row_text = " ".join(cells)
        if not cell["from"] or not cell["to"] or not cell["type"]:
            raise ReportError(f"{source}: clock interaction row '{row_text[:120]}' is incomplete (cut short?)")
        pair = {"from": cell["from"], "to": cell["to"], "classification": cell.get("classification"),
                "type": cell["type"], "unsafe": "unsafe" in row_text.lower()}
        for k in _ALL_KEYS:
            v = cell.get(k)
            what = f"{k} of {cell['from']} -> {cell['to']}"
            if k.endswith("_ns"):
                pair[k] = number(v, what=what, source=source)
            elif k.endswith("endpoints"):
                pair[k] = integer(v, what=what, source=source)
            else:
                pair[k] = v or None
        pairs.append(pair)
    if not pairs:
        raise ReportError(f"{source}: the {_TITLE} has no rows; a clocked design has at least one pair")
    return pairs
