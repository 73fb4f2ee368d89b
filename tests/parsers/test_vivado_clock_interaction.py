"""report_clock_interaction: the pairs and their constraint type, whatever the version's column set
(2019+ stacked titles with the WHS group of -delay_type min_max, 2014-2018 "Edges (WNS)" titles,
blank cells in Ignored rows); unsafe crossings fail the gate; a cut report never passes as a
shorter, clean one; a row shifted by one character still reads right, by two is refused."""

from pathlib import Path

import pytest

from kabe.rules.gate import evaluate
from kabe.parsers import ReportError
from kabe.parsers.detect import parse_file
from kabe.parsers.vivado_clock_interaction import parse

FIX = Path(__file__).resolve().parent.parent / "fixtures" / "vivado"
UNSAFE = FIX / "clock_interaction_7z020_2023.2_unsafe.rpt"
CLEAN = FIX / "flow_clock_interaction.rpt"
OLD = FIX / "clock_interaction_7a100t_2016.4_min_max_ignored.rpt"
SIGNOFF = {"estimated": False, "wns_ns": 0.062, "tns_ns": 0.0, "whs_ns": 0.1, "wpws_ns": 2.0, "critical_path": None,
           "clocks": [{"name": "clk_fpga_0"}], "verdict_line": "All user specified timing constraints are met.",
           "check_timing": {"no_clock": 0, "unconstrained_internal_endpoints": 0}, "no_clock": 0}


def test_pairs_types_and_hold_columns():
    pairs = parse_file(UNSAFE)["record"]
    assert [(p["from"], p["to"], p["type"], p["wns_ns"], p["whs_ns"], p["unsafe"]) for p in pairs] == [
        ("clk_fpga_0", "clk_fpga_0", "Timed", 0.062, 0.161, False),
        ("clk_fpga_0", "clk_adc", "Timed (unsafe)", 1.204, 0.233, True),
        ("clk_adc", "clk_fpga_0", "Partial False Path (unsafe)", 2.511, 0.118, True),
        ("clk_adc", "clk_adc", "Timed", 3.877, 0.052, False),
        ("clk_adc", "clk_fpga_1", "Asynchronous Groups", None, None, False)]
    assert pairs[2]["classification"] == "Partial Common Node"
    assert (pairs[0]["edges"], pairs[0]["requirement_ns"], pairs[0]["total_endpoints"],
            pairs[0]["hold_total_endpoints"]) == ("rise - rise", 7.0, 14873, 14873)
    # an Ignored pair: blank edges, slacks and requirement, endpoint counts still there
    assert (pairs[4]["classification"], pairs[4]["edges"], pairs[4]["requirement_ns"],
            pairs[4]["total_endpoints"]) == ("Ignored", None, None, 4)


def test_older_single_line_titles_with_min_max():
    pairs = parse(OLD.read_text(), "old.rpt")
    assert [(p["from"], p["to"], p["type"], p["wns_ns"], p["whs_ns"]) for p in pairs] == [
        ("clk_out1_mmcm", "clk_out1_mmcm", "Timed", 0.415, 0.031),
        ("clk_out1_mmcm", "clk_out2_mmcm", "False Path", None, None),
        ("clk_out2_mmcm", "clk_out1_mmcm", "Max Delay Datapath Only", 6.118, 0.744),
        ("clk_out2_mmcm", "clk_out2_mmcm", "Partial False Path", 2.903, 0.048)]
    assert [p["failing_endpoints"] for p in pairs] == [0, 0, 0, 0]
    assert [p["hold_total_endpoints"] for p in pairs] == [20551, 18, 33, 5120]
    assert evaluate({**SIGNOFF, "clock_interaction": pairs}, None).passed


def test_unsafe_crossing_fails_the_gate_and_a_clean_one_passes():
    unsafe = evaluate({**SIGNOFF, "clock_interaction": parse(UNSAFE.read_text())}, None)
    assert any("unsafe clock interaction clk_fpga_0 -> clk_adc, clk_adc -> clk_fpga_0" in f for f in unsafe.failures)
    assert evaluate({**SIGNOFF, "clock_interaction": parse(CLEAN.read_text())}, None).passed


def test_every_cut_report_raises():
    """Cut anywhere before the table's closing blank line, the report must be refused: a last row cut
    after "Timed" of "Timed (unsafe)" would otherwise read as a safe crossing."""
    text = UNSAFE.read_text()
    end = text.index("Asynchronous Groups") + len("Asynchronous Groups")
    end = text.index("\n", end) + 1  # the last row's newline: the closing blank line comes after
    for cut in range(end + 1):
        with pytest.raises(ReportError):
            parse(text[:cut])
    assert parse(text[:end + 1])  # with its blank line the table is complete


def _shift_rows(text, by):
    """Every data row of the table moved right by `by` characters (titles and dashes stay)."""
    lines = text.split("\n")
    dash = next(i for i, ln in enumerate(lines) if ln.startswith("-------") and "  --" in ln)
    j = dash + 1
    while lines[j].strip():
        lines[j] = " " * by + lines[j]
        j += 1
    return "\n".join(lines)


@pytest.mark.parametrize("path", [UNSAFE, OLD], ids=lambda p: p.name)
def test_rows_shifted_by_one_read_the_same(path):
    text = path.read_text()
    assert parse(_shift_rows(text, 1)) == parse(text)


def test_rows_shifted_by_two_are_refused_not_guessed():
    with pytest.raises(ReportError, match="does not line up"):
        parse(_shift_rows(UNSAFE.read_text(), 2))


def test_misaligned_row_is_a_report_error_not_a_crash():
    text = UNSAFE.read_text().replace("clk_fpga_0  clk_adc     rise", "clk_fpga_0  clk_adc       rise")
    with pytest.raises(ReportError):
        parse(text)


def test_a_table_without_a_constraints_column_is_refused():
    text = CLEAN.read_text().replace("Constraints", "Comment    ")
    with pytest.raises(ReportError, match="no column for type"):
        parse(text)
