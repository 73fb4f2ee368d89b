"""A remote cannot fill this disk through the archive fetch (kabe.store.git_fetch): a ref holding a
blob past the fetch's cap is stopped while it arrives, its partial pack removed, nothing kept, one
clear error; an ordinary archive fetches as before. Real git remotes; the cap is lowered so the test
needs megabytes, not gigabytes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kabe.store import git_fetch, store

from .conftest import clone, git

pytestmark = pytest.mark.e2e  # end to end: real tools, minutes (the fast tier leaves it out: -m 'not e2e')

REF = "refs/kabe/archive"


def _push_blob_ref(remote: Path, tmp_path: Path, size: int) -> None:
    """Someone pushes, to the archive ref, a commit holding one incompressible blob of `size` bytes."""
    work = tmp_path / "pusher"
    if not work.exists():
        clone(remote, work)
        git(work, "checkout", "-q", "--orphan", "junk")
    (work / "blob").write_bytes(os.urandom(size))
    git(work, "add", "blob")
    git(work, "commit", "-qm", "a large blob")
    git(work, "push", "-q", "origin", f"HEAD:{REF}")


def _pack_files(root: Path) -> set[str]:
    return {p.name for p in (root / ".git" / "objects" / "pack").glob("*")}


@pytest.mark.parametrize("seen", ["while it arrives", "after it arrived"])
def test_a_fetch_past_the_cap_is_stopped_and_leaves_nothing(remote, tmp_path, monkeypatch, seen):
    here = clone(remote, tmp_path / "here")  # before the push: a local clone would copy every object
    _push_blob_ref(remote, tmp_path, 1 * 2**20)
    first = store.fetch("origin", here, REF)  # an archive this clone already has
    _push_blob_ref(remote, tmp_path, 40 * 2**20)
    packs = _pack_files(here)
    tracking = git(here, "for-each-ref", "--format=%(refname) %(objectname)", "refs/kabe")
    # the project's [tool.kabe] archive_fetch_max_mb, as kabe.project.config reads it, lowered to 4 MB
    monkeypatch.setattr(store.config, "load", lambda *a, **k: {"archive_fetch_max_mb": 4})
    if seen == "after it arrived":  # a local remote can be faster than the watch: the pack it left is judged
        real = git_fetch._new_bytes
        monkeypatch.setattr(git_fetch, "_new_bytes", lambda d, b, prefix: 0 if prefix == "tmp_pack_" else real(d, b, prefix))
    with pytest.raises(git_fetch.FetchTooLarge) as e:
        store.fetch("origin", here, REF)
    msg = str(e.value)
    assert msg.startswith("the archive fetch was stopped: it had received ") and "more than a fetch may store (4.0 MB)" in msg
    assert "raise [tool.kabe] archive_fetch_max_mb (now 4 MB)" in msg
    assert _pack_files(here) == packs  # no partial pack, no new pack
    # the tracking ref and the last tip seen are as before: the next pull starts from the same place
    assert git(here, "for-each-ref", "--format=%(refname) %(objectname)", "refs/kabe") == tracking
    assert first in tracking
    git(here, "fsck", "--connectivity-only", "--no-dangling")  # nothing points at a removed object


def test_a_fetch_under_the_cap_is_as_before(remote, tmp_path):
    here = clone(remote, tmp_path / "here")
    _push_blob_ref(remote, tmp_path, 2 * 2**20)
    tip = store.fetch("origin", here, REF)
    assert tip and git(here, "cat-file", "-t", tip) == "commit"
    assert store.fetch_max_bytes({}) == 8 * 2**30  # without archive_fetch_max_mb: 8 GiB
    assert not any(n.startswith("tmp_") for n in _pack_files(here))


def test_a_disk_that_falls_under_the_floor_stops_the_fetch(remote, tmp_path, monkeypatch):
    here = clone(remote, tmp_path / "here")  # before the push: a local clone would copy every object
    _push_blob_ref(remote, tmp_path, 40 * 2**20)
    monkeypatch.setattr(git_fetch.disk_space, "free_bytes", lambda path: 100 * 2**20)  # stand-in: a nearly full disk
    monkeypatch.setenv("KABE_MIN_FREE_MB", "256")
    with pytest.raises(git_fetch.FetchTooLarge, match="fell under 256.0 MB free"):
        store.fetch("origin", here, REF)
    assert git(here, "for-each-ref", "refs/kabe") == ""
