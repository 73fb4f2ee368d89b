"""An RTL file whose name has a space (or, from a Yosys given Windows paths, a drive letter) is
named in timing_estimate.rpt's Startpoint RTL / Endpoint RTL lines as Yosys's `src` says, and
kabe.parsers.kabe_timing reads that line back: the report kabe wrote must never fail its own gate
as unreadable (a core with `files: ["rtl/sp top.v"]` did: "source 'sp top.v:17' is not file:line")."""

from __future__ import annotations

import pytest

from kabe.project.constraints import parse_xdc_text
from kabe.parsers import ReportError, kabe_timing
from kabe.records import metrics
from kabe.timing import RoutingModel, estimate, rtl_names

CLOCKS = parse_xdc_text("create_clock -period 5.000 -name clk [get_ports clk]")
M = RoutingModel(base_ps=300.0, fanout_ps_per_doubling=100.0, hard_block_ps=200.0)
FF_MAP = "/share/xilinx/ff_map.v:68.41-68.95"
ONE = "00000000000000000000000000000001"


def _cell(type_, src, params=None, **pins):
    return {"hide_name": 1, "type": type_, "parameters": params or {}, "attributes": {"src": src},
            "port_directions": {p: d for p, (d, _) in pins.items()},
            "connections": {p: b if isinstance(b, list) else [b] for p, (_, b) in pins.items()}}


def _ff(src, d, q):
    return _cell("FDRE", src, C=("input", 2), CE=("input", "1"), R=("input", "0"), D=("input", d), Q=("output", q))


def netlist(path: str) -> dict:
    """a_q (declared at line 9 of `path`) -> LUT1 -> b_q (line 12): one path, both ends in `path`."""
    cells = {
        "$auto$ff.cc:337:slice$1": _ff(f"{path}:17.3-18.20|{FF_MAP}", 20, 21),
        "$abc$1$lut$2": _cell("LUT1", "/share/xilinx/lut_map.v:43.26-44.30", {"INIT": "01"},
                              I0=("input", 21), O=("output", 22)),
        "$auto$ff.cc:337:slice$3": _ff(f"{path}:20.3-21.20|{FF_MAP}", 22, 23),
    }
    netnames = {"a_q": {"hide_name": 0, "bits": [21], "attributes": {"src": f"{path}:9.12-9.15"}},
                "b_q": {"hide_name": 0, "bits": [23], "attributes": {"src": f"{path}:12.12-12.15"}}}
    ports = {"clk": {"direction": "input", "bits": [2]}, "d": {"direction": "input", "bits": [20]}}
    return {"modules": {"top": {"attributes": {"top": ONE}, "ports": ports, "cells": cells, "netnames": netnames}}}


@pytest.mark.parametrize("src_path, shown", [
    ("../cores/sp/rtl/sp top.v", "sp top.v"),  # the red team's core: files: ["rtl/sp top.v"]
    ("../my proj/rtl/a  b.v", "a  b.v"),  # two spaces
    ("C:\\work\\rtl\\top.v", "C:\\work\\rtl\\top.v"),  # a drive letter: a ':' inside the file part
    ("../rtl/plain.v", "plain.v"),
])
def test_the_report_names_such_a_file_and_reads_back(tmp_path, src_path, shown):
    rpt = tmp_path / "timing_estimate.rpt"
    rec, _ = estimate(netlist(src_path), CLOCKS, M, report=rpt, vivado_mapping=False)
    cp = rec["critical_path"]
    assert cp["startpoint_rtl"] == {"name": "a_q", "source": f"{shown}:9"}
    assert cp["endpoint_rtl"] == {"name": "b_q", "source": f"{shown}:12"}
    text = rpt.read_text()
    assert f"Startpoint RTL: a_q | {shown}:9\n" in text and f"Endpoint RTL: b_q | {shown}:12\n" in text
    parsed = kabe_timing.parse(rpt)
    assert parsed == rec  # the whole record round-trips, the RTL lines with it
    assert parsed["critical_path"]["endpoint_rtl"]["source"] == f"{shown}:12"


def test_a_file_and_its_line_are_split_at_the_last_colon():
    assert rtl_names.rtl_source("../rtl/sp top.v:17.3-18.20") == "sp top.v:17"
    # the register's block and the net naming it in two files, each name with a ':' in it
    assert rtl_names._elsewhere("C:\\a.v:3", "C:\\b.v:4") is not None
    assert rtl_names._elsewhere("C:\\a.v:3", "C:\\a.v:9") is None
    assert rtl_names._elsewhere("sp top.v:3", "sp top.v:9") is None


@pytest.mark.parametrize("source", ["sp top.v", "sp top.v:", ":17", " sp top.v:17", "sp top.v: 17", "sp top.v:1x"])
def test_a_source_that_is_not_file_colon_line_is_still_refused(tmp_path, source):
    rpt = tmp_path / "timing_estimate.rpt"
    estimate(netlist("../rtl/sp top.v"), CLOCKS, M, report=rpt, vivado_mapping=False)
    text = rpt.read_text()
    bad = text.replace("Endpoint RTL: b_q | sp top.v:12\n", f"Endpoint RTL: b_q | {source}\n", 1)
    assert bad != text
    with pytest.raises(ReportError, match="not file:line"):
        kabe_timing.parse_text(bad)


def test_the_metrics_schema_takes_such_a_source():
    import jsonschema
    rec, _ = estimate(netlist("../cores/sp/rtl/sp top.v"), CLOCKS, M, vivado_mapping=False)
    full = metrics.schema()
    sub = {**full["properties"]["timing"]["properties"]["critical_path"], "$defs": full.get("$defs", {})}
    jsonschema.validate(rec["critical_path"], sub)
