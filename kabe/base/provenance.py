"""Which commit produced an artifact, and whether the tree was dirty (Hog's rule: never hide it)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from kabe.base import git
from kabe.base.paths import PACKAGE, ROOT


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
    return git.out(cwd, *args)


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


def project_prefix(cwd: Path = ROOT) -> str | None:
    """The project's folder relative to its git repository's top, as git names it ("fpga/" in a
    monorepo whose fpga/ is the project; "" for a project at the top), or None outside git."""
    try:
        return _git("rev-parse", "--show-prefix", cwd=cwd)
    except git.GitError:
        return None


def _outside_library_paths(cwd: Path) -> list[str]:
    """The FuseSoC libraries the project's fusesoc.conf names that lie in the repository but outside
    the project's folder (a monorepo's shared IP, "../ip"), as pathspecs relative to cwd. Their edits
    change a build, so they count for the dirty check like the project's own files. (kabe.project.cores reads
    the same file for the build; this reader is lenient: a broken file is the build's error to say.)"""
    import configparser
    import os

    conf = Path(cwd) / "fusesoc.conf"
    if not conf.is_file():
        return []
    parser = configparser.ConfigParser()
    try:
        parser.read(conf)
        top = Path(_git("rev-parse", "--show-toplevel", cwd=cwd)).resolve()
    except (configparser.Error, OSError, UnicodeDecodeError, git.GitError):
        return []
    here, out = Path(cwd).resolve(), []
    for section in parser.sections():
        if section.startswith("library."):
            location = parser.get(section, "location", fallback=str(Path("fusesoc_libraries") / section[8:]))
            lib = (conf.parent / Path(location).expanduser()).resolve()
            if lib.is_relative_to(top) and not lib.is_relative_to(here):
                out.append(os.path.relpath(lib, here))
    return out


def current_commit(cwd: Path = ROOT) -> Commit:
    """The commit HEAD of the repository holding the project, and whether the project is dirty.

    A project at its repository's top is dirty when anything in the repository differs from HEAD
    (tracked changes, untracked files that are not ignored). A project below the top (a monorepo's
    fpga/) is dirty only when something under its own folder differs, or under a FuseSoC library its
    fusesoc.conf names elsewhere in the repository: an edit to the software beside it (sw/) leaves it
    clean, and its builds keep their cache and their verdict. A project folder the repository does not
    track at all (an ignored or never added folder inside someone else's checkout) has no commit."""
    try:
        prefix = _git("rev-parse", "--show-prefix", cwd=cwd)
        sha = _git("rev-parse", "HEAD", cwd=cwd)
        if prefix and not _git("ls-files", "--", ".", cwd=cwd):
            raise FileNotFoundError(prefix)  # not this repository's files: not its history either
    except (git.GitError, FileNotFoundError):
        return _shipped_commit(cwd) or Commit("nogit", True)
    # Untracked files under reports/ and build/ are ignored by .gitignore, so they never make a tree dirty.
    where = ["--", ".", *_outside_library_paths(cwd)] if prefix else []  # at the top: the whole tree, as always
    status = _git("status", "--porcelain", "--untracked-files=normal", *where, cwd=cwd)
    return Commit(sha, bool(status))


def why_no_commit(cwd: Path = ROOT) -> str | None:
    """Why current_commit(cwd) has no commit, in words a user can act on; None when it has one."""
    try:
        prefix = _git("rev-parse", "--show-prefix", cwd=cwd)
    except git.GitError:
        return (f"{cwd} is not in a git repository: builds are recorded as 'nogit', so no archive is "
                f"shared and no regression is judged (git init, commit, and build again)")
    if prefix and not _git("ls-files", "--", ".", cwd=cwd):
        return (f"the kabe project at {cwd} has no file tracked by its git repository (a folder never added, "
                f"or one the repository ignores): builds are recorded as 'nogit', no archive is shared and no "
                f"regression is judged (git add the project's files and commit)")
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
