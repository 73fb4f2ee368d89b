"""The per-commit archive: reports/<commit>/<design>/<kind>/, written atomically.

A directory appears under its final name only once every file in it is written (temp dir +
rename), so an interrupted build never leaves a half archive that looks complete.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import time
from pathlib import Path
from typing import BinaryIO, Callable, Mapping

from kabe.base.paths import REPORTS
from kabe.base.provenance import Commit
from kabe.store import safe_fs


def archive_dir(commit: Commit, design: str, kind: str, root: Path = REPORTS) -> Path:
    """kind: a flow name (open, vivado), 'sim' or 'board'."""
    return root / commit.archive_name / design / kind


def to_json(obj) -> str:
    return json.dumps(obj, indent=2, sort_keys=False) + "\n"


Content = str | bytes | Path | Callable[[BinaryIO], None]
# Leftovers of a writer killed mid-write (kill -9, power loss): '.<name>.tmp-<pid>-<random>' (a folder
# being filled), '.<name>.old-<pid>' (the previous folder, moved aside for a moment), and
# '.<name>.<pid>-<random>' (write_text_atomic's temp file, e.g. '..cache-index.json.<pid>-x').
_TMP_DIR = re.compile(r"^\.(?P<name>.+)\.tmp-(?P<pid>\d+)-[A-Za-z0-9_]+$")
_OLD_DIR = re.compile(r"^\.(?P<name>.+)\.old-(?P<pid>\d+)$")
_TMP_FILE = re.compile(r"^\.(?P<name>.+)\.(?P<pid>\d+)-[A-Za-z0-9_]+$")
# The same, as kabe named them before the writer's pid was in the name: gone once this old.
_LEGACY_TMP_DIR = re.compile(r"^\.(?P<name>.+)\.tmp-[a-z0-9_]{8}$")
_LEGACY_TMP_FILE = re.compile(r"^\.(?P<name>.+)\.[a-z0-9_]{8}$")
LEGACY_AGE_S = 3600  # no archive write takes an hour between its temp folder and its rename


def _writer_gone(pid: int) -> bool:
    """Is the process that owns a leftover gone? (A live process of that id keeps its files: it may
    be the writer, and if the id was reused, the next write after it exits cleans up.)"""
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False  # alive, someone else's
    return False


def _legacy_gone(path: Path) -> bool:
    try:
        return time.time() - os.lstat(path).st_mtime > LEGACY_AGE_S
    except FileNotFoundError:
        return False


def _leftover(folder: Path, entry: str):
    """(match, pid or None) when entry is a dead writer's leftover, else None."""
    m = _OLD_DIR.match(entry) or _TMP_DIR.match(entry) or _TMP_FILE.match(entry)
    if m:
        return m if _writer_gone(int(m["pid"])) else None
    m = _LEGACY_TMP_DIR.match(entry) or _LEGACY_TMP_FILE.match(entry)
    return m if m and _legacy_gone(Path(folder) / entry) else None


def recover_leftovers(folder: Path, root: Path) -> list[str]:
    """Clean what dead writers left in folder: an '.old' whose final name is missing is put back (it
    is the complete previous archive; its writer died between the two renames), every other '.old' and
    '.tmp' is removed. Returns what was done, one line each. Entries of live writers are left alone."""
    done = []
    try:
        entries = sorted(os.listdir(folder))
    except FileNotFoundError:
        return done
    for entry in entries:
        m = _leftover(folder, entry)
        if not m:
            continue
        path = Path(folder) / entry
        final = Path(folder) / m["name"]
        if m.re is _OLD_DIR and not os.path.lexists(final) and os.path.isdir(path) and not os.path.islink(path):
            os.rename(path, final)
            done.append(f"put back {final} from {entry} (its writer was killed mid-replace)")
        elif os.path.isdir(path) and not os.path.islink(path):
            safe_fs.remove_tree(path, root)
            done.append(f"removed {path} (its writer is gone)")
        elif m.re in (_TMP_FILE, _LEGACY_TMP_FILE) or os.path.islink(path):
            os.unlink(path)
            done.append(f"removed {path} (its writer is gone)")
    return done


def _write_content(target: Path, content: Content) -> None:
    if isinstance(content, Path):
        shutil.copyfile(content, target)  # content only: the archive's modes follow the umask
    elif isinstance(content, bytes):
        target.write_bytes(content)
    elif isinstance(content, str):
        target.write_text(content)
    else:  # a writer: streams the bytes itself (a pulled file, decompressed within its caps)
        with open(target, "xb") as f:
            content(f)


def write_atomic(dest: Path, files: Mapping[str, Content], *, root: Path | None = None) -> Path:
    """Write files (name -> text, bytes, a path to copy, or a function writing into an open binary
    file) into dest, replacing it as a whole.

    The new directory is filled beside dest and renamed into place; the previous dest (if any) is
    moved aside first and removed after, so a reader sees the old archive or the new one, never a mix.
    Everything happens under root (default: the reports/ or build/ folder holding dest; a dest under
    neither is refused, and so is a root above them): a symlink on the way is refused
    (safe_fs.UnsafePathError), never written or deleted through. Files and folders get the user's
    umask. Leftovers of killed writers beside dest are recovered first (recover_leftovers).
    """
    root = safe_fs.default_root(dest) if root is None else safe_fs.checked_root(root)
    dest = safe_fs.confined(dest, root)
    if os.path.lexists(dest) and not os.path.isdir(dest):
        raise safe_fs.UnsafePathError(f"{dest} is a file where kabe writes an archive folder; move it away")
    safe_fs.make_dirs(dest.parent, root)
    recover_leftovers(dest.parent, root)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.tmp-{os.getpid()}-", dir=dest.parent))
    try:
        for name, content in files.items():
            target = safe_fs.confined(tmp / name, tmp)  # a name like "../x" stays inside the new folder
            safe_fs.make_dirs(target.parent, tmp)
            _write_content(target, content)
        safe_fs.apply_umask(tmp, directory=True)
        old = None
        if os.path.lexists(dest):
            old = dest.parent / f".{dest.name}.old-{os.getpid()}"
            os.rename(dest, old)
        os.rename(tmp, dest)
    except BaseException as e:
        _discard(tmp, e)
        raise
    if old is not None:
        safe_fs.remove_tree(old, root)  # our own folder, renamed a moment ago; a failure here is said
    return dest


def _discard(tmp: Path, error: BaseException) -> None:
    """Remove a half-written temp folder; if that fails too, say so on the error being raised."""
    try:
        shutil.rmtree(tmp)
    except FileNotFoundError:
        pass
    except OSError as e:
        error.add_note(f"kabe: could not remove the temp folder {tmp}: {e}")


def write_text_atomic(path: Path, text: str, *, root: Path | None = None) -> Path:
    """One file, written to a temp name and renamed (os.replace is atomic on POSIX). A symlink at path
    or above it (up to root: the reports/ or build/ holding it, else its own folder) is refused. Temp
    files of killed writers of the same name are removed first."""
    root = safe_fs.default_root(path, else_parent=True) if root is None else Path(root)
    path = safe_fs.confined(path, root)
    safe_fs.make_dirs(path.parent, root)
    for entry in os.listdir(path.parent):
        m = _leftover(path.parent, entry)
        if m and m.re in (_TMP_FILE, _LEGACY_TMP_FILE) and m["name"] == path.name \
                and not os.path.isdir(path.parent / entry):
            (path.parent / entry).unlink(missing_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{os.getpid()}-", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        safe_fs.apply_umask(Path(tmp), directory=False)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def write_json_atomic(path: Path, obj, *, root: Path | None = None) -> Path:
    return write_text_atomic(path, to_json(obj), root=root)
