"""The Vivado flow: block design (PS7 + AXI DMA per port + the engine) -> bitstream + .hwh -> signed-off
timing and utilization.

How it runs (docs/vivado_flow.md has the long form):

1. `kabe.cores.resolve(design, "synth")` gives the engine's HDL and top; the XDC gives the clock.
2. kabe writes into the work root: `kabe_engine_bd.v` (a thin wrapper around the engine top carrying
   X_INTERFACE attributes, so IP integrator sees `s{p}_axis`/`m{p}_axis`, `clk`, `rst` without
   relying on name inference), `kabe_settings.tcl` (every per-build value the Tcl needs, as
   `::kabe(...)`), and the hook dispatcher `kabe_hooks_write_bitstream_pre.tcl`.
3. The EDAM lists the HDL, the wrapper and the project-creation Tcl (settings, version pin check,
   ip/pynq_z1_ps7.tcl, ip/kabe_bd.tcl, scripts/vivado/attach_hooks.tcl) as tclSource; edalize's
   vivado flow (`edalize.flows.vivado.Vivado`) writes the Makefile and project Tcl from it.
4. kabe checks the generated Tcl (top name, every tclSource sourced), runs `make` with a progress
   line and a timeout, then parses the reports the hooks wrote (kabe.parsers) and returns a
   FlowResult with the .bit and the .hwh beside it (same basename: PYNQ's convention).

Vivado itself is never imported or assumed: without `vivado` on PATH the build stops with one
BuildError that says how to point kabe at it.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import threading
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from .. import config, constraints, cores, provenance
from ..boards import PYNQ_Z1
from ..build import BuildError, FlowResult
from ..deploy import bitfile
from ..parsers import ReportError
from ..paths import IP, ROOT, SCRIPTS
from .bd_wrapper import ENGINE_WRAPPER, classify, defines_module, engine_ports, wrapper_verilog

PART = PYNQ_Z1.part
BD_NAME = "kabe_bd"
BD_WRAPPER = f"{BD_NAME}_wrapper"  # the project top: Vivado's make_wrapper names it <bd>_wrapper
HOOK_DIR = SCRIPTS / "vivado"
TCL_IP = (IP / "pynq_z1_ps7.tcl", IP / "kabe_bd.tcl")
# Sourced at project creation, in this order, after the HDL (edalize keeps the EDAM's order).
CREATION_TCL = ("check_vivado_version.tcl",)
ATTACH_TCL = "attach_hooks.tcl"
# Run inside impl_1 just before write_bitstream (the design is final: routed, phys-opted).
# One concern per file; the reports come before the clock check so a failing check still leaves them.
WRITE_BITSTREAM_PRE_HOOKS = ("check_vivado_version", "embed_commit", "report_timing_summary",
                             "report_logic_levels", "report_utilization", "report_clock_interaction",
                             "timing_verdict", "check_pl_clock")
# Report files the hooks write under <work root>/reports/ (archive name -> file name).
REPORTS = {
    "timing_summary.rpt": "timing_summary.rpt",
    "utilization.rpt": "utilization.rpt",
    "utilization_hier.rpt": "utilization_hier.rpt",
    "clock_interaction.rpt": "clock_interaction.rpt",
    "logic_levels.rpt": "logic_levels.rpt",
    "timing_verdict.json": "timing_verdict.json",  # the second source (scripts/vivado/timing_verdict.tcl)
}
TIMING_MAX_PATHS = 20  # per clock group: enough to see the whole failing cone, not the whole design
DEFAULT_TIMEOUT_S = 6 * 3600
VERSION_POLICIES = ("warn", "fail")

_VERSION_RE = re.compile(r"\bv?(\d{4}\.\d+(?:\.\d+)?)\b")
# Markers in Vivado's batch output (the run logs are echoed by wait_on_run) -> the phase shown.
_PHASES = (
    ("create_project", "creating the project"),
    ("create_bd_design", "building the block design"),
    ("generate_target", "generating block-design outputs"),
    ("Command: synth_design", "synthesis"),
    ("Command: opt_design", "logic optimization"),
    ("Command: place_design", "placement"),
    ("Command: route_design", "routing"),
    ("kabe: reports", "writing reports"),
    ("Command: write_bitstream", "writing the bitstream"),
    ("Bitstream generation completed", "bitstream written"),
)


# --------------------------------------------------------------------------------------------
# settings


def settings(overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """[tool.kabe] keys the Vivado flow reads, with defaults."""
    s = config.load() if overrides is None else overrides
    policy = str(s.get("vivado_version_mismatch", "warn"))
    if policy not in VERSION_POLICIES:
        raise BuildError(f"pyproject.toml [tool.kabe] vivado_version_mismatch = {policy!r}; use "
                         f"{' or '.join(repr(p) for p in VERSION_POLICIES)}")
    timeout = s.get("vivado_timeout_s", DEFAULT_TIMEOUT_S)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
        raise BuildError(f"pyproject.toml [tool.kabe] vivado_timeout_s = {timeout!r}; use a positive "
                         f"number of seconds")
    jobs = s.get("vivado_jobs", 2)
    return {"vivado_version": str(s.get("vivado_version", "") or ""), "vivado_version_mismatch": policy,
            "vivado_timeout_s": float(timeout), "vivado_jobs": int(jobs)}


# --------------------------------------------------------------------------------------------
# Vivado on PATH and its version


def find_vivado() -> str:
    exe = shutil.which("vivado")
    if exe is None:
        raise BuildError(
            "flow=vivado needs AMD Vivado, and `vivado` is not on PATH. Fix: run "
            "`source <Vivado install>/settings64.sh` (e.g. /tools/Xilinx/Vivado/2023.2/settings64.sh) "
            "or add Vivado's bin/ directory to PATH in the shell that runs doit; or build with the "
            "open flow: `doit build:<design> flow=open`")
    if shutil.which("make") is None:
        raise BuildError("flow=vivado runs edalize's Makefile, and `make` is not on PATH. "
                         "Fix: install make (apt-get install make)")
    return exe


@dataclass(frozen=True)
class VivadoVersion:
    line: str  # first line of `vivado -version`, recorded as tools["vivado"]
    short: str  # e.g. 2023.2


def vivado_version(exe: str = "vivado", timeout: float = 300) -> VivadoVersion:
    try:
        proc = subprocess.run([exe, "-version"], capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise BuildError(f"`{exe} -version` did not run ({e}); check the Vivado installation") from None
    lines = [ln.strip() for ln in (proc.stdout + proc.stderr).splitlines() if ln.strip()]
    line = next((ln for ln in lines if "vivado" in ln.lower() and _VERSION_RE.search(ln)), None)
    if proc.returncode != 0 or line is None:
        raise BuildError(f"`{exe} -version` printed no Vivado version (exit {proc.returncode}: "
                         f"{' / '.join(lines[:3]) or 'no output'}); check the Vivado installation")
    return VivadoVersion(line, _VERSION_RE.search(line).group(1))


def check_version_pin(have: VivadoVersion, pin: str, policy: str, console: Console | None = None) -> str | None:
    """None when Vivado matches the pin (or nothing is pinned); else the warning sentence.
    policy "fail" raises BuildError instead."""
    if not pin or have.short == pin or have.short.startswith(pin + "."):
        return None
    msg = (f"Vivado {have.short} is on PATH but pyproject.toml [tool.kabe] vivado_version pins {pin}: "
           f"timing and utilization can differ between versions")
    if policy == "fail":
        raise BuildError(msg + f". Fix: put Vivado {pin} on PATH, or change the pin (vivado_version_mismatch = "
                               f"\"warn\" only warns)")
    if console is not None:
        console.print(f"[yellow]warning: {escape(msg)}[/]")
    return msg


# --------------------------------------------------------------------------------------------
# the commit inside the bitstream (Hog's rule: a bitstream found on a board names its commit)

def usr_access_word(commit: provenance.Commit) -> int:
    """USR_ACCESS / USERID for this build (encoding: kabe.deploy.bitfile, shared with the board runner)."""
    return bitfile.commit_word(commit.sha, commit.dirty)


def read_usr_access(bit: Path) -> int | None:
    return bitfile.read_usr_access(Path(bit).read_bytes())


# --------------------------------------------------------------------------------------------
# project generation


@dataclass(frozen=True)
class Project:
    name: str
    work_root: Path
    report_dir: Path
    bit: Path
    hwh: Path
    settings_tcl: Path
    hook_tcl: Path
    wrapper: Path
    edam: dict
    clock_name: str
    clock_period_ns: float
    inputs: tuple[Path, ...]

    @property
    def makefile(self) -> Path:
        return self.work_root / "Makefile"

    @property
    def project_tcl(self) -> Path:
        return self.work_root / f"{self.name}.tcl"


def _tcl_str(v: Any) -> str:
    s = str(v)
    if re.fullmatch(r"[A-Za-z0-9_.:/+\-]+", s):
        return s
    return "{" + s.replace("\\", "/") + "}"


def settings_tcl(values: dict[str, Any]) -> str:
    out = ["# Generated by kabe.flows.vivado: every per-build value kabe's Tcl reads, as ::kabe(...).",
           "# Sourced at project creation and by the impl_1 hook dispatcher; do not edit."]
    for k, v in values.items():
        if isinstance(v, (list, tuple)):
            v = " ".join(_tcl_str(x) if not isinstance(x, (list, tuple)) else "{" + " ".join(map(_tcl_str, x)) + "}"
                         for x in v)
            out.append(f"set ::kabe({k}) {{{v}}}")
        else:
            out.append(f"set ::kabe({k}) {_tcl_str(v)}")
    return "\n".join(out) + "\n"


def hook_dispatcher(settings_file: Path, hooks: tuple[str, ...]) -> str:
    out = ["# Generated by kabe.flows.vivado: impl_1's STEPS.WRITE_BITSTREAM.TCL.PRE (runs inside the run,",
           "# in its own Vivado process, on the routed design). One single-purpose hook per file.",
           f"source {{{settings_file}}}"]
    out += [f"source {{{HOOK_DIR / (h + '.tcl')}}}" for h in hooks]
    return "\n".join(out) + "\n"


def _xdc_clock(design) -> constraints.Clock:
    try:
        clocks = constraints.parse_xdc(design.constraints)
    except constraints.ConstraintError as e:
        raise BuildError(str(e)) from None
    return clocks[0]


def _check_xdc_only_clock(design) -> None:
    """The vivado flow does not read the design's XDC into the project: the PS7 constrains its FCLK0
    itself (named clk_fpga_0) and the block-design top has no `clk` port. Anything else in the XDC
    would be silently dropped, so refuse it instead."""
    text = Path(design.constraints).read_text()
    body = re.sub(r"#[^\n]*", "", text.replace("\\\n", " "))
    others = [ln.strip() for ln in body.splitlines() if ln.strip() and not ln.strip().startswith("create_clock")]
    if others:
        raise BuildError(f"{design.constraints}: the vivado flow takes only create_clock from the design's XDC "
                         f"(the PS7 drives the clock); it would drop {others[0]!r}. Fix: move such constraints "
                         f"into the block design (ip/kabe_bd.tcl) or teach kabe.flows.vivado to scope them")


def generate_project(design, work_root: Path, *, commit: provenance.Commit | None = None,
                     flow_settings: dict[str, Any] | None = None) -> Project:
    """Write the wrapper, settings and hooks, and let edalize generate the Makefile + project Tcl.
    Runs no Vivado. Raises BuildError (or kabe.cores.CoreError) with the fix."""
    from edalize.flows.vivado import Vivado as EdalizeVivado

    fs = flow_settings or settings()
    commit = commit or provenance.current_commit()
    work_root = Path(work_root).resolve()
    if work_root.exists():
        shutil.rmtree(work_root)  # a fresh project every build: no stale report can be collected
    work_root.mkdir(parents=True)
    report_dir = work_root / "reports"
    report_dir.mkdir()

    try:
        edam_in = cores.resolve(design, "synth")
    except cores.CoreError as e:
        raise BuildError(str(e)) from None
    clock = _xdc_clock(design)
    _check_xdc_only_clock(design)
    top = edam_in.toplevel
    top_file = next((f for f in edam_in.sources if defines_module(Path(f), top)), None)
    if top_file is None:
        raise BuildError(f"{design.core_file}: no source of target 'synth' defines the toplevel module {top}")
    vlogparams = {k: v for k, v in edam_in.parameters.items()
                  if (edam_in.parameter_specs.get(k) or {}).get("paramtype") == "vlogparam" and v is not None}
    iface = classify(engine_ports(top_file, top, vlogparams), design.ports, f"{top_file}")

    name = f"kabe_{design.name}"
    wrapper = work_root / f"{ENGINE_WRAPPER}.v"
    wrapper.write_text(wrapper_verilog(iface, top, vlogparams, str(Path(top_file).relative_to(ROOT))
                                       if Path(top_file).is_relative_to(ROOT) else str(top_file)))

    streams = []
    for p in range(design.ports):
        s, m = iface.stream("s", p), iface.stream("m", p)
        streams.append((iface.stream_name("s", p), s["tdata"].width, iface.stream_name("m", p), m["tdata"].width))
    status = []
    for p in range(design.ports):
        outs = iface.status.get(p, [])
        status.append(tuple(x for o in outs for x in (o.name, o.width)))
    word = usr_access_word(commit)
    settings_file = work_root / "kabe_settings.tcl"
    hook_file = work_root / "kabe_hooks_write_bitstream_pre.tcl"
    values = {
        "design": design.name, "project": name, "part": PART, "bd_name": BD_NAME, "bd_wrapper": BD_WRAPPER,
        "engine_module": ENGINE_WRAPPER, "engine_top": top,
        "clock_name": clock.name, "period_ns": f"{clock.period_ns:.3f}", "ports": design.ports,
        # per port: s-bus name, its tdata width, m-bus name, its tdata width
        "streams": streams,
        # per port: name width [name width] of the status outputs read back over AXI GPIO
        "status": status,
        "dma_length_width": 26, "hp_data_width": 64, "dma_burst": 16,
        "hwh_dest": work_root / f"{name}.hwh",
        "report_dir": report_dir, "timing_max_paths": TIMING_MAX_PATHS,
        "commit": commit.sha, "dirty": int(commit.dirty), "usr_access": f"0x{word:08X}",
        "vivado_version": fs["vivado_version"], "vivado_version_mismatch": fs["vivado_version_mismatch"],
        "hook_write_bitstream_pre": hook_file,
    }
    settings_file.write_text(settings_tcl(values))
    hook_file.write_text(hook_dispatcher(settings_file, WRITE_BITSTREAM_PRE_HOOKS))

    files: list[dict] = []
    for f in edam_in.files:
        ftype = f.file_type
        if ftype.split("-")[0] not in cores.HDL_TYPES and ftype != "mem":
            continue  # XDC/SDC from the core: the flow owns constraints; user files: not Vivado's
        entry = {"name": str(f.path), "file_type": ftype}
        if f.is_include_file:
            entry.update(is_include_file=True, include_path=str(Path(f.path).parent))
        files.append(entry)
    files.append({"name": str(wrapper), "file_type": "verilogSource"})
    tcl_files = [settings_file, *(HOOK_DIR / t for t in CREATION_TCL), *TCL_IP, HOOK_DIR / ATTACH_TCL]
    files += [{"name": str(t), "file_type": "tclSource"} for t in tcl_files]
    edam = {
        "name": name,
        "toplevel": BD_WRAPPER,
        "files": files,
        "parameters": {},  # the engine's parameters are baked into the wrapper instance
        "flow_options": {"part": PART, "jobs": fs["vivado_jobs"]},
    }
    try:
        flow = EdalizeVivado(edam, str(work_root))
        flow.configure()
    except (RuntimeError, ValueError, KeyError) as e:
        raise BuildError(f"edalize could not generate the Vivado project in {work_root}: {e}") from None

    hooks = tuple(HOOK_DIR / (h + ".tcl") for h in WRITE_BITSTREAM_PRE_HOOKS)
    project = Project(name=name, work_root=work_root, report_dir=report_dir, bit=work_root / f"{name}.bit",
                      hwh=work_root / f"{name}.hwh", settings_tcl=settings_file, hook_tcl=hook_file,
                      wrapper=wrapper, edam=edam, clock_name=clock.name, clock_period_ns=clock.period_ns,
                      inputs=tuple(dict.fromkeys([*edam_in.input_files, *tcl_files[1:], *hooks,
                                                  design.constraints])))
    check_generated(project)
    return project


def check_generated(project: Project) -> None:
    """edalize's Tcl must set our block-design wrapper as top, source every kabe Tcl file, and (with
    a netlist flow) link the right top: edalize's `link_design -top` uses the project's name."""
    where = project.project_tcl
    if not where.is_file() or not project.makefile.is_file():
        raise BuildError(f"edalize wrote no {where.name} / Makefile in {project.work_root}")
    text = where.read_text()
    tops = re.findall(r"^set_property top (\S+) \[current_fileset\]", text, re.M)
    if tops != [BD_WRAPPER]:
        raise BuildError(f"{where}: top is {tops or 'not set'}, expected {BD_WRAPPER} (the block-design wrapper)")
    for m in re.finditer(r"^link_design -top (\S+)", text, re.M):
        if m.group(1) != BD_WRAPPER:
            raise BuildError(f"{where}: `link_design -top {m.group(1)}` names the project, not the top "
                             f"{BD_WRAPPER}; edalize's netlist flow is not supported here (use synth: vivado)")
    sourced = re.findall(r"^source \{(.+?)\}", text, re.M)
    want = [f["name"] for f in project.edam["files"] if f["file_type"] == "tclSource"]
    if sourced != want:
        raise BuildError(f"{where}: sources {sourced}, expected {want} in that order")
    mk = project.makefile.read_text()
    if f"{project.name}.bit" not in mk:
        raise BuildError(f"{project.makefile}: no target {project.name}.bit")


# --------------------------------------------------------------------------------------------
# running make (Vivado) with progress and a timeout


def run_make(project: Project, console: Console, timeout_s: float) -> Path:
    """Run edalize's Makefile; Vivado's output goes to vivado_make.log. Raises BuildError on a
    non-zero exit or on timeout (the whole process group is stopped)."""
    log = project.work_root / "vivado_make.log"
    tail: deque[str] = deque(maxlen=400)
    phase = ["starting Vivado"]
    t0 = time.monotonic()
    with open(log, "w") as lf:
        proc = subprocess.Popen(["make"], cwd=project.work_root, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, errors="replace", start_new_session=True)

        def pump():
            for line in proc.stdout:  # type: ignore[union-attr]
                lf.write(line)
                lf.flush()
                tail.append(line.rstrip("\n"))
                for marker, label in _PHASES:
                    if marker in line:
                        phase[0] = label

        reader = threading.Thread(target=pump, daemon=True)
        reader.start()
        with console.status("") as status:
            while True:
                try:
                    proc.wait(timeout=1.0)
                    break
                except subprocess.TimeoutExpired:
                    pass
                elapsed = time.monotonic() - t0
                status.update(f"[bold]{project.name}[/]: Vivado, {phase[0]} ({elapsed / 60:.1f} min; log {log})")
                if elapsed > timeout_s:
                    _stop(proc)
                    reader.join(timeout=5)
                    raise BuildError(f"Vivado did not finish within {timeout_s:.0f} s (stopped during "
                                     f"{phase[0]}); log: {log}. Fix: raise [tool.kabe] vivado_timeout_s")
        reader.join(timeout=10)
    if proc.returncode != 0:
        errors = [ln for ln in tail if ln.startswith(("ERROR", "CRITICAL WARNING", "make:")) or "error" in ln[:20].lower()]
        shown = " | ".join((errors or list(tail))[-4:])
        raise BuildError(f"Vivado (make in {project.work_root}) failed with exit {proc.returncode}: {shown}. "
                         f"Full log: {log}")
    console.print(f"[bold]{project.name}[/]: Vivado finished in {(time.monotonic() - t0) / 60:.1f} min")
    return log


def _stop(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()


# --------------------------------------------------------------------------------------------
# collection


def _timing_error(message: str) -> dict:
    return {"estimated": False, "wns_ns": None, "tns_ns": None, "whs_ns": None, "critical_path": None,
            "error": message}


def _merge_crossings(inter_clock: list[dict], pairs: list[dict]) -> list[dict]:
    """The summary's inter-clock slacks, each pair's "type" taken from report_clock_interaction's
    Inter-Clock Constraints (the gate fails on "unsafe"); pairs only that report lists are added."""
    by_pair = {(c["from"], c["to"]): dict(c) for c in inter_clock}
    for p in pairs:
        entry = by_pair.setdefault((p["from"], p["to"]), {"from": p["from"], "to": p["to"], "wns_ns": p["wns_ns"]})
        entry["type"], entry["classification"] = p["type"], p["classification"]
        entry["unsafe"] = p.get("unsafe", False)
    return list(by_pair.values())


def _second_source_and_logic_levels(timing: dict, rd: Path) -> None:
    """Vivado's own verdict (the gate requires it to agree with the parsed report; a missing or
    unreadable one is recorded as an error, which fails the gate) and the logic-level
    distribution (logic-level budgets; unreadable: no number, so a budget on it fails)."""
    from ..parsers import vivado_logic_levels, vivado_timing_verdict

    try:
        timing["second_source"] = vivado_timing_verdict.parse_file(rd / REPORTS["timing_verdict.json"])
    except ReportError as e:
        timing["second_source"] = {"error": str(e)}
    try:
        timing["logic_level_distribution"] = vivado_logic_levels.parse_file(rd / REPORTS["logic_levels.rpt"])
    except ReportError as e:
        timing["logic_level_distribution"] = {"error": str(e), "max_logic_levels": None}


def collect(project: Project, version: VivadoVersion, make_log: Path | None = None) -> FlowResult:
    """Parse what the hooks wrote. An unreadable or missing timing report gives a timing record with
    an "error" (the gate fails on it); a missing utilization report gives utilization None."""
    from ..parsers import vivado_clock_interaction, vivado_timing_summary, vivado_utilization

    rd = project.report_dir
    raw = {arch: rd / fn for arch, fn in REPORTS.items() if (rd / fn).is_file()}
    if make_log is not None and make_log.is_file():
        raw["vivado_make.log"] = make_log
    raw["kabe_settings.tcl"] = project.settings_tcl

    try:
        timing = vivado_timing_summary.parse_file(rd / REPORTS["timing_summary.rpt"])
        timing["estimated"] = False
        names = [c.get("name") for c in timing.get("clocks") or []]
        if project.clock_name not in names:
            timing = _timing_error(f"{rd / 'timing_summary.rpt'}: clock {project.clock_name} (the XDC's) is not "
                                   f"among the report's clocks {names}; the PS7 FCLK0 is not the clock the design "
                                   f"was meant to meet")
    except ReportError as e:
        timing = _timing_error(f"Vivado timing report unusable: {e}")
    if "error" not in timing:
        # report_timing_summary cannot say whether a crossing is safe; report_clock_interaction can
        try:
            pairs = vivado_clock_interaction.parse_file(rd / REPORTS["clock_interaction.rpt"])
            timing["clock_interaction"] = _merge_crossings(timing.get("clock_interaction") or [], pairs)
        except ReportError as e:
            timing = _timing_error(f"Vivado clock interaction report unusable, so clock crossings are unchecked: {e}")
    if "error" not in timing:
        _second_source_and_logic_levels(timing, rd)

    utilization: dict | None
    try:
        utilization = vivado_utilization.parse_file(rd / REPORTS["utilization.rpt"])
        try:
            hier = vivado_utilization.parse_hierarchical_file(rd / REPORTS["utilization_hier.rpt"])
            utilization["by_instance"] = hier["by_instance"]
        except ReportError as e:
            utilization["by_instance"] = {}
            utilization["by_instance_error"] = str(e)
    except ReportError:
        utilization = None

    artifacts = {}
    for key, path in (("bit", project.bit), ("hwh", project.hwh)):
        if path.is_file():
            artifacts[key] = path
        elif "error" not in timing:
            timing = _timing_error(f"Vivado finished but wrote no {path.name} (expected {path}); "
                                   f"the build produced no usable {key}")
    return FlowResult(
        flow="vivado", part=PART, clock_period_ns=project.clock_period_ns, timing=timing,
        utilization=utilization, raw_files=raw, tools={"vivado": version.line},
        inputs=[p for p in project.inputs if Path(p).is_file()], artifacts=artifacts,
    )


# --------------------------------------------------------------------------------------------
# the entry point kabe.build calls


def run_build(design, workdir: Path, *, console: Console | None = None) -> FlowResult:
    console = console or Console()
    fs = settings()
    exe = find_vivado()
    version = vivado_version(exe)
    check_version_pin(version, fs["vivado_version"], fs["vivado_version_mismatch"], console)
    with console.status(f"[bold]{design.name}[/]: generating the Vivado project (edalize)"):
        project = generate_project(design, Path(workdir) / "edalize", flow_settings=fs)
    log = run_make(project, console, fs["vivado_timeout_s"])
    return collect(project, version, log)
