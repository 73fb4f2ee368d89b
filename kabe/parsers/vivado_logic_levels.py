"""Vivado `report_design_analysis -logic_level_distribution` -> logic levels per endpoint clock.

The table counts the worst N paths of each endpoint clock by their number of logic levels:

    +-----------------+-------------+----+----+---+----+
    |  End Point Clock| Requirement |  1 |  2 | 3 |  6 |
    +-----------------+-------------+----+----+---+----+
    | clk_fpga_0      | 7.000ns     |  3 |  9 | 7 |  1 |
    +-----------------+-------------+----+----+---+----+

Level columns are single numbers or, in some versions, ranges ("11-15") and an open last bin
("16+"). The record's `max_logic_levels` is the deepest level column with a path in it (a range
counts as its upper end); after an open bin it is that bin's lower end and `max_exact` is False,
so a budget cannot pass on a number the report does not give (kabe.rules.gate fails it).

Record: {"clocks": [{"clock", "requirement", "distribution": {"3": 7, ...}, "max_logic_levels"}],
"max_logic_levels", "max_exact", "design", "device"}. Refused: no table, a table not closed by
its border, a count that is not a whole number.
"""

from __future__ import annotations

import re

from kabe.parsers import ReportError
from kabe.parsers import report_file
from kabe.parsers.report_file import find_lines
from kabe.parsers._vivado_common import integer, is_count



def _level(title: str) -> tuple[int, bool] | None:
    """(deepest level the column can hold, exact) of "6" / "11-15" / "16+", else None."""
    t = title.strip()
    if is_count(t):
        return int(t), True
    lo, dash, hi = t.partition("-")
    if dash and is_count(lo) and is_count(hi):
        return int(hi), True
    if t.endswith("+") and is_count(t[:-1]):
        return int(t[:-1]), False
    return None


def parse(text: str, source: str = "<report_design_analysis>") -> dict:
    return parse_report(report_file.from_text(text, source))


def parse_file(path) -> dict:
    return parse_report(report_file.read(path))


def parse_report(rep: report_file.Report) -> dict:
    report_file.expect_command(rep, "report_design_analysis")
    source, lines = rep.source, rep.lines
    head = next(iter(find_lines(lines, re.compile(r"^\|[^\n]*End Point Clock", re.M), literal="End Point Clock")), None)
    if head is None or head == 0 or not lines[head - 1].startswith("+"):
        raise ReportError(f"{source}: no Logic Level Distribution table ('| End Point Clock |'); "
                          f"not a report_design_analysis -logic_level_distribution report")
    titles = [c.strip() for c in lines[head].strip().strip("|").split("|")]
    levels = [_level(t) for t in titles[2:]]
    if titles[:2] != ["End Point Clock", "Requirement"] or None in levels:
        raise ReportError(f"{source}: line {head + 1}: columns {titles[:8]} are not 'End Point Clock | "
                          f"Requirement | <logic levels>...'")
    clocks, closed = [], False
    for j in range(head + 1, len(lines)):
        ln = lines[j].strip()
        if ln.startswith("+"):
            if j > head + 1:
                closed = True
                break
            continue
        if not (ln.startswith("|") and ln.endswith("|")):
            break
        cells = [c.strip() for c in ln.strip("|").split("|")]
        if len(cells) != len(titles):
            raise ReportError(f"{source}: line {j + 1}: {len(cells)} cells, the header has {len(titles)}")
        dist, deepest, exact = {}, None, True
        for title, lv, cell in zip(titles[2:], levels, cells[2:]):
            n = integer(cell, what=f"{cells[0]} level {title}", source=source) or 0
            dist[title] = n
            if n:
                deepest, exact = lv
        clocks.append({"clock": cells[0], "requirement": cells[1] or None, "distribution": dist,
                       "max_logic_levels": deepest, "max_exact": exact})
    if not closed:
        raise ReportError(f"{source}: the Logic Level Distribution table is not closed by its border "
                          f"(report cut short)")
    deepest = [c for c in clocks if c["max_logic_levels"] is not None]
    worst = max(deepest, key=lambda c: c["max_logic_levels"], default=None)
    return {"clocks": clocks, "max_logic_levels": worst["max_logic_levels"] if worst else None,
            "max_exact": all(c["max_exact"] for c in clocks),
            "design": rep.header.get("design"), "device": rep.header.get("device")}
