"""The top-level port contract (docs/streams.md, "Top-level ports"), checked before anything compiles.

kabe's harness (harness.cpp) binds the top's ports by name; a top that lacks one, or has it at
another width, used to surface as a C++ error minutes into the build ("'class Vtop' has no member
named 's0_axis_tdata'") or, for a narrower result port, as mismatches. Here Verilator's own view of
the top (`--json-only`: its front end only, a fraction of a second) is read and compared with the
contract, and every difference is said in one line: the port, the expected and the found width
and direction, and where the contract is written.

A design Verilator cannot read at all is not judged here: the build that follows reports
Verilator's own errors, as it always did.
"""

from __future__ import annotations

import json
import re
import subprocess
import tempfile
from pathlib import Path
from typing import Iterator, Mapping, Sequence

from kabe.base import tool_group
from kabe.sim import clocking
from kabe.sim.clocking import Clocking

DOC = "docs/streams.md, \"Top-level ports\""
_WIDTH_KEYWORDS = {"logic", "bit", "wire", "reg", "uwire", "tri", "wand", "wor"}  # 1 bit without a range


def expected_ports(streams, clocking=None) -> dict[str, tuple[str, int]]:
    """Port name -> (direction, width in bits) the harness binds for design.yaml's `streams:`
    (a kabe.project.designs.Streams): the clocks and resets (kabe.sim.clocking; None: clk and rst), four
    AXI-Stream signals per stream, the status outputs."""
    ports = ["clk", "rst"] if clocking is None else [*clocking.clocks, *clocking.resets]
    want = {p: ("input", 1) for p in ports}
    for name, bits in streams.inputs.items():
        want.update({f"{name}_tdata": ("input", bits), f"{name}_tvalid": ("input", 1),
                     f"{name}_tready": ("output", 1), f"{name}_tlast": ("input", 1)})
    for name, bits in streams.outputs.items():
        want.update({f"{name}_tdata": ("output", bits), f"{name}_tvalid": ("output", 1),
                     f"{name}_tready": ("input", 1), f"{name}_tlast": ("output", 1)})
    want.update({name: ("output", bits) for name, bits in streams.status.items()})
    return want


def _nodes(tree) -> Iterator[dict]:
    stack = [tree]
    while stack:
        n = stack.pop()
        if isinstance(n, dict):
            yield n
            stack.extend(v for v in n.values() if isinstance(v, (list, dict)))
        elif isinstance(n, list):
            stack.extend(n)


def _span(text: str | None) -> int | None:
    m = re.fullmatch(r"\[?(-?\d+):(-?\d+)\]?", text or "")
    return abs(int(m.group(1)) - int(m.group(2))) + 1 if m else None


def _width(dtype: dict | None, types: Mapping[str, dict], depth: int = 0) -> int | None:
    """Bits of a Verilator dtype node: plain vectors, packed arrays and typedefs of them; None for
    anything else (a struct, a real, a string: nothing the harness could bind)."""
    if dtype is None or depth > 16:
        return None
    kind = dtype.get("type")
    if kind == "BASICDTYPE":
        if "range" in dtype:
            return _span(dtype["range"])
        return 1 if dtype.get("keyword") in _WIDTH_KEYWORDS else None
    if kind == "PACKARRAYDTYPE":
        inner = _width(types.get(dtype.get("refDTypep")), types, depth + 1)
        n = _span(dtype.get("declRange"))
        return inner * n if inner is not None and n is not None else None
    ref = dtype.get("refDTypep")
    if kind in ("REFDTYPE", "CONSTDTYPE", "TYPEDEF") and ref and ref != dtype.get("addr"):
        return _width(types.get(ref), types, depth + 1)
    return None


def top_ports(tree: dict, toplevel: str) -> dict[str, tuple[str, int | None]]:
    """Port name -> (direction, width or None) of `toplevel` in a Verilator --json-only tree."""
    nodes = list(_nodes(tree))
    types = {n["addr"]: n for n in nodes if "addr" in n and str(n.get("type", "")).endswith("DTYPE")}
    modules = [m for m in tree.get("modulesp") or [] if m.get("type") == "MODULE"]
    top = next((m for m in modules if m.get("origName") == toplevel or m.get("name") == toplevel), None)
    if top is None:
        top = next((m for m in modules if m.get("level") == 1), None)
    if top is None:
        return {}  # no such module: every contract port is then said to be missing
    out = {}
    for n in top.get("stmtsp") or []:
        if n.get("type") == "VAR" and n.get("direction") in ("INPUT", "OUTPUT", "INOUT"):
            out[n.get("origName") or n["name"]] = (n["direction"].lower(), _width(types.get(n.get("dtypep")), types))
    return out


def problems(found: Mapping[str, tuple[str, int | None]], want: Mapping[str, tuple[str, int]]) -> list[str]:
    """One phrase per contract port the top lacks or has at another width or direction."""
    out = []
    for name, (direction, bits) in want.items():
        if name not in found:
            out.append(f"{name} is missing (expected a {bits}-bit {direction}){_named_otherwise(name, found)}")
            continue
        got_dir, got_bits = found[name]
        if got_bits != bits:
            shown = f"{got_bits} bits" if got_bits is not None else "a type kabe cannot size"
            out.append(f"{name} is {shown}, expected {bits}")
        if got_dir != direction:
            out.append(f"{name} is an {got_dir}, expected an {direction}")  # input, output, inout
    return out


# The harness drives the clock the XDC names on a port, else an input named clk (clk_i, aclk are common): a
# top with neither is told how to name its clock. Resets are found by name (kabe.sim.clocking).
_LIKE = {"clk": re.compile(r"clk|clock", re.I)}


def _named_otherwise(name: str, found: Mapping[str, tuple[str, int | None]]) -> str:
    """For a missing clk: the top's 1-bit input that looks like a clock, and how to make it the harness's."""
    like = _LIKE.get(name)
    cands = [p for p, (d, b) in found.items() if like and d == "input" and b in (1, None) and like.search(p)]
    if not cands:
        return ""
    port = cands[0]
    return (f"; the top has {port}: kabe's harness drives the clock port the XDC's create_clock names, else an input "
            f"named clk, so constrain it (`create_clock -period <ns> [get_ports {port}]` in the design's XDC; "
            f"docs/your_design.md, \"Clocks\")")


def unchecked(found: Mapping[str, tuple[str, int | None]], want: Mapping[str, tuple[str, int]]) -> list[str]:
    """The top's outputs the harness neither binds nor compares (in no stream or status of design.yaml),
    in the order the top declares them: a debug port may be legitimate, but nothing verifies it."""
    return [name for name, (direction, _) in found.items() if direction in ("output", "inout") and name not in want]


def read_ports(verilator_argv: Sequence[str], toplevel: str, env: Mapping[str, str]) -> dict | None:
    """The top's ports as Verilator elaborates them (the build's own options and -G parameters),
    or None when Verilator cannot read the design (the build then says why)."""
    with tempfile.TemporaryDirectory(prefix="kabe-ports-") as tmp:
        argv = [*verilator_argv, "--json-only", "-Mdir", tmp]
        try:
            # in a process group tied to the build, as every tool kabe starts (kabe.base.tool_group)
            proc = tool_group.run(argv, capture_output=True, text=True, env=dict(env), cwd=tmp, timeout=300)
        except (OSError, subprocess.TimeoutExpired):
            return None
        trees = sorted(Path(tmp).glob("*.tree.json"))
        if proc.returncode != 0 or not trees:
            return None
        try:
            tree = json.loads(trees[0].read_text())
        except (OSError, ValueError):
            return None
    return top_ports(tree, toplevel)


def violation(design, toplevel: str, verilator_argv: Sequence[str], env: Mapping[str, str]) -> str | None:
    """The one line saying how the top breaks the contract the harness relies on, or None when it
    keeps it (or Verilator cannot read the design: the build then says why).
    kabe.sim.verilator_build raises it as a PortContractError before anything is verilated."""
    return check(design, toplevel, verilator_argv, env)[0]


def check(design, toplevel: str, verilator_argv: Sequence[str], env: Mapping[str, str]) -> tuple[str | None, list[str]]:
    """(violation()'s line or None, the top's outputs nobody checks: unchecked())."""
    return check_ports(design, toplevel, verilator_argv, env)[:2]


SIDEBAND = ("tkeep", "tstrb", "tuser", "tid", "tdest")  # the AXI-Stream signals a model may drive or expect


def sidebands(found: Mapping[str, tuple[str, int | None]], streams) -> dict[str, tuple[str, str, int]]:
    """The top's sideband ports of design.yaml's streams: port -> (stream, "in" or "out", bits), for an
    input stream's inputs and an output stream's outputs named `<stream>_<signal>` (SIDEBAND), 1 to 64
    bits (one word per beat in the harness's files)."""
    out = {}
    for table, direction, kind in ((streams.inputs, "input", "in"), (streams.outputs, "output", "out")):
        for stream in table:
            for sig in SIDEBAND:
                port = f"{stream}_{sig}"
                got = found.get(port)
                if got and got[0] == direction and got[1] is not None and 1 <= got[1] <= 64:
                    out[port] = (stream, kind, got[1])
    return out


def held_inputs(found: Mapping[str, tuple[str, int | None]], want: Mapping[str, tuple[str, int]],
                hold: Mapping[str, int]) -> dict[str, int]:
    """The top's inputs in no stream (a tkeep, a tuser, a pause_req), each with the value the harness holds it
    at: design.yaml's streams.hold, else 0. Never left to Verilator, whose random initial value (X options)
    would make the verdict depend on the seed. A port kabe cannot size (a struct) is not bound."""
    return {name: int(hold.get(name, 0)) for name, (direction, bits) in found.items()
            if direction == "input" and name not in want and bits is not None}


def check_ports(design, toplevel: str, verilator_argv: Sequence[str], env: Mapping[str, str],
                xdc_clocks: list[tuple[str, float]] | None = None) -> tuple[str | None, list[str], dict[str, int], dict[str, tuple[str, str, int]], Clocking]:
    """(violation()'s line or None, unchecked() outputs, held_inputs(), sidebands(), the clocks and resets the
    harness drives: kabe.sim.clocking); a streams.hold entry that names no input of the top is a violation (a
    typo would otherwise hold nothing)."""
    found = read_ports(verilator_argv, toplevel, env)
    if found is None:
        return None, [], {}, {}, Clocking({"clk": None}, {"rst": 1})
    clocks, clock_problems = clocking.resolve(design, found, xdc_clocks)
    want = expected_ports(design.streams, clocks)
    hold = dict(getattr(design.streams, "hold", {}) or {})
    bad = problems(found, want) + clock_problems
    for name in hold:
        if name in want or found.get(name, ("",))[0] != "input":
            bad.append(f"streams.hold names {name}, which is not a top input in no stream (the harness holds only "
                       f"those; remove it from streams.hold or correct the name)")
    return (_violation_line(design, toplevel, bad), unchecked(found, want), held_inputs(found, want, hold),
            sidebands(found, design.streams), clocks)


def _violation_line(design, toplevel: str, bad: list[str]) -> str | None:
    if not bad:
        return None
    declared = ", ".join(f"{n} {b}" for n, b in {**design.streams.inputs, **design.streams.outputs}.items())
    return (f"top {toplevel} of design {design.name} breaks the port contract ({DOC}; design.yaml's streams: "
            f"{declared} bits): " + "; ".join(bad))
