"""C/RTL co-simulation report (<top>_cosim.rpt) of Vivado HLS and Vitis HLS.

One table: a row per RTL language (Verilog, VHDL) with its Status (Pass, Fail, NA) and the latency
and interval the simulation measured (min/avg/max) and the total execution time, in cycles.

Record:
  rtl       {"verilog": {"status", "latency_min", "latency_avg", "latency_max", "interval_min",
             "interval_avg", "interval_max", "total_cycles"}, "vhdl": {...}} (a row's numbers are None
             when it was not simulated, "undef" when printed as ?/undef)
  simulated ["verilog", ...] the languages whose status is not NA
  passed    True when every simulated language passed; False when one failed; None when none ran
  tool      the simulator named (xsim, modelsim, ...) or None

Refused: no table, a table that does not close, a row that is neither Verilog nor VHDL, a Status
kabe does not know (anything but Pass, Fail, NA). An unknown status is never read as a pass.
"""

from __future__ import annotations

import re

from kabe.parsers import ReportError
from kabe.parsers.vitis_common import cell_int, column_names, ends_with_border, is_border, table_at, text_of

STATUSES = {"pass": "Pass", "fail": "Fail", "na": "NA", "n/a": "NA"}
_KEYS = ("latency_min", "latency_avg", "latency_max", "interval_min", "interval_avg", "interval_max", "total_cycles")


def parse(text: str, source: str) -> dict:
    text = text_of(text, source)
    if not ends_with_border(text):
        raise ReportError(f"{source}: cosim report does not end with the table's closing border; the report is cut: "
                          f"rerun cosim_design")
    lines = text.split("\n")
    start = next((i for i, ln in enumerate(lines) if is_border(ln)), None)
    if start is None:
        raise ReportError(f"{source}: no result table; not a cosim report")
    head, body, _ = table_at(lines, start, source, "co-simulation result")
    names = [n.lower() for n in column_names(head)]
    k_status = next((k for k, n in enumerate(names) if "status" in n), None)
    if k_status is None or not any("latency" in n for n in names):
        raise ReportError(f"{source}: the table has no Status or Latency column; not a cosim report")
    cols = {}
    for key in _KEYS:
        what, stat = key.split("_")
        if key == "total_cycles":
            cols[key] = next((k for k, n in enumerate(names) if "total" in n), None)
        else:
            cols[key] = next((k for k, n in enumerate(names) if what in n and n.endswith(stat)), None)
    rtl: dict[str, dict] = {}
    for row in body:
        lang = row[0].strip().lower()
        if lang not in ("verilog", "vhdl", "systemc"):
            raise ReportError(f"{source}: a result row names '{row[0].strip()[:30]}', not Verilog or VHDL")
        raw = row[k_status].strip() if k_status < len(row) else ""
        status = STATUSES.get(raw.lower())
        if status is None:
            raise ReportError(f"{source}: {row[0].strip()} status reads '{raw[:30]}', not Pass, Fail or NA")
        entry = {"status": status}
        for key, k in cols.items():
            cell = row[k] if k is not None and k < len(row) else None
            entry[key] = None if status == "NA" else cell_int(cell, source, f"{row[0].strip()} {key}")
        rtl[lang] = entry
    if not rtl:
        raise ReportError(f"{source}: the result table has no rows; the report is cut")
    simulated = [lang for lang, e in rtl.items() if e["status"] != "NA"]
    passed = None if not simulated else all(rtl[lang]["status"] == "Pass" for lang in simulated)
    m = re.search(r"^Simulation tool\s*:\s*(\S+?)\.?\s*$", text, re.M)
    return {"rtl": rtl, "simulated": simulated, "passed": passed, "tool": m.group(1) if m else None}
