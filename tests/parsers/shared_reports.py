"""Where the real reports live: `../shared/fixtures/` beside the repository checkout (never
copied into it). KABE_SHARED_DIR points elsewhere (a git worktree's parent is not the
checkout's). Absent, the tests that need them skip with a reason tests/skip_allowlist.txt
allows ("shared fixtures not available")."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("KABE_SHARED_DIR") or REPO.parent / "shared")


def shared_dir(name: str) -> Path:
    d = SHARED / "fixtures" / name
    if not d.is_dir():
        pytest.skip(f"shared fixtures not available: {d} does not exist")
    return d


def shared_file(folder: str, name: str) -> Path:
    p = shared_dir(folder) / name
    if not p.is_file():
        pytest.skip(f"shared fixtures not available: {p} does not exist")
    return p


def names(folder: str, pattern: str = "*") -> list[str]:
    """File names in a shared folder, for parametrizing at collection time ([] when absent: the
    test that needs them then checks the folder itself and skips)."""
    d = SHARED / "fixtures" / folder
    return sorted(p.name for p in d.glob(pattern) if p.is_file()) if d.is_dir() else []


def or_skip(params: list, folder: str, arity: int = 1) -> list:
    """Parameters for a test over a shared folder's files; when there are none (the folder is absent
    beside this checkout), one parameter set that skips with the allow-listed reason, instead of
    pytest's "got empty parameter set" (which says nothing about why)."""
    if params:
        return params
    d = SHARED / "fixtures" / folder
    why = f"{d} does not exist" if not d.is_dir() else f"{d} holds no file this test reads"
    return [pytest.param(*(None,) * arity, id="absent",
                         marks=pytest.mark.skip(reason=f"shared fixtures not available: {why}"))]
