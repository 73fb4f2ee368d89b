"""The open flow's own timing report (kabe.timing.report's format) cannot pass on its summary line
alone: a clock row, the worst path, TNS or a failing count that says the design fails fails the
gate, and two reports (or two of one section) in one file are refused, not judged by the first."""

import pytest
from test_gate_boundaries_on_reports import kabe_report

from kabe import cli
from kabe.parsers import ReportError, kabe_timing
from kabe.rules.gate import evaluate

PASSING = kabe_report("0.500")


def _edited(old: str, new: str) -> str:
    assert PASSING.count(old) == 1, old
    return PASSING.replace(old, new)


@pytest.mark.parametrize("edit, finding", [
    (("clk_fpga_0                7.000      0.500", "clk_fpga_0                7.000     -2.000"),
     "clock clk_fpga_0: WNS -2.000 ns"),
    (("Slack (MET): 0.500 ns", "Slack (MET): -2.000 ns"), "the worst path: slack -2.000 ns"),
    (("     0.500        0.000                  0", "     0.500       -1.000                  0"),
     "the summary: TNS -1.000 ns"),
    (("     0.500        0.000                  0", "     0.500        0.000                  3"),
     "the summary: failing endpoints 3"),
], ids=["clock row", "worst path", "TNS", "failing endpoints"])
def test_a_number_beside_a_passing_summary_that_says_fail_fails(edit, finding):
    assert evaluate(kabe_timing.parse_text(PASSING, "ok"), None).passed
    v = evaluate(kabe_timing.parse_text(_edited(*edit), "edited"), None)
    assert not v.passed and any(finding in f and "contradicts itself" in f for f in v.failures), v.failures


@pytest.mark.parametrize("text, repeated", [
    (PASSING + "\n" + kabe_report("-2.000"), "== Clock Interaction =="),
    (_edited("== Clock Interaction ==", "== Design Timing Summary ==\n   WNS(ns)\n  -1.000\n\n== Clock Interaction =="),
     "== Design Timing Summary =="),
    (_edited("Unknown cell types (untimed): none", "Unknown cell types (untimed): none\n"
                                                   "Unknown cell types (untimed): DSP48E2 x4"),
     "Unknown cell types (untimed)"),
], ids=["two reports", "two summaries", "two untimed lines"])
def test_a_repeated_report_or_section_is_refused(text, repeated, tmp_path, capsys):
    with pytest.raises(ReportError, match="appears more than once") as e:
        kabe_timing.parse_text(text, "joined")
    assert repeated in str(e.value)
    f = tmp_path / "timing_estimate.rpt"
    f.write_text(text)
    assert cli.main(["gate", str(f)]) == 1
    assert "appears more than once" in capsys.readouterr().err


def test_an_undeclared_crossing_reads_back_as_one_and_fails_the_gate():
    from kabe.timing.report import UNDECLARED

    declared = _edited("== Clock Interaction ==\nnone", "== Clock Interaction ==\nclk_fpga_0 -> clk_b: not timed (cross-clock)")
    undeclared = _edited("== Clock Interaction ==\nnone",
                         f"== Clock Interaction ==\nclk_fpga_0 -> clk_b: not timed (cross-clock; {UNDECLARED})")
    rec = kabe_timing.parse_text(declared, "declared")
    assert rec["clock_interaction"] == [{"from": "clk_fpga_0", "to": "clk_b", "type": "Not timed (cross-clock)"}]
    assert evaluate(rec, None).passed
    rec = kabe_timing.parse_text(undeclared, "undeclared")
    assert rec["clock_interaction"][0]["type"] == "Not timed (cross-clock, undeclared)"
    assert not evaluate(rec, None).passed
