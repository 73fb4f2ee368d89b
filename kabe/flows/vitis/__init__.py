"""flow=vitis: a v++ link (design.yaml `vitis:`): .xo kernels + a platform (.xpfm) + a connectivity config
-> an .xclbin, with the link's own Vivado run placing and routing the kernels in the platform.

    v++ -l -t hw --platform <xpfm> --config <connectivity cfg> --clock.defaultFreqHz <Hz> -o <design>.xclbin <xo>...

(UG1702 "v++ Command" and "--clock Options"). The kernel clock asked for is the design's XDC clock, as
for every design. When the kernels do not close timing at that clock, v++ lowers it and still writes
an xclbin (VPL 60-732, "automatically changed to"): the build records what the link log says
(kabe.parsers.vitis_link_log), and the gate (kabe.rules.hls_gate through kabe.rules.verdict) fails it
unless design.yaml's `vitis.accept_clock_mhz` accepts the clock it got. The routed timing summary and
utilization of the link's Vivado run go through kabe's Vivado parsers and gate, and the xclbin itself is
read in Python (kabe.parsers.xclbin): its kernels, clocks and UUID land in metrics.json (`vitis_link`).

A kernel named by design in vitis.kernels is that HLS design's exported .xo (hls.export: xo), taken from
its last build (build/<design>/vitis_hls/export/); build it first.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path


from kabe.flows.base import FlowError, FlowResult, ToolError, unreadable_timing
from kabe.flows.vitis_hls import tool as hls_tool
from kabe.parsers import ReportError
from kabe.base.paths import BUILD

NAME = "vitis"
ESTIMATED = False  # routed timing of the link's Vivado run
TIMEOUT_S = 12 * 3600.0


def check_tools() -> None:
    if shutil.which("v++") is None:
        raise FlowError("flow=vitis needs AMD Vitis's v++, which is not on PATH. Fix: `source <Vitis install>/"
                        "settings64.sh` in the shell that runs doit")


def check_design(design, edam) -> None:
    if design.vitis is None:
        raise FlowError(f"{design.name} is not a v++ link (its design.yaml has no vitis: section)")
    kernel_files(design)  # a kernel that is not built yet is said before anything runs


def kernel_files(design) -> list[Path]:
    from kabe.project import designs

    out = []
    for k in design.vitis.kernels:
        if k.endswith(".xo"):
            out.append(Path(k))
            continue
        try:
            d = designs.get(k)
        except designs.DesignError as e:
            raise FlowError(f"{design.yaml_file}: vitis.kernels names {k}, neither an .xo file nor a design ({e})") from None
        if d.hls is None or d.hls.export != "xo":
            raise FlowError(f"{design.yaml_file}: vitis.kernels names {k}, which is not an HLS design exported as an "
                            f".xo; give it `hls: {{export: xo}}` in {d.yaml_file}")
        xo = BUILD / d.name / "vitis_hls" / "export" / f"{d.hls.top}.xo"
        if not xo.is_file():
            raise FlowError(f"{xo}: no .xo of kernel {k} yet; build it first: doit build:{k}")
        out.append(xo)
    return out


def _one(folder: Path, pattern: str) -> Path | None:
    found = sorted(folder.glob(pattern)) if folder.is_dir() else []
    return found[0] if found else None


def collect(design, workdir: Path, xclbin: Path, asked_mhz: float) -> tuple[dict, dict | None, dict, dict, dict]:
    """(timing, utilization, raw files, artifacts, sections) of a finished link."""
    x = workdir / "_x"
    impl = x / "link" / "vivado" / "vpl" / "prj" / "prj.runs" / "impl_1"
    files = {"v++_link.log": x / "logs" / "link" / "v++.log", "vpl_runme.log": x / "link" / "vivado" / "vpl" / "runme.log",
             "timing_summary_routed.rpt": _one(impl, "*timing_summary_routed.rpt"),
             "utilization_placed.rpt": _one(impl, "*utilization_placed.rpt")}
    raw = {k: v for k, v in files.items() if v is not None and v.is_file()}
    timing, utilization, sections = derive(raw, xclbin, asked_mhz, design.vitis.accept_clock_mhz)
    return timing, utilization, raw, ({"xclbin": xclbin} if xclbin.is_file() else {}), sections


def derive(raw: dict[str, Path], xclbin: Path, asked_mhz: float,
           accept_mhz: float | None) -> tuple[dict, dict | None, dict]:
    """(timing, utilization, sections) from a link's logs, routed reports and xclbin (archive name -> file):
    what the flow records, and what a cache hit's archive must say again (kabe.build.rederive). The
    link log's record is timing.link; the xclbin's facts are metrics.json's `vitis_link` (its kernel clock
    read from the xclbin itself, and the clock kabe asked for)."""
    from kabe.parsers import vitis_link_log, vivado_timing_summary, vivado_utilization, xclbin as xclbin_reader

    try:
        if "timing_summary_routed.rpt" not in raw:
            raise ReportError("the link's Vivado run wrote no *timing_summary_routed.rpt")
        timing = vivado_timing_summary.parse_file(raw["timing_summary_routed.rpt"])
        timing["estimated"] = False
    except ReportError as e:
        timing = unreadable_timing(f"the link's routed timing summary is unusable: {e}", estimated=False)
    link_records = {}
    for name in ("v++_link.log", "vpl_runme.log"):
        if name not in raw:
            continue
        try:
            link_records[name] = vitis_link_log.parse(raw[name].read_text(errors="replace"), str(raw[name]))
        except ReportError as e:
            timing = unreadable_timing(f"the link log is unusable, so a scaled clock cannot be ruled out: {e}",
                                       estimated=False)
    if not link_records and "error" not in timing:
        timing = unreadable_timing("v++ wrote no link log (v++.log, the vpl runme.log); a scaled kernel clock "
                                   "cannot be ruled out", estimated=False)
    if link_records:
        # the two logs say the same link; every scaled clock of either counts, each once
        merged = dict(link_records.get("v++_link.log") or link_records["vpl_runme.log"])
        seen, scaled = set(), []
        for rec in link_records.values():
            for s in rec["scaled_clocks"]:
                key = (s.get("clock"), s.get("from_mhz"), s.get("to_mhz"))
                if key not in seen:
                    seen.add(key)
                    scaled.append(s)
        merged["scaled_clocks"], merged["scaled"] = scaled, bool(scaled)
        merged["unscalable_clock_failures"] = [u for r in link_records.values() for u in r["unscalable_clock_failures"]]
        merged["error_lines"] = [e for r in link_records.values() for e in r["error_lines"]]
        timing["link"] = merged
    sections = {}
    try:
        xrec = xclbin_reader.parse_file(xclbin)
        sections["vitis_link"] = {**xclbin_reader.metrics(xrec, timing.get("link"), accept_mhz),
                                  "asked_clock_mhz": asked_mhz, "xclbin_bytes": xrec.get("bytes")}
    except ReportError as e:
        if "error" not in timing:
            timing = {**timing, "error": f"the link's xclbin is unreadable: {e}"}
    utilization = None
    if "utilization_placed.rpt" in raw:
        try:
            utilization = vivado_utilization.parse_file(raw["utilization_placed.rpt"])
        except ReportError:
            utilization = None
    return timing, utilization, sections


def run_build(ctx, workdir: Path) -> FlowResult:
    """The flow interface (kabe.flows.base): the design's context (its synth target, XDC clocks), a work folder."""
    design, edam, console = ctx.design, ctx.synth, ctx.console
    check_design(design, edam)
    spec = design.vitis
    xos = kernel_files(design)
    workdir = Path(workdir).resolve()
    shutil.rmtree(workdir / "_x", ignore_errors=True)  # never read a previous link's logs
    workdir.mkdir(parents=True, exist_ok=True)
    clock = ctx.xdc_clocks()[0]
    asked_mhz = round(1000.0 / clock.period_ns, 6)
    xclbin = workdir / f"{design.name}.xclbin"
    xclbin.unlink(missing_ok=True)
    vpp = shutil.which("v++")
    cmd = [vpp, "-l", "-t", "hw", "--platform", str(spec.platform), "--config", str(spec.connectivity),
           "--clock.defaultFreqHz", str(int(round(asked_mhz * 1e6))), "-o", str(xclbin), *map(str, xos)]
    log = workdir / "vpp_link_console.log"
    t0 = time.monotonic()
    with console.status(f"[bold]{design.name}[/]: v++ --link ({len(xos)} kernel(s), {asked_mhz:g} MHz); log {log}"):
        try:
            seconds = hls_tool.run(cmd, workdir, log, "v++ --link", TIMEOUT_S)
        except ToolError:
            raise
    timing, utilization, raw, artifacts, sections = collect(design, workdir, xclbin, asked_mhz)
    raw["vpp_link_console.log"] = log
    if not artifacts and "error" not in timing:
        timing = unreadable_timing(f"v++ --link finished but wrote no {xclbin}", estimated=False)
    got = (sections.get("vitis_link") or {}).get("kernel_clock_mhz")
    console.log(f"{design.name}: v++ link done in {time.monotonic() - t0:.1f} s; kernel clock asked {asked_mhz:g} MHz, "
                f"the xclbin has {got if got is not None else '?'} MHz")
    return FlowResult(flow=NAME, part=design.board.part, clock_period_ns=clock.period_ns, timing=timing,
                      utilization=utilization, raw_files=raw, tools={"v++": hls_tool.version_of(vpp, "--version")[1]},
                      inputs=[spec.platform, spec.connectivity, *xos], artifacts=artifacts, tool_seconds=seconds,
                      sections=sections)
