"""Where Vivado's synthesis would put a DSP48E1's register that Yosys put elsewhere.

The estimate times Yosys's netlist; the sign-off times Vivado's. For most cells the two agree
closely enough (docs/timing_model.md), but Yosys and Vivado pack a multiplier's registers into the
DSP48E1 differently, and the difference is large:

* Yosys's `xilinx_dsp` packs a product register that feeds an adder into MREG, then packs the
  adder into the next DSP's post-adder and turns the connection into a PCOUT -> PCIN cascade
  (`xilinx_dsp_cascade`). The upstream DSP then passes its registered product through its ALU
  untouched (OPMODE = M, PREG = 0): clock -> M register -> ALU -> PCOUT, 2.5 ns at -1.
* Vivado's synthesis puts a multiplier's one output register at P (UG901: the register after
  the multiplication is pulled into the DSP; with no post-adder in that DSP it is the P register):
  clock -> PCOUT 0.6 ns at -1 (prjxray's PREG arc x the fitted DSP ratio).

Same RTL, same function, same cycle; 1.9 ns apart. So a DSP48E1 whose ALU only passes its
registered product through is timed as Vivado would build it: the register at P. Only that
pattern is rewritten; a DSP whose ALU adds something (PCIN, C, P feedback) keeps Yosys's packing
(Vivado would need the M register there too). The estimator also times the netlist as Yosys
packed it, and the uncertainty band reaches down to that (kabe.timing.report): the rule is an
assumption about Vivado's synthesis, and the band says what it is worth.
"""

from __future__ import annotations

PASS_THROUGH_OPMODE = "0000101"  # Z = 0, Y = M, X = M: P = the product (OPMODE[6:0], MSB first)


def _param(params: dict, name: str, default: int = 0) -> int:
    v = params.get(name, default)
    if isinstance(v, str):
        try:
            return int(v, 2) if set(v) <= {"0", "1"} else int(v)
        except ValueError:
            return default
    return int(v)


def _constant(connections: dict, pin: str) -> str | None:
    """A pin's constant value MSB first ('0000101'), or None when any bit is a net."""
    bits = connections.get(pin)
    if not bits or not all(b in ("0", "1") for b in bits):
        return None
    return "".join(reversed(bits))


def product_passed_through(cell: dict) -> bool:
    """A DSP48E1 that registers its product in M and passes it through its ALU unchanged."""
    if cell.get("type") != "DSP48E1":
        return False
    p, c = cell.get("parameters") or {}, cell.get("connections") or {}
    if _param(p, "MREG") != 1 or _param(p, "PREG") != 0:
        return False
    if str(p.get("USE_MULT", "MULTIPLY")).strip() not in ("MULTIPLY", ""):
        return False
    if _param(p, "OPMODEREG") or _param(p, "ALUMODEREG") or _param(p, "CARRYINREG"):
        return False
    if _constant(c, "OPMODE") != PASS_THROUGH_OPMODE or _constant(c, "ALUMODE") != "0000":
        return False
    # no carry into the ALU either (an unconnected pin is 0)
    return all(pin not in c or set(_constant(c, pin) or "x") == {"0"} for pin in ("CARRYIN", "CARRYINSEL"))


def vivado_parameters(cell: dict) -> dict | None:
    """The parameters Vivado's packing would give this cell, or None when it would keep Yosys's."""
    if not product_passed_through(cell):
        return None
    return {**(cell.get("parameters") or {}), "MREG": 0, "PREG": 1}
