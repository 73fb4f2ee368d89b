"""The critical path in RTL terms where a person reads it: `kabe diff` (below the table), the report
page (below the latest-build table) and the build summary (kabe.build.summary), for a record with
startpoint_rtl/endpoint_rtl and for one from before."""

from __future__ import annotations

import io

from rich.console import Console

from kabe.build import summary
from kabe.records import diff, metrics
from kabe.page import report
from records_fixtures import make_cores, record, two_commit_repo, write_archive

OLD_PATH = {"clock": "clk", "slack_ns": 0.25, "delay_ns": 6.7, "logic_levels": 3,
            "startpoint": "$flatten\\port0_inst.$auto$ff.cc:337:slice$1/Q (FDRE)",
            "endpoint": "port0_inst.acc[3] [$flatten\\port0_inst.$auto$ff.cc:337:slice$2]/D (FDRE)",
            "cells": [{"name": "$flatten\\port0_inst.$auto$ff.cc:337:slice$1", "type": "FDRE", "delay_ns": 0.4},
                      {"name": "l1", "type": "LUT6", "delay_ns": 1.0}, {"name": "c1", "type": "CARRY4", "delay_ns": 1.0},
                      {"name": "c2", "type": "CARRY4", "delay_ns": 1.0},
                      {"name": "$flatten\\port0_inst.$auto$ff.cc:337:slice$2", "type": "FDRE", "delay_ns": 0.1}]}
NEW_PATH = {**OLD_PATH, "startpoint_rtl": {"name": "port0_inst.x_q[2]", "source": "kabe_int8_engine.v:142"},
            "endpoint_rtl": {"name": "port0_inst.p_reg[15]", "source": "kabe_int8_engine.v:171"}}
NEW_LINE = ("from port0_inst.x_q[2] (kabe_int8_engine.v:142) through 3 logic levels (LUT6, CARRY4 x2) to "
            "port0_inst.p_reg[15] (kabe_int8_engine.v:171)")


def _two_builds(tmp_path):
    repo, shas = two_commit_repo(tmp_path)
    reports = tmp_path / "reports"
    for sha, cp in ((shas[0], OLD_PATH), (shas[1], NEW_PATH)):
        rec = record(sha)
        rec["timing"]["critical_path"] = cp
        metrics.validate(rec)  # the new fields are in the schema; the old record without them loads too
        write_archive(reports, rec)
    return repo, reports, make_cores(tmp_path)


def test_diff_names_each_critical_path_in_rtl_terms(tmp_path):
    repo, reports, cores = _two_builds(tmp_path)
    md = diff.render(None, None, reports, repo, cores)
    assert f"- stage4 open: {NEW_LINE}; before: from an unnamed register (port0_inst.$auto$ff.cc:337:slice$1) " \
           f"through 3 logic levels (LUT6, CARRY4 x2) to port0_inst.acc[3]\n" in md
    assert md.index("Critical paths") > md.index("| stage4 | open | gate |")


def test_page_names_the_latest_critical_path_in_rtl_terms(tmp_path):
    repo, reports, cores = _two_builds(tmp_path)
    page = report.build_report(reports, repo, cores, sections=()).read_text()
    assert '<ul class="critical-paths"><li data-design="stage4" data-flow="open"><b>stage4</b> (open): ' \
           f"{NEW_LINE}</li></ul>" in page


def test_summary_prints_the_rtl_line():
    rec = record("a" * 40)
    rec["timing"]["critical_path"] = NEW_PATH
    rec["gate"]["checks"] = []
    out = io.StringIO()
    summary.render(rec, Console(file=out, width=100, color_system=None), "pass")
    assert f"critical path: {NEW_LINE}" in out.getvalue()
    assert "$auto$" not in out.getvalue()


def test_summary_names_every_clock_of_a_design_with_several():
    rec = record("a" * 40)
    rec["gate"]["checks"] = []
    one = io.StringIO()
    summary.render(rec, Console(file=one, width=120, color_system=None), "pass")
    assert "xc7z020clg400-1 @ 7.000 ns" in one.getvalue()
    rec["timing"]["clocks"] = [{"name": "i_clk", "period_ns": 10.0}, {"name": "i_rclk", "period_ns": 8.0}]
    two = io.StringIO()
    summary.render(rec, Console(file=two, width=120, color_system=None), "pass")
    assert "xc7z020clg400-1 @ i_clk 10.000 ns, i_rclk 8.000 ns" in two.getvalue()


def test_summary_names_outputs_nobody_compares():
    """Outputs in no stream or status (sim.not_checked) are in the build's table too, so a cache hit,
    which runs no simulation and prints no simulation line, still says them."""
    rec = record("a" * 40)
    rec["gate"]["checks"] = []
    rec["sim"] = {"rows_checked": 256, "mismatches": 0, "beats_per_cycle": 1.0,
                  "not_checked": ["m2_axis_tdata", "m2_axis_tvalid", "beats_seen"]}
    out = io.StringIO()
    summary.render(rec, Console(file=out, width=160, color_system=None), "pass")
    assert "not checked" in out.getvalue() and "m2_axis_tdata, m2_axis_tvalid, beats_seen" in out.getvalue()


def test_summary_shows_the_second_simulation_with_synthesis_defined():
    rec = record("a" * 40)
    rec["gate"]["checks"] = []
    rec["sim"] = {"rows_checked": 64, "mismatches": 0, "beats_per_cycle": 1.0,
                  "synthesis_view": {"passed": False, "mismatches": 64, "problems": [], "places": ["top.v:7"]}}
    out = io.StringIO()
    summary.render(rec, Console(file=out, width=160, color_system=None), "fail")
    assert "... with SYNTHESIS" in out.getvalue() and "64 mismatching beat(s) (fails)" in out.getvalue()
