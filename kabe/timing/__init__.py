"""kabe's pre-route timing estimator for xc7 netlists mapped by Yosys (open flow).

    cells.py    per-cell timing arcs (Yosys cells_sim.v / prjxray numbers, cited)
    routing.py  the fanout-aware net-delay model (constants and their reasons)
    sta.py      register-to-register setup analysis over the Yosys JSON netlist
    report.py   the metrics `timing` record and the text report (parsed back by
                kabe.parsers.kabe_timing)

Model, sources and calibration: docs/timing_model.md.
"""

from __future__ import annotations

from pathlib import Path

from kabe.constraints import Clock
from kabe.timing.report import timing_record, write as write_report
from kabe.timing.routing import RoutingModel
from kabe.timing.sta import NetlistError, StaResult, analyze

__all__ = ["estimate", "analyze", "timing_record", "write_report", "RoutingModel", "NetlistError",
           "StaResult"]


def estimate(netlist: dict | str | Path, clocks: list[Clock], model: RoutingModel | None = None,
             report: str | Path | None = None, **report_kw) -> tuple[dict, StaResult]:
    """Analyse a flattened Yosys JSON netlist; return the `timing` record (and write the text
    report when `report` is given)."""
    res = analyze(netlist, clocks, model)
    if report is not None:
        write_report(res, report, **report_kw)
    return timing_record(res), res
