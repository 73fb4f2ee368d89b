"""report_timing -path_type summary: kabe's own fixture in the format of real Vivado 2015-2022 reports
(a start/end/slack table whose long names push the row onto indented continuation lines)."""

from pathlib import Path

import pytest

from kabe.parsers import ReportError, report_file, vivado_timing_paths
from kabe.parsers.detect import parse_file

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "vivado" / "timing_paths_7z020_2023.2_path_summary.rpt"


def _parse(text: str):
    return vivado_timing_paths.parse_report(report_file.from_text(text, "summary.rpt"))


def test_rows_one_line_wrapped_and_unconstrained():
    paths = _parse(FIX.read_text())
    assert [(p["source"], p["destination"], p["slack_ns"], p["status"]) for p in paths] == [
        ("engine/acc_reg[12]/C", "engine/sum_reg[31]/D", 0.412, "MET"),
        ("engine/port0_inst/fifo_inst/rd_ptr_reg[3]/C", "engine/port1_inst/unpack_inst/weight_lane_reg[4][7]/D",
         0.518, "MET"),
        ("engine/mac_lane[2].dsp/CLK", "engine/port0_inst/fifo_inst/mem_reg_0_15_0_5/RAMA/I", -0.027, "VIOLATED"),
        ("rst_n", "engine/rst_sync_reg[0]/PRE", None, "UNCONSTRAINED"),
    ]
    assert all(p["path_type_summary"] and p["delay_type"] == "max" and p["check"] == "setup" for p in paths)
    assert [p["line"] for p in paths] == [16, 17, 20, 22]
    assert vivado_timing_paths.worst(paths)["slack_ns"] == -0.027


def test_crlf_and_the_file_door_read_the_same():
    crlf = _parse(FIX.read_text().replace("\n", "\r\n"))
    assert [p["slack_ns"] for p in crlf] == [0.412, 0.518, -0.027, None]
    out = parse_file(FIX)
    assert out["kind"] == "vivado_timing" and len(out["record"]) == 4


def test_delay_type_min_is_hold_and_min_max_says_neither():
    text = FIX.read_text()
    hold = _parse(text.replace("-path_type summary", "-delay_type min -path_type summary"))
    assert {(p["delay_type"], p["check"]) for p in hold} == {("min", "hold")}
    both = _parse(text.replace("-path_type summary", "-delay_type min_max -path_type summary"))
    assert {(p["delay_type"], p["check"]) for p in both} == {(None, None)}
    assert vivado_timing_paths.worst(both) is None  # a worst setup slack it cannot tell is not invented


@pytest.mark.parametrize("cut, message", [
    ("                                                              0.518         \n", "incomplete"),
    ("                                                              -0.027        \n", "incomplete"),
])
def test_a_row_cut_short_is_refused(cut, message):
    text = FIX.read_text()
    with pytest.raises(ReportError, match=message):
        _parse(text[: text.index(cut)] + "\n")


def test_unreadable_slack_missing_rule_or_empty_table_is_refused():
    text = FIX.read_text()
    with pytest.raises(ReportError, match=r"'0\.4x2' where the summary table has a slack"):
        _parse(text.replace("0.412", "0.4x2"))
    with pytest.raises(ReportError, match="not followed by its dashed rule"):
        _parse(text.replace("Slack(ns)     \n" + "-" * 76 + "\n", "Slack(ns)     \n"))
    head = text[: text.index("engine/acc_reg")]
    with pytest.raises(ReportError, match="lists no path"):
        _parse(head + "\n")
    with pytest.raises(ReportError, match="without its 'Startpoint  Endpoint  Slack"):
        _parse(text[: text.index("Startpoint")])
