"""What C-synthesis wrote, as kabe's records: csynth.xml (else csynth.rpt) through
kabe.parsers.vitis_hls_csynth, the co-simulation report through kabe.parsers.vitis_cosim, the exported
IP or .xo as the build's artifact. Every number is labelled an estimate (C-synthesis does not route).

The timing record keeps the shape every flow's has (wns_ns: the HLS budget minus the estimated clock,
i.e. target - uncertainty - estimate), with the whole csynth record under `hls` (latency, interval,
every loop's II) for the HLS gate rules, metrics.json, `kabe diff` and the page. A missing or unreadable
report is a timing record with an "error": the gate fails on it, never a pass.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from kabe.flows.base import unreadable_timing
from kabe.parsers import ReportError


@dataclass
class Collected:
    timing: dict
    utilization: dict | None
    raw_files: dict[str, Path] = field(default_factory=dict)
    artifacts: dict[str, Path] = field(default_factory=dict)
    sections: dict = field(default_factory=dict)  # metrics.json's `hls` (kabe.parsers.vitis_hls_csynth.metrics)


def _report_files(reports: Path, top: str) -> dict[str, Path]:
    """Archive name -> file of what this run wrote under <solution or hls work dir>/."""
    rd, sd = reports / "syn" / "report", reports / "sim" / "report"
    found = {"csynth.xml": rd / "csynth.xml", "csynth.rpt": rd / "csynth.rpt",
             f"{top}_csynth.rpt": rd / f"{top}_csynth.rpt", f"{top}_csynth.xml": rd / f"{top}_csynth.xml",
             f"{top}_cosim.rpt": sd / f"{top}_cosim.rpt"}
    for log in ("vitis_hls.log", "solution1.log"):
        found[log] = reports / log
    return {k: v for k, v in found.items() if v.is_file()}


def parse_csynth(files: dict[str, Path], top: str) -> dict:
    """The csynth record: the xml first (it carries the clock in every version), the rpt else."""
    from kabe.parsers import vitis_hls_csynth

    for name in ("csynth.xml", f"{top}_csynth.xml"):
        if name in files:
            return vitis_hls_csynth.parse_xml(files[name].read_text(errors="replace"), str(files[name]))
    for name in ("csynth.rpt", f"{top}_csynth.rpt"):
        if name in files:
            return vitis_hls_csynth.parse(files[name].read_text(errors="replace"), str(files[name]))
    raise ReportError("C-synthesis wrote neither csynth.xml nor csynth.rpt under syn/report/; the run did not "
                      "finish or wrote elsewhere")


def timing_from(rec: dict, clock_ns: float) -> dict:
    """The timing record of a csynth record: the estimate against the target, labelled an estimate (the
    latency, interval and loops are metrics.json's `hls` section)."""
    target = rec.get("target_clock_ns")
    return {"estimated": True, "estimate_of": "Vitis HLS C-synthesis (scheduling estimate, not routed)",
            "wns_ns": rec.get("slack_ns"), "tns_ns": None, "whs_ns": None, "critical_path": None,
            "clocks": [{"name": "ap_clk", "period_ns": target if target is not None else clock_ns,
                        "wns_ns": rec.get("slack_ns")}]}


def utilization_from(rec: dict) -> dict:
    r = rec.get("resources") or {}
    bram18 = r.get("bram_18k")
    return {"lut": r.get("lut") or 0, "ff": r.get("ff") or 0, "dsp": r.get("dsp") or 0,
            "bram36_equiv": (bram18 or 0) / 2, "uram": r.get("uram") or 0,
            "estimated": True, "source": "C-synthesis estimate (csynth)"}


def collect(design, job, reports: Path, raw: dict[str, Path]) -> Collected:
    files = _report_files(reports, job.top)
    timing, utilization, sections = derive(files, job.top, job.clock_ns, job.cosim, job.output, job.export)
    artifacts = {("xo" if job.export == "xo" else "ip"): job.output} if job.output.is_file() else {}
    return Collected(timing, utilization, {**raw, **files}, artifacts, sections)


def derive(files: dict[str, Path], top: str, clock_ns: float, cosim: bool, export_file: Path,
           export: str) -> tuple[dict, dict | None, dict]:
    """(timing, utilization, sections) from the reports of one run (archive name -> file): what the flow
    records, and what a cache hit's archive must say again (kabe.build.rederive)."""
    from kabe.parsers import vitis_cosim, vitis_hls_csynth, vitis_hls_log

    try:
        rec = parse_csynth(files, top)
    except ReportError as e:
        return unreadable_timing(f"C-synthesis report unusable: {e}", estimated=True), None, {}
    timing = timing_from(rec, clock_ns)
    if rec.get("target_clock_ns") is not None and abs(rec["target_clock_ns"] - clock_ns) > 1e-3:
        timing = unreadable_timing(f"{files.get('csynth.xml') or files.get('csynth.rpt')}: target clock "
                                   f"{rec['target_clock_ns']} ns, but the design's XDC asks for {clock_ns} ns; "
                                   f"the report is not of this build", estimated=True)
    cosim_name, cos = f"{top}_cosim.rpt", None
    if cosim:
        if cosim_name not in files:
            timing = unreadable_timing(f"co-simulation was asked for (hls.cosim) and wrote no {cosim_name}",
                                       estimated=True)
        else:
            try:  # kabe.rules.hls_gate judges it from the hls section (verdict)
                cos = vitis_cosim.parse(files[cosim_name].read_text(errors="replace"), str(files[cosim_name]))
            except ReportError as e:
                timing = unreadable_timing(f"co-simulation report unusable: {e}", estimated=True)
    # the log's own word on the last csynth run (HLS 200-880/885 II violations, HLS 200-871): the tool only
    # warns there, and the log names a loop's target II, which csynth.xml does not (kabe.rules.hls_gate)
    for name in ("vitis_hls.log", "solution1.log"):
        if name in files:
            try:
                timing["hls_log"] = vitis_hls_log.parse(files[name].read_text(errors="replace"), str(files[name]))
            except ReportError as e:
                timing = unreadable_timing(f"the HLS log is unusable, so II and timing violations are unchecked: {e}",
                                           estimated=True)
            break
    if not export_file.is_file() and "error" not in timing:
        timing = unreadable_timing(f"the export ({export}) wrote no {export_file}", estimated=True)
    return timing, utilization_from(rec), {"hls": vitis_hls_csynth.metrics(rec, cos)}


def said(c: Collected) -> str:
    t = c.timing
    if t.get("error"):
        return f"[red]{t['error']}[/]"
    rec = c.sections.get("hls") or {}
    return (f"estimated clock {rec.get('estimated_clock_ns')} ns (target {rec.get('target_clock_ns')}, uncertainty "
            f"{rec.get('uncertainty_ns')}), latency {rec.get('latency_min')}..{rec.get('latency_max')} cycles, "
            f"interval {rec.get('interval_min')}..{rec.get('interval_max')}")
