"""One build looks each fact up once (issue 40 item 1): the verb resolves the design's targets, reads the XDC,
the commit and makes the flow once, and the layers below take the context (kabe.project.design_context), never a
name. The counting is scripts/count_fact_lookups.py's, in this process."""

from __future__ import annotations

import importlib.util
import sys
import threading
from pathlib import Path

import pytest

from kabe import build
from kabe.project import constraints, designs, design_context
from kabe.flows import open as open_flow
from kabe.flows.base import FlowResult

ROOT = Path(__file__).resolve().parent.parent


def _counter():
    spec = importlib.util.spec_from_file_location("count_fact_lookups", ROOT / "scripts" / "count_fact_lookups.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.Counter()


def _counted(fn):
    counter = _counter()
    threading.setprofile(counter.hook)
    sys.setprofile(counter.hook)
    try:
        fn()
    finally:
        sys.setprofile(None)
        threading.setprofile(None)
    return counter


def _stub_flow(monkeypatch, seen: list):
    """The open flow without Yosys: it still asks its context for the XDC's clocks, as the real one does."""
    def run_build(ctx, workdir):
        seen.append(ctx)
        clocks = ctx.xdc_clocks()
        return FlowResult("open", ctx.design.board.part, clocks[0].period_ns,
                          {"estimated": True, "wns_ns": 1.0, "tns_ns": 0.0, "whs_ns": None, "critical_path": None,
                           "clocks": [{"name": c.name, "period_ns": c.period_ns} for c in clocks]},
                          {"lut": 1, "ff": 1, "dsp": 0, "bram36_equiv": 0}, raw_files={}, tools={"yosys": "stub"},
                          inputs=[], tool_seconds=0.0)

    monkeypatch.setattr(open_flow, "run_build", run_build)


def test_a_build_without_its_simulation_looks_each_fact_up_once(tmp_path, monkeypatch):
    """cache=off: FuseSoC sets both targets up (the key reads the sim target too), once each."""
    seen: list = []
    _stub_flow(monkeypatch, seen)
    design = designs.get("stage2")
    counter = _counted(lambda: build.build(design, "open", reports_root=tmp_path / "reports", sim_check=False,
                                           use_cache=False))
    assert counter.repeated() == [], counter.report()
    for fact in ("FuseSoC resolution (stage2, sim)", "FuseSoC resolution (stage2, synth)", "flow resolution (open)",
                 f"XDC parse ({design.constraints})", "commit read", "cache key (stage2, open)"):
        assert counter.counts[fact] == 1, counter.report()
    ctx = seen[0]  # the flow got the facts the build resolved, not a name to look up again
    assert isinstance(ctx, design_context.DesignContext) and ctx.design is design
    assert ctx.synth is not None and ctx.sim is not None and ctx.clocks


def test_a_second_lookup_is_caught(tmp_path, monkeypatch):
    """The check can fail: a flow that parses the XDC itself again is counted twice."""
    def parse_again(ctx, workdir):
        constraints.parse_xdc(ctx.design.constraints)
        raise constraints.ConstraintError("stop here")

    monkeypatch.setattr(open_flow, "run_build", parse_again)
    design = designs.get("stage2")
    counter = _counted(lambda: build.build(design, "open", reports_root=tmp_path / "reports", sim_check=False,
                                           use_cache=False))
    assert counter.repeated() == [f"XDC parse ({design.constraints})"]


def test_the_context_reads_clocks_once_and_keeps_why_there_are_none(tmp_path):
    xdc = tmp_path / "none.xdc"
    xdc.write_text("# no clock\n")
    d = designs.get("stage2")
    import dataclasses

    clocks, why = design_context.read_clocks(dataclasses.replace(d, constraints=xdc))
    assert clocks == () and isinstance(why, constraints.NoClockError)
    ctx = design_context.DesignContext(d, clocks=clocks, clock_error=why)
    with pytest.raises(constraints.NoClockError):
        ctx.xdc_clocks()
    assert ctx.port_clocks() == []
    real = design_context.DesignContext(d, clocks=design_context.read_clocks(d)[0])
    assert real.port_clocks() and real.xdc_clocks()[0].period_ns > 0


@pytest.mark.e2e
def test_a_build_with_its_simulation_check_looks_each_fact_up_once(tmp_path, monkeypatch):
    """The simulation check (Verilator, real) and the flow (stubbed) read the build's context."""
    _stub_flow(monkeypatch, [])
    design = designs.get("stage2")
    counter = _counted(lambda: build.build(design, "open", reports_root=tmp_path / "reports", use_cache=False))
    assert counter.repeated() == [], counter.report()
    assert counter.counts["FuseSoC resolution (stage2, sim)"] == 1, counter.report()
