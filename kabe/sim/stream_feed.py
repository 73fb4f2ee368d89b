"""The inputs a model gives piece by piece (kabe.verify.Chunks), written to the harness while it simulates.

Each such input is a FIFO in the run's folder that the harness reads as it needs beats (harness.cpp's
--in-stream). Per FIFO, one thread asks the model for the next parts (a few ahead), checks each as
golden.words checks a whole array, and another writes them: the model's work runs on the other core beside
the simulation instead of before it, and no input is ever whole in memory or on disk.

A model that fails (or gives another count of beats than it said) closes its FIFO early: the harness stops
at the end of what it got (exit 2), and the run says the model's error, not the harness's.
"""

from __future__ import annotations

import errno
import fcntl
import os
import queue
import threading
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

from kabe.project import designs
from . import golden

_PIPE_BYTES = 1 << 20  # the pipe's buffer (Linux's 64 KiB default costs a context switch every 64 KiB)
_AHEAD = 3  # parts computed ahead of the one being written (a few MiB each)
_END = object()  # the producer's last item: every part was put


class StreamFeed:
    """One input stream: its FIFO, a thread computing the model's parts and one writing them to it."""

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
        """Write the parts a second thread computes (_AHEAD of them at most): the model works on the next
        parts while this one waits for the harness to read, so the simulation is not kept waiting."""
        ready: queue.Queue = queue.Queue(maxsize=_AHEAD)
        stop = threading.Event()
        producer = threading.Thread(target=self._produce, args=(ready, stop), name=f"kabe-parts-{self.name}",
                                    daemon=True)
        producer.start()
        fd = None
        try:
            fd = self._open(running)
            while fd is not None:
                item = ready.get()
                if item is _END:
                    break
                if isinstance(item, BaseException):
                    raise item
                view = memoryview(item).cast("B")
                while view:
                    view = view[os.write(fd, view):]
        except BrokenPipeError:  # the harness stopped reading (the design's own stop, a cycle limit): its verdict
            pass
        except BaseException as e:  # noqa: BLE001 - said by join_all() on the run's thread
            self.error = e
        finally:
            stop.set()
            if fd is not None:
                os.close(fd)  # before waiting for the producer: the harness sees the end of a failed stream now
            producer.join()

    def _produce(self, ready: queue.Queue, stop: threading.Event) -> None:
        """The model's parts as uint64 words, checked, put on `ready`; then _END, or the error that stopped it."""
        where = f"the golden model {self.d.verify.value} of {self.d.name}"
        sent = 0
        try:
            parts = _parts(where, self.name, self.chunks)
            while not stop.is_set():
                t0 = time.monotonic()  # the model's time (the writer's is mostly waiting for the harness)
                part = next(parts, None)
                if part is None:
                    break
                words = golden.words(self.d, self.name, part, self.bits)
                sent += int(words.shape[0])
                if sent > self.chunks.beats:
                    raise golden.ModelError(f"{where}: the parts of {self.name} hold more than the "
                                            f"{self.chunks.beats} beats its Chunks says")
                words = np.ascontiguousarray(words.reshape(-1), dtype="<u8")
                self.seconds += time.monotonic() - t0
                _put(ready, words, stop)
            if sent != self.chunks.beats and not stop.is_set():
                raise golden.ModelError(f"{where}: the parts of {self.name} hold {sent} beats, its Chunks says "
                                        f"{self.chunks.beats}")
            _put(ready, _END, stop)
        except BaseException as e:  # noqa: BLE001 - handed to the writer, which says it
            _put(ready, e, stop)


def _put(ready: queue.Queue, item: Any, stop: threading.Event) -> None:
    """item on the queue, unless the writer stopped (then nobody takes it: dropped)."""
    while not stop.is_set():
        try:
            ready.put(item, timeout=0.05)
            return
        except queue.Full:
            continue


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


class Output:
    """The harness's stdout and stderr, read on a thread from its start: while the run's thread waits for the
    feeds (join_all), a design printing more than a pipe holds would otherwise stop on its write, stop reading
    its inputs, and the feeds would wait for it for ever."""

    def __init__(self, proc):
        self._out: tuple[str, str] = ("", "")
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._read, args=(proc,), name="kabe-harness-output", daemon=True)
        self._thread.start()

    def _read(self, proc) -> None:
        try:
            self._out = proc.communicate()
        except BaseException as e:  # noqa: BLE001 - raised on the run's thread, in wait()
            self._error = e

    def wait(self) -> tuple[str, str]:
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._out


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
