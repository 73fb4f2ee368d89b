"""A constraints file a core lists is never silently dropped (red team 3b, repro 17): kabe takes the
clock from design.yaml's `constraints:` only, so a core's own XDC (FuseSoC's file_type xdc) with a
2 ns create_clock was ignored and the design passed at design.yaml's 20 ns. Both flows refuse it."""

from pathlib import Path
from types import SimpleNamespace

import pytest

from kabe.project import cores
from kabe.flows.base import FlowError, refuse_core_constraints


def _setup(tmp_path: Path, listed: str, file_type: str = "xdc"):
    own = tmp_path / "slow.xdc"
    own.write_text("create_clock -period 20 -name clk [get_ports clk]\n")
    (tmp_path / "timing.xdc").write_text("create_clock -period 2 -name clk [get_ports clk]\n")
    design = SimpleNamespace(constraints=own, yaml_file=tmp_path / "design.yaml")
    files = (cores.SourceFile(tmp_path / "slow.v", "verilogSource", "user:design:slow:0.1.0"),
             cores.SourceFile(tmp_path / listed, file_type, "user:design:slow:0.1.0"))
    return design, SimpleNamespace(files=files, vlnv="user:design:slow:0.1.0")


@pytest.mark.parametrize("file_type", ["xdc", "SDC"])
def test_a_core_xdc_other_than_design_yaml_s_is_refused_with_the_fix(tmp_path, file_type):
    design, edam = _setup(tmp_path, "timing.xdc", file_type)
    with pytest.raises(FlowError, match=r"timing\.xdc: the core user:design:slow:0\.1\.0 lists this constraints file"
                                        r".*Fix: put its create_clock in slow\.xdc"):
        refuse_core_constraints(design, edam)


def test_the_core_listing_design_yaml_s_own_xdc_is_fine(tmp_path):
    design, edam = _setup(tmp_path, "slow.xdc")
    refuse_core_constraints(design, edam)  # the same file: nothing is dropped


def test_code_for_synthesis_only_is_found_by_file_and_line(tmp_path):
    """`ifdef SYNTHESIS and translate_off build logic the simulation never ran (red team 3b, repro
    19): the open flow says where, so a PASS is not read as covering it."""
    from kabe.flows.base import synthesis_only_code

    a = tmp_path / "a.v"
    a.write_text("module a;\n`ifdef SYNTHESIS\n  assign k = 1;\n`else\n  assign k = 0;\n`endif\n"
                 "// synthesis translate_off\n  initial $display(1);\n// synthesis translate_on\nendmodule\n")
    b = tmp_path / "b.v"
    b.write_text("module b; // SYNTHESIS is a word here, `ifdef SIM is not synthesis-only\nendmodule\n")
    assert synthesis_only_code([a, b]) == [f"{a}:2", f"{a}:7"]
