"""kabe.project.constraints: create_clock parsing; no clock or a bad period is an error, never a default."""

import pytest

from kabe.project import constraints
from kabe.project.constraints import ConstraintError, parse_xdc_text


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


def test_tcl_forms_vivado_takes():
    """Valid Tcl that was misread (red team 3b): options after the object, two commands on one line
    joined by `;`, and a braced pin name with a bit index."""
    (c,) = parse_xdc_text("create_clock -name clk [get_ports clk] -period 2.000\n")
    assert (c.name, c.period_ns, c.targets) == ("clk", 2.0, ("clk",))
    (c,) = parse_xdc_text("set_property IOSTANDARD LVCMOS33 [get_ports clk]; create_clock -period 2 -name k [get_ports clk]\n")
    assert (c.name, c.period_ns, c.targets) == ("k", 2.0, ("clk",))
    (c,) = parse_xdc_text("create_clock -period 10 -name f [get_pins {ps7/FCLK_CLK[0]}] -waveform {0 5}\n")
    assert (c.targets, c.waveform_ns) == (("ps7/FCLK_CLK[0]",), (0.0, 5.0))


def test_a_query_kabe_cannot_evaluate_is_refused_not_read_as_names():
    with pytest.raises(ConstraintError, match=r"<xdc>:1: cannot evaluate get_ports -filter .* write \[get_ports <name>\]"):
        parse_xdc_text("create_clock -period 2 -name c [get_ports -filter {NAME == clk}]\n")


def test_a_later_clock_on_the_same_object_replaces_the_earlier_unless_added():
    """Vivado (UG835 create_clock -add): without -add the later clock replaces the earlier on that
    object; with -add both stay. The same name twice on one object is a redefinition, not a duplicate."""
    two = "create_clock -period 50 -name slow [get_ports clk]\ncreate_clock {}-period 2 -name fast [get_ports clk]\n"
    assert [c.name for c in parse_xdc_text(two.format(""))] == ["fast"]
    assert [(c.name, c.add) for c in parse_xdc_text(two.format("-add "))] == [("slow", False), ("fast", True)]
    again = "create_clock -period 10 -name c [get_ports clk]\ncreate_clock -period 8 -name c [get_ports clk]\n"
    assert [(c.name, c.period_ns) for c in parse_xdc_text(again)] == [("c", 8.0)]
    # a clock on two ports keeps the port the later clock did not take
    part = "create_clock -period 10 -name a [get_ports {x y}]\ncreate_clock -period 4 -name b [get_ports y]\n"
    assert [(c.name, c.targets) for c in parse_xdc_text(part)] == [("a", ("x",)), ("b", ("y",))]


def test_a_create_clock_inside_a_tcl_block_is_refused():
    """`if {0} { create_clock ... }` never runs, and kabe read it as a clock replacing the real one
    (red team 3b): a create_clock kabe cannot know runs is bad input, naming the line."""
    for text, line in (("create_clock -period 2 -name c [get_ports clk]\nif {0} {\n"
                        "create_clock -period 50 -name d [get_ports clk]\n}\n", 3),
                       ("if {1} { create_clock -period 5 -name a [get_ports clk] }\n", 1)):
        with pytest.raises(ConstraintError, match=rf"<xdc>:{line}: create_clock inside a Tcl block"):
            parse_xdc_text(text)
    # other commands in a block, and braces that close on their line, leave the top level readable
    text = ("if {0} {\n set_property IOSTANDARD LVCMOS33 [get_ports x]\n}\n"
            "create_clock -period 3 -name k [get_ports clk] -waveform {0 1.5}\n")
    assert [(c.name, c.period_ns) for c in parse_xdc_text(text)] == [("k", 3.0)]
