"""The per-commit archive: reports/<commit>/<design>/<kind>/, written atomically.

A directory appears under its final name only once every file in it is written (temp dir +
rename), so an interrupted build never leaves a half archive that looks complete.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Mapping

from kabe.paths import REPORTS
from kabe.provenance import Commit
from kabe.records import safe_fs


def archive_dir(commit: Commit, design: str, kind: str, root: Path = REPORTS) -> Path:
    """kind: a flow name (open, vivado), 'sim' or 'board'."""
    return root / commit.archive_name / design / kind


def to_json(obj) -> str:
    return json.dumps(obj, indent=2, sort_keys=False) + "\n"


def write_atomic(dest: Path, files: Mapping[str, str | bytes | Path], *, root: Path | None = None) -> Path:
    """Write files (name -> text, bytes, or a path to copy) into dest, replacing it as a whole.

    The new directory is filled beside dest and renamed into place; the previous dest (if any) is
    moved aside first and removed after, so a reader sees the old archive or the new one, never a mix.
    Everything happens under root (default: the checkout's reports/ or build/ holding dest, else
    dest's parent): a symlink on the way is refused (safe_fs.UnsafePathError), never written or
    deleted through. Files and folders get the user's umask.
    """
    root = safe_fs.default_root(dest) if root is None else Path(root)
    dest = safe_fs.confined(dest, root)
    if os.path.lexists(dest) and not os.path.isdir(dest):
        raise safe_fs.UnsafePathError(f"{dest} is a file where kabe writes an archive folder; move it away")
    safe_fs.make_dirs(dest.parent, root)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.tmp-", dir=dest.parent))
    try:
        for name, content in files.items():
            target = safe_fs.confined(tmp / name, tmp)  # a name like "../x" stays inside the new folder
            safe_fs.make_dirs(target.parent, tmp)
            if isinstance(content, Path):
                shutil.copyfile(content, target)  # content only: the archive's modes follow the umask
            elif isinstance(content, bytes):
                target.write_bytes(content)
            else:
                target.write_text(content)
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
    """One file, written to a temp name and renamed (os.replace is atomic on POSIX). Same root rules
    as write_atomic: a symlink at path or above it is refused."""
    root = safe_fs.default_root(path) if root is None else Path(root)
    path = safe_fs.confined(path, root)
    safe_fs.make_dirs(path.parent, root)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
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
