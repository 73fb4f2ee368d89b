"""report_timing path details on kabe's own fixtures, and truncation."""

from pathlib import Path

import pytest

from kabe.parsers import ReportError
from kabe.parsers import vivado_timing_paths as tp

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "vivado"
MINMAX = FIX / "timing_paths_7z020_2023.2_min_max.rpt"
UNCON = FIX / "timing_paths_7z020_2022.2_unconstrained.rpt"


def test_min_max_paths():
    ps = tp.parse_file(MINMAX)
    assert [(p["slack_ns"], p["status"], p["met"], p["delay_type"]) for p in ps] == [
        (-1.686, "VIOLATED", False, "max"), (2.44, "MET", True, "max"),
        (0.054, "MET", True, "min"), (0.823, "MET", True, "min")]
    w = ps[0]
    assert (w["data_path_delay_ns"], w["logic_delay_ns"], w["route_delay_ns"], w["logic_levels"]) == (
        8.369, 2.722, 5.647, 8)
    assert w["logic_level_cells"] == {"CARRY4": 4, "LUT2": 1, "LUT4": 1, "LUT5": 1, "LUT6": 1}
    assert (w["requirement_ns"], w["clock_path_skew_ns"], w["clock_uncertainty_ns"]) == (7.0, -0.101, 0.154)
    assert (w["required_time_ns"], w["arrival_time_ns"]) == (9.289, 10.975)
    assert w["path_group"] == "clk_out1_kabe_clk_wiz_0"
    assert w["source_clock"] == w["destination_clock"] == "clk_out1_kabe_clk_wiz_0"
    assert w["source"] == "u_kabe/u_port1/u_mac/q_reg[22]/C"
    assert len(w["cells"]) == 9 and w["cells"][0]["type"] == "FDRE"
    assert abs(sum(c["delay_ns"] for c in w["cells"]) - w["logic_delay_ns"]) < 0.002
    h = ps[2]
    assert (h["required_time_ns"], h["arrival_time_ns"]) == (1.053, 1.107)
    assert tp.worst(ps)["slack_ns"] == -1.686
    assert tp.worst(ps, "min")["slack_ns"] == 0.054


def test_unconstrained_path_has_no_slack():
    (p,) = tp.parse_file(UNCON)
    assert (p["slack_ns"], p["status"], p["met"], p["requirement_ns"]) == (None, "UNCONSTRAINED", None, None)
    assert (p["data_path_delay_ns"], p["logic_levels"]) == (3.19, 3)
    assert [c["type"] for c in p["cells"]] == ["FDRE", "LUT2", "CARRY4", "CARRY4"]
    assert tp.worst([p]) is None


@pytest.mark.parametrize("text", ["", "  \n"])
def test_empty_raises(text):
    with pytest.raises(ReportError, match="empty"):
        tp.parse(text, "p.rpt")


def test_no_paths_raises():
    head = MINMAX.read_text().split("Slack")[0]
    with pytest.raises(ReportError, match="no timing path"):
        tp.parse(head, "p.rpt")


def test_logic_plus_route_must_add_up():
    text = MINMAX.read_text().replace("(logic 2.722ns", "(logic 2.922ns")
    with pytest.raises(ReportError, match="logic"):
        tp.parse(text, "p.rpt")


def test_footer_slack_must_match_header():
    text = MINMAX.read_text().replace("                         slack                                 -1.686",
                                      "                         slack                                 -1.386")
    with pytest.raises(ReportError, match="table slack"):
        tp.parse(text, "p.rpt")


@pytest.mark.parametrize("path", [MINMAX, UNCON], ids=lambda p: p.name)
def test_truncation_raises_or_gives_a_prefix_of_complete_paths(path):
    text = path.read_text()
    full = tp.parse(text, path.name)
    offs = set(range(0, len(text), 11))
    pos = 0
    for ln in text.split("\n"):
        pos += len(ln) + 1
        offs.add(pos)
    for off in sorted(o for o in offs if o < len(text)):
        try:
            ps = tp.parse(text[:off], f"{path.name}[:{off}]")
        except ReportError:
            continue
        assert ps == full[:len(ps)], f"cut at {off}"
