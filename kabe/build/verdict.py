"""A build's verdict: kabe.rules.verdict.judge, the one entry point every consumer gates a record with, on
the build's timing, utilization and simulation results under the design's facts (budgets, waivers)
and this checkout's settings ([tool.kabe] fail_on_unconstrained). The same call for a fresh build
and for a cache hit (re-gated with today's facts), so both are judged as every reader judges them."""

from __future__ import annotations

from kabe.project import designs
from kabe.rules import gate, verdict


SECTIONS = ("hls", "vitis_link")  # the flow sections of a record (kabe.flows.base.FlowResult.sections)


def build_verdict(design: designs.Design, flow_name: str, timing: dict, utilization: dict | None,
                  sim: dict | None, recorded_gate: dict | None = None,
                  verification: dict | None = None, sections: dict | None = None) -> gate.Verdict:
    """recorded_gate: the gate of the record a cache hit reuses (what it recorded and today's facts
    cannot re-derive is carried over); None for a fresh build. sections: an HLS build's `hls`, a link's
    `vitis_link` (judged by kabe.rules.hls_gate through kabe.rules.verdict)."""
    record = {"timing": timing, "utilization": utilization, "sim": sim, "gate": recorded_gate,
              "verification": verification, **(sections or {})}
    return verdict.judge(record, verdict.DesignFacts.of(design, flow_name))
