"""VHDL designs for the GHDL tests (issue 38 item 6), written here, in temporary projects: a VHDL top
whose stage lives in a library of its own (FuseSoC logical_name), a Verilog top instantiating that
VHDL entity, and a VHDL counter checked by a cocotb testbench on GHDL."""

from __future__ import annotations

import textwrap
from pathlib import Path

# One AXI-Stream stage: y = ((x * K + 7) mod 2^16) xor 0x5A5A, a register with a skid-free handshake
# (ready while the output register is empty or taken). K is a generic the core sets.
STAGE_VHD = """\
library ieee;
use ieee.std_logic_1164.all;
use ieee.numeric_std.all;

entity vadd_stage is
  generic (K : natural := 3);
  port (clk, rst : in std_logic;
        x  : in  std_logic_vector(15 downto 0); xv : in std_logic; xr : out std_logic; xl : in std_logic;
        y  : out std_logic_vector(15 downto 0); yv : out std_logic; yr : in std_logic; yl : out std_logic);
end entity;

architecture rtl of vadd_stage is
  signal yv_q : std_logic;
begin
  xr <= (not yv_q) or yr;
  yv <= yv_q;
  process (clk) begin
    if rising_edge(clk) then
      if rst = '1' then
        yv_q <= '0';
      elsif yv_q = '0' or yr = '1' then
        yv_q <= xv;
        if xv = '1' then
          y  <= std_logic_vector(resize(unsigned(x) * K + 7, 16) xor x"5A5A");
          yl <= xl;
        end if;
      end if;
    end if;
  end process;
end architecture;
"""

TOP_VHD = """\
library ieee;
use ieee.std_logic_1164.all;
library vlib;

entity vadd_top is
  generic (K : natural := 3);
  port (clk, rst : in std_logic;
        s_axis_tdata : in  std_logic_vector(15 downto 0); s_axis_tvalid : in  std_logic;
        s_axis_tready : out std_logic; s_axis_tlast : in std_logic;
        m_axis_tdata : out std_logic_vector(15 downto 0); m_axis_tvalid : out std_logic;
        m_axis_tready : in  std_logic; m_axis_tlast : out std_logic);
end entity;

architecture rtl of vadd_top is
begin
  u_stage : entity vlib.vadd_stage
    generic map (K => K)
    port map (clk => clk, rst => rst, x => s_axis_tdata, xv => s_axis_tvalid, xr => s_axis_tready,
              xl => s_axis_tlast, y => m_axis_tdata, yv => m_axis_tvalid, yr => m_axis_tready, yl => m_axis_tlast);
end architecture;
"""

# The same stage under a Verilog top (mixed): the entity at its default K (3), as GHDL synthesizes it.
MIX_TOP_V = """\
module mix_top (
  input  wire        clk,
  input  wire        rst,
  input  wire [15:0] s_axis_tdata,
  input  wire        s_axis_tvalid,
  output wire        s_axis_tready,
  input  wire        s_axis_tlast,
  output wire [15:0] m_axis_tdata,
  output wire        m_axis_tvalid,
  input  wire        m_axis_tready,
  output wire        m_axis_tlast
);
  vadd_stage u_stage (.clk(clk), .rst(rst), .x(s_axis_tdata), .xv(s_axis_tvalid), .xr(s_axis_tready),
                      .xl(s_axis_tlast), .y(m_axis_tdata), .yv(m_axis_tvalid), .yr(m_axis_tready), .yl(m_axis_tlast));
endmodule
"""

MODEL = '''\
"""The golden model of the VHDL stage: ((x * K + 7) mod 2^16) xor 0x5A5A on every 16-bit beat."""
import numpy as np

from kabe.verify import Stimulus

K = {k}


def stimulus(seed, size, context):
    n = 2000 if size is None else size
    x = np.random.default_rng(seed).integers(0, 2**16, size=n, dtype=np.uint64)
    y = ((x * K + 7) & 0xFFFF) ^ 0x5A5A
    return Stimulus(inputs={{"s_axis": x.astype(np.uint16)}}, expected={{"m_axis": y.astype(np.uint16)}})
'''

XDC = "create_clock -period 10.000 -name clk [get_ports clk]\n"


def _core(vlnv: str, top: str, filesets: str, fileset_names: list[str], parameters: str = "", param_names=()) -> str:
    params = f"    parameters: [{', '.join(param_names)}]\n" if param_names else ""
    targets = ("targets:\n  default: &default\n"
               f"    filesets: [{', '.join(fileset_names)}]\n    toplevel: {top}\n{params}"
               "  sim:\n    <<: *default\n    flow: sim\n    flow_options:\n      tool: verilator\n"
               "  synth:\n    <<: *default\n    flow: generic\n    flow_options:\n      tool: yosys\n"
               "      arch: xilinx\n      output_format: json\n")
    return f"CAPI=2:\nname: {vlnv}\nfilesets:\n{textwrap.indent(filesets, '  ')}\n{parameters}{targets}"


def write_vadd(project: Path, name: str = "vadd", k: int = 5, model_module: str = "vadd_model") -> Path:
    """A VHDL top (vadd_top) with its stage in library vlib, K set by the core (a generic); returns design.yaml."""
    d = project / "cores" / name
    d.mkdir(parents=True, exist_ok=True)
    (d / "vadd_stage.vhd").write_text(STAGE_VHD)
    (d / "vadd_top.vhd").write_text(TOP_VHD)
    filesets = textwrap.dedent("""\
        lib:
          files: [vadd_stage.vhd]
          file_type: vhdlSource-2008
          logical_name: vlib
        rtl:
          files: [vadd_top.vhd]
          file_type: vhdlSource-2008""")
    parameters = f"parameters:\n  K: {{datatype: int, paramtype: generic, default: {k}}}\n"
    (d / f"{name}.core").write_text(_core(f"user:design:{name}:0.1.0", "vadd_top", filesets, ["lib", "rtl"],
                                          parameters, ["K"]))
    (d / "design.yaml").write_text(f"core: user:design:{name}:0.1.0\nconstraints: {name}.xdc\n"
                                   f"verify: {{model: \"{model_module}:stimulus\"}}\n"
                                   f"streams:\n  in: {{s_axis: 16}}\n  out: {{m_axis: 16}}\n")
    (d / f"{name}.xdc").write_text(XDC)
    (project / f"{model_module}.py").write_text(MODEL.format(k=k))
    return d / "design.yaml"


def write_mix(project: Path, name: str = "mix", model_module: str = "mix_model") -> Path:
    """A Verilog top instantiating the VHDL entity (work library, default K = 3)."""
    d = project / "cores" / name
    d.mkdir(parents=True, exist_ok=True)
    (d / "vadd_stage.vhd").write_text(STAGE_VHD)
    (d / "mix_top.v").write_text(MIX_TOP_V)
    filesets = textwrap.dedent("""\
        vhdl:
          files: [vadd_stage.vhd]
          file_type: vhdlSource-2008
        rtl:
          files: [mix_top.v]
          file_type: verilogSource""")
    (d / f"{name}.core").write_text(_core(f"user:design:{name}:0.1.0", "mix_top", filesets, ["vhdl", "rtl"]))
    (d / "design.yaml").write_text(f"core: user:design:{name}:0.1.0\nconstraints: {name}.xdc\n"
                                   f"verify: {{model: \"{model_module}:stimulus\"}}\n"
                                   f"streams:\n  in: {{s_axis: 16}}\n  out: {{m_axis: 16}}\n")
    (d / f"{name}.xdc").write_text(XDC)
    (project / f"{model_module}.py").write_text(MODEL.format(k=3))
    return d / "design.yaml"


COUNTER_VHD = """\
library ieee;
use ieee.std_logic_1164.all;
use ieee.numeric_std.all;

entity vcount is
  port (clk, rst, en : in std_logic; count : out std_logic_vector(7 downto 0));
end entity;

architecture rtl of vcount is
  signal q : unsigned(7 downto 0);
begin
  count <= std_logic_vector(q);
  process (clk) begin
    if rising_edge(clk) then
      if rst = '1' then q <= (others => '0');
      elsif en = '1' then q <= q + {step};
      end if;
    end if;
  end process;
end architecture;
"""

COUNTER_TEST = '''\
import random

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ReadOnly, RisingEdge


@cocotb.test()
async def counts_enabled_cycles(dut):
    cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
    dut.rst.value = 1
    dut.en.value = 0
    for _ in range(2):
        await RisingEdge(dut.clk)
    dut.rst.value = 0
    want = 0
    for _ in range(300):
        e = random.randrange(2)
        dut.en.value = e
        await RisingEdge(dut.clk)
        want = (want + e) & 0xFF
    dut.en.value = 0
    await RisingEdge(dut.clk)
    await ReadOnly()
    assert int(dut.count.value) == want, (int(dut.count.value), want)
'''


def write_vcount(project: Path, name: str = "vcount", step: int = 1, test_module: str = "test_vcount") -> Path:
    d = project / "cores" / name
    d.mkdir(parents=True, exist_ok=True)
    (d / "vcount.vhd").write_text(COUNTER_VHD.format(step=step))
    filesets = "rtl:\n  files: [vcount.vhd]\n  file_type: vhdlSource-2008"
    (d / f"{name}.core").write_text(_core(f"user:design:{name}:0.1.0", "vcount", filesets, ["rtl"]))
    (d / "design.yaml").write_text(f"core: user:design:{name}:0.1.0\nconstraints: {name}.xdc\n"
                                   f"verify: {{cocotb: \"{test_module}\"}}\n")
    (d / f"{name}.xdc").write_text(XDC)
    (d / f"{test_module}.py").write_text(COUNTER_TEST)
    return d / "design.yaml"
