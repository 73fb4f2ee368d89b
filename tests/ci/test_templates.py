"""The CI templates are the project's own and are checked like code: actionlint on the GitHub
workflow, check-jsonschema's vendored GitLab CI schema on .gitlab-ci.yml (offline: run here in a
network namespace with no interface), each shown failing on a deliberately broken copy. Both stay
thin: every command in them is a kabe/doit command a user can run locally (or installs kabe)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from kabe import designs
from kabe.paths import ROOT

WORKFLOW = ROOT / ".github" / "workflows" / "kabe.yml"
GITLAB = ROOT / ".gitlab-ci.yml"
_BIN = Path(sys.executable).parent


def _tool(name: str) -> str:
    path = shutil.which(name, path=f"{_BIN}:{shutil.os.environ.get('PATH', '')}")
    assert path, f"{name} is not installed: pip install -e '.[test]' (it is in the test extra)"
    return path


def _offline(cmd: list[str]) -> list[str]:
    """Run without any network when the machine lets us make a network namespace (root, or user namespaces)."""
    for prefix in (["unshare", "-n"], ["unshare", "-rn"]):
        if shutil.which("unshare") and subprocess.run([*prefix, "true"], capture_output=True).returncode == 0:
            return [*prefix, *cmd]
    return cmd


def actionlint(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run([_tool("actionlint"), "-no-color", str(path)], capture_output=True, text=True)


def gitlab_schema(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run(_offline([_tool("check-jsonschema"), "--builtin-schema", "vendor.gitlab-ci", str(path)]),
                          capture_output=True, text=True)


def test_actionlint_passes_the_workflow():
    proc = actionlint(WORKFLOW)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_actionlint_fails_a_broken_copy(tmp_path):
    broken = tmp_path / ".github" / "workflows" / "kabe.yml"
    broken.parent.mkdir(parents=True)
    text = WORKFLOW.read_text()
    assert "${{ matrix.design }}" in text and "runs-on: ubuntu-latest" in text
    broken.write_text(text.replace("${{ matrix.design }}", "${{ matrix.desing }}", 1)
                          .replace("needs: designs", "needs: design-list", 1))
    proc = actionlint(broken)
    print(proc.stdout)  # shown once (pytest -s): what a broken workflow looks like
    assert proc.returncode == 1
    assert "desing" in proc.stdout and "design-list" in proc.stdout


def test_the_gitlab_schema_passes_gitlab_ci():
    proc = gitlab_schema(GITLAB)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_gitlab_schema_fails_a_broken_copy(tmp_path):
    broken = tmp_path / ".gitlab-ci.yml"
    text = GITLAB.read_text()
    assert "when: always" in text
    broken.write_text(text.replace("when: always", "when: sometimes", 1))
    proc = gitlab_schema(broken)
    print(proc.stdout)  # shown once (pytest -s)
    assert proc.returncode == 1 and "sometimes" in proc.stdout


def _commands() -> list[tuple[str, str]]:
    flow = yaml.safe_load(WORKFLOW.read_text())
    cmds = [("github", step["run"]) for job in flow["jobs"].values() for step in job["steps"] if "run" in step]
    job = yaml.safe_load(GITLAB.read_text())["kabe"]
    cmds += [("gitlab", c) for c in job["before_script"] + job["script"]]
    return cmds


# What a template may run: kabe/doit, installing kabe, (GitLab) giving git a token to push with, and
# handing kabe the archive's signing key as a private file ($KABE_SIGNING_KEY; docs/archive.md).
_ALLOWED = (r"kabe ", r"doit ", r"pip install -e \.$", r'echo "list=\$\(kabe ci --list-designs\)" >> "\$GITHUB_OUTPUT"$',
            r'if \[ -n "\$KABE_ARCHIVE_TOKEN" \]; then git remote set-url origin ',
            r'if \[ -n "\$KEY" \]; then \(umask 077; printf .%s\\n. "\$KEY" > "\$RUNNER_TEMP/kabe-key"\); '
            r'echo "KABE_SIGNING_KEY=\$RUNNER_TEMP/kabe-key" >> "\$GITHUB_ENV"; fi$',
            r'if \[ -n "\$KABE_ARCHIVE_SIGNING_KEY" \] && \[ "\$CI_COMMIT_BRANCH" = "\$CI_DEFAULT_BRANCH" \]; then '
            r'chmod 600 "\$KABE_ARCHIVE_SIGNING_KEY"; export KABE_SIGNING_KEY="\$KABE_ARCHIVE_SIGNING_KEY"; fi$')


def test_every_template_step_is_a_kabe_command():
    cmds = _commands()
    assert any(c.startswith("kabe ci ") for _, c in cmds if _ == "github")
    assert any(c.startswith("kabe ci ") for _, c in cmds if _ == "gitlab")
    thick = [f"{where}: {c}" for where, c in cmds if not any(re.match(p, c.strip()) for p in _ALLOWED)]
    assert not thick, "template steps that are not kabe/doit commands:\n" + "\n".join(thick)


def test_the_gitlab_matrix_lists_every_design():
    """GitLab's matrix cannot be computed at run time; the GitHub workflow asks `kabe ci --list-designs`."""
    job = yaml.safe_load(GITLAB.read_text())["kabe"]
    assert job["parallel"]["matrix"][0]["DESIGN"] == list(designs.all_designs())


@pytest.mark.parametrize("path", [WORKFLOW, GITLAB])
def test_templates_push_only_through_kabe_ci(path):
    """No template pushes by itself: kabe ci decides (default branch only) and retries races."""
    assert "git push" not in path.read_text()


INIT = ROOT / "kabe" / "project_templates" / "init"


@pytest.mark.parametrize("path", [WORKFLOW, INIT / "github-workflow.yml"])
def test_the_github_pages_job_publishes_the_page_from_the_default_branch(path):
    """What the Pages job runs is built and crawled in tests/ci/test_pages_site.py; here: where it runs."""
    job = yaml.safe_load(path.read_text())["jobs"]["pages"]
    assert job["needs"] == "build" and "github.ref == 'refs/heads/main'" in job["if"] and "!cancelled()" in job["if"]
    assert job["permissions"] == {"contents": "read", "pages": "write", "id-token": "write"}
    assert job["environment"]["name"] == "github-pages"
    uses = [s.get("uses", "").split("@")[0] for s in job["steps"]]
    assert uses[-2:] == ["actions/upload-pages-artifact", "actions/deploy-pages"]
    assert job["steps"][-2]["with"]["path"] == "public" and job["steps"][0]["with"]["fetch-depth"] == 0


@pytest.mark.parametrize("path", [GITLAB, INIT / "gitlab-ci.yml"])
def test_the_gitlab_pages_job_publishes_the_page_from_the_default_branch(path):
    ci = yaml.safe_load(path.read_text())
    job = ci["pages"]
    assert ci["stages"] == ["build", "deploy"] and job["stage"] == "deploy"
    assert job["rules"] == [{"if": "$CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH", "when": "always"}]
    assert job["dependencies"] == [] and job["artifacts"] == {"paths": ["public"]}
    thick = [c for c in job["before_script"] + job["script"] if not re.match(r"(kabe |pip install )", c.strip())]
    assert thick == [], thick  # thin, as the kabe job: kabe commands and installing kabe
