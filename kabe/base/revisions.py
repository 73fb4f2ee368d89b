"""Git refs as a person types them (HEAD~1, a branch, a tag, a short sha) -> full commit shas, and a
commit's ancestors nearest first. `kabe diff` uses these to find archives; nothing here reads one.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from kabe.base.errors import UserError
from kabe.base.paths import ROOT


class RefError(UserError, ValueError):
    """A ref git does not know (or no git at all): the message names the ref and the repository."""


def _git(root: Path, *args: str) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True)
    except FileNotFoundError:
        raise RefError("git is not installed; `kabe diff` needs it to resolve commits") from None


def resolve(ref: str, root: Path = ROOT) -> str:
    """The full sha of the commit `ref` names; RefError when git knows no such commit."""
    if not ref or ref.startswith("-"):  # never let a ref be read as an option
        raise RefError(f"{ref!r} is not a git ref or commit")
    out = _git(root, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}")
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
    out = _git(root, "rev-list", "--topo-order", sha)
    if out.returncode != 0:
        raise RefError(f"git rev-list {sha} failed in {root}: {out.stderr.strip()}")
    return out.stdout.split()[1:]


def head(root: Path = ROOT) -> str | None:
    return try_resolve("HEAD", root)
