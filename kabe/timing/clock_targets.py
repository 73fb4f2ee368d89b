"""Where a `create_clock` lands in a flattened Yosys netlist: the net bits of its objects, or nothing.

Vivado creates a clock only on objects that exist: `create_clock ... [get_ports clk]` on a top
whose clock input is `clk_i` matches no port, creates no clock, and every register is then
unclocked and untimed. The estimator does the same: a target found here seeds the clock, a
target not found is reported (kabe.timing.report fails the estimate on it), never guessed.

Names follow Vivado's object patterns: `*` and `?` are wildcards, anything else is literal (so a
bus bit `d[3]` is that bit, not a character class). Hierarchy is written `a/b/c` in an XDC and
`a.b.c` in Yosys's flattened names; a pin `inst/clk` is the net Yosys kept for that instance's
port, or a library cell's pin `inst/O`.
"""

from __future__ import annotations

import functools
import re

KIND_WORD = {"ports": "port", "pins": "pin", "nets": "net"}
_BIT = re.compile(r"^(.*)\[(\d+)\]$")


@functools.lru_cache(maxsize=256)
def _pattern(name: str) -> re.Pattern:
    return re.compile("".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in name))


def _bits(conn) -> list[int]:
    return [b for b in conn if isinstance(b, int)]


def _lookup(name: str, table: dict, key: str = "bits") -> list[int]:
    """All bits of the entries of `table` that `name` names: exactly, as one bit `x[i]`, or by pattern."""
    if name in table:
        return _bits(table[name][key])
    m = _BIT.match(name)
    if m and m.group(1) in table:
        bits = table[m.group(1)][key]
        i = int(m.group(2))
        return _bits(bits[i:i + 1]) if i < len(bits) else []
    if "*" in name or "?" in name:
        pat = _pattern(name)
        return [b for k, v in table.items() if pat.fullmatch(k) for b in _bits(v[key])]
    return []


def _public(name: str) -> str:
    """A cell name as a person writes it: Yosys's `$flatten\\` prefix and leading backslash dropped."""
    return name.removeprefix("$flatten\\").lstrip("\\")


def target_bits(kind: str | None, target: str, ports: dict, netnames: dict, cells: dict) -> list[int]:
    """The net bits `create_clock`'s object `target` (of kind ports | pins | nets) names; [] when
    the netlist has no such object."""
    if kind == "ports":
        return _lookup(target, ports)
    hier = target.replace("/", ".")
    public_nets = {k: v for k, v in netnames.items() if not v.get("hide_name")}
    if kind == "nets":
        return _lookup(hier, public_nets)
    if kind == "pins":
        found = _lookup(hier, public_nets)  # an instance's port: the net Yosys kept under that name
        if found or "/" not in target:
            return found
        inst, pin = target.rsplit("/", 1)
        pat = _pattern(inst.replace("/", "."))
        return [b for name, c in cells.items() if pat.fullmatch(_public(name))
                for b in _bits((c.get("connections") or {}).get(pin) or [])]
    return []
