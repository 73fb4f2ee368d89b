"""kabe.base.git: every git failure kabe meets is one error type, GitError, a one-line UserError."""

from __future__ import annotations

import subprocess

import pytest

from kabe.base import git, provenance
from kabe.base.errors import UserError


def test_a_failing_command_is_a_git_error_naming_the_command_and_gits_reason(tmp_path):
    with pytest.raises(git.GitError, match=r"git rev-parse --verify nosuch failed in .*fatal:"):
        git.run(tmp_path, "rev-parse", "--verify", "nosuch")
    assert git.run(tmp_path, "rev-parse", "--verify", "nosuch", check=False).returncode != 0  # unchecked: the caller reads it


def test_git_missing_is_a_git_error_not_a_traceback(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # no git here
    with pytest.raises(git.GitError, match="git is not on PATH"):
        git.run(tmp_path, "status")
    with pytest.raises(git.RefError, match="`kabe diff` needs it"):
        git.resolve("HEAD", tmp_path)
    assert provenance.current_commit(tmp_path).sha == "nogit"


def test_an_unknown_ref_is_a_git_error_too(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    with pytest.raises(git.GitError, match="unknown commit or ref 'nosuch'"):
        git.resolve("nosuch", tmp_path)
    assert issubclass(git.RefError, git.GitError) and issubclass(git.GitError, UserError)
