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
    """The timing record of a csynth record: the estimate against the target, labelled an estimate."""
    target = rec.get("target_clock_ns")
    return {"estimated": True, "estimate_of": "Vitis HLS C-synthesis (scheduling estimate, not routed)",
            "wns_ns": rec.get("slack_ns"), "tns_ns": None, "whs_ns": None, "critical_path": None,
            "clocks": [{"name": "ap_clk", "period_ns": target if target is not None else clock_ns,
                        "wns_ns": rec.get("slack_ns")}],
            "hls": rec}


def utilization_from(rec: dict) -> dict:
    r = rec.get("resources") or {}
    bram18 = r.get("bram_18k")
    return {"lut": r.get("lut") or 0, "ff": r.get("ff") or 0, "dsp": r.get("dsp") or 0,
            "bram36_equiv": (bram18 or 0) / 2, "uram": r.get("uram") or 0,
            "estimated": True, "source": "C-synthesis estimate (csynth)"}


def collect(design, job, reports: Path, raw: dict[str, Path]) -> Collected:
    from kabe.parsers import vitis_cosim

    files = _report_files(reports, job.top)
    raw = {**raw, **files}
    try:
        rec = parse_csynth(files, job.top)
    except ReportError as e:
        return Collected(unreadable_timing(f"C-synthesis report unusable: {e}", estimated=True), None, raw)
    timing = timing_from(rec, job.clock_ns)
    if rec.get("target_clock_ns") is not None and abs(rec["target_clock_ns"] - job.clock_ns) > 1e-3:
        timing = unreadable_timing(f"{files.get('csynth.xml') or files.get('csynth.rpt')}: target clock "
                                   f"{rec['target_clock_ns']} ns, but the design's XDC asks for {job.clock_ns} ns; "
                                   f"the report is not of this build", estimated=True)
    cosim_name = f"{job.top}_cosim.rpt"
    if job.cosim:
        if cosim_name not in files:
            timing = unreadable_timing(f"co-simulation was asked for (hls.cosim) and wrote no {cosim_name}",
                                       estimated=True)
        else:
            try:
                cos = vitis_cosim.parse(files[cosim_name].read_text(errors="replace"), str(files[cosim_name]))
                timing.setdefault("hls", {})["cosim"] = cos
                if cos.get("passed") is not True:
                    timing = {**timing, "error": f"{files[cosim_name]}: C/RTL co-simulation did not pass "
                                                 f"(simulated: {cos.get('simulated')})"}
            except ReportError as e:
                timing = unreadable_timing(f"co-simulation report unusable: {e}", estimated=True)
    artifacts = {}
    if job.output.is_file():
        artifacts["xo" if job.export == "xo" else "ip"] = job.output
    elif "error" not in timing:
        timing = unreadable_timing(f"the export ({job.export}) wrote no {job.output}", estimated=True)
    return Collected(timing, utilization_from(rec), raw, artifacts)


def said(c: Collected) -> str:
    t = c.timing
    if t.get("error"):
        return f"[red]{t['error']}[/]"
    rec = t.get("hls") or {}
    return (f"estimated clock {rec.get('estimated_clock_ns')} ns (target {rec.get('target_clock_ns')}, uncertainty "
            f"{rec.get('uncertainty_ns')}), latency {rec.get('latency_min')}..{rec.get('latency_max')} cycles, "
            f"interval {rec.get('interval_min')}..{rec.get('interval_max')}")
