"""A committed snapshot of this checkout (sweeps build commits), and helpers to run kabe in it."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
import repo_copy  # tests/repo_copy.py


def snapshot(dest: Path) -> Path:
    """The working tree as it is, committed in a fresh repository: the code under test, not whatever
    HEAD happens to be (a sweep builds a commit)."""
    return repo_copy.make(dest)


def kabe_env(repo: Path, **extra: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(repo), "COLUMNS": "200", **extra}


def kabe_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "kabe.cli", *args]


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    return snapshot(tmp_path_factory.mktemp("sweep") / "repo")
