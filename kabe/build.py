"""`doit build:<design>`: verify -> synthesize -> report -> gate -> archive -> summary.

The flow (open or vivado) is the only step that knows a tool; everything after it sees the
timing and utilization records only, so both flows are gated and archived the same way.
"""

from __future__ import annotations

import datetime as dt
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from . import config, designs, gate, metrics, provenance
from .archive import archive_dir, to_json, write_atomic
from .boards import PYNQ_Z1
from .constraints import ConstraintError
from .cores import CoreError
from .flows.open import ToolError
from .parsers import ReportError
from .paths import BUILD, REPORTS
from .sim.runner import SimError

# The simulation check a build runs first: small (seconds), still whole frames through every port.
# Full-scale verification is `doit sim:<design> rows=N`.
SIM_CHECK_ROWS_PER_PORT = 64


class BuildError(RuntimeError):
    """The build could not run (missing tool, broken core file): one sentence, nothing archived."""


@dataclass
class FlowResult:
    """What a flow hands back: records in metrics.json's shapes plus the raw files to archive."""

    flow: str
    part: str
    clock_period_ns: float
    timing: dict[str, Any]
    utilization: dict[str, Any] | None
    raw_files: dict[str, Path] = field(default_factory=dict)  # archive name -> file
    tools: dict[str, str] = field(default_factory=dict)
    inputs: list[Path] = field(default_factory=list)  # files the result depends on (hashed)
    artifacts: dict[str, Path] = field(default_factory=dict)  # bitstream, hwh: hashed into the manifest
    tool_seconds: float | None = None  # time inside the tool itself (for the orchestration-overhead benchmark)


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


def _run_flow(flow: str, design: designs.Design, workdir: Path, console: Console) -> FlowResult:
    if flow == "open":
        from .flows import open as open_flow

        return open_flow.run_build(design, workdir, console=console)
    if flow == "vivado":
        from .flows import vivado as vivado_flow

        return vivado_flow.run_build(design, workdir, console=console)
    raise BuildError(f"unknown flow {flow!r}")


def _sim_check(design: designs.Design, console: Console) -> dict:
    from .sim import runner

    rows = SIM_CHECK_ROWS_PER_PORT * design.ports
    with console.status(f"[bold]{design.name}[/]: simulation check, {rows} rows against the numpy model"):
        return runner.run_sim(design.name, rows, console=console)


def build(design_name: str, flow_request: str | None = None, *, console: Console | None = None,
          reports_root: Path = REPORTS, sim_check: bool = True) -> dict:
    """Run one design's build; returns the metrics record (also archived). Raises BuildError."""
    console = console or Console()
    design = designs.get(design_name)
    flow = config.resolve_flow(flow_request)
    commit = provenance.current_commit()
    started, t0 = _now(), time.monotonic()
    if flow == "vivado":  # a missing Vivado is said before minutes of other work, not after
        from .flows.vivado import find_vivado

        find_vivado()

    sim = _sim_check(design, console) if sim_check else None
    workdir = BUILD / design.name / flow
    workdir.mkdir(parents=True, exist_ok=True)
    try:
        result = _run_flow(flow, design, workdir, console)
    except (ReportError, ConstraintError) as e:
        # No clock constrained, or the tool ran but its report cannot be trusted: the build's verdict
        # is a failing gate, archived like any other so the history shows it.
        result = FlowResult(flow, PYNQ_Z1.part, None, {"estimated": flow == "open", "wns_ns": None, "tns_ns": None,
                                                       "whs_ns": None, "critical_path": None, "clocks": [],
                                                       "error": str(e)}, None)

    verdict = gate.evaluate(result.timing, result.utilization, gate.budgets_from_mapping(design.budgets_for(flow)),
                            waivers=design.waivers)
    if sim is not None:
        # The runner's verdict, not just its word count: a dropped result, a stalled input or a
        # wrong tlast with every compared word right is still a failed verification.
        reasons = ([f"{sim['mismatches']} of {sim['rows_checked']} rows differ from the numpy model "
                    f"(first: {sim['first_mismatches'][:1]})"] if sim["mismatches"] else []) + list(sim["problems"])
        if not sim["passed"] and not reasons:
            reasons = ["the simulation did not pass"]
        verdict.checks.insert(0, {"name": "sim.verification", "expected": "0 mismatches, no problems",
                                  "got": f"{sim['mismatches']} mismatches, {len(sim['problems'])} problems",
                                  "passed": bool(sim["passed"])})
        if not sim["passed"]:
            verdict.passed = False
            verdict.failures[:0] = [f"verification: {r}" for r in reasons]

    inputs = provenance.input_hashes([*result.inputs, design.yaml_file, design.core_file, design.constraints])
    artifacts = {name: provenance.sha256_file(p) for name, p in result.artifacts.items()}
    record = {
        "schema": metrics.SCHEMA_ID,
        "commit": commit.sha,
        "dirty": commit.dirty,
        "design": design.name,
        "flow": flow,
        "part": result.part,
        "clock_period_ns": result.clock_period_ns,
        "timing": result.timing,
        "utilization": result.utilization or {"lut": 0, "ff": 0, "dsp": 0, "bram36_equiv": 0},
        "gate": verdict.as_dict(),
        "tools": result.tools,
        "inputs": inputs,
        "artifacts": artifacts,
        "sim": sim,
        "started": started,
        "finished": _now(),
        "seconds": round(time.monotonic() - t0, 3),
        "tool_seconds": result.tool_seconds,
    }
    if result.utilization is None:
        record["utilization"]["missing"] = True
    metrics.validate(record)
    manifest = {"commit": commit.sha, "dirty": commit.dirty, "design": design.name, "flow": flow,
                "inputs": inputs, "artifacts": artifacts, "raw_files": sorted(result.raw_files)}
    files: dict[str, str | Path] = {"metrics.json": to_json(record), "manifest.json": to_json(manifest)}
    files.update(result.raw_files)
    files.update({Path(p).name: p for p in result.artifacts.values()})
    dest = write_atomic(archive_dir(commit, design.name, flow, reports_root), files)
    record["_archive"] = str(dest)
    return record


# Errors whose message tells the user what to fix; anything else is a bug in kabe and keeps its traceback.
_USER_ERRORS = (BuildError, designs.DesignError, config.ConfigError, metrics.MetricsError, CoreError, ToolError,
                SimError)


def run(design_name: str, flow_request: str | None = None, console: Console | None = None) -> int:
    """Build, print the summary, return the exit status (non-zero when the gate fails)."""
    from . import summary

    console = console or Console()
    try:
        record = build(design_name, flow_request, console=console)
    except _USER_ERRORS as e:  # a missing tool, a broken core file: one sentence, no traceback
        console.print(f"[red]kabe build {design_name}: {escape(str(e))}[/]")
        return 2
    summary.render(record, console)
    return 0 if record["gate"]["passed"] else 1
