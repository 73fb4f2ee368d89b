"""Every archived simulation result (reports/<commit>/<design>/sim/result.json, written by
`doit sim:<design>`), in git order: the report page shows the latest per design."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from kabe.base.paths import REPORTS, ROOT
from kabe.records import history

# Fields the page shows; a result.json without them is not one the simulation runner wrote.
_NEEDED = ("rows", "mismatches", "problems", "passed", "beats_per_cycle", "seed")


@dataclass(frozen=True)
class SimEntry:
    commit: str  # archive directory name: sha or sha-dirty
    design: str
    path: Path
    result: dict


def load(reports_root: Path = REPORTS, root: Path = ROOT) -> tuple[list[SimEntry], list[Path]]:
    """(results oldest first in git order, result.json files that could not be read)."""
    entries, unreadable = [], []
    for path in sorted(Path(reports_root).glob("*/*/sim/result.json")):
        try:
            result = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError):
            unreadable.append(path)
            continue
        if not isinstance(result, dict) or any(k not in result for k in _NEEDED):
            unreadable.append(path)
            continue
        entries.append(SimEntry(path.parent.parent.parent.name, path.parent.parent.name, path, result))
    rank = {sha: i for i, sha in enumerate(history.git_order(root))}
    entries.sort(key=lambda e: (rank.get(e.commit.removesuffix("-dirty"), len(rank)), e.commit.endswith("-dirty"),
                                e.design))
    return entries, unreadable


def latest_per_design(entries: list[SimEntry]) -> dict[str, SimEntry]:
    latest: dict[str, SimEntry] = {}
    for e in entries:  # git order: the last one wins
        latest[e.design] = e
    return dict(sorted(latest.items()))
