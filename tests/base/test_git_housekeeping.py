"""The store's git calls never start git's automatic housekeeping (gc --auto / maintenance --auto).

An archive pull into a checkout that has crossed gc.auto's thresholds would otherwise repack the
whole repository inside the pull. Real git throughout: the control shows that the same fetch, run
as plain git, does repack, so the test can fail."""

from __future__ import annotations

import subprocess
from pathlib import Path

from kabe.base import git as kabe_git


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@localhost", *args], cwd=cwd, check=True,
                   capture_output=True)


def _packs(repo: Path) -> int:
    return len(list((repo / ".git" / "objects" / "pack").glob("*.pack")))


def _repo_over_the_pack_limit(tmp_path: Path, name: str) -> tuple[Path, Path]:
    """(a remote with branches b1..b4, a clone of b1..b3 holding three packs and gc.autoPackLimit 2)."""
    remote = tmp_path / f"{name}-remote"
    remote.mkdir()
    _git(remote, "init", "-q")
    for i in range(1, 5):
        (remote / f"f{i}").write_text(f"{i}\n")
        _git(remote, "add", f"f{i}")
        _git(remote, "commit", "-qm", str(i))
        _git(remote, "branch", f"b{i}")
    local = tmp_path / name
    local.mkdir()
    _git(local, "init", "-q")
    for i in range(1, 4):  # each fetch unpacks its few objects loose; each repack -d makes one more pack
        _git(local, "-c", "gc.auto=0", "fetch", "-q", str(remote), f"b{i}:refs/t/{i}")
        _git(local, "repack", "-q", "-d")
    _git(local, "config", "gc.autoPackLimit", "2")
    _git(local, "config", "gc.autoDetach", "false")  # housekeeping in the foreground, so it is seen at once
    assert _packs(local) == 3
    return remote, local


def test_plain_git_repacks_a_repository_over_its_pack_limit(tmp_path):
    remote, local = _repo_over_the_pack_limit(tmp_path, "control")
    _git(local, "fetch", "-q", str(remote), "b4:refs/t/4")
    assert _packs(local) == 1  # git gc --auto ran inside the fetch


def test_the_stores_fetch_leaves_housekeeping_to_the_user(tmp_path):
    remote, local = _repo_over_the_pack_limit(tmp_path, "store")
    kabe_git.run(local, "fetch", "-q", str(remote), "b4:refs/t/4")
    assert _packs(local) == 3  # nothing repacked: the pull did only its own work
