"""A Vitis HLS / Vivado HLS log (solution1.log, vitis_hls.log): the II and timing violations the
tool only warns about.

What is read (message ids as AMD documents them; Vivado HLS printed the same under SCHED 204-*):
- HLS 200-871 / SCHED 204-21 "Estimated clock period (E ns) exceeds the target (target clock period:
  T ns, clock uncertainty: U ns, effective delay budget: B ns)": a timing violation.
- HLS 200-880 / 200-885 / SCHED 204-68 "The II Violation in module 'M' (loop 'L'): ...": the
  scheduler could not reach the II it tried.
- HLS 200-1470 / SCHED 204-61 "Pipelining result : Target II = T, Final II = F, Depth = D, loop 'L'"
  (Vivado HLS: the loop is named on the "Pipelining loop 'L'" line before): T is "NA" when the
  pragma gave no II.
- HLS 200-789 "Estimated Fmax: F MHz"; HLS 200-790 "Loop Constraint Status: All loop constraints
  were (NOT) satisfied"; every ERROR line.

A log often holds several csynth runs (the solution's log is appended to): every
"Running: csynth_design" starts one. Counts are over the whole file; `last_run` holds what the
last run found, and the gate judges only that run (older runs were replaced by it).

Record:
  tool, version
  counts            {"HLS 200-880": n, ...} every message id seen, over the whole log
  runs              the number of csynth runs
  last_run          {"start_line", "finished", "timing_violations": [{"line", "estimated_ns",
                     "target_ns", "uncertainty_ns", "budget_ns"}], "ii_violations": [{"line", "id",
                     "module", "loop"}], "pipelining": [{"line", "loop", "target_ii", "final_ii",
                     "depth"}], "ii_worse_than_target": [... the pipelining rows with a numeric
                     target below the final II], "ii_over_default": [rows with Target II = NA (the
                     pragma gave none: the tool's default is 1) and a final II over 1],
                     "errors": [ERROR lines], "estimated_fmax_mhz", "loop_constraints_met" (True,
                     False, None when not printed), "loop_constraint_status"}
  ii_worse_than_target, pipelining, timing_violations   the same over the whole log

Refused (ReportError): no HLS message at all (not an HLS log); a last csynth run that never
finishes (no "Finished Command csynth_design", no Estimated Fmax, no report update: a cut log or a
tool that died), unless it stopped on an ERROR (which the gate then fails).
"""

from __future__ import annotations

import re

from kabe.parsers import ReportError
from kabe.parsers.vitis_common import UNDEF, text_of

_MSG = re.compile(r"^(?:INFO|WARNING|CRITICAL WARNING|ERROR): \[((?:HLS|SCHED|XFORM|BIND|RTGEN|SYN|COSIM|SIM|"
                  r"IMPL|ANALYSIS|RTMG|HLS_OPT|VHDL|VLOG)[ -]\d+-\d+)\]", re.M)
_VERSION = re.compile(r"^(?:\*+ )?(Vitis HLS|Vivado\(TM\) HLS|Vivado HLS)\b.*?\bv(\d{4}\.\d(?:\.\d)?)", re.M)
_RUN = re.compile(r"Running: csynth_design\b")
# a csynth run ends with its "Finished Command" line, or where the next Tcl command starts
_RUN_END = re.compile(r"Finished Command csynth_design|\[HLS 200-1510\] Running: ")
_FINISHED = re.compile(r"Finished Command csynth_design|\[HLS 200-789\]|Finished (?:Updating report files|"
                       r"generating all RTL models|Generating all RTL models)|\[HLS 200-112\] Total")
_TIMING = re.compile(r"\[(?:HLS 200-871|SCHED 204-21)\] Estimated clock period \(([\d.]+) ?ns\) exceeds the target "
                     r"\(target clock period: ([\d.]+) ?ns, clock uncertainty: ([\d.]+) ?ns, effective delay budget: "
                     r"([\d.]+) ?ns\)")
_TIMING_ID = re.compile(r"\[HLS 200-871\]|\[SCHED 204-21\] Estimated clock period")
_II_ID = re.compile(r"\[(HLS 200-880|HLS 200-885|SCHED 204-68)\]")
_II_VIOL = re.compile(r"\[((?:HLS 200-8\d\d)|(?:SCHED 204-68))\] The II Violation in module '([^']*)'"
                      r"(?: \(loop '([^']*)'\))?")
# "Target II = 1, Final II = 2, Depth = 3" (also written "Target II: 1, Final II: 2, Depth: 3")
_PIPE = re.compile(r"Pipelining result ?: Target II ?[=:] ?([^,]+), Final II ?[=:] ?([^,]+), Depth ?[=:] ?([^,.\s]+)"
                   r"(?:, loop '([^']*)')?")
_PIPE_LOOP = re.compile(r"Pipelining loop '([^']*)'")
_LOOP_STATUS = re.compile(r"\[HLS 200-790\] \*+ Loop Constraint Status: (.*)$")
_FMAX = re.compile(r"\[HLS 200-789\] \*+ Estimated Fmax: ([\d.]+) ?MHz")


def _num(v: str):
    v = v.strip()
    if v.isdigit():
        return int(v)
    return "NA" if v.upper() in ("NA", "N/A") else (UNDEF if v in ("?", "undef") else v)


def parse(text: str, source: str) -> dict:
    text = text_of(text, source)
    counts: dict[str, int] = {}
    for m in _MSG.finditer(text):
        counts[m.group(1)] = counts.get(m.group(1), 0) + 1
    if not any(k.startswith(("HLS", "SCHED")) for k in counts):
        raise ReportError(f"{source}: no HLS message ([HLS 200-...] or [SCHED 204-...]); not a Vitis/Vivado HLS log")
    vm = _VERSION.search(text)
    tool = None
    if vm:
        tool = "Vitis HLS" if vm.group(1) == "Vitis HLS" else "Vivado HLS"
    lines = text.split("\n")
    starts = [i for i, ln in enumerate(lines) if _RUN.search(ln)]
    all_rows = _scan(lines, 0, len(lines))
    end = len(lines)
    if starts:
        end = next((i + 1 for i in range(starts[-1] + 1, len(lines)) if _RUN_END.search(lines[i])), len(lines))
        last = _scan(lines, starts[-1], end)
        start = starts[-1]
    else:  # Vivado HLS logs before "Running:" lines: the whole log is one run
        last, start = all_rows, 0
    if "Finished Command csynth_design" in text:  # versions that print it: only it ends a run
        seg = lines[start:end] if starts else lines
        last["finished"] = any("Finished Command csynth_design" in ln for ln in seg)
    if not last["finished"] and not last["errors"]:
        raise ReportError(f"{source}: the csynth run at line {start + 1} never finishes (no 'Finished Command "
                          f"csynth_design', no Estimated Fmax, no report update): the log is cut or the tool died; "
                          f"rerun csynth_design")
    last["start_line"] = start + 1
    return {"tool": tool, "version": vm.group(2) if vm else None, "counts": counts, "runs": len(starts) or 1,
            "last_run": last, "pipelining": all_rows["pipelining"], "timing_violations": all_rows["timing_violations"],
            "ii_worse_than_target": all_rows["ii_worse_than_target"]}


def _scan(lines: list[str], a: int, b: int) -> dict:
    out = {"finished": False, "timing_violations": [], "ii_violations": [], "pipelining": [],
           "ii_worse_than_target": [], "ii_over_default": [], "errors": [], "estimated_fmax_mhz": None,
           "loop_constraints_met": None, "loop_constraint_status": None}
    pending_loop = None
    for i in range(a, b):
        ln = lines[i]
        if ln.startswith("ERROR"):
            out["errors"].append(ln[:300])
        if "[" not in ln and "Pipelining" not in ln:
            continue
        if _FINISHED.search(ln):
            out["finished"] = True
        # The message id decides; the numbers are read when the wording is the one known, so a version
        # that words it otherwise still counts the violation (with None where a number could not be read)
        if _TIMING_ID.search(ln):
            m = _TIMING.search(ln)
            e, t, u, bud = (float(x) for x in m.groups()) if m else (None,) * 4
            out["timing_violations"].append({"line": i + 1, "estimated_ns": e, "target_ns": t, "uncertainty_ns": u,
                                             "budget_ns": bud, "text": ln.strip()[:300]})
            continue
        idm = _II_ID.search(ln)
        if idm:
            m = _II_VIOL.search(ln)
            out["ii_violations"].append({"line": i + 1, "id": idm.group(1), "module": m.group(2) if m else None,
                                         "loop": m.group(3) if m else None})
            continue
        m = _PIPE_LOOP.search(ln)
        if m:
            pending_loop = m.group(1)
            continue
        m = _PIPE.search(ln)
        if not m and "Pipelining result" in ln:  # a result kabe cannot read is not a met II
            out["ii_violations"].append({"line": i + 1, "id": "unreadable pipelining result", "module": None,
                                         "loop": pending_loop})
            continue
        if m:
            row = {"line": i + 1, "loop": m.group(4) or pending_loop, "target_ii": _num(m.group(1)),
                   "final_ii": _num(m.group(2)), "depth": _num(m.group(3))}
            out["pipelining"].append(row)
            if isinstance(row["target_ii"], int) and isinstance(row["final_ii"], int) \
                    and row["final_ii"] > row["target_ii"]:
                out["ii_worse_than_target"].append(row)
            elif row["target_ii"] == "NA" and isinstance(row["final_ii"], int) and row["final_ii"] > 1:
                # no II in the pragma: the tool aims at II=1 (its default), and its csynth.rpt flags the
                # loop's Issue Type as II; the gate holds the loop to the same default
                out["ii_over_default"].append(row)
            pending_loop = None
            continue
        m = _FMAX.search(ln)
        if m:
            out["estimated_fmax_mhz"] = float(m.group(1))
        m = _LOOP_STATUS.search(ln)
        if m:  # "All loop constraints were satisfied." / "... were NOT satisfied."; anything else is not a met
            out["loop_constraints_met"] = bool(re.fullmatch(r"All loop constraints were satisfied\.?", m.group(1).strip()))
            out["loop_constraint_status"] = m.group(1).strip()[:200]
    return out


def parse_file(path) -> dict:
    from kabe.parsers.vitis_common import read_text

    text, source = read_text(path)
    return parse(text, source)
