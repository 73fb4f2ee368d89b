"""The Vivado flow without Vivado.

Everything up to the `vivado` call runs for real (FuseSoC resolve, edalize project generation,
the generated Tcl). Vivado's side is played by STAND-INs that say so:
  * tests/standin/vivado_commands.tcl: recording procs named like Vivado's commands, so every
    Tcl file kabe wrote or edalize generated runs in plain tclsh (dry run) and the calls can be
    checked (PS7 FCLK, DMA length width, HP ports, module reference, report commands);
  * tests/standin/vivado: a `vivado` executable for edalize's Makefile that runs those scripts on
    the same procs and copies fixture reports (tests/fixtures/vivado/flow_*.rpt, Vivado's layout)
    where the hooks ask for reports, so collection, parsing, gate and archive run end to end.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from kabe import build
from kabe.project import designs
from kabe.base import provenance
from kabe.project.config import ConfigError
from kabe.flows.base import FlowError
from kabe.flows.vivado import bd_wrapper, project, tool
from kabe.flows.vivado.project import TCL_DIR
from kabe.base.paths import CORES, ROOT

STANDIN = ROOT / "tests" / "standin"
RECORDER = STANDIN / "vivado_commands.tcl"
FIXTURES = ROOT / "tests" / "fixtures" / "vivado"
TCLSH = shutil.which("tclsh")
# the Zynq-7000 (PYNQ-Z1) designs: the Versal flow has its own tests (test_vivado_versal.py), the Zynq
# UltraScale+ PS8 its own (test_vivado_ps8.py: kv260_ternary)
# (an HLS design builds with flow=vitis_hls: tests/flows/test_vitis_flows.py)
DESIGNS = sorted(p.parent.name for p in CORES.glob("*/design.yaml")
                 if designs.get(p.parent.name).board.family == "zynq-7000" and designs.get(p.parent.name).hls is None)

pytestmark = pytest.mark.skipif(TCLSH is None, reason="tclsh is needed to run the Tcl dry runs")


# ------------------------------------------------------------------------------------------------
# helpers


def tcl_list(s: str) -> list[str]:
    """Split one recorded line (a Tcl list) with tclsh itself would be slow; the recorder writes
    plain words and {braced} words only, which this handles."""
    out, i, n = [], 0, len(s)
    while i < n:
        while i < n and s[i] == " ":
            i += 1
        if i >= n:
            break
        if s[i] == "{":
            depth, j = 1, i + 1
            while j < n and depth:
                depth += {"{": 1, "}": -1}.get(s[j], 0)
                j += 1
            out.append(s[i + 1:j - 1])
            i = j
        else:
            j = s.find(" ", i)
            j = n if j < 0 else j
            out.append(s[i:j].replace("\\", ""))
            i = j
    return out


def run_tcl(body: str, cwd: Path, record: Path, setup: str = "") -> subprocess.CompletedProcess:
    script = (f"source {{{RECORDER}}}\nset ::standin::record_file {{{record}}}\n{setup}\n"
              f"if {{[catch {{{body}}} msg]}} {{ puts stderr \"TCL-ERROR: $msg\"; exit 1 }}\nexit 0\n")
    return subprocess.run([TCLSH], input=script, text=True, capture_output=True, cwd=cwd)


def calls(record: Path) -> list[list[str]]:
    return [tcl_list(ln) for ln in record.read_text().splitlines() if ln.strip()] if record.exists() else []


def props(recs) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for c in recs:
        if c[0] == "PROP":
            out.setdefault(c[1], {})[c[2]] = c[3]
    return out


class Projects(dict):
    """Each design's generated project (no Vivado), made on first use, with a fixed clean commit."""

    def __init__(self, factory):
        super().__init__()
        self.factory = factory

    def __missing__(self, name: str) -> project.Project:
        commit = provenance.Commit("0123456789abcdef0123456789abcdef01234567", False)
        self[name] = project.generate_project(designs.get(name), self.factory.mktemp(name) / "edalize",
                                             commit=commit, flow_settings=tool.settings({}))
        return self[name]


@pytest.fixture(scope="module")
def projects(tmp_path_factory) -> Projects:
    return Projects(tmp_path_factory)


@pytest.fixture()
def standin_path(monkeypatch):
    monkeypatch.setenv("PATH", f"{STANDIN}{os.pathsep}{os.environ['PATH']}")
    assert shutil.which("vivado") == str(STANDIN / "vivado")


def test_at_least_one_design():
    assert "stage4" in DESIGNS


# ------------------------------------------------------------------------------------------------
# (a) the generated project


@pytest.mark.parametrize("name", DESIGNS)
def test_generated_project_has_makefile_and_tcl(projects, name):
    p = projects[name]
    d = designs.get(name)
    for f in ("Makefile", f"{p.name}.tcl", f"{p.name}_synth.tcl", f"{p.name}_run.tcl", "kabe_settings.tcl",
              "kabe_hooks_write_bitstream_pre.tcl", "kabe_engine_bd.v"):
        assert (p.work_root / f).is_file(), f
    mk = p.makefile.read_text()
    assert f"{p.name}.bit:" in mk and "vivado -notrace -mode batch -source" in mk
    tcl = p.project_tcl.read_text()
    assert "set_property part xc7z020clg400-1 [current_project]" in tcl
    assert "set_property top kabe_bd_wrapper [current_fileset]" in tcl
    assert "link_design" not in tcl  # synth: vivado, not the yosys netlist flow
    sources = [ln for ln in tcl.splitlines() if ln.startswith("source ")]
    assert [s.split("{")[1].rstrip("}") for s in sources] == [
        str(p.settings_tcl), str(TCL_DIR / "check_vivado_version.tcl"),
        str(TCL_DIR / "pynq_z1_ps7.tcl"), str(TCL_DIR / "kabe_ps7.tcl"), str(TCL_DIR / "kabe_bd.tcl"), str(TCL_DIR / "attach_hooks.tcl"),
        str(TCL_DIR / "apply_strategies.tcl")]
    # every HDL file of the core's synth target is read, the wrapper last
    reads = [ln for ln in tcl.splitlines() if ln.startswith("read_verilog")]
    assert reads[-1].endswith(f"{{{p.wrapper}}}")
    assert any(d.name in r or "cores/" in r for r in reads)
    settings = p.settings_tcl.read_text()
    assert f"set ::kabe(ports) {d.ports}" in settings
    assert "set ::kabe(period_ns) 7.000" in settings and "set ::kabe(clock_name) clk_fpga_0" in settings
    assert "set ::kabe(usr_access) 0x00123456" in settings  # clean commit 0123456...


def test_wrapper_carries_interface_attributes(projects):
    v = projects["stage4"].wrapper.read_text()
    assert v.startswith("// Generated by kabe.flows.vivado.bd_wrapper")
    for bus in ("s0_axis", "m0_axis", "s1_axis", "m1_axis"):
        for sig in ("TDATA", "TVALID", "TREADY", "TLAST"):
            assert f'"xilinx.com:interface:axis:1.0 {bus} {sig}"' in v
    assert "ASSOCIATED_BUSIF m0_axis:m1_axis:s0_axis:s1_axis, ASSOCIATED_RESET rst" in v
    assert '"POLARITY ACTIVE_HIGH"' in v
    assert "kabe_stage4_top #(.ROW_BYTES(512)) engine_inst" in v


def test_generated_tcl_check_catches_a_wrong_top(projects, tmp_path):
    p = projects["stage4"]
    bad = tmp_path / "edalize"
    shutil.copytree(p.work_root, bad)
    text = (bad / f"{p.name}.tcl").read_text()
    (bad / f"{p.name}.tcl").write_text(text.replace("set_property top kabe_bd_wrapper", "set_property top kabe_stage4")
                                       + f"\nlink_design -top {p.name} -part xc7z020clg400-1\n")
    broken = project.Project(**{**p.__dict__, "work_root": bad})
    with pytest.raises(FlowError, match="top is"):
        project.check_generated(broken)


# ------------------------------------------------------------------------------------------------
# (b) every Tcl file: syntax, then a dry run on the recording stand-in


def all_tcl_files(projects) -> list[Path]:
    mine = sorted(TCL_DIR.glob("*.tcl")) + [RECORDER]
    projects["stage4"]
    generated = sorted(f for p in projects.values() for f in p.work_root.glob("*.tcl"))
    return mine + generated


def test_every_tcl_file_is_complete_tcl(projects, tmp_path):
    files = all_tcl_files(projects)
    assert len(files) >= 12
    checker = "\n".join(
        f"set f [open {{{f}}}]; set t [read $f]; close $f\n"
        f"if {{![info complete $t]}} {{ puts \"INCOMPLETE {f}\" }}\n" for f in files)
    out = subprocess.run([TCLSH], input=checker, text=True, capture_output=True)
    assert out.returncode == 0 and "INCOMPLETE" not in out.stdout, out.stdout + out.stderr


@pytest.mark.parametrize("name", DESIGNS)
def test_project_creation_dry_run(projects, name, tmp_path):
    """edalize's project Tcl -> settings, version check, PS7 preset, block design, hook attach."""
    p = projects[name]
    d = designs.get(name)
    rec = tmp_path / "rec.txt"
    r = run_tcl(f"source {{{p.project_tcl}}}", p.work_root, rec)
    assert r.returncode == 0, r.stdout + r.stderr
    c = calls(rec)
    pr = props(c)
    ps7 = pr["/ps7"]
    # board-less PYNQ-Z1 preset, FCLK0 from the XDC's 7.000 ns, read back
    assert ps7["CONFIG.PCW_UIPARAM_DDR_PARTNO"] == "MT41J256M16 RE-125"  # the board file (test_vivado_board.py)
    assert ps7["CONFIG.PCW_UIPARAM_DDR_BUS_WIDTH"] == "16 Bit"
    assert ps7["CONFIG.PCW_FPGA0_PERIPHERAL_FREQMHZ"] == "142.857143"
    assert ps7["CONFIG.PCW_FCLK0_PERIPHERAL_CLKSRC"] == "IO PLL"
    assert ["get_property", "CONFIG.PCW_ACT_FPGA0_PERIPHERAL_FREQMHZ", "/ps7"] in c
    assert "achieved 142.857143 MHz" in r.stdout
    # HP ports: one per design port, 64-bit
    for i in range(d.ports):
        assert ps7[f"CONFIG.PCW_USE_S_AXI_HP{i}"] == "1"
        assert ps7[f"CONFIG.PCW_S_AXI_HP{i}_DATA_WIDTH"] == "64"
        dma = pr[f"/dma{i}"]
        assert dma["CONFIG.C_SG_LENGTH_WIDTH"] == "26"
        assert dma["CONFIG.C_INCLUDE_SG"] == "0"
        assert dma["CONFIG.C_INCLUDE_MM2S"] == "1" and dma["CONFIG.C_INCLUDE_S2MM"] == "1"
        assert dma["CONFIG.C_M_AXI_MM2S_DATA_WIDTH"] == "64"
        assert dma["CONFIG.C_M_AXIS_MM2S_TDATA_WIDTH"] == "64"
        assert ["connect_bd_intf_net", f"/dma{i}/M_AXIS_MM2S", f"/engine/s{i}_axis"] in c
        assert ["connect_bd_intf_net", f"/engine/m{i}_axis", f"/dma{i}/S_AXIS_S2MM"] in c
        assert ["connect_bd_intf_net", f"/hp{i}_ic/M00_AXI", f"/ps7/S_AXI_HP{i}"] in c
        assert ["connect_bd_net", f"/engine/stat{i}_invalid", f"/stat{i}/gpio_io_i"] in c
    assert f"CONFIG.PCW_USE_S_AXI_HP{d.ports}" not in ps7
    # the engine as a module reference to the generated wrapper
    assert ["create_bd_cell", "-type", "module", "-reference", "kabe_engine_bd", "engine"] in c
    assert ["connect_bd_net", "/rst0/peripheral_reset", "/engine/rst"] in c
    # wrapper, outputs, .hwh beside the .bit (same basename)
    names = [x[0] for x in c]
    for cmd in ("assign_bd_address", "validate_bd_design", "generate_target", "make_wrapper"):
        assert cmd in names
    assert p.hwh.is_file() and p.hwh.with_suffix(".bit") == p.bit
    # impl_1 hook attached; no strategy asked for, so none set (Vivado's defaults)
    assert pr["impl_1"]["STEPS.WRITE_BITSTREAM.TCL.PRE"] == str(p.hook_tcl)
    assert "STRATEGY" not in pr["impl_1"] and "STRATEGY" not in pr.get("synth_1", {})


def test_strategies_and_directives_reach_the_runs(tmp_path):
    """[tool.kabe] vivado_impl_strategy etc. (a sweep variant's vivado.* settings) set the runs' properties."""
    fs = tool.settings({"vivado_impl_strategy": "Performance_Explore", "vivado_route_directive": "AggressiveExplore",
                        "vivado_synth_strategy": "Flow_PerfOptimized_high"})
    p = project.generate_project(designs.get("stage2"), tmp_path / "edalize",
                                 commit=provenance.Commit("0123456" + "0" * 33, False), flow_settings=fs)
    rec = tmp_path / "rec.txt"
    r = run_tcl(f"source {{{p.project_tcl}}}", p.work_root, rec)
    assert r.returncode == 0, r.stdout + r.stderr
    pr = props(calls(rec))
    assert pr["impl_1"]["STRATEGY"] == "Performance_Explore"
    assert pr["impl_1"]["STEPS.ROUTE_DESIGN.ARGS.DIRECTIVE"] == "AggressiveExplore"
    assert pr["synth_1"]["STRATEGY"] == "Flow_PerfOptimized_high"
    assert "STEPS.PLACE_DESIGN.ARGS.DIRECTIVE" not in pr["impl_1"]
    with pytest.raises(ConfigError, match="vivado_impl_strategy"):
        tool.settings({"vivado_impl_strategy": "x; exec rm"})


def test_hooks_dry_run_issue_the_reports_and_the_commit(projects, tmp_path):
    p = projects["stage4"]
    rec = tmp_path / "rec.txt"
    r = run_tcl(f"source {{{p.project_tcl}}}\nsource {{{p.hook_tcl}}}", p.work_root, rec)
    assert r.returncode == 0, r.stdout + r.stderr
    c = calls(rec)
    rts = next(x for x in c if x[0] == "report_timing_summary")
    assert "-report_unconstrained" in rts and "-max_paths" in rts and rts[rts.index("-max_paths") + 1] == "20"
    assert rts[rts.index("-delay_type") + 1] == "min_max"
    assert rts[-1] == str(p.report_dir / "timing_summary.rpt")
    utils = [x for x in c if x[0] == "report_utilization"]
    assert len(utils) == 2 and "-hierarchical" in utils[1] and "-hierarchical" not in utils[0]
    assert any(x[0] == "report_clock_interaction" for x in c)
    assert any(x[0] == "report_design_analysis" and "-logic_level_distribution" in x for x in c)
    pr = props(c)
    assert pr["design"]["BITSTREAM.CONFIG.USR_ACCESS"] == "0x00123456"
    assert pr["design"]["BITSTREAM.CONFIG.USERID"] == "0x00123456"
    assert ["get_clocks", "-quiet", "clk_fpga_0"] in c


def test_edalize_synth_run_and_netlist_tcl_dry_run(projects, tmp_path):
    p = projects["stage4"]
    rec = tmp_path / "rec.txt"
    body = (f"source {{{p.project_tcl}}}\nsource {{{p.work_root / (p.name + '_synth.tcl')}}}\n"
            f"source {{{p.work_root / (p.name + '_run.tcl')}}}\nsource {{{p.work_root / (p.name + '_netlist.tcl')}}}")
    # run mode: launch_runs impl_1 executes the attached hook and leaves a STAND-IN .bit for run.tcl to copy
    r = run_tcl(body, p.work_root, rec, setup=f"set ::standin::mode run\nset ::standin::fixtures {{{FIXTURES}}}")
    assert r.returncode == 0, r.stdout + r.stderr
    c = calls(rec)
    assert ["HOOK", "WRITE_BITSTREAM", "PRE", str(p.hook_tcl)] in c
    assert p.bit.is_file() and (p.report_dir / "timing_summary.rpt").is_file()
    assert ["launch_runs", "synth_1", "-jobs", "2"] in c
    assert ["launch_runs", "impl_1", "-to_step", "write_bitstream", "-jobs", "2"] in c


def test_fclk_that_the_ps7_cannot_make_stops_the_block_design(projects, tmp_path):
    p = projects["stage4"]
    r = run_tcl(f"source {{{p.project_tcl}}}", p.work_root, tmp_path / "rec.txt",
                setup="set ::standin::fclk_act 125.000000")
    assert r.returncode == 1
    assert "FCLK0 achieves 125.000000 MHz = 8.0000 ns, but the XDC's clk_fpga_0 is 7.000 ns" in r.stderr


@pytest.mark.parametrize("policy", ["warn", "fail"])
def test_version_pin_check_in_tcl(projects, tmp_path, policy):
    p = projects["stage4"]
    setup = (f"source {{{p.settings_tcl}}}\nset ::kabe(vivado_version) 2022.1\n"
             f"set ::kabe(vivado_version_mismatch) {policy}")
    r = run_tcl(f"source {{{TCL_DIR / 'check_vivado_version.tcl'}}}", tmp_path, tmp_path / "r.txt", setup)
    if policy == "fail":
        assert r.returncode == 1 and "pins 2022.1" in r.stderr
    else:
        assert r.returncode == 0 and "CRITICAL WARNING: kabe: Vivado 2023.2 is running" in r.stdout


def test_recorder_rejects_unknown_commands(tmp_path):
    r = run_tcl("create_bd_cel -type ip x", tmp_path, tmp_path / "r.txt")
    assert r.returncode == 1 and "create_bd_cel" in r.stderr


# ------------------------------------------------------------------------------------------------
# Python pieces


def test_version_pin_python(capsys):
    have = tool.VivadoVersion("Vivado v2023.2 (64-bit)", "2023.2")
    assert tool.check_version_pin(have, "", "fail") is None
    assert tool.check_version_pin(have, "2023.2", "fail") is None
    assert "pins 2024.1" in tool.check_version_pin(have, "2024.1", "warn")
    with pytest.raises(FlowError, match="pins 2024.1"):
        tool.check_version_pin(have, "2024.1", "fail")
    with pytest.raises(ConfigError, match='vivado_version_mismatch = "maybe": expected "warn" or "fail"'):
        tool.settings({"vivado_version_mismatch": "maybe"})


def test_usr_access_word():
    assert project.usr_access_word(provenance.Commit("abcdef1" + "0" * 33, False)) == 0x0ABCDEF1
    assert project.usr_access_word(provenance.Commit("abcdef1" + "0" * 33, True)) == 0x8ABCDEF1
    assert project.usr_access_word(provenance.Commit("nogit", True)) == 0x8FFFFFFF


def test_engine_port_reader(tmp_path):
    src = tmp_path / "t.v"
    src.write_text("module t #(parameter W = 32, parameter N = 2) (\n input wire clk, rst, // c\n"
                   " input wire [2*W-1:0] s0_axis_tdata, input wire s0_axis_tvalid, output wire s0_axis_tready,\n"
                   " input wire s0_axis_tlast, output wire [W-1:0] m0_axis_tdata, output wire m0_axis_tvalid,\n"
                   " input wire m0_axis_tready, output wire m0_axis_tlast, output wire [$clog2(N)+31:0] stat0_invalid\n);\nendmodule\n")
    ports = bd_wrapper.engine_ports(src, "t", {"W": 16})
    assert [(p.name, p.width) for p in ports][:3] == [("clk", 1), ("rst", 1), ("s0_axis_tdata", 32)]
    assert ports[-1].width == 33
    iface = bd_wrapper.classify(ports, 1, str(src))
    assert iface.stream("m", 0)["tdata"].width == 16 and [s.name for s in iface.status[0]] == ["stat0_invalid"]
    with pytest.raises(FlowError, match="no s1_axis"):
        bd_wrapper.classify(ports, 2, str(src))


# ------------------------------------------------------------------------------------------------
# (c) end to end with the stand-in `vivado` on PATH


def _build(tmp_path, scenario: str, monkeypatch) -> dict:
    monkeypatch.setenv("KABE_STANDIN_SCENARIO", scenario)
    monkeypatch.setenv("KABE_STANDIN_RECORD", str(tmp_path / f"record-{scenario}.txt"))
    return build.build(designs.get("stage4"), "vivado", sim_check=False, reports_root=tmp_path / "reports")


def test_stage4_builds_and_archives_with_the_standin(standin_path, tmp_path, monkeypatch):
    record = _build(tmp_path, "met", monkeypatch)
    assert record["flow"] == "vivado" and record["part"] == "xc7z020clg400-1"
    assert record["clock_period_ns"] == 7.0
    assert record["timing"]["estimated"] is False
    assert record["timing"]["wns_ns"] == 0.062 and record["timing"]["whs_ns"] == 0.161
    assert record["timing"]["critical_path"]["logic_levels"] == 6
    assert record["tools"]["vivado"].startswith("STAND-IN for Vivado v2023.2")
    u = record["utilization"]
    assert u["lut"] == 9557 and u["dsp"] == 0
    assert "kabe_bd_i/engine/inst/engine_inst/port0_inst" in u["by_instance"]
    # every timing check passes on the met report; budgets are design.yaml's business (see
    # docs/vivado_flow.md: whole-design vs engine-only LUT budgets)
    timing_checks = [c for c in record["gate"]["checks"] if c["name"].startswith("timing.")]
    assert {c["name"] for c in timing_checks} >= {"timing.clocks", "timing.wns", "timing.whs", "timing.wpws",
                                                   "timing.verdict"}
    assert all(c["passed"] for c in timing_checks), timing_checks
    assert {"name": "budget.dsp", "expected": "== 0", "got": 0, "passed": True} in record["gate"]["checks"]
    dest = Path(record["_archive"])
    on_disk = json.loads((dest / "metrics.json").read_text())
    assert on_disk["timing"]["estimated"] is False
    bit, hwh = dest / "kabe_stage4.bit", dest / "kabe_stage4.hwh"
    assert bit.is_file() and hwh.is_file()  # same basename: PYNQ finds the .hwh beside the .bit
    assert b"STAND-IN" in bit.read_bytes()[:300] and "STAND-IN" in hwh.read_text()
    from kabe.base import bitfile

    cells = dest / "kabe_stage4.cells.json"  # the names the board runner looks up (test_vivado_board.py)
    xsa = dest / "kabe_stage4.xsa"  # the Vitis / PetaLinux handoff, with the bitstream (write_hw_platform -include_bit)
    assert on_disk["artifacts"] == {"bit": provenance.sha256_file(bit), "hwh": provenance.sha256_file(hwh),
                                    "xsa": provenance.sha256_file(xsa), "cells": provenance.sha256_file(cells)}
    manifest = json.loads((dest / "manifest.json").read_text())
    assert manifest["artifacts"]["xsa"] == provenance.sha256_file(xsa)
    import zipfile

    with zipfile.ZipFile(xsa) as z:  # the bitstream inside is the archived one, byte for byte
        assert "STAND-IN" in z.read("STAND-IN.txt").decode()
        assert z.read("kabe_bd_wrapper.bit") == bit.read_bytes() and z.read("kabe_bd.hwh") == hwh.read_bytes()
    for raw in ("timing_summary.rpt", "utilization.rpt", "utilization_hier.rpt", "clock_interaction.rpt"):
        assert (dest / raw).is_file(), raw
    # the commit went into the bitstream through the hook
    commit = provenance.current_commit()
    assert project.read_usr_access(bit) == project.usr_access_word(commit)
    header = bitfile.parse_header(bit.read_bytes())  # and the .bit header's UserID says the same
    assert header["part"] == "7z020clg400" and header["UserID"] == f"0X{project.usr_access_word(commit):08X}"
    assert "kabe/flows/vivado/tcl/kabe_bd.tcl" in on_disk["inputs"]
    assert "kabe/flows/vivado/tcl/report_timing_summary.tcl" in on_disk["inputs"]


def test_the_bitstream_names_the_commit_its_archive_is_named_after(standin_path, tmp_path, monkeypatch):
    """One reading of the commit per build, passed down to the flow: a commit landing while the build
    runs (here every later read answers another commit) changes neither the archive's name nor the
    commit stamped into the bitstream."""
    first = provenance.current_commit()
    later = provenance.Commit("0123456789abcdef0123456789abcdef01234567", False)
    reads = []

    def moving(*args, **kw):
        reads.append(1)
        return first if len(reads) == 1 else later

    monkeypatch.setattr(provenance, "current_commit", moving)
    dest = Path(_build(tmp_path, "met", monkeypatch)["_archive"])
    assert dest.parent.parent.name == first.archive_name
    assert project.read_usr_access(dest / "kabe_stage4.bit") == project.usr_access_word(first)


def test_violated_timing_fails_the_gate(standin_path, tmp_path, monkeypatch):
    record = _build(tmp_path, "violated", monkeypatch)
    assert not record["gate"]["passed"]
    assert any("-0.502" in f and "clk_fpga_0" in f and "9 logic levels" in f for f in record["gate"]["failures"])


def test_unsafe_clock_crossing_fails_the_gate(standin_path, tmp_path, monkeypatch):
    """Timing met, but report_clock_interaction calls a crossing unsafe: the build fails on it."""
    fixtures = tmp_path / "fixtures"
    shutil.copytree(ROOT / "tests" / "fixtures" / "vivado", fixtures)
    shutil.copy(fixtures / "clock_interaction_7z020_2023.2_unsafe.rpt", fixtures / "flow_clock_interaction.rpt")
    monkeypatch.setenv("KABE_STANDIN_FIXTURES", str(fixtures))
    record = _build(tmp_path, "met", monkeypatch)
    assert record["timing"]["wns_ns"] == 0.062 and not record["gate"]["passed"]
    assert any("unsafe clock interaction clk_fpga_0 -> clk_adc" in f for f in record["gate"]["failures"])


def test_truncated_report_fails_the_gate(standin_path, tmp_path, monkeypatch):
    record = _build(tmp_path, "truncated", monkeypatch)
    assert not record["gate"]["passed"]
    assert record["timing"]["error"] and "cut short" in record["timing"]["error"]
    assert any("timing gate" in f for f in record["gate"]["failures"])


def test_missing_report_fails_the_gate(standin_path, tmp_path, monkeypatch):
    record = _build(tmp_path, "missing", monkeypatch)
    assert not record["gate"]["passed"]
    assert "does not exist" in record["timing"]["error"]


def test_vivado_error_stops_the_build_naming_it(standin_path, tmp_path, monkeypatch):
    monkeypatch.setenv("KABE_STANDIN_FCLK_ACT", "125.000000")
    with pytest.raises(FlowError) as e:
        _build(tmp_path, "met", monkeypatch)
    assert "failed with exit" in str(e.value) and "FCLK0 achieves 125.000000 MHz" in str(e.value)
    assert "vivado_make.log" in str(e.value)


def test_timeout_stops_vivado(standin_path, projects, tmp_path, monkeypatch):
    from rich.console import Console

    monkeypatch.setenv("KABE_STANDIN_SLEEP", "30")
    src = projects["stage4"]
    p = project.Project(**{**src.__dict__, "work_root": tmp_path / "edalize"})
    shutil.copytree(src.work_root, p.work_root)
    for f in [*p.work_root.glob("*.xpr"), *p.work_root.glob("*.bit")]:
        f.unlink()  # make must call vivado
    t0 = __import__("time").monotonic()
    with pytest.raises(FlowError, match="did not finish within 2 s"):
        tool.run_make(p, Console(quiet=True), timeout_s=2)
    assert __import__("time").monotonic() - t0 < 20


def test_no_vivado_on_path_is_one_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    assert shutil.which("vivado") is None
    with pytest.raises(FlowError) as e:
        build.build(designs.get("stage4"), "vivado", sim_check=False, reports_root=tmp_path / "reports")
    msg = str(e.value)
    assert "vivado` is not on PATH" in msg and "settings64.sh" in msg and "flow=open" in msg
    assert not (tmp_path / "reports").exists()
