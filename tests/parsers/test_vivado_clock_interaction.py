"""report_clock_interaction: the pairs and their constraint type; unsafe crossings fail the gate;
a cut report never passes as a shorter, clean one."""

from pathlib import Path

import pytest

from kabe.gate import evaluate
from kabe.parsers import ReportError
from kabe.parsers.detect import parse_file
from kabe.parsers.vivado_clock_interaction import parse

FIX = Path(__file__).resolve().parent.parent / "fixtures" / "vivado"
UNSAFE = FIX / "clock_interaction_7z020_2023.2_unsafe.rpt"
CLEAN = FIX / "flow_clock_interaction.rpt"


def test_pairs_and_types():
    pairs = parse_file(UNSAFE)["record"]
    assert [(p["from"], p["to"], p["type"], p["wns_ns"]) for p in pairs] == [
        ("clk_fpga_0", "clk_fpga_0", "Timed", 0.062),
        ("clk_fpga_0", "clk_adc", "Timed (unsafe)", 1.204),
        ("clk_adc", "clk_fpga_0", "Partial False Path (unsafe)", 2.511)]
    assert pairs[2]["classification"] == "Partial Common Node"


def test_unsafe_crossing_fails_the_gate_and_a_clean_one_passes():
    base = {"estimated": False, "wns_ns": 0.062, "tns_ns": 0.0, "whs_ns": 0.1, "wpws_ns": 2.0, "critical_path": None,
            "clocks": [{"name": "clk_fpga_0"}], "verdict_line": "All user specified timing constraints are met."}
    unsafe = evaluate({**base, "clock_interaction": parse(UNSAFE.read_text())}, None)
    assert any("unsafe clock interaction clk_fpga_0 -> clk_adc, clk_adc -> clk_fpga_0" in f for f in unsafe.failures)
    assert evaluate({**base, "clock_interaction": parse(CLEAN.read_text())}, None).passed


def test_every_cut_report_raises():
    """Cut anywhere before the table's closing blank line, the report must be refused: a last row cut
    after "Timed" of "Timed (unsafe)" would otherwise read as a safe crossing."""
    text = UNSAFE.read_text()
    assert text.endswith("(unsafe)\n\n")
    for cut in range(len(text) - 1):
        with pytest.raises(ReportError):
            parse(text[:cut])


def test_misaligned_row_is_a_report_error_not_a_crash():
    text = UNSAFE.read_text().replace("clk_fpga_0    clk_adc       rise", "clk_fpga_0    clk_adc         rise")
    with pytest.raises(ReportError):
        parse(text)
