"""Which Vitis HLS this machine has, and running it: `v++ -c --mode hls` + `vitis-run --mode hls` (Vitis
2024.2 on), `vitis_hls -f` (Vitis HLS 2020.1-2024.1) or `vivado_hls -f` (Vivado HLS, older projects).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from kabe.base import tool_group
from kabe.flows.base import FlowError, ToolError

TIMEOUT_S = 4 * 3600.0
_VERSION = re.compile(r"\bv?(20\d\d)\.(\d)(?:\.\d+)?\b")
CONFIG_FLOW_SINCE = (2024, 2)  # the release from which kabe drives HLS with a config file, not Tcl


@dataclass(frozen=True)
class HlsTool:
    kind: str  # "config" (v++ + vitis-run) | "vitis_hls" | "vivado_hls"
    exe: str  # v++ for "config", else the Tcl tool
    run_exe: str | None  # vitis-run for "config"
    version: str  # "2024.2"
    line: str  # the version line as the tool printed it


def version_of(exe: str, flag: str) -> tuple[str, str]:
    try:
        proc = subprocess.run([exe, flag], capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise ToolError(f"`{exe} {flag}` did not run ({e}); check the Vitis installation") from None
    for line in (proc.stdout + proc.stderr).splitlines():
        m = _VERSION.search(line)
        if m:
            return f"{m.group(1)}.{m.group(2)}", line.strip()
    raise ToolError(f"`{exe} {flag}` printed no version (exit {proc.returncode}); check the Vitis installation")


def find() -> HlsTool:
    """The newest way this machine offers; FlowError with the fix when none."""
    vpp, run = shutil.which("v++"), shutil.which("vitis-run")
    if vpp and run:
        version, line = version_of(vpp, "--version")
        if tuple(int(x) for x in version.split(".")) >= CONFIG_FLOW_SINCE:
            return HlsTool("config", vpp, run, version, line)
    for kind in ("vitis_hls", "vivado_hls"):
        exe = shutil.which(kind)
        if exe:
            version, line = version_of(exe, "-version")
            return HlsTool(kind, exe, None, version, line)
    raise FlowError("flow=vitis_hls needs AMD Vitis HLS (v++ and vitis-run from 2024.2, vitis_hls before, or "
                    "vivado_hls), and none is on PATH. Fix: `source <Vitis install>/settings64.sh`; the "
                    "C-simulation alone runs without it: `doit sim:<design>`")


def run(cmd: list[str], cwd: Path, log: Path, what: str, timeout_s: float = TIMEOUT_S) -> float:
    """Run one HLS command in cwd, its output in log; ToolError naming the log on failure. Seconds taken."""
    t0 = time.monotonic()
    with open(log, "w") as lf:
        try:
            proc = tool_group.run(cmd, cwd=cwd, stdout=lf, stderr=subprocess.STDOUT, text=True, timeout=timeout_s)
        except subprocess.TimeoutExpired:
            raise ToolError(f"{what} did not finish within {timeout_s:.0f} s; log: {log}") from None
    if proc.returncode != 0:
        text = log.read_text(errors="replace").splitlines()
        errors = [ln for ln in text if ln.startswith(("ERROR", "CRITICAL WARNING"))]
        raise ToolError(f"{what} failed (exit {proc.returncode}): {' | '.join((errors or text)[-3:])}; log: {log}")
    return time.monotonic() - t0
