"""A build's verdict: the gate on its timing and utilization records, under the design's budgets and
waivers, with the simulation check's own verdict first. One function for a fresh build and for a
cache hit (re-gated with today's budgets), so both are judged alike."""

from __future__ import annotations

from kabe import designs, gate


def build_verdict(design: designs.Design, flow_name: str, timing: dict, utilization: dict | None,
                  sim: dict | None) -> gate.Verdict:
    verdict = gate.evaluate(timing, utilization, gate.budgets_from_mapping(design.budgets_for(flow_name)),
                            waivers=design.waivers)
    if sim is not None:
        # The runner's verdict, not just its word count: a dropped result, a stalled input or a
        # wrong tlast with every compared word right is still a failed verification.
        reasons = ([f"{sim['mismatches']} of {sim['rows_checked']} rows differ from the numpy model "
                    f"(first: {sim['first_mismatches'][:1]})"] if sim["mismatches"] else []) + list(sim["problems"])
        if not sim["passed"] and not reasons:
            reasons = ["the simulation did not pass"]
        verdict.checks.insert(0, {"name": "sim.verification", "expected": "0 mismatches, no problems",
                                  "got": f"{sim['mismatches']} mismatches, {len(sim['problems'])} problems",
                                  "passed": bool(sim["passed"])})
        if not sim["passed"]:
            verdict.passed = False
            verdict.failures[:0] = [f"verification: {r}" for r in reasons]
    return verdict
