"""Vivado `report_timing` path details -> a list of path dicts.

Each path starts at a `Slack (MET) :` / `Slack (VIOLATED) :` / `Slack: inf` line and carries a
header (Source, Destination, Path Group, Path Type, Requirement, Data Path Delay, Logic Levels,
Clock Path Skew, Clock Uncertainty, ...) and usually a delay table. The same blocks appear in
report_timing_summary's "Timing Details"; that parser calls `parse_path_blocks` here.

A path is accepted only when it is complete: every header field a path of its kind always has,
the delay table (Vivado's default full path type always prints it), its data-path section
closed by its separator and ending at the destination, and, for a constrained path, the closing
`slack` line agreeing with the header. A report cut inside a path
raises ReportError instead of returning a half-read path.

Path dict keys: slack_ns (None for an unconstrained "inf" path), status ("MET" | "VIOLATED" |
"UNCONSTRAINED"), met (bool | None), source, destination, source_clock, destination_clock,
path_group, path_type, delay_type ("max" | "min"), requirement_ns, data_path_delay_ns,
logic_delay_ns, route_delay_ns, logic_levels, logic_level_cells ({"LUT6": 5, ...}),
clock_path_skew_ns, clock_uncertainty_ns, input_delay_ns, output_delay_ns, timing_exception,
required_time_ns, arrival_time_ns, cells ([{"name", "pin", "type", "delay_ns"}]),
steps (the data path row by row, for the estimator's calibration: {"kind": "cell", "type", "arc",
"delay_ns"} | {"kind": "net", "fanout", "state" (routed/estimated/unplaced; None when not
printed), "delay_ns"} | a last {"kind": "end", "type" (None for a port), "pin"}).
"""

from __future__ import annotations

import re

from kabe.parsers import ReportError
from kabe.parsers._vivado_common import command_name, parse_header, read_report, require_text

_SLACK_RE = re.compile(
    r"^Slack(?:\s*\((?P<status>MET|VIOLATED)\))?\s*:\s*(?P<val>inf|-?\d+(?:\.\d+)?)(?:ns)?\b")
_FIELD_RE = re.compile(r"^  (?P<key>[A-Z][A-Za-z ]*?):\s+(?P<val>.*?)\s*$")
_NS_RE = re.compile(r"^(-?\d+(?:\.\d+)?)ns\b")
_DPD_RE = re.compile(
    r"^(?P<tot>-?\d+(?:\.\d+)?)ns\s+\(logic\s+(?P<logic>-?\d+(?:\.\d+)?)ns\s+\((?P<lp>[\d.]+)%\)"
    r"\s+route\s+(?P<route>-?\d+(?:\.\d+)?)ns\s+\((?P<rp>[\d.]+)%\)\)")
_LL_RE = re.compile(r"^(?P<n>\d+)(?:\s+\((?P<detail>[^)]*)\))?\s*$")
_CLOCKED_RE = re.compile(r"clocked by (\S+)")
_CLOCK_SOURCE_RE = re.compile(r"clock source '([^']+)'")
_LONG_SEP_RE = re.compile(r"^\s+-{20,}\s+-{5,}\s*$")
_ROW_NUM_RE = re.compile(
    r"^(?P<pre>.*?)\s+(?P<incr>-?\d+\.\d+)\s+(?P<path>-?\d+\.\d+)\s(?P<edge>[rf ])\s*(?P<res>.*?)\s*$")
_FOOT_RE = re.compile(r"^\s+(required time|arrival time|slack)\s+(-?\d+\.\d+)\s*$")
_CELL_RE = re.compile(r"^(?:\S+\s+)?(?P<type>[A-Za-z][\w]*)\s+\((?P<arc>[^)]*)\)\s*$")
_NET_RE = re.compile(r"^net \(fo=(?P<fo>\d+)(?:,\s*(?P<state>\w+))?\)")
_SITE_RE = re.compile(r"_X\d+Y\d+$|^[A-Z]{1,2}\d{1,2}$")  # SLICE_X51Y71, package pin H9

_TOL = 0.0015  # Vivado prints 3 decimals


def _f(s: str) -> float:
    return float(s)


def _ns(val: str, *, key: str, where: str) -> float:
    m = _NS_RE.match(val)
    if not m:
        raise ReportError(f"{where}: '{key}' value {val!r} is not a delay in ns")
    return float(m.group(1))


def parse_path_blocks(lines: list[str], *, source: str, first_line: int = 1) -> list[dict]:
    """Every path in `lines` (a whole report_timing, or one Timing Details group)."""
    starts = [i for i, ln in enumerate(lines) if _SLACK_RE.match(ln)]
    paths = []
    for k, i in enumerate(starts):
        end = starts[k + 1] if k + 1 < len(starts) else len(lines)
        # a path block also ends where a new titled section begins (Min Delay Paths, PW checks)
        for j in range(i + 1, end):
            ln = lines[j]
            if ln and not ln[0].isspace() and not _SLACK_RE.match(ln):
                end = j
                break
        paths.append(_parse_one(lines[i:end], source=source, line_no=first_line + i))
    return paths


def _parse_one(block: list[str], *, source: str, line_no: int) -> dict:
    where = f"{source}: path at line {line_no}"
    m = _SLACK_RE.match(block[0])
    status = m.group("status")
    if m.group("val") == "inf":
        slack = None
        status = "UNCONSTRAINED"
    else:
        slack = float(m.group("val"))
        if status is None:
            status = "MET" if slack >= 0 else "VIOLATED"
    if status == "MET" and slack is not None and slack < 0 or status == "VIOLATED" and slack >= 0:
        raise ReportError(f"{where}: slack {slack} contradicts its label ({status})")

    fields: dict[str, str] = {}
    desc: dict[str, list[str]] = {}
    last = None
    table_at = None
    for j, ln in enumerate(block[1:], start=1):
        if ln.strip().startswith("Location") and "Delay type" in ln:
            table_at = j
            break
        fm = _FIELD_RE.match(ln)
        if fm:
            last = fm.group("key")
            fields.setdefault(last, fm.group("val"))
            continue
        if ln.startswith("    ") and last in ("Source", "Destination") and ln.strip().startswith("("):
            desc.setdefault(last, []).append(ln.strip())

    constrained = slack is not None
    required = ["Source", "Destination", "Path Group", "Path Type", "Data Path Delay", "Logic Levels"]
    if constrained:
        required.append("Requirement")
    missing = [k for k in required if k not in fields]
    if missing:
        raise ReportError(f"{where}: path header is missing {', '.join(missing)} "
                          f"(report cut short or not a Vivado path)")

    p: dict = {
        "slack_ns": slack,
        "status": status,
        "met": None if slack is None else slack >= 0,
        "source": fields["Source"].split()[0] if fields["Source"].split() else "",
        "destination": fields["Destination"].split()[0] if fields["Destination"].split() else "",
        "path_group": fields["Path Group"],
        "path_type": fields["Path Type"],
    }
    pt = fields["Path Type"]
    p["delay_type"] = "max" if "Max" in pt else "min" if "Min" in pt else None
    if p["delay_type"] is None:
        raise ReportError(f"{where}: Path Type {pt!r} is neither Max (setup) nor Min (hold)")

    def clock_of(key):
        text = " ".join(desc.get(key, []))
        cm = _CLOCKED_RE.search(text) or _CLOCK_SOURCE_RE.search(text)
        return cm.group(1) if cm else None

    p["source_clock"] = clock_of("Source")
    p["destination_clock"] = clock_of("Destination")
    p["requirement_ns"] = _ns(fields["Requirement"], key="Requirement", where=where) \
        if "Requirement" in fields else None

    dm = _DPD_RE.match(fields["Data Path Delay"])
    if not dm:
        raise ReportError(f"{where}: Data Path Delay {fields['Data Path Delay']!r} is not "
                          f"'<t>ns  (logic <l>ns (<p>%)  route <r>ns (<q>%))'")
    p["data_path_delay_ns"] = _f(dm.group("tot"))
    p["logic_delay_ns"] = _f(dm.group("logic"))
    p["route_delay_ns"] = _f(dm.group("route"))
    if abs(p["logic_delay_ns"] + p["route_delay_ns"] - p["data_path_delay_ns"]) > 2 * _TOL:
        raise ReportError(f"{where}: logic {p['logic_delay_ns']} + route {p['route_delay_ns']} "
                          f"!= data path delay {p['data_path_delay_ns']}")

    lm = _LL_RE.match(fields["Logic Levels"])
    if not lm:
        raise ReportError(f"{where}: Logic Levels {fields['Logic Levels']!r} is not a count")
    p["logic_levels"] = int(lm.group("n"))
    detail = {}
    for item in (lm.group("detail") or "").split():
        name, _, n = item.rpartition("=")
        if name and n.isdigit():
            detail[name] = int(n)
    p["logic_level_cells"] = detail

    for key, out in (("Clock Path Skew", "clock_path_skew_ns"),
                     ("Clock Uncertainty", "clock_uncertainty_ns"),
                     ("Input Delay", "input_delay_ns"), ("Output Delay", "output_delay_ns")):
        p[out] = _ns(fields[key], key=key, where=where) if key in fields else None
    p["timing_exception"] = fields.get("Timing Exception")

    p["required_time_ns"] = p["arrival_time_ns"] = None
    p["cells"] = []
    if table_at is None:
        # header fields come before the table; a block without one was cut short
        raise ReportError(f"{where}: path has no 'Location  Delay type' table (report cut short)")
    _parse_table(block[table_at:], p, where=where, constrained=constrained)
    return p


def _parse_table(rows: list[str], p: dict, *, where: str, constrained: bool) -> None:
    long_seps = [i for i, ln in enumerate(rows) if _LONG_SEP_RE.match(ln)]
    foot = {}
    for ln in rows:
        fm = _FOOT_RE.match(ln)
        if fm:
            foot[fm.group(1)] = float(fm.group(2))
    if constrained:
        if "slack" not in foot or "required time" not in foot or "arrival time" not in foot:
            raise ReportError(f"{where}: delay table ends before its required/arrival/slack lines "
                              f"(report cut short)")
        if abs(foot["slack"] - p["slack_ns"]) > _TOL:
            raise ReportError(f"{where}: table slack {foot['slack']} != header slack {p['slack_ns']}")
        # setup prints "required  R / arrival -A"; hold prints "required -R / arrival A"
        sign = 1 if p["delay_type"] == "max" else -1
        p["required_time_ns"] = sign * foot["required time"]
        p["arrival_time_ns"] = -sign * foot["arrival time"]
    # the data path: the separator-bounded section whose last row is the destination pin
    dest = p["destination"]
    section = None
    for a, b in zip(long_seps, long_seps[1:]):
        body = [ln for ln in rows[a + 1:b] if ln.strip()]
        if body and _resource(body[-1]) == dest:
            section = rows[a + 1:b]
    if section is None:
        raise ReportError(f"{where}: delay table has no complete data path ending at {dest} "
                          f"(report cut short?)")
    pending = None
    steps = p["steps"] = []
    for ln in section:
        nm = _ROW_NUM_RE.match(ln)
        pre = (nm.group("pre") if nm else ln).strip()
        if pre:
            cm = _CELL_RE.match(pre)
            pending = cm if (cm and cm.group("arc").startswith("Prop_")) else None
            net = _NET_RE.match(pre)
            if nm and net:
                steps.append({"kind": "net", "fanout": int(net.group("fo")), "delay_ns": float(nm.group("incr")),
                              "state": net.group("state")})
        if nm and pending is not None:
            res = nm.group("res")
            p["cells"].append({"name": res.rsplit("/", 1)[0] if "/" in res else res, "pin": res,
                               "type": pending.group("type"), "delay_ns": float(nm.group("incr"))})
            steps.append({"kind": "cell", "type": pending.group("type"), "arc": pending.group("arc"),
                          "delay_ns": float(nm.group("incr"))})
            pending = None
    # the destination row has no delay: "<site>  FDRE   r  .../D" (type absent for ports)
    toks = [t for t in [ln for ln in section if ln.strip()][-1].split()[:-1]
            if t not in ("r", "f", "(IN)", "(OUT)") and not _SITE_RE.search(t)]
    steps.append({"kind": "end", "type": toks[-1] if toks else None,
                  "pin": dest.rsplit("/", 1)[-1] if "/" in dest else None})


def _resource(row: str) -> str | None:
    s = row.rstrip()
    # rows end with "<edge> <resource>"; the edge flag sits in a fixed column, so take the text
    # after the last run of 2+ spaces
    parts = re.split(r"\s{2,}", s.strip())
    if not parts:
        return None
    res = parts[-1]
    res = re.sub(r"^[rf]\s+", "", res)
    res = re.sub(r"\s+\((IN|OUT)\)$", "", res)
    return res


def parse(text: str, source: str = "<report_timing>") -> list[dict]:
    """A `report_timing` report -> its paths, in report order (worst first, as Vivado sorts)."""
    text = require_text(text, source)
    header = parse_header(text)
    cmd = command_name(header)
    if cmd is not None and cmd != "report_timing":
        raise ReportError(f"{source}: header says Command {cmd}, not report_timing")
    if cmd is None and "Timing Report" not in text:
        raise ReportError(f"{source}: no 'Command : report_timing' header and no 'Timing Report' "
                          f"title; not a Vivado report_timing report")
    lines = text.split("\n")
    paths = parse_path_blocks(lines, source=source)
    if not paths:
        raise ReportError(f"{source}: report_timing report contains no timing path (no 'Slack' "
                          f"line); empty or cut short")
    return paths


def parse_file(path) -> list[dict]:
    return parse(read_report(path), str(path))


def worst(paths: list[dict], delay_type: str = "max") -> dict | None:
    """The constrained path of that delay type with the smallest slack, or None."""
    cands = [p for p in paths if p["delay_type"] == delay_type and p["slack_ns"] is not None]
    return min(cands, key=lambda p: p["slack_ns"]) if cands else None
