"""The Vivado flow: block design (PS7 + AXI DMA per port + the engine) -> bitstream + .hwh + .xsa ->
signed-off timing and utilization. On a Versal board (the V80) the block design is AMD's AVED base
extended by the engine and the images are .pdi + .xsa: kabe.flows.vivado.versal, docs/v80.md.

How it runs (docs/vivado_flow.md has the long form):

1. `kabe.project.cores.resolve(design, "synth")` gives the engine's HDL and top; the XDC gives the clock.
2. kabe writes into the work root: `kabe_engine_bd.v` (a thin wrapper around the engine top carrying
   X_INTERFACE attributes, so IP integrator sees `s{p}_axis`/`m{p}_axis`, `clk`, `rst` without
   relying on name inference), `kabe_settings.tcl` (every per-build value the Tcl needs, as
   `::kabe(...)`), and the hook dispatcher `kabe_hooks_write_bitstream_pre.tcl`.
3. The EDAM lists the HDL, the wrapper and the project-creation Tcl (settings, version pin check,
   kabe/flows/vivado/tcl/pynq_z1_ps7.tcl, kabe/flows/vivado/tcl/kabe_bd.tcl, kabe/flows/vivado/tcl/attach_hooks.tcl) as tclSource; edalize's
   vivado flow (`edalize.flows.vivado.Vivado`) writes the Makefile and project Tcl from it.
4. kabe checks the generated Tcl (top name, every tclSource sourced), runs `make` with a progress
   line and a timeout, then parses the reports the hooks wrote (kabe.parsers) and returns a
   FlowResult with the .bit and the .hwh beside it (same basename: pynq.Overlay's convention).

Vivado itself is never imported or assumed: without `vivado` on PATH the build stops with one
FlowError that says how to point kabe at it.
"""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from kabe.flows.base import FlowResult
from kabe.flows.vivado import collect, project, tool

NAME = "vivado"
ESTIMATED = False  # place and route: sign-off timing


def check_tools() -> None:
    """Vivado and make on PATH, else one FlowError with the fix."""
    tool.find_vivado()


def _check_base_design(design) -> None:
    """A board on a vendor base design (the V80 on AVED): the Vivado on PATH must be that release's."""
    if design.board.base_design is None:
        return
    from kabe.flows.vivado import versal

    # asked, not the memoized line: a version switched under the same executable path must not pass
    have = tool.vivado_version(tool.find_vivado()).short
    versal.check_base_vivado(design.board, have, tool.with_design_settings(tool.settings(), design))


def check_design(design, edam) -> None:
    """Before the simulation (kabe.build): a Vivado other than the board's base design release needs; what
    the own-top flow would refuse minutes later, an IP source it cannot read or a file written by another
    Vivado than the one on PATH (the version line is memoized)."""
    if design.vivado.top != "own":
        _check_base_design(design)
        return
    from kabe.flows.vivado import own_top
    from kabe.cache import cache

    found = tool._VERSION_RE.search(cache.vivado_version_line(tool.find_vivado()))
    if found:
        own_top.classify(edam, design, found.group(1))


def run_build(ctx, workdir: Path) -> FlowResult:
    """The flow interface (kabe.flows.base): the design's context (its resolved synth target, the commit its
    bitstream carries, the console), a work folder."""
    design, edam, console, commit = ctx.design, ctx.synth, ctx.console, ctx.commit
    fs = tool.with_design_settings(tool.settings(), design)
    version = tool.vivado_version(tool.find_vivado())
    if design.vivado.top != "own":
        from kabe.flows.vivado import versal

        versal.check_base_vivado(design.board, version.short, fs)  # before the project: AVED's Vivado only
    tool.check_version_pin(version, fs["vivado_version"], fs["vivado_version_mismatch"], console)
    if design.vivado.top == "own":
        return _run_own_top(design, edam, Path(workdir), console, commit, fs, version)
    with console.status(f"[bold]{design.name}[/]: generating the Vivado project (edalize)"):
        proj = project.generate_project(design, Path(workdir) / "edalize", edam=edam, flow_settings=fs,
                                        commit=commit)  # the archive's commit goes into the bitstream
    log = tool.run_make(proj, console, fs["vivado_timeout_s"])
    return collect.collect(proj, version, log)


def _run_own_top(design, edam, workdir: Path, console: Console, commit, fs, version) -> FlowResult:
    """The design's own top (kabe.flows.vivado.own_top): IP from the cache, the design's block designs and
    hooks, kabe's reports around them; the IP cache's keys are archived as ip_cache.json."""
    from kabe.base import provenance
    from kabe.flows.vivado import own_top

    work_root = workdir / "edalize"

    def ip_batch(script: Path) -> None:
        tool.run_batch(script, script.parent, script.parent / "vivado_ip.log", fs["vivado_timeout_s"], console,
                       "generating IP (cache misses)")

    console.print(f"[bold]{design.name}[/]: generating the Vivado project (its own top, edalize)")
    proj = own_top.generate(design, work_root, edam=edam, flow_settings=fs,
                            commit=commit or provenance.current_commit(), version=version, run_ip_batch=ip_batch,
                            say=lambda m: console.print(f"[bold]{design.name}[/]: {m}"))
    log = tool.run_make(proj, console, fs["vivado_timeout_s"])
    result = collect.collect(proj, version, log)
    result.raw_files["ip_cache.json"] = work_root / "ip_cache.json"
    if (work_root / "ip_generate" / "vivado_ip.log").is_file():  # this build generated IP: its log too
        result.raw_files["vivado_ip.log"] = work_root / "ip_generate" / "vivado_ip.log"
    for h in sorted((work_root / "hwh").glob("*.hwh")):
        result.raw_files.setdefault(h.name, h)
    return result
