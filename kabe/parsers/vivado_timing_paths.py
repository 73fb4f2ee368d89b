"""Vivado `report_timing` path details -> a list of path dicts.

Each path starts at a `Slack (MET) :` / `Slack (VIOLATED) :` / `Slack: inf` line and carries a
header (Source, Destination, Path Group, Path Type, Requirement, Data Path Delay, Logic Levels,
Clock Path Skew, Clock Uncertainty, ...) and a delay table. The same blocks appear in
report_timing_summary's "Timing Details"; that parser calls `path_blocks` here.

Check kinds: the Path Type names the check, "Setup (Max at Slow Process Corner)", "Hold (Min
at ...)", "Recovery (Max ...)" and "Removal (Min ...)" (asynchronous set/reset pins, PRE/CLR,
often `(IS_INVERTED)`); versions before 2016 print only "Max at ..." / "Min at ...", read as
setup / hold. Each path gets "check" (setup | hold | recovery | removal) and "delay_type"
(max | min).

A path is accepted only when it is complete: every header field a path of its kind always has,
the delay table with its data-path section closed by its separator and ending at the
destination, and, for a constrained path, the closing `slack` line agreeing with the header.
`parse` (a whole report_timing report) raises ReportError on the first path that is not;
`path_blocks` hands back each block's result or its error, so report_timing_summary can treat
an unreadable path as a warning (the summary tables carry the verdict).

Path dict keys: slack_ns (None for an unconstrained "inf" path), status ("MET" | "VIOLATED" |
"UNCONSTRAINED"), met (bool | None), check, delay_type, source, destination, source_clock,
destination_clock, path_group, path_type, requirement_ns, data_path_delay_ns, logic_delay_ns,
route_delay_ns, logic_levels, logic_level_cells ({"LUT6": 5, ...}), clock_path_skew_ns,
clock_uncertainty_ns, input_delay_ns, output_delay_ns, timing_exception, required_time_ns,
arrival_time_ns, cells ([{"name", "pin", "type", "delay_ns"}]), line (where the path starts),
steps (the data path row by row, for the estimator's calibration, kabe.timing.calibration_data:
{"kind": "cell", "type", "arc", "delay_ns"} | {"kind": "net", "fanout", "state" (routed /
estimated / unplaced; None when not printed), "delay_ns"} | a last {"kind": "end", "type" (None
for a port), "pin"}).

Protected IP (Versal CIPS, NoC, HBM; encrypted cores anywhere): Vivado prints `<hidden>` for a
name it may not show (kabe.parsers._vivado_common.is_hidden_name), in Source/Destination, in the
cell description under them, in the Location, Delay type and Netlist Resource(s) columns, and
(Vivado 2026.1 on Versal) in the netlist column of the closing required time / arrival time /
slack lines. Those are read as the names they stand for: a `<hidden>` Destination is matched by a
`<hidden>` last row, a `<hidden>` cell type is recorded as "<hidden>" (the timing calibration leaves
it out as a cell outside its model). Only a whole `<hidden>` counts: a closing line whose netlist
column holds anything else, or a `<hidden>` cut inside, is no closing line, so the path is cut short.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kabe.parsers import ReportError
from kabe.parsers import report_file, vivado_timing_path_summary
from kabe.parsers._vivado_common import is_count, is_hidden_name
from kabe.parsers.report_file import find_lines

# Digits are [0-9]: \d and str.isdigit() take other scripts' digits too (and '²', which int() refuses)
_FLOAT = re.compile(r"-?[0-9]+\.[0-9]+")
_NUM = re.compile(r"-?[0-9]+(?:\.[0-9]+)?")
_NS = re.compile(r"(-?[0-9]+(?:\.[0-9]+)?)ns")
_DPD = re.compile(
    r"(?P<tot>-?[0-9]+(?:\.[0-9]+)?)ns +\(logic +(?P<logic>-?[0-9]+(?:\.[0-9]+)?)ns +\([0-9.]+%\) +"
    r"route +(?P<route>-?[0-9]+(?:\.[0-9]+)?)ns +\([0-9.]+%\)\)")
_KEY = re.compile(r"[A-Z][A-Za-z ]*")
_CHECKS = {"setup": "max", "hold": "min", "recovery": "max", "removal": "min"}
_FOOTERS = ("required time", "arrival time", "slack")
_CLOCK_WORDS = {("clocked", "by"), ("clock", "source"), ("rising-edge", "clock"), ("falling-edge", "clock")}
_NET_ROW = re.compile(r"net \(fo=(?P<fo>[0-9]+)(?:, *(?P<state>\w+))?\)")
_SITE = re.compile(r"_X[0-9]+Y[0-9]+$|^[A-Z]{1,2}[0-9]{1,2}$")  # SLICE_X51Y71, package pin H9

_TOL = 0.0015  # Vivado prints 3 decimals
_SLACK_START = re.compile(r"^Slack", re.M)
MAX_BLOCK_LINES = 5000  # a real path block is ~50-300 lines; a longer one is read as unreadable


@dataclass
class Block:
    """One `Slack ...` block: its first line (1-based), its parsed path or why it is unreadable."""

    line: int
    end: int  # index (0-based, exclusive) in the lines handed to path_blocks
    slack_ns: float | None
    path: dict | None
    error: str | None
    delay_type: str | None  # max | min, read from the Path Type line even when the block is unreadable


def slack_line(line: str) -> tuple[str | None, float | None] | None:
    """(status, slack) of a `Slack (MET) :  0.452ns` / `Slack: inf` line, or None."""
    if not line.startswith("Slack"):
        return None
    head, sep, rest = line[5:].partition(":")
    if not sep:
        return None
    head = head.strip()
    status = None
    if head:
        if head not in ("(MET)", "(VIOLATED)"):
            return None
        status = head[1:-1]
    words = rest.split()
    if not words:
        return None
    val = words[0].removesuffix("ns")
    if val == "inf":
        return "UNCONSTRAINED", None
    if not _NUM.fullmatch(val):
        return None
    slack = float(val)
    return status or ("MET" if slack >= 0 else "VIOLATED"), slack


def path_blocks(lines: list[str], *, source: str, first_line: int = 1) -> list[Block]:
    """Every path block in `lines` (a whole report_timing, or a report's Timing Details)."""
    starts = [i for i in find_lines(lines, _SLACK_START, literal="Slack") if slack_line(lines[i]) is not None]
    out = []
    for k, i in enumerate(starts):
        end = starts[k + 1] if k + 1 < len(starts) else len(lines)
        # a block also ends where a new titled section begins (Min Delay Paths, PW checks, ...);
        # looked for no further than a path can run
        j = i + 1
        while j < min(end, i + MAX_BLOCK_LINES + 1):
            if lines[j][:1].strip():
                break
            j += 1
        end = j if j < end else end
        status, slack = slack_line(lines[i])
        try:
            if end - i > MAX_BLOCK_LINES:
                raise ReportError(f"{source}: path at line {first_line + i} runs {end - i:,} lines; no Vivado "
                                  f"path is that long")
            path = _parse_one(lines[i:end], source=source, line_no=first_line + i)
            out.append(Block(first_line + i, end, slack, path, None, path["delay_type"]))
        except ReportError as e:
            out.append(Block(first_line + i, end, slack, None, str(e), _delay_type_of(lines[i:end])))
    return out


def _delay_type_of(block: list[str]) -> str | None:
    for ln in block[:40]:  # the Path Type line is in the header
        s = ln.strip()
        if s.startswith("Path Type:"):
            words = s[len("Path Type:"):].replace("(", " ").split()
            kind = words[0].lower() if words else ""
            if kind in _CHECKS:
                return _CHECKS[kind]
            return "max" if "Max" in words else "min" if "Min" in words else None
    return None


def _fields(block: list[str]) -> tuple[dict[str, str], dict[str, list[str]], int | None]:
    """Header fields ("  Key:  value"), the parenthesised lines under Source/Destination, and
    where the delay table starts."""
    fields: dict[str, str] = {}
    desc: dict[str, list[str]] = {}
    last = None
    for j, ln in enumerate(block[1:], start=1):
        s = ln.strip()
        if s.startswith("Location") and "Delay type" in ln:
            return fields, desc, j
        if ln.startswith("  ") and not ln.startswith("   "):
            key, sep, val = s.partition(":")
            if sep and _KEY.fullmatch(key):
                last = key.strip()
                fields.setdefault(last, val.strip())
                continue
        if ln.startswith("    ") and last in ("Source", "Destination") and s.startswith("("):
            desc.setdefault(last, []).append(s)
    return fields, desc, None


def _ns(val: str, *, key: str, where: str) -> float:
    first = val.split()[0] if val.split() else ""
    m = _NS.fullmatch(first)
    if not m:
        raise ReportError(f"{where}: '{key}' value '{val[:60]}' is not a delay in ns")
    return float(m.group(1))


def _clock_of(desc: list[str]) -> str | None:
    """The clock named in "(... clocked by clk ...)", "(clock source 'clk' ...)" or "(recovery
    check against rising-edge clock clk ...)"."""
    words = " ".join(desc).replace("'", " ").split()
    for i in range(1, len(words) - 1):
        if (words[i - 1], words[i]) in _CLOCK_WORDS:
            return words[i + 1].rstrip(")")
    return None


def _parse_one(block: list[str], *, source: str, line_no: int) -> dict:
    where = f"{source}: path at line {line_no}"
    status, slack = slack_line(block[0])
    if slack is not None and ((status == "MET" and slack < 0) or (status == "VIOLATED" and slack >= 0)):
        raise ReportError(f"{where}: slack {slack} contradicts its label ({status})")
    fields, desc, table_at = _fields(block)
    constrained = slack is not None
    required = ["Source", "Destination", "Path Group", "Path Type", "Data Path Delay", "Logic Levels"]
    if constrained:
        required.append("Requirement")
    missing = [k for k in required if k not in fields]
    if missing:
        raise ReportError(f"{where}: path header is missing {', '.join(missing)} "
                          f"(report cut short or not a Vivado path)")
    pt = fields["Path Type"]
    first = pt.split()[0].lower() if pt.split() else ""
    if first in _CHECKS:
        check = first
    elif "Max" in pt.split() or pt.startswith("Max"):
        check = "setup"  # before 2016: "Max at Slow Process Corner"
    elif "Min" in pt.split() or pt.startswith("Min"):
        check = "hold"
    else:
        raise ReportError(f"{where}: Path Type '{pt[:60]}' names no setup/hold/recovery/removal check")
    p: dict = {
        "line": line_no, "slack_ns": slack, "status": status,
        "met": None if slack is None else slack >= 0,
        "check": check, "delay_type": _CHECKS[check],
        "source": (fields["Source"].split() or [""])[0],
        "destination": (fields["Destination"].split() or [""])[0],
        "path_group": fields["Path Group"], "path_type": pt,
        "source_clock": _clock_of(desc.get("Source", [])),
        "destination_clock": _clock_of(desc.get("Destination", [])),
        "requirement_ns": _ns(fields["Requirement"], key="Requirement", where=where)
        if "Requirement" in fields else None,
    }
    dm = _DPD.match(fields["Data Path Delay"])
    if not dm:
        raise ReportError(f"{where}: Data Path Delay '{fields['Data Path Delay'][:80]}' is not "
                          f"'<t>ns  (logic <l>ns (<p>%)  route <r>ns (<q>%))'")
    p["data_path_delay_ns"] = float(dm.group("tot"))
    p["logic_delay_ns"] = float(dm.group("logic"))
    p["route_delay_ns"] = float(dm.group("route"))
    if abs(p["logic_delay_ns"] + p["route_delay_ns"] - p["data_path_delay_ns"]) > 2 * _TOL:
        raise ReportError(f"{where}: logic {p['logic_delay_ns']} + route {p['route_delay_ns']} "
                          f"!= data path delay {p['data_path_delay_ns']}")
    ll = fields["Logic Levels"]
    count, _, detail = ll.partition("(")
    if not is_count(count.strip()):
        raise ReportError(f"{where}: Logic Levels '{ll[:60]}' is not a count")
    p["logic_levels"] = int(count)
    p["logic_level_cells"] = {}
    for item in detail.rstrip(")").split():
        name, eq, n = item.rpartition("=")
        if name and eq and not is_count(n):
            raise ReportError(f"{where}: Logic Levels '{ll[:60]}': '{item[:40]}' is not <cell>=<count>")
        if name:
            p["logic_level_cells"][name] = int(n)
    for key, out in (("Clock Path Skew", "clock_path_skew_ns"), ("Clock Uncertainty", "clock_uncertainty_ns"),
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


def _two_group_rule(line: str) -> bool:
    """The `  -----...-----    -------` rule that opens and closes the data-path section."""
    groups = line.split()
    return (len(groups) == 2 and line.startswith(" ") and all(set(g) == {"-"} for g in groups)
            and len(groups[0]) >= 20 and len(groups[1]) >= 5)


def _row(line: str):
    """(pre, incr, resource) of a delay-table row with its Incr/Path numbers, else None."""
    t = line.split()
    for i in range(len(t) - 1):
        if _FLOAT.fullmatch(t[i]) and _FLOAT.fullmatch(t[i + 1]):
            rest = t[i + 2:]
            if rest and rest[0] in ("r", "f"):
                rest = rest[1:]
            if rest and rest[-1].startswith("(") and rest[-1].endswith(")") and rest[-1][1:-1].isupper():
                rest = rest[:-1]  # (IN), (OUT), (IS_INVERTED): annotations, not the pin's name
            return " ".join(t[:i]), float(t[i]), " ".join(rest)
    return None


def _resource(line: str) -> str:
    """The pin a row ends at: after the numbers when the row has them, else its last word."""
    r = _row(line)
    if r is not None:
        return r[2]
    t = line.split()
    if t and t[-1].startswith("(") and t[-1].endswith(")") and t[-1][1:-1].isupper():
        t = t[:-1]
    return t[-1] if t else ""


def _cell_type(pre: str) -> str | None:
    """"SLICE_X1Y2  LUT6 (Prop_lut6_I0_O)" -> "LUT6" when the arc is a propagation arc."""
    t = pre.split()
    if len(t) >= 2 and t[-1].startswith("(Prop_") and t[-1].endswith(")"):
        return t[-2]
    return None


def footer(line: str) -> tuple[str, str, str | None] | None:
    """(label, number as printed, hidden name or None) of a delay table's closing `required time`,
    `arrival time` or `slack` line, else None. Vivado leaves their netlist column blank, or (an
    endpoint in protected IP, Vivado 2026.1 on Versal) prints the hidden name there:
    `slack    0.962    <hidden>`. Anything else after the number is not a closing line."""
    s = line.strip()
    for label in _FOOTERS:
        if s.startswith(label):
            rest = s[len(label):].split()
            if rest and _FLOAT.fullmatch(rest[0]) and (len(rest) == 1 or (len(rest) == 2 and is_hidden_name(rest[1]))):
                return label, rest[0], rest[1] if len(rest) == 2 else None
            return None
    return None


def _parse_table(rows: list[str], p: dict, *, where: str, constrained: bool) -> None:
    foot = {}
    for ln in rows:
        f = footer(ln)
        if f is not None:
            foot[f[0]] = float(f[1])
    if constrained:
        if any(label not in foot for label in _FOOTERS):
            raise ReportError(f"{where}: delay table ends before its required/arrival/slack lines "
                              f"(report cut short)")
        if abs(foot["slack"] - p["slack_ns"]) > _TOL:
            raise ReportError(f"{where}: table slack {foot['slack']} != header slack {p['slack_ns']}")
        # max (setup/recovery) prints "required  R / arrival -A"; min prints "required -R / arrival A"
        sign = 1 if p["delay_type"] == "max" else -1
        p["required_time_ns"] = sign * foot["required time"]
        p["arrival_time_ns"] = -sign * foot["arrival time"]
    rules = [i for i, ln in enumerate(rows) if _two_group_rule(ln)]
    dest = p["destination"]
    section = None
    for a, b in zip(rules, rules[1:]):
        body = [ln for ln in rows[a + 1:b] if ln.strip()]
        if body and _resource(body[-1]) == dest:
            section = rows[a + 1:b]
    if section is None:
        raise ReportError(f"{where}: delay table has no complete data path ending at {dest} "
                          f"(report cut short?)")
    pending = None
    steps = p["steps"] = []
    for ln in section:
        r = _row(ln)
        pre = (r[0] if r else ln).strip()
        if pre:
            pending = _cell_type(pre)
            arc = pre.split()[-1][1:-1] if pending else None
            net = _NET_ROW.match(pre)
            if r is not None and net:
                steps.append({"kind": "net", "fanout": int(net.group("fo")), "delay_ns": r[1],
                              "state": net.group("state")})
        if r is not None and pending is not None:
            res = r[2]
            p["cells"].append({"name": res.rsplit("/", 1)[0] if "/" in res else res, "pin": res,
                               "type": pending, "delay_ns": r[1]})
            steps.append({"kind": "cell", "type": pending, "arc": arc, "delay_ns": r[1]})
            pending = None
    # the destination row has no delay: "<site>  FDRE   r  .../D" (no type for a port)
    toks = [t for t in [ln for ln in section if ln.strip()][-1].split()[:-1]
            if t not in ("r", "f", "(IN)", "(OUT)") and not _SITE.search(t)]
    steps.append({"kind": "end", "type": toks[-1] if toks else None,
                  "pin": dest.rsplit("/", 1)[-1] if "/" in dest else None})


def parse(text: str, source: str = "<report_timing>") -> list[dict]:
    """A `report_timing` report -> its paths, in report order (worst first, as Vivado sorts)."""
    return parse_report(report_file.from_text(text, source))


def parse_report(rep: report_file.Report) -> list[dict]:
    report_file.expect_command(rep, "report_timing")
    if rep.command is None and not find_lines(rep.lines, re.compile(r"^[ \t]*Timing Report[ \t]*$", re.M),
                                              literal="Timing Report"):
        raise ReportError(f"{rep.source}: no 'Command : report_timing' header and no 'Timing Report' "
                          f"title; not a Vivado report_timing report")
    blocks = path_blocks(rep.lines, source=rep.source)
    if not blocks and vivado_timing_path_summary.is_summary(rep):  # -path_type summary: a table, no blocks
        return vivado_timing_path_summary.parse(rep)
    if not blocks:
        raise ReportError(f"{rep.source}: report_timing report contains no timing path (no 'Slack' "
                          f"line); empty or cut short")
    for b in blocks:
        if b.error:
            raise ReportError(b.error)
    return [b.path for b in blocks]


def parse_file(path) -> list[dict]:
    return parse_report(report_file.read(path))


def worst(paths: list[dict], delay_type: str = "max") -> dict | None:
    """The constrained path of that delay type with the smallest slack, or None."""
    cands = [p for p in paths if p["delay_type"] == delay_type and p["slack_ns"] is not None]
    return min(cands, key=lambda p: p["slack_ns"]) if cands else None
