"""A cache hit's numbers come from its raw reports, not from its metrics.json.

Before a hit is reused (kabe.build.reuse), the archived raw reports are parsed again the way the
flow parsed them when it ran (the open flow: kabe.parsers.kabe_timing on timing_estimate.rpt and
kabe.parsers.yosys_stat on yosys_stat.txt; the Vivado flow: kabe.flows.vivado.collect on its
reports), and the records they give must equal the archived ones. A metrics.json whose numbers
its own reports do not say (a LUT count lowered, a WNS raised by hand or by a forger who signed
it) is refused as a cache hit; the build then runs its tools. The answer names the metric.

Not compared: the open flow's `by_instance` breakdown (it needs the top module's netlist, which is
not archived; no budget reads it) and the simulation result (its harness output is not a report:
a hit reuses the check of the same key).
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any, Callable

from kabe.project import constraints, designs
from kabe.base.errors import bounded
from kabe.parsers import ReportError
from kabe.cache import cache

_SHOWN = 60


def disagreement(entry: cache.Entry, design: designs.Design, flow: str) -> str | None:
    """None when the entry's timing and utilization records are what its raw reports say; else
    one line naming the first metric that differs and the report it comes from."""
    rederive = _FLOWS.get(flow)
    if rederive is None:
        return f"kabe cannot re-derive the {flow} flow's numbers from its reports"
    record = entry.record
    try:
        timing, utilization, sources = rederive(Path(entry.archive), design, record)
    except (OSError, ValueError, KeyError, TypeError) as e:  # a report gone or unreadable in a way no parser says
        return f"its raw reports cannot be read again ({type(e).__name__}: {str(e)[:200]})"
    archived_util = None if (record.get("utilization") or {}).get("missing") else record.get("utilization")
    for what, archived, derived, ignore in (("timing", record.get("timing"), timing, ()),
                                            ("utilization", archived_util, utilization, sources["ignore"])):
        why = _differs(what, archived, derived, sources[what], ignore)
        if why:
            return f"its numbers disagree with its raw reports: {why}"
    for what, derived in sources.get("sections", {}).items():  # an HLS build's hls, a link's vitis_link
        why = _differs(what, record.get(what), derived, sources[what], ())
        if why:
            return f"its numbers disagree with its raw reports: {why}"
    return None


def _differs(what: str, archived: Any, derived: Any, source: str, ignore) -> str | None:
    if isinstance(archived, dict) and "error" in archived:  # the build could not read its report either
        if derived is None or "error" in derived:
            return None
        return f"metrics.json says the {what} report was unreadable, but {source} reads"
    if derived is None or (isinstance(derived, dict) and "error" in derived):
        return None if archived is None else f"{what}: {source} cannot be read, but metrics.json has numbers"
    if archived is None:
        return f"{what}: metrics.json has none, but {source} has numbers"
    for key in sorted(set(archived) | set(derived)):
        if key in ignore or archived.get(key) == derived.get(key):
            continue
        return (f"{what}.{key} is {bounded(archived.get(key), _SHOWN)} in metrics.json but {bounded(derived.get(key), _SHOWN)} "
                f"in {source}")
    return None


def _open(archive: Path, design: designs.Design, record: dict) -> tuple[dict | None, dict | None, dict]:
    from kabe.flows.open import TIMING_REPORT, labelled_utilization, not_estimated_timing
    from kabe.parsers import kabe_timing, yosys_stat

    if design.board.timing_estimated:
        try:
            timing = kabe_timing.parse(archive / TIMING_REPORT)  # what kabe.flows.open.analyze keeps
        except ReportError:
            timing = None
    else:  # a board kabe cannot time: the flow's record is the XDC's clocks and why, no report
        timing = not_estimated_timing(design.board, constraints.clocks([design.constraints]))
    try:  # with the proxy label the flow gives this board's fabric
        utilization = labelled_utilization(yosys_stat.parse_utilization(archive / "yosys_stat.txt"), design.board)
    except ReportError:
        utilization = None
    return timing, utilization, {"timing": TIMING_REPORT, "utilization": "yosys_stat.txt",
                                 "ignore": ("by_instance",)}


def _vivado(archive: Path, design: designs.Design, record: dict) -> tuple[dict | None, dict | None, dict]:
    """kabe.flows.vivado.collect itself, pointed at the archive: the same parsing, the same merging of
    the clock-interaction report and Vivado's second-source verdict, the XDC's clock (this checkout's)."""
    from kabe.flows.vivado import collect

    project = collect.archived_project(archive, design)  # the clock Vivado timed, the images of the board
    version = SimpleNamespace(line=(record.get("tools") or {}).get("vivado", ""))
    result = collect.collect(project, version)
    return result.timing, result.utilization, {"timing": "timing_summary.rpt and the reports beside it",
                                               "utilization": "utilization.rpt",
                                               "ignore": ("by_instance_error",)}  # names the work folder


def _vitis_hls(archive: Path, design: designs.Design, record: dict) -> tuple[dict | None, dict | None, dict]:
    """kabe.flows.vitis_hls.collect.derive on the archived csynth (and cosim) reports and the export."""
    from kabe.flows.vitis_hls import collect

    top, spec = design.hls.top, design.hls
    files = {p.name: p for p in archive.iterdir() if p.is_file()}
    export = archive / f"{top}{'.xo' if spec.export == 'xo' else '.zip'}"
    timing, utilization, sections = collect.derive(files, top, record["clock_period_ns"], spec.cosim, export,
                                                   spec.export)
    what = "csynth.xml (or csynth.rpt) and the HLS log"
    return timing, utilization, {"timing": what, "utilization": what, "hls": what, "ignore": (), "sections": sections}


def _vitis(archive: Path, design: designs.Design, record: dict) -> tuple[dict | None, dict | None, dict]:
    """kabe.flows.vitis.derive on the archived link logs, routed reports and xclbin."""
    from kabe import flows

    link = flows.get("vitis")
    raw = {p.name: p for p in archive.iterdir() if p.is_file()}
    asked = round(1000.0 / constraints.parse_xdc(design.constraints)[0].period_ns, 6)  # this checkout's XDC
    timing, utilization, sections = link.derive(raw, archive / f"{design.name}.xclbin", asked,
                                                design.vitis.accept_clock_mhz)
    return timing, utilization, {"timing": "timing_summary_routed.rpt and the link logs",
                                 "utilization": "utilization_placed.rpt", "vitis_link": f"{design.name}.xclbin",
                                 "ignore": (), "sections": sections}


_FLOWS: dict[str, Callable[[Path, designs.Design, dict], tuple[dict | None, dict | None, dict]]] = {
    "open": _open, "vivado": _vivado, "vitis_hls": _vitis_hls, "vitis": _vitis}
