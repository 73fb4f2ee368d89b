"""A report in which Vivado timed nothing: every slack NA, under its verdict "met".

Real reports look like this when the design has nothing a clock reaches (a clock declared on a port
that drives no register, a PS-only block design). The gate passes them only when the report proves
that nothing was there to time (check_timing: no register without a clock, no unconstrained
endpoint; no clock table or path with a slack); otherwise NA means "not timed" and the gate fails.
Fixture: tests/fixtures/vivado/timing_summary_7z020_2023.2_idle_clock.rpt, kabe's own, in the format
of a real Vivado 2024.2 report of an idle design."""

import re
from pathlib import Path

from kabe import cli
from report_mutations import set_summary

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "vivado"
IDLE = FIX / "timing_summary_7z020_2023.2_idle_clock.rpt"
MET = FIX / "timing_summary_7z020_2023.2_met.rpt"
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
    itself (garbled, or edited): never 'nothing to time'."""
    text = set_summary(MET.read_text(), {c: "NA" for c in SUMMARY_COLUMNS})
    rc, out = _gate(text, tmp_path, capsys)
    assert rc == 1
    assert "the Design Timing Summary says NA but clock" in out and "contradicts itself" in out


def test_no_constraints_verdict_fails(tmp_path, capsys):
    text = IDLE.read_text().replace("All user specified timing constraints are met.",
                                    "There are no user specified timing constraints.")
    rc, out = _gate(text, tmp_path, capsys)
    assert rc == 1
    assert "nothing is timed; add create_clock" in out
