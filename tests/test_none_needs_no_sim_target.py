"""A design with `verify: {none: reason}` is never simulated, so its core file needs no `sim` target:
serv's own core file has none, and the build key asked FuseSoC for one anyway ("has no target
'sim'"), which stopped `doit build` and `kabe ci` before anything ran (scripts/try_public_cores.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

CORE = textwrap.dedent("""\
    CAPI=2:
    name: user:design:blinky:0.1.0
    filesets:
      rtl:
        files: [blinky.v]
        file_type: verilogSource
    targets:
      default: &default
        filesets: [rtl]
        toplevel: blinky
      synth:
        <<: *default
        flow: generic
        flow_options: {tool: yosys, arch: xilinx, output_format: json, yosys_synth_options: [-family, xc7]}
    """)
RTL = "module blinky (input wire clk, output reg led); always @(posedge clk) led <= !led; endmodule\n"
KEY = ("import json; from kabe.project import designs; from kabe.cache import cache; "
       "k = cache.key_for(designs.get('blinky'), 'open', sim_check_rows=None); "
       "print(json.dumps(sorted(k.material['targets'])))")


def _project(tmp_path: Path, verify: str) -> Path:
    root = tmp_path / "p"
    d = root / "cores" / "blinky"
    d.mkdir(parents=True)
    (root / "pyproject.toml").write_text("[tool.kabe]\ndefault_board = 'pynq-z1'\nflow = \"open\"\n")
    (d / "blinky.core").write_text(CORE)
    (d / "blinky.v").write_text(RTL)
    (d / "blinky.xdc").write_text("create_clock -period 10.000 -name clk [get_ports clk]\n")
    (d / "design.yaml").write_text(f"core: user:design:blinky:0.1.0\nverify: {verify}\nconstraints: blinky.xdc\n")
    return root


def _key(root: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "KABE_PROJECT"}
    return subprocess.run([sys.executable, "-c", KEY], cwd=root, env=env, capture_output=True, text=True, timeout=300)


def test_an_unverified_design_is_keyed_on_its_synth_target_alone(tmp_path):
    p = _key(_project(tmp_path, '{none: "verified upstream"}'))
    assert p.returncode == 0, p.stderr[-2000:]
    assert json.loads(p.stdout.splitlines()[-1]) == ["synth"]


def test_a_simulated_design_still_needs_its_sim_target(tmp_path):
    p = _key(_project(tmp_path, '{cocotb: "test_blinky"}'))
    assert p.returncode != 0 and "has no target 'sim'" in p.stderr, p.stderr[-2000:]
