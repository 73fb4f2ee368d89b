"""A design that is not kabe's, verified its own way (issue 23): a golden model through kabe.verify on
streams design.yaml declares (32- and 128-bit, names of its own, backpressure), and a cocotb testbench
in cocotb's own runner. Real Verilator and real cocotb; the designs live in temporary projects."""

from __future__ import annotations

from kabe.project.design_context import DesignContext
from kabe.sim.ask import SimAsk
import uuid
from pathlib import Path

import pytest

from . import user_designs as u
from kabe.project import designs
from kabe.base.errors import UserError
from kabe.sim import cocotb_run, golden, runner

pytestmark = pytest.mark.e2e  # end to end: real tools, minutes (the fast tier leaves it out: -m 'not e2e')


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    return tmp_path_factory.mktemp("project")


@pytest.fixture
def project(shared, monkeypatch):
    """A project folder whose root is importable (as kabe puts the project root on sys.path), shared
    by the tests of the unchanged top (one Verilator compile), with a model module name of its own
    per test (Python caches a module by name)."""
    monkeypatch.syspath_prepend(str(shared))
    monkeypatch.setattr(golden, "ROOT", shared)
    return shared


def _width(project: Path, top: str = u.WIDTH_TOP, model: str = u.WIDTH_MODEL) -> designs.Design:
    name = f"width_model_{uuid.uuid4().hex[:8]}"
    y = u.write_width(project, top, model, u.WIDTH_YAML.replace("width_model:", f"{name}:"))
    (project / f"{name}.py").write_text(model)
    return designs.load(y)


def test_a_user_model_checks_100k_wide_beats_bit_exact(project):
    d = _width(project)
    r = runner.run_sim(DesignContext(designs.get(d)), SimAsk(None, seed=5, build_root=project / "build"))  # size None: the model's 100,000
    assert r["passed"], (r["problems"], r["first_mismatches"])
    assert r["mismatches"] == 0 and r["problems"] == []
    assert r["words_checked"] == 100_000 + 400_000  # 128-bit m_axis beats + 32-bit m_narrow_axis beats
    assert r["status"] == {"beats_seen": 400_000} and r["expected_status"] == {"beats_seen": 400_000}
    assert r["beats"] == 500_000 and r["beats_per_cycle"] < 1.0  # s_wide_axis waits while it unpacks
    assert r["verification"] == {"kind": "model", "model": d.verify.value}
    assert r["streams"]["out"] == {"m_axis": 128, "m_narrow_axis": 32}


def test_a_broken_user_design_fails_on_the_beats_it_gets_wrong(tmp_path, monkeypatch):
    """The packer with its words in the wrong order: every 128-bit beat differs, shown in hex; the
    unpacker is right and agrees."""
    monkeypatch.syspath_prepend(str(tmp_path))
    top = u.WIDTH_TOP.replace("m_axis_tdata <= {s_axis_tdata, acc};", "m_axis_tdata <= {acc, s_axis_tdata};")
    d = _width(tmp_path, top)
    r = runner.run_sim(DesignContext(designs.get(d)), SimAsk(1000, seed=2, build_root=tmp_path / "build"))
    assert not r["passed"] and r["mismatches"] == 1000
    assert {m["port"] for m in r["first_mismatches"]} == {"m_axis"}
    first = r["first_mismatches"][0]
    assert first["beat"] == 0 and first["expected"].startswith("0x") and first["expected"] != first["got"]


def test_a_wrong_status_prediction_fails(project):
    model = u.WIDTH_MODEL.replace('status={"beats_seen": 4 * n}', 'status={"beats_seen": 4 * n + 1}')
    r = runner.run_sim(DesignContext(designs.get(_width(project, model=model))), SimAsk(200, build_root=project / "build"))
    assert not r["passed"] and r["mismatches"] == 0
    assert r["problems"] == ["beats_seen = 800 at the end of the run, the model expects 801"]


def test_a_model_that_expects_no_word_checks_nothing_and_fails(project):
    """Empty stimulus and expected arrays: nothing compared is no pass (as a cocotb run with no test)."""
    d = _width(project)
    r = runner.run_sim(DesignContext(designs.get(d)), SimAsk(0, build_root=project / "build"))  # size 0: the model's arrays are all empty
    assert r["words_checked"] == 0 and r["mismatches"] == 0
    assert not r["passed"] and r["problems"] == [
        f"the golden model {d.verify.value} expected no word on m_axis, m_narrow_axis: nothing was checked (its "
        f"expected arrays are empty, and so is its stimulus); make it return at least one input beat and the "
        f"words that must come out"]


@pytest.mark.parametrize("change, message", [
    (('"s_wide_axis": wide}', '"s_wyde_axis": wide}'),
     r"gives beats for \['s_axis', 's_wyde_axis'\]; design.yaml's streams.in declares \['s_axis', 's_wide_axis'\]"),
    (('inputs={"s_axis": words,', 'inputs={"s_axis": words.astype(np.uint64) << 1,'),
     r"s_axis: beat \d+ has bits above bit 31"),
    (("wide = rng.integers(0, 256, size=(n, 16), dtype=np.uint8)",
      "wide = rng.integers(0, 256, size=(n, 8), dtype=np.uint8)"),
     r"s_wide_axis: a 2-D beat array must be uint8 of shape \(beats, 16\) for a 128-bit port"),
    (("n = 100_000 if size is None else size", "raise ValueError('size must be even')"),
     r"raised ValueError: size must be even"),
    (('status={"beats_seen": 4 * n}', 'status={"beats_sen": 4 * n}'),
     r"expects status outputs \['beats_sen'\] that design.yaml's streams.status does not declare"),
    # red team 3b (15, 05, 16): a declared status with no value, a single value for beats, an expected or
    # status function that raises (called while the simulation runs)
    (('status={"beats_seen": 4 * n},', ''),
     r"gives no expected value for status output\(s\) \['beats_seen'\] that design.yaml's streams.status declares"),
    (('"m_narrow_axis": wide.reshape(-1).view("<u4")}', '"m_narrow_axis": np.uint32(3)}'),
     r"expected beats on m_narrow_axis are a single value \(uint32, a 0-d array\)"),
    (('expected={"m_axis"', 'expected_beats={"m_axis": n, "m_narrow_axis": 4 * n}, expected=lambda: (1 // 0) or {"m_axis"'),
     r"its expected function raised ZeroDivisionError: integer division or modulo by zero"),
    (('status={"beats_seen": 4 * n}', 'status=lambda: {"beats_seen": int("four")}'),
     r"its status function raised ValueError: invalid literal"),
])
def test_a_model_mistake_is_one_line_naming_the_model(project, change, message):
    d = _width(project, model=u.WIDTH_MODEL.replace(*change))
    with pytest.raises(UserError, match=message) as e:
        runner.run_sim(DesignContext(designs.get(d)), SimAsk(16, build_root=project / "build"))
    assert d.verify.value in str(e.value) and "\n" not in str(e.value)


def test_a_model_that_cannot_be_imported_says_where_it_looked(tmp_path):
    d = designs.load(u.write_width(tmp_path, yaml_text=u.WIDTH_YAML.replace("width_model:", "no_such_model:")))
    with pytest.raises(golden.ModelError, match=r"cannot import no_such_model \(ModuleNotFoundError.*project root"):
        runner.run_sim(DesignContext(designs.get(d)), SimAsk(16, build_root=tmp_path / "build"))
    assert not (tmp_path / "build" / "sim" / "width").exists()  # said before any Verilator build


# ---- cocotb -------------------------------------------------------------------------------------

def test_a_cocotb_testbench_is_the_verdict_and_its_junit_is_archived(tmp_path):
    d = designs.load(u.write_acc(tmp_path))
    r = runner.run_sim(DesignContext(designs.get(d)), SimAsk(build_root=tmp_path / "build"))
    assert r["passed"] and r["tests"] == 2 and r["failed"] == 0 and r["problems"] == [], r["problems"]
    assert r["simulator"] == "cocotb" and r["verification"] == {"kind": "cocotb", "cocotb": "test_acc"}
    path = runner.write_result(r, tmp_path / "reports")
    junit = path.with_name("junit.xml")
    assert path.parent.name == "sim" and junit.is_file()
    assert cocotb_run.parse_junit(junit.read_text(), "archived")["tests"] == 2
    assert "junit_xml" not in path.read_text()  # the result names the file, it does not carry it


def test_a_failing_cocotb_test_fails_the_design(tmp_path):
    broken = u.ACC_TEST.replace("total = (total + b) & 0xFFFF", "total = (total + b + 1) & 0xFFFF")
    d = designs.load(u.write_acc(tmp_path, broken))
    r = runner.run_sim(DesignContext(designs.get(d)), SimAsk(build_root=tmp_path / "build"))
    assert not r["passed"] and r["tests"] == 2 and r["failed"] == 1
    assert len(r["problems"]) == 1 and r["problems"][0].startswith("cocotb test 'sums_bytes' failed: ("), r
    assert "assert" in r["problems"][0]  # cocotb's own assertion message, carried from the JUnit


def test_junit_is_read_as_data():
    ok = '<testsuites><testsuite><testcase name="a"/><testcase name="b"><failure message="x != y"/></testcase>' \
         '<testcase name="c"><skipped/></testcase></testsuite></testsuites>'
    assert cocotb_run.parse_junit(ok, "t") == {"tests": 3, "failed": 1, "skipped": 1,
                                               "failures": ["cocotb test 'b' failed: x != y"]}
    with pytest.raises(cocotb_run.CocotbError, match="DTD or entities"):
        cocotb_run.parse_junit('<!DOCTYPE x [<!ENTITY a "b">]><testsuites/>', "t")
    with pytest.raises(cocotb_run.CocotbError, match="not XML"):
        cocotb_run.parse_junit("<testsuites><testcase", "t")


def test_a_testbench_module_that_is_not_there_is_one_line(tmp_path):
    y = u.write_acc(tmp_path)
    (y.parent / "test_acc.py").unlink()
    with pytest.raises(cocotb_run.CocotbError, match=r"verify.cocotb test_acc: no test_acc.py in the design's folder"):
        runner.run_sim(DesignContext(designs.get(designs.load(y))), SimAsk(build_root=tmp_path / "build"))


def test_a_none_design_is_not_simulated(tmp_path):
    d = designs.load(u.write_counter(tmp_path))
    with pytest.raises(runner.SimError, match=f"counter is not simulated .*verify: none: {u.NONE_REASON}"):
        runner.run_sim(DesignContext(designs.get(d)))


def test_a_design_with_a_model_of_its_own_goes_on_to_deploy(tmp_path):
    """Any golden model deploys (tests/deploy/test_deploy_user_design.py runs one on the loopback board):
    a model of the project's own passes the verification check and is stopped only by what is missing,
    here the vivado-flow build; a design without a model is refused in one line."""
    from kabe.deploy import host, ssh

    d = designs.load(u.write_width(tmp_path))
    with pytest.raises(ssh.DeployError, match=r"no vivado-flow build of width is archived"):
        host.deploy(d, None, host.DeployRun(rows=8, reports_root=tmp_path / "reports"))
    y = d.yaml_file
    y.write_text(y.read_text().replace('verify: {model: "width_model:stimulus"}', 'verify: {none: "a test of the refusal"}'))
    with pytest.raises(ssh.DeployError, match=r"width is verified by unverified: a test of the refusal; deploy streams"):
        host.deploy(designs.load(y), None, host.DeployRun(rows=8, reports_root=tmp_path / "reports"))


# ---- X: never a fixed value a model can match by luck ------------------------------------------

def test_x_reaching_an_output_is_a_random_value_that_the_seed_reproduces(tmp_path, monkeypatch):
    """The packer's low byte is `8'bx` and the model says 0 there (red team 3b, repro 09). Built with
    --x-assign fast, X was a fixed 0 and the run passed; with --x-assign/--x-initial unique and
    +verilator+rand+reset+2 it is random, fixed by the run's seed (x_seed), so it mismatches, and a
    rerun with the same seed shows the same values."""
    from kabe.sim import verilator_build

    monkeypatch.syspath_prepend(str(tmp_path))
    top = u.WIDTH_TOP.replace("m_axis_tdata <= {s_axis_tdata, acc};", "m_axis_tdata <= {s_axis_tdata, acc[95:8], 8'bx};")
    model = u.WIDTH_MODEL.replace('expected={"m_axis": words.view(np.uint8).reshape(n, 16),',
                                  'expected={"m_axis": np.where(np.arange(16) == 0, 0, words.view(np.uint8).reshape(n, 16)).astype(np.uint8),')
    assert model != u.WIDTH_MODEL and top != u.WIDTH_TOP
    d = _width(tmp_path, top, model)
    first = runner.run_sim(DesignContext(designs.get(d)), SimAsk(64, seed=4, build_root=tmp_path / "build"))
    assert not first["passed"] and first["mismatches"] > 0 and first["x_seed"] == verilator_build.x_seed(4)
    again = runner.run_sim(DesignContext(designs.get(d)), SimAsk(64, seed=4, build_root=tmp_path / "build"))
    assert again["first_mismatches"] == first["first_mismatches"]  # the same X values: the run reproduces
    assert {"--x-assign", "--x-initial"} <= set(verilator_build.X_OPTIONS) and "fast" not in verilator_build.X_OPTIONS
    build_log = next((tmp_path / "build" / "sim" / "width").glob("*/build.log")).read_text()
    assert "--x-assign unique --x-initial unique" in build_log
    assert verilator_build.x_plusargs(4) == ["+verilator+rand+reset+2", f"+verilator+seed+{verilator_build.x_seed(4)}"]
    assert len({verilator_build.x_seed(s) for s in range(100)}) == 100 and 0 not in {verilator_build.x_seed(s) for s in range(100)}
