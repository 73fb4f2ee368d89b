"""Write Vivado `report_timing` path blocks for tests, in the layout of Vivado's own reports
(hand-made content, not copied from any report): a stand-in for Vivado, which these machines lack.

    path_block(rows, ...) with rows like
        ("cell", "SLICE_X1Y1", "FDRE", "Prop_fdre_C_Q", 0.456, "a_reg/Q")
        ("net", 3, 0.812, "a")                      # net (fo=3, routed)
        ("end", "SLICE_X2Y1", "FDRE", "b_reg/D")
"""

from __future__ import annotations

SEP = "  -------------------------------------------------------------------    -------------------"


def _row(loc: str, dtype: str, incr: float, path: float, edge: str, res: str) -> str:
    return f"    {loc:<20} {dtype:<26}{incr:>8.3f}  {path:>8.3f} {edge}  {res}"


def path_block(rows: list[tuple], *, requirement: float = 7.0, skew: float = -0.030,
               uncertainty: float = 0.111, setup: float = 0.060, exception: str | None = None,
               source_clock: str = "clk", path_type: str = "Setup (Max at Slow Process Corner)") -> str:
    launch = 2.000  # source clock delay
    t = launch
    body = []
    cells = {}
    for r in rows:
        if r[0] == "cell":
            _, loc, typ, arc, d, res = r
            t += d
            body.append(_row(loc, f"{typ} ({arc})", d, t, "r", res))
            cells[typ] = cells.get(typ, 0) + 1
        elif r[0] == "net":
            _, fo, d, res = r[:4]
            t += d
            state = ", routed" if len(r) < 5 else r[4]
            body.append(_row("", f"net (fo={fo}{state})", d, t, " ", res))
    end = rows[-1]
    assert end[0] == "end"
    _, eloc, etype, eres = end
    body.append(f"    {eloc:<20} {etype:<26}{'':>8}  {'':>8} r  {eres}")
    start_res = rows[0][5].rsplit("/", 1)[0] + "/C"
    dpd = t - launch
    logic = sum(r[4] for r in rows if r[0] == "cell")
    route = dpd - logic
    arrival = t
    dcd = launch + skew  # capture clock delay (no pessimism removal here)
    required = requirement + dcd - uncertainty - setup
    slack = round(required, 3) - round(arrival, 3)
    status = "MET" if slack >= 0 else "VIOLATED"
    lv = sum(n for k, n in cells.items() if k.startswith(("LUT", "CARRY", "MUXF")))
    detail = " ".join(f"{k}={n}" for k, n in sorted(cells.items()) if k.startswith(("LUT", "CARRY", "MUXF")))
    hdr = [f"Slack ({status}) :              {slack:.3f}ns  (required time - arrival time)",
           f"  Source:                 {start_res}",
           f"                            (rising edge-triggered cell {rows[0][2]} clocked by {source_clock}  "
           f"{{rise@0.000ns fall@3.500ns period={requirement:.3f}ns}})",
           f"  Destination:            {eres}",
           f"                            (rising edge-triggered cell {etype} clocked by clk  "
           f"{{rise@0.000ns fall@3.500ns period={requirement:.3f}ns}})",
           "  Path Group:             clk",
           f"  Path Type:              {path_type}",
           f"  Requirement:            {requirement:.3f}ns  (clk rise@{requirement:.3f}ns - clk rise@0.000ns)",
           f"  Data Path Delay:        {dpd:.3f}ns  (logic {logic:.3f}ns ({100 * logic / dpd:.3f}%)  "
           f"route {route:.3f}ns ({100 * route / dpd:.3f}%))",
           f"  Logic Levels:           {lv}" + (f"  ({detail})" if detail else ""),
           f"  Clock Path Skew:        {skew:.3f}ns (DCD - SCD + CPR)",
           f"  Clock Uncertainty:      {uncertainty:.3f}ns  ((TSJ^2 + TIJ^2)^1/2 + DJ) / 2 + PE"]
    if exception:
        hdr.append(f"  Timing Exception:       {exception}")
    table = ["", "    Location             Delay type                Incr(ns)  Path(ns)    Netlist Resource(s)",
             SEP,
             "                         (clock clk rise edge)      0.000     0.000 r  ",
             f"    {'SLICE_X0Y0':<20} {'FDRE':<26}{'':>8}  {'':>8} r  {start_res}",
             SEP] + body + [SEP, "",
             f"                         (clock clk rise edge)  {requirement:>9.3f} {requirement:>9.3f} r  ",
             f"                         clock uncertainty        {-uncertainty:>9.3f} {required + setup:>9.3f}    ",
             f"    {eloc:<20} {etype} (Setup_fdre_C_D)  {-setup:>9.3f} {required:>9.3f}    {eres.rsplit('/', 1)[0]}",
             "  -------------------------------------------------------------------",
             f"                         required time                         {required:>7.3f}    ",
             f"                         arrival time                          {-arrival:>7.3f}    ",
             "  -------------------------------------------------------------------",
             f"                         slack                                 {slack:>7.3f}    ", ""]
    return "\n".join(hdr + table)


def report(*blocks: str, device: str = "7z020-clg400", speed: str = "-1") -> str:
    head = ["Copyright stand-in (tests/timing/vivado_path_text.py)",
            "-" * 60,
            "| Tool Version : Vivado v.2023.2 (lin64) stand-in",
            "| Command      : report_timing -max_paths 10",
            "| Design       : top",
            f"| Device       : {device}",
            f"| Speed File   : {speed}  PRODUCTION 1.12 2019-11-22",
            "-" * 60, "", "Timing Report", ""]
    return "\n".join(head + list(blocks)) + "\n"
