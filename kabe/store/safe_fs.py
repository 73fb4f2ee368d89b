"""Writes and deletes that stay inside a root (the checkout's build/ or reports/).

kabe replaces whole folders under those roots (archives, Vivado projects, Verilator builds). A
symlink planted below the root (reports/<sha> pointing at someone's home, say) would otherwise be
followed: the archive written there and the files found there moved aside and deleted. So every
folder kabe creates, replaces or deletes is first checked, component by component from the root
down, and a symlink anywhere on that way is refused with UnsafePathError; nothing is followed or
deleted through it. The root itself may be a link (a user may put build/ on another disk on purpose).

Files and folders are created with the user's umask (temp-file helpers default to 0600/0700, which
would make an archive unreadable to the group that shares it).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from kabe.base.errors import UserError
from kabe.base.paths import BUILD, REPORTS, ROOT


class UnsafePathError(UserError, OSError):
    """A write or delete would go through a symlink or outside its root."""


ROOT_NAMES = tuple(dict.fromkeys(("reports", "build", REPORTS.name, BUILD.name)))  # [tool.kabe] may rename them


def _holds_or_is_in_checkout(p: Path) -> bool:
    """Is p the checkout, a folder above it, or a folder inside it other than reports/ and build/?"""
    checkout = Path(os.path.abspath(ROOT))
    inside_roots = any(p == r or p.is_relative_to(r) for r in (Path(os.path.abspath(REPORTS)), Path(os.path.abspath(BUILD))))
    return checkout.is_relative_to(p) or (p.is_relative_to(checkout) and not inside_roots)


def default_root(path: Path, *, else_parent: bool = False) -> Path:
    """The checkout's reports/ or build/ when path lies under one; else the nearest folder above path
    named reports or build (another checkout's, a test's, a sweep worker's scratch build/); else, for
    a path outside this checkout (a temp folder), path's parent. Refused (UnsafePathError): any other
    path in the checkout, and a path whose parent holds the checkout. A folder is never replaced or
    deleted under a root above reports/ or build/, where a bad name (a pulled '../..') would reach the
    checkout itself. else_parent: the parent in every case (a single-file write, a Vivado project at a
    path the caller chose), never used for archive folders."""
    p = Path(os.path.abspath(path))
    for root in (REPORTS, BUILD):
        if p.is_relative_to(root) and p != root:
            return root
    for above in p.parents:
        if above.name in ROOT_NAMES and not _holds_or_is_in_checkout(above):
            return above
    if else_parent or not _holds_or_is_in_checkout(p.parent):
        return p.parent
    raise UnsafePathError(f"{path} is not inside {REPORTS} or {BUILD}; kabe writes and replaces archive folders "
                          f"only there, never elsewhere in the checkout or above it")


def checked_root(root: Path) -> Path:
    """An explicit root for an archive write: anything but the checkout, a folder above it, or a folder
    in it other than reports/ and build/ (and what lies under them)."""
    r = Path(os.path.abspath(root))
    if _holds_or_is_in_checkout(r):
        raise UnsafePathError(f"{root} is not a reports/ or build/ folder; kabe replaces archive folders only "
                              f"under {REPORTS} or {BUILD}, never under a root above them")
    return r


def confined(path: Path, root: Path) -> Path:
    """path made absolute without following links, once it is known to lie strictly under root and
    no existing component between root (exclusive) and path (inclusive) is a symlink."""
    root_abs = Path(os.path.abspath(root))
    p = Path(os.path.abspath(path))  # '..' is resolved by name, so it cannot climb out unseen
    if p == root_abs or not p.is_relative_to(root_abs):
        raise UnsafePathError(f"{path} is not inside {root}; kabe writes and deletes only under it")
    cur = root_abs
    for part in p.relative_to(root_abs).parts:
        cur = cur / part
        if os.path.islink(cur):
            raise UnsafePathError(f"{cur} is a symbolic link (to {os.readlink(cur)}); kabe does not write or delete "
                                  f"through links under {root_abs}. Fix: remove the link (rm {cur}), not its target")
        if not os.path.lexists(cur):
            break
        if cur != p and not os.path.isdir(cur):
            raise UnsafePathError(f"{cur} is a file where kabe needs a folder; move it away")
    return p


def make_dirs(path: Path, root: Path) -> Path:
    """mkdir -p under root, refusing a symlink on the way (checked again after each mkdir, so a link
    appearing between the check and the mkdir is still caught)."""
    cur = Path(os.path.abspath(root))
    if Path(os.path.abspath(path)) == cur:
        os.makedirs(cur, exist_ok=True)  # the root itself (a link there is the user's choice)
        return cur
    p = confined(path, root)
    os.makedirs(cur, exist_ok=True)
    for part in p.relative_to(cur).parts:
        cur = cur / part
        try:
            os.mkdir(cur)
        except FileExistsError:
            pass
        if os.path.islink(cur) or not os.path.isdir(cur):
            confined(cur, root)  # raises, naming the link or the file in the way
    return p


def remove_tree(path: Path, root: Path) -> None:
    """rm -r path (when it exists), only inside root and never through a link. shutil.rmtree on Linux
    works on file descriptors and unlinks links inside the tree instead of following them."""
    p = confined(path, root)
    if not os.path.lexists(p):
        return
    if not os.path.isdir(p):
        raise UnsafePathError(f"{p} is a file where kabe expected its own folder; move it away")
    shutil.rmtree(p)


def current_umask() -> int:
    """The process umask, read without changing it (os.umask can only set it, which races with threads)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def apply_umask(path: Path, *, directory: bool) -> None:
    """Give a temp file or folder the mode a plain open()/mkdir() would have given it."""
    os.chmod(path, (0o777 if directory else 0o666) & ~current_umask())
