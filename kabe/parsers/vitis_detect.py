"""Which Vitis / Vivado HLS / v++ file this is, told from its first bytes, and its record.

Kinds (each parsed by the module named):
  vitis_hls_csynth_xml   csynth.xml                        kabe.parsers.vitis_hls_csynth.parse_xml
  vitis_hls_csynth_rpt   csynth.rpt, <f>_csynth.rpt        kabe.parsers.vitis_hls_csynth.parse
  vitis_hls_log          solution1.log, vitis_hls.log      kabe.parsers.vitis_hls_log.parse
  vitis_cosim            <top>_cosim.rpt                   kabe.parsers.vitis_cosim.parse
  vitis_link_log         v++ link log, vpl runme.log       kabe.parsers.vitis_link_log.parse
  xclbin                 .xclbin (binary)                  kabe.parsers.xclbin.parse_bytes
  xclbin_info            <xclbin>.info                     kabe.parsers.vitis_link_reports.parse_xclbin_info
  vitis_system_estimate  system_estimate_<x>.xtxt          kabe.parsers.vitis_link_reports.parse_system_estimate
  vitis_accelerator_utilization  report_accelerator_utilization  (same module)

These files do not go through kabe.parsers.report_file (logs are made of the log lines it refuses
in a report, and an xclbin is binary), so kabe.parsers.detect asks `sniff` first and falls back to
its own kinds when this says None.
"""

from __future__ import annotations

import re
from pathlib import Path

from kabe.base import regular_file
from kabe.parsers import ReportError

KINDS = ("vitis_hls_csynth_xml", "vitis_hls_csynth_rpt", "vitis_hls_log", "vitis_cosim", "vitis_link_log",
         "xclbin", "xclbin_info", "vitis_system_estimate", "vitis_accelerator_utilization")
GATED = ("vitis_hls_csynth_xml", "vitis_hls_csynth_rpt", "vitis_hls_log", "vitis_cosim", "vitis_link_log")
HEAD_BYTES = 256 * 1024


def sniff_text(head: str) -> str | None:
    """The kind of a text whose first HEAD_BYTES are `head`; None when it is none of these."""
    if re.search(r"^\| Command\s*:\s*report_accelerator_utilization\b", head[:4000], re.M):
        return "vitis_accelerator_utilization"
    if head.lstrip().startswith("<") and "<profile" in head[:2000] and (
            "<UserAssignments>" in head or "<PerformanceEstimates>" in head or "<ReportVersion>" in head):
        return "vitis_hls_csynth_xml"
    if re.search(r"^== (?:Synthesis Summary Report of|Vivado HLS Report for|Vitis HLS Report for) '", head, re.M):
        return "vitis_hls_csynth_rpt"
    # cosim: "Latency(Clock Cycles)" from 2019 on, "Latency" before; a Verilog or VHDL row either way
    if "Status" in head and "Latency" in head and re.search(r"^\|\s*(?:Verilog|VHDL|SystemC)\s*\|", head, re.M):
        return "vitis_cosim"
    if "xclbin Information" in head and "XRT Build Version" in head:
        return "xclbin_info"
    if "Timing Information (MHz)" in head and "Design Name:" in head:
        return "vitis_system_estimate"
    if re.search(r"^(?:INFO|WARNING|ERROR): \[v\+\+ \d+-\d+\]", head, re.M) or \
            re.search(r"^(?:INFO|WARNING|CRITICAL WARNING|ERROR): \[VPL \d+-\d+\]|Run vpl: |^\*+ vpl v", head, re.M):
        return "vitis_link_log"
    if re.search(r"^(?:INFO|WARNING|ERROR): \[(?:HLS 200|SCHED 204)-\d+\]", head, re.M) or \
            re.search(r"^(?:\*+ )?(?:Vitis HLS - High-Level Synthesis|Vivado\(TM\) HLS - High-Level Synthesis)", head, re.M):
        return "vitis_hls_log"
    return None


def sniff(path) -> str | None:
    """The kind of the file at `path`, or None (also for a file that cannot be opened: the caller's
    own reader then says why)."""
    try:  # a regular file only: a FIFO would block a plain open (the caller's reader then says why)
        head = regular_file.head(path, HEAD_BYTES)
    except regular_file.NotReadable:
        return None
    from kabe.parsers.xclbin import is_xclbin

    if is_xclbin(head):
        return "xclbin"
    if b"\x00" in head and not head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return None
    text = head.decode("utf-8", errors="replace").removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    return sniff_text(text)


def parse_text(kind: str, text: str, source: str) -> dict:
    """The record of `text` read as `kind` (a text kind)."""
    if kind == "vitis_hls_csynth_xml":
        from kabe.parsers.vitis_hls_csynth import parse_xml
        return parse_xml(text, source)
    if kind == "vitis_hls_csynth_rpt":
        from kabe.parsers.vitis_hls_csynth import parse
        return parse(text, source)
    if kind == "vitis_hls_log":
        from kabe.parsers.vitis_hls_log import parse
        return parse(text, source)
    if kind == "vitis_cosim":
        from kabe.parsers.vitis_cosim import parse
        return parse(text, source)
    if kind == "vitis_link_log":
        from kabe.parsers.vitis_link_log import parse
        return parse(text, source)
    from kabe.parsers import vitis_link_reports as r
    if kind == "xclbin_info":
        return r.parse_xclbin_info(text, source)
    if kind == "vitis_system_estimate":
        return r.parse_system_estimate(text, source)
    if kind == "vitis_accelerator_utilization":
        return r.parse_accelerator_utilization(text, source)
    raise ValueError(kind)


def parse_path(path, kind: str | None = None) -> dict:
    """{"kind", "path", "record"} for a Vitis file; ReportError (one line) when it cannot be read."""
    from kabe.parsers.vitis_common import decode, read_bytes

    kind = kind or sniff(path)
    if kind is None:
        raise ReportError(f"{path}: not a Vitis HLS, cosim, v++ link or xclbin file kabe knows")
    data, source = read_bytes(path)
    if kind == "xclbin":
        from kabe.parsers.xclbin import parse_bytes
        record = parse_bytes(data, source)
    else:
        record = parse_text(kind, decode(data, source), source)
    if kind == "vitis_hls_csynth_xml":
        record = _rpt_beside(Path(path), record)
    return {"kind": kind, "path": str(Path(path)), "record": record}


def _rpt_beside(path: Path, record: dict) -> dict:
    """A csynth.xml has no target II; HLS writes the same report as csynth.rpt beside it (X_csynth.xml,
    X_csynth.rpt), which has: read the targets from there when it is present and readable. Absent or
    unreadable, the xml is judged alone (a loop over II 1 then fails: kabe.rules.hls_gate)."""
    from kabe.parsers.vitis_common import read_text
    from kabe.parsers.vitis_hls_csynth import parse, with_rpt_targets

    rpt = path.with_suffix(".rpt")
    if path.suffix != ".xml" or not rpt.is_file():
        return record
    try:
        text, source = read_text(rpt)
        return with_rpt_targets(record, parse(text, source), source)
    except ReportError:
        return record
