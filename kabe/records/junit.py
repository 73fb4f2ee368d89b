"""JUnit XML for CI dashboards (GitLab's merge-request test report, GitHub test reporters).

One <testsuite> per design build, one <testcase> per check. A check that could not be judged (a
regression with no baseline) is <skipped> with the reason, so it is visible and neither green nor
red; a build that could not run is an <error>. A negative example's gate failing as design.yaml
expects (expect_gate: fail) is written as pytest writes an xfail, <skipped type="pytest.xfail"
message="...">, so a dashboard counts it as an expected failure, not a failure. Written atomically.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

from kabe.store.archive import write_text_atomic
from kabe.records.band_advice import fill_note, marginal_advice

STATUSES = ("passed", "failed", "skipped", "xfail", "error")


@dataclass(frozen=True)
class Case:
    name: str
    status: str = "passed"  # passed | failed | skipped | xfail | error (xfail: failed, as expected)
    message: str = ""  # one line: why it failed, or why it was skipped
    detail: str = ""  # the body: every reason, expected and got

    def __post_init__(self):
        if self.status not in STATUSES:
            raise ValueError(f"junit case status {self.status!r} unknown; use one of {', '.join(STATUSES)}")


@dataclass
class Suite:
    name: str  # e.g. "mydesign (open)"
    classname: str  # e.g. "kabe.mydesign.open"
    cases: list[Case] = field(default_factory=list)
    output: str = ""  # <system-out>: the build's summary lines


def render(suites: list[Suite], name: str = "kabe") -> str:
    root = ET.Element("testsuites", name=name)
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for suite in suites:
        counts = {"tests": len(suite.cases),
                  "failures": sum(c.status == "failed" for c in suite.cases),
                  "errors": sum(c.status == "error" for c in suite.cases),
                  "skipped": sum(c.status in ("skipped", "xfail") for c in suite.cases)}
        for k, v in counts.items():
            totals[k] += v
        el = ET.SubElement(root, "testsuite", name=suite.name, **{k: str(v) for k, v in counts.items()})
        for case in suite.cases:
            tc = ET.SubElement(el, "testcase", classname=suite.classname, name=case.name)
            if case.status == "failed":
                ET.SubElement(tc, "failure", message=case.message, type="kabe.rules.gate").text = case.detail or case.message
            elif case.status == "error":
                ET.SubElement(tc, "error", message=case.message, type="kabe.build").text = case.detail or case.message
            elif case.status == "skipped":
                ET.SubElement(tc, "skipped", message=case.message)
            elif case.status == "xfail":  # as pytest writes an expected failure: neither green nor red, named
                ET.SubElement(tc, "skipped", type="pytest.xfail", message=case.message).text = case.detail or None
        if suite.output:
            ET.SubElement(el, "system-out").text = suite.output
    root.attrib.update({k: str(v) for k, v in totals.items()})
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def write(path: Path, suites: list[Suite], name: str = "kabe") -> Path:
    return write_text_atomic(Path(path), render(suites, name))


def gate_suite(verdict, suite: str, classname: str | None = None, timing: dict | None = None) -> Suite:
    """One kabe.rules.gate.Verdict as a suite: a testcase per check (a failure carries the check's sentence,
    what was expected and what was got), a testcase per failure recorded at build time that no check
    re-derives, and the waivers and warnings as the suite's output."""
    classname = classname or f"kabe.rules.gate.{suite}"
    cases = []
    for c in verdict.checks:
        message = c.get("message") or f"{c['name']}: expected {c['expected']}, got {c['got']}"
        cases.append(Case(c["name"], "passed" if c["passed"] else "failed", "" if c["passed"] else message,
                          "" if c["passed"] else f"expected: {c['expected']}\ngot: {c['got']}"))
    unverified = verdict.unverified
    if unverified:  # no simulation verdict behind this gate: a skipped case saying why, never a bare pass
        cases.insert(0, Case("sim.verification", "skipped", f"unverified: {unverified}"))
    not_estimated = verdict.not_estimated
    if not_estimated:  # no timing number (kabe.rules.gate): neither green nor red, named; any failure is still red
        cases.insert(0, Case("timing", "skipped", f"timing not estimated: {not_estimated}"))
    own = {c.get("message") for c in verdict.checks}
    for i, msg in enumerate((m for m in verdict.failures if m not in own), start=1):
        cases.append(Case(f"recorded.{i}", "failed", msg, msg))
    output = [f"waived {k}: {why}" for k, why in verdict.waivers.items()]
    marginal = marginal_note(timing)
    if fill_note(timing):  # a WNS the high-fanout fill set is the model's cap: said, with the WNS without it
        output.insert(0, fill_note(timing))
    if marginal:
        output.insert(0, marginal)
    output += [f"warning: {w}" for w in verdict.warnings]
    return Suite(suite, classname, cases, "\n".join(output))


def marginal_note(timing: dict | None, design: str | None = None) -> str | None:
    """The one line that says what a marginal estimate's band means and what to do next
    (kabe.records.band_advice), else None. The gate's verdict is the point estimate's."""
    return marginal_advice(timing, design)
