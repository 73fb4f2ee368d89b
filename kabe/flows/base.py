"""What every flow offers the build, and what it hands back.

A flow is a module (registered in kabe.flows) with:

    NAME: str                 "open", "vivado", ...
    ESTIMATED: bool           True when its timing is a pre-route estimate, not sign-off
    check_tools() -> None     raises FlowError with the fix when the tool is missing (called before
                              minutes of other work, not after)
    run_build(ctx, workdir) -> FlowResult   (ctx: kabe.project.design_context.DesignContext)
                              commit: the build's one reading of the commit (kabe.base.provenance.Commit),
                              the one its archive is named after; a flow that stamps it (Vivado's
                              USR_ACCESS) uses this, never a second read that a commit landing
                              mid-build would make differ

The build depends on the flows, never the reverse: a flow imports this module, the parsers and the
design facts, nothing of kabe.build.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from rich.console import Console

from kabe.base.errors import UserError


class FlowError(UserError):
    """The flow could not run (missing tool, broken core file, a tool that failed): one sentence
    with the fix; nothing is archived."""


class ToolError(FlowError):
    """A tool is missing, failed or timed out; the message says which and where the log is."""


@dataclass
class FlowResult:
    """What a flow hands back: records in metrics.json's shapes plus the raw files to archive."""

    flow: str
    part: str
    clock_period_ns: float | None
    timing: dict[str, Any]
    utilization: dict[str, Any] | None
    raw_files: dict[str, Path] = field(default_factory=dict)  # archive name -> file
    tools: dict[str, str] = field(default_factory=dict)
    inputs: list[Path] = field(default_factory=list)  # files the result depends on (hashed)
    artifacts: dict[str, Path] = field(default_factory=dict)  # bitstream, hwh: hashed into the manifest
    tool_seconds: float | None = None  # time inside the tool itself (for the orchestration-overhead benchmark)
    # metrics.json sections a flow adds beside timing and utilization (metrics.schema.json): an HLS build's
    # `hls` (kabe.parsers.vitis_hls_csynth.metrics), a v++ link's `vitis_link` (kabe.parsers.xclbin.metrics)
    sections: dict[str, Any] = field(default_factory=dict)


def unreadable_timing(message: str, *, estimated: bool) -> dict[str, Any]:
    """A timing record for a report that could not be produced or read: the gate fails on "error"."""
    return {"estimated": estimated, "wns_ns": None, "tns_ns": None, "whs_ns": None, "critical_path": None,
            "clocks": [], "error": message}


class Flow(Protocol):
    NAME: str
    ESTIMATED: bool

    def check_tools(self) -> None: ...

    # ctx: kabe.project.design_context.DesignContext, the facts the verb resolved once (design, synth target, commit,
    # console, the XDC's clocks); a flow looks none of them up again
    def run_build(self, ctx, workdir: Path) -> FlowResult: ...


def refuse_core_constraints(design, edam) -> None:
    """FlowError when the target lists a constraints file (file_type xdc or sdc) other than the one
    design.yaml's `constraints:` names. kabe takes the clock from that one file in both flows (the
    Vivado flow's block design owns the pins); a create_clock in a core's own XDC was silently dropped,
    and a 2 ns clock there passed a design timed at design.yaml's 20 ns (red team 3b, repro 17)."""
    own = Path(design.constraints).resolve()
    for f in getattr(edam, "files", ()):
        if f.file_type.split("-")[0].lower() in ("xdc", "sdc") and Path(f.path).resolve() != own:
            raise FlowError(
                f"{f.path}: the core {getattr(f, 'core', '') or edam.vlnv} lists this constraints file "
                f"(file_type {f.file_type}), but kabe reads clocks only from design.yaml's `constraints:` "
                f"({own.name}, {design.yaml_file}), so it would be ignored. Fix: put its create_clock in "
                f"{own.name} and drop it from the core file, or set `constraints: {Path(f.path).name}` in "
                f"design.yaml if it is in the design's folder")


# Source text that makes the synthesized design differ from the simulated one: Yosys and Vivado define
# SYNTHESIS, Yosys also YOSYS, Verilator neither; `translate_off` hides code from synthesis only.
_SYNTHESIS_MACRO = re.compile(r"`\s*(?:ifdef|ifndef|elsif)\s+(?:SYNTHESIS|YOSYS)\b")
_TRANSLATE_OFF = re.compile(r"\b(?:synthesis|pragma|synopsys)\s+translate_off\b")
SYNTHESIS_DEFINE = {"SYNTHESIS": 1}  # what Yosys and Vivado define, for a simulation of the logic they build


def synthesis_defines(flow) -> dict:
    """The macros a flow's synthesis tool defines that the simulator does not (a flow module's
    SYNTHESIS_DEFINES: the open flow's Yosys adds YOSYS), else SYNTHESIS alone."""
    return dict(getattr(flow, "SYNTHESIS_DEFINES", SYNTHESIS_DEFINE))


def _places(sources, pattern: re.Pattern) -> list[str]:
    out = []
    for src in sources:
        try:
            text = Path(src).read_text(errors="replace")
        except OSError:
            continue
        for no, line in enumerate(text.splitlines(), 1):
            if pattern.search(line):
                out.append(f"{src}:{no}")
    return out


def synthesis_macro_code(sources) -> list[str]:
    """`file:line` of every test of a synthesis tool's macro (`ifdef/`ifndef/`elsif SYNTHESIS or YOSYS): a
    build with a model simulates such a design twice, as Verilator reads it and with the flow's synthesis
    macros defined (kabe.build, synthesis_defines)."""
    return _places(sources, _SYNTHESIS_MACRO)


def synthesis_only_code(sources, *, simulated_with_synthesis: bool = False) -> list[str]:
    """`file:line` of every place in the HDL sources whose synthesized logic the simulation does not
    run: translate_off, and `ifdef SYNTHESIS unless the build simulated with SYNTHESIS defined too. What
    those lines build was never compared with the model. Said on the console, never a failure."""
    return sorted(_places(sources, _TRANSLATE_OFF)
                  + ([] if simulated_with_synthesis else synthesis_macro_code(sources)))
