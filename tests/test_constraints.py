"""kabe.constraints: create_clock parsing; no clock or a bad period is an error, never a default."""

import pytest

from kabe import constraints
from kabe.constraints import ConstraintError, parse_xdc_text


def test_board_xdc_has_the_engine_clock():
    (clk,) = constraints.clocks()
    assert clk.name == "clk_fpga_0"
    assert clk.target_kind == "ports" and clk.targets == ("clk",)
    assert clk.waveform_ns == (0.0, clk.period_ns / 2)
    assert abs(clk.frequency_mhz - 1000.0 / clk.period_ns) < 1e-9


def test_parse_variants():
    text = """
    # comment
    create_clock -name a -period 10.000 -waveform {0.000 5.000} [get_ports {sys_clk}]
    create_clock -period 4 \\
        [get_pins -hierarchical */PS7_i/FCLKCLK[1]] ; # trailing comment
    create_clock -name virt -period 8
    set_property PACKAGE_PIN H16 [get_ports clk]
    """
    a, b, v = parse_xdc_text(text)
    assert (a.name, a.period_ns, a.waveform_ns, a.targets) == ("a", 10.0, (0.0, 5.0), ("sys_clk",))
    assert (b.name, b.period_ns, b.target_kind) == ("*/PS7_i/FCLKCLK[1]", 4.0, "pins")
    assert (v.name, v.target_kind, v.targets) == ("virt", None, ())


def test_no_create_clock_is_an_error():
    with pytest.raises(ConstraintError, match="no clock constrained"):
        parse_xdc_text("set_property IOSTANDARD LVCMOS33 [get_ports clk]\n", "x.xdc")
    with pytest.raises(ConstraintError, match="no clock constrained"):
        parse_xdc_text("", "empty.xdc")


@pytest.mark.parametrize("line, msg", [
    ("create_clock -period seven [get_ports clk]", "not a number"),
    ("create_clock -period -7 [get_ports clk]", "must be positive"),
    ("create_clock -name c [get_ports clk]", "without -period"),
    ("create_clock -period 7 -waveform {0 9} [get_ports clk]", "does not fit"),
    ("create_clock -period 7 -name c -period", "no value"),
])
def test_bad_clocks(line, msg):
    with pytest.raises(ConstraintError, match=msg):
        parse_xdc_text(line, "bad.xdc")


def test_missing_file(tmp_path):
    with pytest.raises(ConstraintError, match="cannot read"):
        constraints.parse_xdc(tmp_path / "nope.xdc")
