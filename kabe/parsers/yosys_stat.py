"""Yosys `stat` output (text or `stat -json`, Yosys 0.70) -> metrics.json's `utilization` record.

Counting follows Vivado's utilization report so the two flows compare:

* lut = lut_logic + lut_memory ("Slice LUTs").
* lut_logic: LUT1..LUT6 (+ LUT6_2, one physical LUT) + INV (Vivado implements an INV as a LUT1).
* lut_memory ("LUT as Memory"): the SLICEM LUTs that distributed RAMs and shift registers occupy.
  Each primitive holds 64 bits per LUT6 (32 x 2 or 64 x 1), so: RAM32M / RAM64M = 4 LUTs (one
  whole SLICEM: ports A-D); RAM32X1D / RAM64X1D / RAM16X1D = 2 (a write+read LUT pair);
  RAM128X1D = 4; RAM16X1S / RAM32X1S / RAM64X1S = 1; RAM128X1S = 2; RAM256X1S = 4;
  SRL16E / SRLC16E / SRLC32E = 1 each (also counted in `srl`). UltraScale's 8-LUT SLICEM RAMs
  (RAM32M16, RAM64M8, RAM32X16DR8, RAM64X8SW, RAM512X1S, RAM256X1D) = 8 each.
* ff: FDRE/FDSE/FDCE/FDPE (and their _1 negative-edge forms, and LDCE/LDPE latches, which
  Vivado lists under "Slice Registers" too).
* bram36_equiv = ramb36 + ramb18 / 2 (FIFO36E1 / FIFO18E1 count as RAMB36 / RAMB18).
* uncounted ({type: count}, present only when there are some): cells that none of the above counts
  and that are not a primitive known to take none of those resources (IO and clock buffers,
  clocking, IO logic, the PS, configuration). A `$`-cell Yosys left unmapped or a black box (a
  vendor IP the open flow cannot synthesise) uses LUTs, FFs or RAM that no number here holds, so
  an upper-bound budget on them cannot be checked (kabe.rules.gate.Budget) instead of passing on
  an undercount.

synth_xilinx -family xcu/xcup (a board profile's open_flow.synth_family) maps to UltraScale cells:
DSP48E2 counts as a DSP, RAMB36E2/RAMB18E2 (and FIFO36E2/FIFO18E2) as block RAM, CARRY8 in `carry8`
and URAM288 in `uram288` (neither has a 7-series counterpart to fold into), so no DSP or RAM of such
a build reads as zero against a budget.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from kabe.parsers import ReportError
from kabe.parsers import report_file

LUT_LOGIC = {"LUT1": 1, "LUT2": 1, "LUT3": 1, "LUT4": 1, "LUT5": 1, "LUT6": 1, "LUT6_2": 1, "INV": 1}
LUT_MEMORY = {"RAM32M": 4, "RAM64M": 4, "RAM16X1D": 2, "RAM32X1D": 2, "RAM64X1D": 2, "RAM128X1D": 4,
              "RAM16X1S": 1, "RAM32X1S": 1, "RAM64X1S": 1, "RAM128X1S": 2, "RAM256X1S": 4,
              "RAM16X1D_1": 2, "RAM32X1D_1": 2, "RAM64X1D_1": 2, "RAM16X1S_1": 1, "RAM32X1S_1": 1,
              "RAM64X1S_1": 1, "RAM128X1S_1": 2,
              "SRL16E": 1, "SRLC16E": 1, "SRLC32E": 1,
              # UltraScale(+) (synth_xilinx -family xcu/xcup): an 8-LUT SLICEM (ports A-H) per multi-port RAM
              "RAM32M16": 8, "RAM64M8": 8, "RAM32X16DR8": 8, "RAM64X8SW": 8, "RAM512X1S": 8, "RAM256X1D": 8}
SRL = {"SRL16E", "SRLC16E", "SRLC32E"}
FF = {"FDRE", "FDSE", "FDCE", "FDPE", "FDRE_1", "FDSE_1", "FDCE_1", "FDPE_1", "LDCE", "LDPE"}
RAMB36 = {"RAMB36E1", "FIFO36E1", "RAMB36E2", "FIFO36E2"}
RAMB18 = {"RAMB18E1", "FIFO18E1", "RAMB18E2", "FIFO18E2"}
DSP = {"DSP48E1", "DSP48E2"}
OTHER_COUNTED = {"CARRY4", "CARRY8", "MUXF7", "MUXF8", "MUXF9", "URAM288"}
COUNTED = set(LUT_LOGIC) | set(LUT_MEMORY) | FF | RAMB36 | RAMB18 | DSP | OTHER_COUNTED
# Xilinx primitives that hold none of the counted resources (7-series and UltraScale spellings): a
# cell of one of these is not "uncounted". Anything else unknown is, so a new primitive errs on the
# side of "cannot check the budget", never on a silent pass.
NO_FABRIC = re.compile(
    r"(GND|VCC|PULLUP|PULLDOWN|KEEPER|\$scopeinfo"
    r"|(I|O|IO)BUF\w*|OBUFT\w*|BUF(G|H|R|IO|MR|CE)\w*|BUFG_\w+"
    r"|(MMCM|PLL)E\d_(ADV|BASE)|(I|O)DDR\w*|(I|O)SERDESE\d|(I|O)DELAYE\d|IDELAYCTRL|(I|O)FIFO\w*|HPIO_\w+"
    r"|IN_FIFO|OUT_FIFO|PHASER_\w+|PHY_CONTROL|DCIRESET|\w*BITSLICE\w*|RIU_OR"  # memory PHYs' hard blocks
    r"|PS7|PS8|PS9|STARTUPE\d|BSCANE\d|DNA_PORT\w*|ICAPE\d|XADC|SYSMONE\d|CAPTUREE\d|FRAME_ECCE\d|USR_ACCESSE\d"
    r"|GT\w+|IBUFDS_GTE\d|PCIE\w*|EFUSE_USR)")

_SECTION = re.compile(r"^=== (.+) ===\s*$")
_CELLS = re.compile(r"^\s+([0-9]+)\s+cells\s*$")
_SUBMODS = re.compile(r"^\s+([0-9]+)\s+submodules\s*$")
_TYPE = re.compile(r"^\s+([0-9]+)\s{2,}(\S+)\s*$")


def utilization_from_counts(counts: dict[str, int]) -> dict:
    """Utilization record (without by_instance) from {cell type: count}."""
    c = {k.lstrip("\\"): int(v) for k, v in counts.items()}
    lut_logic = sum(n * c.get(t, 0) for t, n in LUT_LOGIC.items())
    lut_memory = sum(n * c.get(t, 0) for t, n in LUT_MEMORY.items())
    ramb36 = sum(c.get(t, 0) for t in RAMB36)
    ramb18 = sum(c.get(t, 0) for t in RAMB18)
    return {
        "lut": lut_logic + lut_memory,
        "lut_logic": lut_logic,
        "lut_memory": lut_memory,
        "ff": sum(c.get(t, 0) for t in FF),
        "carry4": c.get("CARRY4", 0),
        "muxf7": c.get("MUXF7", 0),
        "muxf8": c.get("MUXF8", 0),
        "dsp": sum(c.get(t, 0) for t in DSP),
        "ramb36": ramb36,
        "ramb18": ramb18,
        "bram36_equiv": ramb36 + ramb18 / 2,
        "srl": sum(c.get(t, 0) for t in SRL),
        **({"carry8": c["CARRY8"]} if c.get("CARRY8") else {}),  # UltraScale cells only where mapped
        **({"uram288": c["URAM288"]} if c.get("URAM288") else {}),
        **({"uncounted": unc} if (unc := uncounted(c)) else {}),
    }


def uncounted(counts: dict[str, int]) -> dict[str, int]:
    """{type: count} of the cells no utilization number counts and that are not known to need
    none of the counted resources (see the module's docstring)."""
    return {t: n for t, n in sorted(counts.items())
            if n and t not in COUNTED and not NO_FABRIC.fullmatch(t)}


def parse_stat_text(text: str, origin: str = "<stat>") -> dict[str, dict]:
    """{module: {"cells": n, "types": {type: count}, "submodules": {module: count}}} from `stat`
    text. The "design hierarchy" section, when present, is returned under that name. Raises
    ReportError on an empty or truncated report (a section whose type counts do not add up)."""
    if not text.strip():
        raise ReportError(f"{origin}: empty Yosys stat report")
    mods: dict[str, dict] = {}
    cur = None
    mode = None
    # blank lines change nothing below: skip them at C speed (a report of millions of them is not a stat)
    for line in filter(str.strip, text.splitlines()):
        m = _SECTION.match(line)
        if m:
            cur = {"cells": None, "types": {}, "submodules": {}, "submodule_count": None}
            mods[m.group(1).strip()] = cur
            mode = None
            continue
        if cur is None:
            continue
        m = _CELLS.match(line)
        if m:
            cur["cells"] = int(m.group(1))
            mode = "types"
            continue
        m = _SUBMODS.match(line)
        if m:
            cur["submodule_count"] = int(m.group(1))
            mode = "submodules"
            continue
        m = _TYPE.match(line)
        if m and mode:
            cur[mode][m.group(2).lstrip("\\")] = int(m.group(1))
            continue
        if line.strip() and mode and not line.lstrip().startswith(("+", "|")):
            mode = None
    if not mods:
        raise ReportError(f"{origin}: no `=== module ===` section: not a Yosys stat report")
    for name, m in mods.items():
        if m["cells"] is None:
            raise ReportError(f"{origin}: module {name!r} has no cell count: the report is truncated")
        # In the "design hierarchy" section submodule instances are listed among the types.
        got = sum(m["types"].values())
        want = m["cells"]
        if name == "design hierarchy":
            continue
        if got != want:
            raise ReportError(f"{origin}: module {name!r} lists {got} cells by type but says {want}: "
                              "the report is truncated or in an unknown format")
        if m["submodule_count"] is not None and sum(m["submodules"].values()) != m["submodule_count"]:
            raise ReportError(f"{origin}: module {name!r} submodule list is incomplete: truncated report")
    return mods


def parse_stat_json(obj: dict | str | Path, origin: str | None = None) -> dict[str, dict[str, int]]:
    """{module: {type: count}} (submodule types included) from `stat -json` output."""
    if not isinstance(obj, dict):
        rep = report_file.read(obj)
        obj, origin = _json(rep), origin or rep.source
    origin = origin or "<stat -json>"
    mods = obj.get("modules") if isinstance(obj, dict) else None
    if not mods:
        raise ReportError(f"{origin}: stat -json output has no modules")
    out = {}
    for name, m in mods.items():
        if not isinstance(m, dict):
            raise ReportError(f"{origin}: module {name!r} is not a stat record")
        types = m.get("num_cells_by_type")
        if types is None or "num_cells" not in m:
            raise ReportError(f"{origin}: module {name!r} has no cell counts")
        if sum(types.values()) != m["num_cells"] + int(m.get("num_submodules") or 0):
            raise ReportError(f"{origin}: module {name!r}: cells by type do not add up to num_cells")
        out[name.lstrip("\\")] = {k.lstrip("\\"): int(v) for k, v in types.items()}
    return out


def _flat_counts(mod: str, per_module: dict[str, dict[str, int]], memo: dict, depth: int = 0) -> dict[str, int]:
    if mod in memo:
        return memo[mod]
    if depth > 64:
        raise ReportError(f"module hierarchy too deep or recursive at {mod!r}")
    total: dict[str, int] = {}
    for t, n in per_module.get(mod, {}).items():
        if t in per_module:
            for tt, nn in _flat_counts(t, per_module, memo, depth + 1).items():
                total[tt] = total.get(tt, 0) + n * nn
        else:
            total[t] = total.get(t, 0) + n
    memo[mod] = total
    return total


def by_instance(per_module: dict[str, dict[str, int]], top: str, instances: dict[str, str]) -> dict:
    """Per direct child of `top`: {instance name: utilization}. `instances` maps each of the top's
    cell names to its type (module name as in the stat). Logic placed in the top itself, if any,
    appears as "(top)"."""
    memo: dict = {}
    out = {}
    for inst, mod in sorted(instances.items()):
        mod = mod.lstrip("\\")
        if mod in per_module:
            out[inst.lstrip("\\")] = _short(utilization_from_counts(_flat_counts(mod, per_module, memo)))
    local = {t: n for t, n in per_module.get(top, {}).items() if t not in per_module}
    u = utilization_from_counts(local)
    if any(u[k] for k in ("lut", "ff", "dsp", "bram36_equiv", "carry4")):
        out["(top)"] = _short(u)
    return out


def _short(u: dict) -> dict:
    return {k: u[k] for k in ("lut", "lut_logic", "lut_memory", "ff", "carry4", "dsp", "ramb36", "ramb18",
                              "bram36_equiv", "srl")}


def parse_utilization(stat_txt: str | Path, hier_json: str | Path | None = None,
                      top_instances_json: str | Path | None = None) -> dict:
    """The utilization record from the flow's files: the flattened `stat` text (totals), and
    optionally the hierarchical `stat -json` plus the top module's netlist (by_instance)."""
    rec = _flat_text(report_file.read(stat_txt))
    if hier_json is not None and top_instances_json is not None:
        per_module = parse_stat_json(hier_json)
        try:
            top_net = json.loads(Path(top_instances_json).read_text())
        except (OSError, json.JSONDecodeError) as e:
            raise ReportError(f"{top_instances_json}: cannot read the top module's netlist: {e}") from None
        tops = top_net.get("modules") or {}
        if len(tops) != 1:
            raise ReportError(f"{top_instances_json}: expected exactly the top module, found {list(tops)}")
        top, m = next(iter(tops.items()))
        instances = {n: c["type"] for n, c in (m.get("cells") or {}).items()}
        rec["by_instance"] = by_instance(per_module, top.lstrip("\\"), instances)
    return rec


def _json(rep: report_file.Report) -> dict:
    try:
        obj = json.loads(rep.text)
    except json.JSONDecodeError as e:
        raise ReportError(f"{rep.source}: truncated or malformed stat -json output ({e.msg} at line {e.lineno})") from None
    if not isinstance(obj, dict):
        raise ReportError(f"{rep.source}: stat -json output is not a JSON object")
    return obj


def _flat_text(rep: report_file.Report) -> dict:
    """One flattened module: its counts. Several modules (`stat` with the hierarchy kept, as in
    yosys_stat_hier.txt): the "design hierarchy" section's totals, the same numbers `stat -json`
    gives as "design" (counted before flattening, so a few cells above the flat stat where
    flattening let Yosys remove logic)."""
    mods = parse_stat_text(rep.text, rep.source)
    flat = [n for n in mods if n != "design hierarchy"]
    if len(flat) == 1:
        return utilization_from_counts(mods[flat[0]]["types"])
    totals = mods.get("design hierarchy")
    if totals is None or not totals["types"]:
        raise ReportError(f"{rep.source}: the stat of {len(flat)} modules ({', '.join(flat[:3])}...) has no "
                          "\"design hierarchy\" totals (Yosys prints them once the design has a top: hierarchy -top or stat -top): "
                          "the report is truncated or cannot tell which module is the top")
    leaves = {t: n for t, n in totals["types"].items() if t not in mods}
    # Some Yosys versions count submodule instances among the hierarchy's cells, some do not.
    if totals["cells"] not in (sum(leaves.values()), sum(totals["types"].values())):
        raise ReportError(f"{rep.source}: the design hierarchy lists {sum(leaves.values())} cells by type but "
                          f"says {totals['cells']}: the report is truncated or in an unknown format")
    return utilization_from_counts(leaves)


def parse_report(rep: report_file.Report) -> dict:
    """The utilization record of a `stat` report, text or `stat -json` (as the open flow archives
    yosys_stat.txt and yosys_stat.json). For JSON, Yosys's own "design" totals (the whole
    hierarchy, flattened) when it prints them, else the one module."""
    if rep.text.lstrip()[:1] != "{":
        return _flat_text(rep)
    obj = _json(rep)
    per_module = parse_stat_json(obj, rep.source)
    design = obj.get("design")
    if isinstance(design, dict) and isinstance(design.get("num_cells_by_type"), dict):
        # the totals list the instances of the design's own modules too: those are not cells
        return utilization_from_counts({k: v for k, v in design["num_cells_by_type"].items()
                                        if isinstance(v, int) and k.lstrip("\\") not in per_module})
    if len(per_module) != 1:
        raise ReportError(f"{rep.source}: stat -json has {len(per_module)} modules and no \"design\" "
                          f"totals; cannot tell which is the top")
    return utilization_from_counts(next(iter(per_module.values())))
