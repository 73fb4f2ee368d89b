"""report_clock_interaction -> the clock pairs and how each crossing is constrained.

The gate fails on any pair whose "Inter-Clock Constraints" says unsafe (e.g. "Timed (unsafe)",
"Partial False Path (unsafe)"): report_timing_summary times such paths but cannot say they are
safe. Each row becomes {"from", "to", "classification", "type" (the constraints column), "wns_ns"}.
"""

from __future__ import annotations

from pathlib import Path

from kabe.parsers import ReportError
from kabe.parsers._vivado_common import dash_spans, header_names, number, read_report, require_text

_TITLE = "Clock Interaction Table"


def _cells(row: str, spans: list[tuple[int, int]]) -> list[str]:
    """Cut a row between the dash groups: left-aligned text starts at its group, right-aligned
    numbers end at theirs, so column i lies between group i-1's end and group i+1's start."""
    out = []
    for i in range(len(spans)):
        lo = spans[i - 1][1] if i else 0
        hi = spans[i + 1][0] if i + 1 < len(spans) else len(row)
        out.append(row[lo:hi].strip())
    return out


def parse(text: str, source: str = "<report_clock_interaction>") -> list[dict]:
    lines = require_text(text, source).splitlines()
    try:
        start = next(i for i, l in enumerate(lines) if l.strip() == _TITLE)
    except StopIteration:
        raise ReportError(f"{source}: no '{_TITLE}'; not a complete report_clock_interaction") from None
    header_at = next((i for i in range(start + 1, min(start + 8, len(lines))) if "From Clock" in lines[i]), None)
    if header_at is None or header_at + 1 >= len(lines) or not dash_spans(lines[header_at + 1]):
        raise ReportError(f"{source}: the {_TITLE} has no column header (cut short?)")
    spans = dash_spans(lines[header_at + 1])
    names = header_names(lines[header_at], spans)
    need = {"From Clock", "To Clock", "WNS (ns)", "Clock Pair Classification", "Inter-Clock Constraints"}
    if not need <= set(names):
        raise ReportError(f"{source}: the {_TITLE} lacks columns {sorted(need - set(names))}")
    pairs = []
    rows = lines[header_at + 2:]
    end = next((i for i, row in enumerate(rows) if not row.strip()), None)
    if end is None:
        # Vivado ends the table with a blank line; without it the last row may be cut mid-word
        # ("Timed (unsafe)" read as "Timed"), so the whole report is refused
        raise ReportError(f"{source}: the {_TITLE} does not end (no blank line after it): the report is cut short")
    for row in rows[:end]:
        cell = dict(zip(names, _cells(row, spans)))
        if not cell["From Clock"] or not cell["To Clock"] or not cell["Inter-Clock Constraints"]:
            raise ReportError(f"{source}: clock interaction row {row.strip()!r} is incomplete (cut short?)")
        pairs.append({"from": cell["From Clock"], "to": cell["To Clock"],
                      "classification": cell["Clock Pair Classification"],
                      "type": cell["Inter-Clock Constraints"],
                      "wns_ns": number(cell["WNS (ns)"], what=f"WNS of {cell['From Clock']} -> {cell['To Clock']}",
                                       source=source)})
    if not pairs:
        raise ReportError(f"{source}: the {_TITLE} has no rows; a clocked design has at least one pair")
    return pairs


def parse_file(path) -> list[dict]:
    return parse(read_report(path), str(Path(path)))
