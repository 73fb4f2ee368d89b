"""Tell a report's kind from its content, and parse a report file with the right parser.

Kinds: "vivado_timing_summary", "vivado_utilization", "vivado_utilization_hier",
"vivado_timing", "vivado_clock_interaction", "vivado_logic_levels", "yosys_stat",
"kabe_timing". Vivado reports are told by the `| Command : report_...` header line (the
authoritative signal), falling back to their table titles when the header is absent. Yosys
`stat` output (text, or `stat -json` as the open flow archives it) and kabe's own timing
estimate by their markers.

The file is opened once, by kabe.parsers.report_file (NUL bytes, encoding, size bounds,
header), and the same Report goes to the parser: `kabe parse` and `kabe gate` refuse the same
files for the same reasons.

parse_file(path) -> {"kind": ..., "path": ..., "record": <that parser's output>} (for
"vivado_timing" and "vivado_clock_interaction" the record is a list).
A missing, empty or unrecognisable file raises ReportError("cannot tell what report ...").
"""

from __future__ import annotations

import json
import re

from kabe.parsers import ReportError
from kabe.parsers import report_file
from kabe.parsers.report_file import Report

KINDS = ("vivado_timing_summary", "vivado_utilization", "vivado_utilization_hier",
         "vivado_timing", "vivado_clock_interaction", "vivado_logic_levels", "yosys_stat",
         "kabe_timing")

_BY_COMMAND = {"report_timing_summary": "vivado_timing_summary", "report_timing": "vivado_timing",
               "report_clock_interaction": "vivado_clock_interaction",
               "report_design_analysis": "vivado_logic_levels"}


# Markers, each matched within one line (re.M, no quantifier that can cross a newline), so that
# detection is one C-speed pass over the text whatever its shape
_M = re.M
_DTS_TITLE = re.compile(r"^\| Design Timing Summary[ \t]*$", _M)
_HIER_TITLE = re.compile(r"^[ \t]*\d+\.[ \t]+Utilization by Hierarchy[ \t]*$", _M)
_UTIL_TITLE = re.compile(r"Utilization Design Information")
_CI_TITLE = re.compile(r"^[ \t]*Clock Interaction Table[ \t]*$", _M)
_TIMING_TITLE = re.compile(r"^[ \t]*Timing Report[ \t]*$", _M)
_SLACK = re.compile(r"^Slack", _M)
_PATH_SUMMARY_HEAD = re.compile(r"^Startpoint[ \t]+Endpoint[ \t]+Slack", _M)  # report_timing -path_type summary
_YOSYS_STATS = re.compile(r"Printing statistics\.")
_YOSYS_SECTION = re.compile(r"^=== [^\n]* ===[ \t]*$", _M)
_YOSYS_CELLS = re.compile(r"^[ \t]*(?:Number of cells:|\d+[ \t]+cells[ \t]*$)", _M)


def _yosys_stat(rep: Report) -> bool:
    if rep.text.lstrip()[:1] == "{":
        try:
            data = json.loads(rep.text)
        except ValueError:
            return False
        mods = data.get("modules") if isinstance(data, dict) else None
        return isinstance(mods, dict) and any(isinstance(m, dict) and "num_cells" in m for m in mods.values())
    text = rep.text
    return bool(_YOSYS_STATS.search(text) or ("===" in text and "cells" in text and _YOSYS_SECTION.search(text)
                                              and _YOSYS_CELLS.search(text)))


def _kabe_timing(rep: Report) -> bool:
    from kabe.timing.report import HEADER_PREFIX  # the writer defines the format

    return rep.text.lstrip().startswith(HEADER_PREFIX)


def detect_report(rep: Report) -> str:
    """The kind of report `rep` is; ReportError when it cannot be told."""
    cmd = rep.command
    if cmd == "report_utilization":
        hier = "-hierarchical" in rep.header.get("command", "").split() or (
            "Utilization by Hierarchy" in rep.text and bool(_HIER_TITLE.search(rep.text)))
        return "vivado_utilization_hier" if hier else "vivado_utilization"
    if cmd in _BY_COMMAND:
        return _BY_COMMAND[cmd]
    if cmd is not None:
        raise ReportError(f"cannot tell what report this is: Vivado command '{cmd[:60]}' is not one "
                          f"kabe parses; it parses {', '.join(['report_utilization', *_BY_COMMAND])}")
    # no Vivado header: titles
    text = rep.text

    def has(literal: str, title: re.Pattern) -> bool:  # the literal first: a C-speed find, no regex pass
        return literal in text and bool(title.search(text))

    if has("| Design Timing Summary", _DTS_TITLE):
        return "vivado_timing_summary"
    if has("Utilization by Hierarchy", _HIER_TITLE):
        return "vivado_utilization_hier"
    if has("Utilization Design Information", _UTIL_TITLE):
        return "vivado_utilization"
    if has("Clock Interaction Table", _CI_TITLE):
        return "vivado_clock_interaction"
    if has("Timing Report", _TIMING_TITLE) and (has("Slack", _SLACK) or has("Startpoint", _PATH_SUMMARY_HEAD)):
        return "vivado_timing"
    if _kabe_timing(rep):
        return "kabe_timing"
    if _yosys_stat(rep):
        return "yosys_stat"
    raise ReportError("cannot tell what report this is: no Vivado '| Command : report_...' "
                      "header, no known table title, not yosys stat or kabe timing output")


def detect(text: str) -> str:
    """The kind of report `text` is; ReportError when it cannot be told."""
    if not isinstance(text, str) or not text.strip():
        raise ReportError("cannot tell what report this is: it is empty")
    return detect_report(report_file.from_text(text, "<text>"))


def parse_report(kind: str, rep: Report):
    """The record of `rep` read as `kind`."""
    if kind == "vivado_timing_summary":
        from kabe.parsers.vivado_timing_summary import parse_report as parse
    elif kind == "vivado_utilization":
        from kabe.parsers.vivado_utilization import parse_report as parse
    elif kind == "vivado_utilization_hier":
        from kabe.parsers.vivado_utilization import parse_hierarchical_report as parse
    elif kind == "vivado_timing":
        from kabe.parsers.vivado_timing_paths import parse_report as parse
    elif kind == "vivado_clock_interaction":
        from kabe.parsers.vivado_clock_interaction import parse_report as parse
    elif kind == "vivado_logic_levels":
        from kabe.parsers.vivado_logic_levels import parse_report as parse
    elif kind == "yosys_stat":
        from kabe.parsers.yosys_stat import parse_report as parse
    elif kind == "kabe_timing":
        from kabe.parsers.kabe_timing import parse_report as parse
    else:
        raise ValueError(kind)
    return parse(rep)


def parse_file(path) -> dict:
    """{"kind", "path", "record"} for the report at `path`."""
    from kabe.parsers import vitis_detect  # Vitis/HLS files (logs, binary xclbin) have their own door

    vitis_kind = vitis_detect.sniff(path)
    if vitis_kind is not None:
        return vitis_detect.parse_path(path, vitis_kind)
    try:
        rep = report_file.read(path)
        kind = detect_report(rep)
    except ReportError as e:
        msg = str(e).removeprefix(f"{path}: ").replace("cannot tell what report this is: ", "")
        raise ReportError(f"cannot tell what report {path} is: {msg}") from None
    return {"kind": kind, "path": str(path), "record": parse_report(kind, rep)}
