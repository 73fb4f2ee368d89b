"""The Vitis HLS / cosim / v++ link readers and their gate on small texts written from the formats
(no fixtures needed): the traps (2020.2's inverted slack sign, `?` latency, a scaled kernel
clock), each rule broken on purpose and seen to fail, and bad input refused in one line."""

from __future__ import annotations

import subprocess
import sys

import pytest

from kabe.parsers import ReportError, vitis_detect
from kabe.parsers import vitis_cosim, vitis_hls_csynth, vitis_hls_log, vitis_link_log, xclbin
from kabe.rules import gate, hls_gate
from tests.parsers import xclbin_bytes

OLD_RPT = """

================================================================
== Vivado HLS Report for 'top'
================================================================
* Date:           Mon Jan  1 00:00:00 2018

* Version:        2017.4 (Build 2086221 on Fri Dec 15 21:13:33 MST 2017)
* Project:        p
* Solution:       solution1
* Product family: zynq
* Target device:  xc7z020clg400-1


================================================================
== Performance Estimates
================================================================
+ Timing (ns): 
    * Summary: 
    +--------+-------+----------+------------+
    |  Clock | Target| Estimated| Uncertainty|
    +--------+-------+----------+------------+
    |ap_clk  |  10.00|  {est}|        1.25|
    +--------+-------+----------+------------+

+ Latency (clock cycles): 
    * Summary: 
    +-----+-----+-----+-----+---------+
    |  Latency  |  Interval | Pipeline|
    | min | max | min | max |   Type  |
    +-----+-----+-----+-----+---------+
    |    ?|    ?|    ?|    ?|   none  |
    +-----+-----+-----+-----+---------+

    + Detail: 
        * Instance: 
        N/A

        * Loop: 
        +----------+-----+-----+----------+-----------+-----------+------+----------+
        |          |  Latency  | Iteration|  Initiation Interval  | Trip |          |
        | Loop Name| min | max |  Latency |  achieved |   target  | Count| Pipelined|
        +----------+-----+-----+----------+-----------+-----------+------+----------+
        |- Loop 1  |    ?|    ?|         6|          {ii}|          1|     ?|    yes   |
        |- Loop 2  |   40|   40|        10|          -|          -|     4|    no    |
        | + Loop 2.1|    8|    8|         2|          1|          1|     8|    yes   |
        +----------+-----+-----+----------+-----------+-----------+------+----------+



================================================================
== Utilization Estimates
================================================================
* Summary: 
+-----------------+---------+-------+--------+-------+
|       Name      | BRAM_18K| DSP48E|   FF   |  LUT  |
+-----------------+---------+-------+--------+-------+
|Register         |        -|      -|     100|      -|
+-----------------+---------+-------+--------+-------+
|Total            |        2|      3|     100|    200|
+-----------------+---------+-------+--------+-------+
|Available        |      280|    220|  106400|  53200|
+-----------------+---------+-------+--------+-------+



================================================================
== Interface
================================================================
* Summary: 
+---------+-----+-----+------------+--------------+--------------+
| RTL Ports | Dir | Bits|  Protocol  | Source Object|    C Type    |
+---------+-----+-----+------------+--------------+--------------+
|ap_clk   |  in |    1| ap_ctrl_hs |      top     | return value |
+---------+-----+-----+------------+--------------+--------------+
"""

SUMMARY_RPT = """
================================================================
== Synthesis Summary Report of 'k'
================================================================
+ General Information: 
    * Date:           Wed Mar 31 17:51:48 2021
    * Version:        {ver} (Build 1 on x)
    * Project:        p
    * Solution:       solution1 (Vivado IP Flow Target)
    * Product family: zynq
    * Target device:  xc7z020-clg400-1
    

+ Performance & Resource Estimates: 
    
    PS: '+' for module; 'o' for loop; '*' for dataflow
    +--------+------+-------+---------+--------+----------+---------+------+----------+------+----+------+------+-----+
    | Modules| Issue|       | Latency | Latency| Iteration|         | Trip |          |      |    |      |      |     |
    | & Loops| Type | Slack | (cycles)|  (ns)  |  Latency | Interval| Count| Pipelined| BRAM | DSP|  FF  |  LUT | URAM|
    +--------+------+-------+---------+--------+----------+---------+------+----------+------+----+------+------+-----+
    |+ k     |     -|  {slack}|       10| 100.000|         -|       11|     -|        no|     -|   -|    50|    60|    -|
    | o L1   |     -|   7.30|        8|  80.000|         2|        1|     8|       yes|     -|   -|     -|     -|    -|
    +--------+------+-------+---------+--------+----------+---------+------+----------+------+----+------+------+-----+
"""


def _verdict(kind, rec, **kw):
    return hls_gate.evaluate(kind, rec, **kw)


def test_old_layout_question_marks_are_undef_and_ii_over_target_fails():
    rec = vitis_hls_csynth.parse(OLD_RPT.format(est="8.000", ii="2"), "t.rpt")
    assert rec["tool"] == "Vivado HLS" and rec["version"] == "2017.4"
    assert rec["latency_min"] == rec["latency_max"] == rec["interval_max"] == "undef"
    assert rec["resources"] == {"bram_18k": 2, "dsp": 3, "ff": 100, "lut": 200, "uram": None}
    loops = {lp["name"]: lp for lp in rec["loops"]}
    assert loops["Loop 1"]["trip_count"] == "undef" and loops["Loop 1"]["ii"] == 2
    assert loops["Loop 2.1"]["parent"] == "Loop 2"
    v = _verdict("vitis_hls_csynth_rpt", rec)
    assert not v.passed and any("Loop 1" in f and "target 1" in f for f in v.failures)
    ok = vitis_hls_csynth.parse(OLD_RPT.format(est="8.000", ii="1"), "t.rpt")
    assert _verdict("vitis_hls_csynth_rpt", ok).passed


def test_estimate_plus_uncertainty_over_target_fails_even_under_target():
    # 8.80 < 10 but 8.80 + 1.25 > 10: the HLS budget is target - uncertainty
    rec = vitis_hls_csynth.parse(OLD_RPT.format(est="8.800", ii="1"), "t.rpt")
    v = _verdict("vitis_hls_csynth_rpt", rec)
    assert not v.passed and "estimate" in v.failures[0]
    assert _verdict("vitis_hls_csynth_rpt", vitis_hls_csynth.parse(OLD_RPT.format(est="8.750", ii="1"), "t")).passed


def test_undef_latency_never_meets_a_latency_budget():
    rec = vitis_hls_csynth.parse(OLD_RPT.format(est="8.000", ii="1"), "t.rpt")
    v = _verdict("vitis_hls_csynth_rpt", rec, budgets=gate.budgets_from_mapping({"latency": {"le": 10 ** 9}}))
    assert not v.passed
    v = _verdict("vitis_hls_csynth_rpt", rec, budgets=gate.budgets_from_mapping({"dsp": {"le": 2}}))
    assert not v.passed and any("dsp" in f for f in v.failures)
    v = _verdict("vitis_hls_csynth_rpt", rec, budgets=gate.budgets_from_mapping({"dsp": {"le": 3}, "ii": {"le": 1}}))
    assert v.passed


@pytest.mark.parametrize("ver,printed,passes", [("2020.2", "-0.50", True), ("2020.2", "0.50", False),
                                                ("2021.1", "-0.50", False), ("2023.2", "0.50", True)])
def test_2020_2_prints_the_slack_sign_inverted(ver, printed, passes):
    rec = vitis_hls_csynth.parse(SUMMARY_RPT.format(ver=ver, slack=printed.rjust(5)), "t.rpt")
    assert rec["slack_printed"] == float(printed)
    assert rec["slack_ns"] == (-float(printed) if ver == "2020.2" else float(printed))
    assert _verdict("vitis_hls_csynth_rpt", rec).passed is passes


def test_crlf_and_a_cut_table():
    text = OLD_RPT.format(est="8.000", ii="1")
    assert vitis_hls_csynth.parse(text.replace("\n", "\r\n").replace("\r\n", "\n"), "t") == vitis_hls_csynth.parse(text, "t")
    cut = text[: text.index("|Total")]
    with pytest.raises(ReportError, match="cut"):
        vitis_hls_csynth.parse(cut, "t.rpt")


XML = """<profile>
<ReportVersion><Version>2019.1</Version></ReportVersion>
<UserAssignments><Part>xc7z020clg400-1</Part><TopModelName>k</TopModelName><TargetClockPeriod>5.00</TargetClockPeriod>
<ClockUncertainty>0.62</ClockUncertainty></UserAssignments>
<PerformanceEstimates><SummaryOfTimingAnalysis><EstimatedClockPeriod>{est}</EstimatedClockPeriod></SummaryOfTimingAnalysis>
<SummaryOfOverallLatency><Best-caseLatency>3</Best-caseLatency><Worst-caseLatency>?</Worst-caseLatency>
<Interval-min>4</Interval-min><Interval-max>?</Interval-max></SummaryOfOverallLatency>
<SummaryOfLoopLatency><L1><TripCount><range><min>1</min><max>512</max></range></TripCount><Latency>30 ~ 541</Latency>
<PipelineII>{ii}</PipelineII><PipelineDepth>30</PipelineDepth></L1></SummaryOfLoopLatency></PerformanceEstimates>
<AreaEstimates><Resources><BRAM_18K>0</BRAM_18K><DSP48E>2</DSP48E><FF>10</FF><LUT>20</LUT></Resources></AreaEstimates>
</profile>"""


def test_xml_ranges_and_question_marks():
    rec = vitis_hls_csynth.parse_xml(XML.format(est="4.000", ii="1"), "c.xml")
    assert rec["latency_min"] == 3 and rec["latency_max"] == "undef" and rec["interval_max"] == "undef"
    lp = rec["loops"][0]
    assert lp["trip_count"] == {"min": 1, "max": 512} and (lp["latency_min"], lp["latency_max"]) == (30, 541)
    assert rec["resources"]["dsp"] == 2
    assert _verdict("vitis_hls_csynth_xml", rec).passed
    assert not _verdict("vitis_hls_csynth_xml", vitis_hls_csynth.parse_xml(XML.format(est="4.500", ii="1"), "c")).passed
    # no target II in an xml: an achieved II over 1 is not shown to meet its target
    assert not _verdict("vitis_hls_csynth_xml", vitis_hls_csynth.parse_xml(XML.format(est="4.000", ii="2"), "c")).passed
    for bad in (XML.format(est="4.000", ii="1")[:-40], XML.format(est="x", ii="1"),
                '<!DOCTYPE a [<!ENTITY x "y">]>' + XML.format(est="4.000", ii="1")):
        with pytest.raises(ReportError):
            vitis_hls_csynth.parse_xml(bad, "c.xml")


OLD_LOG = """****** Vivado(TM) HLS - High-Level Synthesis from C, C++ and SystemC v2018.3 (64-bit)
INFO: [HLS 200-10] Analyzing design file 'a.cpp' ...
INFO: [SCHED 204-61] Pipelining loop 'Row_Col'.
INFO: [SCHED 204-61] Pipelining result : Target II = 1, Final II = {ii}, Depth = 5.
{timing}INFO: [HLS 200-111] Finished generating all RTL models Time (s): cpu = 1
"""


def test_old_log_ii_and_timing():
    t = "WARNING: [SCHED 204-21] Estimated clock period (10.779ns) exceeds the target (target clock period: 10ns, " \
        "clock uncertainty: 1.25ns, effective delay budget: 8.75ns).\n"
    rec = vitis_hls_log.parse(OLD_LOG.format(ii=3, timing=t), "s.log")
    assert rec["tool"] == "Vivado HLS" and rec["version"] == "2018.3"
    assert rec["last_run"]["ii_worse_than_target"][0]["loop"] == "Row_Col"
    assert rec["last_run"]["timing_violations"][0]["estimated_ns"] == 10.779
    v = _verdict("vitis_hls_log", rec)
    assert len(v.failures) == 2
    assert _verdict("vitis_hls_log", vitis_hls_log.parse(OLD_LOG.format(ii=1, timing=""), "s.log")).passed
    with pytest.raises(ReportError, match="never finishes"):
        vitis_hls_log.parse(OLD_LOG.format(ii=1, timing="").rsplit("INFO: [HLS 200-111]", 1)[0], "s.log")


def test_cosim_fail_and_unknown_status():
    text = """+----------+----------+-----------------------------------------------+
|          |          |             Latency(Clock Cycles)             |
+   RTL    +  Status  +-----------------------------------------------+
|          |          |      min      |      avg      |      max      |
+----------+----------+-----------------------------------------------+
|   Verilog|      {s}|              5|              5|              5|
+----------+----------+-----------------------------------------------+
"""
    assert vitis_cosim.parse(text.format(s="Pass"), "c")["passed"] is True
    rec = vitis_cosim.parse(text.format(s="Fail"), "c")
    assert not _verdict("vitis_cosim", rec).passed
    with pytest.raises(ReportError, match="status"):
        vitis_cosim.parse(text.format(s="Okay"), "c")


SCALED = """****** v++ v2023.2 (64-bit)
INFO: [v++ 60-895]   Target platform: /opt/xilinx/platforms/xilinx_u250_gen3x16_xdma_4_1_202210_1/x.xpfm
INFO: [v++ 60-629] Linking for hardware target
WARNING: [VPL 60-732] Link warning: One or more timing paths failed timing targets. The kernel clock frequency has been scaled down.
    Kernel clock 'ap_clk' (clk_kernel_00) of frequency 350.0 MHz automatically changed to 307.5 MHz
INFO: [v++ 60-586] Created k.xclbin
INFO: [v++ 60-791] Total elapsed time: 1h 2m 3s
"""


def test_scaled_kernel_clock_fails_unless_accepted():
    rec = vitis_link_log.parse(SCALED, "v++.log")
    s = rec["scaled_clocks"]
    assert len(s) == 1 and (s[0]["clock"], s[0]["from_mhz"], s[0]["to_mhz"]) == ("ap_clk", 350.0, 307.5)
    v = _verdict("vitis_link_log", rec)
    assert not v.passed and "350" in v.failures[0] and "307.5" in v.failures[0]
    assert _verdict("vitis_link_log", rec, link_rules=hls_gate.LinkRules(300.0)).passed
    assert not _verdict("vitis_link_log", rec, link_rules=hls_gate.LinkRules(320.0)).passed
    clean = SCALED.replace(SCALED.splitlines()[3] + "\n" + SCALED.splitlines()[4] + "\n", "")
    assert _verdict("vitis_link_log", vitis_link_log.parse(clean, "v++.log")).passed
    with pytest.raises(ReportError, match="end line"):
        vitis_link_log.parse(SCALED.rsplit("INFO: [v++ 60-791]", 1)[0], "v++.log")


def test_unscalable_clock_fails():
    text = SCALED.replace("WARNING: [VPL 60-732]", "ERROR: [VPL 101-2] design did not meet timing - One or more "
                                                   "unscalable system clocks did not meet their required target frequency.\nWARNING: [VPL 60-732]")
    assert any("VPL 101-2" in f for f in _verdict("vitis_link_log", vitis_link_log.parse(text, "l")).failures)


def test_xclbin_sections_kernels_clocks():
    data = xclbin_bytes.build(kernels=("vadd", "vmul"), clocks=(("DATA_CLK", 1, 300), ("KERNEL_CLK", 2, 500)))
    rec = xclbin.parse_bytes(data, "a.xclbin")
    assert rec["kernels"] == ["vadd", "vmul"] and rec["uuid"] == bytes(range(16)).hex()
    assert rec["clocks"] == [{"name": "DATA_CLK", "type": "DATA", "freq_mhz": 300},
                             {"name": "KERNEL_CLK", "type": "KERNEL", "freq_mhz": 500}]
    assert xclbin.kernel_clock_mhz(rec) == 500.0
    for bad in (data[:-1], data[:400], b"xclbin0\x00" + data[8:], data + b"\x00"):
        with pytest.raises(ReportError):
            xclbin.parse_bytes(bad, "a.xclbin")


def test_cli_parse_and_gate_refuse_in_one_line(tmp_path):
    p = tmp_path / "k_csynth.rpt"
    p.write_text(OLD_RPT.format(est="8.000", ii="1")[:900])
    for verb in ("parse", "gate"):
        r = subprocess.run([sys.executable, "-m", "kabe", verb, str(p)], capture_output=True, text=True)
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and str(p) in r.stderr, r.stderr
    x = tmp_path / "a.xclbin"
    x.write_bytes(xclbin_bytes.build())
    r = subprocess.run([sys.executable, "-m", "kabe", "parse", str(x)], capture_output=True, text=True)
    assert r.returncode == 0 and '"kind": "xclbin"' in r.stdout
    assert vitis_detect.sniff(x) == "xclbin"


def test_metrics_json_accepts_hls_and_link_facts():
    from kabe.records import metrics as m

    schema = m.schema()
    import jsonschema

    hls = vitis_hls_csynth.metrics(vitis_hls_csynth.parse(OLD_RPT.format(est="8.000", ii="2"), "t"))
    link = xclbin.metrics(xclbin.parse_bytes(xclbin_bytes.build(), "a"), vitis_link_log.parse(SCALED, "l"), 300.0)
    assert link["kernel_clock_mhz"] == 500.0 and link["scaled"] and link["requested_clock_mhz"] == 350.0
    sub = {"type": "object", "$defs": schema["$defs"], "properties": {"hls": schema["properties"]["hls"],
                                                                      "vitis_link": schema["properties"]["vitis_link"]}}
    jsonschema.validate({"hls": hls, "vitis_link": link}, sub)
    assert hls["latency_max"] == "undef" and hls["loops"][0]["ii"] == 2
    bad = dict(hls, latency_max=-1)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"hls": bad}, sub)


def test_metrics_rejudged_from_numbers():
    bad = vitis_hls_csynth.metrics(vitis_hls_csynth.parse(OLD_RPT.format(est="8.000", ii="2"), "t"))
    good = vitis_hls_csynth.metrics(vitis_hls_csynth.parse(OLD_RPT.format(est="8.000", ii="1"), "t"))
    assert all(c.passed for c in hls_gate.metrics_checks({"hls": good}))
    assert not all(c.passed for c in hls_gate.metrics_checks({"hls": bad}))
    x = vitis_hls_csynth.parse_xml(XML.format(est="4.000", ii="2"), "c.xml")  # xml: no target II
    assert not all(c.passed for c in hls_gate.metrics_checks({"hls": vitis_hls_csynth.metrics(x)}))
    link = xclbin.metrics(xclbin.parse_bytes(xclbin_bytes.build(), "a"), vitis_link_log.parse(SCALED, "l"))
    assert not all(c.passed for c in hls_gate.metrics_checks({"vitis_link": link}))
    assert all(c.passed for c in hls_gate.metrics_checks({"vitis_link": link}, link_rules=hls_gate.LinkRules(300.0)))
    assert hls_gate.metrics_checks({}) == []


def test_xml_takes_target_ii_from_the_rpt_beside_it(tmp_path):
    xml = tmp_path / "k_csynth.xml"
    xml.write_text(XML.format(est="4.000", ii="2").replace("<TopModelName>k<", "<TopModelName>top<")
                   .replace("<L1>", "<Loop1>").replace("</L1>", "</Loop1>"))
    alone = vitis_detect.parse_path(xml)["record"]
    assert not hls_gate.evaluate("vitis_hls_csynth_xml", alone).passed  # no target: not shown to meet it
    (tmp_path / "k_csynth.rpt").write_text(OLD_RPT.format(est="4.000", ii="2").replace("|          1|     ?|", "|          2|     ?|"))
    beside = vitis_detect.parse_path(xml)["record"]
    assert beside["targets_from"].endswith("k_csynth.rpt")
    assert [lp["ii_target"] for lp in beside["loops"] if lp["name"] == "Loop1"] == [2]
    assert hls_gate.evaluate("vitis_hls_csynth_xml", beside).passed
    (tmp_path / "k_csynth.rpt").write_text(OLD_RPT.format(est="4.000", ii="2"))  # target 1: a violation
    assert not hls_gate.evaluate("vitis_hls_csynth_xml", vitis_detect.parse_path(xml)["record"]).passed


def test_old_cosim_header_is_told_and_read(tmp_path):
    p = tmp_path / "top_cosim.rpt"
    p.write_text("""Report time       : Mon Jan  1 00:00:00 2018.
Solution          : solution1.
Simulation tool   : xsim.

+----------+----------+-----------------------------------------------+-----------------------------------------------+
|          |          |                    Latency                    |                    Interval                   |
+   RTL    +  Status  +-----------------------------------------------+-----------------------------------------------+
|          |          |      min      |      avg      |      max      |      min      |      avg      |      max      |
+----------+----------+-----------------------------------------------+-----------------------------------------------+
|      VHDL|        NA|             NA|             NA|             NA|             NA|             NA|             NA|
|   Verilog|      Pass|             10|             10|             12|             11|             11|             13|
+----------+----------+-----------------------------------------------+-----------------------------------------------+
""")
    assert vitis_detect.sniff(p) == "vitis_cosim"
    rec = vitis_detect.parse_path(p)["record"]
    assert rec["rtl"]["verilog"]["latency_max"] == 12 and rec["rtl"]["verilog"]["interval_max"] == 13
    assert rec["rtl"]["verilog"]["total_cycles"] is None and rec["passed"] is True


def test_log_violation_worded_otherwise_still_fails():
    t = "WARNING: [HLS 200-871] Estimated clock period 12.5ns is over the target 10ns.\n"
    rec = vitis_hls_log.parse(OLD_LOG.format(ii=1, timing=t), "s.log")
    assert not _verdict("vitis_hls_log", rec).passed
    t = "WARNING: [HLS 200-880] Unable to enforce a carried dependence constraint (II = 1).\n"
    assert not _verdict("vitis_hls_log", vitis_hls_log.parse(OLD_LOG.format(ii=1, timing=t), "s.log")).passed
    t = "INFO: [HLS 200-1470] Pipelining result: Target II 1 Final II 2\n"
    assert not _verdict("vitis_hls_log", vitis_hls_log.parse(OLD_LOG.format(ii=1, timing=t), "s.log")).passed


def test_a_module_marked_ii_fails_too():
    text = SUMMARY_RPT.format(ver="2023.2", slack=" 1.00").replace("|+ k     |     -|", "|+ k     |    II|")
    rec = vitis_hls_csynth.parse(text, "t.rpt")
    assert rec["issues"] == [{"row": "k", "issue_type": "II"}]
    assert not _verdict("vitis_hls_csynth_rpt", rec).passed


def test_kabe_diff_rows_show_latency_and_ii_per_loop():
    from kabe.records import hls_rows

    old = {"hls": vitis_hls_csynth.metrics(vitis_hls_csynth.parse(OLD_RPT.format(est="8.000", ii="1"), "t"))}
    new = {"hls": vitis_hls_csynth.metrics(vitis_hls_csynth.parse(
        OLD_RPT.format(est="8.000", ii="2").replace("|- Loop 2  |   40|   40|", "|- Loop 2  |   48|   48|"), "t"))}
    rows = {label: (a, b, d) for label, a, b, d in hls_rows.rows(new, old)}
    assert rows["II Loop 1 (estimate)"] == ("1", "2", "+1 (+100.0%)")
    assert rows["latency Loop 2 (estimate)"] == ("40", "48", "+8 (+20.0%)")
    assert rows["HLS latency, cycles (estimate)"] == ("undef", "undef", "0")
    assert hls_rows.rows({"timing": {}}, None) == []


def test_loop_constraints_not_satisfied_fails():
    t = "INFO: [HLS 200-790] **** Loop Constraint Status: All loop constraints were NOT satisfied.\n"
    assert not _verdict("vitis_hls_log", vitis_hls_log.parse(OLD_LOG.format(ii=1, timing=t), "s.log")).passed
    t = t.replace("were NOT satisfied", "were satisfied")
    rec = vitis_hls_log.parse(OLD_LOG.format(ii=1, timing=t), "s.log")
    assert rec["last_run"]["loop_constraints_met"] is True and _verdict("vitis_hls_log", rec).passed


def test_a_submodule_over_budget_fails():
    text = SUMMARY_RPT.format(ver="2023.2", slack=" 1.00").replace(
        "    | o L1   |     -|   7.30|", "    | + sub  |     -|  -0.20|")
    rec = vitis_hls_csynth.parse(text, "t.rpt")
    assert [m["slack_ns"] for m in rec["modules"]] == [1.0, -0.2]
    assert not _verdict("vitis_hls_csynth_rpt", rec).passed
