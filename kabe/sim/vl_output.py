"""Verilator's messages in a simulation's output (kabe's harness or a cocotb run): the line saying why the
design stopped its own run, and its runtime warnings (a $readmem file not found)."""

from __future__ import annotations

import re

# Verilator's runtime messages, on the harness's stdout: "[<time>] %Error: f.sv:9: Assertion failed in
# TOP.top: <the $error text>", "%Fatal: ...", "%Error: /abs/f.sv:9: Verilog $stop", "%Warning: table.hex:0:
# $readmem file not found" (a design's $display lines are its own business and stay unshown).
_VL_MESSAGE = re.compile(r"^(?:\[[^\]]*\]\s*)?(?P<msg>%(?P<kind>Error|Fatal|Warning)(?:-[A-Z0-9_]+)?:.*)$", re.M)
_VL_STOP = re.compile(r"^%Error: (?P<where>.+:\d+): Verilog \$stop$")
_MAX_WARNINGS = 5


def design_stop(output: str) -> str | None:
    """The line saying why the design ended its own simulation (its assertion's $error, a $fatal or
    $stop, a model that did not converge), from the harness's output after it exited 1 (Verilator's
    vl_fatal; the harness's own exits are 0, 2 and 3); None when there is no such line. The
    assertion's own message first, with where the simulation stopped (its full path) when it adds one."""
    errors = [m.group("msg").strip() for m in _VL_MESSAGE.finditer(output) if m.group("kind") != "Warning"]
    if not errors:
        return None
    first = errors[0]
    stop = next((_VL_STOP.match(e) for e in errors if _VL_STOP.match(e)), None)
    if stop and stop.group(0) != first and stop.group("where") not in first:
        first += f" (stopped at {stop.group('where')})"
    return first


def runtime_warnings(output: str) -> list[str]:
    """Verilator's runtime warnings in the harness's output (e.g. a $readmem file it did not find), the
    first few, then how many more."""
    found = list(dict.fromkeys(m.group("msg").strip() for m in _VL_MESSAGE.finditer(output)
                               if m.group("kind") == "Warning"))
    more = len(found) - _MAX_WARNINGS
    return found[:_MAX_WARNINGS] + ([f"(and {more} more warning(s))"] if more > 0 else [])
