"""`doit build:<design>`: resolve -> verify -> flow -> gate -> archive -> summary.

The design is resolved once (its facts and its FuseSoC synth target) and passed down. The flow
(kabe.flows registry: open, vivado, ...) is the only step that knows a tool; everything after it
sees the timing and utilization records only, so every flow is gated and archived the same way.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from kabe.project import config, core_targets, cores, design_context, designs
from kabe import flows
from kabe.base import provenance, scratch
from kabe.project.design_context import DesignContext
from kabe.project import flows as flow_registry
from kabe.rules import outcome
from kabe.build import rederive
from kabe.build.reuse import check_writable, reuse, write_unit
from kabe.build.verdict import build_verdict
from kabe.base.console import make_console
from kabe.project.constraints import ConstraintError, NoClockError
from kabe.base.errors import UserError, bug_message
from kabe.flows.base import FlowResult, unreadable_timing
from kabe.parsers import ReportError
from kabe.base.paths import BUILD, REPORTS, ROOT
from kabe.cache import cache, key_change, key_stamp, tracked_outputs
from kabe.records import could_not_run, metrics
from kabe.store import safe_fs
from kabe.store.archive import archive_dir, to_json

class BuildError(UserError):
    """The build could not run: one sentence, nothing archived."""


def flow_for(design: designs.Design, flow_request: str | None) -> str:
    """The flow that builds `design`: an HLS kernel (design.yaml `hls:`) builds with vitis_hls and a v++ link
    (`vitis:`) with vitis, whatever [tool.kabe] flow says; asking another by name is one line with the fix."""
    own = design.own_flow
    if own is None:
        flow = config.resolve_flow(flow_request)
        if flow in ("vitis_hls", "vitis"):
            raise BuildError(f"{design.name} is an RTL design; flow={flow} builds designs whose design.yaml has "
                             f"{'hls:' if flow == 'vitis_hls' else 'vitis:'} ({design.yaml_file}). Use flow=open or "
                             f"flow=vivado")
        return flow
    if flow_request in (None, "auto", own):
        return own
    raise BuildError(f"{design.name} is {'an HLS kernel' if own == 'vitis_hls' else 'a v++ link'} (design.yaml "
                     f"{'hls:' if own == 'vitis_hls' else 'vitis:'}); it builds with flow={own}, not "
                     f"flow={flow_request}. Fix: `doit build:{design.name}` (or flow={own})")


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


def _sim_check(ctx: BuildContext, synth_defines: dict | None = None) -> tuple[dict | None, dict]:
    """The design's own verification (design.yaml's `verify:`): (the sim result or None for
    `verify: {none: ...}`, files to archive with the build: a cocotb run's junit.xml)."""
    from kabe.sim import runner
    from kabe.sim.ask import SimAsk

    design, console, below = ctx.design, ctx.console, ctx.below()
    if design.verify.kind == "none":
        return None, {}
    if design.verify.kind == "cocotb":
        with console.status(f"[bold]{design.name}[/]: simulation check, cocotb {design.verify.value}"):
            result = runner.run_sim(below)
        runner.write_result(result, ctx.reports_root)  # reports/<commit>/<design>/sim/: result.json and junit.xml
        xml_text = result.pop("junit_xml")
        return {**result, "junit": "junit.xml"}, {"junit.xml": xml_text}
    # the size the model declares for a build's check (seconds), else the size it picks (size None);
    # full-scale verification is `doit sim:<design>`
    rows = runner.declared_size(design, "check_size")
    with console.status(f"[bold]{design.name}[/]: simulation check against {design.verify.value}"):
        result = runner.run_sim(below, SimAsk(rows))
    return _synthesis_view(below, rows, result, synth_defines), {}


def _synthesis_view(ctx: DesignContext, rows: int | None, result: dict, synth_defines: dict | None = None) -> dict:
    """Yosys and Vivado define SYNTHESIS, Verilator does not: RTL that tests the macro builds logic the
    simulation above never ran (`ifdef SYNTHESIS  y = d + 1; `else  y = d;`). Such a design is simulated
    a second time with SYNTHESIS defined, and both runs must match the model; the first keeps what only
    a simulation has (assertions under `ifndef SYNTHESIS). The result says the second run as
    `synthesis_view`, and its failure as a problem of the check."""
    from kabe.flows.base import SYNTHESIS_DEFINE, synthesis_macro_code
    from kabe.sim import runner
    from kabe.sim.ask import SimAsk
    from kabe.sim.verilator_build import SimBuildError

    design, console = ctx.design, ctx.console
    places = synthesis_macro_code(ctx.sim.sources)
    if not places:
        return result
    SYNTHESIS_DEFINE = dict(synth_defines or SYNTHESIS_DEFINE)  # noqa: N806 - the flow's (open: YOSYS too)
    console.print(f"[dim]{design.name}[/]: {escape(places[0])}"
                  f"{f' and {len(places) - 1} more' if len(places) > 1 else ''} test SYNTHESIS: simulating again "
                  f"with SYNTHESIS defined, the logic synthesis builds", soft_wrap=True)
    try:
        with console.status(f"[bold]{design.name}[/]: simulation check with SYNTHESIS defined"):
            second = runner.run_sim(ctx, SimAsk(rows, extra_defines=SYNTHESIS_DEFINE))
    except SimBuildError as e:
        # the synthesis branch instantiates what Verilator has no model of (`ifdef SYNTHESIS  BUFG ...`): that
        # logic stays unverified, as it was before this second run existed; said, recorded, not failed
        why = str(e).split(": ", 1)[-1][:300]
        console.print(f"[yellow]{design.name}: note: with SYNTHESIS defined the design does not compile for "
                      f"simulation ({escape(why)}); the logic under `ifdef SYNTHESIS ({escape(places[0])}) is not "
                      f"verified: add a simulation model of what it instantiates as a sim-only file[/]", soft_wrap=True)
        return {**result, "synthesis_view": {"defines": dict(SYNTHESIS_DEFINE), "not_compiled": why,
                                             "places": places[:20]}}
    view = {"defines": dict(SYNTHESIS_DEFINE), "passed": second["passed"], "mismatches": second["mismatches"],
            "problems": list(second["problems"]), "places": places[:20]}
    if second["passed"]:
        return {**result, "synthesis_view": view}
    why = (second["problems"][0] if second["problems"] else
           f"{second['mismatches']:,} of {second.get('words_checked') or '?'} beat(s) differ")
    return {**result, "passed": False, "synthesis_view": view,
            "problems": [*result["problems"], f"with SYNTHESIS defined (the logic Yosys and Vivado build, "
                                              f"{places[0]}): {why}"]}


def _verification(design: designs.Design, sim_check: bool) -> dict:
    """metrics.json's `verification`: how the design is verified, or why this build is not."""
    if not sim_check and design.verify.kind != "none":
        return {"kind": "none", "reason": "built without its simulation check (sim_check=False)"}
    return design.verify.as_dict()


def cache_key(design: designs.Design, flow_name: str, *, sim_check: bool = True, edam=None,
              sim_edam=None) -> cache.CacheKey:
    """The content key of this build (kabe.cache.cache): never the commit. edam, sim_edam: the synth and
    sim targets when the build has resolved them (else the key resolves them)."""
    return cache.key_for(design, flow_name, synth=edam, sim=sim_edam,
                         sim_check_rows=sim_check and design.verify.kind != "none")


@dataclass(frozen=True)
class BuildContext:
    """The facts of one build, made once at its top and passed down, so every layer reads the same
    ones: the design's one context (kabe.project.design_context: the design with its board, the commit the
    archive is named after and a bitstream is stamped with, the console, the resolved synth and sim targets,
    the XDC's clocks), the flow, the content key and the sweep variant."""

    facts: DesignContext
    flow_name: str
    flow: Any
    key: cache.CacheKey
    sim_check: bool
    variant: dict | None  # a sweep worker's variant (read before any tool runs)
    reports_root: Path
    started: str
    t0: float

    @property
    def design(self) -> designs.Design:
        return self.facts.design

    @property
    def commit(self) -> provenance.Commit:
        return self.facts.commit

    @property
    def console(self) -> Console:
        return self.facts.console

    @property
    def workdir(self) -> Path:
        return BUILD / self.design.name / self.flow_name

    def below(self) -> DesignContext:
        """What the layers below take (the flow, the simulation): the facts this build resolved, not a name."""
        return self.facts


def build(design: designs.Design, flow_request: str | None = None, *, console: Console | None = None,
          reports_root: Path = REPORTS, sim_check: bool = True, use_cache: bool = True,
          commit: provenance.Commit | None = None) -> dict:
    """Run one design's build (the verb looked it up: a Design, never a name); returns the metrics record (also
    archived). Raises BuildError.
    use_cache: reuse an archive built from the same content key instead of running any tool.
    commit: the caller's reading of the checkout's commit (doit reads it once for all tasks)."""
    console = console or make_console()
    tracked_outputs.check()  # a cache entry or build folder committed to git is never reused
    flow_name = flow_for(design, flow_request)
    flow = flows.get(flow_name)
    commit = commit or provenance.current_commit()
    started, t0 = _now(), time.monotonic()
    variant = _sweep_variant()  # a malformed KABE_VARIANT is said before any tool runs
    flow.check_tools()  # a missing tool is said before minutes of other work, not after
    clocks, clock_error = _check_inputs(design)  # likewise a missing XDC: before the simulation check, not after it
    rows = sim_check and design.verify.kind != "none"
    if use_cache:
        # nothing changed since the last key was computed (kabe.cache.key_stamp): a hit needs no FuseSoC
        known = key_stamp.load(design, flow_name, sim_check_rows=rows)
        if known is not None:
            check_writable(reports_root)
            facts = DesignContext(design, commit, console, clocks=clocks, clock_error=clock_error)
            record = _from_cache(BuildContext(facts, flow_name, flow, known, sim_check, variant, reports_root, started, t0),
                                 say_miss=False)
            if record is not None:
                return record
    before = key_stamp.watched(design)  # before FuseSoC reads them: an edit meanwhile makes the stamp stale
    edam = cores.resolve(design, "synth", force=not use_cache)  # once: the flow gets the resolved target
    if hasattr(flow, "check_design"):  # what the flow cannot build (a real top parameter): before the simulation
        flow.check_design(design, edam)
    # the sim target is the verified design: the same design as the synth target, in a language the simulation
    # reads, before anything runs (cache=off reuses no FuseSoC answer either: the key and the simulation check
    # then read this one)
    # once: the key, the check of the two targets and the simulation read this one
    sim_edam = cores.resolve(design, "sim", force=not use_cache) if design.verify.kind != "none" else None
    target_files = _check_sim_target(design, edam, sim_edam, console) if sim_check else None
    key = cache_key(design, flow_name, sim_check=sim_check, edam=edam, sim_edam=sim_edam)
    key_stamp.save(design, flow_name, key, before)
    check_writable(reports_root)  # a read-only or full reports/ is said now, not after every tool has run
    facts = DesignContext(design, commit, console, sim_edam, edam, clocks, clock_error)
    ctx = BuildContext(facts, flow_name, flow, key, sim_check, variant, reports_root, started, t0)
    synth_hit = None
    if use_cache:
        record = _from_cache(ctx)
        if record is not None:
            return record
        synth_hit = _synth_from_cache(ctx)  # only the simulation side changed: its check runs, no synthesis
    if synth_hit is None and sim_check and design.verify.kind != "none" and hasattr(flow, "elaborate"):
        # the flow's tool reads and elaborates the design first (seconds): a file it cannot read is said now,
        # not after minutes of simulation
        # in a folder of its own (a second build of the design at once elaborates beside it, not in it)
        safe_fs.make_dirs(BUILD / design.name, BUILD)
        elab = Path(tempfile.mkdtemp(prefix=f".{flow_name}-elaborate-", dir=BUILD / design.name))
        with console.status(f"[bold]{design.name}[/]: {flow_name} flow reads and elaborates {edam.toplevel}"):
            flow.elaborate(edam, elab, design.board.synth_family)  # on an error its log stays, as the message names it
        shutil.rmtree(elab, ignore_errors=True)
    from kabe.flows.base import synthesis_defines

    sim, sim_files = _sim_check(ctx, synthesis_defines(flow)) if sim_check else (None, {})
    if sim is not None and target_files:  # the files one target lists and the other not, said with the result
        sim = {**sim, "target_files": target_files}
    if synth_hit is not None:
        return _flow_gate_archive(ctx, sim, sim_files, synth_hit)
    safe_fs.make_dirs(ctx.workdir, BUILD)  # a symlinked build/<design> is refused, not written through
    with scratch.exclusive(ctx.workdir, say=lambda m: console.print(f"[yellow]{design.name}: {escape(m)}[/]")):
        return _flow_gate_archive(ctx, sim, sim_files)


def _check_sim_target(design: designs.Design, synth_edam: cores.Edam, sim_edam: cores.Edam | None,
                      console: Console) -> dict | None:
    """The simulation check verifies the sim target and the flow builds the synth target: refuse (BuildError,
    or the CoreError of core_targets.compare_targets) when they are different designs (another toplevel, another
    parameter or define value), or when the sim target lists VHDL and GHDL is not installed (kabe.flows.ghdl turns
    it into the Verilog the harness reads; said before the simulation, not as Verilator's syntax error). Files only one target lists (a simulation
    model of a vendor primitive) are allowed: said in one line, and returned for metrics.json's
    `sim.target_files`; None when both list the same files, or the design is not simulated."""
    from kabe.flows import ghdl, open as open_flow

    if design.verify.kind == "none":  # no sim target needed (kabe.cache.cache.key_for)
        return None
    vhdl = open_flow.vhdl_sources(sim_edam)
    if vhdl and ghdl.command() is None:
        raise BuildError(f"{vhdl}, in target sim; kabe's simulation check (Verilator) reads Verilog and "
                         f"SystemVerilog only, whatever the flow, and GHDL (which turns VHDL into Verilog for it, "
                         f"and runs a cocotb testbench on VHDL) is not installed. Fix: {ghdl.FIX}, or give the "
                         f"design a Verilog version of the file")
    sim_only, synth_only = core_targets.compare_targets(design, sim_edam, synth_edam)
    if not sim_only and not synth_only:
        return None
    files = {"sim_only": core_targets.shown_files(sim_only), "synth_only": core_targets.shown_files(synth_only)}
    said = "; ".join(f"files only in the {t} target: {', '.join(files[f'{t}_only'])}" for t in ("sim", "synth")
                     if files[f"{t}_only"])
    console.print(f"[yellow]{design.name}: {escape(said)} (otherwise the two targets agree: one toplevel, the same "
                  f"parameters and defines)[/]", soft_wrap=True)
    return files


def _from_cache(ctx: BuildContext, say_miss: bool = True) -> dict | None:
    """The record of a trusted archive built from ctx's key, re-stamped for ctx's commit; None: build.
    say_miss=False: a miss is not said (the key from the stamp: the build computes it again, and says)."""
    design, flow_name, commit, key, console = ctx.design, ctx.flow_name, ctx.commit, ctx.key, ctx.console
    # the Vivado flow's bitstream carries its commit's dirty flag: a clean commit reuses clean builds only;
    # a candidate is reused only when it is trusted (cache.untrusted) and its raw reports say its numbers
    found = cache.find(ctx.reports_root, design.name, flow_name, key.key,
                       clean_only=flow_registry.facts(flow_name).stamps_commit and not commit.dirty,
                       accept=lambda entry: rederive.disagreement(entry, design, flow_name))
    for archive, why in found.refused:
        console.print(f"[yellow]{design.name}: cache entry {escape(str(archive))} refused: {escape(why)}[/]",
                      soft_wrap=True)
    hit = found.entry
    if hit is None and not say_miss:
        return None
    # what the user changed since the last build, by the name they changed it under (a core parameter,
    # a file, a tool version: kabe.cache.key_change), read before a hit archives a newer build
    last = cache.nearest(ctx.reports_root, design.name, flow_name)
    why = (key_change.named_change(last, key.material, ROOT) or cache.difference(last, key.material)) if last else None
    since = f"; since the last build, {escape(why)}" if why else ""
    if hit is not None:
        try:
            record = reuse(hit, design, flow_name, commit, key, ctx.reports_root, ctx.started, ctx.t0)
        except metrics.MetricsError as e:  # a record of an older schema: build instead
            console.print(f"[dim]{design.name}: cache entry {hit.archive} not reusable ({escape(str(e))})[/]")
        else:
            console.print(f"[dim]{design.name}: cache hit, reused {hit.archive} (key {key.key[:12]}{since})[/]",
                          soft_wrap=True)
            return record
    if say_miss:
        console.print(f"[dim]{design.name}: cache miss (key {key.key[:12]}{since})[/]", soft_wrap=True)
    return None


def _synth_from_cache(ctx: BuildContext) -> cache.Entry | None:
    """A trusted archive whose synthesis half of the key is ctx's (kabe.cache.cache.synth_key): its
    synthesis and timing results are reused and only the simulation check runs; None: run the flow."""
    design, flow_name, console = ctx.design, ctx.flow_name, ctx.console
    want = cache.synth_key(ctx.key.material)
    found = cache.find(ctx.reports_root, design.name, flow_name, want, half="synth",
                       clean_only=flow_registry.facts(flow_name).stamps_commit and not ctx.commit.dirty,
                       accept=lambda entry: rederive.disagreement(entry, design, flow_name))
    for archive, why in found.refused:
        console.print(f"[yellow]{design.name}: synthesis cache entry {escape(str(archive))} refused: {escape(why)}[/]",
                      soft_wrap=True)
    if found.entry is not None:
        console.print(f"[dim]{design.name}: synthesis inputs unchanged, reusing the {flow_name} flow's results of "
                      f"{found.entry.archive} (synthesis key {want[:12]}); only the simulation check runs[/]",
                      soft_wrap=True)
    return found.entry


def _reused_flow_result(entry: cache.Entry, flow_name: str) -> FlowResult:
    """The flow's result as an earlier build with the same synthesis inputs archived it (no tool runs)."""
    from kabe.build.verdict import SECTIONS

    old, archive = entry.record, Path(entry.archive)
    by_sha = {provenance.sha256_file(p): p for p in archive.iterdir() if p.is_file() and p.name not in
              ("metrics.json", "manifest.json", cache.KEY_FILE)} if old.get("artifacts") else {}
    recorded = [Path(k) if Path(k).is_absolute() else ROOT / k for k in old.get("inputs") or {}]
    return FlowResult(flow_name, old["part"], old.get("clock_period_ns"), old["timing"],
                      None if (old.get("utilization") or {}).get("missing") else old["utilization"],
                      raw_files={n: archive / n for n in entry.manifest.get("raw_files", [])},
                      tools=dict(old.get("tools") or {}), inputs=[p for p in recorded if p.is_file()],
                      artifacts={name: by_sha[sha] for name, sha in (old.get("artifacts") or {}).items()},
                      tool_seconds=0.0, sections={k: old[k] for k in SECTIONS if old.get(k) is not None})


def _check_inputs(design: designs.Design) -> tuple[tuple, Exception | None]:
    """The files design.yaml names must exist: a missing XDC is the user's to restore, not a gate verdict.
    Returns the XDC's clocks, read once here for the whole build (kabe.project.design_context.read_clocks)."""
    rel = design.yaml_file.relative_to(ROOT) if design.yaml_file.is_relative_to(ROOT) else design.yaml_file
    for path, what in ((design.core_file, "core file"), (design.constraints, "constraints file (`constraints:`)")):
        if not path.is_file():
            raise BuildError(f"{path}: no such file, the {what} of {rel}; restore it "
                             f"(git checkout -- {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}) "
                             f"or correct {rel}")
        if not os.access(path, os.R_OK):
            raise BuildError(f"{path}: cannot be read (permissions), the {what} of {rel}; fix its permissions")
    clocks, why = design_context.read_clocks(design)
    # a malformed create_clock is the user's to fix before anything runs; no clock at all is judged
    if why is not None and not isinstance(why, NoClockError):
        raise BuildError(str(why)) from None
    return clocks, why


def _flow_gate_archive(ctx: BuildContext, sim: dict | None, sim_files: dict | None = None,
                       synth_hit: cache.Entry | None = None) -> dict:
    """synth_hit: an archive with this build's synthesis inputs, whose flow results are taken instead of
    running the flow (_synth_from_cache)."""
    design, flow_name, commit, key, console = ctx.design, ctx.flow_name, ctx.commit, ctx.key, ctx.console
    sim_check, started, t0 = ctx.sim_check, ctx.started, ctx.t0
    try:
        result = (_reused_flow_result(synth_hit, flow_name) if synth_hit is not None else
                  ctx.flow.run_build(ctx.below(), ctx.workdir))
    except (ReportError, ConstraintError) as e:
        # No clock constrained, or the tool ran but its report cannot be trusted: the build's verdict
        # is a failing gate, archived like any other so the history shows it.
        result = FlowResult(flow_name, design.board.part, None,
                            unreadable_timing(str(e), estimated=ctx.flow.ESTIMATED), None)

    verification = _verification(design, sim_check)
    verdict = build_verdict(design, flow_name, result.timing, result.utilization, sim, verification=verification,
                            sections=result.sections)

    try:
        inputs = provenance.input_hashes([*result.inputs, design.yaml_file, design.core_file, design.constraints])
    except FileNotFoundError as e:  # deleted or moved while the build ran
        raise BuildError(f"{e.filename}: an input of this build disappeared while it ran; restore it and "
                         f"build again") from None
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
        "verification": verification,
        "started": started,
        "finished": _now(),
        "seconds": round(time.monotonic() - t0, 3),
        "tool_seconds": result.tool_seconds,
    }
    # An input edited while the tools ran: the output belongs to neither content, so it is no cache entry.
    # The stamp saved with the key says "unchanged" without FuseSoC; else the key is computed again.
    rows = sim_check and design.verify.kind != "none"
    unchanged = key_stamp.load(design, flow_name, sim_check_rows=rows)
    if (unchanged is not None and unchanged.key == key.key) or cache_key(design, flow_name, sim_check=sim_check).key == key.key:
        record["cache_key"] = key.key
    else:
        console.print(f"[yellow]{design.name}: an input changed during the build; not kept as a cache entry[/]")
    record.update(result.sections)  # hls, vitis_link: judged above with the rest
    if result.utilization is None:
        record["utilization"]["missing"] = True
    if ctx.variant is not None:
        record["variant"] = ctx.variant
    if synth_hit is not None:  # the commit its bitstream was built at (cache.built_by), its synthesis key
        origin, origin_dirty = cache.built_by(synth_hit.record)
        record["synth_reused_from"] = {"commit": origin, "dirty": origin_dirty,
                                       "key": cache.synth_key(key.material)}
    metrics.validate(record)
    manifest = {"commit": commit.sha, "dirty": commit.dirty, "design": design.name, "flow": flow_name,
                "inputs": inputs, "artifacts": artifacts, "raw_files": sorted(result.raw_files)}
    if synth_hit is not None:
        manifest["synth_reused_from"] = record["synth_reused_from"]
    files: dict[str, str | Path] = {"metrics.json": to_json(record), "manifest.json": to_json(manifest)}
    if "cache_key" in record:
        files[cache.KEY_FILE] = to_json(key.material)
    files.update(result.raw_files)
    files.update(sim_files or {})
    files.update({Path(p).name: p for p in result.artifacts.values()})
    dest = write_unit(archive_dir(commit, design.name, flow_name, ctx.reports_root), files, ctx.reports_root,
                      record.get("cache_key"))
    record["_archive"] = str(dest)
    return record


def run_outcome(design_name: str | designs.Design, flow_request: str | None = None, console: Console | None = None, *,
                use_cache: bool = True, commit: provenance.Commit | None = None) -> outcome.Outcome:
    """Build, print the summary and one verdict line; never raises for the user's mistakes or Ctrl-C."""
    from kabe.build import summary

    console = console or make_console()
    flow_label, expected = flow_request or "auto", "-"
    name = design_name.name if isinstance(design_name, designs.Design) else design_name
    try:
        design = designs.get(design_name)
        expected = design.expect_gate
        flow_label = flow_for(design, flow_request)
        record = build(design, flow_label, console=console, use_cache=use_cache, commit=commit)
    except UserError as e:  # a missing tool, a broken core file: one sentence, no traceback
        result = outcome.could_not_run(name, flow_label, str(e), expected)
        _note_could_not_run(result, commit)
    except KeyboardInterrupt:  # the archive is written atomically: an interrupted build left none
        result = outcome.interrupted(name, flow_label, expected)
    except Exception:  # noqa: BLE001 - anything else is kabe's bug: keep the traceback and say so
        console.print_exception()
        result = outcome.could_not_run(name, flow_label, bug_message(), expected)
        _note_could_not_run(result, commit)
    else:
        summary.render(record, console, expected)
        result = outcome.from_record(record, expected)
        could_not_run.clear(REPORTS, record["design"], record["flow"])  # it ran to its gate: the note is stale
    style = "green" if result.as_expected and result.verdict == outcome.PASS else \
        "yellow" if result.as_expected else "red"
    console.print(f"[{style}]kabe build {escape(result.line)}[/]", soft_wrap=True)
    return result


def _note_could_not_run(result: outcome.Outcome, commit: provenance.Commit | None) -> None:
    """The reason a build could not run, kept for the report page (kabe.records.could_not_run); a note that
    cannot be written (reports/ read-only, the very reason it could not run) costs the verdict nothing. A name
    no design can have gets none, and no git runs for it (the refusal comes before any tool)."""
    if not could_not_run.can_note(result.design, result.flow):
        return
    try:
        commit = commit or provenance.current_commit()
        name = commit.sha + ("-dirty" if commit.dirty else "")
    except Exception:  # noqa: BLE001 - no git, no commit: the note says none
        name = ""
    try:
        could_not_run.note(REPORTS, result.design, result.flow, result.reason, name)
    except Exception:  # noqa: BLE001 - see above
        pass


def run(design_name: str, flow_request: str | None = None, console: Console | None = None, *,
        use_cache: bool = True) -> int:
    """Build and return the exit code (kabe.base.errors): 0 when the gate said what design.yaml expects."""
    return run_outcome(design_name, flow_request, console, use_cache=use_cache).code
