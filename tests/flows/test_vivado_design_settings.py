"""design.yaml's `vivado:` table: which shape the Vivado build is, the design's hooks per step and its
strategies, in kabe's shell too (the project Tcl run on the STAND-IN recorder: tests/standin/vivado_commands.tcl)."""

from __future__ import annotations

import dataclasses
import os

import pytest

from kabe.project import config, designs
from kabe.base import provenance
from kabe.project.designs import DesignError, VivadoSettings, _check_vivado
from kabe.flows.vivado import project, tool
from kabe.base.paths import ROOT
from tests.flows.test_vivado_flow import TCLSH, calls, props, run_tcl


def test_the_shape_defaults_to_kabes_shell_only_for_its_stream_contract(tmp_path):
    y = tmp_path / "design.yaml"
    assert _check_vivado(y, None, True).top == "shell" and _check_vivado(y, None, False).top == "own"
    assert not _check_vivado(y, None, False).declared
    assert all(designs.get(n).vivado.top == "shell" for n in designs.names())  # this project's seven


@pytest.mark.parametrize("spec, says", [
    ({"top": "mine"}, "vivado.top must be one of own, shell"),
    ({"hooks": {"write_image": {"pre": "a.tcl"}}}, "vivado.hooks must map a step"),
    ({"hooks": {"route_design": {"post": "missing.tcl"}}}, "missing.tcl is not a file"),
    ({"strategies": {"place_directive": "Explore; exec rm"}}, "vivado.strategies must map"),
    ({"jobs": 0}, "vivado.jobs must be a positive integer"),
    ({"ip_upgrade": "yes"}, "vivado.ip_upgrade must be true or false"),
    ({"shape": "own"}, "vivado: unknown key(s) shape"),
])
def test_a_bad_vivado_table_is_one_line_naming_it(tmp_path, spec, says):
    with pytest.raises(DesignError, match=says.replace("(", r"\(").replace(")", r"\)")):
        _check_vivado(tmp_path / "design.yaml", spec, False)


def _with(design, tmp_path, **kw):
    hooks = {}
    for step, when in kw.pop("hooks", {}).items():
        for w, name in when.items():
            f = tmp_path / name
            f.write_text(f"puts {{hook {name}}}\n")
            hooks.setdefault(step, {})[w] = f
    return dataclasses.replace(design, vivado=VivadoSettings(top="shell", declared=True, hooks=hooks, **kw))


@pytest.mark.skipif(TCLSH is None, reason="tclsh runs the dry run")
def test_the_designs_hooks_reach_kabes_shell_too(tmp_path):
    d = _with(designs.get("stage2"), tmp_path, hooks={"synth_design": {"pre": "pre_synth.tcl"},
                                                      "route_design": {"post": "post_route.tcl"},
                                                      "write_bitstream": {"pre": "pre_bit.tcl"}})
    p = project.generate_project(d, tmp_path / "edalize", commit=provenance.Commit("0" * 40, False),
                                 flow_settings=tool.settings({}))
    rec = tmp_path / "rec.txt"
    r = run_tcl(f"source {{{p.project_tcl}}}", p.work_root, rec)
    assert r.returncode == 0, r.stdout + r.stderr
    pr = props(calls(rec))
    assert pr["synth_1"]["STEPS.SYNTH_DESIGN.TCL.PRE"].endswith("pre_synth.tcl")
    assert pr["impl_1"]["STEPS.ROUTE_DESIGN.TCL.POST"].endswith("post_route.tcl")
    assert pr["impl_1"]["STEPS.WRITE_BITSTREAM.TCL.PRE"] == str(p.hook_tcl)  # kabe's dispatcher keeps the step
    sourced = [ln for ln in p.hook_tcl.read_text().splitlines() if ln.startswith("source")]
    assert sourced[1].endswith("pre_bit.tcl}")  # after the settings, before kabe's reports
    assert {tmp_path / "post_route.tcl", tmp_path / "pre_bit.tcl"} <= set(p.inputs)


def test_design_strategies_apply_unless_tool_kabe_sets_them(tmp_path, monkeypatch):
    d = _with(designs.get("stage2"), tmp_path, strategies={"place_directive": "Explore", "impl_strategy": "A"},
              jobs=6)
    monkeypatch.setattr(config, "load", lambda *a, **k: {"vivado_impl_strategy": "Performance_Explore"})
    fs = tool.with_design_settings(tool.settings({"vivado_impl_strategy": "Performance_Explore"}), d)
    assert fs["vivado_place_directive"] == "Explore" and fs["vivado_jobs"] == 6
    assert fs["vivado_impl_strategy"] == "Performance_Explore"  # the project's (or a sweep variant's) setting wins


def test_only_kabes_versal_shell_needs_the_base_designs_vivado(monkeypatch):
    from types import SimpleNamespace

    from kabe.flows import vivado
    from kabe.flows.base import FlowError

    monkeypatch.setenv("PATH", f"{ROOT / 'tests' / 'standin'}{os.pathsep}{os.environ['PATH']}")
    # the design's own top on a V80 part stands on no AVED: any Vivado builds it (tests/flows/test_vivado_own_versal.py)
    d = dataclasses.replace(designs.get("v80_ternary"), vivado=VivadoSettings(top="own", declared=True))
    monkeypatch.setenv("KABE_STANDIN_VERSION", "2024.2")
    vivado.check_design(d, SimpleNamespace(files=[]))
    # kabe's shell: only the Vivado on PATH against the AVED release's (the stand-in claims what it is told)
    monkeypatch.setenv("KABE_STANDIN_VERSION", "2025.1")
    vivado.check_design(designs.get("v80_ternary"), None)
    monkeypatch.setenv("KABE_STANDIN_VERSION", "2024.2")
    with pytest.raises(FlowError, match="needs Vivado 2025.1, but Vivado 2024.2 is on PATH"):
        vivado.check_design(designs.get("v80_ternary"), None)
