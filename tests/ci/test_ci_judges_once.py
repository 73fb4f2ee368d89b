"""`kabe ci` judges each record once (kabe.rules.verdict.judge) and reads the commit once: the verdict its
reading of an archive (kabe.records.load) or its build (kabe.build.verdict) made is the one it prints, not
judged again. Counted by wrapping judge and provenance.current_commit in an in-process `kabe ci` run."""

from __future__ import annotations

import collections
import io
from pathlib import Path

import pytest
from rich.console import Console

import kabe.base.provenance
import kabe.rules.verdict
from kabe import build
from kabe.project import designs
from kabe.build.verdict import build_verdict
from kabe.ci import CiOptions, run

from .conftest import checkout_test_key, record, write_archive


@pytest.fixture()
def counted(monkeypatch):
    """(judge calls by the judged record's commit, commit reads): every caller reaches both through their module."""
    judged: collections.Counter = collections.Counter()
    reads: list = []
    judge, current_commit = kabe.rules.verdict.judge, kabe.base.provenance.current_commit

    def counting_judge(record, *a, **kw):
        judged[record.get("commit", "a build being made")] += 1  # the build judges its parts before its record
        return judge(record, *a, **kw)

    def counting_commit(*a, **kw):
        reads.append(a)
        return current_commit(*a, **kw)

    monkeypatch.setattr(kabe.rules.verdict, "judge", counting_judge)
    monkeypatch.setattr(kabe.base.provenance, "current_commit", counting_commit)
    return judged, reads


def _ci(repo: Path) -> tuple[int, list[str]]:
    out, reports = io.StringIO(), repo / "reports"
    opts = CiOptions(designs=["stage2"], flow="open", summary=reports / "s.md", junit=reports / "j.xml")
    code = run(opts, Console(file=out, width=200, color_system=None), root=repo, reports_root=reports)
    return code, out.getvalue().strip().splitlines()


def test_an_archived_build_and_its_base_are_each_judged_once(branch, counted):
    repo, base, head = branch
    judged, reads = counted
    write_archive(repo / "reports", head, lut=260, wns=2.0)  # a LUT regression: the verdict still fails
    code, lines = _ci(repo)
    assert code == 1 and lines[-1] == "kabe ci: 1 of 1 design(s) failed: stage2"
    assert dict(judged) == {head: 1, base: 1}
    assert len(reads) == 1  # the commit, read once in the project's root


def test_a_build_made_now_is_judged_once_by_the_build_and_gets_ci_s_commit(branch, counted, monkeypatch):
    repo, base, head = branch
    judged, reads = counted
    given = []

    def stand_in(name, flow=None, *, console=None, reports_root=None, commit=None, **kw):
        """build.build as a STAND-IN for the tools: its record gated as the real build gates it (once, by
        kabe.build.verdict.build_verdict), under the commit it was handed."""
        given.append(commit)
        rec = {**record(commit.sha, name, lut=300, wns=-0.2), "cache_key": checkout_test_key().key}
        rec["gate"] = build_verdict(designs.get(name), flow, rec["timing"], rec["utilization"], None).as_dict()
        return rec

    monkeypatch.setattr(build, "build", stand_in)
    code, lines = _ci(repo)
    assert code == 1 and "kabe ci: FAIL stage2 (open)" in lines[-2] and "timing gate" in lines[-2]
    assert [c.sha for c in given] == [head]  # the build is handed ci's reading of the commit, not its own
    assert dict(judged) == {"a build being made": 1, base: 1}  # by the build; kabe ci does not judge it again
    assert len(reads) == 1
