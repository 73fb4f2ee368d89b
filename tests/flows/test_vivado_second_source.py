"""The Vivado flow's second source: kabe/flows/vivado/tcl/timing_verdict.tcl asks Vivado itself (here the
STAND-IN of tests/standin, which answers from tests/fixtures/vivado/flow_slacks*.txt) for the
worst setup, hold, recovery and removal slack, pulse-width violators and unsafe crossings; the
gate requires that answer to agree with the parsed report_timing_summary, or fails showing both.
Also: the logic-level distribution the flow collects for logic-level budgets."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from kabe import build
from kabe.base import provenance
from kabe.project import designs
from kabe.flows.vivado import collect, project, tool
from kabe.parsers import ReportError, vivado_timing_verdict
from kabe.flows.vivado.project import TCL_DIR
from kabe.base.paths import ROOT

STANDIN = ROOT / "tests" / "standin"
FIXTURES = ROOT / "tests" / "fixtures" / "vivado"
HOOK = TCL_DIR / "timing_verdict.tcl"


@pytest.fixture()
def standin_path(monkeypatch):
    monkeypatch.setenv("PATH", f"{STANDIN}{os.pathsep}{os.environ['PATH']}")
    assert shutil.which("vivado") == str(STANDIN / "vivado")


def run_hook(tmp_path: Path, fixtures: Path, scenario: str = "met") -> Path:
    """The hook alone, in tclsh on the stand-in's procs (run mode), as impl_1 would source it."""
    report_dir = tmp_path / "reports"
    report_dir.mkdir()
    script = (f"source {{{STANDIN / 'vivado_commands.tcl'}}}\nset ::standin::mode run\n"
              f"set ::standin::fixtures {{{fixtures}}}\nset ::standin::scenario {scenario}\n"
              f"set ::kabe(report_dir) {{{report_dir}}}\n"
              f"if {{[catch {{source {{{HOOK}}}}} msg]}} {{ puts stderr $msg; exit 1 }}\nexit 0\n")
    r = subprocess.run(["tclsh"], input=script, text=True, capture_output=True)
    assert r.returncode == 0, r.stderr
    return report_dir / "timing_verdict.json"


def test_the_hook_writes_vivados_answers_as_json(tmp_path):
    v = vivado_timing_verdict.parse_file(run_hook(tmp_path, FIXTURES))
    assert (v["wns_ns"], v["whs_ns"], v["setup_ns"], v["hold_ns"], v["recovery_ns"], v["removal_ns"]) == (
        0.062, 0.161, 0.062, 0.161, 4.917, 0.402)
    assert (v["pulse_width_violated"], v["unsafe_clock_interactions"], v["vivado"]) == (False, 0, "2023.2")


def test_the_hook_counts_unsafe_crossings_and_pulse_width_violators(tmp_path):
    fx = tmp_path / "fx"
    shutil.copytree(FIXTURES, fx)
    shutil.copy(fx / "clock_interaction_7z020_2023.2_unsafe.rpt", fx / "flow_clock_interaction.rpt")
    (fx / "flow_slacks.txt").write_text("setup 0.062\nhold 0.161\nrecovery none\nremoval none\npulse_width_violators 3\n")
    v = vivado_timing_verdict.parse_file(run_hook(tmp_path, fx))
    assert (v["unsafe_clock_interactions"], v["pulse_width_violated"], v["recovery_ns"]) == (2, True, None)


@pytest.mark.parametrize("text,why", [
    ("{", "not JSON"), ('{"schema": "other"}', "not a kabe.vivado_timing_verdict"),
    ('{"schema": "kabe.vivado_timing_verdict/1", "wns_ns": "0.1"}', "no 'whs_ns'|'wns_ns' is"),
    ('{"schema": "kabe.vivado_timing_verdict/1", "wns_ns": -0.4, "wns_ns": 0.1}', "'wns_ns' appears twice"),
])
def test_a_damaged_verdict_is_refused(tmp_path, text, why):
    with pytest.raises(ReportError, match=why):
        vivado_timing_verdict.parse(text, "v.json")


def _build(tmp_path, monkeypatch, fixtures: Path | None = None, scenario: str = "met") -> dict:
    monkeypatch.setenv("KABE_STANDIN_SCENARIO", scenario)
    if fixtures is not None:
        monkeypatch.setenv("KABE_STANDIN_FIXTURES", str(fixtures))
    return build.build(designs.get("stage4"), "vivado", sim_check=False, reports_root=tmp_path / "reports")


def test_a_build_whose_sources_agree_passes_and_archives_both(standin_path, tmp_path, monkeypatch):
    record = _build(tmp_path, monkeypatch)
    t = record["timing"]
    assert t["second_source"]["wns_ns"] == t["wns_ns"] == 0.062
    assert {"name": "timing.second_source", "expected": "agrees with the parsed report", "got": "agrees",
            "passed": True} in record["gate"]["checks"]
    assert t["logic_level_distribution"]["max_logic_levels"] == 6
    assert (Path(record["_archive"]) / "timing_verdict.json").is_file()
    assert record["gate"]["passed"], record["gate"]["failures"]


def test_a_build_whose_sources_disagree_fails_showing_both(standin_path, tmp_path, monkeypatch):
    """The report says WNS 0.062 but Vivado's own get_timing_paths says -0.120 (a stale or edited
    report): the gate fails and says both numbers."""
    fx = tmp_path / "fx"
    shutil.copytree(FIXTURES, fx)
    (fx / "flow_slacks.txt").write_text("setup -0.120\nhold 0.161\nrecovery 4.917\nremoval 0.402\npulse_width_violators 0\n")
    record = _build(tmp_path, monkeypatch, fx)
    assert not record["gate"]["passed"]
    assert any("disagree" in f and "WNS: report 0.062, Vivado -0.120" in f for f in record["gate"]["failures"])


def test_collect_without_the_verdict_fails_the_gate(tmp_path):
    rd = tmp_path / "reports"
    rd.mkdir()
    for fn in collect.REPORTS.values():
        src = next((p for p in (FIXTURES / f"flow_{Path(fn).stem}_met.rpt", FIXTURES / f"flow_{Path(fn).stem}.rpt")
                    if p.is_file()), None)
        if src is not None:
            shutil.copy(src, rd / fn)
    assert not (rd / "timing_verdict.json").exists() and (rd / "timing_summary.rpt").is_file()
    for name in ("kabe_stage4.bit", "kabe_stage4.hwh", "kabe_stage4.cells.json", "kabe_settings.tcl"):
        (tmp_path / name).write_text("STAND-IN")
    p = project.Project(name="kabe_stage4", work_root=tmp_path, report_dir=rd, bit=tmp_path / "kabe_stage4.bit",
                       hwh=tmp_path / "kabe_stage4.hwh", settings_tcl=tmp_path / "kabe_settings.tcl",
                       hook_tcl=tmp_path / "h.tcl", wrapper=tmp_path / "w.v", edam={}, clock_name="clk_fpga_0",
                       clock_period_ns=7.0, inputs=(), cells=tmp_path / "kabe_stage4.cells.json")
    res = collect.collect(p, tool.VivadoVersion("STAND-IN", "2023.2"))
    assert "does not exist" in res.timing["second_source"]["error"]
    from kabe.rules.gate import evaluate

    v = evaluate(res.timing, res.utilization)
    assert not v.passed and any("no second-source verdict" in f for f in v.failures)


def test_unclocked_registers_fail_the_build_unless_design_yaml_waives_them(standin_path, tmp_path, monkeypatch):
    """Vivado says met, but 12 register pins have no clock: the build fails; with a written waiver
    in design.yaml it passes, and the reason is printed and archived in metrics.json's gate."""
    import dataclasses

    from rich.console import Console

    from kabe.project import designs
    from kabe.build import summary

    fx = tmp_path / "fx"
    shutil.copytree(FIXTURES, fx)
    rpt = fx / "flow_timing_summary_met.rpt"
    rpt.write_text(rpt.read_text().replace("checking no_clock (0)", "checking no_clock (12)").replace(
        "There are 0 register/latch pins with no clock.", "There are 12 register/latch pins with no clock."))
    failed = _build(tmp_path / "a", monkeypatch, fx)
    assert not failed["gate"]["passed"]
    assert any("12 register/latch pins have no clock" in f for f in failed["gate"]["failures"])

    real_get = designs.get
    why = "the PS7's EMIO GPIO pins are clocked by the PS, outside the PL's timing"
    monkeypatch.setattr(designs, "get", lambda name, *a: dataclasses.replace(real_get(name, *a), waivers={"no_clock": why}))
    waived = _build(tmp_path / "b", monkeypatch, fx)
    assert waived["gate"]["passed"] and waived["gate"]["waivers"] == {"no_clock": why}
    on_disk = json.loads((Path(waived["_archive"]) / "metrics.json").read_text())
    assert on_disk["gate"]["waivers"] == {"no_clock": why}
    console = Console(record=True, width=200)
    summary.render(waived, console)
    assert f"waived no_clock: {why}" in console.export_text()
