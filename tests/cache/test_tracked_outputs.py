"""kabe never reuses outputs a commit carries (red team 4a, findings 01, 02 and 05): a file git tracks under
the build or reports folder (a forged cache entry, a base build, a prebuilt simulation model force-added
past .gitignore) is bad input, refused in one line before anything reuses it. Real git."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from kabe.cache import tracked_outputs

SHA = "0123456789abcdef0123456789abcdef01234567"


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "p"
    (root / "reports").mkdir(parents=True)
    (root / "pyproject.toml").write_text("[tool.kabe]\n")
    (root / ".gitignore").write_text("/build/\n/reports/*\n!/reports/README.md\n")
    (root / "reports" / "README.md").write_text("archives land here\n")
    _git(root, "init", "-q")
    _git(root, "add", ".")
    return root


def test_a_clean_project_and_its_reports_readme_pass(project):
    assert tracked_outputs.tracked(project) == []
    tracked_outputs.check(project)


def test_a_force_added_cache_entry_and_sim_model_are_refused(project):
    unit = project / "reports" / SHA / "alpha" / "open"
    unit.mkdir(parents=True)
    (unit / "metrics.json").write_text("{}")
    model = project / "build" / "sim" / "alpha" / "4aa5d334c1743645"
    model.mkdir(parents=True)
    (model / "harness").write_bytes(b"\x7fELF")
    (project / "reports" / ".cache-index.json").write_text("{}")
    _git(project, "add", "-f", "reports", "build")
    assert tracked_outputs.tracked(project) == sorted([
        f"reports/{SHA}/alpha/open/metrics.json", "build/sim/alpha/4aa5d334c1743645/harness",
        "reports/.cache-index.json"])
    with pytest.raises(tracked_outputs.TrackedOutputs) as e:
        tracked_outputs.check(project)
    message = str(e.value)
    assert "\n" not in message and message.startswith("git tracks 3 file(s) in kabe's output folders (")
    assert "Fix: `git rm -r --cached` them" in message


def test_untracked_outputs_are_kabes_own_and_a_project_outside_git_has_none(project, tmp_path):
    (project / "build" / "sim").mkdir(parents=True)
    (project / "build" / "sim" / "harness").write_bytes(b"x")  # built here: never tracked
    assert tracked_outputs.tracked(project) == []
    outside = tmp_path / "nogit"
    (outside / "reports" / SHA).mkdir(parents=True)
    (outside / "pyproject.toml").write_text("[tool.kabe]\n")
    assert tracked_outputs.tracked(outside) == []
