"""The shared archive against a real bare git remote: round trip, a ref that never mixes with the
code, append-only pushes, an idempotent pull that keeps differing local files, retries that lose
nothing when pushes race. Archives are written directly here (the build is tested elsewhere)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from kabe import cli
from kabe.base import git as kabe_git
from kabe.store import store, store_size
from kabe.base.git import GitError

from .conftest import clone, env_without_ci, git, monorepo, write_archive

REF = "refs/kabe/archive"
A, B, C = "a" * 40, "b" * 40, "c" * 40
BIG = ("Yosys line that repeats\n" * 8000).encode()  # ~190 kB: over the compression threshold


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture()
def ci_key(tmp_path, monkeypatch) -> Path:
    """A real ed25519 key as CI's secret ($KABE_SIGNING_KEY), and its allowed-signers line."""
    key = tmp_path / "keys" / "ci"
    key.parent.mkdir()
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "ci", "-f", str(key)], check=True)
    monkeypatch.setenv("KABE_SIGNING_KEY", str(key))
    return key


def trust(clone_root: Path, key: Path) -> None:
    """The project's allowed-signers file (.kabe/allowed_signers) names CI's key."""
    (clone_root / ".kabe").mkdir(exist_ok=True)
    (clone_root / ".kabe" / "allowed_signers").write_text(f'ci@kabe namespaces="kabe-archive" {key.with_suffix(".pub").read_text()}')


def real_commits(remote: Path, where: Path, n: int = 2) -> list[str]:
    """n code commits pushed to the remote's main: a pulled unit must name a commit the clone has."""
    work = clone(remote, where)
    shas = []
    for i in range(n):
        (work / "README").write_text(f"code {i}\n")
        git(work, "commit", "-qam", f"code {i}")
        shas.append(git(work, "rev-parse", "HEAD"))
    git(work, "push", "-q", "origin", "main")
    return shas


def test_round_trip_is_byte_identical_and_large_files_are_compressed(remote, tmp_path, ci_key):
    A, B = real_commits(remote, tmp_path / "dev")
    a = clone(remote, tmp_path / "a")
    write_archive(a / "reports", A, extra={"yosys.log": BIG, "already.gz": b"\x1f\x8bnot really", "top.bit": b"BIT" * 10})
    write_archive(a / "reports", B, design="stage4", lut=3600)
    report = store.push("origin", a, a / "reports", ref=REF)
    assert sorted(report.added) == sorted([f"{A}/stage2/open", f"{B}/stage4/open"]) and report.commit

    stored = kabe_git.ls_tree(a, report.commit)
    assert f"{A}/stage2/open/yosys.log.gz" in stored and stored[f"{A}/stage2/open/yosys.log.gz"][1] < len(BIG) / 10
    assert f"{A}/stage2/open/already.gz.gz" in stored  # a .gz raw file is not mistaken for kabe's compression
    assert not any(p.endswith((".bit", ".bit.gz")) for p in stored)  # bitstreams only when asked

    assert f"{A}/stage2/open/kabe-unit.sig" in stored  # signed by CI's key, over every file, the bitstream too

    b = clone(remote, tmp_path / "b")
    trust(b, ci_key)
    pulled = store.pull("origin", b, b / "reports", ref=REF)
    assert sorted(pulled.added) == sorted(report.added) and not pulled.unverified
    want = {k: v for k, v in _files(a / "reports").items() if not k.endswith(".bit")}
    got = _files(b / "reports")
    assert {k: v for k, v in got.items() if not k.endswith("kabe-unit.sig")} == want
    assert sorted(k for k in got if k.endswith("kabe-unit.sig")) == sorted([f"{A}/stage2/open/kabe-unit.sig",
                                                                             f"{B}/stage4/open/kabe-unit.sig"])

    # Bitstreams on request: the push completes the archive, a plain pull still leaves them out.
    again = store.push("origin", a, a / "reports", ref=REF, bitstreams=True)
    assert again.completed == [f"{A}/stage2/open"] and again.added == []
    assert store.pull("origin", b, b / "reports", ref=REF).same == sorted(report.added)
    assert not (b / "reports" / A / "stage2" / "open" / "top.bit").exists()
    assert store.pull("origin", b, b / "reports", ref=REF, bitstreams=True).completed == [f"{A}/stage2/open"]
    assert (b / "reports" / A / "stage2" / "open" / "top.bit").read_bytes() == b"BIT" * 10


def test_the_archive_ref_never_mixes_with_the_code_history(remote, tmp_path):
    a = clone(remote, tmp_path / "a")
    write_archive(a / "reports", A)
    store.push("origin", a, a / "reports", ref=REF)
    roots = git(remote, "rev-list", "--max-parents=0", REF).split()
    assert len(roots) == 1 and roots[0] != git(remote, "rev-list", "--max-parents=0", "main")
    with pytest.raises(subprocess.CalledProcessError):  # no common ancestor with the code
        git(remote, "merge-base", "main", REF)
    fresh = clone(remote, tmp_path / "fresh")
    assert "refs/kabe" not in git(fresh, "show-ref")  # a plain clone does not download the archive
    assert git(fresh, "status", "--porcelain") == ""


def test_pull_is_idempotent_and_keeps_a_local_archive_that_differs(remote, tmp_path, ci_key):
    A, B = real_commits(remote, tmp_path / "dev")
    a = clone(remote, tmp_path / "a")
    write_archive(a / "reports", A, extra={"yosys.log": BIG})
    write_archive(a / "reports", B)
    store.push("origin", a, a / "reports", ref=REF)
    b = clone(remote, tmp_path / "b")
    trust(b, ci_key)
    assert len(store.pull("origin", b, b / "reports", ref=REF).added) == 2
    second = store.pull("origin", b, b / "reports", ref=REF)
    assert (second.added, second.completed, second.kept_local, len(second.same)) == ([], [], [], 2)

    local = b / "reports" / A / "stage2" / "open" / "yosys.log"
    local.write_bytes(b"my own rebuild's log\n")
    third = store.pull("origin", b, b / "reports", ref=REF)
    assert third.kept_local == [(f"{A}/stage2/open", ["yosys.log"])]
    assert local.read_bytes() == b"my own rebuild's log\n"
    assert "kept local reports/" + f"{A}/stage2/open" in "\n".join(third.lines())


def test_push_is_append_only(remote, tmp_path):
    a, b = clone(remote, tmp_path / "a"), clone(remote, tmp_path / "b")
    write_archive(a / "reports", A, lut=232)
    write_archive(b / "reports", A, lut=999)  # another build of the same commit/design/flow
    store.push("origin", a, a / "reports", ref=REF)
    report = store.push("origin", b, b / "reports", ref=REF)
    assert report.differs == [f"{A}/stage2/open"] and report.commit is None
    assert "append-only" in "\n".join(report.lines())
    shown = git(remote, "show", f"{REF}:{A}/stage2/open/metrics.json")
    assert '"lut": 232' in shown


def test_a_dirty_tree_is_never_pushed(remote, tmp_path):
    a = clone(remote, tmp_path / "a")
    write_archive(a / "reports", A + "-dirty")
    report = store.push("origin", a, a / "reports", ref=REF)
    assert report.dirty == [f"{A}-dirty/stage2/open"] and report.commit is None
    assert store.fetch("origin", a, REF) is None  # nothing was pushed, not even an empty archive


def test_a_rejected_push_fetches_the_new_tip_and_retries(remote, tmp_path, monkeypatch):
    """Deterministic race: another clone pushes between this push's fetch and its own push."""
    a, b = clone(remote, tmp_path / "a"), clone(remote, tmp_path / "b")
    write_archive(a / "reports", A)
    write_archive(b / "reports", B)
    real_write = kabe_git.write_commit
    calls = []

    def write_then_lose_the_race(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            store.push("origin", b, b / "reports", ref=REF)  # lands first
        return real_write(*args, **kwargs)

    monkeypatch.setattr(kabe_git, "write_commit", write_then_lose_the_race)
    report = store.push("origin", a, a / "reports", ref=REF)
    assert report.tries == 2 and report.added == [f"{A}/stage2/open"]
    tree = kabe_git.ls_tree(remote, REF)
    assert f"{A}/stage2/open/metrics.json" in tree and f"{B}/stage2/open/metrics.json" in tree
    assert len(git(remote, "rev-list", REF).split()) == 2  # linear: B's commit, then A's on top


_PUSHER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from kabe.store import store
    root, start = Path(sys.argv[1]), float(sys.argv[2])
    time.sleep(max(0.0, start - time.time()))
    r = store.push("origin", root, root / "reports", ref="refs/kabe/archive")
    print(r.tries, len(r.added))
""")


def test_pushes_at_the_same_moment_lose_nothing(remote, tmp_path):
    shas = [c * 40 for c in "1234"]
    clones = []
    for i, sha in enumerate(shas):
        c = clone(remote, tmp_path / f"runner{i}")
        write_archive(c / "reports", sha, extra={"yosys.log": BIG + sha.encode()})
        clones.append(c)
    start = time.time() + 3.0  # every runner waits for the same instant
    procs = [subprocess.Popen([sys.executable, "-c", _PUSHER, str(c), str(start)], stdout=subprocess.PIPE, text=True,
                              env=env_without_ci(), cwd=c) for c in clones]
    results = [p.communicate(timeout=120)[0].split() for p in procs]
    assert all(p.returncode == 0 for p in procs), results
    assert all(r[1] == "1" for r in results)  # each pushed its own build
    print("tries per concurrent push:", [int(r[0]) for r in results])
    tree = kabe_git.ls_tree(remote, REF)
    for sha in shas:
        assert f"{sha}/stage2/open/metrics.json" in tree and f"{sha}/stage2/open/yosys.log.gz" in tree
    assert len(git(remote, "rev-list", REF).split()) == 4  # one commit per runner, none lost


def test_du_reports_raw_stored_and_disk_sizes(remote, tmp_path):
    a = clone(remote, tmp_path / "a")
    write_archive(a / "reports", A, extra={"yosys.log": BIG})
    write_archive(a / "reports", B)
    store.push("origin", a, a / "reports", ref=REF)
    rows, total = store_size.measure(a, store.fetch("origin", a, REF))
    by = {r.commit: r for r in rows}
    assert by[A].raw > len(BIG) > 10 * by[A].stored and by[A].builds == 1 and by[A].files == 4  # cache_key.json too
    assert by[B].raw == by[B].stored and total > 0
    text = store_size.render("origin", REF, rows, total)
    assert f"| {A[:12]} | 1 | 4 |" in text and "per commit (mean)" in text


def test_an_unreachable_remote_is_one_line_and_exit_2(tmp_path, capsys):
    repo = tmp_path / "r"
    git(tmp_path, "init", "-q", str(repo))
    with pytest.raises(GitError, match="cannot fetch the archive"):
        store.pull(str(tmp_path / "no-such-remote.git"), repo, repo / "reports", ref=REF)
    assert cli.main(["archive", "pull", str(tmp_path / "no-such-remote.git")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kabe archive: cannot fetch the archive") and "Traceback" not in err


def test_a_push_the_remote_declines_is_not_retried_and_says_why(remote, tmp_path):
    hook = remote / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'archive pushes need the release role' >&2\nexit 1\n")
    hook.chmod(0o755)
    a = clone(remote, tmp_path / "a")
    write_archive(a / "reports", A)
    calls = []
    real_fetch = store.fetch
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(store, "fetch", lambda *a, **k: calls.append(1) or real_fetch(*a, **k))
        with pytest.raises(GitError) as e:
            store.push("origin", a, a / "reports", ref=REF)
    assert len(calls) == 1  # one try: a hook that declines will decline again
    assert "pre-receive hook declined" in str(e.value) and "archive pushes need the release role" in str(e.value)


def test_two_projects_in_one_repository_keep_their_archives_apart(remote, tmp_path, ci_key):
    """A monorepo with two kabe projects (fpga/ and hw/asic/): each pushes to, fetches into and
    remembers the tip of its own refs (refs/kabe/sub/<folder>/...), so the same commit and design in
    both are two builds, neither pull sees the other's, and neither takes the other's tip for a
    rewrite. A project at the top keeps today's names."""
    top, fpga = monorepo(remote, tmp_path / "a")
    asic = top / "hw" / "asic"
    asic.mkdir(parents=True)
    (asic / "pyproject.toml").write_text("[tool.kabe]\ndefault_board = 'pynq-z1'\n")
    git(top, "add", "-A")
    git(top, "commit", "-qm", "a second project")
    git(top, "push", "-q", "origin", "main")
    head = git(top, "rev-parse", "HEAD")
    assert store.project_refs(top) == "refs/kabe/" and store.archive_ref({}, root=top) == REF
    assert store.seen_ref("origin", top) == "refs/kabe/seen/origin"
    assert store.project_refs(asic) == "refs/kabe/sub/hw+asic/"
    write_archive(fpga / "reports", head, lut=232)
    write_archive(asic / "reports", head, lut=999)
    pushed = [store.push("origin", p, p / "reports") for p in (fpga, asic)]
    assert [r.ref for r in pushed] == ["refs/kabe/sub/fpga/archive", "refs/kabe/sub/hw+asic/archive"]
    assert [r.added for r in pushed] == [[f"{head}/stage2/open"]] * 2  # not "already there": two archives
    assert git(remote, "for-each-ref", "--format=%(refname)", "refs/kabe").splitlines() == [
        "refs/kabe/sub/fpga/archive", "refs/kabe/sub/hw+asic/archive"]

    b = clone(remote, tmp_path / "b")
    for project, lut in (("fpga", 232), ("hw/asic", 999)):
        trust(b / project, ci_key)
        pulled = store.pull("origin", b / project, b / project / "reports")
        assert pulled.added == [f"{head}/stage2/open"] and not pulled.unverified, pulled.lines()
        assert f'"lut": {lut}' in (b / project / "reports" / head / "stage2" / "open" / "metrics.json").read_text()
    for project in ("fpga", "hw/asic"):  # again: each tip is the one it saw (no "rewritten" from the other's)
        assert store.pull("origin", b / project, b / project / "reports").same == [f"{head}/stage2/open"]
    assert "refs/kabe/seen/origin" not in git(b, "for-each-ref", "--format=%(refname)", "refs/kabe").splitlines()
