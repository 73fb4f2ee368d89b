"""Disk space for a tool run: checked before it starts, and a full file system named when it ends.

With TMPDIR full, Yosys used to fail naming a file inside its WebAssembly sandbox
(`/tmp/yosys-abc-000000/output.aig' not found`): the sandbox's /tmp is a folder yowasp makes in TMPDIR
and removes when Yosys exits, so neither the message nor the disk afterwards said what happened. Now
a long tool run (Yosys, Verilator's compile, the simulation, Vivado) first checks that TMPDIR and
the build folder have MIN_FREE_MB free, and a tool's "No space left on device" (or Yosys's missing
sandbox file) becomes one line naming the full file system and how to point TMPDIR elsewhere.
"""

from __future__ import annotations

import errno
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from kabe.base.errors import UserError

# The largest build here needs under 200 MB: the largest Verilator model here is 139 MB in build/sim, and
# g++'s assembler files and ABC's netlists in TMPDIR are tens of MB at most. 256 MB leaves room
# without refusing a machine that could build; KABE_MIN_FREE_MB changes it (0: no check).
MIN_FREE_MB = 256
MIN_FREE_ENV = "KABE_MIN_FREE_MB"

_ENOSPC = re.compile(r"no space left on device|\bENOSPC\b|disk quota exceeded|errno 28\b", re.I)
# Yosys's own temporary files, as it names them inside its sandbox: /tmp there is a folder in TMPDIR
_SANDBOX_TMP = re.compile(r"(/tmp/yosys-[A-Za-z0-9_.-]+(?:/[^\s'`\"]*)?|\byosys-abc-[0-9]+/[^\s'`\"]+)")
_PATH = re.compile(r"(/[^\s:'`\"()]+)")


class DiskFull(UserError, OSError):
    """A file system a tool writes to is full, or too full to start."""


@dataclass(frozen=True)
class Place:
    """A folder a tool writes to, with what to call it and how to make room there."""

    label: str  # "TMPDIR", "the build folder"
    path: Path
    fix: str


def tmpdir() -> Path:
    """Where tools put temporary files: $TMPDIR when it is a folder (what tempfile, yowasp and g++ use)."""
    env = os.environ.get("TMPDIR")
    return Path(env) if env and os.path.isdir(env) else Path(tempfile.gettempdir())


def tmp_place() -> Place:
    return Place("TMPDIR", tmpdir(), "free space there or point TMPDIR at a file system with room "
                                     "(e.g. `export TMPDIR=/var/tmp`, then run again)")


def build_place(folder: Path) -> Place:
    return Place("the build folder", Path(folder), "free space on that file system (old simulation models: "
                                                   "rm -rf build/sim)")


def min_free_bytes() -> int:
    raw = os.environ.get(MIN_FREE_ENV)
    if raw is None or raw == "":
        return MIN_FREE_MB * 2**20
    if not re.fullmatch(r"[0-9]{1,9}", raw):
        raise DiskFull(f"{MIN_FREE_ENV}={raw[:40]!r} is not a whole number of MB; set it like {MIN_FREE_ENV}=512 "
                       f"(0 turns the free-space check off)")
    return int(raw) * 2**20


def free_bytes(path: Path) -> int:
    """Free space for an unprivileged writer on path's file system (the nearest existing folder's)."""
    p = Path(path)
    while not p.exists() and p != p.parent:
        p = p.parent
    return shutil.disk_usage(p).free


def shown_size(n: int) -> str:
    for unit, size in (("GB", 2**30), ("MB", 2**20), ("KB", 2**10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} bytes"


def check_free(tool: str, places: Sequence[Place]) -> dict[str, int]:
    """Refuse to start `tool` when a place it writes to has less than the threshold free; returns the
    free bytes of each place by label (what full_message says a place had when the tool started)."""
    need = min_free_bytes()
    free = {place.label: free_bytes(place.path) for place in places}
    for place in places:
        if free[place.label] < need:
            raise DiskFull(f"{place.label} ({place.path}) has {shown_size(free[place.label])} free, less than the "
                           f"{shown_size(need)} kabe wants before running {tool}; {place.fix} "
                           f"({MIN_FREE_ENV} sets the threshold)")
    return free


def _place_of(path: str, places: Sequence[Place]) -> Place | None:
    for place in places:
        try:
            if Path(path).resolve().is_relative_to(place.path.resolve()):
                return place
        except OSError:
            continue
    return None


def _full(tool: str, place: Place, evidence: str) -> str:
    return (f"{tool} stopped because {place.label} ({place.path}) is full ({shown_size(free_bytes(place.path))} "
            f"free now): {evidence[:200]}; {place.fix}")


def os_error_message(tool: str, e: OSError, place: Place, path: Path) -> str | None:
    """An OSError from writing `path` into `place` as one full-disk line, when it is one: errno ENOSPC or
    EDQUOT, or numpy's short write ("N requested and M written", in items of at least a byte, and no
    errno) with the file system now holding less than the rest of the write."""
    short = re.fullmatch(r"(\d+) requested and (\d+) written", str(e))
    if e.errno in (errno.ENOSPC, errno.EDQUOT) or (short and free_bytes(place.path) < int(short[1]) - int(short[2])):
        return _full(tool, place, f"writing {path} failed ({e.strerror or e})")
    return None


def full_message(tool: str, text: str, places: Sequence[Place], *, sandboxed: bool = False,
                 free_before: dict[str, int] | None = None) -> str | None:
    """One line for a tool run that ran out of disk space, naming the full file system; None when `text`
    (the tool's log and stderr) shows no sign of that. sandboxed: the tool is yowasp's Yosys, whose
    /tmp is a folder in TMPDIR (a file named there is in TMPDIR, whatever the path says). free_before:
    check_free's answer, the free space when the tool started."""
    tmp = next((p for p in places if p.label == "TMPDIR"), None)
    for line in text.splitlines():
        if _ENOSPC.search(line):
            evidence = line.strip()
            if sandboxed and tmp and _SANDBOX_TMP.search(line):
                return _full(tool, tmp, f"{evidence} (a file inside Yosys's WebAssembly sandbox, whose /tmp is TMPDIR)")
            for path in _PATH.findall(line):
                place = _place_of(path, places)
                if place:
                    return _full(tool, place, evidence)
            fullest = min(places, key=lambda p: free_bytes(p.path))
            others = ", ".join(f"{p.label} ({p.path}, {shown_size(free_bytes(p.path))} free)"
                               for p in places if p is not fullest)
            return _full(tool, fullest, evidence + (f"; the others have room: {others}" if others else ""))
    if sandboxed and tmp:
        # ABC's own "No space left" goes nowhere: Yosys only finds its output missing in the sandbox
        for line in text.splitlines():
            m = _SANDBOX_TMP.search(line)
            if m and line.lstrip().startswith("ERROR:"):
                before = (free_before or {}).get(tmp.label)
                when = f"{shown_size(before)} free when it started" if before is not None else \
                    f"{shown_size(free_bytes(tmp.path))} free now, after Yosys removed its files"
                return (f"{tool} could not read back its temporary file {m.group(1)} (inside its WebAssembly "
                        f"sandbox, whose /tmp is TMPDIR): TMPDIR ({tmp.path}) is full or filled up while it "
                        f"ran ({when}); {tmp.fix}")
    return None
