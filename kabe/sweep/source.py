"""The commit's source tree, shipped to workers that share no filesystem with the client.

Client: `git archive` of the commit (only committed files: no build/, no reports/), gzip, with the
tree's git hash and the archive's sha256. Worker: one extraction per tree hash, cached under
$KABE_SWEEP_CACHE (default ~/.cache/kabe/trees), checked against the sha256 before it is unpacked and
marked with the commit it holds. A worker can never build from a tree other than the one asked for:
the cache is only a shortcut, never trusted. Before every build the variant's private copy is checked
file by file against the shipped archive itself (every path, its bytes, its executable bit, each
link's target, and no file more: verified_copy); a cached extraction that differs (edited, truncated,
a file added, by a bug or by another account that can write the cache) is thrown away and extracted
again. The marker is one of the files checked, not the proof.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

from kabe.base.provenance import SHIPPED_TREE_MARKER
from kabe.base import git
from kabe.base.lock import take as take_lock
from kabe.sweep.spec import SweepError


@dataclass(frozen=True)
class ShippedTree:
    commit: str  # 40 hex digits
    tree: str  # git's tree hash: the content address
    sha256: str  # of the archive bytes
    archive: bytes  # tar.gz of the commit's files

    def identity(self) -> dict:
        return {"commit": self.commit, "tree": self.tree, "sha256": self.sha256}


def _git(root: Path, *args: str) -> bytes:
    try:
        proc = git.run(root, *args, check=False)
    except git.GitError:
        raise SweepError("git is not on PATH; sweeps ship the commit's tree with `git archive`") from None
    if proc.returncode != 0:
        raise SweepError(f"git {' '.join(args)} in {root} failed: {proc.stderr.decode(errors='replace').strip()[:200]}")
    return proc.stdout


def pack(root: Path, commit: str = "HEAD") -> ShippedTree:
    """The project's files in `commit`. `git archive` run in a project below its repository's top (a
    monorepo's fpga/) archives that folder alone, its files at the top of the archive (git's rule: the
    working directory's files), so the worker's project top is the project; its content address is
    then that folder's tree (`<sha>:fpga/`). The rest of the repository is not shipped (a FuseSoC
    library outside the project's folder is not there either; see docs/your_design.md)."""
    sha = _git(root, "rev-parse", "--verify", f"{commit}^{{commit}}").decode().strip()
    prefix = _git(root, "rev-parse", "--show-prefix").decode().strip()
    tree = _git(root, "rev-parse", "--verify", f"{sha}:{prefix}" if prefix else f"{sha}^{{tree}}").decode().strip()
    archive = _git(root, "archive", "--format=tar.gz", sha)
    return ShippedTree(sha, tree, hashlib.sha256(archive).hexdigest(), archive)


def cache_root() -> Path:
    return Path(os.environ.get("KABE_SWEEP_CACHE") or Path.home() / ".cache" / "kabe" / "trees")


def read_marker(tree_dir: Path) -> dict:
    try:
        return json.loads((tree_dir / SHIPPED_TREE_MARKER).read_text())
    except (OSError, ValueError):
        return {}


def unpack(identity: dict, archive: bytes, root: Path | None = None) -> Path:
    """The extracted tree for `identity` (commit, tree, sha256), unpacked once per worker machine."""
    root = Path(root or cache_root())
    root.mkdir(parents=True, exist_ok=True)
    dest = root / identity["tree"]
    with open(root / f"{identity['tree']}.lock", "w") as lock:
        take_lock(lock)  # several workers on one machine share the cache
        if read_marker(dest) == identity:
            return dest
        digest = hashlib.sha256(archive).hexdigest()
        if digest != identity["sha256"]:
            raise SweepError(f"the shipped tree of {identity['commit'][:12]} arrived damaged "
                             f"(sha256 {digest[:12]}, expected {identity['sha256'][:12]})")
        tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.tmp-", dir=root))
        try:
            with tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz") as tar:
                tar.extractall(tmp, filter="data")  # no absolute paths, no links out of the tree
            (tmp / SHIPPED_TREE_MARKER).write_text(json.dumps(identity) + "\n")
            if dest.exists():
                shutil.rmtree(dest)  # a stale or foreign extraction under this name: never reused
            os.rename(tmp, dest)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    return dest


def scratch_copy(tree_dir: Path, parent: Path) -> Path:
    """A private copy of the extracted tree for one variant's build (the variant edits it)."""
    parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="variant-", dir=parent))
    shutil.copytree(tree_dir, work / "tree", symlinks=True)
    return work / "tree"


def _manifest_of_archive(archive: bytes) -> dict[str, tuple]:
    """What the tree must hold, from the archive itself: path -> ("file", sha256, executable) or
    ("link", target). Folders are not listed (git has none of its own)."""
    out: dict[str, tuple] = {}
    with tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz") as tar:
        for member in tar:
            name = os.path.normpath(member.name.removeprefix("./"))
            if name in ("", ".") or member.isdir():
                continue
            if member.issym():
                out[name] = ("link", member.linkname)
            elif member.isfile():
                data = tar.extractfile(member).read()
                out[name] = ("file", hashlib.sha256(data).hexdigest(), bool(member.mode & 0o100))
    return out


def _manifest_of_tree(tree: Path) -> dict[str, tuple]:
    out: dict[str, tuple] = {}
    for folder, dirs, files in os.walk(tree):
        for name in files + [d for d in dirs if os.path.islink(os.path.join(folder, d))]:
            path = os.path.join(folder, name)
            rel = os.path.relpath(path, tree)
            if os.path.islink(path):
                out[rel] = ("link", os.readlink(path))
            elif os.path.isfile(path):
                with open(path, "rb") as f:
                    out[rel] = ("file", hashlib.file_digest(f, "sha256").hexdigest(), bool(os.stat(path).st_mode & 0o100))
            else:
                out[rel] = ("other",)
    return out


def tree_differs(tree: Path, identity: dict, archive: bytes) -> str | None:
    """None when `tree` holds exactly the archive's files and the marker of `identity`; else the first
    difference, in a few words."""
    want = _manifest_of_archive(archive)
    want[SHIPPED_TREE_MARKER] = ("file", hashlib.sha256((json.dumps(identity) + "\n").encode()).hexdigest(), False)
    have = _manifest_of_tree(tree)
    for rel in sorted(set(want) | set(have)):
        if want.get(rel) != have.get(rel):
            what = "missing" if rel not in have else "not in the commit" if rel not in want else "differs"
            return f"{rel} {what}"
    return None


def verified_copy(identity: dict, archive: bytes, parent: Path, root: Path | None = None) -> Path:
    """A private copy of the commit's tree for one build, checked file by file against the archive
    (whose sha256 is checked first). A cached extraction that fails the check is extracted again, once."""
    digest = hashlib.sha256(archive).hexdigest()
    if digest != identity["sha256"]:
        raise SweepError(f"the shipped tree of {identity['commit'][:12]} arrived damaged "
                         f"(sha256 {digest[:12]}, expected {identity['sha256'][:12]})")
    for attempt in (1, 2):
        work = scratch_copy(unpack(identity, archive, root), parent)
        wrong = tree_differs(work, identity, archive)
        if wrong is None:
            return work
        shutil.rmtree(work.parent, ignore_errors=True)
        _discard(identity, root)
    raise SweepError(f"the tree cache for {identity['commit'][:12]} does not hold the shipped files even after a "
                     f"fresh extraction ({wrong}); is something else writing {Path(root or cache_root())}?")


def _discard(identity: dict, root: Path | None) -> None:
    root = Path(root or cache_root())
    with open(root / f"{identity['tree']}.lock", "w") as lock:
        take_lock(lock)
        shutil.rmtree(root / identity["tree"], ignore_errors=True)
