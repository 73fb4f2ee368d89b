"""Read a file that arrives from outside (a report, a metrics record) only when it is a regular file,
and never more than a cap of it.

/dev/zero, a FIFO, a socket or a terminal has no end (or none yet): it is refused before a byte is
read. The file is opened without blocking (a FIFO with no writer would block open() itself) and
checked on the open descriptor (a path swapped between a check and the open cannot slip through),
then read up to the cap plus one byte, so a file that grows past the cap is refused too. Each caller
words the refusal for its own kind of file (NotReadable.why says which refusal it is)."""

from __future__ import annotations

import os
import stat
from pathlib import Path


class NotReadable(Exception):
    """why: missing | directory | special (detail: what it is) | too_big (detail: its size) | grew | oserror"""

    def __init__(self, why: str, detail: str = ""):
        super().__init__(f"{why}: {detail}" if detail else why)
        self.why, self.detail = why, detail


def kind_of(mode: int) -> str:
    for test, name in ((stat.S_ISCHR, "character device"), (stat.S_ISBLK, "block device"),
                       (stat.S_ISFIFO, "FIFO"), (stat.S_ISSOCK, "socket")):
        if test(mode):
            return name
    return "special file"


def read(path: str | Path, cap: int) -> bytes:
    """The bytes of the regular file at path, at most cap of them; NotReadable otherwise."""
    return _read(path, cap, whole=True)


def head(path: str | Path, n: int) -> bytes:
    """The first n bytes (or fewer) of the regular file at path; NotReadable when it is not one."""
    return _read(path, n, whole=False)


def _read(path: str | Path, cap: int, whole: bool) -> bytes:
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except FileNotFoundError:
        raise NotReadable("missing") from None
    except IsADirectoryError:
        raise NotReadable("directory") from None
    except OSError as e:
        raise NotReadable("oserror", str(e.strerror or e)) from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise NotReadable("directory")
        if not stat.S_ISREG(st.st_mode):
            raise NotReadable("special", kind_of(st.st_mode))
        if whole and st.st_size > cap:
            raise NotReadable("too_big", f"{st.st_size:,}")
        os.set_blocking(fd, True)
        chunks, got = [], 0
        while got <= cap:
            chunk = os.read(fd, min(1 << 24, cap + 1 - got))
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
        data = b"".join(chunks)
        if got > cap:
            if whole:
                raise NotReadable("grew")
            data = data[:cap]
        return data
    except OSError as e:
        raise NotReadable("oserror", str(e.strerror or e)) from None
    finally:
        os.close(fd)
