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


def archive_dir(commit: Commit, design: str, kind: str, root: Path = REPORTS) -> Path:
    """kind: a flow name (open, vivado), 'sim' or 'board'."""
    return root / commit.archive_name / design / kind


def to_json(obj) -> str:
    return json.dumps(obj, indent=2, sort_keys=False) + "\n"


def write_atomic(dest: Path, files: Mapping[str, str | bytes | Path]) -> Path:
    """Write files (name -> text, bytes, or a path to copy) into dest, replacing it as a whole.

    The new directory is filled beside dest and renamed into place; the previous dest (if any) is
    moved aside first and removed after, so a reader sees the old archive or the new one, never a mix.
    """
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.tmp-", dir=dest.parent))
    try:
        for name, content in files.items():
            target = tmp / name
            target.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, Path):
                shutil.copy2(content, target)
            elif isinstance(content, bytes):
                target.write_bytes(content)
            else:
                target.write_text(content)
        old = None
        if dest.exists():
            old = dest.parent / f".{dest.name}.old-{os.getpid()}"
            os.rename(dest, old)
        os.rename(tmp, dest)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return dest


def write_text_atomic(path: Path, text: str) -> Path:
    """One file, written to a temp name and renamed (os.replace is atomic on POSIX)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def write_json_atomic(path: Path, obj) -> Path:
    return write_text_atomic(path, to_json(obj))
