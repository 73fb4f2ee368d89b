#!/usr/bin/env python3
"""What trusting the shared archive costs a pull (issue 21): path checks, streamed decompression and
two ssh-keygen calls per unit (find-principals, verify), against a real bare remote in a temp dir.

    python scripts/bench_archive_pull.py [--units N]

Prints seconds for: pushing N signed units, a first pull (every unit staged, verified, moved into
reports/), a second pull (every unit already here: compared by blob id, nothing verified again),
and a first pull of the same N units unsigned (kept apart in reports/.unverified/: no ssh-keygen).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kabe.store import store  # noqa: E402

REF = "refs/kabe/archive"
ENV = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@kabe", "GIT_COMMITTER_NAME": "b",
       "GIT_COMMITTER_EMAIL": "b@kabe"}


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, env=ENV, check=True, capture_output=True, text=True).stdout.strip()


def world(tmp: Path, units: int) -> tuple[Path, list[str], Path]:
    remote = tmp / "remote.git"
    git(tmp, "init", "-q", "--bare", "-b", "main", str(remote))
    dev = tmp / "dev"
    git(tmp, "init", "-q", "-b", "main", str(dev))
    shas = []
    for i in range(units):
        (dev / "README").write_text(f"{i}\n")
        git(dev, "add", "README")
        git(dev, "commit", "-qm", str(i))
        shas.append(git(dev, "rev-parse", "HEAD"))
    git(dev, "push", "-q", str(remote), "main")
    key = tmp / "ci"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "ci", "-f", str(key)], check=True)
    return remote, shas, key


def fill(reports: Path, shas: list[str]) -> None:
    log = ("a Yosys log line that repeats\n" * 4000).encode()  # ~120 kB: stored compressed
    for sha in shas:
        d = reports / sha / "stage2" / "open"
        d.mkdir(parents=True)
        (d / "metrics.json").write_text(json.dumps({"commit": sha, "utilization": {"lut": 232}}) + "\n")
        (d / "manifest.json").write_text("{}\n")
        (d / "yosys.log").write_bytes(log)


def clone(remote: Path, where: Path, key: Path | None) -> Path:
    git(remote.parent, "clone", "-q", str(remote), str(where))
    if key:
        (where / ".kabe").mkdir()
        (where / ".kabe" / "allowed_signers").write_text(f'ci@kabe namespaces="kabe-archive" {key.with_suffix(".pub").read_text()}')
    return where


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--units", type=int, default=40)
    n = ap.parse_args().units
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        remote, shas, key = world(tmp, n)
        pusher = clone(remote, tmp / "pusher", None)
        fill(pusher / "reports", shas)
        os.environ["KABE_SIGNING_KEY"] = str(key)
        s_push, _ = timed(lambda: store.push("origin", pusher, pusher / "reports", ref=REF))
        puller = clone(remote, tmp / "puller", key)
        s_first, first = timed(lambda: store.pull("origin", puller, puller / "reports", ref=REF))
        s_again, again = timed(lambda: store.pull("origin", puller, puller / "reports", ref=REF))
        assert len(first.added) == n and len(again.same) == n, (first.lines(), again.lines())

        os.environ.pop("KABE_SIGNING_KEY")
        remote2 = tmp / "unsigned.git"
        git(tmp, "clone", "-q", "--bare", str(remote), str(remote2))
        git(remote2, "update-ref", "-d", REF)
        pusher2 = clone(remote2, tmp / "pusher2", None)
        fill(pusher2 / "reports", shas)
        store.push("origin", pusher2, pusher2 / "reports", ref=REF)
        puller2 = clone(remote2, tmp / "puller2", key)
        s_unsigned, unsigned = timed(lambda: store.pull("origin", puller2, puller2 / "reports", ref=REF))
        assert len(unsigned.unverified) == n
    print(f"{n} units of 3 files (one ~120 kB log, stored gzip-compressed)")
    print(f"push, signed:                 {s_push:6.2f} s  ({1000 * s_push / n:.0f} ms per unit)")
    print(f"first pull, verified:         {s_first:6.2f} s  ({1000 * s_first / n:.0f} ms per unit)")
    print(f"second pull, all here:        {s_again:6.2f} s  ({1000 * s_again / n:.0f} ms per unit)")
    print(f"first pull, unsigned (apart): {s_unsigned:6.2f} s  ({1000 * s_unsigned / n:.0f} ms per unit)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
