"""`kabe init` on a new user's first day (issue 44): its .gitignore keeps the usual virtual environments
out of the first `git add -A`; its CI files install the kabe that ran it (PEP 610's direct_url.json) or
fail with a line saying what to put there, trigger on the repository's own default branch, pass
actionlint and GitLab's schema, and give a change's jobs no write power (tests/ci/test_templates.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from kabe.setup import project_init
from tests.ci.test_templates import actionlint, github_problems, gitlab_problems, gitlab_schema

REPO = Path(__file__).resolve().parents[2]


def _kabe(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "KABE_PROJECT"}
    return subprocess.run([sys.executable, "-m", "kabe.cli", *args], cwd=cwd, env={**env, "PYTHONPATH": str(REPO)},
                          capture_output=True, text=True)


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True,
                          capture_output=True, text=True).stdout


def test_the_first_git_add_stages_no_virtual_environment(tmp_path):
    repo = tmp_path / "mine"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    assert _kabe(repo, "init").returncode == 0
    for venv in (".venv", "venv", "env", ".venv311", "ENV"):  # what the README, a habit or an IDE makes
        (repo / venv / "lib" / "site-packages" / "pkg").mkdir(parents=True)
        (repo / venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
        (repo / venv / "lib" / "site-packages" / "pkg" / "__init__.py").write_text("")
    (repo / "cores" / "d" / "__pycache__").mkdir(parents=True)
    (repo / "cores" / "d" / "__pycache__" / "m.cpython-311.pyc").write_bytes(b"\0")
    (repo / "cores" / "d" / "model.py").write_text("x = 1\n")
    staged = _git(repo, "add", "-A", "--dry-run").splitlines()
    assert not [s for s in staged if "venv" in s.lower() or "env/" in s or "pycache" in s], staged
    assert "add 'cores/d/model.py'" in staged  # the check can see a file it stages


@pytest.mark.parametrize("branch", ["master", "trunk"])
def test_the_ci_files_trigger_on_the_detected_default_branch_and_pass_their_linters(tmp_path, branch):
    repo = tmp_path / "mine"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", branch)  # a fresh repository: no commit yet, the branch is HEAD's
    r = _kabe(repo, "init")
    assert r.returncode == 0, r.stderr
    assert f"the CI files run on {branch} (the branch checked out)" in r.stdout
    workflow, gitlab = repo / ".github" / "workflows" / "kabe.yml", repo / ".gitlab-ci.yml"
    flow = yaml.safe_load(workflow.read_text())
    assert flow[True]["push"]["branches"] == [branch]  # YAML 1.1 reads `on` as true
    assert f"github.ref == 'refs/heads/{branch}'" in flow["jobs"]["main"]["if"]
    assert "refs/heads/main" not in workflow.read_text()
    for proc in (actionlint(workflow), gitlab_schema(gitlab)):
        assert proc.returncode == 0, proc.stdout + proc.stderr
    assert github_problems(workflow.read_text(), branch) == [] and gitlab_problems(gitlab.read_text()) == []


def test_a_cloned_repository_takes_origins_default_branch(tmp_path):
    origin = tmp_path / "origin"
    origin.mkdir()
    _git(origin, "init", "-q", "-b", "develop")
    (origin / "README").write_text("x\n")
    _git(origin, "add", "-A")
    _git(origin, "commit", "-qm", "x")
    _git(tmp_path, "clone", "-q", str(origin), "clone")
    _git(tmp_path / "clone", "checkout", "-q", "-b", "feature")  # init run on a feature branch
    assert project_init.default_branch(tmp_path / "clone") == ("develop", "origin's HEAD")


class _Dist:
    def __init__(self, direct: dict | None, version: str = "0.3.1"):
        self.direct, self.version = direct, version

    def read_text(self, name: str):
        return json.dumps(self.direct) if name == "direct_url.json" and self.direct is not None else None


@pytest.mark.parametrize("direct, expected", [
    ({"url": "https://github.com/acme/kabe.git", "vcs_info": {"vcs": "git", "commit_id": "a" * 40}},
     "git+https://github.com/acme/kabe.git@" + "a" * 40),
    ({"url": "https://files.example/kabe-0.3.1-py3-none-any.whl", "archive_info": {"hashes": {"sha256": "b" * 64}}},
     "https://files.example/kabe-0.3.1-py3-none-any.whl#sha256=" + "b" * 64),
    (None, "kabe==0.3.1"),  # from an index: no direct_url.json
    ({"url": "file:///home/me/kabe", "dir_info": {"editable": True}}, None),
    ({"url": "file:///home/me/dist/kabe-0.3.1-py3-none-any.whl", "archive_info": {}}, None),
])
def test_the_install_line_is_where_the_running_kabe_came_from(monkeypatch, direct, expected):
    monkeypatch.setattr(project_init.metadata, "distribution", lambda name: _Dist(direct))
    source, why = project_init.kabe_source()
    assert source == expected, why
    if expected is None:
        assert "/home/me/" in why and "CI cannot reach" in why


def test_an_unreachable_kabe_writes_an_edit_line_that_fails_and_says_what_to_put_there(tmp_path, monkeypatch):
    monkeypatch.setattr(project_init.metadata, "distribution",
                        lambda name: _Dist({"url": "file:///home/me/kabe", "dir_info": {"editable": True}}))
    text = project_init._template("init", "github-workflow.yml")
    out = project_init._install_lines(text, "github-workflow.yml", ".github/workflows/kabe.yml",
                                      *project_init.kabe_source())
    assert "pip install kabe" not in out  # never a name that resolves to nothing (or to someone else's package)
    runs = [s["run"] for job in yaml.safe_load(out)["jobs"].values() for s in job["steps"] if "EDIT" in s.get("run", "")]
    assert len(runs) == 4
    proc = subprocess.run(["bash", "-c", runs[0]], capture_output=True, text=True)
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1
    assert proc.stderr.startswith("EDIT .github/workflows/kabe.yml: this line must install kabe (kabe was installed "
                                  "from the local /home/me/kabe, which CI cannot reach)") and "git+https://" in proc.stderr
    monkeypatch.setattr(project_init.metadata, "distribution", lambda name: _Dist(None))
    out = project_init._install_lines(project_init._template("init", "gitlab-ci.yml"), "gitlab-ci.yml", ".gitlab-ci.yml",
                                      *project_init.kabe_source())
    ci = yaml.safe_load(out)
    assert ci["kabe:change"]["before_script"][0] == "pip install kabe==0.3.1"
    (tmp_path / ".gitlab-ci.yml").write_text(out)
    assert gitlab_schema(tmp_path / ".gitlab-ci.yml").returncode == 0
