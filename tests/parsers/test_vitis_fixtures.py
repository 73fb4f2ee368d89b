"""Every real Vitis HLS / cosim / v++ link file in ../shared/fixtures/vitis-hls and vitis-link: parsed
exactly to the values read by eye in each folder's expected.json, and judged by the gate: the files
with a timing or II violation fail, the met ones pass (issue 42). Also every truncation refused."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from kabe.parsers import ReportError, vitis_detect
from kabe.parsers.detect import parse_file
from kabe.rules import hls_gate
from tests.parsers.shared_reports import SHARED, names, or_skip, shared_dir

FOLDERS = ("vitis-hls", "vitis-link")
SKIP = {"SOURCES.md", "expected.json"}

# The verdict each file must get, from its expected.json facts (timing_met, Issue Type, II over target);
# None: a kind the gate does not judge alone (exit 2).
VERDICTS = {
    "hashi0203_gaussian_2020.2_zu7ev_csynth.rpt": "pass",  # printed -0.87 is 2020.2's inverted sign: met
    "hashi0203_gaussian_2020.2_zu7ev_csynth.xml": "pass",
    "boyiwei_sort_2022.2_u280_dataflow_csynth.rpt": "pass",
    "kangaroo_systolic_2023.2_vu11p_undef_csynth.xml": "fail",  # 7.674 + 2.7 > 10
    "kangaroo_systolic_2023.2_vu11p_undef_csynth.rpt": "fail",  # Issue Type Timing, slack -0.37
    "mukul_matrixmul_vhls2019.2_a35t_csynth.rpt": "pass",
    "skkwan_bjets_vhls2018.2_vu9p_csynth.rpt": "pass",
    "deck11_wrr_2024.1_7z020_csynth.rpt": "fail",  # loop with Issue Type II (II 21)
    "deck11_wrr_2024.1_7z020_solution1.log": "fail",  # last run: Target II = NA, Final II = 21
    "taise_topk_2022.1_kv260_csynth.rpt": "pass",
    "bojan_ma_2020.2_a200t_csynth.rpt": "pass",  # printed -0.08 in 2020.2: met
    "bojan_ma_2020.2_a200t_ma_csynth.xml": "pass",
    "bojan_ma_cosim.rpt": "pass",
    "zakk_partition_2020.2_vu11p_csynth.rpt": "fail",  # printed +4.82 in 2020.2: 4.82 ns over
    "risamp_srcnn_2023.1_kv260_golden_solution1.log": "pass",  # its II violations are in earlier runs
    "kmisimn76_sparseaccel_2020.1_u200_iiviol_Conv_sysarr_dbbuf_csynth.rpt": "fail",  # II 25 and 98 vs 1
    "kmisimn76_sparseaccel_2020.1_u200_csynth.xml": "fail",  # PipelineII 25/98 with no target: default 1
    "kmisimn76_sparseaccel_cosim.rpt": "pass",
    "uniquemr_u96_2020.2_link_v++.log": "pass",
    "uniquemr_u96_2020.2_vpl_runme.log": "pass",
    "uniquemr_u96_2020.2_impl_timing_summary_routed.rpt": "pass",  # kabe's Vivado gate
    "uniquemr_u96_2020.2_kernel.xclbin.info": None,
    "uniquemr_u96_2020.2_system_estimate_kernel.xtxt": None,
    "uniquemr_u96_2020.2_kernel_util_routed.rpt": None,
    "xrt_valid_vck190.xclbin": None,
}


def _files() -> list:
    return [pytest.param(f, n, id=n) for f in FOLDERS for n in names(f) if n not in SKIP]


def _vitis_files() -> list:
    """The files a Vitis reader reads (the routed timing summary beside them is the Vivado parsers')."""
    return [pytest.param(f, n, id=n) for f in FOLDERS for n in names(f)
            if n not in SKIP and vitis_detect.sniff(SHARED / "fixtures" / f / n) is not None]


def _expected(folder: str) -> dict:
    return json.loads((shared_dir(folder) / "expected.json").read_text())


def _csynth_expect(e: dict, rec: dict) -> list[tuple[str, object, object]]:
    """(what, expected, got) for a csynth record."""
    out = [("top", e["top"], rec["top"]), ("part", e["part"], rec["part"])]
    ver = e.get("version")
    if ver:
        out.append(("version", ver, rec["version"]))
    for k in ("target_clock", "uncertainty", "estimated_clock"):
        if k in e:
            out.append((k, e[k], rec[f"{k}_ns"]))
    for k in ("latency_min", "latency_max", "interval_min", "interval_max", "pipeline_type"):
        if k in e:
            out.append((k, e[k], rec[k]))
    if "latency_cycles" in e:
        out += [("latency", e["latency_cycles"], rec["latency_max"]), ("interval", e["interval"], rec["interval_max"]),
                ("pipelined", e["pipelined"], rec["pipeline_type"]), ("slack_printed", e["slack_printed"],
                                                                      rec["slack_printed"])]
        if "issue_type" in e:
            out.append(("issue_type", e["issue_type"], rec["issue_type"]))
        for k in ("bram", "dsp", "ff", "lut", "uram"):
            out.append((k, e[k], rec["resources"]["bram_18k" if k == "bram" else k]))
    for k, key in (("bram_18k", "bram_18k"), ("dsp", "dsp"), ("dsp48e", "dsp"), ("ff", "ff"), ("lut", "lut"),
                   ("uram", "uram")):
        if k in e and "latency_cycles" not in e:
            out.append((k, e[k], rec["resources"][key]))
        if f"avail_{k}" in e:
            out.append((f"avail_{k}", e[f"avail_{k}"], rec["available"][key]))
    if "timing_met" in e and rec["slack_ns"] is not None:
        out.append(("timing_met", e["timing_met"], rec["slack_ns"] >= 0))
    if "flow_target" in e:
        out.append(("flow_target", e["flow_target"], rec["flow_target"]))
    loops = {lp["name"]: lp for lp in rec["loops"]}
    for el in e.get("loops", []) + e.get("loops_sample", []):
        lp = loops.get(el["name"])
        out.append((f"loop {el['name']}", True, lp is not None))
        if lp is None:
            continue
        for k, key in (("latency", "latency_max"), ("latency_min", "latency_min"), ("latency_max", "latency_max"),
                       ("iter_latency", "iteration_latency"), ("ii", "ii"), ("ii_achieved", "ii"),
                       ("ii_target", "ii_target"), ("trip", "trip_count"), ("pipelined", "pipelined"),
                       ("issue_type", "issue_type"), ("parent", "parent")):
            if k in el:
                out.append((f"loop {el['name']} {k}", el[k], lp[key]))
    if "count_issue_II_rows" in e:
        out.append(("II rows", e["count_issue_II_rows"], sum(i["issue_type"] == "II" for i in rec["issues"])))
    if "loop_pipeline_ii" in e:
        for n, ii in e["loop_pipeline_ii"].items():
            out.append((f"loop {n} ii", ii, loops[n]["ii"]))
    return out


def _log_expect(e: dict, rec: dict) -> list:
    out = [("version", e["version"], rec["version"])]
    for k in ("880", "885", "871", "1470"):
        out.append((f"HLS 200-{k}", e[f"count_HLS_200-{k}"], rec["counts"].get(f"HLS 200-{k}", 0)))
    if "first_200-871" in e:
        f = e["first_200-871"]
        v = rec["timing_violations"][0]  # the first 200-871 of the whole log (any run)
        out += [("871 estimated", f["estimated"], v["estimated_ns"]), ("871 target", f["target"], v["target_ns"]),
                ("871 uncertainty", f["uncertainty"], v["uncertainty_ns"]), ("871 budget", f["budget"], v["budget_ns"])]
    if "ii_worse_than_target" in e:
        got = [{"loop": r["loop"], "target_ii": r["target_ii"], "final_ii": r["final_ii"], "depth": r["depth"]}
               for r in rec["ii_worse_than_target"]]
        out.append(("ii_worse_than_target", e["ii_worse_than_target"], got))
    if "pipelining_results" in e:
        got = [{"loop": r["loop"], "target_ii": r["target_ii"], "final_ii": r["final_ii"], "depth": r["depth"]}
               for r in rec["pipelining"]]
        out.append(("pipelining_results", e["pipelining_results"], got))
    return out


def _cosim_expect(e: dict, rec: dict) -> list:
    out = []
    for lang in ("verilog", "vhdl"):
        for k, v in e[lang].items():
            out.append((f"{lang} {k}", v, rec["rtl"][lang][k]))
    return out


def _link_expect(name: str, e: dict, rec: dict) -> list:
    k = e["kind"]
    if k == "vpp_link_log":
        return [("version", e["version"], rec["version"]), ("platform", e["platform_xpfm"], rec["platform"]),
                ("target", e["target"], rec["target"]), ("errors", e["errors"], rec["errors"]),
                ("critical_warnings", e["critical_warnings"], rec["critical_warnings"]),
                ("warnings", e["warnings"], rec["warnings"]), ("vpl_status", e["vpl_status"], rec["vpl_status"]),
                ("scaled", e["scaled"], rec["scaled"]), ("VPL 60-732", e["vpl_60_732"], len(rec["scaled_clocks"])),
                ("elapsed", e["total_elapsed"], rec["total_elapsed"]),
                ("xclbin bytes", e["xclbin_bytes_written"], rec["xclbin_bytes_written"])]
    if k == "vpl_runme_log":
        return [("vivado", e["vivado"], rec["version"]), ("scaled", e["scaled"], rec["scaled"]),
                ("VPL 60-732", e["vpl_60_732_timing"], len(rec["scaled_clocks"]))]
    if k == "xclbin_info":
        return [("xrt", e["xrt_build_version"], rec["xrt_build_version"]), ("by", e["generated_by"], rec["generated_by"]),
                ("kernels", e["kernels"], rec["kernels"]), ("content", e["content"], rec["content"]),
                ("uuid", e["uuid"], rec["uuid"]), ("vbnv", e["platform_vbnv"], rec["platform_vbnv"]),
                ("device", e["fpga_device"], rec["fpga_device"]), ("clocks", e["clocks"], rec["clocks_note"]),
                ("memory", e["memory_used"], rec["memory_used"])]
    if k == "system_estimate":
        return [("version", e["version"], rec["version"]), ("design", e["design"], rec["design"]),
                ("target clock", e["target_clock_mhz"], rec["target_clock_mhz"]), ("kernels", e["kernels"], rec["kernels"]),
                ("timing", e["timing"], [{"module": t["module"], "target_mhz": t["target_mhz"],
                                          "estimated_mhz": t["estimated_mhz"]} for t in rec["timing"]]),
                ("latency", e["latency"], rec["latency"]), ("area", e["area"], rec["area"])]
    if k == "timing_summary":
        return [("wns", e["wns"], rec["wns_ns"]), ("tns", e["tns"], rec["tns_ns"]), ("whs", e["whs"], rec["whs_ns"]),
                ("ths", e["ths"], rec["ths_ns"]), ("wpws", e["wpws"], rec["wpws_ns"]), ("tpws", e["tpws"], rec["tpws_ns"])]
    if k == "accelerator_utilization":
        kern = rec["rows"][e["kernel"]]
        return [("version", e["version"], rec["version"]), ("device", e["device"], rec["device"]),
                ("kernel", [e["kernel"]], rec["kernels"]), ("lut", e["lut"], kern["lut"]),
                ("lut_as_mem", e["lut_as_mem"], kern["lut_as_mem"]), ("reg", e["reg"], kern["reg"]),
                ("bram", e["bram"], kern["bram"]), ("dsp", e["dsp"], kern["dsp"]),
                ("platform lut", e["platform_lut"], rec["rows"]["Platform"]["lut"]),
                ("budget lut", e["user_budget_lut"], rec["rows"]["User Budget"]["lut"])]
    if k == "xclbin_binary":
        return [("bytes", e["bytes"], rec["bytes"]), ("vbnv", e["platform_vbnv"], rec["platform_vbnv"]),
                ("uuid", e["xclbin_uuid"], rec["uuid"]), ("unique_id", e["unique_id"], rec["unique_id"]),
                ("timestamp", e["timestamp"], rec["timestamp"]), ("sections", e["num_sections"], rec["num_sections"]),
                ("section 0", e["sections"][0], {"kind": rec["sections"][0]["kind"], "name": rec["sections"][0]["name"],
                                                 "offset": hex(rec["sections"][0]["offset"]),
                                                 "size": hex(rec["sections"][0]["size"]),
                                                 "m_count": rec["debug_ip_count"]}),
                ("clock topology", e["has_clock_freq_topology"], rec["has_clock_freq_topology"])]
    raise AssertionError(f"{name}: expected kind {k} not covered")


def expectations(folder: str, name: str, parsed: dict) -> list:
    e = _expected(folder)[name]
    rec = parsed["record"]
    if folder == "vitis-link":
        return _link_expect(name, e, rec)
    if e["kind"] == "vitis_hls_log":
        return _log_expect(e, rec)
    if e["kind"] == "cosim_rpt":
        return _cosim_expect(e, rec)
    return _csynth_expect(e, rec)


@pytest.mark.parametrize("folder,name", or_skip(_files(), "vitis-hls", arity=2))
def test_parsed_exactly_as_read_by_eye(folder, name):
    parsed = parse_file(shared_dir(folder) / name)
    wrong = [(what, exp, got) for what, exp, got in expectations(folder, name, parsed) if exp != got]
    assert not wrong, f"{name}: " + "; ".join(f"{w}: expected {e!r}, got {g!r}" for w, e, g in wrong)


@pytest.mark.parametrize("folder,name", or_skip(_files(), "vitis-hls", arity=2))
def test_gate_verdict(folder, name):
    assert name in VERDICTS, f"{name}: a fixture without an expected verdict in this test"
    path = shared_dir(folder) / name
    r = subprocess.run([sys.executable, "-m", "kabe", "gate", str(path)], capture_output=True, text=True)
    want = VERDICTS[name]
    if want is None:
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    else:
        assert r.returncode == (0 if want == "pass" else 1), f"{name}: rc {r.returncode}\n{r.stderr}"


def _truncations(data: bytes) -> list[int]:
    n = len(data)
    step = max(1, n // 60)  # ~60 cut points per file, plus the tail's last bytes
    return sorted(set(list(range(1, n - 1, step)) + list(range(max(1, n - 40), n - 1))))


@pytest.mark.parametrize("folder,name", or_skip(_vitis_files(), "vitis-hls", arity=2))
def test_every_truncation_refused_or_not_passed(folder, name, tmp_path):
    """A file cut short is refused (ReportError, one line) or, when the cut leaves a whole readable
    file behind (it ends exactly at a line the format may end on), never judged better than the
    whole file: no cut passes a file whose whole fails."""
    src = shared_dir(folder) / name
    kind = vitis_detect.sniff(src)
    data = src.read_bytes()
    whole = hls_gate.evaluate(kind, vitis_detect.parse_path(src)["record"]).passed if kind in vitis_detect.GATED else None
    accepted = []
    for cut in _truncations(data):
        p = tmp_path / name
        p.write_bytes(data[:cut])
        try:
            parsed = vitis_detect.parse_path(p)
        except ReportError as e:
            assert "\n" not in str(e) and str(p) in str(e)
            continue
        accepted.append(cut)
        if kind in vitis_detect.GATED and parsed["kind"] in vitis_detect.GATED and whole is False:
            assert not hls_gate.evaluate(parsed["kind"], parsed["record"]).passed, f"{name} cut at {cut} passes"
    # a cut inside the last line is refused; an HLS log has no end line (what is judged is its last
    # csynth run, which must finish), so only the cuts before that run's end are refused there
    if kind != "vitis_hls_log":
        p = tmp_path / name
        p.write_bytes(data.rstrip()[:-3])
        with pytest.raises(ReportError):
            vitis_detect.parse_path(p)
    else:
        text = data.decode("utf-8", "replace")
        end = text.rfind("Finished Command csynth_design")
        p = tmp_path / name
        p.write_bytes(data[:len(text[:end].encode())])
        with pytest.raises(ReportError):
            vitis_detect.parse_path(p)


_NUMBER = __import__("re").compile(r"(?<=\|)( *)(\d+)(?=\|)")


@pytest.mark.parametrize("folder,name", or_skip([p for p in _vitis_files() if p.values[1].endswith("csynth.rpt")
                                                 or p.values[1].endswith("cosim.rpt")], "vitis-hls", arity=2))
def test_a_damaged_number_is_refused_never_read_as_zero(folder, name, tmp_path):
    """Each count cell of the first table rows turned into text: refused in one line, or (a cell
    kabe does not read) the same verdict as the whole file; never a pass of a failing file."""
    src = shared_dir(folder) / name
    kind = vitis_detect.sniff(src)
    text = src.read_bytes().decode("utf-8", "replace")
    whole = hls_gate.evaluate(kind, vitis_detect.parse_path(src)["record"]).passed
    matches = list(_NUMBER.finditer(text))[:40]
    assert matches
    refused = 0
    for m in matches:
        p = tmp_path / name
        p.write_text(text[:m.start(2)] + "x" * len(m.group(2)) + text[m.end(2):], newline="")
        try:
            got = vitis_detect.parse_path(p)
        except ReportError as e:
            assert "\n" not in str(e)
            refused += 1
            continue
        assert whole or not hls_gate.evaluate(kind, got["record"]).passed
    assert refused, f"{name}: no damaged number refused"


@pytest.mark.parametrize("folder,name", or_skip([p for p in _vitis_files() if p.values[1].split(".")[-1] != "xclbin"],
                                                "vitis-hls", arity=2))
def test_crlf_reads_the_same(folder, name, tmp_path):
    src = shared_dir(folder) / name
    data = src.read_bytes().replace(b"\r\n", b"\n")
    a, b = tmp_path / "lf" / name, tmp_path / "crlf" / name
    a.parent.mkdir()
    b.parent.mkdir()
    a.write_bytes(data)
    b.write_bytes(data.replace(b"\n", b"\r\n"))
    ra, rb = vitis_detect.parse_path(a)["record"], vitis_detect.parse_path(b)["record"]
    strip = lambda r: json.loads(json.dumps(r).replace(str(a), "F").replace(str(b), "F"))  # noqa: E731
    assert strip(ra) == strip(rb)
