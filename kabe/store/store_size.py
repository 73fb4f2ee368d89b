"""`kabe archive du`: what the shared archive costs, per archived commit and in total.

Three sizes, since each answers another question: raw (the files as a build wrote them), stored
(after kabe's gzip of large files: what a pull writes out of git) and on disk (git's own packed,
delta-compressed bytes in this clone's object store: what the remote holds and a fetch moves).
The total on disk counts each object once (a file identical across commits is stored once), so it
can be less than the sum of the per-commit figures.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

from kabe.base.errors import UserError
from kabe.base.paths import REPORTS, ROOT
from kabe.store import archive_paths as ap
from kabe.base import git
from kabe.store import store


@dataclass
class CommitSize:
    commit: str
    builds: int
    files: int
    raw: int
    stored: int
    disk: int


def _raw_size(reader: git.BlobReader, oid: str, stored: str, size: int) -> int:
    if not stored.endswith(".gz"):
        return size
    tail = b""
    for chunk in reader.stream(oid, max_bytes=size):  # chunk by chunk: only the last 4 bytes are kept
        tail = (tail + chunk)[-4:]
    return struct.unpack("<I", tail)[0] if len(tail) == 4 else 0  # gzip's ISIZE trailer (the last member's)


def measure(root: Path = ROOT, tip: str = "") -> tuple[list[CommitSize], int]:
    """([per archived commit], total bytes on disk of everything reachable from tip)."""
    disk = git.disk_sizes(root, tip)
    rows: dict[str, CommitSize] = {}
    units: dict[str, set[str]] = {}
    with git.BlobReader(root) as reader:
        for path, (oid, size) in sorted(git.ls_tree(root, tip).items()):
            split = store.unit_of(path) or ap.split_shared(path)
            if not split:
                continue
            # a shared cache unit (ip/<flow>/<key>) is counted on a row of its flow's, not a commit's
            commit = "/".join(path.split("/", 2)[:2]) if ap.is_shared(path) else path.split("/", 1)[0]
            row = rows.setdefault(commit, CommitSize(commit, 0, 0, 0, 0, 0))
            units.setdefault(commit, set()).add(split[0])
            row.files += 1
            row.stored += size
            row.raw += _raw_size(reader, oid, path, size)
            row.disk += disk.get(oid, 0)
    for commit, row in rows.items():
        row.builds = len(units[commit])
    return list(rows.values()), sum(disk.values())


def _mb(n: int) -> str:
    return f"{n / 1e6:.2f}"


def render(remote: str, ref: str, rows: list[CommitSize], total_disk: int) -> str:
    if not rows:
        return f"kabe archive du {remote}: the archive ({ref}) is empty or absent\n"
    shared = [r for r in rows if ap.is_shared(r.commit + "/")]
    rows = [r for r in rows if not ap.is_shared(r.commit + "/")]
    lines = [f"kabe archive du {remote} ({ref}): {len(rows)} commit(s), {sum(r.builds for r in rows)} build(s)"
             + "".join(f", {r.builds} {r.commit} unit(s)" for r in shared), "",
             "| commit | builds | files | raw MB | stored MB | on disk MB |", "|---|---|---|---|---|---|"]
    for r in rows + shared:
        lines.append(f"| {r.commit[:12]} | {r.builds} | {r.files} | {_mb(r.raw)} | {_mb(r.stored)} | {_mb(r.disk)} |")
    n = len(rows) or 1
    lines += ["", f"per commit (mean): raw {_mb(sum(r.raw for r in rows) // n)} MB, stored "
                  f"{_mb(sum(r.stored for r in rows) // n)} MB, on disk {_mb(sum(r.disk for r in rows) // n)} MB; "
                  f"whole archive on disk (each object once, with its history): {_mb(total_disk)} MB"]
    return "\n".join(lines) + "\n"


def local(reports_root: Path = REPORTS) -> str:
    """One line: what reports/ holds on this machine (commits, builds, bytes), the units a pull kept
    apart as unverified and kabe's own dot folders (the cache index, temp folders) counted apart."""
    commits, builds, size, apart = set(), 0, 0, 0
    root = Path(reports_root)
    if not root.is_dir():
        return f"local {root}: absent (nothing built here yet)"
    for path in root.rglob("*"):
        if path.is_symlink() or not path.is_file():
            continue
        rel = path.relative_to(root).parts
        n = path.stat().st_size
        if rel[0].startswith(".") or len(rel) < 4:  # .unverified/, kabe's own files, reports/README.md
            apart += n
            continue
        size += n
        commits.add(rel[0])
        builds += rel[3] == "metrics.json" or (rel[2] == "sim" and rel[3] == "result.json")
    return (f"local {root}: {len(commits)} commit(s), {builds} build(s), {_mb(size)} MB"
            + (f" (and {_mb(apart)} MB of unverified units, kabe's cache index and other files)" if apart else "")
            + ("; `kabe archive push` shares the clean ones" if commits else ""))


def du(remote: str = "origin", root: Path = ROOT, ref: str | None = None, reports_root: Path = REPORTS) -> str:
    ref = ref or store.archive_ref(root=root)
    try:
        tip = store.fetch(remote, root, ref)
    except UserError as e:  # no shared archive to measure: still say what is here (exit 2 as before)
        raise type(e)(f"{e}; {local(reports_root)}") from None
    if tip is None:
        return render(remote, ref, [], 0) + local(reports_root) + "\n"
    rows, total = measure(root, tip)
    return render(remote, ref, rows, total) + local(reports_root) + "\n"
