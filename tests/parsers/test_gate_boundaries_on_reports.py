"""The WNS boundary pinned through the parsers, as `kabe gate` meets it in a file: 0.000 passes,
-0.001 fails, for the open flow's estimate report and for Vivado's report_timing_summary. Kills
`wns >= 0` -> `> 0` and rounding WNS to 2 decimals before the check, wherever they are made."""

from pathlib import Path

import pytest

from kabe import cli
from kabe.parsers import kabe_timing
from kabe.parsers import vivado_timing_summary as ts
from kabe.timing.report import END_MARKER, HEADER

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "vivado"
MET = FIX / "flow_timing_summary_met.rpt"


def vivado_report(wns: str) -> str:
    """kabe's stand-in met report with its WNS (and the path that carries it) set to `wns`."""
    neg = wns.startswith("-")
    text = MET.read_text()
    text = text.replace("          0.062       0.000                      0                14873",
                        f"{wns:>15}{'-0.001' if neg else '0.000':>12}{'1' if neg else '0':>23}                14873", 1)
    text = text.replace("clk_fpga_0        0.062       0.000                      0",
                        f"clk_fpga_0     {wns:>8}{'-0.001' if neg else '0.000':>12}{'1' if neg else '0':>23}", 1)
    text = text.replace("Slack (MET) :             0.062ns",
                        f"Slack ({'VIOLATED' if neg else 'MET'}) :{'':>{14 if neg else 19}}{wns}ns", 1)
    text = text.replace("                         slack                                   0.062",
                        f"                         slack                                  {wns:>6}", 1)
    if neg:
        text = text.replace("All user specified timing constraints are met.", "Timing constraints are not met.")
    return text


def kabe_report(wns: str) -> str:
    """The open flow's text report (kabe.timing.report's format) with WNS `wns`."""
    w = float(wns)
    return "\n".join([
        HEADER, "Design: boundary", "Unknown cell types (untimed): none", "",
        "== Design Timing Summary ==",
        "   WNS(ns)      TNS(ns)  Failing Endpoints  Total Endpoints  Unconstrained Endpoints",
        f"{wns:>10}{min(w, 0.0):>13.3f}{int(w < 0):>19}{12:>17}{0:>25}", "",
        "== Clock Summary ==", "Clock                Period(ns)    WNS(ns)      TNS(ns)  Failing    Total",
        f"clk_fpga_0                7.000{wns:>11}{min(w, 0.0):>13.3f}{int(w < 0):>9}{12:>9}", "",
        "== Clock Interaction ==", "none", "",
        "== Path 1 ==", f"Slack ({'VIOLATED' if w < 0 else 'MET'}): {wns} ns", "Clock: clk_fpga_0",
        "Startpoint: a_reg/Q (FDRE)", "Endpoint: b_reg/D (FDRE)",
        f"Data path delay: {7.0 - 0.2 - w:.3f} ns (logic 1.000 ns, route {5.8 - w:.3f} ns)", "Logic levels: 3",
        "   Incr(ns) Route(ns)  Cell(ns)  Type       Cell (pin in -> pin out)",
        "      0.303     0.000     0.303  FDRE       a_reg (clk -> Q)",
        f"{6.497 - w:>11.3f}{5.8 - w:>10.3f}     0.697  LUT6       l (I0 -> O)", "",
        END_MARKER, ""])


@pytest.mark.parametrize("make,name", [(vivado_report, "timing_summary.rpt"), (kabe_report, "timing_estimate.rpt")],
                         ids=["vivado", "open-flow"])
def test_zero_passes_minus_one_picosecond_fails(make, name, tmp_path, capsys):
    f = tmp_path / name
    f.write_text(make("0.000"))
    assert cli.main(["gate", str(f)]) == 0, capsys.readouterr().err
    f.write_text(make("-0.001"))
    assert cli.main(["gate", str(f)]) == 1
    assert "WNS -0.001 ns" in capsys.readouterr().err


def test_the_records_carry_the_exact_numbers():
    assert ts.parse(vivado_report("0.000"), "v")["wns_ns"] == 0.0
    assert ts.parse(vivado_report("-0.001"), "v")["wns_ns"] == -0.001
    assert kabe_timing.parse_text(kabe_report("-0.001"), "k")["wns_ns"] == -0.001
