"""The Vivado flow: block design (PS7 + AXI DMA per port + the engine) -> bitstream + .hwh + .xsa ->
signed-off timing and utilization. On a Versal board (the V80) the block design is AMD's AVED base
extended by the engine and the images are .pdi + .xsa: kabe.flows.vivado.versal, docs/v80.md.

How it runs (docs/vivado_flow.md has the long form):

1. `kabe.cores.resolve(design, "synth")` gives the engine's HDL and top; the XDC gives the clock.
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


def run_build(design, edam, workdir: Path, *, console: Console | None = None, commit=None) -> FlowResult:
    """The flow interface (kabe.flows.base): one design, its resolved synth target, a work folder."""
    console = console or Console()
    fs = tool.settings()
    version = tool.vivado_version(tool.find_vivado())
    tool.check_version_pin(version, fs["vivado_version"], fs["vivado_version_mismatch"], console)
    with console.status(f"[bold]{design.name}[/]: generating the Vivado project (edalize)"):
        proj = project.generate_project(design, Path(workdir) / "edalize", edam=edam, flow_settings=fs,
                                        commit=commit)  # the archive's commit goes into the bitstream
    log = tool.run_make(proj, console, fs["vivado_timeout_s"])
    return collect.collect(proj, version, log)
