"""Archived records are untrusted input (issue 18): validated, and their verdict recomputed from the
numbers, before the report page, `kabe diff`, `kabe gate` or deploy use them. A forged `passed: true`
shows FAIL everywhere; a malformed record is listed as invalid and never crashes the page or the diff."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kabe import cli, flows
from kabe.base import provenance
from kabe.rules import gate
from kabe.deploy import ssh
from kabe.deploy.host import DeployRun, DeploySettings, _archived_build, deploy
from kabe.base.paths import CORES
from kabe.records import diff, history
from kabe.page import report
from kabe.records import load as record_load

from records_fixtures import make_cores, record, two_commit_repo, write_archive


@pytest.fixture()
def repo(tmp_path):
    """A git history of two commits, a reports/ root and a cores/ root with the design stage4."""
    repo, shas = two_commit_repo(tmp_path)
    return repo, tmp_path / "reports", shas, make_cores(tmp_path)


def _gate_cell(page: str, design: str, flow: str) -> str:
    """The gate column of the page's latest-build row for design/flow."""
    row = re.search(rf'<tr data-design="{design}" data-flow="{flow}">(.*?)</tr>', page)
    assert row, page[:2000]
    return re.search(r'<td class="(?:pass|fail)">(.*?)</td>', row.group(1)).group(1)


# --- a forged verdict ------------------------------------------------------------------------------

def test_forged_pass_shows_fail_on_the_page_and_in_the_diff(repo):
    git_root, reports, shas, cores = repo
    write_archive(reports, record(shas[0], wns=0.25))  # honest pass: the control
    write_archive(reports, record(shas[1], wns=-5.0, passed=True))  # WNS -5 claiming a pass
    entries = history.load(reports, git_root, cores)
    assert [e.passed for e in entries] == [True, False]
    assert any("WNS -5.000" in f for f in entries[1].verdict.failures)

    page = report.build_report(reports, git_root, cores).read_text()
    assert _gate_cell(page, "stage4", "open") == "FAIL"

    md = diff.render(None, None, reports, git_root, cores)
    assert "| stage4 | open | gate | pass | FAIL |  | **gate fails** |" in md
    assert "**timing fails**" in md


def test_the_same_archive_honest_shows_pass(repo):
    """The check above can fail: the page says pass when the numbers pass."""
    git_root, reports, shas, cores = repo
    write_archive(reports, record(shas[1], wns=0.25))
    assert _gate_cell(report.build_report(reports, git_root, cores).read_text(), "stage4", "open") == "pass"


def test_a_recorded_failure_is_never_turned_into_a_pass(repo):
    """Clean numbers, but the build recorded a simulation mismatch the numbers cannot show."""
    git_root, reports, shas, cores = repo
    rec = record(shas[1], wns=0.25)
    rec["gate"].update(passed=False, failures=["verification: 3 of 64 rows differ from the numpy model"])
    write_archive(reports, rec)
    (entry,) = history.load(reports, git_root, cores)
    assert not entry.passed
    assert entry.verdict.failures == ["recorded at build time: verification: 3 of 64 rows differ from the numpy model"]
    rec["gate"].update(failures=[])  # failed, reasons lost: still a failure
    write_archive(reports, rec)
    assert not history.load(reports, git_root, cores)[0].passed


def test_budgets_come_from_this_checkout_not_the_record(repo):
    git_root, reports, shas, cores = repo
    write_archive(reports, record(shas[1], lut=1_000_000, passed=True))  # stage4 here: lut < 12000
    (entry,) = history.load(reports, git_root, cores)
    assert not entry.passed and any("budget exceeded: lut = 1000000" in f for f in entry.verdict.failures)


def test_missing_utilization_cannot_pass_budgets(repo):
    """A build without a utilization report archives zeros marked missing: the re-gate must not read them."""
    git_root, reports, shas, cores = repo
    rec = record(shas[1], lut=0, passed=True)
    rec["utilization"]["missing"] = True
    write_archive(reports, rec)
    (entry,) = history.load(reports, git_root, cores)
    assert not entry.passed and any("no utilization report" in f for f in entry.verdict.failures)


def _vivado_archive(reports: Path, sha: str, *, wns: float, passed: bool) -> Path:
    """A hand-made vivado archive: the metrics record, an arbitrary .bit/.hwh and a manifest whose
    sha256 match them (so only the re-gate can refuse it)."""
    path = write_archive(reports, record(sha, wns=wns, passed=passed, flow="vivado"))
    (path.parent / "kabe_stage4.bit").write_bytes(b"\x00 not a bitstream")
    (path.parent / "kabe_stage4.hwh").write_text("<hwh/>")
    cells = [{"cell": f"dma{p}", "role": "dma", "port": p} for p in (0, 1)] + \
        [{"cell": f"stat{p}", "role": "stat", "port": p} for p in (0, 1)] + \
        [{"cell": "usr_access", "role": "usr_access", "port": None}]
    (path.parent / "kabe_stage4.cells.json").write_text(json.dumps({"cells": cells}))  # kabe.deploy.pl_names
    artifacts = {k: provenance.sha256_file(path.parent / f"kabe_stage4.{k}")
                 for k in ("bit", "hwh")} | {"cells": provenance.sha256_file(path.parent / "kabe_stage4.cells.json")}
    (path.parent / "manifest.json").write_text(json.dumps({"artifacts": artifacts}))
    return path


def test_deploy_refuses_a_forged_pass(tmp_path):
    """Refused before anything is pushed: the settings name a board that does not exist."""
    reports, sha = tmp_path / "reports", "ab" * 20
    _vivado_archive(reports, sha, wns=-5.0, passed=True)
    with pytest.raises(ssh.DeployError, match=r"did not pass its gate \(timing gate: setup slack WNS -5.000"):
        deploy("stage4", DeploySettings(board="nobody@203.0.113.1"), DeployRun(reports_root=reports,
                                                                               commit=provenance.Commit(sha, False)))


def test_deploy_takes_the_honest_archive(tmp_path):
    reports, sha = tmp_path / "reports", "ab" * 20
    _vivado_archive(reports, sha, wns=0.25, passed=True)
    from kabe.project import designs

    record_, _, bit, _ = _archived_build(designs.get("stage4"), "vivado", provenance.Commit(sha, False), reports)
    assert record_["timing"]["wns_ns"] == 0.25 and bit.name == "kabe_stage4.bit"


def test_deploy_refuses_an_invalid_record(tmp_path):
    reports, sha = tmp_path / "reports", "ab" * 20
    path = _vivado_archive(reports, sha, wns=0.25, passed=True)
    rec = json.loads(path.read_text())
    rec["timing"]["estimated"] = True  # a vivado record claiming an estimate would skip the hold checks
    path.write_text(json.dumps(rec))
    with pytest.raises(ssh.DeployError, match="estimated: true, which the vivado flow never writes"):
        deploy("stage4", DeploySettings(board="nobody@203.0.113.1"), DeployRun(reports_root=reports,
                                                                               commit=provenance.Commit(sha, False)))


# --- malformed archives ----------------------------------------------------------------------------

def _malformed(sha: str) -> dict[str, tuple[str, str, str]]:
    """name -> (design folder, file text, words expected in the reason), for an archive at sha."""
    good = record(sha)
    wns_x = json.loads(json.dumps(good))
    wns_x["timing"]["wns_ns"] = "x"
    no_gate = {k: v for k, v in good.items() if k != "gate"}
    lut_obj = json.loads(json.dumps(good))
    lut_obj["utilization"]["lut"] = {}
    nan = json.dumps(good).replace('"wns_ns": 0.25', '"wns_ns": NaN')
    return {
        "wns_ns is a string": ("stage4", json.dumps(wns_x), "timing/wns_ns: expected number or null, got 'x'"),
        "no gate key": ("stage4", json.dumps(no_gate), "'gate' is a required property"),
        "a JSON list": ("stage4", json.dumps([good]), "expected object, got a list of 1 item(s)"),
        "lut is an object": ("stage4", json.dumps(lut_obj), "utilization/lut: expected integer, got a mapping"),
        "design folder is math text": ("$\\foo$", json.dumps(dict(good, design="$\\foo$")), "not a valid design name"),
        "NaN": ("stage4", nan, "not valid JSON"),
        "cut short": ("stage4", json.dumps(good)[:200], "not valid JSON"),
        "another commit's record": ("stage4", json.dumps(dict(good, commit="cd" * 20)), "lies in the folder of"),
        "a design not in this checkout": ("stage9", json.dumps(dict(good, design="stage9")), "not in this checkout"),
    }


def test_malformed_archives_are_listed_and_the_page_still_renders(repo):
    git_root, reports, shas, cores = repo
    write_archive(reports, record(shas[0]))
    write_archive(reports, record(shas[1], lut=9300))
    cases = {}
    for i, name in enumerate(_malformed(shas[0])):  # each in a commit folder of its own
        sha = f"{i + 1:040x}"
        design, text, words = _malformed(sha)[name]
        cases[name] = (write_archive(reports, None, commit=sha, design=design, flow="open", text=text), words)
    scanned = history.scan(reports, git_root, cores)
    assert [e.commit for e in scanned.entries] == shas  # the two good records, nothing else plotted
    reasons = {i.path: i.reason for i in scanned.invalid}
    for name, (path, words) in cases.items():
        assert words in reasons.get(path, ""), (name, reasons.get(path))
    assert len(reasons) == len(cases) and all(len(r) <= 300 for r in reasons.values())

    page = report.build_report(reports, git_root, cores).read_text()  # the real matplotlib
    # stage4's history only: this throwaway project names no [tool.kabe] page_sections (the wall, the budget)
    assert page.count('class="plot"') == 1
    assert f"failed validation ({len(cases)})" in page and "$\\foo$/open/metrics.json" in page
    assert (reports / "site" / "history_stage4.svg").stat().st_size > 5000

    # In the diff: the invalid record of the compared commit is named, the others counted.
    write_archive(reports, None, commit=shas[1], design="stage4", flow="vivado", text=_malformed(shas[1])["wns_ns is a string"][1])
    md = diff.render(None, None, reports, git_root, cores)
    assert "| stage4 | open | LUT | 9,000 | 9,300 |" in md
    assert f"- `{shas[1]}/stage4/vivado/metrics.json`: " in md and "timing/wns_ns" in md
    assert f"- {len(cases)} record(s) of other commits failed validation too" in md


def test_only_invalid_archives_still_render(repo):
    git_root, reports, shas, cores = repo
    write_archive(reports, None, commit=shas[1], design="stage4", flow="open", text="[]")
    assert "No builds archived yet" in report.build_report(reports, git_root, cores).read_text()
    with pytest.raises(diff.DiffError) as e:  # nothing to compare: exit 2, with the invalid record named
        diff.render(None, None, reports, git_root, cores)
    assert "no valid archived builds" in str(e.value) and f"`{shas[1]}/stage4/open/metrics.json`" in str(e.value)


def test_plot_title_with_math_text_renders(tmp_path, repo):
    """plot_design escapes '$' itself, for callers other than the history (which passes valid names only)."""
    git_root, reports, shas, cores = repo
    write_archive(reports, record(shas[1]))
    entries = history.load(reports, git_root, cores)
    png = report.plot_design("$\\foo$", entries, tmp_path / "x.png")
    assert png.stat().st_size > 5000


def test_estimated_by_flow_matches_the_flow_registry():
    assert record_load.ESTIMATED_BY_FLOW == {name: flows.get(name).ESTIMATED for name in record_load.ESTIMATED_BY_FLOW}


# --- kabe gate metrics.json ------------------------------------------------------------------------

@pytest.mark.parametrize("design", ["../../x/evil", "no_such_design"])
def test_kabe_gate_refuses_a_design_not_in_this_checkout(tmp_path, capsys, design):
    path = tmp_path / "metrics.json"
    path.write_text(json.dumps(record("ab" * 20, lut=1_000_000, passed=True, design=design)))
    assert cli.main(["gate", str(path)]) == 2
    err = capsys.readouterr().err
    assert design in err and ("not a valid design name" in err or "not in this checkout" in err)


def test_kabe_gate_uses_this_checkouts_budgets(tmp_path, capsys):
    """stage4 in this checkout has lut < 4500 for the open flow; the record claims a pass at 1,000,000."""
    assert (CORES / "stage4" / "design.yaml").is_file()
    path = tmp_path / "metrics.json"
    path.write_text(json.dumps(record("ab" * 20, lut=1_000_000, passed=True)))
    assert cli.main(["gate", str(path)]) == 1
    assert "budget exceeded: lut = 1000000" in capsys.readouterr().err
    path.write_text(json.dumps(record("ab" * 20, lut=1000, passed=True)))
    assert cli.main(["gate", str(path)]) == 0


def test_regate_uses_the_rules_given(repo):
    """fail_on_unconstrained is this checkout's rule: the same record fails when it is on."""
    git_root, reports, shas, cores = repo
    rec = record(shas[1], flow="vivado")
    rec["timing"]["unconstrained_endpoints"] = 3
    path = write_archive(reports, rec)
    assert record_load.checked(path, cores_root=cores, rules=gate.TimingRules(False)).passed
    assert not record_load.checked(path, cores_root=cores, rules=gate.TimingRules(True)).passed
