"""The engine's top -> a thin Verilog wrapper for the block design.

The wrapper carries X_INTERFACE attributes on `s{p}_axis_*`, `m{p}_axis_*`, `clk` and `rst`, so
Vivado's IP integrator sees AXI-Stream buses, the clock (with every bus it clocks) and an
active-high reset without relying on name inference; the engine RTL itself stays untouched and
remains the single source. Ports are read from the top module's declaration (ANSI style, widths
evaluated with its parameters).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kabe.flows.base import FlowError

ENGINE_WRAPPER = "kabe_engine_bd"  # the wrapper module: the block design's module-reference cell



@dataclass(frozen=True)
class Port:
    name: str
    direction: str  # input | output
    width: int

    @property
    def decl(self) -> str:
        rng = f"[{self.width - 1}:0] " if self.width > 1 else ""
        return f"{self.direction:<6} wire {rng}{self.name}"


_AXIS_RE = re.compile(r"^([sm])(\d*)_axis_(tdata|tvalid|tready|tlast|tkeep|tstrb|tuser|tid|tdest)$")
_MODULE_RE = r"\bmodule\s+{name}\b"


def defines_module(path: Path, name: str) -> bool:
    return re.search(_MODULE_RE.format(name=re.escape(name)), Path(path).read_text(errors="replace")) is not None


def _eval_width(expr: str, params: dict[str, int], where: str) -> int:
    """Evaluate a range bound like `DATA_WIDTH-1` with the module's parameter values."""
    try:
        tree = ast.parse(expr.replace("$clog2", "clog2"), mode="eval")
    except SyntaxError:
        raise FlowError(f"{where}: cannot read the port range bound {expr!r}") from None

    def ev(n):
        if isinstance(n, ast.Expression):
            return ev(n.body)
        if isinstance(n, ast.Constant) and isinstance(n.value, int):
            return n.value
        if isinstance(n, ast.Name) and n.id in params:
            return params[n.id]
        if isinstance(n, ast.BinOp) and isinstance(n.op, (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Div)):
            a, b = ev(n.left), ev(n.right)
            return {ast.Add: a + b, ast.Sub: a - b, ast.Mult: a * b}.get(type(n.op), a // b if b else 0)
        if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "clog2" and len(n.args) == 1:
            return max(0, (ev(n.args[0]) - 1).bit_length())
        raise FlowError(f"{where}: cannot evaluate the port range bound {expr!r} (only numbers, "
                         f"parameters, + - * / and $clog2 are understood)")

    return int(ev(tree))


def engine_ports(top_file: Path, top: str, overrides: dict[str, Any] | None = None) -> list[Port]:
    """The ANSI port list of module `top` in `top_file`, widths evaluated with parameter defaults
    (or the EDAM's values)."""
    text = re.sub(r"//[^\n]*|/\*.*?\*/", "", Path(top_file).read_text(), flags=re.S)
    m = re.search(_MODULE_RE.format(name=re.escape(top)) + r"\s*(#\s*\((?P<params>.*?)\)\s*)?\((?P<ports>.*?)\)\s*;",
                  text, re.S)
    if not m:
        raise FlowError(f"{top_file}: no ANSI-style `module {top} (...)` found; the vivado flow "
                         f"wraps the design's top and needs its port list")
    params: dict[str, int] = {}
    for pm in re.finditer(r"parameter\s+(?:integer\s+)?(\w+)\s*=\s*([^,]+)", m.group("params") or ""):
        try:
            params[pm.group(1)] = _eval_width(pm.group(2).strip(), params, str(top_file))
        except FlowError:
            pass  # a non-integer parameter (a string): never a port width
    for k, v in (overrides or {}).items():
        if isinstance(v, int) and not isinstance(v, bool):
            params[k] = v
    ports: list[Port] = []
    direction = None
    width = 1
    for chunk in m.group("ports").split(","):
        chunk = " ".join(chunk.split())
        dm = re.match(r"^(input|output|inout)\b\s*(?:wire|reg|logic)?\s*(?:signed\s*)?(?:\[([^:\]]+):([^\]]+)\])?\s*(\w+)$",
                      chunk)
        if dm:
            direction = dm.group(1)
            if dm.group(2) is not None:
                hi = _eval_width(dm.group(2), params, str(top_file))
                lo = _eval_width(dm.group(3), params, str(top_file))
                width = abs(hi - lo) + 1
            else:
                width = 1
            name = dm.group(4)
        elif re.fullmatch(r"\w+", chunk) and direction:
            name = chunk  # `input wire a, b`: b shares a's direction and width
        else:
            raise FlowError(f"{top_file}: cannot read the port declaration {chunk!r} of module {top}")
        if direction == "inout":
            raise FlowError(f"{top_file}: port {name} of {top} is inout; engines have none (docs/streams.md)")
        ports.append(Port(name, direction, width))
    return ports


@dataclass(frozen=True)
class EngineInterface:
    clk: str
    rst: str
    axis: dict[str, dict[str, Port]]  # "s0_axis" -> {"tdata": Port, ...}
    status: dict[int, list[Port]]  # port index -> non-stream outputs (stat{p}_*), read over AXI GPIO
    ports: tuple[Port, ...]

    def stream(self, role: str, p: int) -> dict[str, Port]:
        for name in (f"{role}{p}_axis",) + ((f"{role}_axis",) if p == 0 else ()):
            if name in self.axis:
                return self.axis[name]
        raise KeyError(f"{role}{p}_axis")

    def stream_name(self, role: str, p: int) -> str:
        for name in (f"{role}{p}_axis",) + ((f"{role}_axis",) if p == 0 else ()):
            if name in self.axis:
                return name
        raise KeyError(f"{role}{p}_axis")


def classify(ports: list[Port], n_ports: int, where: str) -> EngineInterface:
    """Sort the top's ports by the port contract of docs/streams.md."""
    names = {p.name: p for p in ports}
    for need in ("clk", "rst"):
        if need not in names or names[need].direction != "input":
            raise FlowError(f"{where}: the top has no `{need}` input (docs/streams.md: clk, rst first)")
    axis: dict[str, dict[str, Port]] = {}
    status: dict[int, list[Port]] = {}
    for p in ports:
        if p.name in ("clk", "rst"):
            continue
        am = _AXIS_RE.match(p.name)
        if am:
            axis.setdefault(f"{am.group(1)}{am.group(2)}_axis", {})[am.group(3)] = p
            continue
        if p.direction == "input":
            raise FlowError(f"{where}: input {p.name} is neither clk, rst nor an AXI-Stream signal; "
                             f"the block design cannot drive it")
        im = re.match(r"^[A-Za-z]+?(\d+)_", p.name)
        status.setdefault(int(im.group(1)) if im else 0, []).append(p)
    iface = EngineInterface("clk", "rst", axis, status, tuple(ports))
    for i in range(n_ports):
        for role in ("s", "m"):
            try:
                bus = iface.stream(role, i)
            except KeyError:
                raise FlowError(f"{where}: design.yaml says {n_ports} port(s) but the top has no "
                                 f"{role}{i}_axis_* bus") from None
            missing = [s for s in ("tdata", "tvalid", "tready", "tlast") if s not in bus]
            if missing:
                raise FlowError(f"{where}: {role}{i}_axis lacks {', '.join(missing)} (S2MM needs tlast to "
                                 f"end a transfer; docs/streams.md)")
    for i, outs in status.items():
        if len(outs) > 2:
            raise FlowError(f"{where}: port {i} has {len(outs)} status outputs "
                             f"({', '.join(o.name for o in outs)}); one dual-channel AXI GPIO reads at most 2")
    return iface


def wrapper_verilog(iface: EngineInterface, top: str, params: dict[str, Any], source: str) -> str:
    busifs = ":".join(sorted(iface.axis))
    lines = [
        f"// Generated by kabe.flows.vivado.bd_wrapper from {source} (module {top}); do not edit, it is rewritten",
        "// every build. A thin wrapper whose only job is the X_INTERFACE attributes: IP integrator then",
        "// sees the AXI-Stream buses, the clock (with its buses) and the active-high reset of the engine",
        "// exactly, instead of guessing them from port names.",
        "`default_nettype none",
        f"module {ENGINE_WRAPPER} (",
    ]
    decls = []
    for p in iface.ports:
        attrs = []
        if p.name == iface.clk:
            attrs = [f'(* X_INTERFACE_INFO = "xilinx.com:signal:clock:1.0 {p.name} CLK" *)',
                     f'(* X_INTERFACE_PARAMETER = "ASSOCIATED_BUSIF {busifs}, ASSOCIATED_RESET {iface.rst}" *)']
        elif p.name == iface.rst:
            attrs = [f'(* X_INTERFACE_INFO = "xilinx.com:signal:reset:1.0 {p.name} RST" *)',
                     '(* X_INTERFACE_PARAMETER = "POLARITY ACTIVE_HIGH" *)']
        else:
            am = _AXIS_RE.match(p.name)
            if am:
                bus = f"{am.group(1)}{am.group(2)}_axis"
                attrs = [f'(* X_INTERFACE_INFO = "xilinx.com:interface:axis:1.0 {bus} {am.group(3).upper()}" *)']
        decls.append("".join(f"    {a}\n" for a in attrs) + f"    {p.decl}")
    lines.append(",\n".join(decls))
    lines.append(");")
    pv = [f".{k}({_verilog_value(v)})" for k, v in params.items()]
    inst = f"{top} #({', '.join(pv)}) engine_inst (" if pv else f"{top} engine_inst ("
    lines.append(inst)
    lines.append(",\n".join(f"    .{p.name}({p.name})" for p in iface.ports))
    lines.append(");")
    lines.append("endmodule")
    lines.append("`default_nettype wire")
    return "\n".join(lines) + "\n"


def _verilog_value(v: Any) -> str:
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, (int, float)):
        return str(v)
    return '"' + str(v).replace('"', '\\"') + '"'


