"""Which of the top's ports kabe's harness drives as clocks and resets, found from the design.

    resolve(design, found_ports) -> (Clocking, problems)

Clocks: the ports the XDC's create_clock names (`[get_ports s_clk]`) that are 1-bit inputs of the top,
in the XDC's order (the first is the run's clock: the cycle limit and the status watch count it), each
with the XDC's period; a port design.yaml's streams.clocks names is one too. No such port: the top's
`clk`, as before. With several clocks the harness runs each at its period (two clock domains, an
asynchronous FIFO's s_clk and m_clk, see their real interleaving) and each stream on its clock:
streams.clocks says which, else the one clock whose name begins as the stream's does (`s_axis` runs on
`s_clk` or `s_axis_aclk`); a stream no rule places is a problem naming the fix.

Resets: design.yaml's streams.resets ({port: high | low}), else every 1-bit top input in no stream
whose name says reset (rst, reset, aresetn, rst_n, rst_ni, nreset ...), active low when the name ends
or starts with n/b/l as rst_n or nrst do. Each is held active for the first cycles, then released; a
top with none runs from its initial values.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Mapping

_RESET = re.compile(r"(?:^|_)(?:a?rst|a?reset)(?:$|_|n\b|b\b|l\b|ni\b)|^n(?:rst|reset)", re.I)
_ACTIVE_LOW = re.compile(r"(?:rst|reset)_?(?:n|b|l|ni|n_i)$|^n_?(?:rst|reset)", re.I)


@dataclass(frozen=True)
class Clocking:
    clocks: dict[str, float | None]  # port -> period in ns (None: not constrained; one clock needs none)
    resets: dict[str, int] = field(default_factory=dict)  # port -> active level (1 high, 0 low)
    stream_clock: dict[str, str] = field(default_factory=dict)  # stream -> clock port

    @property
    def default(self) -> bool:
        """kabe's contract as it always was: one clock `clk`, one active-high reset `rst`."""
        return list(self.clocks) == ["clk"] and self.resets == {"rst": 1}

    def half_ps(self, port: str) -> int:
        """Half the clock's period in ps, as the harness toggles it (one clock: 1, its period does not matter)."""
        period = self.clocks[port]
        if len(self.clocks) == 1 or period is None:
            return 1
        return max(1, round(period * 500))

    def as_dict(self) -> dict:
        return {"clocks": dict(self.clocks), "resets": {k: "high" if v else "low" for k, v in self.resets.items()},
                "stream_clock": dict(self.stream_clock)}

    @staticmethod
    def from_dict(d: Mapping) -> "Clocking":
        return Clocking({str(k): (None if v is None else float(v)) for k, v in (d.get("clocks") or {}).items()},
                        {str(k): 1 if v == "high" else 0 for k, v in (d.get("resets") or {}).items()},
                        {str(k): str(v) for k, v in (d.get("stream_clock") or {}).items()})

    def describe(self) -> str:
        """`clocks s_clk 10 ns (s_axis), m_clk 7 ns (m_axis); resets s_rst (high)`."""
        parts = []
        for port, period in self.clocks.items():
            streams = [s for s, c in self.stream_clock.items() if c == port]
            parts.append(f"{port}{f' {period:g} ns' if period else ''}{f' ({chr(44).join(streams)})' if streams else ''}")
        resets = ", ".join(f"{p} ({'high' if v else 'low'})" for p, v in self.resets.items()) or "none"
        return f"clocks {', '.join(parts)}; resets {resets}"


def _xdc_clocks(design) -> list[tuple[str, float]]:
    """(port, period) of every create_clock on a port of the design's XDC, in its order; [] when it cannot be
    read (the build says why elsewhere)."""
    from kabe.project import constraints

    try:
        clocks = constraints.parse_xdc(design.constraints)
    except Exception:  # noqa: BLE001 - no XDC, no clock in it, a malformed one: the build's own check says it
        return []
    return [(t, c.period_ns) for c in clocks if c.target_kind == "ports" for t in c.targets]


def _one_bit_input(found: Mapping[str, tuple[str, int | None]], port: str) -> bool:
    return port in found and found[port][0] == "input" and found[port][1] in (1, None)


def _stream_port(stream: str, clock: str) -> bool:
    """`s_axis` and `s_clk` (one first word), or `s_axis` and `s_axis_aclk` (the stream's name first)."""
    return clock.split("_")[0].lower() == stream.split("_")[0].lower() or clock.lower().startswith(stream.lower() + "_")


def resolve(design, found: Mapping[str, tuple[str, int | None]],
            xdc_clocks: list[tuple[str, float]] | None = None) -> tuple[Clocking, list[str]]:
    """The design's clocks, resets and each stream's clock (the module doc), and the problems that stop it.
    xdc_clocks: the XDC's port clocks as the verb read them (kabe.project.design_context), else read here."""
    streams = design.streams
    names = [*streams.inputs, *streams.outputs]
    problems: list[str] = []
    clocks: dict[str, float | None] = {}
    for port, period in (xdc_clocks if xdc_clocks is not None else _xdc_clocks(design)):
        if _one_bit_input(found, port) and port not in clocks:
            clocks[port] = period
    declared = dict(getattr(streams, "clocks", {}) or {})
    for stream, port in declared.items():
        if not _one_bit_input(found, port):
            problems.append(f"streams.clocks.{stream} names {port}, which is not a 1-bit input of the top")
        elif port not in clocks:
            clocks[port] = None
    if not clocks:
        clocks["clk"] = None  # the contract's clock: its absence is said by the port check (with a hint)
    if len(clocks) > 1:
        unconstrained = [p for p, v in clocks.items() if v is None]
        if unconstrained:
            problems.append(f"clock {unconstrained[0]} has no create_clock in {design.constraints.name}, so the harness "
                            f"does not know its period beside the other clocks: add `create_clock -period <ns> "
                            f"[get_ports {unconstrained[0]}]`")
    stream_clock: dict[str, str] = {}
    for stream in names:
        if stream in declared:
            stream_clock[stream] = declared[stream]
            continue
        if len(clocks) == 1:
            stream_clock[stream] = next(iter(clocks))
            continue
        fits = [c for c in clocks if _stream_port(stream, c)]
        if len(fits) == 1:
            stream_clock[stream] = fits[0]
        else:
            problems.append(f"stream {stream}: the top has clocks {', '.join(clocks)} and kabe cannot tell which one it "
                            f"runs on; say it in design.yaml (streams: clocks: {{{stream}: <clock port>}})")
    resets: dict[str, int] = {}
    if getattr(streams, "resets", None):
        for port, level in streams.resets.items():
            if not _one_bit_input(found, port):
                problems.append(f"streams.resets names {port}, which is not a 1-bit input of the top")
            resets[port] = level
    else:
        taken = {f"{s}_{sig}" for s in names for sig in ("tdata", "tvalid", "tready", "tlast")}
        taken |= set(streams.status) | set(streams.hold) | set(clocks)
        for port in found:
            if port not in taken and _one_bit_input(found, port) and _RESET.search(port):
                resets[port] = 0 if _ACTIVE_LOW.search(port) else 1
    return Clocking(clocks, resets, stream_clock), problems
