"""The settings that decide what a change is judged against, read from the default branch's commit.

A pipeline for a change (a pull or merge request, a merge queue, a push to another branch, a CI kabe
does not recognise) checks out the change itself, whose pyproject.toml could say anything: point
`archive_ref` at an empty ref (no base build, nothing judged), name its own `default_branch`, its
own `allowed_signers`, or widen the signer policy. So in such a pipeline these keys (TRUST_KEYS) are
read from the default branch's commit and pinned for the run (pinned()); every reader of them
(kabe.store.store's archive ref, kabe.records.lineage's base branch, the archive's pinned root
commit, the signers) asks value() here, which answers the pinned value whatever the checkout says.

Which branch is the default one is never the change's word either: the CI's (GitHub's event payload,
GitLab's CI_DEFAULT_BRANCH), else the remote's HEAD, else main or master.
"""

from __future__ import annotations

import tomllib
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Mapping

from kabe.project import config
from kabe.base.errors import bounded

# What decides the base and whom to trust; the other settings (the flow, budgets) are the change's own.
TRUST_KEYS = ("archive_ref", "allowed_signers", "default_branch", "trusted_branches", "archive_root", "unknown_ci")


@dataclass(frozen=True)
class Trusted:
    source: str  # where they were read: "refs/remotes/origin/main's pyproject.toml"
    settings: dict = field(default_factory=dict)  # TRUST_KEYS as that commit sets them (absent: default)


_pinned: list[Trusted] = []


@contextmanager
def pinned(trusted: Trusted):
    """Within: value() answers the trusted settings, never the checkout's."""
    _pinned.append(trusted)
    try:
        yield trusted
    finally:
        _pinned.pop()


def current() -> Trusted | None:
    return _pinned[-1] if _pinned else None


def value(key: str, settings: Mapping[str, Any] | None = None) -> Any:
    """A trust setting as set (None when not set: the caller knows its default): the pinned one (the
    default branch's) in a change's pipeline, else the checkout's."""
    assert key in TRUST_KEYS, key
    if _pinned:
        return _pinned[-1].settings.get(key)
    settings = config.load() if settings is None else settings
    return settings.get(key)


def parse(text: str | None, source: str) -> tuple[dict, str | None]:
    """(the TRUST_KEYS of a pyproject.toml's [tool.kabe], why it could not be read or None)."""
    if text is None:
        return {}, None
    try:
        section = tomllib.loads(text).get("tool", {}).get("kabe", {})
        if not isinstance(section, dict):
            raise ValueError("[tool.kabe] is not a table")
        wanted = {k: v for k, v in section.items() if k in TRUST_KEYS}
        return config.validate(wanted, source=source), None
    except (tomllib.TOMLDecodeError, ValueError, AttributeError) as e:
        return {}, f"{source} cannot be read ({bounded(str(e), 160)}): its defaults are used"


def described(trusted: Trusted, own: Mapping[str, Any]) -> str:
    """One line: each trust setting, where it came from, and what of the change's own is not used."""
    parts = []
    for key in ("archive_ref", "allowed_signers", "default_branch", "trusted_branches", "archive_root"):
        v = trusted.settings.get(key)
        parts.append(f"{key} {v!r}" if v is not None else f"{key} default")
    ignored = [k for k in TRUST_KEYS if k in own and own.get(k) != trusted.settings.get(k)]
    return (f"trust settings from {trusted.source}: " + ", ".join(parts)
            + (f"; this change's own {', '.join(ignored)} not used" if ignored else ""))
