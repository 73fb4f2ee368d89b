"""The one lock-and-wait: an exclusive flock on an open file, taken at once when free, else after saying
so once and waiting (a build folder, Verilator's compile folder). The kernel drops the lock when its
holder exits, even on a crash, so a stale lock cannot block anyone; Ctrl-C still interrupts the wait."""

from __future__ import annotations

import fcntl
import time
from typing import IO, Callable


def take(f: IO | int, on_busy: Callable[[], None] | None = None) -> float | None:
    """Hold f's lock. None when it was free; else the seconds waited, after on_busy() was called once."""
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return None
    except BlockingIOError:
        if on_busy is not None:
            on_busy()
        t0 = time.monotonic()
        fcntl.flock(f, fcntl.LOCK_EX)
        return time.monotonic() - t0


def release(f: IO | int) -> None:
    fcntl.flock(f, fcntl.LOCK_UN)
