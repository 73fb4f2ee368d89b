"""The base commit built here, when no trusted build of it can be found: nothing unjudged passes.

A design whose design.yaml has `regressions:` is judged against the base commit's build. That build
may be missing for reasons a change's author can cause or exploit: the archive pruned or emptied, a
failed pull, a junk unit pre-empting main's honest one, an archive ref the change points elsewhere.
Saying "not judged" and passing would let any of them pass a regression. The base commit is in the
clone (it is the merge-base), so kabe ci builds it itself: a detached `git worktree` of the base
commit, `kabe build <design>` run there by the base's own kabe when the project holds it (kabe's own
repository) or this one's, in a process of its own. Its record is judged against and the worktree
removed with everything in it: nothing of it lands in reports/ (a later push would share it).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from kabe.base import provenance
from kabe.base import git
from kabe.records import lineage
from kabe.records import load as record_load
from kabe.store.archive import archive_dir

BUILD_TIMEOUT_S = 6 * 3600  # a Vivado build of the base takes what a build takes
_CI_VARS_KEPT_OUT = ("KABE_SIGNING_KEY", "KABE_ARCHIVE_TOKEN", "KABE_VARIANT")


def design_at(root: Path, commit: str, design: str) -> bool:
    """Does the design exist at `commit` (its design.yaml, where this checkout has it)? Read from git."""
    from kabe.project import designs

    try:
        yaml_file = designs.get(design).yaml_file
    except Exception:  # noqa: BLE001 - a broken design.yaml is its own outcome, said by the build
        return True
    if not Path(yaml_file).resolve().is_relative_to(Path(root).resolve()):
        return True  # not this checkout's file (kabe ci run on another folder than kabe's project): cannot tell
    rel = Path(yaml_file).resolve().relative_to(Path(root).resolve()).as_posix()
    return lineage.git(root, "cat-file", "-e", f"{commit}:./{rel}") is not None


def build_base(root: Path, base: str, design: str, flow: str, reports_root: Path,
               console: Console) -> tuple[dict | None, str]:
    """(the base commit's record built here, '') or (None, why it could not be built)."""
    top = lineage.git(root, "rev-parse", "--show-toplevel")
    if top is None:
        return None, "the project is not in a git repository, so its base commit cannot be checked out"
    prefix = provenance.project_prefix(root) or ""
    console.print(f"[bold]{escape(design)}[/]: no trusted build of the base commit {base[:12]}: building it here "
                  f"(a worktree of {base[:12]}) to judge the regressions against", soft_wrap=True)
    with tempfile.TemporaryDirectory(prefix="kabe-ci-base-") as tmp:
        tree = Path(tmp) / "base"
        added = git.worktree_add(top, tree, base)
        if added.returncode != 0:
            return None, f"git worktree add of {base[:12]} failed: {added.stderr.strip()[-300:]}"
        try:
            project = tree / prefix
            return _build_in(project, base, design, flow, reports_root)
        finally:
            git.worktree_remove(top, tree)
            git.run(top, "worktree", "prune", check=False)


def _build_in(project: Path, base: str, design: str, flow: str, reports_root: Path) -> tuple[dict | None, str]:
    env = {k: v for k, v in os.environ.items() if k not in _CI_VARS_KEPT_OUT}
    env["KABE_PROJECT"] = str(project)
    if (project / "kabe" / "__init__.py").is_file():  # kabe's own repository: the base's kabe builds the base
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(project), env.get("PYTHONPATH", "")) if p)
    try:
        proc = subprocess.run([sys.executable, "-m", "kabe", "build", design, "--flow", flow], cwd=project, env=env,
                              capture_output=True, text=True, timeout=BUILD_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return None, f"its build did not finish in {BUILD_TIMEOUT_S} s"
    commit = provenance.Commit(base, False)
    built = archive_dir(commit, design, flow, project / "reports")
    if not (built / "metrics.json").is_file():
        said = [ln for ln in (proc.stdout + proc.stderr).splitlines() if ln.strip()]
        return None, f"its build archived nothing (exit {proc.returncode}: {escape(said[-1][-300:]) if said else 'no output'})"
    checked = record_load.checked(built / "metrics.json", where=(base, design, flow))
    if isinstance(checked, record_load.Invalid):
        return None, f"its build's record is not valid ({checked.reason})"
    # judged against, never kept in reports/: a later `kabe archive push` would otherwise share a unit this
    # run made for its own judgement (on a runner a change's requirements may have set up)
    return checked.record, ""
