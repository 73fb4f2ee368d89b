"""Fail fast, then long (issue 38): Yosys reads only the files the top's hierarchy can use (a library file
the top never uses, unreadable to Yosys, stops nothing), elaborates the top before any simulation (a file
it cannot read is said in seconds, and the simulation never starts), and a run past its documented time
limit stops with what to do. Real Yosys."""

from __future__ import annotations

import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from kabe.project.core_targets import sources_of_top
from kabe.flows import open as open_flow
from kabe.flows.base import ToolError

pytestmark = pytest.mark.e2e  # end to end: real tools, minutes (the fast tier leaves it out: -m 'not e2e')

TOP = "module top(input clk, input [7:0] a, output [7:0] y); leaf u (.clk(clk), .a(a), .y(y)); endmodule\n"
LEAF = "module leaf(input clk, input [7:0] a, output reg [7:0] y); always @(posedge clk) y <= a + 1; endmodule\n"
# SystemVerilog Yosys does not read (a class); Verilator would
UNUSED = "module unused; class c; int x; endclass endmodule\n"
DEFINES = "`define WIDTH 8\n"


def _edam(tmp_path: Path, files: dict[str, str]):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    return SimpleNamespace(toplevel="top", sources=tuple(tmp_path / n for n in files), include_dirs=(),
                           parameters={}, parameter_specs={}, tool_options={})


def test_only_the_files_the_top_can_use_are_read(tmp_path):
    e = _edam(tmp_path, {"defs.vh": DEFINES, "unused.sv": UNUSED, "top.v": TOP, "leaf.v": LEAF})
    kept = [Path(p).name for p in sources_of_top(e.sources, "top")]
    assert kept == ["defs.vh", "top.v", "leaf.v"]  # in their order; a `define file is always kept
    assert [Path(p).name for p in sources_of_top(e.sources, "nowhere")] == ["defs.vh", "unused.sv", "top.v", "leaf.v"]
    synth = open_flow.synthesize(e, tmp_path / "out")  # Yosys never reads unused.sv
    assert "unused.sv" not in synth.script.read_text()


def test_yosys_elaborates_in_seconds_and_names_the_file_it_cannot_read(tmp_path):
    e = _edam(tmp_path, {"top.v": TOP, "leaf.v": LEAF.replace("y <= a + 1;", "y <= a + ;")})
    t0 = time.monotonic()
    with pytest.raises(ToolError, match=r"leaf\.v:1: ERROR: syntax error"):
        open_flow.elaborate(e, tmp_path / "elab")
    assert time.monotonic() - t0 < 120
    (tmp_path / "m").mkdir()
    missing = _edam(tmp_path / "m", {"top.v": TOP})  # leaf is in no file
    with pytest.raises(ToolError, match="leaf"):
        open_flow.elaborate(missing, tmp_path / "elab2")


def test_a_yosys_run_past_its_limit_says_the_setting(tmp_path, monkeypatch):
    e = _edam(tmp_path, {"top.v": TOP, "leaf.v": LEAF})
    monkeypatch.setenv(open_flow.TIMEOUT_ENV, "0.5")
    with pytest.raises(ToolError, match=r"did not finish within 0 s .*KABE_YOSYS_TIMEOUT_S=7200"):
        open_flow.synthesize(e, tmp_path / "out")
    monkeypatch.setenv(open_flow.TIMEOUT_ENV, "soon")
    with pytest.raises(ToolError, match="KABE_YOSYS_TIMEOUT_S='soon' is not a number"):
        open_flow.synthesize(e, tmp_path / "out")


def test_a_long_yosys_run_says_where_it_is(tmp_path, monkeypatch):
    monkeypatch.setattr(open_flow, "PROGRESS_EVERY_S", 1.0)
    said: list[str] = []
    e = _edam(tmp_path, {"top.v": TOP, "leaf.v": LEAF})
    open_flow.synthesize(e, tmp_path / "out", progress=said.append)
    assert said and said[0].startswith("Yosys running for ") and "limit" in said[0], said


XPM_TOP = ("module top(input clk, input [7:0] a, output [7:0] y);\n"
           "  xpm_cdc_array_single #(.WIDTH(8)) u (.src_clk(clk), .dest_clk(clk), .src_in(a), .dest_out(y));\n"
           "endmodule\n")


def test_an_xpm_macro_is_named_with_the_fix_by_yosys(tmp_path):
    e = _edam(tmp_path, {"top.v": XPM_TOP})
    with pytest.raises(ToolError, match=r"xpm_cdc_array_single is an XPM macro, which only Vivado provides: "
                                        r"build with flow=vivado"):
        open_flow.elaborate(e, tmp_path / "elab")


def test_an_xpm_macro_and_a_primitive_are_named_with_the_fix_by_verilator(tmp_path):
    from kabe.project.core_targets import vendor_module_fix
    from kabe.sim import verilator_build

    errs = ["%Error-MODMISSING: top.v:2:3: Cannot find file containing module: 'xpm_fifo_sync'",
            "%Error: top.v:3:3: Cannot find file containing module: 'IDDR'",
            "%Error: top.v:4:3: Cannot find file containing module: 'my_fifo'"]
    fixes = verilator_build._vendor_fixes(errs)
    assert "xpm_fifo_sync is an XPM macro" in fixes and "IDDR is a Xilinx primitive" in fixes
    assert "my_fifo" not in fixes and vendor_module_fix("my_fifo", "verilator") is None


def test_a_target_with_no_tool_gets_kabes(tmp_path):
    """FuseSoC alone stops at "No flow or tool was supplied"; kabe runs Verilator for sim, Yosys for synth."""
    from kabe.project import cores, designs
    from . import user_designs as u

    d = tmp_path / "cores" / "notool"
    d.mkdir(parents=True)
    (d / "leaf.v").write_text(LEAF)
    (d / "notool.core").write_text("CAPI=2:\nname: user:design:notool:0.1.0\nfilesets:\n  rtl:\n"
                                   "    files: [leaf.v]\n    file_type: verilogSource\ntargets:\n"
                                   "  sim: {filesets: [rtl], toplevel: leaf}\n  synth: {filesets: [rtl], toplevel: leaf}\n")
    (d / "notool.xdc").write_text(u.XDC)
    (d / "design.yaml").write_text("core: user:design:notool:0.1.0\nconstraints: notool.xdc\nverify: {none: n}\n")
    design = designs.load(d / "design.yaml")
    sim = cores.resolve(design, "sim", build_root=tmp_path / "build")
    synth = cores.resolve(design, "synth", build_root=tmp_path / "build")
    assert (sim.tool, synth.tool) == ("verilator", "yosys") and synth.toplevel == "leaf"


def test_a_primitive_look_alike_the_top_never_uses_is_not_refused(tmp_path):
    from kabe.flows.base import FlowError

    look_alike = "module RAM16X1D(input WCLK, output O); assign O = 1'b0; endmodule\n"
    e = _edam(tmp_path, {"top.v": TOP, "leaf.v": LEAF, "ram.v": look_alike})
    open_flow.check_primitive_names(e)  # ram.v: not in the top's hierarchy
    used = _edam(tmp_path, {"top.v": TOP.replace("leaf u", "RAM16X1D r (.WCLK(clk), .O()); leaf u"),
                            "leaf.v": LEAF, "ram.v": look_alike})
    with pytest.raises(FlowError, match="defines module RAM16X1D"):
        open_flow.check_primitive_names(used)


def test_the_cocotb_limit_is_a_setting(monkeypatch):
    from kabe.sim import cocotb_run

    monkeypatch.setenv(cocotb_run.TIMEOUT_ENV, "90")
    assert cocotb_run.timeout_setting() == 90.0
    monkeypatch.setenv(cocotb_run.TIMEOUT_ENV, "-1")
    with pytest.raises(cocotb_run.CocotbError, match="KABE_COCOTB_TIMEOUT_S='-1' is not a number"):
        cocotb_run.timeout_setting()


RAM_MODEL = ("module RAM16X1D(input WCLK, input WE, input A0, A1, A2, A3, input DPRA0, DPRA1, DPRA2, DPRA3,\n"
             "                input D, output SPO, output DPO);\n  assign SPO = 1'b0; assign DPO = 1'b0;\nendmodule\n")
USES_RAM = TOP.replace("leaf u", "RAM16X1D r (.WCLK(clk), .SPO()); leaf u")


@pytest.mark.parametrize("guard, refused", [
    ("`ifdef verilator\n{m}`endif\n", False),  # a simulation model Yosys never compiles
    ("`ifndef SYNTHESIS\n{m}`endif\n", False),
    ("`ifdef SYNTHESIS\n`else\n{m}`endif\n", False),
    ("`ifdef SYNTHESIS\n{m}`endif\n", True),  # what Yosys compiles
    ("`define MODEL\n`ifdef MODEL // set above\n{m}`endif\n", True),
    ("{m}", True),
])
def test_the_primitive_check_reads_the_files_as_yosys_compiles_them(tmp_path, guard, refused):
    """The top instantiates the primitive RAM16X1D and a core file beside it holds a behavioural RAM16X1D
    (issue 38: a `verify: none` design was refused for one inside `ifdef verilator): only what Yosys
    compiles (the files the top can use, preprocessed with SYNTHESIS and YOSYS defined) counts."""
    from kabe.flows.base import FlowError

    e = _edam(tmp_path, {"top.v": USES_RAM, "leaf.v": LEAF, "ram_model.v": guard.format(m=RAM_MODEL)})
    if refused:
        with pytest.raises(FlowError, match=r"ram_model\.v defines module RAM16X1D"):
            open_flow.check_design(None, e)
    else:
        open_flow.check_design(None, e)


def test_preprocess_takes_the_branches_a_tool_compiles():
    from kabe.project.core_targets import preprocess

    text = ("`define A 1 \\\n  `ifdef B\nmodule a; endmodule\n`ifdef A\nmodule in_a; endmodule\n`elsif C\n"
            "module in_c; endmodule\n`else\nmodule other; endmodule\n`endif\n/* `ifdef X */ module z; endmodule\n")
    defines: set[str] = set()
    got = preprocess(text, defines)
    assert "in_a" in got and "in_c" not in got and "other" not in got and "module z" in got
    assert defines == {"A"}  # the `define's continued body is no directive
    got = preprocess("`ifdef A\n`undef A\n`endif\n`ifdef A\nmodule gone; endmodule\n`else\nmodule kept; endmodule\n"
                     "`endif\n", defines)
    assert "kept" in got and "gone" not in got and defines == set()
    nested = "`ifdef X\n`ifdef Y\nmodule xy; endmodule\n`else\nmodule x; endmodule\n`endif\n`endif\n"
    assert "module x;" not in preprocess(nested, set()) and "module x;" in preprocess(nested, {"X"})
