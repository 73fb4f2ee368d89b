#!/usr/bin/env python3
"""What showing unverified history costs `doit report` and `kabe diff` (issue 21): every unit in
reports/.unverified/ has its reason recomputed by the pull's own check (ssh-keygen for a signed
unit, `git cat-file -e`, the cache key) and its record validated and judged, each time the page or
the diff is made. Real git and real ssh-keygen signatures, in a temp dir.

    python scripts/bench_unverified_history.py [--units N]

Prints seconds for kabe.records.history.scan_unverified over N unsigned units and over N units
signed by a key the allowed-signers file does not list, and for history.scan over the trusted
builds beside them (what the page read before unverified history existed).
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
sys.path.insert(0, str(ROOT / "tests"))

from kabe.records import history  # noqa: E402
from kabe.store import signing, store  # noqa: E402
from records_fixtures import make_cores, record  # noqa: E402

ENV = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@kabe", "GIT_COMMITTER_NAME": "b",
       "GIT_COMMITTER_EMAIL": "b@kabe"}


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, env=ENV, check=True, capture_output=True, text=True).stdout.strip()


def _unit(folder: Path, sha: str) -> None:
    folder.mkdir(parents=True)
    (folder / "metrics.json").write_text(json.dumps(record(sha)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--units", type=int, default=40)
    n = ap.parse_args().units
    with tempfile.TemporaryDirectory(prefix="kabe-bench-unverified-") as tmp:
        tmp = Path(tmp)
        repo = tmp / "repo"
        git(tmp, "init", "-q", "-b", "main", str(repo))
        shas = []
        for i in range(n):
            git(repo, "commit", "-q", "--allow-empty", "-m", f"c{i}")
            shas.append(git(repo, "rev-parse", "HEAD"))
        cores = make_cores(tmp)
        key = tmp / "other"
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
        allowed = repo / signing.DEFAULT_ALLOWED_SIGNERS
        allowed.parent.mkdir(parents=True, exist_ok=True)
        trusted = tmp / "trusted"
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(trusted)], check=True)
        allowed.write_text(f'ci@kabe namespaces="kabe-archive" {trusted.with_suffix(".pub").read_text()}')
        reports = repo / "reports"
        for sha in shas:
            _unit(reports / sha / "stage4" / "open", sha)  # the trusted builds, made here
            _unit(reports / store.UNVERIFIED / sha / "stage4" / "open", sha)
        t = time.perf_counter()
        found = history.scan_unverified(reports, repo, cores)
        unsigned = time.perf_counter() - t
        assert len(found) == n and all(u.reason == "unsigned" for u in found)
        for sha in shas:
            d = reports / store.UNVERIFIED / sha / "stage4" / "open"
            (d / signing.SIGNATURE_FILE).write_bytes(
                signing.sign_unit(f"{sha}/stage4/open", signing.hash_dir(d), key))
        t = time.perf_counter()
        found = history.scan_unverified(reports, repo, cores)
        badly_signed = time.perf_counter() - t
        assert len(found) == n and all(u.reason.startswith("signed by a key not in") for u in found)
        t = time.perf_counter()
        scanned = history.scan(reports, repo, cores)
        trusted_scan = time.perf_counter() - t
        assert len(scanned.entries) == n
    print(f"scan_unverified, {n} unsigned units: {unsigned:.3f} s ({unsigned / n * 1000:.1f} ms/unit)")
    print(f"scan_unverified, {n} units signed by a key not allowed: {badly_signed:.3f} s "
          f"({badly_signed / n * 1000:.1f} ms/unit)")
    print(f"history.scan, {n} trusted builds beside them: {trusted_scan:.3f} s ({trusted_scan / n * 1000:.1f} ms/unit)")


if __name__ == "__main__":
    main()
