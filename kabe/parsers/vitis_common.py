"""What every Vitis/Vivado HLS and v++ reader shares: opening a text file, its numbers, its tables.

Vitis reports and logs do not go through kabe.parsers.report_file: that door refuses any text with a
Vivado log line in it (a log joined to a report), and an HLS or v++ log is nothing but such lines.
The same bounds hold here (size, NUL bytes, encoding, CRLF/CR line endings made "\\n").

Numbers: HLS prints an unknown latency, interval or trip count as `?` (Vivado HLS), `undef`
(Vitis HLS), or `-` in a column that does not apply. An unknown value is the string "undef" in a
record, never 0 and never a number; "not printed" is None.
"""

from __future__ import annotations

import re
from pathlib import Path

from kabe.parsers import ReportError
from kabe.parsers.report_file import MAX_BYTES, MAX_LINE_CHARS, MAX_LINES, read_bytes  # noqa: F401 - read_bytes: the Vitis readers' too

UNDEF = "undef"
_UNDEF_WORDS = {"?", "undef", "undefined"}
_NOT_APPLICABLE = {"-", "", "NA", "N/A", "n/a"}
_INT = re.compile(r"[+-]?\d+")
_FLOAT = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def decode(data: bytes, source: str) -> str:
    """Text with "\\n" line endings; NUL bytes (a binary file) are refused."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            data = data.decode("utf-16").encode("utf-8")
        except UnicodeDecodeError:
            raise ReportError(f"{source}: starts like UTF-16 but does not decode; not a text report") from None
    if b"\x00" in data:
        raise ReportError(f"{source}: contains NUL bytes; not a text report (a binary file or a damaged copy)")
    return text_of(data.decode("utf-8", errors="replace").removeprefix("\ufeff"), source)


def text_of(text: str, source: str) -> str:
    """`text` checked against kabe's bounds, its line endings made "\\n"."""
    if not isinstance(text, str):
        raise ReportError(f"{source}: expected report text, got {type(text).__name__}")
    if "\x00" in text:
        raise ReportError(f"{source}: contains NUL characters; not a text report")
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not text.strip():
        raise ReportError(f"{source}: report is empty")
    if text.count("\n") > MAX_LINES:
        raise ReportError(f"{source}: over kabe's bound of {MAX_LINES:,} lines; refusing to parse it")
    longest = max(map(len, text.split("\n")))
    if longest > MAX_LINE_CHARS:
        raise ReportError(f"{source}: a line of {longest:,} characters, over kabe's bound of {MAX_LINE_CHARS:,}; "
                          f"not a report kabe can read")
    return text


def read_text(path) -> tuple[str, str]:
    data, source = read_bytes(path)
    return decode(data, source), source


def cell_int(cell: str | None, source: str = "", what: str = "") -> int | str | None:
    """A count cell: int, "undef" for ?/undef, None for -/NA/blank. Anything else is refused, so a
    damaged cell is never read as 0."""
    if cell is None:
        return None
    c = cell.strip()
    c = re.sub(r"\s*\((?:~?\d+(?:\.\d+)?%?|~0%)\)$", "", c)  # "973 (~0%)": the count, not its share
    if c in _NOT_APPLICABLE:
        return None
    if c.lower() in _UNDEF_WORDS:
        return UNDEF
    if _INT.fullmatch(c):
        return int(c)
    raise ReportError(f"{source}: {what or 'a count'} reads '{c[:40]}', not a number, '?' or 'undef'")


def cell_float(cell: str | None, source: str = "", what: str = "", unit: str = "ns") -> float | str | None:
    """A time cell ("10.00 ns", "7.180", "-0.87"): float, "undef", or None for -/NA."""
    if cell is None:
        return None
    c = cell.strip()
    if unit and c.endswith(unit):
        c = c[: -len(unit)].strip()
    if c in _NOT_APPLICABLE:
        return None
    if c.lower() in _UNDEF_WORDS:
        return UNDEF
    if _FLOAT.fullmatch(c):
        return float(c)
    raise ReportError(f"{source}: {what or 'a value'} reads '{c[:40]}', not a number")


def split_row(line: str) -> list[str]:
    """The cells of a `|a|b|c|` table row (outer bars dropped)."""
    s = line.strip()
    if s.startswith("|"):
        s = s[1:]
    if s.endswith("|"):
        s = s[:-1]
    return s.split("|")


_BORDER = re.compile(r"^[ \t]*\+[-+=]+\+[ \t]*$")


def is_border(line: str) -> bool:
    return bool(_BORDER.match(line))


def table_at(lines: list[str], start: int, source: str, what: str) -> tuple[list[str], list[list[str]], int]:
    """The table whose top border is at or after lines[start] (within a few lines): (header rows,
    body rows, index after the closing border). A table that does not close is refused (a cut)."""
    i = start
    while i < len(lines) and i < start + 6 and not is_border(lines[i]):
        i += 1
    if i >= len(lines) or not is_border(lines[i]):
        raise ReportError(f"{source}: the {what} table is missing where it should start (line {start + 1}); "
                          f"the report is cut or damaged: regenerate it")
    borders = 1
    width = len(lines[i].strip())  # every border of a table is as wide as its first: a shorter one is cut
    head: list[str] = []
    body: list[list[str]] = []
    j = i + 1
    while j < len(lines):
        ln = lines[j]
        if is_border(ln):
            if len(ln.strip()) != width:
                raise ReportError(f"{source}: the {what} table (line {i + 1}) has a border line {j + 1} of "
                                  f"{len(ln.strip())} characters, not {width}: the report is cut or damaged")
            borders += 1
            j += 1
            if borders >= 2 and (j >= len(lines) or not lines[j].strip().startswith("|")):
                return head, body, j
            continue
        if not ln.strip().startswith(("|", "+")):
            break
        if borders == 1:
            head.append(ln.replace("+", "|") if ln.strip().startswith("+") else ln)
        else:
            body.append(split_row(ln))
        j += 1
    raise ReportError(f"{source}: the {what} table (line {i + 1}) does not close with a border line; "
                      f"the report is cut: regenerate it")


def _spans(line: str) -> list[tuple[int, int, str]]:
    bars = [i for i, ch in enumerate(line) if ch == "|"]
    return [(a, b, line[a + 1:b].strip()) for a, b in zip(bars, bars[1:])]


def column_names(head: list[str]) -> list[str]:
    """Header cells stacked over several lines, joined per column by where they sit ("Latency
    (cycles)" over "min" and "max" gives "Latency (cycles) min" and "Latency (cycles) max")."""
    rows = [_spans(ln) for ln in head]
    if not rows:
        return []
    finest = max(rows, key=len)
    names = []
    for a, b, _ in finest:
        mid = (a + b) / 2
        parts = [t for row in rows for (x, y, t) in row if x <= mid <= y and t]
        names.append(" ".join(parts))
    return names


def ends_with_border(text: str) -> bool:
    """Every csynth/cosim report ends with a table's closing border: a file that does not was cut."""
    rows = [ln.strip() for ln in text.rstrip().split("\n")[-2:]]
    # the closing border is as wide as the row above it (tables are rectangular): a border cut short is not
    return is_border(rows[-1]) and len(rows) == 2 and len(rows[0]) == len(rows[-1])
