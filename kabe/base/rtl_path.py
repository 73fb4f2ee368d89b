"""A critical path in RTL terms, one line: the line every place that shows a critical path prints
(the build summary, timing_estimate.rpt, the report page, `kabe diff`, the gate's WNS failure).

    from port0_inst.beat_reg[0] (kabe_int8_engine.v:55) through 8 logic levels (RAM64M, LUT2, LUT5,
    LUT6, MUXF7, MUXF8, CARRY4 x2) to port0_inst.naive.lane[7].p_reg[15] (kabe_int8_engine.v:133)

Input: metrics.json's `timing.critical_path` record. The open flow's record carries `startpoint_rtl`
/ `endpoint_rtl` ({name, source, note?}: kabe.timing.rtl_names, from Yosys's net names and `src`
attributes). Without them (a record from before, or the Vivado flow) the names come from the
startpoint/endpoint strings: the open flow's "rtl.name [yosys cell]/Q (FDRE)", or Vivado's cell
path ("port0_inst/naive.lane[7].p_reg_reg[15]/C"), which already is the RTL register (Vivado names
a register `<reg>_reg`, `<reg>_reg[i]` for a vector's bit); no source line is known for those. The
raw netlist names stay in the report (timing_estimate.rpt's Startpoint/Endpoint lines and cell
table, Vivado's own report).
"""

from __future__ import annotations

import re
from typing import Any, Mapping

_VIVADO_REG = re.compile(r"_reg(_rep(?:__\d+)?)?(?=\[\d+\]$|$)")
_PIN_TYPE = re.compile(r"/[A-Za-z0-9_\[\]]+ \(\S+\)$")  # the open flow's "/Q (FDRE)" tail
_MAX_TYPES = 10  # runs of cell types listed before the rest is counted by type


def _from_rtl(rec: Any) -> tuple[str | None, str | None, str | None] | None:
    if not isinstance(rec, Mapping):
        return None
    name, src, note = rec.get("name"), rec.get("source"), rec.get("note")
    return (name if isinstance(name, str) else None, src if isinstance(src, str) else None,
            note if isinstance(note, str) else None)


def _from_string(point: Any) -> tuple[str | None, str | None, str | None]:
    """(name, None, note) from a startpoint/endpoint string of an open or a Vivado record."""
    if not isinstance(point, str) or not point:
        return None, None, None
    open_flow = _PIN_TYPE.search(point) is not None
    s = _PIN_TYPE.sub("", point)
    if " [" in s and s.endswith("]"):  # open flow: "rtl.name [yosys cell]"
        return s.split(" [", 1)[0], None, None
    if s.startswith("$") or "$auto$" in s or "$abc$" in s:  # open flow, a cell with no RTL name
        return None, None, None
    if open_flow or "/" not in s:  # a name alone (a port; a hand-written record): as it is
        return s, None, None
    s = s.rsplit("/", 1)[0]  # Vivado: cell/PIN, the cell a register `<reg>_reg[i]`
    m = _VIVADO_REG.search(s)
    note = "a replica Vivado made of this register" if m and m.group(1) else None
    return _VIVADO_REG.sub("", s).replace("/", "."), None, note


def point(cp: Mapping[str, Any], which: str) -> tuple[str | None, str | None, str | None]:
    """(RTL name, source file:line, note) of the path's `which` ("startpoint" | "endpoint")."""
    got = _from_rtl(cp.get(f"{which}_rtl"))
    return got if got is not None else _from_string(cp.get(which))


def _shown(name: str | None, src: str | None, raw: Any, kind: str | None) -> str:
    """`name (file:line)`; a start or end that is no flip-flop says its cell (SRL16E, RAMB36E1, DSP48E1)."""
    if name is None:
        raw_name = _PIN_TYPE.sub("", str(raw or "?")).replace("$flatten\\", "")
        name = f"an unnamed register ({raw_name})"
    what = [kind] if kind and not kind.startswith("FD") else []
    what += [src] if src else []
    return f"{name} ({', '.join(what)})" if what else name


def _ends(cp: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """The cell types of the start and (when the record lists it, as the open flow's does) the end."""
    cells = [c for c in cp.get("cells") or [] if isinstance(c, Mapping)]
    if not cells:
        return None, None

    def of(c: Mapping | None, point: str) -> str | None:  # only a cell the point names (not a clock buffer)
        if c is None or not c.get("type") or str(c.get("name") or "\0") not in str(cp.get(point) or ""):
            return None
        return None if str(c["type"]) == "<hidden>" else str(c["type"])

    return of(cells[0], "startpoint"), of(cells[-1], "endpoint") if len(cells) > 1 else None


def between(cp: Mapping[str, Any]) -> list[str]:
    """The cell types after the startpoint and before the endpoint, in path order."""
    cells = [c for c in cp.get("cells") or [] if isinstance(c, Mapping)]
    inner = cells[1:]
    end = str(cp.get("endpoint") or "")
    if inner and str(inner[-1].get("name") or "\0") in end:  # the open flow lists the endpoint cell last
        inner = inner[:-1]
    return [str(c.get("type") or "?") for c in inner]


def types_text(types: list[str]) -> str:
    """"RAM64M, LUT2, CARRY4 x2": runs of one type counted; a long list counted by type."""
    runs: list[list] = []
    for t in types:
        if runs and runs[-1][0] == t:
            runs[-1][1] += 1
        else:
            runs.append([t, 1])
    if len(runs) > _MAX_TYPES:
        counts: dict[str, int] = {}
        for t in types:
            counts[t] = counts.get(t, 0) + 1
        runs = [[t, n] for t, n in counts.items()]
    return ", ".join(t if n == 1 else f"{t} x{n}" for t, n in runs)


def line(cp: Any) -> str | None:
    """The path as one line in RTL terms; None for no path."""
    if not isinstance(cp, Mapping) or not cp:
        return None
    s_name, s_src, s_note = point(cp, "startpoint")
    e_name, e_src, e_note = point(cp, "endpoint")
    s_kind, e_kind = _ends(cp)
    start = _shown(s_name, s_src, cp.get("startpoint"), s_kind)
    end = _shown(e_name, e_src, cp.get("endpoint"), e_kind)
    levels = cp.get("logic_levels")
    types = between(cp)
    if isinstance(levels, int) and not isinstance(levels, bool):
        via = "directly" if levels == 0 else f"through {levels} logic level{'s' if levels != 1 else ''}"
    else:
        via = "through"
    if types:
        via += f" ({types_text(types)})"
    notes = "; ".join(f"{what}: {n}" for what, n in (("start", s_note), ("end", e_note)) if n)
    return f"from {start} {via} to {end}" + (f" [{notes}]" if notes else "")
