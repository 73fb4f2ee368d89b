"""A change is judged by what the default branch trusts (issue 36, items 1 and 4), in-process against real
git remotes: every trust setting comes from the default branch's commit and the run says so; a CI kabe does
not recognise is a change's pipeline; a protected branch the default branch names may have its own
signers; an archived unit stands for this commit's build only with this checkout's key; a unit signed for
a monorepo's fpga/ is not fpga2/'s build (the monorepo replay, to exit 1 with the regression named: placed
in the checkout, and pushed as fpga2's archive ref and pulled).
The builds are STAND-INs here (build.build returns the honest pull request's record): what is tested is
what kabe ci trusts, not the tools; tests/ci/test_change_attacks_e2e.py runs the tools."""

from __future__ import annotations

import io
import json
import subprocess
from pathlib import Path

from rich.console import Console

from kabe import build
from kabe.ci import CiOptions, base_signers, run
from kabe.records import lineage
from kabe.store import signing, store, trusted_settings

from .conftest import checkout_test_key, clone, git, monorepo, record, write_archive


def _key(where: Path, name: str) -> Path:
    key = where / name
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(key)], check=True)
    return key


def _line(key: Path) -> str:
    return f'{key.name}@kabe namespaces="kabe-archive" {key.with_suffix(".pub").read_text()}'


def _honest_pr_build(monkeypatch, asked: list):
    """build.build as a STAND-IN: the record the pull request's real build gives (tests/ci/test_change_attacks_e2e)."""
    def honest(design, flow=None, *, console=None, reports_root=None, **kw):
        from kabe.rules.verdict import DesignFacts, judge

        asked.append(design.name)
        rec = {**record("0" * 40, design.name, lut=299, wns=0.158), "cache_key": checkout_test_key().key}
        # judged as the real build judges its record: once, under the facts of the design kabe ci gave it
        return {**rec, "gate": judge(rec, DesignFacts.of(design, flow)).as_dict()}

    monkeypatch.setattr(build, "build", honest)


def _ci(repo: Path, **kw) -> tuple[int, list[str]]:
    out = io.StringIO()
    opts = CiOptions(designs=["stage2"], flow="open", summary=repo / "reports" / "s.md", junit=repo / "reports" / "j.xml",
                     **kw)
    code = run(opts, Console(file=out, width=400, color_system=None), root=repo, reports_root=repo / "reports")
    return code, out.getvalue().strip().splitlines()


def _pr(monkeypatch, base: str = "main") -> None:
    monkeypatch.setenv("GITHUB_EVENT_NAME", "pull_request")
    monkeypatch.setenv("GITHUB_BASE_REF", base)


def test_every_trust_setting_comes_from_the_default_branch_and_is_said(remote, tmp_path, monkeypatch):
    repo = clone(remote, tmp_path / "work")
    (repo / "pyproject.toml").write_text('[tool.kabe]\nflow = "open"\ntrusted_branches = ["release"]\n')
    git(repo, "add", "pyproject.toml")
    git(repo, "commit", "-qm", "main's settings")
    git(repo, "push", "-q", "origin", "main")
    git(repo, "checkout", "-qb", "feature")
    (repo / "pyproject.toml").write_text('[tool.kabe]\nflow = "open"\narchive_ref = "refs/kabe/archive-v2"\n'
                                         'default_branch = "feature"\nallowed_signers = "mine"\n'
                                         'trusted_branches = ["feature"]\n')
    git(repo, "commit", "-qam", "mine")
    _pr(monkeypatch)
    trusted, ref, lines = base_signers.default_branch_settings(repo, "origin")
    assert ref == "refs/remotes/origin/main"
    assert lines == ["trust settings from refs/remotes/origin/main's pyproject.toml: archive_ref default, allowed_signers "
                     "default, default_branch default, trusted_branches ['release'], archive_root default; this "
                     "change's own archive_ref, allowed_signers, default_branch, trusted_branches not used"]
    with trusted_settings.pinned(trusted):
        assert store.archive_ref(root=repo) == "refs/kabe/archive"
        assert lineage.base_branch(repo) == "main"
    assert store.archive_ref(root=repo, settings={"archive_ref": "refs/kabe/archive-v2"}) == "refs/kabe/archive-v2"


def test_a_ci_kabe_does_not_recognise_is_a_change_unless_main_says_otherwise_at_its_tip(remote, tmp_path, monkeypatch):
    repo = clone(remote, tmp_path / "work")
    monkeypatch.setenv("CI", "true")
    assert lineage.unknown_ci() and base_signers.change_pipeline(repo)
    (repo / "pyproject.toml").write_text('[tool.kabe]\nunknown_ci = "default-branch"\n')
    git(repo, "add", "pyproject.toml")
    git(repo, "commit", "-qm", "main runs on Jenkins")
    git(repo, "push", "-q", "origin", "main")
    assert not base_signers.change_pipeline(repo)  # main's tip, and main says so
    git(repo, "checkout", "-qb", "feature")
    (repo / "f").write_text("x")
    git(repo, "add", "f")
    git(repo, "commit", "-qm", "a change")
    assert base_signers.change_pipeline(repo)  # not main's tip: a change, whatever its own settings say
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    assert not lineage.unknown_ci()


def test_a_protected_branch_named_by_main_has_its_own_signers_and_no_other_branch_does(remote, tmp_path, monkeypatch):
    ci_key, release_key, evil = _key(tmp_path, "ci"), _key(tmp_path, "release"), _key(tmp_path, "evil")
    repo = clone(remote, tmp_path / "work")
    (repo / ".kabe").mkdir()
    (repo / ".kabe" / "allowed_signers").write_text(_line(ci_key))
    (repo / "pyproject.toml").write_text('[tool.kabe]\ntrusted_branches = ["release"]\n')
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "main")
    git(repo, "push", "-q", "origin", "main")
    for branch, key in (("release", release_key), ("pushed", evil)):
        git(repo, "checkout", "-qb", branch, "main")
        (repo / ".kabe" / "allowed_signers").write_text(_line(key))
        git(repo, "commit", "-qam", branch)
        git(repo, "push", "-q", "origin", branch)
    git(repo, "fetch", "-q", "origin")
    for base, expected in (("release", release_key), ("pushed", ci_key)):
        _pr(monkeypatch, base)
        dest, note = base_signers.base_allowed_signers(repo, "origin", tmp_path / f"trusted-{base}")
        print(note)
        assert dest.read_text().strip() == _line(expected).strip(), base
        assert ("a branch refs/remotes/origin/main's trusted_branches names" in note) is (base == "release")


def test_an_archived_unit_of_this_commit_built_from_other_inputs_is_not_this_commits_build(remote, tmp_path, monkeypatch):
    repo = clone(remote, tmp_path / "work")
    head = git(repo, "rev-parse", "HEAD")
    d = write_archive(repo / "reports", head, lut=242, wns=1.033)
    other = {"format": "test", "note": "another checkout's inputs"}
    (d / "cache_key.json").write_text(json.dumps(other))
    rec = json.loads((d / "metrics.json").read_text())
    from kabe.cache import cache
    rec["cache_key"] = cache.key_of_material(other)
    (d / "metrics.json").write_text(json.dumps(rec))
    asked: list = []
    _honest_pr_build(monkeypatch, asked)
    code, lines = _ci(repo, pull=False)
    said = next(ln for ln in lines if "archived build is not used" in ln)
    assert f"its cache_key.json is not this checkout's key {checkout_test_key().key[:12]} (note changed)" in said
    assert asked == ["stage2"]


def _two_projects_and_a_change(remote, tmp_path):
    """A monorepo with two kabe projects, fpga/ and fpga2/, both trusting CI's key, pushed as main (the
    base); then a change on a feature branch (its head). Returns (ci_key, top, fpga, fpga2, base, head)."""
    ci_key = _key(tmp_path, "ci")
    top, fpga = monorepo(remote, tmp_path / "work")
    fpga2 = top / "fpga2"
    fpga2.mkdir()
    for project in (fpga, fpga2):
        (project / "pyproject.toml").write_text('[tool.kabe]\nflow = "open"\n')
        (project / ".gitignore").write_text("/build/\n/reports/\n")
        (project / ".kabe").mkdir(exist_ok=True)
        (project / ".kabe" / "allowed_signers").write_text(_line(ci_key))
    git(top, "add", "-A")
    git(top, "commit", "-qm", "two projects, CI's key")
    git(top, "push", "-q", "origin", "main")
    base = git(top, "rev-parse", "HEAD")
    git(top, "checkout", "-qb", "feature")
    (top / "sw" / "main.py").write_text("print(2)\n")
    git(top, "commit", "-qam", "change")
    head = git(top, "rev-parse", "HEAD")
    return ci_key, top, fpga, fpga2, base, head


def test_a_unit_signed_for_fpga_replayed_as_fpga2s_build_fails_on_the_regression(remote, tmp_path, monkeypatch):
    """The monorepo replay: CI signs fpga/'s build of commit H (LUT 242); the same files placed as fpga2/'s
    build of H verified (the signature named commit/design/kind only). Now it is refused, fpga2's build
    runs and its regression against the base is judged."""
    ci_key, top, fpga, fpga2, base, head = _two_projects_and_a_change(remote, tmp_path)
    unit = f"{head}/stage2/open"
    signed = write_archive(fpga / "reports", head, lut=242, wns=1.033)
    (signed / signing.SIGNATURE_FILE).write_bytes(signing.sign_unit(unit, signing.hash_dir(signed), ci_key,
                                                                    project="fpga"))
    import shutil
    shutil.copytree(signed, fpga2 / "reports" / head / "stage2" / "open")
    write_archive(fpga2 / "reports", base, lut=242, wns=1.033)  # fpga2's own base build, built here
    asked: list = []
    _honest_pr_build(monkeypatch, asked)
    _pr(monkeypatch)
    code, lines = _ci(fpga2, pull=False)
    print("\n".join(lines))
    said = next(ln for ln in lines if "archived build is not used" in ln)
    assert "the signature is for project folder 'fpga', not fpga2" in said
    assert asked == ["stage2"] and code == 1
    assert any(ln.startswith("kabe ci: FAIL stage2 (open)") and f"regression: stage2 lut 242 at base {base[:12]} -> 299"
               in ln for ln in lines)
    # in fpga/ itself the signature verifies: the unit is this commit's build once its numbers are its raw
    # reports' (kabe.build.rederive; a hand-written record has none, so that is what is said here)
    write_archive(fpga / "reports", base, lut=242, wns=1.033)
    code, lines = _ci(fpga, pull=False)
    said = next(ln for ln in lines if "archived build is not used" in ln)
    assert "project folder" not in said and "raw reports" in said, said


def test_the_monorepo_replay_through_the_remote_is_kept_apart_by_the_pull(remote, tmp_path, monkeypatch):
    """The monorepo replay as the red team ran it, through the remote: CI pushes fpga/'s signed build of H to
    fpga/'s archive ref, and whoever can push a ref pushes that same archive commit as fpga2/'s archive ref
    with plain git (the signature named commit/design/kind only, so it verified there). fpga2's pipeline
    pulls it, keeps it apart (its signature is for project folder 'fpga'), builds H itself and judges the
    regression: exit 1, named."""
    ci_key, top, fpga, fpga2, base, head = _two_projects_and_a_change(remote, tmp_path)
    write_archive(fpga / "reports", head, lut=242, wns=1.033)  # CI's build of H in fpga/, pushed signed
    monkeypatch.setenv("KABE_SIGNING_KEY", str(ci_key))
    pushed = store.push("origin", root=fpga, reports_root=fpga / "reports", commits=[head])
    monkeypatch.delenv("KABE_SIGNING_KEY")
    fpga_ref, fpga2_ref = store.archive_ref(root=fpga), store.archive_ref(root=fpga2)
    assert fpga_ref != fpga2_ref and pushed.added == [f"{head}/stage2/open"]
    tip = git(top, "ls-remote", "origin", fpga_ref).split()[0]
    git(top, "push", "-q", "origin", f"{tip}:{fpga2_ref}")  # the replay: the same signed unit as fpga2's
    write_archive(fpga2 / "reports", base, lut=242, wns=1.033)  # fpga2's own base build, built here
    asked: list = []
    _honest_pr_build(monkeypatch, asked)
    _pr(monkeypatch)
    code, lines = _ci(fpga2)  # the pull included
    print("\n".join(lines))
    assert any(f"{fpga2_ref}" in ln for ln in lines)
    assert any(f"unverified {head}/stage2/open" in ln and "project folder 'fpga', not fpga2" in ln for ln in lines)
    assert (fpga2 / "reports" / ".unverified" / head / "stage2" / "open").is_dir()
    assert asked == ["stage2"] and code == 1
    assert any(ln.startswith("kabe ci: FAIL stage2 (open)") and f"regression: stage2 lut 242 at base {base[:12]} -> 299"
               in ln for ln in lines)
