"""A cache hit (kabe.cache.cache): no tool runs. The earlier build's results are re-gated with
today's facts (kabe.rules.verdict) and archived under this commit, naming the build that ran the tools
(`reused_from`). Also the archive writing both a hit and a fresh build share: reports/ checked
writable before any tool runs, and an OSError while archiving said in one line (path, errno)."""

from __future__ import annotations

import datetime as dt
import errno
import os
import tempfile
import time
from pathlib import Path

from kabe.project import designs
from kabe.base import provenance
from kabe.build.verdict import SECTIONS, build_verdict
from kabe.base.errors import UserError
from kabe.base.paths import ROOT
from kabe.cache import cache
from kabe.records import metrics
from kabe.store.archive import archive_dir, to_json, write_atomic


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


def reuse(entry: cache.Entry, design: designs.Design, flow_name: str, commit: provenance.Commit,
          key: cache.CacheKey, reports_root: Path, started: str, t0: float) -> dict:
    """Archive the hit `entry` under `commit`, re-gated; returns the new metrics record."""
    old = entry.record
    utilization = None if old["utilization"].get("missing") else old["utilization"]
    verdict = build_verdict(design, flow_name, old["timing"], utilization, old.get("sim"), old.get("gate"),
                            old.get("verification"), {k: old[k] for k in SECTIONS if old.get(k) is not None})
    recorded = {Path(k) if Path(k).is_absolute() else ROOT / k: v for k, v in old["inputs"].items()}
    inputs = {**old["inputs"], **provenance.input_hashes(p for p in recorded if p.is_file())}
    origin, origin_dirty = cache.built_by(old)  # a reuse of a reuse names the build that ran the tools
    reused_from = {"commit": origin, "dirty": origin_dirty, "key": key.key}
    record = {k: v for k, v in old.items() if not k.startswith("_")}
    record.update({"commit": commit.sha, "dirty": commit.dirty, "gate": verdict.as_dict(), "inputs": inputs,
                   "started": started, "finished": _now(), "seconds": round(time.monotonic() - t0, 3),
                   "tool_seconds": 0.0, "cache_key": key.key, "reused_from": reused_from})
    metrics.validate(record)
    manifest = {**entry.manifest, "commit": commit.sha, "dirty": commit.dirty, "inputs": inputs,
                "reused_from": reused_from}
    files: dict[str, str | Path] = {"metrics.json": to_json(record), "manifest.json": to_json(manifest),
                                    cache.KEY_FILE: to_json(key.material)}
    files.update(cache.reused_files(entry))
    dest = write_unit(archive_dir(commit, design.name, flow_name, reports_root), files, reports_root, key.key)
    record["_archive"] = str(dest)
    return record


class ArchiveWriteError(UserError):
    """reports/ cannot take the archive (read-only, full, a permission): one line, path and errno."""


def _os_error_line(e: OSError, where: Path) -> str:
    name = errno.errorcode.get(e.errno, str(e.errno)) if e.errno is not None else "error"
    # a failed copy names its source in filename and the file being written in filename2 (shutil)
    return f"{e.filename2 or e.filename or where}: {name} ({e.strerror or e}): cannot write the build's archive"


def write_unit(dest: Path, files, reports_root: Path, key: str | None) -> Path:
    """Write one archive atomically and note it in the cache index; an OSError (a read-only or full
    reports/, a permission) is one line naming the path and the errno (exit 2), never a traceback."""
    try:
        written = write_atomic(dest, files, root=reports_root)
        cache.remember(reports_root, written, key)
    except UserError:  # already one sentence (kabe.store.safe_fs refuses an unsafe path)
        raise
    except OSError as e:
        raise ArchiveWriteError(f"{_os_error_line(e, dest)}; free space or fix the permissions of "
                                f"{reports_root}, then build again") from None
    return written


_MIN_FREE_BYTES = 16 << 20  # an archive of the open flow is ~1 MB; the Vivado flow's bitstream ~4 MB
_PROBE_BYTES = 64 << 10


def check_writable(reports_root: Path) -> None:
    """Before any tool runs: reports/ can be created, written and has room, else ArchiveWriteError."""
    root = Path(reports_root)
    try:
        root.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=root, prefix=".kabe-write-check-") as probe:
            probe.write(bytes(_PROBE_BYTES))  # a disk with less room than this cannot take any archive
            probe.flush()
            os.fsync(probe.fileno())
        st = os.statvfs(root)
    except OSError as e:
        raise ArchiveWriteError(f"{_os_error_line(e, root)}; checked before any tool runs: fix it, then "
                                f"build again") from None
    free = st.f_bavail * st.f_frsize
    if free < _MIN_FREE_BYTES:
        raise ArchiveWriteError(f"{root}: ENOSPC (only {free >> 20} MB free, an archive needs up to "
                                f"{_MIN_FREE_BYTES >> 20} MB): cannot write the build's archive; checked before "
                                f"any tool runs: free space, then build again")
