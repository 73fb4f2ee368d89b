"""A design with two clock domains and ports not named clk/rst (issue 38): an asynchronous FIFO written
here (s_clk/s_rst_n in, m_clk/m_rst out, Gray-coded pointers through two-flop synchronizers) is driven by
kabe's harness with both clocks at the XDC's periods (10 ns and 7 ns), each stream on its own clock and
each reset at its own level, and checked against a model (every beat out as it went in). Real Verilator."""

from __future__ import annotations

from kabe.project.design_context import DesignContext
from kabe.sim.ask import SimAsk
import json
import textwrap
from pathlib import Path

import pytest

from kabe.project import designs
from kabe.sim import clocking, golden, runner

pytestmark = pytest.mark.e2e  # end to end: real tools, minutes (the fast tier leaves it out: -m 'not e2e')

AFIFO = """\
module afifo #(parameter W = 16, parameter A = 4) (
  input  wire         s_clk,
  input  wire         s_rst_n,
  input  wire [W-1:0] s_axis_tdata,
  input  wire         s_axis_tvalid,
  output wire         s_axis_tready,
  input  wire         s_axis_tlast,
  input  wire         m_clk,
  input  wire         m_rst,
  output wire [W-1:0] m_axis_tdata,
  output wire         m_axis_tvalid,
  input  wire         m_axis_tready,
  output wire         m_axis_tlast
);
  reg [W:0] mem [0:(1<<A)-1];
  reg [A:0] wbin, wgray, rbin, rgray, rgray_s1, rgray_s2, wgray_s1, wgray_s2;
  wire [A:0] wbin_next = wbin + 1'b1;
  wire [A:0] rbin_next = rbin + 1'b1;
  wire full = wgray == {~rgray_s2[A:A-1], rgray_s2[A-2:0]};
  wire empty = rgray == wgray_s2;
  assign s_axis_tready = !full;
  assign m_axis_tvalid = !empty;
  assign {m_axis_tlast, m_axis_tdata} = mem[rbin[A-1:0]];
  always @(posedge s_clk) begin
    if (!s_rst_n) begin
      wbin <= 0; wgray <= 0; rgray_s1 <= 0; rgray_s2 <= 0;
    end else begin
      rgray_s1 <= rgray; rgray_s2 <= rgray_s1;
      if (s_axis_tvalid && !full) begin
        mem[wbin[A-1:0]] <= {s_axis_tlast, s_axis_tdata};
        wbin <= wbin_next; wgray <= wbin_next ^ (wbin_next >> 1);
      end
    end
  end
  always @(posedge m_clk) begin
    if (m_rst) begin
      rbin <= 0; rgray <= 0; wgray_s1 <= 0; wgray_s2 <= 0;
    end else begin
      wgray_s1 <= wgray; wgray_s2 <= wgray_s1;
      if (m_axis_tvalid && m_axis_tready) begin
        rbin <= rbin_next; rgray <= rbin_next ^ (rbin_next >> 1);
      end
    end
  end
endmodule
"""

MODEL = '''\
import numpy as np

from kabe.verify import Stimulus


def stimulus(seed, size, context):
    x = np.random.default_rng(seed).integers(0, 2**16, size=3000 if size is None else size, dtype=np.uint16)
    return Stimulus(inputs={"s_axis": x}, expected={"m_axis": x.copy()})
'''

XDC = """\
create_clock -period 10.000 -name s_clk [get_ports s_clk]
create_clock -period 7.000 -name m_clk [get_ports m_clk]
set_clock_groups -asynchronous -group [get_clocks s_clk] -group [get_clocks m_clk]
"""

CORE = """\
CAPI=2:
name: user:design:{name}:0.1.0
filesets:
  rtl: {{files: [afifo.v], file_type: verilogSource}}
targets:
  default: &default
    filesets: [rtl]
    toplevel: afifo
  sim:
    <<: *default
    flow: sim
    flow_options: {{tool: verilator}}
  synth:
    <<: *default
    flow: generic
    flow_options: {{tool: yosys, arch: xilinx, output_format: json}}
"""


def _write(project: Path, name: str, model_module: str, extra: str = "") -> designs.Design:
    d = project / "cores" / name
    d.mkdir(parents=True, exist_ok=True)
    (d / "afifo.v").write_text(AFIFO)
    (d / f"{name}.core").write_text(CORE.format(name=name))
    (d / f"{name}.xdc").write_text(XDC)
    (d / "design.yaml").write_text(f"core: user:design:{name}:0.1.0\nconstraints: {name}.xdc\n"
                                   f"verify: {{model: \"{model_module}:stimulus\"}}\n"
                                   f"streams:\n  in: {{s_axis: 16}}\n  out: {{m_axis: 16}}\n{extra}")
    (project / f"{model_module}.py").write_text(MODEL)
    return designs.load(d / "design.yaml")


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(golden, "ROOT", tmp_path)
    return tmp_path


def _summary(project: Path, name: str) -> dict:
    (found,) = (project / "build" / "sim" / name / "runs").glob("seed*/summary.json")
    return json.loads(found.read_text())


def test_an_async_fifo_runs_on_both_clocks_at_their_periods_and_matches_its_model(project):
    d = _write(project, "afifo2", "afifo_model_a", "  traffic: off\n")
    r = runner.run_sim(DesignContext(designs.get(d)), SimAsk(4000, seed=2, build_root=project / "build", keep_files=True))
    assert r["passed"] and r["words_checked"] == 4000, (r["problems"], r["first_mismatches"])
    assert r["clocking"] == {"clocks": {"s_clk": 10.0, "m_clk": 7.0}, "resets": {"s_rst_n": "low", "m_rst": "high"},
                             "stream_clock": {"s_axis": "s_clk", "m_axis": "m_clk"}}
    assert "s_rst_n" not in r["held"] and "m_clk" not in r["held"]
    s = _summary(project, "afifo2")
    (i,), (o,) = s["inputs"], s["outputs"]
    # the input side runs on s_clk (10 ns) and fills the FIFO, the output drains on m_clk (7 ns): the same
    # 4,000 beats span 10/7 as many m_clk cycles as s_clk cycles
    ratio = (o["last_out_cycle"] - o["first_out_cycle"] + 1) / (i["last_accept_cycle"] - i["first_accept_cycle"] + 1)
    assert ratio == pytest.approx(10 / 7, rel=0.02), ratio


def test_with_backpressure_and_gaps_the_fifo_still_matches(project):
    """The output drains at half of m_clk's cycles (0.07 beats/ns), the input offers one per s_clk cycle (0.1):
    the FIFO fills, its full path (tready low) is used, and every beat still comes out right."""
    d = _write(project, "afifo3", "afifo_model_b", "  traffic: {valid: 1.0, ready: 0.5}\n")
    r = runner.run_sim(DesignContext(designs.get(d)), SimAsk(4000, seed=5, build_root=project / "build"))
    assert r["passed"] and r["traffic"] == {"valid": 1.0, "ready": 0.5}, r["problems"]
    assert r["stall_cycles"]["m_axis"] > 0 and r["per_port"][0]["tready_low_cycles"] > 0  # it filled up


def test_streams_on_the_wrong_clocks_fail(project):
    """The same FIFO with design.yaml saying each stream runs on the other clock: beats are offered on one
    clock and taken on the other, and the model catches it (the clocks the harness drives matter)."""
    d = _write(project, "afifo4", "afifo_model_c", "  traffic: off\n  clocks: {s_axis: m_clk, m_axis: s_clk}\n")
    r = runner.run_sim(DesignContext(designs.get(d)), SimAsk(2000, seed=2, build_root=project / "build"))
    assert not r["passed"] and (r["mismatches"] or r["problems"])


def _design(streams: dict, xdc: str, tmp_path: Path):
    from types import SimpleNamespace

    from kabe.project.designs import Streams

    x = tmp_path / "d.xdc"
    x.write_text(xdc)
    s = Streams(streams.get("in", {}), streams.get("out", {}), {}, clocks=streams.get("clocks", {}),
                resets=streams.get("resets", {}))
    return SimpleNamespace(streams=s, constraints=x)


def test_clocks_and_resets_are_found_from_the_xdc_and_the_names(tmp_path):
    found = {p: ("input", 1) for p in ("aclk", "aresetn", "rst_ni", "soft_reset", "first", "s_axis_tvalid",
                                       "s_axis_tlast", "m_axis_tready")}
    found.update({"s_axis_tdata": ("input", 8), "m_axis_tdata": ("output", 8)})
    d = _design({"in": {"s_axis": 8}, "out": {"m_axis": 8}}, "create_clock -period 4 [get_ports aclk]\n", tmp_path)
    c, problems = clocking.resolve(d, found)
    assert problems == [] and c.clocks == {"aclk": 4.0}
    assert c.resets == {"aresetn": 0, "rst_ni": 0, "soft_reset": 1}  # `first` holds "rst" but is no reset
    assert c.stream_clock == {"s_axis": "aclk", "m_axis": "aclk"} and not c.default
    # design.yaml's resets replace the names' guess
    d = _design({"in": {"s_axis": 8}, "out": {"m_axis": 8}, "resets": {"soft_reset": 0}},
                "create_clock -period 4 [get_ports aclk]\n", tmp_path)
    assert clocking.resolve(d, found)[0].resets == {"soft_reset": 0}


def test_a_stream_no_rule_places_and_an_unconstrained_second_clock_are_said(tmp_path):
    found = {p: ("input", 1) for p in ("clk_a", "clk_b", "rst")}
    d = _design({"in": {"in_axis": 8}, "out": {"out_axis": 8}, "clocks": {"out_axis": "clk_b"}},
                "create_clock -period 5 [get_ports clk_a]\n", tmp_path)
    c, problems = clocking.resolve(d, found)
    assert c.clocks == {"clk_a": 5.0, "clk_b": None}
    assert problems == [
        "clock clk_b has no create_clock in d.xdc, so the harness does not know its period beside the other clocks: "
        "add `create_clock -period <ns> [get_ports clk_b]`",
        "stream in_axis: the top has clocks clk_a, clk_b and kabe cannot tell which one it runs on; say it in "
        "design.yaml (streams: clocks: {in_axis: <clock port>})"]


def test_kabe_s_own_contract_is_the_default_clocking(tmp_path):
    found = {"clk": ("input", 1), "rst": ("input", 1)}
    d = _design({"in": {"s0_axis": 64}, "out": {"m0_axis": 64}}, "create_clock -period 7 [get_ports clk]\n", tmp_path)
    c, problems = clocking.resolve(d, found)
    assert problems == [] and c.default and c.half_ps("clk") == 1
