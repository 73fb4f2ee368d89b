"""Vivado the tool: finding it on PATH, its version against the pin, the flow's settings, and
running edalize's Makefile with a progress line and a timeout. Nothing here knows the project.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import threading
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from kabe.project import config
from kabe.base import disk_space, tool_group
from kabe.flows.base import FlowError

STRATEGY_KEYS = config.VIVADO_STRATEGY_KEYS  # applied by kabe/flows/vivado/tcl/apply_strategies.tcl

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
    ("Command: write_device_image", "writing the device image (Versal)"),
    ("Device image generation completed", "device image written"),
    ("bootgen", "combining the image with AVED's firmware (bootgen)"),
    ("write_hw_platform", "writing the .xsa"),
)



def settings(overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """[tool.kabe] keys the Vivado flow reads, typed and defaulted by kabe.project.config (one table for all
    settings); overrides (tests) are checked against the same table."""
    s = config.load() if overrides is None else config.validate(overrides)
    return {key: config.value(s, key) for key in
            ("vivado_version", "vivado_version_mismatch", "vivado_timeout_s", "vivado_jobs", "vivado_aved_dir",
             *(f"vivado_{k}" for k in STRATEGY_KEYS))}



def with_design_settings(fs: dict[str, Any], design) -> dict[str, Any]:
    """design.yaml's `vivado:` strategies, directives and jobs for the keys [tool.kabe] leaves unset: a
    project's setting (or a sweep variant's, which sets [tool.kabe]) wins over the design's."""
    vs = getattr(design, "vivado", None)
    if vs is None or not vs.declared:
        return fs
    explicit = config.load()
    out = dict(fs)
    for k, v in vs.strategies.items():
        if f"vivado_{k}" not in explicit:
            out[f"vivado_{k}"] = v
    if vs.jobs is not None and "vivado_jobs" not in explicit:
        out["vivado_jobs"] = vs.jobs
    return out


def run_batch(script: Path, cwd: Path, log: Path, timeout_s: float, console: Console, what: str) -> None:
    """`vivado -mode batch -source script` in cwd (the IP cache's generation run), in the build's tool
    group; FlowError naming the log on a failure or a timeout."""
    places = [disk_space.tmp_place(), disk_space.build_place(cwd)]
    disk_space.check_free("Vivado", places)
    with open(log, "w") as lf:
        proc = tool_group.popen(["vivado", "-notrace", "-mode", "batch", "-source", str(script)], cwd=cwd,
                                stdout=lf, stderr=subprocess.STDOUT)
        try:
            with console.status(f"Vivado: {what} (log {log})"):
                proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            tool_group.stop(proc, grace_s=30)
            raise FlowError(f"Vivado did not finish {what} within {timeout_s:.0f} s; log: {log}") from None
        except BaseException:
            tool_group.stop(proc, grace_s=30)
            raise
    if proc.returncode != 0:
        tail = [ln for ln in log.read_text(errors="replace").splitlines() if ln.strip()][-3:]
        raise FlowError(f"Vivado failed {what} (exit {proc.returncode}): {' | '.join(tail)}. Full log: {log}")


def doctor_check() -> str | None:
    """For `kabe doctor --flow vivado` (kabe.project.flows's doctor_checks): None, or what is missing with the fix."""
    try:
        find_vivado()
    except FlowError as e:
        return str(e)
    return None


def find_vivado() -> str:
    exe = shutil.which("vivado")
    if exe is None:
        raise FlowError(
            "flow=vivado needs AMD Vivado, and `vivado` is not on PATH. Fix: run "
            "`source <Vivado install>/settings64.sh` (e.g. /tools/Xilinx/Vivado/2023.2/settings64.sh) "
            "or add Vivado's bin/ directory to PATH in the shell that runs doit; or build with the "
            "open flow: `doit build:<design> flow=open`")
    if shutil.which("make") is None:
        raise FlowError("flow=vivado runs edalize's Makefile, and `make` is not on PATH. "
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
        raise FlowError(f"`{exe} -version` did not run ({e}); check the Vivado installation") from None
    lines = [ln.strip() for ln in (proc.stdout + proc.stderr).splitlines() if ln.strip()]
    line = next((ln for ln in lines if "vivado" in ln.lower() and _VERSION_RE.search(ln)), None)
    if proc.returncode != 0 or line is None:
        raise FlowError(f"`{exe} -version` printed no Vivado version (exit {proc.returncode}: "
                         f"{' / '.join(lines[:3]) or 'no output'}); check the Vivado installation")
    return VivadoVersion(line, _VERSION_RE.search(line).group(1))


def check_version_pin(have: VivadoVersion, pin: str, policy: str, console: Console | None = None) -> str | None:
    """None when Vivado matches the pin (or nothing is pinned); else the warning sentence.
    policy "fail" raises FlowError instead."""
    if not pin or have.short == pin or have.short.startswith(pin + "."):
        return None
    msg = (f"Vivado {have.short} is on PATH but pyproject.toml [tool.kabe] vivado_version pins {pin}: "
           f"timing and utilization can differ between versions")
    if policy == "fail":
        raise FlowError(msg + f". Fix: put Vivado {pin} on PATH, or change the pin (vivado_version_mismatch = "
                               f"\"warn\" only warns)")
    if console is not None:
        console.print(f"[yellow]warning: {escape(msg)}[/]")
    return msg



def run_make(project, console: Console, timeout_s: float) -> Path:
    """Run edalize's Makefile of `project` (a kabe.flows.vivado.project.Project: its work_root and name);
    Vivado's output goes to vivado_make.log. Raises FlowError on a
    non-zero exit or on timeout (the whole process group is stopped)."""
    log = project.work_root / "vivado_make.log"
    tail: deque[str] = deque(maxlen=400)
    phase = ["starting Vivado"]
    places = [disk_space.tmp_place(), disk_space.build_place(project.work_root)]
    disk_space.check_free("Vivado", places)
    t0 = time.monotonic()
    with open(log, "w") as lf:
        # make and every Vivado process in a group tied to this build (kabe.base.tool_group): a killed build,
        # a timeout or Ctrl-C stops them all, and they hold the build folder's lock until they are gone
        proc = tool_group.popen(["make"], cwd=project.work_root, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, errors="replace")

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
            try:
                while True:
                    try:
                        proc.wait(timeout=1.0)
                        break
                    except subprocess.TimeoutExpired:
                        pass
                    elapsed = time.monotonic() - t0
                    status.update(f"[bold]{project.name}[/]: Vivado, {phase[0]} ({elapsed / 60:.1f} min; log {log})")
                    if elapsed > timeout_s:
                        tool_group.stop(proc, grace_s=30)
                        reader.join(timeout=5)
                        raise FlowError(f"Vivado did not finish within {timeout_s:.0f} s (stopped during "
                                        f"{phase[0]}); log: {log}. Fix: raise [tool.kabe] vivado_timeout_s")
            except BaseException:  # Ctrl-C too: the group is in its own session, the terminal's signal missed it
                tool_group.stop(proc, grace_s=30)
                raise
        reader.join(timeout=10)
    if proc.returncode != 0:
        full = disk_space.full_message("Vivado", "\n".join(tail), places)
        if full:
            raise FlowError(f"{full} (full log: {log})")
        errors = [ln for ln in tail if ln.startswith(("ERROR", "CRITICAL WARNING", "make:")) or "error" in ln[:20].lower()]
        shown = " | ".join((errors or list(tail))[-4:])
        raise FlowError(f"Vivado (make in {project.work_root}) failed with exit {proc.returncode}: {shown}. "
                         f"Full log: {log}")
    console.print(f"[bold]{project.name}[/]: Vivado finished in {(time.monotonic() - t0) / 60:.1f} min")
    return log
