"""The five kinds of verdict a build has, named as the console names them, for the page's tables and plots.

kabe.rules.gate gives a verdict three outcomes (pass, fail, not estimated); the design says whether a
failure is expected (design.yaml expect_gate: fail, a negative example) and the record whether a pass has a
simulation verdict behind it (unverified when not). "not estimated" is neither pass nor fail: the console
says "timing NOT ESTIMATED ... neither pass nor fail", so the page never draws it as a failed gate."""

from __future__ import annotations

from kabe.rules import gate

PASS, FAIL, EXPECTED_FAIL, NOT_ESTIMATED, UNVERIFIED = "pass", "fail", "expected fail", "not estimated", "unverified"
KINDS = (PASS, FAIL, EXPECTED_FAIL, NOT_ESTIMATED, UNVERIFIED)

# the word each kind is shown as, as `kabe gate`, `kabe ci` and `kabe diff` say it
WORDS = {PASS: "pass", FAIL: "FAIL", EXPECTED_FAIL: "FAIL (expected)", NOT_ESTIMATED: "not estimated",
         UNVERIFIED: "pass (unverified)"}


def kind(entry, expected: str = "pass") -> str:
    """The kind of a history.Entry's recomputed verdict; expected: the design's expect_gate. A negative
    example that passes is a FAIL: its gate no longer catches its known problem."""
    verdict = entry.verdict  # a kabe.rules.gate.Verdict: asked, never re-derived from a dict
    if verdict.status == gate.NOT_ESTIMATED:
        return NOT_ESTIMATED
    if expected == "fail":
        return FAIL if verdict.passed else EXPECTED_FAIL
    if not verdict.passed:
        return FAIL
    return UNVERIFIED if verdict.unverified else PASS
