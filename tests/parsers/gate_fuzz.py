"""Structured damage to real timing summaries, and the one property the gate must keep under it.

A mutant is a report with one line-level edit, the kinds a copy, an editor, a script or a cut can
make: a line deleted or duplicated, a rule line (or two) pasted after it, its case changed, its whitespace changed, the file cut short,
a number in it changed, a header (box title, check_timing title or item, table titles, the
command line) edited. Edits land on the lines that carry the verdict (the header, the
check_timing section, the summary tables, Timing Details' group headers and slack lines) three
times in four, anywhere in the file otherwise.

The property (`judge`):
  * no exception but the parser's own refusal (ReportError): anything else is a crash;
  * no false pass: a mutant of a report the gate FAILS never PASSES. One edit is excused, and
    counted apart (`excused`): a number changed in a check_timing sentence of the pre-2019
    layout, whose item titles carry no count. There the sentence is the report's only statement
    of that count (nothing else in the file repeats it), so the edited text is a report of a
    different design, which no reader of the text can tell from a real one; every other number
    the verdict rests on is printed twice or more (summary row, clock tables, Timing Details,
    verdict line; since 2019.1 check_timing's table of contents, item title and sentences).

Used by tests/parsers/test_gate_fuzz.py (bounded, derandomised, in the suite) and
scripts/bench_gate_fuzz.py (a longer run that prints the counts).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from kabe.rules.gate import evaluate
from kabe.parsers import ReportError
from kabe.parsers.vivado_timing_summary import parse

FOLDERS = ("vivado-reports", "vivado-reports-more", "vivado-routed-paths", "vivado-versal")
OPS = ("delete", "duplicate", "separator", "upper", "lower", "space", "cut", "number", "header")
SEPARATOR = "-" * 96  # the rule Vivado draws around a section's title
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_ITEM = re.compile(r"^\d+\.[ \t]+checking[ \t]")


def timing_summaries(shared: Path) -> list[Path]:
    """Every report_timing_summary under the shared fixture folders (a file whose header names the
    command), in a stable order."""
    out = []
    for folder in FOLDERS:
        d = shared / "fixtures" / folder
        for p in sorted(d.rglob("*")) if d.is_dir() else []:
            if p.is_file() and p.suffix in (".rpt", ".txt"):
                with p.open(errors="replace") as f:
                    if "report_timing_summary" in f.read(4000):
                        out.append(p)
    return out


@dataclass
class Subject:
    """A report read once: its lines, the lines that carry the verdict, where its check_timing items
    without counts keep their sentences, and its own verdict."""

    name: str
    lines: list[str]
    hot: list[int]  # indices of the verdict-carrying lines
    headers: list[int]  # indices of header lines (box titles, check_timing titles, table titles, command)
    sole_counts: set[int]  # check_timing sentences under an item title without a count (pre-2019)
    passed: bool

    def __repr__(self) -> str:  # a failing example names the report, not its megabytes
        return f"Subject({self.name!r}, {'passes' if self.passed else 'fails'})"

    @classmethod
    def load(cls, path: Path, name: str | None = None) -> "Subject":
        text = path.read_text(errors="replace")
        lines = text.split("\n")
        hot, headers, sole = set(), set(), set()
        headers.update(i for i in range(min(12, len(lines))) if lines[i].startswith("| "))
        hot.update(range(min(12, len(lines))))
        in_ct, item_has_count, region = False, True, None
        for i, ln in enumerate(lines):
            if ln.startswith("| ") and i + 1 < len(lines) and lines[i + 1].startswith("| -"):
                region = ln[2:].strip()
                in_ct = False
                headers.update((i, i + 1))
                hot.update(range(max(0, i - 1), i + 3))
            if ln.strip() == "check_timing report":
                in_ct, region = True, "check_timing"
                headers.add(i)
            if in_ct:
                if ln[:1] in (" ", "\t", "-") or _ITEM.match(ln) or not ln.strip() or ln.strip() in (
                        "check_timing report", "Table of Contents"):
                    hot.add(i)  # its structure; the pin names listed under an item are not
                if _ITEM.match(ln) or ln.strip() == "Table of Contents":
                    headers.add(i)
                    item_has_count = ln.rstrip().endswith(")")
                elif ln.lstrip().startswith("There ") and not item_has_count:
                    sole.add(i)
            elif region in ("Design Timing Summary", "Clock Summary", "Intra Clock Table", "Inter Clock Table",
                            "Other Path Groups Table", "User Ignored Path Table", "Unconstrained Path Table"):
                hot.add(i)
                if i + 1 < len(lines) and lines[i + 1].strip().startswith("---") and ln.strip():
                    headers.add(i)  # the column titles over a dash rule
            elif region == "Timing Details":
                s = ln.strip()
                if s.startswith(("From Clock:", "To Clock:", "Path Group:", "Setup :", "Hold  :", "PW    :",
                                 "Max Delay", "Min Delay", "Slack", "slack", "Pulse Width Checks")):
                    hot.add(i)
        rec = parse(text, path.name)
        return cls(name or path.name, lines, sorted(hot), sorted(headers), sole, evaluate(rec, None).passed)


@dataclass(frozen=True)
class Mutation:
    op: str
    line: int  # index into the report's lines
    arg: int  # which variant / character / number

    def apply(self, lines: list[str]) -> str:
        i, ln = self.line, lines[self.line]
        out = list(lines)
        if self.op == "delete":
            del out[i]
        elif self.op == "duplicate":
            out.insert(i, ln)
        elif self.op == "separator":  # one or two of Vivado's rule lines pasted after the line
            out[i + 1:i + 1] = [SEPARATOR] * (1 + self.arg % 2)
        elif self.op == "upper":
            out[i] = ln.upper()
        elif self.op == "lower":
            out[i] = ln.lower()
        elif self.op == "space":
            out[i] = _space(ln, self.arg)
        elif self.op == "cut":
            head = "\n".join(lines[:i])
            cut = ln[:self.arg % (len(ln) + 1)]
            return (head + "\n" + cut) if i else cut
        elif self.op == "number":
            out[i] = _renumber(ln, self.arg)
        elif self.op == "header":
            out[i] = _reheader(ln, self.arg)
        return "\n".join(out)


def _space(ln: str, arg: int) -> str:
    kind, at = arg % 5, arg // 5
    spaces = [m.start() for m in re.finditer(" ", ln)]
    if kind == 0 and spaces:
        p = spaces[at % len(spaces)]
        return ln[:p] + " " + ln[p:]
    if kind == 1:
        return ln.lstrip()
    if kind == 2:
        return "  " + ln
    if kind == 3:
        return ln + "   "
    if spaces:
        p = spaces[at % len(spaces)]
        return ln[:p] + "\t" + ln[p + 1:]
    return ln + " "


_REPLACEMENTS = ("0", "1", "-1", "00", "inf", "NA", "99999", "-0.001", "0.000", "x")


def _renumber(ln: str, arg: int) -> str:
    nums = list(_NUMBER.finditer(ln))
    if not nums:
        return ln + " 0"
    m = nums[arg % len(nums)]
    kind = (arg // len(nums)) % (len(_REPLACEMENTS) + 2)
    tok = m.group()
    if kind == len(_REPLACEMENTS):
        new = tok[1:] if tok.startswith("-") else "-" + tok
    elif kind == len(_REPLACEMENTS) + 1:
        new = tok[:-1] + str((int(tok[-1]) + 1) % 10)
    else:
        new = _REPLACEMENTS[kind]
    return ln[:m.start()] + new + ln[m.end():]


def _reheader(ln: str, arg: int) -> str:
    kind = arg % 6
    if kind == 0:
        return ln.upper()
    if kind == 1:
        return ln.replace(" ", "  ", 1)
    if kind == 2:
        return ln.replace("_", " ", 1) if "_" in ln else ln + "s"
    if kind == 3:
        return re.sub(r"\d+", lambda m: str(int(m.group()) + 1), ln, count=1)
    if kind == 4:
        return ln.rstrip(")").rsplit("(", 1)[0].rstrip() if ln.rstrip().endswith(")") else ln[:-1]
    return ln.title()


@dataclass
class Outcome:
    kind: str  # refused | failed | passed | false_pass | excused | crash | unchanged
    detail: str = ""


def judge(subject: Subject, m: Mutation) -> Outcome:
    text = m.apply(subject.lines)
    try:
        rec = parse(text, "mutant")
        verdict = evaluate(rec, None)
    except ReportError as e:
        return Outcome("refused", str(e)[:200])
    except Exception as e:  # noqa: BLE001 - the property: nothing but the parser's refusal
        return Outcome("crash", f"{subject.name}: {m}: {type(e).__name__}: {str(e)[:200]}")
    if not verdict.passed:
        return Outcome("failed")
    if subject.passed:
        return Outcome("passed")
    if m.op == "number" and m.line in subject.sole_counts:
        return Outcome("excused", "the only statement of a check_timing count (pre-2019 layout) was edited")
    return Outcome("false_pass", f"{subject.name}: {m} ('{subject.lines[m.line][:100]}')")


def line_for(subject: Subject, op: str, hot: bool, pick: int) -> int:
    pool = subject.headers if op == "header" else subject.hot if hot else None
    if pool:
        return pool[pick % len(pool)]
    return pick % len(subject.lines)


# ---------------------------------------------------------------------------------------------
# Whole-report damage (issue 37): edits that make the file more than one consistent report. Each
# mutant below must never PASS, whatever the verdict of the report it was made from: a second
# verdict line, a section taken out or pasted twice, a failing run joined in front of (or after)
# another with its titles damaged, a corner switched off in Timer Settings, a stray negative slack
# line. `unicode_space` is one-line damage like the kinds above (a failing report never passes).

WHOLE_OPS = ("verdict_added", "section_deleted", "section_duplicated", "concat", "unicode_space",
             "timer_settings", "stray_slack")
# spaces Vivado never writes, which an editor, a web page or a copy can put into a line
UNICODE_SPACES = ("\u00a0", "\u2002", "\u2003", "\u2009", "\u3000", "\t", "\u200b ", " \u00a0")
VERDICT_LINES = ("Timing constraints are not met.", "All user specified timing constraints are met.",
                 "There are no user specified timing constraints.")
_PW_ROW = re.compile(r"^(Min Period|Max Period|Low Pulse Width|High Pulse Width|Max Skew)\s.*?\s(\d+\.\d+)\s+\d+\.\d+\s+"
                     r"(\d+\.\d+)\s")
_CORNER_ROW = re.compile(r"^\s+(Slow|Fast)\s+(Yes|No)\s+(Yes|No)\s*$")


def _boxes(lines: list[str]) -> list[tuple[int, int]]:
    """(first, end) line indices of each section: the dashed rule over a boxed title (or a
    check_timing title) up to the next one."""
    starts = []
    for i, ln in enumerate(lines):
        if ln.startswith("| ") and i + 1 < len(lines) and lines[i + 1].startswith("| -") and i > 12:
            starts.append(i - 1 if i and lines[i - 1].startswith("---") else i)
        elif ln.strip() == "check_timing report":
            starts.append(i)
    ends = starts[1:] + [len(lines)]
    return list(zip(starts, ends))


def damage_titles(lines: list[str], arg: int) -> list[str]:
    """The report with its run markers and titles damaged as an editor or a copy can: a tab or a
    Unicode space after the leading `|`, a doubled or Unicode space inside the title."""
    out = list(lines)
    for i, ln in enumerate(lines):
        title = (ln.startswith("| ") and ((i + 1 < len(lines) and lines[i + 1].startswith("| -")) or i < 12)) or \
            ln.strip() in ("check_timing report", "Timing Summary Report")
        if not title:
            continue
        kind = (arg + i) % 4
        if kind == 0 and ln.startswith("| "):
            out[i] = "|\t" + ln[2:]
        elif kind == 1 and ln.startswith("| "):
            out[i] = "|\u00a0" + ln[2:]
        elif kind == 2:
            out[i] = ln.replace(" ", "  ", 1) if ln.strip() != "check_timing report" else "check_timing  report"
        else:
            out[i] = ln.replace(" ", UNICODE_SPACES[(arg // 4) % len(UNICODE_SPACES)], 1)
    return out


@dataclass(frozen=True)
class WholeMutation:
    op: str
    arg: int
    pick: int

    def apply(self, s: Subject, others: list[Subject]) -> str:
        lines, arg, out = s.lines, self.arg, list(s.lines)
        boxes = _boxes(lines)
        if self.op == "verdict_added":
            v = next((i for i, ln in enumerate(lines) if ln.strip() in VERDICT_LINES), 0)
            at = v + 1 if arg % 2 == 0 else self.pick % len(lines)
            new = VERDICT_LINES[(arg // 2) % 3]
            style = (arg // 6) % 3
            new = new.upper() if style == 1 else new.replace(" ", "\u00a0") if style == 2 else new
            out.insert(at, new)
        elif self.op == "section_deleted":
            a, b = boxes[self.pick % len(boxes)]
            del out[a:b]
        elif self.op == "section_duplicated":
            a, b = boxes[self.pick % len(boxes)]
            copy = lines[a:b] if arg % 3 else damage_titles(lines[a:b], arg)
            at = b if arg % 2 == 0 else boxes[-1][1]
            out[at:at] = copy
        elif self.op == "concat":
            failing = [o for o in others if not o.passed] or others
            other = failing[self.pick % len(failing)]
            front = damage_titles(other.lines, arg) if arg % 4 else other.lines
            out = (front + lines) if arg % 8 < 6 else (lines + front)
        elif self.op == "unicode_space":
            pool = [i for i in s.headers + [a + 1 for a, _ in boxes] if i < len(lines) and " " in lines[i]]
            i = pool[self.pick % len(pool)] if pool else self.pick % len(lines)
            spaces = [m.start() for m in re.finditer(" ", lines[i])] or [0]
            p = spaces[arg % len(spaces)]
            out[i] = lines[i][:p] + UNICODE_SPACES[(arg // 7) % len(UNICODE_SPACES)] + lines[i][p + 1:]
        elif self.op == "timer_settings":
            rows = [i for i, ln in enumerate(lines[:400]) if _CORNER_ROW.match(ln)
                    or ln.strip().startswith("Enable Multi Corner Analysis")]
            if rows:
                i = rows[self.pick % len(rows)]
                ln = lines[i]
                if "Multi Corner" in ln:
                    out[i] = ln.replace("Yes", "No", 1)
                else:
                    k = [m.start() for m in re.finditer("Yes", ln)]
                    p = k[arg % len(k)] if k else 0
                    word = ("No", "None", "no")[(arg // 2) % 3]
                    out[i] = ln[:p] + word + ln[p + 3:] if k else ln
            else:  # no Timer Settings to edit: the mutant is the report itself (it must not pass either way)
                out.insert(0, "")
        elif self.op == "stray_slack":
            slack = [i for i, ln in enumerate(lines) if ln.strip().startswith("Slack")
                     and re.search(r":\s+\d", ln)]  # a number to turn negative (not "Slack: inf")
            pw = [i for i, ln in enumerate(lines) if _PW_ROW.match(ln)]
            if pw and arg % 4 == 3:  # a Pulse Width Checks row's slack (its third number) negative
                i = pw[self.pick % len(pw)]
                m = _PW_ROW.match(lines[i])
                out[i] = lines[i][:m.start(3)] + "-" + m.group(3) + lines[i][m.end(3):]
            elif slack and arg % 2:
                i = slack[self.pick % len(slack)]
                out[i] = re.sub(r":(\s+)(\d)", r":\1-\2", lines[i].replace("(MET)", ("(MET)", "(VIOLATED)")[arg // 2 % 2]),
                                count=1)
            else:
                at = self.pick % len(lines)
                out.insert(at, ("Slack (VIOLATED) :        -0.333ns  (required time - arrival time)",
                                "  Slack:                    -0.120ns")[arg // 2 % 2])
        return "\n".join(out)


def must_never_pass(s: Subject, m: WholeMutation) -> bool:
    """Whether the whole-report mutant must not pass: every kind but unicode_space (one-line damage
    judged like the kinds above); timer_settings only when the report had a corner to switch off."""
    if m.op == "unicode_space":
        return not s.passed
    if m.op == "timer_settings":
        return any(_CORNER_ROW.match(ln) for ln in s.lines[:400]) or not s.passed
    return True


def judge_whole(s: Subject, m: WholeMutation, others: list[Subject]) -> Outcome:
    text = m.apply(s, others)
    if text == "\n".join(s.lines):  # the edit found nothing to change: the report itself, judged as it is
        return Outcome("unchanged")
    try:
        rec = parse(text, "mutant")
        verdict = evaluate(rec, None)
    except ReportError as e:
        return Outcome("refused", str(e)[:200])
    except Exception as e:  # noqa: BLE001 - the property: nothing but the parser's refusal
        return Outcome("crash", f"{s.name}: {m}: {type(e).__name__}: {str(e)[:200]}")
    if not verdict.passed:
        return Outcome("failed")
    if not must_never_pass(s, m):
        return Outcome("passed")
    return Outcome("false_pass", f"{s.name}: {m}")
