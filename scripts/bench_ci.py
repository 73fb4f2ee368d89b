#!/usr/bin/env python3
"""What `kabe ci` adds on top of the builds, and what the shared archive costs per commit.

    python scripts/bench_ci.py [design ...]      (default: every design; slow: two full builds of each)

In a temp dir: a bare remote holding this project as it stands (tracked and new files), then, as CI
runners on main would:
  run 1  commit 1 in a fresh clone: kabe ci builds every design and pushes (nothing to compare with)
  run 2  commit 2 (a comment) in another clone: pulls commit 1's archive, builds, judges regressions, pushes
  run 3  commit 2 again in a third clone: every build is archived already, so nothing is built:
         the cost of kabe ci alone (pull two commits, judge, write the reports, push nothing new)
Per run: the process's wall time, the time inside the builds (the sum of each metrics.json "seconds"),
and the difference: what kabe ci adds (Python start, pull, base, reports, push). Then `kabe archive du`.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_CI_VARS = ("GITHUB_BASE_REF", "GITHUB_REF", "GITHUB_EVENT_NAME", "GITHUB_EVENT_PATH", "GITHUB_STEP_SUMMARY",
            "CI_MERGE_REQUEST_TARGET_BRANCH_NAME", "CI_DEFAULT_BRANCH", "CI_COMMIT_BRANCH", "CI_MERGE_REQUEST_IID")


def _env(repo: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in _CI_VARS}
    env.update({"PYTHONPATH": str(repo), "COLUMNS": "200", "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "b@kabe",
                "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "b@kabe"})
    return env


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True,
                          env=_env(repo)).stdout.strip()


def seed(tmp: Path) -> Path:
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, capture_output=True,
                           check=True).stdout.decode().split("\0")
    src_repo = tmp / "seed"
    for rel in filter(None, files):
        if (ROOT / rel).is_file():
            (src_repo / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, src_repo / rel)
    git(src_repo, "init", "-q", "-b", "main")
    git(src_repo, "add", "-A")
    git(src_repo, "commit", "-qm", "commit 1")
    git(tmp, "clone", "-q", "--bare", str(src_repo), str(tmp / "remote.git"))
    return tmp / "remote.git"


def kabe_ci(repo: Path, designs: list[str], built: bool = True) -> dict:
    """built=False: every build was archived before this run, so none of its time is build time."""
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "kabe.cli", "ci", *designs], cwd=repo, env=_env(repo),
                          capture_output=True, text=True)
    wall = time.monotonic() - t0
    sha = git(repo, "rev-parse", "HEAD")
    builds = [json.loads(p.read_text()) for p in sorted((repo / "reports" / sha).glob("*/*/metrics.json"))]
    phases = re.search(r"kabe ci: [\d.]+ s in all: (.*)", proc.stdout)
    return {"exit": proc.returncode, "wall": wall, "builds": sum(b["seconds"] for b in builds) if built else 0.0,
            "phases": phases.group(1) if phases else "?", "tail": proc.stdout.strip().splitlines()[-3:]}


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(ROOT))
    from kabe.project import designs as kabe_designs

    names = argv or list(kabe_designs.all_designs())
    with tempfile.TemporaryDirectory(prefix="kabe-bench-ci-") as tmp_name:
        tmp = Path(tmp_name)
        remote = seed(tmp)
        runs = []
        a = tmp / "a"
        git(tmp, "clone", "-q", str(remote), str(a))
        runs.append(("1: build all, push", kabe_ci(a, names)))
        b = tmp / "b"
        git(tmp, "clone", "-q", str(remote), str(b))
        with open(b / "README.md", "a") as f:
            f.write("\n<!-- commit 2 -->\n")
        git(b, "commit", "-qam", "commit 2")
        git(b, "push", "-q", "origin", "main")
        runs.append(("2: pull, build all, judge, push", kabe_ci(b, names)))
        c = tmp / "c"
        git(tmp, "clone", "-q", str(remote), str(c))
        runs.append(("3: all archived, nothing built", kabe_ci(c, names, built=False)))

        print(f"kabe ci over {len(names)} design(s): {', '.join(names)}")
        print(f"{'run':34} {'exit':>4} {'wall s':>8} {'builds s':>9} {'kabe ci adds s':>15}   phases (kabe ci's own line)")
        for label, r in runs:
            print(f"{label:34} {r['exit']:>4} {r['wall']:>8.1f} {r['builds']:>9.1f} {r['wall'] - r['builds']:>15.2f}   {r['phases']}")
        for label, r in runs:
            if r["exit"] != 0:
                print(f"  run {label} exited {r['exit']}: " + " / ".join(r["tail"]))
        du = subprocess.run([sys.executable, "-m", "kabe.cli", "archive", "du"], cwd=c, env=_env(c),
                            capture_output=True, text=True)
        print()
        print(du.stdout or du.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
