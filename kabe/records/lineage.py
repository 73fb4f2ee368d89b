"""Where a commit stands: the base branch, the base commit a change is judged against, which
archived commits lie on the base branch and which only on the current branch.

Plain git, read-only. The base branch is, first found wins: [tool.kabe] default_branch, the CI's
own word for a pull/merge request's target or the default branch (GITHUB_BASE_REF,
CI_MERGE_REQUEST_TARGET_BRANCH_NAME, the GitHub event's repository.default_branch,
CI_DEFAULT_BRANCH), the remote's HEAD, then main or master. In a change's pipeline (change_pipeline)
the CI's word comes before the change's own default_branch.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from kabe.project import config
from kabe.base import git as base_git  # this module's git() reads, returning None
from kabe.base.errors import UserError
from kabe.base.paths import ROOT
from kabe.store import trusted_settings


class LineageError(UserError):
    pass


def git(root: Path, *args: str) -> str | None:
    """stdout of a read-only git command, or None when it fails (no such ref, not a repository)."""
    try:
        out = base_git.run(root, *args, check=False, text=True)
    except base_git.GitError:
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def resolve(ref: str, root: Path = ROOT) -> str | None:
    return git(root, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")


def _github_default_branch() -> str | None:
    path = os.environ.get("GITHUB_EVENT_PATH")
    if not path:
        return None
    try:
        return json.loads(Path(path).read_text()).get("repository", {}).get("default_branch")
    except (OSError, ValueError, AttributeError):
        return None


_MERGE_QUEUE_REF = re.compile(r"^refs/heads/gh-readonly-queue/(.+)/pr-\d+-[0-9a-f]+$")


def ci_target_branch() -> str | None:
    """The branch the CI says a change is for: a pull request's base, a merge request's target, or the
    branch a GitHub merge queue merges into (its ref is gh-readonly-queue/<branch>/pr-<n>-<sha>)."""
    for name in (os.environ.get("GITHUB_BASE_REF"), os.environ.get("CI_MERGE_REQUEST_TARGET_BRANCH_NAME")):
        if name:
            return name
    m = _MERGE_QUEUE_REF.match(os.environ.get("GITHUB_REF", ""))
    return m.group(1) if m else None


def ci_default_branch() -> str | None:
    """The repository's default branch as the CI names it (GitHub's event payload, GitLab's variable)."""
    return _github_default_branch() or os.environ.get("CI_DEFAULT_BRANCH") or None


KNOWN_CI = ("GITHUB_ACTIONS", "GITHUB_EVENT_NAME", "GITLAB_CI", "CI_MERGE_REQUEST_IID", "CI_COMMIT_BRANCH",
             "CI_DEFAULT_BRANCH")


def unknown_ci() -> bool:
    """CI says it is one ($CI, as most CI services set it) but none kabe reads (GitHub's, GitLab's)."""
    flag = os.environ.get("CI", "").strip().lower()
    return flag not in ("", "0", "false", "no") and not any(os.environ.get(v) for v in KNOWN_CI)


def change_pipeline(root: Path = ROOT, remote: str = "origin") -> bool:
    """A CI run for a change, not for the default branch's own push: a pull or merge request, a merge
    queue's run, or a push to any other branch. Such a run takes nothing the change itself says about
    what to trust or compare against (allowed signers, the base branch): the change could say anything.
    A CI kabe does not recognise cannot say which it is: a change, unless the default branch's own
    settings say `unknown_ci = "default-branch"` and HEAD is that branch's tip."""
    if unknown_ci():
        return not _unknown_ci_is_default_branch(root, remote)
    event = os.environ.get("GITHUB_EVENT_NAME", "")
    if event.startswith("pull_request") or event == "merge_group" or os.environ.get("CI_MERGE_REQUEST_IID"):
        return True
    github_ref = os.environ.get("GITHUB_REF", "")
    if event and github_ref.startswith("refs/heads/"):
        default = _github_default_branch()
        return default is not None and github_ref.removeprefix("refs/heads/") != default
    gitlab_branch, gitlab_default = os.environ.get("CI_COMMIT_BRANCH"), os.environ.get("CI_DEFAULT_BRANCH")
    return bool(gitlab_branch and gitlab_default and gitlab_branch != gitlab_default)


def _unknown_ci_is_default_branch(root: Path, remote: str) -> bool:
    name = default_branch(root, remote)
    if name is None:  # no default branch known here: HEAD cannot be its tip (and base_branch_ref(None) would ask
        return False  # base_branch, which asks change_pipeline again)
    ref = base_branch_ref(root, remote, name)
    if ref is None or resolve("HEAD", root) != resolve(ref, root):
        return False
    settings, _why = trusted_settings.parse(git(root, "show", f"{ref}:./pyproject.toml"), f"{ref}:pyproject.toml")
    return settings.get("unknown_ci") == "default-branch"


def default_branch(root: Path = ROOT, remote: str = "origin") -> str | None:
    """The repository's default branch as nobody's change can say it: the CI's word, else the remote's
    HEAD, else main or master (the one that exists here)."""
    name = ci_default_branch()
    if name:
        return name
    head = git(root, "symbolic-ref", "--quiet", f"refs/remotes/{remote}/HEAD")
    if head:
        return head.removeprefix(f"refs/remotes/{remote}/")
    for name in ("main", "master"):
        if resolve(f"refs/remotes/{remote}/{name}", root) or resolve(f"refs/heads/{name}", root):
            return name
    return None


def base_branch(root: Path = ROOT, remote: str = "origin", settings: dict | None = None) -> str | None:
    """The branch builds are compared against. In a change's pipeline the CI's word comes first, then the
    default branch's own [tool.kabe] default_branch (pinned by kabe ci: kabe.store.trusted_settings),
    never the change's: its default_branch could name a branch without builds, so that nothing is judged."""
    if change_pipeline(root, remote):
        pinned = trusted_settings.current()
        names = (ci_target_branch(), ci_default_branch(), pinned.settings.get("default_branch") if pinned else None)
    else:
        settings = config.load(root / "pyproject.toml") if settings is None else settings
        names = (settings.get("default_branch"), ci_target_branch(), ci_default_branch())
    for name in names:
        if name:
            return str(name)
    head = git(root, "symbolic-ref", "--quiet", f"refs/remotes/{remote}/HEAD")
    if head:
        return head.removeprefix(f"refs/remotes/{remote}/")
    for name in ("main", "master"):
        if resolve(f"refs/remotes/{remote}/{name}", root) or resolve(f"refs/heads/{name}", root):
            return name
    return None


def base_branch_ref(root: Path = ROOT, remote: str = "origin", branch: str | None = None) -> str | None:
    """The ref holding the base branch here: the remote's copy first (a CI checkout has no local branch)."""
    branch = branch or base_branch(root, remote)
    if not branch:
        return None
    for ref in (f"refs/remotes/{remote}/{branch}", f"refs/heads/{branch}"):
        if resolve(ref, root):
            return ref
    return None


def current_branch(root: Path = ROOT) -> str | None:
    """The checked-out branch; in a CI's detached checkout, the branch the CI says it built."""
    name = git(root, "symbolic-ref", "--quiet", "--short", "HEAD")
    if name:
        return name
    if os.environ.get("GITHUB_REF", "").startswith("refs/heads/"):
        return os.environ["GITHUB_REF"].removeprefix("refs/heads/")
    return os.environ.get("CI_COMMIT_BRANCH") or None


@dataclass(frozen=True)
class Base:
    commit: str | None  # the commit a change is judged against, None when there is none
    how: str  # one phrase saying how it was chosen, or why there is none


def base_commit(root: Path = ROOT, base: str | None = None, remote: str = "origin") -> Base:
    """--base REF when given; else the merge-base of HEAD with the base branch. On the base branch
    itself (merge-base == HEAD) the base is HEAD's first parent: the previous commit there."""
    if base:
        sha = resolve(base, root)
        if sha is None:
            raise LineageError(f"--base {base}: no such commit here; fetch it or name another ref")
        return Base(sha, f"--base {base}")
    branch = base_branch(root, remote)
    ref = base_branch_ref(root, remote, branch)
    if ref is None:
        return Base(None, f"no base branch found ({branch or 'main/master'} is neither a local branch nor "
                          f"{remote}/{branch or 'main'}); set [tool.kabe] default_branch or pass --base REF")
    head = resolve("HEAD", root)
    merge_base = git(root, "merge-base", "HEAD", ref)
    if merge_base is None:
        shallow = git(root, "rev-parse", "--is-shallow-repository") == "true"
        return Base(None, f"HEAD and {ref} share no history" + (
            " (this is a shallow clone: fetch the full history, e.g. actions/checkout fetch-depth: 0)" if shallow else ""))
    if merge_base == head:
        parent = resolve("HEAD^", root)
        return Base(parent, f"the previous commit on {branch}") if parent else Base(None, f"HEAD is the first commit of {branch}")
    return Base(merge_base, f"the merge-base with {branch}")


def commits_on(ref: str, root: Path = ROOT) -> set[str]:
    out = git(root, "rev-list", ref)
    return set(out.split()) if out else set()


def order_refs(root: Path = ROOT) -> list[str]:
    """The refs whose history orders the archive: HEAD, and the base branch when it has moved on
    (a fresh clone of a branch pulls archives of base-branch commits that are not HEAD's ancestors)."""
    ref = base_branch_ref(root)
    return ["HEAD"] + ([ref] if ref else [])
