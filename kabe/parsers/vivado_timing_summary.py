"""Vivado `report_timing_summary` -> the metrics `timing` record (docs/metrics.md).

The summary tables are the verdict's basis: Design Timing Summary (WNS/TNS/WHS/THS/WPWS/TPWS
with failing/total endpoints) and the verdict line under it, Clock Summary, Intra Clock Table,
Inter Clock Table, Other Path Groups Table, the optional Unconstrained / User Ignored Path
Tables, and check_timing's counts (no_clock, unconstrained_internal_endpoints, ...).

Timing Details is supporting detail: its paths give `critical_path` (the worst setup/recovery
path) and the worst printed slack of each check kind (setup, hold, recovery, removal:
`worst_slack_by_check`). A path that cannot be read becomes a warning with its line number
(`warnings`), never a refusal, because the tables above already carry every number the gate
needs.

Refused (ReportError, no partial result), because a truncated, incomplete or inconsistent
report must fail closed:
  * empty text, a header naming another command, no Design Timing Summary, or more than one
    (two runs in one file: -append);
  * a required section missing or out of order (Design Timing Summary, Clock Summary, Intra
    Clock Table, Inter Clock Table, Other Path Groups Table, Timing Details): a cut anywhere
    before Timing Details;
  * a summary value missing or not a number, a table row that does not line up, no verdict line;
  * a table with fewer columns than its name columns (From Clock, To Clock, ...): a row that
    cannot be read, refused with its line;
  * no readable check_timing section where the command line promises one (every
    report_timing_summary without -no_check_timing), or one whose items, counts and sentences do
    not agree (kabe.parsers.vivado_check_timing);
  * a cut inside Timing Details: the last path block unreadable with nothing after it, the last
    section stopping inside its header (no dashed rule under its Setup/Hold lines, even when blank
    lines follow) or printing fewer paths than min(-max_paths, its endpoints), or the worst
    setup/recovery slack printed there differing from the summary's WNS (the path that carries
    WNS was cut off).
"inf"/"NA" become None: a null WNS/WHS/WPWS means "no number" and the gate decides what that
means (kabe.rules.gate), never this parser.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kabe.rules.gate import VERDICTS
from kabe.parsers import ReportError
from kabe.parsers import report_file
from kabe.parsers.report_file import NEAR, blank, find_lines
from kabe.parsers._vivado_common import aligned_table, integer, number
from kabe.parsers import vivado_check_timing
from kabe.parsers import vivado_timing_details
from kabe.parsers import vivado_timing_whole

REQUIRED_SECTIONS = ("Design Timing Summary", "Clock Summary", "Intra Clock Table",
                     "Inter Clock Table", "Other Path Groups Table", "Timing Details")

MIN_END_NEWLINES = 3  # Vivado ends a report with blank lines: at least 3 newlines after the last text


# Design Timing Summary / clock table column title -> record key
SUMMARY_COLS = {
    "WNS(ns)": "wns_ns", "TNS(ns)": "tns_ns",
    "TNS Failing Endpoints": "failing_endpoints", "TNS Total Endpoints": "total_endpoints",
    "WHS(ns)": "whs_ns", "THS(ns)": "ths_ns",
    "THS Failing Endpoints": "hold_failing_endpoints", "THS Total Endpoints": "hold_total_endpoints",
    "WPWS(ns)": "wpws_ns", "TPWS(ns)": "tpws_ns",
    "TPWS Failing Endpoints": "pw_failing_endpoints", "TPWS Total Endpoints": "pw_total_endpoints",
}


def _numeric(title: str) -> bool:
    return title in SUMMARY_COLS


_BOX_TITLE = re.compile(r"^\| [^ \n-]")


def sections(lines: list[str], joined: str | None = None) -> list[tuple[str, int, int]]:
    """(title, first body line, end line) of each `| Title` / `| -----` boxed section."""
    heads = []
    for i in find_lines(lines, re.compile(_BOX_TITLE.pattern, re.M), literal="| ", joined=joined):
        under = lines[i + 1] if i + 1 < len(lines) else ""
        if under.startswith("| -") and under[2:].strip().strip("-") == "":
            heads.append((lines[i][2:].strip(), i))
    out = []
    for k, (title, i) in enumerate(heads):
        body_start = i + 2
        if body_start < len(lines) and lines[body_start].startswith("----"):
            body_start += 1
        end = heads[k + 1][1] - 1 if k + 1 < len(heads) else len(lines)
        # the dashed rule line above the next box belongs to it, not to this body
        while end > body_start and lines[end - 1].startswith("----"):
            end -= 1
        out.append((title, body_start, end))
    return out


def _values(cols, cells, *, what: str, source: str, allow_blank: bool) -> dict:
    out = {}
    for col, cell in zip(cols, cells):
        key = SUMMARY_COLS.get(col.title)
        if key is None:
            continue
        if not cell and not allow_blank:
            raise ReportError(f"{source}: {what}: column '{col.title}' has no value (row cut short)")
        conv = number if key.endswith("_ns") else integer
        out[key] = conv(cell, what=f"{what} {col.title}", source=source)
    for slack, companions in _COMPANIONS.items():
        missing = [k for k in companions if k in out and out[k] is None]
        if out.get(slack) is not None and missing:
            # Vivado prints a slack with its total and counts, or none of them (4,387 of 4,387 rows
            # with a slack in the corpora): a count gone to NA beside a number is an edit the gate
            # would read as 0 failing
            raise ReportError(f"{source}: {what}: {_TITLE_OF[slack]} is {out[slack]} but {_TITLE_OF[missing[0]]} has "
                              f"no number: Vivado prints them together; the row is damaged or edited")
    return out


_COMPANIONS = {"wns_ns": ("tns_ns", "failing_endpoints", "total_endpoints"),
               "whs_ns": ("ths_ns", "hold_failing_endpoints", "hold_total_endpoints"),
               "wpws_ns": ("tpws_ns", "pw_failing_endpoints", "pw_total_endpoints")}
_TITLE_OF = {key: title for title, key in SUMMARY_COLS.items()}


def _clock_summary(body: list[str], ln0: int, source: str) -> list[dict]:
    """`name  {rise fall}  period  frequency`; a generated clock is indented under its master."""
    i = 0
    while i < min(len(body), NEAR) and not body[i].strip():
        i += 1
    clocks: list[dict] = []
    if blank(body):
        return clocks
    if not (body[i].lstrip().startswith("Clock") and i + 1 < len(body) and body[i + 1].strip().startswith("-")):
        raise ReportError(f"{source}: Clock Summary (line {ln0 + i}): no 'Clock  Waveform(ns)' table header")
    for j in range(i + 2, len(body)):
        row = body[j]
        if not row.strip():
            break
        name, _, rest = row.strip().partition(" ")
        rest = rest.strip()
        close = rest.find("}")
        tail = rest[close + 1:].split() if close > 0 else []
        if not rest.startswith("{") or close < 0 or len(tail) != 2:
            raise ReportError(f"{source}: Clock Summary line {ln0 + j}: '{row.strip()[:120]}' is not "
                              f"'name {{waveform}} period frequency'")
        try:
            waveform = [float(x) for x in rest[1:close].split()]
        except ValueError:
            raise ReportError(f"{source}: Clock Summary line {ln0 + j}: waveform "
                              f"'{rest[:close + 1][:60]}' is not numbers") from None
        clocks.append({
            "name": name, "waveform": waveform,
            "period_ns": number(tail[0], what=f"clock {name} period", source=source),
            "frequency_mhz": number(tail[1], what=f"clock {name} frequency", source=source),
            "generated": row[:1].isspace(),
        })
    return clocks


def parse(text: str, source: str = "<report_timing_summary>") -> dict:
    return parse_report(report_file.from_text(text, source))


def parse_file(path) -> dict:
    return parse_report(report_file.read(path))


def parse_report(rep: report_file.Report) -> dict:
    report_file.expect_command(rep, "report_timing_summary")
    # the whole file first: a second run or a second copy of a section (damaged titles too) is refused
    # before any section is read, since the section reader would read one copy and miss the other
    whole = vivado_timing_whole.read(rep.lines, rep.header, rep.source)
    layout = _Layout.of(rep)
    rec: dict = {"estimated": False, "source": "vivado report_timing_summary",
                 "tool_version": rep.header.get("tool_version"), "design": rep.header.get("design"),
                 "device": rep.header.get("device"), "design_state": rep.header.get("design_state")}
    _design_timing_summary(rec, layout)
    intra_rows = _clocks(rec, layout)
    _path_groups(rec, layout)
    _check_timing(rec, layout)
    ends_on_path = _details(rec, layout, intra_rows)
    _warnings(rec, layout)
    _check_end(layout, ends_on_path)
    rec.update(whole)  # what the whole file says beyond the sections read (kabe.rules.gate judges it)
    return rec


@dataclass(frozen=True)
class _Layout:
    """The report's sections, checked complete and in order before any of them is read."""

    rep: report_file.Report
    secs: list  # (title, start, end) in file order
    titles: list[str]
    sec: dict  # title -> (start, end), the first occurrence
    no_details: bool

    @property
    def source(self) -> str:
        return self.rep.source

    @classmethod
    def of(cls, rep: report_file.Report) -> _Layout:
        source, lines = rep.source, rep.lines
        secs = sections(lines, rep.text)
        titles = [t for t, _, _ in secs]
        if "Design Timing Summary" not in titles:
            raise ReportError(f"{source}: no 'Design Timing Summary' table; not a complete "
                              f"report_timing_summary (empty, cut short, or another report)")
        runs = titles.count("Design Timing Summary")
        if runs > 1:  # report_timing_summary -append, or files joined: which run is the design's is unknowable
            raise report_file.NotOneReport(f"{source}: {runs} report_timing_summary outputs in one file (written with "
                                           f"-append, or joined): kabe cannot tell which run to judge; write each "
                                           f"run to its own file")
        # the header's own command line says when Vivado was asked for no path details at all; details
        # that are there anyway (a header edited, or another run's) are read like any others
        no_details = "-no_detailed_paths" in rep.header.get("command", "").split() and "Timing Details" not in titles
        required = [t for t in REQUIRED_SECTIONS if not (no_details and t == "Timing Details")]
        missing = [t for t in required if t not in titles]
        if missing:
            raise ReportError(f"{source}: section(s) {', '.join(repr(t) for t in missing)} missing; "
                              f"the report is cut short (last section present: {titles[-1]!r})")
        pos = [titles.index(t) for t in required]
        if pos != sorted(pos):
            raise ReportError(f"{source}: sections out of order; not a report_timing_summary layout")
        sec = {t: (s, e) for t, s, e in reversed(secs)}  # first occurrence wins
        return cls(rep, secs, titles, sec, no_details)

    def body(self, title: str) -> tuple[list[str], int]:
        s, e = self.sec[title]
        return self.rep.lines[s:e], s + 1

    def group_rows(self, title: str, n_names: int) -> list:
        """Inter Clock / Other Path Groups / Unconstrained / User Ignored: names, then numbers."""
        b, ln0 = self.body(title)
        if blank(b):
            return []
        cols, rows, _ = aligned_table(b, numeric=_numeric, what=title, source=self.source, first_line=ln0,
                                      name_columns=n_names)
        return [(cells[:n_names], _values(cols[n_names:], cells[n_names:], what=title, source=self.source,
                                          allow_blank=True)) for cells in rows]


def _design_timing_summary(rec: dict, layout: _Layout) -> None:
    """The one row of design-wide numbers and the verdict line under it."""
    source = layout.source
    b, ln0 = layout.body("Design Timing Summary")
    cols, rows, after = aligned_table(b, numeric=_numeric, what="Design Timing Summary",
                                      source=source, first_line=ln0)
    if len(rows) != 1:
        raise ReportError(f"{source}: Design Timing Summary has {len(rows)} value rows, expected 1")
    names = [c.title for c in cols]
    absent = [c for c in ("WNS(ns)", "TNS(ns)", "TNS Failing Endpoints", "TNS Total Endpoints") if c not in names]
    if absent:
        raise ReportError(f"{source}: Design Timing Summary lacks column(s) {', '.join(absent)}")
    vals = _values(cols, rows[0], what="Design Timing Summary", source=source, allow_blank=False)
    for key in SUMMARY_COLS.values():
        rec[key] = vals.get(key)
    # what the summary printed where a slack has no number ("inf" or "NA"), so a message says what the
    # report says; one rule judges both (kabe.rules.gate)
    printed = {SUMMARY_COLS[c.title]: cell.strip() for c, cell in zip(cols, rows[0])
               if SUMMARY_COLS.get(c.title) in ("wns_ns", "whs_ns", "wpws_ns") and vals.get(SUMMARY_COLS[c.title]) is None}
    if printed:
        rec["no_number"] = printed
    verdict = next((x.strip() for x in b[after:after + NEAR] if x.strip()), None)
    if verdict is None:
        raise ReportError(f"{source}: no verdict line after the Design Timing Summary table "
                          f"(deleted or cut short)")
    rec["verdict_line"] = verdict
    rec["verdict"] = VERDICTS.get(verdict, "unknown")


def _clocks(rec: dict, layout: _Layout) -> int:
    """The clocks, with their own numbers from the Intra Clock Table; returns that table's row count."""
    source = layout.source
    clocks = _clock_summary(*layout.body("Clock Summary"), source)
    by_name = {c["name"]: c for c in clocks}
    b, ln0 = layout.body("Intra Clock Table")
    intra_rows = 0
    if not blank(b):
        cols, rows, _ = aligned_table(b, numeric=_numeric, what="Intra Clock Table", source=source,
                                      first_line=ln0)
        intra_rows = len(rows)
        for cells in rows:
            name = cells[0]
            entry = by_name.get(name)
            if entry is None:
                raise ReportError(f"{source}: Intra Clock Table names clock {name!r} that the "
                                  f"Clock Summary does not list")
            entry.update(_values(cols[1:], cells[1:], what=f"Intra Clock Table {name}",
                                 source=source, allow_blank=True))
    for c in clocks:
        for key in ("wns_ns", "tns_ns", "whs_ns", "ths_ns", "wpws_ns", "tpws_ns"):
            c.setdefault(key, None)
    rec["clocks"] = clocks
    return intra_rows


def _path_groups(rec: dict, layout: _Layout) -> None:
    rec["clock_interaction"] = [{"from": n[0], "to": n[1], "type": "inter-clock", **v}
                                for n, v in layout.group_rows("Inter Clock Table", 2)]
    rec["other_path_groups"] = [{"path_group": n[0], "from": n[1] or None, "to": n[2] or None, **v}
                                for n, v in layout.group_rows("Other Path Groups Table", 3)]
    for title, key in (("Unconstrained Path Table", "unconstrained_paths"),
                       ("User Ignored Path Table", "ignored_paths")):
        rec[key] = None if title not in layout.sec else [
            {"path_group": n[0], "from": n[1] or None, "to": n[2] or None} for n, _ in layout.group_rows(title, 3)]


def _check_timing(rec: dict, layout: _Layout) -> None:
    """check_timing (not boxed: a plain "check_timing report" title before the summary). It is the one
    place that counts registers without a clock, so where the command line (or a table of contents of
    its items) promises it, a section that is missing or unreadable is a cut report."""
    rep, lines = layout.rep, layout.rep.lines
    box_above = layout.sec["Design Timing Summary"][0] - 3  # the dashed rule over the summary's box
    ct_at = vivado_check_timing.find_title(lines, 0, box_above)
    if ct_at is not None:
        ct_end = max(ct_at, next((s - 3 for _, s, _ in layout.secs if s > ct_at), box_above))
        rec["check_timing"] = vivado_check_timing.read_section(lines, ct_at, ct_end, rep.source)
    else:
        toc = vivado_check_timing.toc_promises(lines, 0, box_above)
        if toc is not None or vivado_check_timing.promised(rep.header.get("command")):
            why = (f"a table of check_timing items (line {toc + 1}) stands without it" if toc is not None else
                   "the command line asks for it (report_timing_summary without -no_check_timing)"
                   if rep.header.get("command") else "the report's header has no command line that leaves it out "
                   "(-no_check_timing)")
            raise ReportError(f"{rep.source}: no '{vivado_check_timing.TITLE}' section before the Design Timing "
                              f"Summary although {why}: the report is cut or damaged (a check_timing that cannot "
                              f"be read is never a clean one)")
        rec["check_timing"] = None
    ct = rec["check_timing"] or {}
    rec["unconstrained_endpoints"] = ct.get("unconstrained_internal_endpoints")
    rec["no_clock"] = ct.get("no_clock")


def _details(rec: dict, layout: _Layout, intra_rows: int) -> bool:
    """The Timing Details' paths (kabe.parsers.vivado_timing_details); True when the file ends on a path
    read whole (its slack line last)."""
    source = layout.source
    if layout.no_details:
        rec.update(warnings=[f"{source}: report_timing_summary -no_detailed_paths: no paths, no critical path"],
                   worst_slack_by_check={}, critical_path=None)
        return False
    s, e = layout.sec["Timing Details"]
    command = layout.rep.header.get("command")
    return vivado_timing_details.read(
        rec, layout.rep.lines[s:e], s + 1, at_end=layout.titles[-1] == "Timing Details", source=source,
        promised=vivado_timing_details.Promised(
            groups=intra_rows + len(rec["clock_interaction"]) + len(rec["other_path_groups"]),
            none=len(rec["unconstrained_paths"] or []) + len(rec["ignored_paths"] or []),
            exact_none=rec["unconstrained_paths"] is not None or rec["ignored_paths"] is not None,
            n_paths=vivado_timing_details.max_paths(command)))


def _warnings(rec: dict, layout: _Layout) -> None:
    """What the header says limits the report: one delay type only, a design not yet routed."""
    source = layout.source
    one_kind = vivado_timing_details.delay_type(layout.rep.header.get("command"))
    if one_kind in ("max", "min"):
        left_out = "hold (min delay)" if one_kind == "max" else "setup (max delay)"
        rec["warnings"] = [f"{source}: written with -delay_type {one_kind}: Vivado left {left_out} out of "
                           f"it, so its slack has no number; write the report with -delay_type min_max (the "
                           f"default)"] + list(rec.get("warnings") or [])
    state = rec.get("design_state") or ""
    if state and "rout" not in state.lower():  # Routed, Fully Routed, Physopt postRoute are routed
        rec["warnings"] = [f"{source}: the design was not routed when this report was written (Design State: "
                           f"{state[:40]}): its slacks are Vivado's estimate before routing, not sign-off"
                           ] + list(rec.get("warnings") or [])


def _check_end(layout: _Layout, ends_on_path: bool) -> None:
    """Vivado closes the report with blank lines (every real report in the corpus ends with at least
    four newlines); without them, only a last path read whole (its slack line last) shows the end is
    the end: content up to the last character is how a file cut inside a last table looks."""
    text = layout.rep.text
    if text.count("\n", len(text.rstrip())) < MIN_END_NEWLINES and (layout.no_details or not ends_on_path):
        last = text.rstrip().rsplit("\n", 1)[-1].strip()
        raise ReportError(f"{layout.source}: the report ends without the blank lines Vivado closes it with: it is "
                          f"cut short (last line: '{last[:60]}')")
