"""`doit build:<design>`: resolve -> verify -> flow -> gate -> archive -> summary.

The design is resolved once (its facts and its FuseSoC synth target) and passed down. The flow
(kabe.flows registry: open, vivado, ...) is the only step that knows a tool; everything after it
sees the timing and utilization records only, so every flow is gated and archived the same way.
"""

from __future__ import annotations

import datetime as dt
import time
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from . import config, cores, designs, flows, gate, provenance
from .boards import PYNQ_Z1
from .constraints import ConstraintError
from .errors import UserError
from .flows.base import FlowResult, unreadable_timing
from .parsers import ReportError
from .paths import BUILD, REPORTS
from .records import metrics, safe_fs
from .records.archive import archive_dir, to_json, write_atomic

# The simulation check a build runs first: small (seconds), still whole frames through every port.
# Full-scale verification is `doit sim:<design> rows=N`.
SIM_CHECK_ROWS_PER_PORT = 64


class BuildError(UserError):
    """The build could not run: one sentence, nothing archived."""


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


def _sweep_variant() -> dict | None:
    """A sweep worker (kabe.sweep.worker) builds a variant in a scratch tree and names it in KABE_VARIANT:
    the settings go into metrics.json so the archive says what was built."""
    import json
    import os

    raw = os.environ.get("KABE_VARIANT")
    if not raw:
        return None
    try:
        v = json.loads(raw)
        return {"id": str(v["id"]), "settings": dict(v["settings"])}
    except (ValueError, KeyError, TypeError):
        raise BuildError("KABE_VARIANT is set but is not {\"id\": ..., \"settings\": {...}}; unset it") from None


def _sim_check(design: designs.Design, console: Console) -> dict:
    from .sim import runner

    rows = SIM_CHECK_ROWS_PER_PORT * design.ports
    with console.status(f"[bold]{design.name}[/]: simulation check, {rows} rows against the numpy model"):
        return runner.run_sim(design, rows, console=console)


def build(design_name: str, flow_request: str | None = None, *, console: Console | None = None,
          reports_root: Path = REPORTS, sim_check: bool = True) -> dict:
    """Run one design's build; returns the metrics record (also archived). Raises BuildError."""
    console = console or Console()
    design = designs.get(design_name)
    flow_name = config.resolve_flow(flow_request)
    flow = flows.get(flow_name)
    commit = provenance.current_commit()
    started, t0 = _now(), time.monotonic()
    flow.check_tools()  # a missing tool is said before minutes of other work, not after
    edam = cores.resolve(design, "synth")  # once: the flow gets the resolved target, not a name

    sim = _sim_check(design, console) if sim_check else None
    workdir = BUILD / design.name / flow_name
    safe_fs.make_dirs(workdir, BUILD)  # a symlinked build/<design> is refused, not written through
    try:
        result = flow.run_build(design, edam, workdir, console=console)
    except (ReportError, ConstraintError) as e:
        # No clock constrained, or the tool ran but its report cannot be trusted: the build's verdict
        # is a failing gate, archived like any other so the history shows it.
        result = FlowResult(flow_name, PYNQ_Z1.part, None, unreadable_timing(str(e), estimated=flow.ESTIMATED), None)

    verdict = gate.evaluate(result.timing, result.utilization, gate.budgets_from_mapping(design.budgets_for(flow_name)))
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
        "flow": flow_name,
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
    variant = _sweep_variant()
    if variant is not None:
        record["variant"] = variant
    metrics.validate(record)
    manifest = {"commit": commit.sha, "dirty": commit.dirty, "design": design.name, "flow": flow_name,
                "inputs": inputs, "artifacts": artifacts, "raw_files": sorted(result.raw_files)}
    files: dict[str, str | Path] = {"metrics.json": to_json(record), "manifest.json": to_json(manifest)}
    files.update(result.raw_files)
    files.update({Path(p).name: p for p in result.artifacts.values()})
    dest = write_atomic(archive_dir(commit, design.name, flow_name, reports_root), files, root=reports_root)
    record["_archive"] = str(dest)
    return record




def run(design_name: str, flow_request: str | None = None, console: Console | None = None) -> int:
    """Build, print the summary, return the exit status (non-zero when the gate fails)."""
    from . import summary

    console = console or Console()
    try:
        record = build(design_name, flow_request, console=console)
    except UserError as e:  # a missing tool, a broken core file: one sentence, no traceback
        console.print(f"[red]kabe build {design_name}: {escape(str(e))}[/]")
        return 2
    summary.render(record, console)
    return 0 if record["gate"]["passed"] else 1
