"""The check_timing part of a report_timing_summary: {item: count}, read whole or refused.

Every Vivado from 2014 to 2025 prints it the same way, in one of two count layouts:

    check_timing report

    Table of Contents
    -----------------
    1. checking no_clock (2782)            <- 2019.1 and later: each count in its entry
    ...
    12. checking latch_loops (0)

    1. checking no_clock (2782)
    ---------------------------
     There are 310 register/latch pins with no clock driven by root clock pin: ... (HIGH)
    <pin names, one a line, with -check_timing_verbose>
     ...

  * 2019.1 and later: the count is in the item's title and in its table-of-contents entry, and it
    is the sum of every "There are N ..." sentence of the item's body;
  * earlier: no counts in the titles; the count is the sum of the sentences, leaving out the
    "... but user has a false path constraint" and "... due to constant clock" ones, which are
    not problems (2014 prints one name with a space, "constant clock": read as constant_clock).

The section is the only place a report says that registers have no clock, and a report whose
verdict line says "met" fails the gate on that alone; so a damaged section is a cut report, never
a clean one (tsfpga's check_timing.tcl treats every item as required the same way). Refused
(ReportError naming the line):
  * no table of contents, an entry that cannot be read, entries not numbered 1, 2, 3, ...;
  * the items under it not exactly the entries of the table of contents (one missing, renamed,
    reordered, repeated, or a title without its dashed underline);
  * a title whose count differs from its entry's, or from the sum of its sentences; an item
    without any readable sentence (a count that cannot be read is never a zero);
  * an indented line in an item that is not a "There are N ..." sentence (Vivado indents only
    those; pin names start at the margin);
  * anything but blank lines between the table of contents and the first item;
  * no no_clock or no unconstrained_internal_endpoints item (every Vivado prints both; the gate
    reads them).
"""

from __future__ import annotations

import re

from kabe.parsers import ReportError
from kabe.parsers._vivado_common import is_count
from kabe.parsers.report_file import NEAR, find_lines

TITLE = "check_timing report"
TOC_TITLE = "Table of Contents"
# Patterns over "\n" + lines joined + "\n": each starts at a newline, so the regex engine jumps from
# newline to newline (a verbose item lists thousands of pin names; a damaged one may list millions).
# Any line that starts like an item ("3. checking", "3 . Checking", "  3.checking") must be an entry
# of the table of contents or an item's title, or the section is refused. Lines are found with \d, which
# takes any script's digits, and read with [0-9] only: a line that starts like an item or a sentence with
# other digits is found and then refused, never skipped.
# Blanks are any white space but a newline (_B), not only space and tab: a sentence indented or spaced with
# a non-breaking space (a report pasted through an editor or a wiki) is still a sentence, never a pin name.
_B = r"[^\S\n]"
_ITEMISH = re.compile(rf"\n{_B}*\d+{_B}*\.{_B}*checking", re.I)
_THERE = re.compile(rf"\n{_B}*There{_B}+(?:are|is){_B}+\d")  # a line that means to be a sentence
_SENTENCE = re.compile(rf"\n{_B}*There{_B}+(?:are|is){_B}+([0-9]+)(?:{_B}([^\n]*))?(?=\n)")  # one that is: (N, rest)
_INDENTED = re.compile(rf"\n{_B}+\S")
_INDENTED_SENTENCE = re.compile(rf"\n{_B}+There{_B}+(?:are|is){_B}+[0-9]+(?:{_B}[^\n]*)?(?=\n)")
# The items every Vivado prints (2014 to 2025), which the gate reads: a section without one cannot say
# that no register lacks a clock, so it is refused rather than read as "not reported, fine".
REQUIRED = ("no_clock", "unconstrained_internal_endpoints")
_NOT_PROBLEMS = (" but ", "due to constant clock")  # old layout: sentences that are not counted


def _entry(line: str):
    """(number, name, count or None) of "N. checking name words [(count)]", else None."""
    num, dot, rest = line.partition(".")
    if not dot or not is_count(num):
        return None
    words = rest.split()
    if len(words) < 2 or words[0] != "checking":
        return None
    count = None
    last = words[-1]
    if last.startswith("(") and last.endswith(")"):
        if not is_count(last[1:-1]):
            return None
        count = int(last[1:-1])
        words = words[:-1]
    name = "_".join(words[1:])
    if not name or not all(c.isalnum() or c == "_" for c in name):
        return None
    return int(num), name, count


def _joined(lines: list[str], start: int, end: int) -> str:
    return "\n" + "\n".join(lines[start:end]) + "\n"


def _matching(lines: list[str], pattern: re.Pattern, start: int, end: int) -> list[int]:
    """Indices of the lines in lines[start:end] that `pattern` (one of the newline-led ones) matches."""
    text, out, pos, line = _joined(lines, start, end), [], 0, start
    for m in pattern.finditer(text):
        line += text.count("\n", pos, m.start())
        pos = m.start()
        out.append(line)
    return out


def _refuse_odd_line(lines: list[str], start: int, stop: int, name: str, where: str) -> None:
    """Name the first line of an item's body that is neither a sentence nor a pin name: an indented
    line that is not a sentence (Vivado indents its sentences only; pin names start at the margin),
    or a line that starts like a sentence and is not one."""
    for j in range(start, stop):
        line = lines[j]
        indented = line[:1].isspace() and line.strip()
        one = f"\n{line}\n"
        if (indented or _THERE.match(one)) and not _SENTENCE.match(one):
            raise ReportError(f"{where} line {j + 1}: '{_show(line)}' in item {name} is not a "
                              f"'There are N ...' sentence: the section is damaged")


def _underlined(lines: list[str], i: int, end: int) -> bool:
    return i + 1 < end and lines[i + 1].startswith("---") and lines[i + 1].strip().strip("-") == ""


def _show(line: str) -> str:
    return line.strip()[:80]


def read_section(lines: list[str], start: int, end: int, source: str) -> dict[str, int]:
    """The counts of the check_timing section whose title is lines[start], running to `end`."""
    where = f"{source}: check_timing"
    toc = next((i for i in range(start + 1, min(end, start + NEAR)) if lines[i].strip()), None)
    if toc is None or lines[toc].strip() != TOC_TITLE or not _underlined(lines, toc, end):
        at = toc if toc is not None else start
        raise ReportError(f"{where} (line {at + 1}): no '{TOC_TITLE}' with its dashed underline under the "
                          f"'{TITLE}' title (found '{_show(lines[at])}'): the section is damaged or cut")
    entries = []  # (line, number, name, count)
    i = toc + 2
    while i < end and lines[i].strip() and not _underlined(lines, i, end):
        e = _entry(lines[i])
        if e is None:
            raise ReportError(f"{where} line {i + 1}: '{_show(lines[i])}' is not a table-of-contents entry "
                              f"'N. checking <name> [(count)]': the section is damaged")
        if e[0] != len(entries) + 1:
            raise ReportError(f"{where} line {i + 1}: entry {e[0]} where the table of contents is at entry "
                              f"{len(entries) + 1}: an entry is missing, repeated or out of order")
        entries.append((i, *e))
        i += 1
    if not entries:
        raise ReportError(f"{where} (line {toc + 1}): the table of contents lists no item: the section is "
                          f"damaged or cut")
    first_body = i
    items = []  # (line, number, name, count)
    for k in _matching(lines, _ITEMISH, first_body, end):
        e = _entry(lines[k])
        if e is None or not _underlined(lines, k, end):
            raise ReportError(f"{where} line {k + 1}: '{_show(lines[k])}' is not an item title "
                              f"'N. checking <name> [(count)]' over a dashed underline: the section is damaged")
        items.append((k, *e))
    for toc_e, item in zip(entries, items):
        if toc_e[1:3] != item[1:3]:
            raise ReportError(f"{where} line {item[0] + 1}: item '{item[1]}. {item[2]}' where the table of "
                              f"contents (line {toc_e[0] + 1}) lists '{toc_e[1]}. {toc_e[2]}': an item is "
                              f"missing, renamed or out of order")
        if toc_e[3] != item[3]:
            raise ReportError(f"{where} line {item[0] + 1}: item {item[2]} has count "
                              f"{'none' if item[3] is None else item[3]}, its table-of-contents entry (line "
                              f"{toc_e[0] + 1}) {'none' if toc_e[3] is None else toc_e[3]}: the section is damaged")
    if len(items) != len(entries):
        longer, what = (entries, "listed in the table of contents but has no section") \
            if len(entries) > len(items) else (items, "has a section but is not in the table of contents")
        ln, num, name, _ = longer[min(len(entries), len(items))]
        raise ReportError(f"{where} line {ln + 1}: item {num}. {name} {what}: the section is damaged or cut")
    stray = next((k for k in range(first_body, items[0][0] if items else end) if lines[k].strip()), None)
    if stray is not None:
        raise ReportError(f"{where} line {stray + 1}: '{_show(lines[stray])}' between the table of contents and "
                          f"the first item: the section is damaged")

    counts: dict[str, int] = {}
    for k, (i, _num, name, count) in enumerate(items):
        stop = items[k + 1][0] if k + 1 < len(items) else end
        body = _joined(lines, i + 2, stop)
        sentences = _SENTENCE.findall(body)  # at C speed: a verbose item lists thousands of pins
        if len(_THERE.findall(body)) != len(sentences) or \
                len(_INDENTED.findall(body)) != len(_INDENTED_SENTENCE.findall(body)):
            _refuse_odd_line(lines, i + 2, stop, name, where)
        seen = bool(sentences)
        everything = sum(int(n) for n, _ in sentences)
        problems = sum(int(n) for n, rest in sentences if not any(w in rest for w in _NOT_PROBLEMS))
        if not seen:
            raise ReportError(f"{where} item '{name}' (line {i + 1}) has no 'There are N ...' sentence, so no "
                              f"count: the section is damaged or cut")
        if count is not None and count != everything:
            raise ReportError(f"{where} item '{name}' (line {i + 1}) says {count}, its sentences add up to "
                              f"{everything}: the section is damaged")
        if name in counts:
            raise ReportError(f"{where} item '{name}' (line {i + 1}) appears twice: the section is damaged")
        counts[name] = count if count is not None else problems
    missing = [name for name in REQUIRED if name not in counts]
    if missing:
        raise ReportError(f"{where} (line {start + 1}): no item {' and no item '.join(missing)}, which Vivado prints "
                          f"in every check_timing section: the section is damaged or edited, so it cannot say "
                          f"whether every register has a clock and every endpoint a constraint")
    return counts


def promised(command: str | None) -> bool:
    """Vivado prints check_timing in every report_timing_summary unless told -no_check_timing; a
    report whose command line is gone promises it too (fail closed: only the option excuses it)."""
    return "-no_check_timing" not in (command or "").split()


def find_title(lines: list[str], start: int, end: int) -> int | None:
    """The line of the exact `check_timing report` title in lines[start:end] (spaces around it are
    Vivado's own margin and allowed; any other spelling is not the title)."""
    at = find_lines(lines, re.compile(r"^[ \t]*check_timing report[ \t]*$", re.M), start, end, literal=TITLE)
    return at[0] if at else None


def toc_promises(lines: list[str], start: int, end: int) -> int | None:
    """A table of contents of check_timing items without its title: the line of its first entry."""
    for i in _matching(lines, _ITEMISH, start, end):
        if _entry(lines[i]) and not _underlined(lines, i, end):
            return i
    return None
