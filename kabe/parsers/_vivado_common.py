"""Pieces shared by the Vivado report parsers: reading a report file, its `| Key : value` header,
numbers in Vivado's spellings ("inf", "NA", "<0.01") and the two table styles Vivado prints
(`+---+` boxed tables and space-aligned tables under a row of dashes)."""

from __future__ import annotations

import math
import re
from pathlib import Path

from kabe.parsers import ReportError

_HEADER_RE = re.compile(r"^\|\s*([A-Za-z][A-Za-z ]*?)\s*:\s?(.*?)\s*$")


def read_report(path) -> str:
    """The text of a report file; ReportError when it is missing, unreadable, binary or empty."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise ReportError(f"{p}: report file does not exist") from None
    except OSError as e:
        raise ReportError(f"{p}: report file cannot be read ({e.strerror or e})") from None
    if b"\x00" in data:
        raise ReportError(f"{p}: report file contains NUL bytes; not a text report")
    text = data.decode("utf-8", errors="replace")
    if not text.strip():
        raise ReportError(f"{p}: report file is empty")
    return text


def require_text(text, source: str) -> str:
    if not isinstance(text, str):
        raise ReportError(f"{source}: expected report text, got {type(text).__name__}")
    if not text.strip():
        raise ReportError(f"{source}: report is empty")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def parse_header(text: str) -> dict:
    """The `| Tool Version : ...` block at the top of every Vivado report (first 40 lines),
    keyed by the lower-cased, underscored name: tool_version, date, command, design, device, ..."""
    out: dict[str, str] = {}
    for line in text.split("\n")[:40]:
        m = _HEADER_RE.match(line)
        if m and m.group(1).strip() and not line.startswith("| -"):
            key = m.group(1).strip().lower().replace(" ", "_")
            out.setdefault(key, m.group(2))
    return out


def command_name(header: dict) -> str | None:
    cmd = header.get("command")
    if not cmd:
        return None
    return cmd.split()[0] if cmd.split() else None


def number(tok: str | None, *, what: str, source: str):
    """A Vivado number: float for "1.234"/"-0.5", None for "inf"/"NA"/blank (no finite value)."""
    if tok is None:
        return None
    t = tok.strip()
    if t == "" or t.upper() in ("NA", "N/A", "INF", "-INF", "+INF", "-"):
        return None
    t = t.rstrip("ns") if re.fullmatch(r"-?\d+(\.\d+)?ns", t) else t
    try:
        v = float(t)
    except ValueError:
        raise ReportError(f"{source}: {what}: '{tok.strip()}' is not a number") from None
    if math.isnan(v) or math.isinf(v):
        return None
    return v


def integer(tok: str | None, *, what: str, source: str):
    """A Vivado count: int, None for "NA"/blank; ReportError for anything fractional or garbled."""
    if tok is None:
        return None
    t = tok.strip()
    if t == "" or t.upper() in ("NA", "N/A", "-"):
        return None
    if not re.fullmatch(r"\d+", t):
        raise ReportError(f"{source}: {what}: '{t}' is not a whole count")
    return int(t)


def count_or_fraction(tok: str | None, *, what: str, source: str):
    """Block RAM counts: an int when whole, a float for tiles such as 0.5 / 10.5."""
    if tok is None:
        return None
    t = tok.strip()
    if t == "" or t.upper() in ("NA", "N/A", "-"):
        return None
    if re.fullmatch(r"\d+", t):
        return int(t)
    if re.fullmatch(r"\d+\.\d+", t):
        v = float(t)
        return int(v) if v.is_integer() else v
    raise ReportError(f"{source}: {what}: '{t}' is not a count")


# ---------------------------------------------------------------------------------------------
# Space-aligned tables: a header line, a line of dash groups, rows. Numbers are right-aligned to
# the end of their dash group; names (clock, path group) are left-aligned at its start.

_DASHES_RE = re.compile(r"-+")
_TOKEN_RE = re.compile(r"\S+")


def dash_spans(line: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in _DASHES_RE.finditer(line)]


def header_names(header: str, spans: list[tuple[int, int]]) -> list[str]:
    """Column titles, cut out of the header line at the dash groups' positions."""
    names = []
    for i, (s, e) in enumerate(spans):
        nxt = spans[i + 1][0] if i + 1 < len(spans) else len(header)
        names.append(header[s:max(e, nxt)].strip())
    return names


def split_aligned_row(row: str, spans, n_left: int, *, what: str, source: str) -> list[str]:
    """Cells of one row: the first n_left columns by their left edge, the rest by right edge.
    A token that fits no column raises (the row does not have the table's shape)."""
    cells = [""] * len(spans)
    tokens = [(m.start(), m.end(), m.group()) for m in _TOKEN_RE.finditer(row)]
    rest = []
    for s, e, tok in tokens:
        placed = False
        for j in range(n_left, len(spans)):
            if abs(e - spans[j][1]) <= 1 and not cells[j]:
                cells[j] = tok
                placed = True
                break
        if not placed:
            rest.append((s, e, tok))
    for s, e, tok in rest:
        col = None
        for i in range(n_left):
            lo = spans[i][0] if i else 0
            hi = spans[i + 1][0] if i + 1 < len(spans) else 10**9
            if lo <= s < hi:
                col = i
                break
        if col is None:
            raise ReportError(
                f"{source}: {what}: row {row.strip()!r} does not line up with the table's columns")
        cells[col] = (cells[col] + " " + tok).strip()
    return cells
