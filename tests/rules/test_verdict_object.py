"""The one Verdict object (kabe.rules.gate.Verdict) that every consumer asks: read back from the dict it wrote
(a record's gate, kabe ci's verdict with the regressions) it says the same; a dict whose words contradict
each other is never a pass; what design.yaml's expect_gate makes of it, and its one-line reason."""

from __future__ import annotations

import pytest

from kabe.rules import gate

PASSED = gate.Verdict(True, checks=[{"name": "timing.wns", "expected": ">= 0", "got": 0.1, "passed": True}])
FAILED = gate.Verdict(False, ["timing gate: WNS -0.449 ns", "budget gate: lut 300 > 250"])
NOT_ESTIMATED = gate.Verdict(False, not_estimated="no routed Versal data")
UNVERIFIED = gate.Verdict(True, unverified="verify: none")
# not estimated AND failed (a board the open flow times, without a number): a failure wins
BOTH = gate.Verdict(False, ["timing gate: the record has no timing number"], not_estimated="no number")


@pytest.mark.parametrize("v", [PASSED, FAILED, NOT_ESTIMATED, UNVERIFIED, BOTH])
def test_a_verdict_read_back_from_its_dict_is_the_same_verdict(v):
    again = gate.Verdict.from_dict(v.as_dict())
    assert again == v and again.status == v.status and again.as_dict() == v.as_dict()


@pytest.mark.parametrize("forged", [
    {"passed": True, "status": "fail", "failures": []},
    {"passed": True, "status": "not_estimated", "failures": [], "not_estimated": "x"},
    {"passed": True, "failures": ["budget gate: lut 300 > 250"]},
    {"passed": False, "status": "fail", "failures": [], "not_estimated": "x"},
    {"passed": False, "status": "pass", "failures": []},
    {"passed": "true", "status": "pass", "failures": []},
    {"failures": []},
])
def test_words_that_contradict_each_other_are_a_fail(forged):
    v = gate.Verdict.from_dict(forged)
    assert v.status == gate.FAIL and not v.passed and v.why_not_passed()
    assert not v.as_expected("pass") and not v.as_expected("not_estimated")


def test_what_expect_gate_makes_of_each_status():
    table = {(s.status, e): s.as_expected(e) for s in (PASSED, FAILED, NOT_ESTIMATED) for e in
             ("pass", "fail", "not_estimated")}
    assert table == {("pass", "pass"): True, ("pass", "fail"): False, ("pass", "not_estimated"): True,
                     ("fail", "pass"): False, ("fail", "fail"): True, ("fail", "not_estimated"): False,
                     ("not_estimated", "pass"): False, ("not_estimated", "fail"): False,
                     ("not_estimated", "not_estimated"): True}


def test_its_reason_is_the_first_failure_and_how_many_more():
    assert FAILED.reason() == "timing gate: WNS -0.449 ns (and 1 more)"
    assert gate.Verdict(False, ["one"]).reason() == "one" and PASSED.reason() == ""
    assert NOT_ESTIMATED.why_not_passed() == "timing not estimated: no routed Versal data"
