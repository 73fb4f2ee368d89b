"""A report in which Vivado timed nothing: every slack NA, under its verdict "met".

Real reports look like this when the design has nothing a clock reaches (a clock declared on a port
that drives no register, a PS-only block design). The gate passes them only when the report proves
that nothing was there to time (check_timing: no register without a clock, no unconstrained
endpoint; no clock table or path with a slack); otherwise NA means "not timed" and the gate fails.
Fixtures (kabe's own, in the format of real reports of idle designs):
tests/fixtures/vivado/timing_summary_7z020_2023.2_idle_clock.rpt prints the slacks NA;
timing_summary_7a35t_2024.2_inf_idle_clock.rpt prints WNS and WHS `inf` over 0 endpoints (TNS 0.000),
as Vivado 2023.2 and 2024.2 do for a routed design whose clock times nothing, with a pulse width on the
clock's BUFG. NA and inf are one fact ("no endpoint") and are judged by one rule."""

import re
from pathlib import Path

from kabe import cli
from report_mutations import set_summary

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "vivado"
IDLE = FIX / "timing_summary_7z020_2023.2_idle_clock.rpt"
MET = FIX / "timing_summary_7z020_2023.2_met.rpt"
INF = FIX / "timing_summary_7a35t_2024.2_inf_idle_clock.rpt"
SETUP_HOLD = ("WNS(ns)", "TNS(ns)", "TNS Failing Endpoints", "TNS Total Endpoints", "WHS(ns)", "THS(ns)",
              "THS Failing Endpoints", "THS Total Endpoints")
SUMMARY_COLUMNS = ("WNS(ns)", "TNS(ns)", "TNS Failing Endpoints", "TNS Total Endpoints", "WHS(ns)", "THS(ns)",
                   "THS Failing Endpoints", "THS Total Endpoints", "WPWS(ns)", "TPWS(ns)",
                   "TPWS Failing Endpoints", "TPWS Total Endpoints")


def _gate(text: str, tmp_path, capsys) -> tuple[int, str]:
    f = tmp_path / "timing_summary.rpt"
    f.write_text(text)
    rc = cli.main(["gate", str(f)])
    out = capsys.readouterr()
    return rc, out.out + out.err


def test_a_clock_that_drives_nothing_passes_saying_so(tmp_path, capsys):
    rc, out = _gate(IDLE.read_text(), tmp_path, capsys)
    assert rc == 0, out
    for check in ("timing.wns", "timing.whs", "timing.wpws"):
        assert re.search(rf"pass {check}: .*got NA: no endpoints to time", out), out


def test_unclocked_registers_make_na_mean_not_timed(tmp_path, capsys):
    text = IDLE.read_text().replace("1. checking no_clock (0)", "1. checking no_clock (12)").replace(
        "There are 0 register/latch pins with no clock.", "There are 12 register/latch pins with no clock.")
    rc, out = _gate(text, tmp_path, capsys)
    assert rc == 1
    assert "Vivado timed no endpoint, and check_timing reports 12 unclocked" in out


def test_na_summary_over_clock_tables_with_slacks_fails(tmp_path, capsys):
    """A summary row of NAs over clock tables and paths that have slacks is a report that contradicts
    itself (garbled, or edited): never 'nothing to time'. The Timing Details headers under it have
    numbers, so the reader already refuses it; with them gone, the gate's own check says so."""
    text = set_summary(MET.read_text(), {c: "NA" for c in SUMMARY_COLUMNS})
    rc, out = _gate(text, tmp_path, capsys)
    assert rc == 1
    assert "line's worst slack is" in out and "Design Timing Summary's WNS has no number" in out and "disagree" in out
    no_details = text[:text.index("| Timing Details")] + "\n\n\n"
    no_details = no_details.replace("report_timing_summary ", "report_timing_summary -no_detailed_paths ", 1)
    rc, out = _gate(no_details, tmp_path, capsys)
    assert rc == 1
    assert "the Design Timing Summary says NA but clock" in out and "contradicts itself" in out


def test_no_constraints_verdict_fails(tmp_path, capsys):
    text = IDLE.read_text().replace("All user specified timing constraints are met.",
                                    "There are no user specified timing constraints.")
    rc, out = _gate(text, tmp_path, capsys)
    assert rc == 1
    assert "nothing is timed; add create_clock" in out


def test_inf_slacks_over_no_endpoints_pass_as_nothing_timed(tmp_path, capsys):
    rc, out = _gate(INF.read_text(), tmp_path, capsys)
    assert rc == 0, out
    for check in ("timing.wns", "timing.whs"):
        assert re.search(rf"pass {check}: .*got inf: no endpoints to time", out), out
    assert re.search(r"pass timing.wpws: .*got 3\.0", out), out


def test_inf_and_na_are_one_rule(tmp_path, capsys):
    """The same report with its inf/0 cells printed NA gets the same verdict, and so does each mix."""
    text = INF.read_text()
    na = set_summary(text, {c: "NA" for c in SETUP_HOLD})
    assert _gate(na, tmp_path, capsys)[0] == 0
    mixed = set_summary(text, {"WNS(ns)": "NA", "TNS(ns)": "NA"})
    assert _gate(mixed, tmp_path, capsys)[0] == 0


def test_inf_with_unclocked_registers_is_not_timed(tmp_path, capsys):
    text = INF.read_text().replace("1. checking no_clock (0)", "1. checking no_clock (12)").replace(
        "There are 0 register/latch pins with no clock.", "There are 12 register/latch pins with no clock.")
    rc, out = _gate(text, tmp_path, capsys)
    assert rc == 1
    assert "Vivado timed no endpoint, and check_timing reports 12 unclocked" in out


def test_inf_beside_endpoints_or_negative_totals_fails(tmp_path, capsys):
    """inf over 0 endpoints means "no endpoint". Beside a count of endpoints it means no path to them
    was timed (a real routed report of a switch-to-LED design, a clock and no I/O delays, prints inf
    over 2 endpoints), and beside a failing endpoint or a negative TNS it contradicts itself: never
    nothing-to-time, and the message names the column that counts them."""
    for cells in ({"TNS Total Endpoints": "973"}, {"TNS Failing Endpoints": "3", "TNS(ns)": "-1.250"},
                  {"THS Total Endpoints": "12"}, {"THS(ns)": "-0.100"}):
        rc, out = _gate(set_summary(INF.read_text(), cells), tmp_path, capsys)
        assert rc == 1, (cells, out)
        assert "the report has no WNS" in out or "the numbers and the verdict disagree" in out, (cells, out)
    rc, out = _gate(set_summary(INF.read_text(), {"TNS Total Endpoints": "2", "THS Total Endpoints": "2"}),
                    tmp_path, capsys)
    assert rc == 1
    assert "prints WNS inf (no number) but counts TNS Total Endpoints 2: Vivado has endpoints it timed no path to" \
        in out, out
    assert "prints WHS inf (no number) but counts THS Total Endpoints 2" in out, out
    # check_timing counts no unconstrained endpoint here: the message says so, never "check_timing names them"
    assert "check_timing counts 0 unconstrained internal endpoints, so it does not name them" in out, out
    assert "check_timing names them" not in out, out


def test_inf_summary_over_a_clock_table_with_slacks_fails(tmp_path, capsys):
    text = set_summary(MET.read_text(), {"WNS(ns)": "inf", "TNS(ns)": "0.000", "TNS Failing Endpoints": "0",
                                         "TNS Total Endpoints": "0", "WHS(ns)": "inf", "THS(ns)": "0.000",
                                         "THS Failing Endpoints": "0", "THS Total Endpoints": "0"})
    rc, out = _gate(text, tmp_path, capsys)
    assert rc == 1
    assert "Design Timing Summary's WNS has no number (NA or inf)" in out and "disagree" in out
    no_details = text[:text.index("| Timing Details")] + "\n\n\n"
    no_details = no_details.replace("report_timing_summary ", "report_timing_summary -no_detailed_paths ", 1)
    rc, out = _gate(no_details, tmp_path, capsys)
    assert rc == 1
    assert "the Design Timing Summary says inf but clock" in out and "contradicts itself" in out


def test_inf_under_another_verdict_fails(tmp_path, capsys):
    for line in ("Timing constraints are not met.", "There are no user specified timing constraints."):
        text = INF.read_text().replace("All user specified timing constraints are met.", line)
        assert _gate(text, tmp_path, capsys)[0] == 1, line
