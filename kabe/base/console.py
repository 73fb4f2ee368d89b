"""The console every verb prints through: rich on a terminal, plain unwrapped lines in a log.

Rich assumes 80 columns when output is not a terminal (a CI log, `| tee`), so it wrapped paths in
the middle (`.../sim/result.` / `json`) and padded every `log` line to 80 columns. A log has no
width: there, lines are never wrapped (soft wrap), tables get room for their longest cell, and
`log` is a plain print. COLUMNS, when set, still wins, as rich documents.
"""

from __future__ import annotations

import os

from rich.console import Console

# Wide enough for any path or netlist name; tables size to their content, never to this.
_LOG_WIDTH = 1000


class KabeConsole(Console):
    def log(self, *objects, **kwargs) -> None:
        if self.is_terminal:
            super().log(*objects, **kwargs)
        else:  # rich's log renders a full-width grid: in a 1000-column log that is 1000 spaces a line
            self.print(*objects, soft_wrap=True)


def make_console(*, stderr: bool = False, file=None) -> Console:
    """A console that wraps on a terminal only (file: a stream to write to instead of stdout/stderr)."""
    probe = Console(stderr=stderr, file=file)
    if probe.is_terminal or os.environ.get("COLUMNS"):
        return KabeConsole(stderr=stderr, file=file)
    return KabeConsole(stderr=stderr, file=file, width=_LOG_WIDTH, soft_wrap=True)
