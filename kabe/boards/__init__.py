"""Board profiles as data: what a build needs to know about the board it targets.

A board is a YAML profile (docs/boards.md): kabe's own ship in kabe/boards/profiles/, a project adds
or overrides one in its boards/ folder (`[tool.kabe] boards_dir`) with no code anywhere else. A
design names its board in design.yaml (`board: v80`; else the project's [tool.kabe] default_board),
and every layer that needs a board fact (the part, the fabric family Yosys maps to, whether kabe can
estimate timing there, the block-design template, the flow's outputs, how to program the board, the
memory ports) reads it from the Board here, never from a spelling of its own.

The clock period of a profile is only the board's usual PL clock. The clock of a real build comes
from its constraint / metrics.json (`clock_period_ns`), never from this file.
"""

from __future__ import annotations

from pathlib import Path

from kabe.base import paths
from kabe.boards.profile import (BoardError, Board, Figure, MemoryPorts, PROFILE_DIR, load_profile,
                                 profile_files)

__all__ = ["Board", "BoardError", "Figure", "MemoryPorts", "get", "known"]


def known(project_dir: Path | None = None) -> dict[str, Path]:
    """Every board key -> its profile file: kabe's own, then the project's (which win on a clash)."""
    found = profile_files(PROFILE_DIR)
    found.update(profile_files(paths.BOARDS if project_dir is None else Path(project_dir)))
    return found


def _normal(name: str) -> str:
    return str(name).strip().lower().replace("_", "-").replace(" ", "-")


def get(name: str, project_dir: Path | None = None) -> Board:
    """The board `name` (its key, or its display name: "Alveo V80" is "v80"); unknown names raise
    BoardError listing the known boards."""
    boards = known(project_dir)
    key = _normal(name)
    if key not in boards:
        by_display = {_normal(load_profile(f).name): k for k, f in boards.items()}
        key = by_display.get(key, key)
    if key not in boards:
        raise BoardError(f"unknown board {str(name)[:60]!r}; known boards: {', '.join(sorted(boards))} "
                         f"(add one as boards/<key>.yaml in the project: docs/boards.md)")
    return load_profile(boards[key])
