"""`git fetch` of the shared archive, watched while it writes: a remote cannot fill this disk.

kabe's caps on what a pull reads (kabe.store.archive_paths: bytes per file, per unit) apply once
the objects are here; git itself would store whatever the remote sends first. A ref holding a
many-gigabyte blob (a mistake, or someone with push rights to the archive ref but no business
filling CI's disk) would do that on every runner that pulls. So the fetch runs with every object
kept in one incoming pack (fetch.unpackLimit=1: no loose objects, one file that grows as the bytes
arrive), and is stopped, its partial pack removed, when that pack passes MAX_FETCH_BYTES or the file
system's free space falls under kabe.base.disk_space's floor. Nothing of a stopped fetch is kept: the ref
is only updated by a fetch that completes.
"""

from __future__ import annotations

import subprocess
import tempfile
import time
from pathlib import Path

from kabe.base import disk_space, tool_group
from kabe.base.git import NO_AUTO_GC, NO_GIT, GitError, run

# A fetch brings what is new on the archive ref: a unit stores at most 256 MB (MAX_UNIT_STORED_BYTES,
# bitstreams included) and a team's first pull of a long archive a few GB. 8 GiB is far above either
# and far under a runner's disk; a team whose archive outgrows it raises [tool.kabe] archive_fetch_max_mb
# (kabe.store.store passes it here).
MAX_FETCH_BYTES = 8 * 2**30
POLL_S = 0.02


class FetchTooLarge(GitError):
    """The remote sent more than a fetch may store."""


def fetch(root: Path, remote: str, src: str, dest: str, *, max_bytes: int = MAX_FETCH_BYTES,
          min_free: int | None = None) -> subprocess.CompletedProcess:
    """`git fetch --no-tags --quiet --no-write-fetch-head remote +src:dest` in root, stopped
    (FetchTooLarge) when its incoming pack passes max_bytes or the disk's free space falls under
    min_free (default kabe.base.disk_space.min_free_bytes()). A fetch that completed before the watch
    saw it pass (a fast local remote) is judged by the pack it left, and undone: its pack removed,
    dest put back as it was."""
    min_free = disk_space.min_free_bytes() if min_free is None else min_free
    pack_dir = Path(root, run(root, "rev-parse", "--git-path", "objects").stdout.decode().strip()) / "pack"
    before = set(pack_dir.iterdir()) if pack_dir.is_dir() else set()
    old_dest = run(root, "rev-parse", "--verify", "--quiet", dest, check=False).stdout.decode().strip()
    argv = ["git", *NO_AUTO_GC, "-c", "fetch.unpackLimit=1", "-c", "transfer.unpackLimit=1", "fetch",
            "--no-tags", "--quiet", "--no-write-fetch-head", remote, f"+{src}:{dest}"]
    with tempfile.TemporaryFile() as err:
        try:
            proc = tool_group.popen(argv, cwd=root, stdout=subprocess.DEVNULL, stderr=err)
        except FileNotFoundError:
            raise GitError(NO_GIT) from None
        why = None
        try:
            while proc.poll() is None:
                why = _over(_new_bytes(pack_dir, before, "tmp_pack_"), pack_dir, max_bytes, min_free)
                if why:
                    break
                time.sleep(POLL_S)
        finally:
            if proc.poll() is None:  # stopped, or an exception (Ctrl-C) in the loop: the fetch goes too
                tool_group.stop(proc, grace_s=2.0)
                _remove_new(pack_dir, before)
        if why is None and proc.returncode == 0:
            why = _over(_new_bytes(pack_dir, before, "pack-"), pack_dir, max_bytes, 0)
            if why:  # it all arrived between two looks: undo it (dest first, so nothing points into the pack)
                run(root, *(("update-ref", dest, old_dest) if old_dest else ("update-ref", "-d", dest)))
                _remove_new(pack_dir, before)
        if why:
            raise FetchTooLarge(f"the archive fetch was stopped: {why}; nothing of it was kept. A remote "
                                f"ref this large is not a kabe archive: ask who pushed it; if the archive "
                                f"is meant to be this large, raise [tool.kabe] archive_fetch_max_mb "
                                f"(now {max_bytes // 2**20} MB)")
        err.seek(0)
        return subprocess.CompletedProcess(argv, proc.returncode, b"", err.read())


def _new_bytes(pack_dir: Path, before: set[Path], prefix: str) -> int:
    """Bytes in the pack folder's files named prefix* that were not there before the fetch."""
    total = 0
    for f in pack_dir.glob(prefix + "*"):
        if f not in before:
            try:
                total += f.stat().st_size
            except FileNotFoundError:  # renamed into place between glob and stat
                pass
    return total


def _remove_new(pack_dir: Path, before: set[Path]) -> None:
    for f in set(pack_dir.glob("*")) - before:
        f.unlink(missing_ok=True)


def _over(size: int, pack_dir: Path, max_bytes: int, min_free: int) -> str | None:
    if size > max_bytes:
        return (f"it had received {disk_space.shown_size(size)}, more than a fetch may store "
                f"({disk_space.shown_size(max_bytes)})")
    if min_free and size and disk_space.free_bytes(pack_dir) < min_free:
        return (f"the disk holding {pack_dir} fell under {disk_space.shown_size(min_free)} free after "
                f"{disk_space.shown_size(size)} of it")
    return None
