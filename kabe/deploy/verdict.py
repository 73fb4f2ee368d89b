"""The board's result is evidence, not a verdict: the host re-derives the verdict from it.

The board runner prints one JSON object and exits 0 (all rows match) or 1. Anything between the
board and this process can be wrong: an old runner, a different numpy, a half-written file, a
board that lies. So the host checks each claim against what it knows itself (the rows it asked
for, the digest of the vectors it drew, the commit in the archive it pushed, the status its own
model gives) and the type of every field, and passes the run only when all agree
with a zero exit and zero mismatches. Every disagreement is one line naming the field, what the
board said and what the host expected.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from kabe.boards import versions

_SHOWN = 100  # a sha256 in full, quotes included
_HEX64 = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class Expected:
    """What the host knows without asking the board."""

    model: str  # the golden model, package.module:function
    rows: int  # what the model counts as checked over the run
    seed: int
    vectors_sha256: str
    commit: str  # bitfile.describe_word of the archive's USR_ACCESS word, e.g. "0123456" or "0123456-dirty"
    model_status: dict[str, int] = field(default_factory=dict)  # the status outputs' values, summed over transfers
    # the board's image, from its profile (deploy.pynq): the PYNQ versions it must run (">=4") and the
    # machine its Python must report ("aarch64"); None: not checked (the simulated PL runs no pynq)
    pynq_versions: str | None = None
    machine: str | None = None


def shown(value: Any) -> str:
    """A board value for a message: repr, cut short (a board can send anything, of any length)."""
    text = repr(value)
    return text if len(text) <= _SHOWN else text[:_SHOWN] + "..."


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v: Any) -> bool:
    return (isinstance(v, (int, float)) and not isinstance(v, bool)) and v == v and v not in (float("inf"), float("-inf"))


def parse_stdout(stdout: str) -> tuple[Any, str | None]:
    """The runner's last stdout line as JSON, or (None, why not)."""
    lines = [ln for ln in (stdout or "").strip().splitlines() if ln.strip()]
    if not lines:
        return None, "the board runner printed no result"
    try:
        return json.loads(lines[-1]), None
    except (json.JSONDecodeError, RecursionError):
        return None, f"the board runner's last line is not JSON: {shown(lines[-1])}"


def _typed(board: dict, failures: list[str]) -> dict[str, Any]:
    """Each field the verdict needs, checked for type; a wrong one is a failure and comes back None."""
    rules = {
        "passed": (lambda v: isinstance(v, bool), "true or false"),
        "rows_checked": (_is_int, "an integer"),
        "mismatches": (lambda v: _is_int(v) and v >= 0, "an integer >= 0"),
        "first_mismatches": (lambda v: isinstance(v, list) and all(isinstance(m, dict) for m in v), "a list of objects"),
        "problems": (lambda v: isinstance(v, list) and all(isinstance(p, str) for p in v), "a list of strings"),
        "status": (lambda v: isinstance(v, dict) and all(isinstance(k, str) and _is_int(n) for k, n in v.items()),
                   "an object of status output -> integer"),
        "vectors_sha256": (lambda v: isinstance(v, str) and bool(_HEX64.fullmatch(v)), "64 hex digits"),
        "bit_commit": (lambda v: isinstance(v, str), "a string"),
        "pl_commit": (lambda v: isinstance(v, str), "a string"),
        "model": (lambda v: isinstance(v, str), "a string"),
        "seed": (_is_int, "an integer"),
        "seconds": (lambda v: _is_number(v) and v >= 0, "a number >= 0"),
        "gb_per_s": (lambda v: v is None or _is_number(v), "a number or null"),
    }
    out: dict[str, Any] = {}
    for name, (ok, what) in rules.items():
        if name not in board:
            failures.append(f"{name}: the board sent none, expected {what}")
            out[name] = None
        elif not ok(board[name]):
            failures.append(f"{name}: the board sent {shown(board[name])}, expected {what}")
            out[name] = None
        else:
            out[name] = board[name]
    return out


def _image(board: dict, expect: Expected, failures: list[str]) -> None:
    """The PYNQ and the machine the board ran on, against its profile: a PYNQ-Z1 result from a PYNQ 4 image,
    or a KV260 result from PYNQ 3, is not a run on the board the profile describes."""
    if expect.pynq_versions:
        got = board.get("pynq_version")
        try:
            fits = isinstance(got, str) and versions.matches(got, expect.pynq_versions)
        except ValueError:
            fits = False
        if not fits:
            failures.append(f"pynq_version: the board ran pynq {shown(got)}, its profile needs pynq {expect.pynq_versions}")
    if expect.machine:
        got = board.get("machine")
        if got != expect.machine:
            failures.append(f"machine: the board's Python runs on {shown(got)}, its profile's image is {expect.machine}")


def board_failures(exit_code: int, board: Any, expect: Expected) -> list[str]:
    """Every reason the run does not pass (empty: it passed). board is the parsed JSON, any type."""
    failures: list[str] = []
    if not isinstance(board, dict):
        return [f"the board's result is {type(board).__name__} {shown(board)}, expected a JSON object"]
    v = _typed(board, failures)
    if exit_code != 0:
        failures.append(f"exit code: the board runner exited {exit_code}, a pass exits 0")
    if v["passed"] is not None and v["passed"] != (exit_code == 0):
        failures.append(f"passed: the board says {v['passed']} but its runner exited {exit_code}; they disagree")
    if v["passed"] is False:
        failures.append("passed: the board itself reports a failure")
    checks = [
        ("rows_checked", v["rows_checked"], expect.rows, "the rows the host asked for"),
        ("vectors_sha256", v["vectors_sha256"], expect.vectors_sha256, "the digest of the vectors the host drew"),
        ("bit_commit", v["bit_commit"], expect.commit, "the archive's commit"),
        ("pl_commit", v["pl_commit"], expect.commit, "the archive's commit (USR_ACCESS read from the running PL)"),
        ("model", v["model"], expect.model, "the design's golden model"),
        ("seed", v["seed"], expect.seed, "the seed the host asked for"),
    ]
    for name, got, want, what in checks:
        if got is not None and got != want:
            failures.append(f"{name}: the board says {shown(got)}, expected {shown(want)} ({what})")
    if v["mismatches"]:
        failures.append(f"mismatches: the board reports {v['mismatches']} beats that differ from the model, a pass has 0")
    if v["problems"]:
        failures += [f"problem on the board: {shown(p)}" for p in v["problems"]]
    _image(board, expect, failures)
    if v["status"] is not None:
        for name, want in sorted(expect.model_status.items()):
            got = v["status"].get(name)
            if got is None:
                failures.append(f"status: the board read no {name}, the host's model says {want}")
            elif got != want:
                failures.append(f"status: {name} = {got} on the board, the host's model says {want}")
    return failures
