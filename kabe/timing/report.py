"""The estimator's result as metrics.json's `timing` record and as a human-readable text report.

The text report is the raw file the archive keeps (like Vivado's timing summary); it carries
everything the record holds, and kabe.parsers.kabe_timing reads it back into the same record.
Its last line is END_MARKER: a report without it is truncated and must not pass a gate.

Record conventions (docs/metrics.md): `critical_path.delay_ns` is the data path delay (launch
clock edge excluded, setup excluded, like Vivado's "Data Path Delay"); `cells[i].delay_ns` is the
increment of step i: the net into it plus its own arc (the startpoint's clk->out; the endpoint's
entry is the last net only), so the cells' delays add up to delay_ns. Setup appears in the
report and in slack, not in delay_ns.
"""

from __future__ import annotations

from pathlib import Path

from kabe.timing.sta import Endpoint, StaResult

END_MARKER = "== End of kabe timing estimate =="
HEADER_PREFIX = "kabe pre-route timing estimate"
HEADER = HEADER_PREFIX + " (ESTIMATED: no placement, no routing; not a sign-off)"
UNTIMED_PREFIX = "Unknown cell types (untimed): "  # the parser requires this line (kabe.parsers.kabe_timing)


def _ns(ps: float) -> float:
    return round(ps / 1000.0, 3)


def critical_path(ep: Endpoint, labels: dict[str, str] | None = None) -> dict:
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
    }


def timing_record(res: StaResult) -> dict:
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
        "clocks": [{k: c[k] for k in ("name", "period_ns", "wns_ns", "tns_ns", "whs_ns", "wpws_ns")}
                   for c in res.clocks],
        "clock_interaction": [{"from": a, "to": b, "type": "Not timed (cross-clock)"}
                              for a, b in res.cross_clock_paths],
        "critical_path": critical_path(eps[0], res.labels) if eps and eps[0].path else None,
    }


def render(res: StaResult, *, netlist_file: str = "", constraints: str = "", design: str = "",
           max_paths: int = 5) -> str:
    rec = timing_record(res)
    m = res.model
    L = [HEADER,
         f"Design: {design}", f"Netlist: {netlist_file}", f"Constraints: {constraints}",
         f"Routing model: base_ps={m.base_ps:g} fanout_ps_per_doubling={m.fanout_ps_per_doubling:g} "
         f"hard_block_ps={m.hard_block_ps:g} clock_uncertainty_ps={m.clock_uncertainty_ps:g}",
         "Cell delays: Yosys share/xilinx/cells_sim.v specify blocks (prjxray artix7 -1)",
         f"Cells: {res.n_cells}",
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
    L.append("")
    L.append("== Clock Interaction ==")
    for a, b in res.cross_clock_paths:
        L.append(f"{a} -> {b}: not timed (cross-clock)")
    if not res.cross_clock_paths:
        L.append("none")
    traced = [e for e in res.endpoints if e.path][:max_paths]
    for i, ep in enumerate(traced, 1):
        cp = critical_path(ep, res.labels)
        L += ["", f"== Path {i} ==",
              f"Slack ({'MET' if ep.slack_ps >= 0 else 'VIOLATED'}): {_f(cp['slack_ns'])} ns",
              f"Clock: {ep.clock}",
              f"Startpoint: {cp['startpoint']}",
              f"Endpoint: {cp['endpoint']}",
              f"Data path delay: {cp['delay_ns']:.3f} ns (logic {cp['logic_delay_ns']:.3f} ns, route {cp['route_delay_ns']:.3f} ns)",
              f"Logic levels: {cp['logic_levels']}",
              f"Required: {_ns(ep.required_ps):.3f} ns (capture edge - setup {ep.path[-1].cell_ps / 1000:.3f} ns)",
              f"  {'Incr(ns)':>9} {'Route(ns)':>9} {'Cell(ns)':>9}  {'Type':<10} Cell (pin in -> pin out)"]
        for k, s in enumerate(ep.path):
            incr = cp["cells"][k]["delay_ns"]
            cell = s.cell_ps / 1000 if k < len(ep.path) - 1 else 0.0
            L.append(f"  {incr:>9.3f} {s.route_ps / 1000:>9.3f} {cell:>9.3f}  {s.type:<10} "
                     f"{s.name} ({s.pin_in or 'clk'} -> {s.pin_out or 'setup'})")
    L += ["", END_MARKER]
    return "\n".join(L) + "\n"


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
