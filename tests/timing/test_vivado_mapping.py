"""What makes the estimate unbiased on kabe's own Yosys netlists (docs/timing_model.md, "Why the
estimate was pessimistic on kabe's designs"): timing pressure (kabe.timing.pressure), a DSP48E1
register timed where Vivado packs it (kabe.timing.vivado_packing), narrow LUT cones timed as one
slice (kabe.timing.lut_cones), and the band's design-weighted quantiles. Hand-built netlists with
known answers; the hand-set RoutingModel or a model with one known pressure."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))

from test_estimator import CLOCKS, M, Net, lut_chain  # noqa: E402

from kabe.parsers import kabe_timing  # noqa: E402
from kabe.timing import estimate  # noqa: E402
from kabe.timing import pressure as P  # noqa: E402
from kabe.timing import validation as V  # noqa: E402
from kabe.timing.lut_cones import cone_delays  # noqa: E402
from kabe.timing.routing import RoutingModel  # noqa: E402
from kabe.timing.sta import PRESSURE_STEP, pressure_levels  # noqa: E402
from kabe.timing.vivado_packing import product_passed_through, vivado_parameters  # noqa: E402


@dataclasses.dataclass(frozen=True)
class PressedModel(RoutingModel):
    """The hand-set model (test_estimator's numbers: 300 ps a net, +100 per fanout doubling,
    +200 at a hard block) plus one known timing pressure."""
    base_ps: float = 300.0
    fanout_ps_per_doubling: float = 100.0
    hard_block_ps: float = 200.0
    k: float = 1.0
    floor: float = 0.72

    @property
    def pressure(self):
        return P.Pressure(self.k, self.floor)

    def pressure_factor(self, delay_ps, budget_ps):
        return self.pressure.factor(delay_ps / budget_ps)


# --- timing pressure -----------------------------------------------------------------------------

def test_pressure_factor():
    p = P.Pressure(1.0, 0.72)
    assert p.factor(0.5) == 1.0 and p.factor(1.0) == 1.0
    assert p.factor(1.25) == pytest.approx(0.8)
    assert p.factor(3.0) == 0.72  # the floor: far over its budget, Vivado cannot shorten it further
    assert P.Pressure.from_json(p.to_json()) == p and P.Pressure.from_json(None) is None


@pytest.mark.parametrize("k", [0.0, 0.3, 0.7, 1.0])
def test_pressure_never_turns_a_failing_path_into_a_passing_one(k):
    """With k <= 1 (the fit's grid) a path over its budget stays over it, whatever its logic share."""
    p = P.Pressure(k, 0.4)
    budget = 7.0
    for x in np.linspace(1.001, 3.0, 50):
        for logic_share in (0.0, 0.3, 0.8):
            d = x * budget
            logic, route = d * logic_share, d * (1 - logic_share)
            assert logic + route * p.factor(x) >= budget - 1e-9


def test_pressure_fit_recovers_a_known_pressure():
    rng = np.random.default_rng(7)
    true = P.Pressure(0.8, 0.7)
    pts = []
    for d in "ABCD":
        for _ in range(40):
            x = float(rng.uniform(0.6, 2.5))
            logic = float(rng.uniform(0.5, 3.0))
            route = x * 7.0 - logic
            pts.append((x, logic, route, logic + route * true.factor(x) * float(np.exp(rng.normal(0, 0.02))), d))
    got = P.fit(pts)
    assert got.k == pytest.approx(0.8, abs=0.1) and got.floor == pytest.approx(0.7, abs=0.03)
    assert got.designs == 4 and got.paths == sum(1 for p in pts if p[0] > 1)
    assert P.fit([p for p in pts if p[4] == "A"]) == P.NONE  # one design cannot tell pressure from pace


def test_pressure_levels_round_up():
    levels = pressure_levels(PressedModel(floor=0.72))
    assert levels[0] == 1.0 and levels[-1] == 0.72
    assert all(a - b <= PRESSURE_STEP + 1e-9 for a, b in zip(levels, levels[1:]))
    assert pressure_levels(M) == (1.0,)


def test_an_over_budget_path_is_timed_with_its_routing_pressed():
    rec, res = estimate(lut_chain(12), CLOCKS, PressedModel(), vivado_mapping=False)
    raw_route, logic = 12 * 300, 303 + 12 * 127        # RoutingModel: 300 ps per fanout-1 net
    x = (raw_route + logic) / 5000
    ep = res.endpoints[0]
    assert ep.pressure >= 1 / x and ep.pressure - 1 / x < PRESSURE_STEP  # rounded up, never down
    assert rec["critical_path"]["route_delay_ns"] == pytest.approx(raw_route * ep.pressure / 1000, abs=2e-3)
    assert rec["wns_ns"] < 0  # pressed, still failing: the gate's verdict is not turned
    assert rec["wns_ns"] > (5000 - raw_route - logic) / 1000  # ... but by less than as estimated
    cp = rec["critical_path"]
    assert sum(c["delay_ns"] for c in cp["cells"]) == pytest.approx(cp["delay_ns"], abs=2e-3)


def test_a_logic_heavy_path_can_overtake_the_pressed_one():
    """Two paths into one FF: a route-heavy one (worst as estimated) and a carry-heavy one.
    Pressure shortens routing only, so after it the carry path is the endpoint's worst."""
    net = Net()
    q1, q2 = net.bit(), net.bit()
    net.ff("a", net.bit(), q1)
    net.ff("b", net.bit(), q2)
    x = q1
    for i in range(11):  # route-heavy: 11 LUT1s, 11 nets
        y = net.bit()
        net.cell(f"l{i}", "LUT1", I0=("input", x), O=("output", y))
        x = y
    ci = net.bit()
    net.cell("l_s", "LUT1", I0=("input", q2), O=("output", ci))
    prev = None
    for k in range(34):  # carry-heavy: a 34-CARRY4 chain, dedicated links (5.43 ns against 5.54)
        co = [net.bit() for _ in range(4)]
        o = [net.bit() for _ in range(4)]
        net.cell(f"c{k}", "CARRY4", CI=("input", prev if prev is not None else "0"),
                 S=("input", [ci if k == 0 else "0", "0", "0", "0"]), CO=("output", co), O=("output", o))
        prev = co[3]
    z = net.bit()
    net.cell("join", "LUT2", I0=("input", x), I1=("input", prev), O=("output", z))
    net.ff("end", z, net.bit())
    raw, res_raw = estimate(net.json(), CLOCKS, M, vivado_mapping=False)
    pressed, res = estimate(net.json(), CLOCKS, PressedModel(floor=0.5), vivado_mapping=False)
    assert "LUT1" in [c["type"] for c in raw["critical_path"]["cells"][1:3]]      # route-heavy worst before
    assert "CARRY4" in [c["type"] for c in pressed["critical_path"]["cells"]]     # carry-heavy worst after
    assert pressed["wns_ns"] > raw["wns_ns"]


# --- narrow LUT cones ---------------------------------------------------------------------------

def _chain_of(n_inputs: int, levels: int):
    """FFs -> a chain of `levels` LUTs that together read `n_inputs` FFs -> FF."""
    net = Net()
    qs = [net.bit() for _ in range(n_inputs)]
    for i, q in enumerate(qs):
        net.ff(f"src{i}", net.bit(), q)
    per = [qs[i::levels] for i in range(levels)]  # each level reads its share of the inputs
    x = None
    for i in range(levels):
        ins = ([x] if x is not None else []) + per[i]
        y = net.bit()
        net.cell(f"lut{i}", f"LUT{len(ins)}", O=("output", y), **{f"I{j}": ("input", b) for j, b in enumerate(ins)})
        x = y
    net.ff("dst", x, net.bit())
    return net.json()


@pytest.mark.parametrize("n, shape", [(4, "LUT6"), (7, "LUT6+MUXF7"), (8, "LUT6+MUXF7+MUXF8")])
def test_a_narrow_chain_is_timed_as_one_slice(n, shape):
    nl = _chain_of(n, 4)
    yosys, _ = estimate(nl, CLOCKS, M, vivado_mapping=False)
    vivado, res = estimate(nl, CLOCKS, M)
    cp = vivado["critical_path"]
    assert [c["type"] for c in cp["cells"]] == ["FDRE", shape, "FDRE"]
    # clk->Q, one routed net into the slice, its LUT6 (+ MUXF7 (+ MUXF8)), the FF beside it (0 ps)
    assert cp["delay_ns"] == pytest.approx((303 + 300 + cone_delays(M)[max(6, n)]) / 1000, abs=1e-3)
    assert vivado["wns_ns"] > yosys["wns_ns"]
    assert res.mapped["narrow_cones"] >= 1 and res.as_yosys_mapped is not None
    # the band's pessimistic end covers the chain as Yosys mapped it
    assert vivado["band"] is None or vivado["band"]["wns_ns"][0] <= yosys["wns_ns"]


def test_a_wide_chain_keeps_its_levels():
    nl = _chain_of(15, 3)  # 5 new inputs a level: every LUT past the first reads more than a slice's 8
    yosys, _ = estimate(nl, CLOCKS, M, vivado_mapping=False)
    vivado, res = estimate(nl, CLOCKS, M)
    assert vivado["critical_path"]["delay_ns"] == yosys["critical_path"]["delay_ns"]
    assert vivado["critical_path"]["logic_levels"] == 3 and res.mapped["narrow_cones"] == 0


def test_cones_stop_at_registers_and_carry():
    """A LUT after a CARRY4 has the CARRY4's output as an input, not what feeds the carry."""
    net = Net()
    q = [net.bit() for _ in range(3)]
    for i, b in enumerate(q):
        net.ff(f"f{i}", net.bit(), b)
    co, o = [net.bit() for _ in range(4)], [net.bit() for _ in range(4)]
    s0 = net.bit()
    net.cell("l0", "LUT2", I0=("input", q[0]), I1=("input", q[1]), O=("output", s0))
    net.cell("c", "CARRY4", CI=("input", "0"), S=("input", [s0, "0", "0", "0"]), CO=("output", co), O=("output", o))
    a, b = net.bit(), net.bit()
    net.cell("l1", "LUT2", I0=("input", o[0]), I1=("input", q[2]), O=("output", a))
    net.cell("l2", "LUT1", I0=("input", a), O=("output", b))
    net.ff("dst", b, net.bit())
    rec, res = estimate(net.json(), CLOCKS, M)
    types = [c["type"] for c in rec["critical_path"]["cells"]]
    assert "CARRY4" in types and types[-2] == "LUT6"  # l1+l2 collapsed; the carry stays


# --- DSP48E1 register packing --------------------------------------------------------------------

def _dsp(opmode: str, mreg=1, preg=0, **extra):
    conns = {"OPMODE": list(reversed(opmode)), "ALUMODE": ["0"] * 4, "CARRYIN": ["0"], "CARRYINSEL": ["0"] * 3}
    conns.update(extra)
    return {"type": "DSP48E1", "parameters": {"MREG": f"{mreg:032b}", "PREG": f"{preg:032b}", "USE_MULT": "MULTIPLY"},
            "connections": conns}


def test_which_dsp_is_packed_as_vivado_would():
    assert product_passed_through(_dsp("0000101"))                      # P = M: register at P
    assert vivado_parameters(_dsp("0000101"))["PREG"] == 1
    assert not product_passed_through(_dsp("0010101"))                  # P = PCIN + M: keeps MREG
    assert not product_passed_through(_dsp("0110101"))                  # P = C + M
    assert not product_passed_through(_dsp("0000101", preg=1))          # already at P
    assert not product_passed_through(_dsp("0000101", mreg=0))
    assert not product_passed_through(_dsp("0000101", CARRYIN=[7]))     # a carry from a net
    assert not product_passed_through({**_dsp("0000101"), "connections": {"OPMODE": [5, "0", "1", "0", "0", "0", "0"]}})
    assert vivado_parameters({"type": "LUT2", "parameters": {}, "connections": {}}) is None


def test_a_cascade_from_a_pass_through_dsp_launches_at_p():
    """d0 registers its product in M and passes it to PCOUT; d1 adds PCIN to its own product.
    Vivado puts d0's register at P: the launch is clock->PCOUT of a P register (prjxray 435 ps),
    not clock->M->ALU->PCOUT (1819 ps). d1 keeps its M register (its ALU adds PCIN)."""
    net = Net()
    pc = [net.bit() for _ in range(48)]
    p = [net.bit() for _ in range(4)]
    a0, a1 = [net.bit() for _ in range(2)], [net.bit() for _ in range(2)]
    for i, b in enumerate(a0 + a1):
        net.ff(f"fa{i}", net.bit(), b)
    params = {"AREG": 0, "BREG": 0, "CREG": 0, "DREG": 0, "ADREG": 0, "MREG": 1, "PREG": 0, "USE_MULT": "MULTIPLY",
              "USE_DPORT": "FALSE", **{k: 0 for k in ("INMODEREG", "OPMODEREG", "ALUMODEREG", "CARRYINREG",
                                                     "CARRYINSELREG")}}  # as Yosys writes them: all set
    consts = lambda op: {"OPMODE": ("input", list(reversed(op))), "ALUMODE": ("input", ["0"] * 4),  # noqa: E731
                         "CARRYIN": ("input", "0"), "CARRYINSEL": ("input", ["0"] * 3)}
    net.cell("d0", "DSP48E1", params, CLK=("input", 2), A=("input", a0), PCOUT=("output", pc), **consts("0000101"))
    net.cell("d1", "DSP48E1", params, CLK=("input", 2), A=("input", a1), PCIN=("input", pc), P=("output", p),
             **consts("0010101"))
    net.ff("fp", p[0], net.bit())
    _, yosys = estimate(net.json(), CLOCKS, M, vivado_mapping=False)
    _, vivado = estimate(net.json(), CLOCKS, M)
    assert vivado.mapped["dsp_registers"] == 1 and yosys.mapped["dsp_registers"] == 0
    into_fp = lambda res: next(e for e in res.endpoints if e.cell == "fp")  # noqa: E731
    assert into_fp(yosys).arrival_ps == pytest.approx(1819 + 1107 + 500)
    # Vivado's netlist: the worst into fp is d1's own M register -> P (1671) or d0's P -> PCIN -> P (435 + 1107)
    assert into_fp(vivado).arrival_ps == pytest.approx(max(1671, 435 + 1107) + 500)
    # ... and the multiplier's delay moves in front of d0's P register: A -> P setup (prjxray 2739)
    into_a = next(e for e in vivado.endpoints if e.cell == "d0" and e.pin.startswith("A"))
    assert into_a.required_ps == pytest.approx(5000 - 2739)


def test_the_band_reaches_down_to_yosys_mapping_with_the_fitted_model(tmp_path):
    nl = _chain_of(8, 5)
    rpt = tmp_path / "t.rpt"
    yosys, _ = estimate(nl, CLOCKS, vivado_mapping=False)
    rec, res = estimate(nl, CLOCKS, report=rpt, design="chain")
    assert rec["band"]["wns_ns"][0] <= min(rec["wns_ns"], yosys["band"]["wns_ns"][0]) + 1e-3
    text = rpt.read_text()
    assert "Mapped as Vivado would: 0 DSP48E1 register(s)" in text and "narrow LUT cone(s)" in text
    assert "The low end also covers the netlist exactly as Yosys mapped it" in text
    assert "Timing pressure: " in text
    assert kabe_timing.parse(rpt) == rec
