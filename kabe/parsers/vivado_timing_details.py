"""The Timing Details section of a report_timing_summary: supporting detail for the verdict.

Timing Details prints one section per path group, in the order of the summary tables (each
clock of the Intra Clock Table, each pair of the Inter Clock Table, each row of the Other Path
Groups Table, then with -report_unconstrained the "(none)" groups):

    From Clock:  clk_out1                      Path Group:  **async_default**
      To Clock:  clk_out1                      From Clock:  clk_out1
                                                 To Clock:  clk_out1
    Setup :   0  Failing Endpoints,  Worst Slack   0.452ns,  ...
    Hold  :   0  Failing Endpoints,  Worst Slack   0.493ns,  ...      (or "Max Delay  18 Endpoints")
    PW    :   0  Failing Endpoints,  Worst Slack   2.750ns,  ...
    Max Delay Paths / Slack (MET) : ... / Min Delay Paths / ... / Pulse Width Checks

What is read here: the paths (kabe.parsers.vivado_timing_paths), the worst printed slack of each
check kind, the critical path (the path carrying the summary's WNS), and whether the section is
complete. An unreadable path is a warning with its line number. A report cut inside Timing
Details is refused: the last path block unreadable with nothing after it; fewer group sections
than the summary tables list (and fewer "(none)" sections than the Unconstrained and User
Ignored Path Tables list); the last section stopping inside its header (no dashed rule under
its Setup/Hold lines), without a path its own Setup/Hold/Max Delay/Min Delay line promises, without
the Pulse Width Checks its PW line promises, or printing fewer paths than min(-max_paths, its
endpoints) (a cut between two whole paths: the file may then end on a slack line, or be padded
with blank lines, and look whole); or the summary's WNS not among the slacks printed (the path
that carries it was cut off).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from kabe.parsers import ReportError
from kabe.parsers._vivado_common import is_count
from kabe.parsers.report_file import blank, find_lines
from kabe.parsers.vivado_timing_paths import Block, footer, path_blocks

_PATH_GROUP = re.compile(r"^Path Group:", re.M)
_FROM_CLOCK = re.compile(r"^From Clock:", re.M)
_PW_TITLE = re.compile(r"^[ \t]*Pulse Width Checks[ \t]*$", re.M)

_TOL = 0.0015  # Vivado prints 3 decimals
_DECIMAL = re.compile(r"-*(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)")


@dataclass
class Section:
    line: int  # 1-based line of its "Path Group:" / "From Clock:" header
    start: int  # index in the Timing Details lines
    end: int
    name: str
    promises: dict[str, bool] = field(default_factory=dict)  # max / min / pw: the header says it is there
    closed: bool = False  # its Setup/Hold (PW) or Max/Min Delay lines end in a dashed rule, as printed
    key: tuple[str | None, str, str] = (None, "", "")  # (Path Group, From Clock, To Clock) as printed
    endpoints: dict[str, int] = field(default_factory=dict)  # max / min: a "(none)" section's own counts
    # "Setup : 2 Failing Endpoints, Worst Slack -0.144ns, ..." as (failing, worst ns), by max / min / pw
    header: dict[str, tuple[int | None, float | None]] = field(default_factory=dict)


def _worst_slack_word(line: str) -> str | None:
    """"Setup :  0  Failing Endpoints,  Worst Slack  5.626ns, ..." -> "5.626ns"; None without one."""
    _, sep, rest = line.partition("Worst Slack")
    words = rest.replace(",", " ").split()
    return words[0] if sep and words else None


def _worst_slack_is_number(line: str) -> bool:
    """"Setup :  0  Failing Endpoints,  Worst Slack  5.626ns, ..." -> True; NA or blank -> False."""
    return (_worst_slack_word(line) or "").endswith("ns")


def _header_numbers(line: str) -> tuple[int | None, float | None]:
    """(failing endpoints, worst slack in ns) of a Setup/Hold/PW line; None for NA or unreadable."""
    words = line.split(":", 1)[1].replace(",", " ").split()
    failing = int(words[0]) if words and is_count(words[0]) else None
    w = _worst_slack_word(line) or ""
    worst = None
    if w.endswith("ns") and w[:-2].isascii():
        try:
            worst = float(w[:-2])
        except ValueError:
            worst = None
    return failing, worst


# the summary's value each section header line is bounded by: Vivado's WNS/WHS/WPWS is the worst
# over every section, so no section can print a worse one, nor failing endpoints the summary lacks
_SUMMARY_OF = {"max": ("wns_ns", "failing_endpoints", "Setup", "WNS"),
               "min": ("whs_ns", "hold_failing_endpoints", "Hold", "WHS"),
               "pw": ("wpws_ns", "pw_failing_endpoints", "PW", "WPWS")}


def _header_disagrees(rec: dict, sec: Section) -> str | None:
    """Why a section's Setup/Hold/PW line contradicts the Design Timing Summary (4,645 of 4,645
    such lines in the shared corpora and the gathered repositories agree with theirs), or None."""
    for kind, (failing, worst) in sec.header.items():
        key, count_key, label, abbr = _SUMMARY_OF[kind]
        summary = rec.get(key)
        if worst is not None and (summary is None or worst < summary - _TOL):
            return (f"its {label} line's worst slack is {worst:.3f} ns, the Design Timing Summary's {abbr} "
                    f"{'has no number (NA or inf)' if summary is None else f'is {summary}'}")
        if failing and not rec.get(count_key):
            return (f"its {label} line counts {failing} failing endpoint(s), the Design Timing Summary "
                    f"{rec.get(count_key)}")
    return None


def _endpoints(line: str, *, where: str) -> int:
    """"Max Delay   18 Endpoints" -> 18; ReportError when the count cannot be read (a count that
    cannot be read is never a zero: it would excuse a section whose paths were cut away)."""
    words = line.split()
    if len(words) != 4 or not is_count(words[2]):
        raise ReportError(f"{where}: '{line[:80]}' is not '<Max|Min> Delay <count> Endpoints'")
    return int(words[2])


def sections(lines: list[str], first_line: int, source: str = "<report_timing_summary>") -> list[Section]:
    joined = "\n".join(lines)
    groups = find_lines(lines, _PATH_GROUP, literal="Path Group:", joined=joined)
    heads = sorted(set(groups) | {i for i in find_lines(lines, _FROM_CLOCK, literal="From Clock:", joined=joined)
                                  if not (i and lines[i - 1].startswith("Path Group:"))})
    out = []
    for k, i in enumerate(heads):
        end = heads[k + 1] if k + 1 < len(heads) else len(lines)
        name = " ".join(lines[i].split(":", 1)[1].split())
        sec = Section(first_line + i, i, end, name)
        group, src, dst = None, "", ""
        for j in range(i, min(end, i + 12)):
            s = lines[j].strip()
            if s.startswith("Path Group:"):
                group = s.split(":", 1)[1].strip()
            elif s.startswith("From Clock:"):
                src = s.split(":", 1)[1].strip()
            elif s.startswith("To Clock:"):
                dst = s.split(":", 1)[1].strip()
            elif s.startswith("Setup :"):
                sec.promises["max"] = _worst_slack_is_number(s)
                sec.header["max"] = _header_numbers(s)
            elif s.startswith("Hold  :") or s.startswith("Hold :"):
                sec.promises["min"] = _worst_slack_is_number(s)
                sec.header["min"] = _header_numbers(s)
            elif s.startswith("PW    :") or s.startswith("PW :"):
                sec.promises["pw"] = _worst_slack_is_number(s)
                sec.header["pw"] = _header_numbers(s)
            elif s.startswith(("Max Delay", "Min Delay")) and s.endswith(("Endpoints", "Endpoint")):
                kind = "max" if s.startswith("Max") else "min"
                sec.endpoints[kind] = _endpoints(s, where=f"{source} line {first_line + j}")
                sec.promises[kind] = sec.endpoints[kind] > 0
            elif s.startswith("---") and sec.promises:
                sec.closed = True
                break
        sec.key = (group, src, dst)
        out.append(sec)
    return out


def _missing(sec: Section, pw_titles: list[int], blocks: list[Block], offset: int) -> list[str]:
    mine = [b for b in blocks if sec.start <= b.line - offset < sec.end]
    out = []
    for kind, what in (("max", "setup path"), ("min", "hold path")):
        if sec.promises.get(kind) and not any(b.delay_type in (kind, None) for b in mine):
            out.append(what)
    if sec.promises.get("pw") and not any(sec.start <= i < sec.end for i in pw_titles):
        out.append("pulse width checks")
    return out


# options of report_timing_summary that never leave a group with fewer paths than
# min(-max_paths, its endpoints) (-delay_type only as min_max); any other option
# (-slack_lesser_than, -group, -unique_pins, ...) may, so with one of those the count is not
# checked (never a false failure)
_COUNT_SAFE_OPTIONS = {"-max_paths", "-nworst", "-file", "-rpx", "-pb", "-warn_on_violation",
                       "-report_unconstrained", "-input_pins", "-routable_nets", "-datasheet", "-verbose",
                       "-quiet", "-name", "-check_timing_verbose", "-no_check_timing", "-append",
                       "-delay_type"}


def delay_type(command: str | None) -> str | None:
    """The -delay_type a command line asked for: "min_max" when it names none (Vivado's default),
    None when the option has no value."""
    words = (command or "").split()
    if "-delay_type" not in words:
        return "min_max"
    value = words[words.index("-delay_type") + 1:][:1]
    return value[0] if value else None


def max_paths(command: str | None) -> int | None:
    """How many paths a report_timing_summary command line prints per group at most: -max_paths
    (default 1), raised to -nworst when that is larger (as Vivado does: -nworst 10 alone prints 10
    per group in the corpus); None when the line is missing or has an option that can print fewer."""
    words = (command or "").split()
    if not words or words[0] != "report_timing_summary":
        return None
    if any(w.startswith("-") and w not in _COUNT_SAFE_OPTIONS for w in words[1:]):
        return None
    if delay_type(command) != "min_max":
        return None  # min_max (the default, and kabe's own flow) prints both kinds; max or min one
    value = {"-max_paths": 1, "-nworst": 1}
    for k, w in enumerate(words):
        if w in value:
            if k + 1 == len(words) or not is_count(words[k + 1]):
                return None
            value[w] = int(words[k + 1])
    return max(value.values())


def _rows_of(rec: dict, sec: Section) -> list[dict]:
    """The summary table rows a group section belongs to: its clock's Intra Clock Table row (a clock
    of the Clock Summary without one has no endpoint counts), its Inter Clock Table pair, or its
    Other Path Groups row. Exactly one in every real report (1,700 of 1,700 sections)."""
    group, src, dst = sec.key
    if group is not None:  # a row's empty clock cell (a group of unclocked ends) is None, its header ""
        return [r for r in rec.get("other_path_groups") or []
                if (r.get("path_group"), r.get("from") or "", r.get("to") or "") == (group, src, dst)]
    if src == dst:
        return [c for c in rec.get("clocks") or [] if c.get("name") == src and "total_endpoints" in c]
    return [r for r in rec.get("clock_interaction") or [] if (r.get("from") or "", r.get("to") or "") == (src, dst)]


def _table_endpoints(rec: dict, sec: Section) -> dict[str, int]:
    """The section's setup (max) and hold (min) endpoint counts: a "(none)" section prints its own,
    a group section's are its row in the Intra / Inter Clock or Other Path Groups Table."""
    if sec.endpoints:
        return sec.endpoints
    rows = _rows_of(rec, sec)
    if len(rows) != 1:
        return {}
    counts = {"max": rows[0].get("total_endpoints"), "min": rows[0].get("hold_total_endpoints")}
    return {k: v for k, v in counts.items() if isinstance(v, int)}


def _short(rec: dict, sec: Section, blocks: list[Block], offset: int, n_paths: int) -> str | None:
    """Why the section prints fewer paths than min(-max_paths, endpoints) for a kind it promises:
    each endpoint has at least one path, and Vivado prints up to -max_paths of them (none of the
    882 real sections with endpoint counts in the shared corpora prints fewer; kabe's own
    hand-written fixtures do, above their last section, which is the one checked)."""
    mine = [b for b in blocks if sec.start <= b.line - offset < sec.end]
    endpoints = _table_endpoints(rec, sec)
    for kind, what in (("max", "setup"), ("min", "hold")):
        ep = endpoints.get(kind)
        printed = sum(1 for b in mine if b.delay_type == kind)
        if sec.promises.get(kind) and ep is not None and printed < min(n_paths, ep):
            return (f"prints {printed} {what} path(s) where -max_paths {n_paths} and its {ep} endpoints "
                    f"call for {min(n_paths, ep)}")
    return None


@dataclass(frozen=True)
class Promised:
    """What the rest of the report promises of Timing Details, checked against what it prints."""

    groups: int  # path group sections: the Intra, Inter and Other Path Groups tables' rows
    none: int  # '(none)' sections: the Unconstrained and User Ignored Path Tables' rows
    exact_none: bool = False  # those tables were printed, so the '(none)' count is exact, not a minimum
    n_paths: int | None = None  # the command's -max_paths (max_paths()); None: the count cannot be checked


def read(rec: dict, lines: list[str], first_line: int, *, at_end: bool, promised: Promised, source: str) -> bool:
    """Fill rec's warnings, worst_slack_by_check and critical_path from the Timing Details lines;
    ReportError when they show the report was cut. at_end: nothing follows them. Returns whether
    the report ends on a path read whole (nothing after its closing slack line but blanks)."""
    expected_groups, expected_none = promised.groups, promised.none
    exact_none, n_paths = promised.exact_none, promised.n_paths
    blocks = path_blocks(lines, source=source, first_line=first_line)
    offset = first_line
    rec["warnings"] = [f"{b.error} (path detail only: the summary tables carry the verdict)"
                       for b in blocks if b.error]
    tail_empty = at_end and blocks and blank(lines[blocks[-1].end:])
    # the last path of Timing Details unreadable is a cut, whatever follows it (a log line, another
    # report joined on by cat): no real report in the corpora has an unreadable path at all (0 of 356)
    if blocks and blocks[-1].error:
        raise ReportError(f"{blocks[-1].error}; it is the last path of Timing Details"
                          f"{'' if tail_empty else ' (only other text follows it)'}, so the report is cut short")
    secs = sections(lines, first_line, source)
    grouped = [s for s in secs if not s.name.startswith("(none)")]
    if len(grouped) < expected_groups:
        raise ReportError(f"{source}: Timing Details has {len(grouped)} path group sections, the summary "
                          f"tables list {expected_groups}: the report is cut short inside Timing Details")
    if len(secs) - len(grouped) < expected_none:
        raise ReportError(f"{source}: Timing Details has {len(secs) - len(grouped)} '(none)' sections, the "
                          f"Unconstrained and User Ignored Path Tables list {expected_none}: the report is cut "
                          f"short inside Timing Details")
    if exact_none and len(secs) - len(grouped) > expected_none:
        # Vivado prints one '(none)' section for each row of the two tables (5 of 5 such reports in the
        # corpora): more sections than rows is a table, or rows of it, taken out of the report
        raise ReportError(f"{source}: Timing Details has {len(secs) - len(grouped)} '(none)' sections but the "
                          f"Unconstrained and User Ignored Path Tables list {expected_none}: a table or its rows "
                          f"were taken out (Vivado prints one section for each row)")
    pw_titles = find_lines(lines, _PW_TITLE, literal="Pulse Width Checks")
    for k, sec in enumerate(secs):
        rows = 1 if sec.name.startswith("(none)") else len(_rows_of(rec, sec))
        if rows != 1:
            # a clock renamed, or a row deleted, in the tables alone: what the tables say is no longer
            # what Timing Details was printed from
            raise ReportError(f"{source}: Timing Details section '{sec.name[:80]}' (line {sec.line}) has "
                              f"{rows or 'no'} row(s) in the summary tables, where Vivado prints one: the "
                              f"tables and the details disagree (report edited or mis-read)")
        disagree = _header_disagrees(rec, sec)
        if disagree:
            raise ReportError(f"{source}: Timing Details section '{sec.name[:80]}' (line {sec.line}): {disagree}: "
                              f"the summary and the details disagree (report edited or mis-read)")
        if not sec.closed:
            # every section of a real report opens with its Setup/Hold(/PW) or Max/Min Delay lines
            # and a dashed rule under them (1,291 of 1,291 sections in the shared corpora and
            # kabe's fixtures): a header without them, last in the file, is a cut padded with blanks
            if k == len(secs) - 1:
                raise ReportError(f"{source}: the last Timing Details section ('{sec.name[:80]}', line {sec.line}) "
                                  f"stops inside its header, before the dashed rule under its Setup/Hold "
                                  f"lines: the report is cut short")
            rec["warnings"].append(f"{source}: Timing Details section '{sec.name[:80]}' (line {sec.line}) "
                                   f"has no Setup/Hold lines with a dashed rule under its header")
            continue
        missing = _missing(sec, pw_titles, blocks, offset)
        if k == len(secs) - 1 and not missing and n_paths:
            # a cut between two whole paths of the last section, the file then ending as a whole
            # report does (on a slack line, or with blank lines after it), is told by the count
            short = _short(rec, sec, blocks, offset, n_paths)
            if short:
                raise ReportError(f"{source}: the last Timing Details section ('{sec.name[:80]}', line {sec.line}) "
                                  f"{short}: the report is cut short")
        if missing and k == len(secs) - 1:
            raise ReportError(f"{source}: the last Timing Details section ('{sec.name[:80]}', line {sec.line}) "
                              f"has no {' and no '.join(missing)} although its header counts them: the report "
                              f"is cut short")
        if missing:
            rec["warnings"].append(f"{source}: Timing Details section '{sec.name[:80]}' (line {sec.line}) "
                                   f"prints no {' and no '.join(missing)}")
    worst: dict[str, float] = {}
    for b in blocks:
        p = b.path
        if p and p["slack_ns"] is not None and p["slack_ns"] < worst.get(p["check"], float("inf")):
            worst[p["check"]] = p["slack_ns"]
    rec["worst_slack_by_check"] = worst
    rec["critical_path"] = _critical(rec, blocks, source)
    own = lines[blocks[-1].line - first_line:] if blocks else []
    closing = footer(next((ln for ln in reversed(own) if ln.strip()), ""))
    # the closing slack line printed whole: every decimal of its header, and the netlist column its
    # required time line has (`<hidden>` on Versal's protected endpoints; a slack line without it,
    # the last thing in the file, was cut after its number)
    required = next((f for f in map(footer, reversed(own)) if f and f[0] == "required time"), None)
    ends_on_path = bool(tail_empty and blocks[-1].path and blocks[-1].path["required_time_ns"] is not None
                        and closing is not None and closing[0] == "slack" and required is not None
                        and _digits(closing[1]) == _digits(own[0]) and closing[2] == required[2])
    # likewise the worst hold/removal slack printed is the summary's WHS, when hold paths are printed
    whs = rec.get("whs_ns")
    min_slacks = [b.slack_ns for b in blocks if b.slack_ns is not None and b.delay_type == "min"]
    if whs is not None and min_slacks and abs(min(min_slacks) - whs) > _TOL:
        raise ReportError(f"{source}: Design Timing Summary WHS is {whs} but the worst hold slack printed in "
                          f"Timing Details is {min(min_slacks)}: the summary and the paths disagree (report "
                          f"edited, or cut short inside Timing Details)")
    return ends_on_path


def _digits(text: str) -> int:
    """Decimals of the first number in `text` ("slack   0.410" -> 3, "Slack (MET) :  0.41ns" -> 2):
    a closing slack line printed with fewer decimals than its header was cut inside its number."""
    for w in text.replace("ns", " ").replace(":", " ").split():
        if _DECIMAL.fullmatch(w):
            return len(w.partition(".")[2])
    return -1


def _critical(rec: dict, blocks: list[Block], source: str) -> dict | None:
    """The path that carries the summary's WNS; its Slack line counts even when the rest of its
    block is unreadable, so a cut-off or unreadable worst path is told apart from a missing one."""
    wns = rec["wns_ns"]
    if wns is None:
        return None
    max_blocks = [b for b in blocks if b.slack_ns is not None and b.delay_type != "min"]
    at_wns = [b for b in max_blocks if abs(b.slack_ns - wns) <= _TOL]
    if not at_wns or min(b.slack_ns for b in max_blocks) < wns - _TOL:
        shown = min((b.slack_ns for b in max_blocks), default=None)
        raise ReportError(f"{source}: Design Timing Summary WNS is {wns} but the worst setup slack printed "
                          f"in Timing Details is {shown} (report cut short inside Timing Details?)")
    carrier = next((b for b in at_wns if b.path), None)
    if carrier is None:
        rec["warnings"].append(f"{source}: the path carrying WNS {wns} (line {at_wns[0].line}) is "
                               f"unreadable; no critical path recorded")
        return None
    p = carrier.path
    return {
        "clock": p["destination_clock"] or p["path_group"], "slack_ns": p["slack_ns"],
        "delay_ns": p["data_path_delay_ns"], "logic_delay_ns": p["logic_delay_ns"],
        "route_delay_ns": p["route_delay_ns"], "logic_levels": p["logic_levels"],
        "startpoint": p["source"], "endpoint": p["destination"], "path_group": p["path_group"],
        "check": p["check"], "requirement_ns": p["requirement_ns"],
        "clock_path_skew_ns": p["clock_path_skew_ns"], "clock_uncertainty_ns": p["clock_uncertainty_ns"],
        "cells": p["cells"], "line": p["line"],
    }
