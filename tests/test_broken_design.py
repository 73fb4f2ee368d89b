"""One bad design stops only itself (issue 23): a syntax error in one design.yaml must not stop `doit
list`, another design's build or `kabe ci`; the broken design is listed with its one-line error, and
exit 2 when it is asked for by name. The broken design lives in temporary folders and in a throwaway
copy of the project (tests/repo_copy.py), never in this checkout's cores/. One real build (stage2,
open flow) runs in the copy; `kabe ci` then reuses it from the copy's cache."""

from __future__ import annotations

import json
import re
import shutil

import pytest

import repo_copy
from kabe.project import designs
from kabe import tasks
from kabe.tasks.results import CouldNotRun

pytestmark = pytest.mark.e2e  # end to end: real tools, minutes (the fast tier leaves it out: -m 'not e2e')

BROKEN_YAML = "core: kabe:design:broken:0.1.0\nverify: {model: 'llm_accel.model.frames:probe_stimulus'}\nports: [1\n"  # an unclosed flow sequence
TRACEBACK = "Traceback (most recent call last)"


def _good(cores, name="good"):
    d = cores / name
    d.mkdir(parents=True)
    (d / f"{name}.core").write_text(f"CAPI=2:\nname: test:design:{name}:0.1.0\n")
    (d / "design.yaml").write_text(f"core: test:design:{name}:0.1.0\nverify: {{model: 'llm_accel.model.frames:probe_stimulus'}}\nports: 1\n")


def test_scan_splits_good_from_broken(tmp_path):
    _good(tmp_path)
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "design.yaml").write_text(BROKEN_YAML)
    good, broken = designs.scan(tmp_path)
    assert list(good) == ["good"] and list(broken) == ["broken"]
    assert "is not valid YAML" in str(broken["broken"]) and "\n" not in str(broken["broken"])
    assert designs.names(tmp_path) == ["broken", "good"]
    with pytest.raises(designs.DesignError):  # the strict reader still refuses the whole set
        designs.all_designs(tmp_path)


def test_a_broken_designs_task_fails_with_its_line(tmp_path, capsys):
    err = designs.DesignError("cores/broken/design.yaml: is not valid YAML: ...")
    task = tasks.broken_task("broken", err, "build")
    assert task["name"] == "broken" and task["doc"] == f"cannot be read: {err}"
    result = task["actions"][0]()
    assert isinstance(result, CouldNotRun)  # doit exit 2
    assert capsys.readouterr().err.strip() == f"kabe build broken: {err}"


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """A copy of the project with only stage2 and a broken design (the rest removed: kabe ci builds all)."""
    copy = repo_copy.make(tmp_path_factory.mktemp("broken"))
    for d in (copy / "cores").glob("*/design.yaml"):
        if d.parent.name != "stage2":
            shutil.rmtree(d.parent)
    (copy / "cores" / "broken").mkdir()
    (copy / "cores" / "broken" / "design.yaml").write_text(BROKEN_YAML)
    return copy


def test_doit_list_still_works_and_names_the_broken_design(project):
    rc, out = repo_copy.run(project, "doit", "list")
    assert rc == 0, out
    assert TRACEBACK not in out and "build " in out and "sim " in out
    said = [ln for ln in out.splitlines() if "broken" in ln]
    assert len(said) == 1 and said[0].startswith("kabe: design broken cannot be read") and "is not valid YAML" in said[0]
    rc, out = repo_copy.run(project, "doit", "list", "--all")
    assert rc == 0 and "build:stage2" in out, out
    assert any(ln.startswith("build:broken") and "cannot be read" in ln for ln in out.splitlines()), out


def test_asking_for_the_broken_design_exits_2_with_its_line(project):
    rc, out = repo_copy.run(project, "doit", "build:broken")
    assert rc == 2, out
    assert TRACEBACK not in out
    said = [ln for ln in out.splitlines() if "is not valid YAML" in ln]
    assert len(said) == 1 and said[0].startswith("kabe build broken: ") and "cores/broken/design.yaml" in said[0]


def test_another_designs_build_and_kabe_ci_go_on(project):
    rc, out = repo_copy.run(project, "doit", "build:stage2", "flow=open")
    assert rc == 0, out[-3000:]
    assert re.search(r"^kabe build stage2 \(open flow, [0-9a-f]{12}-dirty\): gate PASS", out, re.M), out[-3000:]
    assert "design broken" not in out  # a task asked for by name hears nothing of the other designs
    rc, out = repo_copy.run(project, "doit", "build", "flow=open")  # every design: stage2 is up to date
    assert rc == 2, out[-3000:]  # one of them could not run
    assert TRACEBACK not in out and "kabe: design broken cannot be read" in out
    rows = {ln.split()[0]: ln for ln in out.splitlines() if ln.split() and ln.split()[0] in ("stage2", "broken")}
    assert "up to date" in rows["stage2"] and "could not run" in rows["broken"], out[-3000:]
    rc, out = repo_copy.run(project, "kabe.cli", "ci", "--list-designs")
    assert rc == 0 and json.loads(out.strip().splitlines()[-1]) == ["broken", "stage2"], out
    rc, out = repo_copy.run(project, "kabe.cli", "ci", "--no-pull", "--no-push", "--flow", "open")
    assert rc == 2, out[-3000:]  # one design could not run
    assert TRACEBACK not in out
    assert "kabe ci: 1 of 2 design(s) failed: broken" in out, out[-3000:]
    assert "is not valid YAML" in out and "FAIL stage2" not in out
