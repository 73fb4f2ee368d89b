"""The Verilator harness runs a design as FuseSoC's tools do: its own SystemVerilog assertions are on (a
failed one fails the verification in one line naming it), it runs in the FuseSoC work root (where a
core's `copyto:` files land, so `$readmemh("table.hex")` reads the table), Verilator's runtime warnings
are said, and a project in a folder with a space in its path is refused before make can refuse it.
Real FuseSoC and real Verilator (one small compile per design); the designs live in temporary projects."""

from __future__ import annotations

from kabe.project.design_context import DesignContext
from kabe.sim.ask import SimAsk
import io
import sys
import textwrap
import uuid
from pathlib import Path

import pytest

from kabe.project import designs
from kabe.base.errors import UserError
from kabe.sim import golden, runner, verilator_build

from . import user_designs as u

pytestmark = pytest.mark.e2e  # end to end: real tools, minutes (the fast tier leaves it out: -m 'not e2e')

# A register stage whose interface contract says tdata never exceeds MAXV; its assertion checks it.
ASRT_TOP = """\
module asrt_top #(parameter int MAXV = 100) (input logic clk, input logic rst,
  input logic [7:0] s_axis_tdata, input logic s_axis_tvalid, output logic s_axis_tready, input logic s_axis_tlast,
  output logic [7:0] m_axis_tdata, output logic m_axis_tvalid, input logic m_axis_tready, output logic m_axis_tlast);
  assign s_axis_tready = !m_axis_tvalid || m_axis_tready;
  always_ff @(posedge clk) begin
`ifndef SYNTHESIS
    if (!rst && s_axis_tvalid) assert (s_axis_tdata <= MAXV) else $error("tdata %0d > MAXV", s_axis_tdata);
`endif
    if (rst) m_axis_tvalid <= 1'b0;
    else if (s_axis_tready) begin
      m_axis_tvalid <= s_axis_tvalid; m_axis_tdata <= s_axis_tdata; m_axis_tlast <= s_axis_tlast;
    end
  end
endmodule
"""

# size beats 0, 1, ..., size - 1 (mod 256), passed through: up to size 101 the contract holds
ASRT_MODEL = """\
import numpy as np
from kabe.verify import Stimulus
def stimulus(seed, size, context):
    a = np.arange(256 if size is None else size, dtype=np.uint32) % 256
    return Stimulus(inputs={"s_axis": a}, expected={"m_axis": a})
"""

ROM_TOP = """\
module rom_top (input wire clk, input wire rst,
  input wire [7:0] s_axis_tdata, input wire s_axis_tvalid, output wire s_axis_tready, input wire s_axis_tlast,
  output reg [7:0] m_axis_tdata, output reg m_axis_tvalid, input wire m_axis_tready, output reg m_axis_tlast);
  reg [7:0] rom [0:255];
  initial $readmemh("table.hex", rom);
  assign s_axis_tready = !m_axis_tvalid || m_axis_tready;
  always @(posedge clk) begin
    if (rst) m_axis_tvalid <= 1'b0;
    else if (s_axis_tready) begin
      m_axis_tvalid <= s_axis_tvalid; m_axis_tdata <= rom[s_axis_tdata]; m_axis_tlast <= s_axis_tlast;
    end
  end
endmodule
"""

TABLE = [(37 * i + 11) % 256 for i in range(256)]  # a permutation: no row reads back its own address

ROM_MODEL = f"""\
import numpy as np
from kabe.verify import Stimulus
TABLE = np.array({TABLE}, dtype=np.uint32)
def stimulus(seed, size, context):
    a = np.random.default_rng(seed).integers(0, 256, size=256 if size is None else size, dtype=np.uint32)
    return Stimulus(inputs={{"s_axis": a}}, expected={{"m_axis": TABLE[a]}})
"""

# the table listed the FuseSoC way: a `user` file copied into the work root under the name the RTL reads
ROM_CORE = """\
CAPI=2:
name: user:design:rom:0.1.0
filesets:
  rtl:
    files: [rtl/rom_top.v]
    file_type: verilogSource
  data:
    files: [rtl/table.hex: {copyto: table.hex}]
    file_type: user
targets:
  default: &default
    filesets: [rtl, data]
    toplevel: rom_top
  sim:
    <<: *default
    flow: sim
    flow_options: {tool: verilator, mode: cc}
  synth:
    <<: *default
    flow: generic
    flow_options: {tool: yosys, arch: xilinx, output_format: json, yosys_synth_options: [-family, xc7]}
"""


def _design_yaml(name: str, model: str) -> str:
    return textwrap.dedent(f"""\
        core: user:design:{name}:0.1.0
        constraints: {name}.xdc
        verify: {{model: "{model}:stimulus"}}
        streams: {{in: {{s_axis: 8}}, out: {{m_axis: 8}}}}
        """)


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A project folder whose root is importable (as kabe puts the project root on sys.path)."""
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(golden, "ROOT", tmp_path)
    return tmp_path


def _model(project: Path, text: str) -> str:
    name = f"model_{uuid.uuid4().hex[:8]}"  # Python caches a module by name
    (project / f"{name}.py").write_text(text)
    return name


def write_asrt(project: Path) -> designs.Design:
    d = project / "cores" / "asrt"
    d.mkdir(parents=True)
    (d / "asrt_top.sv").write_text(ASRT_TOP)
    (d / "asrt.core").write_text(u.core_file("asrt", "user:design:asrt:0.1.0", "asrt_top", ["asrt_top.sv"])
                                 .replace("file_type: verilogSource", "file_type: systemVerilogSource"))
    (d / "asrt.xdc").write_text(u.XDC)
    (d / "design.yaml").write_text(_design_yaml("asrt", _model(project, ASRT_MODEL)))
    return designs.load(d / "design.yaml")


def write_rom(project: Path) -> designs.Design:
    d = project / "cores" / "rom"
    (d / "rtl").mkdir(parents=True)
    (d / "rtl" / "rom_top.v").write_text(ROM_TOP)
    (d / "rtl" / "table.hex").write_text("".join(f"{v:02x}\n" for v in TABLE))
    (d / "rom.core").write_text(ROM_CORE)
    (d / "rom.xdc").write_text(u.XDC)
    (d / "design.yaml").write_text(_design_yaml("rom", _model(project, ROM_MODEL)))
    return designs.load(d / "design.yaml")


# ---- A: the design's own assertions run ---------------------------------------------------------

def test_a_failed_assertion_fails_the_verification_in_one_line_naming_it(project):
    d = write_asrt(project)
    build = project / "build"
    ok = runner.run_sim(DesignContext(designs.get(d)), SimAsk(50, build_root=build))  # beats 0..49: the contract holds, the assertion stays quiet
    assert ok["passed"], (ok["problems"], ok["first_mismatches"])
    assert ok["warnings"] == []

    r = runner.run_sim(DesignContext(designs.get(d)), SimAsk(200, build_root=build))  # beat 101 breaks it (same model, no second compile)
    assert not r["compiled"]
    assert not r["passed"] and r["mismatches"] == 0 and r["rows_checked"] == 0 and r["words_checked"] == 0
    assert len(r["problems"]) == 1, r["problems"]
    line = r["problems"][0]
    assert "\n" not in line
    assert "the design's own check failed" in line and "Assertion failed" in line, line
    assert "tdata 101 > MAXV" in line and "asrt_top.sv:7" in line, line
    # kabe's one verdict (the build's gate) fails the verification on it, saying the same line
    from kabe.rules import gate, verdict
    v = gate.Verdict(passed=True)
    verdict._judge_sim(v, r)
    assert not v.passed and any(line in f for f in v.failures), v.failures


@pytest.mark.parametrize("output, said", [
    ("[0] %Error: a.sv:9: Assertion failed in TOP.a: tdata 7 > MAXV\n%Error: /p/a.sv:9: Verilog $stop\nAborting...\n",
     "%Error: a.sv:9: Assertion failed in TOP.a: tdata 7 > MAXV (stopped at /p/a.sv:9)"),
    ("[0] %Fatal: a.sv:4: Assertion failed in TOP.a: MAXV must fit 8 bits\n%Error: /p/a.sv:4: Verilog $stop\n",
     "%Fatal: a.sv:4: Assertion failed in TOP.a: MAXV must fit 8 bits (stopped at /p/a.sv:4)"),
    ("some $display line\n%Error: /p/a.sv:12: Verilog $stop\nAborting...\n", "%Error: /p/a.sv:12: Verilog $stop"),
    ("harness: cannot open input x\n", None),
])
def test_design_stop_reads_verilators_lines(output, said):
    assert runner.design_stop(output) == said


def test_runtime_warnings_are_read_and_capped():
    out = "".join(f"%Warning: t{i}.hex:0: $readmem file not found\n" for i in range(8)) + "[3] a $display line\n"
    w = runner.runtime_warnings(out)
    assert w[0] == "%Warning: t0.hex:0: $readmem file not found" and w[-1] == "(and 3 more warning(s))" and len(w) == 6
    assert runner.runtime_warnings("[0] %Error: a.sv:1: x\n") == []


# ---- B: copyto files are where the simulation runs; its warnings are said -------------------------

def test_readmemh_of_a_copyto_file_reads_the_table(project):
    r = runner.run_sim(DesignContext(designs.get(write_rom(project))), SimAsk(256, build_root=project / "build"))
    assert r["passed"], (r["problems"], r["first_mismatches"])
    assert r["mismatches"] == 0 and r["warnings"] == []


def test_a_readmemh_file_the_core_does_not_list_is_said(project):
    """The table beside the RTL but not in the core (so never in the work root): every row differs, and
    Verilator's warning naming the file is in the result, among its problems and on the console."""
    d = write_rom(project)
    core = project / "cores" / "rom" / "rom.core"
    core.write_text(core.read_text().replace("filesets: [rtl, data]", "filesets: [rtl]"))
    d = designs.load(d.yaml_file)
    r = runner.run_sim(DesignContext(designs.get(d)), SimAsk(256, build_root=project / "build"))
    assert not r["passed"] and r["mismatches"] > 200
    assert r["warnings"] == ["%Warning: table.hex:0: $readmem file not found"], r["warnings"]
    assert "Verilator warned during the run: %Warning: table.hex:0: $readmem file not found" in r["problems"]


def test_the_harness_paths_hold_with_a_relative_build_root(project, monkeypatch):
    """The harness runs in the work root: the streams, outputs and summary it is given are absolute."""
    d = write_rom(project)
    monkeypatch.chdir(project)
    r = runner.run_sim(DesignContext(designs.get(d)), SimAsk(64, build_root=Path("build")))
    assert r["passed"], (r["problems"], r["first_mismatches"])


# ---- C: a folder with a space ---------------------------------------------------------------------

def test_a_build_folder_with_a_space_is_refused_before_verilator_runs(tmp_path):
    d = designs.load(u.write_width(tmp_path / "project"))
    build = tmp_path / "my build" / "build"
    with pytest.raises(verilator_build.SimBuildError) as caught:
        verilator_build.build(DesignContext(designs.get(d)), build_root=build)
    message = str(caught.value)
    assert isinstance(caught.value, UserError) and "\n" not in message
    assert f"'{tmp_path / 'my build'}'" in message and "path has a space" in message, message
    assert "Fix: rename that folder, or move the project" in message
    assert not (build / "sim" / "width").exists()  # nothing verilated, no make run


def test_spaced_folder():
    assert verilator_build.spaced_folder(Path("/a/b c/d e/f")) == Path("/a/b c")
    assert verilator_build.spaced_folder(Path("/a/b\tc")) == Path("/a/b\tc")
    assert verilator_build.spaced_folder(Path("/a/b/c")) is None


def test_kabe_sim_in_a_project_with_a_space_exits_2_in_one_line(tmp_path):
    project = tmp_path / "my proj"
    proc = u.kabe_sim_width(project)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    said = [ln for ln in (proc.stdout + proc.stderr).splitlines() if "path has a space" in ln]
    assert len(said) == 1 and str(project) in said[0] and "Fix:" in said[0], proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr and "GNU Make cannot build in directories" not in proc.stdout + proc.stderr


def test_a_toplevel_that_is_no_module_is_said_in_the_core_files_terms(tmp_path):
    """`toplevel: width_tp` (a typo): the core file, the modules there are and the fix, in one line;
    before, Verilator's own "--top-module not found" ended the message."""
    y = u.write_width(tmp_path / "project")
    core = y.parent / "width.core"
    core.write_text(core.read_text().replace("toplevel: width_top", "toplevel: width_tp"))
    d = designs.load(y)
    with pytest.raises(verilator_build.SimBuildError) as caught:
        verilator_build.build(DesignContext(designs.get(d)), build_root=tmp_path / "project" / "build")
    message = str(caught.value)
    assert "\n" not in message and message.startswith(f"{core}: the sim target's toplevel 'width_tp'"), message
    assert "(modules there: width_top)" in message and "Fix: set the target's `toplevel:`" in message


# ---- D: `ifdef SYNTHESIS --------------------------------------------------------------------------

def _synthesis_view(d: designs.Design, rows: int, first: dict) -> dict:
    from rich.console import Console

    from kabe import build
    from kabe.project import cores
    from kabe.base import provenance
    ctx = DesignContext(d, provenance.Commit("nogit", False), Console(file=io.StringIO()), sim=cores.resolve(d, "sim"))
    return build._synthesis_view(ctx, rows, first)


def test_logic_only_synthesis_builds_is_simulated_too(project):
    """Red team 4c, repro 05: `ifdef SYNTHESIS  y = d + 1; `else  y = d;` passed: Verilator ran the else
    branch, Yosys built the other. A design that tests SYNTHESIS is simulated again with it defined."""
    d = write_asrt(project)
    top = d.yaml_file.parent / "asrt_top.sv"
    top.write_text(ASRT_TOP.replace("m_axis_tdata <= s_axis_tdata;",
                                    "\n`ifdef SYNTHESIS\n      m_axis_tdata <= s_axis_tdata + 8'd1;\n`else\n"
                                    "      m_axis_tdata <= s_axis_tdata;\n`endif\n"))
    first = runner.run_sim(DesignContext(designs.get(d)), SimAsk(50, build_root=project / "build"))
    assert first["passed"], first["problems"]  # as Verilator reads it: the model's values
    r = _synthesis_view(d, 50, first)
    assert not r["passed"] and r["synthesis_view"]["mismatches"] == 50, r["synthesis_view"]
    assert r["problems"][-1].startswith("with SYNTHESIS defined (the logic Yosys and Vivado build, "), r["problems"]
    assert "asrt_top.sv:" in r["problems"][-1] and "50 of 50 beat(s) differ" in r["problems"][-1], r["problems"]


def test_an_assertion_under_ifndef_synthesis_passes_both_runs(project):
    d = write_asrt(project)  # `ifndef SYNTHESIS around its assertion only: the same logic either way
    first = runner.run_sim(DesignContext(designs.get(d)), SimAsk(50, build_root=project / "build"))
    r = _synthesis_view(d, 50, first)
    assert r["passed"] and r["synthesis_view"]["passed"] and r["synthesis_view"]["mismatches"] == 0
    assert r["synthesis_view"]["places"] == [f"{d.yaml_file.parent / 'asrt_top.sv'}:6"]


def test_a_synthesis_branch_verilator_cannot_compile_is_said_and_not_failed(project):
    """`ifdef SYNTHESIS  BUFG u (...); `else  assign g = c; `endif`: with SYNTHESIS defined the simulation has
    no model of BUFG. That logic stays unverified, as it was before the second run existed: said and
    recorded, never a failure of a design that simulates as written."""
    d = write_asrt(project)
    top = d.yaml_file.parent / "asrt_top.sv"
    top.write_text(ASRT_TOP.replace("  assign s_axis_tready", "`ifdef SYNTHESIS\n  NOSUCHPRIM u_p (.I(clk));\n`endif\n"
                                                          "  assign s_axis_tready", 1))
    first = runner.run_sim(DesignContext(designs.get(d)), SimAsk(50, build_root=project / "build"))
    r = _synthesis_view(d, 50, first)
    assert r["passed"] and "NOSUCHPRIM" in r["synthesis_view"]["not_compiled"], r["synthesis_view"]
