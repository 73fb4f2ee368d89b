"""What one build's verdict means to whoever asked for it: an exit code and one verdict line.

A design says in design.yaml what its gate is expected to say (`expect_gate`). A build is a success
when the gate says that: a design built to fail its gate (expect_gate: fail) failing it is its point, so it exits 0
and does not fail `doit build`; such a design passing would mean the gate stopped catching it (exit 1).
`kabe gate <file>` has no expectation: it judges the file alone. A design on a board kabe cannot time
on the open flow (expect_gate: not_estimated) succeeds when its gate says "not estimated" (no timing
number: neither pass nor fail, kabe.rules.gate) or passes on a flow that times it; never when it fails.

Exit codes (kabe.errors): 0 as expected, 1 the gate said otherwise, 2 could not run, 130 interrupted.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from kabe.errors import EXIT_COULD_NOT_RUN, EXIT_GATE_FAILED, EXIT_INTERRUPTED, EXIT_PASS
from kabe.rules.verdict import expected_outcome

PASS, FAIL, COULD_NOT_RUN, INTERRUPTED = "pass", "fail", "could not run", "interrupted"
NOT_ESTIMATED = "not_estimated"  # kabe.rules.gate.NOT_ESTIMATED: no timing number, neither pass nor fail


@dataclass(frozen=True)
class Outcome:
    design: str
    flow: str
    code: int  # one of kabe.errors.EXIT_*
    verdict: str  # pass | fail | not_estimated | could not run | interrupted
    expected: str  # design.yaml expect_gate, "-" when the design could not be read
    line: str  # the verdict line a person reads (plain text)
    reason: str = ""  # the gate's first failure, or what stopped the build
    archive: str = ""  # where the record was archived ("" when nothing was)
    commit: str = ""  # the archive's name: sha or sha-dirty

    @property
    def as_expected(self) -> bool:
        return self.code == EXIT_PASS

    def as_dict(self) -> dict:
        return asdict(self)


def from_record(record: dict, expected: str) -> Outcome:
    """The outcome of a build that ran to its gate and was archived."""
    design, flow, gate = record["design"], record["flow"], record["gate"]
    commit = record["commit"] + ("-dirty" if record["dirty"] else "")
    failures = list(gate["failures"])
    # a pass is `passed: true` beside a status that does not contradict it; "not estimated" needs no failure
    if gate["passed"] is True and gate.get("status", PASS) == PASS:
        verdict = PASS
    elif gate.get("status") == NOT_ESTIMATED and gate["passed"] is False and not failures:
        verdict = NOT_ESTIMATED
    else:
        verdict = FAIL
    reason = failures[0] if failures else ""
    if len(failures) > 1:
        reason += f" (and {len(failures) - 1} more)"
    head = f"{design} ({flow} flow, {record['commit'][:12]}{'-dirty' if record['dirty'] else ''}): gate"
    unverified = gate.get("unverified")
    as_expected = expected_outcome(verdict, expected)
    if verdict == NOT_ESTIMATED:
        said = f"{head} timing NOT ESTIMATED ({gate.get('not_estimated') or 'no timing number'})" + \
            (f" (unverified: {unverified})" if unverified else "")
        line = said if as_expected else (f"{said}, but design.yaml says expect_gate: {expected}: a gate without a "
                                         f"timing number is neither pass nor fail (expect_gate: not_estimated)")
    elif verdict == PASS and expected == NOT_ESTIMATED:  # a flow that times the board (Vivado): a real pass
        line = f"{head} PASS (unverified: {unverified})" if unverified else f"{head} PASS"
    elif verdict == expected == PASS:
        # no simulation verdict behind it (verify: {none: ...}): never a bare pass
        line = f"{head} PASS (unverified: {unverified})" if unverified else f"{head} PASS"
    elif verdict == expected:
        line = f"{head} FAIL (expected, design.yaml: expect_gate: fail): {reason}"
    elif verdict == PASS:
        line = (f"{head} PASS, but design.yaml says expect_gate: fail: the gate no longer catches this "
                f"design's known problem")
    else:
        line = f"{head} FAIL: {reason}"
    code = EXIT_PASS if as_expected else EXIT_GATE_FAILED
    return Outcome(design, flow, code, verdict, expected, line, reason, record.get("_archive", ""), commit)


def could_not_run(design: str, flow: str, message: str, expected: str = "-") -> Outcome:
    return Outcome(design, flow, EXIT_COULD_NOT_RUN, COULD_NOT_RUN, expected,
                   f"{design}: could not run, nothing archived: {message}", message)


def interrupted(design: str, flow: str, expected: str = "-") -> Outcome:
    return Outcome(design, flow, EXIT_INTERRUPTED, INTERRUPTED, expected,
                   f"{design}: interrupted; nothing archived", "interrupted (Ctrl-C)")
