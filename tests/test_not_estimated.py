"""The open flow on a board kabe cannot time (issue 24 item 4): "not estimated" is a third verdict,
neither pass nor fail, and never a timing PASS without a timing number.

The V80's profile says `open_flow.timing: not_estimated` (no routed Versal data for kabe's xc7 model)
and `synth_family: xcup` (Yosys has no Versal target: UltraScale+ counts, labelled a proxy). Every
consumer of the one verdict (kabe.rules.verdict.judge) sees the third outcome: the build's exit code and
line (kabe.rules.outcome), kabe ci (its outcome, lines, JUnit), `kabe gate`'s JUnit, the regressions'
combined verdict. Every way a record could claim "not estimated" to dodge the timing checks fails:
on a board that is timed, from a sign-off flow, with a slack beside it, without a reason, with a
failing budget or simulation. Fast: no tool runs (tests/test_third_board.py runs Yosys once).
"""

from __future__ import annotations

import copy
from pathlib import Path
from types import SimpleNamespace

import pytest

from kabe import boards
from kabe.project import designs
from kabe.rules import gate, outcome, verdict
from kabe.boards import profile as board_profile
from kabe.project.constraints import Clock
from kabe.flows import open as open_flow, yosys_script
from kabe.parsers import yosys_stat
from kabe.records import junit, metrics
from kabe.rules.regressions import Judgement, combined_verdict

V80 = boards.get("v80")
PYNQ = boards.get("pynq-z1")
CLOCK = Clock("clk", 2.5, (0.0, 1.25), "ports", ("clk",), "v80.xdc:1")
UTIL = {"lut": 4000, "ff": 3000, "dsp": 0, "bram36_equiv": 0}
NE = verdict.DesignFacts("v80_x", "open", expect_gate="not_estimated", open_timing="not_estimated")


def v80_timing() -> dict:
    return open_flow.not_estimated_timing(V80, [CLOCK])


def judged(timing, facts=NE, util=UTIL, sim=None, recorded=None) -> gate.Verdict:
    return verdict.judge({"timing": timing, "utilization": util, "sim": sim, "gate": recorded}, facts)


# --- the flow's records --------------------------------------------------------------------------

def test_the_v80_record_has_no_timing_number_and_says_why():
    t = v80_timing()
    assert t["estimated"] is True and t["wns_ns"] is None and t["critical_path"] is None
    assert t["clocks"] == [{"name": "clk", "period_ns": 2.5}]
    assert t["not_estimated"].startswith("no routed Versal data") and "v80" in t["not_estimated"]


def test_resources_of_a_foreign_fabric_are_labelled_a_proxy():
    assert open_flow.labelled_utilization(UTIL, V80)["proxy"].startswith("UltraScale+ proxy: Yosys synth_xilinx "
                                                                          "-family xcup (Yosys has no versal target)")
    assert "proxy" not in open_flow.labelled_utilization(UTIL, PYNQ)  # the xc7z020 is xc7's own fabric
    assert yosys_script.proxy_label("xcup", "zynq-ultrascale+") is None  # a ZU+ part: xcup is its fabric
    assert yosys_script.proxy_label("xc7", "versal").startswith("7-series proxy")


def test_the_yosys_script_maps_to_the_board_family_and_drops_the_core_s_own():
    inp = dict(top="t", sources=(Path("t.v"),), synth_options=("-family", "xc7", "-abc9"))
    v80 = yosys_script.render(yosys_script.ScriptInputs(**inp, family=V80.synth_family), Path("."))
    assert "synth_xilinx -family xcup -top t -abc9 -flatten" in v80 and "xc7" not in v80
    pynq = yosys_script.render(yosys_script.ScriptInputs(**inp, family=PYNQ.synth_family), Path("."))
    assert "synth_xilinx -family xc7 -top t -abc9 -flatten" in pynq
    with pytest.raises(ValueError, match="-family 'versal' is not one of xc7, xcu, xcup"):
        yosys_script.render(yosys_script.ScriptInputs(**inp, family="versal"), Path("."))


def test_ultrascale_cells_are_counted_so_a_budget_never_reads_zero():
    u = yosys_stat.utilization_from_counts({"DSP48E2": 3, "RAMB36E2": 2, "RAMB18E2": 1, "CARRY8": 5,
                                            "URAM288": 4, "LUT6": 10, "FDRE": 7})
    assert (u["dsp"], u["ramb36"], u["ramb18"], u["bram36_equiv"]) == (3, 2, 1, 2.5)
    assert (u["carry8"], u["uram288"], u["lut"], u["ff"]) == (5, 4, 10, 7)
    assert "carry8" not in yosys_stat.utilization_from_counts({"CARRY4": 2})  # 7-series records unchanged
    v = gate.evaluate(v80_timing(), u, gate.budgets_from_mapping({"dsp": {"eq": 0}}))
    assert v.status == gate.FAIL and "dsp = 3" in v.failures[0]


# --- the verdict ---------------------------------------------------------------------------------

def test_not_estimated_is_neither_pass_nor_fail():
    v = judged(v80_timing())
    assert (v.status, v.passed, v.failures) == (gate.NOT_ESTIMATED, False, [])
    assert v.not_estimated.startswith("no routed Versal data")
    assert NE.as_expected(v) and not verdict.DesignFacts("x", "open").as_expected(v)
    d = v.as_dict()
    assert d["status"] == "not_estimated" and d["passed"] is False
    assert not any(c["name"].startswith("timing.wns") for c in d["checks"])  # no slack was checked, none passed
    again = judged(v80_timing(), recorded=d)  # re-judging what judge() wrote gives the same verdict
    assert (again.status, again.failures) == (gate.NOT_ESTIMATED, [])


@pytest.mark.parametrize("change, said", [
    (lambda t: t.update(wns_ns=0.5), "carries wns_ns: it contradicts itself"),
    (lambda t: t.update(critical_path={"delay_ns": 1.0}), "carries critical_path"),
    (lambda t: t.update(verdict_line=gate.VERDICT_MET), "carries verdict_line"),
    (lambda t: t.update(clock_interaction=[{"from": "a", "to": "b", "unsafe": True}]), "carries clock_interaction"),
    (lambda t: t.update(estimated=False), "a sign-off timing report always has timing"),
    (lambda t: t.update(not_estimated=""), "gives no reason"),
    (lambda t: t.update(not_estimated=None), "gives no reason"),
    (lambda t: t.update(clocks=[]), "no clock is constrained"),
])
def test_a_record_that_claims_not_estimated_to_dodge_a_check_fails(change, said):
    t = v80_timing()
    change(t)
    v = judged(t)
    assert v.status == gate.FAIL and not v.passed and not NE.as_expected(v)
    assert any(said in f for f in v.failures), v.failures


def test_only_a_board_kabe_cannot_time_may_claim_it():
    v = judged(v80_timing(), facts=verdict.DesignFacts("stage4", "open"))  # a PYNQ-Z1 design's facts
    assert v.status == gate.FAIL
    assert "stage4's board is timed by the open flow (its profile says open_flow.timing: estimated)" in v.failures[0]
    # the facts come from the design's board profile
    design = SimpleNamespace(name="v", budgets_for=lambda flow: {}, waivers={}, expect_gate="not_estimated",
                             board=V80)
    assert verdict.DesignFacts.of(design, "open").open_timing == "not_estimated"
    assert verdict.DesignFacts.of(SimpleNamespace(**{**vars(design), "board": None}), "open").open_timing == "estimated"


def test_a_timing_pass_without_a_number_still_fails():
    t = {"estimated": True, "wns_ns": None, "tns_ns": None, "whs_ns": None, "critical_path": None,
         "clocks": [{"name": "clk", "period_ns": 2.5}]}  # "passes" with no WNS and no not_estimated reason
    v = judged(t)
    assert v.status == gate.FAIL and "has no WNS" in v.failures[0]
    forged = judged(t, recorded={"passed": True, "status": "not_estimated", "failures": [], "checks": []})
    assert forged.status == gate.FAIL  # the record's own words are never the verdict


def test_any_failure_beside_not_estimated_makes_it_a_fail():
    budget = verdict.DesignFacts("v80_x", "open", (gate.Budget("lut", "lt", 100),), {}, "not_estimated",
                                 "not_estimated")
    assert judged(v80_timing(), facts=budget).status == gate.FAIL
    sim = {"passed": False, "mismatches": 3, "rows_checked": 64, "words_checked": 64, "problems": [], "first_mismatches": []}
    v = judged(v80_timing(), sim=sim)
    assert v.status == gate.FAIL and "3 of 64 beat(s) differ" in v.failures[0]
    carried = judged(v80_timing(), recorded={"passed": False, "failures": ["the bitstream was not written"],
                                             "checks": [], "status": "not_estimated"})
    assert carried.status == gate.FAIL and "recorded at build time: the bitstream" in carried.failures[0]
    bare = judged(v80_timing(), recorded={"passed": False, "failures": [], "checks": []})  # a fail without why
    assert bare.status == gate.FAIL


def test_the_schema_takes_a_not_estimated_record():
    v = judged(v80_timing())
    rec = {"schema": metrics.SCHEMA_ID, "commit": "a" * 40, "dirty": False, "design": "v80_x", "flow": "open",
           "part": V80.part, "clock_period_ns": 2.5, "timing": v80_timing(),
           "utilization": open_flow.labelled_utilization({**UTIL, "carry8": 5, "uram288": 2}, V80),
           "gate": v.as_dict(), "tools": {}, "inputs": {}, "artifacts": {}, "started": "2026-12-02T00:00:00+00:00",
           "finished": "2026-12-02T00:00:10+00:00", "seconds": 10.0}
    metrics.validate(rec)
    for path, bad in ((("gate", "status"), "maybe"), (("timing", "not_estimated"), ""), (("utilization", "proxy"), 3)):
        broken = copy.deepcopy(rec)
        broken[path[0]][path[1]] = bad
        with pytest.raises(metrics.MetricsError):
            metrics.validate(broken)


# --- what each consumer makes of it --------------------------------------------------------------

def _record(gate_dict: dict) -> dict:
    return {"design": "v80_x", "flow": "open", "commit": "b" * 40, "dirty": False, "gate": gate_dict}


def test_the_build_exits_0_only_when_design_yaml_expects_it():
    g = judged(v80_timing()).as_dict()
    ok = outcome.from_record(_record(g), "not_estimated")
    assert ok.code == 0 and ok.verdict == outcome.NOT_ESTIMATED
    assert "gate timing NOT ESTIMATED (no routed Versal data" in ok.line and "PASS" not in ok.line
    for expected in ("pass", "fail"):
        o = outcome.from_record(_record(g), expected)
        assert o.code == 1 and f"design.yaml says expect_gate: {expected}" in o.line
    # a design expecting not_estimated may pass on a flow that times it (Vivado), never fail
    assert outcome.from_record(_record({"passed": True, "failures": [], "checks": []}), "not_estimated").code == 0
    failed = outcome.from_record(_record({"passed": False, "failures": ["timing gate: x"], "checks": []}),
                                 "not_estimated")
    assert failed.code == 1 and failed.verdict == outcome.FAIL
    # a gate whose words contradict each other is a fail
    for forged in ({**g, "passed": True}, {**g, "failures": ["budget exceeded"]}):
        assert outcome.from_record(_record(forged), "not_estimated").verdict == outcome.FAIL


def test_expect_gate_not_estimated_is_for_a_board_that_is_not_timed(tmp_path):
    d = tmp_path / "cores" / "d"
    d.mkdir(parents=True)
    (d / "d.core").write_text("CAPI=2:\nname: kabe:design:d:0.1.0\ntargets:\n  default: {}\n")
    (d / "d.xdc").write_text("create_clock -period 7.000 -name clk [get_ports clk]\n")
    (d / "design.yaml").write_text('core: kabe:design:d:0.1.0\nverify: {none: "t"}\nconstraints: d.xdc\n'
                                   "expect_gate: not_estimated\n")
    with pytest.raises(designs.DesignError, match="expect_gate: not_estimated is for a board whose open-flow "
                                                  "timing is not estimated, but board pynq-z1's is"):
        designs.load(d / "design.yaml")
    (d / "design.yaml").write_text((d / "design.yaml").read_text() + "board: v80\n")
    loaded = designs.load(d / "design.yaml")
    assert loaded.expect_gate == "not_estimated" and loaded.board.key == "v80"


def test_kabe_ci_counts_it_apart_and_junit_skips_it():
    from kabe.ci.design_result import DesignOutcome

    g = judged(v80_timing()).as_dict()
    o = DesignOutcome("v80_x", "open", expect_gate="not_estimated", record=_record(g),
                      verdict=combined_verdict(g, Judgement()))
    assert o.ok and o.status == "timing not estimated" and o.not_estimated.startswith("no routed Versal data")
    cases = {c.name: c for c in o.junit_suite().cases}
    assert cases["timing"].status == "skipped" and not any(c.status == "failed" for c in cases.values())
    wrong = DesignOutcome("v80_x", "open", expect_gate="pass", record=_record(g),
                          verdict=combined_verdict(g, Judgement()))
    assert not wrong.ok and "no pass" in wrong.reasons()[0]
    assert [c.status for c in wrong.junit_suite().cases if c.name == "timing"] == ["failed"]
    suite = junit.gate_suite(judged(v80_timing()), "metrics.json")  # kabe gate --junit
    assert suite.cases[0].name == "timing" and suite.cases[0].status == "skipped"


def test_a_failed_regression_turns_it_into_a_fail():
    from kabe.rules.regressions import Check as RegressionCheck

    g = judged(v80_timing()).as_dict()
    kept = combined_verdict(g, Judgement())
    assert (kept["status"], kept["passed"], kept["not_estimated"]) == ("not_estimated", False, g["not_estimated"])
    worse = Judgement(checks=[RegressionCheck("regression.lut", "+0 %", "+9 %", False, "lut grew 9 %")])
    failed = combined_verdict(g, worse)
    assert failed["status"] == "fail" and failed["not_estimated"] is None and "lut grew 9 %" in failed["failures"]


def test_kabe_s_own_profiles_say_what_the_pipeline_reads():
    assert (V80.synth_family, V80.open_timing, V80.family) == ("xcup", "not_estimated", "versal")
    assert (PYNQ.synth_family, PYNQ.open_timing, PYNQ.family) == ("xc7", "estimated", "zynq-7000")
    assert set(board_profile.SYNTH_FAMILIES) == set(yosys_script.SYNTH_FABRICS)  # one list of Yosys families


# --- every consumer of the one verdict, on one archived record (as tests/test_one_verdict.py asks) ----

def test_every_consumer_sees_not_estimated_and_none_a_pass(tmp_path, monkeypatch, capsys):
    import dataclasses
    import io

    from rich.console import Console

    from kabe import cli
    from kabe.base import provenance
    from kabe.build import verdict as build_verdict
    from kabe.ci import CiOptions
    from kabe.ci.run import _one
    from kabe.deploy import ssh
    from kabe.deploy.host import _archived_build
    from kabe.base.paths import CORES
    from kabe.records import history, load as record_load
    from records_fixtures import as_this_checkouts_build, two_commit_repo, write_archive
    from test_one_verdict import _record

    real_get = designs.get
    on_v80 = dataclasses.replace(real_get("stage2"), board=V80, expect_gate="not_estimated")  # stage2 on the V80
    monkeypatch.setattr(designs, "get", lambda name, *a, **kw: on_v80 if name in ("stage2", on_v80)
                        else real_get(name, *a, **kw))
    repo, shas = two_commit_repo(tmp_path)
    rec = _record(shas[1], timing={**v80_timing(), "clocks": [{"name": "clk_fpga_0", "period_ns": 7.0}]})
    rec["gate"] = verdict.judge(rec, verdict.DesignFacts.of(on_v80, "open")).as_dict()
    path = write_archive(tmp_path / "reports", rec)
    as_this_checkouts_build(monkeypatch, path)

    statuses = {
        "judge": verdict.judge(copy.deepcopy(rec), verdict.DesignFacts.of(on_v80, "open")).status,
        "cache hit": build_verdict.build_verdict(on_v80, "open", rec["timing"], rec["utilization"], rec["sim"],
                                                 rec["gate"]).status,
        "records.load": record_load.checked(path).verdict.status,
        "history": history.load(tmp_path / "reports", repo, CORES)[0].verdict.status,
    }
    assert set(statuses.values()) == {gate.NOT_ESTIMATED}, statuses
    capsys.readouterr()
    assert cli.main(["gate", str(path)]) == 1  # no expectation: not a pass
    assert "gate: timing NOT ESTIMATED" in capsys.readouterr().err
    o = _one("stage2", "open", provenance.Commit(shas[1], False), None, CiOptions(designs=["stage2"], flow="open"),
             Console(file=io.StringIO(), width=200, color_system=None), tmp_path / "reports")
    assert o.reused and o.ok and o.status == "timing not estimated", (o.error, o.status, o.reasons())
    with pytest.raises(ssh.DeployError, match=r"did not pass its gate \(timing not estimated: no routed Versal data"):
        _archived_build(on_v80, "open", provenance.Commit(shas[1], False), tmp_path / "reports")
    # The V80's ami_tool path refuses the same way (it once took failures[0] of an empty list: IndexError).
    from kabe.deploy import ami
    with pytest.raises(ssh.DeployError, match=r"did not pass its gate \(timing not estimated: no routed Versal data"):
        ami._archived_image(on_v80, "open", provenance.Commit(shas[1], False), tmp_path / "reports")


def test_kabe_diff_says_not_estimated():
    from kabe.records.diff import _pass_word

    v = judged(v80_timing())
    assert _pass_word(SimpleNamespace(passed=v.passed, verdict=v)) == "not estimated"
    failed = judged(dict(v80_timing(), wns_ns=0.1))
    assert _pass_word(SimpleNamespace(passed=failed.passed, verdict=failed)) == "FAIL"


def test_the_page_shows_not_estimated_as_neither_pass_nor_fail():
    from kabe.page import report

    entry = SimpleNamespace(verdict=judged(v80_timing()), passed=False)
    assert entry.verdict.status == "not_estimated"
    cells = report._gate_cells(entry, "not_estimated")
    assert ">not estimated<" in cells and "no routed Versal data" in cells
    assert "FAIL" not in cells and ">pass<" not in cells
