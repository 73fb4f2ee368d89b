"""flow=vitis_hls's three drivers (v++ -c --mode hls + vitis-run from 2024.2, vitis_hls -f and vivado_hls -f
before) on the stand-ins, which accept only the commands and options AMD documents: what kabe writes (the
HLS config file, the Tcl script) runs, and what the stand-ins refuse is refused as the tools do."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from kabe.project.design_context import DesignContext
from kabe.project import cores, designs
from kabe.flows import vitis_hls
from kabe.flows.vitis_hls import scripts

ROOT = Path(__file__).resolve().parents[2]
STANDIN = ROOT / "tests" / "standin" / "vitis"


@pytest.mark.parametrize("bindir, kind", [("bin", "config"), ("bin_tcl", "vitis_hls"), ("bin_tcl", "vivado_hls")])
def test_each_driver_synthesizes_and_exports(tmp_path, monkeypatch, bindir, kind):
    # only the tool under test on PATH (bin_tcl has both Tcl tools; vitis_hls is found before vivado_hls)
    path = STANDIN / bindir
    if kind == "vivado_hls":
        path = tmp_path / "only_vivado_hls"
        path.mkdir()
        (path / "vivado_hls").symlink_to(STANDIN / "vitis_standin.py")
    monkeypatch.setenv("PATH", f"{path}{os.pathsep}{os.environ['PATH']}")
    d = designs.get("stage3_hls")
    result = vitis_hls.run_build(DesignContext(d, synth=cores.resolve(d, "synth")), tmp_path / "work")
    assert result.tools["hls_driver"] == kind
    hls = result.sections["hls"]
    assert hls["top"] == "stage3_hls" and hls["target_clock_ns"] == 7.0 and result.timing["estimated"] is True
    assert {"read_x", "mac"} <= {lp["name"] for lp in hls["loops"]}
    assert "csynth.xml" in result.raw_files and "csynth.rpt" in result.raw_files
    assert result.artifacts["ip"].name == "stage3_hls.zip"
    script = scripts.CONFIG if kind == "config" else scripts.TCL
    assert script in result.raw_files
    if kind == "vivado_hls":  # Vivado HLS has no -flow_target (the stand-in refuses it there)
        assert "-flow_target" not in result.raw_files[script].read_text()


def _run(tool: str, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    exe = STANDIN / ("bin_tcl" if tool in ("vitis_hls", "vivado_hls") else "bin") / tool
    return subprocess.run([str(exe), *args], cwd=cwd, capture_output=True, text=True)


def test_the_standins_refuse_what_the_tools_do_not_document(tmp_path):
    p = _run("v++", "-c", "--mode", "hls", "--bogus", "1", cwd=tmp_path)
    assert p.returncode == 1 and "unrecognised option '--bogus'" in p.stdout
    cfg = tmp_path / "hls_config.cfg"
    cfg.write_text("part=xc7z020clg400-1\n[hls]\nsyn.top=f\nsyn.magic=1\n")
    p = _run("v++", "-c", "--mode", "hls", "--config", str(cfg), "--work_dir", "w", cwd=tmp_path)
    assert p.returncode == 1 and "unknown config option 'syn.magic'" in p.stdout
    p = _run("vitis-run", "--mode", "hls", "--csim", "--cosim", "--config", str(cfg), cwd=tmp_path)
    assert p.returncode == 1
    tcl = tmp_path / "x.tcl"
    tcl.write_text("open_project p\nset_top f\nopen_solution -flow_target vitis s\n")
    p = _run("vivado_hls", "-f", str(tcl), cwd=tmp_path)  # Vivado HLS has no -flow_target
    assert p.returncode == 1 and "unknown option '-flow_target'" in p.stdout
    tcl.write_text("open_project p\ncsynth_design -magic\n")
    assert _run("vitis_hls", "-f", str(tcl), cwd=tmp_path).returncode == 1


def _judge(d, result):
    from kabe.build.verdict import build_verdict

    return build_verdict(d, "vitis_hls", result.timing, result.utilization, None, sections=result.sections)


def test_an_estimate_over_budget_and_a_failed_cosim_fail_the_gate(tmp_path, monkeypatch):
    import dataclasses

    monkeypatch.setenv("PATH", f"{STANDIN / 'bin'}{os.pathsep}{os.environ['PATH']}")
    d = designs.get("stage3_hls")
    d = dataclasses.replace(d, hls=dataclasses.replace(d.hls, cosim=True))
    edam = cores.resolve(d, "synth")
    met = vitis_hls.run_build(DesignContext(d, synth=edam), tmp_path / "met")
    v = _judge(d, met)
    assert v.passed, v.failures
    assert met.sections["hls"]["cosim"]["passed"] is True and f"{d.hls.top}_cosim.rpt" in met.raw_files
    # 5.2 ns + the default uncertainty (27 % of 7 ns = 1.89) is over 7 ns; the Verilog co-simulation fails
    monkeypatch.setenv("KABE_STANDIN_HLS_ESTIMATE_NS", "5.2")
    monkeypatch.setenv("KABE_STANDIN_COSIM", "Fail")
    v = _judge(d, vitis_hls.run_build(DesignContext(d, synth=edam), tmp_path / "failed"))
    assert not v.passed
    said = " ".join(v.failures)
    assert "HLS estimated clock 5.2 ns + uncertainty 1.89 ns = 7.090 ns is over the target 7 ns" in said
    assert "C/RTL co-simulation did not pass" in said


def test_a_loop_that_misses_its_target_ii_fails_the_gate(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", f"{STANDIN / 'bin'}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("KABE_STANDIN_HLS_II_MISS", "mac")  # the MAC loop scheduled at II 2 against its II=1
    d = designs.get("stage3_hls")
    result = vitis_hls.run_build(DesignContext(d, synth=cores.resolve(d, "synth")), tmp_path / "w")
    assert result.timing["hls_log"]["last_run"]["ii_violations"][0]["loop"] == "mac"
    v = _judge(d, result)
    assert not v.passed
    failed = {c["name"] for c in v.checks if not c["passed"]}
    assert "hls.ii.mac" in failed and "hls.log.ii_violation" in failed, v.failures
    assert "budget.ii" in failed  # design.yaml's ii: {le: 1}, judged on the hls section
    assert "hls.ii.read_x" not in failed  # the other loop met its II


def test_without_vitis_an_hls_build_could_not_run_and_says_so(monkeypatch):
    from kabe.build import run_outcome
    from rich.console import Console

    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # no Vitis, no stand-in
    out = run_outcome("stage3_hls", None, Console(file=open(os.devnull, "w")), use_cache=False)
    assert out.code == 2 and out.flow == "vitis_hls"
    assert "flow=vitis_hls needs AMD Vitis HLS" in out.reason and "doit sim:<design>" in out.reason


def test_an_hls_design_builds_with_its_own_flow_only():
    from kabe.build import BuildError, flow_for

    hls, rtl = designs.get("stage3_hls"), designs.get("stage3")
    assert flow_for(hls, None) == flow_for(hls, "auto") == flow_for(hls, "vitis_hls") == "vitis_hls"
    with pytest.raises(BuildError, match=r"builds with flow=vitis_hls, not flow=vivado"):
        flow_for(hls, "vivado")
    with pytest.raises(BuildError, match=r"stage3 is an RTL design; flow=vitis builds designs whose design.yaml has vitis:"):
        flow_for(rtl, "vitis")


def test_a_record_without_its_hls_section_is_no_pass():
    from kabe.rules import verdict

    d = designs.get("stage3_hls")
    record = {"timing": {"estimated": True, "wns_ns": 0.3, "tns_ns": None, "whs_ns": None, "critical_path": None,
                         "clocks": [{"name": "ap_clk", "period_ns": 7.0}]},
              "utilization": {"lut": 1, "ff": 1, "dsp": 16, "bram36_equiv": 0}}
    v = verdict.judge(record, verdict.DesignFacts.of(d, "vitis_hls"))
    assert not v.passed and any("has no hls" in f for f in v.failures)
