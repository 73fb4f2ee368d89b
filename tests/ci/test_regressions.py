"""Regression rules against a base build: each rule can fail, the limits are inclusive, float noise
does not fail an allowed change, a missing baseline is a note (neither pass nor fail), a value
missing from this build fails, and design.yaml rejects a rule it does not know."""

from __future__ import annotations

import pytest

from kabe.project import designs
from kabe.rules import regressions
from kabe.rules.regressions import Regression

from .conftest import record

BASE = "f" * 40


def _judge(rules: dict, now: dict, base: dict | None, base_commit: str | None = BASE):
    return regressions.compare("stage4", regressions.rules_from_mapping(rules), now, base_commit, base)


def test_lut_increase_beyond_the_percentage_fails_naming_design_metric_base_and_both_values():
    j = _judge({"lut": {"max_increase_pct": 5}}, record("x", lut=9500), record(BASE, lut=9000))
    (check,) = j.checks
    assert not check.passed and check.name == "regression.lut.max_increase_pct" and check.got == 9500
    assert check.message == ("regression: stage4 lut 9,000 at base ffffffffffff -> 9,500 here (+500, +5.6%); "
                             "allowed: increase <= 5%")


@pytest.mark.parametrize("rules, base, now, ok", [
    ({"lut": {"max_increase_pct": 5}}, {"lut": 9000}, {"lut": 9450}, True),  # exactly +5 %: allowed
    ({"lut": {"max_increase_pct": 5}}, {"lut": 9000}, {"lut": 9451}, False),
    ({"lut": {"max_increase_pct": 5}}, {"lut": 9000}, {"lut": 5000}, True),  # fewer LUTs is never a regression
    ({"dsp": {"max_increase": 0}}, {"dsp": 0}, {"dsp": 1}, False),
    ({"dsp": {"max_increase_pct": 50}}, {"dsp": 0}, {"dsp": 1}, False),  # from zero, any increase is infinite %
    ({"dsp": {"max_increase_pct": 50}}, {"dsp": 0}, {"dsp": 0}, True),
    ({"wns_ns": {"max_decrease": 0.2}}, {"wns": 2.2}, {"wns": 2.0}, True),  # 2.2 - 2.0 = 0.20000000000000018: noise
    ({"wns_ns": {"max_decrease": 0.2}}, {"wns": 1.0}, {"wns": 0.8}, True),
    ({"wns_ns": {"max_decrease": 0.2}}, {"wns": 1.0}, {"wns": 0.79}, False),
    ({"wns_ns": {"max_decrease_pct": 10}}, {"wns": 1.0}, {"wns": 0.85}, False),
    ({"wns_ns": {"max_decrease": 0.2}}, {"wns": 1.0}, {"wns": 3.0}, True),
])
def test_each_rule_passes_and_fails_where_it_should(rules, base, now, ok):
    j = _judge(rules, record("x", **now), record(BASE, **base))
    assert [c.passed for c in j.checks] == [ok] and j.baseline and j.passed == ok


def test_no_archived_base_build_is_a_note_neither_pass_nor_fail():
    j = _judge({"lut": {"max_increase_pct": 5}}, record("x", lut=99999), None)
    assert j.checks == [] and not j.baseline
    assert j.notes == ["stage4 (open): no archived build at base ffffffffffff, so its regression rules were not "
                       "judged (neither pass nor fail); a build pushed from the base branch makes one"]
    j = _judge({"lut": {"max_increase_pct": 5}}, record("x"), None, base_commit=None)
    assert j.checks == [] and "no base commit" in j.notes[0]


def test_a_metric_missing_from_this_build_fails_and_one_missing_from_the_base_is_a_note():
    now, base = record("x"), record(BASE)
    del now["utilization"]["lut"]
    j = _judge({"lut": {"max_increase": 0}}, now, base)
    assert [c.passed for c in j.checks] == [False] and "cannot be judged" in j.checks[0].message
    now, base = record("x"), record(BASE)
    base["timing"]["wns_ns"] = None  # the base's timing report was unreadable
    j = _judge({"wns_ns": {"max_decrease": 0.2}}, now, base)
    assert j.checks == [] and "has no wns_ns" in j.notes[0]


def test_regressions_join_the_gate_verdict_in_its_shape():
    now = record("x", lut=9500)
    j = _judge({"lut": {"max_increase_pct": 5}}, now, record(BASE, lut=9000))
    v = regressions.combined_verdict(now["gate"], j)
    assert v["passed"] is False and v["failures"][-1].startswith("regression: stage4 lut")
    assert v["checks"][-1] == {"name": "regression.lut.max_increase_pct", "expected": "increase <= 5% vs base ffffffffffff (9,000)",
                               "got": 9500, "passed": False}
    assert now["gate"]["passed"] is True  # the archived gate verdict itself is not changed


def test_an_unknown_rule_is_refused():
    with pytest.raises(ValueError, match="unknown"):
        Regression("lut", "max_growth", 5)


@pytest.mark.parametrize("yaml_value, says", [
    ("{lut: {max_growth: 5}}", "unknown rule 'max_growth'"),
    ("{lut: {max_increase_pct: -1}}", "must be a number >= 0"),
    ("{lut: {max_increase_pct: five}}", "must be a number >= 0"),
    ("{lut: 5}", "must map a rule"),
    ("[lut]", "regressions must be a mapping"),
])
def test_design_yaml_regressions_are_validated(tmp_path, yaml_value, says):
    d = tmp_path / "demo"
    d.mkdir()
    (d / "demo.core").write_text("CAPI=2:\nname: kabe:design:demo:0.1.0\n")
    (d / "design.yaml").write_text(f"core: kabe:design:demo:0.1.0\nverify: {{model: 'llm_accel.model.frames:ternary_stimulus'}}\nports: 2\nregressions: {yaml_value}\n")
    with pytest.raises(designs.DesignError, match=says) as e:
        designs.load(d / "design.yaml")
    assert str(d / "design.yaml") in str(e.value)


def test_the_projects_designs_declare_regressions():
    """Every design expected to pass (or, on a board the open flow cannot time, to be "not estimated") is
    held to its base; the negative example is not (it must fail anyway)."""
    for d in designs.all_designs().values():
        assert bool(d.regressions) == (d.expect_gate in ("pass", "not_estimated")), d.name
