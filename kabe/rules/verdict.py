"""The one verdict on a build record, whoever asks: a fresh build, a cache hit, the report page,
`kabe diff`, `kabe gate metrics.json`, deploy, `kabe ci` and a sweep's worker results all call
`judge(record, facts, rules)`. Before there was one function, three paths disagreed: one ignored
`fail_on_unconstrained`, one the design's waivers, one believed the archived `gate.passed`.

The verdict is recomputed from what the record holds, under THIS checkout's facts of the design
(budgets for the flow, waivers: `DesignFacts.of`) and settings (kabe.rules.gate.TimingRules):

* the timing and utilization records through kabe.rules.gate.evaluate (a utilization marked `missing`
  counts as none, so budgets cannot pass on the zeros that stand in for it);
* the simulation check from the record's `sim` result (its own `passed` word is not enough: a
  mismatch or a problem listed beside `passed: true` still fails);
* what the numbers cannot re-derive is carried over as "recorded at build time: ...", so a re-gate
  can turn a pass into a fail, never a fail into a pass. Failures that today's facts do re-derive
  (a budget, a waiver, a check today's rules make, the simulation) are not carried: today's answer
  for them stands, so a loosened budget re-gates a cached build to a pass. A record that says it
  failed without saying why fails.

The record's own `gate.passed` is never read as the verdict. judge() of a record whose gate judge()
wrote gives the same verdict again.

"not_estimated" (kabe.rules.gate.Verdict.status: no timing number, neither pass nor fail) is believed only
for a design whose board says kabe cannot time it (its profile's `open_flow.timing: not_estimated`);
on any other board a record without a timing number fails, as it always did.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from kabe.rules import gate

RECORDED = "recorded at build time: "
_MAX_CARRIED = 20  # failures carried over from one record: enough to say why, bounded
_MAX_LINE = 300


@dataclass(frozen=True)
class DesignFacts:
    """What this checkout says about a design that shapes its verdict on one flow."""

    name: str
    flow: str
    budgets: tuple[gate.Budget, ...] = ()
    waivers: Mapping[str, str] = field(default_factory=dict)
    expect_gate: str = "pass"  # pass | fail | not_estimated (a negative example must fail its gate)
    # the design's board profile's open_flow.timing: "not_estimated" only where kabe cannot time the
    # fabric (kabe.boards); the default keeps a design of unknown board to the old rule (no number: fail)
    open_timing: str = "estimated"
    # a v++ link's design.yaml `vitis.accept_clock_mhz`: the lowest kernel clock a scaled link may land on
    accept_clock_mhz: float | None = None

    @classmethod
    def of(cls, design, flow: str) -> "DesignFacts":
        """The facts of a kabe.project.designs.Design (this checkout's design.yaml) for `flow`."""
        board = getattr(design, "board", None)
        return cls(design.name, flow, tuple(gate.budgets_from_mapping(design.budgets_for(flow))),
                   dict(design.waivers), design.expect_gate,
                   board.open_timing if board is not None else "estimated",
                   getattr(getattr(design, "vitis", None), "accept_clock_mhz", None))

    def as_expected(self, verdict: gate.Verdict) -> bool:
        """The gate said what design.yaml expects: a negative example failing is as expected; a design
        expecting not_estimated may also pass (a flow that times it: Vivado), never fail."""
        return verdict.as_expected(self.expect_gate)




def judge(record: Mapping[str, Any], facts: DesignFacts, rules: gate.TimingRules | None = None) -> gate.Verdict:
    """The verdict on `record` (a metrics record, or the timing/utilization/sim part of one being
    built) under `facts` and `rules` (default: this checkout's [tool.kabe] settings)."""
    rules = rules if rules is not None else gate.TimingRules.from_config()
    utilization = record.get("utilization")
    if not isinstance(utilization, Mapping) or utilization.get("missing"):
        utilization = None
    # an HLS build's own numbers (latency, interval, II, the estimated clock) are budgeted from its hls section
    hls_budgets = tuple(b for b in facts.budgets if isinstance(record.get("hls"), Mapping) and _hls_metric(b.metric))
    verdict = gate.evaluate(record.get("timing"), utilization, tuple(b for b in facts.budgets if b not in hls_budgets),
                            rules, facts.waivers)
    if verdict.not_estimated and facts.open_timing != gate.NOT_ESTIMATED:
        verdict.failures.append(f"timing gate: the record has no timing number (not estimated: {verdict.not_estimated}), "
                                f"but {facts.name}'s board is timed by the open flow (its profile says "
                                f"open_flow.timing: {facts.open_timing}); a build without a timing number fails")
    _judge_vitis(verdict, record, facts, hls_budgets)
    sim = record.get("sim")
    if sim is not None:
        _judge_sim(verdict, sim)
    else:
        verdict.unverified = unverified_reason(record)
    carried = [f for f in carried_failures(record.get("gate"), verdict, sim_judged=sim is not None)
               if f not in verdict.failures]
    if carried:
        verdict.passed = False
        verdict.failures += carried
    return verdict


def _hls_metric(metric: str) -> bool:
    """A budget on a number only C-synthesis gives (kabe.rules.hls_gate.hls_values): latency, interval, ii,
    ii.<loop>, estimated_clock_ns, bram_18k."""
    return metric in ("latency", "interval", "ii", "estimated_clock_ns", "bram_18k") or metric.startswith("ii.")


def _judge_vitis(verdict: gate.Verdict, record: Mapping[str, Any], facts: DesignFacts,
                 hls_budgets: tuple = ()) -> None:
    """An HLS build (metrics.json's `hls`, the HLS log's record in timing.hls_log) and a v++ link (the link
    log's record in timing.link, the xclbin's facts in `vitis_link`) through kabe.rules.hls_gate: the
    estimate over its budget, a loop over its target II, a failed co-simulation, a kernel clock the link
    lowered (unless design.yaml's vitis.accept_clock_mhz accepts the clock it got), an xclbin whose kernel
    clock is below the clock asked for while the log says nothing of it."""
    from kabe.rules import hls_gate

    timing = record.get("timing") if isinstance(record.get("timing"), Mapping) else {}
    checks: list = []
    for what, judge_it in (
            ("hls", lambda: hls_gate.metrics_checks({"hls": record["hls"]}, hls_budgets)),
            ("hls_log", lambda: hls_gate.log_checks(timing["hls_log"])),
            ("link", lambda: hls_gate.link_checks(timing["link"], hls_gate.LinkRules(facts.accept_clock_mhz))),
            ("vitis_link", lambda: _xclbin_clock_checks(record["vitis_link"], timing.get("link"), facts))):
        present = record.get(what) if what in ("hls", "vitis_link") else timing.get(what)
        if not isinstance(present, Mapping):
            continue
        try:
            checks += judge_it()
        except (KeyError, TypeError, AttributeError, ValueError) as e:  # an archived record of another shape: no pass
            checks.append(gate.Check(f"{what}.record", "a record kabe can judge", type(e).__name__, False,
                                     f"the record's {what} cannot be judged ({type(e).__name__}: {e})"))
    # a record of these flows without what they judge by (a forged or cut record) is no pass
    needs = {"vitis_hls": (("hls", record.get("hls")),),
             "vitis": (("timing.link", timing.get("link")), ("vitis_link", record.get("vitis_link")))}
    for what, present in needs.get(facts.flow, ()):
        if not isinstance(present, Mapping) and not timing.get("error"):
            checks.append(gate.Check(f"{what}.present", f"the {facts.flow} build's {what}", None, False,
                                     f"the {facts.flow} record has no {what}, which its gate judges: nothing to pass"))
    for c in checks:
        verdict.checks.append(gate._as_dict(c))
        if not c.passed:
            verdict.passed = False
            verdict.failures.append(c.message or c.line())


def _xclbin_clock_checks(link: Mapping[str, Any], log: Any, facts: DesignFacts) -> list:
    """The kernel clock the xclbin has against the clock kabe asked for: lower while the link log reports no
    scaling (a log kabe misread, or a platform that fixed the clock) fails; a scaled one must still be at
    least the accepted clock (the xclbin stores whole MHz: 1 MHz of rounding allowed)."""
    got, asked, accept = link.get("kernel_clock_mhz"), link.get("asked_clock_mhz"), facts.accept_clock_mhz
    scaled = isinstance(log, Mapping) and bool(log.get("scaled"))
    if not isinstance(got, (int, float)) or isinstance(got, bool):
        return []  # no clock topology in the xclbin (fixed platform clocks): the log's checks stand
    if isinstance(asked, (int, float)) and got < asked - 1 and not scaled:
        return [gate.Check("link.xclbin_clock", f"{asked:g} MHz (asked)", f"{got:g} MHz", False,
                           f"the xclbin runs its kernels at {got:g} MHz, below the {asked:g} MHz asked for, and the "
                           f"link log reports no scaled clock (VPL 60-732): the clock is not the one asked for")]
    if scaled and accept is not None and got < accept - 1:
        return [gate.Check("link.xclbin_clock", f">= {accept:g} MHz (accepted)", f"{got:g} MHz", False,
                           f"the xclbin's kernel clock {got:g} MHz is below the accepted {accept:g} MHz")]
    return [gate.Check("link.xclbin_clock", f"the clock asked or accepted", f"{got:g} MHz (read from the xclbin)", True)]


def unverified_reason(record: Mapping[str, Any]) -> str | None:
    """Why a build record without a simulation result is unverified: its `verification: {kind: none,
    reason}` (design.yaml's `verify: {none: ...}`), or that a record declaring a model or testbench
    holds no result. None for a record that says nothing of verification (a timing report gated on
    its own by `kabe gate`, a record from before `verify:`). Shown beside the verdict, never one."""
    v = record.get("verification")
    if not isinstance(v, Mapping):
        return None
    reason = v.get("reason") if v.get("kind") == "none" else None
    if isinstance(reason, str) and reason.strip():
        return " ".join(reason.split())[:_MAX_LINE]
    return "no simulation result in this record"


def _first_beat(m: Any) -> str:
    """A first mismatch as one phrase: port, beat index, both values (hex, from kabe.sim.runner)."""
    if not isinstance(m, Mapping):
        return str(m)[:200]
    index = m.get("beat", m.get("row"))
    return f"{m.get('port')} beat {index}: expected {m.get('expected')}, got {m.get('got')}"[:200]


def _judge_sim(verdict: gate.Verdict, sim: Any) -> None:
    """The simulation check's verdict, first among the checks (kabe.sim.runner's result shape)."""
    s = sim if isinstance(sim, Mapping) else {}
    mismatches, problems, rows = s.get("mismatches"), s.get("problems"), s.get("rows_checked")
    problems = [str(p)[:_MAX_LINE] for p in problems[:_MAX_CARRIED]] if isinstance(problems, list) else None
    counted = isinstance(mismatches, int) and not isinstance(mismatches, bool) and mismatches >= 0
    passed = s.get("passed") is True and counted and mismatches == 0 and problems == []
    reasons: list[str] = []
    if counted and mismatches:
        first = s.get("first_mismatches")
        # no first mismatch to show when only missing or extra beats differ: the problems below say which
        shown = f" (first: {_first_beat(first[0])})" if isinstance(first, list) and first else ""
        beats = s.get("words_checked")
        of = f" of {beats:,}" if isinstance(beats, int) and not isinstance(beats, bool) and beats else ""
        reasons.append(f"{mismatches:,}{of} beat(s) differ from the golden model{shown}"[:_MAX_LINE])
    reasons += problems or []
    if not passed and not reasons:
        reasons = ["the simulation did not pass" if s.get("passed") is not True else
                   "the simulation result is incomplete (no mismatch count or problem list)"]
    if s.get("simulator") == "cocotb":  # cocotb's tests, not beats: said in its own terms
        expected, got = "every cocotb test passes", f"{s.get('failed', '?')} of {s.get('tests', '?')} test(s) failed"
    else:
        expected = "0 mismatching beats, no problems"
        got = (f"{mismatches if counted else '?'} mismatching beat(s), "
               f"{len(problems) if problems is not None else '?'} problem(s)")
    verdict.checks.insert(0, {"name": "sim.verification", "expected": expected, "got": got, "passed": passed})
    if not passed:
        verdict.passed = False
        verdict.failures[:0] = [f"verification: {r}" for r in reasons]


def carried_failures(recorded: Any, verdict: gate.Verdict, *, sim_judged: bool) -> list[str]:
    """The failures a record's own gate lists that today's `verdict` cannot re-derive, each as
    "recorded at build time: ...". `recorded`: the record's `gate` (None for a build being made)."""
    if not isinstance(recorded, Mapping):
        return []
    failures = [f for f in recorded.get("failures") or [] if isinstance(f, str)]
    checks = [c for c in recorded.get("checks") or [] if isinstance(c, Mapping)]
    today = {c["name"] for c in verdict.checks}

    def rederived(name: Any) -> bool:  # today's facts decide this check from the record's own numbers
        return isinstance(name, str) and (name in today or name.startswith("budget.")
                                          or (sim_judged and name == "sim.verification"))

    failed = [c for c in checks if c.get("passed") is not True]
    rederived_text = {c.get("message") for c in failed if rederived(c.get("name"))}
    out = []
    for f in failures:
        if f in rederived_text or (sim_judged and f.startswith("verification: ")):
            continue
        text = f.removeprefix(RECORDED)
        if text in verdict.failures:  # today's rules say the same thing: it is re-derived
            continue
        out.append(RECORDED + (text if len(text) <= _MAX_LINE else text[:_MAX_LINE - 3] + "..."))
        if len(out) == _MAX_CARRIED:
            break
    # a recorded "not estimated" with nothing failed is no failure when today's verdict says the same
    not_estimated = recorded.get("status") == gate.NOT_ESTIMATED and verdict.not_estimated is not None
    if not failures and ((recorded.get("passed") is not True and not not_estimated) or failed):
        names = [str(c.get("name"))[:40] for c in failed[:5]]
        out.append(RECORDED + "the build recorded a failed gate" + (f" ({', '.join(names)})" if names else ""))
    return out
