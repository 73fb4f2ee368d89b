"""Static timing analysis over a Yosys JSON netlist (flattened, mapped by synth_xilinx).

Setup analysis only, register to register, per clock:
* startpoints: outputs of sequential cells (FF Q, BRAM DO, DSP P with a register, LUTRAM/SRL after
  a write), launched at their clock edge plus the clk->out arc;
* endpoints: inputs of sequential cells with a setup check (FF D/CE/R/S, BRAM address/data/enable,
  DSP inputs into a register, LUTRAM write side), required at the next capturing edge minus setup;
* arrival propagates through combinational arcs (kabe.timing.cells) plus a net delay per
  connection, both through the delay model: the fitted one (kabe.timing.fitted) unless a caller
  passes another (the hand-set kabe.timing.routing.RoutingModel, for unit tests);
* timing pressure (kabe.timing.pressure): an endpoint whose worst path is over its budget is
  timed again with its nets weighted by the model's pressure factor (rounded up to a level);
* what Yosys maps differently from Vivado is timed as Vivado maps it (vivado_mapping): a DSP48E1
  passing its M register through its ALU (kabe.timing.vivado_packing) and narrow LUT cones
  (kabe.timing.lut_cones). kabe.timing.estimate also times the netlist exactly as Yosys mapped it.

Clocks are created only on the XDC objects the netlist has (kabe.timing.clock_targets), as in
Vivado: a create_clock on a port the top lacks is reported (StaResult.missing_clocks) and fails the
estimate, never guessed onto whatever clocks the registers.

Primary inputs and outputs are unconstrained (no set_input_delay/set_output_delay exist for
the engines: in the block design their neighbours are the DMA's registers, which Vivado times, not
the open flow). Paths from input ports are not timed; endpoints that are output ports are counted
in `unconstrained_endpoints`, as Vivado's check_timing would list them. Asynchronous clear/preset
(recovery/removal) and hold are not analysed: hold needs placed clock skew, unknown pre-route.

One module for one pass (connectivity, clocks, graph, propagation, endpoints, traces share the
same local tables); that is why it runs past the usual ~350 lines.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict, deque
from dataclasses import dataclass, field
from pathlib import Path

from kabe.project.constraints import Clock
from kabe.timing.cells import CellTiming, cell_timing, with_defaults
from kabe.timing.clock_targets import target_bits
from kabe.timing.fitted import FittedModel, load as load_fitted
from kabe.timing.lut_cones import SHAPES, narrow_cones
from kabe.timing import rtl_names
from kabe.timing.routing import RoutingModel
from kabe.timing.vivado_packing import vivado_parameters

DelayModel = FittedModel | RoutingModel

# Buffers a clock passes through: type -> (its clock inputs, its output). A clock mux (BUFGCTRL, BUFGMUX)
# passes either of two clocks; its output net takes the tighter of the clocks reaching it (see below), so
# its registers are never timed only at the slower one (red team 4c, repro 04).
CLOCK_BUFFERS = {"IBUF": (("I",), "O"), "IBUFG": (("I",), "O"), "BUFG": (("I",), "O"), "BUFGCE": (("I",), "O"),
                 "BUFGCE_1": (("I",), "O"), "BUFH": (("I",), "O"), "BUFHCE": (("I",), "O"),
                 "BUFGCTRL": (("I0", "I1"), "O"), "BUFGMUX": (("I0", "I1"), "O"), "BUFGMUX_1": (("I0", "I1"), "O"),
                 "BUFGMUX_CTRL": (("I0", "I1"), "O"), "BUFR": (("I",), "O"), "BUFIO": (("I",), "O")}


TRACE_WORST = 10  # paths traced back per clock (the report lists them)


class NetlistError(ValueError):
    """A netlist the estimator cannot analyse (no top module, no clock found, ...)."""


@dataclass
class PathStep:
    name: str
    type: str
    pin_in: str | None
    pin_out: str | None
    cell_ps: float
    route_ps: float  # net delay into this cell's input (0 for the startpoint)
    fanout: int = 0  # the fanout of that net (0 for the startpoint): the band's classes look at it


@dataclass
class Endpoint:
    cell: str
    type: str
    pin: str
    clock: str
    arrival_ps: float
    required_ps: float
    slack_ps: float
    path: list[PathStep] = field(default_factory=list)
    pressure: float = 1.0  # routing factor timing pressure left this path at (kabe.timing.pressure)
    high_fanout_ps: float = 0.0  # what the model's high-fanout term added (kabe.timing.fitted.HighFanout)
    # the slack without that term (None: the term did not touch this endpoint, so slack_ps is it):
    # what a change to the design moves even while the fill holds slack_ps at 0 (issue 44)
    uncapped_slack_ps: float | None = None
    filled: bool = False  # the term was cut at the path's budget: slack_ps is 0 by the fill, not by the path

    @property
    def slack_without_fill_ps(self) -> float:
        return self.slack_ps if self.uncapped_slack_ps is None else self.uncapped_slack_ps


@dataclass
class StaResult:
    clocks: list[dict]
    endpoints: list[Endpoint]  # every timed endpoint pin, worst first
    unconstrained_endpoints: int
    unknown_cells: dict[str, int]
    loops_cut: int
    cross_clock_paths: list[tuple[str, str]]
    model: DelayModel
    n_cells: int
    # sequential cell -> the RTL name of the net it drives ("engine.acc[3]"): Yosys's cell names
    # ($auto$ff.cc:337:slice$1827) mean nothing to a person reading a critical path
    labels: dict[str, str] = field(default_factory=dict)
    # the same cells' RTL name and source line (kabe.timing.rtl_names.RtlName), for the report's RTL lines
    rtl: dict = field(default_factory=dict)
    # what was timed as Vivado would map it: DSP48E1s with their register moved
    # (kabe.timing.vivado_packing) and signals that are narrow LUT cones (kabe.timing.lut_cones)
    mapped: dict[str, int] = field(default_factory=dict)
    # the same netlist timed exactly as Yosys mapped it, when that differs: the band reaches down to it
    as_yosys_mapped: StaResult | None = None
    top: str = ""  # the netlist's top module
    # create_clock objects the netlist does not have ({clock, kind, target, source}): no clock was
    # created on them, so the estimate cannot pass (kabe.timing.report.missing_clocks_message)
    missing_clocks: list[dict] = field(default_factory=list)
    clock_inputs: list[str] = field(default_factory=list)  # top ports the registers' clocks come from
    unclocked_pins: int = 0  # register clock pins no created clock reaches (never timed)
    unclocked_from: list[str] = field(default_factory=list)  # where those pins' clocks come from


def _top(netlist: dict) -> tuple[str, dict]:
    mods = netlist.get("modules") or {}
    tops = [n for n, m in mods.items() if param_top(m)]
    if not tops:
        if len(mods) == 1:
            tops = list(mods)
        else:
            raise NetlistError("netlist has no module marked top; run `hierarchy -top` before write_json")
    return tops[0], mods[tops[0]]


def param_top(m: dict) -> bool:
    v = (m.get("attributes") or {}).get("top")
    return v is not None and str(v).strip("0") != ""


def _bits(conn: list) -> list:
    return [b if isinstance(b, int) else None for b in conn]


def _calibrated(ct: CellTiming, cell_type: str, model: DelayModel) -> CellTiming:
    """A cell's prjxray arcs and setup times through the model (unchanged by the hand-set one)."""
    ct.comb = [(ip, ib, op, ob, model.cell_ps(cell_type, ip, op, ps)) for ip, ib, op, ob, ps in ct.comb]
    ct.launch = [(op, ob, cp, model.cell_ps(cell_type, cp, op, ps)) for op, ob, cp, ps in ct.launch]
    ct.setup = [(ip, ib, cp, model.setup_ps(cell_type, ip, ps)) for ip, ib, cp, ps in ct.setup]
    return ct


def analyze(netlist: dict | str | Path, clocks: list[Clock], model: DelayModel | None = None, *,
            vivado_mapping: bool = True, source_root: Path | None = None) -> StaResult:
    """`vivado_mapping`: time what Yosys mapped differently from Vivado as Vivado would map it:
    a DSP48E1 register (kabe.timing.vivado_packing) and a narrow LUT cone (kabe.timing.lut_cones).
    False times Yosys's netlist exactly as it is. `source_root`: the folder Yosys ran in (default:
    a netlist file's own), where its `src` paths lead, for the RTL source lines (kabe.timing.rtl_names)."""
    model = model or load_fitted()
    if not isinstance(netlist, dict):
        source_root = source_root or Path(netlist).parent
        netlist = json.loads(Path(netlist).read_text())
    top_name, top = _top(netlist)
    g = _Graph.of(top, clocks, model, vivado_mapping)
    endpoints: list[Endpoint] = []
    cross: set[tuple[str, str]] = set()
    unconstrained_out = 0
    for clk_name, st in g.startpoints().items():
        reached = g.endpoints_of_clock(clk_name, st, endpoints, cross)
        for p in g.ports.values():
            if p["direction"] == "output":
                unconstrained_out += sum(1 for b in p["bits"] if _port_bit_reached(b, reached, g.driver, g.cells))
    endpoints.sort(key=lambda e: e.slack_ps)
    _trace_worst(endpoints, g.cells, g.fanout)
    wanted = {ep.cell for ep in endpoints if ep.path} | {ep.path[0].name for ep in endpoints if ep.path}
    rtl = rtl_names.names(wanted, g.cells, top.get("netnames") or {}, source_root)
    registers = g.register_clocks()
    return StaResult(_clock_rows(g.clocks.created, endpoints), endpoints, unconstrained_out, dict(g.unknown),
                     g.loops_cut, sorted(cross), model, len(g.cells), {c: r.name for c, r in rtl.items() if r.name},
                     rtl, mapped={"dsp_registers": g.repacked, "narrow_cones": len(g.cones)},
                     top=top_name, missing_clocks=g.clocks.missing, **registers)


def _connectivity(cells: dict, ports: dict) -> tuple[dict, dict]:
    """(bit -> its driver (cell, port, index), bit -> its sinks); a top port is the cell "$port"."""
    driver: dict[int, tuple[str, str, int]] = {}
    sinks: dict[int, list[tuple[str, str, int]]] = defaultdict(list)
    for pname, p in ports.items():
        for i, b in enumerate(_bits(p["bits"])):
            if b is None:
                continue
            if p["direction"] in ("input", "inout"):
                driver[b] = ("$port", pname, i)
            if p["direction"] in ("output", "inout"):
                sinks[b].append(("$port", pname, i))
    for cname, c in cells.items():
        dirs = c.get("port_directions") or {}
        for pin, conn in (c.get("connections") or {}).items():
            for i, b in enumerate(_bits(conn)):
                if b is None:
                    continue
                if dirs.get(pin) == "output":
                    driver[b] = (cname, pin, i)
                else:
                    sinks[b].append((cname, pin, i))
    return driver, sinks


@dataclass
class _Clocks:
    """The XDC's clocks on the netlist: each clock net's clock (through IBUF/BUFG), the clocks created,
    and the targets the netlist does not have."""

    of_net: dict  # bit -> Clock
    created: list  # the clocks with an object (or virtual)
    missing: list  # {clock, kind, target, source}: no clock was created on them

    @classmethod
    def of(cls, clocks: list[Clock], top: dict, cells: dict, sinks: dict) -> _Clocks:
        # A target the netlist does not have creates no clock (as in Vivado) and is reported, never guessed.
        ports, netnames = top.get("ports") or {}, top.get("netnames") or {}
        missing: list[dict] = []
        seeds_of: dict[str, list[int]] = {}
        for clk in clocks:
            seeds = []
            for t in clk.targets:
                found = target_bits(clk.target_kind, t, ports, netnames, cells)
                if not found:
                    missing.append({"clock": clk.name, "kind": clk.target_kind, "target": t, "source": clk.source})
                seeds += found
            seeds_of[clk.name] = seeds
        # Clocks on one object (create_clock -add): Vivado times its paths against each; this analysis
        # gives a net one clock, so the one with the shortest period takes it: the one that can fail.
        tightest: dict[int, Clock] = {}
        for clk in clocks:
            for b in seeds_of[clk.name]:
                if b not in tightest or clk.period_ns < tightest[b].period_ns:
                    tightest[b] = clk
        # a virtual clock has no object and is still a clock
        created = [clk for clk in clocks if seeds_of[clk.name] or clk.target_kind is None]
        # A net a clock is created on keeps that clock; a net clocks reach through buffers takes the tightest
        # of them (propagated first): the output of a clock mux is timed at its faster clock, never only the slower.
        of_net: dict[int, Clock] = dict(tightest)
        for clk in sorted(clocks, key=lambda c: c.period_ns):
            todo = [b for b in seeds_of[clk.name] if tightest[b] is clk]
            seen: set[int] = set()
            while todo:
                b = todo.pop()
                if b in seen or of_net.setdefault(b, clk) is not clk:
                    continue
                seen.add(b)
                for cname, pin, _ in sinks.get(b, ()):
                    if cname == "$port":
                        continue
                    t = cells[cname]["type"]
                    if t in CLOCK_BUFFERS and pin in CLOCK_BUFFERS[t][0]:
                        todo += [x for x in _bits(cells[cname]["connections"].get(CLOCK_BUFFERS[t][1]) or [])
                                 if x is not None]
        return cls(of_net, created, missing)


def _cell_timings(cells: dict, model: DelayModel, vivado_mapping: bool) -> tuple[dict, int, dict]:
    """(cell -> its calibrated timing arcs, how many were re-mapped as Vivado maps them, unknown types)."""
    timings: dict[str, CellTiming] = {}
    repacked = 0
    unknown: dict[str, int] = defaultdict(int)
    for cname, c in cells.items():
        # the attributes a hand-instantiated primitive leaves out are at its defaults, not 0 (cells.with_defaults)
        c_full = {**c, "parameters": with_defaults(c["type"], c.get("parameters") or {})}
        params = vivado_parameters(c_full) if vivado_mapping else None
        if params is not None:
            repacked += 1
        ct = _calibrated(cell_timing(c["type"], params or c_full["parameters"]), c["type"], model)
        if not ct.known:
            unknown[c["type"]] += 1
        timings[cname] = ct
    return timings, repacked, unknown


def _combinational(cells: dict, timings: dict) -> tuple[dict, list, int]:
    """(in bit -> [(out bit, cell, pin in, pin out, ps)], the bits in topological order, how many bits
    sit on combinational loops and were cut)."""
    edges: dict[int, list[tuple[int, str, str, str, float]]] = defaultdict(list)
    indeg: dict[int, int] = defaultdict(int)
    for cname, ct in timings.items():
        conns = cells[cname]["connections"]
        for ip, ib, op, ob, ps in ct.comb:
            ins = conns.get(ip)
            outs = conns.get(op)
            if not ins or not outs:
                continue
            ibits = [ins[ib]] if ib is not None and ib < len(ins) else (ins if ib is None else [])
            obits = [outs[ob]] if ob is not None and ob < len(outs) else (outs if ob is None else [])
            for x in ibits:
                if not isinstance(x, int):
                    continue
                for y in obits:
                    if isinstance(y, int):
                        edges[x].append((y, cname, ip, op, ps))
                        indeg[y] += 1
    # topological order (Kahn); nodes left over sit on combinational loops and are cut
    nodes = set(edges) | set(indeg)
    q = deque(n for n in nodes if indeg.get(n, 0) == 0)
    order = []
    deg = dict(indeg)
    while q:
        n = q.popleft()
        order.append(n)
        for y, *_ in edges.get(n, ()):
            deg[y] -= 1
            if deg[y] == 0:
                q.append(y)
    return edges, order, len(nodes) - len(order)


@dataclass
class _Graph:
    """One netlist made ready to time: connectivity, clocks, each cell's arcs, the combinational graph,
    and the delay of each net (the steps of `analyze` share it)."""

    cells: dict
    ports: dict
    model: DelayModel
    driver: dict
    sinks: dict
    fanout: dict
    clocks: _Clocks
    timings: dict
    repacked: int
    unknown: dict
    edges: dict
    order: list
    loops_cut: int
    cones: dict
    use_hf: bool

    @classmethod
    def of(cls, top: dict, clocks: list[Clock], model: DelayModel, vivado_mapping: bool) -> _Graph:
        cells: dict = top.get("cells") or {}
        ports: dict = top.get("ports") or {}
        driver, sinks = _connectivity(cells, ports)
        timings, repacked, unknown = _cell_timings(cells, model, vivado_mapping)
        edges, order, loops_cut = _combinational(cells, timings)
        fanout = {b: len(s) for b, s in sinks.items()}
        # the fitted model's high-fanout term (kabe.timing.fitted.HighFanout): a net of many sinks is
        # longer than the fanout law says, but only while its path meets its budget (Vivado replicates
        # and pulls in such a net once it is critical), so it is timed in a second propagation and
        # fills an endpoint's slack at most
        hf = getattr(model, "high_fanout", None)
        use_hf = hf is not None and any(f > hf.knee for f in fanout.values())
        # signals of at most 8 inputs, which Vivado maps into one slice however deep Yosys's LUT chain
        cones = narrow_cones(cells, driver, order, model) if vivado_mapping else {}
        return cls(cells, ports, model, driver, sinks, fanout, _Clocks.of(clocks, top, cells, sinks), timings,
                   repacked, unknown, edges, order, loops_cut, cones, use_hf)

    def clk_net(self, cname: str, clk_pin: str):
        conn = self.cells[cname]["connections"].get(clk_pin)
        return conn[0] if conn and isinstance(conn[0], int) else None

    def edge(self, cname: str, ct: CellTiming, clk_pin: str):
        """(the clock of a register's clock pin, its active edge in ps), or None: no clock reaches it."""
        n = self.clk_net(cname, clk_pin)
        clk = self.clocks.of_net.get(n) if n is not None else None
        if clk is None:
            return None
        inv = ct.clk_inverted.get(clk_pin, False)
        return clk, (clk.waveform_ns[1] if inv else clk.waveform_ns[0]) * 1000.0

    def route(self, b: int, sink_cell: str, sink_pin: str) -> float:
        d = self.driver.get(b)
        if d is None or d[0] == "$port":
            return 0.0
        return self.model.net_ps(self.cells[d[0]]["type"], d[1], self.cells[sink_cell]["type"], sink_pin,
                                 self.fanout.get(b, 1))

    def hf_ps(self, b: int, sink_cell: str, sink_pin: str) -> float:
        d = self.driver.get(b)
        hf = getattr(self.model, "high_fanout", None)
        if not self.use_hf or d is None or d[0] == "$port" or self.fanout.get(b, 1) <= hf.knee:
            return 0.0
        return self.model.high_fanout_ps(self.cells[d[0]]["type"], d[1], self.cells[sink_cell]["type"], sink_pin,
                                         self.fanout[b])

    def route_hf(self, b: int, sink_cell: str, sink_pin: str) -> float:
        return self.route(b, sink_cell, sink_pin) + self.hf_ps(b, sink_cell, sink_pin)

    def cone_route(self, b: int) -> float:
        d = self.driver.get(b)
        if d is None or d[0] == "$port":
            return 0.0
        return self.model.net_ps(self.cells[d[0]]["type"], d[1], "LUT6", "I0", self.fanout.get(b, 1))

    def propagate(self, st: dict, c: float, hf: bool = False) -> tuple[dict, dict]:
        return _propagate(st, self.order, self.edges, self.route_hf if hf else self.route, self.cones,
                          self.cone_route, c)

    def register_clocks(self) -> dict:
        """Where the registers' clocks come from, and the clock pins no created clock reaches: those are
        never timed (Vivado's check_timing no_clock, which fails its gate), so they are counted and
        traced to where their clock comes from, never left out quietly."""
        seq_clock_nets: set[int] = set()
        unclocked: dict[int, set] = defaultdict(set)
        for cname, ct in self.timings.items():
            for _, _, cp, _ in ct.launch + ct.setup:
                n = self.clk_net(cname, cp)
                if n is not None:
                    seq_clock_nets.add(n)
                    if n not in self.clocks.of_net:
                        unclocked[n].add((cname, cp))
        roots = {n: _clock_root(n, self.driver, self.cells) for n in seq_clock_nets}
        return {"clock_inputs": sorted({r[1] for r in roots.values() if isinstance(r, tuple) and r[0] == "$port"}),
                "unclocked_pins": sum(len(p) for p in unclocked.values()),
                "unclocked_from": sorted({_root_name(roots[n]) for n in unclocked})}

    def startpoints(self) -> dict:
        """clock name -> bit -> (launch time, cell, pin, clock-to-out ps), the latest launch on each bit."""
        starts: dict[str, dict[int, tuple[float, str, str, float]]] = defaultdict(dict)
        for cname, ct in self.timings.items():
            conns = self.cells[cname]["connections"]
            for op, ob, cp, ps in ct.launch:
                e = self.edge(cname, ct, cp)
                if e is None:
                    continue
                clk, t0 = e
                outs = conns.get(op) or []
                for y in ([outs[ob]] if ob is not None else outs):
                    if isinstance(y, int):
                        t = t0 + ps
                        if t > starts[clk.name].get(y, (-1e18,))[0]:
                            starts[clk.name][y] = (t, cname, op, ps)
        return starts

    def required_after(self, x: int, pred: dict, cap_clk: Clock, cap_t: float, setup: float) -> tuple[float, float]:
        """(launch time, required time relative to it) of the path traced by `pred` into x."""
        launch_t = pred_launch_time(x, pred)
        req_edge = cap_t
        while req_edge <= launch_t + 1e-9:
            req_edge += cap_clk.period_ns * 1000.0
        return launch_t, req_edge - setup - self.model.clock_uncertainty_ps - launch_t

    def endpoints_of_clock(self, clk_name: str, st: dict, endpoints: list, cross: set) -> dict:
        """Time every endpoint the clock's startpoints reach (appended to `endpoints`; clock pairs it
        does not time added to `cross`); returns the arrival of each bit reached."""
        runs = {1.0: self.propagate(st, 1.0)}
        pending = self._pressures(clk_name, runs[1.0], cross)
        # ... then every path into it with its nets at that weight: the worst of them is the
        # endpoint's path under pressure (a logic-heavy path Vivado cannot shorten much can
        # overtake the route-heavy one that was worst before)
        for c in sorted({p[-1] for p in pending} - {1.0}):
            runs[c] = self.propagate(st, c)
        runs_hf = {c: self.propagate(st, c, hf=True) for c in sorted({p[-1] for p in pending})} if self.use_hf else {}
        for cname, pin, x, r, ip, setup, cap_clk, cap_t, c in pending:
            arr, pred = runs[c]
            launch_t, required = self.required_after(x, pred, cap_clk, cap_t, setup)
            delay = arr[x] - launch_t + c * r
            ep = Endpoint(cname, self.cells[cname]["type"], pin, clk_name, delay, required, required - delay, pressure=c)
            ep._trace_args = _TraceArgs(x, pred, r, cname, ip, setup, c)  # traced for the worst few only
            if self.use_hf and ep.slack_ps > 0:
                _fill_high_fanout(ep, x, runs_hf[c], r + self.hf_ps(x, cname, ip), self.hf_ps, self.required_after,
                                  cap_clk, cap_t)
            endpoints.append(ep)
        return runs[1.0][0]

    def _pressures(self, clk_name: str, run: tuple, cross: set) -> list:
        """Each endpoint's timing pressure from its worst path as estimated (x = that path's delay / its
        budget); its routing weight is the pressure rounded up to a level."""
        levels = pressure_levels(self.model)
        reached, pred = run
        pending = []
        for cname, ct in self.timings.items():
            conns = self.cells[cname]["connections"]
            for ip, ib, cp, setup in ct.setup:
                ins = conns.get(ip) or []
                bits = [ins[ib]] if ib is not None and ib < len(ins) else (ins if ib is None else [])
                for k, x in enumerate(bits):
                    if not isinstance(x, int) or x not in reached:
                        continue
                    e = self.edge(cname, ct, cp)
                    if e is None:
                        continue
                    cap_clk, cap_t = e
                    if cap_clk.name != clk_name:
                        cross.add((clk_name, cap_clk.name))
                        continue
                    r = self.route(x, cname, ip)
                    launch_t, required = self.required_after(x, pred, cap_clk, cap_t, setup)
                    g = self.model.pressure_factor(reached[x] - launch_t + r, required)
                    c = next((lv for lv in reversed(levels) if lv >= g - 1e-9), 1.0)
                    pin = f"{ip}[{ib if ib is not None else k}]" if len(ins) > 1 else ip
                    pending.append((cname, pin, x, r, ip, setup, cap_clk, cap_t, c))
        return pending


def _trace_worst(endpoints: list[Endpoint], cells: dict, fanout: dict) -> None:
    """The worst TRACE_WORST endpoints of each clock get their path as steps (endpoints worst first)."""
    traced: dict[str, int] = defaultdict(int)
    for ep in endpoints:
        if traced[ep.clock] < TRACE_WORST:
            ep.path = _trace(ep._trace_args, cells, fanout)
            traced[ep.clock] += 1
        del ep._trace_args


def _clock_rows(created: list[Clock], endpoints: list[Endpoint]) -> list[dict]:
    rows = []
    for c in created:
        eps = [e for e in endpoints if e.clock == c.name]
        rows.append({"name": c.name, "period_ns": c.period_ns,
                     "wns_ns": round(min(e.slack_ps for e in eps) / 1000, 3) if eps else None,
                     "tns_ns": round(sum(min(0.0, e.slack_ps) for e in eps) / 1000, 3) if eps else 0.0,
                     "whs_ns": None, "wpws_ns": None,
                     "failing_endpoints": sum(1 for e in eps if e.slack_ps < 0),
                     "total_endpoints": len(eps)})
    return rows


def _root_name(root) -> str:
    """A clock root (_clock_root) as a person names it: port clk2, cell pin u_div/q_reg/Q, or a net."""
    if isinstance(root, tuple):
        cell, pin = root
        return f"port {pin}" if cell == "$port" else f"{cell.removeprefix('$flatten' + chr(92))}/{pin}"
    return f"net bit {root} (undriven)"


def _clock_root(n: int, driver: dict, cells: dict):
    seen = 0
    while n in driver and seen < 8:
        cname, pin, _ = driver[n]
        if cname == "$port":
            return ("$port", pin)
        t = cells[cname]["type"]
        if t not in CLOCK_BUFFERS:
            return (cname, pin)
        ins = [cells[cname]["connections"].get(p) or [None] for p in CLOCK_BUFFERS[t][0]]
        nxt = next((c[0] for c in ins if isinstance(c[0], int)), None)  # a mux: its first clock input
        if not isinstance(nxt, int):
            return (cname, pin)
        n = nxt
        seen += 1
    return n


_OUTPUT_BUFFERS = frozenset({"OBUF", "OBUFT", "IOBUF", "OBUFDS"})  # the data pin of each is I


def _port_bit_reached(b, reached: dict, driver: dict, cells: dict) -> bool:
    """An output port bit a clock's data reaches: directly, or through the output buffer Yosys put
    before it (an IO buffer has no timing arc, so propagation stops at its input)."""
    if not isinstance(b, int):
        return False
    if b in reached:
        return True
    d = driver.get(b)
    if not d or d[0] not in cells or cells[d[0]]["type"] not in _OUTPUT_BUFFERS:
        return False
    return any(isinstance(x, int) and x in reached for x in cells[d[0]]["connections"].get("I") or [])


PRESSURE_STEP = 0.02  # routing weights a pressured endpoint is timed at (rounded up: never optimistic)


def pressure_levels(model) -> tuple[float, ...]:
    """The routing weights an endpoint can be timed at: 1 and, when the model has timing pressure
    (kabe.timing.pressure), steps of PRESSURE_STEP down to its floor. An endpoint's pressure is
    rounded up to a level, so its routing is overstated by less than PRESSURE_STEP, never
    understated; each level in use costs one more propagation."""
    p = getattr(model, "pressure", None)
    if p is None or p.floor >= 1.0:
        return (1.0,)
    n = max(1, math.ceil((1.0 - p.floor) / PRESSURE_STEP - 1e-9))
    return tuple(round(max(p.floor, 1.0 - PRESSURE_STEP * i), 6) for i in range(n + 1))


def _propagate(st: dict, order: list, edges: dict, route, cones: dict, cone_route, c: float) -> tuple[dict, dict]:
    """Latest arrival at every node reachable from the startpoints `st`, nets weighted by `c`
    (timing pressure): (arrival ps, predecessor for the trace). A narrow cone's output
    (kabe.timing.lut_cones) arrives no later than Vivado's mapping of it would."""
    arr: dict[int, float] = {}
    pred: dict[int, tuple] = {}
    for b, (t, cname, op, ps) in st.items():
        arr[b] = t
        pred[b] = ("start", cname, op, ps, t - ps)
    for n in order:
        a = arr.get(n)
        if a is None:
            continue
        cone = cones.get(n)
        if cone is not None:
            srcs = [(arr[s] + c * cone_route(s), s) for s in cone.inputs if s in arr]
            if srcs:
                t, s = max(srcs)
                if t + cone.ps < a:
                    a = arr[n] = t + cone.ps
                    pred[n] = ("comb", cone.cell, f"cone{len(cone.inputs)}", cone.pin, cone.ps,
                               cone_route(s), s)
        for y, cname, ip, op, ps in edges.get(n, ()):
            r = route(n, cname, ip)
            t = a + c * r + ps
            if t > arr.get(y, -1e18):
                arr[y] = t
                pred[y] = ("comb", cname, ip, op, ps, r, n)
    return arr, pred


def pred_launch_time(x: int, pred: dict) -> float:
    p = pred[x]
    while p[0] == "comb":
        p = pred[p[6]]
    return p[4]


def _fill_high_fanout(ep: Endpoint, x: int, run_hf: tuple, r_end: float, hf_ps, required_after, cap_clk, cap_t) -> None:
    """The endpoint with the high-fanout term (kabe.timing.fitted.HighFanout): its worst path with
    the term, at the endpoint's routing weight, lengthened up to its budget and no further; an
    endpoint whose slack the term does not reduce is left as it is."""
    arr, pred = run_hf
    cname, ip, setup, c = ep._trace_args.end_cell, ep._trace_args.end_pin, ep._trace_args.setup, ep._trace_args.pressure
    launch_t, required = required_after(x, pred, cap_clk, cap_t, setup)
    delay = arr[x] - launch_t + c * r_end
    slack = required - delay
    if slack >= ep.slack_ps:
        return
    extra = c * (hf_ps(x, cname, ip) + _path_high_fanout(x, pred, hf_ps))  # the term on this path, weighted
    k = 1.0 if slack >= 0 or extra <= 0 else max(0.0, min(1.0, (slack + extra) / extra))
    added = k * extra
    ep.uncapped_slack_ps, ep.filled = ep.slack_ps, k < 1.0
    # a path the term fills to its budget ends exactly there: slack 0, never a rounding under it
    ep.arrival_ps, ep.required_ps = (delay - extra + added) if k >= 1.0 else required, required
    ep.slack_ps = required - ep.arrival_ps if k >= 1.0 else 0.0
    ep.high_fanout_ps = added
    ep._trace_args = _TraceArgs(x, pred, r_end, cname, ip, setup, c, hf_ps, k)


def _path_high_fanout(x: int, pred: dict, hf_ps) -> float:
    """The high-fanout term on the nets of the path into `x` (the endpoint's own net apart)."""
    total, p = 0.0, pred[x]
    while p[0] == "comb":
        _, cname, ip, _, _, _, prev = p
        if not ip.startswith("cone"):
            total += hf_ps(prev, cname, ip)
        p = pred[prev]
    return total


@dataclass(frozen=True)
class _TraceArgs:
    """What tracing an endpoint's path needs, kept until the worst endpoints are known."""

    x: int  # the endpoint's data bit
    pred: dict  # the propagation's predecessors
    r_end: float  # the route into the endpoint
    end_cell: str
    end_pin: str
    setup: float
    pressure: float = 1.0
    hf_ps: object = None  # the high-fanout term per net, when it was applied
    k: float = 1.0  # the share of that term the endpoint's slack left room for


def _trace(t: _TraceArgs, cells: dict, fanout: dict | None = None) -> list[PathStep]:
    """The path into `x` as steps; each net as the endpoint's timing pressure left it (and with
    the share k of the high-fanout term the endpoint's slack left room for, when `hf_ps` is given)."""
    x, pred, r_end, end_cell, end_pin, setup = t.x, t.pred, t.r_end, t.end_cell, t.end_pin, t.setup
    pressure, hf_ps, k = t.pressure, t.hf_ps, t.k
    def shown(r: float, b: int, cell: str, pin: str) -> float:
        if hf_ps is not None and not pin.startswith("cone"):
            r -= (1.0 - k) * hf_ps(b, cell, pin)
        return r * pressure

    steps: list[PathStep] = []
    route_into_next = shown(r_end, x, end_cell, end_pin)
    p = pred[x]
    while p[0] == "comb":
        _, cname, ip, op, ps, r, prev = p
        kind = cells[cname]["type"]
        if ip.startswith("cone"):  # a narrow cone, as Vivado would map it (kabe.timing.lut_cones)
            kind = "+".join(SHAPES[max(6, int(ip[4:]))])
        steps.append(PathStep(cname, kind, ip, op, ps, shown(r, prev, cname, ip), (fanout or {}).get(prev, 1)))
        p = pred[prev]
    _, cname, op, ps, _ = p
    steps.append(PathStep(cname, cells[cname]["type"], None, op, ps, 0.0))
    steps.reverse()
    steps.append(PathStep(end_cell, cells[end_cell]["type"], end_pin, None, setup, route_into_next,
                          (fanout or {}).get(x, 1)))
    return steps
