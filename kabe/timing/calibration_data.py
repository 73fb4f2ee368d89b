"""Vivado's routed timing paths as calibration samples for the estimator.

A sample is one setup path, register to register, reduced to what a pre-route netlist also knows:
the cells on the path with their arcs, each net with its fanout and the cell types/pins on both
ends, the endpoint, and what Vivado measured (data path delay, setup, clock skew and uncertainty).

This module takes path dicts as kabe.parsers.vivado_timing_paths returns them (with their `steps`);
it does not read files itself (kabe/timing and kabe/parsers sit on one layer; the script that
reads the corpus is scripts/calibrate_timing.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from kabe.timing.delay_classes import CLOCK_PINS, cell_class

# Devices whose programmable logic is Artix-7 fabric: Artix-7, Spartan-7 and the small Zynq-7000
# parts (7z007s..7z020). The xc7z020 is one of them. Kintex-class: 7k*, 7v*, 7z030 and up.
_ARTIX_CLASS = re.compile(r"^(xc)?(7a|7s|7z0(07s|10|12s|14s|15|20))", re.I)
MODEL_SCOPE = "-1 Artix-class"  # the fabric and speed grade the fitted model describes (xc7z020-1)

SEQ_CLASSES = ("FF", "BRAM", "DSP", "LUTRAM", "SRL")


def scope_of(device: str | None, speed: str | None) -> str:
    """`-1 Artix-class` for the xc7z020's fabric and grade (-1L is timed like -1 on Artix-7; the
    corpus's -1L Arty build shows the same cell delays as the -1 builds of the same design)."""
    fam = "Artix-class" if _ARTIX_CLASS.match((device or "").strip()) else "Kintex/Virtex-class"
    grade = (speed or "?").strip().split()[0] if (speed or "").strip() else "?"
    grade = "-1" if grade in ("-1", "-1L", "-1LI") else grade
    return f"{grade} {fam}"


@dataclass
class PathSample:
    design: str
    file: str
    delay_ns: float                    # Vivado's data path delay (clock-to-out .. endpoint pin)
    requirement_ns: float
    slack_ns: float
    clock_ns: float                    # clock path skew - clock uncertainty (what the clock adds)
    setup_ns: float                    # the endpoint's setup time as booked (+: takes time)
    cells: list[tuple[str, str, str, float]] = field(default_factory=list)     # type, in, out, ns
    nets: list[tuple[str | None, str | None, str | None, str | None, int, float]] = field(default_factory=list)
    end: tuple[str, str] = ("", "")    # endpoint type, pin
    scope: str = MODEL_SCOPE
    device: str = ""                   # the report's part (xc7z020clg400-1): for the per-class breakdown only


def _arc_pins(cell_type: str, arc: str) -> tuple[str, str]:
    """`Prop_carry4_S[0]_CO[3]` -> (`S[0]`, `CO[3]`); `Prop_fdre_C_Q` -> (`C`, `Q`)."""
    prefix = f"prop_{cell_type.lower()}_"
    rest = arc[len(prefix):] if arc.lower().startswith(prefix) else arc.split("_", 2)[-1]
    i, _, o = rest.partition("_")
    return i, o


def sample(p: dict, *, design: str, file: str, scope: str = MODEL_SCOPE, device: str = "") -> PathSample | str:
    """One parsed path as a sample, or the reason it is left out (a short phrase, counted by the
    caller): the estimator times register-to-register setup paths through the cells it models."""
    if p.get("delay_type") != "max" or not str(p.get("path_type", "")).startswith("Setup (Max at Slow"):
        return "not a slow-corner setup path"
    if p.get("slack_ns") is None or p.get("requirement_ns") is None:
        return "unconstrained"
    if p.get("timing_exception"):
        # MaxDelay -datapath_only (clock-domain crossings), multicycle: placed and routed under
        # another requirement, or none; the estimator times single-cycle paths
        return "timing exception"
    if p.get("input_delay_ns") is not None or p.get("output_delay_ns") is not None:
        return "starts or ends at a port"
    steps = p.get("steps") or []
    if len(steps) < 3 or steps[0]["kind"] != "cell" or steps[-1]["kind"] != "end":
        return "starts or ends at a port"
    cells, nets = [], []
    for k, s in enumerate(steps[:-1]):
        if s["kind"] == "cell":
            if cell_class(s["type"]) == "OTHER":
                return f"cell outside the model ({s['type']})"
            i, o = _arc_pins(s["type"], s["arc"])
            cells.append((s["type"], i, o, s["delay_ns"]))
        else:
            if s.get("state") not in (None, "routed"):
                return "net not routed"
            prev, nxt = steps[k - 1] if k else None, steps[k + 1]
            if nxt["kind"] == "net" or (prev is not None and prev["kind"] == "net"):
                return "two net rows in a row (a layout this reader does not know)"
            drv = (prev["type"], _arc_pins(prev["type"], prev["arc"])[1]) if prev and prev["kind"] == "cell" \
                else (None, None)
            snk = (nxt["type"], _arc_pins(nxt["type"], nxt["arc"])[0]) if nxt["kind"] == "cell" \
                else (nxt["type"], nxt["pin"])
            nets.append((drv[0], drv[1], snk[0], snk[1], s["fanout"], s["delay_ns"]))
    first = cells[0]
    if cell_class(first[0]) not in SEQ_CLASSES or first[1] not in CLOCK_PINS:
        return "does not start at a clocked cell"
    end_type, end_pin = steps[-1]["type"], steps[-1]["pin"]
    if cell_class(end_type) not in SEQ_CLASSES:
        return f"ends outside the model ({end_type or 'port'})"
    total = sum(c[3] for c in cells) + sum(n[5] for n in nets)
    if abs(total - p["data_path_delay_ns"]) > 0.002 * (len(cells) + len(nets)) + 0.002:
        return "rows do not add up to the data path delay"
    skew = p.get("clock_path_skew_ns") or 0.0
    unc = p.get("clock_uncertainty_ns") or 0.0
    # slack = requirement - delay + skew - uncertainty - setup  =>  setup from the others
    setup = p["requirement_ns"] - p["data_path_delay_ns"] + skew - unc - p["slack_ns"]
    return PathSample(design=design, file=file, delay_ns=p["data_path_delay_ns"],
                      requirement_ns=p["requirement_ns"], slack_ns=p["slack_ns"], clock_ns=skew - unc,
                      setup_ns=round(setup, 4), cells=cells, nets=nets, end=(end_type, end_pin or ""),
                      scope=scope, device=device)


def dedupe(samples: list[PathSample]) -> list[PathSample]:
    """A report can print one path twice (its clock group and an inter-clock section): keep one."""
    seen, out = set(), []
    for s in samples:
        key = (s.file, s.delay_ns, s.slack_ns, tuple(s.cells), tuple(s.nets), s.end)
        if key not in seen:
            seen.add(key)
            out.append(s)
    return out
