"""The estimator's result as metrics.json's `timing` record and as a human-readable text report.

The text report is the raw file the archive keeps (like Vivado's timing summary); it carries
everything the record holds, and kabe.parsers.kabe_timing reads it back into the same record.
Its last line is END_MARKER: a report without it is truncated and must not pass a gate.

Record conventions (docs/metrics.md): `critical_path.delay_ns` is the data path delay (launch
clock edge excluded, setup excluded, like Vivado's "Data Path Delay"); `cells[i].delay_ns` is the
increment of step i: the net into it plus its own arc (the startpoint's clk->out; the endpoint's
entry is the last net only), so the cells' delays add up to delay_ns. Setup appears in the
report and in slack, not in delay_ns.

`band` is how far to trust the numbers (kabe.timing.fitted.Band): each traced worst path's routing
factors, by its class (kabe.timing.conformal: calibrated to hold the nominal coverage, 80 %, of a
new design's paths; a path outside the data gets the widest). WNS lies in `band.wns_ns` when each
path's routing comes out inside its band; `marginal` when that range straddles zero. The gate's
verdict stays with the point estimate `wns_ns` (docs/timing_model.md).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from kabe.base import rtl_path
from kabe.timing.clock_targets import KIND_WORD

if TYPE_CHECKING:  # annotations only: the report's parser (kabe.parsers.kabe_timing) loads no estimator, no numpy
    from kabe.timing.sta import Endpoint, StaResult

END_MARKER = "== End of kabe timing estimate =="
HEADER_PREFIX = "kabe pre-route timing estimate"
HEADER = HEADER_PREFIX + " (ESTIMATED: no placement, no routing; not a sign-off)"
UNTIMED_PREFIX = "Unknown cell types (untimed): "  # the parser requires this line (kabe.parsers.kabe_timing)
MARGINAL = "marginal: run Vivado"
BAND_SECTION = "Uncertainty"
# Clock Summary rows of what no create_clock times: a create_clock whose object is not in the netlist
# ("<clock> NOT-FOUND <kind> <target> not found in top <top> (<xdc>:<line>)"), and the register clock
# pins no created clock reaches ("(no clock) NOT-FOUND <n> register clock pin(s) clocked from <roots>");
# then, when a clock is missing, CLOCK_INPUTS_PREFIX and the ports the registers are clocked from. The
# parser (kabe.parsers.kabe_timing) reads them back into timing_record's failing record, with
# clocks_message's words: such a report is readable and never passes.
NOT_FOUND = "NOT-FOUND"
NO_CLOCK_ROW = "(no clock)"
CLOCK_INPUTS_PREFIX = "Register clock inputs: "
# A path's registers in RTL terms (kabe.timing.rtl_names): "<name> | <file:line> | <note>", NO_RTL for
# a part not known; the parser (kabe.parsers.kabe_timing) reads them back as startpoint_rtl/endpoint_rtl
RTL_LINES = {"startpoint_rtl": "Startpoint RTL", "endpoint_rtl": "Endpoint RTL"}
RTL_SEP = " | "
NO_RTL = "-"
RTL_PATH = "RTL path"  # the one line kabe.base.rtl_path makes of the record (shown, not read back)
# What the high-fanout term (kabe.timing.fitted.HighFanout) did to WNS: it lengthens a path up to its
# budget and no further, so a path it fills reports slack 0 whatever the rest of the path does. The
# section keeps the WNS without the term beside it, and says whether the fill set the WNS (issue 44);
# kabe.parsers.kabe_timing reads both back (wns_uncapped_ns, high_fanout_fill).
FILL_SECTION = "High-Fanout Fill"
FILL_WNS = "WNS without the fill (ns): "
FILL_SET = "Fill set the WNS: "


def _ns(ps: float) -> float:
    return round(ps / 1000.0, 3)


def critical_path(ep: Endpoint, labels: dict[str, str] | None = None, rtl: dict | None = None) -> dict:
    """`rtl`: cell -> kabe.timing.rtl_names.RtlName; the record then names both ends in RTL terms."""
    steps = ep.path
    logic = sum(s.cell_ps for s in steps[:-1])
    route = sum(s.route_ps for s in steps)
    cells = []
    for i, s in enumerate(steps):
        incr = s.route_ps + (s.cell_ps if i < len(steps) - 1 else 0.0)
        cells.append({"name": s.name, "type": s.type, "delay_ns": _ns(incr)})
    return {
        "clock": ep.clock,
        "slack_ns": _ns(ep.slack_ps),
        "delay_ns": _ns(ep.arrival_ps),
        "logic_delay_ns": _ns(logic),
        "route_delay_ns": _ns(route),
        "logic_levels": max(0, len(steps) - 2),
        "startpoint": f"{_label(steps[0].name, labels)}/{steps[0].pin_out} ({steps[0].type})",
        "endpoint": f"{_label(ep.cell, labels)}/{ep.pin} ({ep.type})",
        "cells": cells,
        **({"startpoint_rtl": rtl[steps[0].name].as_dict(), "endpoint_rtl": rtl[ep.cell].as_dict()}
           if rtl and steps[0].name in rtl and ep.cell in rtl else {}),
    }


def rtl_line(rec: dict) -> str:
    """A Startpoint RTL / Endpoint RTL value: name | source | note (NO_RTL for what is not known)."""
    parts = [rec.get("name") or NO_RTL, rec.get("source") or NO_RTL]
    if rec.get("note"):
        parts.append(rec["note"])
    return RTL_SEP.join(parts)


def band(res: StaResult) -> dict | None:
    """The uncertainty band of WNS and of the critical path's delay (None without a band or paths).
    When parts of the netlist were timed as Vivado would map them (kabe.timing.vivado_packing,
    kabe.timing.lut_cones), the pessimistic end also covers the netlist exactly as Yosys mapped it."""
    b = getattr(res.model, "band", None)
    if b is None or not any(e.path for e in res.endpoints):
        return None
    lo, hi = _wns_band(res, b)
    alt = res.as_yosys_mapped
    if alt is not None and any(e.path for e in alt.endpoints):
        lo = min(lo, _wns_band(alt, b)[0])
    cp = next(e for e in res.endpoints if e.path)
    f_lo, f_hi = _factors(res, cp, b)[:2]
    d_lo, d_hi = b.delay_ns(sum(s.cell_ps for s in cp.path[:-1]) / 1000, sum(s.route_ps for s in cp.path) / 1000,
                            _features(res, cp))
    lo, hi = _ns(lo * 1000), _ns(hi * 1000)
    marginal = lo < 0 <= hi
    return {"quantiles": list(b.quantiles), "route_factor": [f_lo, f_hi], "wns_ns": [lo, hi],
            "critical_path_delay_ns": [_ns(d_lo * 1000), _ns(d_hi * 1000)],
            "marginal": marginal, "note": MARGINAL if marginal else None}


def _wns_band(res: StaResult, b) -> tuple[float, float]:
    """WNS (ns) with every traced path's routing at the band's high and at its low factor."""
    lows, highs = [], []
    for ep in (e for e in res.endpoints if e.path):
        logic = sum(s.cell_ps for s in ep.path[:-1])
        route = sum(s.route_ps for s in ep.path)
        d_lo, d_hi = b.delay_ns(logic / 1000, route / 1000, _features(res, ep))
        d = ep.arrival_ps / 1000
        lows.append(ep.slack_ps / 1000 - (d_hi - d))
        highs.append(ep.slack_ps / 1000 + (d - d_lo))
    return min(lows), min(highs)


def _features(res: StaResult, ep: Endpoint):
    """What the band's classes look at (kabe.timing.conformal): levels, BRAM/DSP on the path, the
    requirement (the endpoint's clock period) and the largest fanout of a net on the path."""
    from kabe.timing.conformal import steps_features
    period = next((c["period_ns"] for c in res.clocks if c["name"] == ep.clock), None)
    return steps_features([s.type for s in ep.path], period if period is not None else 0.0,
                          [getattr(s, "fanout", 0) for s in ep.path])


def _factors(res: StaResult, ep: Endpoint, b) -> tuple[float, float, str, str]:
    """(lo, hi, class, why) of one path's band; a hand-made Band without classes is pooled."""
    if not hasattr(b, "factors"):
        return b.lo, b.hi, "pooled", "every path alike"
    return b.factors(_features(res, ep))


def missing_clocks_message(res: StaResult) -> str | None:
    """The gate's line for create_clock objects the netlist does not have, as Vivado would find no
    clock on them: "no clock constrained: port clk not found in top counter (...)"; else for
    registers no created clock reaches (Vivado's check_timing no_clock). None when every clock was
    created and reaches every register. With several clocks, each missing one is named; the others
    are still timed (in the report)."""
    return clocks_message([c["name"] for c in res.clocks], res.missing_clocks, res.top, res.clock_inputs,
                          res.unclocked_pins, res.unclocked_from)


def clocks_message(created: list[str], missing: list[dict], top: str, clock_inputs: list[str],
                   unclocked_pins: int, unclocked_from: list[str]) -> str | None:
    """missing_clocks_message from its parts, as the report lists them (the parser builds the same
    line from the report's NOT-FOUND rows). `missing`: {clock, kind, target, source} per object."""
    if not missing:
        if unclocked_pins:
            return (f"no clock on {unclocked_pins} register clock pin(s), so they are never timed: clocked from "
                    f"{', '.join(unclocked_from)}, which no create_clock reaches; constrain that clock in the XDC")
        return None
    created = set(created)
    lost = list(dict.fromkeys(m["clock"] for m in missing if m["clock"] not in created))
    what = "; ".join(f"{KIND_WORD.get(m['kind'], m['kind'])} {m['target']} not found in top {top}"
                     for m in missing)
    where = ", ".join(dict.fromkeys(f"create_clock -name {m['clock']} at {m['source']}" for m in missing))
    if not created:
        head = "no clock constrained"
    elif lost:
        head = f"clock {', '.join(lost)} not constrained ({', '.join(sorted(created))} timed)"
    else:  # a clock on several objects, some of which are missing
        head = "clock targets missing"
    hint = (f"; the registers are clocked from {'port' if len(clock_inputs) == 1 else 'ports'} "
            f"{', '.join(clock_inputs)}" if clock_inputs else "")
    return f"{head}: {what} ({where}{hint})"


def timing_record(res: StaResult) -> dict:
    missing = missing_clocks_message(res)
    if missing is not None:
        return not_timed_record(missing)
    return _record(res)


def not_timed_record(message: str) -> dict:
    """No partial record: a clock the XDC asks for was never created (or registers no clock reaches),
    so nothing here is a verdict; the gate fails on `error`. The parser gives the same for the report."""
    return {"estimated": True, "wns_ns": None, "tns_ns": None, "whs_ns": None, "critical_path": None,
            "clocks": [], "error": message}


def _record(res: StaResult) -> dict:
    """The numbers as timed (the report shows them even when a clock is missing)."""
    eps = res.endpoints
    return {
        "estimated": True,
        "wns_ns": _ns(eps[0].slack_ps) if eps else None,
        "tns_ns": _ns(sum(min(0.0, e.slack_ps) for e in eps)),
        "failing_endpoints": sum(1 for e in eps if e.slack_ps < 0),
        "total_endpoints": len(eps),
        "whs_ns": None, "ths_ns": None, "wpws_ns": None, "tpws_ns": None,
        "verdict_line": None,
        "unconstrained_endpoints": res.unconstrained_endpoints,
        "untimed_cells": dict(sorted(res.unknown_cells.items())),
        "clocks": [{k: c[k] for k in ("name", "period_ns", "wns_ns", "tns_ns", "whs_ns", "wpws_ns",
                                      "failing_endpoints", "total_endpoints")}
                   for c in res.clocks],
        "clock_interaction": [{"from": a, "to": b, "type": "Not timed (cross-clock)"}
                              for a, b in res.cross_clock_paths],
        "critical_path": critical_path(eps[0], res.labels, res.rtl) if eps and eps[0].path else None,
        "band": band(res),
        **fill_fields(eps),
    }


def fill_fields(eps: list[Endpoint]) -> dict:
    """wns_uncapped_ns: WNS with no endpoint's slack filled by the high-fanout term (what a change to
    the design moves, which a slack held at 0 by the fill hides); high_fanout_fill: the worst
    endpoint's slack was set by the fill (cut at its budget), so WNS 0.000 is the model's cap, not
    the path's delay. Nothing without endpoints."""
    if not eps:
        return {}
    return {"wns_uncapped_ns": _ns(min(e.slack_without_fill_ps for e in eps)),
            "high_fanout_fill": bool(eps[0].filled)}


def fill_lines(rec: dict) -> list[str]:
    """The FILL_SECTION's lines for a record with fill_fields (none without them)."""
    if rec.get("wns_uncapped_ns") is None:
        return []
    said = ("yes: the worst path's nets of many sinks were lengthened up to its budget and no further, so "
            "its slack is 0 by the model's cap; the line above is the WNS without that term"
            if rec["high_fanout_fill"] else "no")
    return ["", f"== {FILL_SECTION} ==", f"{FILL_WNS}{rec['wns_uncapped_ns']:.3f}", f"{FILL_SET}{said}"]


# A crossing the XDC declares nothing about (kabe.project.constraints.crossing_declarations): the gate fails it
UNDECLARED = "undeclared: no set_clock_groups, set_false_path or set_max_delay in the XDC"


def render(res: StaResult, *, netlist_file: str = "", constraints: str = "", design: str = "",
           max_paths: int = 5, crossings_declared: bool = True) -> str:
    rec = _record(res)
    m = res.model
    L = [HEADER,
         f"Design: {design}", f"Netlist: {netlist_file}", f"Constraints: {constraints}",
         f"Delay model: {m.describe()}",
         "Cell arcs: Yosys share/xilinx/cells_sim.v specify blocks (prjxray artix7 -1), through the model",
         f"Cells: {res.n_cells}",
         f"Mapped as Vivado would: {_mapped(res)}",
         UNTIMED_PREFIX + (", ".join(f"{t} x{n}" for t, n in sorted(res.unknown_cells.items())) or "none"),
         f"Combinational loop nodes cut: {res.loops_cut}",
         "",
         "== Design Timing Summary ==",
         f"{'WNS(ns)':>10} {'TNS(ns)':>12} {'Failing Endpoints':>18} {'Total Endpoints':>16} {'Unconstrained Endpoints':>24}",
         f"{_f(rec['wns_ns']):>10} {_f(rec['tns_ns']):>12} {rec['failing_endpoints']:>18} {rec['total_endpoints']:>16} {rec['unconstrained_endpoints']:>24}",
         "",
         "== Clock Summary ==",
         f"{'Clock':<20} {'Period(ns)':>10} {'WNS(ns)':>10} {'TNS(ns)':>12} {'Failing':>8} {'Total':>8}"]
    for c in res.clocks:
        L.append(f"{c['name']:<20} {c['period_ns']:>10.3f} {_f(c['wns_ns']):>10} {_f(c['tns_ns']):>12} "
                 f"{c['failing_endpoints']:>8} {c['total_endpoints']:>8}")
    # A clock whose object is missing is listed as such, in a row no reader can take for a timed
    # clock: kabe.parsers.kabe_timing reads it back as the failing record, so re-reading this report
    # can never pass it.
    for m in res.missing_clocks:
        L.append(f"{m['clock']:<20} {NOT_FOUND} {KIND_WORD.get(m['kind'], m['kind'])} {m['target']} "
                 f"not found in top {res.top} ({m['source']})")
    if res.unclocked_pins:  # registers no clock reaches: a row that cannot be read as a timed clock either
        L.append(f"{NO_CLOCK_ROW:<20} {NOT_FOUND} {res.unclocked_pins} register clock pin(s) clocked from "
                 f"{', '.join(res.unclocked_from)}")
    if res.missing_clocks:  # the failing record's hint (clocks_message): where the registers' clocks come from
        L.append(CLOCK_INPUTS_PREFIX + (", ".join(res.clock_inputs) or "none"))
    L += fill_lines(rec)
    L += ["", f"== {BAND_SECTION} =="]
    bd = rec["band"]
    if bd is None:
        L.append("Band: none")
    else:
        q = "..".join(f"p{round(x * 100)}" for x in bd["quantiles"])
        L += [f"Band: {q} of routed / estimated route delay x {bd['route_factor'][0]:.4f} .. "
              f"{bd['route_factor'][1]:.4f} (designs held out of the fit; docs/timing_model.md)",
              f"WNS band (ns): {bd['wns_ns'][0]:.3f} .. {bd['wns_ns'][1]:.3f}",
              f"Critical path delay band (ns): {bd['critical_path_delay_ns'][0]:.3f} .. "
              f"{bd['critical_path_delay_ns'][1]:.3f}",
              f"Marginal: {'yes, ' + MARGINAL if bd['marginal'] else 'no'}",
              "Gate: the point estimate (WNS above) decides; the band does not"]
        L += _band_classes(res)
        if res.as_yosys_mapped is not None:
            L.append(f"The low end also covers the netlist exactly as Yosys mapped it (WNS "
                     f"{_f(_ns(res.as_yosys_mapped.endpoints[0].slack_ps) if res.as_yosys_mapped.endpoints else None)} ns)")
    L.append("")
    L.append("== Clock Interaction ==")
    for a, b in res.cross_clock_paths:
        L.append(f"{a} -> {b}: not timed (cross-clock" + (")" if crossings_declared else f"; {UNDECLARED})"))
    if not res.cross_clock_paths:
        L.append("none")
    traced = [e for e in res.endpoints if e.path][:max_paths]
    for i, ep in enumerate(traced, 1):
        cp = critical_path(ep, res.labels, res.rtl)
        L += ["", f"== Path {i} ==",
              f"Slack ({'MET' if ep.slack_ps >= 0 else 'VIOLATED'}): {_f(cp['slack_ns'])} ns",
              f"Clock: {ep.clock}",
              f"Startpoint: {cp['startpoint']}",
              f"Endpoint: {cp['endpoint']}"]
        L += [f"{title}: {rtl_line(cp[key])}" for key, title in RTL_LINES.items() if key in cp]
        if "startpoint_rtl" in cp:
            L.append(f"{RTL_PATH}: {rtl_path.line(cp)}")
        L += [
              f"Data path delay: {cp['delay_ns']:.3f} ns (logic {cp['logic_delay_ns']:.3f} ns, route {cp['route_delay_ns']:.3f} ns)",
              f"Logic levels: {cp['logic_levels']}",
              f"Timing pressure: {_pressure(ep)}",
              *([f"Uncapped slack: {_ns(ep.uncapped_slack_ps):+.3f} ns without the high-fanout term (the fill set "
                 f"this path's slack)"] if ep.filled else []),
              f"Required: {_ns(ep.required_ps):.3f} ns (capture edge - setup {ep.path[-1].cell_ps / 1000:.3f} ns)",
              f"  {'Incr(ns)':>9} {'Route(ns)':>9} {'Cell(ns)':>9}  {'Type':<10} Cell (pin in -> pin out)"]
        for k, s in enumerate(ep.path):
            incr = cp["cells"][k]["delay_ns"]
            cell = s.cell_ps / 1000 if k < len(ep.path) - 1 else 0.0
            L.append(f"  {incr:>9.3f} {s.route_ps / 1000:>9.3f} {cell:>9.3f}  {s.type:<10} "
                     f"{s.name} ({s.pin_in or 'clk'} -> {s.pin_out or 'setup'})")
    L += ["", END_MARKER]
    return "\n".join(L) + "\n"


def _band_classes(res: StaResult) -> list[str]:
    """Which band each traced path got and why (kabe.timing.conformal): a path the model knows to be
    outside its data gets the widest band and says so."""
    b = res.model.band
    cov = getattr(b, "coverage", None)
    out = [f"Coverage: {cov:.0%} of a new design's paths (design-level conformal over "
           f"{b.data.get('designs', '?')} designs; docs/timing_model.md)"] if cov is not None and b.data else []
    traced = [e for e in res.endpoints if e.path][:10]
    for i, ep in enumerate(traced, 1):
        lo, hi, name, why = _factors(res, ep, b)
        if i == 1 or name == "outside-data":
            out.append(f"Path {i} band: route x {lo:.3f} .. {hi:.3f}, {name}: {why}")
    return out


def _mapped(res: StaResult) -> str:
    m = res.mapped or {}
    if not any(m.values()):
        return "none"
    return (f"{m.get('dsp_registers', 0)} DSP48E1 register(s) moved to P (kabe.timing.vivado_packing), "
            f"{m.get('narrow_cones', 0)} narrow LUT cone(s) as one slice (kabe.timing.lut_cones)")


def _pressure(ep: Endpoint) -> str:
    """How the endpoint's routing was scaled (kabe.timing.pressure, and the fitted model's clock
    law for a tight clock: kabe.timing.fitted.ClockLaw): nets above are as scaled."""
    hf = getattr(ep, "high_fanout_ps", 0.0)
    hf_said = (f"; nets of many sinks +{hf / 1000:.3f} ns (Vivado leaves them long while the path meets its "
               f"budget, so they fill its slack at most)" if hf > 0 else "")
    if ep.pressure >= 1.0:
        return "none (the path fits its clock as estimated)" + hf_said
    return (f"routing x {ep.pressure:.2f} (Vivado's timing-driven placement shortens a path over its "
            f"budget, and the nets of a tight clock; docs/timing_model.md)" + hf_said)


def _label(cell: str, labels: dict[str, str] | None) -> str:
    """The RTL net name a sequential cell drives, with Yosys's cell name kept for lookup in the netlist."""
    name = (labels or {}).get(cell)
    return f"{name} [{cell}]" if name else cell


def _f(v) -> str:
    return "NA" if v is None else f"{v:.3f}"


def write(res: StaResult, path: str | Path, **kw) -> Path:
    path = Path(path)
    path.write_text(render(res, **kw))
    return path
