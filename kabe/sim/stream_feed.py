"""The inputs a model gives piece by piece (kabe.verify.Chunks), written to the harness while it simulates.

Each such input is a FIFO in the run's folder that the harness reads as it needs beats (harness.cpp's
--in-stream); one thread per FIFO asks the model for the next part, checks it as golden.words checks a
whole array, and writes it. The pipe holds a few parts at most, so the model's work runs on the other core
beside the simulation instead of before it, and no input is ever whole in memory or on disk.

A model that fails (or gives another count of beats than it said) closes its FIFO early: the harness stops
at the end of what it got (exit 2), and the run says the model's error, not the harness's.
"""

from __future__ import annotations

import errno
import fcntl
import os
import threading
import time
from pathlib import Path
from typing import Any, Callable

from .. import designs
from . import golden

_PIPE_BYTES = 1 << 20  # the pipe's buffer (Linux's 64 KiB default costs a context switch every 64 KiB)


class StreamFeed:
    """One input stream: its FIFO, and the thread that writes the model's parts to it."""

    def __init__(self, d: designs.Design, name: str, bits: int, chunks: Any, path: Path):
        self.d, self.name, self.bits, self.chunks, self.path = d, name, bits, chunks, path
        self.error: BaseException | None = None
        self.seconds = 0.0  # spent in the model's parts (beside the simulation)
        self._thread: threading.Thread | None = None
        os.mkfifo(path)

    def start(self, running: Callable[[], bool]) -> None:
        """Write the parts on a thread; running() says whether the harness is still there to open the FIFO."""
        self._thread = threading.Thread(target=self._run, args=(running,), name=f"kabe-feed-{self.name}",
                                        daemon=True)
        self._thread.start()

    def join(self) -> None:
        if self._thread is not None:
            self._thread.join()

    def _open(self, running: Callable[[], bool]) -> int | None:
        """The FIFO's write end once the harness opened its read end; None when the harness ended first
        (a write-only open of a FIFO without a reader fails with ENXIO when non-blocking: retried)."""
        while True:
            try:
                fd = os.open(self.path, os.O_WRONLY | os.O_NONBLOCK)
            except OSError as e:
                if e.errno != errno.ENXIO:
                    raise
                if not running():
                    return None
                time.sleep(0.002)
                continue
            fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
            try:
                fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, _PIPE_BYTES)
            except OSError:  # over /proc/sys/fs/pipe-max-size: the default buffer works, a little slower
                pass
            return fd

    def _run(self, running: Callable[[], bool]) -> None:
        fd = None
        try:
            fd = self._open(running)
            if fd is not None:
                self._write_parts(fd)
        except BrokenPipeError:  # the harness stopped reading (the design's own stop, a cycle limit): its verdict
            pass
        except BaseException as e:  # noqa: BLE001 - said by join_all() on the run's thread
            self.error = e
        finally:
            if fd is not None:
                os.close(fd)

    def _write_parts(self, fd: int) -> None:
        where = f"the golden model {self.d.verify.value} of {self.d.name}"
        sent = 0
        parts = _parts(where, self.name, self.chunks)
        while True:
            t0 = time.monotonic()  # the model's time (writing is mostly waiting for the harness: not counted)
            part = next(parts, None)
            if part is None:
                break
            words = golden.words(self.d, self.name, part, self.bits)
            self.seconds += time.monotonic() - t0
            sent += int(words.shape[0])
            if sent > self.chunks.beats:
                raise golden.ModelError(f"{where}: the parts of {self.name} hold more than the {self.chunks.beats} "
                                        f"beats its Chunks says")
            view = memoryview(words.astype("<u8", copy=False).reshape(-1)).cast("B")
            while view:
                view = view[os.write(fd, view):]
        if sent != self.chunks.beats:
            raise golden.ModelError(f"{where}: the parts of {self.name} hold {sent} beats, its Chunks says "
                                    f"{self.chunks.beats}")


def _parts(where: str, name: str, chunks: Any):
    """The model's parts one by one; whatever its generator raises is one line naming the model."""
    try:
        it = iter(chunks.parts())
    except Exception as e:  # noqa: BLE001 - a model's bug is the user's to fix: one line
        raise golden.ModelError(f"{where}: its parts of {name} raised {type(e).__name__}: {golden.line(e)}") from None
    while True:
        try:
            part = next(it)
        except StopIteration:
            return
        except Exception as e:  # noqa: BLE001 - as above
            raise golden.ModelError(f"{where}: its parts of {name} raised {type(e).__name__}: "
                                    f"{golden.line(e)}") from None
        yield part


def join_all(feeds: list[StreamFeed]) -> None:
    """Wait for every feed; the first model error is raised here (one line, as golden's are)."""
    for f in feeds:
        f.join()
    for f in feeds:
        if f.error is not None:
            e = f.error
            if isinstance(e, golden.ModelError):
                raise e
            raise golden.ModelError(f"the golden model {f.d.verify.value} of {f.d.name}: writing {f.name} "
                                    f"failed ({type(e).__name__}: {e})") from None
