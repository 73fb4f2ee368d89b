"""Board profiles as data: what a build needs to know about the board it targets.

A board is a YAML profile (docs/boards.md): kabe's own ship in kabe/boards/profiles/, a project adds
or overrides one in its boards/ folder (`[tool.kabe] boards_dir`) with no code anywhere else. A
design names its board in design.yaml (`board: v80`; default pynq-z1), and every layer that needs
a board fact (the part, the fabric family Yosys maps to, whether kabe can estimate timing there,
the block-design template, the flow's outputs, how to program the board, the memory ports, the
figures the perf models use) reads it from the Board here, never from a spelling of its own.

Every number of the perf models carries where it came from (`Figure.source`), because the boards'
bandwidth figures are of very different quality: the PYNQ-Z1 wall was measured on the board, the
V80's are a forum post's claim and vendor figures for different things.

The clock period here is only the default for the documents' builds (7.00 ns). The clock of a
real build comes from its constraint / metrics.json (`clock_period_ns`), never from this file.
"""

from __future__ import annotations

from pathlib import Path

from kabe import paths
from kabe.boards.profile import (BoardError, Board, Figure, MemoryPorts, PROFILE_DIR, load_profile,
                                 profile_files)

__all__ = ["ALVEO_V80", "Board", "BoardError", "DEFAULT_BOARD", "Figure", "MemoryPorts", "PYNQ_Z1", "get",
           "known", "v80_bandwidths"]

DEFAULT_BOARD = "pynq-z1"  # a design.yaml without `board:` targets the board the documents built on


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


PYNQ_Z1 = load_profile(PROFILE_DIR / "pynq-z1.yaml")
ALVEO_V80 = load_profile(PROFILE_DIR / "v80.yaml")


def v80_bandwidths() -> dict[str, Figure]:
    """The V80 bandwidth figures by label: 'post' (820 GB/s, the forum post's claim) and 'amd'
    (AMD's figures, by what each is for: see the profile's notes)."""
    return {f.label: f for f in ALVEO_V80.other_bandwidths}
