"""This project's designs on the Vivado flow after the own-top shape came in: each one that builds with Vivado
(every design but the HLS kernel) still takes kabe's shell, as design.yaml leaves it (it declares streams and
ports), and the PYNQ-Z1 ones build whole on the STAND-IN for Vivado (tests/standin/vivado; not AMD Vivado):
the PS7 + DMA block design around the engine, impl_1 with kabe's hooks, the .bit/.hwh/.xsa/cell list, every
timing check of the gate passing on the stand-in's met reports. (The V80 one, on AVED's shell:
tests/flows/test_vivado_versal.py; stage4's record in detail: test_vivado_flow.py.)"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.flows.test_vivado_flow import calls
from kabe import build
from kabe.project import constraints, designs
from kabe.base.paths import CORES

STANDIN = Path(__file__).resolve().parents[1] / "standin"
VIVADO_DESIGNS = sorted(p.parent.name for p in CORES.glob("*/design.yaml") if designs.get(p.parent.name).hls is None)
PYNQ = [n for n in VIVADO_DESIGNS if designs.get(n).board.key == "pynq-z1"]  # the KV260 one: test_vivado_ps8.py
pytestmark = pytest.mark.skipif(shutil.which("tclsh") is None or shutil.which("make") is None,
                                reason="the Vivado stand-in runs in tclsh, edalize's Makefile in make")


def test_every_vivado_design_here_takes_kabes_shell():
    assert len(VIVADO_DESIGNS) == 8 and len(PYNQ) == 6, VIVADO_DESIGNS
    shapes = {n: designs.get(n).vivado.top for n in VIVADO_DESIGNS}
    assert set(shapes.values()) == {"shell"}, shapes
    assert all(not designs.get(n).vivado.declared for n in VIVADO_DESIGNS)  # the default, not a setting


@pytest.mark.parametrize("name", PYNQ)
def test_a_pynq_design_builds_in_kabes_shell_on_the_standin(name, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", f"{STANDIN}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("KABE_STANDIN_SCENARIO", "met")
    monkeypatch.setenv("KABE_STANDIN_RECORD", str(tmp_path / "record.txt"))
    record = build.build(designs.get(name), "vivado", sim_check=False, reports_root=tmp_path / "reports")
    dest = Path(record["_archive"])
    recs = calls(tmp_path / "record.txt")
    # kabe's block design: the PS7, one DMA per port, the engine as a module reference to kabe's wrapper
    assert ["create_bd_cell", "-type", "module", "-reference", "kabe_engine_bd", "engine"] in recs
    assert sum(1 for c in recs if c[0] == "create_bd_cell" and c[-1].startswith("dma")) == designs.get(name).ports
    assert not (dest / "ip_cache.json").exists()  # the own-top shape's record: not this one
    assert set(json.loads((dest / "metrics.json").read_text())["artifacts"]) == {"bit", "hwh", "xsa", "cells"}
    timing = [c for c in record["gate"]["checks"] if c["name"].startswith("timing.")]
    assert timing and all(c["passed"] for c in timing), timing
    assert [c["name"] for c in record["timing"]["clocks"]] == ["clk_fpga_0"]
    assert record["clock_period_ns"] == constraints.parse_xdc(designs.get(name).constraints)[0].period_ns
    print(f"{name}: shell, part {record['part']}, clock {record['clock_period_ns']} ns, wns {record['timing']['wns_ns']}, "
          f"lut {record['utilization']['lut']}, gate {record['gate']['status']}"
          + (f" ({'; '.join(record['gate']['failures'])})" if record["gate"].get("failures") else ""))
