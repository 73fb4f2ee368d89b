"""One design, simulated and synthesized the same (issue 38): a core with a define that has no value, a
string parameter naming a `$readmemh` file, and that file reaching the work root through `copyto`, built
through kabe's Verilator harness (a golden model), cocotb and Yosys; each must see the same thing: the
define undefined (as edalize leaves it), the string as a string, the table read. Real tools."""

from __future__ import annotations

from kabe.project.design_context import DesignContext
from kabe.sim.ask import SimAsk
import json
import textwrap
import uuid
from pathlib import Path

import pytest

from . import user_designs as u
from kabe.project import cores, designs
from kabe.flows import open as open_flow
from kabe.sim import golden, runner

pytestmark = pytest.mark.e2e  # end to end: real tools, minutes (the fast tier leaves it out: -m 'not e2e')

TABLE = [0x3C, 0x01, 0x22, 0x93, 0x47, 0x5A, 0x66, 0x7F, 0x80, 0x9E, 0xA1, 0xB2, 0xC3, 0xD4, 0xE5, 0xF6]

# m_axis = table[s_axis & 15], inverted under `ifdef EXTRA; word0 = table[0] (inverted likewise); EXTRA also
# adds an output port, extra_flag, which each tool's view of the top shows or not
TOP = """\
module romq_top #(parameter MEMFILE = "missing.hex") (
  input  wire       clk,
  input  wire       rst,
  input  wire [7:0] s_axis_tdata,
  input  wire       s_axis_tvalid,
  output wire       s_axis_tready,
  input  wire       s_axis_tlast,
  output wire [7:0] m_axis_tdata,
  output wire       m_axis_tvalid,
  input  wire       m_axis_tready,
  output wire       m_axis_tlast,
  output wire [7:0] word0
`ifdef EXTRA
  , output wire extra_flag
  );
  assign extra_flag = 1'b1;
`else
  );
`endif
  reg [7:0] rom [0:15];
  initial $readmemh(MEMFILE, rom);
`ifdef EXTRA
  localparam [7:0] FLIP = 8'hFF;
`else
  localparam [7:0] FLIP = 8'h00;
`endif
  assign m_axis_tdata = rom[s_axis_tdata[3:0]] ^ FLIP;
  assign word0 = rom[0] ^ FLIP;
  assign m_axis_tvalid = s_axis_tvalid;
  assign s_axis_tready = m_axis_tready;
  assign m_axis_tlast = s_axis_tlast;
endmodule
"""

CORE = """\
CAPI=2:
name: user:design:NAME:0.1.0
filesets:
  rtl:
    files: [romq_top.v]
    file_type: verilogSource
  data:
    files: [data/table.hex: {copyto: table.hex}]
    file_type: user
parameters:
  MEMFILE: {datatype: str, default: table.hex, paramtype: vlogparam}
  EXTRA: {datatype: bool, paramtype: vlogdefine}
targets:
  default: &default
    filesets: [rtl, data]
    toplevel: romq_top
    parameters: [MEMFILE, EXTRA]
  sim:
    <<: *default
    flow: sim
    flow_options: {tool: verilator, mode: cc}
  synth:
    <<: *default
    flow: generic
    flow_options: {tool: yosys, arch: xilinx, output_format: json}
"""

MODEL = f'''\
import numpy as np

from kabe.verify import Stimulus

TABLE = np.array({TABLE}, dtype=np.uint8)


def stimulus(seed, size, context):
    data = np.random.default_rng(seed).integers(0, 256, size=200 if size is None else size, dtype=np.uint8)
    return Stimulus(inputs={{"s_axis": data}}, expected={{"m_axis": TABLE[data & 15]}}, status={{"word0": int(TABLE[0])}})
'''

TEST = f'''\
import cocotb
from cocotb.clock import Clock
from cocotb.triggers import RisingEdge, ReadOnly

TABLE = {TABLE}


@cocotb.test()
async def reads_the_table(dut):
    cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
    dut.rst.value = 1
    dut.m_axis_tready.value = 1
    dut.s_axis_tvalid.value = 0
    await RisingEdge(dut.clk)
    dut.rst.value = 0
    for i in range(16):
        dut.s_axis_tdata.value = i
        dut.s_axis_tvalid.value = 1
        await ReadOnly()
        assert int(dut.m_axis_tdata.value) == TABLE[i], (i, int(dut.m_axis_tdata.value))
        await RisingEdge(dut.clk)
    assert int(dut.word0.value) == TABLE[0]
    assert not hasattr(dut, "extra_flag")
'''


def _write(project: Path, name: str, verify: str) -> designs.Design:
    d = project / "cores" / name
    (d / "data").mkdir(parents=True, exist_ok=True)
    (d / "romq_top.v").write_text(TOP)
    (d / "data" / "table.hex").write_text("\n".join(f"{b:02x}" for b in TABLE) + "\n")
    (d / f"{name}.core").write_text(CORE.replace("NAME", name))
    (d / f"{name}.xdc").write_text(u.XDC)
    (d / "design.yaml").write_text(textwrap.dedent(f"""\
        core: user:design:{name}:0.1.0
        constraints: {name}.xdc
        verify: {verify}
        streams:
          in: {{s_axis: 8}}
          out: {{m_axis: 8}}
          status: {{word0: 8}}
        """))
    return designs.load(d / "design.yaml")


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(golden, "ROOT", tmp_path)
    return tmp_path


def test_kabe_harness_sees_the_design_as_edalize_describes_it(project):
    model = f"romq_model_{uuid.uuid4().hex[:8]}"
    (project / f"{model}.py").write_text(MODEL)
    d = _write(project, "romq", f'{{model: "{model}:stimulus"}}')
    r = runner.run_sim(DesignContext(designs.get(d)), SimAsk(300, seed=2, build_root=project / "build"))
    assert r["passed"], (r["problems"], r["first_mismatches"], r["warnings"])
    assert r["status"] == {"word0": TABLE[0]} and not r["warnings"]
    assert r["not_checked"] == []  # no extra_flag: EXTRA undefined


def test_cocotb_sees_the_same_design(project):
    """Before: -GMEMFILE=table.hex unquoted (Verilator: a decimal constant), and table.hex not where it ran."""
    c = _write(project, "romq_cocotb", '{cocotb: "test_romq"}')
    (project / "cores" / "romq_cocotb" / "test_romq.py").write_text(TEST)
    r = runner.run_sim(DesignContext(designs.get(c)), SimAsk(build_root=project / "build"))
    assert r["passed"] and r["tests"] == 1, (r["problems"], r.get("warnings"))


def test_yosys_sees_the_same_design(project):
    """Before: -DEXTRA in the Yosys script (extra_flag synthesized), and table.hex not where Yosys ran."""
    d = _write(project, "romq", '{none: "synthesis only"}')
    edam = cores.resolve(d, "synth", build_root=project / "build")
    out = project / "build" / "romq" / "open"
    synth = open_flow.synthesize(edam, out)
    script = synth.script.read_text()
    assert "-DEXTRA" not in script and '-set MEMFILE "table.hex"' in script
    netlist = json.loads(synth.netlist.read_text())
    assert "extra_flag" not in netlist["modules"]["romq_top"]["ports"]  # EXTRA undefined in synthesis too
    # Yosys stops at a $readmemh file it cannot open; it opened the copyto file where it runs
    assert (out / "table.hex").read_text() == (project / "cores" / "romq" / "data" / "table.hex").read_text()


def test_yosys_stops_at_a_readmemh_file_it_cannot_open(tmp_path):
    """What makes a finished synthesis above evidence that it read the table: Yosys does not carry on
    without the file (as Verilator does, with a warning)."""
    (tmp_path / "t.v").write_text('module t(input [3:0] a, output [7:0] y); reg [7:0] m [0:15]; '
                                  'initial $readmemh("gone.hex", m); assign y = m[a]; endmodule\n')
    with pytest.raises(open_flow.ToolError, match="gone.hex"):
        open_flow.run_yosys("read_verilog t.v\nhierarchy -top t\nproc\n", tmp_path)


def test_a_define_without_a_value_is_not_defined_for_yosys(tmp_path):
    """As edalize and kabe's simulations: `-DRISCV_FORMAL` for a valueless vlogdefine synthesized 21 rvfi
    ports into serv that no simulation had."""
    from kabe.flows import yosys_script as ys

    text = ys.render(ys.ScriptInputs("t", (tmp_path / "t.v",), defines={"RISCV_FORMAL": None, "W": 4, "ON": True}),
                     tmp_path)
    assert "-DRISCV_FORMAL" not in text and "-DW=4" in text and "-DON=1" in text


def test_logic_only_yosys_builds_is_simulated_too(project):
    """Issue 36: `ifdef YOSYS (which Yosys defines and Verilator does not) is simulated as the SYNTHESIS double
    run does: the open flow's second run defines YOSYS too, so the branch Yosys builds is compared."""
    import io

    from rich.console import Console

    from kabe import build
    from kabe.project import cores
    from kabe.base import provenance
    from kabe.flows import base
    from .test_design_files_and_checks import ASRT_TOP, write_asrt

    d = write_asrt(project)
    (d.yaml_file.parent / "asrt_top.sv").write_text(ASRT_TOP.replace(
        "m_axis_tdata <= s_axis_tdata;",
        "\n`ifdef YOSYS\n      m_axis_tdata <= s_axis_tdata + 8'd1;\n`else\n      m_axis_tdata <= s_axis_tdata;\n`endif\n"))
    first = runner.run_sim(DesignContext(designs.get(d)), SimAsk(50, build_root=project / "build"))
    assert first["passed"], first["problems"]
    assert base.synthesis_defines(open_flow) == {"SYNTHESIS": 1, "YOSYS": 1}
    ctx = DesignContext(d, provenance.Commit("nogit", False), Console(file=io.StringIO()), sim=cores.resolve(d, "sim"))
    r = build._synthesis_view(ctx, 50, first, base.synthesis_defines(open_flow))
    assert not r["passed"] and r["synthesis_view"]["mismatches"] == 50, r["synthesis_view"]
    assert r["synthesis_view"]["defines"] == {"SYNTHESIS": 1, "YOSYS": 1}
