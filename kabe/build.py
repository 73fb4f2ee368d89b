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
from .paths import BUILD, REPORTS, ROOT
from .records import cache, metrics
from .records.archive import archive_dir, to_json, write_atomic

# The simulation check a build runs first: small (seconds), still whole frames through every port.
# Full-scale verification is `doit sim:<design> rows=N`.
SIM_CHECK_ROWS_PER_PORT = 64


class BuildError(UserError):
    """The build could not run: one sentence, nothing archived."""


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


def _sim_check(design: designs.Design, console: Console) -> dict:
    from .sim import runner

    rows = SIM_CHECK_ROWS_PER_PORT * design.ports
    with console.status(f"[bold]{design.name}[/]: simulation check, {rows} rows against the numpy model"):
        return runner.run_sim(design, rows, console=console)


def cache_key(design: designs.Design, flow_name: str, *, sim_check: bool = True, edam=None) -> cache.CacheKey:
    """The content key of this build (kabe.records.cache): never the commit."""
    return cache.key_for(design, flow_name, synth=edam,
                         sim_check_rows=SIM_CHECK_ROWS_PER_PORT * design.ports if sim_check else 0)


def _verdict(design: designs.Design, flow_name: str, timing: dict, utilization: dict | None, sim: dict | None):
    verdict = gate.evaluate(timing, utilization, gate.budgets_from_mapping(design.budgets_for(flow_name)))
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
    return verdict


def _reuse(entry: cache.Entry, design: designs.Design, flow_name: str, commit: provenance.Commit,
           key: cache.CacheKey, reports_root: Path, started: str, t0: float) -> dict:
    """A cache hit: no tool runs; the reused build's results are re-gated with today's budgets and
    archived under this commit, naming the build they came from."""
    old = entry.record
    utilization = None if old["utilization"].get("missing") else old["utilization"]
    verdict = _verdict(design, flow_name, old["timing"], utilization, old.get("sim"))
    recorded = {Path(k) if Path(k).is_absolute() else ROOT / k: v for k, v in old["inputs"].items()}
    inputs = {**old["inputs"], **provenance.input_hashes(p for p in recorded if p.is_file())}
    origin, origin_dirty = cache.built_by(old)  # a reuse of a reuse names the build that ran the tools
    reused_from = {"commit": origin, "dirty": origin_dirty, "key": key.key}
    record = {k: v for k, v in old.items() if not k.startswith("_")}
    record.update({"commit": commit.sha, "dirty": commit.dirty, "gate": verdict.as_dict(), "inputs": inputs,
                   "started": started, "finished": _now(), "seconds": round(time.monotonic() - t0, 3),
                   "tool_seconds": 0.0, "cache_key": key.key, "reused_from": reused_from})
    metrics.validate(record)
    manifest = {**entry.manifest, "commit": commit.sha, "dirty": commit.dirty, "inputs": inputs,
                "reused_from": reused_from}
    files: dict[str, str | Path] = {"metrics.json": to_json(record), "manifest.json": to_json(manifest),
                                    cache.KEY_FILE: to_json(key.material)}
    files.update(cache.reused_files(entry))
    dest = write_atomic(archive_dir(commit, design.name, flow_name, reports_root), files)
    cache.remember(reports_root, dest, key.key)
    record["_archive"] = str(dest)
    return record


def build(design_name: str, flow_request: str | None = None, *, console: Console | None = None,
          reports_root: Path = REPORTS, sim_check: bool = True, use_cache: bool = True) -> dict:
    """Run one design's build; returns the metrics record (also archived). Raises BuildError.
    use_cache: reuse an archive built from the same content key instead of running any tool."""
    console = console or Console()
    design = designs.get(design_name)
    flow_name = config.resolve_flow(flow_request)
    flow = flows.get(flow_name)
    commit = provenance.current_commit()
    started, t0 = _now(), time.monotonic()
    flow.check_tools()  # a missing tool is said before minutes of other work, not after
    edam = cores.resolve(design, "synth")  # once: the flow gets the resolved target, not a name
    key = cache_key(design, flow_name, sim_check=sim_check, edam=edam)
    if use_cache:
        # the Vivado flow's bitstream carries its commit's dirty flag: a clean commit reuses clean builds only
        hit = cache.lookup(reports_root, design.name, flow_name, key.key,
                           clean_only=flow_name == "vivado" and not commit.dirty)
        if hit is not None:
            try:
                record = _reuse(hit, design, flow_name, commit, key, reports_root, started, t0)
            except metrics.MetricsError as e:  # a record of an older schema: build instead
                console.print(f"[dim]{design.name}: cache entry {hit.archive} not reusable ({escape(str(e))})[/]")
            else:
                console.print(f"[dim]{design.name}: cache hit, reused {hit.archive} (key {key.key[:12]})[/]")
                return record
        last = cache.nearest(reports_root, design.name, flow_name)
        why = cache.difference(last, key.material) if last else None
        console.print(f"[dim]{design.name}: cache miss (key {key.key[:12]}"
                      f"{f'; since the last build, {escape(why)}' if why else ''})[/]")

    sim = _sim_check(design, console) if sim_check else None
    workdir = BUILD / design.name / flow_name
    workdir.mkdir(parents=True, exist_ok=True)
    try:
        result = flow.run_build(design, edam, workdir, console=console)
    except (ReportError, ConstraintError) as e:
        # No clock constrained, or the tool ran but its report cannot be trusted: the build's verdict
        # is a failing gate, archived like any other so the history shows it.
        result = FlowResult(flow_name, PYNQ_Z1.part, None, unreadable_timing(str(e), estimated=flow.ESTIMATED), None)

    verdict = _verdict(design, flow_name, result.timing, result.utilization, sim)

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
    # An input edited while the tools ran: the output belongs to neither content, so it is no cache entry.
    if cache_key(design, flow_name, sim_check=sim_check).key == key.key:
        record["cache_key"] = key.key
    else:
        console.print(f"[yellow]{design.name}: an input changed during the build; not kept as a cache entry[/]")
    if result.utilization is None:
        record["utilization"]["missing"] = True
    metrics.validate(record)
    manifest = {"commit": commit.sha, "dirty": commit.dirty, "design": design.name, "flow": flow_name,
                "inputs": inputs, "artifacts": artifacts, "raw_files": sorted(result.raw_files)}
    files: dict[str, str | Path] = {"metrics.json": to_json(record), "manifest.json": to_json(manifest)}
    if "cache_key" in record:
        files[cache.KEY_FILE] = to_json(key.material)
    files.update(result.raw_files)
    files.update({Path(p).name: p for p in result.artifacts.values()})
    dest = write_atomic(archive_dir(commit, design.name, flow_name, reports_root), files)
    cache.remember(reports_root, dest, record.get("cache_key"))
    record["_archive"] = str(dest)
    return record




def run(design_name: str, flow_request: str | None = None, console: Console | None = None, *,
        use_cache: bool = True) -> int:
    """Build, print the summary, return the exit status (non-zero when the gate fails)."""
    from . import summary

    console = console or Console()
    try:
        record = build(design_name, flow_request, console=console, use_cache=use_cache)
    except UserError as e:  # a missing tool, a broken core file: one sentence, no traceback
        console.print(f"[red]kabe build {design_name}: {escape(str(e))}[/]")
        return 2
    summary.render(record, console)
    return 0 if record["gate"]["passed"] else 1
