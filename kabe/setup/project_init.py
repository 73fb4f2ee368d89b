"""`kabe init` and `kabe new <design>`: the skeleton of a project that uses kabe, and of one design.

The files come from kabe/setup/project_templates/ (package data, so a pip-installed kabe writes the same).
Neither verb overwrites anything: a file that already exists is refused in one line (exit 2) before
anything is written, so a half-made skeleton never hides a user's file. The one file init may add
to is pyproject.toml: a [tool.kabe] table is appended when the file has none.
"""

from __future__ import annotations

import json
import re
import shlex
from importlib import metadata, resources
from pathlib import Path

from kabe.project import config, designs
from kabe.base import paths
from kabe.base import git as base_git  # _default_branch has its own git()
from kabe.base.errors import UserError

_TEMPLATES = resources.files("kabe.setup") / "project_templates"
SETTINGS_TABLE = """
# kabe's settings (written by `kabe init`). flow: open | vivado | auto (vivado when `vivado` is on PATH).
[tool.kabe]
flow = "auto"
default_board = "pynq-z1"      # the board of a design.yaml that names none (kabe/boards/profiles, or boards/)
# cores_dir = "cores"          # the project's folders, relative to this file (these are the defaults)
# constraints_dir = "constraints"
# reports_dir = "reports"
# build_dir = "build"
"""
DODO = "from kabe.doit_tasks import *  # noqa: F401,F403 - kabe's verbs: doit list\n"
# build/ and reports/ are kabe's; doit's state is SQLite; and the virtual environments a README or a
# habit creates in the project (a first `git add -A` must not stage 12,000 files of a .venv/).
GITIGNORE_LINES = ("/build/", "/reports/", ".doit.db*", ".doit.sqlite3*",
                   ".venv*/", "venv/", "env/", ".env/", "ENV/", "env.bak/", "venv.bak/", "__pycache__/")
# The template's install lines; init replaces each with where the kabe that runs it came from.
_INSTALL = re.compile(r"^(?P<lead>\s*(?:- run: |- ))pip install kabe(?:  #.*)?$", re.M)


class InitError(UserError):
    """`kabe init` / `kabe new` would overwrite a file, or was run in the wrong place."""


def _template(*parts: str) -> str:
    return _TEMPLATES.joinpath(*parts).read_text()


def _git_top(folder: Path) -> Path:
    try:
        out = base_git.out(folder, "rev-parse", "--show-toplevel")
    except (OSError, base_git.GitError):
        raise InitError(f"{folder} is not inside a git repository; kabe names every build after its commit. "
                        f"Fix: `git init` first, then `kabe init`") from None
    return Path(out).resolve()


def _refuse_existing(files: dict[Path, str]) -> None:
    there = [p for p in files if p.exists()]
    if there:
        raise InitError(f"{there[0]} already exists; kabe writes no file over yours (move it away, or write "
                        f"the rest by hand: {', '.join(str(p) for p in files)})")


def _write_all(files: dict[Path, str]) -> list[Path]:
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "x") as f:  # "x": never over a file that appeared meanwhile
            f.write(text)
    return list(files)


def _subfolder_github(text: str, prefix: str) -> str:
    """The GitHub workflow for a project in the repository's folder `prefix` (a monorepo's "fpga"):
    every `run` step in that folder, and the paths the upload steps name (from the repository's top)
    under it. Each edit must apply: a template changed without this function fails here, not in CI."""
    edits = [("\nname: kabe\n", f"\nname: {json.dumps('kabe ' + prefix)}\n"),
             ("\njobs:\n", f"\ndefaults:\n  run:\n    working-directory: {json.dumps(prefix)}  # the kabe project's "
                            f"folder in this repository (every kabe command runs there)\n\njobs:\n"),
             ("            reports/\n            kabe-${{ matrix.design }}.md\n            kabe-${{ matrix.design }}.xml\n",
              f"            {prefix}/reports/\n            {prefix}/kabe-${{{{ matrix.design }}}}.md\n"
              f"            {prefix}/kabe-${{{{ matrix.design }}}}.xml\n", 2),
             ("          path: public\n", f"          path: {json.dumps(prefix + '/public')}\n")]
    return _edit(text, edits, "github-workflow.yml")


def _subfolder_gitlab(text: str, prefix: str) -> str:
    """The GitLab CI file for a project in the repository's folder `prefix`: each job's script starts
    in that folder; artifacts (named from the repository's top) are under it, but the page stays in
    public/ at the top, where GitLab Pages takes it."""
    cd = f"    - cd {json.dumps(prefix)}  # the kabe project's folder in this repository\n"
    edits = [("  script:\n    - kabe ci ", "  script:\n" + cd + "    - kabe ci ", 2),
             ("    paths: [kabe-summary.md, reports/]\n",
              f"    paths: [{json.dumps(prefix + '/kabe-summary.md')}, {json.dumps(prefix + '/reports/')}]\n"),
             ("      junit: kabe-junit.xml\n", f"      junit: {json.dumps(prefix + '/kabe-junit.xml')}\n"),
             ("  script:\n    - kabe archive pull origin", "  script:\n" + cd + "    - kabe archive pull origin"),
             ("    - kabe report --site public ", '    - kabe report --site "$CI_PROJECT_DIR/public" ')]
    return _edit(text, edits, "gitlab-ci.yml")


def _edit(text: str, edits: list[tuple], name: str) -> str:
    """Each (old, new[, times]) must match exactly `times` times (1 unless said): a template changed
    without its edit fails here, in kabe's tests, not in a user's CI."""
    for old, new, *times in edits:
        if text.count(old) != (times[0] if times else 1):
            raise InitError(f"kabe's template {name} changed: {old.strip()!r} is not in it "
                            f"{times[0] if times else 1} time(s) (a bug in kabe)")
        text = text.replace(old, new)
    return text


def kabe_source(dist_name: str = "kabe") -> tuple[str | None, str]:
    """Where the running kabe was installed from, as a pip argument a CI runner can use, and how that
    was found; (None, why) when it cannot be reached from elsewhere (a local folder or file). PEP 610:
    pip records a direct URL install in the distribution's direct_url.json; without one, kabe came from
    a package index, and that version is pinned."""
    try:
        dist = metadata.distribution(dist_name)
    except metadata.PackageNotFoundError:
        return None, "kabe runs from a source folder, not an installed package"
    try:
        direct = json.loads(dist.read_text("direct_url.json") or "null")
    except ValueError:
        direct = None
    if not isinstance(direct, dict):
        return f"{dist_name}=={dist.version}", f"kabe {dist.version} from a package index"
    url = str(direct.get("url", ""))
    vcs = direct.get("vcs_info") if isinstance(direct.get("vcs_info"), dict) else None
    sub = f"#subdirectory={direct['subdirectory']}" if direct.get("subdirectory") else ""
    if url.startswith("file:") or not re.match(r"^[a-z][a-z0-9+.-]*://", url):
        return None, f"kabe was installed from the local {url.removeprefix('file://') or '(unknown)'}, which CI cannot reach"
    if vcs and vcs.get("vcs") == "git" and vcs.get("commit_id"):
        return f"git+{url}@{vcs['commit_id']}{sub}", f"kabe from {url} at commit {vcs['commit_id'][:12]}"
    hashes = (direct.get("archive_info") or {}).get("hashes") if isinstance(direct.get("archive_info"), dict) else None
    pin = f"#sha256={hashes['sha256']}" if isinstance(hashes, dict) and hashes.get("sha256") and not sub else ""
    return f"{url}{pin}{sub}", f"kabe from {url}"


def _install_lines(text: str, name: str, where: str, source: str | None, why: str) -> str:
    """Every `pip install kabe` line of a template made the install of `source`; without one, a line that
    fails the job saying what to put there (never a `pip install kabe` that resolves to another package
    or to nothing). The shell command is written as a YAML double-quoted string (JSON's escaping)."""
    if source:
        cmd, comment = f"pip install {shlex.quote(source)}", f"{why} (written by kabe init)"
    else:
        cmd = "echo " + shlex.quote(f"EDIT {where}: this line must install kabe ({why}). Put there a pip argument "
                                    f"CI can reach: a git URL (git+https://host/kabe.git@<commit>), the URL of a wheel, "
                                    f"or kabe==<version> from your index") + " >&2; exit 1"
        comment = "EDIT: where CI gets kabe"
    if not _INSTALL.search(text):
        raise InitError(f"kabe's template {name} has no `pip install kabe` line (a bug in kabe)")
    return _INSTALL.sub(lambda m: f"{m.group('lead')}{json.dumps(cmd)}  # {comment}", text)


def default_branch(top: Path) -> tuple[str, str]:
    """The repository's default branch and how it was found: the remote's HEAD, else the branch checked
    out (a fresh `git init` has one before any commit), else main."""
    def git(*args: str) -> str | None:
        try:
            out = base_git.run(top, *args, check=False, text=True)
        except (OSError, base_git.GitError):
            return None
        return out.stdout.strip() if out.returncode == 0 and out.stdout.strip() else None

    remote = git("symbolic-ref", "--quiet", "refs/remotes/origin/HEAD")
    if remote:
        return remote.removeprefix("refs/remotes/origin/"), "origin's HEAD"
    here = git("symbolic-ref", "--quiet", "--short", "HEAD")
    if here:
        return here, "the branch checked out"
    return "main", "no branch found; edit it if yours differs"


def _branch(github: str, branch: str) -> str:
    """The GitHub workflow triggered on, and pushing from, `branch` (the template says main)."""
    quoted = json.dumps(branch)
    return _edit(github, [("    branches: [main]\n", f"    branches: [{quoted}]\n"),
                          ("github.ref == 'refs/heads/main'", f"github.ref == 'refs/heads/{branch}'", 2)],
                 "github-workflow.yml")


def init(folder: Path | None = None) -> list[str]:
    """Make `folder` (default: cwd), a folder of a git repository, a kabe project: at the repository's
    top as always, or in a subfolder of it (a monorepo's fpga/, beside sw/), which then is the project.
    Returns the lines to print: one per file written or extended.

    CI files: GitHub reads workflows only from the repository's top, so a subfolder's workflow is
    written there as .github/workflows/kabe-<folder>.yml, its steps running in the project's folder.
    GitLab reads only the top's .gitlab-ci.yml, which a monorepo usually has already: a subfolder's
    .gitlab-ci.yml is written in the project's folder and the last lines say how to include it."""
    here = Path(folder or Path.cwd()).resolve()
    top = _git_top(here)
    outer, found = paths.find_root(here, environ={})
    if found and outer.is_relative_to(top) and paths._tool_kabe(outer / "pyproject.toml") is not None:
        raise InitError(f"{outer / 'pyproject.toml'} has a [tool.kabe] table already: "
                        + ("this is a kabe project" if outer == here else f"{here} is inside the kabe project at {outer}"))
    prefix = here.relative_to(top).as_posix() if here != top else ""
    pyproject = here / "pyproject.toml"
    github, gitlab = _template("init", "github-workflow.yml"), _template("init", "gitlab-ci.yml")
    branch, how = default_branch(top)
    if not re.fullmatch(r"[A-Za-z0-9._/-]{1,200}", branch):
        raise InitError(f"the default branch {branch!r} ({how}) has characters kabe does not put in a CI file; "
                        f"rename it (git branch -m) or write the CI files by hand")
    github = _branch(github, branch)
    source, why = kabe_source()
    if prefix:
        slug = re.sub(r"[^A-Za-z0-9_-]+", "-", prefix).strip("-") or "project"
        new = {here / "dodo.py": DODO,
               top / ".github" / "workflows" / f"kabe-{slug}.yml": _subfolder_github(github, prefix),
               here / ".gitlab-ci.yml": _subfolder_gitlab(gitlab, prefix),
               here / "cores" / ".gitkeep": "", here / "constraints" / ".gitkeep": ""}
    else:
        new = {here / "dodo.py": DODO,
               here / ".github" / "workflows" / "kabe.yml": github,
               here / ".gitlab-ci.yml": gitlab,
               here / "cores" / ".gitkeep": "", here / "constraints" / ".gitkeep": ""}
    for path in list(new):
        if path.name.endswith((".yml",)):
            shown = path.relative_to(top).as_posix()
            new[path] = _install_lines(new[path], path.name, shown, source, why)
    _refuse_existing(new)
    said = [f"{here} is a folder of the git repository at {top}: it is the kabe project (commits are the "
            f"repository's; only changes under {prefix}/ make its builds dirty)"] if prefix else []
    if pyproject.exists():
        text = pyproject.read_text()
        with open(pyproject, "a") as f:
            f.write(("" if text.endswith("\n") or not text else "\n") + SETTINGS_TABLE)
        said.append(f"appended [tool.kabe] to {pyproject}")
    else:
        with open(pyproject, "x") as f:
            f.write(SETTINGS_TABLE.lstrip())
        said.append(f"wrote {pyproject}")
    said += [f"wrote {p}" for p in _write_all(new)]
    gitignore = here / ".gitignore"
    have = set(gitignore.read_text().splitlines()) if gitignore.exists() else set()
    missing = [line for line in GITIGNORE_LINES if line not in have]
    if missing:
        old = gitignore.read_text() if gitignore.exists() else ""
        with open(gitignore, "a") as f:
            f.write(("" if old.endswith("\n") or not old else "\n") + "\n".join(missing) + "\n")
        said.append(f"added {', '.join(missing)} to {gitignore}")
    said.append(f"the CI files run on {branch} ({how}) and install kabe: "
                + (f"{source} ({why})" if source else f"EDIT the lines marked EDIT ({why}); until then they fail"))
    if prefix:
        said.append(f"GitLab reads only {top / '.gitlab-ci.yml'}: include the project's from it "
                    f"(include: [{{local: {json.dumps(prefix + '/.gitlab-ci.yml')}}}]); its jobs are named kabe and "
                    f"pages (rename them if yours are too)")
    said.append("next: `kabe new <design>`, then `doit build:<design>`")
    return said


def top_module(name: str) -> str:
    """The Verilog module name of design `name`'s top: <name>_top, with each '-' made '_' and a 'd_' in
    front of a leading digit (a design name may hold both; a Verilog identifier may not)."""
    ident = name.replace("-", "_")
    return ("d_" if ident[:1].isdigit() else "") + ident + "_top"


def new(name: str, root: Path | None = None, cores: Path | None = None) -> list[str]:
    """Write cores/<name>/ (design.yaml, <name>.core, rtl/<top>.v, <name>.xdc) in the project; <top> is
    top_module(name), a legal Verilog identifier."""
    if not designs.NAME_PATTERN.fullmatch(name) or name.startswith("-"):
        raise InitError(f"design name {name!r} is not usable: letters, digits, '_' and '-' (not first), "
                        f"at most 64 characters, e.g. `kabe new my_fifo`")
    root = root or paths.require_project("new")
    folder = Path(cores or paths.CORES) / name
    if folder.exists():
        raise InitError(f"{folder} already exists; kabe writes no file over yours (pick another name)")
    vlnv = f"user:design:{name}:0.1.0"
    top = top_module(name)

    board = config.value(config.load(root / "pyproject.toml"), "default_board")
    board_line = (f"board: {board}" if board else "# board: <profile>  # none set: name one, or set [tool.kabe] default_board")

    def fill(template: str) -> str:
        return (_template("new", template).replace("{top}", top).replace("{name}", name).replace("{vlnv}", vlnv)
                .replace("{board_line}", board_line))

    files = {folder / "design.yaml": fill("design.yaml"), folder / f"{name}.core": fill("design.core"),
             folder / "rtl" / f"{top}.v": fill("top.v"), folder / f"{name}.xdc": fill("design.xdc")}
    said = [f"wrote {p}" for p in _write_all(files)]
    if top != f"{name}_top":
        said.append(f"the top module is {top}: a Verilog name cannot hold '-' or start with a digit")
    said.append(f"next: `doit build:{name}` (or `kabe build {name}`)")
    return said
