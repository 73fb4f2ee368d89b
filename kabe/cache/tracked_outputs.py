"""kabe's outputs are never taken from the repository: a build folder or an archived unit that git tracks
is refused before anything reuses it.

Why: kabe reuses what it finds under build/ and reports/ by a key anyone can compute from the inputs: a
cache entry (reports/<commit>/<design>/<flow>, kabe.cache.cache), a base build `kabe ci` compares against,
a compiled Verilator model (build/sim/<design>/<key>/), FuseSoC's resolved targets (build/fusesoc/). On a
CI runner those folders start empty, so whatever is in them came from the commit being tested. A change
that force-adds (`git add -f`) a forged unit or a prebuilt simulation model under them would have it
reused: a cache hit for a design that fails, a regression base with made-up numbers, a simulation run
by a binary from the change itself (red team 4a, findings 01, 02 and 05). kabe trusts only what it built
on this machine or pulled with a signature that verifies (kabe.store.signing), so a tracked file there
is bad input: one line naming it and the fix, exit 2.

Allowed: files directly in the reports folder that are not kabe's (its README.md); nothing under build/.
A project outside git has nothing tracked.
"""

from __future__ import annotations

import functools
import os
import subprocess
from pathlib import Path

from kabe.base.errors import UserError
from kabe.base import git
from kabe.base.paths import ROOT, project_dirs
from kabe.cache.cache import INDEX_NAME  # the cache's index: kabe's own file, never the repository's


class TrackedOutputs(UserError):
    """Files git tracks under the build or reports folder."""


def tracked(root: Path = ROOT) -> list[str]:
    """The files git tracks where only kabe writes (paths relative to the project), [] outside git."""
    dirs = project_dirs(root)
    build, reports = dirs["build_dir"], dirs["reports_dir"]
    try:
        out = git.run(root, "ls-files", "-z", "--", str(build), str(reports), check=False, timeout=60)
    except (git.GitError, OSError, subprocess.TimeoutExpired):
        return []
    if out.returncode != 0:  # not a git repository (a shipped sweep tree, a project outside git)
        return []
    bad = []
    for name in filter(None, out.stdout.decode(errors="replace").split("\0")):
        path = (Path(root) / name).resolve()
        top_level_doc = path.parent == reports.resolve() and path.name != INDEX_NAME
        if not top_level_doc:
            bad.append(os.path.relpath(path, root))
    return sorted(bad)


@functools.lru_cache(maxsize=16)
def _checked(root: str) -> None:
    bad = tracked(Path(root))
    if bad:
        shown = ", ".join(bad[:3]) + (f" and {len(bad) - 3} more" if len(bad) > 3 else "")
        raise TrackedOutputs(
            f"git tracks {len(bad)} file(s) in kabe's output folders ({shown}): kabe reuses only what it built "
            f"here or pulled signed, never builds, archives or simulation models taken from a commit. Fix: "
            f"`git rm -r --cached` them (the folders are in .gitignore; share builds with `kabe archive push`)")


def check(root: Path = ROOT) -> None:
    """Raise TrackedOutputs when git tracks a file under the project's build or reports folder (checked
    once per process and project: every build and simulation asks)."""
    _checked(str(Path(root).resolve()))
