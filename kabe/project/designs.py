"""The designs kabe knows: one `cores/<design>/design.yaml` each, loaded into a `Design` record.

design.yaml says what a design *is* (its core, how it is verified, its streams, its board and how
many of its memory lanes, its budgets); the file list stays in the core file (see kabe.project.cores).
docs/your_design.md is the reference for `verify:` and `streams:`, docs/boards.md for `board:`.

    core: user:design:mydesign:0.1.0
    verify: {model: "mypkg.golden:stimulus"}   # or {cocotb: "test_module"} or {none: "why"}
    streams:             # the top's AXI-Stream ports (tdata bits, 8..512) and status outputs kabe reads
      in: {s0_axis: 64, s1_axis: 64}
      out: {m0_axis: 32, m1_axis: 32}
      status: {stat0_invalid: 32, stat0_overflow: 1, stat1_invalid: 32, stat1_overflow: 1}
    board: pynq-z1       # the board profile (kabe/boards/profiles, or the project's boards/); default pynq-z1
    ports: 2             # memory ports used (the board's HP ports / HBM channels), at most the board's count
    row_bytes: 512
    constraints: pynq_z1.xdc   # looked up in the design's folder, then in the project's constraints/
    expect_gate: pass
    budgets: {dsp: {eq: 0}, lut: {lt: 12000}, logic_levels: {le: 9}}
    regressions: {lut: {max_increase_pct: 5}, wns_ns: {max_decrease: 0.2}}   # vs the base commit (kabe ci)
    waivers: {no_clock: "the PS7's EMIO pins are clocked by the PS, outside the PL's timing"}
    vivado:              # flow=vivado (docs/vivado_flow.md); absent: kabe's shell when streams/ports are given
      top: own           # the design's own top, pins, IP and block design | shell: kabe's AXI-Stream block design
      hooks: {route_design: {post: hooks/post_route.tcl}}   # Tcl before/after a step, in the cache key
      strategies: {place_directive: Explore}
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from kabe import boards
from kabe.project import hls_spec
from kabe.project import flows as flow_registry
from kabe.base.errors import UserError, bounded
from kabe.base.paths import CONSTRAINTS, CORES

# The three ways a design is verified (docs/your_design.md): a golden model function, a cocotb
# testbench module, or none with the written reason.
VERIFY_KINDS = ("model", "cocotb", "none")
_MODEL_SPEC = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*")
_MODULE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")
# A stream or status port's name becomes a C++ member name in the harness: an identifier.
_PORT_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")
STREAM_BITS = (8, 512)
_MAX_REASON = 300
# pass | fail | not_estimated (kabe.rules.gate.Verdict.status): not_estimated is for a board kabe cannot time on
# the open flow (its profile's open_flow.timing: not_estimated), where the gate is neither pass nor fail
GATE_EXPECTATIONS = ("pass", "fail", "not_estimated")
BUDGET_OPS = ("eq", "lt", "le", "gt", "ge")
# Regressions are relative to the base commit's archived build (kabe.rules.regressions judges them).
REGRESSION_OPS = ("max_increase", "max_increase_pct", "max_decrease", "max_decrease_pct")
_VLNV = re.compile(r"^[A-Za-z0-9_.-]+:[A-Za-z0-9_.-]+:[A-Za-z0-9_.-]+:[A-Za-z0-9_.-]+$")
# libyaml's safe loader when PyYAML was built with it (10x faster; every `doit` start reads these
# files), else the pure-Python one: both accept the same safe subset.
YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
# A design's name is its folder under cores/, and it reaches a shell (Verilator's make), a C #define,
# Tcl and plot titles: letters, digits, '_' and '-', not starting with '-' (it would read as an option).
NAME_PATTERN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_-]{0,63}")
# design.yaml is a few hundred bytes; the cap bounds the time and memory any input can cost.
MAX_YAML_BYTES = 64 * 1024
_FIELDS = ("core", "verify", "board", "streams", "ports", "row_bytes", "constraints", "expect_gate", "budgets",
           "budgets_vivado", "regressions", "waivers", "vivado", "hls", "vitis")
# design.yaml's `vivado:` table (docs/vivado_flow.md): what the Vivado build is and what runs around it
VIVADO_TOPS = ("own", "shell")  # the design's own top (its pins, IP, block design) | kabe's AXI-Stream shell
VIVADO_HOOK_STEPS = ("synth_design", "opt_design", "place_design", "phys_opt_design", "route_design",
                     "write_bitstream")
VIVADO_STRATEGY_KEYS = ("synth_strategy", "impl_strategy", "synth_directive", "opt_directive", "place_directive",
                        "route_directive")  # the same names as [tool.kabe] vivado_<key> (kabe.project.config)
_VIVADO_KEYS = ("top", "hooks", "strategies", "jobs", "ip_upgrade")
_VIVADO_NAME = re.compile(r"[A-Za-z0-9_-]+")
_REQUIRED = ("core",)
# Gate rules a design may waive in `waivers:`, each only with a written reason (kabe.rules.gate applies them)
WAIVABLE = {"no_clock": "register/latch pins with no clock (check_timing no_clock)",
            "uncounted_cells": "cells the utilization does not count (a black box, unmapped logic) "
                               "under an upper-bound resource budget"}


class DesignError(UserError, ValueError):
    """A design.yaml is missing, malformed, or names an unknown design."""


@dataclass(frozen=True)
class VivadoSettings:
    """design.yaml's `vivado:` table. `top`: "own" builds the design's top as its core describes it (pins,
    IP, block design); "shell" puts it inside kabe's AXI-Stream block design (the board's). `hooks`: step ->
    {pre|post: Tcl file} (Vivado's STEPS.<STEP>.TCL.PRE/POST). `strategies`: strategy/directive names.
    `ip_upgrade`: an .xci made by another Vivado version is upgraded (said on the console) instead of
    stopping the build. All of it is in the build's cache key (kabe.cache.cache)."""

    top: str = "shell"
    declared: bool = False  # design.yaml has a `vivado:` table (only then is it part of the cache key)
    hooks: dict[str, dict[str, Path]] = field(default_factory=dict, hash=False, compare=False)
    strategies: dict[str, str] = field(default_factory=dict, hash=False, compare=False)
    jobs: int | None = None
    ip_upgrade: bool = False

    def files(self) -> list[Path]:
        return [p for when in self.hooks.values() for p in when.values()]

    def as_dict(self) -> dict[str, Any]:
        return {"top": self.top, "hooks": {s: {w: p.name for w, p in h.items()} for s, h in self.hooks.items()},
                "strategies": dict(self.strategies), "jobs": self.jobs, "ip_upgrade": self.ip_upgrade}


@dataclass(frozen=True)
class Verify:
    """How a design is verified: design.yaml's `verify: {<kind>: <value>}`."""

    kind: str  # model | cocotb | none
    value: str  # "package.module:function" | the cocotb test module | the written reason

    def as_dict(self) -> dict[str, str]:
        """What metrics.json's `verification` and the cache key carry."""
        return {"kind": self.kind, "reason": self.value} if self.kind == "none" else {"kind": self.kind,
                                                                                       self.kind: self.value}

    @property
    def label(self) -> str:
        return f"unverified: {self.value}" if self.kind == "none" else f"{self.kind} {self.value}"


@dataclass(frozen=True)
class Streams:
    """The top's AXI-Stream ports (name -> tdata bits) and the status outputs read at the end of a run."""

    inputs: dict[str, int]
    outputs: dict[str, int]
    status: dict[str, int]
    # top inputs in no stream that the harness holds at a value other than 0 (every other one is held at 0)
    hold: dict[str, int] = field(default_factory=dict)
    # the harness's traffic: None = kabe's default (gaps and backpressure, kabe.sim.runner.DEFAULT_TRAFFIC),
    # "off" = tvalid whenever a beat is left and tready always high, or {valid: duty, ready: duty}
    traffic: Any = None
    # stream -> the top's clock port it runs on (several clocks: kabe.sim.clocking infers it when not said)
    clocks: dict[str, str] = field(default_factory=dict)
    # reset port -> active level, 1 (high) or 0 (low) (absent: kabe.sim.clocking finds them by name)
    resets: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"in": dict(self.inputs), "out": dict(self.outputs), "status": dict(self.status)}
        if self.hold:  # only when set: an unchanged design keeps its keys (cache, compiled model)
            out["hold"] = dict(self.hold)
        if self.traffic is not None:
            out["traffic"] = self.traffic
        if self.clocks:
            out["clocks"] = dict(self.clocks)
        if self.resets:
            out["resets"] = {k: "high" if v else "low" for k, v in self.resets.items()}
        return out


@dataclass(frozen=True)
class Design:
    name: str  # the directory name under cores/
    core: str  # VLNV, e.g. user:design:mydesign:0.1.0
    verify: Verify = field(hash=False)
    streams: Streams = field(hash=False, compare=False)
    ports: int  # memory ports used: 1..the board's count (its profile's memory ports)
    row_bytes: int
    constraints: Path  # absolute path of the XDC
    expect_gate: str  # pass | fail | not_estimated: what the gate is expected to say (a negative example says fail)
    budgets: dict[str, dict[str, float]] = field(hash=False, compare=False)
    core_file: Path  # cores/<name>/<name>.core (the file that declares `core`)
    yaml_file: Path
    # The vivado flow measures the whole block design (engine + DMA + interconnect + PS glue), the
    # open flow the engine alone: a metric named here replaces its open-flow budget for vivado builds.
    budgets_vivado: dict[str, dict[str, float]] = field(default_factory=dict, hash=False, compare=False)
    # Limits on the change against the base commit, e.g. {lut: {max_increase_pct: 5}}; budgets stay absolute.
    regressions: dict[str, dict[str, float]] = field(default_factory=dict, hash=False, compare=False)
    # Gate rules this design may break on purpose, each with the written reason (WAIVABLE);
    # the reason is printed in the build summary and archived in metrics.json's gate section.
    waivers: dict[str, str] = field(default_factory=dict, hash=False, compare=False)
    board: boards.Board = field(default=None, hash=False, compare=False)  # design.yaml's `board:` profile
    vivado: VivadoSettings = field(default_factory=VivadoSettings, hash=False, compare=False)
    # an HLS kernel (C++ sources, a top function: kabe.project.hls_spec) or a v++ link; None for an RTL design
    hls: hls_spec.HlsSpec | None = field(default=None, hash=False, compare=False)
    vitis: hls_spec.VitisSpec | None = field(default=None, hash=False, compare=False)

    def budgets_for(self, flow: str) -> dict[str, dict[str, float]]:
        # the flow's own table (the vivado flow measures the whole block design) replaces a budget it names
        key = flow_registry.FLOWS[flow].budgets_key if flow in flow_registry.FLOWS else None
        return {**self.budgets, **getattr(self, key)} if key else dict(self.budgets)

    @property
    def own_flow(self) -> str | None:
        """The flow an HLS kernel (vitis_hls) or a v++ link (vitis) always builds with; None: any flow."""
        return "vitis_hls" if self.hls is not None else "vitis" if self.vitis is not None else None

    @property
    def directory(self) -> Path:
        return self.yaml_file.parent


def _fail(path: Path, msg: str) -> DesignError:
    return DesignError(f"{path}: {msg}")


def check_name(name: str, where: str = "design name") -> str:
    """name, if it is a valid design name; else DesignError (the name shown bounded, never echoed whole)."""
    if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
        raise DesignError(f"{where} {bounded(name)} is not a valid design name (letters, digits, '_' and '-', at "
                          f"most 64, not starting with '-'; a design is a folder of that name under cores/)")
    return name


class _AliasRefused(Exception):
    def __init__(self, line: int):
        self.line = line


def _refuse_aliases(text: str) -> None:
    """No aliases: an anchor and a few nested aliases expand a 500-byte file into billions of nodes
    for whoever walks the result (the 'billion laughs'); no design.yaml needs one. The event stream
    is read without composing anything, so the check costs one fast pass whatever the input."""
    for event in yaml.parse(text, Loader=YAML_LOADER):
        if isinstance(event, yaml.AliasEvent):
            raise _AliasRefused(event.start_mark.line + 1)


def _read_yaml(yaml_file: Path) -> Any:
    try:
        with open(yaml_file, "rb") as f:
            raw = f.read(MAX_YAML_BYTES + 1)
    except OSError as e:
        raise _fail(yaml_file, f"cannot read: {e.strerror}") from None
    if len(raw) > MAX_YAML_BYTES:
        raise _fail(yaml_file, f"is larger than {MAX_YAML_BYTES // 1024} KiB; a design.yaml is a few lines")
    try:
        text = raw.decode("utf-8")
        _refuse_aliases(text)
        return yaml.load(text, Loader=YAML_LOADER)  # noqa: S506 - a safe loader (libyaml's when built with it)
    except UnicodeDecodeError:
        raise _fail(yaml_file, "is not UTF-8 text") from None
    except _AliasRefused as e:
        raise _fail(yaml_file, f"line {e.line} uses a YAML alias (*name), which design.yaml does not allow; "
                               f"write the value out instead") from None
    except yaml.YAMLError as e:
        text = " ".join(str(e).split())
        raise _fail(yaml_file, f"is not valid YAML: {text[:300]}") from None
    except RecursionError:
        raise _fail(yaml_file, "nests too deep to be a design.yaml") from None


_NAME_LINE = re.compile(r"^name\s*:\s*['\"]?([^'\"\s#]+)", re.MULTILINE)


def core_name(path: Path) -> str | None:
    """The top-level `name:` of a CAPI2 core file, read by pattern so a core with a YAML error elsewhere
    still maps to its design (FuseSoC then reports that error against the right file)."""
    try:
        m = _NAME_LINE.search(path.read_text(errors="replace"))
    except OSError:
        return None
    return m.group(1) if m else None


def _find_core_file(directory: Path, vlnv: str, yaml_file: Path) -> Path:
    preferred = directory / f"{directory.name}.core"
    candidates = [preferred] + sorted(p for p in directory.glob("*.core") if p != preferred)
    for cand in candidates:
        if cand.is_file() and core_name(cand) == vlnv:
            return cand
    names = {str(c.name): core_name(c) for c in candidates if c.is_file()}
    if not names:
        raise _fail(yaml_file, f"no .core file beside it; expected {preferred.name} declaring name: {vlnv}")
    found = ", ".join(f"{k} -> {v}" for k, v in names.items())
    raise _fail(yaml_file, f"core {bounded(vlnv)} is not declared by any .core file in {directory} ({found}); "
                           f"make `core:` match the core file's `name:`")


def _key(key: Any) -> str:
    """A mapping key as written (budget names are short words), or bounded when it is anything else."""
    return key if isinstance(key, str) and len(key) <= 40 and key.isprintable() else bounded(key)


def _check_limits(path: Path, spec: Any, *, what: str, ops: tuple[str, ...], op_word: str, example: str,
                  non_negative: bool = False) -> dict[str, dict[str, float]]:
    """A design.yaml table of metric -> {op: number} (budgets and regressions share the shape)."""
    if spec is None:
        return {}
    if not isinstance(spec, dict):
        raise _fail(path, f"{what}s must be a mapping like {example}, got {bounded(spec)}")
    out: dict[str, dict[str, float]] = {}
    for metric, rules in spec.items():
        if not isinstance(rules, dict) or not rules:
            raise _fail(path, f"{what} {bounded(metric)} must map {'an' if op_word[0] in 'aeiou' else 'a'} "
                              f"{op_word} ({'/'.join(ops)}) to a number, got {bounded(rules)}")
        for op, value in rules.items():
            if op not in ops:
                raise _fail(path, f"{what} {bounded(metric)} uses unknown {op_word} {bounded(op)}; "
                                  f"use one of {', '.join(ops)}")
            if isinstance(value, bool) or not isinstance(value, (int, float)) or (non_negative and value < 0):
                raise _fail(path, f"{what} {_key(metric)}.{_key(op)} must be a number"
                                  f"{' >= 0' if non_negative else ''}, got {bounded(value)}")
        out[str(metric)] = dict(rules)
    return out


def _check_budgets(path: Path, budgets: Any) -> dict[str, dict[str, float]]:
    return _check_limits(path, budgets, what="budget", ops=BUDGET_OPS, op_word="operator",
                         example="{dsp: {eq: 0}, lut: {lt: 12000}}")


def _check_regressions(path: Path, spec: Any) -> dict[str, dict[str, float]]:
    return _check_limits(path, spec, what="regression", ops=REGRESSION_OPS, op_word="rule",
                         example="{lut: {max_increase_pct: 5}, wns_ns: {max_decrease: 0.2}}", non_negative=True)


def _check_waivers(path: Path, waivers: Any) -> dict[str, str]:
    if waivers is None:
        return {}
    if not isinstance(waivers, dict):
        raise _fail(path, 'waivers must be a mapping like {no_clock: "why it is safe"}')
    out = {}
    for key, reason in waivers.items():
        if key not in WAIVABLE:
            raise _fail(path, f"waiver {str(key)[:40]!r} is not one kabe knows; waivable: {', '.join(WAIVABLE)}")
        if not isinstance(reason, str) or not reason.strip():
            raise _fail(path, f"waiver {key} needs a written reason (a non-empty string saying why it is safe)")
        out[key] = reason.strip()
    return out


def _check_verify(path: Path, data: dict) -> Verify:
    """verify: from design.yaml."""
    if "verify" not in data:
        raise _fail(path, 'missing `verify:`; say how the design is verified: verify: {model: "package.module:function"}, '
                          'verify: {cocotb: "test_module"} or verify: {none: "the reason"} (docs/your_design.md)')
    spec = data["verify"]
    if not isinstance(spec, dict) or len(spec) != 1 or next(iter(spec)) not in VERIFY_KINDS:
        raise _fail(path, f'verify must be exactly one of {{model: "package.module:function"}}, {{cocotb: "test_module"}} '
                          f'or {{none: "the reason"}}, got {bounded(spec)}')
    (kind, value), = spec.items()
    if kind == "model" and not (isinstance(value, str) and _MODEL_SPEC.fullmatch(value)):
        raise _fail(path, f'verify.model must name a function as "package.module:function" (importable from the '
                          f'project), got {bounded(value)}')
    if kind == "cocotb" and not (isinstance(value, str) and _MODULE_NAME.fullmatch(value)):
        raise _fail(path, f"verify.cocotb must name the testbench's Python module (e.g. test_fifo, in the design's "
                          f"folder), got {bounded(value)}")
    if kind == "none":
        if not isinstance(value, str) or not value.strip() or len(value) > _MAX_REASON or not value.isprintable():
            raise _fail(path, f"verify.none needs the written reason the design is not simulated (one line, at most "
                              f"{_MAX_REASON} characters), got {bounded(value)}")
        value = value.strip()
    return Verify(kind, value)


def _port_table(path: Path, spec: Any, what: str, bits: tuple[int, int]) -> dict[str, int]:
    if spec is None:
        return {}
    if not isinstance(spec, dict):
        raise _fail(path, f"streams.{what} must map port names to widths in bits, like {{s_axis: 64}}, got {bounded(spec)}")
    out = {}
    for name, width in spec.items():
        if not isinstance(name, str) or not _PORT_NAME.fullmatch(name):
            raise _fail(path, f"streams.{what}: {bounded(name)} is not a port name (a Verilog identifier)")
        if isinstance(width, bool) or not isinstance(width, int) or not bits[0] <= width <= bits[1] \
                or (what != "status" and width % 8):
            raise _fail(path, f"streams.{what}.{name} must be a width in bits, {bits[0]} to {bits[1]}"
                              f"{' and a multiple of 8' if what != 'status' else ''}, got {bounded(width)}")
        out[name] = width
    return out


def _hold_table(path: Path, spec: Any) -> dict[str, int]:
    """streams.hold: {port: value}, the value the harness holds a top input in no stream at (0 otherwise)."""
    if spec is None:
        return {}
    if not isinstance(spec, dict):
        raise _fail(path, f"streams.hold must map top inputs in no stream to the value they are held at, like "
                          f"{{pause_req: 0, cfg_mode: 2}}, got {bounded(spec)}")
    out = {}
    for name, value in spec.items():
        if not isinstance(name, str) or not _PORT_NAME.fullmatch(name):
            raise _fail(path, f"streams.hold: {bounded(name)} is not a port name (a Verilog identifier)")
        if isinstance(value, bool):
            value = int(value)
        if not isinstance(value, int) or not 0 <= value < 1 << 64:
            raise _fail(path, f"streams.hold.{name} must be a value from 0 to 2**64-1, got {bounded(value)}")
        out[name] = value
    return out


def _traffic(path: Path, spec: Any) -> Any:
    """streams.traffic: off, or {valid: duty, ready: duty} (the fraction of cycles an input offers a beat
    and an output takes one, each above 0 and at most 1)."""
    if spec is None:
        return None
    if spec is False or spec == "off":
        return "off"
    if isinstance(spec, dict) and spec and not set(spec) - {"valid", "ready"}:
        out = {}
        for k, v in spec.items():
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 < v <= 1:
                raise _fail(path, f"streams.traffic.{k} must be a duty above 0 and at most 1, got {bounded(v)}")
            out[k] = float(v)
        return out
    raise _fail(path, f"streams.traffic must be off or {{valid: 0.8, ready: 0.7}} (the fraction of cycles an "
                      f"input offers a beat and an output takes one), got {bounded(spec)}")


def _clock_table(path: Path, spec: Any, streams: list[str]) -> dict[str, str]:
    """streams.clocks: {stream: clock port}, the clock each stream runs on (a design with several clocks)."""
    if spec is None:
        return {}
    if not isinstance(spec, dict):
        raise _fail(path, f"streams.clocks must map each stream to the top's clock port it runs on, like "
                          f"{{s_axis: s_clk, m_axis: m_clk}}, got {bounded(spec)}")
    for name, port in spec.items():
        if name not in streams:
            raise _fail(path, f"streams.clocks names {bounded(name)}, which is no stream of streams.in or streams.out "
                              f"({', '.join(streams)})")
        if not isinstance(port, str) or not _PORT_NAME.fullmatch(port):
            raise _fail(path, f"streams.clocks.{name} must be a clock port's name (a Verilog identifier), got "
                              f"{bounded(port)}")
    return dict(spec)


def _reset_table(path: Path, spec: Any) -> dict[str, int]:
    """streams.resets: {port: high | low}, the top's reset inputs and their active level."""
    if spec is None:
        return {}
    if not isinstance(spec, dict):
        raise _fail(path, f"streams.resets must map the top's reset inputs to their active level, like "
                          f"{{s_rst: high, m_aresetn: low}}, got {bounded(spec)}")
    out = {}
    for port, level in spec.items():
        if not isinstance(port, str) or not _PORT_NAME.fullmatch(port):
            raise _fail(path, f"streams.resets: {bounded(port)} is not a port name (a Verilog identifier)")
        if level not in ("high", "low"):
            raise _fail(path, f"streams.resets.{port} must be high or low (its active level), got {bounded(level)}")
        out[port] = 1 if level == "high" else 0
    return out


def _check_streams(path: Path, spec: Any, ports: int) -> Streams:
    """streams: from design.yaml; absent, kabe's own contract for `ports` memory lanes (docs/streams.md)."""
    if spec is None:
        return Streams({f"s{p}_axis": 64 for p in range(ports)}, {f"m{p}_axis": 64 for p in range(ports)},
                       {n: w for p in range(ports) for n, w in ((f"stat{p}_invalid", 32), (f"stat{p}_overflow", 1))})
    if not isinstance(spec, dict) or set(spec) - {"in", "out", "status", "hold", "traffic", "clocks", "resets"}:
        raise _fail(path, f"streams must be a mapping with keys in, out, status (and optionally hold, traffic, "
                          f"clocks, resets), "
                          f"like {{in: {{s_axis: 64}}, out: {{m_axis: 64}}}}, got {bounded(spec)}")
    s = Streams(_port_table(path, spec.get("in"), "in", STREAM_BITS),
                _port_table(path, spec.get("out"), "out", STREAM_BITS),
                _port_table(path, spec.get("status"), "status", (1, 64)),
                _hold_table(path, spec.get("hold")), _traffic(path, spec.get("traffic")))
    s = replace(s, clocks=_clock_table(path, spec.get("clocks"), [*s.inputs, *s.outputs]),
                resets=_reset_table(path, spec.get("resets")))
    if not s.inputs or not s.outputs:
        raise _fail(path, "streams needs at least one `in` and one `out` AXI-Stream port")
    names = [*s.inputs, *s.outputs, *s.status, *s.hold]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise _fail(path, f"streams names {', '.join(twice)} more than once")
    return s


def verify_sources(design: "Design", root: Path | None = None) -> list[Path]:
    """The files a design's verification runs from, found without importing them (every `doit` start
    computes cache keys): the model's module (from the project root), or the cocotb testbench module
    (the design's folder first, then the project root)."""
    from kabe.base.paths import ROOT

    root = ROOT if root is None else root
    v = design.verify
    if v.kind == "none":
        return []
    module = v.value.split(":")[0]
    parts = module.split(".")
    bases = [design.directory, root] if v.kind == "cocotb" else [root]
    for base in bases:
        for cand in (base.joinpath(*parts).with_suffix(".py"), base.joinpath(*parts, "__init__.py")):
            if cand.is_file():
                return [cand.resolve()]
    return []


def search_path(yaml_file: Path, name: str) -> list[Path]:
    """Where a file named in design.yaml is looked for: the design's own folder first, then the
    project's constraints/ (an absolute path is only itself)."""
    p = Path(name)
    if p.is_absolute():
        return [p]
    return [(yaml_file.parent / p).resolve(), (CONSTRAINTS / p).resolve()]


def find_file(yaml_file: Path, name: str, key: str) -> Path:
    """The first existing file of search_path(); DesignError naming every place looked in, else."""
    places = search_path(yaml_file, name)
    for p in places:
        if p.is_file():
            return p
    if len(places) == 1:
        raise _fail(yaml_file, f"{key}: {bounded(name)}: no such file; correct `{key}:` or create it")
    raise _fail(yaml_file, f"{key}: {bounded(name)} is in neither the design's folder ({places[0]}) nor the "
                           f"project's constraints/ ({places[1]}); put the file in one of them or correct `{key}:`")


def _check_board(yaml_file: Path, name: Any) -> boards.Board:
    if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
        raise _fail(yaml_file, f"board must be a board profile's name, got {bounded(name)}; known boards: "
                               f"{', '.join(sorted(boards.known()))}")
    try:
        return boards.get(name)
    except boards.BoardError as e:
        raise _fail(yaml_file, f"board: {e}") from None


def _check_vivado(path: Path, spec: Any, shell_default: bool) -> VivadoSettings:
    """`vivado:` (absent: kabe's shell for a design of kabe's AXI-Stream contract, declared by `streams:` or
    `ports:`, else the design's own top)."""
    default_top = "shell" if shell_default else "own"
    if spec is None:
        return VivadoSettings(top=default_top)
    if not isinstance(spec, dict):
        raise _fail(path, f"vivado must be a mapping with keys {', '.join(_VIVADO_KEYS)}, got {bounded(spec)}")
    unknown = [_key(k) for k in spec if k not in _VIVADO_KEYS]
    if unknown:
        raise _fail(path, f"vivado: unknown key(s) {', '.join(unknown)}; known keys: {', '.join(_VIVADO_KEYS)}")
    top = spec.get("top", default_top)
    if top not in VIVADO_TOPS:
        raise _fail(path, f"vivado.top must be one of {', '.join(VIVADO_TOPS)}, got {bounded(top)}")
    hooks: dict[str, dict[str, Path]] = {}
    for step, when in (spec.get("hooks") or {}).items() if isinstance(spec.get("hooks") or {}, dict) else [(None, None)]:
        if step not in VIVADO_HOOK_STEPS or not isinstance(when, dict) or not when \
                or any(w not in ("pre", "post") or not isinstance(f, str) for w, f in when.items()):
            raise _fail(path, f"vivado.hooks must map a step ({', '.join(VIVADO_HOOK_STEPS)}) to {{pre: <file.tcl>, "
                              f"post: <file.tcl>}}, got {bounded(step)}: {bounded(when)}")
        for w, f in when.items():
            file = (path.parent / f).resolve()
            if not file.is_file():
                raise _fail(path, f"vivado.hooks.{step}.{w}: {f} is not a file in {path.parent}")
            hooks.setdefault(step, {})[w] = file
    strategies = spec.get("strategies") or {}
    if not isinstance(strategies, dict) or any(k not in VIVADO_STRATEGY_KEYS or not isinstance(v, str)
                                               or not _VIVADO_NAME.fullmatch(v) for k, v in strategies.items()):
        raise _fail(path, f"vivado.strategies must map {', '.join(VIVADO_STRATEGY_KEYS)} to a Vivado strategy or "
                          f"directive name (letters, digits, _ and -), got {bounded(strategies)}")
    jobs = spec.get("jobs")
    if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1):
        raise _fail(path, f"vivado.jobs must be a positive integer, got {bounded(jobs)}")
    upgrade = spec.get("ip_upgrade", False)
    if not isinstance(upgrade, bool):
        raise _fail(path, f"vivado.ip_upgrade must be true or false, got {bounded(upgrade)}")
    return VivadoSettings(top=top, declared=True, hooks=hooks, strategies=dict(strategies), jobs=jobs,
                          ip_upgrade=upgrade)


def _default_board(yaml_file: Path) -> str:
    """The project's [tool.kabe] default_board for a design.yaml that names no `board:`."""
    from kabe.project import config

    name = config.value(config.load(), "default_board")
    if name is None:
        raise _fail(yaml_file, "names no `board:` and the project sets no [tool.kabe] default_board; add "
                               "`board: <profile>` (kabe/boards/profiles, or the project's boards/: docs/boards.md)")
    return name


def load(yaml_file: Path) -> Design:
    """Load and validate one design.yaml; raises DesignError naming the file and the fix."""
    yaml_file = Path(yaml_file).resolve()
    check_name(yaml_file.parent.name, f"design folder in {yaml_file.parent.parent}:")
    data = _read_yaml(yaml_file)
    if not isinstance(data, dict):
        raise _fail(yaml_file, "must be a YAML mapping with keys " + ", ".join(_FIELDS))
    unknown = [_key(k) for k in data if k not in _FIELDS]
    if unknown:
        raise _fail(yaml_file, f"unknown key(s) {', '.join(unknown[:5])}; known keys: {', '.join(_FIELDS)}")
    missing = [k for k in _REQUIRED if k not in data]
    if missing:
        raise _fail(yaml_file, f"missing required key(s) {', '.join(missing)}")

    core = data["core"]
    if not isinstance(core, str) or not _VLNV.match(core):
        raise _fail(yaml_file, f"core must be a VLNV vendor:library:name:version, got {bounded(core)}")
    verify = _check_verify(yaml_file, data)
    board = _check_board(yaml_file, data["board"] if "board" in data else _default_board(yaml_file))
    lanes = board.memory_ports
    ports = data.get("ports", 1)
    if isinstance(ports, bool) or not isinstance(ports, int) or not 1 <= ports <= lanes.count:
        raise _fail(yaml_file, f"ports must be 1..{lanes.count} ({lanes.name}s of board {board.key} used), "
                               f"got {bounded(ports)}")
    row_bytes = data.get("row_bytes", 512)
    beat = lanes.beat_bytes
    if isinstance(row_bytes, bool) or not isinstance(row_bytes, int) or row_bytes <= 0 or row_bytes % beat:
        raise _fail(yaml_file, f"row_bytes must be a positive multiple of {beat} (a {lanes.name} beat), "
                               f"got {bounded(row_bytes)}")
    expect_gate = data.get("expect_gate", "pass")
    if expect_gate not in GATE_EXPECTATIONS:
        raise _fail(yaml_file, f"expect_gate must be one of {', '.join(GATE_EXPECTATIONS)}, got {bounded(expect_gate)}")
    if expect_gate == "not_estimated" and board.open_timing != "not_estimated":
        raise _fail(yaml_file, f"expect_gate: not_estimated is for a board whose open-flow timing is not estimated, "
                               f"but board {board.key}'s is (open_flow.timing: {board.open_timing}); expect pass or fail")
    constraints_name = data.get("constraints", board.constraints)
    if not isinstance(constraints_name, str) or not constraints_name or "\0" in constraints_name:
        raise _fail(yaml_file, f"constraints must be a file name (in the design's folder or the project's "
                               f"constraints/), got {bounded(constraints_name)}")
    if "constraints" not in data and not any(p.is_file() for p in search_path(yaml_file, constraints_name)):
        # nothing named: the board's file was looked for, which the user never wrote down
        raise _fail(yaml_file, f"design.yaml names no `constraints:`, so the board {board.name}'s "
                               f"{bounded(constraints_name)} is looked for, in the design's folder and the project's "
                               f"constraints/, and is in neither; add `constraints: <your XDC>` (a file with "
                               f"create_clock, in the design's folder), or put {bounded(constraints_name)} in "
                               f"constraints/ (`kabe init` writes it)")
    constraints = find_file(yaml_file, constraints_name, "constraints")
    budgets = _check_budgets(yaml_file, data.get("budgets"))
    budgets_vivado = _check_budgets(yaml_file, data.get("budgets_vivado"))
    regressions = _check_regressions(yaml_file, data.get("regressions"))
    waivers = _check_waivers(yaml_file, data.get("waivers"))
    streams = _check_streams(yaml_file, data.get("streams"), ports)
    core_file = _find_core_file(yaml_file.parent, core, yaml_file)
    vivado = _check_vivado(yaml_file, data.get("vivado"), "streams" in data or "ports" in data)
    try:  # a malformed hls: or vitis: is a DesignError like every other design.yaml mistake (scan() lists it)
        hls = hls_spec.parse_hls(yaml_file, data["hls"], streams.inputs, streams.outputs) if "hls" in data else None
        vitis = hls_spec.parse_vitis(yaml_file, data["vitis"]) if "vitis" in data else None
    except hls_spec.SpecError as e:
        raise DesignError(str(e)) from None
    if hls and vitis:
        raise _fail(yaml_file, "has both `hls:` (a kernel) and `vitis:` (a link); a link names its kernels in vitis.kernels")
    return Design(
        name=yaml_file.parent.name, core=core, verify=verify, streams=streams, ports=ports, row_bytes=row_bytes,
        constraints=constraints, expect_gate=expect_gate, budgets=budgets, core_file=core_file,
        yaml_file=yaml_file, budgets_vivado=budgets_vivado, regressions=regressions, waivers=waivers,
        board=board, vivado=vivado, hls=hls, vitis=vitis,
    )


def all_designs(cores_root: Path = CORES) -> dict[str, Design]:
    """Every design under cores_root, by name, sorted. Any invalid design.yaml raises."""
    return {p.parent.name: load(p) for p in sorted(Path(cores_root).glob("*/design.yaml"))}


def names(cores_root: Path = CORES) -> list[str]:
    """The design folders under cores_root (each with a design.yaml), sorted, without reading any."""
    return sorted(p.parent.name for p in Path(cores_root).glob("*/design.yaml"))


def scan(cores_root: Path = CORES) -> tuple[dict[str, Design], dict[str, DesignError]]:
    """Every design under cores_root, split into those that load and those that do not (name -> the
    one-line error): one broken design.yaml stops only its own tasks, not `doit list` or the others."""
    good: dict[str, Design] = {}
    broken: dict[str, DesignError] = {}
    for p in sorted(Path(cores_root).glob("*/design.yaml")):
        try:
            good[p.parent.name] = load(p)
        except DesignError as e:
            broken[p.parent.name] = e
    return good, broken


def get(name: str | Design, cores_root: Path = CORES) -> Design:
    """One design by name (a Design passes through); unknown names raise listing the known ones."""
    if isinstance(name, Design):
        return name
    check_name(name)  # before it becomes a path: "../../x/evil" names no design of this checkout
    yaml_file = Path(cores_root) / name / "design.yaml"
    if not yaml_file.is_file():
        known = sorted(p.parent.name for p in Path(cores_root).glob("*/design.yaml"))
        raise DesignError(
            f"unknown design {bounded(name)}: no {yaml_file}; known designs: {', '.join(known) or '(none)'}"
        )
    return load(yaml_file)
