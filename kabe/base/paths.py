"""Where things live. Everything else asks here instead of guessing.

Two places, never mixed up:
- the project: the user's repository kabe runs in, or a folder of it (a monorepo's fpga/; kabe.base.provenance
  and docs/your_design.md), with its designs, settings, reports and builds. It is
  found from the working directory, once, when kabe is imported: `KABE_PROJECT` if set, else the
  nearest folder (the working directory or an ancestor) with a pyproject.toml holding a [tool.kabe]
  table, or a dodo.py that imports kabe's tasks. kabe's own repository is one such project. Found
  once because every module binds ROOT at import (`from kabe.base.paths import ROOT`), and a subprocess
  kabe starts finds its own from its own working directory (a copied or cloned project included).
- the package: kabe's own files (Tcl, the sim harness, templates, schemas), PACKAGE below, read as
  package data wherever kabe is installed.

When no project is found, ROOT is the working directory and FOUND is False: `kabe init` makes one
there, and the verbs that need a project say so (require_project) instead of writing into a stranger's
folder.
"""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path

from kabe.base.errors import UserError

PACKAGE = Path(__file__).resolve().parents[1]  # kabe's own files (package data)
# kabe's FuseSoC library (package data): the top generator kabe:gen:top and the generators' shared helper.
# Every FuseSoC call of kabe adds it as a cores root, so a project's core may depend on kabe:gen:top.
GENERATORS = PACKAGE / "generators"
# A dodo.py that is kabe's: it imports kabe (`from kabe.doit_tasks import *`, as `kabe init` writes it).
_KABE_DODO = re.compile(r"^\s*(from\s+kabe(\.\w+)*\s+import|import\s+kabe)\b", re.M)
# The project's folders and their [tool.kabe] keys (relative to the project root).
DIR_KEYS = {"cores_dir": "cores", "constraints_dir": "constraints", "ip_dir": "ip", "scripts_dir": "scripts",
            "reports_dir": "reports", "build_dir": "build", "boards_dir": "boards"}


class ProjectNotFound(UserError):
    """A verb that needs a project was run outside one (one line, exit 2)."""


def _tool_kabe(pyproject: Path) -> dict | None:
    """The [tool.kabe] table of a pyproject.toml, or None when it has none (or cannot be read)."""
    try:
        data = tomllib.loads(pyproject.read_text())
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    tool = data.get("tool")
    section = tool.get("kabe") if isinstance(tool, dict) else None
    return section if isinstance(section, dict) else None


def _is_kabe_dodo(dodo: Path) -> bool:
    try:
        return _KABE_DODO.search(dodo.read_text(errors="replace")) is not None
    except OSError:
        return False


def _names_tool_kabe(pyproject: Path) -> bool:
    """A [tool.kabe] table, or a file that does not parse but has one: that is still the project, and
    kabe.project.config.load() then says what is wrong with the TOML (not "no project here")."""
    if _tool_kabe(pyproject) is not None:
        return True
    try:
        text = pyproject.read_text(errors="replace")
    except OSError:
        return False
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return re.search(r"^\s*\[\s*tool\.kabe\s*[\].]", text, re.M) is not None
    return False


def is_project(folder: Path) -> bool:
    folder = Path(folder)
    return _names_tool_kabe(folder / "pyproject.toml") or _is_kabe_dodo(folder / "dodo.py")


def find_root(start: Path | None = None, environ=os.environ) -> tuple[Path, bool]:
    """(project root, found). KABE_PROJECT wins; else the nearest marked folder from start upward."""
    named = environ.get("KABE_PROJECT")
    if named:
        folder = Path(named).expanduser().resolve()
        return folder, folder.is_dir()  # a folder that is not there is no project (require_project says so)
    here = Path(start or os.getcwd()).resolve()
    for folder in (here, *here.parents):
        if is_project(folder):
            return folder, True
    return here, False


def project_dirs(root: Path) -> dict[str, Path]:
    """The project's folders, from [tool.kabe]'s *_dir keys or their defaults. A value that is not a
    plain relative path is kept at its default here; kabe.project.config.load() refuses it in one line."""
    section = _tool_kabe(Path(root) / "pyproject.toml") or {}
    out = {}
    for key, default in DIR_KEYS.items():
        v = section.get(key, default)
        ok = isinstance(v, str) and v.strip() and not Path(v).is_absolute() and ".." not in Path(v).parts
        out[key] = Path(root) / (v if ok else default)
    return out


def require_project(verb: str) -> Path:
    if not FOUND:
        raise ProjectNotFound(
            f"{ROOT}: not inside a kabe project (no pyproject.toml with a [tool.kabe] table, and no dodo.py "
            f"importing kabe, here or above{'; KABE_PROJECT names no folder' if os.environ.get('KABE_PROJECT') else ''}); "
            f"`kabe {verb}` needs one. Fix: run `kabe init` in the project's folder (your repository's top, or a folder of it), or set KABE_PROJECT "
            f"to the project's folder")
    return ROOT


ROOT, FOUND = find_root()
_DIRS = project_dirs(ROOT)
CORES = _DIRS["cores_dir"]
CONSTRAINTS = _DIRS["constraints_dir"]
IP = _DIRS["ip_dir"]  # the project's own IP (block-design files); kabe's Vivado Tcl is package data
SCRIPTS = _DIRS["scripts_dir"]  # the project's generator scripts (FuseSoC generators under cores/ name them)
REPORTS = _DIRS["reports_dir"]
BUILD = _DIRS["build_dir"]
BOARDS = _DIRS["boards_dir"]  # the project's own board profiles (<key>.yaml); kabe's ship in kabe/boards/profiles
