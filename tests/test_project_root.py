"""The project is found from the working directory (kabe.base.paths), and `kabe init` / `kabe new` write a
project's skeleton without ever overwriting a file. Each case runs kabe in a fresh process with its
own working directory, as a user's shell would (kabe.base.paths resolves the project once, at import)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from kabe.project import config
from kabe.base import paths

REPO = Path(__file__).resolve().parent.parent
_SHOW = "import json, kabe.base.paths as p; print(json.dumps([str(p.ROOT), p.FOUND, str(p.CORES), str(p.REPORTS), str(p.BUILD)]))"


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "KABE_PROJECT"}
    env["PYTHONPATH"] = str(REPO)  # this checkout's kabe, whatever the working directory
    return {**env, **extra}


def _where(cwd: Path, **extra: str) -> list:
    out = subprocess.run([sys.executable, "-c", _SHOW], cwd=cwd, env=_env(**extra), capture_output=True, text=True,
                         check=True).stdout
    return json.loads(out)


def _kabe(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kabe.cli", *args], cwd=cwd, env=_env(), capture_output=True,
                          text=True)


def _git_repo(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=path, check=True)
    return path


def test_the_nearest_pyproject_with_a_tool_kabe_table_is_the_project(tmp_path):
    outer = tmp_path / "outer"
    (outer / "hw" / "cores" / "x" / "rtl").mkdir(parents=True)
    (outer / "pyproject.toml").write_text("[project]\nname = 'not-kabe'\n")  # no [tool.kabe]: not a project
    (outer / "hw" / "pyproject.toml").write_text('[tool.kabe]\nflow = "open"\nreports_dir = "out/reports"\n')
    root, found, cores, reports, build = _where(outer / "hw" / "cores" / "x" / "rtl")
    assert (root, found) == (str(outer / "hw"), True)
    assert cores == str(outer / "hw" / "cores") and build == str(outer / "hw" / "build")
    assert reports == str(outer / "hw" / "out" / "reports")  # [tool.kabe] reports_dir
    # above the project: nothing found, and the working directory is named, never kabe's own checkout
    assert _where(outer)[:2] == [str(outer), False]


def test_a_broken_pyproject_with_a_tool_kabe_table_is_still_the_project_and_its_error_is_said(tmp_path):
    (tmp_path / "p" / "cores").mkdir(parents=True)
    (tmp_path / "p" / "pyproject.toml").write_text('[tool.kabe]\nflow = "open\n')  # unterminated string
    assert _where(tmp_path / "p" / "cores")[:2] == [str(tmp_path / "p"), True]
    r = subprocess.run([sys.executable, "-c", "from kabe.project import config; config.resolve_flow(None)"], cwd=tmp_path / "p",
                       env=_env(), capture_output=True, text=True)
    assert r.returncode != 0 and f"{tmp_path / 'p' / 'pyproject.toml'}: not valid TOML" in r.stderr


def test_a_dodo_that_imports_kabe_marks_the_project_and_kabe_project_overrides(tmp_path):
    (tmp_path / "p" / "sub").mkdir(parents=True)
    (tmp_path / "p" / "dodo.py").write_text("from kabe.doit_tasks import *\n")
    assert _where(tmp_path / "p" / "sub")[:2] == [str(tmp_path / "p"), True]
    (tmp_path / "q").mkdir()
    (tmp_path / "q" / "dodo.py").write_text("def task_x():\n    return {'actions': []}\n")  # not kabe's
    assert _where(tmp_path / "q")[1] is False
    assert _where(tmp_path / "q", KABE_PROJECT=str(tmp_path / "p"))[:2] == [str(tmp_path / "p"), True]
    assert _where(tmp_path / "p", KABE_PROJECT=str(tmp_path / "gone"))[:2] == [str(tmp_path / "gone"), False]


def test_this_checkout_is_a_project_like_any_other():
    assert paths.find_root(REPO / "kabe" / "flows", environ={}) == (REPO, True)
    assert paths.PACKAGE == REPO / "kabe"


def test_a_folder_setting_must_stay_inside_the_project():
    assert config.validate({"cores_dir": "hw/cores", "reports_dir": "out"})["cores_dir"] == "hw/cores"
    for bad in ("/abs/cores", "../elsewhere", "", 3):
        with pytest.raises(config.ConfigError, match="cores_dir"):
            config.validate({"cores_dir": bad})


def test_verbs_that_need_a_project_say_so_outside_one(tmp_path):
    r = _kabe(tmp_path, "build", "anything")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.strip().splitlines() == [r.stderr.strip()]  # one line
    assert "not inside a kabe project" in r.stderr and "kabe init" in r.stderr
    assert not (tmp_path / "reports").exists() and not (tmp_path / "build").exists()


def test_init_writes_the_skeleton_and_new_a_design_neither_overwrites(tmp_path):
    repo = _git_repo(tmp_path / "mine")
    (repo / "pyproject.toml").write_text('[project]\nname = "mine"\nversion = "1"')  # no final newline
    (repo / ".gitignore").write_text("*.o\n/build/\n")
    r = _kabe(repo, "init")
    assert r.returncode == 0, r.stderr
    assert "appended [tool.kabe]" in r.stdout
    text = (repo / "pyproject.toml").read_text()
    assert text.startswith('[project]\nname = "mine"\nversion = "1"\n') and paths._tool_kabe(repo / "pyproject.toml") == {
        "flow": "auto", "default_board": "pynq-z1"}  # the board of a design.yaml that names none: the project's
    assert (repo / "dodo.py").read_text().startswith("from kabe.doit_tasks import *")
    from kabe.setup.project_init import GITIGNORE_LINES

    assert (repo / ".gitignore").read_text().splitlines() == ["*.o", "/build/", *[x for x in GITIGNORE_LINES if x != "/build/"]]
    for ci in (".github/workflows/kabe.yml", ".gitlab-ci.yml"):
        assert "kabe ci" in (repo / ci).read_text() and "pip install -e ." not in (repo / ci).read_text()
    # a second init: refused, nothing changed
    before = {p: p.read_bytes() for p in repo.rglob("*") if p.is_file() and ".git" not in p.parts}
    r = _kabe(repo, "init")
    assert r.returncode == 2 and "[tool.kabe] table already" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert before == {p: p.read_bytes() for p in repo.rglob("*") if p.is_file() and ".git" not in p.parts}

    r = _kabe(repo / "cores", "new", "blinky")  # from a subfolder: the project is found above
    assert r.returncode == 0, r.stderr
    folder = repo / "cores" / "blinky"
    assert sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()) == [
        "blinky.core", "blinky.xdc", "design.yaml", "rtl/blinky_top.v"]
    assert "name: user:design:blinky:0.1.0" in (folder / "blinky.core").read_text()
    assert 'verify: {none: "add a golden model: see docs/your_design.md"}' in (folder / "design.yaml").read_text()
    assert "module blinky_top" in (folder / "rtl" / "blinky_top.v").read_text()
    (folder / "design.yaml").write_text("mine\n")
    r = _kabe(repo, "new", "blinky")
    assert r.returncode == 2 and "already exists" in r.stderr and (folder / "design.yaml").read_text() == "mine\n"
    r = _kabe(repo, "new", "-x")
    assert r.returncode == 2 and not (repo / "cores" / "-x").exists()


def test_init_refuses_a_file_it_would_overwrite_and_writes_nothing(tmp_path):
    repo = _git_repo(tmp_path / "mine")
    (repo / "dodo.py").write_text("def task_mine():\n    return {'actions': ['true']}\n")
    r = _kabe(repo, "init")
    assert r.returncode == 2 and "dodo.py already exists" in r.stderr
    assert sorted(p.name for p in repo.iterdir()) == [".git", "dodo.py"]  # no pyproject.toml, no CI files


def test_init_outside_git_says_so(tmp_path):
    r = _kabe(tmp_path, "init")
    assert r.returncode == 2 and "not inside a git repository" in r.stderr and not (tmp_path / "pyproject.toml").exists()


def test_the_ci_files_init_writes_pass_actionlint_and_the_gitlab_schema(tmp_path):
    from tests.ci.test_templates import actionlint, gitlab_schema

    repo = _git_repo(tmp_path / "mine")
    assert _kabe(repo, "init").returncode == 0
    workflow, gitlab = repo / ".github" / "workflows" / "kabe.yml", repo / ".gitlab-ci.yml"
    for proc in (actionlint(workflow), gitlab_schema(gitlab)):
        assert proc.returncode == 0, proc.stdout + proc.stderr
    gitlab.write_text(gitlab.read_text().replace("      when: always  #", "      when: sometimes  #", 1))  # the check can fail
    assert gitlab_schema(gitlab).returncode != 0


def test_init_in_a_folder_of_a_repository_makes_that_folder_the_project(tmp_path):
    """A monorepo: the top holds the software's pyproject.toml and sw/; `kabe init` run in an empty
    fpga/ makes fpga/ the project and leaves the top's files alone. Its GitHub workflow goes where
    GitHub reads it (the top's .github/workflows/, named after the folder) with every step run in
    fpga/; its GitLab file stays in fpga/ (GitLab reads only the top's) and init says how to include it.
    Both pass actionlint and the GitLab schema."""
    from tests.ci.test_templates import actionlint, gitlab_schema

    top = _git_repo(tmp_path / "mono")
    (top / "pyproject.toml").write_text('[project]\nname = "sw"\nversion = "1"\n')
    (top / "sw").mkdir()
    (top / "fpga").mkdir()
    r = _kabe(top / "fpga", "init")
    assert r.returncode == 0, r.stderr
    assert (top / "pyproject.toml").read_text() == '[project]\nname = "sw"\nversion = "1"\n'
    assert sorted(p.relative_to(top).as_posix() for p in top.rglob("*") if p.is_file() and ".git" not in p.parts) == [
        ".github/workflows/kabe-fpga.yml", "fpga/.gitignore", "fpga/.gitlab-ci.yml", "fpga/constraints/.gitkeep",
        "fpga/cores/.gitkeep", "fpga/dodo.py", "fpga/pyproject.toml", "pyproject.toml"]
    assert paths._tool_kabe(top / "fpga" / "pyproject.toml") == {"flow": "auto", "default_board": "pynq-z1"}
    assert _where(top / "fpga" / "cores")[:2] == [str(top / "fpga"), True]
    assert 'include: [{local: "fpga/.gitlab-ci.yml"}]' in r.stdout
    workflow, gitlab = top / ".github" / "workflows" / "kabe-fpga.yml", top / "fpga" / ".gitlab-ci.yml"
    for proc in (actionlint(workflow), gitlab_schema(gitlab)):
        assert proc.returncode == 0, proc.stdout + proc.stderr
    wf = yaml.safe_load(workflow.read_text())
    assert wf["defaults"] == {"run": {"working-directory": "fpga"}}
    for job in ("check", "main"):
        upload = next(s for s in wf["jobs"][job]["steps"] if s.get("uses", "").startswith("actions/upload-artifact"))
        assert upload["with"]["path"].splitlines() == ["fpga/reports/", "fpga/kabe-${{ matrix.design }}.md",
                                                 "fpga/kabe-${{ matrix.design }}.xml"]
    assert wf["jobs"]["pages"]["steps"][-2]["with"]["path"] == "fpga/public"
    gl = yaml.safe_load(gitlab.read_text())
    assert gl["kabe"]["script"][0] == 'cd "fpga"' and gl["pages"]["script"][0] == 'cd "fpga"'
    assert gl["kabe:change"]["script"][0] == 'cd "fpga"'
    assert gl[".kabe-build"]["artifacts"]["paths"] == ["fpga/kabe-summary.md", "fpga/reports/"]
    assert gl[".kabe-build"]["artifacts"]["reports"]["junit"] == "fpga/kabe-junit.xml"
    assert gl["pages"]["script"][-1].startswith('kabe report --site "$CI_PROJECT_DIR/public"')
    assert gl["pages"]["artifacts"] == {"paths": ["public"]}
    # again, or from a folder inside the project: refused, nothing written
    before = {p: p.read_bytes() for p in top.rglob("*") if p.is_file() and ".git" not in p.parts}
    for where in (top / "fpga", top / "fpga" / "cores"):
        r = _kabe(where, "init")
        assert r.returncode == 2 and "[tool.kabe] table already" in r.stderr, r.stderr
    assert before == {p: p.read_bytes() for p in top.rglob("*") if p.is_file() and ".git" not in p.parts}


def test_a_users_report_page_has_none_of_kabes_study_and_kabes_own_has_it(tmp_path):
    """llm_accel/perf is this repository's research: a project that does not name page_sections gets a
    page of its builds only; this repository's pyproject.toml names its three sections, and a user's
    project adds its own the same way."""
    from kabe.page import report

    repo = _git_repo(tmp_path / "mine")
    (repo / "pyproject.toml").write_text('[tool.kabe]\nflow = "open"\n')
    (repo / "reports").mkdir()
    page = report.build_report(repo / "reports", repo, repo / "cores").read_text()
    for research in ("bandwidth wall", "Token budget", "V80", "SmolLM2"):
        assert research not in page
    assert "<h1>kabe: builds</h1>" in page and "No builds archived yet." in page
    assert config.value(config.load(REPO / "pyproject.toml"), "page_sections") == [
        "llm_accel.page:wall", "llm_accel.page:token_budget", "llm_accel.page:v80"]
    (repo / "pyproject.toml").write_text('[tool.kabe]\npage_sections = ["llm_accel.page:v80"]\n')
    page = report.build_report(repo / "reports", repo, repo / "cores").read_text()
    assert "Alveo V80 what-if" in page and "bandwidth wall" not in page
    # a section of the user's own: a function in the project, named like a golden model
    (repo / "mypage.py").write_text('def latency(page):\n    return "<h2>Latency of mine</h2>" + page.table("| a | b |\\n|---|---|\\n| 1 | 2 |")\n')
    (repo / "pyproject.toml").write_text('[tool.kabe]\npage_sections = ["mypage:latency"]\n')
    page = report.build_report(repo / "reports", repo, repo / "cores").read_text()
    assert "<h2>Latency of mine</h2><table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td>2</td></tr></table>" in page
    assert "Alveo V80 what-if" not in page
    from kabe.page import page_hooks
    with pytest.raises(page_hooks.PageSectionError, match="mypage has no function nothing"):
        report.build_report(repo / "reports", repo, repo / "cores", sections=["mypage:nothing"])
    with pytest.raises(config.ConfigError, match="page_sections"):
        config.validate({"page_sections": ["wall", "roofline"]})


def test_doctor_names_the_project_and_checks_kabes_own_dependencies_not_the_projects(tmp_path):
    repo = _git_repo(tmp_path / "mine")
    assert _kabe(repo, "init").returncode == 0
    r = subprocess.run([sys.executable, "-m", "kabe.cli", "doctor"], cwd=repo, env={**_env(), "COLUMNS": "400"},
                       capture_output=True, text=True)
    project = [ln for ln in r.stdout.splitlines() if "│ project " in ln]
    assert len(project) == 1 and "ok" in project[0] and f"{repo} (pyproject.toml [tool.kabe])" in project[0], r.stdout
    packages = re.search(r"Python packages\s*│ (\d+) of (\d+) installed", r.stdout)
    assert packages and int(packages.group(2)) >= 10, r.stdout  # kabe's dependencies; the project declares none
    outside = subprocess.run([sys.executable, "-m", "kabe.cli", "doctor"], cwd=tmp_path, env={**_env(), "COLUMNS": "400"},
                             capture_output=True, text=True)
    assert outside.returncode == 2 and "Traceback" not in outside.stderr and f"none found from {tmp_path}" in outside.stdout


@pytest.mark.parametrize("name, top", [("my-design", "my_design_top"), ("9lives", "d_9lives_top")])
def test_new_gives_a_design_name_no_verilog_identifier_could_hold_a_legal_top(tmp_path, name, top):
    from kabe.sim.verilator_build import _env as verilator_env, verilator_root

    repo = _git_repo(tmp_path / "mine")
    assert _kabe(repo, "init").returncode == 0
    r = _kabe(repo, "new", name)
    assert r.returncode == 0, r.stderr
    assert f"the top module is {top}" in r.stdout
    folder = repo / "cores" / name
    assert sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()) == sorted([
        "design.yaml", f"{name}.core", f"{name}.xdc", f"rtl/{top}.v"])
    core = (folder / f"{name}.core").read_text()
    assert f"name: user:design:{name}:0.1.0" in core and f"toplevel: {top}\n" in core and f"rtl/{top}.v" in core
    # real Verilator reads the written top as the core names it
    lint = subprocess.run([str(verilator_root() / "bin" / "verilator"), "--lint-only", "-Wno-fatal",
                           "--top-module", top, str(folder / "rtl" / f"{top}.v")],
                          capture_output=True, text=True, env=verilator_env())
    assert lint.returncode == 0, lint.stderr
    assert _kabe(repo, "new", name).returncode == 2 and (folder / "rtl" / f"{top}.v").exists()  # never over it
