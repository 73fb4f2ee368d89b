"""A design whose build could not run is on the report page with its reason (issue 38): nothing is
archived for such a build, so its reason is kept in reports/.could_not_run/ and listed on the page until a
build of the design runs to its gate. Unit tests of the notes, and a fresh project's `doit build` with its
XDC missing, then restored, with `kabe report` after each."""

from __future__ import annotations

import pytest
import json

import template_project
from kabe.records import could_not_run
from kabe.page import report

pytestmark = pytest.mark.e2e  # end to end: real tools, minutes (the fast tier leaves it out: -m 'not e2e')


def test_a_note_is_kept_replaced_listed_and_cleared(tmp_path):
    reports = tmp_path / "reports"
    could_not_run.note(reports, "d1", "open", "first reason", "a" * 40)
    could_not_run.note(reports, "d1", "open", "cores/d1/d1.xdc: no such file", "b" * 40 + "-dirty")
    could_not_run.note(reports, "d2", "vivado", "vivado: not on PATH <script>", "")
    got = {(n.design, n.flow): n for n in could_not_run.load(reports)}
    assert set(got) == {("d1", "open"), ("d2", "vivado")}
    assert got["d1", "open"].reason == "cores/d1/d1.xdc: no such file" and got["d1", "open"].commit.endswith("-dirty")
    # what is not a note is not shown: not JSON, a field missing, a file named for another design
    (reports / could_not_run.FOLDER / "d3.open.json").write_text("{not json")
    (reports / could_not_run.FOLDER / "d4.open.json").write_text(json.dumps({"design": "d4", "flow": "open"}))
    (reports / could_not_run.FOLDER / "d5.open.json").write_text(
        (reports / could_not_run.FOLDER / "d1.open.json").read_text())
    assert sorted(n.design for n in could_not_run.load(reports)) == ["d1", "d2"]
    section = report.could_not_run_section(reports, None)
    assert "Could not run (2)" in section and "cores/d1/d1.xdc: no such file" in section
    assert "&lt;script&gt;" in section and "<script>" not in section
    could_not_run.clear(reports, "d1", "open")
    assert [n.design for n in could_not_run.load(reports)] == ["d2"]
    assert could_not_run.note(reports, "../x", "open", "r") is None  # no file outside the folder


def test_a_build_that_could_not_run_is_on_the_page_until_one_runs(tmp_path):
    project = template_project.make(tmp_path / "p", "d1")
    xdc = project / "cores" / "d1" / "d1.xdc"
    kept = xdc.read_text()
    xdc.unlink()
    rc, out = template_project.run(project, "doit", "build:d1", timeout=900)
    assert rc == 2 and "d1.xdc" in out, out[-3000:]
    rc, out = template_project.run(project, "kabe", "report", timeout=600)
    assert rc == 0, out[-2000:]
    page = (project / "reports" / "index.html").read_text()
    assert "Could not run (1)" in page and "constraints: &#x27;d1.xdc&#x27; is in neither" in page, page[-3000:]
    xdc.write_text(kept)
    rc, out = template_project.run(project, "doit", "build:d1", timeout=1200)
    assert rc == 0, out[-3000:]
    rc, out = template_project.run(project, "kabe", "report", timeout=600)
    page = (project / "reports" / "index.html").read_text()
    assert rc == 0 and "Could not run" not in page and "is in neither" not in page


def test_a_build_that_stops_with_an_error_leaves_its_reason_and_a_later_build_clears_it(tmp_path, monkeypatch):
    """kabe.build.run_outcome: a UserError (a tool missing, a file Yosys cannot read) and a kabe bug both leave
    the note; a build that runs to its gate removes it."""
    from types import SimpleNamespace

    import kabe.build as b
    from kabe.base import provenance

    monkeypatch.setattr(b, "REPORTS", tmp_path)
    monkeypatch.setattr(b.designs, "get", lambda d: SimpleNamespace(name="d1", expect_gate="pass"))
    monkeypatch.setattr(b, "flow_for", lambda d, f: "open")
    commit = provenance.Commit("c" * 40, False)

    def fails(*a, **k):
        raise b.BuildError("rtl/top.v:3: ERROR: syntax error (full log: yosys.log)")
    monkeypatch.setattr(b, "build", fails)
    assert b.run_outcome("d1", commit=commit).verdict == "could not run"
    (n,) = could_not_run.load(tmp_path)
    assert (n.design, n.flow, n.commit) == ("d1", "open", "c" * 40) and "syntax error" in n.reason

    def bug(*a, **k):
        raise ZeroDivisionError
    monkeypatch.setattr(b, "build", bug)
    b.run_outcome("d1", commit=commit)
    (n,) = could_not_run.load(tmp_path)
    assert "bug in kabe" in n.reason.lower()

    monkeypatch.setattr(b, "build", lambda *a, **k: {"design": "d1", "flow": "open"})
    monkeypatch.setattr(b.outcome, "from_record", lambda r, e: b.outcome.could_not_run("d1", "open", "-"))
    import kabe.build.summary as summary
    monkeypatch.setattr(summary, "render", lambda *a, **k: None)
    b.run_outcome("d1", commit=commit)
    assert could_not_run.load(tmp_path) == []
