"""Collecting what Vivado's hooks wrote: the timing, utilization and clock-interaction reports
parsed into records, the images (the board profile's outputs: .bit/.hwh/.xsa on Zynq-7000,
.pdi/.xsa on Versal, plus the cell list or the ami_tool boot image) as artifacts. A missing or unreadable timing report
becomes a timing record with an "error" (the gate fails on it), never a pass.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from kabe.project import constraints
from kabe.flows.base import FlowResult, unreadable_timing
from kabe.flows.vivado import versal
from kabe.flows.vivado.project import Project
from kabe.flows.vivado.tool import VivadoVersion
from kabe.parsers import ReportError

# Report files the hooks write under <work root>/reports/ (archive name -> file name).
REPORTS = {
    "timing_summary.rpt": "timing_summary.rpt",
    "utilization.rpt": "utilization.rpt",
    "utilization_hier.rpt": "utilization_hier.rpt",
    "clock_interaction.rpt": "clock_interaction.rpt",
    "logic_levels.rpt": "logic_levels.rpt",
    "timing_verdict.json": "timing_verdict.json",  # the second source (kabe/flows/vivado/tcl/timing_verdict.tcl)
}


def _timing_error(message: str) -> dict:
    return unreadable_timing(message, estimated=False)


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
    from kabe.parsers import vivado_logic_levels, vivado_timing_verdict

    try:
        timing["second_source"] = vivado_timing_verdict.parse_file(rd / REPORTS["timing_verdict.json"])
    except ReportError as e:
        timing["second_source"] = {"error": str(e)}
    try:
        timing["logic_level_distribution"] = vivado_logic_levels.parse_file(rd / REPORTS["logic_levels.rpt"])
    except ReportError as e:
        timing["logic_level_distribution"] = {"error": str(e), "max_logic_levels": None}


def archived_project(archive: Path, design) -> SimpleNamespace:
    """What collect() needs of a project, for a build's archive (kabe.build.rederive re-derives a cache
    entry's numbers with collect itself): its reports, the clock Vivado timed (the XDC's on Zynq, the
    clock wizard's on Versal: kabe.flows.vivado.versal), the images the board's build leaves."""
    name = f"kabe_{design.name}"
    if getattr(design, "vivado", None) is not None and design.vivado.top == "own":  # its clocks: the report's
        image = "pdi" if design.board.is_versal else "bit"  # the image own_top's build must leave
        images = {k: archive / f"{name}.{k}" for k in (image, "hwh", "xsa")}
        return SimpleNamespace(report_dir=archive, settings_tcl=archive / "kabe_settings.tcl", clock_name=None,
                               clock_period_ns=None, inputs=(), part=design.board.part,
                               images={k: v for k, v in images.items() if v.is_file() or k == image})
    clock = constraints.parse_xdc(design.constraints)[0]
    if design.board.is_versal:
        clock_name = versal.CLOCK_NAME
        images = versal.image_paths(archive, name)
    else:
        clock_name = clock.name
        images = {k: archive / f"{name}{ext}" for k, ext in (("bit", ".bit"), ("hwh", ".hwh"), ("xsa", ".xsa"),
                                                             ("cells", ".cells.json"))}
        images = {k: v for k, v in images.items() if k in design.board.outputs or k == "cells"}
    return SimpleNamespace(report_dir=archive, settings_tcl=archive / "kabe_settings.tcl", clock_name=clock_name,
                           clock_period_ns=clock.period_ns, inputs=(), images=images, part=design.board.part)


def collect(project: Project, version: VivadoVersion, make_log: Path | None = None) -> FlowResult:
    """Parse what the hooks wrote. An unreadable or missing timing report gives a timing record with
    an "error" (the gate fails on it); a missing utilization report gives utilization None."""
    from kabe.parsers import vivado_clock_interaction, vivado_timing_summary, vivado_utilization

    rd = project.report_dir
    raw = {arch: rd / fn for arch, fn in REPORTS.items() if (rd / fn).is_file()}
    if make_log is not None and make_log.is_file():
        raw["vivado_make.log"] = make_log
    raw["kabe_settings.tcl"] = project.settings_tcl

    try:
        timing = vivado_timing_summary.parse_file(rd / REPORTS["timing_summary.rpt"])
        timing["estimated"] = False
        names = [c.get("name") for c in timing.get("clocks") or []]
        if project.clock_name is None:  # the design's own clocks (MMCM, PS, pins): the report names them
            if not names:
                timing = _timing_error(f"{rd / 'timing_summary.rpt'}: the report has no clock; the design's "
                                       f"clocks (create_clock in its XDC, an MMCM's or a PS's) did not reach Vivado")
        elif project.clock_name not in names:
            timing = _timing_error(f"{rd / 'timing_summary.rpt'}: clock {project.clock_name} (the XDC's) is not "
                                   f"among the report's clocks {names}; the board clock Vivado timed (the PS7 FCLK0, "
                                   f"the V80's clock wizard output) is not the clock the design was meant to meet")
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
    for key, path in project.images.items():
        if path.is_file():
            artifacts[key] = path
        elif "error" not in timing:
            timing = _timing_error(f"Vivado finished but wrote no {path.name} (expected {path}); "
                                   f"the build produced no usable {key}")
    period = project.clock_period_ns
    if period is None and "error" not in timing:  # the design's own clocks: its fastest as the build's period
        periods = [c["period_ns"] for c in timing.get("clocks") or [] if isinstance(c.get("period_ns"), (int, float))]
        period = min(periods) if periods else None
    return FlowResult(
        flow="vivado", part=project.part, clock_period_ns=period, timing=timing,
        utilization=utilization, raw_files=raw, tools={"vivado": version.line},
        inputs=[p for p in project.inputs if Path(p).is_file()], artifacts=artifacts,
    )
