"""The parsers on REAL Vivado reports (values read off each report by eye). Those reports are not
in this repository: they live in ../shared/fixtures/vivado-reports beside the repo checkout
(SOURCES.md there names each one's origin; see shared_reports.py). Without that directory every
test here skips, with the reason tests/skip_allowlist.txt allows."""

from pathlib import Path

import pytest

from shared_reports import shared_file

from kabe.rules.gate import evaluate
from kabe.parsers import ReportError
from kabe.parsers import vivado_timing_paths as tp
from kabe.parsers import vivado_timing_summary as ts
from kabe.parsers import vivado_utilization as vu
from kabe.parsers.detect import detect, parse_file


def real(name):
    return shared_file("vivado-reports", name)


TS = {
    # name: (WNS, TNS, TNS fail, TNS total, WHS, THS, WPWS, TPWS, verdict, clocks)
    "edalize_picorv32_artix7_2019.2_top_timing_summary_routed.rpt":
        (-3.463, -4.140, 10, 2371, 0.097, 0.000, 1.370, 0.000, "not_met", [("clk", 5.0)]),
    "lakeroad_xczu3eg_timing_summary_2021.2_violated.rpt":
        (-0.333, -13.146, 57, 973, 0.082, 0.000, 2.225, 0.000, "not_met", [("clk", 5.0)]),
    "wendy5755_LAB6_7z020_ps7_timing_summary_2022.1_met.txt":
        (8.846, 0.000, 0, 12842, 0.021, 0.000, 11.250, 0.000, "met", [("clk_fpga_0", 25.0)]),
}


@pytest.mark.parametrize("name", sorted(TS))
def test_real_timing_summary(name):
    r = ts.parse_file(real(name))
    wns, tns, tf, tt, whs, ths, wpws, tpws, verdict, clocks = TS[name]
    assert (r["wns_ns"], r["tns_ns"], r["failing_endpoints"], r["total_endpoints"]) == (wns, tns, tf, tt)
    assert (r["whs_ns"], r["ths_ns"], r["wpws_ns"], r["tpws_ns"]) == (whs, ths, wpws, tpws)
    assert r["verdict"] == verdict
    assert [(c["name"], c["period_ns"]) for c in r["clocks"]] == clocks
    assert r["critical_path"]["slack_ns"] == wns
    v = evaluate(r, None)
    assert not any("disagree" in f for f in v.failures)
    assert v.passed is (verdict == "met" and r["no_clock"] == 0)
    assert detect(real(name).read_text()) == "vivado_timing_summary"


def test_real_critical_paths():
    r = ts.parse_file(real("lakeroad_xczu3eg_timing_summary_2021.2_violated.rpt"))
    cp = r["critical_path"]
    assert (cp["startpoint"], cp["endpoint"]) == ("fsm2/out_reg[0]/C", "mul_out2/out_reg[31]/D")
    assert (cp["delay_ns"], cp["logic_delay_ns"], cp["route_delay_ns"], cp["logic_levels"]) == (
        5.325, 3.776, 1.549, 15)
    assert sum(1 for c in cp["cells"] if c["type"] == "CARRY8") == 2
    r = ts.parse_file(real("edalize_picorv32_artix7_2019.2_top_timing_summary_routed.rpt"))
    cp = r["critical_path"]
    assert (cp["endpoint"], cp["delay_ns"], cp["logic_levels"], cp["clock_path_skew_ns"]) == (
        "do", 4.024, 1, -4.403)


def test_real_ps7_check_timing_and_unconstrained():
    r = ts.parse_file(real("wendy5755_LAB6_7z020_ps7_timing_summary_2022.1_met.txt"))
    assert r["check_timing"]["no_clock"] == 2782
    assert r["unconstrained_endpoints"] == 2871
    assert r["other_path_groups"][0]["path_group"] == "**async_default**"
    assert r["other_path_groups"][0]["wns_ns"] == 18.211
    assert len(r["unconstrained_paths"]) == 3
    # a met verdict, yet 2782 unclocked register pins: kabe's one gate must not pass this...
    v = evaluate(r, None)
    assert not v.passed and any("2782 register/latch pins have no clock" in f for f in v.failures)
    # ...unless the design waives it with a written reason, which the verdict then carries
    w = evaluate(r, None, waivers={"no_clock": "Caravel's management SoC pins, clocked outside the PL"})
    assert w.passed and w.waivers == {"no_clock": "Caravel's management SoC pins, clocked outside the PL"}


UT = {
    # name: (LUT, FF, DSP, BRAM tiles, RAMB36, RAMB18, CARRY4, F7, F8, SRL)
    "edalize_picorv32_artix7_2019.2_top_utilization_placed.rpt": (1009, 920, 0, 0, 0, 0, 83, 0, 0, 7),
    # LUT as Memory 0, its sub-rows left out: no shift register (SRLs are LUT as Memory)
    "rogerpease_7z020_utilization_synth_2020.2.rpt": (8833, 2369, 0, 0, 0, 0, 11, 64, 0, 0),
    "wendy5755_LAB6_7z020_utilization_placed_2022.1.rpt": (5417, 6173, 0, 10, 7, 6, 236, 170, 47, 170),
}


@pytest.mark.parametrize("name", sorted(UT))
def test_real_utilization(name):
    r = vu.parse_file(real(name))
    got = tuple(r[k] for k in ("lut", "ff", "dsp", "bram36_equiv", "ramb36", "ramb18", "carry4",
                               "muxf7", "muxf8", "srl"))
    assert got == UT[name]
    assert r["carry_type"] == "CARRY4"
    assert detect(real(name).read_text()) == "vivado_utilization"


def test_real_report_timing():
    (p,) = tp.parse_file(real("rogerpease_7z020_report_timing_2020.2.rpt"))
    assert (p["slack_ns"], p["status"], p["requirement_ns"], p["data_path_delay_ns"],
            p["logic_delay_ns"], p["route_delay_ns"], p["logic_levels"]) == (
        0.948, "MET", 10.0, 8.670, 2.469, 6.201, 9)
    assert (p["clock_path_skew_ns"], p["clock_uncertainty_ns"], p["path_group"]) == (
        -0.145, 0.035, "sys_clk_100mhz")
    assert p["logic_level_cells"] == {"CARRY4": 2, "LUT3": 1, "LUT4": 1, "LUT6": 5}
    assert parse_file(real("rogerpease_7z020_report_timing_2020.2.rpt"))["kind"] == "vivado_timing"


def test_real_timing_summary_truncated_at_every_line():
    name = "lakeroad_xczu3eg_timing_summary_2021.2_violated.rpt"
    text = real(name).read_text()
    full = ts.parse(text, name)
    keys = ("wns_ns", "tns_ns", "whs_ns", "ths_ns", "wpws_ns", "tpws_ns", "verdict_line",
            "clocks", "critical_path", "check_timing")
    pos = 0
    for ln in text.split("\n")[:-1]:
        pos += len(ln) + 1
        for off in (pos, pos - 1 - len(ln) // 2):
            try:
                r = ts.parse(text[:off], f"{name}[:{off}]")
            except ReportError:
                continue
            assert all(r[k] == full[k] for k in keys), f"cut at {off}"
