"""Issue 44: the high-fanout term fills a path's slack at most, so a path it fills reports WNS
+0.000 whatever the rest of the path does. The estimate keeps the WNS without the term beside it
(wns_uncapped_ns), says when the fill set the WNS (high_fanout_fill), in the record and in the
report the archive keeps, and reads both back from that report."""

import dataclasses

import pytest

from kabe.project.constraints import parse_xdc_text
from kabe.parsers import ReportError, kabe_timing
from kabe.timing import estimate
from kabe.timing.fitted import load


def _model():
    return dataclasses.replace(load(), pressure=None)  # the term's arithmetic alone


def _fanout_tree(sinks: int) -> dict:
    """A register driving `sinks` LUT1s, each into its own register (a reset or enable tree)."""
    cells, nxt = {}, [10]

    def bit():
        nxt[0] += 1
        return nxt[0]

    def ff(name, d, q):
        cells[name] = {"type": "FDRE", "parameters": {},
                       "port_directions": {"C": "input", "CE": "input", "R": "input", "D": "input", "Q": "output"},
                       "connections": {"C": [2], "CE": ["1"], "R": ["0"], "D": [d], "Q": [q]}}
    q = bit()
    ff("ff_start", bit(), q)
    for i in range(sinks):
        y = bit()
        cells[f"lut{i}"] = {"type": "LUT1", "parameters": {}, "port_directions": {"I0": "input", "O": "output"},
                            "connections": {"I0": [q], "O": [y]}}
        ff(f"ff_end{i}", y, bit())
    return {"modules": {"top": {"attributes": {"top": "1"}, "ports": {"clk": {"direction": "input", "bits": [2]}},
                                "cells": cells}}}


def _clock(period: float):
    return parse_xdc_text(f"create_clock -period {period:.3f} -name clk [get_ports clk]")


def _periods():
    """(a clock the path meets even with the whole term, one between without and with it, one it fails)."""
    m = _model()
    plain = dataclasses.replace(m, high_fanout=None)
    probe, _ = estimate(_fanout_tree(300), _clock(50.0), plain, vivado_mapping=False)
    d0 = 50.0 - probe["wns_ns"]  # the path's budget use without the term
    return {"slow": 50.0, "filled": d0 + m.high_fanout.ps(300) / 1000 / 2, "failing": d0 - 0.5}


@pytest.mark.parametrize("case", ["slow", "filled", "failing"])
def test_the_record_keeps_the_wns_without_the_fill_and_says_when_the_fill_set_it(case, tmp_path):
    m = _model()
    period = _periods()[case]
    rpt = tmp_path / "t.rpt"
    rec, _ = estimate(_fanout_tree(300), _clock(period), m, report=rpt, design="fan", vivado_mapping=False)
    without, _ = estimate(_fanout_tree(300), _clock(period), dataclasses.replace(m, high_fanout=None),
                          vivado_mapping=False)
    # the uncapped WNS is the WNS of the same netlist timed without the term, in every case
    assert rec["wns_uncapped_ns"] == pytest.approx(without["wns_ns"], abs=1e-3)
    text = rpt.read_text()
    if case == "filled":
        assert rec["wns_ns"] == 0.0 and rec["high_fanout_fill"] is True
        assert rec["wns_uncapped_ns"] > 0.1  # the slack the fill hides
        assert "Fill set the WNS: yes" in text and "Uncapped slack: +" in text
    else:
        assert rec["high_fanout_fill"] is False and "Fill set the WNS: no" in text
        if case == "slow":  # the whole term taken, nothing cut: WNS is the path's, but smaller than without it
            assert rec["wns_uncapped_ns"] > rec["wns_ns"] > 0
        else:  # failing without the term: the term leaves it alone
            assert rec["wns_uncapped_ns"] == rec["wns_ns"] < 0
    assert kabe_timing.parse(rpt) == rec


def test_a_report_whose_fill_section_contradicts_its_summary_is_refused(tmp_path):
    rpt = tmp_path / "t.rpt"
    rec, _ = estimate(_fanout_tree(300), _clock(_periods()["filled"]), _model(), report=rpt, design="fan",
                      vivado_mapping=False)
    text = rpt.read_text()
    line = f"WNS without the fill (ns): {rec['wns_uncapped_ns']:.3f}"
    assert line in text
    for bad in (text.replace(line, "WNS without the fill (ns): -1.000"),      # under the WNS: the fill only takes
                text.replace("Fill set the WNS: yes", "Fill set the WNS: maybe"),
                text.replace(line + "\n", "")):
        with pytest.raises(ReportError, match="High-Fanout Fill"):
            kabe_timing.parse_text(bad)
    # the fill said to set a WNS that is not 0: an edited summary
    slow_rpt = tmp_path / "s.rpt"
    estimate(_fanout_tree(300), _clock(50.0), _model(), report=slow_rpt, design="fan", vivado_mapping=False)
    with pytest.raises(ReportError, match="contradicts"):
        kabe_timing.parse_text(slow_rpt.read_text().replace("Fill set the WNS: no", "Fill set the WNS: yes"))


def test_a_report_from_before_the_fill_section_has_no_uncapped_wns(tmp_path):
    rpt = tmp_path / "t.rpt"
    estimate(_fanout_tree(300), _clock(50.0), _model(), report=rpt, design="fan", vivado_mapping=False)
    text = rpt.read_text()
    start = text.index("\n== High-Fanout Fill ==")
    older = text[:start] + text[text.index("\n\n== Uncertainty ==", start):]
    rec = kabe_timing.parse_text(older)
    assert "wns_uncapped_ns" not in rec and "high_fanout_fill" not in rec


def _rec(wns, uncapped=None):
    t = {"estimated": True, "wns_ns": wns}
    if uncapped is not None:
        t.update(wns_uncapped_ns=uncapped, high_fanout_fill=wns == 0 and uncapped > 0)
    return {"flow": "open", "timing": t}


@pytest.mark.parametrize("base, head, passed, failing", [
    # the fill holds WNS at 0 on both: only the uncapped WNS shows the 3 ns the change ate
    (_rec(0.0, 5.0), _rec(0.0, 2.0), False, "regression.wns_ns.max_decrease.wns_uncapped_ns"),
    (_rec(0.0, 5.0), _rec(0.0, 4.9), True, None),
    # a new fill on the head: the reported WNS still catches it
    (_rec(0.5, 0.5), _rec(0.0, 0.45), False, "regression.wns_ns.max_decrease"),
    # a base archived before the uncapped WNS was recorded: wns_ns with wns_ns, as before, never mixed
    (_rec(0.0), _rec(0.0, 2.0), True, None),
])
def test_a_wns_regression_compares_the_wns_without_the_fill(base, head, passed, failing):
    from kabe.rules.regressions import Regression, compare
    j = compare("fan", [Regression("wns_ns", "max_decrease", 0.2)], head, "a" * 40, base)
    assert j.passed is passed
    assert [c.name for c in j.checks if not c.passed] == ([failing] if failing else [])
    if failing and "uncapped" in failing:
        msg = next(c.message for c in j.checks if not c.passed)
        assert "wns_ns without the high-fanout fill" in msg and " 5 at base" in msg and "-> 2 here" in msg


FILLED = {"estimated": True, "wns_ns": 0.0, "tns_ns": 0.0, "whs_ns": None, "critical_path": None,
          "clocks": [{"name": "clk", "period_ns": 7.0}], "wns_uncapped_ns": 5.912, "high_fanout_fill": True,
          "band": {"quantiles": [0.1, 0.9], "wns_ns": [-1.2, 0.9], "marginal": True, "note": "marginal: run Vivado"}}


def test_the_advice_says_when_the_fill_set_the_wns_and_what_moves_it():
    from kabe.records.band_advice import fill_note, marginal_advice
    note = fill_note(FILLED)
    assert note.startswith("WNS +0.000 ns is the high-fanout fill's cap") and "+5.912 ns" in note
    advice = marginal_advice(FILLED, "stage4")
    assert "fewer sinks" in advice and "gain 1.200 ns of slack" not in advice  # more slack elsewhere is filled too
    unfilled = {**FILLED, "high_fanout_fill": False}
    assert fill_note(unfilled) is None and "gain 1.200 ns of slack to leave the band" in marginal_advice(unfilled, "x")
    assert fill_note({**FILLED, "wns_uncapped_ns": None}) is None and fill_note(None) is None


def test_kabe_gate_prints_the_fill_line(tmp_path, capsys):
    import json
    from records_fixtures import record
    from kabe import cli
    rec = record("ab" * 20, lut=3000, wns=0.0)
    rec["timing"].update({k: v for k, v in FILLED.items() if k in ("wns_uncapped_ns", "high_fanout_fill", "band")})
    f = tmp_path / "metrics.json"
    f.write_text(json.dumps(rec))
    cli.main(["gate", str(f)])
    err = capsys.readouterr().err
    assert "high-fanout fill's cap" in err and "+5.912 ns" in err


def test_the_build_summary_prints_the_fill_line_unwrapped():
    import io
    from rich.console import Console
    from records_fixtures import record
    from kabe.build import summary
    from kabe.records.band_advice import fill_note
    rec = record("ab" * 20, lut=3000, wns=0.0)
    rec["timing"].update({k: v for k, v in FILLED.items() if k in ("wns_uncapped_ns", "high_fanout_fill", "band")})
    out = io.StringIO()
    summary.render(rec, Console(file=out, width=80, color_system=None))
    assert fill_note(rec["timing"]) in [ln.strip() for ln in out.getvalue().splitlines()]
    rec["timing"]["high_fanout_fill"] = False
    out = io.StringIO()
    summary.render(rec, Console(file=out, width=80, color_system=None))
    assert "fill's cap" not in out.getvalue()


def test_the_junit_output_of_kabe_gate_says_when_the_fill_set_the_wns(tmp_path):
    import xml.etree.ElementTree as ET
    from kabe.records import junit
    from kabe.records.band_advice import fill_note
    from kabe.rules import gate
    verdict = gate.evaluate(FILLED, None)
    path = junit.write(tmp_path / "j.xml", [junit.gate_suite(verdict, "stage4", timing=FILLED)])
    (suite,) = ET.parse(path).getroot().iter("testsuite")
    assert fill_note(FILLED) in suite.find("system-out").text
