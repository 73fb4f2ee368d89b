"""A throwaway copy of this checkout (its committed and new files, no build/ or reports/), made a git
repository of its own with one commit, for tests that break files or run real builds: the real
checkout and its archive are never touched. Commands run in the copy run the copy's kabe."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GIT_ID = ["-c", "user.name=kabe-test", "-c", "user.email=kabe-test@localhost", "-c", "commit.gpgsign=false"]


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *GIT_ID, *args], cwd=repo, check=True, capture_output=True, text=True).stdout.strip()


def make(dest: Path) -> Path:
    files = subprocess.run(["git", "ls-files", "-z", "-co", "--exclude-standard"], cwd=ROOT, check=True,
                           capture_output=True).stdout.decode().split("\0")
    for rel in filter(None, files):
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    git(dest, "init", "-q")
    git(dest, "add", "-A")
    git(dest, "commit", "-qm", "copy of the checkout under test")
    return dest


def env(copy: Path) -> dict[str, str]:
    """The environment a newcomer's shell would have: the venv on PATH, the copy's kabe importable, no
    Vivado (the real one is absent here; the stand-in is never on PATH unless a test puts it there)."""
    e = dict(os.environ, PYTHONPATH=str(copy))
    e["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), "/usr/local/bin", "/usr/bin", "/bin"])
    e.pop("COLUMNS", None)
    return e


def run(copy: Path, *args: str, timeout: float = 1200) -> tuple[int, str]:
    """`python -m <args>` in the copy: (exit code, stdout + stderr)."""
    p = subprocess.run([sys.executable, "-m", *args], cwd=copy, env=env(copy), capture_output=True, text=True,
                       timeout=timeout)
    return p.returncode, p.stdout + p.stderr


@contextlib.contextmanager
def edited(path: Path, new_text: str | None):
    """Replace (or, with None, remove) a file of the copy for the duration of the block."""
    old = path.read_bytes()
    try:
        if new_text is None:
            path.unlink()
        else:
            path.write_text(new_text)
        yield path
    finally:
        path.write_bytes(old)


def archives(copy: Path) -> list[Path]:
    """Every archived record and every leftover temp folder under the copy's reports/."""
    reports = copy / "reports"
    return sorted(p for p in reports.rglob("*") if p.name == "metrics.json" or ".tmp-" in p.name
                  or ".old-" in p.name) if reports.exists() else []
