"""Designs that are not kabe's, written here for the verify tests (issue 23): each one a folder with
its RTL, a FuseSoC core file and a design.yaml, in a temporary project, never in cores/."""

from __future__ import annotations

import textwrap
from pathlib import Path

# Two independent AXI-Stream channels, neither on kabe's contract: s_axis (32 bits) packed four to
# a 128-bit m_axis beat (Verilator: a VlWide<4> output), and s_wide_axis (128 bits, a VlWide input)
# unpacked into four 32-bit m_narrow_axis beats, with backpressure (tready low while it unpacks).
# beats_seen counts s_axis beats (a status output the model predicts).
WIDTH_TOP = """\
module width_top (
  input  wire         clk,
  input  wire         rst,
  input  wire [31:0]  s_axis_tdata,
  input  wire         s_axis_tvalid,
  output wire         s_axis_tready,
  input  wire         s_axis_tlast,
  output reg  [127:0] m_axis_tdata,
  output reg          m_axis_tvalid,
  input  wire         m_axis_tready,
  output reg          m_axis_tlast,
  input  wire [127:0] s_wide_axis_tdata,
  input  wire         s_wide_axis_tvalid,
  output wire         s_wide_axis_tready,
  input  wire         s_wide_axis_tlast,
  output wire [31:0]  m_narrow_axis_tdata,
  output wire         m_narrow_axis_tvalid,
  input  wire         m_narrow_axis_tready,
  output wire         m_narrow_axis_tlast,
  output reg  [31:0]  beats_seen
);
  reg [1:0] cnt;
  reg [95:0] acc;
  assign s_axis_tready = 1'b1;
  always @(posedge clk) begin
    if (rst) begin
      cnt <= 0; m_axis_tvalid <= 0; m_axis_tlast <= 0; beats_seen <= 0;
    end else begin
      m_axis_tvalid <= 0;
      if (s_axis_tvalid) begin
        beats_seen <= beats_seen + 1;
        case (cnt)
          2'd0: acc[31:0] <= s_axis_tdata;
          2'd1: acc[63:32] <= s_axis_tdata;
          2'd2: acc[95:64] <= s_axis_tdata;
          default: begin
            m_axis_tdata <= {s_axis_tdata, acc};
            m_axis_tvalid <= 1;
            m_axis_tlast <= s_axis_tlast;
          end
        endcase
        cnt <= cnt + 1;
      end
    end
  end

  reg [127:0] buffer;
  reg [2:0] left;
  reg last_in;
  assign s_wide_axis_tready = left == 0;
  assign m_narrow_axis_tvalid = left != 0;
  assign m_narrow_axis_tdata = buffer[31:0];
  assign m_narrow_axis_tlast = last_in && left == 1;
  always @(posedge clk) begin
    if (rst) begin
      left <= 0; last_in <= 0;
    end else if (left == 0) begin
      if (s_wide_axis_tvalid) begin
        buffer <= s_wide_axis_tdata; left <= 4; last_in <= s_wide_axis_tlast;
      end
    end else if (m_narrow_axis_tready) begin
      buffer <= buffer >> 32; left <= left - 1;
    end
  end
endmodule
"""

WIDTH_MODEL = '''\
"""The golden model of width_top, written from its description, through kabe's golden-model API."""
import numpy as np

from kabe.verify import Stimulus


def stimulus(seed, size, context):
    """size: 128-bit beats on each channel (default 100,000)."""
    n = 100_000 if size is None else size
    rng = np.random.default_rng(seed)
    words = rng.integers(0, 2**32, size=4 * n, dtype=np.uint32)   # s_axis: 4 n 32-bit beats
    wide = rng.integers(0, 256, size=(n, 16), dtype=np.uint8)      # s_wide_axis: n 128-bit beats
    return Stimulus(
        inputs={"s_axis": words, "s_wide_axis": wide},
        expected={"m_axis": words.view(np.uint8).reshape(n, 16),   # four words, the first lowest
                  "m_narrow_axis": wide.reshape(-1).view("<u4")},  # the low word first
        status={"beats_seen": 4 * n},
    )
'''

WIDTH_YAML = """\
core: user:design:width:0.1.0
constraints: width.xdc
verify: {model: "width_model:stimulus"}
streams:
  in: {s_axis: 32, s_wide_axis: 128}
  out: {m_axis: 128, m_narrow_axis: 32}
  status: {beats_seen: 32}
  traffic: {valid: 0.8, ready: 1.0}  # its packer never waits for m_axis_tready: an always-ready sink
"""


def core_file(name: str, vlnv: str, top: str, files: list[str]) -> str:
    return textwrap.dedent(f"""\
        CAPI=2:
        name: {vlnv}
        filesets:
          rtl:
            files: [{", ".join(files)}]
            file_type: verilogSource
        targets:
          default: &default
            filesets: [rtl]
            toplevel: {top}
          sim:
            <<: *default
            flow: sim
            flow_options:
              tool: verilator
              mode: cc
          synth:
            <<: *default
            flow: generic
            flow_options:
              tool: yosys
              arch: xilinx
              output_format: json
              yosys_synth_options: [-family, xc7]
        """)


_KABE_TREE = Path(__import__("kabe").__file__).resolve().parent.parent

XDC = "create_clock -period 7.000 -name clk_fpga_0 [get_ports clk]\n"


def write_width(project: Path, top: str = WIDTH_TOP, model: str = WIDTH_MODEL, yaml_text: str = WIDTH_YAML) -> Path:
    """<project>/cores/width/ and the model at <project>/width_model.py; returns design.yaml."""
    d = project / "cores" / "width"
    d.mkdir(parents=True, exist_ok=True)
    (d / "width_top.v").write_text(top)
    (d / "width.core").write_text(core_file("width", "user:design:width:0.1.0", "width_top", ["width_top.v"]))
    (d / "design.yaml").write_text(yaml_text)
    (d / "width.xdc").write_text(XDC)
    (project / "width_model.py").write_text(model)
    return d / "design.yaml"


# A cocotb testbench design: an 8-bit accumulator; the testbench drives it and checks the sums.
ACC_TOP = """\
module acc_top (
  input  wire        clk,
  input  wire        rst,
  input  wire [7:0]  din,
  input  wire        din_valid,
  output reg  [15:0] sum
);
  always @(posedge clk) begin
    if (rst) sum <= 0;
    else if (din_valid) sum <= sum + din;
  end
endmodule
"""

ACC_TEST = '''\
import random

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import RisingEdge, ReadOnly


@cocotb.test()
async def sums_bytes(dut):
    cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
    dut.rst.value = 1
    dut.din_valid.value = 0
    dut.din.value = 0
    for _ in range(3):
        await RisingEdge(dut.clk)
    dut.rst.value = 0
    total = 0
    for _ in range(200):
        b = random.randrange(256)
        dut.din.value = b
        dut.din_valid.value = 1
        await RisingEdge(dut.clk)
        total = (total + b) & 0xFFFF
    dut.din_valid.value = 0
    await RisingEdge(dut.clk)
    await ReadOnly()
    assert int(dut.sum.value) == total, (int(dut.sum.value), total)


@cocotb.test()
async def resets_to_zero(dut):
    cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
    dut.rst.value = 1
    dut.din_valid.value = 0
    await RisingEdge(dut.clk)
    await RisingEdge(dut.clk)
    await ReadOnly()
    assert int(dut.sum.value) == 0
'''


def write_acc(project: Path, test: str = ACC_TEST) -> Path:
    d = project / "cores" / "acc"
    d.mkdir(parents=True, exist_ok=True)
    (d / "acc_top.v").write_text(ACC_TOP)
    (d / "acc.core").write_text(core_file("acc", "user:design:acc:0.1.0", "acc_top", ["acc_top.v"]))
    (d / "design.yaml").write_text('core: user:design:acc:0.1.0\nverify: {cocotb: "test_acc"}\nconstraints: acc.xdc\n')
    (d / "acc.xdc").write_text(XDC)
    (d / "test_acc.py").write_text(test)
    return d / "design.yaml"


# A design nobody simulates here: `verify: {none: ...}`.
COUNTER_TOP = """\
module counter_top (input wire clk, input wire rst, output reg [15:0] count);
  always @(posedge clk) count <= rst ? 16'd0 : count + 16'd1;
endmodule
"""
NONE_REASON = "a free-running counter; its testbench lives upstream"


def write_counter(project: Path) -> Path:
    d = project / "cores" / "counter"
    d.mkdir(parents=True, exist_ok=True)
    (d / "counter_top.v").write_text(COUNTER_TOP)
    (d / "counter.core").write_text(core_file("counter", "user:design:counter:0.1.0", "counter_top",
                                              ["counter_top.v"]))
    (d / "design.yaml").write_text(f'core: user:design:counter:0.1.0\nverify: {{none: "{NONE_REASON}"}}\n'
                                   f"constraints: counter.xdc\n")
    (d / "counter.xdc").write_text(XDC)
    return d / "design.yaml"


def kabe_sim_width(project: Path, env: dict | None = None):
    """`kabe sim width --rows 8` run as a user runs it, in a project of the width design (written
    here, with a bare [tool.kabe]); the finished process."""
    import os
    import shutil
    import subprocess
    import sys

    write_width(project)
    (project / "pyproject.toml").write_text('[project]\nname = "p"\nversion = "0"\n\n[tool.kabe]\ndefault_board = "pynq-z1"\n')
    kabe = shutil.which("kabe", path=str(Path(sys.executable).parent))
    return subprocess.run([kabe, "sim", "width", "--rows", "8"], cwd=project, capture_output=True, text=True,
                          # the kabe under test (this tree), whichever checkout the venv's kabe was installed from
                          env={**os.environ, "PYTHONPATH": os.pathsep.join([str(project), str(_KABE_TREE)]),
                               **(env or {})}, timeout=600)
