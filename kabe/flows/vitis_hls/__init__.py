"""flow=vitis_hls: an HLS design (design.yaml `hls:`) through C-synthesis and export with AMD Vitis HLS.

The build's simulation check is the kernel's C-simulation against the design's golden model (kabe.sim.csim,
g++ and the HLS headers: it runs before this flow, without Vitis). This flow then runs, in build/<design>/
vitis_hls/: C-synthesis, Vitis's own C-simulation of the user's testbench when there is one, co-simulation
when design.yaml asks (hls.cosim), and the export (hls.export: a Vivado IP catalog zip or a Vitis .xo),
with `v++ -c --mode hls` and `vitis-run --mode hls` (Vitis 2024.2 on; an HLS config file) or `vitis_hls -f`
/ `vivado_hls -f` (a Tcl script): kabe.flows.vitis_hls.scripts writes either. csynth.xml (else csynth.rpt)
is read by kabe.parsers.vitis_hls_csynth into the timing and utilization records, labelled estimates: the
clock, latency and resources of C-synthesis are the HLS tool's estimates, not a routed result.
"""

from __future__ import annotations

import shutil
from pathlib import Path


from kabe.project import constraints
from kabe.flows.base import FlowError, FlowResult, unreadable_timing
from kabe.flows.vitis_hls import collect, scripts, tool
from kabe.sim import csim

NAME = "vitis_hls"
ESTIMATED = True  # C-synthesis reports an estimated clock: the routed one comes from Vivado (or a v++ link)


def check_tools() -> None:
    tool.find()


def check_design(design, edam) -> None:
    """Before the simulation: only an HLS design, with C++ sources, builds on this flow."""
    if design.hls is None:
        raise FlowError(f"{design.name} is not an HLS design (its design.yaml has no hls: section); flow=vitis_hls "
                        f"synthesizes C++ kernels. Build it with flow=open or flow=vivado")
    sources, _ = csim.kernel_sources(edam)
    if not sources:
        raise FlowError(f"{design.core_file}: the synth target lists no C/C++ source (file_type cppSource); "
                        f"list the kernel's .cpp files there")


def job_for(design, edam, workdir: Path, kind: str, clock: constraints.Clock | None = None) -> scripts.HlsJob:
    """clock: the XDC's first clock as the verb read it (kabe.project.design_context), else read here."""
    spec = design.hls
    sources, includes = csim.kernel_sources(edam)
    clock = clock or constraints.parse_xdc(design.constraints)[0]
    suffix = ".xo" if spec.export == "xo" else ".zip"
    return scripts.HlsJob(part=design.board.part, clock_ns=clock.period_ns, top=spec.top, sources=tuple(sources),
                          includes=tuple(includes), testbench=spec.testbench, export=spec.export, cosim=spec.cosim,
                          flow_target=("vitis" if spec.export == "xo" else "vivado") if kind != "vivado_hls" else "",
                          output=Path(workdir).resolve() / "export" / f"{spec.top}{suffix}")


def run_build(ctx, workdir: Path) -> FlowResult:
    """The flow interface (kabe.flows.base): the design's context (its resolved synth target), a work folder."""
    design, edam, console = ctx.design, ctx.synth, ctx.console
    check_design(design, edam)
    t = tool.find()
    workdir = Path(workdir).resolve()
    for old in ("hls_work", scripts.PROJECT, "export", "logs"):  # never read a previous run's reports
        shutil.rmtree(workdir / old, ignore_errors=True)
    (workdir / "logs").mkdir(parents=True)
    (workdir / "export").mkdir()
    job = job_for(design, edam, workdir, t.kind, ctx.xdc_clocks()[0])
    logs: dict[str, Path] = {}
    seconds = 0.0
    if t.kind == "config":
        cfg = workdir / scripts.CONFIG
        cfg.write_text(scripts.config_file(job))
        base = ["--mode", "hls", "--config", str(cfg), "--work_dir", str(workdir / "hls_work")]
        steps = [("csynth", [t.exe, "-c", *base])]
        if job.testbench:
            steps.append(("csim", [t.run_exe, *base[:2], "--csim", *base[2:]]))
        if job.cosim:
            steps.append(("cosim", [t.run_exe, *base[:2], "--cosim", *base[2:]]))
        steps.append(("package", [t.run_exe, *base[:2], "--package", *base[2:]]))
        for step, cmd in steps:
            logs[f"{step}.log"] = workdir / "logs" / f"{step}.log"
            with console.status(f"[bold]{design.name}[/]: Vitis HLS {step} ({t.version}); log {logs[f'{step}.log']}"):
                seconds += tool.run(cmd, workdir, logs[f"{step}.log"], f"Vitis HLS {step} ({Path(cmd[0]).name})")
        reports = workdir / "hls_work" / "hls"
        raw = {"hls_config.cfg": cfg}
    else:
        tcl = workdir / scripts.TCL
        tcl.write_text(scripts.tcl_script(job, csim=True))
        logs[f"{t.kind}.log"] = workdir / "logs" / f"{t.kind}.log"
        with console.status(f"[bold]{design.name}[/]: {t.kind} -f {scripts.TCL} ({t.version})"):
            seconds += tool.run([t.exe, "-f", str(tcl)], workdir, logs[f"{t.kind}.log"], f"{t.kind} -f {tcl.name}")
        reports = workdir / scripts.PROJECT / scripts.SOLUTION
        raw = {scripts.TCL: tcl}
    raw.update({name: p for name, p in logs.items() if p.is_file()})
    result = collect.collect(design, job, reports, raw)
    console.log(f"{design.name}: C-synthesis ({t.kind}, {t.version}) done in {seconds:.1f} s: {collect.said(result)}")
    return FlowResult(flow=NAME, part=design.board.part, clock_period_ns=job.clock_ns, timing=result.timing,
                      utilization=result.utilization, raw_files=result.raw_files,
                      tools={"vitis_hls": t.line, "hls_driver": t.kind},
                      inputs=[*(Path(f.path) for f in edam.files), *job.testbench],
                      artifacts=result.artifacts, tool_seconds=seconds, sections=result.sections)
