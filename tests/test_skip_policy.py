"""tests/conftest.py's policy, run on a throwaway suite in a subprocess: with CI=true a skip whose
reason is not on the allow-list fails the run; an allowed one does not; outside CI skips stay
skips; an allow-list entry without a why is refused."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).parent

SUITE = '''
import pytest

def test_runs():
    assert 1 + 1 == 2

def test_skips_for_a_reason_kabe_allows():
    pytest.skip("shared fixtures not available: /nowhere does not exist")

def test_skips_because_something_broke():
    pytest.skip("design stage9 does not load yet")
'''


def run(tmp_path: Path, ci: str | None, allowlist: str | None = None) -> subprocess.CompletedProcess:
    shutil.copy(TESTS / "conftest.py", tmp_path / "conftest.py")
    (tmp_path / "skip_allowlist.txt").write_text(allowlist if allowlist is not None else
                                                 (TESTS / "skip_allowlist.txt").read_text())
    (tmp_path / "test_suite.py").write_text(SUITE)
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    if ci is not None:
        env["CI"] = ci
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
                          cwd=tmp_path, env=env, capture_output=True, text=True)


def test_in_ci_an_unlisted_skip_fails_the_run(tmp_path):
    r = run(tmp_path, "true")
    assert r.returncode == 1, r.stdout
    assert "design stage9 does not load yet" in r.stdout and "skip_allowlist.txt" in r.stdout
    assert "1 passed" in r.stdout and "1 skipped" in r.stdout  # the allowed one stays a skip


def test_outside_ci_skips_stay_skips(tmp_path):
    r = run(tmp_path, None)
    assert r.returncode == 0 and "2 skipped" in r.stdout, r.stdout


def test_an_entry_without_a_why_is_refused(tmp_path):
    r = run(tmp_path, "true", "design stage9 does not load yet\n")
    assert r.returncode != 0 and "<why>" in (r.stdout + r.stderr)
