"""Which commit produced an artifact, and whether the tree was dirty (Hog's rule: never hide it)."""

from __future__ import annotations

import hashlib
import subprocess
from dataclasses import dataclass
from pathlib import Path

from kabe.paths import PACKAGE, ROOT


@dataclass(frozen=True)
class Commit:
    sha: str  # 40 hex digits, or "nogit" outside a git checkout
    dirty: bool

    @property
    def archive_name(self) -> str:
        """Directory name under reports/: a dirty tree never shares a clean commit's name."""
        return f"{self.sha}-dirty" if self.dirty else self.sha

    @property
    def short(self) -> str:
        return self.sha[:12] + ("-dirty" if self.dirty else "")


def _git(*args: str, cwd: Path = ROOT) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout.strip()


# A tree shipped to a sweep worker (kabe.sweep.source) has no .git; this file names its commit.
SHIPPED_TREE_MARKER = ".kabe-tree"


def _shipped_commit(cwd: Path) -> Commit | None:
    import json

    try:
        data = json.loads((Path(cwd) / SHIPPED_TREE_MARKER).read_text())
        sha = str(data["commit"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return Commit(sha, False) if len(sha) == 40 and all(c in "0123456789abcdef" for c in sha) else None


def current_commit(cwd: Path = ROOT) -> Commit:
    try:
        top = _git("rev-parse", "--show-toplevel", cwd=cwd)
        if Path(top).resolve() != Path(cwd).resolve():
            raise FileNotFoundError(top)  # inside someone else's checkout: not this tree's history
        sha = _git("rev-parse", "HEAD", cwd=cwd)
    except (subprocess.CalledProcessError, FileNotFoundError):
        return _shipped_commit(cwd) or Commit("nogit", True)
    # Untracked files under reports/ and build/ are ignored by .gitignore, so they never make a tree dirty.
    status = _git("status", "--porcelain", "--untracked-files=normal", cwd=cwd)
    return Commit(sha, bool(status))


def why_no_commit(cwd: Path = ROOT) -> str | None:
    """Why current_commit(cwd) has no commit, in words a user can act on; None when it has one."""
    try:
        top = _git("rev-parse", "--show-toplevel", cwd=cwd)
    except (subprocess.CalledProcessError, FileNotFoundError):
        return (f"{cwd} is not in a git repository: builds are recorded as 'nogit', so no archive is "
                f"shared and no regression is judged (git init, commit, and build again)")
    if Path(top).resolve() != Path(cwd).resolve():
        return (f"the kabe project at {cwd} is not the top of its git repository ({top}): kabe records a "
                f"commit only for a project at its repository's top, so builds here are 'nogit', no archive "
                f"is shared and no regression is judged (give the FPGA project a repository of its own)")
    return None


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def input_hashes(paths, root: Path = ROOT) -> dict[str, str]:
    """{path relative to the repo (kabe's own files: to the package's folder, kabe/...; else absolute):
    sha256} for a build's inputs. kabe's files are named alike wherever kabe is installed."""
    out = {}
    for p in sorted({Path(p).resolve() for p in paths}):
        if p.is_relative_to(root):
            key = str(p.relative_to(root))
        elif p.is_relative_to(PACKAGE):
            key = str(p.relative_to(PACKAGE.parent))
        else:
            key = str(p)
        out[key] = sha256_file(p)
    return out
