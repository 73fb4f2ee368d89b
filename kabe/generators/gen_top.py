#!/usr/bin/env python3
"""Generate a design's top module: one engine per memory port, wired to the top-level port contract.

Every kabe top is the same shape (docs/streams.md, "Top-level ports"): clock and reset, then per
port p the input stream `s{p}_axis_*` (64-bit by default), the result stream `m{p}_axis_*` and the
status outputs `stat{p}_invalid` (32-bit) and `stat{p}_overflow`, each port driving its own engine
instance `port{p}_inst`. What differs between designs is a handful of facts, which live in the
design's core file as the parameters of its `generate:` entry:

    name              the top module's name (the core's `toplevel`)
    engine            the engine module instantiated once per port (ports clk, rst, s_axis_*, m_axis_*)
    ports             number of memory ports, 1..64 (the design.yaml of the design says the same, and
                      kabe.project.designs checks it against its board profile's memory port count)
    s_width           bits of an input beat, s{p}_axis_tdata (default 64), a multiple of 8 up to 512
    port_name         what one port is, in the generated comments (default "HP port")
    m_width           bits of a result word, m{p}_axis_tdata (default 32; the probe's words are 64)
    overflow_port     the engine's sticky overflow output (default stat_overflow)
    invalid_port      the engine's invalid-input counter (default stat_invalid); `none` when the
                      engine has none: stat{p}_invalid is then tied to 0, as the contract says
    top_parameters    mapping NAME: default. Parameters of the top, each passed unchanged to every
                      engine (a simulation or synthesis override of the top reaches the engines)
    engine_constants  mapping NAME: value. Engine parameters the design fixes (e.g. NAIVE: 1)

Two ways to call it:

* FuseSoC generator (CAPI2 ``generators:``, see kabe_gen_top.core beside it): FuseSoC calls it with
  the path of a YAML file holding ``files_root``, ``gapi``, ``vlnv`` and ``parameters``; it writes
  ``<name>.v`` and a ``.core`` naming it into the current directory.
* command line, to read the top a core file describes::

      python -m kabe.generators.gen_top --core cores/<design>/<design>.core [-o <design>_top.v]

Pure Python, standard library only in generator mode (PyYAML is used when present).
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # a FuseSoC generator runs from its cache dir
from fusesoc_generator import VERILOG_IDENT, read_config, run_generator, write_outputs  # noqa: E402

GENERATOR = "kabe/generators/gen_top.py"
GENERATOR_NAME = "kabe_top"  # the generator's name in kabe_gen_top.core
S_WIDTH = 64  # the default input beat (docs/streams.md); a core file gives its board's in s_width
S_WIDTH_MAX = 512  # the widest stream kabe's harness binds (kabe.project.designs.STREAM_BITS)
INVALID_WIDTH = 32
# The most memory ports the generator writes; kabe.project.designs holds a design's `ports:` to its own board
# profile's count.
MAX_PORTS = 64
DEFAULT_PORT_NAME = "HP port"  # the port name of the default 64-bit beat, in comments only
_PORT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9 +-]{0,39}")  # it lands in Verilog comments only
NO_PORT = "none"
_KNOWN = ("name", "engine", "ports", "s_width", "port_name", "m_width", "overflow_port", "invalid_port",
          "top_parameters", "engine_constants")
_REQUIRED = ("name", "engine", "ports")


def _check_ident(what: str, value: str) -> None:
    if not isinstance(value, str) or not VERILOG_IDENT.match(value):
        raise ValueError(f"{what} is {value!r}; it must be a Verilog identifier")


def _check_int_mapping(what: str, mapping: dict) -> dict[str, int]:
    if not isinstance(mapping, dict):
        raise ValueError(f"{what} must be a mapping NAME: integer, got {mapping!r}")
    for key, value in mapping.items():
        _check_ident(f"{what} name", key)
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{what} {key} is {value!r}; give an integer")
    return dict(mapping)


@dataclass(frozen=True)
class TopSpec:
    name: str
    engine: str
    ports: int
    m_width: int = 32
    s_width: int = S_WIDTH
    port_name: str = DEFAULT_PORT_NAME
    overflow_port: str = "stat_overflow"
    invalid_port: str = "stat_invalid"  # NO_PORT: the engine counts no invalid input
    top_parameters: dict[str, int] = field(default_factory=dict)
    engine_constants: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        _check_ident("name", self.name)
        _check_ident("engine", self.engine)
        if self.engine == self.name:
            raise ValueError(f"engine and name are both {self.name!r}; the top cannot instantiate itself")
        if isinstance(self.ports, bool) or not isinstance(self.ports, int) or not 1 <= self.ports <= MAX_PORTS:
            raise ValueError(f"ports is {self.ports!r}; give 1..{MAX_PORTS} (one engine per memory port)")
        if isinstance(self.s_width, bool) or not isinstance(self.s_width, int) \
                or not 8 <= self.s_width <= S_WIDTH_MAX or self.s_width % 8:
            raise ValueError(f"s_width is {self.s_width!r}; give the input beat's width in bits, a multiple of 8 "
                             f"from 8 to {S_WIDTH_MAX}")
        if not isinstance(self.port_name, str) or not _PORT_NAME.fullmatch(self.port_name):
            raise ValueError(f"port_name is {self.port_name!r}; give a short name such as 'HBM channel' "
                             f"(letters, digits, spaces, '+' and '-')")
        if isinstance(self.m_width, bool) or not isinstance(self.m_width, int) or self.m_width < 1:
            raise ValueError(f"m_width is {self.m_width!r}; give the result word's width in bits")
        _check_ident("overflow_port", self.overflow_port)
        _check_ident("invalid_port", self.invalid_port)
        top = _check_int_mapping("top_parameters", self.top_parameters)
        fixed = _check_int_mapping("engine_constants", self.engine_constants)
        both = sorted(set(top) & set(fixed))
        if both:
            raise ValueError(f"{', '.join(both)} is both a top parameter and an engine constant; keep one")

    @property
    def counts_invalid(self) -> bool:
        return self.invalid_port != NO_PORT


def spec_from_parameters(params: dict) -> TopSpec:
    unknown = sorted(set(params) - set(_KNOWN))
    if unknown:
        raise ValueError(f"unknown top-generator parameter(s) {unknown}; known: {list(_KNOWN)}")
    missing = [k for k in _REQUIRED if k not in params]
    if missing:
        raise ValueError(f"top-generator parameter(s) {missing} missing from the core's generate: entry")
    kwargs = dict(params)
    for key in ("top_parameters", "engine_constants"):
        if kwargs.get(key) is None:
            kwargs.pop(key, None)  # `top_parameters:` with nothing below it
    return TopSpec(**kwargs)


def _port_lines(spec: TopSpec) -> list[str]:
    """The port list, ranges padded to one column as in the hand-written RTL."""
    def rng(width: int) -> str:
        return f"[{width - 1}:0]" if width > 1 else ""

    pad = max(len(rng(w)) for w in (spec.s_width, spec.m_width, INVALID_WIDTH))

    def port(direction: str, width: int, name: str) -> str:
        return f"    {direction:<6} wire {rng(width):<{pad}} {name}"

    groups = [[port("input", 1, "clk"), port("input", 1, "rst")]]
    for p in range(spec.ports):
        groups.append([f"    // port {p}: one {spec.port_name}'s DMA pair" if spec.port_name == DEFAULT_PORT_NAME
                       else f"    // port {p}: one {spec.port_name}'s streams",
                       port("input", spec.s_width, f"s{p}_axis_tdata"),
                       port("input", 1, f"s{p}_axis_tvalid"),
                       port("output", 1, f"s{p}_axis_tready"),
                       port("input", 1, f"s{p}_axis_tlast")])
        groups.append([port("output", spec.m_width, f"m{p}_axis_tdata"),
                       port("output", 1, f"m{p}_axis_tvalid"),
                       port("input", 1, f"m{p}_axis_tready"),
                       port("output", 1, f"m{p}_axis_tlast")])
        groups.append([port("output", INVALID_WIDTH, f"stat{p}_invalid"),
                       port("output", 1, f"stat{p}_overflow")])
    out: list[str] = []
    for i, group in enumerate(groups):
        if i:
            out.append("")
        out += group
    # a comma after every port but the last
    last = max(i for i, line in enumerate(out) if line and not line.lstrip().startswith("//"))
    return [line + "," if line and not line.lstrip().startswith("//") and i != last else line
            for i, line in enumerate(out)]


def _instance(spec: TopSpec, p: int) -> list[str]:
    lines: list[str] = []
    if not spec.counts_invalid:
        lines.append(f"assign stat{p}_invalid = {INVALID_WIDTH}'d0;   // {spec.engine} has no invalid inputs to count")
        lines.append("")
    params = [f".{k}({k})" for k in spec.top_parameters] + [f".{k}({v})" for k, v in spec.engine_constants.items()]
    if params:
        lines.append(f"{spec.engine} #(")
        lines += [f"    {c}," for c in params[:-1]] + [f"    {params[-1]}"]
        lines.append(f") port{p}_inst (")
    else:
        lines.append(f"{spec.engine} port{p}_inst (")
    conns = [("clk", "clk"), ("rst", "rst")]
    conns += [(f"s_axis_{s}", f"s{p}_axis_{s}") for s in ("tdata", "tvalid", "tready", "tlast")]
    conns += [(f"m_axis_{s}", f"m{p}_axis_{s}") for s in ("tdata", "tvalid", "tready", "tlast")]
    if spec.counts_invalid:
        conns.append((spec.invalid_port, f"stat{p}_invalid"))
    conns.append((spec.overflow_port, f"stat{p}_overflow"))
    lines += [f"    .{a}({b})," for a, b in conns[:-1]] + [f"    .{conns[-1][0]}({conns[-1][1]})"]
    lines.append(");")
    return lines


def generate_verilog(spec: TopSpec, source: str = "") -> str:
    """The top's Verilog; `source` names where its parameters came from (a VLNV or a core file)."""
    ports = f"one {spec.port_name}" if spec.ports == 1 else f"{spec.ports} {spec.port_name}s"
    indices = "p = 0" if spec.ports == 1 else f"p = 0..{spec.ports - 1}"
    out = [
        f"// Generated by {GENERATOR}" + (f" for {source}" if source else "") + "; do not edit:",
        "// change the generator parameters in the design's core file instead.",
        f"// {spec.name}: {ports}, one {spec.engine} per port, wired to the top-level port contract",
        f"// of docs/streams.md ({indices}).",
        "",
        "`resetall",
        "`timescale 1ns / 1ps",
        "`default_nettype none",
        "",
    ]
    if spec.top_parameters:
        decls = [f"    parameter {k} = {v}" for k, v in spec.top_parameters.items()]
        out.append(f"module {spec.name} #(")
        out += [d + "," for d in decls[:-1]] + [decls[-1]]
        out.append(") (")
    else:
        out.append(f"module {spec.name} (")
    out += _port_lines(spec)
    out.append(");")
    for p in range(spec.ports):
        out.append("")
        out += _instance(spec, p)
    out += ["", "endmodule", "", "`resetall"]
    return "\n".join(out) + "\n"


def run_fusesoc(config_path: Path, outdir: Path = Path(".")) -> list[Path]:
    """FuseSoC generator mode: write the Verilog and its .core into outdir; return both paths."""
    cfg = read_config(config_path)
    try:
        spec = spec_from_parameters(cfg.get("parameters") or {})
    except ValueError as e:
        raise ValueError(f"{cfg.get('vlnv', config_path)}: {e}. Fix: correct the `generate:` parameters "
                         f"in the core file under {cfg.get('files_root', '?')}") from None
    return write_outputs(outdir, cfg["vlnv"], f"{spec.name}.v", generate_verilog(spec, cfg["vlnv"]),
                         f"{spec.name}: {spec.ports} x {spec.engine} on the port contract", GENERATOR)


def spec_from_core(core_file: Path) -> TopSpec:
    """The TopSpec of the one `generate:` entry of core_file that uses this generator."""
    import yaml  # the command line runs in kabe's environment

    try:
        core = yaml.safe_load(Path(core_file).read_text())
    except (OSError, yaml.YAMLError) as e:
        raise ValueError(f"{core_file}: cannot read the core file: {e}") from None
    entries = [g for g in ((core or {}).get("generate") or {}).values()
               if isinstance(g, dict) and g.get("generator") == GENERATOR_NAME]
    if len(entries) != 1:
        raise ValueError(f"{core_file}: expected one `generate:` entry with `generator: {GENERATOR_NAME}`, "
                         f"found {len(entries)}")
    try:
        return spec_from_parameters(entries[0].get("parameters") or {})
    except ValueError as e:
        raise ValueError(f"{core_file}: {e}. Fix: correct that `generate:` entry's parameters") from None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("config", nargs="?", type=Path, help="FuseSoC generator config (YAML); generator mode")
    parser.add_argument("--core", type=Path, help="a design's core file: print the top its generate: entry describes")
    parser.add_argument("-o", "--output", type=Path, help="output Verilog file (default: stdout)")
    args = parser.parse_args(argv)
    if (args.config is None) == (args.core is None):
        parser.error("give either a FuseSoC config file or --core <file.core>")
    return run_generator("gen_top", args.config, run_fusesoc,
                         lambda: generate_verilog(spec_from_core(args.core), str(args.core)), args.output)


if __name__ == "__main__":
    sys.exit(main())
