"""One design's result in `kabe ci`: its build, its gate, its regressions, and what that means for CI."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from kabe.rules import gate
from kabe.records import junit
from kabe.rules.regressions import Judgement
from kabe.rules import outcome


@dataclass
class DesignOutcome:
    design: str
    flow: str
    expect_gate: str = "pass"  # design.yaml: a negative example (expect_gate: fail) must fail its gate
    record: dict | None = None  # the build's metrics record (built now or reused from the archive)
    # the gate's verdict with the regression checks added (kabe.rules.regressions.combined_verdict); a dict
    # of that shape is taken as kabe.rules.gate.Verdict.from_dict reads it
    verdict: gate.Verdict | Mapping | None = None
    judgement: Judgement = field(default_factory=Judgement)
    base_record: dict | None = None
    reused: bool = False  # this commit's archive already held the build (pulled or built before)
    error: str | None = None  # the build could not run (missing tool, broken design.yaml)
    # the build's own verdict (kabe.rules.verdict.judge, without the regressions); default: the record's gate
    gate_verdict: gate.Verdict | None = None

    def __post_init__(self) -> None:
        if isinstance(self.verdict, Mapping):
            self.verdict = gate.Verdict.from_dict(self.verdict)

    def _own(self) -> gate.Verdict:
        """The build's own verdict (no regressions): the one `kabe ci` judged, else its record's gate."""
        return self.gate_verdict if self.gate_verdict is not None else gate.Verdict.from_dict(self.record["gate"])

    @property
    def ok(self) -> bool:
        if self.error or self.verdict is None:
            return False
        if self.expect_gate == "fail":  # its gate failing is the point; passing means the gate stopped catching it
            return not self._own().passed
        if self.expect_gate == gate.NOT_ESTIMATED:  # no timing number (or a real pass), never a failure
            return self.verdict.as_expected(self.expect_gate)
        return self.verdict.passed

    @property
    def not_estimated(self) -> str | None:
        """Why no timing number stands behind this design's gate (kabe.rules.gate), or None."""
        ne = self.verdict is not None and self.verdict.status == gate.NOT_ESTIMATED
        return self.verdict.not_estimated if ne else None

    @property
    def status(self) -> str:
        if self.error:
            return "could not run"
        if self.expect_gate == "fail":
            return outcome.NEGATIVE_EXAMPLE_FAILED if self.ok else "PASS (expected FAIL: expect_gate: fail)"
        if self.not_estimated:  # neither pass nor fail: as expected only under expect_gate: not_estimated
            return "timing not estimated" if self.ok else "timing not estimated (design.yaml expects pass)"
        if self.ok and self.unverified:  # no simulation verdict behind the gate: never a bare pass
            return f"pass (unverified: {self.unverified})"
        return "pass" if self.ok else "FAIL"

    @property
    def unverified(self) -> str | None:
        """Why no simulation verdict stands behind this design's gate (kabe.rules.verdict), or None."""
        return self.verdict.unverified if self.verdict is not None and not self.error else None

    def reasons(self) -> list[str]:
        """Why it failed, one sentence each; for a negative example, why its gate failed (as it must)."""
        if self.error:
            return [self.error]
        if self.expect_gate == "fail" and self.ok:
            return list(self._own().failures)
        if self.expect_gate == "fail":
            return [outcome.negative_example_passed(self.design)]
        if self.not_estimated and not self.verdict.failures:
            return [outcome.no_timing_number_is_no_pass(self.not_estimated, self.expect_gate)]
        return list(self.verdict.failures) if self.verdict else []

    def wns(self):
        return (self.record or {}).get("timing", {}).get("wns_ns")

    def junit_suite(self) -> junit.Suite:
        suite = junit.Suite(f"{self.design} ({self.flow})", f"kabe.{self.design}.{self.flow}")
        if self.error:
            suite.cases.append(junit.Case("build", "error", self.error))
            return suite
        if self.expect_gate == "fail":  # failing is the point: an xfail as pytest writes one; passing fails CI
            reasons = self.reasons()
            detail = "\n".join(reasons)
            message = (f"FAIL (expected): a negative example (expect_gate: fail): {reasons[0] if reasons else 'its gate failed'}"
                       if self.ok else reasons[0])
            suite.cases.append(junit.Case("gate", "xfail" if self.ok else "failed", message, detail))
            suite.output = detail
            return suite
        failures = self.verdict.failures
        if self.unverified:
            suite.cases.append(junit.Case("sim.verification", "skipped", f"unverified: {self.unverified}"))
        if self.not_estimated:  # neither green nor red when expected; a failure when design.yaml expects a pass
            suite.cases.append(junit.Case("timing", "skipped" if self.ok else "failed",
                                          self.verdict.why_not_passed(),
                                          "" if self.ok else "\n".join(self.reasons())))
        messages = {c.name: c.message for c in self.judgement.checks}
        for check in self.verdict.checks:
            if check["passed"]:
                suite.cases.append(junit.Case(check["name"]))
                continue
            line = messages.get(check["name"]) or f"expected {check['expected']}, got {check['got']}"
            suite.cases.append(junit.Case(check["name"], "failed", line,
                                          f"expected {check['expected']}, got {check['got']}\n" + "\n".join(failures)))
        if not self.verdict.passed and not self.ok and not any(c.status == "failed" for c in suite.cases):
            # a failure recorded without a failing check still fails: a report never turns a failed gate green
            suite.cases.append(junit.Case("gate", "failed", failures[0] if failures else "the gate failed",
                                          "\n".join(failures)))
        for note in self.judgement.notes:
            suite.cases.append(junit.Case("regression baseline", "skipped", note))
        marginal = junit.marginal_note((self.record or {}).get("timing"), self.design)
        suite.output = "\n".join(([marginal] if marginal else []) + list(failures))
        return suite
