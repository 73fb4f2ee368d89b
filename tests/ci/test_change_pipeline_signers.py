"""A pipeline for a change (a pull request) trusts the base branch's allowed signers, never the
change's own: a change that adds its author's key to .kabe/allowed_signers must not get units signed
with that key believed by its own pipeline (kabe.ci.base_signers)."""

from __future__ import annotations

import io
import subprocess
from pathlib import Path

import pytest
from rich.console import Console

from kabe import build
from kabe.ci import CiOptions, run
from kabe.ci import base_signers
from kabe.records import lineage
from kabe.store import signing

from .conftest import clone, git, monorepo, write_archive


def _key(where: Path, name: str) -> Path:
    key = where / name
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(key)], check=True)
    return key


def _signers(repo: Path, *keys: Path) -> None:
    (repo / ".kabe").mkdir(exist_ok=True)
    (repo / ".kabe" / "allowed_signers").write_text(
        "".join(f'{k.name}@kabe namespaces="kabe-archive" {k.with_suffix(".pub").read_text()}' for k in keys))
    git(repo, "add", ".kabe/allowed_signers")


@pytest.fixture()
def change(remote, tmp_path):
    """main trusts CI's key; the change (branch `feature`) adds the attacker's key, and this commit's
    archived build is signed with it."""
    ci_key, attacker = _key(tmp_path, "ci"), _key(tmp_path, "attacker")
    repo = clone(remote, tmp_path / "work")
    _signers(repo, ci_key)
    git(repo, "commit", "-qm", "trust CI's key")
    git(repo, "push", "-q", "origin", "main")
    git(repo, "checkout", "-qb", "feature")
    _signers(repo, ci_key, attacker)
    git(repo, "commit", "-qm", "also trust mine")
    head = git(repo, "rev-parse", "HEAD")
    unit = f"{head}/stage2/open"
    d = write_archive(repo / "reports", head, lut=232, wns=2.0)
    (d / signing.SIGNATURE_FILE).write_bytes(signing.sign_unit(unit, signing.hash_dir(d), attacker))
    return repo, d, unit, ci_key


def _ci_for_a_change(repo: Path, monkeypatch, base_ref: str = "main") -> list[str]:
    monkeypatch.setenv("GITHUB_EVENT_NAME", "pull_request")
    monkeypatch.setenv("GITHUB_BASE_REF", base_ref)

    def no_tools_here(name, *a, **kw):  # was a build asked for (the archived one not believed)?
        raise build.BuildError(f"{name.name}: asked to build")

    monkeypatch.setattr(build, "build", no_tools_here)
    out = io.StringIO()
    opts = CiOptions(designs=["stage2"], flow="open", summary=repo / "reports" / "s.md",
                     junit=repo / "reports" / "j.xml", pull=False)
    run(opts, Console(file=out, width=400, color_system=None), root=repo, reports_root=repo / "reports")
    return out.getvalue().strip().splitlines()


def test_the_changes_own_key_is_not_trusted_by_its_pipeline(change, monkeypatch):
    repo, d, unit, _ = change
    # the change's own list would believe the unit: that is the hole
    assert signing.verify_dir(d, unit, repo / ".kabe" / "allowed_signers").ok
    lines = _ci_for_a_change(repo, monkeypatch)
    assert ("kabe ci: a pipeline for a change: trusting the signers of .kabe/allowed_signers on "
            "refs/remotes/origin/main, not this change's (this change edits .kabe/allowed_signers: its keys "
            "are trusted once it is merged)") in lines
    said = next(ln for ln in lines if "archived build is not used" in ln)
    assert "its signature does not verify (signed by a key not in" in said
    assert any("stage2: asked to build" in ln for ln in lines)
    assert not signing.is_pinned()  # the pin ends with the run


def test_a_unit_signed_by_the_base_branchs_key_is_still_checked_as_usual(change, monkeypatch):
    repo, d, unit, ci_key = change
    (d / signing.SIGNATURE_FILE).write_bytes(signing.sign_unit(unit, signing.hash_dir(d), ci_key))
    lines = _ci_for_a_change(repo, monkeypatch)
    said = next(ln for ln in lines if "archived build is not used" in ln)
    # past the signature: now its numbers must be what its raw reports say (they are not: written by hand)
    assert "its numbers disagree with its raw reports" in said


def test_without_the_default_branch_no_key_is_trusted(change, monkeypatch):
    repo, d, unit, ci_key = change
    (d / signing.SIGNATURE_FILE).write_bytes(signing.sign_unit(unit, signing.hash_dir(d), ci_key))
    git(repo, "remote", "set-url", "origin", str(repo.parent / "gone.git"))  # nothing to fetch it from
    git(repo, "update-ref", "-d", "refs/remotes/origin/main")
    git(repo, "update-ref", "-d", "refs/remotes/origin/HEAD")
    git(repo, "branch", "-D", "main")
    lines = _ci_for_a_change(repo, monkeypatch, base_ref="no-such-branch")
    assert any("here to read the trust settings from: their defaults are used" in ln for ln in lines), lines
    assert any("no base branch here to read the allowed signers from, so no pulled unit is trusted" in ln
               for ln in lines)
    said = next(ln for ln in lines if "archived build is not used" in ln)
    assert "its signature does not verify" in said


def test_a_project_below_its_repositorys_top_reads_its_own_signers_from_the_base(remote, tmp_path, monkeypatch):
    """In a monorepo's fpga/, the base branch's list is read as <ref>:./<path>, relative to the
    project's folder: fpga/pyproject.toml's allowed_signers and the file it names under fpga/, never a
    file of that name at the repository's top."""
    top, fpga = monorepo(remote, tmp_path / "work")
    (fpga / "pyproject.toml").write_text('[tool.kabe]\ndefault_board = "pynq-z1"\nflow = "open"\nallowed_signers = "keys/signers"\n')
    (fpga / "keys").mkdir()
    (fpga / "keys" / "signers").write_text("main's list\n")
    (top / "keys").mkdir()
    (top / "keys" / "signers").write_text("the top's file of the same name\n")
    git(top, "add", "-A")
    git(top, "commit", "-qm", "signers")
    git(top, "push", "-q", "origin", "main")
    git(top, "checkout", "-qb", "feature")
    (fpga / "keys" / "signers").write_text("the change's list\n")
    git(top, "commit", "-qam", "mine")
    monkeypatch.setenv("GITHUB_BASE_REF", "main")
    dest, note = base_signers.base_allowed_signers(fpga, "origin", tmp_path / "trusted")
    assert dest == tmp_path / "trusted" and dest.read_text() == "main's list\n"
    assert note == ("trusting the signers of keys/signers on refs/remotes/origin/main, not this change's "
                    "(this change edits keys/signers: its keys are trusted once it is merged)")


@pytest.mark.parametrize("env, change, target", [
    ({"GITHUB_EVENT_NAME": "pull_request", "GITHUB_BASE_REF": "main"}, True, "main"),
    # a merge queue's run (red team 4a, finding 06): the change's own signers were trusted
    ({"GITHUB_EVENT_NAME": "merge_group", "GITHUB_REF": "refs/heads/gh-readonly-queue/main/pr-7-0123abcd"},
     True, "main"),
    ({"GITHUB_EVENT_NAME": "push", "GITHUB_REF": "refs/heads/feature"}, True, None),
    ({"GITHUB_EVENT_NAME": "push", "GITHUB_REF": "refs/heads/main"}, False, None),
    ({"CI_MERGE_REQUEST_IID": "3", "CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "main"}, True, "main"),
    ({"CI_COMMIT_BRANCH": "feature", "CI_DEFAULT_BRANCH": "main"}, True, None),
    ({"CI_COMMIT_BRANCH": "main", "CI_DEFAULT_BRANCH": "main"}, False, None),
    ({}, False, None),
])
def test_what_a_change_pipeline_is(env, change, target, monkeypatch, tmp_path):
    event = tmp_path / "event.json"
    event.write_text('{"repository": {"default_branch": "main"}}')
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(event))
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    assert base_signers.change_pipeline() is change
    assert lineage.ci_target_branch() == target


def test_a_change_cannot_pick_its_own_base_branch(remote, tmp_path, monkeypatch):
    """Red team 4a, finding 07: `default_branch = "feature"` in the change's pyproject made the base the
    change's own previous commit (never archived), so no regression was judged. In a change's pipeline
    the CI's target branch comes first; outside CI the setting still does."""
    repo = clone(remote, tmp_path / "work")
    settings = {"default_branch": "feature"}
    assert lineage.base_branch(repo, settings=settings) == "feature"
    monkeypatch.setenv("GITHUB_EVENT_NAME", "pull_request")
    monkeypatch.setenv("GITHUB_BASE_REF", "main")
    assert lineage.base_branch(repo, settings=settings) == "main"
