"""Pieces shared by the Vivado report parsers: numbers in Vivado's spellings ("inf", "NA", "<0.01")
and the space-aligned tables Vivado prints (titles, a row of dash groups, rows).

Space-aligned tables, as every Vivado version from 2014 to 2026 prints them:
  * each column has a group of dashes; titles sit above it, on one or more lines (the 2026 clock
    interaction table stacks "WNS" over "Clock Edges", "TNS Failing" over "Endpoints");
  * numbers are right-aligned to the end of their dash group; text (clock names, path groups,
    "rise - rise", "Partial False Path (unsafe)") is left-aligned at its start and may run past
    the dashes into the gap before the next column;
  * a cell may be blank (an Ignored clock pair, a clock with only pulse-width checks).
A row is cut into cells token by token: a token ending within one character of a numeric
column's right edge belongs to that column; any other token belongs to the column whose left
edge (less one character) it starts after. So a table whose rows are shifted by one character
still reads right, and a token that lands in a numeric column any other way is refused: a row
that does not line up is never guessed at.

Everything here is linear in the input: no regular expression has two quantifiers that can
match the same run of whitespace.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Callable

from kabe.parsers import ReportError
from kabe.parsers.report_file import NEAR

_DASHES = re.compile(r"-+")
_TOKEN = re.compile(r"\S+")
# [0-9], not \d: \d takes any script's digits, and a report with them is damaged, not read
_PLAIN_NUMBER = re.compile(r"[-+]?[0-9]+(?:\.[0-9]+)?")
_COUNT = re.compile(r"[0-9]+")
_FRACTION = re.compile(r"[0-9]+\.[0-9]+")


def is_count(text: str) -> bool:
    """ASCII digits only: str.isdigit() and \\d also take '²' and other scripts' digits, which int()
    refuses or a report never prints, so a field holding them reads as unreadable, never as a count."""
    return _COUNT.fullmatch(text) is not None


NOT_A_NUMBER = ("NA", "N/A", "INF", "-INF", "+INF", "-")

HIDDEN = "<hidden>"


def is_hidden_name(tok: str) -> bool:
    """A netlist name Vivado hides: where a name is inside protected (encrypted) IP, such as
    Versal's CIPS, NoC and HBM controllers or a FIFO generator's core, Vivado prints `<hidden>` for
    each level it may not show: `<hidden>` alone, or `.../pcie2_fifo_generator_tgt_brdg/<hidden>/
    <hidden>` (a real 2018 Artix-7 XDMA report prints both; Vivado 2026.1 on Versal also prints it
    in the netlist column of a path's required time, arrival time and slack lines). One token, at
    least one level `<hidden>`, no level empty or holding a bracket of a `<hidden>` cut short
    (`<hid`), so a name cut inside is not one."""
    parts = tok.split("/")
    return (HIDDEN in parts and not any(c.isspace() for c in tok)
            and all(q == HIDDEN or (q and "<" not in q and ">" not in q) for q in parts))


def number(tok: str | None, *, what: str, source: str):
    """A Vivado number: float for "1.234"/"-0.5"/"3.2ns", None for "inf"/"NA"/blank."""
    if tok is None:
        return None
    t = tok.strip()
    if t == "" or t.upper() in NOT_A_NUMBER:
        return None
    if t.endswith("ns") and _PLAIN_NUMBER.fullmatch(t[:-2]):
        t = t[:-2]
    if not _PLAIN_NUMBER.fullmatch(t):
        raise ReportError(f"{source}: {what}: '{t[:40]}' is not a number")
    v = float(t)
    return None if math.isnan(v) or math.isinf(v) else v


def integer(tok: str | None, *, what: str, source: str):
    """A Vivado count: int, None for "NA"/blank; ReportError for anything fractional or garbled."""
    if tok is None:
        return None
    t = tok.strip()
    if t == "" or t.upper() in NOT_A_NUMBER:
        return None
    if not is_count(t):
        raise ReportError(f"{source}: {what}: '{t[:40]}' is not a whole count")
    return int(t)


def count_or_fraction(tok: str | None, *, what: str, source: str):
    """Block RAM counts: an int when whole, a float for tiles such as 0.5 / 10.5."""
    if tok is None:
        return None
    t = tok.strip()
    if t == "" or t.upper() in NOT_A_NUMBER:
        return None
    if is_count(t):
        return int(t)
    if _FRACTION.fullmatch(t):
        v = float(t)
        return int(v) if v.is_integer() else v
    raise ReportError(f"{source}: {what}: '{t[:40]}' is not a count")


def is_dash_rule(line: str) -> bool:
    """A row of dash groups under a table's titles: only dashes and spaces, some dashes."""
    s = line.strip()
    return bool(s) and s.strip("- ") == "" and "-" in s


# ---------------------------------------------------------------------------------------------
# space-aligned tables


@dataclass(frozen=True)
class Column:
    title: str  # the title words stacked above the dash group, top to bottom, joined by a space
    start: int  # first dash
    end: int  # one past the last dash
    numeric: bool  # right-aligned numbers (else left-aligned text)


def table_columns(header_lines: list[str], dash_line: str,
                  numeric: Callable[[str], bool]) -> list[Column]:
    """Columns from the dash groups; each title word goes to the dash group it overlaps most
    (the nearest one when it sits in a gap)."""
    spans = [(m.start(), m.end()) for m in _DASHES.finditer(dash_line)]
    words: list[list[str]] = [[] for _ in spans]
    for line in header_lines:
        for m in _TOKEN.finditer(line):
            s, e = m.start(), m.end()
            best = max(range(len(spans)), key=lambda j: (min(e, spans[j][1]) - max(s, spans[j][0]),
                                                         -abs(s - spans[j][0])))
            words[best].append(m.group())
    titles = [" ".join(w) for w in words]
    return [Column(t, s, e, bool(numeric(t))) for t, (s, e) in zip(titles, spans)]


def split_row(row: str, cols: list[Column], *, where: str) -> list[str]:
    """The cells of one row of a table with columns `cols` ("" for a blank cell)."""
    cells: list[list[str]] = [[] for _ in cols]
    bounds = [c.start - 1 for c in cols]
    for m in _TOKEN.finditer(row):
        s, e, tok = m.start(), m.end(), m.group()
        j = next((k for k, c in enumerate(cols) if c.numeric and abs(e - c.end) <= 1), None)
        if j is None:
            j = 0
            for k in range(1, len(cols)):  # the last column whose left edge the token starts after
                if bounds[k] <= s:
                    j = k
                else:
                    break
            if cols[j].numeric:
                raise ReportError(f"{where}: row '{row.strip()[:120]}' does not line up with the "
                                  f"table's columns ('{tok[:40]}' sits inside column "
                                  f"'{cols[j].title}' without ending at its edge)")
        cells[j].append(tok)
    return [" ".join(c) for c in cells]


def aligned_table(body: list[str], *, numeric: Callable[[str], bool], what: str, source: str,
                  first_line: int, stop_at_blank: bool = True, name_columns: int = 1):
    """The first space-aligned table in `body` (lines of a section): (columns, rows, index after
    the table). Title lines are the non-blank lines right above the dash rule. Rows run to the
    first blank line; each row is a list of cells. ReportError when there is no dash rule, or when
    the dash rule has fewer groups than the table's `name_columns` (From Clock, To Clock, ...):
    every row would then be shorter than the names it must carry (a damaged header, e.g. a
    separator line pasted under the titles), and the first such row is named."""
    i = 0
    limit = min(len(body), NEAR)  # Vivado prints the titles and dashes right under a table's title
    while i < limit and not is_dash_rule(body[i]):
        i += 1
    if i >= limit or i == 0 or not body[i - 1].strip():
        raise ReportError(f"{source}: {what} (line {first_line + min(i, len(body) - 1)}): no table "
                          f"header followed by a row of dashes (report cut short or malformed)")
    h = i
    while h > 0 and body[h - 1].strip() and not is_dash_rule(body[h - 1]):
        h -= 1
    cols = table_columns(body[h:i], body[i], numeric)
    if len(cols) < name_columns:
        j = next((k for k in range(i + 1, len(body)) if body[k].strip()), i)
        raise ReportError(f"{source}: {what} line {first_line + j}: row '{body[j].strip()[:120]}' has "
                          f"{len(cols)} cell(s), fewer than the table's {name_columns} name columns (the "
                          f"dash rule on line {first_line + i} has {len(cols)} group(s)): the table's header "
                          f"is damaged")
    rows = []
    j = i + 1
    while j < len(body) and (body[j].strip() or not stop_at_blank):
        if body[j].strip():
            rows.append(split_row(body[j], cols, where=f"{source}: {what} line {first_line + j}"))
        j += 1
    return cols, rows, j
