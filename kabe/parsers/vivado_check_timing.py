"""The check_timing part of a report_timing_summary: {item: count}.

Two layouts, both read:
  * 2019 and later: the count is in the item's title, "1. checking no_clock (2782)";
  * earlier: "1. checking no_clock" followed by sentences, " There are 12 register/latch pins
    with no clock." (with -check_timing_verbose, one sentence per root clock pin); the count is
    the sum of those sentences, leaving out the "... but user has a false path constraint" and
    "... due to constant clock" ones, which are not problems.
An item without any count raises ReportError: a count that cannot be read is never a zero.
"""

from __future__ import annotations

import re

from kabe.parsers import ReportError
from kabe.parsers.report_file import find_lines

_HEAD = re.compile(r"^\d+\.[ \t]+checking[ \t]", re.M)
_THERE = re.compile(r"^[ \t]*There (?:are|is) \d", re.M)


def _item_head(line: str):
    """(name, count or None) of "N. checking name [(count)]", else None."""
    num, dot, rest = line.partition(".")
    if not dot or not num.isdigit():
        return None
    words = rest.split()
    if len(words) not in (2, 3) or words[0] != "checking":
        return None
    if len(words) == 3:
        c = words[2]
        if not (c.startswith("(") and c.endswith(")") and c[1:-1].isdigit()):
            return None
        return words[1], int(c[1:-1])
    return words[1], None


def _there_are(line: str):
    """(n, rest) of " There are N ..." / " There is N ...", else None."""
    words = line.split(None, 3)
    if len(words) >= 3 and words[0] == "There" and words[1] in ("are", "is") and words[2].isdigit():
        return int(words[2]), (words[3] if len(words) > 3 else "")
    return None


def check_timing_counts(lines: list[str], start: int, end: int, source: str) -> dict[str, int]:
    items = []
    for i in find_lines(lines, _HEAD, start, end, literal="checking"):
        head = _item_head(lines[i])
        if head and i + 1 < end and lines[i + 1].startswith("---"):
            items.append((i, *head))
    counts: dict[str, int] = {}
    for k, (i, name, cnt) in enumerate(items):
        if cnt is not None:
            counts[name] = cnt
            continue
        stop = items[k + 1][0] if k + 1 < len(items) else end
        total, seen = 0, False
        for k in find_lines(lines, _THERE, i + 2, stop, literal="There "):
            t = _there_are(lines[k])
            if t and " but " not in t[1] and "due to constant clock" not in t[1]:
                total += t[0]
                seen = True
        if not seen:
            raise ReportError(f"{source}: check_timing item '{name}' (line {i + 1}) has no count")
        counts[name] = total
    return counts
