"""Vivado `report_timing -path_type summary` -> a list of path dicts (start, end and slack only).

The summary form has no `Slack (MET)` blocks, only a table per report:

    Startpoint                     Endpoint                       Slack(ns)
    ----------------------------------------------------------------------------
    count_reg[1]/C                 count_reg[24]/CE               6.553
    i_dsp/sum1_reg[9]/C            i_dsp/genblk4[7].iq_2_outputs/.../delta_reg[19]/D
                                                                  -239.507
    btn[1]                         led[0]                         inf

A name longer than its column pushes the rest of the row onto the next lines, indented to the
column it belongs to, so a row is read as a stream of three tokens (Vivado's names hold no
spaces), not line by line. A row left incomplete by a cut, or a slack that is not a number or
`inf`, refuses the report: a table cut between two rows cannot be told from a shorter one, as in
the full form.

Path dict keys: slack_ns (None for `inf`, an unconstrained path), status ("MET" | "VIOLATED" |
"UNCONSTRAINED"), met, delay_type ("max" | "min", from the command's -delay_type; None for
min_max, whose rows do not say which they are), check ("setup" | "hold" | None), source,
destination, line (where the row starts), path_type_summary (True: the fields of the full form
are not in the report).
"""

from __future__ import annotations

import re

from kabe.parsers import ReportError
from kabe.parsers.report_file import Report

_HEADER = re.compile(r"^Startpoint\s+Endpoint\s+Slack(?:\(ns\))?\s*$")
_RULE = re.compile(r"^-{20,}\s*$")
_SLACK = re.compile(r"^-?[0-9]+(?:\.[0-9]+)?$")


def is_summary(rep: Report) -> bool:
    """The report is report_timing's summary form: its command says so, or its table header is there."""
    words = rep.header.get("command", "").split()
    if "-path_type" in words and words[words.index("-path_type") + 1:][:1] == ["summary"]:
        return True
    return any(_HEADER.match(ln) for ln in rep.lines if ln.startswith("Startpoint"))


def _delay_type(rep: Report) -> str | None:
    words = rep.header.get("command", "").split()
    value = words[words.index("-delay_type") + 1] if "-delay_type" in words[:-1] else "max"
    return value if value in ("max", "min") else None


def parse(rep: Report) -> list[dict]:
    delay_type = _delay_type(rep)
    check = {"max": "setup", "min": "hold"}.get(delay_type)
    paths: list[dict] = []
    tables = [i for i, ln in enumerate(rep.lines) if _HEADER.match(ln)]
    if not tables:
        raise ReportError(f"{rep.source}: report_timing -path_type summary without its "
                          f"'Startpoint  Endpoint  Slack(ns)' table; empty or cut short")
    for head in tables:
        if head + 1 >= len(rep.lines) or not _RULE.match(rep.lines[head + 1]):
            raise ReportError(f"{rep.source}:{head + 2}: the summary table's header is not followed by "
                              f"its dashed rule; cut short or a format kabe does not know")
        tokens: list[tuple[str, int]] = []
        for n in range(head + 2, len(rep.lines)):
            line = rep.lines[n]
            if not line.strip():
                break  # the table ends at its first blank line
            tokens += [(tok, n + 1) for tok in line.split()]
        if len(tokens) % 3:
            raise ReportError(f"{rep.source}:{tokens[-1][1] if tokens else head + 2}: the summary table's last "
                              f"row is incomplete ({len(tokens) % 3} of start, end, slack): the report is cut short")
        for k in range(0, len(tokens), 3):
            (start, line_no), (end, _), (slack, at) = tokens[k:k + 3]
            if slack == "inf":
                value, status = None, "UNCONSTRAINED"
            elif _SLACK.match(slack):
                value = float(slack)
                status = "MET" if value >= 0 else "VIOLATED"
            else:
                raise ReportError(f"{rep.source}:{at}: {slack!r} where the summary table has a slack "
                                  f"(a number or inf): a row kabe cannot read")
            paths.append({"slack_ns": value, "status": status, "met": None if value is None else value >= 0,
                          "delay_type": delay_type, "check": check, "source": start, "destination": end,
                          "line": line_no, "path_type_summary": True})
    if not paths:
        raise ReportError(f"{rep.source}: the report_timing summary table lists no path; empty or cut short")
    return paths
