"""Designs whose last build could not run (a missing tool, a broken core file, a kabe bug): the page says so.

A build that could not run archives nothing (kabe.build), so the history has no row for it and the page
used to show the design as if nothing had happened (or its older verdict as the latest). Its reason is
kept instead in reports/.could_not_run/<design>.<flow>.json (a dot folder: no scanner takes it for a
build, no push sends it), one file per design and flow, replaced by each such attempt and removed when
a build of that design and flow runs to its gate. The report page lists them with their reasons.

    note(reports_root, design, flow, reason, commit)    clear(reports_root, design, flow)    load(reports_root)
"""

from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import dataclass
from pathlib import Path

from kabe.base import regular_file
from kabe.store.archive import write_json_atomic

FOLDER = ".could_not_run"
MAX_BYTES = 64 << 10
_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,200}$")


@dataclass(frozen=True)
class CouldNotRun:
    design: str
    flow: str
    reason: str
    commit: str  # sha, sha-dirty, or "" when none could be read
    when: str  # UTC, ISO 8601


def _path(reports_root: Path, design: str, flow: str) -> Path | None:
    name = f"{design}.{flow}.json"
    return Path(reports_root) / FOLDER / name if _NAME.match(name) and ".." not in name else None


def can_note(design: str, flow: str) -> bool:
    """Whether a note can be kept for this design and flow (a name no file can carry never built anything)."""
    return _path(Path("."), design, flow) is not None


def note(reports_root: Path, design: str, flow: str, reason: str, commit: str = "") -> Path | None:
    """Keep why design's build with flow could not run (None: a name no file can carry, which nothing built)."""
    path = _path(reports_root, design, flow)
    if path is None:
        return None
    when = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    record = {"design": design, "flow": flow, "reason": reason[:4000], "commit": commit, "when": when}
    return write_json_atomic(path, record, root=Path(reports_root))


def clear(reports_root: Path, design: str, flow: str) -> None:
    """A build of design with flow ran to its gate: its earlier could-not-run note is stale."""
    path = _path(reports_root, design, flow)
    if path is not None:
        path.unlink(missing_ok=True)


def load(reports_root: Path) -> list[CouldNotRun]:
    """The notes, newest first; a file that is not one (too big, not JSON, fields missing) is left out."""
    folder = Path(reports_root) / FOLDER
    if not folder.is_dir() or folder.is_symlink():
        return []
    out = []
    for f in sorted(folder.glob("*.json")):
        try:
            d = json.loads(regular_file.read(f, MAX_BYTES).decode("utf-8", errors="replace"))
            rec = CouldNotRun(*(str(d[k]) for k in ("design", "flow", "reason", "commit", "when")))
        except (regular_file.NotReadable, ValueError, KeyError, TypeError):
            continue
        if f.name == f"{rec.design}.{rec.flow}.json":  # a file renamed by hand names another design: not shown
            out.append(rec)
    return sorted(out, key=lambda r: r.when, reverse=True)
