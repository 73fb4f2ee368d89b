"""The shared archive as an attacker with push rights would fill it (issue 21), against a real bare
remote, the trees built by hand with plain git (hash-object, mktree, commit-tree, push), and pulled by
a copy of this checkout running its own `kabe archive pull` and `kabe ci`'s pull step:

- a path-traversal entry (<sha>/../../kabe/flows/open.py), a '..' file entry, a 4,595-character path,
  a symlink entry and a 2 GiB gzip bomb are each refused and named, the rest of the pull goes on
  (an honest unit signed by the allowed key lands in reports/);
- the checkout and its .git are byte-for-byte what they were (every file hashed before and after);
  the only new files are git's fetched objects and kabe's refs/kabe/* refs, and reports/;
- the pull's peak memory (measured in its own process) stays under 200 MB;
- no code from the archive runs: the planted flows/open.py would write a marker when imported;
- a force-pushed archive is refused on the next pull with both tips named, and accepted with
  --accept-rewrite.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from repo_clone import make  # tests/ is on sys.path (tests/conftest.py)

ZERO = "f" * 40
GIB2 = 2 * 2**30
# The pull runs one process further down, and only its RUSAGE_CHILDREN is read: Linux carries a
# process's peak RSS across fork and exec, so a pull forked straight from pytest would report
# pytest's own size (390 MB late in a full suite run) instead of the pull's. This small launcher's
# children start from its few MB; RUSAGE_CHILDREN covers the pull and its git children.
CHILD_RUSAGE = """
import json, resource, subprocess, sys
code = subprocess.run([sys.executable, "-c", "import sys; from kabe import cli; sys.exit(cli.main(sys.argv[1:]))",
                       *sys.argv[1:]]).returncode
kids_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(json.dumps({"exit": code, "maxrss_kb": kids_kb}), file=sys.stderr)
"""
CI_PULL_STEP = """
from rich.console import Console
from kabe.ci.run import CiOptions, _pull
from kabe.base.paths import REPORTS, ROOT
_pull(CiOptions(), True, ROOT, REPORTS, Console(width=400, color_system=None))
"""


def git(cwd: Path, *args: str, input: bytes | None = None) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "mallory", "GIT_AUTHOR_EMAIL": "m@x", "GIT_COMMITTER_NAME": "mallory",
           "GIT_COMMITTER_EMAIL": "m@x"}
    return subprocess.run(["git", *args], cwd=cwd, input=input, capture_output=True, check=True,
                          env=env).stdout.decode().strip()


def blob(repo: Path, data: bytes) -> str:
    return git(repo, "hash-object", "-w", "--stdin", input=data)


def tree(repo: Path, entries: dict) -> str:
    """A tree from {name: bytes (a file) | ("120000", target) (a link) | dict (a subtree)}, one mktree
    per level: git stores any name this way, '..' included."""
    lines = []
    for name, value in entries.items():
        if isinstance(value, dict):
            lines.append(f"040000 tree {tree(repo, value)}\t{name}")
        elif isinstance(value, tuple):
            lines.append(f"{value[0]} blob {blob(repo, value[1].encode())}\t{name}")
        else:
            lines.append(f"100644 blob {blob(repo, value)}\t{name}")
    return git(repo, "mktree", input=("\n".join(lines) + "\n").encode())


def nest(path: str, leaf) -> dict:
    parts = path.split("/")
    out = leaf
    for part in reversed(parts):
        out = {part: out}
    return out


def merge(*trees: dict) -> dict:
    out: dict = {}
    for t in trees:
        for k, v in t.items():
            out[k] = merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def gzip_bomb(raw_size: int) -> bytes:
    """raw_size zero bytes as concatenated gzip members of 64 MiB each (a valid gzip file: `gunzip`
    gives raw_size bytes), made without holding the raw bytes."""
    member_raw = 64 * 2**20
    c = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    zeros = bytes(2**20)
    member = b"".join(c.compress(zeros) for _ in range(64)) + c.flush()
    return member * (raw_size // member_raw)


def snapshot(root: Path) -> dict[str, str]:
    """sha256 of every file under root (links by their target), reports/ left out."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = Path(dirpath).relative_to(root)
        if rel_dir.parts[:1] == ("reports",):
            dirnames[:] = []
            continue
        for name in filenames:
            p = Path(dirpath) / name
            out[str(rel_dir / name)] = ("link:" + os.readlink(p)) if p.is_symlink() else \
                hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def run_kabe(checkout: Path, code: str, *args: str, **env: str) -> subprocess.CompletedProcess:
    e = {**os.environ, "PYTHONPATH": str(checkout), "PYTHONDONTWRITEBYTECODE": "1", **env}
    e.pop("KABE_SIGNING_KEY", None)
    return subprocess.run([sys.executable, "-c", code, *args], cwd=checkout, env=e, capture_output=True, text=True,
                          timeout=600)


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """A copy of this checkout (the victim) with a bare origin, CI's key in its allowed-signers file,
    and an attacker's clone that can push to the archive ref."""
    base = tmp_path_factory.mktemp("attacks")
    victim = make(base / "victim")
    key = base / "keys" / "ci"
    key.parent.mkdir()
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "ci", "-f", str(key)], check=True)
    (victim / ".kabe").mkdir(exist_ok=True)
    (victim / ".kabe" / "allowed_signers").write_text(
        f'ci@kabe namespaces="kabe-archive" {key.with_suffix(".pub").read_text()}')
    git(victim, "add", "-f", ".kabe/allowed_signers")
    git(victim, "-c", "commit.gpgsign=false", "commit", "-qm", "trust CI's archive key")
    remote = base / "remote.git"
    git(base, "init", "-q", "--bare", str(remote))
    git(victim, "remote", "add", "origin", str(remote))
    git(victim, "push", "-q", "origin", "HEAD:refs/heads/main")
    attacker = base / "attacker"
    git(base, "init", "-q", str(attacker))
    git(attacker, "remote", "add", "origin", str(remote))
    return {"base": base, "victim": victim, "remote": remote, "attacker": attacker, "key": key,
            "commit": git(victim, "rev-parse", "HEAD")}


def honest_unit(world) -> dict:
    """A unit as CI would push it: signed by the allowed key, naming a commit the victim has."""
    from kabe.store import signing

    unit = f"{world['commit']}/stage2/open"
    files = {"metrics.json": b'{"schema": "kabe.metrics/1"}\n', "manifest.json": b"{}\n"}
    sig = signing.sign_unit(unit, {n: hashlib.sha256(d).hexdigest() for n, d in files.items()}, world["key"])
    return nest(unit, {**files, signing.SIGNATURE_FILE: sig})


def push_tree(world, entries: dict, parent: str | None, message: str, force: bool = False) -> str:
    a = world["attacker"]
    args = ["commit-tree", tree(a, entries), "-m", message] + (["-p", parent] if parent else [])
    commit = git(a, *args)
    git(a, "update-ref", "refs/kabe/archive", commit)
    git(a, "push", "-q", *(["--force"] if force else []), "origin", "refs/kabe/archive:refs/kabe/archive")
    return commit


LONG = "/".join(["x" * 199] * 22) + "/" + "y" * 142  # with the unit prefix: 4,595 characters
ATTACKS = {
    "traversal": nest(f"{ZERO}/../../kabe/flows/open.py",
                      b"open('/tmp/kabe-archive-code-ran', 'w').write('pwned')\n"),
    "dotdot file": nest(f"{ZERO}/stage2/open/..", b"a file named ..\n"),
    "long path": nest(f"{ZERO}/stage3/open/{LONG}", b"long\n"),
    "symlink": nest(f"{ZERO}/stage4/open/metrics.json", ("120000", "../../../../.git/config")),
}


def test_the_attacks_are_refused_named_and_touch_nothing(world):
    a, victim = world["attacker"], world["victim"]
    marker = Path("/tmp/kabe-archive-code-ran")
    marker.unlink(missing_ok=True)
    assert len(f"{ZERO}/stage3/open/{LONG}") == 4595
    bomb = gzip_bomb(GIB2)
    tip, entries = None, {}
    for name, attack in ATTACKS.items():  # one commit per attack, on top of each other, as pushes come
        entries = merge(entries, attack)
        tip = push_tree(world, entries, tip, f"attack: {name}")
    entries = merge(entries, nest(f"{'e' * 40}/stage5/open/yosys.log.gz", bomb), honest_unit(world))
    tip = push_tree(world, entries, tip, "attack: a 2 GiB gzip bomb, beside an honest signed unit")
    listed = git(a, "ls-tree", "-r", "--long", tip)
    assert "120000 blob" in listed and "/../../kabe/flows/open.py" in listed

    before = snapshot(victim)
    proc = run_kabe(victim, CHILD_RUSAGE, "archive", "pull", "origin")
    stats = json.loads(proc.stderr.strip().splitlines()[-1])
    print(proc.stdout)
    print("peak memory of the pull (max RSS of it and its git children):", stats["maxrss_kb"] // 1024, "MB")
    assert stats["exit"] == 0, proc.stderr
    out = proc.stdout
    assert f"refused '{ZERO}/../../kabe/flows/open.py': a '..' component" in out
    assert f"refused {ZERO}/stage2/open: '..': a '..' component" in out
    assert f"refused {ZERO}/stage3/open: " in out and "a path of 4595 characters (at most 400)" in out
    assert f"refused {ZERO}/stage4/open: 'metrics.json': a symbolic link" in out
    assert f"refused {'e' * 40}/stage5/open: yosys.log: more than {256 * 2**20} bytes once decompressed" in out
    assert "1 build(s) added" in out and "5 refused" in out  # the honest unit went on
    assert (victim / "reports" / world["commit"] / "stage2" / "open" / "metrics.json").is_file()
    assert stats["maxrss_kb"] < 200 * 1024

    after = snapshot(victim)
    changed = sorted(p for p in before if after.get(p) != before[p])
    new = sorted(set(after) - set(before))
    print(f"hash check: {len(before)} files before, {len(changed)} changed or gone, {len(new)} new outside reports/ "
          f"(only {sorted({'/'.join(p.split('/')[:2 if p.startswith('.git/objects') else 3]) for p in new})})")
    assert changed == []
    assert all(p.startswith((".git/objects/", ".git/refs/kabe/")) or p == ".git/kabe-archive-pull.lock"
               for p in new), new  # the pull's lock (one pull at a time per clone)
    assert not any(p.parts[-1].startswith(".") and ".tmp-" in p.name for p in (victim / "reports").rglob("*"))

    ci = run_kabe(victim, CI_PULL_STEP + "\nfrom kabe import flows\nflows.get('open')\n")
    print(ci.stdout)
    assert ci.returncode == 0, ci.stderr
    for line in (f"refused '{ZERO}/../../kabe/flows/open.py'", f"refused {ZERO}/stage2/open", f"refused {ZERO}/stage3/open",
                 f"refused {ZERO}/stage4/open", f"refused {'e' * 40}/stage5/open"):
        assert line in ci.stdout
    assert snapshot(victim) == after  # the second pull wrote nothing outside reports/ either
    assert not marker.exists()  # the planted flows/open.py never ran


def test_a_force_pushed_archive_is_refused_with_both_tips_named(world):
    victim = world["victim"]
    current = git(world["victim"], "ls-remote", "origin", "refs/kabe/archive").split()[0]
    first = push_tree(world, honest_unit(world), current, "honest archive")
    proc = run_kabe(victim, "from kabe import cli; import sys; sys.exit(cli.main(sys.argv[1:]))", "archive", "pull", "origin")
    assert proc.returncode == 0, proc.stderr
    forged = merge(honest_unit(world), nest(f"{world['commit']}/stage3/open/metrics.json", b'{"lut": 100}\n'))
    rewritten = push_tree(world, forged, None, "parentless rewrite", force=True)
    proc = run_kabe(victim, "from kabe import cli; import sys; sys.exit(cli.main(sys.argv[1:]))", "archive", "pull", "origin")
    print(proc.stderr)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert f"its tip {rewritten} does not descend from {first}" in proc.stderr
    assert f"kabe archive pull origin --accept-rewrite {rewritten}" in proc.stderr
    assert not (victim / "reports" / world["commit"] / "stage3").exists()
    proc = run_kabe(victim, "from kabe import cli; import sys; sys.exit(cli.main(sys.argv[1:]))", "archive", "pull",
                    "origin", "--accept-rewrite", rewritten[:12])
    assert proc.returncode == 0, proc.stderr
    assert "unverified " + f"{world['commit']}/stage3/open: unsigned" in proc.stdout  # accepted, and still judged
