"""The ternary engine builds for the KV260 (issue 43 item 4): kv260_ternary, stage 4's engine on the KV260's
four 128-bit HP ports, on the open flow for real (Verilator simulation check against the numpy model, Yosys
mapping to the K26's own UltraScale+ fabric) and on the vivado flow with the STAND-IN Vivado (its PS8
block design; the images PYNQ 4 loads). The vivado numbers are the stand-in's fixture reports
(tests/fixtures/vivado_kv260/SOURCES.md), so only the plumbing is checked there, never a count."""

from __future__ import annotations

import pytest
import os
from pathlib import Path

from kabe import boards, build
from kabe.project import designs

pytestmark = pytest.mark.e2e  # end to end: real tools, minutes (the fast tier leaves it out: -m 'not e2e')

STANDIN = Path(__file__).resolve().parent / "standin"
DESIGN = "kv260_ternary"


def test_kv260_ternary_is_the_boards_and_streams_its_hp_ports():
    d = designs.get(DESIGN)
    b = boards.get("kv260")
    assert d.board.key == "kv260" and d.ports == b.memory_ports.count == 4
    assert set(d.streams.inputs.values()) == {b.memory_ports.beat_bytes * 8}  # one 128-bit HP-port beat


def test_the_open_flow_builds_it_bit_exact_on_the_k26_fabric(tmp_path):
    rec = build.build(designs.get(DESIGN), "open", reports_root=tmp_path, use_cache=False)
    assert rec["part"] == "xck26-sfvc784-2LV-c" and rec["utilization"].get("proxy") is None  # the part's own cells
    assert rec["utilization"]["dsp"] == 0 and 0 < rec["utilization"]["lut"] < 16500
    sim = rec["sim"]
    assert sim["passed"] and sim["mismatches"] == 0 and sim["rows_checked"] == 256 and sim["ports"] == 4
    assert sim["beats_per_cycle"] == 1.0 and sim["stat_invalid"] > 0  # invalid weight bytes counted, as the model says
    assert rec["gate"]["status"] == "not_estimated" and rec["timing"]["wns_ns"] is None


def test_the_vivado_flow_builds_it_on_the_standin(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", f"{STANDIN}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("KABE_STANDIN_SCENARIO", "met")
    rec = build.build(designs.get(DESIGN), "vivado", sim_check=False, reports_root=tmp_path, use_cache=False)
    assert rec["gate"]["passed"], rec["gate"]["failures"]
    assert {"bit", "hwh", "xsa", "cells"} <= set(rec["artifacts"])
    assert [c["name"] for c in rec["timing"]["clocks"]] == ["clk_pl_0"] and rec["clock_period_ns"] == 7.0
