"""Small things a new user met on the first day (issue 44, item 7): `kabe archive du` with a local
archive and no shared one says what is here; `kabe doctor` in a fresh `git init` says the repository
has no commit yet (not "not a git checkout")."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "KABE_PROJECT"}
    return {**env, "PYTHONPATH": str(REPO), "COLUMNS": "300"}


def _kabe(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kabe.cli", *args], cwd=cwd, env=_env(), capture_output=True,
                          text=True, timeout=300)


def _fresh(tmp_path: Path) -> Path:
    repo = tmp_path / "mine"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True)
    (repo / "pyproject.toml").write_text('[tool.kabe]\nflow = "open"\n')
    return repo


def test_archive_du_counts_the_local_reports_when_nothing_is_shared(tmp_path):
    repo = _fresh(tmp_path)
    r = _kabe(repo, "archive", "du")  # no remote yet: exit 2 as before, and the local archive said
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "nothing built here yet" in r.stderr, r.stderr
    subprocess.run(["git", "init", "-q", "--bare", str(tmp_path / "remote.git")], check=True)
    subprocess.run(["git", "remote", "add", "origin", str(tmp_path / "remote.git")], cwd=repo, check=True)
    r = _kabe(repo, "archive", "du")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[-1] == f"local {repo / 'reports'}: absent (nothing built here yet)"
    for sha in ("a" * 40, "b" * 40):
        unit = repo / "reports" / sha / "stage4" / "open"
        unit.mkdir(parents=True)
        (unit / "metrics.json").write_text(json.dumps({"commit": sha}) + " " * 999_000)  # about 1 MB each
        (unit / "yosys.log").write_text("x" * 500_000)
    (repo / "reports" / ".unverified" / ("c" * 40) / "stage4" / "open").mkdir(parents=True)
    (repo / "reports" / ".unverified" / ("c" * 40) / "stage4" / "open" / "metrics.json").write_text("{}" * 1000)
    r = _kabe(repo, "archive", "du")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert "is empty or absent" in lines[0]  # no shared archive: said, and then what is here
    assert lines[-1] == (f"local {repo / 'reports'}: 2 commit(s), 2 build(s), 3.00 MB (and 0.00 MB of unverified "
                         f"units, kabe's cache index and other files); `kabe archive push` shares the clean ones"), lines


def test_doctor_in_a_fresh_git_init_says_there_is_no_commit_yet(tmp_path):
    repo = _fresh(tmp_path)
    r = _kabe(repo, "doctor")
    git = [ln for ln in r.stdout.splitlines() if "│ git " in ln]
    assert len(git) == 1, r.stdout
    assert "git repository with no commit yet" in git[0] and "not a git checkout" not in r.stdout, git
    assert "git add -A && git commit" in r.stdout
    plain = tmp_path / "plain"  # the control: a folder that is no repository still says so
    plain.mkdir()
    (plain / "pyproject.toml").write_text('[tool.kabe]\nflow = "open"\n')
    r = _kabe(plain, "doctor")
    assert "is not a git" in r.stdout and "no commit yet" not in r.stdout, r.stdout  # (the table may wrap "checkout")
