"""Tell a report's kind from its content, and parse a report file with the right parser.

Kinds: "vivado_timing_summary", "vivado_utilization", "vivado_utilization_hier",
"vivado_timing", "yosys_stat", "kabe_timing". Vivado reports are told by the
`| Command : report_...` header line (the authoritative signal), falling back to their table
titles when the header is absent. yosys_stat / kabe_timing are told by their own modules'
`looks_like(text)` when those define one, else by the markers below.

parse_file(path) -> {"kind": ..., "path": ..., "record": <that parser's output>} (for
"vivado_timing" the record is a list of paths).
A missing, empty or unrecognisable file raises ReportError("cannot tell what report ...").
"""

from __future__ import annotations

import importlib
import json
import re
from pathlib import Path

from kabe.parsers import ReportError
from kabe.parsers._vivado_common import command_name, parse_header

KINDS = ("vivado_timing_summary", "vivado_utilization", "vivado_utilization_hier",
         "vivado_timing", "vivado_clock_interaction", "yosys_stat", "kabe_timing")

_OTHER_MODULES = {"yosys_stat": "kabe.parsers.yosys_stat", "kabe_timing": "kabe.parsers.kabe_timing"}


def _looks_like(kind: str, text: str) -> bool | None:
    try:
        mod = importlib.import_module(_OTHER_MODULES[kind])
    except ImportError:
        return None
    fn = getattr(mod, "looks_like", None)
    if fn is None:
        return None
    return bool(fn(text))


def _yosys_markers(text: str) -> bool:
    if "Printing statistics." in text:
        return True
    if re.search(r"^=== \S.* ===\s*$", text, re.M) and re.search(
            r"(Number of cells:|^\s+\d+\s+cells\s*$)", text, re.M):
        return True
    head = text.lstrip()[:1]
    if head == "{":
        try:
            data = json.loads(text)
        except ValueError:
            return False
        mods = data.get("modules") if isinstance(data, dict) else None
        return isinstance(mods, dict) and any(
            isinstance(m, dict) and "num_cells" in m for m in mods.values())
    return False


def _kabe_timing_markers(text: str) -> bool:
    s = text.lstrip()
    if s.startswith("{"):
        try:
            data = json.loads(s)
        except ValueError:
            return False
        return isinstance(data, dict) and str(data.get("schema", "")).startswith("kabe.timing")
    first = s.split("\n", 1)[0].lower()
    return first.startswith(("kabe pre-route timing estimate", "kabe timing", "kabe-timing",
                             "# kabe timing", "kabe.timing"))


def detect(text: str) -> str:
    """The kind of report `text` is; ReportError when it cannot be told."""
    if not isinstance(text, str) or not text.strip():
        raise ReportError("cannot tell what report this is: it is empty")
    head = parse_header(text)
    cmd = command_name(head)
    if cmd == "report_timing_summary":
        return "vivado_timing_summary"
    if cmd == "report_utilization":
        args = head.get("command", "").split()
        if "-hierarchical" in args or re.search(r"^1\. Utilization by Hierarchy\s*$", text, re.M):
            return "vivado_utilization_hier"
        return "vivado_utilization"
    if cmd == "report_timing":
        return "vivado_timing"
    if cmd == "report_clock_interaction":
        return "vivado_clock_interaction"
    if cmd is not None:
        raise ReportError(f"cannot tell what report this is: Vivado command {cmd!r} is not one "
                          f"kabe parses")
    # no Vivado header: titles
    if re.search(r"^\| Design Timing Summary\s*$", text, re.M):
        return "vivado_timing_summary"
    if re.search(r"^\d+\.\s+Utilization by Hierarchy\s*$", text, re.M):
        return "vivado_utilization_hier"
    if "Utilization Design Information" in text:
        return "vivado_utilization"
    if re.search(r"^Timing Report\s*$", text, re.M) and re.search(r"^Slack", text, re.M):
        return "vivado_timing"
    for kind, markers in (("kabe_timing", _kabe_timing_markers), ("yosys_stat", _yosys_markers)):
        verdict = _looks_like(kind, text)
        if verdict or (verdict is None and markers(text)):
            return kind
    raise ReportError("cannot tell what report this is: no Vivado '| Command : report_...' "
                      "header, no known table title, not yosys stat or kabe timing output")


def _parse_other(kind: str, path: Path, text: str):
    """yosys_stat / kabe_timing live in modules written alongside this one; call the entry point
    each offers: yosys_stat.parse_utilization(path) (the utilization record) or parse(path);
    kabe_timing.parse(path) or parse_text(text, origin)."""
    mod = importlib.import_module(_OTHER_MODULES[kind])
    names = ("parse_utilization", "parse") if kind == "yosys_stat" else ("parse", "parse_text")
    for name in names:
        fn = getattr(mod, name, None)
        if fn is None:
            continue
        if name == "parse_text":
            return fn(text, str(path))
        return fn(path)
    raise ReportError(f"{path}: {_OTHER_MODULES[kind]} offers no parse entry point")


def _parser(kind: str):
    if kind == "vivado_timing_summary":
        from kabe.parsers.vivado_timing_summary import parse
    elif kind == "vivado_utilization":
        from kabe.parsers.vivado_utilization import parse
    elif kind == "vivado_utilization_hier":
        from kabe.parsers.vivado_utilization import parse_hierarchical as parse
    elif kind == "vivado_timing":
        from kabe.parsers.vivado_timing_paths import parse
    elif kind == "vivado_clock_interaction":
        from kabe.parsers.vivado_clock_interaction import parse
    else:
        raise ValueError(kind)
    return parse


def parse_file(path) -> dict:
    """{"kind", "path", "record"} for the report at `path`."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise ReportError(f"cannot tell what report {p} is: the file does not exist") from None
    except OSError as e:
        raise ReportError(f"cannot tell what report {p} is: it cannot be read ({e})") from None
    text = data.decode("utf-8", errors="replace")
    if not text.strip():
        raise ReportError(f"cannot tell what report {p} is: the file is empty")
    try:
        kind = detect(text)
    except ReportError as e:
        msg = str(e).replace("cannot tell what report this is", f"cannot tell what report {p} is")
        raise ReportError(msg) from None
    if kind in _OTHER_MODULES:
        record = _parse_other(kind, p, text)
    else:
        record = _parser(kind)(text, str(p))
    return {"kind": kind, "path": str(p), "record": record}
