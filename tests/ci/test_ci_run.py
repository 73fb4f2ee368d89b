"""`kabe ci` in-process on archives written directly (the reuse path: this commit's build is already
archived, so nothing is built): exit codes, the last lines, the Markdown, the JUnit, the base commit
it picks, and when it pushes. The real builds are in test_ci_e2e.py."""

from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from rich.console import Console

from kabe.ci import CiOptions, run
from kabe.ci.markdown import render
from kabe.ci.design_result import DesignOutcome
from kabe.records import lineage
from kabe.store import store
from kabe.records.lineage import LineageError

from .conftest import clone, git, monorepo, record, write_archive, commit_file as _commit


def _ci(repo: Path, *designs: str, **kw) -> tuple[int, list[str], Path]:
    out = io.StringIO()
    reports = repo / "reports"
    opts = CiOptions(designs=list(designs), flow="open", summary=reports / "s.md", junit=reports / "j.xml", **kw)
    code = run(opts, Console(file=out, width=100, color_system=None), root=repo, reports_root=reports)
    return code, out.getvalue().strip().splitlines(), reports


def test_a_lut_regression_exits_1_naming_design_metric_base_and_both_values(branch):
    repo, base, head = branch
    write_archive(repo / "reports", head, lut=260, wns=2.0)
    code, lines, reports = _ci(repo, "stage2")
    assert code == 1
    assert lines[-1] == "kabe ci: 1 of 1 design(s) failed: stage2"
    assert lines[-2] == (f"kabe ci: FAIL stage2 (open), WNS +2.000 ns: regression: stage2 lut 232 at base {base[:12]} "
                         f"-> 260 here (+28, +12.1%); allowed: increase <= 5%")
    md = (reports / "s.md").read_text()
    assert f"Base: `{base[:12]}`, the merge-base with main." in md
    assert "| stage2 | open | LUT | 232 | 260 | +28 (+12.1%) | increase <= 5% | **regression** |" in md
    junit = ET.parse(reports / "j.xml").getroot()
    assert junit.get("failures") == "1"
    failure = junit.find(".//testcase[@name='regression.lut.max_increase_pct']/failure")
    assert failure.get("message").startswith("regression: stage2 lut 232")


def test_a_clean_change_exits_0(branch):
    repo, base, head = branch
    write_archive(repo / "reports", head, lut=240, wns=1.9)  # +3.4 % LUT, -0.1 ns: inside the rules
    code, lines, reports = _ci(repo, "stage2")
    assert code == 0 and lines[-1] == "kabe ci: all 1 design(s) passed"
    assert ET.parse(reports / "j.xml").getroot().get("failures") == "0"


def test_a_timing_failure_exits_1_and_shows_the_wns(branch):
    repo, base, head = branch
    write_archive(repo / "reports", head, lut=232, wns=-0.449)
    code, lines, _ = _ci(repo, "stage2")
    assert code == 1 and lines[-2].startswith("kabe ci: FAIL stage2 (open), WNS -0.449 ns: timing gate")


def test_a_forged_record_of_this_commit_fails_ci_with_the_recomputed_reasons(branch):
    """Issue 21: kabe ci took an archived build of the current commit as it was. A record with a failed
    simulation, no clock and gate {passed: true} passed CI; the verdict is recomputed now (kabe.rules.verdict)."""
    repo, base, head = branch
    d = write_archive(repo / "reports", head, lut=232, wns=2.0)
    rec = json.loads((d / "metrics.json").read_text())
    rec["sim"] = {"passed": False}
    rec["timing"]["clocks"] = []
    rec["gate"] = {"passed": True, "failures": [], "checks": []}
    (d / "metrics.json").write_text(json.dumps(rec))
    code, lines, reports = _ci(repo, "stage2")
    assert code == 1
    assert lines[-2] == ("kabe ci: FAIL stage2 (open), WNS +2.000 ns: verification: the simulation did not pass; "
                         "timing gate: no clock is constrained, so no path was timed; add create_clock to the "
                         "design's XDC")
    assert lines[-1] == "kabe ci: 1 of 1 design(s) failed: stage2"
    assert ET.parse(reports / "j.xml").getroot().get("failures") != "0"


def test_an_archived_build_of_this_commit_that_no_longer_verifies_is_rebuilt_not_believed(branch, monkeypatch):
    """A signed unit edited since its pull is not this commit's build: kabe ci says so and builds."""
    from kabe import build
    from kabe.store import signing

    repo, base, head = branch
    d = write_archive(repo / "reports", head, lut=232, wns=2.0)
    (d / signing.SIGNATURE_FILE).write_text("not a signature\n")
    def no_tools_here(name, *a, **kw):  # the real build is test_poisoned_cache_e2e's; here: was it asked for?
        raise build.BuildError(f"{name.name}: asked to build")

    monkeypatch.setattr(build, "build", no_tools_here)
    code, lines, _ = _ci(repo, "stage2")
    said = next(ln for ln in lines if "archived build is not used" in ln)
    assert said.startswith("stage2: this commit's archived build is not used (its signature does not verify (")
    assert said.endswith("); building") and code == 2 and "stage2: asked to build" in lines[-2]


def test_a_signed_archive_of_this_commit_must_say_what_its_raw_reports_say(branch, monkeypatch, tmp_path):
    """Signed by the allowed key and intact, but its numbers have no report behind them: not believed."""
    import subprocess

    from kabe import build
    from kabe.store import signing

    repo, base, head = branch
    d = write_archive(repo / "reports", head, lut=240, wns=1.9)
    key = tmp_path / "ci_key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    allowed = tmp_path / "allowed_signers"
    allowed.write_text(f"ci@kabe {key.with_suffix('.pub').read_text()}")
    monkeypatch.setattr(signing, "allowed_signers_file", lambda settings=None: allowed)
    unit = f"{head}/stage2/open"
    (d / signing.SIGNATURE_FILE).write_bytes(signing.sign_unit(unit, signing.hash_dir(d), key))
    assert signing.verify_dir(d, unit).ok

    def no_tools_here(name, *a, **kw):
        raise build.BuildError(f"{name.name}: asked to build")

    monkeypatch.setattr(build, "build", no_tools_here)
    code, lines, _ = _ci(repo, "stage2")
    said = next(ln for ln in lines if "archived build is not used" in ln)
    assert said == ("stage2: this commit's archived build is not used (its numbers disagree with its raw reports: "
                    "timing: timing_estimate.rpt cannot be read, but metrics.json has numbers); building")


def test_a_summary_that_cannot_be_written_is_one_line_and_exit_2(branch, tmp_path):
    repo, base, head = branch
    write_archive(repo / "reports", head, lut=240, wns=1.9)
    (tmp_path / "not-a-folder").write_text("a file where the summary's folder should be\n")
    out = io.StringIO()
    opts = CiOptions(designs=["stage2"], flow="open", summary=tmp_path / "not-a-folder" / "s.md",
                     junit=tmp_path / "j.xml")
    code = run(opts, Console(file=out, width=100, color_system=None), root=repo, reports_root=repo / "reports")
    lines = out.getvalue().strip().splitlines()
    said = [ln for ln in lines if ln.startswith("kabe ci: cannot write the summary: ")]
    assert code == 2 and len(said) == 1 and "not-a-folder" in said[0], lines
    # the verdict is still said, and an exit 2 never ends on "all ... passed" (issue 44)
    assert lines[-1] == "kabe ci: 1 design(s) did what design.yaml expects, but writing the summary could not be done: exit 2"
    assert not any("passed" in ln for ln in lines[-1:]), lines


def test_a_negative_example_passes_ci_by_failing_and_fails_ci_by_passing(branch):
    repo, base, head = branch
    write_archive(repo / "reports", head, design="stage3_naive", wns=-0.449)
    code, lines, reports = _ci(repo, "stage3_naive")
    assert code == 0 and "kabe ci: stage3_naive (open) failed its gate as it must (negative example): FAIL (expected)" in lines
    assert lines[-1] == "kabe ci: all 1 design(s) passed (1 of them FAIL (expected): stage3_naive)"
    assert any("│ gate" in ln and "FAIL (expected) (design.yaml: expect_gate: fail)" in ln for ln in lines)  # the summary
    assert "| stage3_naive | open | FAIL (expected) | -0.449 |" in (reports / "s.md").read_text()
    # JUnit: an expected failure as pytest writes an xfail, counted as skipped, never as a failure
    root = ET.parse(reports / "j.xml").getroot()
    assert (root.get("failures"), root.get("errors"), root.get("skipped"), root.get("tests")) == ("0", "0", "1", "1")
    (xfail,) = root.iter("skipped")
    assert xfail.get("type") == "pytest.xfail"
    assert xfail.get("message").startswith("FAIL (expected): a negative example (expect_gate: fail): timing gate: "
                                           "estimated (pre-route) setup slack WNS -0.449 ns"), xfail.get("message")
    write_archive(repo / "reports", head, design="stage3_naive", wns=0.5)
    code, lines, reports = _ci(repo, "stage3_naive")
    assert code == 1 and "its gate passed: the gate no longer catches this design's problem" in lines[-2]
    root = ET.parse(reports / "j.xml").getroot()
    assert root.get("failures") == "1" and not list(root.iter("skipped"))  # an unexpected pass fails, as xpass(strict)


def test_a_missing_baseline_is_built_here_or_the_design_fails_saying_why(branch, monkeypatch):
    """Issue 36, item 2: no archived base build of a design with `regressions:` was "not judged", exit 0;
    now kabe ci builds the base commit itself (kabe.ci.base_build) and judges against it, or fails."""
    from kabe.ci import base_build

    repo, base, head = branch
    write_archive(repo / "reports", head, design="stage4", lut=3600, wns=0.3)
    asked = []

    def cannot(root, sha, design, flow, reports_root, console):
        asked.append((sha, design, flow))
        return None, "its build archived nothing (exit 2: no tool here)"

    monkeypatch.setattr(base_build, "build_base", cannot)
    code, lines, reports = _ci(repo, "stage4")
    assert asked == [(base, "stage4", "open")]
    assert code == 2
    assert any(f"stage4 (open): its regression rules cannot be judged: no trusted build of the base {base[:12]} and "
               f"building it here failed (its build archived nothing (exit 2: no tool here))" in ln for ln in lines), lines
    assert lines[-1] == "kabe ci: 1 of 1 design(s) failed: stage4"

    def built(root, sha, design, flow, reports_root, console):
        return record(sha, design, lut=3000, wns=0.3), ""

    monkeypatch.setattr(base_build, "build_base", built)
    code, lines, reports = _ci(repo, "stage4")
    assert code == 1 and f"kabe ci: stage4 (open): judged against the base {base[:12]} built here" in lines
    assert any("regression: stage4 lut 3,000" in ln for ln in lines), lines


def test_a_real_base_build_in_a_worktree_that_cannot_run_is_said(branch):
    """The worktree is made and removed; a base that is no kabe project is one line, never a pass."""
    from kabe.ci import base_build

    repo, base, head = branch
    rec, why = base_build.build_base(repo, base, "stage4", "open", repo / "reports", Console(file=io.StringIO()))
    assert rec is None and why.startswith("its build archived nothing")
    assert git(repo, "worktree", "list").count("\n") == 0  # only the main worktree is left


def test_it_pushes_on_the_default_branch_only_unless_asked(branch, monkeypatch):
    repo, base, head = branch
    write_archive(repo / "reports", head)
    _ci(repo, "stage2")  # on feature: not pushed
    assert f"{head}/stage2/open/metrics.json" not in git(repo, "ls-tree", "-r", "--name-only", "refs/kabe/fetched/origin")
    code, lines, _ = _ci(repo, "stage2", push=True)
    assert code == 0 and any("1 build(s) added" in ln for ln in lines)
    git(repo, "checkout", "-q", "main")
    write_archive(repo / "reports", base, design="stage4", lut=3600, wns=0.3)
    monkeypatch.setenv("GITHUB_EVENT_NAME", "pull_request")  # a pull request never pushes
    assert not any("added" in ln for ln in _ci(repo, "stage4")[1] if "push" in ln)
    monkeypatch.delenv("GITHUB_EVENT_NAME")
    _code, lines, _ = _ci(repo, "stage4")
    assert any(ln.startswith("kabe archive push origin") and "1 build(s) added" in ln for ln in lines)


def test_the_base_on_the_default_branch_is_the_previous_commit_and_an_unknown_base_is_refused(branch):
    repo, base, head = branch
    git(repo, "checkout", "-q", "main")
    first = git(repo, "rev-parse", "HEAD^")
    assert lineage.base_commit(repo) == lineage.Base(first, "the previous commit on main")
    assert lineage.base_commit(repo, base="feature").commit == head
    with pytest.raises(LineageError, match="--base nope: no such commit"):
        lineage.base_commit(repo, base="nope")


def test_the_base_branch_comes_from_the_ci_when_it_says(branch, monkeypatch, tmp_path):
    repo, base, head = branch
    git(repo, "branch", "release", base)
    monkeypatch.setenv("GITHUB_BASE_REF", "release")
    assert lineage.base_branch(repo) == "release"
    monkeypatch.delenv("GITHUB_BASE_REF")
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"repository": {"default_branch": "trunk"}}))
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(event))
    assert lineage.base_branch(repo) == "trunk"
    assert "no base branch found" in lineage.base_commit(repo).how  # trunk does not exist here: said, not guessed


def test_a_shallow_clone_is_named_as_the_reason_for_no_base(remote, tmp_path):
    seedling = clone(remote, tmp_path / "w")
    _commit(seedling, "two")
    git(seedling, "push", "-q", "origin", "main")
    git(seedling, "checkout", "-qb", "feature", "HEAD^")
    _commit(seedling, "three")
    git(seedling, "push", "-q", "origin", "feature")
    shallow = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", "--branch", "feature", f"file://{remote}", str(shallow))
    git(shallow, "fetch", "-q", "--depth", "1", "origin", "main:refs/remotes/origin/main")
    base = lineage.base_commit(shallow)
    assert base.commit is None and "shallow clone" in base.how and "fetch-depth: 0" in base.how


def test_markdown_marks_every_breach():
    rec = record("h", lut=9000, wns=-0.1)
    rec["gate"]["checks"].append({"name": "budget.lut", "expected": "< 8000", "got": 9000, "passed": False})
    o = DesignOutcome("stage4", "open", record=rec, verdict=rec["gate"])
    md = render([o], "h" * 40, "feature", None, "no base branch found")
    assert "**No base commit** (no base branch found): regressions were not judged." in md
    assert "| stage4 | open | LUT | - | 9,000 | - |  | **budget breached** |" in md
    assert "| stage4 | open | WNS ns (estimate) | - | -0.100 | - |  | **timing fails** |" in md


def test_a_repository_without_a_remote_keeps_its_archive_local_unless_a_push_is_asked_for(tmp_path):
    """`kabe ci` on a new repository's default branch, before it has a remote: like the pull, the push
    is skipped and said, and the builds' verdict is the exit code; `--push` that cannot push exits 2."""
    repo = tmp_path / "solo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "t@example.com")
    git(repo, "config", "user.name", "t")
    (repo / ".gitignore").write_text("reports/\n")  # as kabe init writes it: the archive is no change
    git(repo, "add", ".gitignore")
    head = _commit(repo, "first")
    write_archive(repo / "reports", head)
    code, lines, _ = _ci(repo, "stage2")
    assert code == 0 and lines[-1] == "kabe ci: all 1 design(s) passed"
    assert any("no remote 'origin': the archive stays local" in ln for ln in lines)
    code, lines, _ = _ci(repo, "stage2", push=True)
    assert code == 2 and any("cannot push: no remote 'origin'" in ln for ln in lines)


def test_a_project_folder_its_repository_does_not_track_is_told_why_nothing_is_judged(tmp_path):
    """A kabe project in a folder of someone else's checkout that the repository does not track (never
    added, or ignored) gets no commit: kabe ci says why on the console, instead of an unexplained
    'nogit' and regressions silently not judged."""
    from kabe.base import provenance

    top = tmp_path / "mono"
    (top / "fpga").mkdir(parents=True)
    git(top, "init", "-q")
    (top / "README").write_text("x\n")
    git(top, "add", "README")
    git(top, "commit", "-qm", "readme")
    assert "has no file tracked by its git repository" in provenance.why_no_commit(top / "fpga")
    assert provenance.current_commit(top / "fpga") == provenance.Commit("nogit", True)
    (top / ".gitignore").write_text("/fpga/\n")
    (top / "fpga" / "pyproject.toml").write_text("[tool.kabe]\ndefault_board = 'pynq-z1'\n")
    assert provenance.current_commit(top / "fpga").sha == "nogit"  # ignored: not this repository's files
    assert provenance.why_no_commit(top) is None
    assert "not in a git repository" in provenance.why_no_commit(tmp_path)


def test_a_project_below_its_repositorys_top_records_the_commit_and_only_its_folder_makes_it_dirty(remote, tmp_path):
    """A monorepo: fpga/ is the kabe project beside sw/. Its builds carry the repository's commit; it
    is dirty when a file under fpga/ differs (tracked or untracked, not ignored), or under a FuseSoC
    library its fusesoc.conf names elsewhere in the repository; an edit to sw/ leaves it clean. At the
    top, as always, any change in the repository makes the tree dirty."""
    from kabe.base import provenance

    top, fpga = monorepo(remote, tmp_path / "work")
    head = git(top, "rev-parse", "HEAD")
    assert provenance.project_prefix(fpga) == "fpga/" and provenance.project_prefix(top) == ""
    assert provenance.current_commit(fpga) == provenance.Commit(head, False)
    assert provenance.why_no_commit(fpga) is None
    (top / "sw" / "main.py").write_text("print(2)\n")  # tracked, outside the project
    (top / "sw" / "new.py").write_text("")  # untracked, outside the project
    assert provenance.current_commit(fpga) == provenance.Commit(head, False)
    assert provenance.current_commit(top) == provenance.Commit(head, True)  # the top: the whole tree, as before
    (fpga / "reports" / head).mkdir(parents=True)
    (fpga / "reports" / head / "x.json").write_text("{}")  # ignored by the project's .gitignore
    assert not provenance.current_commit(fpga).dirty
    (fpga / "notes.txt").write_text("untracked in the project\n")
    assert provenance.current_commit(fpga) == provenance.Commit(head, True)
    (fpga / "notes.txt").unlink()
    (fpga / "pyproject.toml").write_text('[tool.kabe]\ndefault_board = "pynq-z1"\nflow = "vivado"\n')  # a tracked file of the project
    assert provenance.current_commit(fpga).dirty
    git(top, "checkout", "-q", "--", "fpga")
    # a FuseSoC library of the project elsewhere in the repository counts as the project's
    (top / "ip" / "fifo").mkdir(parents=True)
    (top / "ip" / "fifo" / "fifo.core").write_text("CAPI=2:\n")
    (fpga / "fusesoc.conf").write_text("[library.ip]\nlocation = ../ip\n")
    git(top, "add", "-A")
    git(top, "commit", "-qm", "shared ip")
    head = git(top, "rev-parse", "HEAD")
    assert provenance.current_commit(fpga) == provenance.Commit(head, False)
    (top / "ip" / "fifo" / "fifo.core").write_text("CAPI=2:\nname: x\n")
    assert provenance.current_commit(fpga) == provenance.Commit(head, True)
    git(top, "checkout", "-q", "--", "ip")
    assert provenance.current_commit(fpga) == provenance.Commit(head, False)


def test_kabe_ci_in_a_subfolder_project_judges_regressions_as_at_the_top(remote, tmp_path):
    """kabe ci in a monorepo's fpga/: the base's archive (pushed to the project's own ref) is found and
    a LUT regression fails; a change to sw/ alone keeps the project clean and the verdict the same."""
    top, fpga = monorepo(remote, tmp_path / "work")
    base = git(top, "rev-parse", "HEAD")
    write_archive(fpga / "reports", base, lut=232, wns=2.0)
    assert store.push("origin", fpga, fpga / "reports").ref == "refs/kabe/sub/fpga/archive"
    git(top, "checkout", "-qb", "feature")
    (top / "sw" / "main.py").write_text("print(2)\n")  # the software changes, the FPGA project does not
    git(top, "commit", "-qam", "sw only")
    head = git(top, "rev-parse", "HEAD")
    write_archive(fpga / "reports", head, lut=260, wns=2.0)
    code, lines, _ = _ci(fpga, "stage2")
    assert code == 1, lines
    assert lines[-2] == (f"kabe ci: FAIL stage2 (open), WNS +2.000 ns: regression: stage2 lut 232 at base {base[:12]} "
                         f"-> 260 here (+28, +12.1%); allowed: increase <= 5%")
    assert not any("nogit" in ln or "dirty" in ln for ln in lines), lines
    code, lines, _ = _ci(fpga, "stage2", base="HEAD~1")
    assert code == 1 and f"at base {base[:12]}" in lines[-2]
    # the remote holds the project's archive under its own ref, and nothing under the top's
    remote_refs = git(remote, "for-each-ref", "--format=%(refname)", "refs/kabe")
    assert remote_refs.splitlines() == ["refs/kabe/sub/fpga/archive"]


def test_a_design_the_change_adds_has_no_base_to_build(branch, monkeypatch):
    """Its design.yaml is not in the base commit: "nothing to compare with" is the honest answer there,
    and the base is not built (it has no such design)."""
    from kabe.ci import base_build

    repo, base, head = branch
    (repo / "cores" / "newdesign").mkdir(parents=True)
    (repo / "cores" / "newdesign" / "design.yaml").write_text("core: x\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "a new design")
    new = git(repo, "rev-parse", "HEAD")

    class Design:
        yaml_file = repo / "cores" / "newdesign" / "design.yaml"

    import kabe.project.designs
    monkeypatch.setattr(kabe.project.designs, "get", lambda name, *a, **kw: Design())
    assert base_build.design_at(repo, new, "newdesign") and not base_build.design_at(repo, base, "newdesign")
