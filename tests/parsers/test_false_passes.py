"""No false pass: every way a timing report can go wrong (report_mutations.KINDS) fails the gate,
on every timing-summary fixture kabe has (its own, and the real ones in ../shared).

A cut inside the optional `-datasheet` appendix (after Timing Details) is the one truncation that
may still pass: the record the gate reads comes whole from the sections before it, so the
verdict is the full report's verdict. It is checked to be exactly that, and reported apart."""

from pathlib import Path

import pytest
import report_mutations as rm
from shared_reports import names, or_skip, shared_dir

from kabe.rules.gate import evaluate
from kabe.parsers import ReportError
from kabe.parsers.detect import parse_file
from kabe.parsers.vivado_timing_summary import parse

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "vivado"
OWN = sorted(p.name for p in FIX.glob("*timing_summary*.rpt") if "truncated" not in p.name)
SHARED_FILES = [("vivado-reports", n) for n in names("vivado-reports") if "timing_summary" in n] + [
    ("vivado-reports-more", n) for n in names("vivado-reports-more", "*timing*.rpt")]


def gate_passes(mutant, tmp_path) -> tuple[bool, dict | None]:
    if isinstance(mutant, bytes):  # through the file door, as `kabe gate` reads it
        f = tmp_path / "mutant.rpt"
        f.write_bytes(mutant)
        try:
            rec = parse_file(f)["record"]
        except ReportError:
            return False, None
    else:
        try:
            rec = parse(mutant, "mutant")
        except ReportError:
            return False, None
    return evaluate(rec, None).passed, rec


def check_no_false_pass(text: str, tmp_path):
    full = parse(text, "full")
    datasheet_at = text.find("\n| Data sheet")
    for kind in rm.KINDS:
        for mutant in rm.must_fail(kind, text):
            passed, rec = gate_passes(mutant, tmp_path)
            if not passed:
                continue
            in_appendix = (kind == "truncated" and datasheet_at > 0 and len(mutant) > datasheet_at)
            assert in_appendix, f"FALSE PASS: {kind} mutant of {len(mutant)} chars passes the gate"
            assert {k: rec[k] for k in full if k != "warnings"} == {k: full[k] for k in full if k != "warnings"}


@pytest.mark.parametrize("name", OWN)
def test_own_fixtures(name, tmp_path):
    check_no_false_pass((FIX / name).read_text(), tmp_path)


@pytest.mark.parametrize("folder,name", or_skip([pytest.param(f, n, id=n) for f, n in SHARED_FILES], "vivado-reports", 2))
def test_real_reports(folder, name, tmp_path):
    check_no_false_pass((shared_dir(folder) / name).read_text(errors="replace"), tmp_path)


def test_each_kind_changes_what_it_says_it_does():
    """The mutations are what their names say (a mutation that changed nothing would make the
    counts above meaningless)."""
    text = (FIX / "flow_timing_summary_met.rpt").read_text()
    pw = parse(rm.pulse_width_only(text)[0], "pw")
    assert (pw["wpws_ns"], pw["pw_failing_endpoints"], pw["verdict"]) == (-0.144, 2, "not_met")
    assert parse(rm.verdict_flipped(text)[0], "flip")["verdict"] == "not_met"
    with pytest.raises(ReportError, match="WHS is -0.052"):
        parse(rm.hold_only(text)[0], "hold")
    with pytest.raises(ReportError, match="no verdict line"):
        parse(rm.verdict_deleted(text)[0], "del")
    cuts = rm.truncated(text)
    assert len(cuts) > 40 and all(len(c) < len(text.rstrip()) for c in cuts)
    row = parse(rm.clock_row_negative(text)[0], "row")
    assert row["clocks"][0]["wns_ns"] == -0.512 and row["wns_ns"] >= 0
    assert any("contradicts itself" in f for f in evaluate(row, None).failures)
    totals = [parse(m, "tot") for m in rm.total_negative(text)]
    assert [(r["tns_ns"], r["ths_ns"], r["tpws_ns"]) for r in totals] == [(-1.0, 0.0, 0.0), (0.0, -1.0, 0.0), (0.0, 0.0, -1.0)]
    assert all(r["wns_ns"] >= 0 and r["verdict"] == "met" and not evaluate(r, None).passed for r in totals)
    with pytest.raises(ReportError, match="a second report header at line .*: two reports in one file"):
        parse(rm.appended(text)[0], "two runs")
    headless = rm.appended(text)[0].replace("| Tool Version", "| Tool version")  # a header damaged still counts
    with pytest.raises(ReportError, match="more than one report_timing_summary run in one file"):
        parse(headless, "two runs, one header")
    for m in rm.cut_then_trailer(text):
        with pytest.raises(ReportError):
            parse(m, "cut, then a log or a report")
    nc = parse(rm.no_clocks((FIX / "timing_summary_7z020_2019.1_hold_violated.rpt").read_text())[0], "noclk")
    assert (nc["clocks"], nc["wns_ns"], nc["verdict"], nc["critical_path"]) == ([], None, "unconstrained", None)
    assert any("no clock is constrained" in f for f in evaluate(nc, None).failures)
