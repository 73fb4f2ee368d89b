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
- Bitstreams (.bit, .bin, .hwh, .xsa, .pdi) travel only when asked (--bitstreams): they are large and only a
  deploy needs them.
- A dirty tree's archive (<sha>-dirty) is never pushed: nobody else can reproduce it.

- Untrusted on pull: every stored path is judged before anything is written (archive_paths: the
  shape, the names, links and gitlinks refused, sizes capped from ls-tree and while decompressing);
  a bad unit is skipped and named, the rest goes on. A unit lands in reports/ only when its
  SIGNATURE_FILE verifies for a key in the project's allowed-signers file (signing.py), the commit it
  names exists here and its cache key is its own cache_key.json's; every other unit is kept apart
  in reports/.unverified/<unit>/ and named with the reason. `kabe archive push` signs what it adds
  when $KABE_SIGNING_KEY names a key (CI's secret), else pushes unsigned units and says so.
- Shared caches: a flow's content-keyed cache entries (a Vivado IP's generated products,
  kabe.flows.vivado.ip_archive) travel in the same ref as units ip/<flow>/<key>/ beside the builds,
  under the same rules: pushed (and signed) with the builds that used them, pulled only into a clone
  whose flow takes them, used only when signed by an allowed key and whole (the flow re-checks the key
  against the unit's own material); every other one is kept apart in reports/.unverified-ip/ and named.
- History checked: the last tip seen of each remote's archive is kept in refs/kabe/seen/<remote>;
  a fetched tip that does not descend from it (a force-push) is refused, naming both, until
  accepted with `kabe archive pull --accept-rewrite <tip>`.

A project below its repository's top (a monorepo's fpga/) keeps all its refs apart, under
refs/kabe/sub/<its folder>/ (archive, fetched/<remote>, seen/<remote>; "hw/fpga" is written "hw+fpga"),
with the tree laid out as above: its records are its own, so two kabe projects in one repository
never append to, fetch over or judge each other's archive (a shared ref would mix designs of the same
name and race every push). A project at the top keeps refs/kabe/archive and its refs exactly as
before. [tool.kabe] archive_ref still names the archive ref when set.

Plain git underneath: the user's remotes, credentials and hosting work as they are. Nothing pulled
is ever imported or run: it is files under reports/, read as data.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import json
import os
import random
import re
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Callable, Iterable, Sequence

from kabe.project import config
from kabe.base.paths import REPORTS, ROOT
from kabe.store import archive_paths as ap
from kabe.base import git
from kabe.store import git_fetch, safe_fs, signing, trusted_settings
from kabe.store.archive import write_atomic
from kabe.base.git import BlobTooLarge, GitError
from kabe.base.lock import take as take_lock

DEFAULT_REF = "refs/kabe/archive"
COMPRESS_OVER = 64 * 1024
UNVERIFIED = ".unverified"  # reports/.unverified/<unit>: pulled, not verified (a dot: no scanner takes it for a build)
UNVERIFIED_SHARED = ".unverified-ip"  # reports/.unverified-ip/<flow>/<key>: a shared cache unit pulled, not verified
CHUNK = 1 << 20
MAX_LINES = 20  # refused/unverified units named one by one, then counted
PUSH_TRIES = 8
_CLEAN_COMMIT = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")
# What git says when another push came first (a hook that declines says something else: no retry).
_RETRYABLE = ("non-fast-forward", "fetch first", "failed to update ref", "cannot lock ref",
              "failed to lock", "stale info")


def project_refs(root: Path = ROOT) -> str:
    """Where the refs of the project at root live: "refs/kabe/" for a project at its repository's top
    (today's names: refs/kabe/archive, refs/kabe/fetched/<remote>, refs/kabe/seen/<remote>), else
    "refs/kabe/sub/<its folder, '/' written '+'>/" (each name made of letters, digits, '_' and '-':
    a flat name, so a project nested in another's folder never collides with its refs)."""
    from kabe.base.provenance import project_prefix

    prefix = (project_prefix(root) or "").strip("/")
    if not prefix:
        return "refs/kabe/"
    return "refs/kabe/sub/" + "+".join(re.sub(r"[^A-Za-z0-9_-]", "_", part) for part in prefix.split("/")) + "/"


def archive_ref(settings: dict | None = None, root: Path = ROOT) -> str:
    # in a change's pipeline the default branch's word (kabe.store.trusted_settings), never the change's
    ref = trusted_settings.value("archive_ref", settings) or project_refs(root) + "archive"
    if not str(ref).startswith("refs/") or str(ref).count("/") < 2:
        raise GitError(f"[tool.kabe] archive_ref = {ref!r} must be a full ref name like {DEFAULT_REF}")
    return str(ref)


def fetch_max_bytes(settings: dict | None = None) -> int:
    """[tool.kabe] archive_fetch_max_mb in bytes: what one archive fetch may store."""
    return int(config.value(config.load() if settings is None else settings, "archive_fetch_max_mb")) * 2**20


def _remote_key(remote: str) -> str:
    return (re.sub(r"[^A-Za-z0-9._-]+", "_", remote).strip("._") or "remote")[-80:]


def _tracking_ref(remote: str, root: Path = ROOT) -> str:
    """Where the fetched tip of a remote's archive is kept locally (a remote may be a URL or a path)."""
    return f"{project_refs(root)}fetched/{_remote_key(remote)}"


def seen_ref(remote: str, root: Path = ROOT) -> str:
    """The last archive tip this clone accepted from the remote: a later tip must descend from it."""
    return f"{project_refs(root)}seen/{_remote_key(remote)}"


@dataclass(frozen=True)
class SharedCache:
    """A flow's content-keyed cache whose entries travel in the archive as signed units ip/<flow>/<key>/
    (the Vivado IP cache: kabe.flows.vivado.ip_archive). The archive lists, signs, pushes, pulls and
    verifies them like builds; the flow (above this layer) says which entries the pushed builds used, and
    checks a verified unit itself before adding it (its key recomputed from its own material)."""

    flow: str
    used_by: Callable[[dict[str, Path]], dict[str, Path]]  # build units -> {content key: the entry's folder}
    have: Callable[[str], bool]  # is the entry with this key in this machine's cache already
    accept: Callable[[Path, str], str | None]  # a signature-verified unit's folder and key: added (None), or why not


def shared_units(caches: Sequence[SharedCache], build_units: dict[str, Path]) -> dict[str, Path]:
    """{'ip/<flow>/<key>': folder} of the cache entries the builds used (what a push carries beside them)."""
    out: dict[str, Path] = {}
    for c in caches:
        for key, folder in sorted(c.used_by(build_units).items()):
            out[f"{ap.SHARED_PREFIX}{c.flow}/{key}"] = folder
    return out


class ArchiveRewritten(GitError):
    """The remote's archive no longer descends from the tip this clone saw last (a force-push)."""


def stored_form(name: str, data: bytes) -> tuple[str, bytes]:
    if len(data) > COMPRESS_OVER or name.endswith(".gz"):
        return name + ".gz", gzip.compress(data, compresslevel=6, mtime=0)
    return name, data


def unit_of(path: str) -> tuple[str, str] | None:
    """('<commit>/<design>/<kind>', '<file within it>') for a stored path whose unit part is valid
    (archive_paths.split_unit), None for anything else."""
    return ap.split_unit(path)


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
            # a link is never pushed (signing.hash_dir skips links too): it would publish what it points at
            if p.is_file() and not p.is_symlink() and not p.name.startswith(".")
            and (bitstreams or not signing.is_bitstream(p.name))}


def _rev(root: Path, ref: str) -> str | None:
    out = git.run(root, "rev-parse", "--verify", "--quiet", ref + "^{commit}", check=False)
    return out.stdout.decode().strip() or None


def fetch(remote: str, root: Path = ROOT, ref: str | None = None, accept_rewrite: str | None = None) -> str | None:
    """Fetch the remote's archive ref; its tip, or None when the remote has no archive yet. A tip that
    does not descend from the last one seen is refused (ArchiveRewritten) unless it is accept_rewrite."""
    ref = ref or archive_ref(root=root)
    local, seen_at = _tracking_ref(remote, root), seen_ref(remote, root)
    proc = git_fetch.fetch(root, remote, ref, local, max_bytes=fetch_max_bytes())
    seen = _rev(root, seen_at)
    if proc.returncode != 0:
        err = proc.stderr.decode(errors="replace")
        if "couldn't find remote ref" in err or "could not find remote ref" in err:
            if seen:
                raise ArchiveRewritten(
                    f"the archive {ref} on {remote!r} is gone; this clone saw it last at {seen}. If it was deleted "
                    f"on purpose, forget that tip: git update-ref -d {seen_at}")
            return None
        raise GitError(f"cannot fetch the archive ({ref}) from {remote!r}: {git.last_line(proc.stderr)}")
    tip = git.run(root, "rev-parse", local).stdout.decode().strip()
    if seen and seen != tip and git.run(root, "merge-base", "--is-ancestor", seen, tip, check=False).returncode != 0:
        accepted = accept_rewrite and len(accept_rewrite) >= 7 and tip.startswith(accept_rewrite.lower())
        if not accepted:
            raise ArchiveRewritten(
                f"the archive {ref} on {remote!r} was rewritten: its tip {tip} does not descend from {seen}, the tip "
                f"this clone saw last (a force-push replaced its history; nothing was pulled). If the rewrite was "
                f"deliberate, accept it: kabe archive pull {remote} --accept-rewrite {tip}")
    git.run(root, "update-ref", seen_at, tip)
    return tip


class ArchiveTampered(GitError):
    """The archive ref's own history breaks append-only, or its root is not the pinned one."""


def checked_tip(root: Path, tip: str, ref: str, remote: str) -> tuple[str, str | None]:
    """(the newest commit of the ref a pull may read, why the tip itself is not it or None).

    The archive is append-only: no commit on the ref may delete, change or retype a path its parent
    had. That is checked along the ref's own history (its first-parent chain), not against what this
    clone saw last, so a fresh CI clone is protected as well: a fast-forward whose tree is emptied or
    lacks the base unit is accepted by git and by a server that blocks force-pushes, but not here.
    The tip is then refused and the pull reads the parent of the oldest offending commit (everything
    that was appended honestly before it). The root commit must be the one [tool.kabe] archive_root
    pins (the default branch's word in a change's pipeline), when it pins one; else ArchiveTampered."""
    pinned = trusted_settings.value("archive_root")
    if pinned:
        found = git.roots(root, tip)
        if found != [pinned]:
            raise ArchiveTampered(
                f"the archive {ref} on {remote!r} does not start at the root commit [tool.kabe] archive_root pins "
                f"({pinned[:12]}): its root is {', '.join(r[:12] for r in found) or 'none'}; nothing was pulled. "
                f"Restore the ref from a clone that has it (git push --force {remote} <good tip>:{ref}), or pin "
                f"the new root on the default branch if the archive was restarted on purpose")
    bad = git.history_violations(root, tip)
    if not bad:
        return tip, None
    oldest = bad[-1][0]
    commits = list(dict.fromkeys(c for c, _s, _p in bad))
    what = {"D": "removes", "M": "changes", "T": "changes the type of"}
    first = next((f"{what.get(st, 'changes')} {ap.shown(path)}" for c, st, path in bad if c == oldest), "")
    good = git.first_parent(root, oldest)
    why = (f"the archive {ref}'s tip {tip[:12]} is refused: {len(commits)} commit(s) on it remove or change units "
           f"already there (append-only; the oldest, {oldest[:12]}, {first}"
           + (f", and {len(bad) - 1} more path(s)" if len(bad) > 1 else "") + ")"
           + (f"; reading {good[:12]}, the last commit before it" if good else "")
           + f". Restore the ref (git push --force {remote} {good or '<good tip>'}:{ref}) and ask who pushed {oldest[:12]}")
    if good is None:
        raise ArchiveTampered(why)
    return good, why


@dataclass
class PushReport:
    remote: str
    ref: str
    added: list[str] = field(default_factory=list)  # units newly in the archive
    completed: list[str] = field(default_factory=list)  # units that gained files (e.g. bitstreams)
    same: list[str] = field(default_factory=list)  # already there, same content
    differs: list[str] = field(default_factory=list)  # already there, different content: the archive's kept
    beside: list[tuple[str, str]] = field(default_factory=list)  # (unit, where this build is shared beside it)
    dirty: list[str] = field(default_factory=list)  # never pushed
    invalid: list[tuple[str, str]] = field(default_factory=list)  # (unit, why): every pull would refuse it
    commit: str | None = None  # the archive commit pushed
    tries: int = 0
    signed_by: str | None = None  # the key file that signed the added units; None: pushed unsigned

    def lines(self) -> list[str]:
        added = [u for u in self.added if not ap.is_shared(u)]
        same = [u for u in self.same if not ap.is_shared(u)]
        out = [f"kabe archive push {self.remote} ({self.ref}): {len(added)} build(s) added, "
               f"{len(same)} already there" + (f", {len(self.completed)} completed" if self.completed else "")
               + (f" after {self.tries} tries (other pushes came first)" if self.tries > 1 else "")]
        ips = [u for u in self.added if ap.is_shared(u)]
        ips_there = [u for u in self.same if ap.is_shared(u)]
        if ips or ips_there:
            out.append(f"  shared cache: {len(ips)} unit(s) added, {len(ips_there)} already there"
                       + "".join(f"\n    added {u}" for u in ips))
        out += [f"  kept the archive's {u}: this checkout's build of it differs (append-only)" for u in self.differs]
        out += [f"  the archive's {u} is not this build (pushed there first, by someone else or an earlier build; "
                f"append-only: it stays): this signed build is shared beside it as {alt}, where a pull finds it "
                f"when the other does not verify" for u, alt in self.beside]
        out += [f"  not pushed {u}: built from a dirty tree" for u in self.dirty]
        out += [f"  not pushed {u}: {why} (every pull would refuse it)" for u, why in self.invalid]
        if self.added and self.signed_by is None:
            out.append(f"  pushed {len(self.added)} unit(s) unsigned: other clones keep them apart as unverified "
                       f"(set {signing.SIGNING_KEY_ENV} to the signing key; docs/archive.md)")
        return out


def _same_content(reader: git.BlobReader, oid: str, stored: str, raw: bytes, fmt: str) -> bool:
    """Does the stored blob hold these raw bytes? By id first (no read); a compressed blob that differs
    by id is streamed through the capped decompression, since another zlib may compress the same bytes
    differently (and the remote's blob may be a bomb: over the cap, it differs)."""
    if git.blob_id(stored_form(stored.removesuffix(".gz"), raw)[1], fmt) == oid:
        return True
    if not stored.endswith(".gz"):
        return False
    entry = ap.Entry("100644", "blob", oid, 0, stored)
    try:
        return _stream_sha(reader, entry, stored[:-3]) == hashlib.sha256(raw).hexdigest()
    except Refused:
        return False


def _with_signature(unit: str, directory: Path, files: dict[str, Path], key: Path | None,
                    project: str | None = None) -> dict[str, Path | bytes]:
    """The unit's files, with SIGNATURE_FILE made by key over every file it holds (bitstreams included,
    sent or not). A unit that carries a signature already (a verified pull) keeps it as it is."""
    if key is None or signing.SIGNATURE_FILE in files:
        return dict(files)
    return {**files, signing.SIGNATURE_FILE: signing.sign_unit(unit, signing.hash_dir(directory), key, project)}


def _plan(root: Path, tip: str | None, units: dict[str, Path], bitstreams: bool, report: PushReport,
          key: Path | None = None, shared: dict[str, Path] | None = None) -> dict[str, bytes]:
    """The paths to add on top of tip, and each unit's fate recorded in report. A shared cache unit always
    travels whole (its flow checks every file of it), bitstreams or not."""
    existing = git.ls_tree(root, tip) if tip else {}
    by_unit: dict[str, dict[str, str]] = {}
    shared = shared or {}
    for path, (oid, _size) in existing.items():
        split = unit_of(path) or ap.split_shared(path)
        if split:
            by_unit.setdefault(split[0], {})[split[1]] = oid
    fmt = git.object_format(root)
    report.added, report.completed, report.same, report.differs, report.invalid = [], [], [], [], []
    new: dict[str, bytes] = {}
    with git.BlobReader(root) as reader:
        for unit, directory in {**units, **shared}.items():
            there = by_unit.get(unit, {})
            files = _files_of(directory, bitstreams or unit in shared)
            # signed when the archive has no signature for it yet: a new unit, or one pushed unsigned before
            # (then the signature alone completes it, its files being the same)
            def signed(unit=unit, directory=directory, files=files):  # signing runs ssh-keygen: only when needed
                return _with_signature(unit, directory, files, key, signing.this_project(root))
            ours = _stored(signed() if signing.SIGNATURE_FILE not in there else files)  # stored name -> (raw, stored)
            why = next((f"{ap.shown(s)}: {w}" for s in ours
                        if (w := ap.path_problem(ap.Entry("100644", "blob", "", 0, f"{unit}/{s}")))), None)
            if why:
                report.invalid.append((unit, why))
            elif not there:
                new.update({f"{unit}/{stored}": data for stored, (_raw, data) in ours.items()})
                report.added.append(unit)
            elif any(not _same_content(reader, there[s], s, raw, fmt) for s, (raw, _d) in ours.items() if s in there):
                # shared beside it, signed: the unit there may carry a signature (by a key not allowed), which
                # must not leave this build unsigned
                ours = _stored(signed()) if signing.SIGNATURE_FILE in there else ours
                alt = _beside_name(unit, ours) if key is not None else None
                if alt is None:  # unsigned: nobody would take it over the other anyway
                    report.differs.append(unit)
                elif alt not in by_unit:
                    new.update({f"{alt}/{stored}": data for stored, (_raw, data) in ours.items()})
                    report.beside.append((unit, alt))
                else:
                    report.same.append(unit)
            elif any(s not in there for s in ours):
                new.update({f"{unit}/{s}": data for s, (_raw, data) in ours.items() if s not in there})
                report.completed.append(unit)
            else:
                report.same.append(unit)
    return new


def _stored(files: dict[str, Path | bytes]) -> dict[str, tuple[bytes, bytes]]:
    """{stored name: (raw bytes, stored bytes)} of a unit's files (kabe's compression applied)."""
    out = {}
    for name, path in files.items():
        raw = path if isinstance(path, bytes) else path.read_bytes()
        stored, data = stored_form(name, raw)
        out[stored] = (raw, data)
    return out


def _beside_name(unit: str, ours: dict[str, tuple[bytes, bytes]]) -> str:
    """<unit>~<tag>: where a signed build is shared when another unit holds its path (archive_paths).
    The tag is this build's own content (its signature included), which nobody can know beforehand."""
    h = hashlib.sha256()
    for stored, (raw, _data) in sorted(ours.items()):
        h.update(stored.encode() + b"\0" + hashlib.sha256(raw).digest())
    return f"{unit}~{h.hexdigest()[:16]}"


def _push_refusal(proc) -> str:
    """Why a push was refused: the ref's status from --porcelain ('[remote rejected] (pre-receive hook
    declined)') and what the remote said ('remote: ...'), else git's own error line."""
    out = proc.stdout.decode(errors="replace").splitlines()
    status = [ln.split("\t")[-1].strip() for ln in out if ln.startswith("!")]
    remote_said = [ln.strip() for ln in proc.stderr.decode(errors="replace").splitlines() if ln.startswith("remote:")]
    return "; ".join(status + remote_said) or git.last_line(proc.stderr)


def push(remote: str = "origin", root: Path = ROOT, reports_root: Path = REPORTS, commits: list[str] | None = None,
         bitstreams: bool = False, ref: str | None = None, tries: int = PUSH_TRIES,
         shared: Sequence[SharedCache] = ()) -> PushReport:
    """Add every clean local archive (or those of `commits`) that the remote lacks, as one commit on the ref,
    with the shared cache entries (`shared`: the flows' caches) those builds used."""
    ref = ref or archive_ref(root=root)
    units, dirty = local_units(reports_root, commits)
    cache_units = shared_units(shared, units)
    key = signing.signing_key()
    report = PushReport(remote, ref, dirty=dirty, signed_by=str(key) if key else None)
    last_error = ""
    for attempt in range(1, tries + 1):
        report.tries = attempt
        tip = fetch(remote, root, ref)
        if tip is not None:
            _good, why = checked_tip(root, tip, ref, remote)
            if why:  # appending would make the tampering the base of every later build: a person restores it
                raise ArchiveTampered(f"not pushed: {why}")
        new = _plan(root, tip, units, bitstreams, report, key, cache_units)
        if not new:
            return report
        builds = [u for u in report.added + report.completed if not ap.is_shared(u)]
        commits_named = sorted({u.split("/", 1)[0][:12] for u in builds})
        message = (f"kabe archive: {len(builds)} build(s) of {', '.join(commits_named) or 'no commit'}"
                   + (f", {len(report.added) + len(report.completed) - len(builds)} shared cache unit(s)"
                      if len(builds) < len(report.added) + len(report.completed) else ""))
        commit = git.write_commit(root, tip, new, message)
        proc = git.run(root, "push", "--quiet", "--porcelain", remote, f"{commit}:{ref}", check=False)
        if proc.returncode == 0:
            report.commit = commit
            git.run(root, "update-ref", _tracking_ref(remote, root), commit, check=False)
            git.run(root, "update-ref", seen_ref(remote, root), commit, check=False)
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
    refused: list[tuple[str, str]] = field(default_factory=list)  # (unit or stored path, why): nothing written
    unverified: list[tuple[str, str]] = field(default_factory=list)  # (unit, why): in reports/.unverified/
    refused_tip: str | None = None  # why the ref's tip was not read (its history is not append-only)
    beside: list[tuple[str, str, str]] = field(default_factory=list)  # (unit, the one taken for it, why the other was not)
    shared_added: list[str] = field(default_factory=list)  # shared cache units verified and added to their cache
    shared_same: list[str] = field(default_factory=list)  # already in this machine's cache
    shared_unverified: list[tuple[str, str]] = field(default_factory=list)  # (unit, why): in reports/.unverified-ip/

    def lines(self) -> list[str]:
        if not self.remote_has_archive:
            return [f"kabe archive pull {self.remote}: the remote has no archive yet ({self.ref}); "
                    f"`kabe archive push` (or kabe ci on the default branch) makes one"]
        out = [f"kabe archive pull {self.remote} ({self.ref}): {len(self.added)} build(s) added, "
               f"{len(self.same)} already here" + (f", {len(self.completed)} completed" if self.completed else "")
               + (f", {len(self.unverified)} unverified" if self.unverified else "")
               + (f", {len(self.refused)} refused" if self.refused else "")]
        if self.refused_tip:
            out.insert(0, f"kabe archive pull {self.remote}: {self.refused_tip}")
        out += [f"  took {alt} for {u}: the archive's {u} was pushed there first and does not verify ({why}); "
                f"the build shared beside it does" for u, alt, why in self.beside]
        out += [f"  kept local reports/{u}: it differs from the shared archive in {', '.join(files)}; "
                f"delete it to take the shared one" for u, files in self.kept_local]
        out += _capped([f"  refused {what}: {why}; nothing of it was kept" for what, why in self.refused])
        out += _capped([f"  unverified {u}: {why}; kept apart in reports/{UNVERIFIED}/{u} (never a cache entry, "
                        f"a base or deployable)" for u, why in self.unverified])
        if self.shared_added or self.shared_same or self.shared_unverified:
            out.append(f"  shared cache: {len(self.shared_added)} unit(s) added to this machine's cache, "
                       f"{len(self.shared_same)} already here"
                       + (f", {len(self.shared_unverified)} unverified" if self.shared_unverified else ""))
            out += [f"    added {u}" for u in self.shared_added[:MAX_LINES]]
        out += _capped([f"  unverified {u}: {why}; kept apart in reports/{UNVERIFIED_SHARED}/{u[len(ap.SHARED_PREFIX):]} "
                        f"(never used by a build)" for u, why in self.shared_unverified])
        if self.unverified or self.shared_unverified:
            out.append("  (which keys are trusted, and how CI signs: docs/archive.md)")
        return out


def _capped(lines: list[str]) -> list[str]:
    return lines if len(lines) <= MAX_LINES else lines[:MAX_LINES] + [f"  ... and {len(lines) - MAX_LINES} more"]


class Refused(ValueError):
    """A pulled unit broke a rule while it was read (a cap, a broken gzip): it is not kept."""


class _Budget:
    """What a unit may still write (MAX_UNIT_BYTES), shared by its files."""

    def __init__(self, total: int = ap.MAX_UNIT_BYTES):
        self.left = total


def _restored_chunks(chunks: Iterable[bytes], gz: bool, name: str, budget: _Budget) -> Iterable[bytes]:
    """A stored file's raw bytes, chunk by chunk: gzip members are inflated with a bounded output per
    step (zlib max_length), so a bomb stops at the cap, having cost a chunk of memory."""
    written = 0

    def count(data: bytes) -> bytes:
        nonlocal written
        written += len(data)
        budget.left -= len(data)
        if written > ap.MAX_FILE_BYTES:
            raise Refused(f"{name}: more than {ap.MAX_FILE_BYTES} bytes once decompressed")
        if budget.left < 0:
            raise Refused(f"{name}: the unit is more than {ap.MAX_UNIT_BYTES} bytes once decompressed")
        return data

    if not gz:
        for chunk in chunks:
            yield count(chunk)
        return
    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    in_member = False
    try:
        for chunk in chunks:
            data = chunk
            while data:
                in_member = True
                out = d.decompress(data, CHUNK)
                if out:
                    yield count(out)
                if d.eof:  # one gzip member ended; another may follow
                    data, in_member = d.unused_data, False
                    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
                else:
                    data = d.unconsumed_tail
        if in_member:
            raise Refused(f"{name}.gz: a truncated gzip stream")
    except zlib.error as e:
        raise Refused(f"{name}.gz: not valid gzip ({e})") from None


def _writer(reader: git.BlobReader, entry: ap.Entry, name: str, budget: _Budget) -> Callable[[BinaryIO], None]:
    def write(f: BinaryIO) -> None:
        try:
            for chunk in _restored_chunks(reader.stream(entry.oid, ap.MAX_UNIT_STORED_BYTES, CHUNK),
                                          entry.path.endswith(".gz"), name, budget):
                f.write(chunk)
        except BlobTooLarge as e:
            raise Refused(f"{name}: {e}") from None
    return write


def _stream_sha(reader: git.BlobReader, entry: ap.Entry, name: str) -> str:
    h = hashlib.sha256()
    try:
        for chunk in _restored_chunks(reader.stream(entry.oid, ap.MAX_UNIT_STORED_BYTES, CHUNK),
                                      entry.path.endswith(".gz"), name, _Budget()):
            h.update(chunk)
    except BlobTooLarge as e:
        raise Refused(f"{name}: {e}") from None
    return h.hexdigest()


def _grouped(entries, split, report, not_unit: str) -> dict[str, dict[str, ap.Entry]]:
    """The tree listing's files by unit (`split`: a path -> (unit, stored name) or None); a unit with a
    refused path or a file stored twice (with and without .gz) is refused whole, named in `report`."""
    by_unit: dict[str, dict[str, ap.Entry]] = {}
    bad: dict[str, str] = {}
    for e in entries:
        parts, why = split(e.path), ap.path_problem(e)
        if why or parts is None:
            if parts:
                bad.setdefault(parts[0], f"{ap.shown(parts[1])}: {why}")
            else:
                report.refused.append((ap.shown(e.path), why or not_unit))
            continue
        unit, stored = parts
        name = stored[:-3] if stored.endswith(".gz") else stored
        if name in by_unit.get(unit, {}):
            bad.setdefault(unit, f"{ap.shown(stored)}: stored twice (with and without .gz)")
        by_unit.setdefault(unit, {})[name] = e
    for unit, why in sorted(bad.items()):
        by_unit.pop(unit, None)
        report.refused.append((unit, why))
    return by_unit


def _read_units(entries: list[ap.Entry], bitstreams: bool, report: PullReport) -> dict[str, dict[str, ap.Entry]]:
    """{unit: {raw file name: entry}} of the units whose every entry passed archive_paths; the others
    (and entries outside any unit) are named in report.refused."""
    by_unit = _grouped(entries, ap.split_unit, report, "not a unit's path")
    for unit, files in list(by_unit.items()):
        why = ap.unit_size_problem(list(files.values()))
        if why:
            by_unit.pop(unit)
            report.refused.append((unit, why))
        elif not bitstreams:
            by_unit[unit] = {n: e for n, e in files.items() if not signing.is_bitstream(n)}
    return by_unit


def _cache_key_problem(unit_dir: Path) -> str | None:
    """The cache key metrics.json names must be sha256 of the unit's own cache_key.json material (the
    same canonical JSON kabe.cache.cache hashes); None when they agree or either is absent."""
    from kabe.cache.cache import KEY_FILE, key_of_material

    key_file, metrics = unit_dir / KEY_FILE, unit_dir / "metrics.json"
    if not key_file.is_file() or not metrics.is_file():
        return None
    try:
        material = json.loads(key_file.read_text())
        claimed = json.loads(metrics.read_text()).get("cache_key")
    except (ValueError, RecursionError, AttributeError, UnicodeDecodeError):
        return f"{KEY_FILE} or metrics.json is not a JSON document of the expected shape"
    if claimed is not None and key_of_material(material) != claimed:
        return f"metrics.json's cache_key is not the hash of its {KEY_FILE}"
    return None


def trust_problem(root: Path, unit_dir: Path, unit: str, allowed: Path | None) -> str | None:
    """Why a pulled unit is not trusted (kept in .unverified/), or None: the pull's one rule, which the
    report page's unverified history (kabe.records.history) re-asks to say why."""
    from kabe.cache.cache import commit_exists

    check = signing.verify_dir(unit_dir, unit, allowed, signing.this_project(root))
    if not check.ok:
        return check.reason
    commit = unit.split("/", 1)[0]
    if not commit_exists(commit, root):
        return f"it names commit {commit}, which is not in this repository (fetch the branch that has it, then pull again)"
    return _cache_key_problem(unit_dir)


def _stage(reader: git.BlobReader, reports_root: Path, unit: str, files: dict[str, ap.Entry]) -> Path:
    """The whole unit written under reports/.unverified/<unit>/ (streamed, within its caps)."""
    budget = _Budget()
    staged = Path(reports_root) / UNVERIFIED / unit
    return write_atomic(staged, {name: _writer(reader, e, name, budget) for name, e in sorted(files.items())},
                        root=reports_root)


def _promote(staged: Path, dest: Path, reports_root: Path) -> None:
    """Move a verified unit from .unverified/ to its place (one rename: it appears whole), and remove the
    folders of .unverified/ it leaves empty (the page lists what is there as unverified)."""
    safe_fs.make_dirs(dest.parent, reports_root)
    os.rename(safe_fs.confined(staged, reports_root), dest)
    _remove_empty_parents(staged, Path(reports_root) / UNVERIFIED)


def _remove_empty_parents(path: Path, top: Path) -> None:
    for parent in Path(path).parents:  # up to .unverified/ itself, when nothing is left in it
        if parent != top and top not in parent.parents:
            return
        try:
            parent.rmdir()
        except OSError:  # not empty (another unit of the commit), or gone
            return


def allowed_signers_of(root: Path) -> Path | None:
    """The allowed-signers file of the project at root ([tool.kabe] allowed_signers for this checkout)."""
    if Path(root).resolve() == ROOT.resolve() or signing.is_pinned():
        return signing.allowed_signers_file()
    path = Path(root) / signing.DEFAULT_ALLOWED_SIGNERS
    return path if path.is_file() else None


# Caps on what one pull may stage, decided from the tree listing before a byte is written: a push of a
# megabyte of tiny unsigned units (20,000 of them) cost each pull half a minute and 300 MB of
# .unverified/ before. A real archive gains a few units per commit of the default branch; a fresh
# clone of a long-lived project takes more than that, hence the room in MAX_NEW_UNITS.
MAX_NEW_UNITS = 5000  # units this clone has not got yet, per pull: more refuses the pull (nothing staged)
MAX_NEW_UNSIGNED = 100  # of those, units with no signature at all (never trusted): more are all left unstaged
LOCK_NAME = "kabe-archive-pull.lock"  # in the clone's git folder: nothing under reports/ but the archive


@contextlib.contextmanager
def _pull_lock(root: Path):
    """One pull at a time per clone (two at once crashed on a rename and left a stale .unverified entry):
    the second waits for the first."""
    path = Path(root, git.run(root, "rev-parse", "--git-path", LOCK_NAME).stdout.decode().strip())
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        take_lock(fd)
        yield
    finally:
        os.close(fd)


def _present(reports_root: Path) -> set[str]:
    """'<commit>/<design>/<kind>' of every unit folder already in reports/ (one scandir per level)."""
    found: set[str] = set()
    for level1 in _dirs(str(reports_root)):
        for level2 in _dirs(level1):
            for level3 in _dirs(level2):
                found.add(os.path.relpath(level3, reports_root))
    return found


def _dirs(path: str) -> list[str]:
    try:
        return [e.path for e in os.scandir(path) if e.is_dir(follow_symlinks=False) and not e.name.startswith(".")]
    except OSError:
        return []


def _count_new(paths: list[str], reports_root: Path) -> tuple[int, set[str]]:
    """(how many units of the listing this clone has not placed yet, those of them with no signature file):
    from the paths alone, before any of them is judged or read (cheap: a string split per entry)."""
    present = _present(reports_root)
    units: dict[str, bool] = {}
    for path in paths:
        parts = path.split("/", 3)
        if len(parts) < 4 or ap.is_shared(path):  # shared cache units: counted by _pull_shared
            continue
        unit = "/".join(parts[:3])
        units[unit] = units.get(unit, False) or parts[3] == signing.SIGNATURE_FILE
    new = [u for u in units if ap.base_unit(u) not in present]
    return len(new), {u for u in new if not units[u]}


def pull(remote: str = "origin", root: Path = ROOT, reports_root: Path = REPORTS, bitstreams: bool = False,
         ref: str | None = None, accept_rewrite: str | None = None, allowed_signers: Path | None = None,
         shared: Sequence[SharedCache] = ()) -> PullReport:
    """The remote's archive into reports/ (the units that verify), and its shared cache units into the caches
    of `shared` (the flows' caches; a flow not among them leaves its units in the archive)."""
    reports_root = Path(reports_root)
    with _pull_lock(root):
        return _pull(remote, root, reports_root, bitstreams, ref or archive_ref(root=root), accept_rewrite,
                     allowed_signers, shared)


def _pull(remote: str, root: Path, reports_root: Path, bitstreams: bool, ref: str, accept_rewrite: str | None,
          allowed_signers: Path | None, shared: Sequence[SharedCache] = ()) -> PullReport:
    report = PullReport(remote, ref)
    tip = fetch(remote, root, ref, accept_rewrite)
    if tip is None:
        report.remote_has_archive = False
        return report
    new, unsigned = _count_new(git.ls_tree_paths(root, tip), reports_root)  # the caps first: from names alone
    if new > MAX_NEW_UNITS:
        raise ArchiveTampered(f"the archive {ref} on {remote!r} holds {new} units this clone has not got, more than "
                              f"one pull takes ({MAX_NEW_UNITS}); nothing was pulled ({len(unsigned)} of them unsigned). "
                              f"Ask who pushed them: a kabe archive gains a few units per commit")
    good, report.refused_tip = checked_tip(root, tip, ref, remote)
    entries = git.ls_tree_entries(root, good)
    shared_entries = [e for e in entries if ap.is_shared(e.path)]
    entries = [e for e in entries if not ap.is_shared(e.path)]
    if good != tip:
        new, unsigned = _count_new([e.path for e in entries], reports_root)
    allowed = allowed_signers if allowed_signers is not None else allowed_signers_of(root)
    if len(unsigned) > MAX_NEW_UNSIGNED:  # never staged: they could not be trusted anyway
        entries = [e for e in entries if "/".join(e.path.split("/", 3)[:3]) not in unsigned]
    units = _read_units(entries, bitstreams, report)
    if len(unsigned) > MAX_NEW_UNSIGNED:
        report.refused.append((f"{len(unsigned)} unsigned units",
                               f"more than a pull stages ({MAX_NEW_UNSIGNED}); none of them was staged (they could "
                               f"never be trusted: the signed units were pulled as usual)"))
    # a unit first, then those shared beside it (archive_paths.base_unit): one lands at reports/<unit>
    order = sorted(units, key=lambda u: (ap.base_unit(u), ap.is_beside(u), u))
    with git.BlobReader(root) as reader:
        for unit in order:
            _pull_one(reader, root, reports_root, unit, units[unit], allowed, report)
        if shared:
            _pull_shared(reader, root, reports_root, shared_entries, shared, allowed, report)
    return report


def _pull_shared(reader: git.BlobReader, root: Path, reports_root: Path, entries: list[ap.Entry],
                 caches: Sequence[SharedCache], allowed: Path | None, report: PullReport) -> None:
    """The shared cache units a flow of this clone takes (ip/<flow>/<key>/): judged by path and size like a
    build, staged whole in reports/.unverified-ip/, added to the flow's cache only when signed by an allowed
    key for this project and accepted by the flow (whole, its key its material's); else kept apart, named."""
    by_flow = {c.flow: c for c in caches}
    units = _grouped(entries, ap.split_shared, report, "not a shared cache unit's path")
    wanted = {}
    for unit, files in units.items():
        flow, key = ap.shared_key(unit)
        if flow not in by_flow:
            continue  # a flow this clone does not carry a cache for
        if by_flow[flow].have(key):
            if not ap.is_beside(unit):
                report.shared_same.append(unit)
            continue
        why = ap.unit_size_problem(list(files.values()))
        if why:
            report.refused.append((unit, why))
            continue
        wanted[unit] = files
    unsigned = [u for u, files in wanted.items() if signing.SIGNATURE_FILE not in files]
    if len(wanted) > MAX_NEW_UNITS or len(unsigned) > MAX_NEW_UNSIGNED:
        report.refused.append((f"{len(wanted)} shared cache units ({len(unsigned)} unsigned)",
                               f"more than a pull stages ({MAX_NEW_UNITS}, {MAX_NEW_UNSIGNED} unsigned); "
                               f"none of the {'unsigned ' if len(wanted) <= MAX_NEW_UNITS else ''}ones was staged"))
        wanted = {} if len(wanted) > MAX_NEW_UNITS else {u: f for u, f in wanted.items() if u not in unsigned}
    for unit in sorted(wanted, key=lambda u: (ap.base_unit(u), ap.is_beside(u), u)):
        flow, key = ap.shared_key(unit)
        cache = by_flow[flow]
        if cache.have(key):  # another unit of the same key (one shared beside it) was taken already
            continue
        staged_at = reports_root / UNVERIFIED_SHARED / unit[len(ap.SHARED_PREFIX):]
        budget = _Budget()
        try:
            staged = write_atomic(staged_at, {n: _writer(reader, e, n, budget) for n, e in sorted(wanted[unit].items())},
                                  root=reports_root)
        except Refused as e:
            report.refused.append((unit, str(e)))
            continue
        check = signing.verify_dir(staged, ap.base_unit(unit), allowed, signing.this_project(root))
        why = None if check.ok else check.reason
        if why is None and (set(check.file_hashes) != set(signing.hash_dir(staged))):
            why = "it lacks files its signature lists (a shared cache unit travels whole)"
        why = why or cache.accept(staged, key)
        if why:
            report.shared_unverified.append((unit, why))
            continue
        safe_fs.remove_tree(staged, reports_root)
        _remove_empty_parents(staged, reports_root / UNVERIFIED_SHARED)
        report.shared_added.append(unit)


def _pull_one(reader: git.BlobReader, root: Path, reports_root: Path, unit: str,
              files: dict[str, ap.Entry], allowed: Path | None, report: PullReport) -> None:
    place = ap.base_unit(unit)  # a unit shared beside another lands where that one would
    commit, design, _kind = place.split("/")
    dest = safe_fs.confined(reports_root / place, reports_root / commit / design)
    beside = place != unit
    try:
        if os.path.isdir(dest):
            if beside:  # the unit it stands beside verified (or this clone built it): nothing to take
                return
            _pull_into_existing(reader, root, reports_root, unit, dest, files, allowed, report)
            return
        staged = _stage(reader, reports_root, unit, files)
    except Refused as e:
        report.refused.append((unit, str(e)))
        return
    why = trust_problem(root, staged, place, allowed)
    if why:
        report.unverified.append((unit, why))
        return
    _promote(staged, dest, reports_root)
    if beside:
        taken_over = next((w for u, w in report.unverified if u == place), "it is not in the archive")
        report.beside.append((place, unit, taken_over))
    report.added.append(place)


def _pull_into_existing(reader: git.BlobReader, root: Path, reports_root: Path, unit: str, dest: Path,
                        files: dict[str, ap.Entry], allowed: Path | None, report: PullReport) -> None:
    """A unit this clone has already: same, kept (it differs), or completed with the files it lacks
    (bitstreams, the signature) once the remote's unit verifies."""
    local = _files_of(dest, bitstreams=True)
    fmt = git.object_format(root)
    differ = [name for name, e in sorted(files.items()) if name in local  # by blob id first: no read
              and not _same_content(reader, e.oid, e.path.split("/", 3)[3], local[name].read_bytes(), fmt)]
    if differ:
        report.kept_local.append((unit, differ))
        return
    missing = sorted(set(files) - set(local))
    if not missing:
        report.same.append(unit)
        return
    staged = _stage(reader, reports_root, unit, files)
    why = trust_problem(root, staged, unit, allowed)
    if why:
        report.unverified.append((unit, why))
        return
    write_atomic(dest, {**local, **{name: staged / name for name in missing}}, root=reports_root)
    safe_fs.remove_tree(staged, reports_root)
    _remove_empty_parents(staged, Path(reports_root) / UNVERIFIED)
    report.completed.append(unit)
