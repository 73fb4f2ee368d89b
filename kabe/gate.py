"""The gate: pass/fail conditions as data, checked against a Metrics record only.

Each rule yields Checks that say what was checked, what was expected and what was found, so a
failing build prints one clear sentence per reason. Anything the gate cannot verify counts as a
failure: a missing timing record, no clock, a slack that is absent where the flow must report it.
That is the rule the whole tool is built around: never a silent pass.
"""

from __future__ import annotations

import operator
from dataclasses import asdict, dataclass, field
from typing import Any, Iterable, Mapping

_OPS = {
    "eq": (operator.eq, "=="),
    "lt": (operator.lt, "<"),
    "le": (operator.le, "<="),
    "gt": (operator.gt, ">"),
    "ge": (operator.ge, ">="),
}


@dataclass(frozen=True)
class Check:
    name: str
    expected: str
    got: Any
    passed: bool
    message: str = ""  # the sentence printed when it fails

    def line(self) -> str:
        mark = "PASS" if self.passed else "FAIL"
        return f"{mark} {self.name}: expected {self.expected}, got {self.got}"


@dataclass(frozen=True)
class Budget:
    """A resource limit declared beside its design, e.g. Budget("dsp", "eq", 0)."""

    metric: str
    op: str
    limit: float

    def __post_init__(self):
        if self.op not in _OPS:
            raise ValueError(f"budget op {self.op!r} for {self.metric} unknown; use one of {', '.join(_OPS)}")

    def check(self, utilization: Mapping[str, Any]) -> Check:
        fn, sym = _OPS[self.op]
        name = f"budget.{self.metric}"
        got = utilization.get(self.metric)
        if got is None:
            return Check(name, f"{sym} {self.limit:g}", None, False,
                         f"budget {self.metric} {sym} {self.limit:g} cannot be checked: the utilization report has no '{self.metric}'")
        ok = bool(fn(got, self.limit))
        return Check(name, f"{sym} {self.limit:g}", got, ok,
                     "" if ok else f"budget exceeded: {self.metric} = {got} (must be {sym} {self.limit:g})")


def budgets_from_mapping(spec: Mapping[str, Mapping[str, float]] | None) -> list[Budget]:
    """design.yaml's `budgets: {dsp: {eq: 0}, lut: {lt: 12000}}` as Budget rules."""
    out = []
    for metric, conds in (spec or {}).items():
        if not isinstance(conds, Mapping):
            raise ValueError(f"budget for {metric!r} must be a mapping like {{lt: 12000}}, got {conds!r}")
        for op, limit in conds.items():
            out.append(Budget(metric, op, float(limit)))
    return out


@dataclass(frozen=True)
class TimingRules:
    """Timing conditions. Hold and pulse width are required from sign-off flows (not estimates).

    Unconstrained endpoints are reported but do not fail by default: a Zynq design always has
    some (PS7 pins, asynchronous resets), and Vivado itself calls the design met. A design with no
    clock at all always fails. Set [tool.kabe] fail_on_unconstrained = true to make them fail.
    """

    fail_on_unconstrained: bool = False

    @classmethod
    def from_config(cls) -> "TimingRules":
        from . import config

        return cls(fail_on_unconstrained=config.value(config.load(), "fail_on_unconstrained"))  # typed there

    def check(self, timing: Mapping[str, Any] | None) -> list[Check]:
        if not timing:
            return [Check("timing.report", "a parsed timing report", None, False,
                          "timing gate: no timing report was produced or it could not be read")]
        if timing.get("error"):  # the flow could not produce or read its report: say why, nothing else
            return [Check("timing.report", "a readable timing report", None, False, f"timing gate: {timing['error']}")]
        checks: list[Check] = []
        estimated = bool(timing.get("estimated"))
        kind = "estimated (pre-route) " if estimated else ""

        clocks = timing.get("clocks") or []
        checks.append(Check("timing.clocks", ">= 1 constrained clock", len(clocks), bool(clocks),
                            "timing gate: no clock is constrained, so no path was timed; add create_clock to the design's XDC"))

        wns = timing.get("wns_ns")
        path = timing.get("critical_path") or {}
        if wns is None:
            checks.append(Check("timing.wns", ">= 0 ns", None, False,
                                "timing gate: the report has no WNS (missing, truncated or unparsable report)"))
        else:
            ok = wns >= 0
            msg = ""
            if not ok:
                msg = (f"timing gate: {kind}setup slack WNS {wns:+.3f} ns on clock {path.get('clock') or _worst_clock(clocks)}"
                       f" (TNS {_fmt(timing.get('tns_ns'))} ns, {_fmt(timing.get('failing_endpoints'))} failing endpoints);"
                       f" worst path {path.get('startpoint', '?')} -> {path.get('endpoint', '?')},"
                       f" {_fmt(path.get('delay_ns'))} ns, {_fmt(path.get('logic_levels'))} logic levels")
            checks.append(Check("timing.wns", ">= 0 ns", wns, ok, msg))

        for key, what in (("whs_ns", "hold"), ("wpws_ns", "pulse width")):
            value = timing.get(key)
            if value is None:
                if not estimated:  # a sign-off report always states these; absence means a cut report
                    checks.append(Check(f"timing.{key[:-3]}", ">= 0 ns", None, False,
                                        f"timing gate: the report has no {what} slack ({key[:-3].upper()}); it is truncated or not a full report_timing_summary"))
                continue
            ok = value >= 0
            checks.append(Check(f"timing.{key[:-3]}", ">= 0 ns", value, ok,
                                "" if ok else f"timing gate: {what} violation, {key[:-3].upper()} {value:+.3f} ns"))

        untimed = timing.get("untimed_cells") or {}
        if untimed:  # a path through a cell without a delay model is cut: the estimate is optimistic
            kinds = ", ".join(f"{t} x{n}" for t, n in sorted(untimed.items()))
            checks.append(Check("timing.untimed_cells", "every cell timed", kinds, False,
                                f"timing gate: the estimate has no delay model for {kinds}, so paths through them "
                                f"were not timed; add the cell type to kabe/timing/cells.py"))

        verdict = timing.get("verdict_line")
        if verdict is not None or not estimated:
            checks.append(_verdict_check(verdict, timing))

        unconstrained = timing.get("unconstrained_endpoints")
        if unconstrained:
            fail = self.fail_on_unconstrained
            checks.append(Check("timing.unconstrained", "0 unconstrained endpoints" if fail else "reported only",
                                unconstrained, not fail,
                                f"timing gate: {unconstrained} endpoints are unconstrained (not timed); constrain them "
                                f"or set [tool.kabe] fail_on_unconstrained = false"))

        unsafe = [c for c in timing.get("clock_interaction") or [] if "unsafe" in str(c.get("type", "")).lower()]
        if unsafe:
            pairs = ", ".join(f"{c.get('from')} -> {c.get('to')}" for c in unsafe)
            checks.append(Check("timing.clock_interaction", "no unsafe clock crossings", pairs, False,
                                f"timing gate: unsafe clock interaction {pairs}"))
        return checks


def _verdict_check(verdict: str | None, timing: Mapping[str, Any]) -> Check:
    name, expected = "timing.verdict", "the report's verdict agrees with its numbers"
    if verdict is None:
        return Check(name, expected, None, False,
                     "timing gate: the report has no verdict line; it is truncated or not a full report_timing_summary")
    slacks = [timing.get(k) for k in ("wns_ns", "whs_ns", "wpws_ns") if timing.get(k) is not None]
    negative = any(s < 0 for s in slacks)
    says_met = "are met" in verdict.lower() and "not met" not in verdict.lower()
    if not says_met:
        if negative:
            return Check(name, "timing constraints met", verdict, False, f"timing gate: the report says '{verdict}'")
        return Check(name, expected, verdict, False,
                     f"timing gate: the report says '{verdict}' although WNS/WHS/WPWS are all >= 0; the numbers and the verdict disagree")
    if negative:
        return Check(name, expected, verdict, False,
                     "timing gate: the report says the constraints are met but a slack is negative; the numbers and the verdict disagree")
    return Check(name, expected, verdict, True)


def _worst_clock(clocks) -> str:
    return clocks[0].get("name", "?") if clocks else "?"


def _fmt(v) -> str:
    if v is None:
        return "?"
    return f"{v:.3f}" if isinstance(v, float) else str(v)


@dataclass
class Verdict:
    passed: bool
    failures: list[str] = field(default_factory=list)
    checks: list[dict] = field(default_factory=list)

    def as_dict(self) -> dict:
        return asdict(self)


def evaluate(timing: Mapping[str, Any] | None, utilization: Mapping[str, Any] | None,
             budgets: Iterable[Budget] = (), rules: TimingRules = TimingRules()) -> Verdict:
    checks = rules.check(timing)
    for b in budgets:
        if not utilization:
            checks.append(Check(f"budget.{b.metric}", "a utilization report", None, False,
                                "budget gate: no utilization report was produced or it could not be read"))
            break
        checks.append(b.check(utilization))
    failures = [c.message or c.line() for c in checks if not c.passed]
    return Verdict(not failures, failures, [
        {"name": c.name, "expected": c.expected, "got": c.got, "passed": c.passed} for c in checks])
