"""The Vivado flow's second source: timing_verdict.json, written inside Vivado by
scripts/vivado/timing_verdict.tcl (get_timing_paths, report_pulse_width, report_clock_interaction).

    {"schema": "kabe.vivado_timing_verdict/1", "vivado": "2023.2",
     "wns_ns": 0.062, "whs_ns": 0.161, "setup_ns": 0.062, "hold_ns": 0.161,
     "recovery_ns": 4.917, "removal_ns": 0.402, "pulse_width_violated": false,
     "unsafe_clock_interactions": 0, "clocks": 1}

Slacks are numbers or null (no path of that kind). Anything else (a missing key, a value of the
wrong type, not JSON, a NUL byte) is a ReportError: the gate then fails for want of a second
source, it never passes on a guess.
"""

from __future__ import annotations

import json
import math

from kabe.base.json_keys import one_value_per_key
from kabe.parsers import ReportError
from kabe.parsers import report_file

SCHEMA = "kabe.vivado_timing_verdict/1"
SLACKS = ("wns_ns", "whs_ns", "setup_ns", "hold_ns", "recovery_ns", "removal_ns")


def parse_report(rep: report_file.Report) -> dict:
    try:
        data = json.loads(rep.text, object_pairs_hook=one_value_per_key)
    except ValueError as e:
        raise ReportError(f"{rep.source}: not JSON ({e}); the hook's verdict is cut short or damaged") from None
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise ReportError(f"{rep.source}: not a {SCHEMA} verdict")
    out = {"schema": SCHEMA, "vivado": str(data.get("vivado", ""))[:40]}
    for key in SLACKS:
        if key not in data:
            raise ReportError(f"{rep.source}: no '{key}'")
        v = data[key]
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v)):
            raise ReportError(f"{rep.source}: '{key}' is {str(v)[:40]!r}, not a slack in ns or null")
        out[key] = None if v is None else float(v)
    if not isinstance(data.get("pulse_width_violated"), bool):
        raise ReportError(f"{rep.source}: 'pulse_width_violated' must be true or false")
    out["pulse_width_violated"] = data["pulse_width_violated"]
    for key in ("unsafe_clock_interactions", "clocks"):
        v = data.get(key)
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise ReportError(f"{rep.source}: '{key}' must be a count, got {str(v)[:40]!r}")
        out[key] = v
    return out


def parse(text: str, source: str = "<timing_verdict.json>") -> dict:
    return parse_report(report_file.from_text(text, source))


def parse_file(path) -> dict:
    return parse_report(report_file.read(path))
