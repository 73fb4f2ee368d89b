"""Narrow LUT cones, timed as Vivado's synthesis would map them.

Yosys (ABC) maps logic for area: a function of few inputs can come out as a chain of small LUTs,
each link a routed net. Vivado's synthesis maps for the clock it is given: any function of up to
six inputs is one LUT6, of seven a LUT6 pair and a MUXF7, of eight four LUT6s, two MUXF7s and a
MUXF8 inside one slice (UG474: the F7/F8 multiplexers exist for exactly this). The netlist tells
how many inputs a signal depends on, so where Yosys's chain is slower than that bound, the signal
is timed at the bound: its inputs' latest arrival, one routed net into the LUT, the LUT and the
multiplexers, with Vivado's delays from the fitted model.

Example: stage 4's ternary decoder is a 256-entry ROM (8 inputs -> 11 outputs). ABC maps each
output as a 7-LUT chain (LUT2, LUT2, LUT2, LUT4, LUT5, LUT5, LUT6: seven routed nets, 7.5 ns
estimated); the same function is one LUT6 + MUXF7 + MUXF8 (one routed net: the path is 3.7 ns).

Only cells of the LUT classes (LUT1..6, INV, MUXF7/8) form a cone; a cone stops at every other
cell (flip-flops, LUTRAM, CARRY4, DSP, BRAM, ports), whose outputs are its inputs.
"""

from __future__ import annotations

from dataclasses import dataclass

from kabe.timing.cells import cell_timing
from kabe.timing.delay_classes import cell_class

MAX_INPUTS = 8  # one slice: 4 LUT6 + 2 MUXF7 + MUXF8
CONE_CLASSES = ("LUT", "MUXF")
SHAPES = {6: ("LUT6",), 7: ("LUT6", "MUXF7"), 8: ("LUT6", "MUXF7", "MUXF8")}


@dataclass(frozen=True)
class Cone:
    inputs: tuple[int, ...]  # the bits the signal depends on (outputs of non-LUT cells, ports)
    cell: str                # the Yosys cell driving the signal
    pin: str                 # its output pin
    ps: float                # the LUT6 (+ MUXF7 (+ MUXF8)) delay of Vivado's mapping

    @property
    def shape(self) -> str:
        return "+".join(SHAPES[max(6, len(self.inputs))])


def _prjxray(cell_type: str, in_pin: str) -> float:
    return float(max(ps for ip, _, _, _, ps in cell_timing(cell_type, {}).comb if ip == in_pin))


def cone_delays(model) -> dict[int, float]:
    """Cell delay of Vivado's mapping of a function of n inputs (n = 6, 7, 8), through the model."""
    lut = model.cell_ps("LUT6", "I0", "O", _prjxray("LUT6", "I0"))
    f7 = model.cell_ps("MUXF7", "I0", "O", _prjxray("MUXF7", "I0"))
    f8 = model.cell_ps("MUXF8", "I0", "O", _prjxray("MUXF8", "I0"))
    return {6: lut, 7: lut + f7, 8: lut + f7 + f8}


def narrow_cones(cells: dict, driver: dict, order: list, model) -> dict[int, Cone]:
    """Every bit driven by a LUT-class cell whose function has at most MAX_INPUTS inputs -> its
    Cone. `order` is the combinational graph's topological order (kabe.timing.sta), so a LUT's
    inputs come before its output."""
    delays = cone_delays(model)
    support: dict[int, frozenset | None] = {}  # None: wider than MAX_INPUTS
    depth: dict[int, int] = {}                 # LUT-class cells from the cone's inputs to the bit
    out: dict[int, Cone] = {}
    for y in order:
        d = driver.get(y)
        if d is None or d[0] == "$port" or cell_class(cells[d[0]]["type"]) not in CONE_CLASSES:
            continue
        c = cells[d[0]]
        dirs = c.get("port_directions") or {}
        acc: set | None = set()
        deep = 0
        for pin, conn in (c.get("connections") or {}).items():
            if dirs.get(pin) == "output":
                continue
            for b in conn:
                if not isinstance(b, int):
                    continue  # a constant
                s = support.get(b) if _is_cone(b, driver, cells) else frozenset((b,))
                if s is None:
                    acc = None
                    break
                acc |= s
                deep = max(deep, depth.get(b, 0))
            if acc is None or len(acc) > MAX_INPUTS:
                acc = None
                break
        support[y] = frozenset(acc) if acc is not None else None
        depth[y] = deep + 1
        # worth it only where Yosys's chain has a routed net inside (two LUTs or more): the
        # slice's LUT6 -> MUXF7 -> MUXF8 links are dedicated
        if acc and depth[y] >= 2:
            out[y] = Cone(tuple(sorted(acc)), d[0], d[1], delays[max(6, len(acc))])
    return out


def _is_cone(b: int, driver: dict, cells: dict) -> bool:
    d = driver.get(b)
    return d is not None and d[0] != "$port" and cell_class(cells[d[0]]["type"]) in CONE_CLASSES
