"""The Vivado flow for Versal (the Alveo V80), without Vivado and without AVED.

As for the Zynq (test_vivado_flow.py), everything up to the `vivado` call runs for real (FuseSoC
resolve, edalize project generation, kabe's Tcl); Vivado's side is the STAND-IN
(tests/standin/vivado_commands.tcl and tests/standin/vivado, which write Versal-layout reports from
tests/fixtures/vivado_v80 and a STAND-IN .pdi), bootgen's is tests/standin/bootgen, and AMD's AVED
base design is tests/standin/aved (a STAND-IN folder laid out like AVED's hw/amd_v80_gen5x8_25.1,
defining the cells kabe's block design extends). The design is a small V80 engine of the tests' own,
in a temporary project (`board: v80`), so these tests do not wait for any core of kabe's.
"""

from __future__ import annotations

import json
import re
import os
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from kabe import build
from kabe.project import designs
from kabe.base import paths, provenance
from kabe.flows.base import FlowError
from kabe.flows.vivado import project, tool, versal
from kabe.flows.vivado.project import TCL_DIR
from kabe.base.paths import ROOT

from test_vivado_flow import STANDIN, TCLSH, calls, props, run_tcl  # same folder (rootdir import)

pytestmark = pytest.mark.skipif(TCLSH is None, reason="tclsh is needed to run the Tcl dry runs")

AVED = STANDIN / "aved"
COMMIT = provenance.Commit("0123456789abcdef0123456789abcdef01234567", False)
def _load_probe():
    import importlib.util

    spec = importlib.util.spec_from_file_location("kabe_tests_v80_probe", STANDIN / "v80_probe.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


v80_probe = _load_probe()
PORTS = v80_probe.PORTS


@pytest.fixture(scope="module")
def v80_design(tmp_path_factory):
    """cores/v80_probe/ in a temporary cores root: design.yaml (board: v80), core file, RTL, XDC."""
    return v80_probe.make(tmp_path_factory.mktemp("v80cores"))


def _settings(**kw) -> dict:
    return tool.settings({"vivado_aved_dir": str(AVED), **kw})


@pytest.fixture(scope="module")
def v80_project(v80_design, tmp_path_factory) -> project.Project:
    return project.generate_project(v80_design, tmp_path_factory.mktemp("v80") / "edalize", commit=COMMIT,
                                    flow_settings=_settings())


# ------------------------------------------------------------------------------------------------
# the generated project


def test_the_v80_project_is_aveds_block_design_with_a_device_image_run(v80_project, v80_design):
    p = v80_project
    assert v80_design.board.is_versal and p.family == "versal" and p.part == "xcv80-lsva4737-2MHP-e-S"
    tcl = p.project_tcl.read_text()
    assert "set_property part xcv80-lsva4737-2MHP-e-S [current_project]" in tcl
    assert "set_property top top_wrapper [current_fileset]" in tcl  # AVED's block design is `top`
    sourced = [ln.split("{")[1].rstrip("}") for ln in tcl.splitlines() if ln.startswith("source ")]
    assert str(TCL_DIR / "v80_aved_bd.tcl") in sourced
    assert str(TCL_DIR / "kabe_bd.tcl") not in sourced and str(TCL_DIR / "pynq_z1_ps7.tcl") not in sourced
    run = (p.work_root / f"{p.name}_run.tcl").read_text()
    assert str(TCL_DIR / "versal_run.tcl") in run and "write_bitstream" not in run
    settings = p.settings_tcl.read_text()
    assert "set ::kabe(clock_name) clkout1_primitive" in settings and "set ::kabe(period_ns) 2.500" in settings
    assert "set ::kabe(image_step) WRITE_DEVICE_IMAGE" in settings and "set ::kabe(family) versal" in settings
    assert "set ::kabe(hbm_data_width) 256" in settings and "hwh_dest" not in settings
    # AVED's own files are inputs of the build (hashed), its write_device_image hook runs before kabe's commit
    for rel in (*versal.AVED_FILES, *versal.BUILT_FILES):
        assert AVED / rel in p.inputs, rel
    hooks = [ln for ln in p.hook_tcl.read_text().splitlines() if ln.startswith("source ")][1:]
    assert hooks[0].endswith("check_vivado_version.tcl}") and hooks[1] == f"source {{{AVED / versal.AVED_IMAGE_HOOK}}}"
    assert hooks[2].endswith("embed_commit.tcl}")
    assert set(p.images) == {"pdi", "xsa", "pdi_nofpt", "pdi_fpt"}
    # named as AVED names the same files: <design>.pdi is the flash image (FPT + boot image), as AVED's
    assert {k: v.name for k, v in p.images.items()} == {
        "pdi": f"{p.name}_design.pdi", "pdi_nofpt": f"{p.name}_nofpt.pdi", "pdi_fpt": f"{p.name}.pdi",
        "xsa": f"{p.name}.xsa"}


def test_a_wrong_run_tcl_is_caught(v80_project, tmp_path):
    p = v80_project
    bad = tmp_path / "edalize"
    shutil.copytree(p.work_root, bad)
    (bad / f"{p.name}_run.tcl").write_text("launch_runs impl_1 -to_step write_bitstream\n")
    with pytest.raises(FlowError, match="not kabe's Versal run Tcl"):
        project.check_generated(project.Project(**{**p.__dict__, "work_root": bad}))


def test_no_aved_folder_is_one_clear_error(v80_design, tmp_path):
    with pytest.raises(FlowError, match="vivado_aved_dir is not set.*github.com/Xilinx/AVED"):
        project.generate_project(v80_design, tmp_path / "a", commit=COMMIT, flow_settings=tool.settings({}))
    partial = tmp_path / "aved"
    shutil.copytree(AVED, partial)
    (partial / versal.AMC_ELF).unlink()
    with pytest.raises(FlowError, match="amc.elf: no such file, AVED's management firmware"):
        project.generate_project(v80_design, tmp_path / "b", commit=COMMIT,
                                 flow_settings=tool.settings({"vivado_aved_dir": str(partial)}))
    shutil.copy(AVED / versal.AMC_ELF, partial / versal.AMC_ELF)
    (partial / versal.FPT_BIN).unlink()
    with pytest.raises(FlowError, match="fpt.bin: no such file, AVED's flash partition table .*gen_fpt.py"):
        project.generate_project(v80_design, tmp_path / "c", commit=COMMIT,
                                 flow_settings=tool.settings({"vivado_aved_dir": str(partial)}))


# ------------------------------------------------------------------------------------------------
# the block design, dry run on the recording stand-in


def test_block_design_dry_run_extends_aveds_noc_to_hbm(v80_project, tmp_path):
    p = v80_project
    rec = tmp_path / "rec.txt"
    r = run_tcl(f"source {{{p.project_tcl}}}", p.work_root, rec)
    assert r.returncode == 0, r.stdout + r.stderr
    c = calls(rec)
    pr = props(c)
    # AVED's base came first, as AVED's create_design.tcl makes it
    assert pr[p.name]["IP_REPO_PATHS"] == str(AVED / "src" / "iprepo")
    assert ["create_bd_design", "top"] in c
    # axi_noc_cips widened by one HBM port per channel, one register master and one clock; NUM_SI as AVED's
    noc = pr["/axi_noc_cips"]
    assert (noc["CONFIG.NUM_HBM_BLI"], noc["CONFIG.NUM_MI"], noc["CONFIG.NUM_CLKS"]) == (str(PORTS), "2", "6")
    assert "CONFIG.NUM_SI" not in noc or noc["CONFIG.NUM_SI"] == "4"
    for ch in range(PORTS):
        hp = pr[f"/axi_noc_cips/HBM{ch:02d}_AXI"]
        assert hp["CONFIG.CATEGORY"] == "pl_hbm"
        # the probe: 256-bit reads at 400 MHz = 12,800 MB/s; 32-bit results, one per 512-byte row = 100 MB/s
        assert hp["CONFIG.CONNECTIONS"] == (f"HBM0_PORT{ch} {{read_bw 12800 write_bw 100 read_avg_burst 256 "
                                            f"write_avg_burst 256}}")
        assert ["connect_bd_intf_net", f"/hbm_sc{ch}/M00_AXI", f"/axi_noc_cips/HBM{ch:02d}_AXI"] in c
        assert ["connect_bd_intf_net", f"/dma{ch}/M_AXIS_MM2S", f"/engine/s{ch}_axis"] in c
        dma = pr[f"/dma{ch}"]
        assert dma["CONFIG.C_M_AXI_MM2S_DATA_WIDTH"] == "256" and dma["CONFIG.C_M_AXIS_MM2S_TDATA_WIDTH"] == "256"
        assert dma["CONFIG.C_ADDR_WIDTH"] == "64" and dma["CONFIG.C_INCLUDE_SG"] == "0"
    assert not any(k.startswith("/axi_noc_cips/S0") and k != "/axi_noc_cips/S00_AXI" for k in pr)
    assert pr["/axi_noc_cips/aclk5"]["CONFIG.ASSOCIATED_BUSIF"] == "M01_AXI:HBM00_AXI:HBM01_AXI"
    # the host reaches the registers through PF0 (S00_AXI), AVED's own connections kept, its stale DEST_IDS dropped
    s00 = pr["/axi_noc_cips/S00_AXI"]
    assert "M00_AXI" in s00["CONFIG.CONNECTIONS"] and "HBM0_PORT0" in s00["CONFIG.CONNECTIONS"]
    assert "M01_AXI {read_bw {5}" in s00["CONFIG.CONNECTIONS"] and s00["CONFIG.DEST_IDS"] == ""
    assert pr["/axi_noc_cips/M01_AXI"]["CONFIG.APERTURES"] == "{0x020102000000 0x1000000}"
    addr = [x for x in c if x[0] == "assign_bd_address" and "-offset" in x]
    assert [a[a.index("-offset") + 1] for a in addr][:2] == ["0x020102000000", "0x020102010000"]
    # the engine clock is AVED's user clock, at the XDC's 400 MHz; AVED's second output untouched
    assert pr["/clock_reset/usr_clk_wiz"]["CONFIG.CLKOUT_REQUESTED_OUT_FREQUENCY"] == "400.000,500"
    assert ["connect_bd_net", "/kabe_rst/peripheral_reset", "/engine/rst"] in c
    # AVED's build_design.tcl order: generate_target, then the fixed minimal platform, before synthesis
    names = [x[0] for x in c]
    assert names.index("generate_target") < names.index("write_hw_platform")
    xsa_call = next(x for x in c if x[0] == "write_hw_platform")
    assert "-fixed" in xsa_call and "-minimal" in xsa_call and xsa_call[-1] == str(p.images["xsa"])
    # AVED's constraints and hooks, as AVED's create_design.tcl attaches them; kabe's on the image step
    assert pr["impl_1"]["STEPS.OPT_DESIGN.TCL.POST"] == str(AVED / "src/constraints/opt.post.tcl")
    assert pr["impl_1"]["STEPS.PLACE_DESIGN.TCL.PRE"] == str(AVED / "src/constraints/place.pre.tcl")
    assert pr["impl_1"]["STEPS.WRITE_DEVICE_IMAGE.TCL.PRE"] == str(p.hook_tcl)
    assert pr[str(AVED / "src/constraints/impl.xdc")]["USED_IN_SYNTHESIS"] == "false"


# ------------------------------------------------------------------------------------------------
# end to end with the stand-in vivado and bootgen on PATH


@pytest.fixture()
def standin_v80(monkeypatch):
    """The stand-ins on PATH (vivado, bootgen) and AVED's stand-in named as [tool.kabe] vivado_aved_dir."""
    monkeypatch.setenv("PATH", f"{STANDIN}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("KABE_STANDIN_VERSION", "2025.1")  # AVED amd_v80_gen5x8_25.1's Vivado (the V80 profile)
    assert shutil.which("vivado") == str(STANDIN / "vivado") and shutil.which("bootgen") == str(STANDIN / "bootgen")
    real = tool.settings
    monkeypatch.setattr(tool, "settings", lambda overrides=None: real({**(overrides or {}), "vivado_aved_dir": str(AVED)}))


def _build(design, tmp_path: Path, scenario: str, monkeypatch) -> dict:
    monkeypatch.setenv("KABE_STANDIN_SCENARIO", scenario)
    monkeypatch.setenv("KABE_STANDIN_RECORD", str(tmp_path / f"record-{scenario}.txt"))
    return build.build(designs.get(design), "vivado", sim_check=False, reports_root=tmp_path / "reports", use_cache=False)


def test_v80_builds_and_archives_pdi_xsa_reports_and_gate(v80_design, standin_v80, tmp_path, monkeypatch):
    record = _build(v80_design, tmp_path, "met", monkeypatch)
    assert record["flow"] == "vivado" and record["part"] == "xcv80-lsva4737-2MHP-e-S"
    assert record["clock_period_ns"] == 2.5 and record["timing"]["estimated"] is False
    t = record["timing"]
    assert (t["wns_ns"], t["whs_ns"], t["wpws_ns"]) == (0.257, 0.089, 0.86)
    assert [c["name"] for c in t["clocks"]] == ["clk_pl_1", "clkout1_primitive"]
    assert t["second_source"]["wns_ns"] == 0.257  # Vivado's own answer, from the stand-in's queries
    checks = {c["name"]: c["passed"] for c in record["gate"]["checks"]}
    assert {"timing.wns", "timing.whs", "timing.wpws", "timing.clocks", "timing.verdict"} <= set(checks)
    assert record["gate"]["passed"], record["gate"]["failures"]
    assert record["utilization"]["lut"] == 21310 and record["utilization"]["dsp"] == 0 and "top_i/engine" in record["utilization"]["by_instance"]
    dest = Path(record["_archive"])
    name = "kabe_v80_probe"
    pdi, nofpt, xsa = dest / f"{name}_design.pdi", dest / f"{name}_nofpt.pdi", dest / f"{name}.xsa"
    flash = dest / f"{name}.pdi"
    manifest = json.loads((dest / "manifest.json").read_text())
    assert manifest["artifacts"] == {"pdi": provenance.sha256_file(pdi), "xsa": provenance.sha256_file(xsa),
                                     "pdi_nofpt": provenance.sha256_file(nofpt), "pdi_fpt": provenance.sha256_file(flash)}
    assert record["artifacts"] == manifest["artifacts"]
    for raw in ("timing_summary.rpt", "utilization.rpt", "utilization_hier.rpt", "clock_interaction.rpt",
                "logic_levels.rpt", "timing_verdict.json"):
        assert (dest / raw).is_file(), raw
    # the image carries the commit, not AVED's time stamp (AVED's hook ran first, kabe's after it)
    word = project.usr_access_word(provenance.current_commit())
    assert f"USR_ACCESS=0x{word:08X}" in pdi.read_text()
    # the boot image is bootgen's: the design image, then AVED's management firmware on the RPU
    boot = nofpt.read_bytes()
    assert boot.startswith(b"STAND-IN boot image") and pdi.read_bytes() in boot
    assert (AVED / versal.AMC_ELF).read_bytes() in boot
    # the flash image is AVED's fpt_pdi_gen.py's (the stand-in's): AVED's FPT padded to 32 KiB, then the boot image
    fpt = (AVED / versal.FPT_BIN).read_bytes()
    assert flash.read_bytes() == fpt.ljust(0x8000, b"\xff") + boot
    with zipfile.ZipFile(xsa) as z:  # fixed and minimal, written before synthesis: no image inside
        assert "fixed, minimal" in z.read("STAND-IN.txt").decode() and not any(n.endswith(".pdi") for n in z.namelist())
    inputs = json.loads((dest / "metrics.json").read_text())["inputs"]
    assert any(k.endswith("write_device_image.pre.tcl") for k in inputs) and any(k.endswith("amc.elf") for k in inputs)


def test_v80_failing_timing_fails_the_gate_naming_the_slack(v80_design, standin_v80, tmp_path, monkeypatch):
    record = _build(v80_design, tmp_path, "violated", monkeypatch)
    assert not record["gate"]["passed"]
    assert record["timing"]["wns_ns"] == -1.228
    assert any("-1.228" in f and "clkout1_primitive" in f for f in record["gate"]["failures"]), record["gate"]["failures"]
    assert (Path(record["_archive"]) / "timing_summary.rpt").is_file()  # a failed build is archived too


def test_v80_report_on_another_clock_fails_the_gate(v80_design, standin_v80, tmp_path, monkeypatch):
    """A real Vivado naming the clock wizard's output otherwise: the report no longer has the clock the
    engine was meant to meet, and the build fails on it instead of passing on some other clock."""
    fixtures = tmp_path / "fixtures"
    shutil.copytree(ROOT / "tests" / "fixtures" / "vivado_v80", fixtures)
    rpt = fixtures / "flow_timing_summary_met.rpt"
    rpt.write_text(rpt.read_text().replace("clkout1_primitive", "clkout1_primitiv2"))
    monkeypatch.setenv("KABE_STANDIN_FIXTURES", str(fixtures))
    record = _build(v80_design, tmp_path, "met", monkeypatch)
    assert not record["gate"]["passed"]
    assert "clock clkout1_primitive (the XDC's) is not among the report's clocks" in record["timing"]["error"]


def test_every_property_the_v80_block_design_sets_is_in_the_docs():
    """docs/v80.md lists every Versal property kabe's block-design Tcl sets beside the AVED file it
    follows (issue 24's acceptance): a property added to the Tcl and not to the table fails here."""
    tcl = (TCL_DIR / "v80_aved_bd.tcl").read_text()
    code = "\n".join(ln.split("#", 1)[0] for ln in tcl.splitlines())  # comments name properties too
    set_here = set(re.findall(r"\b(CONFIG\.[A-Za-z0-9_]+|STEPS\.[A-Z_]+\.TCL\.(?:PRE|POST))", code))
    set_here |= set(re.findall(r"\b(ip_repo_paths|used_in_synthesis|processing_order)\b", code))
    assert len(set_here) >= 25, sorted(set_here)
    doc = (ROOT / "docs" / "v80.md").read_text()
    table = doc[doc.index("### The block-design Tcl, and every property it sets"):doc.index("### The clock the gate times")]
    missing = sorted(p for p in set_here if p.removeprefix("CONFIG.") not in table and p not in table)
    assert not missing, f"docs/v80.md does not list {missing}"


def test_a_failing_bootgen_stops_the_build_naming_it(v80_design, standin_v80, tmp_path, monkeypatch):
    """No boot image, no archive: bootgen's error ends the build (the design image alone is not what
    ami_tool may write to the card's flash)."""
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "bootgen").write_text("#!/bin/sh\necho 'ERROR: [STAND-IN bootgen] cannot read the bif' >&2\nexit 1\n")
    (fake / "bootgen").chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}{os.pathsep}{os.environ['PATH']}")
    with pytest.raises(FlowError, match="bootgen failed"):
        _build(v80_design, tmp_path, "met", monkeypatch)
    assert not (tmp_path / "reports").exists() or not list((tmp_path / "reports").rglob("metrics.json"))


def test_another_vivado_than_aveds_stops_before_any_tool_runs(v80_design, standin_v80, tmp_path, monkeypatch):
    """The V80 profile's AVED release (amd_v80_gen5x8_25.1) needs Vivado 2025.1: the stand-in claiming 2023.2
    stops the build before the simulation and before any Vivado run (nothing recorded but -version), with
    one message naming both versions."""
    monkeypatch.setenv("KABE_STANDIN_VERSION", "2023.2")
    with pytest.raises(FlowError) as e:
        _build(v80_design, tmp_path, "met", monkeypatch)
    msg = str(e.value)
    assert "needs Vivado 2025.1, but Vivado 2023.2 is on PATH" in msg and "amd_v80_gen5x8_25.1" in msg
    assert not (tmp_path / "record-met.txt").exists()  # the stand-in never ran a script
    assert not (tmp_path / "reports").exists() or not list((tmp_path / "reports").rglob("metrics.json"))


def test_an_aved_folder_of_another_release_is_refused(v80_design, tmp_path):
    other = tmp_path / "amd_v80_gen5x8_24.1"
    shutil.copytree(AVED, other)
    with pytest.raises(FlowError, match="names amd_v80_gen5x8_24.1, but board v80's profile .* amd_v80_gen5x8_25.1"):
        versal.check_base_vivado(v80_design.board, "2025.1", {"vivado_aved_dir": str(other)})
    versal.check_base_vivado(v80_design.board, "2025.1", {"vivado_aved_dir": str(AVED)})  # a folder not named for a release
