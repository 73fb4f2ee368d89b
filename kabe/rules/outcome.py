"""What one build's verdict means to whoever asked for it: an exit code and one verdict line.

A design says in design.yaml what its gate is expected to say (`expect_gate`). A build is a success
when the gate says that: a design built to fail its gate (expect_gate: fail) failing it is its point, so it exits 0
and does not fail `doit build`; such a design passing would mean the gate stopped catching it (exit 1).
`kabe gate <file>` has no expectation: it judges the file alone. A design on a board kabe cannot time
on the open flow (expect_gate: not_estimated) succeeds when its gate says "not estimated" (no timing
number: neither pass nor fail, kabe.rules.gate) or passes on a flow that times it; never when it fails.

Exit codes (kabe.base.errors): 0 as expected, 1 the gate said otherwise, 2 could not run, 130 interrupted.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from kabe.base.errors import EXIT_COULD_NOT_RUN, EXIT_GATE_FAILED, EXIT_INTERRUPTED, EXIT_PASS
from kabe.rules import gate

PASS, FAIL, NOT_ESTIMATED = gate.PASS, gate.FAIL, gate.NOT_ESTIMATED  # NOT_ESTIMATED: no timing number, neither pass nor fail
COULD_NOT_RUN, INTERRUPTED = "could not run", "interrupted"


@dataclass(frozen=True)
class Outcome:
    design: str
    flow: str
    code: int  # one of kabe.base.errors.EXIT_*
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


# What a verdict means against design.yaml's expect_gate, said here once for every consumer (the build's
# verdict line, its summary table, `kabe ci`'s lines, Markdown and JUnit)
NEGATIVE_EXAMPLE_FAILED = "FAIL (expected)"  # a negative example (expect_gate: fail) failing: its point
NEGATIVE_EXAMPLE_PASSED = "the gate no longer catches this design's problem"
NO_TIMING_NUMBER = "a gate without a timing number is neither pass nor fail"
NO_TIMING_NUMBER_IS_NO_PASS = "a gate without a timing number is no pass"  # when design.yaml expects a pass


def negative_example_passed(design: str) -> str:
    """Why a negative example whose gate passed fails (kabe ci's reason)."""
    return f"{design} is a negative example (expect_gate: fail) but its gate passed: {NEGATIVE_EXAMPLE_PASSED}"


def no_timing_number_is_no_pass(reason: str | None, expected: str) -> str:
    """Why a not-estimated verdict fails a design that expects a pass (kabe ci's reason, the summary's row)."""
    return f"timing not estimated ({reason}), and design.yaml says expect_gate: {expected}: {NO_TIMING_NUMBER_IS_NO_PASS}"


def from_record(record: dict, expected: str, verdict: gate.Verdict | None = None) -> Outcome:
    """The outcome of a build that ran to its gate and was archived. verdict: the build's own kabe.rules.gate.Verdict
    (default: the one its record's gate holds)."""
    design, flow = record["design"], record["flow"]
    v = verdict if verdict is not None else gate.Verdict.from_dict(record["gate"])
    commit = record["commit"] + ("-dirty" if record["dirty"] else "")
    status, reason = v.status, v.reason()
    head = f"{design} ({flow} flow, {record['commit'][:12]}{'-dirty' if record['dirty'] else ''}): gate"
    unverified = v.unverified
    as_expected = v.as_expected(expected)
    if status == NOT_ESTIMATED:
        said = f"{head} timing NOT ESTIMATED ({v.not_estimated})" + \
            (f" (unverified: {unverified})" if unverified else "")
        line = said if as_expected else (f"{said}, but design.yaml says expect_gate: {expected}: {NO_TIMING_NUMBER} "
                                         f"(expect_gate: not_estimated)")
    elif status == PASS and expected in (PASS, NOT_ESTIMATED):  # not_estimated: a flow that times the board (Vivado)
        # no simulation verdict behind it (verify: {none: ...}): never a bare pass
        line = f"{head} PASS (unverified: {unverified})" if unverified else f"{head} PASS"
    elif status == expected:
        line = f"{head} FAIL (expected, design.yaml: expect_gate: fail): {reason}"
    elif status == PASS:
        line = f"{head} PASS, but design.yaml says expect_gate: fail: {NEGATIVE_EXAMPLE_PASSED}"
    else:
        line = f"{head} FAIL: {reason}"
    code = EXIT_PASS if as_expected else EXIT_GATE_FAILED
    return Outcome(design, flow, code, status, expected, line, reason, record.get("_archive", ""), commit)


def could_not_run(design: str, flow: str, message: str, expected: str = "-") -> Outcome:
    return Outcome(design, flow, EXIT_COULD_NOT_RUN, COULD_NOT_RUN, expected,
                   f"{design}: could not run, nothing archived: {message}", message)


def interrupted(design: str, flow: str, expected: str = "-") -> Outcome:
    return Outcome(design, flow, EXIT_INTERRUPTED, INTERRUPTED, expected,
                   f"{design}: interrupted; nothing archived", "interrupted (Ctrl-C)")
