"""The archive ref checked from its own history (issue 36, item 3) and a pull's bounds (item 8), against
real bare remotes: a commit on the ref that removes or changes a unit is refused and named, the pull
reads the last commit before it; the root commit can be pinned; a push onto a tampered tip is refused;
a pre-empted unit's honest build is shared beside it and taken by the pull; 20,000 unsigned units are
refused from the listing, fast, with nothing staged; two pulls at once in one clone both finish; a
promoted unit leaves no folder behind in .unverified/."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from kabe.base import git as kabe_git
from kabe.store import signing, store, trusted_settings

from test_archive_trust import REF, git, material_and_key, world  # noqa: F401 (world: the fixture)


def _unit_files(sha: str, lut: int = 232) -> dict[str, bytes]:
    text, key = material_and_key()
    return {"metrics.json": f'{{"commit": "{sha}", "lut": {lut}, "cache_key": "{key}"}}\n'.encode(),
            "cache_key.json": text.encode()}


def _signed(world, sha: str, key: Path, lut: int = 232, kind: str = "open") -> dict[str, bytes]:
    files = _unit_files(sha, lut)
    unit = f"{sha}/stage2/{kind}"
    hashes = {n: signing.sha256_bytes(d) for n, d in files.items()}
    return {f"{unit}/{n}": d for n, d in {**files, signing.SIGNATURE_FILE: signing.sign_unit(unit, hashes, key)}.items()}


def _push_tree(world, files: dict[str, bytes], parent: str | None = None) -> str:
    dev = world["dev"]
    commit = kabe_git.write_commit(dev, parent, files, "archive")
    git(dev, "push", "-q", "origin", f"{commit}:{REF}")
    return commit


def test_a_commit_that_removes_a_unit_is_refused_and_the_last_honest_one_read(world):
    sha = world["sha"]
    honest = _push_tree(world, _signed(world, sha, world["ci"]))
    dev = world["dev"]
    empty = git(dev, "hash-object", "-t", "tree", "-w", "/dev/null")
    emptied = git(dev, "commit-tree", empty, "-p", honest, "-m", "tidy")
    git(dev, "push", "-q", "origin", f"{emptied}:{REF}")  # a fast-forward: git accepts it
    report = store.pull("origin", world["puller"], world["puller"] / "reports")
    lines = report.lines()
    print("\n".join(lines))
    assert lines[0].startswith(f"kabe archive pull origin: the archive {REF}'s tip {emptied[:12]} is refused: 1 commit(s) "
                               f"on it remove or change units already there (append-only; the oldest, {emptied[:12]}, "
                               f"removes '{sha}/stage2/open/cache_key.json', and 2 more path(s)); reading {honest[:12]}")
    assert report.added == [f"{sha}/stage2/open"]
    # a changed file is refused the same way, and a push onto such a tip is refused too
    changed = kabe_git.write_commit(dev, honest, {f"{sha}/stage2/open/metrics.json": b"{}"}, "edit")
    git(dev, "push", "-q", "--force", "origin", f"{changed}:{REF}")
    assert kabe_git.history_violations(dev, changed) == [(changed, "M", f"{sha}/stage2/open/metrics.json")]
    fresh = world["puller"].parent / "fresh"
    git(fresh.parent, "clone", "-q", str(world["remote"]), str(fresh))
    with pytest.raises(store.ArchiveTampered, match="not pushed: the archive .* is refused"):
        store.push("origin", fresh, fresh / "reports")


def test_the_root_commit_can_be_pinned(world):
    honest = _push_tree(world, _signed(world, world["sha"], world["ci"]))
    with trusted_settings.pinned(trusted_settings.Trusted("test", {"archive_root": honest})):
        assert store.pull("origin", world["puller"], world["puller"] / "reports").added
    fresh = kabe_git.write_commit(world["dev"], None, _signed(world, world["sha"], world["ci"], lut=1), "restart")
    git(world["dev"], "push", "-q", "--force", "origin", f"{fresh}:{REF}")
    clone = world["puller"].parent / "fresh-clone"
    git(clone.parent, "clone", "-q", str(world["remote"]), str(clone))
    with trusted_settings.pinned(trusted_settings.Trusted("test", {"archive_root": honest})), \
            pytest.raises(store.ArchiveTampered, match=f"does not start at the root commit .*pins \\({honest[:12]}\\)"):
        store.pull("origin", clone, clone / "reports")


def test_a_pre_empted_unit_is_shared_beside_and_the_pull_takes_it(world, monkeypatch):
    sha = world["sha"]
    junk = {f"{sha}/stage2/open/metrics.json": b'{"junk": 1}\n'}
    _push_tree(world, junk)
    ci = world["puller"].parent / "ci-runner"
    git(ci.parent, "clone", "-q", str(world["remote"]), str(ci))
    unit = ci / "reports" / sha / "stage2" / "open"
    unit.mkdir(parents=True)
    for name, data in _unit_files(sha).items():
        (unit / name).write_bytes(data)
    monkeypatch.setenv("KABE_SIGNING_KEY", str(world["ci"]))
    report = store.push("origin", ci, ci / "reports")
    assert len(report.beside) == 1 and report.beside[0][0] == f"{sha}/stage2/open"
    alt = report.beside[0][1]
    assert alt.startswith(f"{sha}/stage2/open~") and "is not this build" in "\n".join(report.lines())
    assert store.push("origin", ci, ci / "reports").beside == []  # the same build again: already beside it
    monkeypatch.delenv("KABE_SIGNING_KEY")
    pulled = store.pull("origin", world["puller"], world["puller"] / "reports")
    print("\n".join(pulled.lines()))
    assert pulled.added == [f"{sha}/stage2/open"]
    assert pulled.unverified[0][0] == f"{sha}/stage2/open" and pulled.unverified[0][1] == "unsigned"
    assert pulled.beside == [(f"{sha}/stage2/open", alt, "unsigned")]
    placed = world["puller"] / "reports" / sha / "stage2" / "open"
    assert signing.verify_dir(placed, f"{sha}/stage2/open", world["puller"] / ".kabe" / "allowed_signers").ok
    assert not (world["puller"] / "reports" / store.UNVERIFIED / alt).exists()


def test_twenty_thousand_unsigned_units_are_refused_from_the_listing_fast(world):
    """The red team's push: 20,000 unsigned units in ~1 MB. Before, each pull took 32 s and 314 MB."""
    dev = world["dev"]
    metrics = b'{"lut": 1}\n'
    files = {f"{n:040x}/stage2/open/metrics.json": metrics for n in range(20_000)}
    _push_tree(world, files)
    git(world["puller"], "fetch", "-q", "origin", f"{REF}:refs/kabe/fetched/origin")  # the transfer, apart
    t = time.monotonic()
    with pytest.raises(store.ArchiveTampered, match="holds 20000 units this clone has not got, more than one pull "
                                                     "takes \\(5000\\); nothing was pulled \\(20000 of them unsigned\\)"):
        store.pull("origin", world["puller"], world["puller"] / "reports")
    seconds = time.monotonic() - t
    print(f"20,000 unsigned units: refused in {seconds:.2f} s")
    assert seconds < 2.0
    assert not (world["puller"] / "reports" / store.UNVERIFIED).exists()
    assert kabe_git.ls_tree(dev, git(dev, "rev-parse", "HEAD")) is not None


def test_unsigned_units_past_their_cap_are_not_staged_and_signed_ones_still_pulled(world):
    sha = world["sha"]
    files = {f"{n:040x}/stage2/open/metrics.json": b"{}\n" for n in range(store.MAX_NEW_UNSIGNED + 1)}
    _push_tree(world, {**files, **_signed(world, sha, world["ci"])})
    report = store.pull("origin", world["puller"], world["puller"] / "reports")
    assert report.added == [f"{sha}/stage2/open"] and report.unverified == []
    assert report.refused == [(f"{store.MAX_NEW_UNSIGNED + 1} unsigned units",
                               f"more than a pull stages ({store.MAX_NEW_UNSIGNED}); none of them was staged (they "
                               f"could never be trusted: the signed units were pulled as usual)")]
    assert not (world["puller"] / "reports" / store.UNVERIFIED).exists()


def test_two_pulls_at_once_in_one_clone_both_finish(world):
    sha = world["sha"]
    _push_tree(world, {**_signed(world, sha, world["ci"]), **_signed(world, sha, world["ci"], kind="sim")})
    results, errors = [], []

    def pull():
        try:
            results.append(store.pull("origin", world["puller"], world["puller"] / "reports"))
        except Exception as e:  # noqa: BLE001 - what the test looks for
            errors.append(e)

    threads = [threading.Thread(target=pull) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert sorted(u for r in results for u in r.added) == [f"{sha}/stage2/open", f"{sha}/stage2/sim"]
    assert not (world["puller"] / "reports" / store.UNVERIFIED).exists()  # no staging copy, no empty folder left
