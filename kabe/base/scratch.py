"""One build at a time in a scratch folder (build/<design>/<flow>/).

Two `doit build:<design>` of one design at once used to run Yosys in the same folder at the same moment; it was
harmless only while both had identical inputs. The second build now waits for the first (and says
so): each flow run sees only its own files, and the two archives are written one after the other.
The lock is an flock on a file beside the folder (a flow may empty its folder), released by the
kernel when its holder exits, even on a crash: a stale lock cannot block anyone. Every tool the build
starts holds the lock too (kabe.base.tool_group.inherited), so after a kill -9 of the build the next one
waits until the last of the old build's tools has exited, not only the build's own process.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Callable, Iterator

from kabe.base import lock, tool_group


def lock_file(folder: Path) -> Path:
    folder = Path(folder)
    return folder.parent / f".{folder.name}.lock"


@contextlib.contextmanager
def exclusive(folder: Path, say: Callable[[str], None] = print) -> Iterator[Path]:
    """Hold `folder` for this process; while another holds it, say so once and wait."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    with open(lock_file(folder), "a+") as f:

        def busy() -> None:
            f.seek(0)
            holder = f.read().strip() or "unknown"
            say(f"{folder} is in use by another build (pid {holder}); waiting for it to finish")

        waited = lock.take(f, busy)
        if waited is not None:
            say(f"{folder} is free after {waited:.0f} s; building")
        f.seek(0)
        f.truncate()
        f.write(f"{os.getpid()}\n")
        f.flush()
        try:
            with tool_group.inherited(f.fileno()):
                yield folder
        finally:
            lock.release(f)
