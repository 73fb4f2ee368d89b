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

from kabe.project import designs
from kabe.base.paths import ROOT

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
    assert "      when: always  # a failed gate" in text
    broken.write_text(text.replace("      when: always  # a failed gate", "      when: sometimes  # a failed gate", 1))
    proc = gitlab_schema(broken)
    print(proc.stdout)  # shown once (pytest -s)
    assert proc.returncode == 1 and "sometimes" in proc.stdout


def _commands() -> list[tuple[str, str]]:
    flow = yaml.safe_load(WORKFLOW.read_text())
    cmds = [("github", step["run"]) for job in flow["jobs"].values() for step in job["steps"] if "run" in step]
    ci = yaml.safe_load(GITLAB.read_text())
    cmds += [("gitlab", c) for name in ("kabe:change", "kabe") for c in ci[name]["before_script"] + ci[name]["script"]]
    return cmds


# What a template may run: kabe/doit, installing kabe, (GitLab) giving git a token to push with, and
# handing kabe the archive's signing key as a private file ($KABE_SIGNING_KEY; docs/archive.md).
_ALLOWED = (r"kabe ", r"doit ", r"pip install -e \.$", r'echo "list=\$\(kabe ci --list-designs\)" >> "\$GITHUB_OUTPUT"$',
            r'if \[ -n "\$KABE_ARCHIVE_TOKEN" \]; then git remote set-url origin ',
            r'if \[ -n "\$KEY" \]; then \(umask 077; printf .%s\\n. "\$KEY" > "\$RUNNER_TEMP/kabe-key"\); '
            r'echo "KABE_SIGNING_KEY=\$RUNNER_TEMP/kabe-key" >> "\$GITHUB_ENV"; fi$',
            r'if \[ -n "\$KABE_ARCHIVE_SIGNING_KEY" \]; then '
            r'chmod 600 "\$KABE_ARCHIVE_SIGNING_KEY"; export KABE_SIGNING_KEY="\$KABE_ARCHIVE_SIGNING_KEY"; fi$')


def test_every_template_step_is_a_kabe_command():
    cmds = _commands()
    assert any(c.startswith("kabe ci ") for _, c in cmds if _ == "github")
    assert any(c.startswith("kabe ci ") for _, c in cmds if _ == "gitlab")
    thick = [f"{where}: {c}" for where, c in cmds if not any(re.match(p, c.strip()) for p in _ALLOWED)]
    assert not thick, "template steps that are not kabe/doit commands:\n" + "\n".join(thick)


def test_the_gitlab_matrix_lists_every_design():
    """GitLab's matrix cannot be computed at run time; the GitHub workflow asks `kabe ci --list-designs`."""
    job = yaml.safe_load(GITLAB.read_text())[".kabe-build"]
    assert job["parallel"]["matrix"][0]["DESIGN"] == list(designs.all_designs())


@pytest.mark.parametrize("path", [WORKFLOW, GITLAB])
def test_templates_push_only_through_kabe_ci(path):
    """No template pushes by itself: kabe ci decides (default branch only) and retries races."""
    assert "git push" not in path.read_text()


INIT = ROOT / "kabe" / "setup" / "project_templates" / "init"


@pytest.mark.parametrize("path", [WORKFLOW, INIT / "github-workflow.yml"])
def test_the_github_pages_job_publishes_the_page_from_the_default_branch(path):
    """What the Pages job runs is built and crawled in tests/ci/test_pages_site.py; here: where it runs."""
    job = yaml.safe_load(path.read_text())["jobs"]["pages"]
    assert job["needs"] == "main" and "github.ref == 'refs/heads/main'" in job["if"] and "!cancelled()" in job["if"]
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


# --- No write power where a change's code runs (issue 36, item 6) ---------------------------------------
# A pull/merge request's jobs run the change's own code (its golden models, generators, its `pip install
# -e .`), so they must hold no token that can write, no secret, no signing key, and no value pasted into
# a shell line (a design folder named `x";id>&2;"` was run). Only jobs that run on a push to the default
# branch (code already merged) may push. The checks read the YAML, as GitHub and GitLab do.

_MATRIX_IN_SHELL = re.compile(r"\$\{\{")  # any expression pasted into a run: line is expanded before the shell
_GITLAB_SECRETS = ("KABE_ARCHIVE_TOKEN", "KABE_ARCHIVE_SIGNING_KEY", "KABE_SIGNING_KEY", "CI_JOB_TOKEN")


def _github_default_only(job: dict, branch: str) -> bool:
    cond = str(job.get("if", ""))
    return ("||" not in cond and "github.event_name == 'push'" in cond
            and f"github.ref == 'refs/heads/{branch}'" in cond)


def github_problems(text: str, branch: str = "main") -> list[str]:
    flow = yaml.safe_load(text)
    problems = []
    top = flow.get("permissions", {})
    if top in ("write-all",) or (isinstance(top, dict) and "write" in top.values()) or not top:
        problems.append(f"workflow permissions {top!r}: the default must be read-only (contents: read)")
    for name, job in flow["jobs"].items():
        for step in job.get("steps", []):
            if "run" in step and _MATRIX_IN_SHELL.search(step["run"]):
                problems.append(f"{name}: an expression pasted into a shell line: {step['run']!r} (pass it through env:)")
        if _github_default_only(job, branch):
            continue
        perms = job.get("permissions", top)
        if perms == "write-all" or (isinstance(perms, dict) and "write" in perms.values()):
            problems.append(f"{name} runs the change's code with permissions {perms}")
        if "secrets." in yaml.safe_dump(job):
            problems.append(f"{name} runs the change's code and reads a secret")
        for step in job.get("steps", []):
            if step.get("uses", "").startswith("actions/checkout@") and (step.get("with") or {}).get("persist-credentials") is not False:
                problems.append(f"{name}: actions/checkout leaves its token in .git/config (persist-credentials: false)")
            if "run" in step and ("--push" in step["run"] or "KABE_SIGNING_KEY" in step["run"]):
                problems.append(f"{name}: a change's job pushes or signs: {step['run']!r}")
    return problems


def _gitlab_job(ci: dict, name: str) -> dict:
    job = dict(ci[name])
    for parent in ([job.pop("extends")] if isinstance(job.get("extends"), str) else job.pop("extends", [])):
        job = {**_gitlab_job(ci, parent), **job}
    return job


def _gitlab_default_only(job: dict) -> bool:
    rules = job.get("rules")
    return bool(rules) and all("||" not in str(r.get("if", "")) and "$CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH" in str(r.get("if", ""))
                               for r in rules)


def gitlab_problems(text: str) -> list[str]:
    ci = yaml.safe_load(text)
    problems = []
    for name in ci:
        if name.startswith(".") or not isinstance(ci[name], dict) or "script" not in _gitlab_job(ci, name):
            continue
        job = _gitlab_job(ci, name)
        lines = [*job.get("before_script", []), *job["script"], *job.get("after_script", [])]
        for line in lines:
            if re.search(r'(?<!")\$\{?DESIGN\b', line):
                problems.append(f"{name}: the matrix value unquoted in {line!r}")
        if _gitlab_default_only(job):
            continue
        for line in lines:
            if any(secret in line for secret in _GITLAB_SECRETS) or "--push" in line or "set-url" in line:
                problems.append(f"{name} runs the change's code and uses a token or key: {line!r}")
    return problems


INIT_GITHUB, INIT_GITLAB = INIT / "github-workflow.yml", INIT / "gitlab-ci.yml"


@pytest.mark.parametrize("path", [WORKFLOW, INIT_GITHUB])
def test_no_github_job_running_a_change_holds_write_power(path):
    assert github_problems(path.read_text()) == []
    flow = yaml.safe_load(path.read_text())
    pushers = [n for n, j in flow["jobs"].items() if "write" in (j.get("permissions") or {}).values()
               and "contents" in (j.get("permissions") or {}) and j["permissions"]["contents"] == "write"]
    assert pushers == ["main"] and _github_default_only(flow["jobs"]["main"], "main")
    triggers = flow[True]  # YAML 1.1 reads the key `on` as true
    assert triggers["pull_request"] is None and "pull_request_target" not in triggers


@pytest.mark.parametrize("path", [GITLAB, INIT_GITLAB])
def test_no_gitlab_job_running_a_change_holds_the_token_or_the_key(path):
    assert gitlab_problems(path.read_text()) == []
    ci = yaml.safe_load(path.read_text())
    assert not _gitlab_default_only(_gitlab_job(ci, "kabe:change"))  # the checks did look at a change's job
    assert any("KABE_ARCHIVE_TOKEN" in line for line in _gitlab_job(ci, "kabe")["before_script"])


def test_the_write_power_checks_fail_each_way_a_template_could_leak():
    """Each check shown failing on a copy broken in one way (the checks can fail)."""
    text = WORKFLOW.read_text()
    check = "  check:  # a pull request"
    assert check in text
    broken = {
        "write token": text.replace("    permissions:\n      contents: read\n    strategy:",
                                    "    permissions:\n      contents: write\n    strategy:", 1),
        "persisted token": text.replace("          persist-credentials: false  # the change's code runs here: no token left in .git/config\n      - uses: actions/setup-python@v5\n          with:\n          python-version: \"3.11\"\n          cache: pip",
                                        "", 1) if False else text.replace(
            "          fetch-depth: 0  # the base is the merge-base with the default branch: it needs the history\n"
            "          persist-credentials: false", "          fetch-depth: 0\n          persist-credentials: true", 1),
        "pasted matrix": text.replace('kabe ci "$DESIGN" --no-push', 'kabe ci "${{ matrix.design }}" --no-push', 1),
        "secret in a change's job": text.replace("    if: github.event_name == 'pull_request'\n",
                                                 "    if: github.event_name == 'pull_request'\n    env:\n      K: ${{ secrets.X }}\n", 1)
                                        .replace("    env:\n      DESIGN: ${{ matrix.design }}  # to the shell", "    # DESIGN", 1),
        "main also on pull requests": text.replace("    if: github.event_name == 'push' && github.ref == 'refs/heads/main'\n    runs-on",
                                                   "    if: github.event_name == 'push' || github.ref == 'refs/heads/main'\n    runs-on", 1),
    }
    for what, copy in broken.items():
        assert copy != text, what
        assert github_problems(copy), what
    gl = GITLAB.read_text()
    for what, copy in {
        "token in the change's job": gl.replace("    - kabe ci \"$DESIGN\" --no-push",
                                                "    - git remote set-url origin \"https://kabe:${KABE_ARCHIVE_TOKEN}@x\"\n    - kabe ci \"$DESIGN\" --no-push", 1),
        "unquoted matrix value": gl.replace('kabe ci "$DESIGN" --no-push', "kabe ci $DESIGN --no-push", 1),
        "change's job on the default branch's rule": gl.replace('    - if: $CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH && $CI_PIPELINE_SOURCE != "merge_request_event"',
                                                                '    - if: $CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH || $CI_PIPELINE_SOURCE == "merge_request_event"', 1),
    }.items():
        assert copy != gl, what
        assert gitlab_problems(copy), what


def test_docs_say_the_gitlab_token_and_key_are_protected_variables():
    text = (ROOT / "docs" / "ci.md").read_text()
    assert "Protected" in text and "KABE_ARCHIVE_TOKEN" in text and "KABE_ARCHIVE_SIGNING_KEY" in text
    assert "persist-credentials: false" in text


def _project(tmp_path: Path, folders: list[str]) -> Path:
    (tmp_path / "pyproject.toml").write_text('[tool.kabe]\nflow = "open"\n')
    for name in folders:
        (tmp_path / "cores" / name).mkdir(parents=True)
        (tmp_path / "cores" / name / "design.yaml").write_text("core: x\n")
    return tmp_path


def test_list_designs_lists_only_valid_names_and_says_which_folders_it_skipped(tmp_path):
    bad = ['x";id>&2;"', "-rf", "a b", "esc\x1b[2Jx"]
    project = _project(tmp_path, ["ok", "also-ok_2", *bad])
    r = subprocess.run([sys.executable, "-m", "kabe.cli", "ci", "--list-designs"], cwd=project, capture_output=True,
                       text=True, env={**shutil.os.environ, "PYTHONPATH": str(ROOT)})
    assert r.returncode == 0, r.stderr
    import json

    assert json.loads(r.stdout) == ["also-ok_2", "ok"]
    assert len(r.stderr.strip().splitlines()) == 1 and "skipped 4 folder(s)" in r.stderr, r.stderr
    assert '"x\\";id>&2;\\""' in r.stderr and "\x1b" not in r.stderr and "\\u001b" in r.stderr
