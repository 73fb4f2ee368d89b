"""What `kabe archive pull` believes, against a real bare remote and real ssh-keygen signatures: a unit
lands in reports/ only signed by an allowed key, naming a commit this clone has, with its cache key
its own cache_key.json's; everything else is kept apart in reports/.unverified/ and named. Plus the
path rules and the streamed, capped decompression."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import subprocess
import zlib
from pathlib import Path

import pytest

from kabe import flows
from kabe.store import archive_paths as ap
from kabe.store import signing, store

REF = "refs/kabe/archive"
ID = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@kabe", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@kabe"}


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True,
                          env={**os.environ, **ID}).stdout.strip()


def keypair(where: Path, name: str) -> Path:
    key = where / name
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(key)], check=True)
    return key


@pytest.fixture()
def world(tmp_path, monkeypatch):
    monkeypatch.delenv("KABE_SIGNING_KEY", raising=False)
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    dev = tmp_path / "dev"
    git(tmp_path, "init", "-q", "-b", "main", str(dev))
    (dev / "README").write_text("code\n")
    git(dev, "add", "README")
    git(dev, "commit", "-qm", "code")
    git(dev, "remote", "add", "origin", str(remote))
    git(dev, "push", "-q", "origin", "main")
    ci, other = keypair(tmp_path, "ci"), keypair(tmp_path, "other")
    puller = tmp_path / "puller"
    git(tmp_path, "clone", "-q", str(remote), str(puller))
    (puller / ".kabe").mkdir()
    (puller / ".kabe" / "allowed_signers").write_text(f'ci@kabe namespaces="kabe-archive" {ci.with_suffix(".pub").read_text()}')
    return {"remote": remote, "dev": dev, "ci": ci, "other": other, "puller": puller, "sha": git(dev, "rev-parse", "HEAD")}


def material_and_key(n: int = 1) -> tuple[str, str]:
    material = {"format": 1, "flow": "open", "files": {"rtl/top.v": "0" * 64}, "n": n}
    blob = json.dumps(material, sort_keys=True, separators=(",", ":"))
    return json.dumps(material, indent=2) + "\n", hashlib.sha256(blob.encode()).hexdigest()


def unit(reports: Path, sha: str, design: str = "stage2", key_of: int = 1, claim: int = 1) -> Path:
    d = reports / sha / design / "open"
    d.mkdir(parents=True)
    text, _ = material_and_key(key_of)
    (d / "cache_key.json").write_text(text)
    (d / "metrics.json").write_text(json.dumps({"commit": sha, "cache_key": material_and_key(claim)[1]}) + "\n")
    (d / "yosys.log").write_bytes(b"Yosys says\n" * 20000)  # compressed in the archive
    return d


def push_from(world, key: Path | None, monkeypatch, build) -> None:
    pusher = world["remote"].parent / f"pusher-{len(list(world['remote'].parent.glob('pusher-*')))}"
    git(world["remote"].parent, "clone", "-q", str(world["remote"]), str(pusher))
    build(pusher / "reports")
    if key:
        monkeypatch.setenv("KABE_SIGNING_KEY", str(key))
    else:
        monkeypatch.delenv("KABE_SIGNING_KEY", raising=False)
    report = store.push("origin", pusher, pusher / "reports", ref=REF)
    assert report.added and report.signed_by == (str(key) if key else None)


def pull(world):
    return store.pull("origin", world["puller"], world["puller"] / "reports", ref=REF)


def test_only_a_unit_signed_by_an_allowed_key_naming_a_real_commit_with_its_own_key_lands(world, monkeypatch):
    sha, ghost = world["sha"], "9" * 40
    push_from(world, world["ci"], monkeypatch, lambda r: unit(r, sha))
    push_from(world, None, monkeypatch, lambda r: unit(r, sha, "stage3"))
    push_from(world, world["other"], monkeypatch, lambda r: unit(r, sha, "stage4"))
    push_from(world, world["ci"], monkeypatch, lambda r: unit(r, ghost))
    push_from(world, world["ci"], monkeypatch, lambda r: unit(r, sha, "stage5", key_of=1, claim=2))
    report = pull(world)
    reports = world["puller"] / "reports"
    text = "\n".join(report.lines())
    print(text)
    assert report.added == [f"{sha}/stage2/open"]
    assert (reports / sha / "stage2" / "open" / "metrics.json").is_file()
    assert signing.verify_dir(reports / sha / "stage2" / "open", f"{sha}/stage2/open",
                              world["puller"] / ".kabe" / "allowed_signers").ok
    why = dict(report.unverified)
    assert why[f"{sha}/stage3/open"] == "unsigned"
    assert why[f"{sha}/stage4/open"].startswith("signed by a key not in ")
    assert why[f"{ghost}/stage2/open"].startswith(f"it names commit {ghost}, which is not in this repository")
    assert why[f"{sha}/stage5/open"] == "metrics.json's cache_key is not the hash of its cache_key.json"
    for u in why:
        assert not (reports / u).exists() and (reports / ".unverified" / u / "metrics.json").is_file()
        assert f"unverified {u}: " in text
    assert store.local_units(reports)[0].keys() == {f"{sha}/stage2/open"}  # nothing else is a build here


def test_a_verified_pull_completes_a_unit_built_here_with_its_signature(world, monkeypatch):
    sha = world["sha"]
    push_from(world, world["ci"], monkeypatch, lambda r: unit(r, sha))
    unit(world["puller"] / "reports", sha)  # the same build, made here (no signature)
    report = pull(world)
    assert report.completed == [f"{sha}/stage2/open"]
    assert (world["puller"] / "reports" / sha / "stage2" / "open" / signing.SIGNATURE_FILE).is_file()
    assert not (world["puller"] / "reports" / ".unverified" / sha / "stage2" / "open").exists()
    assert pull(world).same == [f"{sha}/stage2/open"]


def test_kinds_are_the_flow_registrys():
    assert set(ap.FLOW_KINDS) == set(flows.FLOWS)


@pytest.mark.parametrize("path,mode,why", [
    ("a" * 40 + "/stage2/open/metrics.json", "100644", None),
    ("a" * 64 + "/stage2/sweep-open/0a1b/raw/yosys.log", "100644", None),
    ("a" * 40 + "/stage2/sim/result.json", "100755", None),
    ("a" * 40 + "-dirty/stage2/open/metrics.json", "100644", "dirty tree"),
    ("A" * 40 + "/stage2/open/metrics.json", "100644", "not a commit id"),
    ("a" * 40 + "/../open/metrics.json", "100644", "'..' component"),
    ("a" * 40 + "/stage2/./metrics.json", "100644", "'.' component"),
    ("a" * 40 + "/stage2/open//metrics.json", "100644", "empty component"),
    ("a" * 40 + "/stage2/open/.hidden", "100644", "not starting with a dot"),
    ("a" * 40 + "/stage2/open/-rf", "100644", "the name '-rf'"),
    ("a" * 40 + "/stage2/bogus/metrics.json", "100644", "not an archive kind"),
    ("a" * 40 + "/stage2/sweep-bogus/x/metrics.json", "100644", "not an archive kind"),
    ("a" * 40 + "/Bad Name/open/metrics.json", "100644", "not a design name"),
    ("a" * 40 + "/stage2/open/metrics.json", "120000", "symbolic link"),
    ("a" * 40 + "/stage2/open/sub", "160000", "gitlink"),
    ("a" * 40 + "/stage2/open/a/b/c/d/e", "100644", "5 folder levels"),
    ("a" * 40 + "/stage2/open/" + "n" * 129, "100644", "a name of 129 characters"),
    ("a" * 40 + "/metrics.json", "100644", "not <commit>/<design>/<kind>/<file>"),
])
def test_stored_paths(path, mode, why):
    kind = "commit" if mode == "160000" else "blob"
    got = ap.path_problem(ap.Entry(mode, kind, "0" * 40, 10, path))
    assert (got is None) if why is None else (got is not None and why in got), got


def _restore(data: bytes, gz: bool = True) -> bytes:
    return b"".join(store._restored_chunks([data[i:i + 1000] for i in range(0, len(data), 1000)], gz, "f", store._Budget()))


def test_decompression_is_streamed_multi_member_and_capped(monkeypatch):
    raw = os.urandom(5000) + bytes(300_000)
    assert _restore(gzip.compress(raw)) == raw
    assert _restore(gzip.compress(raw[:100]) + gzip.compress(raw[100:])) == raw  # two members, as gunzip reads
    with pytest.raises(store.Refused, match="truncated"):
        _restore(gzip.compress(raw)[:-20])
    with pytest.raises(store.Refused, match="not valid gzip"):
        _restore(b"\x1f\x8b" + b"garbage" * 10)
    monkeypatch.setattr(ap, "MAX_FILE_BYTES", 100_000)
    with pytest.raises(store.Refused, match="more than 100000 bytes once decompressed"):
        _restore(gzip.compress(raw))
    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    bomb = c.compress(bytes(50 * 2**20)) + c.flush()
    with pytest.raises(store.Refused):
        _restore(bomb)


def test_push_leaves_out_what_every_pull_would_refuse_and_signs_what_was_pushed_unsigned(world, monkeypatch):
    sha = world["sha"]

    def build(reports):
        unit(reports, sha)
        (unit(reports, sha, "stage3") / "my notes.txt").write_text("a space in a name\n")

    push_from(world, None, monkeypatch, build)
    tree = subprocess.run(["git", "ls-tree", "-r", "--name-only", REF], cwd=world["remote"], capture_output=True,
                          text=True, check=True).stdout
    assert f"{sha}/stage2/open/metrics.json" in tree and f"{sha}/stage3/" not in tree
    pusher = sorted(world["remote"].parent.glob("pusher-*"))[-1]
    monkeypatch.setenv("KABE_SIGNING_KEY", str(world["ci"]))
    again = store.push("origin", pusher, pusher / "reports", ref=REF)
    assert again.completed == [f"{sha}/stage2/open"]  # the same files, now with CI's signature
    assert again.invalid == [(f"{sha}/stage3/open", "'my notes.txt': the name 'my notes.txt' (a unit's names are "
                                                    "letters, digits and _ - . + = , @, not starting with a dot)")]
    assert "not pushed " + f"{sha}/stage3/open" in "\n".join(again.lines())
    assert pull(world).added == [f"{sha}/stage2/open"]
