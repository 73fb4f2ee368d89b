"""No clock, no pass (issue 23): a create_clock whose object the netlist lacks creates no clock, as in
Vivado, and the estimate fails naming it; it is never guessed onto the registers' clock. Hand-built
netlists (tests/timing/test_estimator.py's builder); tests/flows/test_clock_not_found.py does the
same with a real Yosys netlist."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from test_estimator import M, lut_chain  # noqa: E402

from kabe.project.constraints import parse_xdc_text  # noqa: E402
from kabe.flows.base import unreadable_timing  # noqa: E402
from kabe.rules.gate import evaluate  # noqa: E402
from kabe.parsers import ReportError, kabe_timing  # noqa: E402
from kabe.timing import estimate  # noqa: E402

UTIL = {"lut": 1, "ff": 2, "dsp": 0, "bram36_equiv": 0}


def clocks(text: str):
    return parse_xdc_text(text, "t.xdc")


def renamed_clock(name: str) -> dict:
    """lut_chain(3) whose clock input port is called `name` (bit 2 is the clock net)."""
    net = lut_chain(3)
    top = net["modules"]["top"]
    top["ports"] = {name: top["ports"].pop("clk")}
    return net


def reread(report: Path) -> dict:
    """What anyone re-reading the archived report (kabe gate, a verdict recomputed) gets."""
    try:
        return kabe_timing.parse(report)
    except ReportError as e:
        return unreadable_timing(str(e), estimated=True)


def test_port_not_in_the_top_fails_naming_it(tmp_path):
    rpt = tmp_path / "t.rpt"
    rec, res = estimate(renamed_clock("clk_i"), clocks("create_clock -period 7 -name clk_fpga_0 [get_ports clk]"),
                        M, report=rpt)
    assert rec["error"].startswith("no clock constrained: port clk not found in top top (")
    assert "t.xdc:1" in rec["error"] and "clocked from port clk_i" in rec["error"]
    assert res.endpoints == [] and rec["wns_ns"] is None
    v = evaluate(rec, UTIL)
    assert not v.passed and v.failures == [f"timing gate: {rec['error']}"]
    # the archived report says so too, in a form no re-reading can pass
    assert "NOT-FOUND port clk not found in top top" in rpt.read_text()
    assert not evaluate(reread(rpt), UTIL).passed


def test_the_right_port_passes(tmp_path):
    rpt = tmp_path / "t.rpt"
    rec, _ = estimate(renamed_clock("clk_i"), clocks("create_clock -period 7 -name clk_fpga_0 [get_ports clk_i]"),
                      M, report=rpt)
    assert "error" not in rec and rec["total_endpoints"] == 1 and rec["wns_ns"] > 0
    assert evaluate(rec, UTIL).passed and evaluate(reread(rpt), UTIL).passed


def test_several_clocks_each_timed_or_each_named(tmp_path):
    net = renamed_clock("clk_a")
    rpt = tmp_path / "t.rpt"
    xdc = ("create_clock -period 7 -name a [get_ports clk_a]\n"
           "create_clock -period 5 -name b [get_ports clk_b]\n"
           "create_clock -period 4 -name c [get_ports clk_c]\n")
    rec, res = estimate(net, clocks(xdc), M, report=rpt)
    assert [c["name"] for c in res.clocks] == ["a"] and res.clocks[0]["total_endpoints"] == 1  # a is timed
    assert rec["error"].startswith("clock b, c not constrained (a timed): port clk_b not found in top top; "
                                   "port clk_c not found in top top")
    assert not evaluate(rec, UTIL).passed and not evaluate(reread(rpt), UTIL).passed
    text = rpt.read_text()
    assert "NOT-FOUND port clk_b" in text and "NOT-FOUND port clk_c" in text and "\na    " in text


def test_one_of_a_clocks_objects_missing_is_named():
    rec, _ = estimate(lut_chain(2), clocks("create_clock -period 7 -name k [get_ports {clk clk2}]"), M)
    assert rec["error"].startswith("clock targets missing: port clk2 not found in top top")


@pytest.mark.parametrize("xdc", [
    "create_clock -period 7 -name k [get_ports clk]",
    "create_clock -period 7 -name k [get_ports {clk[0]}]",
    "create_clock -period 7 -name k [get_ports cl?]",
    "create_clock -period 7 -name k [get_nets u_core/clk]",
    "create_clock -period 7 -name k [get_pins u_core/clk]",
    "create_clock -period 7 -name k [get_pins -hierarchical */clk]",
    "create_clock -period 7 -name k [get_pins bufg/O]",
])
def test_ports_nets_and_pins_that_exist_are_clocks(xdc):
    net = lut_chain(2)
    top = net["modules"]["top"]
    top["netnames"] = {"clk": {"bits": [2]}, "u_core.clk": {"bits": [2]}}
    top["cells"]["bufg"] = {"type": "BUFG", "parameters": {}, "port_directions": {"I": "input", "O": "output"},
                            "connections": {"I": [99], "O": [2]}}
    rec, _ = estimate(net, clocks(xdc), M)
    assert "error" not in rec and rec["total_endpoints"] == 1, rec


@pytest.mark.parametrize("xdc, named", [
    ("create_clock -period 7 -name k [get_nets u_core/clk]", "net u_core/clk"),
    ("create_clock -period 7 -name k [get_pins u_core/clk]", "pin u_core/clk"),
    ("create_clock -period 7 -name k [get_pins ps7/FCLKCLK[0]]", "pin ps7/FCLKCLK[0]"),  # a block-design pin
    ("create_clock -period 7 -name k [get_ports {clk[1]}]", "port clk[1]"),  # clk is one bit
    ("create_clock -period 7 -name k [get_ports c[l]k]", "port c[l]k"),  # brackets are literal, not a class
])
def test_objects_that_do_not_exist_are_named(xdc, named):
    rec, _ = estimate(lut_chain(2), clocks(xdc), M)
    assert rec["error"].startswith(f"no clock constrained: {named} not found in top top"), rec


def test_a_hidden_yosys_net_is_not_a_clock_object():
    net = lut_chain(2)
    net["modules"]["top"]["netnames"] = {"u_core.clk": {"bits": [2], "hide_name": 1}}
    rec, _ = estimate(net, clocks("create_clock -period 7 -name k [get_nets u_core/clk]"), M)
    assert rec["error"].startswith("no clock constrained: net u_core/clk not found")


def test_a_virtual_clock_is_no_missing_object():
    xdc = "create_clock -period 7 -name k [get_ports clk]\ncreate_clock -period 3 -name v\n"
    rec, res = estimate(lut_chain(2), clocks(xdc), M)
    assert "error" not in rec and [c["name"] for c in res.clocks] == ["k", "v"]


def two_domains():
    """lut_chain(2) on port clk plus one register on port clk2 (bit 3)."""
    net = lut_chain(2)
    top = net["modules"]["top"]
    top["ports"]["clk2"] = {"direction": "input", "bits": [3]}
    top["cells"]["ff_other"] = {"type": "FDRE", "parameters": {}, "connections": {
        "C": [3], "CE": ["1"], "R": ["0"], "D": [200], "Q": [201]},
        "port_directions": {"C": "input", "CE": "input", "R": "input", "D": "input", "Q": "output"}}
    return net


def test_registers_no_clock_reaches_fail_naming_their_clock(tmp_path):
    """Every clock domain is timed or named: a register on a port no create_clock names is never
    timed (Vivado's check_timing no_clock), so the estimate cannot pass on the other domain's WNS."""
    rpt = tmp_path / "t.rpt"
    rec, res = estimate(two_domains(), clocks("create_clock -period 7 -name a [get_ports clk]"), M, report=rpt)
    assert res.clocks[0]["total_endpoints"] == 1  # clk's own path is still timed (in the report)
    assert rec["error"] == ("no clock on 1 register clock pin(s), so they are never timed: clocked from port clk2, "
                            "which no create_clock reaches; constrain that clock in the XDC")
    assert not evaluate(rec, UTIL).passed and not evaluate(reread(rpt), UTIL).passed
    both = "create_clock -period 7 -name a [get_ports clk]\ncreate_clock -period 5 -name b [get_ports clk2]\n"
    rec, _ = estimate(two_domains(), clocks(both), M)
    assert "error" not in rec and [c["name"] for c in rec["clocks"]] == ["a", "b"]


def test_a_register_clocked_by_logic_names_the_cell():
    net = two_domains()
    top = net["modules"]["top"]
    del top["ports"]["clk2"]
    top["cells"]["div"] = {"type": "FDRE", "parameters": {}, "connections": {
        "C": [2], "CE": ["1"], "R": ["0"], "D": [300], "Q": [3]},
        "port_directions": {"C": "input", "CE": "input", "R": "input", "D": "input", "Q": "output"}}
    rec, _ = estimate(net, clocks("create_clock -period 7 -name a [get_ports clk]"), M)
    assert "clocked from div/Q, which no create_clock reaches" in rec["error"]
