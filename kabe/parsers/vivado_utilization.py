"""Vivado `report_utilization` -> the metrics `utilization` record (docs/metrics.md), and
`report_utilization -hierarchical` -> per-instance numbers (`parse_hierarchical`).

Sections are found by TITLE, never by number (numbering shifts between versions and design
states), rows by their Site Type (a trailing "*" footnote mark is ignored), columns by their
header title, so the column sets with and without "Fixed" / "Prohibited" / "Available" /
"Util%" all read the same. The families label them differently:

    family          logic section    LUT row      register row      memory     DSP section / row
    7-series        Slice Logic      Slice LUTs   Slice Registers   Memory     DSP / DSPs
    UltraScale(+)   CLB Logic        CLB LUTs     CLB Registers     BLOCKRAM   ARITHMETIC / DSPs
    Versal          Netlist Logic    CLB LUTs     Registers         BLOCKRAM   ARITHMETIC / DSP Slices

Record keys: lut, lut_logic, lut_memory, lutram, srl, ff, latch, carry4 (count of the family's
carry primitive) with carry_type "CARRY4" | "CARRY8" | "LOOKAHEAD8", muxf7, muxf8, muxf9, dsp,
ramb36, ramb18, bram36_equiv (Block RAM Tile, may be fractional: 0.5 per RAMB18), uram,
primitives, plus design/device/design_state/tool_version from the header.

Strict: empty text; a header naming another command; a missing logic, memory, DSP or
Primitives section (a synthesized or placed report always prints all four -- a report cut short
does not); a table without its closing `+---+` border; a row with the wrong number of cells; a
required row (LUTs, Registers, Block RAM Tile, DSPs) absent; a non-numeric count; LUT as Logic
plus LUT as Memory not adding up to the LUTs. Each raises ReportError naming the source and the
section.
"""

from __future__ import annotations

import re

from kabe.parsers import ReportError
from kabe.parsers import report_file
from kabe.parsers.report_file import NEAR, blank, find_lines
from kabe.parsers._vivado_common import count_or_fraction, integer

_SEC_NUM = re.compile(r"\d+(?:\.\d+)*\.?")
_BORDER = re.compile(r"\+(?:-+\+)+")
_HEAD_CANDIDATE = re.compile(r"^\d", re.M)

# Section titles and row labels by family: 7-series, UltraScale(+), Versal.
LOGIC_TITLES = ("slice logic", "clb logic", "netlist logic")
MEMORY_TITLES = ("memory", "blockram", "block ram")
DSP_TITLES = ("dsp", "arithmetic", "dsp slices")
PRIMITIVE_TITLES = ("primitives",)
LUT_ROWS = ("Slice LUTs", "CLB LUTs", "LUTs")
FF_ROWS = ("Slice Registers", "CLB Registers", "Registers")
DSP_ROWS = ("DSPs", "DSP Slices", "DSP48E1", "DSP48E2", "DSP58")
CARRY_PRIMITIVES = ("CARRY8", "LOOKAHEAD8", "CARRY4")  # the one a family has: UltraScale+, Versal, 7-series


def _section_head(line: str):
    """(number, title) of "N. Title" / "N.M Title", else None."""
    num, _, title = line.strip().partition(" ")
    if line[:1].isspace() or not _SEC_NUM.fullmatch(num) or not title.strip():
        return None
    return num.rstrip("."), title.strip()


def _find_sections(lines: list[str]) -> list[tuple[str, str, int, int]]:
    """(number, title, body start, body end) for every `N. Title` line underlined by dashes."""
    heads = []
    for i in find_lines(lines, _HEAD_CANDIDATE):
        if i + 1 >= len(lines):
            continue
        under = lines[i + 1].rstrip()
        if len(under) < 3 or under.strip("-") or len(under) < len(lines[i].rstrip()) - 1:
            continue
        h = _section_head(lines[i])
        if h:
            heads.append((h[0], h[1], i))
    out = []
    for k, (num, title, i) in enumerate(heads):
        end = heads[k + 1][2] if k + 1 < len(heads) else len(lines)
        out.append((num, title, i + 2, end))
    return out


def _cells(line: str) -> list[str]:
    s = line.rstrip()
    if not (s.startswith("|") and s.endswith("|")):
        return None
    return [c for c in s[1:-1].split("|")]


def _boxed_table(lines: list[str], start: int, end: int, *, what: str, source: str):
    """The first `+---+` table in lines[start:end]: (header titles, [(indent, name, {title: cell})]).
    None when the section prints no table at all."""
    i = start
    limit = min(end, start + NEAR)  # a section's table follows its title
    while i < limit and not lines[i].startswith("+"):
        i += 1
    if i >= limit:
        return None
    borders = 0
    header = None
    rows = []
    j = i
    while j < end:
        ln = lines[j].rstrip()
        if ln.startswith("+"):
            if not _BORDER.fullmatch(ln):
                raise ReportError(f"{source}: {what} table, line {j + 1}: broken border {ln!r}")
            borders += 1
            if borders == 3 or (borders == 2 and header is None):
                break
        elif ln.startswith("|"):
            cells = _cells(ln)
            if cells is None:
                raise ReportError(f"{source}: {what} table, line {j + 1}: row not closed by '|' "
                                  f"(cut short)")
            if header is None:
                header = [c.strip() for c in cells]
            else:
                if len(cells) != len(header):
                    raise ReportError(f"{source}: {what} table, line {j + 1}: {len(cells)} cells, "
                                      f"header has {len(header)}")
                first = cells[0]
                name = first.strip()
                indent = len(first) - len(first.lstrip()) - 1
                rows.append((indent, name, {h: c.strip() for h, c in zip(header, cells)}))
        else:
            break
        j += 1
    if header is not None and borders == 2 and not rows and blank(lines[j:end]) and end < len(lines):
        # Vivado prints a table with no rows (a synthesized block-design wrapper whose logic is all
        # in black boxes has no Primitives) as its header alone, with no closing border; the next
        # section after it shows the report goes on, so the table is empty, not cut
        return header, rows
    if header is None or borders < 3:
        raise ReportError(f"{source}: {what} table starting at line {i + 1} is cut short (no "
                          f"closing +---+ border)")
    return header, rows


def _row(rows, *names, top_level=False):
    """The first row named like names[0], else names[1], ...; a total (top_level) is never taken
    from an indented sub-row such as "  DSP58" under "DSP Slices"."""
    by_name = {}
    for indent, name, cells in rows:
        if not top_level or indent == 0:
            by_name.setdefault(name.rstrip("*").strip().lower(), cells)
    return next((by_name[n.lower()] for n in names if n.lower() in by_name), None)


def _used(cells, *, what, source, fractional=False):
    if cells is None:
        return None
    if "Used" not in cells:
        raise ReportError(f"{source}: {what}: table has no 'Used' column")
    f = count_or_fraction if fractional else integer
    v = f(cells["Used"], what=what, source=source)
    if v is None:
        raise ReportError(f"{source}: {what}: 'Used' is blank")
    return v


def parse(text: str, source: str = "<report_utilization>") -> dict:
    return parse_report(report_file.from_text(text, source))


def parse_report(rep: report_file.Report) -> dict:
    report_file.expect_command(rep, "report_utilization")
    source, lines, header = rep.source, rep.lines, rep.header
    secs = _find_sections(lines)
    if any(t.lower() == "utilization by hierarchy" for _, t, _, _ in secs):
        raise ReportError(f"{source}: this is a hierarchical utilization report; use "
                          f"parse_hierarchical")
    by_title = {}
    for num, title, s, e in secs:
        by_title.setdefault(title.lower(), (num, title, s, e))

    def section(titles, label, required=True):
        for t in titles:
            if t in by_title:
                _, title, s, e = by_title[t]
                tab = _boxed_table(lines, s, e, what=f"section '{title}'", source=source)
                if tab is None and required:
                    raise ReportError(f"{source}: section '{title}' has no table (cut short)")
                return title, tab
        if required:
            found = ", ".join(repr(t) for _, t, _, _ in secs) or "none"
            raise ReportError(f"{source}: no {label} section ({' / '.join(titles)}); sections "
                              f"found: {found}. Not a complete flat report_utilization "
                              f"(empty, cut short, or another report)")
        return None, None

    ltitle, (lhead, lrows) = section(LOGIC_TITLES, "logic")
    mtitle, (mhead, mrows) = section(MEMORY_TITLES, "memory")
    dtitle, (dhead, drows) = section(DSP_TITLES, "DSP")
    ptitle, (phead, prows) = section(PRIMITIVE_TITLES, "Primitives")

    def need(rows, title, *names, fractional=False):
        cells = _row(rows, *names, top_level=True)
        if cells is None:
            raise ReportError(f"{source}: section '{title}' has no '{' / '.join(names)}' row")
        return _used(cells, what=f"{title} / {names[0]}", source=source, fractional=fractional)

    def opt(rows, title, *names, fractional=False):
        return _used(_row(rows, *names), what=f"{title} / {names[0]}", source=source,
                     fractional=fractional)

    rec: dict = {
        "source": "vivado report_utilization",
        "design": header.get("design"), "device": header.get("device"),
        "design_state": header.get("design_state"), "tool_version": header.get("tool_version"),
        "lut": need(lrows, ltitle, *LUT_ROWS),
        "lut_logic": opt(lrows, ltitle, "LUT as Logic"),
        "lut_memory": opt(lrows, ltitle, "LUT as Memory"),
        "lutram": opt(lrows, ltitle, "LUT as Distributed RAM"),
        "srl": opt(lrows, ltitle, "LUT as Shift Register"),
        "ff": need(lrows, ltitle, *FF_ROWS),
        "latch": opt(lrows, ltitle, "Register as Latch"),
        "muxf7": opt(lrows, ltitle, "F7 Muxes"),
        "muxf8": opt(lrows, ltitle, "F8 Muxes"),
        "muxf9": opt(lrows, ltitle, "F9 Muxes"),
        "bram36_equiv": need(mrows, mtitle, "Block RAM Tile", fractional=True),
        "ramb36": opt(mrows, mtitle, "RAMB36/FIFO", fractional=True),
        "ramb18": opt(mrows, mtitle, "RAMB18", fractional=True),
        "uram": opt(mrows, mtitle, "URAM"),
        "dsp": need(drows, dtitle, *DSP_ROWS),
    }
    prim = {name.strip(): cells for _i, name, cells in prows}
    # the carry chain primitive in use: from the logic table where the family lists it
    # (UltraScale+ CARRY8, Versal LOOKAHEAD8), else from Primitives, which lists only primitives
    # in use (no row: none used); carry_type says which primitive the count is of
    for kind in CARRY_PRIMITIVES:
        n = opt(lrows, ltitle, kind)
        if n is None and kind in prim:
            n = _used(prim[kind], what=f"Primitives / {kind}", source=source)
        if n is not None:
            rec["carry4"], rec["carry_type"] = n, kind
            break
    else:
        family_carry = "CARRY8" if ltitle.lower() == "clb logic" else (
            "LOOKAHEAD8" if ltitle.lower() == "netlist logic" else "CARRY4")
        rec["carry4"], rec["carry_type"] = 0, family_carry
    rec["primitives"] = {name: _used(cells, what=f"Primitives / {name}", source=source)
                         for name, cells in prim.items()}
    if rec["lut_memory"] == 0:
        # some versions leave the LUT-as-Memory sub-rows out of the first table when it is 0 (and print
        # them as 0 further down): none of a zero is distributed RAM or a shift register
        rec["lutram"] = 0 if rec["lutram"] is None else rec["lutram"]
        rec["srl"] = 0 if rec["srl"] is None else rec["srl"]
    if rec["lut_logic"] is not None and rec["lut_memory"] is not None \
            and rec["lut_logic"] + rec["lut_memory"] != rec["lut"]:
        raise ReportError(f"{source}: LUT as Logic {rec['lut_logic']} + LUT as Memory "
                          f"{rec['lut_memory']} != LUTs {rec['lut']}")
    return rec


def parse_file(path) -> dict:
    return parse_report(report_file.read(path))


# ---------------------------------------------------------------------------------------------
# report_utilization -hierarchical

_HIER_COLS = {
    "total luts": "lut", "logic luts": "lut_logic", "lutrams": "lutram", "srls": "srl",
    "ffs": "ff", "ramb36": "ramb36", "ramb18": "ramb18", "uram": "uram",
    "dsp blocks": "dsp", "dsp48 blocks": "dsp", "dsps": "dsp", "dsp58": "dsp", "dsp slices": "dsp",
    "f7 muxes": "muxf7", "f8 muxes": "muxf8", "carry4": "carry4", "carry8": "carry4",
    "lookahead8": "carry4",
}


def _hier_value(cell: str, *, what: str, source: str):
    t = cell.strip()
    if t.endswith("%)") and "(" in t:  # -hierarchical_percentage: "1234(2.32%)"
        t = t[:t.rfind("(")].strip()
    return count_or_fraction(t, what=what, source=source)


def parse_hierarchical(text: str, source: str = "<report_utilization -hierarchical>") -> dict:
    return parse_hierarchical_report(report_file.from_text(text, source))


def parse_hierarchical_report(rep: report_file.Report) -> dict:
    """-> {"top": name, "module": ..., "total": {...}, "by_instance": {"u_a": {...}, "u_a/u_b": ...}}.
    Instance paths are relative to the top ("/"-joined); "(name)" rows (an instance's own logic
    without its children) are left out. Each entry has lut, ff, dsp, bram36_equiv (RAMB36 +
    RAMB18/2) and whatever else the report's columns give (lut_logic, lutram, srl, ramb36,
    ramb18, uram, muxf7, ...)."""
    report_file.expect_command(rep, "report_utilization")
    source, lines, header = rep.source, rep.lines, rep.header
    secs = [s for s in _find_sections(lines) if s[1].lower() == "utilization by hierarchy"]
    if not secs:
        raise ReportError(f"{source}: no 'Utilization by Hierarchy' section; not a complete "
                          f"report_utilization -hierarchical (empty, cut short, or another report)")
    _, title, s, e = secs[0]
    tab = _boxed_table(lines, s, e, what=f"section '{title}'", source=source)
    if tab is None:
        raise ReportError(f"{source}: section '{title}' has no table (cut short)")
    head, rows = tab
    cols = {}
    for h in head:
        key = _HIER_COLS.get(h.lower())
        if key:
            cols[h] = key
    for need in ("lut", "ff", "dsp"):
        if need not in cols.values():
            raise ReportError(f"{source}: hierarchy table has no column for {need} "
                              f"(columns: {', '.join(head)})")
    if not ("ramb36" in cols.values() and "ramb18" in cols.values()):
        raise ReportError(f"{source}: hierarchy table lacks RAMB36/RAMB18 columns")
    if not rows:
        raise ReportError(f"{source}: hierarchy table has no rows")
    out: dict = {"top": None, "module": None, "total": None, "by_instance": {},
                 "design": header.get("design"), "device": header.get("device")}
    stack: list[tuple[int, str]] = []
    for indent, name, cells in rows:
        vals = {}
        for h, key in cols.items():
            v = _hier_value(cells[h], what=f"{name} {h}", source=source)
            if v is None:
                raise ReportError(f"{source}: hierarchy row {name!r}: '{h}' is blank")
            vals[key] = v
        b = vals["ramb36"] + vals["ramb18"] / 2
        vals["bram36_equiv"] = int(b) if float(b).is_integer() else b
        level = indent // 2
        if level == 0:
            if out["top"] is not None:
                raise ReportError(f"{source}: hierarchy table has two top rows "
                                  f"({out['top']!r}, {name!r})")
            out["top"], out["module"] = name, cells[head[1]].strip() if len(head) > 1 else None
            out["total"] = vals
            stack = [(0, name)]
            continue
        if out["top"] is None:
            raise ReportError(f"{source}: hierarchy row {name!r} comes before the top row")
        if name.startswith("(") and name.endswith(")"):
            continue
        while stack and stack[-1][0] >= level:
            stack.pop()
        if not stack or stack[-1][0] != level - 1:
            raise ReportError(f"{source}: hierarchy row {name!r} is indented {indent} spaces, "
                              f"deeper than its parent allows")
        path = "/".join(n for lv, n in stack[1:]) + ("/" if len(stack) > 1 else "") + name
        stack.append((level, name))
        out["by_instance"][path] = vals
    return out


def parse_hierarchical_file(path) -> dict:
    return parse_hierarchical_report(report_file.read(path))
