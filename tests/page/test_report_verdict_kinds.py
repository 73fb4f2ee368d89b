"""The page draws each verdict kind as the console says it (issue 44 item 3): pass, FAIL, FAIL (expected),
not estimated (neither pass nor fail: never "gate failed", as v80_ternary's was drawn), pass (unverified)."""

from __future__ import annotations

import pytest

from kabe.records import history, verdict_kind
from kabe.page import report, report_plot
from kabe.rules import gate

from records_fixtures import make_cores, record

SHAS = ["a" * 40, "b" * 40, "c" * 40, "d" * 40]


def _entry(sha: str, verdict: gate.Verdict, design: str = "stage4") -> history.Entry:
    rec = record(sha, design=design)
    if verdict.not_estimated:
        rec["timing"] = {**rec["timing"], "wns_ns": None, "tns_ns": None, "not_estimated": verdict.not_estimated}
    return history.Entry(sha, design, "open", rec, verdict)


NOT_ESTIMATED = gate.Verdict(False, not_estimated="no routed Versal data")
UNVERIFIED = gate.Verdict(True, unverified="verify: none (no golden model yet)")
FAILED = gate.Verdict(False, failures=["WNS -0.400 ns < 0"])


@pytest.mark.parametrize("verdict, expected, kind, word", [
    (gate.Verdict(True), "pass", verdict_kind.PASS, "pass"),
    (FAILED, "pass", verdict_kind.FAIL, "FAIL"),
    (FAILED, "fail", verdict_kind.EXPECTED_FAIL, "FAIL (expected)"),
    (gate.Verdict(True), "fail", verdict_kind.FAIL, "PASS (expected FAIL)"),
    (NOT_ESTIMATED, "pass", verdict_kind.NOT_ESTIMATED, "not estimated"),
    (NOT_ESTIMATED, "not_estimated", verdict_kind.NOT_ESTIMATED, "not estimated"),
    (UNVERIFIED, "pass", verdict_kind.UNVERIFIED, "pass (unverified)"),
])
def test_each_kind_is_its_own_word_in_the_latest_table(verdict, expected, kind, word):
    e = _entry(SHAS[0], verdict)
    assert verdict_kind.kind(e, expected) == kind
    cell = report._gate_cells(e, expected)
    assert cell.split("</td>")[0].endswith(f">{word}")
    if kind == verdict_kind.NOT_ESTIMATED:
        assert "neither pass nor fail" in cell and "FAIL" not in cell and 'class="fail"' not in cell


def test_the_commits_table_names_each_kind_and_not_estimated_is_no_failed_gate():
    entries = [_entry(SHAS[0], NOT_ESTIMATED, "v80_ternary"), _entry(SHAS[1], UNVERIFIED),
               _entry(SHAS[2], FAILED), _entry(SHAS[3], gate.Verdict(True))]
    table = report.commits_table(entries, None, None)
    assert "v80_ternary (open: not estimated)" in table and "stage4 (open: pass (unverified))" in table
    assert "stage4 (open: FAIL)" in table and "gates failed" not in table
    assert table.count("<td>-</td>") >= 4 + 1  # the plain pass's commit lists nothing


def test_the_plot_marks_not_estimated_and_unverified_apart_from_a_failed_gate(tmp_path):
    entries = [_entry(SHAS[0], NOT_ESTIMATED), _entry(SHAS[1], UNVERIFIED), _entry(SHAS[2], FAILED)]
    svg = report_plot.plot_design("stage4", entries, tmp_path / "h.svg", make_cores(tmp_path)).read_text()
    assert 'id="stage4-not-estimated-lut-open"' in svg and 'id="stage4-unverified-pass-lut-open"' in svg
    assert 'id="stage4-fail-lut-open"' in svg  # the real failure, still a red cross
    # one point each: the not-estimated build is not among the failed gate's crosses
    fail = svg[svg.index('id="stage4-fail-lut-open"'):]
    fail = fail[:fail.index("</g>")]
    assert fail.count("<use ") == 1, fail
