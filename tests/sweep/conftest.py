"""A committed snapshot of this checkout (sweeps build commits), and helpers to run kabe in it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kabe.paths import ROOT


def snapshot(dest: Path) -> Path:
    """The working tree as it is (tracked and untracked, not ignored), committed in a fresh repository:
    the code under test, not whatever HEAD happens to be."""
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, capture_output=True,
                           check=True).stdout.decode().split("\0")
    for rel in filter(None, files):
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    git = ["git", "-c", "user.name=kabe test", "-c", "user.email=test@kabe.invalid"]
    subprocess.run(git + ["init", "-q"], cwd=dest, check=True)
    subprocess.run(git + ["add", "-A"], cwd=dest, check=True)
    subprocess.run(git + ["commit", "-qm", "snapshot"], cwd=dest, check=True)
    return dest


def kabe_env(repo: Path, **extra: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(repo), "COLUMNS": "200", **extra}


def kabe_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "kabe.cli", *args]


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    return snapshot(tmp_path_factory.mktemp("sweep") / "repo")
