"""The shared archive: reports/ kept in the project's own git remote, under one dedicated ref.

    kabe archive push [REMOTE]     every clean archived build not yet in the remote
    kabe archive pull [REMOTE]     the remote's archive into reports/, beside what is already there
    kabe archive du [REMOTE]       sizes per archived commit

The ref (default refs/kabe/archive; [tool.kabe] archive_ref) has a history of its own: its first
commit has no parent, so it never mixes with the code, and a plain clone does not fetch it. Its
tree is laid out like reports/: <commit>/<design>/<flow|sim|board>/<file>.

- Append-only: a build already in the archive is never replaced. Pushing a different build of the
  same commit/design/kind keeps the archive's and says so; missing files (bitstreams pushed later)
  are added.
- Concurrent pushes: the push is a fast-forward of the ref or nothing. On a rejection the store
  fetches the new tip, adds its paths to it again (paths are disjoint per build) and retries.
- Pull never overwrites a local archive whose content differs; it says which and keeps it.
- Files over COMPRESS_OVER bytes are stored gzip-compressed under <name>.gz. Every stored name that
  ends in .gz is kabe's compression (a raw file already named .gz is stored as .gz.gz), so a pull
  knows what to decompress without a side table.
- Bitstreams (.bit, .bin, .hwh) travel only when asked (--bitstreams): they are large and only a
  deploy needs them.
- A dirty tree's archive (<sha>-dirty) is never pushed: nobody else can reproduce it.

Plain git underneath: the user's remotes, credentials and hosting work as they are.
"""

from __future__ import annotations

import gzip
import random
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

from kabe import config
from kabe.paths import REPORTS, ROOT
from kabe.records import gitref
from kabe.records.archive import write_atomic
from kabe.records.gitref import GitError

DEFAULT_REF = "refs/kabe/archive"
COMPRESS_OVER = 64 * 1024
BITSTREAM_SUFFIXES = (".bit", ".bin", ".hwh")
PUSH_TRIES = 8
_CLEAN_COMMIT = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")
# What git says when another push came first (a hook that declines says something else: no retry).
_RETRYABLE = ("non-fast-forward", "fetch first", "failed to update ref", "cannot lock ref",
              "failed to lock", "stale info")


def archive_ref(settings: dict | None = None) -> str:
    ref = (config.load() if settings is None else settings).get("archive_ref") or DEFAULT_REF
    if not str(ref).startswith("refs/") or str(ref).count("/") < 2:
        raise GitError(f"[tool.kabe] archive_ref = {ref!r} must be a full ref name like {DEFAULT_REF}")
    return str(ref)


def _tracking_ref(remote: str) -> str:
    """Where the fetched tip of a remote's archive is kept locally (a remote may be a URL or a path)."""
    key = re.sub(r"[^A-Za-z0-9._-]+", "_", remote).strip("._") or "remote"
    return f"refs/kabe/fetched/{key[-80:]}"


def is_bitstream(name: str) -> bool:
    return name.endswith(BITSTREAM_SUFFIXES)


def stored_form(name: str, data: bytes) -> tuple[str, bytes]:
    if len(data) > COMPRESS_OVER or name.endswith(".gz"):
        return name + ".gz", gzip.compress(data, compresslevel=6, mtime=0)
    return name, data


def restored_form(stored: str, data: bytes) -> tuple[str, bytes]:
    if stored.endswith(".gz"):
        return stored[:-3], gzip.decompress(data)
    return stored, data


def unit_of(path: str) -> tuple[str, str] | None:
    """('<commit>/<design>/<kind>', '<file within it>') for a stored path, None for anything else."""
    parts = path.split("/", 3)
    if len(parts) < 4 or not _CLEAN_COMMIT.match(parts[0]):
        return None
    return "/".join(parts[:3]), parts[3]


def local_units(reports_root: Path = REPORTS, commits: list[str] | None = None) -> tuple[dict[str, Path], list[str]]:
    """({'<commit>/<design>/<kind>': directory} of clean archives, [dirty archives left out])."""
    units, dirty = {}, []
    for kind_dir in sorted(Path(reports_root).glob("*/*/*")):
        commit = kind_dir.parent.parent.name
        if not kind_dir.is_dir() or kind_dir.name.startswith(".") or kind_dir.parent.name.startswith("."):
            continue
        if commits is not None and commit not in commits:
            continue
        if _CLEAN_COMMIT.match(commit):
            units[f"{commit}/{kind_dir.parent.name}/{kind_dir.name}"] = kind_dir
        elif commit.endswith("-dirty"):
            dirty.append(f"{commit}/{kind_dir.parent.name}/{kind_dir.name}")
    return units, dirty


def _files_of(directory: Path, bitstreams: bool) -> dict[str, Path]:
    return {str(p.relative_to(directory)): p for p in sorted(directory.rglob("*"))
            if p.is_file() and not p.name.startswith(".") and (bitstreams or not is_bitstream(p.name))}


def fetch(remote: str, root: Path = ROOT, ref: str | None = None) -> str | None:
    """Fetch the remote's archive ref; its tip, or None when the remote has no archive yet."""
    ref = ref or archive_ref()
    local = _tracking_ref(remote)
    proc = gitref.run(root, "fetch", "--no-tags", "--quiet", remote, f"+{ref}:{local}", check=False)
    if proc.returncode != 0:
        err = proc.stderr.decode(errors="replace")
        if "couldn't find remote ref" in err or "could not find remote ref" in err:
            return None
        raise GitError(f"cannot fetch the archive ({ref}) from {remote!r}: {gitref.last_line(proc.stderr)}")
    return gitref.run(root, "rev-parse", local).stdout.decode().strip()


@dataclass
class PushReport:
    remote: str
    ref: str
    added: list[str] = field(default_factory=list)  # units newly in the archive
    completed: list[str] = field(default_factory=list)  # units that gained files (e.g. bitstreams)
    same: list[str] = field(default_factory=list)  # already there, same content
    differs: list[str] = field(default_factory=list)  # already there, different content: the archive's kept
    dirty: list[str] = field(default_factory=list)  # never pushed
    commit: str | None = None  # the archive commit pushed
    tries: int = 0

    def lines(self) -> list[str]:
        out = [f"kabe archive push {self.remote} ({self.ref}): {len(self.added)} build(s) added, "
               f"{len(self.same)} already there" + (f", {len(self.completed)} completed" if self.completed else "")
               + (f" after {self.tries} tries (other pushes came first)" if self.tries > 1 else "")]
        out += [f"  kept the archive's {u}: this checkout's build of it differs (append-only)" for u in self.differs]
        out += [f"  not pushed {u}: built from a dirty tree" for u in self.dirty]
        return out


def _same_content(reader: gitref.BlobReader, oid: str, stored: str, raw: bytes, fmt: str) -> bool:
    """Does the stored blob hold these raw bytes? By id first (no read); a compressed blob that differs
    by id is read and decompressed, since another zlib may compress the same bytes differently."""
    if gitref.blob_id(stored_form(stored.removesuffix(".gz"), raw)[1], fmt) == oid:
        return True
    return stored.endswith(".gz") and restored_form(stored, reader.read(oid))[1] == raw


def _plan(root: Path, tip: str | None, units: dict[str, Path], bitstreams: bool, report: PushReport) -> dict[str, bytes]:
    """The paths to add on top of tip, and each unit's fate recorded in report."""
    existing = gitref.ls_tree(root, tip) if tip else {}
    by_unit: dict[str, dict[str, str]] = {}
    for path, (oid, _size) in existing.items():
        split = unit_of(path)
        if split:
            by_unit.setdefault(split[0], {})[split[1]] = oid
    fmt = gitref.object_format(root)
    report.added, report.completed, report.same, report.differs = [], [], [], []
    new: dict[str, bytes] = {}
    with gitref.BlobReader(root) as reader:
        for unit, directory in units.items():
            there = by_unit.get(unit, {})
            ours = {}  # stored name -> (raw bytes, stored bytes)
            for name, path in _files_of(directory, bitstreams).items():
                raw = path.read_bytes()
                stored, data = stored_form(name, raw)
                ours[stored] = (raw, data)
            if not there:
                new.update({f"{unit}/{stored}": data for stored, (_raw, data) in ours.items()})
                report.added.append(unit)
            elif any(not _same_content(reader, there[s], s, raw, fmt) for s, (raw, _d) in ours.items() if s in there):
                report.differs.append(unit)
            elif any(s not in there for s in ours):
                new.update({f"{unit}/{s}": data for s, (_raw, data) in ours.items() if s not in there})
                report.completed.append(unit)
            else:
                report.same.append(unit)
    return new


def _push_refusal(proc) -> str:
    """Why a push was refused: the ref's status from --porcelain ('[remote rejected] (pre-receive hook
    declined)') and what the remote said ('remote: ...'), else git's own error line."""
    out = proc.stdout.decode(errors="replace").splitlines()
    status = [ln.split("\t")[-1].strip() for ln in out if ln.startswith("!")]
    remote_said = [ln.strip() for ln in proc.stderr.decode(errors="replace").splitlines() if ln.startswith("remote:")]
    return "; ".join(status + remote_said) or gitref.last_line(proc.stderr)


def push(remote: str = "origin", root: Path = ROOT, reports_root: Path = REPORTS, commits: list[str] | None = None,
         bitstreams: bool = False, ref: str | None = None, tries: int = PUSH_TRIES) -> PushReport:
    """Add every clean local archive (or those of `commits`) that the remote lacks, as one commit on the ref."""
    ref = ref or archive_ref()
    units, dirty = local_units(reports_root, commits)
    report = PushReport(remote, ref, dirty=dirty)
    last_error = ""
    for attempt in range(1, tries + 1):
        report.tries = attempt
        tip = fetch(remote, root, ref)
        new = _plan(root, tip, units, bitstreams, report)
        if not new:
            return report
        commits_named = sorted({u.split("/", 1)[0][:12] for u in report.added + report.completed})
        message = f"kabe archive: {len(report.added) + len(report.completed)} build(s) of {', '.join(commits_named)}"
        commit = gitref.write_commit(root, tip, new, message)
        proc = gitref.run(root, "push", "--quiet", "--porcelain", remote, f"{commit}:{ref}", check=False)
        if proc.returncode == 0:
            report.commit = commit
            gitref.run(root, "update-ref", _tracking_ref(remote), commit, check=False)
            return report
        said = (proc.stdout + proc.stderr).decode(errors="replace")
        last_error = _push_refusal(proc)
        if not any(word in said for word in _RETRYABLE):
            raise GitError(f"cannot push the archive to {remote!r} ({ref}): {last_error}")
        time.sleep(random.uniform(0.05, 0.3) * attempt)  # another runner pushed first: let it finish
    raise GitError(f"cannot push the archive to {remote!r} ({ref}): still rejected after {tries} tries "
                   f"(others keep pushing first?): {last_error}")


@dataclass
class PullReport:
    remote: str
    ref: str
    remote_has_archive: bool = True
    added: list[str] = field(default_factory=list)
    completed: list[str] = field(default_factory=list)
    same: list[str] = field(default_factory=list)
    kept_local: list[tuple[str, list[str]]] = field(default_factory=list)  # (unit, files that differ)

    def lines(self) -> list[str]:
        if not self.remote_has_archive:
            return [f"kabe archive pull {self.remote}: the remote has no archive yet ({self.ref}); "
                    f"`kabe archive push` (or kabe ci on the default branch) makes one"]
        out = [f"kabe archive pull {self.remote} ({self.ref}): {len(self.added)} build(s) added, "
               f"{len(self.same)} already here" + (f", {len(self.completed)} completed" if self.completed else "")]
        out += [f"  kept local reports/{u}: it differs from the shared archive in {', '.join(files)}; "
                f"delete it to take the shared one" for u, files in self.kept_local]
        return out


def pull(remote: str = "origin", root: Path = ROOT, reports_root: Path = REPORTS, bitstreams: bool = False,
         ref: str | None = None) -> PullReport:
    ref = ref or archive_ref()
    report = PullReport(remote, ref)
    tip = fetch(remote, root, ref)
    if tip is None:
        report.remote_has_archive = False
        return report
    by_unit: dict[str, dict[str, str]] = {}
    for path, (oid, _size) in gitref.ls_tree(root, tip).items():
        split = unit_of(path)
        if split and (bitstreams or not is_bitstream(split[1].removesuffix(".gz"))):
            by_unit.setdefault(split[0], {})[split[1]] = oid
    fmt = gitref.object_format(root)
    with gitref.BlobReader(root) as reader:
        for unit, stored_files in sorted(by_unit.items()):
            dest = Path(reports_root) / unit
            if not dest.exists():
                write_atomic(dest, dict(restored_form(s, reader.read(oid)) for s, oid in stored_files.items()))
                report.added.append(unit)
                continue
            local = _files_of(dest, bitstreams=True)
            differ, missing = [], {}
            for stored, oid in sorted(stored_files.items()):
                name = stored[:-3] if stored.endswith(".gz") else stored
                if name not in local:
                    missing[name] = restored_form(stored, reader.read(oid))[1]
                elif not _same_content(reader, oid, stored, local[name].read_bytes(), fmt):
                    differ.append(name)
            if differ:
                report.kept_local.append((unit, differ))
            elif missing:  # only adds files: nothing local is replaced
                write_atomic(dest, {**local, **missing})
                report.completed.append(unit)
            else:
                report.same.append(unit)
    return report
