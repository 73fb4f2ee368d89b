"""Critical paths in RTL terms (kabe.timing.rtl_names, kabe.base.rtl_path) on a hand-written Yosys JSON
netlist shaped like what synth_xilinx + flatten writes (hidden $auto/$abc cells, `src` attributes
joined by '|' with Yosys's techmap library, a register Yosys split out of a memory with its enable
folded into a LUT), read back through the archived report (kabe.parsers.kabe_timing); plus one real
Yosys run for the `resetall line miscount the names correct."""

from __future__ import annotations

import copy
import json
import subprocess
from pathlib import Path

import pytest

from kabe.base import rtl_path
from kabe.project.constraints import parse_xdc_text
from kabe.parsers import ReportError, kabe_timing
from kabe.records import metrics
from kabe.timing import RoutingModel, estimate, rtl_names

CLOCKS = parse_xdc_text("create_clock -period 5.000 -name clk [get_ports clk]")
M = RoutingModel(base_ps=300.0, fanout_ps_per_doubling=100.0, hard_block_ps=200.0)
FF_MAP = "/share/xilinx/ff_map.v:68.41-68.95"
LUT_MAP = "/share/xilinx/lut_map.v:43.26-44.30"
ONE = "00000000000000000000000000000001"
# `resetall on line 1: Yosys 0.70 places every later line of eng.v two lines late
ENG_V = "`resetall\n" + "".join(f"// line {n}\n" for n in range(2, 40))


def _cell(type_, src, params=None, hide=1, **pins):
    return {"hide_name": hide, "type": type_, "parameters": params or {}, "attributes": {"src": src},
            "port_directions": {p: d for p, (d, _) in pins.items()},
            "connections": {p: b if isinstance(b, list) else [b] for p, (_, b) in pins.items()}}


def _ff(src, d, q, ce="1", r="0"):
    return _cell("FDRE", src, C=("input", 2), CE=("input", ce), R=("input", r), D=("input", d), Q=("output", q))


def netlist() -> dict:
    """beat_q (RTL, enabled by `en`), its copy (Yosys's: CE=1, D = en ? nxt : beat_q in a LUT3, INIT
    0xE2 = I1 ? I2 : I0, no net of its own) -> LUT2 -> LUT1 -> p_reg[3] (a net [3:2]: offset 2)."""
    cells = {
        "$flatten\\u.$auto$ff.cc:337:slice$10": _ff(f"../rtl/eng.v:22.1-25.4|{FF_MAP}", 20, 21, ce=22, r=23),
        "$flatten\\u.$abc$1$lut$7": _cell("LUT3", LUT_MAP, {"INIT": "11100010"},
                                          I0=("input", 21), I1=("input", 22), I2=("input", 20), O=("output", 30)),
        "$flatten\\u.$auto$ff.cc:337:slice$11": _ff(FF_MAP, 30, 31, r=23),
        "$flatten\\u.$abc$1$lut$8": _cell("LUT2", LUT_MAP, {"INIT": "0110"},
                                          I0=("input", 31), I1=("input", 22), O=("output", 39)),
        "$flatten\\u.$abc$1$lut$9": _cell("LUT1", LUT_MAP, {"INIT": "01"}, I0=("input", 39), O=("output", 40)),
        "$flatten\\u.$auto$ff.cc:337:slice$12": _ff(f"../rtl/eng.v:30.5-31.20|{FF_MAP}", 40, 41),
        "$flatten\\u.$auto$ff.cc:337:slice$13": _ff(f"../rtl/eng.v:30.5-31.20|{FF_MAP}", 20, 42),
    }
    netnames = {
        "u.beat_q": {"hide_name": 0, "bits": [21], "attributes": {"src": "../rtl/eng.v:9.12-9.18"}},
        "u.p_reg": {"hide_name": 0, "bits": [42, 41], "offset": 2, "attributes": {"src": "../rtl/eng.v:12.18-12.23"}},
        "$flatten\\u.$abc$1$aiger$o5": {"hide_name": 1, "bits": [31], "attributes": {}},
    }
    ports = {"clk": {"direction": "input", "bits": [2]}, "en": {"direction": "input", "bits": [22]},
             "nxt": {"direction": "input", "bits": [20]}, "rst": {"direction": "input", "bits": [23]}}
    return {"modules": {"top": {"attributes": {"top": ONE}, "ports": ports, "cells": cells, "netnames": netnames}}}


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    """Where Yosys ran: its `src` paths (../rtl/eng.v) lead from here to the source file."""
    (tmp_path / "rtl").mkdir()
    (tmp_path / "rtl" / "eng.v").write_text(ENG_V)
    (tmp_path / "run").mkdir()
    return tmp_path / "run"


def test_rtl_source_skips_yosys_library_and_keeps_basename_line():
    assert rtl_names.rtl_source(f"../../cores/x/rtl/a.v:137.9-139.12|{FF_MAP}") == "a.v:137"
    assert rtl_names.rtl_source(f"{FF_MAP}|b.v:7.1-7.2") == "b.v:7"
    assert rtl_names.rtl_source("/usr/local/share/yosys/xilinx/cells_map.v:3.1-3.2") is None
    assert rtl_names.rtl_source(FF_MAP) is None and rtl_names.rtl_source(None) is None


def test_registers_named_by_rtl_net_with_source_line(run_dir: Path):
    n = netlist()
    (run_dir / "netlist.json").write_text(json.dumps(n))
    rec, _ = estimate(run_dir / "netlist.json", CLOCKS, M, vivado_mapping=False)
    cp = rec["critical_path"]
    assert cp["endpoint_rtl"] == {"name": "u.p_reg[3]", "source": "eng.v:10"}  # Yosys says 12: `resetall
    assert cp["startpoint_rtl"] == {"name": "u.beat_q", "source": "eng.v:7", "note": rtl_names.COPY_NOTE}
    line = rtl_path.line(cp)
    assert line == ("from u.beat_q (eng.v:7) through 2 logic levels (LUT2, LUT1) to u.p_reg[3] (eng.v:10) "
                    f"[start: {rtl_names.COPY_NOTE}]")
    assert "$auto$" in cp["startpoint"] and "$auto$" not in line  # the raw name stays in the record


def test_copy_needs_the_lut_to_hold_the_register_when_disabled():
    """Break the guard: a LUT that does not give beat_q back while en is 0 makes no copy."""
    n = netlist()
    n["modules"]["top"]["cells"]["$flatten\\u.$abc$1$lut$7"]["parameters"]["INIT"] = "11100011"
    names = rtl_names.names({"$flatten\\u.$auto$ff.cc:337:slice$11"}, n["modules"]["top"]["cells"],
                            n["modules"]["top"]["netnames"])
    assert names["$flatten\\u.$auto$ff.cc:337:slice$11"] == rtl_names.RtlName(None, None)
    cp = {"startpoint": "$flatten\\u.$auto$ff.cc:337:slice$11/Q (FDRE)", "endpoint": "u.p_reg[3] [x]/D (FDRE)",
          "startpoint_rtl": {"name": None, "source": None}, "logic_levels": 0, "cells": []}
    assert rtl_path.line(cp) == "from an unnamed register (u.$auto$ff.cc:337:slice$11) directly to u.p_reg[3]"


def test_without_the_source_file_the_line_is_yosys_own():
    n = netlist()
    names = rtl_names.names({"$flatten\\u.$auto$ff.cc:337:slice$12"}, n["modules"]["top"]["cells"],
                            n["modules"]["top"]["netnames"])
    assert names["$flatten\\u.$auto$ff.cc:337:slice$12"].source == "eng.v:12"


def test_report_carries_rtl_lines_and_reads_back(run_dir: Path, tmp_path: Path):
    (run_dir / "netlist.json").write_text(json.dumps(netlist()))
    rpt = tmp_path / "timing_estimate.rpt"
    rec, _ = estimate(run_dir / "netlist.json", CLOCKS, M, report=rpt, vivado_mapping=False)
    text = rpt.read_text()
    assert "Startpoint RTL: u.beat_q | eng.v:7 | a copy Yosys made" in text
    assert "Endpoint RTL: u.p_reg[3] | eng.v:10\n" in text
    assert f"RTL path: {rtl_path.line(rec['critical_path'])}\n" in text
    assert "$flatten\\u.$auto$ff.cc:337:slice$11 (clk -> Q)" in text  # the raw netlist name stays
    parsed = kabe_timing.parse(rpt)
    assert parsed["critical_path"] == rec["critical_path"]
    record = {"timing": parsed}
    full = metrics.schema()
    sub = {**full["properties"]["timing"]["properties"]["critical_path"], "$defs": full.get("$defs", {})}
    import jsonschema
    jsonschema.validate(record["timing"]["critical_path"], sub)
    # a damaged RTL line is refused, not read as a name
    bad = text.replace("Endpoint RTL: u.p_reg[3] | eng.v:10", "Endpoint RTL: u.p_reg[3] | eng.v")
    with pytest.raises(ReportError, match="not file:line"):
        kabe_timing.parse_text(bad)


def test_old_records_and_vivado_records_still_read():
    """A record from before startpoint_rtl (open flow) and a Vivado one: names from the strings."""
    old_open = {"startpoint": "$flatten\\u.$auto$ff.cc:337:slice$1/Q (FDRE)",
                "endpoint": "u.lane[7].p_reg[15] [$flatten\\u.$auto$ff.cc:337:slice$2]/D (FDRE)",
                "logic_levels": 2, "cells": [{"name": "$flatten\\u.$auto$ff.cc:337:slice$1", "type": "FDRE"},
                                             {"name": "a", "type": "LUT6"}, {"name": "b", "type": "CARRY4"},
                                             {"name": "$flatten\\u.$auto$ff.cc:337:slice$2", "type": "FDRE"}]}
    assert rtl_path.line(old_open) == ("from an unnamed register (u.$auto$ff.cc:337:slice$1) through 2 logic "
                                       "levels (LUT6, CARRY4) to u.lane[7].p_reg[15]")
    vivado = {"startpoint": "port0_inst/x_q_reg[3]/C", "endpoint": "port0_inst/naive.lane[7].p_reg_reg_rep__0[15]/D",
              "logic_levels": 1, "cells": [{"name": "port0_inst/x_q_reg[3]", "type": "FDRE"},
                                           {"name": "port0_inst/p[15]_i_1", "type": "LUT6"}]}
    assert rtl_path.line(vivado) == ("from port0_inst.x_q[3] through 1 logic level (LUT6) to "
                                     "port0_inst.naive.lane[7].p_reg[15] [end: a replica Vivado made of this register]")
    assert rtl_path.line(None) is None and rtl_path.line({}) is None
    assert rtl_path.types_text(["LUT6"] * 3 + ["CARRY4"]) == "LUT6 x3, CARRY4"


@pytest.mark.e2e  # a real Yosys synthesis: end to end, out of the fast tier (-m 'not e2e')
def test_yosys_counts_two_lines_per_resetall(tmp_path: Path):
    """The real Yosys (yowasp) on a two-register design: its `src` is two lines late after each
    `resetall; kabe's names give the file's own line."""
    from kabe.flows.open import yosys_command

    (tmp_path / "m.v").write_text("`resetall\n`timescale 1ns / 1ps\nmodule m(input wire clk, input wire d, "
                                  "output reg q);\nreg r;\n`resetall\nalways @(posedge clk) r <= d;\n"
                                  "always @(posedge clk) q <= r;\nendmodule\n")
    subprocess.run(yosys_command() + ["-q", "-p", "read_verilog m.v; synth_xilinx -top m -noiopad; write_json n.json"],
                   cwd=tmp_path, check=True, capture_output=True, timeout=600)
    n = json.loads((tmp_path / "n.json").read_text())
    top = n["modules"]["m"]
    assert top["netnames"]["r"]["attributes"]["src"].startswith("m.v:6.")  # reg r is on line 4
    ffs = {c for c, v in top["cells"].items() if v["type"] == "FDRE"}
    got = {r.name: r.source for r in rtl_names.names(ffs, top["cells"], top["netnames"], tmp_path).values()}
    assert got == {"r": "m.v:4", "q": "m.v:3"}


def _port_alias(tmp_path: Path, block: str) -> rtl_names.RtlName:
    """A register whose Q net kept only the name of the port it drives (`assign stat = stat_q;`),
    made by the always block `block` (lines 1..n of blk.v)."""
    (tmp_path / "blk.v").write_text(block + "\nmodule m(output wire [3:0] stat);\n")
    n = block.count("\n") + 1
    cells = {"$flatten\\u.$auto$ff.cc:337:slice$1": _ff(f"blk.v:1.1-{n}.4|{FF_MAP}", 5, 6)}
    netnames = {"u.stat": {"hide_name": 0, "bits": [6, 7], "attributes": {"src": f"blk.v:{n + 1}.27-{n + 1}.31"}}}
    return rtl_names.names(set(cells), cells, netnames, tmp_path)["$flatten\\u.$auto$ff.cc:337:slice$1"]


def test_a_register_renamed_to_its_port_says_its_own_name(tmp_path):
    got = _port_alias(tmp_path, "always @(posedge clk) begin\n    if (cnt <= 4'd9) stat_q <= nxt;\n"
                                "    other <= 1'b0;\nend")
    assert (got.name, got.source) == ("u.stat[0]", "blk.v:5")  # the name the netlist kept, never replaced
    assert got.note.startswith("the register is stat_q, assigned in the always block at blk.v:1")
    # an always block of several registers, none extending the net's name: nothing is guessed
    assert _port_alias(tmp_path, "always @(posedge clk) begin\n    a_q <= nxt;\n    b_q <= a_q;\nend").note is None


def test_a_start_that_is_no_flip_flop_says_its_cell():
    cp = {"startpoint": "u.d [x]/Q (SRL16E)", "endpoint": "u.e [y]/D (FDRE)", "logic_levels": 0,
          "cells": [{"name": "x", "type": "SRL16E"}, {"name": "y", "type": "FDRE"}],
          "startpoint_rtl": {"name": "u.d", "source": "a.v:3"}, "endpoint_rtl": {"name": "u.e", "source": None}}
    assert rtl_path.line(cp) == "from u.d (SRL16E, a.v:3) directly to u.e"


def test_vivado_report_names_its_registers_the_same_way():
    """A real Vivado report (shared fixture): Vivado's cell names are the RTL registers (`_reg` off)."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "parsers"))
    from shared_reports import shared_file

    from kabe.parsers import vivado_timing_summary

    cp = vivado_timing_summary.parse_file(shared_file("vivado-reports",
                                                      "lakeroad_xczu3eg_timing_summary_2021.2_violated.rpt"))["critical_path"]
    assert rtl_path.line(cp) == ("from fsm2.out[0] through 15 logic levels (LUT6 x2, LUT4, LUT2, DSP_A_B_DATA, "
                                 "DSP_PREADD_DATA, DSP_MULTIPLIER, DSP_M_DATA, DSP_ALU x2, DSP_OUTPUT x2, LUT3, "
                                 "CARRY8 x2) to mul_out2.out[31]")


def test_a_yosys_that_counts_right_is_not_corrected(tmp_path):
    """Break the correction's assumption: a netlist whose `src` lines are the file's own (a Yosys
    that counts `resetall right) is left as it is, because the file spells the nets' names there."""
    (tmp_path / "f.v").write_text("`resetall\nmodule m;\nreg a_q;\nreg b_q;\nendmodule\n")
    cells = {"c1": _ff(f"f.v:3.5-3.8|{FF_MAP}", 5, 6), "c2": _ff(f"f.v:4.5-4.8|{FF_MAP}", 5, 7)}
    right = {"a_q": {"hide_name": 0, "bits": [6], "attributes": {"src": "f.v:3.5-3.8"}},
             "b_q": {"hide_name": 0, "bits": [7], "attributes": {"src": "f.v:4.5-4.8"}}}
    got = rtl_names.names(set(cells), cells, right, tmp_path)
    assert {r.name: r.source for r in got.values()} == {"a_q": "f.v:3", "b_q": "f.v:4"}
    late = {k: {**v, "attributes": {"src": v["attributes"]["src"].replace(":3.", ":5.").replace("-3.", "-5.")
                                    .replace(":4.", ":6.").replace("-4.", "-6.")}} for k, v in right.items()}
    got = rtl_names.names(set(cells), cells, late, tmp_path)  # Yosys 0.70's: two lines late
    assert {r.name: r.source for r in got.values()} == {"a_q": "f.v:3", "b_q": "f.v:4"}


def test_the_one_register_wide_enough_for_the_bit_is_named(tmp_path):
    """out_word[31:0] and two 1-bit flags assigned in one block; the net kept is another module's
    32-bit port, bit 25: only out_word has a bit 25. A width that is a parameter names nothing."""
    block = ("always @(posedge clk) begin\n    out_word <= w;\n    out_valid <= v;\n    out_last <= l;\nend\n"
             "reg  [31:0] out_word;\nreg out_valid, out_last;\n")
    (tmp_path / "e.v").write_text(block)
    (tmp_path / "fifo.v").write_text("module f(input wire [31:0] s_axis_tdata);\n")
    cells = {"c": _ff(f"e.v:1.1-5.4|{FF_MAP}", 5, 6)}
    bits = [100 + i for i in range(32)]
    bits[25] = 6
    nets = {"u.fifo.s_axis_tdata": {"hide_name": 0, "bits": bits, "attributes": {"src": "fifo.v:1.29-1.41"}}}
    got = rtl_names.names({"c"}, cells, nets, tmp_path)["c"]
    assert (got.name, got.source) == ("u.fifo.s_axis_tdata[25]", "e.v:1")
    assert got.note == ("the register is out_word, assigned in the always block at e.v:1; the netlist keeps only "
                        "the name of the net it drives (declared at fifo.v:1)")
    (tmp_path / "e.v").write_text(block.replace("[31:0] out_word", "[W-1:0] out_word"))
    got = rtl_names.names({"c"}, cells, nets, tmp_path)["c"]
    assert got.note.startswith("the register's own name is not in the netlist")
