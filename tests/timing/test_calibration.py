"""The estimator's calibration (issue 14): Vivado paths as samples, the shared delay vocabulary,
the fit (recovering a model that generated the data), leave-one-design-out, the band, the
committed constants, and scripts/calibrate_timing.py on stand-in and (when present) real reports.

Stand-in reports are written by tests/timing/vivado_path_text.py in Vivado's layout (Vivado is not
on these machines). The real corpus is ../shared/fixtures/vivado-routed-paths beside the checkout
(KABE_SHARED points elsewhere); its tests skip when it is absent.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import math
import os
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))

from vivado_path_text import path_block, report  # noqa: E402

from kabe.parsers.vivado_timing_paths import parse  # noqa: E402
from kabe.timing import fit as F  # noqa: E402
from kabe.timing import validation as V  # noqa: E402
from kabe.timing.calibration_data import PathSample, sample, scope_of  # noqa: E402
from kabe.timing.delay_classes import arc_key, dedicated, fanout_bucket, net_class  # noqa: E402
from kabe.timing.fitted import Band, ClockLaw, FittedModel, load  # noqa: E402
from kabe.timing.pressure import Pressure  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("KABE_SHARED_DIR") or os.environ.get("KABE_SHARED") or REPO.parent / "shared")
CORPUS = SHARED / "fixtures" / "vivado-routed-paths"
_spec = importlib.util.spec_from_file_location("calibrate_timing", REPO / "scripts" / "calibrate_timing.py")
script = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(script)

ROWS = [("cell", "SLICE_X1Y1", "FDRE", "Prop_fdre_C_Q", 0.456, "u/a_reg/Q"),
        ("net", 3, 0.812, "u/a"),
        ("cell", "SLICE_X2Y1", "LUT6", "Prop_lut6_I2_O", 0.124, "u/l1/O"),
        ("net", 1, 0.000, "u/l1_n"),
        ("cell", "SLICE_X2Y1", "CARRY4", "Prop_carry4_S[0]_CO[3]", 0.532, "u/c0/CO[3]"),
        ("net", 1, 0.000, "u/c0_n"),
        ("cell", "SLICE_X2Y2", "CARRY4", "Prop_carry4_CI_O[2]", 0.239, "u/c1/O[2]"),
        ("net", 1, 0.403, "u/s2"),
        ("end", "SLICE_X3Y2", "FDRE", "u/b_reg/D")]


def one(text: str, **kw):
    return sample(parse(text)[0], design="d", file="f.rpt", **kw)


# --- Vivado paths as samples -------------------------------------------------------------

def test_sample_keeps_what_a_netlist_knows():
    s = one(report(path_block(ROWS)))
    assert isinstance(s, PathSample)
    assert s.delay_ns == pytest.approx(2.566)
    assert [c[:3] for c in s.cells] == [("FDRE", "C", "Q"), ("LUT6", "I2", "O"), ("CARRY4", "S[0]", "CO[3]"),
                                        ("CARRY4", "CI", "O[2]")]
    assert s.nets == [("FDRE", "Q", "LUT6", "I2", 3, 0.812), ("LUT6", "O", "CARRY4", "S[0]", 1, 0.0),
                      ("CARRY4", "CO[3]", "CARRY4", "CI", 1, 0.0), ("CARRY4", "O[2]", "FDRE", "D", 1, 0.403)]
    assert s.end == ("FDRE", "D")
    # slack = requirement - delay + skew - uncertainty - setup, each as the block printed it
    assert s.setup_ns == pytest.approx(0.060, abs=2e-3)
    assert s.clock_ns == pytest.approx(-0.030 - 0.111)


@pytest.mark.parametrize("kw, rows, why", [
    ({"exception": "MaxDelay Path 1000.000ns -datapath_only"}, ROWS, "timing exception"),
    ({"path_type": "Hold (Min at Fast Process Corner)"}, ROWS, "not a slow-corner setup path"),
    ({}, ROWS[:2] + [("cell", "PS7_X0Y0", "PS7", "Prop_ps7_MAXIGP0ACLK_MAXIGP0ARADDR[3]", 1.0, "ps/x")]
     + ROWS[3:], "cell outside the model (PS7)"),
    ({}, ROWS[:1] + [("net", 3, 0.812, "u/a", ", estimated")] + ROWS[2:], "net not routed"),
    ({}, ROWS[:-1] + [("end", "SLICE_X3Y2", "ODDR", "u/o_reg/D1")], "ends outside the model (ODDR)"),
    ({}, ROWS[:2] + [("net", 1, 0.1, "u/b")] + ROWS[2:], "two net rows in a row (a layout this reader does not know)"),
])
def test_paths_the_estimator_does_not_time_are_left_out(kw, rows, why):
    assert one(report(path_block(rows, **kw))) == why


@pytest.mark.parametrize("device, speed, scope", [
    ("7z020-clg400", "-1", "-1 Artix-class"), ("7a35ti-csg324", "-1L", "-1 Artix-class"),
    ("7s50-csga324", "-1", "-1 Artix-class"), ("7a100t-fgg484", "-2", "-2 Artix-class"),
    ("7k325t-ffg900", "-2", "-2 Kintex/Virtex-class"), ("7z045-ffg900", "-2", "-2 Kintex/Virtex-class"),
])
def test_scope_from_the_report_header(device, speed, scope):
    assert scope_of(device, speed) == scope


# --- the shared vocabulary -------------------------------------------------------------------

def test_dedicated_connections():
    assert dedicated("LUT6", "O", "CARRY4", "S", 3)        # S only from the slice's own LUTs
    assert not dedicated("LUT6", "O", "CARRY4", "DI", 1)   # DI also through the bypass: routed
    assert dedicated("CARRY4", "CO", "CARRY4", "CI", 1)
    assert dedicated("LUT6", "O", "MUXF7", "I1", 1) and not dedicated("LUT6", "O", "MUXF7", "S", 1)
    assert dedicated("DSP48E1", "PCOUT", "DSP48E1", "PCIN", 1)
    assert net_class("LUT6", "O", "CARRY4", "S", 1) is None
    assert net_class("LUT3", "O", "FDRE", "D", 1) == ("SLICE->FF", "FF.D", "1")
    assert net_class("LUT3", "O", "FDRE", "D", 2) == ("LUT", "FF.D", "2")
    # an SRL is a SLICEM LUT: its output feeds its own slice's flip-flop like a LUT's (Vivado: 0.000)
    assert net_class("SRL16E", "Q", "FDRE", "D", 1) == ("SLICE->FF", "FF.D", "1")
    assert net_class("FDRE", "Q", "FDRE", "D", 1) == ("FF", "FF.D", "1")  # a flip-flop's Q leaves the slice
    assert net_class("FDRE", "Q", "FDRE", "CE", 40) == ("FF", "FF.CTRL", "17-64")
    assert [fanout_bucket(f) for f in (1, 2, 3, 4, 5, 8, 9, 16, 17, 64, 65, 5000)] == \
        ["1", "2", "3-4", "3-4", "5-8", "5-8", "9-16", "9-16", "17-64", "17-64", "65+", "65+"]


def test_arc_keys_name_yosys_and_vivado_cells_alike():
    assert arc_key("LUT6", "I0", "O") == arc_key("LUT6", "I5", "O") == "LUT6:I->O"
    assert arc_key("INV", "I", "O") == "LUT1:I->O"
    assert arc_key("RAMD32", "RADR0", "O") == arc_key("RAM32M", "ADDRA", "DOA") == "LUTRAM:ADDR->O"
    assert arc_key("RAMB36E1", "CLKARDCLK", "DOADO[3]") == arc_key("RAMB18E1", "CLKBWRCLK", "DOBDO") \
        == "RAMB:CLK->DO"
    assert arc_key("CARRY4", "S[0]", "CO[3]") == arc_key("CARRY4", "S", "CO") == "CARRY4:S->CO"


def test_prjxray_arc_for_a_vivado_row():
    assert F.prjxray_ps("CARRY4", "S[0]", "CO[3]") == 508
    assert F.prjxray_ps("LUT6", "I0", "O") == 642
    assert F.prjxray_ps("RAMB36E1", "CLKBWRCLK", "DOBDO[3]", 882) == 882    # DO_REG=1
    assert F.prjxray_ps("RAMB36E1", "CLKARDCLK", "DOADO[3]", 2454) == 2454  # no DO_REG
    assert F.prjxray_ps("DSP48E1", "A[3]", "P[10]", 3900) == 2823           # default: multiply, no D
    assert F.prjxray_ps("DSP48E1", "C[1]", "PCOUT[47]") == 1474
    assert F.prjxray_ps("RAMD32", "RADR1", "O") == 631


# --- the fitted model's lookups ----------------------------------------------------------------

def small_model(**kw) -> FittedModel:
    e = lambda v, **x: {"value": v, "rows": 9, "designs": 2, **x}  # noqa: E731
    return FittedModel(
        cells={"LUT6:I->O": e(180, mode="mean"), "LUT:*": e(175, mode="mean"),
               "CARRY4:S->CO": e(1.1, mode="ratio"), "FF:*": e(470, mode="mean")},
        nets={"fanout_law": {"intercept": e(600), "per_doubling": e(100)},
              "driver": {"LUT": e(0), "FF": e(200)}, "sink": {"LUT": e(0), "BRAM": e(-5000)},
              "slice_packed": e(120)},
        setup={"FF:D": e(50)}, clock_ps_value=-150.0, band=Band(0.8, 1.5), **kw)


def test_fitted_lookups():
    m = small_model()
    assert m.cell_ps("LUT6", "I3", "O", 642) == 180            # mean: the prjxray pin no longer matters
    assert m.cell_ps("LUT2", "I0", "O", 238) == 175            # class fallback
    assert m.cell_ps("CARRY4", "S", "CO", 508) == pytest.approx(558.8)  # ratio keeps prjxray's shape
    assert m.cell_ps("FDCE", "C", "Q", 303) == 470
    assert m.cell_ps("RAM64M", "ADDRA", "DOA", 642) == 180     # a LUTRAM read is a LUT6 read
    assert m.cell_ps("DSP48E1", "A", "P", 2823) == 2823        # nothing fitted: prjxray
    assert m.net_ps("FDRE", "Q", "LUT6", "I1", 12) == pytest.approx(600 + 100 * math.log2(12) + 200)
    assert m.net_ps("LUT6", "O", "LUT6", "I1", 1) == 600                 # one sink: the intercept alone
    assert m.net_ps("LUT6", "O", "LUT6", "I1", 1024) == 600 + 100 * 10    # 10 doublings
    assert m.net_ps("LUT6", "O", "CARRY4", "S", 1) == 0.0
    assert m.net_ps("LUT6", "O", "FDRE", "D", 1) == 120
    assert m.net_ps("LUT6", "O", "RAMB36E1", "ADDRARDADDR", 1) == 0.0  # never negative
    assert m.setup_ps("FDRE", "D", 0) == 50 and m.setup_ps("FDRE", "CE", 109) == 109
    assert m.clock_uncertainty_ps == 150.0
    assert m.band.delay_ns(2.0, 4.0) == (2.0 + 3.2, 2.0 + 6.0)


# --- the fit, on data a known model generated --------------------------------------------------

TRUE_LAW = {"intercept": 550.0, "per_doubling": 120.0}  # base = intercept + per_doubling x log2(fanout)
TRUE_DRIVER = {"LUT": 0.0, "FF": 250.0}
TRUE_SINK = {"LUT": 0.0, "FF.D": 150.0}
TRUE_PACE = {"A": 0.8, "B": 0.9, "C": 1.0, "D": 1.1, "E": 1.2}


def synthetic(rng, noise=0.0, per_design=60, paces=TRUE_PACE):
    """Paths FF -> LUT6 x k -> FF drawn from a known model, each design at its own pace."""
    out = []
    fos = [1, 2, 3, 6, 12, 40, 100]
    for d, pace in paces.items():
        for _ in range(per_design):
            k = int(rng.integers(1, 5))
            cells = [("FDRE", "C", "Q", 0.46)] + [("LUT6", "I0", "O", 0.18)] * k
            types = ["FDRE"] + ["LUT6"] * k + ["FDRE"]
            nets = []
            for i in range(k + 1):
                fo = int(rng.choice(fos))
                drv, snk = types[i], types[i + 1]
                nc = net_class(drv, "O" if drv == "LUT6" else "Q", snk, "I0" if snk == "LUT6" else "D", fo)
                true = 0.0 if nc[0] == "SLICE->FF" else \
                    (TRUE_LAW["intercept"] + TRUE_LAW["per_doubling"] * math.log2(fo)
                     + TRUE_DRIVER[nc[0]] + TRUE_SINK[nc[1]]) * pace
                true *= float(np.exp(rng.normal(0, noise))) if noise else 1.0
                nets.append((drv, "O" if drv == "LUT6" else "Q", snk, "I0" if snk == "LUT6" else "D", fo,
                             round(true / 1000 + rng.uniform(0, 1e-6), 7)))
            delay = sum(c[3] for c in cells) + sum(n[5] for n in nets)
            out.append(PathSample(design=d, file=f"{d}.rpt", delay_ns=delay, requirement_ns=10.0,
                                  slack_ns=10.0 - delay, clock_ns=-0.15, setup_ns=0.05, cells=cells,
                                  nets=nets, end=("FDRE", "D")))
    return out


def test_fit_recovers_the_model_that_made_the_data():
    m = F.fit(synthetic(np.random.default_rng(1)))
    for c, v in TRUE_LAW.items():
        assert m.nets["fanout_law"][c]["value"] == pytest.approx(v, rel=0.03), c
    assert m.nets["driver"]["FF"]["value"] == pytest.approx(250, abs=25)
    assert m.nets["sink"]["FF.D"]["value"] == pytest.approx(150, abs=25)
    for d, p in TRUE_PACE.items():  # pulled a little towards 1 by the prior (PACE_PRIOR_ROWS)
        assert m.nets["pace"][d] == pytest.approx(p, rel=0.05)
    assert sorted(TRUE_PACE, key=m.nets["pace"].get) == sorted(TRUE_PACE, key=TRUE_PACE.get)
    assert m.cells["LUT6:I->O"]["value"] == pytest.approx(180) and m.cells["FDRE:C->Q"]["value"] == pytest.approx(460)
    assert m.setup["FF:D"]["value"] == pytest.approx(50) and m.clock_ps_value == pytest.approx(-150)


def test_the_fanout_law_never_makes_a_net_with_more_sinks_faster():
    """Data whose nets get faster with fanout (a noisy corpus can say so) fit a slope of 0, the
    intercept and the other terms solved again without it, never a negative slope."""
    global TRUE_LAW
    saved, TRUE_LAW = TRUE_LAW, {"intercept": 900.0, "per_doubling": -60.0}
    try:
        m = F.fit(synthetic(np.random.default_rng(2)))
    finally:
        TRUE_LAW = saved
    law = m.nets["fanout_law"]
    assert law["per_doubling"]["value"] == 0.0
    assert 600 < law["intercept"]["value"] < 900  # the mean over fanouts 1..100 of 900 - 60 log2(fo)
    assert m.net_ps("LUT6", "O", "LUT6", "I0", 100) == m.net_ps("LUT6", "O", "LUT6", "I0", 1)


def test_leave_one_design_out_never_trains_on_the_design_it_scores(monkeypatch):
    samples = synthetic(np.random.default_rng(3), per_design=15)
    seen = []
    real_fit = V.fit_plain

    def spy(train, *a, **k):
        seen.append(frozenset(s.design for s in train))
        return real_fit(train, *a, **k)

    monkeypatch.setattr(V, "fit_plain", spy)
    out = V.leave_one_design_out(samples, nested_band=False)
    assert len(out) == len(samples)
    # every design's own fit, and (for pressure's held-out points) every fit without it and one more
    everyone = frozenset(TRUE_PACE)
    assert {everyone - {d} for d in TRUE_PACE} <= set(seen)
    assert all(1 <= len(everyone - t) <= 2 for t in seen) and len(seen) == len(set(seen))  # each once
    # the held-out design's own delays cannot move its estimate (nets, pressure and clock law alike)
    slowed = [PathSample(**{**s.__dict__, "nets": [(*n[:5], n[5] * 3) for n in s.nets]}) if s.design == "E"
              else s for s in samples]
    a = {id(o.sample): o.delay_ns for o in out if o.sample.design == "E"}
    b = [o.delay_ns for o in V.leave_one_design_out(slowed, nested_band=False) if o.sample.design == "E"]
    assert sorted(a.values()) == pytest.approx(sorted(b))


def test_an_extra_design_never_calibrates_its_own_estimate():
    """A design of the other corpora (never in the net fit) still calibrates pressure and the clock
    law: its own estimate comes from the calibration without it."""
    samples = synthetic(np.random.default_rng(3), per_design=15)
    base = [s for s in samples if s.design not in ("D", "E")]

    def tight(ss, slow=0.6):  # over budget, routed short: they make timing pressure when they are seen
        return [PathSample(**{**s.__dict__, "nets": [(*n[:5], n[5] * slow) for n in s.nets],
                              "requirement_ns": s.delay_ns * 0.6,
                              "delay_ns": s.delay_ns - (1 - slow) * sum(n[5] for n in s.nets)}) for s in ss]

    def held_e(e_samples):
        extra = e_samples + tight([s for s in samples if s.design == "D"])  # pressure needs 2 designs
        out = V.leave_one_design_out(base, nested_band=False, extra=extra)
        return sorted(o.delay_ns for o in out if o.sample.design == "E")

    e = [s for s in samples if s.design == "E"]
    assert held_e(tight(e, slow=0.4)) == pytest.approx(held_e(tight(e, slow=0.8)))


def _law_points(law_a: float, law_b: float, budgets, rng, odd=None):
    """Held-out points (x, logic, route, Vivado, design, budget) of designs whose routing comes
    out at e^a B^b of the estimate (x <= 1: within budget)."""
    pts = []
    for k, b in enumerate(budgets):
        f = math.exp(law_a + law_b * math.log(b)) * (odd if k == 0 and odd else 1.0)
        for _ in range(4):
            route = rng.uniform(1.0, 3.0)
            pts.append((0.5, 1.0, route, 1.0 + route * f * rng.uniform(0.97, 1.03), f"D{k}", b))
    return pts


def test_clock_law_recovers_a_known_law_and_one_odd_design_does_not_tilt_it():
    rng = np.random.default_rng(7)
    budgets = np.geomspace(2.5, 100, 30)
    law = F.fit_clock_law(_law_points(-0.45, 0.2, budgets, rng, odd=5.0))  # one design 5x slower
    assert law.designs == 30 and law.b == pytest.approx(0.2, abs=0.03) and law.a == pytest.approx(-0.45, abs=0.1)
    assert law.factor(2.5) == pytest.approx(math.exp(-0.45 + 0.2 * math.log(2.5)), rel=0.05)
    assert law.factor(50.0) == 1.0 and law.factor(-1.0) == 1.0  # capped: slow clocks are the band's
    # too few designs to tell a slope from noise, or routing not shorter at tighter clocks: no law
    assert F.fit_clock_law(_law_points(-0.45, 0.2, budgets[:F.MIN_LAW_DESIGNS - 1], rng)) is None
    assert F.fit_clock_law(_law_points(0.3, -0.1, budgets, rng)) is None


def test_clock_law_shortens_routing_at_a_tight_clock_never_under_the_floor():
    law = ClockLaw(-0.44, 0.184)
    m = FittedModel(pressure=Pressure(1.0, 0.76), clock_law=law)
    assert law.full_at_ns == pytest.approx(math.exp(0.44 / 0.184))
    assert m.pressure_factor(5000, 7000) == pytest.approx(law.factor(7.0)) and law.factor(7.0) < 1
    assert m.pressure_factor(5000, 20000) == 1.0  # a path that fits a slow clock: as estimated
    assert m.pressure_factor(9000, 7000) == pytest.approx(max(0.76, law.factor(7.0) * 7 / 9))
    assert m.pressure_factor(30000, 3000) == 0.76  # far over a tight budget: the floor, as sta times it
    assert FittedModel(clock_law=law).pressure_factor(5000, 7000) == 1.0  # without pressure, no law either
    assert FittedModel.from_json({"cells": {}, "nets": {}, "clock_law": law.to_json(),
                                  "pressure": Pressure(1.0, 0.76).to_json()}).clock_law == \
        ClockLaw(round(law.a, 4), round(law.b, 4))


def test_band_covers_about_its_share_of_held_out_paths():
    # 12 designs: each held-out design's band is calibrated on 11, enough (conformal.MIN_DESIGNS)
    # for its class to have a band of its own rather than the pooled wide one
    paces = {c: p for c, p in zip("ABCDEFGHIJKL", (0.85, 0.9, 0.92, 0.95, 0.98, 1.0, 1.0, 1.02, 1.05, 1.08, 1.1, 1.15))}
    samples = synthetic(np.random.default_rng(4), noise=0.25, per_design=20, paces=paces)
    out = V.leave_one_design_out(samples)
    m = V.metrics(out)
    assert 65 <= m["band_contains_pct"] <= 92
    assert abs(m["median_error_pct"]) < 5


def test_metrics_and_table():
    s = synthetic(np.random.default_rng(5), per_design=3)[0]
    o = V.Outcome(s, F.Prediction(s.delay_ns * 0.9, -1.0, 0.5, s.delay_ns * 0.9 - 0.5), Band(0.5, 2.0))
    m = V.metrics([o])
    assert m["median_error_pct"] == pytest.approx(-10.0) and m["too_low_pct"] == 100.0
    assert m["band_contains_pct"] == 100.0 and m["slack_sign_right_pct"] == 0.0
    t = V.table([("x", m)])
    assert t.splitlines()[0].startswith("| set | designs | paths | median error") and "| x | 1 | 1 | -10.0 %" in t



def test_error_breakdown_puts_every_path_in_one_class_per_axis():
    """scripts/calibrate_timing.py's breakdown (where the error comes from): each path in exactly
    one class of each axis, the classes what the path is."""
    s = synthetic(np.random.default_rng(6), per_design=4)
    s[0] = dataclasses.replace(s[0], device="xc7z020clg400-1", requirement_ns=20.0,
                               end=("FDRE", "CE"), nets=[(*n[:4], 300, n[5]) for n in s[0].nets])
    c = V.path_classes(s[0])
    assert c["largest fanout"] == "256+" and c["requirement ns"] == ">= 20" and c["endpoint"] == "FF CE/R/S"
    assert c["device"] == "Zynq-7000 7z020" and c["startpoint"] == "FF" and c["CARRY4s"] == "0"
    assert c["logic levels"] == V._bin("logic levels", len(s[0].cells) - 1)
    assert V.device_family("xc7a35tcpg236-1") == "Artix-7 7a35" and V.device_family("") == "?"
    outs = [V.Outcome(x, F.Prediction(x.delay_ns, 1.0, 0.5, x.delay_ns - 0.5), None) for x in s]
    rows = V.by_class(outs)
    for axis in c:
        assert sum(m["paths"] for label, m in rows if label.startswith(axis + ": ")) == len(s), axis
    assert rows[0][0].startswith("logic levels: ")


# --- the committed model -----------------------------------------------------------------------

def test_committed_constants_carry_their_provenance():
    m = load()
    prov = m.provenance
    assert prov["command"] == "python scripts/calibrate_timing.py --write"
    assert prov["files"] and all(len(h) == 16 for h in prov["files"].values())
    assert prov["validation"]["paths"] > 0 and prov["validation"]["designs"] >= 3
    assert m.band is not None and m.band.lo < 1.0 < m.band.hi
    for table in (m.cells, m.setup, m.nets["fanout_law"], m.nets["driver"], m.nets["sink"]):
        for key, e in table.items():
            assert e.get("reference") or (e["rows"] >= 1 and e["designs"] >= 1), key
    assert m.nets["dedicated_check"]["zero_in_vivado"] <= m.nets["dedicated_check"]["rows"]
    text = (REPO / "kabe" / "timing" / "fitted_constants.py").read_text()
    assert text.startswith('"""GENERATED by `python scripts/calibrate_timing.py --write`')


# --- the script -------------------------------------------------------------------------------

def _stand_in_corpus(folder: Path) -> None:
    for k, (design, scale) in enumerate((("alpha", 1.0), ("beta", 1.2), ("gamma", 0.9), ("delta", 1.05))):
        rows = [r if r[0] != "net" else (r[0], r[1], round(r[2] * scale, 3), r[3]) for r in ROWS]
        (folder / f"{design}_run.rpt").write_text(report(path_block(rows), *(path_block(rows[:2] + [
            ("cell", "SLICE_X2Y1", "LUT5", "Prop_lut5_I1_O", 0.15, "u/l5/O"), ("net", fo, 0.9 * scale, "u/z"),
            ("end", "SLICE_X4Y2", "FDRE", "u/z_reg/CE")]) for fo in (12, 30))))
    (folder / "kintex_run.rpt").write_text(report(path_block(ROWS), device="7k325t-ffg900", speed="-2"))


def test_evaluate_any_folder_prints_the_table(tmp_path, capsys):
    _stand_in_corpus(tmp_path)
    assert script.main(["--evaluate", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "| -1 Artix-class (the model's scope) | 4 | 12 |" in out
    assert "|   alpha | 1 | 3 |" in out
    assert "-2 Kintex/Virtex-class (out of scope, for information) | 1 | 1 |" in out
    assert script.main(["--evaluate", str(tmp_path), "--hand-model"]) == 0  # the model it replaced
    out = capsys.readouterr().out
    assert "hand-set RoutingModel" in out and "| -1 Artix-class (the model's scope) | 4 | 12 |" in out


def test_evaluate_refuses_a_folder_without_paths(tmp_path, capsys):
    (tmp_path / "notes.rpt").write_text("nothing here\n")
    assert script.main(["--evaluate", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(tmp_path) in err
    assert script.main(["--evaluate", str(tmp_path / "absent")]) == 2


def test_evaluate_says_why_when_every_path_is_left_out(tmp_path, capsys):
    """Paths there, none the model's (hold paths here): the intake with its reasons, not 'no path'."""
    (tmp_path / "hold_only.rpt").write_text(report(*(path_block(ROWS, path_type="Hold (Min at Fast Process Corner)")
                                                     for _ in range(2))))
    assert script.main(["--evaluate", str(tmp_path)]) == 2
    out, err = capsys.readouterr()
    assert "left out:" in out and "not a slow-corner setup path" in out
    assert "every path was left out (reasons above)" in err


def test_fit_on_a_stand_in_corpus_and_a_missing_one(tmp_path, capsys):
    _stand_in_corpus(tmp_path)
    text, outcomes, model = script.generate(tmp_path, quiet=True)
    assert {o.sample.design for o in outcomes} == {"alpha", "beta", "gamma", "delta"}
    assert "MODEL = {" in text and "'command': 'python scripts/calibrate_timing.py --write'" in text
    assert script.main(["--corpus", str(tmp_path / "absent")]) == 0
    assert "nothing to fit" in capsys.readouterr().out


ROUTED_MORE = SHARED / "routed-more"


@pytest.mark.skipif(not (CORPUS.is_dir() and ROUTED_MORE.is_dir()),
                    reason=f"shared fixtures not available: the calibration corpus {CORPUS} or {ROUTED_MORE} is absent")
def test_committed_model_is_what_the_corpus_gives():
    """The constants module is generated, not edited: the script reproduces it byte for byte from
    the corpora it names (the shared corpus and ../shared/routed-more; about a minute)."""
    corpora = [CORPUS, ROUTED_MORE]
    assert load().provenance["corpora"] == ["../shared/fixtures/vivado-routed-paths", "../shared/routed-more"]
    text, outcomes, _ = script.generate(corpora, quiet=True)
    assert text == (REPO / "kabe" / "timing" / "fitted_constants.py").read_text()
    m = V.metrics(outcomes)
    assert m == {k: v for k, v in load().provenance["validation"].items() if k in m}


def test_committed_band_is_at_the_configured_coverage():
    """[tool.kabe] timing_band_coverage is the band's nominal coverage: changing it means
    regenerating the constants (`--write`), which this catches when forgotten."""
    from kabe.project import config
    b = load().band
    assert b.coverage == pytest.approx(config.value(config.load(), "timing_band_coverage"))
    assert set(b.classes) == {"high-fanout", "slow-clock", "bram-dsp", "long-chain", "default"}
    assert b.outside is not None
    assert b.outside[0] <= b.lo < 1.0 < b.hi <= b.outside[1]


def test_a_repository_in_two_corpora_is_one_design_and_a_file_read_twice_counts_once(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    _stand_in_corpus(a)
    for f in a.glob("*.rpt"):
        (b / f"copy_{f.name}").write_bytes(f.read_bytes())  # the same bytes under another name
    (b / "alpha_again.rpt").write_text(report(path_block(ROWS[:-1] + [("end", "SLICE_X9Y9", "FDRE", "u/q_reg/D")])))
    src = "| file | repo |\n|---|---|\n| `{}` | [owner/alpha](https://github.com/owner/alpha) |\n"
    (a / "SOURCES.md").write_text(src.format("alpha_run.rpt"))
    (b / "SOURCES.md").write_text(src.format("alpha_again.rpt"))
    samples, left_out, digests, _ = script.read_corpora([a, b])
    assert left_out["file already read from another corpus"] == 5
    assert {s.design for s in samples if s.file == "alpha_again.rpt"} == {"owner/alpha"}
    assert len({s.design for s in samples if s.scope == "-1 Artix-class"}) == 4
    assert all(k.startswith(str(a)) or k.startswith(str(b)) for k in digests)


MORE = SHARED / "fixtures" / "vivado-reports-more"
DSP_CHECK = ("redpitaya-schusterlab-timing-routed.rpt", "mdc-ntt-timing-fail.rpt")


@pytest.mark.skipif(not all((MORE / f).is_file() for f in DSP_CHECK), reason=f"shared fixtures not available: {MORE} is absent")
def test_dsp_ratio_holds_on_designs_outside_the_corpus():
    """The corpus has DSP48E1 rows from one -1 design, so its DSP ratio to prjxray (1.378) is
    checked on two other -1 Artix-class designs' reports (cell delays do not depend on placement):
    every DSP arc in them within 5 % of it (docs/timing_model.md, "DSP48E1 arcs")."""
    from kabe.parsers import report_file
    from kabe.parsers.vivado_timing_paths import path_blocks
    from kabe.timing.calibration_data import _arc_pins
    ratio = load().cells["DSP:*"]["value"]
    seen = 0
    for name in DSP_CHECK:
        rep = report_file.read(MORE / name)
        assert scope_of(rep.header.get("device"), rep.header.get("speed_file")) == "-1 Artix-class", name
        for p in (b.path for b in path_blocks(rep.lines, source=name) if b.path):
            for s in p.get("steps") or []:
                if s["kind"] == "cell" and s["type"] == "DSP48E1" and p.get("delay_type") == "max":
                    i, o = _arc_pins(s["type"], s["arc"])
                    base = F.prjxray_ps("DSP48E1", i, o, s["delay_ns"] * 1000)
                    assert s["delay_ns"] * 1000 / base == pytest.approx(ratio, rel=0.05), (name, i, o)
                    seen += 1
    assert seen >= 4


# ---------------------------------------------------------------- the fanout law's top end (issue 25)

def _fanout_points(h_ps: float, rng, designs: int = 12, knee: int = F.HIGH_FANOUT_KNEE):
    """Held-out points (x, logic, route, Vivado, design, budget, fanouts) at a slow clock (no
    pressure, no law) of designs whose nets above `knee` sinks come out h_ps per doubling longer
    than the fanout law; a third of the paths have such a net."""
    pts = []
    for k in range(designs):
        for j in range(6):
            fanouts = (4, 12) if j % 3 else (4, int(knee * 2 ** rng.uniform(0.5, 4)))
            route = rng.uniform(1.0, 3.0)
            extra = sum(h_ps * max(0.0, math.log2(f / knee)) for f in fanouts) / 1000.0
            pts.append((0.1, 1.0, route, 1.0 + (route + extra) * rng.uniform(0.97, 1.03), f"D{k}", 100.0, fanouts))
    return pts


def test_high_fanout_term_recovers_a_known_slope_above_the_knee():
    rng = np.random.default_rng(3)
    m = FittedModel()
    hf = F.fit_high_fanout(_fanout_points(700.0, rng), m)
    assert hf is not None and hf.knee == F.HIGH_FANOUT_KNEE and hf.designs == 12
    assert hf.per_doubling_ps == pytest.approx(700.0, abs=50.0)
    assert F.fit_high_fanout(_fanout_points(0.0, rng), m) is None  # the law already right: no term
    # too few designs with such a net to tell it from one design's pace
    assert F.fit_high_fanout(_fanout_points(700.0, rng, designs=F.MIN_HIGH_FANOUT_DESIGNS - 1), m) is None


def test_high_fanout_term_fills_a_paths_slack_and_no_more():
    """Within its budget a path takes the whole term; one the term would push over its budget ends
    at the budget (slack 0); one already over its budget keeps its delay: the term never turns a
    passing estimate into a failing one."""
    from kabe.timing.fitted import HighFanout
    assert HighFanout.fill(5.0, 6.0, 7.0) == 6.0
    assert HighFanout.fill(5.0, 8.0, 7.0) == 7.0
    assert HighFanout.fill(7.5, 9.0, 7.0) == 7.5
    hf = HighFanout(64, 1800.0)
    assert hf.ps(64) == 0.0 and hf.ps(256) == pytest.approx(3600.0)
    assert HighFanout.from_json(hf.to_json()) == hf
    m = dataclasses.replace(load(), high_fanout=hf)
    assert m.high_fanout_ps("FDRE", "Q", "LUT6", "I0", 256) == pytest.approx(3600.0)
    assert m.high_fanout_ps("FDRE", "Q", "LUT6", "I0", 64) == 0.0
    assert m.high_fanout_ps("CARRY4", "CO[3]", "CARRY4", "CI", 256) == 0.0  # dedicated: not a routed net
    assert m.net_ps("FDRE", "Q", "LUT6", "I0", 256) == dataclasses.replace(m, high_fanout=None).net_ps(
        "FDRE", "Q", "LUT6", "I0", 256)  # the term is not in net_ps: it is applied per path, capped
    assert "up to the path's budget" in m.describe()
