"""A project made from kabe's templates, for tests that need "a project" but do not test this one: a
fresh git repository with `kabe init` (and `kabe new <name>` for each design asked for), one commit.
Commands run in it use this checkout's kabe (PYTHONPATH), as a user's would use an installed kabe; the
project holds none of this repository's designs, models or study."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GIT_ID = ["-c", "user.name=kabe-test", "-c", "user.email=kabe-test@localhost", "-c", "commit.gpgsign=false"]


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *GIT_ID, *args], cwd=repo, check=True, capture_output=True, text=True).stdout.strip()


def env(project: Path) -> dict[str, str]:
    """A newcomer's shell: the venv on PATH, kabe importable, no Vivado."""
    e = dict(os.environ, PYTHONPATH=str(ROOT))
    e["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), "/usr/local/bin", "/usr/bin", "/bin"])
    e.pop("COLUMNS", None)
    return e


def run(project: Path, *args: str, timeout: float = 1200) -> tuple[int, str]:
    """`python -m <args>` in the project: (exit code, stdout + stderr)."""
    p = subprocess.run([sys.executable, "-m", *args], cwd=project, env=env(project), capture_output=True, text=True,
                       timeout=timeout)
    return p.returncode, p.stdout + p.stderr


def make(dest: Path, *designs: str) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    git(dest, "init", "-q")
    for argv in (("kabe", "init"), *(("kabe", "new", d) for d in designs)):
        rc, out = run(dest, *argv)
        if rc != 0:
            raise RuntimeError(f"`python -m {' '.join(argv)}` in {dest} exited {rc}: {out[-2000:]}")
    git(dest, "add", "-A")
    git(dest, "commit", "-qm", "a project made from kabe's templates")
    return dest
