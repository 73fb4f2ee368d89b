"""report_design_analysis -logic_level_distribution: the deepest logic level per endpoint clock,
for logic-level budgets (tsfpga's MaximumLogicLevel)."""

from pathlib import Path

import pytest

from kabe.parsers import ReportError
from kabe.parsers import vivado_logic_levels as ll
from kabe.parsers.detect import parse_file

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "vivado"
TEXT = (FIX / "flow_logic_levels.rpt").read_text()


def test_flow_fixture():
    out = parse_file(FIX / "flow_logic_levels.rpt")
    assert out["kind"] == "vivado_logic_levels"
    r = out["record"]
    assert r["max_logic_levels"] == 6 and r["max_exact"] is True
    assert r["clocks"] == [{"clock": "clk_fpga_0", "requirement": "7.000ns",
                            "distribution": {"1": 3, "2": 9, "3": 7, "6": 1}, "max_logic_levels": 6,
                            "max_exact": True}]


def test_empty_deepest_column_does_not_count():
    text = TEXT.replace("|  3 |  9 | 7 |  1 |", "|  3 |  9 | 7 |  0 |")
    assert ll.parse(text, "x")["max_logic_levels"] == 3


def test_ranges_and_an_open_last_bin():
    text = TEXT.replace("|  1 |  2 | 3 |  6 |", "|  1 |  2 | 3-5 | 6+ |").replace(
        "+----+----+---+----+", "+----+----+-----+----+").replace("|  3 |  9 | 7 |  1 |", "|  3 |  9 |   7 |  0 |")
    r = ll.parse(text, "x")
    assert (r["max_logic_levels"], r["max_exact"]) == (5, True)
    r = ll.parse(text.replace("|   7 |  0 |", "|   7 |  2 |"), "x")
    assert (r["max_logic_levels"], r["max_exact"]) == (6, False)


@pytest.mark.parametrize("cut", ["| clk_fpga_0      | 7.000ns     |  3 |  9 | 7 |  1 |\n", "Logic Level Distribution\n"])
def test_cut_tables_are_refused(cut):
    with pytest.raises(ReportError):
        ll.parse(TEXT[:TEXT.index(cut) + len(cut)], "x")
