"""What a pre-route netlist knows about a delay, in one vocabulary shared by the estimator (a Yosys
netlist) and the calibration (Vivado's routed paths): cell classes, arc keys, fanout buckets and
the dedicated connections that cost no routing.

Both sides must describe a net or an arc the same way, or a constant fitted on Vivado's rows
would be looked up under a different name by the estimator. Vivado and Yosys spell a few cells
differently (Vivado splits a LUTRAM macro into RAMD32/RAMS32/RAMD64E leaves: Yosys keeps
RAM32M/RAM64M/RAMnnX1D); the classes below put both spellings in one class.
"""

from __future__ import annotations

import re
from functools import lru_cache

LUTS = frozenset(f"LUT{i}" for i in range(1, 7))
FFS = frozenset({"FDRE", "FDSE", "FDCE", "FDPE", "FDRE_1", "FDSE_1", "FDCE_1", "FDPE_1"})
BRAMS = frozenset({"RAMB18E1", "RAMB36E1"})
SRLS = frozenset({"SRL16E", "SRLC16E", "SRLC32E"})
MUXFS = frozenset({"MUXF7", "MUXF8"})

# fanout buckets: the routed net delay grows roughly with log2(fanout) (the first look at routed paths)
BUCKETS = ((1, "1"), (2, "2"), (4, "3-4"), (8, "5-8"), (16, "9-16"), (64, "17-64"), (None, "65+"))
BUCKET_NAMES = tuple(name for _, name in BUCKETS)

# Classes every modelled cell falls into. OTHER is anything the open flow never maps (PS7, IO,
# clocking, transceivers): the calibration leaves paths through those out.
CLASSES = ("FF", "LUT", "CARRY4", "MUXF", "BRAM", "DSP", "LUTRAM", "SRL")
FF_CONTROL_PINS = frozenset({"CE", "R", "S", "CLR", "PRE"})
CLOCK_PINS = frozenset({"C", "CLK", "CLKARDCLK", "CLKBWRCLK", "WCLK"})


@lru_cache(maxsize=None)  # pure, and called for every arc of every netlist
def cell_class(cell_type: str | None) -> str:
    t = cell_type or ""
    if t in LUTS or t == "INV":  # Yosys's INV is a LUT1 to Vivado
        return "LUT"
    if t in FFS:
        return "FF"
    if t == "CARRY4":
        return "CARRY4"
    if t in MUXFS:
        return "MUXF"
    if t in BRAMS:
        return "BRAM"
    if t == "DSP48E1":
        return "DSP"
    if t in SRLS:
        return "SRL"
    if re.fullmatch(r"RAM[DS](32|64E)|RAM(32|64)M|RAM\d+X1[SD]", t):
        return "LUTRAM"
    return "OTHER"


@lru_cache(maxsize=None)
def pin_base(pin: str | None) -> str:
    """`S[0]` -> `S`, `DOADO[5]` -> `DOADO`, `RADR0` stays (a scalar pin whose name ends in a digit)."""
    return re.sub(r"\[\d+\]$", "", pin or "")


@lru_cache(maxsize=None)
def pin_bit(pin: str | None) -> int | None:
    m = re.search(r"\[(\d+)\]$", pin or "")
    return int(m.group(1)) if m else None


def fanout_bucket(fanout: int) -> str:
    for lim, name in BUCKETS:
        if lim is None or fanout <= lim:
            return name
    raise AssertionError("unreachable")


def sink_group(cell_type: str | None, pin: str | None) -> str:
    """The sink side of a net: its class, with a flip-flop's control pins (CE, R/S, CLR/PRE: often
    wide enables and resets) apart from its D input."""
    cls = cell_class(cell_type)
    if cls == "FF":
        return "FF.CTRL" if pin_base(pin) in FF_CONTROL_PINS else "FF.D"
    return cls


def dedicated(drv_type: str | None, drv_pin: str | None, sink_type: str | None, sink_pin: str | None,
              fanout: int) -> bool:
    """A connection that does not use general routing (Vivado prints 0.000 for it):
    carry chain (CARRY4 CO -> next CARRY4 CI), DSP cascades (PCOUT->PCIN, ACOUT->ACIN,
    BCOUT->BCIN), inside a slice: LUT -> MUXF7, MUXF7 -> MUXF8, LUT -> CARRY4 S (a CARRY4's S
    inputs come only from its own slice's LUTs). Not a CARRY4's DI: it is also reachable through
    the slice's bypass inputs, and the corpus has it routed (0.95 ns)."""
    d, s = cell_class(drv_type), cell_class(sink_type)
    dp, sp = pin_base(drv_pin), pin_base(sink_pin)
    if d == "CARRY4" and s == "CARRY4" and dp == "CO" and sp == "CI":
        return True
    if d == "DSP" and s == "DSP" and (dp, sp) in (("PCOUT", "PCIN"), ("ACOUT", "ACIN"), ("BCOUT", "BCIN")):
        return True
    if sink_type in MUXFS and sp in ("I0", "I1") and (d == "LUT" or drv_type == "MUXF7"):
        return True
    if d == "LUT" and s == "CARRY4" and sp == "S":
        return True
    return False


def slice_packed(drv_type: str | None, sink_type: str | None, sink_pin: str | None, fanout: int) -> bool:
    """A fanout-1 net from slice logic (LUT/CARRY4/MUXF, and an SRL: a SLICEM LUT whose output feeds
    its slice's flip-flops as a LUT's does) into a flip-flop's D: usually packed into one slice
    (0.000 in Vivado, as both SRL->FF nets of the corpora are), but not always (a LUT5 output, a full
    slice): its own class with a fitted mean, not a rule."""
    return (cell_class(drv_type) in ("LUT", "CARRY4", "MUXF", "SRL") and sink_group(sink_type, sink_pin) == "FF.D"
            and fanout == 1)


@lru_cache(maxsize=None)
def net_class(drv_type: str | None, drv_pin: str | None, sink_type: str | None, sink_pin: str | None,
              fanout: int) -> tuple[str, str, str] | None:
    """(driver class, sink group, fanout bucket) of a general-routing net; None for a dedicated one.
    Slice logic into a FF's D at fanout 1 (usually packed into one slice) is a driver class of its
    own, `SLICE->FF`."""
    if dedicated(drv_type, drv_pin, sink_type, sink_pin, fanout):
        return None
    if slice_packed(drv_type, sink_type, sink_pin, fanout):
        return ("SLICE->FF", "FF.D", "1")
    return (cell_class(drv_type), sink_group(sink_type, sink_pin), fanout_bucket(fanout))


def fanout_law_net(drv_type: str | None, drv_pin: str | None, sink_type: str | None, sink_pin: str | None,
                   fanout: int) -> bool:
    """A net the fanout law times: neither dedicated nor slice-packed (net_class)."""
    nc = net_class(drv_type, drv_pin, sink_type, sink_pin, fanout)
    return nc is not None and nc[0] != "SLICE->FF"


@lru_cache(maxsize=None)
def arc_key(cell_type: str, in_pin: str | None, out_pin: str | None) -> str:
    """The name a fitted cell-delay constant is kept under: `LUT6:I->O`, `FDRE:C->Q`,
    `CARRY4:S->CO`, `DSP48E1:PCIN->P`, `LUTRAM:ADDR->O`.

    A LUT's input pins are pooled: Vivado's router permutes LUT pins (its `I3` is not Yosys's `I3`)
    and its LUT delay barely depends on the logical pin. LUTRAM address/output pins are pooled for
    the same reason, and because the two tools name them differently.
    """
    cls = cell_class(cell_type)
    ib, ob = pin_base(in_pin), pin_base(out_pin)
    if cls == "LUT":
        return f"{'LUT1' if cell_type == 'INV' else cell_type}:I->O"
    if cls == "LUTRAM":
        if ib in CLOCK_PINS:
            return "LUTRAM:CLK->O"
        return "LUTRAM:ADDR->O"
    if cls == "SRL":
        return "SRL:CLK->Q" if ib in CLOCK_PINS else "SRL:A->Q"
    if cls == "MUXF":
        return f"{cell_type}:{'S' if ib == 'S' else 'I'}->O"
    if cls == "BRAM":
        return "RAMB:CLK->DO"
    return f"{cell_type}:{ib}->{ob}"


def setup_key(cell_type: str | None, pin: str | None) -> str:
    """The name an endpoint's fitted setup time is kept under: `FF:D`, `FF:CE`, `FF:SR`, `BRAM:ADDR`..."""
    cls = cell_class(cell_type)
    pb = pin_base(pin)
    if cls == "FF":
        return "FF:" + ("SR" if pb in ("R", "S", "CLR", "PRE") else pb)
    if cls == "BRAM":
        for prefix, name in (("ADDR", "ADDR"), ("DI", "DI"), ("WE", "WE"), ("EN", "EN")):
            if pb.startswith(prefix):
                return f"BRAM:{name}"
        return "BRAM:CTRL"
    return f"{cls}:{pb}"
