"""Ways a report_timing_summary can go wrong, applied to a real or fixture report, each of which
kabe's gate must FAIL (a pass is a false pass, the worst bug kabe can have).

Used by tests/parsers/test_false_passes.py and by scripts/parser_corpus_table.py (which counts
false passes over every fixture and every kind).

Kinds (each a function text -> list of mutated texts, [] when it does not apply):
  truncated         cut short at offsets spread over the file, every cut removing real content
  hold_only         the summary says hold fails (WHS/THS negative, failing endpoints), nothing else
  pulse_width_only  the summary says pulse width fails, nothing else
  no_clocks         no clock constrained: NA numbers, "There are no user specified timing constraints."
  verdict_flipped   a failing report whose verdict line says met, and a met one whose line says not met
  verdict_deleted   the verdict line removed
  nul_bytes         a NUL byte inside the text (bytes: goes through the file path, as `kabe gate` does)
  clock_row_negative  one clock's Intra Clock Table WNS set negative, the summary left as it was
  total_negative    the summary's TNS, THS or TPWS set negative, its WNS/WHS/WPWS and verdict left as they were
  appended          a second run after the first (report_timing_summary -append), the second failing
  cut_padded        cut inside Timing Details just after a section's header (and after its Setup
                    line), then padded with the blank lines Vivado ends a report with
  cut_between_paths cut just after a whole path (its slack line) that is not the report's last,
                    the file ending there (as after an end-of-file fixer) or padded with blank lines
  cut_then_trailer  cut inside Timing Details, then a Vivado log line or another report after it
                    (a log and a report joined, or `cat a.rpt b.rpt`)
"""

from __future__ import annotations

import re

VERDICT_MET = "All user specified timing constraints are met."
VERDICT_NOT_MET = "Timing constraints are not met."
VERDICT_NONE = "There are no user specified timing constraints."


def _lines(text: str) -> list[str]:
    return text.replace("\r\n", "\n").split("\n")


def _dts_row(lines: list[str]) -> tuple[int, int]:
    """(index of the dash rule, index of the value row) of the Design Timing Summary."""
    t = next(i for i, ln in enumerate(lines) if ln.rstrip() == "| Design Timing Summary")
    d = next(i for i in range(t + 2, t + 12) if lines[i].strip().startswith("-------") and "  -" in lines[i])
    return d, d + 1


def set_summary(text: str, values: dict[str, str], verdict: str | None = None) -> str:
    """The Design Timing Summary row with some cells replaced (right-aligned in their columns), and
    optionally its verdict line replaced."""
    lines = _lines(text)
    d, r = _dts_row(lines)
    titles = lines[d - 1]
    spans = [m.span() for m in re.finditer(r"-+", lines[d])]
    names = []
    for s, e in spans:
        names.append(titles[s:e].strip())
    row = lines[r].ljust(max(e for _, e in spans))
    for name, value in values.items():
        s, e = spans[names.index(name)]
        old = next((m for m in re.finditer(r"\S+", row) if abs(m.end() - e) <= 1), None)
        if old is not None:
            row = row[:old.start()] + " " * (old.end() - old.start()) + row[old.end():]
        row = row[:e - len(value)] + value + row[e:]
    lines[r] = row
    if verdict is not None:
        v = next(i for i in range(r + 1, r + 6) if lines[i].strip() in (VERDICT_MET, VERDICT_NOT_MET, VERDICT_NONE))
        lines[v] = verdict
    return "\n".join(lines)


def truncated(text: str, samples: int = 48) -> list[str]:
    """Cuts at `samples` offsets spread over the text plus a few near its end (where a cut is hardest
    to see), each before the last non-blank character so that real content is lost."""
    last = len(text.rstrip())
    if last < 2:
        return []
    offs = {last * k // samples for k in range(1, samples)}
    tail = text[:last]
    for back in (1, 2, 3, 5, 8, 13):  # the ends of the last few lines
        cut = len(tail)
        for _ in range(back):
            cut = tail.rfind("\n", 0, cut)
            if cut < 0:
                break
        if cut > 0:
            offs.add(cut + 1)
            offs.add(cut)
    offs.add(last - 1)
    return [text[:o] for o in sorted(o for o in offs if 0 < o < last)]


def hold_only(text: str) -> list[str]:
    return [set_summary(text, {"WHS(ns)": "-0.052", "THS(ns)": "-0.104", "THS Failing Endpoints": "2"},
                        VERDICT_NOT_MET)]


def pulse_width_only(text: str) -> list[str]:
    return [set_summary(text, {"WPWS(ns)": "-0.144", "TPWS(ns)": "-0.288", "TPWS Failing Endpoints": "2"},
                        VERDICT_NOT_MET)]


def no_clocks(text: str) -> list[str]:
    """What Vivado prints without a create_clock: NA everywhere, no clock and no table rows, no
    paths, the "no constraints" verdict."""
    na = {k: "NA" for k in ("WNS(ns)", "TNS(ns)", "TNS Failing Endpoints", "TNS Total Endpoints", "WHS(ns)",
                            "THS(ns)", "THS Failing Endpoints", "THS Total Endpoints", "WPWS(ns)", "TPWS(ns)",
                            "TPWS Failing Endpoints", "TPWS Total Endpoints")}
    lines = _lines(set_summary(text, na, VERDICT_NONE))
    out, table, k = [], None, 0
    while k < len(lines):
        ln = lines[k]
        if ln.startswith("| ") and k + 1 < len(lines) and lines[k + 1].startswith("| -"):
            table = ln[2:].strip()
            if table == "Timing Details":
                out += lines[k:k + 3] + ["", "", "", ""]
                break
        out.append(ln)
        if table in ("Clock Summary", "Intra Clock Table", "Inter Clock Table", "Other Path Groups Table") \
                and ln.strip().startswith("-----") and "  -" in ln:
            k += 1
            while k < len(lines) and lines[k].strip():  # the rows under the dash rule go
                k += 1
            continue
        k += 1
    return ["\n".join(out)]


def verdict_flipped(text: str) -> list[str]:
    lines = _lines(text)
    _, r = _dts_row(lines)
    v = next((i for i in range(r + 1, r + 6) if lines[i].strip() in (VERDICT_MET, VERDICT_NOT_MET)), None)
    if v is None:
        return []
    lines[v] = VERDICT_NOT_MET if lines[v].strip() == VERDICT_MET else VERDICT_MET
    return ["\n".join(lines)]


def verdict_deleted(text: str) -> list[str]:
    lines = _lines(text)
    _, r = _dts_row(lines)
    v = next((i for i in range(r + 1, r + 6) if lines[i].strip() in (VERDICT_MET, VERDICT_NOT_MET, VERDICT_NONE)), None)
    if v is None:
        return []
    del lines[v]
    return ["\n".join(lines)]


def nul_bytes(text: str) -> list[bytes]:
    data = text.encode()
    return [data[:k] + b"\x00" + data[k:] for k in (len(data) // 3, max(0, len(data.rstrip()) - 5))]


def clock_row_negative(text: str) -> list[str]:
    """The first Intra Clock Table row's WNS (its first number) replaced by -0.512, right-aligned where
    it stood: a clock failing setup under a summary that still says it passes."""
    lines = _lines(text)
    try:
        t = next(i for i, ln in enumerate(lines) if ln.rstrip() == "| Intra Clock Table")
        d = next(i for i in range(t + 2, t + 12) if lines[i].strip().startswith("-----") and "  -" in lines[i])
    except StopIteration:
        return []
    row = lines[d + 1]
    m = next((m for m in re.finditer(r"\S+", row) if m.start() > 0 and re.fullmatch(r"-?\d+\.\d+", m.group())), None)
    if m is None or not row.strip():
        return []
    value = "-0.512".rjust(m.end() - m.start())
    lines[d + 1] = row[:m.end() - len(value)] + value + row[m.end():]
    return ["\n".join(lines)]


def total_negative(text: str) -> list[str]:
    return [set_summary(text, {name: "-1.000"}) for name in ("TNS(ns)", "THS(ns)", "TPWS(ns)")
            if name in _lines(text)[_dts_row(_lines(text))[0] - 1]]


def appended(text: str) -> list[str]:
    """What `report_timing_summary -append` leaves: this run, then another that fails hold."""
    return [text.rstrip("\n") + "\n\n\n" + hold_only(text)[0]]


def cut_padded(text: str) -> list[str]:
    """A cut that leaves the file ending as a whole report does: after a Timing Details section's
    "To Clock:" line, or after the Setup line under it, followed by blank lines."""
    lines = _lines(text)
    try:
        details = next(i for i, ln in enumerate(lines) if ln.rstrip() == "| Timing Details")
    except StopIteration:
        return []
    out = []
    for i in range(details, len(lines)):
        if lines[i].strip().startswith("To Clock:"):
            out.append("\n".join(lines[:i + 1]) + "\n" * 6)
            setup = next((j for j in range(i + 1, min(i + 6, len(lines)))
                          if lines[j].strip().startswith(("Setup :", "Max Delay"))), None)
            if setup is not None:
                out.append("\n".join(lines[:setup + 1]) + "\n" * 6)
    return out


def cut_then_trailer(text: str, samples: int = 12) -> list[str]:
    """Cuts spread over Timing Details, each followed by something that is not blank."""
    at = text.find("| Timing Details")
    last = len(text.rstrip())
    if at < 0 or last - at < samples:
        return []
    offs = sorted({at + (last - at) * k // samples for k in range(1, samples)})
    trailers = ("\nINFO: [Common 17-206] Exiting Vivado at Tue Mar  4 09:13:01 2025...\n\n\n\n",
                "\n" + text[:at].rstrip() + "\n\n\n\n")  # the report's own head, as a second report
    return [text[:o] + t for o in offs for t in trailers]


_SLACK_LINE = re.compile(r"^\s+slack(\s+\(VIOLATED\))?\s+-?[0-9.]+\s*$")


def cut_between_paths(text: str, spread: int = 6, last: int = 8) -> list[str]:
    """Cuts after a path's closing slack line (any but the last path's): what is left reads whole,
    up to the missing paths (and tables) after it. The last few path ends (where only the path count
    can tell) and a few spread over the rest, so a report of hundreds of paths stays a few mutants."""
    lines = _lines(text)
    ends = [i for i, ln in enumerate(lines) if _SLACK_LINE.match(ln)][:-1]
    picked = sorted(set(ends[-last:]) | set(ends[::max(1, len(ends) // spread)]))
    return ["\n".join(lines[:i + 1]) + pad for i in picked for pad in ("\n", "\n" * 6)]


KINDS = {
    "truncated": truncated, "hold_only": hold_only, "pulse_width_only": pulse_width_only,
    "no_clocks": no_clocks, "verdict_flipped": verdict_flipped, "verdict_deleted": verdict_deleted,
    "nul_bytes": nul_bytes, "clock_row_negative": clock_row_negative, "total_negative": total_negative,
    "appended": appended, "cut_padded": cut_padded, "cut_between_paths": cut_between_paths,
    "cut_then_trailer": cut_then_trailer,
}


def must_fail(kind: str, text: str) -> list:
    """The mutants of `text` of that kind that must fail the gate. A verdict flip only must fail
    when it turns a failing report's line into "met" or a met report's into "not met" (both are
    disagreements); every other kind must always fail."""
    return KINDS[kind](text)
