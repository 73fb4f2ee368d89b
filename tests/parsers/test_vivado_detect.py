"""detect() / parse_file(): the kind from content, dispatch, and unknown/missing/empty files."""

import json
from pathlib import Path

import pytest

from kabe.parsers import ReportError
from kabe.parsers.detect import detect, parse_file

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "vivado"

KINDS = {
    "timing_summary_7z020_2023.2_met.rpt": "vivado_timing_summary",
    "timing_summary_7z020_2019.1_hold_violated.rpt": "vivado_timing_summary",
    "timing_summary_7z020_2020.1_pulse_width_violated.rpt": "vivado_timing_summary",
    "timing_summary_7z020_2022.2_no_clocks.rpt": "vivado_timing_summary",
    "timing_summary_xczu3eg_2021.1_large_negative.rpt": "vivado_timing_summary",
    "utilization_7z020_2023.2_placed_prohibited.rpt": "vivado_utilization",
    "utilization_7z020_2018.3_synth_classic.rpt": "vivado_utilization",
    "utilization_xczu3eg_2022.2_placed.rpt": "vivado_utilization",
    "utilization_hier_7z020_2023.2_placed.rpt": "vivado_utilization_hier",
    "utilization_hier_xczu3eg_2020.2_synth.rpt": "vivado_utilization_hier",
    "timing_paths_7z020_2023.2_min_max.rpt": "vivado_timing",
    "timing_paths_7z020_2022.2_unconstrained.rpt": "vivado_timing",
    "timing_paths_7z020_2023.2_path_summary.rpt": "vivado_timing",
}


def test_every_fixture_is_present():
    # other suites keep their own fixtures in the same directory; these are this suite's
    assert all((FIX / name).is_file() for name in KINDS)


@pytest.mark.parametrize("name,kind", sorted(KINDS.items()))
def test_detect_by_header(name, kind):
    text = (FIX / name).read_text()
    assert detect(text) == kind
    out = parse_file(FIX / name)
    assert out["kind"] == kind and out["path"] == str(FIX / name)
    assert out["record"]


@pytest.mark.parametrize("name,kind", sorted(KINDS.items()))
def test_detect_by_titles_without_header(name, kind):
    lines = (FIX / name).read_text().split("\n")
    body = "\n".join(ln for ln in lines if not ln.startswith("| ") or "Command" not in ln)
    assert detect(body) == kind


def test_unknown_command_is_refused():
    text = (FIX / "timing_paths_7z020_2023.2_min_max.rpt").read_text().replace(
        "Command      : report_timing ", "Command      : report_power ")
    with pytest.raises(ReportError, match="report_power"):
        detect(text)


@pytest.mark.parametrize("text", ["hello world\n", "Slack (MET) : 1.0ns\n", "{\"a\": 1}\n"])
def test_unknown_content_raises(tmp_path, text):
    with pytest.raises(ReportError, match="cannot tell what report"):
        detect(text)
    f = tmp_path / "mystery.txt"
    f.write_text(text)
    with pytest.raises(ReportError, match=r"cannot tell what report .*mystery\.txt"):
        parse_file(f)


def test_missing_and_empty_files(tmp_path):
    with pytest.raises(ReportError, match=r"cannot tell what report .*absent\.rpt.*does not exist"):
        parse_file(tmp_path / "absent.rpt")
    (tmp_path / "empty.rpt").write_text("\n\n")
    with pytest.raises(ReportError, match=r"cannot tell what report .*empty\.rpt.*empty"):
        parse_file(tmp_path / "empty.rpt")
    with pytest.raises(ReportError):
        detect("")


def test_yosys_stat_and_kabe_timing_are_told_apart():
    yosys = ("\n18. Printing statistics.\n\n=== kabe_top ===\n\n   Number of wires:   12\n"
             "   Number of cells:   40\n     LUT4   20\n")
    assert detect(yosys) == "yosys_stat"
    newer = "=== kabe_top ===\n\n        +----------Local Count\n        |\n       40 cells\n"
    assert detect(newer) == "yosys_stat"
    js = json.dumps({"modules": {"\\kabe_top": {"num_cells": 40, "num_cells_by_type": {}}}})
    assert detect(js) == "yosys_stat"
    # JSON that merely says "kabe.timing" is not a report kabe writes: a kind must be parseable
    with pytest.raises(ReportError, match="cannot tell"):
        detect(json.dumps({"schema": "kabe.timing/1", "wns_ns": 0.1}))


def test_kabe_timing_text_header_is_recognised():
    text = "kabe pre-route timing estimate (open flow)\n...\n== End of kabe timing estimate ==\n"
    assert detect(text) == "kabe_timing"


def test_parse_file_dispatches_yosys_stat():
    stat = Path(__file__).resolve().parents[1] / "fixtures" / "yosys" / "small_top_stat.txt"
    out = parse_file(stat)
    assert out["kind"] == "yosys_stat"
    assert out["record"]["dsp"] == 2 and out["record"]["lut"] > 0


def test_parse_file_reads_the_open_flows_archived_stat_json(tmp_path):
    """The open flow archives `stat -json` as yosys_stat.json: detected as yosys_stat, it must be
    read as JSON (it was read as text and refused)."""
    stat = {"creator": "Yosys 0.70", "invocation": "stat -json ", "modules": {"\\top": {
        "num_cells": 7, "num_submodules": 0,
        "num_cells_by_type": {"LUT4": 3, "FDRE": 2, "CARRY4": 1, "DSP48E1": 1}}},
        "design": {"num_cells": 7, "num_cells_by_type": {"LUT4": 3, "FDRE": 2, "CARRY4": 1, "DSP48E1": 1}}}
    f = tmp_path / "yosys_stat.json"
    f.write_text(json.dumps(stat, indent=3))
    out = parse_file(f)
    assert out["kind"] == "yosys_stat"
    assert (out["record"]["lut"], out["record"]["ff"], out["record"]["carry4"], out["record"]["dsp"]) == (3, 2, 1, 1)


def test_nul_bytes_are_refused_by_detection_as_by_every_parser(tmp_path):
    """One door: a report with a NUL byte is refused before any kind is guessed (it used to be
    refused by `kabe parse` but detected and passed by `kabe gate`)."""
    good = (FIX / "timing_summary_7z020_2023.2_met.rpt").read_bytes()
    f = tmp_path / "nul.rpt"
    f.write_bytes(good[:5000] + b"\x00" + good[5000:])
    with pytest.raises(ReportError, match="NUL"):
        parse_file(f)
