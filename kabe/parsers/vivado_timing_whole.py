"""report_timing_summary read as one whole file: one run, each section once, every verdict line,
every slack line, and the corners Vivado analysed (issue 37).

The section parser (kabe.parsers.vivado_timing_summary) reads the sections it finds by their exact
boxed titles. A title damaged by a tab, a non-breaking space or a doubled space is not one of them,
so whatever stands under it (a whole failing run in front of a passing one, a second copy of a
table) would go unread. Here every structural marker is found through such damage: a marker is
matched letter by letter, anything that is not a letter or digit (spaces of any Unicode kind, tabs,
`|`, underscores, zero-width characters) allowed between the letters, case ignored. Vivado writes
each marker once per run (every real report in the shared corpora: each exactly once), so:

  * a run marker seen twice (the `| Tool Version` / `| Command` header, the `Timing Summary Report`
    title, `check_timing report`, `Design Timing Summary`) is two runs in one file: refused;
  * any other section title seen twice is a duplicated section: refused;
  * every verdict line anywhere counts (returned; the gate fails two of them, naming both);
  * every `Slack` line anywhere (and any line saying VIOLATED) whose slack is negative counts, and
    every Pulse Width Checks row whose slack is negative (returned with its line; the gate fails it),
    inside Timing Details or not;
  * Timer Settings is read: a corner with Analyze Max/Min Paths other than Yes, or multi-corner
    analysis disabled, is a corner Vivado did not analyse (returned; the gate fails it).

Which sections a report must have is its Vivado version's layout (report_timing_summary has no table
of contents of its sections; the one it prints lists check_timing's items and is checked by
kabe.parsers.vivado_check_timing): Timer Settings in every version since 2014 (every one of the
corpus's 2014.2 to 2025.2 reports has it); Report Methodology since 2021.2; the User Ignored and Unconstrained Path Tables together
(one of them even when empty), since 2022.1, in a report whose Timing Details prints unconstrained
path groups (`Path Group: (none)`) or that has either table.

One pass over the lines finds every marker (kabe.parsers.vivado_timing_whole.scan).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from kabe.parsers.report_file import NotOneReport

# what damage may put into a structural line and a reader must see through: anything that is not a
# letter or digit (spaces of any Unicode kind, tabs, `|`, underscores, zero-width characters)
_NOT_ALNUM = re.compile(r"[\W_]+")
_SHORT = 100  # no title, verdict, setting or slack line Vivado prints is longer (headers are told apart)
_LONGEST = 160


def _key(words: str) -> str:
    return _NOT_ALNUM.sub("", words).casefold()


# run markers: once per report_timing_summary run ("| Tool Version :" / "| Command :" start a header line)
RUN_TITLES = ("Timing Summary Report", "check_timing report", "Design Timing Summary")
HEADER_KEYS = ("| Tool Version", "| Command")
SECTIONS = ("Timer Settings", "Report Methodology", "Clock Summary", "Intra Clock Table", "Inter Clock Table",
            "Other Path Groups Table", "User Ignored Path Table", "Unconstrained Path Table", "Timing Details",
            "Data sheet")
VERDICT_SENTENCES = ("All user specified timing constraints are met.", "Timing constraints are not met.",
                     "There are no user specified timing constraints.")
_TITLE_OF = {_key(t): t for t in RUN_TITLES + SECTIONS}
_VERDICT_KEYS = {_key(v) for v in VERDICT_SENTENCES}
_HEADER_OF = {_key(h): h for h in HEADER_KEYS}
_SLACK, _NONE_GROUP = _key("Slack"), _key("Path Group: (none)")
_MULTI_CORNER, _CORNER_HEAD = _key("Enable Multi Corner Analysis"), _key("Name Max Paths Min Paths")
# the rows of Timing Details' Pulse Width Checks tables: Check Type, Corner, Lib Pin, Reference Pin,
# Required, Actual, Slack, Location, Pin
_PW_KEYS = tuple(_key(t) for t in ("Min Period", "Max Period", "Low Pulse Width", "High Pulse Width", "Max Skew",
                                   "Min Skew"))
_PW_HEADS = {k[:3] for k in _PW_KEYS}
_DECIMAL = re.compile(r"[-+]?\d+(?:\.\d+)?")
_LEAD = "|\u200b\u200c\u200d\u2060\ufeff_"  # what may stand before a marker's first letter besides spaces
_HEADS = {_key(m)[:3] for m in (*_TITLE_OF.values(), *VERDICT_SENTENCES, *HEADER_KEYS, "Slack", "Path Group",
                                "Enable Multi Corner Analysis", "Name Max Paths")} | _PW_HEADS
_VIOLATED = re.compile(r"violated", re.I)
_NUMBER = re.compile(r"[-\u2212\u2012\u2013]?\s*\d+(?:\.\d+)?")


@dataclass
class Scan:
    """Where each structural line stands (0-based index, the line stripped)."""

    titles: dict[str, list[tuple[int, str]]] = field(default_factory=dict)  # title -> its lines
    verdicts: list[tuple[int, str]] = field(default_factory=list)
    slacks: list[tuple[int, str]] = field(default_factory=list)
    pw_rows: list[tuple[int, str]] = field(default_factory=list)  # Pulse Width Checks rows
    none_groups: int = 0
    multi_corner: list[tuple[int, str]] = field(default_factory=list)
    corner_heads: list[int] = field(default_factory=list)


def scan(lines: list[str]) -> Scan:
    """Every structural line of the report, through whitespace, case and Unicode-space damage. One
    Python step per line (a cheap length test first, a regex only on the short lines): a title can
    sit anywhere, damaged any way, so no single literal finds it at C speed."""
    out = Scan()
    for i, ln in enumerate(lines):
        if len(ln) > _SHORT:  # most lines of a report (paths, long rows): only a header or padding may be here
            if ln[-1:].isspace():
                ln = ln.rstrip()
            if len(ln) > _SHORT and "|" not in ln[:4] and ln.lstrip()[:3].casefold() not in _PW_HEADS:
                continue
        # the first letters of every marker: a cheap test that skips the path lines (most of a report)
        if ln.lstrip().lstrip(_LEAD).lstrip()[:3].casefold() not in _HEADS:
            continue
        key = _NOT_ALNUM.sub("", ln[:_LONGEST]).casefold()
        title = _TITLE_OF.get(key)
        if title is not None:
            out.titles.setdefault(title, []).append((i, ln.strip()))
        elif key in _VERDICT_KEYS:
            out.verdicts.append((i, ln.strip()))
        elif key.startswith(_SLACK):
            out.slacks.append((i, ln.strip()))
        elif key.startswith(_PW_KEYS):
            out.pw_rows.append((i, ln.strip()))
        elif key == _NONE_GROUP:
            out.none_groups += 1
        elif key.startswith(_MULTI_CORNER):
            out.multi_corner.append((i, ln.strip()))
        elif key == _CORNER_HEAD:
            out.corner_heads.append(i)
        elif ":" in ln and "|" in ln[:ln.index(":")]:
            for hk, name in _HEADER_OF.items():
                if key.startswith(hk) and _key(ln[:ln.index(":")]) == hk:
                    out.titles.setdefault(name, []).append((i, ln.strip()[:80]))
    return out


def check_one_run(sc: Scan, source: str) -> None:
    """NotOneReport when a run marker or a section title occurs more than once."""
    for name in HEADER_KEYS + RUN_TITLES:
        at = sc.titles.get(name, [])
        if len(at) > 1:
            raise NotOneReport(
                f"{source}: '{name}' at lines {', '.join(str(n + 1) for n, _ in at[:4])}: more than one "
                f"report_timing_summary run in one file (joined, or written with -append; a damaged title counts "
                f"too): kabe cannot tell which run to judge; give kabe each run in its own file")
    for name in SECTIONS:
        at = sc.titles.get(name, [])
        if len(at) > 1:
            raise NotOneReport(f"{source}: section '{name}' at lines {', '.join(str(n + 1) for n, _ in at[:4])}: "
                               f"a section twice in one report (duplicated or pasted): kabe cannot tell which "
                               f"copy is the report's; regenerate it")


def _version(tool_version: str | None) -> tuple[int, int] | None:
    m = re.search(r"v\.?\s*(\d{4})\.(\d+)", tool_version or "")
    return (int(m.group(1)), int(m.group(2))) if m else None


def check_layout(sc: Scan, header: dict, source: str) -> None:
    """NotOneReport naming a section the report's Vivado version always prints and this one lacks."""
    version = _version(header.get("tool_version"))
    if version is None:
        return  # no version, no known layout (the section parser still requires its own sections)
    missing = []
    if version >= (2014, 0) and "Timer Settings" not in sc.titles:
        missing.append("Timer Settings")
    if version >= (2021, 2) and "Report Methodology" not in sc.titles:
        # printed since 2021 even when report_methodology never ran ("No report available ...": 17 of 17
        # reports of 2021.2 to 2025.2 in the corpora)
        missing.append("Report Methodology")
    if version >= (2022, 1):
        tables = ("User Ignored Path Table", "Unconstrained Path Table")
        have = [t for t in tables if t in sc.titles]
        # printed together (an empty one too: 5 of 5 such reports in the corpora) when Timing Details has
        # unconstrained path groups; a -report_unconstrained run of a design without any may print neither
        if have or sc.none_groups:
            missing += [t for t in tables if t not in have]
    if "-datasheet" in (header.get("command") or "").split() and "Data sheet" not in sc.titles:
        missing.append("Data sheet")  # asked for on the command line, printed after Timing Details
    if missing:
        raise NotOneReport(f"{source}: section(s) {', '.join(repr(t) for t in missing)} missing: Vivado "
                           f"{version[0]}.{version[1]} prints {'it' if len(missing) == 1 else 'them'} in every "
                           f"report_timing_summary of this kind; the report is cut or edited")
    if "Timer Settings" in sc.titles and not (sc.multi_corner or sc.corner_heads):
        raise NotOneReport(f"{source}: the Timer Settings section has no corner table and no 'Enable Multi "
                           f"Corner Analysis' line: it is damaged, and which corners were analysed is unknown")


def negative_slack_lines(sc: Scan, limit: int = 20) -> list[str]:
    """Every `Slack ...` line with a negative number after its colon, and every Slack line saying
    VIOLATED, anywhere in the file, as 'line N: text' (the first `limit`, then a count)."""
    out, more = [], 0
    for n, s in sc.slacks:
        num = _NUMBER.search(s.partition(":")[2])
        negative = num is not None and num.group()[:1] in "-\u2212\u2012\u2013" and float(
            re.sub(r"[^\d.]", "", num.group()) or 0) > 0
        if negative or _VIOLATED.search(s):
            if len(out) < limit:
                out.append(f"line {n + 1}: {' '.join(s.split())[:100]}")
            else:
                more += 1
    for n, s in sc.pw_rows:  # Required, Actual, Slack: the first three numbers side by side
        cells = s.split()
        k = next((k for k in range(len(cells) - 2) if all(_DECIMAL.fullmatch(c) for c in cells[k:k + 3])), None)
        if k is not None and float(cells[k + 2]) < 0:
            if len(out) < limit:
                out.append(f"line {n + 1}: pulse width {' '.join(cells[:k + 3])[:100]}")
            else:
                more += 1
    if more:
        out.append(f"and {more} more")
    return out


def unanalysed_corners(sc: Scan, lines: list[str]) -> list[str]:
    """What Timer Settings says Vivado did not analyse: multi-corner analysis off, a corner whose
    Analyze Max Paths (setup) or Analyze Min Paths (hold) is not Yes."""
    out = []
    for n, s in sc.multi_corner:
        value = s.partition(":")[2].strip()
        if value.lower() != "yes":
            out.append(f"line {n + 1}: Enable Multi Corner Analysis : {value[:20]}")
    for head in sc.corner_heads:
        k = head + 1
        if k < len(lines) and lines[k].strip().strip("- ") == "":
            k += 1  # the dash rule under the titles
        while k < len(lines) and k < head + 8 and lines[k].strip():
            cells = lines[k].split()
            if len(cells) != 3 or any(c.lower() != "yes" for c in cells[1:]):
                what = ", ".join(f"Analyze {t} Paths {c}" for t, c in zip(("Max", "Min"), cells[1:3])
                                 if c.lower() != "yes") or f"'{' '.join(cells)[:60]}'"
                out.append(f"line {k + 1}: corner {cells[0]}: {what}")
            k += 1
    return out


def read(lines: list[str], header: dict, source: str) -> dict:
    """The whole-file checks: NotOneReport for two runs, a duplicated or missing section; else the
    record keys the gate judges (verdict_lines, negative_slack_lines, unanalysed_corners)."""
    sc = scan(lines)
    check_one_run(sc, source)
    check_layout(sc, header, source)
    return {"verdict_lines": [f"line {n + 1}: {s[:100]}" for n, s in sc.verdicts],
            "negative_slack_lines": negative_slack_lines(sc), "unanalysed_corners": unanalysed_corners(sc, lines)}
