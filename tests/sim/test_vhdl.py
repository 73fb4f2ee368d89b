"""VHDL on the open flow (issue 38 item 6), with the real GHDL (Debian's), Verilator, Yosys and cocotb:
a VHDL top with its stage in a library of its own is verified bit-exactly against a numpy model (the
harness simulates the Verilog GHDL synthesized, the netlist Yosys maps), synthesized and gated by
`doit build` in a fresh project; a cocotb testbench runs on GHDL; a Verilog top instantiating a VHDL
entity is simulated and synthesized. Without GHDL the refusal of before stays (its words, plus the fix)."""

from __future__ import annotations

from kabe.project.design_context import DesignContext
from kabe.sim.ask import SimAsk
import json
import shutil

import pytest

import template_project
from . import vhdl_designs as v
from kabe.project import designs
from kabe.flows import ghdl, open as open_flow
from kabe.flows.base import FlowError
from kabe.sim import golden, runner

pytestmark = pytest.mark.e2e  # end to end: real tools, minutes (the fast tier leaves it out: -m 'not e2e')

needs_ghdl = pytest.mark.skipif(shutil.which("ghdl") is None, reason="GHDL is not installed (apt-get install ghdl)")


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(golden, "ROOT", tmp_path)
    return tmp_path


@needs_ghdl
def test_a_vhdl_top_in_two_libraries_matches_its_model_and_a_wrong_generic_fails(project):
    d = designs.load(v.write_vadd(project, "vadd", k=5, model_module="vadd_model_k5"))
    r = runner.run_sim(DesignContext(designs.get(d)), SimAsk(3000, seed=3, build_root=project / "build"))
    assert r["passed"], (r["problems"], r["first_mismatches"])
    assert r["words_checked"] == 3000 and r["mismatches"] == 0
    # the design is what GHDL built from the VHDL with the core's generic: K=7 is another design, and fails
    r = runner.run_sim(DesignContext(designs.get(d)), SimAsk(3000, seed=3, params={"K": 7}, build_root=project / "build"))
    assert not r["passed"] and r["mismatches"] > 2900
    generated = list((project / "build" / "sim" / "vadd").glob("ghdl-*/" + ghdl.GENERATED))
    assert generated and "module vadd_top" in generated[0].read_text()


@needs_ghdl
def test_a_verilog_top_instantiating_a_vhdl_entity_simulates_and_synthesizes(project):
    d = designs.load(v.write_mix(project, "mix", model_module="mix_model_k3"))
    r = runner.run_sim(DesignContext(designs.get(d)), SimAsk(2000, seed=4, build_root=project / "build"))
    assert r["passed"] and r["words_checked"] == 2000, (r["problems"], r["first_mismatches"])
    from kabe.project import cores

    edam = cores.resolve(d, "synth", build_root=project / "build")
    synth = open_flow.synthesize(edam, project / "build" / "mix" / "open")
    stat = json.loads(synth.stat_json.read_text())
    cells = stat["modules"]["\\mix_top"]["num_cells_by_type"]
    assert cells.get("FDRE", 0) + cells.get("FDSE", 0) + cells.get("FDCE", 0) >= 16  # the stage's registers
    assert "read_verilog -defer ghdl/ghdl_synth.v" in synth.script.read_text()


@needs_ghdl
def test_a_cocotb_testbench_runs_on_ghdl_and_a_wrong_counter_fails(project):
    r = runner.run_sim(DesignContext(designs.get(designs.load(v.write_vcount(project, "vcount", step=1, test_module="test_vcount_a")))), SimAsk(build_root=project / "build"))
    assert r["passed"] and r["tests"] == 1 and r["failed"] == 0, r["problems"]
    assert "GHDL" in r["version"]
    r = runner.run_sim(DesignContext(designs.get(designs.load(v.write_vcount(project, "vcount2", step=2, test_module="test_vcount_b")))), SimAsk(build_root=project / "build"))
    assert not r["passed"] and r["failed"] == 1


def test_without_ghdl_vhdl_is_refused_as_before_with_the_fix(project, monkeypatch):
    monkeypatch.setattr(ghdl, "command", lambda: None)
    from kabe.project import cores

    d = designs.load(v.write_vadd(project, "vadd_nog"))
    edam = cores.resolve(d, "synth", build_root=project / "build")
    with pytest.raises(FlowError) as e:
        open_flow.synthesize(edam, project / "out")
    msg = str(e.value)
    assert "\n" not in msg and "vadd_stage.vhd: VHDL (vhdlSource-2008" in msg
    assert "the open flow reads Verilog and SystemVerilog only. Fix: build it with flow=vivado" in msg
    assert "apt-get install ghdl" in msg
    assert not (project / "out" / "synth.ys").exists()


@needs_ghdl
def test_doit_build_verifies_synthesizes_gates_and_archives_a_vhdl_design(tmp_path):
    project = template_project.make(tmp_path / "p")
    v.write_vadd(project, "vadd", k=5)
    template_project.git(project, "add", "-A")
    template_project.git(project, "commit", "-qm", "a VHDL design")
    rc, out = template_project.run(project, "doit", "build:vadd", timeout=1200)
    assert rc == 0, out[-4000:]
    commit = template_project.git(project, "rev-parse", "HEAD")
    unit = project / "reports" / commit / "vadd" / "open"
    m = json.loads((unit / "metrics.json").read_text())
    assert m["sim"]["passed"] and m["sim"]["words_checked"] > 0 and m["sim"]["mismatches"] == 0
    assert m["gate"]["passed"] and m["timing"]["wns_ns"] is not None
    assert m["utilization"]["ff"] >= 16 and "ghdl" in m["tools"]
    assert (unit / ghdl.GENERATED).is_file()  # what Yosys read of the VHDL, archived with the build
