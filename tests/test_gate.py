"""The gate must fail on every condition it guards, with a sentence that names the reason."""

import pytest

from kabe.gate import Budget, TimingRules, budgets_from_mapping, evaluate

CLOCK = [{"name": "clk", "period_ns": 7.0}]


def estimate(wns, **kw):
    t = {"estimated": True, "wns_ns": wns, "tns_ns": min(wns, 0.0), "whs_ns": None, "clocks": CLOCK,
         "failing_endpoints": 3 if wns < 0 else 0,
         "critical_path": {"clock": "clk", "startpoint": "cnt_reg", "endpoint": "acc_reg",
                           "delay_ns": 7.0 - wns, "logic_levels": 9}}
    t.update(kw)
    return t


def signoff(wns=0.1, whs=0.05, wpws=2.0, verdict="All user specified timing constraints are met.", **kw):
    t = {"estimated": False, "wns_ns": wns, "tns_ns": 0.0, "whs_ns": whs, "ths_ns": 0.0, "wpws_ns": wpws,
         "tpws_ns": 0.0, "clocks": [{"name": "clk_fpga_0", "period_ns": 7.0}], "verdict_line": verdict,
         "critical_path": None}
    t.update(kw)
    return t


UTIL = {"lut": 9000, "ff": 8000, "dsp": 0, "bram36_equiv": 2.0}


def test_positive_estimate_passes():
    v = evaluate(estimate(0.062), UTIL, budgets_from_mapping({"dsp": {"eq": 0}, "lut": {"lt": 12000}}))
    assert v.passed and v.failures == []
    assert {c["name"] for c in v.checks} == {"timing.clocks", "timing.wns", "budget.dsp", "budget.lut"}


def test_negative_wns_fails_naming_clock_slack_and_path():
    v = evaluate(estimate(-0.502), UTIL)
    assert not v.passed
    (msg,) = v.failures
    assert "-0.502" in msg and "clk" in msg and "cnt_reg -> acc_reg" in msg and "9 logic levels" in msg
    assert "estimated" in msg


@pytest.mark.parametrize("timing", [None, {}])
def test_missing_timing_fails(timing):
    v = evaluate(timing, UTIL)
    assert not v.passed and "no timing report" in v.failures[0]


def test_no_clock_fails():
    v = evaluate(estimate(1.0, clocks=[]), UTIL)
    assert not v.passed and any("no clock is constrained" in f for f in v.failures)


def test_unparsed_wns_fails():
    v = evaluate(estimate(1.0, wns_ns=None), UTIL)
    assert any("no WNS" in f for f in v.failures)


def test_budget_violation_fails_with_numbers():
    v = evaluate(estimate(0.5), {**UTIL, "dsp": 8}, [Budget("dsp", "eq", 0)])
    assert v.failures == ["budget exceeded: dsp = 8 (must be == 0)"]


def test_budget_on_missing_metric_fails():
    v = evaluate(estimate(0.5), UTIL, [Budget("carry4", "lt", 10)])
    assert not v.passed and "no 'carry4'" in v.failures[0]


def test_budget_without_utilization_fails():
    v = evaluate(estimate(0.5), None, [Budget("lut", "lt", 10)])
    assert not v.passed


def test_signoff_hold_and_pulse_width():
    assert evaluate(signoff(), UTIL).passed
    hold = evaluate(signoff(whs=-0.01, verdict="Timing constraints are not met."), UTIL)
    assert any("hold violation" in f for f in hold.failures)
    pw = evaluate(signoff(wpws=-0.2, verdict="Timing constraints are not met."), UTIL)
    assert any("pulse width violation" in f for f in pw.failures)


def test_signoff_missing_hold_or_verdict_fails():
    assert any("no WHS (hold slack)" in f for f in evaluate(signoff(whs=None), UTIL).failures)
    assert any("no verdict line" in f for f in evaluate(signoff(verdict=None), UTIL).failures)


def test_verdict_disagreeing_with_numbers_fails():
    v = evaluate(signoff(verdict="Timing constraints are not met."), UTIL)
    assert any("disagree" in f for f in v.failures)
    v = evaluate(signoff(wns=-0.1), UTIL)
    assert any("disagree" in f for f in v.failures)


def test_unconstrained_and_unsafe_crossings():
    strict = evaluate(signoff(unconstrained_endpoints=12), UTIL, rules=TimingRules(fail_on_unconstrained=True))
    assert any("12 endpoints are unconstrained" in f for f in strict.failures)
    lenient = evaluate(signoff(unconstrained_endpoints=12), UTIL)
    assert lenient.passed and {"name": "timing.unconstrained", "expected": "reported only", "got": 12,
                               "passed": True} in lenient.checks
    v = evaluate(signoff(clock_interaction=[{"from": "a", "to": "b", "type": "Timed (unsafe)"}]), UTIL)
    assert any("unsafe clock interaction a -> b" in f for f in v.failures)


def test_bad_budget_spec_is_refused():
    with pytest.raises(ValueError, match="unknown"):
        budgets_from_mapping({"lut": {"below": 3}})


def test_unreadable_report_fails_with_the_parsers_reason():
    v = evaluate({"estimated": True, "wns_ns": None, "error": "timing.rpt: truncated after line 12"}, UTIL)
    assert v.failures == ["timing gate: timing.rpt: truncated after line 12"]


def test_cells_without_a_delay_model_fail_the_estimate():
    v = evaluate(estimate(1.0, untimed_cells={"GTPE2_CHANNEL": 1}), UTIL)
    assert not v.passed and "no delay model for GTPE2_CHANNEL x1" in v.failures[0]
