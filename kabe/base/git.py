"""kabe's one git module: every git command kabe runs goes through run(), and every failure is one
GitError (UserError: one line naming the command and git's own words, exit 2).

Beside run: the commit a person names (resolve, ancestors: `kabe diff`), and the plumbing of the shared
archive, files into and out of one ref without a work tree or an index. Writing goes through `git fast-import` (one process, one pack, the parent's tree kept and the new
paths added), reading through `git ls-tree` and one long-lived `git cat-file --batch`. Nothing here
touches the checkout, the index or HEAD, so the store works beside any state of the user's tree.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from kabe.base.errors import UserError
from kabe.base.paths import ROOT


class GitError(UserError):
    """A git command kabe needs failed, or git is missing: the message names the command and git's own words."""


class RefError(GitError, ValueError):
    """A ref git does not know (or no git at all): the message names the ref and the repository."""


class BlobTooLarge(ValueError):
    """A stored blob is over its cap: it is not read."""


# The store's own git calls never start git's automatic housekeeping: a fetch or fast-import that
# crosses gc.auto's thresholds would otherwise repack the user's whole repository inside an archive
# pull, at a cost (time, memory) that has nothing to do with the archive. The user's own git
# commands still run it.
NO_AUTO_GC = ("-c", "gc.auto=0", "-c", "maintenance.auto=false")
NO_GIT = "git is not on PATH; the shared archive is plain git, install it"


def run(root: Path, *args: str, input: bytes | str | None = None, check: bool = True, text: bool = False,
        no_git: str = NO_GIT, error: type[GitError] = GitError, timeout: float | None = None) -> subprocess.CompletedProcess:
    """git *args in root, output captured (str with text=True, else bytes). GitError (or the error given)
    when git is missing (no_git says what needed it) or, with check, when the command fails."""
    try:
        proc = subprocess.run(["git", *NO_AUTO_GC, *args], cwd=root, input=input, capture_output=True, text=text,
                              timeout=timeout)
    except FileNotFoundError:
        raise error(no_git) from None
    if check and proc.returncode != 0:
        raise error(f"git {' '.join(args[:3])} failed in {root}: {last_line(proc.stderr)}")
    return proc


def worktree_add(top: Path, tree: Path, commit: str) -> subprocess.CompletedProcess:
    """A detached worktree of commit at tree (the caller reads returncode and stderr)."""
    return run(top, "worktree", "add", "--quiet", "--detach", str(tree), commit, check=False, text=True)


def worktree_remove(top: Path, tree: Path) -> None:
    """Remove a worktree kabe added; a cleanup, so a failure is left to `git worktree prune`."""
    run(top, "worktree", "remove", "--force", str(tree), check=False)


def out(root: Path, *args: str) -> str:
    """What git *args prints in root, stripped; GitError when it fails."""
    return run(root, *args, text=True).stdout.strip()


def last_line(stderr: bytes | str) -> str:
    """git's own reason: its first fatal/error line (the lines after it are advice), else its last line."""
    said = stderr.decode(errors="replace") if isinstance(stderr, bytes) else stderr
    lines = [ln.strip() for ln in said.splitlines() if ln.strip()]
    said = [ln for ln in lines if ln.startswith(("fatal:", "error:"))]
    return said[0] if said else (lines[-1] if lines else "(no message)")


def object_format(root: Path) -> str:
    out = run(root, "rev-parse", "--show-object-format", check=False).stdout.decode().strip()
    return out or "sha1"


def blob_id(data: bytes, fmt: str = "sha1") -> str:
    """The id git gives these bytes as a blob, computed here so that comparing needs no git call."""
    h = hashlib.new(fmt)
    h.update(b"blob %d\0" % len(data))
    h.update(data)
    return h.hexdigest()


def ls_tree(root: Path, commit: str) -> dict[str, tuple[str, int]]:
    """{path: (blob id, size)} of every file in the commit's tree."""
    out = run(root, "ls-tree", "-r", "-z", "--long", "--full-tree", commit).stdout.decode()
    files = {}
    for entry in out.split("\0"):
        if not entry:
            continue
        meta, path = entry.split("\t", 1)
        _mode, kind, oid, size = meta.split()
        if kind == "blob":
            files[path] = (oid, int(size))
    return files


@dataclass(frozen=True)
class Entry:
    """One line of `git ls-tree -r --long`."""

    mode: str
    kind: str  # blob, tree, commit
    oid: str
    size: int  # 0 for a gitlink (ls-tree says '-')
    path: str


def ls_tree_entries(root: Path, commit: str) -> list[Entry]:
    """Every entry of the commit's tree as Entry (mode, kind, id, size, path), links,
    gitlinks and odd modes included: the caller judges them. A path that is not UTF-8 is kept with
    its bad bytes escaped, so it is refused by name, never decoded into something else."""
    out = run(root, "ls-tree", "-r", "-z", "--long", "--full-tree", commit).stdout
    entries = []
    for raw in out.split(b"\0"):
        if not raw:
            continue
        meta, _, path = raw.partition(b"\t")
        mode, kind, oid, size = meta.decode(errors="replace").split()
        entries.append(Entry(mode, kind, oid, int(size) if size.isdigit() else 0,
                             path.decode("utf-8", errors="backslashreplace")))
    return entries


class BlobReader:
    """One `git cat-file --batch` for many blobs: read(oid) -> bytes. Use as a context manager."""

    def __init__(self, root: Path):
        self._proc = subprocess.Popen(["git", "cat-file", "--batch"], cwd=root, stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE)

    def _ask(self, oid: str) -> tuple[bytes, int]:
        """(object type, size) from cat-file's header for oid; its content follows on stdout."""
        self._proc.stdin.write(oid.encode() + b"\n")
        self._proc.stdin.flush()
        header = self._proc.stdout.readline().split()
        if len(header) < 3 or header[1] == b"missing":
            raise GitError(f"git object {oid} is missing from this repository; fetch the archive again")
        return header[1], int(header[2])

    def read(self, oid: str) -> bytes:
        _kind, size = self._ask(oid)
        data = self._proc.stdout.read(size)
        self._proc.stdout.read(1)  # the newline after each object
        return data

    def stream(self, oid: str, max_bytes: int, chunk: int = 1 << 20):
        """The blob's bytes in chunks of at most `chunk` (never the whole blob in memory); a blob larger
        than max_bytes is refused before any of it is read (the stream is drained, not kept)."""
        kind, size = self._ask(oid)
        if kind != b"blob" or size > max_bytes:
            self._skip(size + 1)
            raise BlobTooLarge(f"{kind.decode(errors='replace')} {oid} of {size} bytes (at most {max_bytes})")
        left = size
        try:
            while left:
                data = self._proc.stdout.read(min(chunk, left))
                if not data:
                    raise GitError(f"git cat-file stopped in the middle of {oid}")
                left -= len(data)
                yield data
        finally:  # the rest when the reader stopped early (a cap), then the newline after each object
            self._skip(left + 1)

    def _skip(self, n: int) -> None:
        while n > 0:
            got = self._proc.stdout.read(min(n, 1 << 20))
            if not got:
                return
            n -= len(got)

    def close(self) -> None:
        if self._proc.poll() is None:
            self._proc.stdin.close()
            self._proc.wait()

    def __enter__(self) -> "BlobReader":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


_SAFE_PATH = re.compile(r'^[^"\n\\][^\n\\]*$')


def write_commit(root: Path, parent: str | None, files: dict[str, bytes], message: str) -> str:
    """A new commit: the parent's tree (if any) plus `files` (path -> bytes). Returns its id; no branch
    moves (a scratch ref is used by fast-import and deleted)."""
    scratch = f"refs/kabe/scratch/{os.getpid()}-{time.monotonic_ns()}"
    msg = message.encode()
    stream = [f"commit {scratch}\n".encode(),
              f"committer kabe <kabe@localhost> {int(time.time())} +0000\n".encode(),
              b"data %d\n" % len(msg), msg, b"\n"]
    if parent:
        stream.append(f"from {parent}\n".encode())
    for path, data in sorted(files.items()):
        if not _SAFE_PATH.match(path):
            raise GitError(f"archive path {path!r} cannot be stored (newline, quote or backslash in it); rename the file")
        stream += [f"M 100644 inline {path}\n".encode(), b"data %d\n" % len(data), data, b"\n"]
    stream.append(b"done\n")
    run(root, "fast-import", "--quiet", "--done", "--force", input=b"".join(stream))
    try:
        return run(root, "rev-parse", scratch).stdout.decode().strip()
    finally:
        run(root, "update-ref", "-d", scratch, check=False)


def disk_sizes(root: Path, ref: str) -> dict[str, int]:
    """{object id: bytes it takes in this repository's object store (packed, delta-compressed)} for
    every object reachable from ref."""
    objects = run(root, "rev-list", "--objects", ref).stdout.decode().split("\n")
    ids = "\n".join(line.split(" ", 1)[0] for line in objects if line).encode()
    out = run(root, "cat-file", "--batch-check=%(objectname) %(objectsize:disk)", input=ids + b"\n").stdout.decode()
    sizes = {}
    for line in out.splitlines():
        oid, _, size = line.partition(" ")
        if size.isdigit():
            sizes[oid] = int(size)
    return sizes


def roots(root: Path, tip: str) -> list[str]:
    """The commits without a parent reachable from tip (an archive ref made by kabe has one)."""
    out = run(root, "rev-list", "--max-parents=0", tip).stdout.decode().split()
    return sorted(out)


def history_violations(root: Path, tip: str) -> list[tuple[str, str, str]]:
    """Every (commit, status, path) on tip's first-parent chain where a commit deleted, changed or
    retyped a path its parent had (git's D, M, T), newest commit first; [] for an append-only ref.
    One `git log`, whatever the history's length."""
    # log.showRoot off: the root commit only adds, and diffing it against nothing costs the whole tree
    out = run(root, "-c", "log.showRoot=false", "log", "--first-parent", "-m", "--no-renames", "--raw", "-z",
              "--diff-filter=DMT",
              "--format=%x00commit %H", tip).stdout
    found: list[tuple[str, str, str]] = []
    commit = ""
    fields = out.split(b"\0")
    i = 0
    while i < len(fields):
        item = fields[i].strip(b"\n")
        if item.startswith(b"commit "):
            commit = item[7:].decode()
        elif item.startswith(b":"):  # ":<mode> <mode> <oid> <oid> <status>" then the path
            status = item.split()[-1].decode(errors="replace")[:1]
            path = fields[i + 1].decode("utf-8", errors="backslashreplace") if i + 1 < len(fields) else "?"
            found.append((commit, status, path))
            i += 1
        i += 1
    return found


def first_parent(root: Path, commit: str) -> str | None:
    out = run(root, "rev-parse", "--verify", "--quiet", f"{commit}^1", check=False).stdout.decode().strip()
    return out or None


def ls_tree_paths(root: Path, commit: str) -> list[str]:
    """Every path of the commit's tree, names only (no object is read for its size: the fast listing a
    pull counts units from before it judges any)."""
    out = run(root, "ls-tree", "-r", "-z", "--name-only", "--full-tree", commit).stdout
    return [p.decode("utf-8", errors="backslashreplace") for p in out.split(b"\0") if p]


# The commit a person names (HEAD~1, a branch, a tag, a short sha) and its ancestors: `kabe diff` finds
# archives with these; nothing here reads one.
_NO_GIT_DIFF = "git is not installed; `kabe diff` needs it to resolve commits"


def resolve(ref: str, root: Path = ROOT) -> str:
    """The full sha of the commit `ref` names; RefError when git knows no such commit."""
    if not ref or ref.startswith("-"):  # never let a ref be read as an option
        raise RefError(f"{ref!r} is not a git ref or commit")
    out = run(root, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}", check=False, text=True,
              no_git=_NO_GIT_DIFF, error=RefError)
    if out.returncode != 0 or not out.stdout.strip():
        raise RefError(f"unknown commit or ref {ref!r} in {root}: `git rev-parse` knows no such commit; "
                       f"use a sha, a branch, a tag or HEAD~N (`git log --oneline` lists them)")
    return out.stdout.strip()


def try_resolve(ref: str, root: Path = ROOT) -> str | None:
    try:
        return resolve(ref, root)
    except RefError:
        return None


def ancestors(sha: str, root: Path = ROOT) -> list[str]:
    """Every ancestor of `sha` (itself excluded), nearest first (git's topological order)."""
    out = run(root, "rev-list", "--topo-order", sha, check=False, text=True, no_git=_NO_GIT_DIFF,
              error=RefError)
    if out.returncode != 0:
        raise RefError(f"git rev-list {sha} failed in {root}: {out.stderr.strip()}")
    return out.stdout.split()[1:]


def head(root: Path = ROOT) -> str | None:
    return try_resolve("HEAD", root)
