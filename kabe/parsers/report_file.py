"""Opening a report: the one door every parser (and detection) goes through.

A report file becomes a `Report`: its text with line endings normalised, its lines, the
`| Key : value` header Vivado prints at the top, and the command named there. Everything a
parser must refuse before reading a single table is refused here, once, with the file's name:
a missing or unreadable file, NUL bytes (binary, or UTF-16 without its byte-order mark), an
empty file, and input beyond the size bounds below.

The bounds exist because parsers must answer in bounded time on any input. Every
parser is linear in the size of its input (no regex with nested quantifiers over whitespace);
these caps bound that size: MAX_BYTES for a file, MAX_LINES lines, MAX_LINE_CHARS for one line.
The largest real report in the corpus is 2.2 MB in 17 k lines of up to ~530 characters; Vivado's
biggest reports (a full-chip report_timing_summary) are a few hundred MB, hence 512 MiB and 8 M
lines. Whole-report scans are regex passes at C speed (find_lines), never a Python step per line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from kabe.base import regular_file
from kabe.parsers import ReportError

MAX_BYTES = 512 * 1024 * 1024
MAX_LINE_CHARS = 64 * 1024
MAX_LINES = 6_000_000  # real reports average 100+ characters a line: 512 MiB is ~5 M lines
HEADER_LINES = 40  # Vivado's `| Tool Version : ...` block sits in the first few lines
NEAR = 60  # how far a parser looks for what must follow a title (a table's dashes, a verdict line)



class NotOneReport(ReportError):
    """Not one whole report: two runs in one file, a section twice, a section its layout always has
    missing. `kabe gate` and `kabe parse` refuse it (exit 2) rather than judge a part of it."""


_HEADER_KEY = re.compile(r"[A-Za-z][A-Za-z ]*")  # matched with fullmatch on a stripped string: linear


@dataclass(frozen=True)
class Report:
    source: str  # the file name (or what the caller calls the text) used in every message
    text: str  # "\n" line endings
    lines: list[str] = field(repr=False)
    header: dict[str, str]  # tool_version, date, command, design, device, design_state, ...
    command: str | None  # first word of `| Command : ...`, e.g. "report_timing_summary"


def parse_header(lines: list[str]) -> dict[str, str]:
    """The `| Key : value` block in the first HEADER_LINES lines, keyed by the lower-cased,
    underscored key (tool_version, command, design, device, ...). First occurrence wins."""
    out: dict[str, str] = {}
    for line in lines[:HEADER_LINES]:
        if not line.startswith("|") or line.startswith("| -"):
            continue
        key, sep, value = line[1:].partition(":")
        key = key.strip()
        if not sep or not _HEADER_KEY.fullmatch(key):
            continue
        out.setdefault(key.lower().replace(" ", "_"), value.strip())
    return out


def command_name(header: dict[str, str]) -> str | None:
    words = (header.get("command") or "").split()
    return words[0] if words else None


def _decode(data: bytes, source: str) -> str:
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:  # a report re-saved by a Windows editor: UTF-16 with its byte-order mark is still text
            return data.decode("utf-16")
        except UnicodeDecodeError:
            raise ReportError(f"{source}: starts like UTF-16 but does not decode as UTF-16; "
                              f"not a text report") from None
    if b"\x00" in data:
        raise ReportError(f"{source}: report file contains NUL bytes; not a text report "
                          f"(a binary file, or a damaged copy: regenerate the report)")
    return data.decode("utf-8", errors="replace").removeprefix("\ufeff")


def from_text(text: str, source: str) -> Report:
    """A Report from text already in memory (parsers' parse(text, source) entry points)."""
    if not isinstance(text, str):
        raise ReportError(f"{source}: expected report text, got {type(text).__name__}")
    if "\x00" in text:
        raise ReportError(f"{source}: report contains NUL characters; not a text report")
    if len(text) > MAX_BYTES:
        raise ReportError(f"{source}: report is {len(text):,} characters, over kabe's bound of "
                          f"{MAX_BYTES:,}; refusing to parse it")
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not text.strip():
        raise ReportError(f"{source}: report is empty")
    n = text.count("\n")
    if n > MAX_LINES:
        raise ReportError(f"{source}: report has {n:,} lines, over kabe's bound of {MAX_LINES:,}; "
                          f"refusing to parse it")
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()  # the newline that ends the last line starts no line of its own
    if max(map(len, lines)) > MAX_LINE_CHARS:  # at C speed; the loop below runs only to name the line
        i, line = next((i, ln) for i, ln in enumerate(lines) if len(ln) > MAX_LINE_CHARS)
        raise ReportError(f"{source}: line {i + 1} is {len(line):,} characters long, over kabe's "
                          f"bound of {MAX_LINE_CHARS:,} (no Vivado report line is that long); "
                          f"not a report kabe can read")
    _refuse_joined(text, source)
    header = parse_header(lines)
    return Report(source, text, lines, header, command_name(header))


_LOG_LINE = re.compile(r"^(?:INFO|WARNING|CRITICAL WARNING|ERROR): \[", re.M)
_TOOL_VERSION = re.compile(r"^\| Tool Version", re.M)


def _refuse_joined(text: str, source: str) -> None:
    """A Vivado log line, or a second report header, inside a report: a report cut short with a
    log or another report joined on after the cut (`cat`), which the text after the cut would hide.
    None of 1,880 real Vivado reports in the shared corpora and the gathered repositories has either."""
    log = _LOG_LINE.search(text)
    if log:
        line = text.count("\n", 0, log.start()) + 1
        raise ReportError(f"{source}: line {line} is a Vivado log message ('{text[log.start():log.start() + 40]}...'), "
                          f"which no report contains: a log joined to the report (after a cut?); write the "
                          f"report with its own -file")
    heads = [m.start() for m in _TOOL_VERSION.finditer(text)]
    if len(heads) > 1:
        line = text.count("\n", 0, heads[1]) + 1
        raise NotOneReport(f"{source}: a second report header at line {line}: two reports in one file (joined "
                          f"with cat or -append); give kabe each report on its own")


def read_bytes(path) -> tuple[bytes, str]:
    """The bytes of a report file and its name for messages; ReportError naming the file when it is not a
    regular file (kabe.base.regular_file), is over MAX_BYTES, or is empty."""
    source = str(Path(path))
    try:
        data = regular_file.read(path, MAX_BYTES)
    except regular_file.NotReadable as e:
        raise ReportError({
            "missing": f"{source}: report file does not exist",
            "directory": f"{source}: is a directory, not a report file",
            "special": f"{source}: is not a regular file (a {e.detail}); kabe reads a report only from a regular "
                       f"file: write the report to a file and give kabe that file",
            "too_big": f"{source}: report file is {e.detail} bytes, over kabe's bound of {MAX_BYTES:,}; refusing "
                       f"to parse it",
            "grew": f"{source}: report file grew past kabe's bound of {MAX_BYTES:,} bytes while it was read; "
                    f"refusing to parse it",
        }.get(e.why, f"{source}: report file cannot be read ({e.detail})")) from None
    if not data.strip():
        raise ReportError(f"{source}: report file is empty")
    return data, source


def read(path) -> Report:
    """Open a report file; ReportError naming the file when it cannot be a readable report.

    Only a regular file is read, and never more than MAX_BYTES of it: /dev/zero, a FIFO, a socket
    or a terminal has no end (or none yet) and is refused before a byte is read. The file is
    opened without blocking (a FIFO with no writer would block open() itself) and checked on the
    open descriptor (a path swapped between a check and the open cannot slip through), then read
    up to the cap plus one byte, so a file that grows past the cap is refused too."""
    data, source = read_bytes(path)
    text = _decode(data, source)
    del data  # a 200 MB report: keep one copy of it, not two
    return from_text(text, source)


def find_lines(lines: list[str], pattern: re.Pattern, start: int = 0, end: int | None = None,
               literal: str | None = None, joined: str | None = None) -> list[int]:
    """Indices of the lines in lines[start:end] that `pattern` (compiled with re.M, anchored at ^,
    matching within one line) finds, at C speed: every parser scans a whole report this way, so
    a report of millions of blank lines costs one regex pass, not a Python step per line. With
    `literal` (a string every match contains) only the lines holding it are tested. `joined`:
    "\\n".join(lines[start:end]) when the caller already has it (a whole report's text)."""
    text = joined if joined is not None else "\n".join(lines[start:end])
    if literal is None:
        starts = (m.start() for m in pattern.finditer(text))
    else:  # find the literal (a C-speed substring search), then test its line with the pattern
        starts = _line_starts_with(text, pattern, literal)
    out, pos, line = [], 0, start
    for s in starts:
        line += text.count("\n", pos, s)
        pos = s
        out.append(line)
    return out


def _line_starts_with(text: str, pattern: re.Pattern, literal: str):
    i, last = text.find(literal), -1
    while i >= 0:
        s = text.rfind("\n", 0, i) + 1
        if s != last and pattern.match(text, s):
            last = s
            yield s
        nxt = text.find("\n", i)
        if nxt < 0:
            break
        i = text.find(literal, nxt + 1)


def blank(lines: list[str]) -> bool:
    """Every line blank (at C speed)."""
    return not any(map(str.strip, lines))


def expect_command(report: Report, command: str) -> None:
    """A header naming another Vivado command means the wrong report was handed over."""
    if report.command is not None and report.command != command:
        raise ReportError(f"{report.source}: header says Command {report.command}, not {command}")
