"""Issue 38: `$display`/`$error`/`$finish` (in `initial` or not) are simulation-only: Yosys keeps them as
$print/$check cells, which must not fail the timing gate as untimed; a clock through BUFR (not dividing) or
BUFIO is carried to its registers as through BUFG; a dividing BUFR stays untimed and the gate's fix names
flow=vivado. Real Yosys, kabe's estimator."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from kabe.project import constraints
from kabe.flows import open as open_flow
from kabe.rules.gate import evaluate

pytestmark = pytest.mark.e2e  # end to end: real tools, minutes (the fast tier leaves it out: -m 'not e2e')

SIM_ONLY = """\
module t #(parameter W = 8) (input clk, input [W-1:0] a, output reg [W-1:0] y);
  initial begin
    $display("W=%0d", W);
    if (W > 16) $error("too wide");
    if (W < 1) $finish;
  end
  reg [W-1:0] r;
  always @(posedge clk) begin
    r <= a + 1;
    y <= r ^ a;
  end
endmodule
"""

BUFR = """\
module t (input clk, input [7:0] a, output reg [7:0] y);
  wire rclk;
  BUFR #(.BUFR_DIVIDE(@DIV@)) b (.I(clk), .O(rclk), .CE(1'b1), .CLR(1'b0));
  reg [7:0] r;
  always @(posedge rclk) begin
    r <= a + 1;
    y <= r ^ a;
  end
endmodule
"""


def _estimate(tmp_path: Path, verilog: str):
    (tmp_path / "t.v").write_text(verilog)
    (tmp_path / "t.xdc").write_text("create_clock -period 5.000 -name clk [get_ports clk]\n")
    edam = SimpleNamespace(toplevel="t", sources=(tmp_path / "t.v",), include_dirs=(), parameters={},
                           parameter_specs={}, tool_options={})
    synth = open_flow.synthesize(edam, tmp_path / "out")
    timing, _util, _ = open_flow.analyze(synth, constraints.clocks([tmp_path / "t.xdc"]), tmp_path / "out")
    return synth, timing


def test_display_error_and_finish_do_not_reach_the_timing_estimate(tmp_path):
    synth, timing = _estimate(tmp_path, SIM_ONLY)
    assert "$print" in synth.stat.read_text()  # Yosys keeps them as cells
    assert not timing.get("untimed_cells"), timing.get("untimed_cells")
    assert timing["wns_ns"] is not None and timing["wns_ns"] > 0


@pytest.mark.parametrize("divide, timed", [('"BYPASS"', True), ('"4"', False)])
def test_a_clock_through_bufr_is_carried_unless_it_divides(tmp_path, divide, timed):
    _synth, timing = _estimate(tmp_path, BUFR.replace("@DIV@", divide))
    if timed:
        assert not timing.get("untimed_cells") and timing["wns_ns"] is not None, timing
        assert timing.get("total_endpoints", 1) > 0
    else:
        assert timing.get("untimed_cells") == {"BUFR": 1}, timing.get("untimed_cells")
        verdict = evaluate(timing, {"lut": 1, "ff": 1, "dsp": 0, "bram36_equiv": 0})
        assert not verdict.passed and any("build with flow=vivado" in f for f in verdict.failures), verdict.failures
