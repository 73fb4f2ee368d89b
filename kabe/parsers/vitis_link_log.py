"""A v++ --link log (_x/logs/link/v++.log) or the link's Vivado run log (_x/link/vivado/vpl/runme.log):
did the link close timing at the kernel clock asked for, or did it lower the clock?

When the kernel clock does not close, v++ scales it down and still writes an xclbin; the log says
so with VPL 60-732 and an "automatically changed to <f> MHz" line. An unscalable (system) clock
that does not close stops the link with VPL 101-2. Both are read here; the message text around
the frequencies varies by version, so every VPL 60-732 message counts as a scaled clock even when
its frequencies cannot be read (then `to_mhz` is None and the gate fails: it cannot record a
clock it could not read).

Record:
  log               "v++" | "vpl" (which of the two logs)
  version           "2020.2" (v++'s or Vivado's banner)
  platform          the .xpfm named by "Target platform:" (v++ log)
  target            hw | hw_emu | sw_emu ("Linking for hardware target" / --target)
  errors, critical_warnings, warnings   counts of lines starting ERROR: / CRITICAL WARNING: / WARNING:
  error_lines       the first ERROR lines (up to 20)
  scaled_clocks     [{"line", "clock", "from_mhz", "to_mhz", "text"}] every VPL 60-732 message and
                    every "automatically changed to" line
  scaled            True when scaled_clocks is not empty
  unscalable_clock_failures  [{"line", "text"}] VPL 101-2 messages
  vpl_status        the "Run vpl: FINISHED. Run Status: ..." text, or None
  completed         the log reached its end ("Total elapsed time" of v++; "Exiting Vivado" of vpl)
  xclbin_bytes_written  "Successfully wrote (N bytes)" of xclbinutil, or None
  total_elapsed     "0h 22m 23s" (v++ 60-791), or None

Refused: neither a v++ nor a vpl log; a log that stops before its end line and without an ERROR
(a cut log, or a link still running): it cannot say whether the clock was scaled later.
"""

from __future__ import annotations

import re

from kabe.parsers import ReportError
from kabe.parsers.vitis_common import text_of

_VPP = re.compile(r"^(?:INFO|WARNING|ERROR|CRITICAL WARNING): \[v\+\+ \d+-\d+\]", re.M)
_VPL_BANNER = re.compile(r"^(?:\*+ vpl v(\d{4}\.\d)|.*Run vpl: )", re.M)
_VIVADO_BANNER = re.compile(r"^\*+ Vivado v(\d{4}\.\d)", re.M)
_VPP_BANNER = re.compile(r"^\*+ (?:v\+\+|vpl) v(\d{4}\.\d)", re.M)
_PLATFORM = re.compile(r"\[v\+\+ 60-895\]\s+Target platform: (\S+)")
_TARGET = re.compile(r"Linking for (hardware|hardware emulation|software emulation) target")
_TARGET_OPT = re.compile(r"(?:--target|-t) (hw_emu|sw_emu|hw)\b")
_SCALE_ID = re.compile(r"\[VPL 60-732\]")
_CHANGED = re.compile(r"automatically changed to ([\d.]+) ?MHz", re.I)
_FROM = re.compile(r"(?:from|of|frequency:?|target(?:ed)?(?: frequency)?:?) ([\d.]+) ?MHz", re.I)
_CLOCK = re.compile(r"clock (?:'([^']+)'|\"([^\"]+)\"|([A-Za-z_][\w/\[\]]*))")
_CLOCK_QUOTED = re.compile(r"clock\w* (?:'([^']+)'|\"([^\"]+)\")")
_NOT_NAMES = {"frequency", "frequencies", "of", "has", "is", "was", "scaling", "period", "domain"}
_UNSCALABLE = re.compile(r"\[VPL 101-2\]")
_VPL_STATUS = re.compile(r"Run vpl: FINISHED\. Run Status: (.*?)\s*$", re.M)
_WROTE = re.compile(r"Successfully wrote \((\d+) bytes\)")
_ELAPSED = re.compile(r"\[v\+\+ 60-791\] Total elapsed time: (\d+h \d+m \d+s)\s*$", re.M)
_EXIT_VIVADO = re.compile(r"^INFO: \[Common 17-206\] Exiting Vivado at .*\d{4}\.\.\.[ \t]*$", re.M)


def parse(text: str, source: str) -> dict:
    text = text_of(text, source)
    is_vpp = bool(_VPP.search(text))
    if not is_vpp and not (_VPL_BANNER.search(text) or "[VPL " in text):
        raise ReportError(f"{source}: no [v++ ...] message and no vpl run; not a v++ link log or a vpl runme.log")
    lines = text.split("\n")
    errors = [ln for ln in lines if ln.startswith("ERROR")]
    rec = {"log": "v++" if is_vpp else "vpl", "version": None, "platform": None, "target": None,
           "errors": len(errors), "critical_warnings": sum(ln.startswith("CRITICAL WARNING") for ln in lines),
           "warnings": sum(ln.startswith("WARNING") for ln in lines), "error_lines": [e[:300] for e in errors[:20]],
           "scaled_clocks": [], "scaled": False, "unscalable_clock_failures": [], "vpl_status": None,
           "completed": False, "xclbin_bytes_written": None, "total_elapsed": None}
    m = _VPP_BANNER.search(text) or _VIVADO_BANNER.search(text)
    rec["version"] = m.group(1) if m else None
    m = _PLATFORM.search(text)
    rec["platform"] = m.group(1) if m else None
    m = _TARGET.search(text)
    if m:
        rec["target"] = {"hardware": "hw", "hardware emulation": "hw_emu", "software emulation": "sw_emu"}[m.group(1)]
    else:
        m = _TARGET_OPT.search(text)
        rec["target"] = m.group(1) if m else None
    for i, ln in enumerate(lines):
        if _SCALE_ID.search(ln) or _CHANGED.search(ln):
            # the message and the indented lines that continue it
            block = [ln] + [x for x in lines[i + 1:i + 4] if x.startswith((" ", "\t"))]
            msg = " ".join(x.strip() for x in block)
            if not _SCALE_ID.search(ln) and rec["scaled_clocks"] and rec["scaled_clocks"][-1]["line"] >= i - 3:
                prev = rec["scaled_clocks"][-1]  # the "changed to" line that continues a VPL 60-732 message
                prev["text"] += " " + msg
                _fill(prev, msg)
                continue
            entry = {"line": i + 1, "clock": None, "from_mhz": None, "to_mhz": None, "text": msg[:400]}
            _fill(entry, msg)
            rec["scaled_clocks"].append(entry)
        elif _UNSCALABLE.search(ln):
            rec["unscalable_clock_failures"].append({"line": i + 1, "text": ln.strip()[:400]})
    rec["scaled"] = bool(rec["scaled_clocks"])
    m = _VPL_STATUS.search(text)
    rec["vpl_status"] = m.group(1) if m else None
    m = _WROTE.search(text)
    rec["xclbin_bytes_written"] = int(m.group(1)) if m else None
    m = _ELAPSED.search(text)
    rec["total_elapsed"] = m.group(1) if m else None
    # vpl: its child runs (synth, impl) exit Vivado too; the run itself ends the file with that line
    rec["completed"] = bool(m) if is_vpp else bool(_EXIT_VIVADO.search(text.rstrip().split("\n")[-1]))
    if not rec["completed"] and not errors:
        end = "[v++ 60-791] Total elapsed time" if is_vpp else "Exiting Vivado"
        raise ReportError(f"{source}: the {rec['log']} log stops before its end line ('{end}') without an ERROR: "
                          f"cut, or the link is still running; give kabe the whole log")
    return rec


def _fill(entry: dict, msg: str) -> None:
    m = _CHANGED.search(msg)
    if m and entry["to_mhz"] is None:
        entry["to_mhz"] = float(m.group(1))
    for f in _FROM.finditer(msg):
        if entry["from_mhz"] is None and (m is None or f.start() != m.start()):
            val = float(f.group(1))
            if entry["to_mhz"] is None or val != entry["to_mhz"] or f.start() < (m.start() if m else 0):
                entry["from_mhz"] = val
                break
    if entry["clock"] is None:  # a quoted name first: "kernel clock frequency" names no clock
        q = _CLOCK_QUOTED.search(msg)
        bare = [c.group(3) for c in _CLOCK.finditer(msg) if c.group(3) and c.group(3).lower() not in _NOT_NAMES]
        entry["clock"] = (q.group(1) or q.group(2)) if q else (bare[0] if bare else None)
