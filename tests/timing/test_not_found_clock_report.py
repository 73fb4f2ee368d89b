"""kabe's own timing_estimate.rpt for a design whose clock is not constrained (a create_clock on an
object the top lacks, or registers no create_clock reaches) reads back (redteam2 repro 06): its
Clock Summary's NOT-FOUND rows become the estimate's own failing record, so `kabe parse` prints it
(exit 0), `kabe gate` fails with the build's reason (exit 1), never "cannot read clock line", and
no re-reading can pass it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from test_estimator import M, Net, lut_chain  # noqa: E402

from kabe import cli  # noqa: E402
from kabe.project.constraints import parse_xdc_text  # noqa: E402
from kabe.parsers import ReportError, kabe_timing  # noqa: E402
from kabe.rules.gate import evaluate  # noqa: E402
from kabe.timing import estimate  # noqa: E402

UTIL = {"lut": 1, "ff": 2, "dsp": 0, "bram36_equiv": 0}


def two_clock_net() -> dict:
    """lut_chain(2) on port clk, plus a register pair on a second clock port m_clk (bit 3)."""
    net = lut_chain(2)
    top = net["modules"]["top"]
    top["ports"]["m_clk"] = {"direction": "input", "bits": [3]}
    b = Net()
    b.next = 100
    q = b.bit()
    b.cell("m0", "FDRE", C=("input", 3), CE=("input", "1"), R=("input", "0"), D=("input", b.bit()), Q=("output", q))
    b.cell("m1", "FDRE", C=("input", 3), CE=("input", "1"), R=("input", "0"), D=("input", q), Q=("output", b.bit()))
    top["cells"].update(b.cells)
    return net


def renamed_clock(name: str) -> dict:
    net = lut_chain(3)
    top = net["modules"]["top"]
    top["ports"] = {name: top["ports"].pop("clk")}
    return net


CASES = {
    # the repro's first XDC: m_clk has no create_clock, 2 register clock pins are never timed
    "unclocked": (two_clock_net, "create_clock -period 7 -name sclk [get_ports clk]",
                  "no clock on 2 register clock pin(s), so they are never timed: clocked from port m_clk"),
    # its second: mclk names a port the top lacks (and m_clk's registers stay unclocked)
    "misnamed": (two_clock_net, "create_clock -period 7 -name sclk [get_ports clk]\n"
                                "create_clock -period 5 -name mclk [get_ports m_clk_typo]",
                 "clock mclk not constrained (sclk timed): port m_clk_typo not found in top top"),
    "no clock at all": (lambda: renamed_clock("clk_i"), "create_clock -period 7 -name clk_fpga_0 [get_ports clk]",
                        "no clock constrained: port clk not found in top top"),
    "some of several": (lambda: renamed_clock("clk_a"), "create_clock -period 7 -name a [get_ports clk_a]\n"
                                                        "create_clock -period 5 -name b [get_ports clk_b]\n"
                                                        "create_clock -period 4 -name c [get_ports clk_c]",
                        "clock b, c not constrained (a timed): port clk_b not found in top top; port clk_c"),
    "one of a clock's objects": (lambda: lut_chain(2), "create_clock -period 7 -name k [get_ports {clk clk2}]",
                                 "clock targets missing: port clk2 not found in top top"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_report_reads_back_as_the_builds_failing_record(tmp_path, capsys, case):
    make, xdc, says = CASES[case]
    rpt = tmp_path / "timing_estimate.rpt"
    rec, res = estimate(make(), parse_xdc_text(xdc, "t.xdc"), M, report=rpt)
    assert rec["error"].startswith(says), rec["error"]
    assert "NOT-FOUND" in rpt.read_text()
    parsed = kabe_timing.parse(rpt)  # the real writer's report, read back: the same record, reason and all
    assert parsed == rec
    v = evaluate(parsed, UTIL)
    assert not v.passed and v.failures == [f"timing gate: {rec['error']}"]
    capsys.readouterr()
    assert cli.main(["parse", str(rpt)]) == 0
    assert json.loads(capsys.readouterr().out)["record"]["error"] == rec["error"]
    assert cli.main(["gate", str(rpt)]) == 1
    out = capsys.readouterr()
    text = out.out + out.err
    assert says in text and "cannot read" not in text


def test_the_clock_inputs_line_gives_the_hint_and_an_older_report_reads_without_it(tmp_path):
    rpt = tmp_path / "t.rpt"
    rec, _ = estimate(renamed_clock("clk_i"), parse_xdc_text("create_clock -period 7 -name k [get_ports clk]", "t.xdc"),
                      M, report=rpt)
    assert rec["error"].endswith("(create_clock -name k at t.xdc:1; the registers are clocked from port clk_i)")
    text = rpt.read_text()
    assert "\nRegister clock inputs: clk_i\n" in text
    older = text.replace("Register clock inputs: clk_i\n", "")  # written before this line existed
    got = kabe_timing.parse_text(older)
    assert got["error"] == rec["error"].replace("; the registers are clocked from port clk_i", "")
    assert not evaluate(got, UTIL).passed


@pytest.mark.parametrize("row", [
    "(no clock)           NOT-FOUND 0 register clock pin(s) clocked from port m_clk",  # nothing unclocked
    "(no clock)           NOT-FOUND some register clock pins",
    "mclk                 NOT-FOUND port m_clk_typo is missing",
])
def test_a_damaged_not_found_row_is_refused_never_passed(tmp_path, row):
    rpt = tmp_path / "t.rpt"
    estimate(two_clock_net(), parse_xdc_text("create_clock -period 7 -name sclk [get_ports clk]", "t.xdc"), M, report=rpt)
    text = rpt.read_text()
    line = next(l for l in text.splitlines() if "NOT-FOUND" in l)
    with pytest.raises(ReportError, match="cannot read clock line"):
        kabe_timing.parse_text(text.replace(line, row))
