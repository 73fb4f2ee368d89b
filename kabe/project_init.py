"""`kabe init` and `kabe new <design>`: the skeleton of a project that uses kabe, and of one design.

The files come from kabe/project_templates/ (package data, so a pip-installed kabe writes the same).
Neither verb overwrites anything: a file that already exists is refused in one line (exit 2) before
anything is written, so a half-made skeleton never hides a user's file. The one file init may add
to is pyproject.toml: a [tool.kabe] table is appended when the file has none.
"""

from __future__ import annotations

import subprocess
from importlib import resources
from pathlib import Path

from kabe import designs, paths
from kabe.errors import UserError

_TEMPLATES = resources.files("kabe") / "project_templates"
SETTINGS_TABLE = """
# kabe's settings (written by `kabe init`). flow: open | vivado | auto (vivado when `vivado` is on PATH).
[tool.kabe]
flow = "auto"
# cores_dir = "cores"          # the project's folders, relative to this file (these are the defaults)
# constraints_dir = "constraints"
# reports_dir = "reports"
# build_dir = "build"
"""
DODO = "from kabe.doit_tasks import *  # noqa: F401,F403 - kabe's verbs: doit list\n"
GITIGNORE_LINES = ("/build/", "/reports/", ".doit.db*", ".doit.sqlite3*")  # doit state: kabe uses SQLite


class InitError(UserError):
    """`kabe init` / `kabe new` would overwrite a file, or was run in the wrong place."""


def _template(*parts: str) -> str:
    return _TEMPLATES.joinpath(*parts).read_text()


def _git_top(folder: Path) -> Path:
    try:
        out = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=folder, capture_output=True, text=True,
                             check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
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


def init(folder: Path | None = None) -> list[str]:
    """Write the skeleton at the top of the git repository holding `folder` (default: cwd). Returns
    the lines to print: one per file written or extended."""
    top = _git_top(Path(folder or Path.cwd()))
    pyproject = top / "pyproject.toml"
    if paths._tool_kabe(pyproject) is not None:
        raise InitError(f"{pyproject} has a [tool.kabe] table already: this is a kabe project")
    new = {top / "dodo.py": DODO,
           top / ".github" / "workflows" / "kabe.yml": _template("init", "github-workflow.yml"),
           top / ".gitlab-ci.yml": _template("init", "gitlab-ci.yml"),
           top / "cores" / ".gitkeep": "", top / "constraints" / ".gitkeep": ""}
    _refuse_existing(new)
    said = []
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
    gitignore = top / ".gitignore"
    have = set(gitignore.read_text().splitlines()) if gitignore.exists() else set()
    missing = [line for line in GITIGNORE_LINES if line not in have]
    if missing:
        old = gitignore.read_text() if gitignore.exists() else ""
        with open(gitignore, "a") as f:
            f.write(("" if old.endswith("\n") or not old else "\n") + "\n".join(missing) + "\n")
        said.append(f"added {', '.join(missing)} to {gitignore}")
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

    def fill(template: str) -> str:
        return _template("new", template).replace("{top}", top).replace("{name}", name).replace("{vlnv}", vlnv)

    files = {folder / "design.yaml": fill("design.yaml"), folder / f"{name}.core": fill("design.core"),
             folder / "rtl" / f"{top}.v": fill("top.v"), folder / f"{name}.xdc": fill("design.xdc")}
    said = [f"wrote {p}" for p in _write_all(files)]
    if top != f"{name}_top":
        said.append(f"the top module is {top}: a Verilog name cannot hold '-' or start with a digit")
    said.append(f"next: `doit build:{name}` (or `kabe build {name}`)")
    return said
