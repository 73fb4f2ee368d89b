"""The gate must fail on every condition it guards, with a sentence that names the reason."""

import pytest

from kabe.rules.gate import Budget, TimingRules, budgets_from_mapping, evaluate

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
         "critical_path": None, "check_timing": {"no_clock": 0, "unconstrained_internal_endpoints": 0},
         "no_clock": 0}
    t.update(kw)
    if "no_clock" in kw and "check_timing" not in kw:  # one count, in both places, as the parser writes it
        t["check_timing"] = {**t["check_timing"], "no_clock": kw["no_clock"]}
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
    assert "-0.502" in msg and "clk" in msg and "from cnt_reg through 9 logic levels to acc_reg, 7.502 ns" in msg
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
    assert "build with flow=vivado" in v.failures[0]
    # an inferred latch is the design's bug, not a gap in kabe's cell library: the fix says so
    v = evaluate(estimate(1.0, untimed_cells={"LDCE": 16}), UTIL)
    assert not v.passed and "no delay model for LDCE x16" in v.failures[0]
    assert "LDCE is a latch Yosys inferred" in v.failures[0] and "cells.py" not in v.failures[0]


# ---------------------------------------------------------------- boundaries, pinned (both flows' records)
# Each of these kills a mutant of the rules: `>= 0` -> `> 0` (0.000 would fail), rounding to 2
# decimals before comparing (-0.001 would pass), a missing verdict read as met.

@pytest.mark.parametrize("record", [estimate, signoff], ids=["open-flow estimate", "vivado sign-off"])
def test_wns_zero_passes_and_minus_one_picosecond_fails(record):
    assert evaluate(record(0.0), UTIL).passed
    v = evaluate(record(-0.001), UTIL)
    assert not v.passed and any("WNS -0.001 ns" in f for f in v.failures)


@pytest.mark.parametrize("key,what", [("whs", "hold"), ("wpws", "pulse width")])
def test_signoff_hold_and_pulse_width_boundaries(key, what):
    verdict_ok = "All user specified timing constraints are met."
    assert evaluate(signoff(**{key: 0.0}, verdict=verdict_ok), UTIL).passed
    v = evaluate(signoff(**{key: -0.001}, verdict="Timing constraints are not met."), UTIL)
    assert not v.passed and any(f"{what} violation" in f and "-0.001" in f for f in v.failures)


def test_missing_verdict_is_never_met():
    v = evaluate(signoff(verdict=None), UTIL)
    assert not v.passed and any("no verdict line" in f for f in v.failures)


def test_recovery_and_removal_are_gated_like_setup_and_hold():
    ok = signoff(worst_slack_by_check={"setup": 0.1, "hold": 0.05, "recovery": 0.0, "removal": 0.0})
    assert evaluate(ok, UTIL).passed
    bad = signoff(worst_slack_by_check={"setup": 0.1, "hold": 0.05, "recovery": -0.001, "removal": 0.2})
    v = evaluate(bad, UTIL)
    assert not v.passed and any("recovery violation" in f for f in v.failures)
    bad = signoff(worst_slack_by_check={"removal": -0.2})
    assert any("removal violation" in f for f in evaluate(bad, UTIL).failures)


# ---------------------------------------------------------------- unclocked registers and their waiver

def test_unclocked_registers_fail_unless_waived_with_a_reason():
    t = signoff(no_clock=12)
    v = evaluate(t, UTIL)
    assert not v.passed and any("12 register/latch pins have no clock" in f for f in v.failures)
    w = evaluate(t, UTIL, waivers={"no_clock": "EMIO pins clocked by the PS"})
    assert w.passed and w.waivers == {"no_clock": "EMIO pins clocked by the PS"}
    assert {"name": "timing.no_clock", "expected": "0 register/latch pins without a clock",
            "got": "12 (waived: EMIO pins clocked by the PS)", "passed": True} in w.checks
    # a waiver that was not needed is not claimed as applied
    assert evaluate(signoff(no_clock=0), UTIL, waivers={"no_clock": "x"}).waivers == {}


def test_unknown_waiver_is_refused():
    with pytest.raises(ValueError, match="only no_clock"):
        evaluate(signoff(), UTIL, waivers={"wns": "trust me"})


# ---------------------------------------------------------------- logic-level budgets (tsfpga's MaximumLogicLevel)

def test_logic_level_budget_on_the_open_flows_critical_path():
    b = budgets_from_mapping({"logic_levels": {"le": 9}})
    assert evaluate(estimate(0.5), UTIL, b).passed  # critical path: 9 levels
    v = evaluate(estimate(0.5), UTIL, budgets_from_mapping({"logic_levels": {"le": 8}}))
    assert v.failures == ["budget exceeded: logic_levels = 9 (must be <= 8)"]


def test_logic_level_budget_on_vivados_distribution():
    dist = {"max_logic_levels": 6, "max_exact": True, "clocks": []}
    t = signoff(logic_level_distribution=dist, critical_path={"logic_levels": 3})
    assert evaluate(t, UTIL, budgets_from_mapping({"logic_levels": {"le": 6}})).passed
    assert not evaluate(t, UTIL, budgets_from_mapping({"logic_levels": {"lt": 6}})).passed
    # an open last bin ("16+") gives no number: the budget cannot be checked, so it fails
    open_bin = signoff(logic_level_distribution={"max_logic_levels": 16, "max_exact": False, "clocks": []})
    v = evaluate(open_bin, UTIL, budgets_from_mapping({"logic_levels": {"le": 40}}))
    assert not v.passed and "cannot be checked" in v.failures[0]


# ---------------------------------------------------------------- the second source (Vivado's own verdict)

def _src(**kw):
    s = {"wns_ns": 0.1, "whs_ns": 0.05, "setup_ns": 0.1, "hold_ns": 0.05, "recovery_ns": None, "removal_ns": None,
         "pulse_width_violated": False, "unsafe_clock_interactions": 0}
    s.update(kw)
    return s


def test_second_source_that_agrees_passes():
    v = evaluate(signoff(second_source=_src()), UTIL)
    assert v.passed and {"name": "timing.second_source", "expected": "agrees with the parsed report",
                         "got": "agrees", "passed": True} in v.checks


@pytest.mark.parametrize("src,shown", [
    (_src(wns_ns=-0.2, setup_ns=-0.2), "WNS: report 0.100, Vivado -0.200"),
    (_src(whs_ns=None), "WHS: report 0.050, Vivado ?"),
    (_src(pulse_width_violated=True), "pulse width violated: report False, Vivado True"),
    (_src(unsafe_clock_interactions=2), "unsafe crossings: report False, Vivado 2"),
])
def test_second_source_that_disagrees_fails_showing_both(src, shown):
    v = evaluate(signoff(second_source=src), UTIL)
    assert not v.passed and any("disagree" in f and shown in f for f in v.failures)


def test_second_source_missing_or_broken_fails():
    assert not evaluate(signoff(second_source=None), UTIL).passed
    v = evaluate(signoff(second_source={"error": "timing_verdict.json does not exist"}), UTIL)
    assert any("no second-source verdict" in f and "does not exist" in f for f in v.failures)


def test_second_source_negative_recovery_fails_even_when_it_agrees():
    v = evaluate(signoff(second_source=_src(recovery_ns=-0.05)), UTIL)
    assert not v.passed and any("recovery_ns -0.050" in f for f in v.failures)


def test_wns_on_an_inter_clock_pair_names_the_pair_not_the_capture_clock():
    """Vivado files an inter-clock path under its capture clock's group; that clock's own paths may
    meet timing, so the message names the pair whose table row carries the WNS."""
    clocks = [{"name": "clk_a", "period_ns": 4.0, "wns_ns": 0.197}, {"name": "clk_b", "period_ns": 5.0, "wns_ns": -0.203}]
    pairs = [{"from": "clk_b", "to": "clk_a", "type": "inter-clock", "wns_ns": -1.312},
             {"from": "clk_a", "to": "clk_b", "type": "inter-clock", "wns_ns": -1.197}]
    t = signoff(wns=-1.312, verdict="Timing constraints are not met.", clocks=clocks, clock_interaction=pairs,
                failing_endpoints=31, critical_path={"clock": "clk_a", "startpoint": "rst_reg", "endpoint": "x_reg"})
    wns_msg = next(m for m in evaluate(t, UTIL).failures if "setup slack" in m)
    assert "on inter-clock paths clk_b -> clk_a" in wns_msg
    t2 = signoff(wns=-0.203, verdict="Timing constraints are not met.", clocks=clocks, clock_interaction=pairs,
                 failing_endpoints=1, critical_path={"clock": "clk_a"})
    assert "on clock clk_b" in next(m for m in evaluate(t2, UTIL).failures if "setup slack" in m)
    t3 = signoff(wns=-0.4, verdict="Timing constraints are not met.", failing_endpoints=2,
                 other_path_groups=[{"path_group": "**async_default**", "from": "clk_a", "to": "clk_a", "wns_ns": -0.4}])
    assert "in path group **async_default** (clk_a -> clk_a)" in next(
        m for m in evaluate(t3, UTIL).failures if "setup slack" in m)


def test_a_signoff_record_without_check_timing_cannot_say_every_register_is_clocked():
    bare = {k: v for k, v in signoff().items() if k not in ("check_timing", "no_clock")}
    v = evaluate(bare, UTIL)
    assert not v.passed and any("the sign-off record has no check_timing" in f for f in v.failures)
    assert evaluate(bare, UTIL, waivers={"no_clock": "the PS drives these pins"}).passed


def test_a_setup_slack_without_a_hold_slack_is_not_an_idle_clock():
    """Where Vivado timed setup it timed hold too: WNS with no WHS is a cut or edited row, never
    "no endpoints", even with a clean check_timing."""
    v = evaluate(signoff(whs=None), UTIL)
    assert not v.passed and any("has WNS but no WHS" in f for f in v.failures)


@pytest.mark.parametrize("where, value, finding", [
    ("clocks", [{"name": "clk_fpga_0", "wns_ns": -0.2}], "clock clk_fpga_0: WNS -0.200 ns"),
    ("clock_interaction", [{"from": "a", "to": "b", "type": "inter-clock", "whs_ns": -0.05}],
     "inter-clock paths a -> b: WHS -0.050 ns"),
    ("other_path_groups", [{"path_group": "**async_default**", "failing_endpoints": 2}],
     "path group **async_default**: failing endpoints 2"),
    ("worst_slack_by_check", {"setup": -0.3}, "the worst setup path: slack -0.300 ns"),
    ("hold_failing_endpoints", -2, "the summary: hold failing endpoints -2"),
])
def test_any_slack_or_count_that_says_fail_fails_under_a_passing_summary(where, value, finding):
    v = evaluate(signoff(**{where: value}), UTIL)
    assert not v.passed and any(finding in f and "contradicts itself" in f for f in v.failures), v.failures


def test_a_pair_vivado_does_not_time_carries_no_slack_to_judge():
    pair = {"from": "a", "to": "b", "type": "Asynchronous Groups", "wns_ns": -1.0}
    assert evaluate(signoff(clock_interaction=[pair]), UTIL).passed
    assert not evaluate(signoff(clock_interaction=[{**pair, "type": "Partial False Path"}]), UTIL).passed


def test_unconstrained_outputs_on_the_open_flow_name_the_flow_that_times_them():
    rec = {**estimate(0.5), "unconstrained_endpoints": 3}
    assert evaluate(rec, UTIL).passed  # reported only, by default
    v = evaluate(rec, UTIL, rules=TimingRules(fail_on_unconstrained=True))
    assert not v.passed and any("3 endpoints are unconstrained" in f and "flow=vivado" in f for f in v.failures)


def test_an_estimate_with_no_register_to_register_path_fails_saying_why():
    """A register slice between ports: the open flow times register to register only, so it timed
    nothing. That fails (nothing timed is no pass), and says so rather than "a truncated report"."""
    rec = {**estimate(0.5), "wns_ns": None, "tns_ns": None, "total_endpoints": 0, "critical_path": None}
    v = evaluate(rec, UTIL)
    assert not v.passed and any("no register-to-register path" in f and "flow=vivado" in f for f in v.failures)


def test_a_no_clock_count_that_disagrees_with_check_timing_fails():
    v = evaluate(signoff(no_clock=0, check_timing={"no_clock": 5, "unconstrained_internal_endpoints": 0}), UTIL,
                 waivers={"no_clock": "a waiver excuses a count, not a record that contradicts itself"})
    assert not v.passed and any("check_timing counts 5" in f for f in v.failures)


def test_a_clock_crossing_the_xdc_declares_nothing_about_fails():
    """Red team 4c, repro 09: two create_clock, a raw adder between the domains, no clock groups or
    exceptions: Vivado times that as an unsafe crossing, the open flow did not time it and passed."""
    rec = estimate(0.5, clock_interaction=[{"from": "clk", "to": "clk_fast", "type": "Not timed (cross-clock, undeclared)"}])
    v = evaluate(rec, UTIL)
    assert not v.passed and v.warnings == []
    (f,) = [f for f in v.failures if "clk -> clk_fast" in f]
    assert "the XDC declares none" in f and "set_clock_groups -asynchronous" in f and "flow=vivado" in f


def test_crossing_declarations_are_read_from_the_xdc(tmp_path):
    from kabe.project import constraints

    xdc = tmp_path / "two.xdc"
    xdc.write_text("create_clock -period 7 [get_ports clk]\ncreate_clock -period 5 [get_ports clk_fast]\n")
    assert constraints.crossing_declarations([xdc]) == []
    xdc.write_text(xdc.read_text() + "# set_false_path in a comment is none\n"
                   "set_clock_groups -asynchronous -group [get_clocks clk] \\\n  -group [get_clocks clk_fast]\n"
                   "set_max_delay -datapath_only 5 -from [get_cells a_reg] -to [get_cells b_reg]\n")
    assert constraints.crossing_declarations([xdc]) == [f"{xdc}:4", f"{xdc}:6"]


def test_clock_crossings_the_open_flow_does_not_time_are_said_beside_the_verdict():
    rec = estimate(0.5, clock_interaction=[{"from": "clk_a", "to": "clk_b", "type": "Not timed (cross-clock)"}])
    v = evaluate(rec, UTIL)
    assert v.passed and v.warnings == ["1 clock crossing(s) the open flow does not time: clk_a -> clk_b "
                                       "(synchronized, or time them with flow=vivado)"]
    assert evaluate(estimate(0.5), UTIL).warnings == []
