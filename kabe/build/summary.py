"""The rich summary a person reads after `doit build:<design>`."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from kabe.base import rtl_path
from kabe.rules import gate, outcome
from kabe.records.band_advice import fill_note, marginal_advice


def _num(v, fmt="{:,}"):
    if v is None:
        return "-"
    try:
        return fmt.format(v)
    except (TypeError, ValueError):  # not a number (an archived record is shown before it is trusted)
        return repr(v)[:20]


def wns_text(t: dict) -> str:
    """`-0.450 ns (80 % band: -0.800 .. -0.100)`, the band from the record's `band` when the estimate
    has one (with its nominal coverage when the record gives its quantiles),
    and `marginal: run Vivado` when the band straddles zero. The colour is the gate's: the point
    estimate decides, the band only says how far to trust it."""
    wns = t.get("wns_ns")
    if wns is None:
        return "-"
    out = f"[{'green' if wns >= 0 else 'red'}]{wns:+.3f} ns[/]"
    band = t.get("band") or {}
    lo_hi = band.get("wns_ns")
    q = band.get("quantiles")
    cov = f"{round((q[1] - q[0]) * 100)} % band: " if isinstance(q, list) and len(q) == 2 else ""
    if lo_hi:
        out += f" ({cov}{lo_hi[0]:+.3f} .. {lo_hi[1]:+.3f})"
    if band.get("marginal"):
        out += f" [bold yellow]{escape(band.get('note') or 'marginal: run Vivado')}[/]"
    return out


def gate_text(v: gate.Verdict, expected: str = "pass") -> str:
    """The gate row: PASS, FAIL, or for a negative example (design.yaml expect_gate: fail) "FAIL (expected)"
    (its failing is the point; a pass is then the surprise, in red)."""
    if expected == "fail":
        return f"[yellow]{outcome.NEGATIVE_EXAMPLE_FAILED}[/] (design.yaml: expect_gate: fail)" if not v.passed else \
            f"[red]PASS (expected FAIL: {outcome.NEGATIVE_EXAMPLE_PASSED})[/]"
    if v.status == gate.NOT_ESTIMATED:  # kabe.rules.gate: no number, no pass
        return ("[yellow]timing NOT ESTIMATED[/] (neither pass nor fail; design.yaml: expect_gate: not_estimated)"
                if expected == "not_estimated" else
                f"[red]timing NOT ESTIMATED[/] (design.yaml expects {escape(str(expected))}: {outcome.NO_TIMING_NUMBER_IS_NO_PASS})")
    if not v.passed:
        return "[red]FAIL[/]"
    return "[green]PASS[/]" + (f" [yellow](unverified: {escape(str(v.unverified))})[/]" if v.unverified else "")


def render(record: dict, console: Console, expected: str = "pass", verdict: gate.Verdict | None = None) -> None:
    """expected: the design's expect_gate (design.yaml), so a negative example's FAIL reads as expected.
    verdict: the record's kabe.rules.gate.Verdict (default: the one its gate holds)."""
    t, u = record["timing"], record["utilization"]
    g = verdict if verdict is not None else gate.Verdict.from_dict(record["gate"])
    label = "pre-route estimate" if t.get("estimated") else "post-route (sign-off)"
    commit = record["commit"][:12] + ("-dirty" if record["dirty"] else "")
    table = Table(title=f"kabe build: {record['design']} ({record['flow']} flow, {commit})", show_header=False)
    table.add_column(style="bold")
    table.add_column()
    table.add_row("tools", "; ".join(f"{k} {v}" for k, v in record["tools"].items() if k != "kabe.timing"))
    period = record["clock_period_ns"]
    clocks = [c for c in t.get("clocks") or [] if isinstance(c, dict) and isinstance(c.get("period_ns"), (int, float))]
    shown = (", ".join(f"{escape(str(c.get('name')))} {c['period_ns']:.3f} ns" for c in clocks[:4])
             + (", ..." if len(clocks) > 4 else "")) if len(clocks) > 1 else None  # several: each by name
    table.add_row("part / clock", f"{record['part']} @ "
                  + (shown or ('no clock' if period is None else f'{period:.3f} ns')))
    table.add_row("LUT / FF", f"{_num(u.get('lut'))} / {_num(u.get('ff'))}")
    table.add_row("DSP / BRAM36-eq", f"{_num(u.get('dsp'))} / {_num(u.get('bram36_equiv'), '{:g}')}")
    table.add_row("CARRY4 / SRL / LUTRAM", f"{_num(u.get('carry4'))} / {_num(u.get('srl'))} / {_num(u.get('lut_memory'))}")
    if isinstance(u.get("uncounted"), dict) and u["uncounted"]:  # a black box or unmapped logic: counts are lower bounds
        cells = ", ".join(f"{_num(n)} x {t}" for t, n in list(u["uncounted"].items())[:5])
        table.add_row("uncounted cells", f"[yellow]{escape(cells)}: the counts above leave them out[/]")
    if u.get("proxy"):  # another fabric's counts (Yosys has no target for the part's): said beside them
        table.add_row("resources", f"[yellow]{escape(str(u['proxy']))}[/]")
    if "not_estimated" in t:  # a board kabe cannot time (kabe.flows.open): no number, said as such
        table.add_row("timing", f"[yellow]not estimated ({escape(str(t['not_estimated']))})[/]")
    else:
        table.add_row(f"WNS ({label})", wns_text(t))
    if t.get("whs_ns") is not None:
        table.add_row("WHS / WPWS", f"{t['whs_ns']:+.3f} / {_num(t.get('wpws_ns'), '{:+.3f}')} ns")
    path = t.get("critical_path") or {}
    if path:
        table.add_row("critical path", f"{_num(path.get('delay_ns'), '{:.3f}')} ns, "
                                       f"{_num(path.get('logic_levels'))} logic levels (names below)")
    sim = record.get("sim")
    if isinstance(sim, dict) and sim.get("simulator") == "cocotb":  # shown, never trusted: judged by kabe.rules.verdict
        table.add_row("simulation check", f"cocotb {escape(str(sim.get('module')))}: {_num(sim.get('tests'))} test(s), "
                                          f"{_num(sim.get('failed'))} failed (JUnit: junit.xml)")
    elif isinstance(sim, dict) and sim:  # an archived record's sim is any object: shown, never trusted
        unit = "rows" if sim.get("kind") else "beats"  # kabe's own models count rows, any other model beats
        table.add_row("simulation check", f"{_num(sim.get('rows_checked'))} {unit}, {_num(sim.get('mismatches'))} "
                                          f"mismatching beat(s), {_num(sim.get('beats_per_cycle'), '{:.3f}')} beats/cycle")
        view = sim.get("synthesis_view")
        if isinstance(view, dict):  # the second run, with SYNTHESIS defined (kabe.build._synthesis_view)
            table.add_row("... with SYNTHESIS", "[yellow]not compiled for simulation: not verified[/]"
                          if view.get("not_compiled") else f"{_num(view.get('mismatches'))} mismatching beat(s)"
                          + ("" if view.get("passed") is True else " [red](fails)[/]"))
        unchecked = sim.get("not_checked")
        if isinstance(unchecked, list) and unchecked:  # outputs in no stream or status: said on a cache hit too
            names = ", ".join(str(n) for n in unchecked[:6]) + (f" and {len(unchecked) - 6} more" if len(unchecked) > 6 else "")
            table.add_row("not checked", f"[yellow]{escape(names)} (outputs in no stream or status of design.yaml)[/]")
        held = sim.get("held")
        if isinstance(held, dict) and held:  # inputs in no stream: held at a value, never X; said beside them
            names = ", ".join(f"{k}={v}" for k, v in list(held.items())[:6]) + (f" and {len(held) - 6} more" if len(held) > 6 else "")
            table.add_row("held", f"[yellow]{escape(names)} (inputs in no stream of design.yaml; streams.hold sets them)[/]")
    origin = record.get("reused_from")
    if origin:  # a cache hit: no tool ran; these results are that build's, gated with today's budgets
        table.add_row("reused", f"the build of {origin['commit'][:12]}{'-dirty' if origin['dirty'] else ''} "
                                f"(same inputs, key {origin['key'][:12]}); no tool ran")
    elif record.get("synth_reused_from"):  # only the simulation side changed: its check ran, no synthesis
        synth = record["synth_reused_from"]
        table.add_row("reused", f"the {escape(str(record.get('flow')))} flow's results of {synth['commit'][:12]}"
                                f"{'-dirty' if synth['dirty'] else ''} (same synthesis inputs, key {synth['key'][:12]}); "
                                f"the simulation check ran")
    if g.unverified:  # no simulation verdict behind the gate (verify: {none: ...})
        table.add_row("simulation check", f"[yellow]unverified: {escape(str(g.unverified))}[/]")
    table.add_row("gate", gate_text(g, expected))
    console.print(table)
    advice = marginal_advice(t, record.get("design"))
    if advice:  # what the band means and what to do, in one line outside the table (never wrapped in a cell)
        console.print(f"  [bold yellow]{escape(advice)}[/]", soft_wrap=True)
    note = fill_note(t)
    if note:  # a WNS of 0 the high-fanout fill set is the model's cap: said, with the WNS without it
        console.print(f"  [yellow]{escape(note)}[/]", soft_wrap=True)
    if path:  # outside the table: a netlist name is never cut or wrapped inside a cell
        # in RTL terms (kabe.base.rtl_path): registers by RTL name and file:line; the raw names are in the report
        console.print(f"  critical path: {escape(rtl_path.line(path) or '-')}", soft_wrap=True)
    for c in g.checks:
        mark = "[green]pass[/]" if c["passed"] else "[red]FAIL[/]"
        console.print(f"  {mark} {c['name']}: expected {escape(str(c['expected']))}, got {escape(str(c['got']))}")
    for key, reason in g.waivers.items():
        console.print(f"  [yellow]waived[/] {key}: {escape(reason)} (design.yaml waivers)")
    for w in g.warnings:
        console.print(f"  [yellow]warning[/] {escape(w)}")
    for f in g.failures:
        console.print(f"[red]✗ {escape(f)}[/]")
    if "_archive" in record:
        console.print(f"archived: {record['_archive']}")
