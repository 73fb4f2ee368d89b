"""Versal reports read as Vivado writes them: `<hidden>` where a netlist name is protected.

Vivado prints `<hidden>` for every level of a name inside encrypted IP (Versal's CIPS, NoC, HBM;
any encrypted core). A real Vivado 2018 Artix-7 XDMA report (../shared/fixtures/vivado-reports-more/
picarro-a100t-timing-routed.rpt) has it in Source/Destination (`.../pcie2_fifo_generator_tgt_brdg/
<hidden>/<hidden>/...`), in net and pin rows of the delay table and in the pulse-width Pin column; a
Vivado 2026.1 Versal AI Edge report (held back) also prints it in the netlist column of a path's
`required time`, `arrival time` and `slack` lines, which the reader took for a path cut short.

SOURCES: the four fixtures tests/fixtures/vivado/versal_hidden_* are kabe's own (composed for these
tests, a throwaway script keeping the arithmetic consistent; no Vivado run), in Vivado 2026.1's
report_timing_summary / report_timing layout for a Versal AI Edge part
(xcve2802-vsvh1760): the layout of a real Versal summary (../shared/fixtures/vivado-versal, VCK190,
2023.2: Timer Settings with Inter-SLR Compensation, 12 check_timing items, Clock Net Delay lines,
`X1Y3 (CLOCK_ROOT)` locations, wrapped `(Prop_...)` rows) with `<hidden>` where the XDMA report and
the issue put it: CIPS clock rows, a NoC NMU endpoint, a startpoint, a cell type and a location that
are `<hidden>` entirely, the closing lines of every path into protected IP. Numbers add up (path
sums, slack = required - arrival, skew = DCD - SCD +/- CPR); no name or number comes from a shared
report. `met`: WNS 0.257, WHS 0.089; `violated`: the same design with slower routes, WNS -1.228;
`truncated`: `met` cut after the last path's `arrival time ... <hidden>` line (blank lines after).
"""

from pathlib import Path

import pytest

from kabe.rules.gate import evaluate
from kabe.parsers import ReportError
from kabe.parsers import vivado_timing_paths as tp
from kabe.parsers import vivado_timing_summary as ts
from kabe.parsers._vivado_common import is_hidden_name
from kabe.parsers.detect import detect

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "vivado"
MET = FIX / "versal_hidden_timing_summary_ve2802_2026.1_met.rpt"
VIOLATED = FIX / "versal_hidden_timing_summary_ve2802_2026.1_violated.rpt"
TRUNCATED = FIX / "versal_hidden_timing_summary_ve2802_2026.1_truncated.rpt"
PATHS = FIX / "versal_hidden_report_timing_ve2802_2026.1.rpt"
NOC_PIN = "design_1_i/axi_noc_0/inst/<hidden>/<hidden>"


# ---------------------------------------------------------------- what counts as a hidden name

@pytest.mark.parametrize("tok", ["<hidden>", "<hidden>/<hidden>", NOC_PIN,
                                 "design_1_wrapper/fifo_gen/<hidden>/<hidden>/<hidden>"])
def test_hidden_names(tok):
    assert is_hidden_name(tok)


@pytest.mark.parametrize("tok", ["", "hidden", "<hid", "<hidden", "a/<hid", "<hidden>/", "a//<hidden>",
                                 "<hidden>x", "<hidden>/<hidden", "u_reg[3]/D", "(hidden)", "<HIDDEN>"])
def test_not_hidden_names(tok):
    """A name cut inside its `<hidden>`, or any ordinary name, is not a hidden one."""
    assert not is_hidden_name(tok)


@pytest.mark.parametrize("line,want", [
    ("                         slack                                  0.257    ", ("slack", "0.257", None)),
    ("                         slack                                  0.257    <hidden>", ("slack", "0.257", "<hidden>")),
    ("                         arrival time                          -4.430    <hidden>",
     ("arrival time", "-4.430", "<hidden>")),
    (f"                         required time                          4.687    {NOC_PIN}",
     ("required time", "4.687", NOC_PIN)),
])
def test_closing_lines_with_and_without_hidden(line, want):
    assert tp.footer(line) == want


@pytest.mark.parametrize("line", [
    "                         slack                                  0.257    <hid",  # cut inside the name
    "                         slack                                  0.257    u_reg/D",  # not a hidden name
    "                         slack                                  0.257    <hidden> <hidden>",
    "                         slack                                  <hidden>",  # no number
    "                         slack                                  0.2x7    <hidden>",
])
def test_damaged_closing_lines_are_not_closing_lines(line):
    assert tp.footer(line) is None


# ---------------------------------------------------------------- the three reports through the gate

def test_met_versal_report_passes_with_the_summary_numbers():
    r = ts.parse_file(MET)
    assert detect(MET.read_text()) == "vivado_timing_summary"
    assert (r["wns_ns"], r["tns_ns"], r["failing_endpoints"], r["whs_ns"], r["wpws_ns"]) == (
        0.257, 0.0, 0, 0.089, 0.86)
    assert r["tool_version"].startswith("Vivado v.2026.1") and (r["device"], r["verdict"]) == ("xcve2802-vsvh1760", "met")
    assert r["warnings"] == []  # every path read whole, the ones into protected IP too
    assert r["worst_slack_by_check"] == {"setup": 0.257, "hold": 0.089, "recovery": 1.281, "removal": 0.395}
    cp = r["critical_path"]
    assert (cp["startpoint"], cp["endpoint"], cp["slack_ns"]) == (
        "design_1_i/ternary_engine_0/inst/u_tree/acc_q_reg[23]/C", NOC_PIN, 0.257)
    assert [c["type"] for c in cp["cells"]] == ["FDRE", "LUT6", "<hidden>"]
    v = evaluate(r, None)
    assert v.passed and v.failures == []


def test_violated_versal_report_fails_naming_the_slack():
    r = ts.parse_file(VIOLATED)
    assert (r["wns_ns"], r["tns_ns"], r["failing_endpoints"], r["verdict"]) == (-1.228, -2.141, 8, "not_met")
    assert r["critical_path"]["endpoint"] == NOC_PIN
    v = evaluate(r, None)
    assert not v.passed
    # the gate names the path in RTL terms (kabe.base.rtl_path: Vivado's hierarchy separators as dots)
    rtl_pin = NOC_PIN.replace("/<hidden>/<hidden>", "/<hidden>").replace("/", ".")
    assert any("WNS -1.228 ns" in f and rtl_pin in f for f in v.failures), v.failures


def test_truncated_versal_report_is_refused():
    with pytest.raises(ReportError, match="cut short"):
        ts.parse_file(TRUNCATED)


def test_report_timing_paths_into_protected_ip():
    setup, hold = tp.parse_file(PATHS)
    assert (setup["check"], setup["slack_ns"], setup["destination"]) == ("setup", 0.257, NOC_PIN)
    assert (setup["required_time_ns"], setup["arrival_time_ns"]) == (4.687, 4.43)
    assert setup["logic_level_cells"] == {"LUT6": 1, "<hidden>": 1}
    assert setup["steps"][-1] == {"kind": "end", "type": "NOC_NMU512", "pin": "<hidden>"}
    # a hold path to a pin whose cell, location and type are all hidden
    assert (hold["check"], hold["slack_ns"], hold["destination"]) == ("hold", 0.109, "design_1_i/axi_noc_0/inst/<hidden>")
    assert (hold["required_time_ns"], hold["arrival_time_ns"]) == (2.287, 2.396)
    assert hold["steps"][-1]["type"] == "<hidden>"


def test_a_path_from_a_hidden_startpoint_is_read_whole():
    """The second setup path starts at a register whose name, location and type are all `<hidden>`."""
    text = MET.read_text()
    lines = text.split("\n")
    blocks = tp.path_blocks(lines, source="met")
    hidden_src = [b for b in blocks if b.path and b.path["source"] == "<hidden>"]
    assert len(hidden_src) == 1 and hidden_src[0].error is None
    p = hidden_src[0].path
    assert (p["slack_ns"], p["source_clock"], p["cells"][0]["type"], p["cells"][0]["pin"]) == (
        1.121, "clk_pl_0", "<hidden>", "<hidden>")
    assert all(b.error is None for b in blocks)


# ---------------------------------------------------------------- a path really cut short is still refused

def test_a_closing_slack_that_disagrees_with_its_header_is_refused():
    text = MET.read_text()
    assert text.rstrip().endswith("0.395    <hidden>")
    cut = text.rstrip()[:-len("0.395    <hidden>")] + "0.392    <hidden>\n\n\n\n\n"
    with pytest.raises(ReportError, match="table slack 0.392 != header slack 0.395"):
        ts.parse(cut, "edited")


def test_a_report_ending_on_a_hidden_slack_line_read_whole_is_complete():
    """End-of-file fixers strip Vivado's closing blank lines: the last path's slack line, printed to
    every decimal and with the `<hidden>` its required time line has, shows the end is the end."""
    text = MET.read_text().rstrip() + "\n"
    assert ts.parse(text, "eof")["wns_ns"] == 0.257


@pytest.mark.parametrize("tail", ["0.395", "0.395    ", "0.395    <hid", "0.395    <hidden", "0.39"])
def test_a_cut_inside_the_last_hidden_slack_line_is_refused(tail):
    """The file stops inside the last line: after the number (the `<hidden>` its required time and
    arrival time lines carry is missing), inside the name, or inside the number."""
    text = MET.read_text().rstrip()
    cut = text[:-len("0.395    <hidden>")] + tail
    with pytest.raises(ReportError):
        ts.parse(cut, "cut")


def test_cut_before_the_closing_lines_is_refused_in_report_timing():
    text = PATHS.read_text()
    at = text.rindex("required time")
    with pytest.raises(ReportError, match="ends before its required/arrival/slack lines"):
        tp.parse(text[:at] + "\n\n", "cut")
    damaged = text.replace("0.109    <hidden>", "0.109    <hidden> x")
    with pytest.raises(ReportError, match="ends before its required/arrival/slack lines"):
        tp.parse(damaged, "damaged")


def _cuts(text, step):
    offs = set(range(0, len(text), step))
    pos = 0
    for ln in text.split("\n"):
        pos += len(ln) + 1
        offs.add(pos)
        offs.add(pos - 1 - len(ln) // 2)
        if "<hidden>" in ln:  # inside every hidden name of the line
            at = ln.find("<hidden>")
            while at >= 0:
                offs.add(pos - 1 - len(ln) + at + 4)
                at = ln.find("<hidden>", at + 1)
    return sorted(o for o in offs if 0 <= o < len(text))


@pytest.mark.parametrize("path", [MET, VIOLATED], ids=lambda p: p.name)
def test_every_truncation_raises_or_reads_the_same(path):
    """Cut at many offsets (every line boundary, every line's middle, inside every `<hidden>`): the
    parser refuses, or reads what the whole report says; a cut of the violated report never passes."""
    text = path.read_text()
    full = ts.parse(text, path.name)
    keys = ("wns_ns", "tns_ns", "whs_ns", "wpws_ns", "verdict_line", "clocks", "other_path_groups", "critical_path")
    raised = 0
    for off in _cuts(text, 97):
        try:
            r = ts.parse(text[:off], f"{path.name}[:{off}]")
        except ReportError:
            raised += 1
            continue
        for k in keys:
            assert r[k] == full[k], f"cut at {off}: {k} differs"
        assert evaluate(r, None).passed is evaluate(full, None).passed
    assert raised > 0
    td = text.index("| Timing Details")
    for off in _cuts(text[:td], 211):
        with pytest.raises(ReportError):
            ts.parse(text[:off], f"{path.name}[:{off}]")


def test_report_timing_path_type_summary_with_hidden_names():
    """-path_type summary prints names only: a `<hidden>` start or end is one token like any name."""
    head = PATHS.read_text().split("Timing Report")[0].replace(
        "report_timing -delay_type min_max -max_paths 1", "report_timing -path_type summary -max_paths 2")
    table = ("Startpoint                                               Endpoint                                      Slack(ns)\n"
             + "-" * 110 + "\n"
             + f"design_1_i/ternary_engine_0/inst/u_tree/acc_q_reg[23]/C  {NOC_PIN}  0.257\n"
             + "<hidden>                                                 design_1_i/ternary_engine_0/inst/u_unpack/beat_q_reg[63]/D\n"
             + "                                                                                                       1.121\n\n")
    rows = tp.parse(head + "Timing Report\n\n" + table, "summary")
    assert [(r["source"], r["destination"], r["slack_ns"]) for r in rows] == [
        ("design_1_i/ternary_engine_0/inst/u_tree/acc_q_reg[23]/C", NOC_PIN, 0.257),
        ("<hidden>", "design_1_i/ternary_engine_0/inst/u_unpack/beat_q_reg[63]/D", 1.121)]
    with pytest.raises(ReportError, match="incomplete"):
        tp.parse(head + "Timing Report\n\n" + table.rsplit("1.121", 1)[0] + "\n", "cut")
